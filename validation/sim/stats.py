"""Confidence intervals: batch means and independent replications.

Both methods reduce a run to ``n`` roughly independent, roughly normal
observations ``y_1 .. y_n`` of the quantity (the means of ``n`` batches of
one long run after the warm-up, or the means of ``n`` independent runs) and
report the Student-t interval

.. math::

    \\bar y \\pm t_{0.975,\\,n-1}\\, \\frac{s}{\\sqrt n},\\qquad
    s^2 = \\frac{1}{n-1}\\sum_i (y_i - \\bar y)^2 .

The point estimate of a ratio quantity (a mean response time, a time-average
queue length) is the ratio of the totals over the whole measured window; the
half-width comes from the spread of the per-batch (per-replication) ratios.
"""

from __future__ import annotations

import functools

import math
from dataclasses import asdict, dataclass
from typing import Sequence

__all__ = ["Estimate", "estimate", "t_quantile"]


@dataclass(frozen=True, kw_only=True)
class Estimate:
    """A point estimate with a confidence interval.

    Attributes
    ----------
    mean : float
        Point estimate.
    half_width : float
        Half-width of the confidence interval (``nan`` with fewer than two
        observations).
    level : float
        Confidence level (0.95).
    n : int
        Number of batches or replications behind the interval.
    """

    mean: float
    half_width: float
    level: float = 0.95
    n: int = 1

    @property
    def low(self) -> float:
        """Lower end of the interval."""
        return self.mean - self.half_width

    @property
    def high(self) -> float:
        """Upper end of the interval."""
        return self.mean + self.half_width

    @property
    def relative_half_width(self) -> float:
        """``half_width / |mean|`` (``nan`` for a zero mean)."""
        return self.half_width / abs(self.mean) if self.mean else float("nan")

    def contains(self, value: float) -> bool:
        """Whether ``value`` lies inside the interval.

        Examples
        --------
        >>> Estimate(mean=10.0, half_width=0.5).contains(10.4)
        True
        """
        return self.low <= value <= self.high

    def to_dict(self) -> dict[str, float]:
        """Plain dictionary (with ``low`` and ``high``)."""
        d = asdict(self)
        d.update(low=self.low, high=self.high)
        return d

    def __format__(self, spec: str) -> str:
        spec = spec or ".6g"
        return f"{self.mean:{spec}} +- {self.half_width:{spec}}"


@functools.lru_cache(maxsize=256)
def t_quantile(p: float, dof: int) -> float:
    """Quantile ``p`` of Student's t with ``dof`` degrees of freedom (SciPy; cached).

    ``scipy.special.stdtrit`` (the same value as ``scipy.stats.t.ppf``, without
    importing :mod:`scipy.stats`, which costs a second at a first call).  The
    values for ``p`` in 0.95, 0.975, 0.995 and up to 128 degrees of freedom
    are SciPy's, stored in :mod:`._tquantiles` (bit for bit: a test checks),
    so that a first simulation does not import :mod:`scipy.special` either
    (about half a second).

    Examples
    --------
    >>> round(t_quantile(0.975, 19), 3)
    2.093
    """
    from ._tquantiles import MAX_DOF, T_QUANTILES
    table = T_QUANTILES.get(p)
    if table is not None and 1 <= dof <= MAX_DOF and dof == int(dof):
        return table[int(dof) - 1]
    from scipy.special import stdtrit
    return float(stdtrit(dof, p))


def estimate(point: float, observations: Sequence[float], level: float = 0.95) -> Estimate:
    """An :class:`Estimate` from a point value and per-batch observations.

    Parameters
    ----------
    point : float
        The point estimate (normally the whole-window ratio).
    observations : sequence of float
        Per-batch or per-replication values; non-finite ones are dropped.
    level : float
        Confidence level.

    Examples
    --------
    >>> e = estimate(2.0, [1.0, 2.0, 3.0])
    >>> round(e.half_width, 3)
    2.484
    """
    ys = [float(y) for y in observations if math.isfinite(y)]
    n = len(ys)
    if n < 2:
        return Estimate(mean=float(point), half_width=float("nan"), level=level, n=n)
    ybar = sum(ys) / n
    var = sum((y - ybar) ** 2 for y in ys) / (n - 1)
    hw = t_quantile(0.5 + level / 2.0, n - 1) * math.sqrt(var / n)
    return Estimate(mean=float(point), half_width=hw, level=level, n=n)
