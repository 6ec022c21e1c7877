"""Exceptions and warnings shared by every package of the library.

A saturated or infeasible configuration is *reported*, never returned as a
negative or infinite number.  Solvers that iterate report non-convergence
either by raising :class:`ConvergenceError` (``on_fail="raise"``) or by
warning with :class:`ConvergenceWarning` and flagging the result
``converged=False`` (``on_fail="warn"``, the default).
"""

from __future__ import annotations

__all__ = ["SaturationError", "ConvergenceError", "ConvergenceWarning", "PrecisionWarning",
           "NonProductFormWarning", "CostError"]


class SaturationError(ValueError):
    """A resource would need a utilization of one or more.

    Parameters
    ----------
    message : str
        Human-readable explanation.
    bottleneck : str, optional
        Name of the saturated resource.
    utilization : float, optional
        The utilization the resource would need (``>= 1``).
    """

    def __init__(self, message: str, *, bottleneck: str | None = None,
                 utilization: float | None = None) -> None:
        super().__init__(message)
        self.bottleneck = bottleneck
        self.utilization = utilization


class CostError(ValueError):
    """A computation would need more memory (or states) than allowed; nothing was allocated.

    Raised by the cost guards of :mod:`mva._cost` before a solver allocates.
    The message gives the estimate and the method to use instead.

    Parameters
    ----------
    message : str
        Human-readable explanation.
    nbytes : int, optional
        Estimated memory in bytes.
    states : int, optional
        Estimated number of states (array elements, population vectors).
    instead : str, optional
        The method or setting to use instead.
    """

    def __init__(self, message: str, *, nbytes: int | None = None, states: int | None = None,
                 instead: str | None = None) -> None:
        super().__init__(message)
        self.nbytes = nbytes
        self.states = states
        self.instead = instead


class ConvergenceError(RuntimeError):
    """An iterative solver did not reach its tolerance within ``max_iter``."""

    def __init__(self, message: str, *, iterations: int | None = None,
                 residual: float | None = None) -> None:
        super().__init__(message)
        self.iterations = iterations
        self.residual = residual


class ConvergenceWarning(RuntimeWarning):
    """An iterative solver stopped before reaching its tolerance."""


class PrecisionWarning(RuntimeWarning):
    """A result may have lost floating-point precision (e.g. a probability by subtraction)."""


class NonProductFormWarning(UserWarning):
    """The network as given has no product form and is solved by an approximation.

    Issued when a FCFS multi-server station (``kinds="multi"``,
    ``disciplines="fcfs"``) serves classes with different service times: BCMP
    product form needs equal exponential service times at FCFS stations, so the
    solvers' processor-sharing multi-server formula is then an approximation.
    """


def report_nonconvergence(on_fail: str, message: str, *, iterations: int | None = None,
                          residual: float | None = None, stacklevel: int = 3) -> None:
    """Follow the ``on_fail`` convention for a solver that stopped short.

    ``"raise"`` raises :class:`ConvergenceError`, ``"warn"`` issues a
    :class:`ConvergenceWarning` attributed ``stacklevel`` frames above the
    caller, ``"ignore"`` does nothing.
    """
    if on_fail == "raise":
        raise ConvergenceError(message, iterations=iterations, residual=residual)
    if on_fail == "warn":
        import warnings
        warnings.warn(message, ConvergenceWarning, stacklevel=stacklevel + 1)
