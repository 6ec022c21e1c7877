r"""Bounds on closed and open networks: asymptotic, balanced-job, proportional, geometric.

Single-class closed networks: :func:`aba_bounds`, :func:`balanced_job_bounds`,
:func:`proportional_bounds`, :func:`geometric_bounds`; multi-chain:
:func:`multiclass_aba_bounds`, :func:`multiclass_bjb_bounds`; open:
:func:`open_bounds`.

Both take the demands of one class, a population ``N`` (scalar or array:
the bounds are vectorised over ``N``) and a think time ``Z``.  In the
formulas ``D = sum_k D_k`` over the queueing stations, ``D_max`` is their
largest demand per server, and the demand of delay stations (which never
queue) is counted as think time: ``Z`` stands for the think time plus the
delay demands, and ``R`` for the time at the queueing stations.  The
response times reported in :class:`Bounds` are ``N / X - Z_think``, i.e.
they include the time at delay stations (the formulas plus the delay
demand).

References
----------
E. D. Lazowska, J. Zahorjan, G. S. Graham, K. C. Sevcik, *Quantitative
System Performance*, Prentice-Hall, 1984, chapter 5 (section 5.2
asymptotic bounds, section 5.3 balanced job bounds, both also for open
networks: :func:`open_bounds`).
J. Zahorjan, K. C. Sevcik, D. L. Eager, B. Galler, "Balanced job bound
analysis of queueing networks", CACM 25(2), 1982, pp. 134-141.
C. H. Hsieh and S. S. Lam, "Two classes of performance bounds for closed
queueing networks", Performance Evaluation 7(1), 1987.
G. Casale, R. R. Muntz, G. Serazzi, "Geometric bounds: a noniterative
analysis technique for closed queueing networks", IEEE Trans. Computers
57(6), 2008.
T. Kerola, "The composite bound method for computing throughput bounds in
multiple class environments", Performance Evaluation 6(1), 1986.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ._validate import check_choice, check_integer, check_nonnegative, scalar_or_array
from .network import ClosedNetwork
from .results import plain_dict

__all__ = ["Bounds", "aba_bounds", "balanced_job_bounds", "proportional_bounds",
           "geometric_bounds", "OpenBounds", "open_bounds", "ChainBounds",
           "multiclass_aba_bounds", "multiclass_bjb_bounds"]


@dataclass(frozen=True, kw_only=True)
class Bounds:
    """Lower and upper bounds on throughput and response time.

    Attributes
    ----------
    population : int or numpy.ndarray
        The population(s) ``N`` the bounds are for.
    throughput_lower, throughput_upper : float or numpy.ndarray
        ``X(N)`` lies between them (jobs per time unit).
    response_lower, response_upper : float or numpy.ndarray
        ``R(N) = N / X(N) - Z`` lies between them (time units, think time
        excluded, delay-station time included).
    n_star : float
        ``N* = (D + Z) / D_max``, the population where the two asymptotic
        throughput bounds cross (the knee).
    method : str
        ``"aba"``, ``"bjb"``, ``"pb"`` (proportional) or ``"gb"`` (geometric).
    queue_lower, queue_upper : numpy.ndarray or None
        Mean number of jobs at each station (shape ``population.shape + (K,)``,
        stations in the order given) lies between them; only the geometric
        bounds give them (``None`` otherwise).
    """

    population: Any
    throughput_lower: Any
    throughput_upper: Any
    response_lower: Any
    response_upper: Any
    n_star: float
    method: str
    queue_lower: Any = None
    queue_upper: Any = None

    def to_dict(self) -> dict[str, Any]:
        """Plain dictionary (arrays as lists)."""
        return plain_dict(self)

    def contains(self, throughput: Any) -> Any:
        """True where ``throughput_lower <= throughput <= throughput_upper`` (1e-12 slack)."""
        x = np.asarray(throughput, dtype=float)
        ok = ((x >= np.asarray(self.throughput_lower) * (1 - 1e-12))
              & (x <= np.asarray(self.throughput_upper) * (1 + 1e-12)))
        return bool(ok) if ok.ndim == 0 else ok


def _inputs(demands: Any, population: Any, think_time: Any, kinds: Any, servers: Any,
            who: str, allow_multi: bool
            ) -> tuple[np.ndarray, np.ndarray, float, np.ndarray, np.ndarray, float]:
    """Return (queue demands per server, population, Z incl. delay demand, Dq raw, servers, Z)."""
    if isinstance(demands, ClosedNetwork):
        net = demands
        if net.n_classes != 1:
            raise ValueError(f"{who} needs a single-class network; got {net.n_classes} classes")
        d = net.demands[0]
        kinds = net.kinds
        servers = net.servers
        population = net.populations[0] if population is None else population
        think_time = net.think_times[0] if think_time is None else think_time
    else:
        d = check_nonnegative("demands", demands)
        if d.ndim != 1:
            raise ValueError(f"demands must be 1-D (one per station) for {who}; got shape "
                             f"{d.shape}")
        if population is None:
            raise ValueError(f"population must be given to {who} (an int >= 1 or an array of "
                             "them); got None")
        K = d.size
        servers = np.ones(K, dtype=np.int64) if servers is None else np.broadcast_to(
            check_integer("servers", servers, minimum=1), (K,))
        if kinds is None:
            kinds = tuple("multi" if m > 1 else "queue" for m in servers)
        kinds = tuple(kinds)
        if len(kinds) != K:
            raise ValueError(f"kinds must have {K} entries; got {len(kinds)}")
    think_time = 0.0 if think_time is None else think_time
    N = check_integer("population", population, minimum=1)
    Z = float(check_nonnegative("think_time", think_time))
    kinds_a = np.array(kinds)
    allowed = ("queue", "delay", "multi") if allow_multi else ("queue", "delay")
    for k, kd in enumerate(kinds_a):
        if kd not in allowed:
            raise ValueError(f"kinds[{k}] must be one of {', '.join(map(repr, allowed))} for "
                             f"{who}; got {kd!r}")
    delay = kinds_a == "delay"
    Zt = Z + float(d[delay].sum())
    qmask = ~delay & (d > 0)
    Dq = d[qmask]
    m = np.asarray(servers)[qmask].astype(float)
    if Dq.size == 0 and Zt <= 0:
        raise ValueError(f"demands and think_time are all zero; {who} needs some positive time")
    return Dq / m, N, Zt, Dq, m, Z


def _pop(N: np.ndarray) -> Any:
    return int(N) if N.ndim == 0 else N


def aba_bounds(demands: Any, population: Any = None, think_time: Any = None, *,
               kinds: Any = None, servers: Any = None) -> Bounds:
    r"""Asymptotic bounds (ABA) on throughput and response time.

    Parameters
    ----------
    demands : array_like, shape (K,), or ClosedNetwork
        Service demand per station (or a single-class network, whose
        population and think time are the defaults).
    population : int or array_like of int
        ``N >= 1``.
    think_time : float
        ``Z >= 0``.
    kinds : sequence of {"queue", "delay", "multi"}, optional
    servers : int or array_like, optional
        Server counts of ``"multi"`` stations.

    Returns
    -------
    Bounds

    Notes
    -----
    With ``D = sum_k D_k`` (queueing stations), ``D_max = max_k D_k / m_k``:

    .. math::

        \frac{N}{N D + Z} \le X(N) \le \min\Bigl(\frac{1}{D_{max}}, \frac{N}{D + Z}\Bigr),
        \qquad
        \max(D, N D_{max} - Z) \le R(N) \le N D .

    The pessimistic bound assumes every other customer is ahead at every
    station (``R_k <= N D_k``, also valid at multi-server stations); the
    optimistic one assumes no queueing, and that the bottleneck cannot
    exceed its capacity ``1/D_max``.

    References
    ----------
    Lazowska et al. (1984), section 5.2, Table 5.1 (there with ``m = 1``).

    Examples
    --------
    >>> b = aba_bounds([1.0, 2.0, 0.5], population=[1, 5, 50], think_time=4.0)
    >>> b.throughput_upper.round(4).tolist(), b.throughput_lower.round(4).tolist()
    ([0.1333, 0.5, 0.5], [0.1333, 0.2326, 0.2793])
    >>> round(b.n_star, 3)
    3.75
    """
    Dm, N, Z, Dq, _, Z0 = _inputs(demands, population, think_time, kinds, servers, "aba_bounds",
                                  True)
    D = float(Dq.sum())
    Dmax = float(Dm.max()) if Dm.size else 0.0
    Nf = N.astype(float)
    cap = 1.0 / Dmax if Dmax > 0 else np.inf
    x_up = np.minimum(cap, Nf / (D + Z))
    x_lo = Nf / (Nf * D + Z)
    r_lo = Nf / x_up - Z0
    r_hi = Nf / x_lo - Z0
    n_star = (D + Z) / Dmax if Dmax > 0 else float("inf")
    return Bounds(population=_pop(N), throughput_lower=scalar_or_array(x_lo),
                  throughput_upper=scalar_or_array(x_up), response_lower=scalar_or_array(r_lo),
                  response_upper=scalar_or_array(r_hi), n_star=float(n_star), method="aba")


def balanced_job_bounds(demands: Any, population: Any = None, think_time: Any = None, *,
                        kinds: Any = None, servers: Any = None) -> Bounds:
    r"""Balanced job bounds (BJB) on throughput and response time.

    Parameters
    ----------
    demands : array_like, shape (K,), or ClosedNetwork
        Service demand per station (``"queue"`` and ``"delay"`` stations
        only: the bounds rest on load-independent single servers).
    population : int or array_like of int
        ``N >= 1``.
    think_time : float
        ``Z >= 0``.
    kinds : sequence of {"queue", "delay"}, optional
    servers : int or array_like, optional
        Must leave every queueing station single-server.

    Returns
    -------
    Bounds

    Notes
    -----
    With ``D = sum_k D_k``, ``D_avg = D / K`` and ``D_max = max_k D_k`` over
    the ``K`` queueing stations with positive demand:

    .. math::

        \frac{N}{D + Z + \frac{(N-1) D_{max}}{1 + Z/(N D)}}
        \le X(N) \le
        \min\Bigl(\frac{1}{D_{max}},\ \frac{N}{D + Z + \frac{(N-1) D_{avg}}{1 + Z/D}}\Bigr)

    and the response-time bounds follow from ``R = N / X - Z``:

    .. math::

        \max\Bigl(N D_{max} - Z,\ D + \frac{(N-1) D_{avg}}{1 + Z/D}\Bigr)
        \le R(N) \le D + \frac{(N-1) D_{max}}{1 + Z/(N D)} .

    The balanced network with every demand ``D_avg`` (or ``D_max``) is the
    most (least) favourable network of total demand ``D``.

    References
    ----------
    Zahorjan, Sevcik, Eager and Galler (1982); Lazowska et al. (1984),
    section 5.3, Table 5.3.

    Examples
    --------
    >>> b = balanced_job_bounds([1.0, 2.0, 0.5], population=5)
    >>> round(b.throughput_lower, 4), round(b.throughput_upper, 4)
    (0.4348, 0.5)
    """
    _, N, Z, Dq, _, Z0 = _inputs(demands, population, think_time, kinds, servers,
                                 "balanced_job_bounds", False)
    if Dq.size == 0:
        raise ValueError("balanced_job_bounds needs at least one queueing station with a positive "
                         "demand; got none")
    D = float(Dq.sum())
    Dmax = float(Dq.max())
    Davg = D / Dq.size
    Nf = N.astype(float)
    x_up = np.minimum(1.0 / Dmax, Nf / (D + Z + (Nf - 1.0) * Davg / (1.0 + Z / D)))
    x_lo = Nf / (D + Z + (Nf - 1.0) * Dmax / (1.0 + Z / (Nf * D)))
    r_lo = Nf / x_up - Z0
    r_hi = Nf / x_lo - Z0
    return Bounds(population=_pop(N), throughput_lower=scalar_or_array(x_lo),
                  throughput_upper=scalar_or_array(x_up), response_lower=scalar_or_array(r_lo),
                  response_upper=scalar_or_array(r_hi), n_star=float((D + Z) / Dmax), method="bjb")


def proportional_bounds(demands: Any, population: Any = None, think_time: Any = None, *,
                        kinds: Any = None) -> Bounds:
    r"""Proportional bounds (PB, Hsieh and Lam) on throughput and response time.

    Parameters
    ----------
    demands : array_like, shape (K,), or ClosedNetwork
        Service demand per station (``"queue"`` and ``"delay"`` stations),
        or a single-class network.
    population : int or array_like of int
        ``N >= 1``.
    think_time : float
        ``Z >= 0`` (delay-station demands are added to it).
    kinds : sequence of {"queue", "delay"}, optional

    Returns
    -------
    Bounds
        ``method="pb"``.

    Notes
    -----
    Exact MVA gives ``X(N) = N / (Z + D + sum_k D_k Q_k(N-1))`` with
    ``sum_k Q_k(N-1) = N - 1 - Z X(N-1)``.  Hsieh and Lam bound the
    queue-weighted mean demand between the proportions ``D_k`` and
    ``D_k^{N-1}``:

    .. math::

        \frac{\sum_k D_k^2}{\sum_k D_k}
        \le \frac{\sum_k D_k Q_k(N-1)}{\sum_k Q_k(N-1)}
        \le \frac{\sum_k D_k^N}{\sum_k D_k^{N-1}},

    and with ``0 <= X(N-1) <= 1/D_max``

    .. math::

        \frac{N}{Z + D + N_1\,\frac{\sum D^N}{\sum D^{N-1}}}
        \le X(N) \le
        \min\Bigl(\frac{1}{D_{max}},\
        \frac{N}{Z + D + (N_1 - Z/D_{max})\,\frac{\sum D^2}{\sum D}}\Bigr),
        \qquad N_1 = N - 1 .

    Both are exact for balanced networks without think time, and the lower
    one for ``N = 1``.  The powers ``D^N`` are taken of
    ``D / D_max`` (no underflow).

    References
    ----------
    C. H. Hsieh and S. S. Lam, "Two classes of performance bounds for
    closed queueing networks", Performance Evaluation 7(1), 1987, pp. 3-30.
    Table IV of Casale, Muntz and Serazzi, "Geometric bounds", IEEE Trans.
    Computers 57(6), 2008 (also Octave ``qncspb``'s test) lists PB values.

    Examples
    --------
    >>> b = proportional_bounds([0.1, 0.1, 0.09, 0.08], population=[2, 5, 80])
    >>> b.throughput_lower.round(4).tolist(), b.throughput_upper.round(4).tolist()
    ([4.3174, 6.66, 9.6736], [4.3174, 6.7297, 10.0])
    """
    _, N, Z, Dq, _, Z0 = _inputs(demands, population, think_time, kinds, None,
                                 "proportional_bounds", False)
    if Dq.size == 0:
        raise ValueError("proportional_bounds needs at least one queueing station with a positive "
                         "demand; got none")
    D = float(Dq.sum())
    Dmax = float(Dq.max())
    u = Dq / Dmax
    Nf = N.astype(float)
    flat = np.atleast_1d(Nf)
    hi_w = np.array([Dmax * float(np.sum(u ** n)) / float(np.sum(u ** (n - 1))) for n in flat])
    hi_w = hi_w.reshape(Nf.shape)
    lo_w = float(np.sum(Dq ** 2) / D)
    x_lo = Nf / (Z + D + (Nf - 1.0) * hi_w)
    x_up = np.minimum(1.0 / Dmax, Nf / (Z + D + (Nf - 1.0 - Z / Dmax) * lo_w))
    r_lo = Nf / x_up - Z0
    r_hi = Nf / x_lo - Z0
    return Bounds(population=_pop(N), throughput_lower=scalar_or_array(x_lo),
                  throughput_upper=scalar_or_array(x_up), response_lower=scalar_or_array(r_lo),
                  response_upper=scalar_or_array(r_hi), n_star=float((D + Z) / Dmax), method="pb")


def _geometric_sum(y: np.ndarray, n: int) -> np.ndarray:
    """``sum_{j=1}^n y^j`` for ``0 <= y <= 1`` (elementwise), exact at and near ``y = 1``."""
    if n <= 0:
        return np.zeros_like(y)
    near = np.abs(1.0 - y) < 1e-4
    with np.errstate(divide="ignore", invalid="ignore"):
        closed = y * -np.expm1(n * np.log(np.where(y > 0, y, 1.0))) / (1.0 - y)
    out = np.where(y > 0, closed, 0.0)
    if near.any():
        j = np.arange(1, n + 1, dtype=float)
        out[near] = (y[near, None] ** j[None, :]).sum(axis=1)
    return out


def geometric_bounds(demands: Any, population: Any = None, think_time: Any = None, *,
                     kinds: Any = None) -> Bounds:
    r"""Geometric bounds (GB / GSB, Casale, Muntz and Serazzi) on throughput and response time.

    Parameters
    ----------
    demands : array_like, shape (K,), or ClosedNetwork
        Service demand (loading ``L_k``) per station (``"queue"`` and
        ``"delay"`` stations), or a single-class network.
    population : int or array_like of int
        ``N >= 1``.
    think_time : float
        ``Z >= 0`` (delay-station demands are added to it).
    kinds : sequence of {"queue", "delay"}, optional

    Returns
    -------
    Bounds
        ``method="gb"``.

    Notes
    -----
    In a product-form network ``Q_k(N) = sum_{n=1}^N L_k^n G(N-n)/G(N)`` and
    ``G(N-n)/G(N) = prod_{t<n} X(N-t)``, a product of throughputs that is
    bounded by geometric sequences.  The queue lengths of the stations with
    ``L_k < L_max`` are bounded by finite geometric sums (Casale et al.
    2008, eqs. 8 and 13):

    .. math::

        Q^-_k(n) = \sum_{j=1}^{n} y_k^j,\quad y_k = \frac{n L_k}{Z + L + L_{max} n};
        \qquad
        Q^+_k(n) = \sum_{j=1}^{n} Y_k^j,\quad Y_k = L_k X^+(n),

    with ``L = sum_k L_k`` and ``X^+`` the proportional upper bound
    ``X^+(n) = min(1/L_max, n/(Z + L + sigma (n - 1 - Z X^+_{aba}(n-1))))``,
    ``sigma = sum L_k^2 / L``, ``X^+_{aba}(n) = min(1/L_max, n/(Z + L))``.
    The MVA equation, with ``sum_k Q_k(N-1) = N - 1 - Z X(N-1)``, reads

    .. math::

        X(N) = \frac{N}{A(N) - Z L_{max} X(N-1)},\qquad
        A(N) = Z + L + L_{max}(N-1) - \sum_{k: L_k < L_{max}} (L_{max} - L_k) Q_k(N-1),

    and ``(N-1)/N X(N) <= X(N-1) <= X(N)`` turns it into quadratic
    inequalities, whose roots are the geometric square-root bounds (GSB):

    .. math::

        X^-(N) = \frac{2N}{A^- + \sqrt{(A^-)^2 - 4 Z L_{max} (N-1)}},\qquad
        X^+(N) = \frac{2N}{A^+ + \sqrt{(A^+)^2 - 4 Z L_{max} N}},

    ``A^-`` with ``Q^-_k(N-1)``, ``A^+`` with ``Q^+_k(N-1)``.  With ``Z = 0``
    they are the geometric bounds ``N / A^{\mp}``.  The upper bound is
    capped at ``1/L_max``; where the quadratic does not confine ``X(N)``
    below its larger root (negative discriminant, or a larger root under the
    asymptotic bound ``min(1/L_max, N/(Z+L))``) the asymptotic bound is
    returned instead.  These are the values of the paper's Tables IV
    (``Z = 0``) and V (``Z = 1``).  For ``Z > 0`` and small ``N`` the
    balanced-job or asymptotic upper bound can be the tighter one (Table V,
    ``N = 2``); intersect them if both sides matter.

    References
    ----------
    G. Casale, R. R. Muntz, G. Serazzi, "Geometric bounds: a noniterative
    analysis technique for closed queueing networks", IEEE Trans. Computers
    57(6), 2008, pp. 780-794.  Octave ``qncsgb``; LINE ``pfqn_xzgsblow``,
    ``pfqn_xzgsbup``.

    Examples
    --------
    Casale et al. (2008), Table IV (``Z = 0``):

    >>> b = geometric_bounds([0.1, 0.1, 0.09, 0.08], population=[2, 5, 80])
    >>> b.throughput_lower.round(4).tolist(), b.throughput_upper.round(4).tolist()
    ([4.304, 6.6859, 9.8233], [4.3174, 6.7524, 9.8765])

    Per-station queue lengths are bracketed too (``queue_lower``, ``queue_upper``):

    >>> g = geometric_bounds([0.1, 0.1, 0.09, 0.08], population=5)
    >>> g.queue_lower.round(3).tolist(), g.queue_upper.round(3).tolist()
    ([1.267, 1.267, 1.032, 0.834], [1.774, 1.774, 1.411, 1.114])
    """
    _, N, Z, Dq, _, Z0 = _inputs(demands, population, think_time, kinds, None,
                                 "geometric_bounds", False)
    if Dq.size == 0:
        raise ValueError("geometric_bounds needs at least one queueing station with a positive "
                         "demand; got none")
    L = float(Dq.sum())
    Lm = float(Dq.max())
    sigma = float(np.sum(Dq ** 2) / L)
    low = Dq < Lm
    dl = (Lm - Dq)[low]

    def x_plus(n: int) -> float:
        x_aba = min(1.0 / Lm, (n - 1) / (Z + L))
        return min(1.0 / Lm, n / (Z + L + sigma * (n - 1 - Z * x_aba)))

    flat = np.atleast_1d(N).ravel()
    x_lo = np.empty(flat.size)
    x_up = np.empty(flat.size)
    for i, n in enumerate(flat.tolist()):
        n = int(n)
        m = n - 1
        q_lo = _geometric_sum(m * Dq[low] / (Z + L + Lm * m), m)
        q_up = _geometric_sum(np.minimum(Dq[low] * (x_plus(m) if m > 0 else 0.0), 1.0), m)
        base = Z + L + Lm * m
        a_lo = base - float(np.dot(dl, q_lo))
        a_up = base - float(np.dot(dl, q_up))
        x_lo[i] = 2.0 * n / (a_lo + np.sqrt(max(a_lo * a_lo - 4.0 * Z * Lm * m, 0.0)))
        x_aba = min(1.0 / Lm, n / (Z + L))
        disc = a_up * a_up - 4.0 * Z * Lm * n
        if disc < 0.0 or a_up <= 0.0:
            x_up[i] = x_aba
            continue
        # the larger root (a_up + sqrt(disc)) / (2 Z L_max) must lie above X(N) <= x_aba
        above = a_up + np.sqrt(disc) > 2.0 * Z * Lm * x_aba
        x_up[i] = min(1.0 / Lm, 2.0 * n / (a_up + np.sqrt(disc))) if above else x_aba
    shape = np.shape(N)
    x_lo_a, x_up_a = x_lo.reshape(shape), x_up.reshape(shape)
    q_lo_a, q_up_a = _geometric_queue_bounds(demands, kinds, flat, x_lo, x_up, Z, L, Lm,
                                             x_plus)
    Nf = N.astype(float)
    return Bounds(population=_pop(N), throughput_lower=scalar_or_array(x_lo_a),
                  throughput_upper=scalar_or_array(x_up_a),
                  response_lower=scalar_or_array(Nf / x_up_a - Z0),
                  response_upper=scalar_or_array(Nf / x_lo_a - Z0),
                  n_star=float((Z + L) / Lm), method="gb",
                  queue_lower=q_lo_a.reshape(shape + q_lo_a.shape[-1:]),
                  queue_upper=q_up_a.reshape(shape + q_up_a.shape[-1:]))


def _geometric_queue_bounds(demands: Any, kinds: Any, pops: np.ndarray, x_lo: np.ndarray,
                            x_up: np.ndarray, Z: float, L: float, Lm: float,
                            x_plus: Any) -> tuple[np.ndarray, np.ndarray]:
    """Per-station queue-length bounds of :func:`geometric_bounds`, one row per population.

    Queueing stations: ``Q^-_k(N) = sum_{j<=N} y_k^j`` with
    ``y_k = N L_k / (Z + L + L_max N)`` and ``Q^+_k(N) = sum_{j<=N} Y_k^j`` with
    ``Y_k = L_k min(X^+(N), X^+_{gb}(N))`` (``N`` where ``Y_k >= 1``): since
    ``X(N - t) <= X(N)``, any upper throughput bound at ``N`` bounds every factor
    of ``Q_k(N) = sum_n L_k^n prod_{t<n} X(N-t)``.  Delay stations hold
    ``L_k X(N)`` jobs exactly, so ``L_k X^-`` and ``L_k X^+`` bound them.
    """
    if isinstance(demands, ClosedNetwork):
        d = np.asarray(demands.demands[0], dtype=float)
        kinds = demands.kinds
    else:
        d = np.asarray(demands, dtype=float)
    delay = np.array([k == "delay" for k in kinds]) if kinds is not None else np.zeros(d.size, bool)
    queue = ~delay & (d > 0)
    lo = np.zeros((pops.size, d.size))
    up = np.zeros((pops.size, d.size))
    for i, n in enumerate(pops.tolist()):
        n = int(n)
        Dk = d[queue]
        lo[i, queue] = _geometric_sum(n * Dk / (Z + L + Lm * n), n)
        Y = Dk * min(x_plus(n), x_up[i])
        up[i, queue] = np.where(Y < 1.0, _geometric_sum(np.minimum(Y, 1.0), n), float(n))
        lo[i, delay] = d[delay] * x_lo[i]
        up[i, delay] = d[delay] * x_up[i]
    return lo, np.minimum(up, pops[:, None].astype(float))


@dataclass(frozen=True, kw_only=True)
class OpenBounds:
    """Bounds on a single-class open network.

    Attributes
    ----------
    arrival_rate : float or numpy.ndarray
        The arrival rate(s) ``lambda`` the bounds are for.
    saturation_rate : float
        ``1 / D_max``: the network is stable only for ``lambda`` below it.
    response_lower, response_upper : float or numpy.ndarray
        ``R(lambda)`` lies between them; ``inf`` at or beyond saturation.
    method : str
        ``"aba"`` (upper bound ``inf``) or ``"bjb"``.
    """

    arrival_rate: Any
    saturation_rate: float
    response_lower: Any
    response_upper: Any
    method: str

    def to_dict(self) -> dict[str, Any]:
        """Plain dictionary (arrays as lists)."""
        return plain_dict(self)


_OPEN_METHODS = ("aba", "bjb")


def open_bounds(arrival_rate: Any, demands: Any, *, method: str = "bjb") -> OpenBounds:
    r"""Asymptotic or balanced bounds on the response time of an open network.

    Parameters
    ----------
    arrival_rate : float or array_like
        Poisson arrival rate ``lambda >= 0`` (the bounds broadcast over it).
    demands : array_like, shape (K,)
        Service demand of one job at each single-server queueing station
        (delay stations add their demand to both bounds: include them in
        neither and add them yourself).
    method : {"bjb", "aba"}
        ``"aba"``: only the no-queueing lower bound; ``"bjb"`` (default):
        the balanced bounds, which bracket the response time on both sides.

    Returns
    -------
    OpenBounds

    Notes
    -----
    With ``D = sum_k D_k``, ``D_avg = D / K`` and ``D_max = max_k D_k``
    over the ``K`` stations with positive demand, the network is stable for
    ``lambda < 1 / D_max``, and

    .. math::

        \text{ABA: } D \le R(\lambda), \qquad
        \text{BJB: } \frac{D}{1 - \lambda D_{avg}} \le R(\lambda)
        \le \frac{D}{1 - \lambda D_{max}} .

    They hold because ``R = sum_k D_k / (1 - lambda D_k)`` (product form)
    and ``x / (1 - lambda x)`` is increasing and convex: the balanced
    network of demands ``D_avg`` is the most favourable of total demand
    ``D``, the one with every demand ``D_max`` the least.

    References
    ----------
    Lazowska et al. (1984), sections 5.2 and 5.3 (open models);
    Zahorjan, Sevcik, Eager and Galler (1982).  Octave ``qnosaba``,
    ``qnosbsb``.

    Examples
    --------
    >>> b = open_bounds([0.1, 0.4], [1.0, 2.0, 0.5])
    >>> b.saturation_rate, b.response_lower.round(4).tolist(), b.response_upper.round(4).tolist()
    (0.5, [3.9623, 6.5625], [4.375, 17.5])
    """
    check_choice("method", method, _OPEN_METHODS)
    lam = check_nonnegative("arrival_rate", arrival_rate)
    d = check_nonnegative("demands", demands)
    if d.ndim != 1 or not (d > 0).any():
        raise ValueError("demands must be 1-D (one per station) with a positive entry; got "
                         f"{d.tolist()}")
    Dq = d[d > 0]
    D, Dmax, Davg = float(Dq.sum()), float(Dq.max()), float(Dq.mean())
    ok = lam * Dmax < 1.0
    with np.errstate(divide="ignore", invalid="ignore"):
        if method == "aba":
            lo = np.where(ok, D, np.inf)
            hi = np.full(lam.shape, np.inf)
        else:
            lo = np.where(ok, D / (1.0 - lam * Davg), np.inf)
            hi = np.where(ok, D / (1.0 - lam * Dmax), np.inf)
    return OpenBounds(arrival_rate=scalar_or_array(lam), saturation_rate=1.0 / Dmax,
                      response_lower=scalar_or_array(lo), response_upper=scalar_or_array(hi),
                      method=method)


@dataclass(frozen=True, kw_only=True)
class ChainBounds:
    """Per-chain bounds on a multi-chain closed network.

    Attributes
    ----------
    throughput_lower, throughput_upper : numpy.ndarray, shape (R,)
        Chain throughput ``X_r`` (cycles per time unit) lies between them.
    response_lower, response_upper : numpy.ndarray, shape (R,)
        ``R_r = N_r / X_r - Z_r`` lies between them (0 for empty chains).
    method : str
        ``"aba"`` or ``"bjb"``.
    """

    throughput_lower: np.ndarray
    throughput_upper: np.ndarray
    response_lower: np.ndarray
    response_upper: np.ndarray
    method: str

    def to_dict(self) -> dict[str, Any]:
        """Plain dictionary (arrays as lists)."""
        return plain_dict(self)

    def contains(self, throughput: Any) -> Any:
        """True where ``throughput_lower <= throughput <= throughput_upper`` (1e-12 slack)."""
        x = np.asarray(throughput, dtype=float)
        return ((x >= self.throughput_lower * (1 - 1e-12))
                & (x <= self.throughput_upper * (1 + 1e-12)))


def multiclass_aba_bounds(network: ClosedNetwork) -> ChainBounds:
    r"""Asymptotic bounds on the throughput of each chain of a multi-chain network.

    Parameters
    ----------
    network : ClosedNetwork
        ``"queue"``, ``"delay"`` and ``"multi"`` stations; chains with
        several classes use the chain demands.

    Returns
    -------
    ChainBounds

    Notes
    -----
    With the chain demands ``D_rk``, ``|N| = sum_s N_s`` customers in all,
    ``Z_r`` plus the delay demands as think time ``Z'_r``, and ``m_k``
    servers:

    .. math::

        \frac{N_r}{Z'_r + |N| \sum_{k \in Q} D_{rk}}
        \le X_r \le
        \min\Bigl(\frac{N_r}{Z'_r + \sum_{k \in Q} D_{rk}},\ \min_k \frac{m_k}{D_{rk}}\Bigr).

    The upper bound: no queueing, and no station beyond its capacity even
    if chain ``r`` had it alone.  The lower bound: a customer finds at most
    ``|N| - 1`` others at a station and, in a product-form network
    (processor sharing, or FCFS with one service time per station), gets at
    least the share ``1/n`` of a server among ``n`` present, so its
    residence is at most ``|N| D_rk``.  (Octave's ``qncmaba`` uses
    ``sum_s N_s D_s`` instead, the same when the chains' demands are
    equal.)  These are the single-class bounds of Lazowska et al. (1984),
    section 5.2, chain by chain.

    References
    ----------
    Lazowska et al. (1984), section 5.2; Octave ``qncmaba``.

    Examples
    --------
    >>> net = ClosedNetwork(demands=[[1.0, 2.0], [0.5, 0.5]], populations=[2, 3])
    >>> b = multiclass_aba_bounds(net)
    >>> b.throughput_lower.round(4).tolist(), b.throughput_upper.round(4).tolist()
    ([0.1333, 0.6], [0.5, 2.0])
    """
    if not isinstance(network, ClosedNetwork):
        raise ValueError(f"network must be a ClosedNetwork; got {type(network).__name__}")
    for k, kd in enumerate(network.kinds):
        if kd == "ld":
            raise ValueError(f"kinds[{k}] is 'ld'; multiclass_aba_bounds takes 'queue', "
                             "'delay' and 'multi' stations")
    Dch = network.chain_demands
    kinds = np.array(network.kinds)
    delay = kinds == "delay"
    N = network.populations.astype(float)
    Ntot = float(N.sum())
    Zp = network.think_times + Dch[:, delay].sum(axis=1)
    Dq = Dch[:, ~delay]
    m = network.servers[~delay].astype(float)
    D = Dq.sum(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        cap = np.where(Dq > 0, m / np.where(Dq > 0, Dq, 1.0), np.inf).min(axis=1, initial=np.inf)
        x_up = np.where(N > 0, np.minimum(N / (Zp + D), cap), 0.0)
        x_lo = np.where(N > 0, N / (Zp + Ntot * D), 0.0)
        r_lo = np.where(N > 0, N / np.where(x_up > 0, x_up, 1.0) - network.think_times, 0.0)
        r_hi = np.where(N > 0, N / np.where(x_lo > 0, x_lo, 1.0) - network.think_times, 0.0)
    return ChainBounds(throughput_lower=x_lo, throughput_upper=x_up, response_lower=r_lo,
                       response_upper=r_hi, method="aba")


def multiclass_bjb_bounds(network: ClosedNetwork) -> ChainBounds:
    r"""Balanced bounds on the throughput of each chain of a multi-chain network.

    Parameters
    ----------
    network : ClosedNetwork
        ``"queue"`` and ``"delay"`` stations (single servers: the bounds
        rest on the arrival theorem at load-independent queues); chains
        with several classes use the chain demands.

    Returns
    -------
    ChainBounds
        ``method="bjb"``.

    Notes
    -----
    By the arrival theorem a chain-``r`` customer's cycle is
    ``Z'_r + D_r + sum_k D_rk Q_k(N - e_r)`` (``Q_k``: all chains' customers
    at queueing station ``k``; ``Z'_r``: think time plus delay demands;
    ``D_r = sum_k D_rk`` over the queueing stations), and the customers at the
    queueing stations number ``sum_k Q_k(N - e_r) = |N| - 1 - sum_s Z'_s
    X_s(N - e_r)``.  Bounding ``D_rk`` between ``D^{min}_r`` and
    ``D^{max}_r`` (over the queueing stations any chain visits) and
    ``X_s(N - e_r)`` by its asymptotic bounds gives

    .. math::

        \frac{N_r}{Z'_r + D_r + D^{max}_r\,\bigl(|N| - 1 - \sum_s Z'_s X^-_s\bigr)^+}
        \le X_r \le
        \min\Bigl(\frac{1}{D^{max}_r},\ \frac{N_r}{Z'_r + D_r},\
        \frac{N_r}{Z'_r + D_r + D^{min}_r\,\bigl(|N| - 1 - \sum_s Z'_s X^+_s\bigr)^+}\Bigr)

    with ``X^-_s = (N - e_r)_s / (Z'_s + (|N| - 1) D_s)`` and
    ``X^+_s = min((N - e_r)_s / (Z'_s + D_s), 1 / D^{max}_s)``, the
    asymptotic bounds at ``N - e_r`` (:func:`multiclass_aba_bounds`).
    Without think time these are Kerola's balanced system bounds (Octave
    ``qncmbsb``) with the upper one sharpened from ``(K + |N| - 1) D^{min}_r``
    to ``D_r + (|N| - 1) D^{min}_r``; for one chain and ``Z = 0`` the lower
    bound is the balanced-job lower bound of Zahorjan et al.  They are never
    looser than :func:`multiclass_aba_bounds`.

    References
    ----------
    T. Kerola, "The composite bound method for computing throughput bounds
    in multiple class environments", Performance Evaluation 6(1), 1986,
    pp. 1-9 (Purdue CSD-TR-475, 1984); Octave ``qncmbsb``.
    Zahorjan, Sevcik, Eager and Galler (1982).  M. Reiser and S. S.
    Lavenberg, "Mean-value analysis of closed multichain queuing networks",
    JACM 27(2), 1980 (the arrival theorem).

    Examples
    --------
    >>> net = ClosedNetwork(demands=[[1.0, 2.0], [0.5, 0.5]], populations=[2, 3])
    >>> b = multiclass_bjb_bounds(net)      # exact: [0.2143, 1.0]
    >>> b.throughput_lower.round(4).tolist(), b.throughput_upper.round(4).tolist()
    ([0.1818, 1.0], [0.2857, 1.0])
    """
    if not isinstance(network, ClosedNetwork):
        raise ValueError(f"network must be a ClosedNetwork; got {type(network).__name__}")
    for k, kd in enumerate(network.kinds):
        if kd not in ("queue", "delay"):
            raise ValueError(f"kinds[{k}] is {kd!r}; multiclass_bjb_bounds takes 'queue' and "
                             f"'delay' stations")
    Dch = network.chain_demands
    delay = np.array(network.kinds) == "delay"
    N = network.populations.astype(float)
    R = N.size
    Ntot = float(N.sum())
    Zp = network.think_times + Dch[:, delay].sum(axis=1)
    Dq = Dch[:, ~delay]
    Dq = Dq[:, (Dq > 0).any(axis=0)]             # stations no chain visits hold nobody
    D = Dq.sum(axis=1)
    Dmax = Dq.max(axis=1, initial=0.0)
    Dmin = Dq.min(axis=1, initial=np.inf) if Dq.shape[1] else np.zeros(R)
    x_lo = np.zeros(R)
    x_up = np.zeros(R)
    with np.errstate(divide="ignore", invalid="ignore"):
        cap = np.where(Dmax > 0, 1.0 / np.where(Dmax > 0, Dmax, 1.0), np.inf)
        for r in range(R):
            if N[r] == 0:
                continue
            n = N - (np.arange(R) == r)                          # N - e_r
            xs_lo = np.where(n > 0, n / (Zp + (Ntot - 1.0) * D), 0.0)
            xs_up = np.where(n > 0, np.minimum(n / (Zp + D), cap), 0.0)
            q_hi = max(Ntot - 1.0 - float(np.dot(Zp, xs_lo)), 0.0)
            q_lo = max(Ntot - 1.0 - float(np.dot(Zp, xs_up)), 0.0)
            x_lo[r] = N[r] / (Zp[r] + D[r] + Dmax[r] * q_hi)
            x_up[r] = min(cap[r], N[r] / (Zp[r] + D[r]), N[r] / (Zp[r] + D[r] + Dmin[r] * q_lo))
        r_lo = np.where(N > 0, N / np.where(x_up > 0, x_up, 1.0) - network.think_times, 0.0)
        r_hi = np.where(N > 0, N / np.where(x_lo > 0, x_lo, 1.0) - network.think_times, 0.0)
    return ChainBounds(throughput_lower=x_lo, throughput_upper=x_up, response_lower=r_lo,
                       response_upper=r_hi, method="bjb")
