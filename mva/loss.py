r"""Finite-capacity and loss queues: M/M/1/K, M/M/c/K, M/M/inf, Erlang B, Engset.

Every function broadcasts its arguments (scalars in give scalars out).
Rates are given as a Poisson arrival rate ``lambda`` and a mean exponential
service time ``S`` of one server (Octave's ``qsmm1k`` and friends take the
service *rate* ``mu = 1 / S``).

* :func:`mm1k`, :func:`mmck` -- at most ``K`` customers in the system
  (waiting plus in service); an arrival finding ``K`` present is lost.
  Measured from the stationary birth-death distribution

  .. math::

      p_j = p_0\,\frac{a^j}{j!} \ (j \le c), \qquad
      p_j = p_0\,\frac{a^c}{c!}\,\rho^{\,j-c} \ (c < j \le K), \qquad
      a = \lambda S,\ \rho = a / c,

  computed in logarithms (no overflow for large ``K`` or ``c``) and
  normalised with ``logsumexp``.  Blocking is ``p_K``; the accepted
  throughput ``X = lambda (1 - p_K)``; ``L = sum j p_j``; ``R = L / X``
  (Little).  Any ``rho`` is allowed (the queue is finite).
* :func:`mminf` -- infinitely many servers: the number present is Poisson
  with mean ``a``; ``R = S``.
* :func:`erlang_b` -- the M/M/c/c loss system:
  ``B(c, a) = (a^c / c!) / sum_{j<=c} a^j / j!``, by the stable recursion
  ``B(0) = 1``, ``B(j) = a B(j-1) / (j + a B(j-1))``.
* :func:`engset` -- ``c`` servers, ``N`` finite sources each generating
  requests at rate ``lambda`` while idle; lost requests return to idle.

References
----------
L. Kleinrock, *Queueing Systems, Volume 1: Theory*, Wiley, 1975, sections
3.4-3.7 (M/M/inf, M/M/1/K, M/M/c/c, M/M/c/K, finite sources).
G. Bolch, S. Greiner, H. de Meer, K. S. Trivedi, *Queueing Networks and
Markov Chains*, 2nd ed., Wiley, 2006, sections 6.2.2-6.2.4 (M/M/m/K,
M/M/inf, Engset).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ._validate import (check_choice, check_integer, check_nonnegative, check_positive,
                        scalar_or_array)
from .results import plain_dict

__all__ = ["FiniteQueueResult", "mm1k", "mmck", "mminf", "erlang_b", "engset"]


@dataclass(frozen=True, kw_only=True)
class FiniteQueueResult:
    """Mean measures of a finite-capacity or infinite-server queue.

    Attributes
    ----------
    model : str
        ``"M/M/1/K"``, ``"M/M/c/K"`` or ``"M/M/inf"``.
    arrival_rate : float or numpy.ndarray
        Offered arrival rate ``lambda``.
    throughput : float or numpy.ndarray
        Accepted rate ``X = lambda (1 - blocking)``.
    blocking : float or numpy.ndarray
        Probability that an arrival is lost, ``p_K`` (0 for M/M/inf).
    utilization : float or numpy.ndarray
        Per-server utilization ``X S / c``; for M/M/inf the probability that
        the system is not empty, ``1 - exp(-a)`` (as Octave's ``qsmminf``).
    queue_length : float or numpy.ndarray
        Mean number in the system ``L``.
    response_time : float or numpy.ndarray
        Mean time in the system of an accepted customer, ``R = L / X``.
    waiting_time : float or numpy.ndarray
        ``W = R - S``.
    waiting_queue_length : float or numpy.ndarray
        Mean number waiting, ``Lq = X W``.
    prob_empty : float or numpy.ndarray
        ``p_0``.
    """

    model: str
    arrival_rate: Any
    throughput: Any
    blocking: Any
    utilization: Any
    queue_length: Any
    response_time: Any
    waiting_time: Any
    waiting_queue_length: Any
    prob_empty: Any

    def to_dict(self) -> dict[str, Any]:
        """Plain dictionary (arrays as lists)."""
        return plain_dict(self)


def _mmck_point(lam: float, S: float, c: int, K: int) -> tuple[float, float, float]:
    """(p_0, p_K, L) of one M/M/c/K point."""
    from scipy.special import gammaln, logsumexp
    a = lam * S
    if a == 0.0:
        return 1.0, 0.0, 0.0
    j = np.arange(K + 1, dtype=float)
    jc = np.minimum(j, c)
    logw = jc * np.log(a) - gammaln(jc + 1.0) + (j - jc) * np.log(a / c)
    p = np.exp(logw - logsumexp(logw))
    return float(p[0]), float(p[K]), float(j @ p)


def _finite(model: str, lam: np.ndarray, S: np.ndarray, c: np.ndarray, K: np.ndarray
            ) -> FiniteQueueResult:
    shape = lam.shape
    p0 = np.empty(shape)
    pK = np.empty(shape)
    L = np.empty(shape)
    for i in np.ndindex(shape):
        p0[i], pK[i], L[i] = _mmck_point(float(lam[i]), float(S[i]), int(c[i]), int(K[i]))
    X = lam * (1.0 - pK)
    with np.errstate(divide="ignore", invalid="ignore"):
        R = np.where(X > 0, L / np.where(X > 0, X, 1.0), S)
    W = R - S
    return FiniteQueueResult(model=model, arrival_rate=scalar_or_array(lam),
                             throughput=scalar_or_array(X),
                             blocking=scalar_or_array(pK), utilization=scalar_or_array(X * S / c),
                             queue_length=scalar_or_array(L), response_time=scalar_or_array(R),
                             waiting_time=scalar_or_array(W),
                             waiting_queue_length=scalar_or_array(X * W),
                             prob_empty=scalar_or_array(p0))


def mm1k(arrival_rate: Any, service_time: Any, capacity: Any) -> FiniteQueueResult:
    r"""M/M/1/K queue: one server, at most ``K`` customers in the system.

    Parameters
    ----------
    arrival_rate : float or array_like
        Offered Poisson arrival rate ``lambda >= 0``.
    service_time : float or array_like
        Mean exponential service time ``S > 0``.
    capacity : int or array_like of int
        ``K >= 1``, the most customers present (in service included).

    Returns
    -------
    FiniteQueueResult

    Notes
    -----
    With ``rho = lambda S``:

    .. math::

        p_j = \frac{(1 - \rho)\,\rho^j}{1 - \rho^{K+1}}\ (\rho \ne 1), \qquad
        p_j = \frac{1}{K + 1}\ (\rho = 1),

    blocking ``p_K``, ``X = lambda (1 - p_K)``, ``L = sum_j j p_j``,
    ``R = L / X``.  Computed as :func:`mmck` with ``c = 1`` (no
    cancellation near ``rho = 1``).

    References
    ----------
    Kleinrock (1975), section 3.6; Bolch et al. (2006), section 6.2.4.

    Examples
    --------
    ``rho = 1`` and ``K = 3``: the four states are equally likely.

    >>> r = mm1k(1.0, 1.0, 3)
    >>> r.blocking, r.queue_length, r.response_time
    (0.25, 1.5, 2.0)
    >>> round(mm1k(2.0, 1.0, 5).throughput, 6)      # overload is allowed
    0.984127
    """
    lam = check_nonnegative("arrival_rate", arrival_rate)
    S = check_positive("service_time", service_time)
    K = check_integer("capacity", capacity, minimum=1)
    lam, S, K = np.broadcast_arrays(lam, S, K)
    return _finite("M/M/1/K", lam, S, np.ones(lam.shape, dtype=np.int64), K)


def mmck(arrival_rate: Any, service_time: Any, servers: Any, capacity: Any) -> FiniteQueueResult:
    r"""M/M/c/K queue: ``c`` servers, at most ``K >= c`` customers in the system.

    Parameters
    ----------
    arrival_rate : float or array_like
        Offered Poisson arrival rate ``lambda >= 0``.
    service_time : float or array_like
        Mean exponential service time ``S > 0`` of one server.
    servers : int or array_like of int
        ``c >= 1``.
    capacity : int or array_like of int
        ``K >= c``; ``K = c`` is the Erlang loss system (:func:`erlang_b`).

    Returns
    -------
    FiniteQueueResult
        ``utilization`` is per server, ``X S / c``.

    Notes
    -----
    With ``a = lambda S`` and ``rho = a / c``,

    .. math::

        p_j = p_0 \frac{a^j}{j!}\ (0 \le j \le c), \qquad
        p_j = p_0 \frac{a^c}{c!} \rho^{\,j - c}\ (c < j \le K),

    ``p_0`` normalises; blocking ``p_K``, ``X = lambda (1 - p_K)``,
    ``L = sum_j j p_j``, ``R = L / X``, ``W = R - S``, ``Lq = X W``.

    References
    ----------
    Kleinrock (1975), section 3.7; Bolch et al. (2006), section 6.2.4
    (M/M/m/K).

    Examples
    --------
    >>> r = mmck(2.0, 1.0, 2, 2)                    # Erlang B: B(2, 2) = 0.4
    >>> round(r.blocking, 12), round(r.throughput, 12)
    (0.4, 1.2)
    >>> round(mmck(1.0, 1.0, 2, 1000).queue_length, 9) # ~ M/M/2 at rho = 0.5
    1.333333333
    """
    lam = check_nonnegative("arrival_rate", arrival_rate)
    S = check_positive("service_time", service_time)
    c = check_integer("servers", servers, minimum=1)
    K = check_integer("capacity", capacity, minimum=1)
    lam, S, c, K = np.broadcast_arrays(lam, S, c, K)
    if (K < c).any():
        i = np.argwhere(np.atleast_1d(K < c))[0]
        raise ValueError("capacity must be >= servers; got capacity "
                         f"{int(np.atleast_1d(K)[tuple(i)])} "
                         f"with {int(np.atleast_1d(c)[tuple(i)])} servers")
    return _finite("M/M/c/K", lam, S, c, K)


def mminf(arrival_rate: Any, service_time: Any) -> FiniteQueueResult:
    r"""M/M/inf queue (infinite server, pure delay).

    Parameters
    ----------
    arrival_rate : float or array_like
        Poisson arrival rate ``lambda >= 0``.
    service_time : float or array_like
        Mean service time ``S > 0`` (any distribution: the result is
        insensitive to it).

    Returns
    -------
    FiniteQueueResult
        ``blocking = 0``, ``R = S``, ``W = 0``, ``L = a``;
        ``utilization = 1 - exp(-a)``, the probability that some server is
        busy (Octave ``qsmminf``'s convention).

    Notes
    -----
    The number present is Poisson: ``p_j = e^{-a} a^j / j!`` with
    ``a = lambda S``.

    References
    ----------
    Kleinrock (1975), section 3.4; Bolch et al. (2006), section 6.2.3.

    Examples
    --------
    >>> r = mminf(2.0, 1.5)
    >>> r.queue_length, r.response_time, round(r.prob_empty, 6)
    (3.0, 1.5, 0.049787)
    """
    lam = check_nonnegative("arrival_rate", arrival_rate)
    S = check_positive("service_time", service_time)
    lam, S = np.broadcast_arrays(lam, S)
    a = lam * S
    p0 = np.exp(-a)
    z = np.zeros(a.shape)
    return FiniteQueueResult(model="M/M/inf", arrival_rate=scalar_or_array(lam),
                             throughput=scalar_or_array(lam),
                             blocking=scalar_or_array(z), utilization=scalar_or_array(1.0 - p0),
                             queue_length=scalar_or_array(a),
                             response_time=scalar_or_array(S.copy()),
                             waiting_time=scalar_or_array(z),
                             waiting_queue_length=scalar_or_array(z),
                             prob_empty=scalar_or_array(p0))


def erlang_b(servers: Any, offered_load: Any) -> Any:
    r"""Erlang's B (loss) formula: blocking probability of M/M/c/c.

    Parameters
    ----------
    servers : int or array_like of int
        ``c >= 0`` (``c = 0`` blocks everything).
    offered_load : float or array_like
        ``a = lambda S >= 0`` in Erlangs (any value: a loss system is always
        stable).

    Returns
    -------
    float or numpy.ndarray
        ``B(c, a)``.

    Notes
    -----
    .. math::

        B(c, a) = \frac{a^c / c!}{\sum_{j=0}^{c} a^j / j!}, \qquad
        B(0) = 1,\ B(j) = \frac{a\,B(j-1)}{j + a\,B(j-1)} .

    The recursion never overflows.  By insensitivity the result holds for
    any service-time distribution (M/G/c/c).

    References
    ----------
    Kleinrock (1975), section 3.5; Bolch et al. (2006), section 6.2.2.

    Examples
    --------
    >>> round(erlang_b(2, 2.0), 12)
    0.4
    >>> round(erlang_b(10, 5.0), 6)
    0.018385
    """
    c = check_integer("servers", servers, minimum=0)
    a = check_nonnegative("offered_load", offered_load)
    c, a = np.broadcast_arrays(c, a)
    B = np.ones(a.shape)
    out = np.where(c == 0, 1.0, 0.0)
    for j in range(1, int(c.max(initial=0)) + 1):
        B = a * B / (j + a * B)
        out = np.where(c == j, B, out)
    return scalar_or_array(out)


_CONGESTION = ("call", "time")


def engset(servers: Any, sources: Any, idle_load: Any, *, congestion: str = "call") -> Any:
    r"""Engset's formula: blocking with ``N`` finite sources and ``c`` servers.

    Parameters
    ----------
    servers : int or array_like of int
        ``c >= 1`` (no waiting room: a request finding all busy is lost).
    sources : int or array_like of int
        ``N >= 1`` sources; with ``N <= c`` nothing is ever blocked.
    idle_load : float or array_like
        ``beta = lambda S >= 0``: request rate of one *idle* source times
        the mean holding time.
    congestion : {"call", "time"}
        ``"call"`` (default): the probability that a request is blocked
        (what an arriving request sees, the Engset loss formula);
        ``"time"``: the fraction of time all servers are busy.

    Returns
    -------
    float or numpy.ndarray

    Notes
    -----
    The number of busy servers has the truncated binomial distribution
    ``p_j ∝ binom(N, j) beta^j``, ``0 <= j <= min(c, N)``.  By the arrival
    theorem for finite sources an arriving request sees the distribution of
    ``N - 1`` sources, hence

    .. math::

        B_{call} = \frac{\binom{N-1}{c}\beta^c}{\sum_{j=0}^{c}\binom{N-1}{j}\beta^j},
        \qquad
        B_{time} = \frac{\binom{N}{c}\beta^c}{\sum_{j=0}^{c}\binom{N}{j}\beta^j},

    each evaluated by the recursion ``B(0) = 1``,
    ``B(j) = (M - j + 1) beta B(j-1) / (j + (M - j + 1) beta B(j-1))``
    with ``M = N - 1`` or ``N``.  As ``N -> inf`` with ``N beta = a`` both
    tend to Erlang B.

    References
    ----------
    T. Engset, "Die Wahrscheinlichkeitsrechnung zur Bestimmung der
    Wählerzahl in automatischen Fernsprechämtern", Elektrotechnische
    Zeitschrift 39, 1918; Bolch et al. (2006), section 6.2.2; Kleinrock
    (1975), section 3.8.

    Examples
    --------
    Three sources, two servers, ``beta = 0.5 / 0.7`` (the documented
    example of R's ``queueing::Engset``, which reports time congestion
    0.3275109):

    >>> round(engset(2, 3, 0.5 / 0.7, congestion="time"), 7)
    0.3275109
    >>> round(engset(2, 3, 0.5 / 0.7), 7)
    0.1736111
    """
    check_choice("congestion", congestion, _CONGESTION)
    c = check_integer("servers", servers, minimum=1)
    N = check_integer("sources", sources, minimum=1)
    beta = check_nonnegative("idle_load", idle_load)
    c, N, beta = np.broadcast_arrays(c, N, beta)
    M = N - 1 if congestion == "call" else N
    B = np.ones(beta.shape)
    out = np.zeros(beta.shape)
    for j in range(1, int(c.max()) + 1):
        t = np.maximum(M - j + 1, 0) * beta * B
        B = t / (j + t)
        out = np.where(c == j, B, out)
    return scalar_or_array(out)
