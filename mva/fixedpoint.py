"""Vectorised fixed-point and scalar root finding for model equation systems.

Domain models (LoPC, INI, the protocol-processing policies) reduce to small
systems of non-linear equations ``x = g(x)`` that must be solved at every point
of a parameter grid.  The helpers here solve all grid points at once:

* :func:`fixed_point` -- damped successive substitution with per-point adaptive
  damping, falling back to :func:`scipy.optimize.root` for the points that do
  not converge;
* :func:`bracketed_root` -- a vectorised bracketing root finder (Illinois
  regula falsi safeguarded by bisection) for one equation ``f(x) = 0`` per grid
  point, the fast path for models reduced symbolically to one unknown.

Both return diagnostics (``converged``, ``iterations``, ``residual``,
``method``) and never pass non-convergence silently: ``on_fail="warn"`` (the
default) emits :class:`~mva.errors.ConvergenceWarning`, ``"raise"`` raises
:class:`~mva.errors.ConvergenceError`, ``"ignore"`` only flags the result.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

from ._validate import check_choice, check_integer, check_positive, check_probability
from .errors import report_nonconvergence

__all__ = ["FixedPointResult", "RootResult", "fixed_point", "bracketed_root"]

_ON_FAIL = ("warn", "raise", "ignore")


@dataclass(frozen=True, kw_only=True)
class FixedPointResult:
    """Solution of ``x = g(x)`` over a grid.

    Attributes
    ----------
    x : numpy.ndarray
        Solution, shape ``(n, *grid_shape)`` (same as the initial guess after
        broadcasting).
    converged : numpy.ndarray of bool
        Per grid point, shape ``grid_shape``.
    iterations : int
        Substitution sweeps performed (the largest over the grid).
    residual : float
        Largest relative residual ``max |g(x) - x| / max(1, |x|)`` over the grid.
    method : str
        ``"substitution"`` or ``"substitution+<scipy method>"`` when the
        fallback was used.
    """

    x: np.ndarray
    converged: np.ndarray
    iterations: int
    residual: float
    method: str
    fallback_points: int = field(default=0)

    @property
    def all_converged(self) -> bool:
        """True when every grid point converged."""
        return bool(np.all(self.converged))


@dataclass(frozen=True, kw_only=True)
class RootResult:
    """Root of ``f(x) = 0`` per grid point (see :func:`bracketed_root`)."""

    x: np.ndarray
    converged: np.ndarray
    iterations: int
    residual: float
    method: str = "illinois"

    @property
    def all_converged(self) -> bool:
        """True when every grid point converged."""
        return bool(np.all(self.converged))


def _report(on_fail: str, what: str, iterations: int, residual: float, n_bad: int) -> None:
    report_nonconvergence(on_fail, f"{what} did not converge at {n_bad} grid point(s) after "
                          f"{iterations} iterations (largest residual {residual:.3g})",
                          iterations=iterations, residual=residual)


def _rel_residual(gx: np.ndarray, x: np.ndarray) -> np.ndarray:
    """Relative residual per grid point: max over unknowns of |g(x)-x|/max(1,|x|)."""
    r = np.abs(gx - x) / np.maximum(1.0, np.abs(x))
    r = np.where(np.isnan(r), np.inf, r)
    return r.max(axis=0) if r.ndim > 0 else r


def fixed_point(g: Callable[[np.ndarray], np.ndarray], x0: Any, *, damping: float = 0.5,
                tol: float = 1e-10, max_iter: int = 10_000, fallback: bool = True,
                on_fail: str = "warn") -> FixedPointResult:
    """Solve ``x = g(x)`` at every grid point by damped successive substitution.

    Parameters
    ----------
    g : callable
        Vectorised map; ``g(x)`` takes and returns an array of shape
        ``(n, *grid_shape)`` where ``n`` is the number of unknowns.
    x0 : array_like
        Initial guess, shape ``(n, *grid_shape)`` or ``(n,)`` (broadcast by
        ``g``'s output on the first call).
    damping : float, default 0.5
        Weight of the new iterate, ``x <- (1 - d) x + d g(x)``, in (0, 1].
        It is halved at a grid point whenever its residual grows.
    tol : float, default 1e-10
        Convergence when the relative residual
        ``max_i |g_i(x) - x_i| / max(1, |x_i|)`` is at most ``tol``.
    max_iter : int, default 10000
        Substitution sweeps before the fallback (or failure).
    fallback : bool, default True
        Solve the unconverged points with :func:`scipy.optimize.root`.
    on_fail : {"warn", "raise", "ignore"}
        What to do if some point still has not converged.

    Returns
    -------
    FixedPointResult

    Notes
    -----
    Iteration ``x_{k+1} = (1 - d_k) x_k + d_k g(x_k)`` with the damping ``d_k``
    kept per grid point and halved when the residual increases.  Converged
    points are frozen, so the cost falls as the grid converges.

    Examples
    --------
    The fixed point of ``x = cos(x)`` for one point and for a grid of scales:

    >>> import numpy as np
    >>> r = fixed_point(lambda x: np.cos(x), [1.0])
    >>> round(float(r.x[0]), 9), bool(r.all_converged)
    (0.739085133, True)
    >>> a = np.array([0.5, 1.0, 2.0])
    >>> r = fixed_point(lambda x: np.cos(a * x), np.zeros((1, 3)))
    >>> np.allclose(r.x[0], np.cos(a * r.x[0]))
    True
    """
    check_probability("damping", damping, open_low=True)
    check_positive("tol", tol)
    max_iter = int(check_integer("max_iter", max_iter, minimum=1))
    check_choice("on_fail", on_fail, _ON_FAIL)

    x = np.array(x0, dtype=float)
    gx = np.asarray(g(x), dtype=float)
    x = np.broadcast_to(x, gx.shape).copy()
    grid_shape = x.shape[1:]
    d = np.full(grid_shape, float(damping))
    res = _rel_residual(gx, x)
    done = res <= tol
    it = 0
    while not np.all(done) and it < max_iter:
        it += 1
        step = np.where(done, 0.0, d)
        x = x + step * (gx - x)
        gx = np.asarray(g(x), dtype=float)
        new_res = _rel_residual(gx, x)
        grew = new_res > res
        d = np.where(grew, np.maximum(d * 0.5, 1e-4), np.minimum(d * 1.1, damping))
        res = np.where(done, res, new_res)
        done = done | (res <= tol)

    method = "substitution"
    n_fb = 0
    if fallback and not np.all(done):
        x, res, n_fb, fb_name = _scipy_fallback(g, x, done, tol)
        done = res <= tol
        method = f"substitution+{fb_name}"
    if not np.all(done):
        worst = float(np.max(res)) if np.size(res) else 0.0
        _report(on_fail, "fixed_point", it, worst, int(np.size(done) - np.count_nonzero(done)))
    return FixedPointResult(x=x, converged=np.asarray(done), iterations=it,
                            residual=float(np.max(res)) if np.size(res) else 0.0,
                            method=method, fallback_points=n_fb)


def _scipy_fallback(g: Callable[[np.ndarray], np.ndarray], x: np.ndarray, done: np.ndarray,
                    tol: float) -> tuple[np.ndarray, np.ndarray, int, str]:
    """Solve ``g(x) - x = 0`` at the unconverged points with SciPy."""
    from scipy.optimize import root

    bad = ~np.asarray(done)
    n = x.shape[0]
    m = int(np.count_nonzero(bad))
    name = "hybr" if n * m <= 400 else "df-sane"

    def F(z: np.ndarray) -> np.ndarray:
        full = x.copy()
        full[:, bad] = z.reshape(n, m)
        return (np.asarray(g(full), dtype=float) - full)[:, bad].ravel()

    sol = root(F, x[:, bad].ravel(), method=name, tol=tol * 1e-2)
    x = x.copy()
    x[:, bad] = sol.x.reshape(n, m)
    res = _rel_residual(np.asarray(g(x), dtype=float), x)
    return x, res, m, name


def bracketed_root(f: Callable[[np.ndarray], np.ndarray], lo: Any, hi: Any, *,
                   tol: float = 1e-12, max_iter: int = 200,
                   on_fail: str = "warn") -> RootResult:
    """Find a root of ``f`` in ``[lo, hi]`` at every grid point, vectorised.

    Parameters
    ----------
    f : callable
        Vectorised function; ``f(x)`` has the grid's shape.
    lo, hi : array_like
        Brackets with ``f(lo)`` and ``f(hi)`` of opposite sign (or zero).
    tol : float, default 1e-12
        Stop when the bracket width is below ``tol * max(1, |x|)`` or ``f``
        is exactly zero.
    max_iter : int, default 200
        Iterations (each one halves the bracket at worst).
    on_fail : {"warn", "raise", "ignore"}

    Returns
    -------
    RootResult

    Notes
    -----
    Illinois variant of regula falsi (the retained end point's function value
    is halved when the same side is kept twice) with a bisection step whenever
    the secant point falls outside the bracket, or when the bracket has not
    halved over three steps.  The bracket always holds the root; convergence
    is superlinear for smooth ``f`` and at worst about three times slower than
    bisection.  Convergence is judged on the bracket width only (a small
    secant step alone can be a stalled end point).

    Examples
    --------
    >>> import numpy as np
    >>> r = bracketed_root(lambda x: x**2 - np.array([2.0, 9.0]), 0.0, 10.0)
    >>> np.round(r.x, 12).tolist()
    [1.414213562373, 3.0]
    """
    check_positive("tol", tol)
    max_iter = int(check_integer("max_iter", max_iter, minimum=1))
    check_choice("on_fail", on_fail, _ON_FAIL)
    a, b = np.broadcast_arrays(np.asarray(lo, dtype=float), np.asarray(hi, dtype=float))
    fa = np.asarray(f(a), dtype=float)
    fb = np.asarray(f(b), dtype=float)
    a, b, fa, fb = (np.broadcast_to(v, np.broadcast_shapes(a.shape, fa.shape)).copy()
                    for v in (a, b, fa, fb))
    if np.any(np.sign(fa) * np.sign(fb) > 0):
        raise ValueError("bracketed_root: f(lo) and f(hi) must have opposite signs at every "
                         "grid point; got the same sign at "
                         f"{int(np.count_nonzero(np.sign(fa) * np.sign(fb) > 0))} point(s)")
    side = np.zeros(a.shape, dtype=np.int8)  # which end was kept last: -1 a, +1 b
    x = np.where(fa == 0, a, b)
    done = (fa == 0) | (fb == 0)
    w_ref = np.abs(b - a)
    force = np.zeros(a.shape, dtype=bool)
    it = 0
    for it in range(1, max_iter + 1):
        with np.errstate(divide="ignore", invalid="ignore"):
            xs = b - fb * (b - a) / (fb - fa)
        bad_secant = ~np.isfinite(xs) | (xs <= np.minimum(a, b)) | (xs >= np.maximum(a, b))
        x_new = np.where(bad_secant | force, 0.5 * (a + b), xs)
        fx = np.asarray(f(x_new), dtype=float)
        keep_b = np.sign(fx) == np.sign(fa)   # root lies in [x, b]: replace a, keep b
        # Illinois: an end point kept twice in a row has its function value halved.
        fb = np.where(keep_b & (side == 1), fb * 0.5, fb)
        fa = np.where(~keep_b & (side == -1), fa * 0.5, fa)
        a = np.where(done, a, np.where(keep_b, x_new, a))
        fa = np.where(done, fa, np.where(keep_b, fx, fa))
        b = np.where(done, b, np.where(keep_b, b, x_new))
        fb = np.where(done, fb, np.where(keep_b, fb, fx))
        side = np.where(keep_b, 1, -1).astype(np.int8)
        x = np.where(done, x, x_new)
        width = np.abs(b - a)
        done = done | (fx == 0) | (width <= tol * np.maximum(1.0, np.abs(x)))
        if np.all(done):
            break
        # Safeguard: every third step the bracket must have halved, else bisect next.
        if it % 3 == 0:
            force = width > 0.5 * w_ref
            w_ref = width
        else:
            force = np.zeros(a.shape, dtype=bool)
    resid = np.abs(b - a) / np.maximum(1.0, np.abs(x))
    resid = np.where(done, 0.0, resid)
    worst = float(np.max(resid)) if resid.size else 0.0
    if not np.all(done):
        _report(on_fail, "bracketed_root", it, worst, int(resid.size - np.count_nonzero(done)))
    return RootResult(x=x if x.ndim else x[()], converged=done, iterations=it, residual=worst)
