"""Parallel dispatch queues (PDQ) and the Hurricane fine-grain DSMs (Falsafi and Wood 1999).

``k`` protocol processors serve the protocol events of one SMP node.  Each
handler carries a *synchronization key*: handlers with equal keys must run
one at a time, distinct keys may run in parallel; the *sequential* key
drains all running handlers and runs alone; *nosync* handlers run at any
time.  Three ways of organising the processors are compared:

``"shared"`` (PDQ)
    One queue; the dispatcher hands any handler whose key is not running to
    an idle processor (synchronization *before* dispatch).
``"partitioned"``
    Static partitioning into ``k`` queues, one per processor; key ``i`` (in
    decreasing popularity) always goes to queue ``i mod k``, nosync handlers
    are spread evenly.  No two processors ever hold the same key.
``"spinlock"``
    One queue, FCFS dispatch to any idle processor; keyed handlers acquire a
    software spin-lock (``o_lock`` cycles) and busy-wait while another
    processor holds the same key.

Processor organisations (Falsafi and Wood 1999, section 4): embedded protocol processors
(Hurricane), dedicated SMP processors (Hurricane-1) and idle SMP processors
multiplexed with computation, interrupted only when all are busy
(Hurricane-1 Mult, ``multiplexed=True``).  Presets come from Table 1 of Falsafi and Wood 1999.

References
----------
B. Falsafi and D. A. Wood, "Parallel Dispatch Queue: A Queue-Based
Programming Abstraction to Parallelize Fine-Grain Communication Protocols",
HPCA 1999, sections 3 to 5 and Table 1.  L. Kleinrock,
*Queueing Systems, Volume 1*, 1975 (birth-death queues, M/M/c, M/G/1).
"""

from __future__ import annotations

import functools
import warnings
from dataclasses import dataclass, fields
from typing import Any, Callable, Mapping

import numpy as np

from mva._validate import check_choice, check_integer, check_nonnegative, scalar_or_array
from mva.params import MAX_TIME, declarations, param, validate_fields
from mva.results import ResultMixin, with_inputs

from .accuracy import attach as _attach_accuracy

__all__ = [
    "PDQParams",
    "PDQResult",
    "PDQComparison",
    "DISCIPLINES",
    "MAX_TIME",
    "MIN_S",
    "TABLE_1",
    "TABLE_1_SYSTEMS",
    "HANDLER_ROWS",
    "occupancies",
    "round_trip",
    "PRESETS",
    "preset",
    "key_probabilities",
    "METHODS",
    "CTMC_MAX_STATES",
    "AUTO_MAX_STATES",
    "AUTO_MAX_K",
    "AUTO_MAX_POPULATION",
    "AUTO_BD_KEYS_PER_PROCESSOR",
    "CTMC_TRUNCATION_TOL",
    "COMPUTE_BURST_OVER_S",
    "INTERRUPT_QUEUE_TOL",
    "INTERRUPT_MAX_QUEUE",
    "solve",
    "compare",
    "equations",
    "register_cli",
]

#: dispatch disciplines understood by :func:`solve`
DISCIPLINES = ("shared", "partitioned", "spinlock")

#: systems (columns) of Table 1 of Falsafi and Wood 1999
TABLE_1_SYSTEMS = ("S-COMA", "Hurricane", "Hurricane-1")

#: Table 1 of Falsafi and Wood 1999: remote read miss latency breakdown, 400-MHz cycles,
#: 64-byte protocol.
#: Each row: (action, category, S-COMA, Hurricane, Hurricane-1).
TABLE_1: tuple[tuple[str, str, int, int, int], ...] = (
    ("detect miss, issue bus transaction", "request", 5, 5, 5),
    ("dispatch handler", "request", 12, 16, 87),
    ("get fault state, send", "request", 0, 36, 141),
    ("network latency", "network", 100, 100, 100),
    ("dispatch handler", "reply", 1, 3, 51),
    ("directory lookup", "reply", 8, 61, 121),
    ("fetch data, change tag, send", "reply", 136, 140, 205),
    ("network latency", "network", 100, 100, 100),
    ("dispatch handler", "response", 1, 4, 50),
    ("place data, change tag", "response", 8, 50, 63),
    ("resume, reissue bus transaction", "response", 6, 6, 178),
    ("fetch data, complete load", "response", 63, 63, 63),
)

#: row indices of TABLE_1 that occupy the protocol processor, per handler
HANDLER_ROWS: Mapping[str, tuple[int, ...]] = {
    "request": (1, 2), "reply": (4, 5, 6), "response": (8, 9, 10)}


def _column(system: str) -> int:
    check_choice("system", system, TABLE_1_SYSTEMS)
    return 2 + TABLE_1_SYSTEMS.index(system)


def round_trip(system: str) -> int:
    """Remote read miss round trip of Table 1 of Falsafi and Wood 1999, 400-MHz cycles.

    Examples
    --------
    >>> [round_trip(s) for s in TABLE_1_SYSTEMS]
    [440, 584, 1164]
    """
    col = _column(system)
    return int(sum(int(row[col]) for row in TABLE_1))


def occupancies(system: str) -> dict[str, int]:
    """Protocol-processor occupancy of the request, reply and response handlers.

    Request: dispatch + get fault state/send; reply: dispatch + directory
    lookup + fetch data/send; response: dispatch + place data + resume.  The
    request and response occupancies together grow by 315% from S-COMA to
    Hurricane, as section 5.1 of Falsafi and Wood 1999 states (27 to 112 cycles).

    Examples
    --------
    >>> occupancies("Hurricane")
    {'request': 52, 'reply': 204, 'response': 60}
    """
    col = _column(system)
    return {h: int(sum(int(TABLE_1[i][col]) for i in rows))
            for h, rows in HANDLER_ROWS.items()}


def _mean_handler(system: str) -> float:
    occ = occupancies(system)
    return float(sum(occ.values())) / 3.0


#: presets: keyword arguments of :class:`PDQParams` (see :func:`preset`)
PRESETS: Mapping[str, Mapping[str, Any]] = {
    "s-coma": {"S": _mean_handler("S-COMA"), "k": 1, "o_lock": 0.0},
    "hurricane": {"S": _mean_handler("Hurricane"), "k": 4},
    "hurricane-1": {"S": _mean_handler("Hurricane-1"), "k": 4},
    "hurricane-1-mult": {"S": _mean_handler("Hurricane-1"), "k": 8, "multiplexed": True,
                         "compute_utilization": 0.5},
}


#: smallest mean handler occupancy ``S`` accepted (cycles): every discipline is tested
#: down to it (the squared occupancy underflowed to 0 near 1e-300)
MIN_S = 1e-6


@dataclass(frozen=True, kw_only=True)
class PDQParams:
    """Parameters of the parallel-dispatch model (times in protocol-processor cycles).

    Every numeric field may be a NumPy array (broadcast).  Give exactly one
    of ``arrival_rate`` and ``load``.  Handler occupancies are exponential
    with squared coefficient of variation ``cs2`` entering as the
    Allen-Cunneen factor ``(1 + cs2) / 2`` on waiting times (exact for the
    partitioned M/G/1 queues).

    Attributes
    ----------
    k : int or array of int, default 2
        Protocol processors serving the node's protocol events (embedded or
        dedicated), or SMP processors per node when ``multiplexed``.
    arrival_rate : float or array, optional
        Poisson arrival rate of protocol events (handlers) at the node,
        handlers per cycle.
    load : float or array, optional
        Offered load per processor ``arrival_rate * S / k`` (alternative to
        ``arrival_rate``).
    S : float or array, default 100
        Mean handler occupancy, cycles (same for every key), in [:data:`MIN_S`,
        :data:`MAX_TIME`].
    cs2 : float or array, default 1
        Squared coefficient of variation of handler occupancy, in [0, 100].
    n_keys : int or array of int, default 64
        Number of distinct synchronization keys (e.g. cache blocks being
        handled).  Key ``i = 1..n_keys`` has probability proportional to
        ``i ** -key_skew`` (Zipf).
    key_skew : float or array, default 0
        Zipf exponent of key popularity (0: uniform).
    f_sequential : float or array, default 0
        Fraction of handlers with the sequential key (drain all running
        handlers, then run alone).
    f_nosync : float or array, default 0
        Fraction of handlers with the nosync key (run at any time, no
        synchronization).  The remaining ``1 - f_sequential - f_nosync``
        carry ordinary keys.
    o_lock : float or array, default 70
        ``"spinlock"`` only: cycles added to every keyed handler to acquire
        and release its spin-lock (one lock-line miss at 400 MHz plus the
        release store).
    multiplexed : bool, default False
        Hurricane-1 Mult: the ``k`` processors compute and run handlers only
        when idle; a handler arriving when all ``k`` compute interrupts one.
    compute_utilization : float or array, default 0
        ``multiplexed`` only: fraction of time an SMP processor is computing
        (not available for protocol work), in [0, 1).
    O_int : float or array, default 200
        ``multiplexed`` only: interrupt overhead, cycles (Falsafi and Wood 1999: 200).
    o_sched : float or array, default 120
        ``multiplexed`` only: scheduling overhead per handler on a
        multiplexed processor (switching to the protocol and the resulting
        cache interference), cycles.
    clock_hz : float or array, default 400e6
        Clock of the processors, Hz (Falsafi and Wood 1999: 400 MHz).

    Notes
    -----
    Under multiplexing handlers preempt computation, so all ``k``
    processors serve handlers, and the handler occupancy is

    .. math::

        S' = S + o_{sched} + p_{int} O_{int},

    :math:`p_{int}` the probability that an arriving handler finds no
    processor idle and not all serving handlers (it interrupts a computing
    one; :math:`u_c^k` at a trickle of handlers, see :func:`solve`;
    Falsafi and Wood 1999 use :math:`a = k (1 - u_c) + u_c^{k}` available processors and
    :math:`p_{int} = u_c^k`).  Otherwise ``S' = S``.

    Examples
    --------
    >>> prm = PDQParams(k=4, load=0.5, S=100)
    >>> prm.rate
    0.02
    """

    k: Any = param(symbol="k", meaning="protocol processors (SMP processors when multiplexed)",
                   unit="", kind="int", low=1, valid=(1, 16), default=2)
    arrival_rate: Any = param(symbol="lambda", meaning="Poisson arrival rate of handlers at the "
                              "node (give arrival_rate or load)", unit="per cycle", low=0,
                              optional=True, default=None)
    load: Any = param(symbol="rho", meaning="offered load per processor, arrival_rate S / k "
                      "(give arrival_rate or load)", unit="", low=0, optional=True,
                      valid=(0.02, 0.95), default=None)
    S: Any = param(symbol="S", meaning="mean handler occupancy", unit="cycles", low=MIN_S,
                   high=MAX_TIME, valid=(10, 1000), scale="log", default=100.0)
    cs2: Any = param(symbol="cs2", meaning="SCV of the handler occupancy", unit="", low=0,
                     high=100, valid=(0, 10), default=1.0)
    n_keys: Any = param(symbol="n_keys", meaning="distinct synchronization keys", unit="",
                        kind="int", low=1, high=10**6, valid=(1, 4096), scale="log",
                        default=64)
    key_skew: Any = param(symbol="s", meaning="Zipf exponent of key popularity (0 uniform)",
                          unit="", low=0, valid=(0, 1.5), default=0.0)
    f_sequential: Any = param(symbol="f_seq", meaning="fraction of sequential-key handlers",
                              unit="", low=0, high=1, valid=(0, 0.2), default=0.0)
    f_nosync: Any = param(symbol="f_nosync", meaning="fraction of nosync-key handlers", unit="",
                          low=0, high=1, valid=(0, 0.5), default=0.0)
    o_lock: Any = param(symbol="o_lock", meaning="spin-lock acquire and release cost per "
                        "keyed handler (spinlock only)", unit="cycles", low=0, high=MAX_TIME,
                        valid=(0, 500), default=70.0)
    multiplexed: bool = param(symbol="multiplexed", meaning="Hurricane-1 Mult: processors "
                              "compute and run handlers when idle", unit="", kind="bool",
                              default=False, cli=False)
    compute_utilization: Any = param(symbol="u_c", meaning="multiplexed only: fraction of "
                                     "time a processor computes", unit="", low=0, high=1,
                                     high_open=True, valid=(0, 0.9), default=0.0)
    O_int: Any = param(symbol="O_int", meaning="multiplexed only: interrupt overhead",
                       unit="cycles", low=0, high=MAX_TIME, valid=(0, 2000), default=200.0)
    o_sched: Any = param(symbol="o_sched", meaning="multiplexed only: scheduling overhead per "
                         "handler", unit="cycles", low=0, high=MAX_TIME, valid=(0, 1000),
                         default=120.0)
    clock_hz: Any = param(symbol="clock_hz", meaning="processor clock", unit="Hz", low=0,
                          low_open=True, default=400e6)

    def __post_init__(self) -> None:
        decl = declarations(self)
        decl["k"].check(self.k)
        if (self.arrival_rate is None) == (self.load is None):
            raise ValueError("PDQParams needs exactly one of arrival_rate (handlers per cycle) "
                             f"and load (per processor); got arrival_rate={self.arrival_rate!r}, "
                             f"load={self.load!r}")
        v = validate_fields(self)
        fs, fn = v["f_sequential"], v["f_nosync"]
        if np.any(fs + fn > 1.0 + 1e-12):
            raise ValueError("f_sequential + f_nosync must be <= 1; got "
                             f"{(fs + fn).max()!r}")

    @property
    def rate(self) -> Any:
        """Arrival rate of handlers, per cycle (from ``arrival_rate`` or ``load``)."""
        if self.arrival_rate is not None:
            return scalar_or_array(np.asarray(self.arrival_rate, float))
        return scalar_or_array(np.asarray(self.load, float) * np.asarray(self.k, float)
                               / np.asarray(self.S, float))

    def to_dict(self) -> dict[str, Any]:
        """Fields as plain Python values."""
        return {f.name: (np.asarray(v).tolist() if isinstance(v, np.ndarray) else v)
                for f in fields(self) for v in [getattr(self, f.name)]}


def preset(name: str, **overrides: Any) -> PDQParams:
    """Parameters for a system of Falsafi and Wood 1999 with optional overrides.

    Parameters
    ----------
    name : {"s-coma", "hurricane", "hurricane-1", "hurricane-1-mult"}
        ``S`` is the mean of the request, reply and response occupancies of
        the system's Table 1 column (57.3, 105.3 and 298.7 cycles).
    **overrides
        Any :class:`PDQParams` field.  Without ``arrival_rate``/``load``, an
        arrival rate of 0.002 handlers per cycle (one per 1.25 us) is used.

    Examples
    --------
    >>> round(preset("hurricane-1").S, 1)
    298.7
    """
    check_choice("name", name, PRESETS)
    kw: dict[str, Any] = {"n_keys": 1024}
    kw.update(PRESETS[name])
    kw.update(overrides)
    if kw.get("arrival_rate") is None and kw.get("load") is None:
        kw["arrival_rate"] = 0.002
    return PDQParams(**kw)


def key_probabilities(n_keys: int, key_skew: float = 0.0) -> np.ndarray:
    """Zipf key popularities ``p_i = i^{-s} / sum_j j^{-s}``, most popular first.

    Examples
    --------
    >>> key_probabilities(4).tolist()
    [0.25, 0.25, 0.25, 0.25]
    >>> round(float(key_probabilities(2, 1.0)[0]), 4)
    0.6667
    """
    K = int(check_integer("n_keys", n_keys, minimum=1))
    s = float(check_nonnegative("key_skew", key_skew))
    w = np.arange(1, K + 1, dtype=float) ** -s
    return w / w.sum()


# ---------------------------------------------------------------------------
# results
# ---------------------------------------------------------------------------

@dataclass(frozen=True, kw_only=True)
class PDQResult(ResultMixin):
    """Mean performance of one dispatch discipline (times in cycles).

    Values are NaN where ``saturated`` is true.

    Attributes
    ----------
    discipline : str
    response_time : float or array
        Mean time from a handler's arrival to its completion.
    waiting_time : float or array
        ``response_time`` minus the handler's own occupancy (queueing, key
        serialization, spinning).
    response_time_s : float or array
        ``response_time`` in seconds.
    throughput : float or array
        Handlers completed per cycle (the arrival rate when stable).
    utilization : float or array
        Fraction of the available processor capacity that is busy
        (spinning counts as busy).
    busy_processors : float or array
        Mean number of busy processors (effective parallelism).
    mean_in_system : float or array
        Mean number of handlers queued or running (Little's law).
    conflict_probability : float or array
        Probability that an arriving keyed handler's key is already
        present (queued or running; ``"shared"``) or already locked
        (``"spinlock"``); for ``"partitioned"`` the probability that it has
        to wait behind any handler of its queue.
    available_processors : float or array
        ``k`` (multiplexed processors too: handlers preempt computation).
    saturated : bool or array
        The configuration cannot carry the load.
    bottleneck : str or array of str
        ``""`` when stable, else ``"processors"``, ``"key"`` (the most
        popular key alone exceeds one processor), ``"partition"`` (the
        busiest static queue), ``"lock"`` (the hottest spin-lock) or
        ``"sequential"`` (spin-lock: the sequential episodes -- drain,
        spinners, pool queue -- leave the processors too little time).
    """

    discipline: str
    response_time: Any
    waiting_time: Any
    response_time_s: Any
    throughput: Any
    utilization: Any
    busy_processors: Any
    mean_in_system: Any
    conflict_probability: Any
    available_processors: Any
    saturated: Any
    bottleneck: Any
    method: str = "birth-death"


@dataclass(frozen=True, kw_only=True)
class PDQComparison(ResultMixin):
    """The three disciplines on the same parameters.

    Attributes
    ----------
    shared, partitioned, spinlock : PDQResult
    partitioned_over_shared, spinlock_over_shared : float or array
        Response-time ratios (> 1: the shared queue is faster; NaN where
        either is saturated).
    """

    shared: PDQResult
    partitioned: PDQResult
    spinlock: PDQResult
    partitioned_over_shared: Any
    spinlock_over_shared: Any


# ---------------------------------------------------------------------------
# formulas
# ---------------------------------------------------------------------------

_NMAX = 400  # at most this many states of a birth-death chain are computed explicitly
_CHUNK = 20_000  # grid points per block (bounds memory)


def _harmonic(m: np.ndarray) -> np.ndarray:
    """Harmonic number H(m) for real m >= 0 (expected max of m unit exponentials)."""
    from mva._scipy_kernels import digamma   # = scipy.special.digamma, without its import cost

    return np.where(m > 0, digamma(np.maximum(m, 0.0) + 1.0) + np.euler_gamma, 0.0)


#: time grid of the drain's distribution (fraction of its range; dense near 0)
_GRID = np.linspace(0.0, 1.0, 1_201) ** 2


def _handler_family(cs2: float) -> tuple[str, float]:
    """The simulator's two-moment family of a mean-1 handler time with ``cs2``.

    ``("h2", p1)``: balanced-means two-phase hyperexponential above 1 (phase
    probability ``p1``, rates ``2 p1`` and ``2 (1 - p1)``); ``("erlang",
    order)``: Erlang of order ``round(1 / cs2)`` from 0.001 to 1 (exponential
    at 1); ``("det", 0)``: constant below 0.001.
    """
    if cs2 > 1.0:
        return "h2", float(0.5 * (1.0 + np.sqrt((cs2 - 1.0) / (cs2 + 1.0))))
    if cs2 < 1e-3:
        return "det", 0.0
    return "erlang", float(max(1, round(1.0 / cs2)))


#: a handler time's shape: its squared coefficient of variation (the family of
#: :func:`_handler_family`, mean 1), or ``(cs2, a, p, J)`` -- that family scaled
#: by ``a`` plus a jump ``J`` with probability ``p`` (mean ``a + p J``), a
#: multiplexed processor's handler that pays an interrupt (:func:`_interrupt_shape`)
Shape = float | tuple[float, float, float, float]


def _interrupt_shape(cs2: float, S: float, p: float, J: float) -> Shape:
    """Shape of ``X + (J / S) I`` in units of ``S`` (``X`` of the family with ``cs2``, mean 1;
    ``I`` Bernoulli(``p``)): a multiplexed processor's handler that pays the
    interrupt ``J`` with probability ``p``.

    Returns ``cs2`` itself when no handler pays the jump (:func:`_lock_shape`
    with ``a = 1``).

    >>> _interrupt_shape(1.0, 100.0, 0.0, 300.0)
    1.0
    >>> _interrupt_shape(1.0, 100.0, 0.25, 300.0)
    (1.0, 1.0, 0.25, 3.0)
    """
    return _lock_shape(cs2, 1.0, p, J / S)


def _lock_shape(cs2: float, a: float, p: float, J: float) -> Shape:
    """Shape of ``a X + J I`` (``X`` of the family with ``cs2``, mean 1; ``I``
    Bernoulli(``p``)): a spin-lock handler on its processor, in units of the
    lock's holding time (``a = S / h``, ``J = o_lock / h``, ``p`` the keyed
    fraction; the busiest key's handlers ``p = 1``, mean 1); ``cs2`` itself
    where that is the family (``a = 1``, no jump).

    >>> _lock_shape(1.0, 1.0, 0.5, 0.0)
    1.0
    >>> _lock_shape(1.0, 0.25, 1.0, 0.75)
    (1.0, 0.25, 1.0, 0.75)
    """
    if a == 1.0 and (p <= 0.0 or J <= 0.0):
        return float(cs2)
    return (float(cs2), float(a), float(min(max(p, 0.0), 1.0)), float(J))


@functools.lru_cache(maxsize=256)
def _survivals(cs2: Shape) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Grid ``t`` (mean-1 units) with the handler time's survival ``F^c(t)`` and
    its equilibrium residual's survival ``G^c(t) = int_t^inf F^c(u) du``.

    The family is the simulator's two-moment fit (:func:`_handler_family`);
    a :data:`Shape` tuple ``(cs2, a, p, J)`` adds the jump:
    :math:`F^c(t) = (1 - p) F_X^c(t/a) + p F_X^c((t - J)/a)` and
    :math:`G^c(t) = a [(1 - p) G_X^c(t/a) + p G_X^c((t - J)/a)]` with
    :math:`G_X^c(x) = 1 - x` below 0.
    """
    if isinstance(cs2, tuple):
        c2, a, p, J = cs2
        tb, Fb, Gb = _survivals(float(c2))
        t = np.unique(np.concatenate([a * tb, J + a * tb]))

        def at(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
            F = np.interp(x, tb, Fb, left=1.0, right=0.0)
            G = np.where(x < 0.0, 1.0 - x, np.interp(x, tb, Gb, right=0.0))
            return F, G

        F0, G0 = at(t / a)
        F1, G1 = at((t - J) / a)
        return t, (1.0 - p) * F0 + p * F1, a * ((1.0 - p) * G0 + p * G1)
    from scipy.stats import gamma

    kind, par = _handler_family(cs2)
    if kind == "h2":
        p1 = par
        probs, means = np.array([p1, 1.0 - p1]), np.array([0.5 / p1, 0.5 / (1.0 - p1)])
        t = 50.0 * means.max() * _GRID
        e = np.exp(-t[:, None] / means[None, :])
        return t, (probs * e).sum(axis=1), (probs * means * e).sum(axis=1)
    # (an Erlang of order above 1000 is taken constant: cs2 < 0.001)
    order = int(par)
    if kind == "det":
        t = np.append(_GRID, 1.0)                 # the step at 1: two points
        Fc = np.ones_like(t)
        Fc[-1] = 0.0
        return t, Fc, 1.0 - t
    t = (1.0 + 50.0 / np.sqrt(order)) * _GRID
    sf = gamma.sf(t, order, scale=1.0 / order)
    seg = 0.5 * (sf[1:] + sf[:-1]) * np.diff(t)
    return t, sf, np.concatenate([np.cumsum(seg[::-1])[::-1], [0.0]])


_LAGUERRE = np.polynomial.laguerre.laggauss(16)


@functools.lru_cache(maxsize=256)
def _drain_grid(cs2: Shape, lam_s: float, batch: Shape | None = None) -> tuple[np.ndarray, ...]:
    """``(t, F_b^c(t), G^c(t) - G^c(t + T), F_b^c(t + T), weights)`` of the drain's integrals.

    ``T`` at the Gauss-Laguerre nodes of the free period (rate ``lam_s``),
    columns; computed once per ``(cs2, lam_s, batch)``, not at every step of
    the fixed point (:func:`_drain_moments`, :func:`_lane_drain_moments`).
    ``G^c`` is the residual survival of the handlers started as they arrive
    (shape ``cs2``), ``F_b^c`` the survival of a held batch's members (shape
    ``batch``, default ``cs2``), on a common grid.
    """
    t, Fc, Gc = _survivals(cs2)
    if batch is not None and batch != cs2:
        tb, Fb, _ = _survivals(batch)
        t2 = np.unique(np.concatenate([t, tb]))
        Gc = np.interp(t2, t, Gc, right=0.0)
        Fc = np.interp(t2, tb, Fb, right=0.0)
        t = t2
    x = t[:, None]
    z, w = _LAGUERRE
    T = (z / max(lam_s, 1e-300))[None, :]

    def sf(arr: np.ndarray, at: np.ndarray) -> np.ndarray:
        return np.interp(at, t, arr, right=0.0)

    return t, Fc, sf(Gc, x) - sf(Gc, x + T), sf(Fc, x + T), w[None, :]


@functools.lru_cache(maxsize=256)
def _shift_weights(cs2: Shape, lam_s: float) -> tuple[np.ndarray, np.ndarray]:
    """Where ``t + T`` falls on the grid ``t`` of ``_drain_grid(cs2, lam_s)``: ``(j, f)``.

    ``T`` are the free period's Gauss-Laguerre nodes (columns).  A function ``F``
    on the grid is ``F[j] + f (F[j + 1] - F[j])`` at ``t + T`` (linear
    interpolation, as :func:`numpy.interp`), and ``j = -1`` marks the points past
    the grid's end.  The drain interpolates a batch's distribution there at every
    step of the episodes' fixed point (:func:`_batch_cases`); the positions depend
    only on the grid, so they are searched for once.
    """
    t = _drain_grid(cs2, lam_s)[0]
    x = t[:, None] + (_LAGUERRE[0] / max(lam_s, 1e-300))[None, :]
    j = np.clip(np.searchsorted(t, x, side="right") - 1, 0, t.size - 2)
    past = x > t[-1]
    j[past] = -1
    width = t[j + 1] - t[j]
    # (a zero width only where x is the grid's last, repeated point: its value, f = 1)
    f = np.where(past, 0.0, np.where(width > 0.0, (x - t[j]) / np.where(width > 0.0, width, 1.0),
                                     1.0))
    return j, f


def _released_cdf(t: np.ndarray, cs2: float, nu: float, J: float, k: int, theta: float
                  ) -> np.ndarray:
    r"""``P(every member of a released batch is done by t)`` on multiplexed processors.

    A batch of ``N`` handlers (geometric, mean ``nu``, :math:`p = \nu / (1 +
    \nu)`) held back by a sequential one starts when it ends: the first on
    the processor it frees, the next ``I`` on the idle processors among the
    other ``k - 1`` (binomial, each computing with probability ``theta``),
    the next ``c = k - 1 - I`` interrupt a computing processor and take ``J``
    longer, and the rest follow on freed processors (taken as starting at
    once, without the interrupt).  With :math:`A = F(t)`, :math:`B = F(t -
    J)` (handler times of the family ``cs2``, mean 1) and given ``I = i``:

    .. math::

        P(D \le t) = (1 - p) \Big[\frac{1 - (pA)^{i+2}}{1 - pA}
            + (pA)^{i+1} \Big(\frac{pB (1 - (pB)^c)}{1 - pB}
            + \frac{(pB)^c\, pA}{1 - pA}\Big)\Big],

    which is :math:`1 / (1 + \nu (1 - A))` without the jump (``J = 0``).
    """
    from scipy.stats import binom

    tb, Fc, _ = _survivals(float(cs2))
    A = 1.0 - np.interp(t, tb, Fc, right=0.0)
    if nu <= 0.0:
        return np.ones_like(t)
    B = np.where(t >= J, 1.0 - np.interp(t - J, tb, Fc, right=0.0), 0.0)
    p = nu / (1.0 + nu)
    kk = max(int(k), 1)
    i = np.arange(kk)
    wgt = binom.pmf(i, kk - 1, 1.0 - theta)
    i, wgt = i[wgt > 0.0], wgt[wgt > 0.0]
    c = kk - 1 - i
    pA, pB = (p * A)[:, None], (p * B)[:, None]
    first = (1.0 - pA ** (i + 2)) / (1.0 - pA)
    rest = pA ** (i + 1) * (pB * (1.0 - pB ** c) / (1.0 - pB) + pB ** c * pA / (1.0 - pA))
    return np.clip((1.0 - p) * ((first + rest) @ wgt), 0.0, 1.0)


def _batch_done_cdf(t: np.ndarray, A: np.ndarray, nu: float, k: float | None
                    ) -> tuple[np.ndarray, np.ndarray]:
    r"""``P(every member of a released batch is done by t)`` on ``k`` processors (mean-1 units).

    The batch (``N`` handlers, geometric, mean ``nu``: :math:`P(N = n) = (1 -
    p) p^n`, :math:`p = \nu / (1 + \nu)`) starts on ``k`` free processors
    when the sequential handler ends; ``A = F(t)``, the handler time's
    distribution on the grid ``t``.  Up to ``k`` members run in parallel,
    :math:`A^n`; beyond, the ``N - k`` later ones start as processors free
    up -- for exponential handlers exactly one every ``1/k`` on average, so
    that, ``N - k`` being geometric again, the batch is done an exponential
    time of rate :math:`k (1 - p)` (the starts) after the last ``k`` are done
    (taken as the largest of ``k`` handlers):

    .. math::

        P_k(t) = (1 - p) \frac{1 - (pA)^{k+1}}{1 - pA}
            + p^{k+1} \int_0^t k (1 - p) e^{-k (1 - p)(t - y)} A(y)^k \, dy .

    For other handlers the last ``k`` are not fresh (a long handler is the
    likelier to be still running), and with highly variable ones the largest
    of all ``N`` handler times, :math:`P_\infty = 1 / (1 + \nu (1 - A))`
    (every member started at once), is the longer.  The batch ends after
    both (each member ends at least its own time after the release, and the
    processors need the work), so :math:`P(D \le t) = \min(P_k, P_\infty)`:
    :math:`P_k` for exponential handlers and many members, :math:`P_\infty`
    for few members or :math:`c_s^2` well above 1.  ``k`` None:
    :math:`P_\infty`.  The grid is extended (``A = 1`` there) where the
    distribution ends short of 1 (:data:`BATCH_TAIL`); returns the grid and
    the distribution.

    >>> t = np.linspace(0.0, 60.0, 3001)
    >>> tt, F = _batch_done_cdf(t, 1.0 - np.exp(-t), 20.0, 7)   # exponential handlers
    >>> round(float(np.trapezoid(1.0 - F, tt)), 2)    # mean; simulated 4.31 (40,000 batches)
    4.31
    >>> round(float(np.trapezoid(1.0 - 1.0 / (1.0 + 20.0 * np.exp(-t)), t)), 2)  # k None
    3.04
    """
    if nu <= 0.0:
        return t, np.ones_like(t)
    if k is None:
        return t, 1.0 / (1.0 + nu * (1.0 - A))
    p = nu / (1.0 + nu)
    kk = max(float(k), 1.0)
    rate = kk * (1.0 - p)
    for extend in (False, True):
        if extend:
            ext = t[-1] + BATCH_TAIL_MEANS / rate * np.linspace(0.0, 1.0, 65)[1:] ** 2
            t = np.concatenate([t, ext])
            A = np.concatenate([A, np.ones(ext.size)])
        pA = p * A
        head = (1.0 - p) * (1.0 - pA ** (kk + 1.0)) / (1.0 - pA)
        lim = head + p ** (kk + 1.0) * _exp_smooth(t, A ** kk, rate)
        F = np.clip(np.minimum(lim, 1.0 / (1.0 + nu * (1.0 - A))), 0.0, 1.0)
        if F[-1] >= 1.0 - BATCH_TAIL:
            break
    return t, F


def _exp_smooth(t: np.ndarray, H: np.ndarray, rate: float) -> np.ndarray:
    r""":math:`G(t) = \int_0^t r e^{-r (t - y)} H(y)\, dy` on the grid ``t`` (``H`` linear
    between its points: the exact step :math:`G_{i+1} = G_i e^{-r h} + (1 - e^{-r h})
    (H_i + H_{i+1})/2` to second order), by blocks in which the exponentials stay finite.

    >>> t = np.linspace(0.0, 50.0, 2001)
    >>> G = _exp_smooth(t, np.ones_like(t), 2.0)      # 1 - exp(-2 t)
    >>> float(np.max(np.abs(G - (1.0 - np.exp(-2.0 * t))))) < 1e-12
    True
    """
    c = -np.expm1(-rate * np.diff(t)) * 0.5 * (H[:-1] + H[1:])
    G = np.zeros_like(t)
    s = 0
    while s < t.size - 1:
        e = int(np.searchsorted(t, t[s] + 600.0 / rate, side="right"))
        e = min(max(e, s + 2), t.size)
        x = rate * (t[s:e] - t[s])                 # within [0, 600]
        acc = np.concatenate([[0.0], np.cumsum(c[s:e - 1] * np.exp(x[1:]))])
        G[s:e] = np.exp(-x) * (G[s] + acc)
        s = e - 1
    return G


#: the released batch's distribution (:func:`_batch_done_cdf`) is extended past the
#: handlers' own grid where it ends further than this from 1 ...
BATCH_TAIL = 1e-13

#: ... by this many means of its exponential part
BATCH_TAIL_MEANS = 40.0


def _drain_moments(cs2: Shape, lam_o: float, lam_s: float, nu: float, nu_b: float,
                   v: float, k: float | None = None) -> tuple[float, float]:
    """First two moments of the drain of a sequential handler (mean-1 units).

    The drain is the time from when a sequential handler reaches the head of
    the queue until every earlier handler has finished.  With probability
    ``1 - v`` it arrives with no sequential handler ahead: since the last
    sequential episode ended -- a time ``T`` that is exponential with rate
    ``lam_s`` (the free period it ends) -- the batch held back by that episode
    (mean ``nu``) started fresh, and the later handlers (Poisson, rate
    ``lam_o``) started as they arrived (processors not limiting).  The
    later handlers still running at ``T`` form a Poisson process of remaining
    times and the batch is geometric (Poisson over an exponential window), so
    ``P(D <= x | T) = exp(-lam_o [G^c(x) - G^c(x + T)]) / (1 + nu F^c(T +
    x))``.  With probability ``v`` it arrives during an episode and reaches
    the head when that ends, together with the batch held back behind the
    previous sequential handler (geometric, mean ``nu_b``, fresh):
    ``P(D <= x) = 1 / (1 + nu_b F^c(x))``.  Rates are per mean handler time.
    ``k``: the batches start on ``k`` processors, the members beyond the
    ``k``-th as processors free up (:func:`_batch_done_cdf`); ``None``: all at
    once, as above.
    """
    t, Fc, dG, FcT, w = _drain_grid(_shape(cs2), float(lam_s))
    t, F_free, F_blk, w = _batch_cases(t, Fc, dG, FcT, w, lam_o, lam_s, nu, nu_b, k,
                                       _shift_weights(_shape(cs2), float(lam_s)))
    cdf_free = (F_free * w).sum(axis=1)
    tail = np.clip(1.0 - ((1.0 - v) * cdf_free + v * F_blk), 0.0, 1.0)
    return float(np.trapezoid(tail, t)), float(np.trapezoid(2.0 * t * tail, t))


def _batch_cases(t: np.ndarray, Fc: np.ndarray, dG: np.ndarray, FcT: np.ndarray,
                 w: np.ndarray, lam_o: float, lam_s: float, nu: float, nu_b: float,
                 k: float | None, shift: tuple[np.ndarray, np.ndarray] | None = None
                 ) -> tuple[np.ndarray, ...]:
    """The drain's two cases on the grid of :func:`_drain_grid`: ``(t, F_free, F_blk, w)``.

    Free (columns: the free period's nodes ``T``): the handlers started as they
    arrived, Poisson, times the batch released ``T`` earlier; blocked: the batch
    released as the sequential handler reached the head.  The batches on ``k``
    processors (:func:`_batch_done_cdf`; ``None``: all members at once), the grid
    extended where the blocked one outlasts it.  ``shift``: :func:`_shift_weights` of
    the grid ``t`` (the batch's distribution at ``t + T`` is then gathered, not searched
    for, wherever no batch outlasts the grid).
    """
    T = (_LAGUERRE[0] / max(lam_s, 1e-300))[None, :]
    A = 1.0 - Fc
    t0 = t
    tb, Db = _batch_done_cdf(t, A, nu_b, k)
    if tb.size > t.size:
        n = tb.size - t.size
        t = tb
        Fc = np.concatenate([Fc, np.zeros(n)])
        dG = np.concatenate([dG, np.zeros((n, dG.shape[1]))])
        FcT = np.concatenate([FcT, np.zeros((n, FcT.shape[1]))])
        A = 1.0 - Fc
    F_free = np.exp(-lam_o * dG)
    if k is None:
        F_free /= 1.0 + nu * FcT
    else:
        tf, Df = _batch_done_cdf(t, A, nu, k)
        # (only where the batch may still run: past tf[end] it is done)
        end = tf[min(int(np.searchsorted(Df, 1.0 - 1e-14)), tf.size - 1)]
        # (the rows and columns where it does are prefixes: t and the nodes T increase)
        nr, nc = int(np.count_nonzero(t < end)), int(np.count_nonzero(T[0] < end))
        if nr and nc and shift is not None and tf is t0:
            j, f = shift[0][:nr, :nc], shift[1][:nr, :nc]
            lo = Df[j]
            at = lo + f * (Df[j + 1] - lo)
            F_free[:nr, :nc] *= np.where(j < 0, 1.0, at)
        elif nr and nc:
            F_free[:nr, :nc] *= np.interp(t[:nr, None] + T[:, :nc], tf, Df, right=1.0)
    return t, F_free, Db, w


def _shape(cs2: Shape) -> Shape:
    """``cs2`` as a hashable :data:`Shape` (a float, or the tuple as is)."""
    return cs2 if isinstance(cs2, tuple) else float(cs2)


def _handler_lst(cs2: Shape, theta: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Laplace-Stieltjes transform of the handler time (mean 1) at ``theta``, and its derivative.

    The family of :func:`_handler_family`; a :data:`Shape` tuple ``(cs2, a,
    p, J)``: :math:`\tilde B_X(a \theta) (1 - p + p e^{-\theta J})`.
    """
    theta = np.asarray(theta, float)
    if isinstance(cs2, tuple):
        c2, a, p, J = cs2
        Bx, dBx = _handler_lst(float(c2), a * theta)
        e = np.exp(-theta * J)
        mix = 1.0 - p + p * e
        return Bx * mix, a * dBx * mix - Bx * p * J * e
    kind, par = _handler_family(cs2)
    if kind == "h2":
        mu1, mu2 = 2.0 * par, 2.0 * (1.0 - par)
        return (par * mu1 / (mu1 + theta) + (1.0 - par) * mu2 / (mu2 + theta),
                -par * mu1 / (mu1 + theta) ** 2 - (1.0 - par) * mu2 / (mu2 + theta) ** 2)
    if kind == "det":
        return np.exp(-theta), -np.exp(-theta)
    B = (par / (par + theta)) ** par
    return B, -B * par / (par + theta)


def _handler_m2(cs2: Shape) -> float:
    """Second moment of the handler time (mean 1), of the family of :func:`_handler_family`
    (a :data:`Shape` tuple ``(cs2, a, p, J)``: :math:`a^2 m_X + 2 a p J + p J^2`)."""
    if isinstance(cs2, tuple):
        c2, a, p, J = cs2
        return a * a * _handler_m2(float(c2)) + 2.0 * a * p * J + p * J * J
    kind, par = _handler_family(cs2)
    if kind == "h2":
        return 1.0 / (2.0 * par) + 1.0 / (2.0 * (1.0 - par))
    return 1.0 if kind == "det" else 1.0 + 1.0 / par


#: smallest rate of sequential arrivals per mean handler time :func:`_lane_workload` uses
LANE_MIN_RATE = 1e-4


def _lane_workload(lam: np.ndarray, q: float, tb: float, cs2: Shape
                   ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    r"""Work of a key's handlers when a sequential handler arrives in a free period (mean-1 units).

    Between sequential episodes a key's handlers run one at a time in arrival
    order, an M/G/1 queue of arrival rate ``lam`` (per mean handler time).
    It starts, when the last episode ends, with the batch held back by it
    (Poisson arrivals over a window exponential of mean ``tb``), and the next
    sequential handler arrives an exponential time of rate ``q`` later.  The
    key's work then, :math:`V`, has the transform of the M/G/1 workload at an
    exponential time (Takacs' virtual waiting time; checked against Monte
    Carlo in ``tests/models/test_pdq.py``): with the Laplace exponent
    :math:`\phi(\theta) = \theta - \lambda (1 - \tilde B(\theta))` and
    :math:`\eta` the root of :math:`\phi(\eta) = q`,

    .. math::

        E[e^{-\theta V}] = q\,\frac{E[e^{-\theta w}] - (\theta/\eta) E[e^{-\eta w}]}
                               {q - \phi(\theta)}, \qquad
        E[e^{-\theta w}] = \frac{1}{1 + t_b \lambda (1 - \tilde B(\theta))}

    for the starting batch :math:`w`, whence (``rho = lam``)

    .. math::

        E[V] = \frac{\beta}{\eta} + \lambda t_b + \frac{\lambda - 1}{q}, \qquad
        P(V = 0) = \frac{q}{\eta} \beta, \qquad \beta = E[e^{-\eta w}],

    and the second moment from the second derivative at 0.  Returns
    ``(E[V], E[V^2], P(V = 0))`` per rate in ``lam`` (each below 1).  The
    terms cancel as :math:`1/q^2` for rare sequential handlers, so ``q`` is
    taken at least :data:`LANE_MIN_RATE`: a free period of more than
    :math:`10^4` handler times leaves the key's work about stationary (at
    that rate the mean is 0.13% below Pollaczek-Khinchine's at load 0.5,
    ``cs2 = 4``).
    """
    lam = np.asarray(lam, float)
    q = np.maximum(np.asarray(q, float), LANE_MIN_RATE)
    rho = np.minimum(lam, 1.0 - 1e-12)
    # Newton from the upper bound q / (1 - rho) (phi is convex: monotone convergence)
    eta = q / (1.0 - rho)
    for _ in range(60):
        B, dB = _handler_lst(cs2, eta)
        step = (eta - lam * (1.0 - B) - q) / (1.0 + lam * dB)
        eta = eta - step
        if np.all(np.abs(step) <= 1e-13 * eta):
            break
    # one step more, to the rounding (quadratic convergence): the moments' terms cancel as
    # 1 / q^2, and _lane_at_times weighs them with large alternating weights
    B, dB = _handler_lst(cs2, eta)
    eta = eta - (eta - lam * (1.0 - B) - q) / (1.0 + lam * dB)
    B = _handler_lst(cs2, eta)[0]
    m2 = _handler_m2(cs2)
    beta = 1.0 / (1.0 + tb * lam * (1.0 - B))
    EV = beta / eta + lam * tb + (lam - 1.0) / q
    EV2 = (2.0 * beta * q * (lam - 1.0) + eta * lam * q * q * tb * (2.0 * lam * tb + m2)
           + eta * lam * q * (2.0 * tb * (lam - 1.0) + m2)
           + 2.0 * eta * (lam - 1.0) ** 2) / (eta * q * q)
    return np.maximum(EV, 0.0), np.maximum(EV2, 0.0), np.clip(q / eta * beta, 0.0, 1.0)


def _atom_gamma_fit(mean: Any, m2: Any, atom: Any) -> tuple[np.ndarray, ...]:
    """``(atom, shape, rate, none)`` of the distribution with an atom at 0 and a gamma
    part matching ``mean`` and ``m2`` (arrays broadcast); ``none`` where it is all atom
    (its shape and rate are then finite values no caller reads)."""
    atom = np.clip(np.asarray(atom, float), 0.0, 1.0)
    mean = np.asarray(mean, float)
    none = (mean <= 1e-12) | (atom >= 1.0 - 1e-12)
    left = np.where(none, 1.0, 1.0 - atom)
    c1, c2 = mean / left, np.asarray(m2, float) / left
    var = np.where(none, 1.0, np.maximum(c2 - c1 * c1, 1e-6 * c1 * c1))
    return atom, np.where(none, 1.0, c1 * c1 / var), c1 / var, none


def _atom_gamma_cdf(x: np.ndarray, mean: Any, m2: Any, atom: Any) -> np.ndarray:
    """Distribution function with an atom at 0 and a gamma part matching ``mean`` and ``m2``
    (broadcast: ``mean``, ``m2`` and ``atom`` may be arrays of the shape of ``x``'s columns)."""
    from scipy.special import gammainc

    atom, shape, rate, none = _atom_gamma_fit(mean, m2, atom)
    F = atom + (1.0 - atom) * gammainc(shape, np.maximum(x, 0.0) * rate)
    return np.where(none, 1.0, F)


def _atom_gamma_span(mean: Any, m2: Any, atom: Any) -> float:
    """Where every distribution of :func:`_atom_gamma_cdf` (``mean``, ``m2``,
    ``atom``, arrays) has its gamma part within :data:`LANE_TAIL` of 1: the
    largest of their gamma quantiles at ``1 - LANE_TAIL`` (0 if all are atoms)."""
    from scipy.special import gammaincinv

    _, shape, rate, none = _atom_gamma_fit(mean, m2, atom)
    if np.all(none):
        return 0.0
    return float(np.max(gammaincinv(shape[~none], 1.0 - LANE_TAIL) / rate[~none]))


#: a key's work is taken stationary this many relaxation times of its queue after the
#: last episode (:func:`_lane_at_times`)
LANE_RELAX = 20.0

#: Gaver-Stehfest weights (``2 N`` terms): a key's work at a fixed time since the last
#: sequential episode from its transform at exponential times (:func:`_lane_at_times`)
_STEHFEST_N = 5


def _stehfest_weights(n: int) -> np.ndarray:
    from math import factorial

    out = np.zeros(2 * n)
    for k in range(1, 2 * n + 1):
        s = 0.0
        for j in range((k + 1) // 2, min(k, n) + 1):
            s += (j ** n * factorial(2 * j)
                  / (factorial(n - j) * factorial(j) * factorial(j - 1) * factorial(k - j)
                     * factorial(2 * j - k)))
        out[k - 1] = (-1) ** (k + n) * s
    return out


_STEHFEST = _stehfest_weights(_STEHFEST_N)


def _lane_at_times(lam: np.ndarray, T: np.ndarray, tb: float, cs2: Shape
                   ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    r"""``(E[V], E[V^2], P(V = 0))`` of a key's work a time ``T`` after the last episode.

    :func:`_lane_workload` gives them at an exponential time of rate ``q``,
    which is ``q`` times their Laplace transform in ``T``; this inverts it
    by Gaver-Stehfest (:data:`_STEHFEST_N`), :math:`f(T) pprox (\ln 2 / T)
    \sum_k V_k F(k \ln 2 / T)`.  Rows: the rates ``lam``; columns: the times
    ``T``.  Where ``ln 2 / T`` is below :data:`LANE_MIN_RATE` the key's work
    is about stationary and the values at that rate are used.
    """
    lam = np.asarray(lam, float)[:, None, None]
    T = np.asarray(T, float)[None, :]
    # past LANE_RELAX relaxation times of the key's queue (m_2 / (1 - sqrt(rho))^2,
    # in mean handler times) after the batch held back has cleared (rho t_b / (1 - rho))
    # its work is stationary; the transform's terms cancel as
    # 1 / q^2 there, and the inversion's weights would amplify their rounding
    rho = np.minimum(lam[:, :, 0], 1.0 - 1e-12)
    relax = LANE_RELAX * _handler_m2(cs2) / (1.0 - np.sqrt(rho)) ** 2 + rho * tb / (1.0 - rho)
    far = (T > relax) | (np.log(2.0) / T < LANE_MIN_RATE)
    Tc = np.where(far, np.minimum(relax, np.log(2.0) / LANE_MIN_RATE), T)
    k = np.arange(1, _STEHFEST.size + 1)
    q = k[None, :, None] * np.log(2.0) / Tc[:, None, :]
    EV, EV2, P0 = _lane_workload(lam, q, tb, cs2)
    wq = _STEHFEST[None, :, None] * np.log(2.0) / Tc[:, None, :] / q
    out = [np.sum(wq * x, axis=1) for x in (EV, EV2, P0)]
    if far.any():
        s = _lane_workload(lam[:, :, 0], LANE_MIN_RATE, 0.0, cs2)    # (the batch long gone)
        out = [np.where(far, si, o) for si, o in zip(s, out)]
    m1 = np.maximum(out[0], 0.0)
    m2 = np.maximum(out[1], m1 * m1)
    return m1, m2, np.clip(out[2], 0.0, 1.0)


def _lane_drain_moments(cs2: Shape, lanes: Any, lam_rest: float, lam_s: float, tb: float,
                        v: float, stream: Shape | None = None,
                        released: tuple[float, int, float, float] | None = None,
                        k: float | None = None) -> tuple[float, float]:
    r"""First two moments of the drain with the busiest keys as lanes (mean-1 units).

    As :func:`_drain_moments`, but the handlers of each key in ``lanes``
    (their rates, :func:`_lanes`) run one after another.  In a free period
    a key's work a time ``T`` after the last episode is
    :func:`_lane_at_times` (the M/G/1 workload from the batch held back by
    that episode); given ``T`` the keys' works and the other handlers (rate
    ``lam_rest``, in parallel as in :func:`_drain_moments`) are independent,
    so the drain's distribution is their product averaged over ``T``
    (the free period's Gauss-Laguerre nodes).  After an episode
    (probability ``v``) a key's work is the batch held back, a compound
    Poisson sum over a window exponential of mean ``tb`` (mean
    :math:`\lambda t_b`, second moment :math:`t_b \lambda m_2 + 2 t_b^2
    \lambda^2`, none with probability :math:`1/(1 + \lambda t_b)`), taken
    independent of the other keys'.  Each key's work is an atom at 0 and a
    gamma part with these moments.  Multiplexed processors:
    ``stream``, the shape of the handlers started as they arrive
    (:func:`_interrupt_shape`; default ``cs2``), and ``released = (J, k,
    theta, d)``, the held batch's interrupts (:func:`_released_cdf`): a
    fraction ``d`` of its members can start at once (nosync, or the first of
    their key, :func:`_batch_dispatchable`), the others follow their key's
    predecessor on its processor, without an interrupt.  ``k`` (dedicated
    processors, ``released`` None): the held batches on ``k`` processors
    (:func:`_batch_done_cdf`).
    """
    st = _shape(cs2) if stream is None else _shape(stream)
    nu = lam_rest * tb
    lanes = np.atleast_1d(np.asarray(lanes, float))
    lanes = lanes[lanes > 0.0]
    # (after an episode the keys beyond the busiest run in parallel, with the rest)
    nu_b = (lam_rest + float(lanes[1:].sum())) * tb
    if released is None:
        t, Fc, dG, FcT, w = _drain_grid(st, float(lam_s))
        t, F_free, F_blk, w = _batch_cases(t, Fc, dG, FcT, w, lam_rest, lam_s, nu, nu_b, k,
                                           _shift_weights(st, float(lam_s)))
    else:
        J, kk, th, d = released
        c2 = cs2[0] if isinstance(cs2, tuple) else float(cs2)     # (multiplexed: a float)
        grid = _interrupt_shape(c2, 1.0, 0.5, J)    # (a grid that reaches J)
        t, Fc, dG, FcT, w = _drain_grid(st, float(lam_s), grid)
        Fb = np.interp(t, *_survivals(c2)[:2], right=0.0)

        def released_of(n: float) -> np.ndarray:
            return _released_cdf(t, c2, d * n, J, kk, th) / (1.0 + (1.0 - d) * n * Fb)

        F_blk = released_of(nu_b)
        T = (_LAGUERRE[0] / max(lam_s, 1e-300))[None, :]
        F_rel = np.interp(t[:, None] + T, t, released_of(nu) if nu_b != nu else F_blk,
                          right=1.0)
        F_free = np.exp(-lam_rest * dG) * F_rel
    if lanes.size:
        # (the keys' distributions at the free period's nodes of weight
        # LANE_NODE_WEIGHT or more)
        live = w[0] >= LANE_NODE_WEIGHT
        F_free, w = F_free[:, live], w[:, live]
        T = _LAGUERRE[0][live] / max(lam_s, 1e-300)
        # keys of equal rates (uniform keys) are one distribution, to a power
        top = float(lanes[0])
        lanes, count = np.unique(lanes, return_counts=True)
        EV, EV2, a0 = _lane_at_times(lanes, T, tb, cs2)
        m2 = _handler_m2(cs2)
        B1, B2 = top * tb, tb * top * m2 + 2.0 * (tb * top) ** 2
        # the lanes' distributions on a grid of their own (LANE_GRID, up to where
        # each is within LANE_TAIL of 1), interpolated onto the drain's grid in
        # their log-survival (linear in an exponential tail): the same function of
        # t whichever grid the drain has (with or without a multiplexed
        # interrupt), at a fraction of the gamma functions' cost
        span = _atom_gamma_span(EV, EV2, a0)
        end = max(span, _atom_gamma_span(B1, B2, 1.0 / (1.0 + B1)))
        if end > t[-1]:
            # (the lanes' work can outlast the handlers' own grid (a constant
            # handler's ends at 1): extend it, the other handlers all done there)
            ext = t[-1] + (end - t[-1]) * LANE_GRID[1:]
            F_free = np.concatenate([F_free, np.ones((ext.size, F_free.shape[1]))])
            F_blk = np.concatenate([F_blk, np.ones(ext.size)])
            t = np.concatenate([t, ext])
        lx = max(span, 1e-300) * LANE_GRID
        j = np.clip(np.searchsorted(lx, t, side="right") - 1, 0, lx.size - 2)
        f = ((t - lx[j]) / (lx[j + 1] - lx[j]))[:, None]
        past = (t >= lx[-1])[:, None]
        x = lx[:, None]
        H = np.ones((lx.size, T.size))
        for i in range(lanes.size):
            # (the nodes past the key's relaxation, the last ones, share one
            # stationary distribution: computed once)
            par = np.stack([EV[i], EV2[i], a0[i]])
            new = np.r_[True, np.any(par[:, 1:] != par[:, :-1], axis=0)]
            col = np.cumsum(new) - 1
            par = par[:, new]
            H = H * (_atom_gamma_cdf(x, par[0], par[1], par[2]) ** count[i])[:, col]
        L = np.log(np.maximum(1.0 - H, 1e-300))
        F_free = F_free * np.where(past, 1.0, -np.expm1(L[j] * (1.0 - f) + L[j + 1] * f))
        F_blk = F_blk * _atom_gamma_cdf(t, B1, B2, 1.0 / (1.0 + B1))
    F_free = (F_free * w).sum(axis=1)
    tail = np.clip(1.0 - ((1.0 - v) * F_free + v * F_blk), 0.0, 1.0)
    return float(np.trapezoid(tail, t)), float(np.trapezoid(2.0 * t * tail, t))


#: the keys' work is evaluated on this grid (fractions of its span, cubed: fine
#: near 0, where a highly variable key's gamma part rises steeply) and interpolated
#: onto the drain's (:func:`_lane_drain_moments`)
LANE_GRID = np.linspace(0.0, 1.0, 97) ** 3

#: ... whose span reaches where every key's distribution is within this of 1
#: (:func:`_atom_gamma_span`)
LANE_TAIL = 1e-10

#: ... and at the free period's Gauss-Laguerre nodes of at least this weight (the
#: others, 3e-10 together, are left out of the drain's distribution)
LANE_NODE_WEIGHT = 1e-9

#: most keys whose handlers the drain runs one after another (:func:`_lanes`)
LANES_MAX = 8

#: ... among those whose rate is at least this fraction of the busiest key's
LANE_SHARE = 0.1


def _lanes(lam_i: np.ndarray) -> np.ndarray:
    """The rates of the keys the drain takes as lanes: the busiest :data:`LANES_MAX`
    of those at :data:`LANE_SHARE` of the busiest key's rate or more."""
    lam_i = np.sort(np.asarray(lam_i, float))[::-1]
    if not lam_i.size or lam_i[0] <= 0.0:
        return lam_i[:0]
    return lam_i[:LANES_MAX][lam_i[:LANES_MAX] >= LANE_SHARE * lam_i[0]]


def _key_sums(K: np.ndarray, skew: np.ndarray, fk: np.ndarray, fns: np.ndarray,
              nmax: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Key sums per distinct ``(n_keys, key_skew, f_k, f_ns)`` of the grid.

    Returns ``(D, C, pmax, inv)``: ``D[j, n] = n f_ns + sum_i [1 - (1 - f_k
    p_i)^n]`` (expected number of handlers among ``n`` that may run at once),
    ``C[j, n] = sum_i p_i [1 - (1 - f_k p_i)^n]`` (probability that a keyed
    arrival shares its key with one of ``n`` handlers), the largest key
    probability, and ``inv`` mapping each (flattened) grid point to its row.
    """
    flat = np.stack([K.ravel(), skew.ravel(), fk.ravel(), fns.ravel()], axis=1)
    uniq, inv = np.unique(flat, axis=0, return_inverse=True)
    inv = np.asarray(inv).ravel()
    n = np.arange(nmax + 1, dtype=float)
    Du = np.empty((len(uniq), nmax + 1))
    Cu = np.empty((len(uniq), nmax + 1))
    pmax = np.empty(len(uniq))
    for j, (k_, s_, f_, ns_) in enumerate(uniq):
        p = key_probabilities(int(k_), s_)
        pmax[j] = p[0]
        D = n * ns_
        C = np.zeros_like(n)
        if f_ > 0:
            for lo in range(0, p.size, 2048):
                pc = p[lo:lo + 2048]
                absent = np.power(1.0 - np.minimum(f_ * pc, 1.0)[:, None], n[None, :])
                D = D + (1.0 - absent).sum(axis=0)
                C = C + (pc[:, None] * (1.0 - absent)).sum(axis=0)
        Du[j], Cu[j] = D, C
    return Du, Cu, pmax, inv


def _birth_death(lam: np.ndarray, S: np.ndarray, cap: np.ndarray, cap_inf: np.ndarray
                 ) -> tuple[np.ndarray, np.ndarray]:
    """Stationary distribution of a birth-death queue with service rate ``cap(n) / S``.

    ``cap`` has shape ``grid + (nmax + 1,)`` (index ``n``, ``cap[..., 0]``
    unused); beyond ``nmax`` the capacity is ``cap_inf``.  Returns
    ``(pi, mean_number)`` with ``pi`` over ``0..nmax`` (the geometric tail is
    folded into the mean).  Requires ``lam S < cap_inf``.
    """
    a = (lam * S)[..., None]
    with np.errstate(divide="ignore"):
        logr = np.log(np.maximum(a, 1e-300)) - np.log(np.maximum(cap[..., 1:], 1e-300))
    logr = np.where(a > 0, logr, -np.inf)
    logp = np.concatenate([np.zeros(logr.shape[:-1] + (1,)), np.cumsum(logr, axis=-1)], axis=-1)
    top = np.max(logp, axis=-1, keepdims=True)
    w = np.exp(logp - top)
    r = np.clip(lam * S / cap_inf, 0.0, 1.0 - 1e-15)
    nmax = cap.shape[-1] - 1
    wl = w[..., -1]
    tail_mass = wl * r / (1.0 - r)
    tail_mean = wl * (nmax * r / (1.0 - r) + r / (1.0 - r) ** 2)
    Z = w.sum(axis=-1) + tail_mass
    n = np.arange(nmax + 1, dtype=float)
    mean = ((w * n).sum(axis=-1) + tail_mean) / Z
    return w / Z[..., None], mean


def _prepare(params: PDQParams) -> dict[str, np.ndarray]:
    names = ("k", "S", "cs2", "n_keys", "key_skew", "f_sequential", "f_nosync", "o_lock",
             "compute_utilization", "O_int", "o_sched", "clock_hz")
    vals = [np.asarray(getattr(params, n), dtype=float) for n in names]
    vals.append(np.asarray(params.rate, dtype=float))
    a = {k: np.array(v, dtype=float) for k, v in zip(names + ("lam",), np.broadcast_arrays(*vals))}
    k = a["k"]
    a["cs2_S"] = a["cs2"].copy()
    if params.multiplexed:
        # handlers preempt computation (preemptive resume), so all k processors
        # serve handlers; what compute costs is the interrupt of a handler that
        # finds every processor busy with at least one computing
        p_int, theta = _interrupt_probability(k, a["lam"], a["S"] + a["o_sched"], a["O_int"],
                                              a["compute_utilization"], a["S"], a["cs2"])
        a["p_int"] = p_int
        a["theta"] = theta
        a["avail"] = k.copy()
        a["Sp"] = a["S"] + a["o_sched"] + p_int * a["O_int"]
        # holding time: S (cs2) + constant o_sched + Bernoulli(p_int) O_int; the
        # interrupt's variance is left out: only a handler that finds no idle
        # processor and an empty queue interrupts, so it delays no one waiting
        # (at k = 1 this is Welch's exceptional first service, see _single_server)
        a["cs2"] = a["cs2"] * a["S"] ** 2 / a["Sp"] ** 2
    else:
        a["p_int"] = np.zeros_like(k)
        a["theta"] = np.zeros_like(k)
        a["avail"] = k.copy()
        a["Sp"] = a["S"].copy()
    a["multiplexed"] = np.full_like(k, float(bool(params.multiplexed)))
    a["fk"] = np.clip(1.0 - a["f_sequential"] - a["f_nosync"], 0.0, 1.0)
    # sequential handlers: drain (expected max of the running handlers' residuals)
    # then run alone; treated as a vacation of the whole pool
    lam_seq = a["lam"] * a["f_sequential"]
    busy = np.minimum(a["lam"] * (1.0 - a["f_sequential"]) * a["Sp"], a["avail"])
    a["drain"] = a["Sp"] * _harmonic(busy)
    a["vac"] = lam_seq * (a["Sp"] + a["drain"])
    a["lam_ns"] = a["lam"] * (1.0 - a["f_sequential"])
    return a


#: multiplexed processors: mean compute burst of a processor's thread, in handler times ``S``
#: (the workload of the simulator, :data:`validation.compare.MULT_BURST_OVER_S`; the
#: parameters declare only the computing fraction ``compute_utilization``, no time scale)
COMPUTE_BURST_OVER_S = 10.0
#: largest probability the interrupt chain may leave at its queue limit (else it grows)
INTERRUPT_QUEUE_TOL = 1e-4
#: most queue levels the interrupt chain holds (beyond: the mass left there is reported)
INTERRUPT_MAX_QUEUE = 512

# transition kinds of the interrupt chain (rate = multiplicity x the kind's rate)
(_T_IDLE_END, _T_BURST_END, _T_TAKE, _T_INTERRUPT, _T_DONE_FREE, _T_DONE_COMP, _T_DONE_READY,
 _T_DONE_INT, _T_QUEUE, _T_CONT_FREE, _T_CONT_COMP, _T_CONT_READY, _T_CONT_INT) = range(13)


@functools.lru_cache(maxsize=64)
def _interrupt_structure(k: int, levels: int) -> tuple[np.ndarray, ...]:
    """States and transitions of the multiplexed processors' chain.

    See :func:`_interrupt_probability`.

    States ``(f, c, a, d, b, q)``: free, computing, running a handler taken
    free (idle period going on), running a handler with the thread waiting
    to compute, running the handler it was interrupted for, handlers queued
    (``q > 0`` only when ``a + d + b = k``).  Returns ``(src, dst, kind,
    mult, interrupting, computing, free, queued, acting)``: the transitions
    (source, destination, kind, multiplicity) and, per state, whether an
    arrival interrupts there, the processors computing and free, the
    handlers queued and the processors running handlers.
    """
    states: list[tuple[int, int, int, int, int, int]] = []
    for f in range(k + 1):
        for c in range(k + 1 - f):
            for a in range(k + 1 - f - c):
                for d in range(k + 1 - f - c - a):
                    states.append((f, c, a, d, k - f - c - a - d, 0))
    for q in range(1, levels + 1):
        for a in range(k + 1):
            for d in range(k + 1 - a):
                states.append((0, 0, a, d, k - a - d, q))
    index = {s: i for i, s in enumerate(states)}
    src: list[int] = []
    dst: list[int] = []
    kind: list[int] = []
    mult: list[int] = []

    def add(s: tuple, t: tuple, kd: int, m: int) -> None:
        if m > 0:
            src.append(index[s])
            dst.append(index[t])
            kind.append(kd)
            mult.append(m)

    for s in states:
        f, c, a, d, b, q = s
        if q == 0:
            add(s, (f - 1, c + 1, a, d, b, 0), _T_IDLE_END, f)
            add(s, (f + 1, c - 1, a, d, b, 0), _T_BURST_END, c)
            if f:
                add(s, (f - 1, c, a + 1, d, b, 0), _T_TAKE, 1)
            elif c:
                add(s, (f, c - 1, a, d, b + 1, 0), _T_INTERRUPT, 1)
            elif levels:
                add(s, (0, 0, a, d, b, 1), _T_QUEUE, 1)
            add(s, (f + 1, c, a - 1, d, b, 0), _T_DONE_FREE, a)
            add(s, (f, c + 1, a - 1, d, b, 0), _T_DONE_COMP, a)
            add(s, (f, c + 1, a, d - 1, b, 0), _T_DONE_READY, d)
            add(s, (f, c + 1, a, d, b - 1, 0), _T_DONE_INT, b)
        else:
            if q < levels:
                add(s, (0, 0, a, d, b, q + 1), _T_QUEUE, 1)
            # a processor that ends a handler takes the next one waiting; its idle
            # period may have ended meanwhile; an interrupted one has paid its
            # interrupt and goes on with its thread waiting to compute
            add(s, (0, 0, a, d, b, q - 1), _T_CONT_FREE, a)
            add(s, (0, 0, a - 1, d + 1, b, q - 1), _T_CONT_COMP, a)
            add(s, (0, 0, a, d, b, q - 1), _T_CONT_READY, d)
            add(s, (0, 0, a, d + 1, b - 1, q - 1), _T_CONT_INT, b)
    st = np.array(states, dtype=float)
    interrupting = (st[:, 0] == 0) & (st[:, 1] > 0) & (st[:, 5] == 0)
    return (np.array(src), np.array(dst), np.array(kind), np.array(mult, dtype=float),
            interrupting, st[:, 1], st[:, 0], st[:, 5], st[:, 2] + st[:, 3] + st[:, 4])


def _interrupt_chain(k: int, lam: float, S0: float, O_int: float, uc: float, burst: float,
                     r: float) -> tuple[float, float, float]:
    """One point of :func:`_interrupt_probability`: ``(p, theta, tail)``.

    ``tail``: the probability left at the chain's queue limit.
    """
    import scipy.sparse as sps
    import scipy.sparse.linalg as spla

    if uc <= 0.0 or lam <= 0.0:
        return 0.0, 0.0, 0.0
    idle = burst * (1.0 - uc) / uc
    # when all serve, the queue falls geometrically about as rho = lambda S0 / k: start
    # with the levels that leave INTERRUPT_QUEUE_TOL there (one factorisation mostly)
    rho = min(lam * S0 / k, 0.999)
    need = np.log(INTERRUPT_QUEUE_TOL * (1.0 - rho)) / np.log(rho) if rho > 0.0 else 1.0
    levels = int(min(max(8, 2 ** int(np.ceil(np.log2(max(need, 1.0))))), INTERRUPT_MAX_QUEUE))
    while True:
        src, dst, kind, mult, intr, comp, free, queued, act = _interrupt_structure(k, levels)
        rate = np.array([1.0 / idle, 1.0 / burst, lam, lam, r / S0, (1.0 - r) / S0, 1.0 / S0,
                         1.0 / (S0 + O_int), lam, r / S0, (1.0 - r) / S0, 1.0 / S0,
                         1.0 / (S0 + O_int)])
        n = intr.size
        Q = sps.csr_matrix((mult * rate[kind], (src, dst)), shape=(n, n))
        Q = (Q - sps.diags(np.asarray(Q.sum(axis=1)).ravel())).tocsr()
        # pi Q = 0 with pi_r = 1 at a likely state r (no handler, the threads split as
        # without handlers: a rare reference state would lose the others' precision),
        # then normalised; the minimum-degree ordering keeps the LU's fill small
        ref = int(np.argmin(np.abs(comp - k * uc) + 2.0 * k * (act + queued)))
        keep = np.arange(n) != ref
        A = Q.T.tocsc()
        x = spla.splu(A[keep][:, keep].tocsc(), permc_spec="MMD_AT_PLUS_A").solve(
            -A[keep][:, [ref]].toarray().ravel())
        pi = np.empty(n)
        pi[ref], pi[keep] = 1.0, x
        pi = np.maximum(pi, 0.0) / np.maximum(pi, 0.0).sum()
        tail = float(pi[queued == levels].sum())
        if tail <= INTERRUPT_QUEUE_TOL or levels >= INTERRUPT_MAX_QUEUE:
            break
        levels = min(2 * levels, INTERRUPT_MAX_QUEUE)
    p = float(np.clip(pi[intr].sum(), 0.0, 1.0))
    off = queued == 0
    nonacting = float(np.sum(pi[off] * (comp[off] + free[off])))
    theta = float(np.sum(pi[off] * comp[off])) / nonacting if nonacting > 0 else 1.0
    return p, float(np.clip(theta, 0.0, 1.0)), tail


def _interrupt_probability(k: np.ndarray, lam: np.ndarray, S0: np.ndarray, O_int: np.ndarray,
                           uc: np.ndarray, S: np.ndarray, cs2: np.ndarray
                           ) -> tuple[np.ndarray, np.ndarray]:
    r"""Probability that a handler dispatched on arrival interrupts a computing processor.

    Multiplexed processors (Hurricane-1 Mult): each of the ``k`` processors
    runs a compute thread that alternates bursts and idle periods and takes
    handlers -- on an idle processor if there is one, else by interrupting a
    computing one (which pays ``O_int``), else (all run handlers) the
    handler waits and the next processor to end a handler takes it.

    Parameters
    ----------
    k, lam, S0, O_int, uc, S, cs2 : ndarray
        Processors, arrival rate, mean handler time with the scheduling
        overhead (``S + o_sched``), interrupt cost, computing fraction, mean
        handler time (the burst's scale) and its squared coefficient of
        variation, broadcast together.

    Returns
    -------
    p, theta : ndarray
        The interrupt probability of a handler dispatched on arrival, and
        the fraction of the processors not running handlers whose thread
        computes (what :func:`_batch_interrupts` draws the idle processors
        from).

    Notes
    -----
    A continuous-time Markov chain over the counts of processors by state:
    free (thread idle, ``f``), computing (``c``), serving a handler taken
    free while the thread's idle period goes on (``a``), serving while the
    thread waits to compute (``d``: the idle period ended meanwhile, or an
    interrupted processor that went on with a queued handler) and serving
    the handler it was interrupted for (``b``), ``f + c + a + d + b = k``,
    and the handlers queued ``q`` (only when all serve).  A burst needs
    :math:`B` cycles of computing (exponential, :math:`B` =
    :data:`COMPUTE_BURST_OVER_S` ``S``; suspended while the processor
    serves -- preemptive resume), an idle period lasts :math:`I = B (1 -
    u_c) / u_c` (exponential, real time), so that without handlers a
    processor computes a fraction :math:`u_c`.  Transitions:

    .. math::

        f \xrightarrow{f/I} c,\quad c \xrightarrow{c/B} f,\quad
        \text{arrival } \lambda:\ f \to a \text{ if } f > 0,
        \text{ else } c \to b \text{ if } c > 0, \text{ else } q + 1;

    with ``q = 0`` a handler ends at :math:`a/S_0` (to ``f`` with
    probability :math:`r`, else to ``c``), :math:`d/S_0` (to ``c``) and
    :math:`b/(S_0 + O_{int})` (to ``c``); with ``q > 0`` the processor takes
    the next handler instead (``q - 1``; ``a`` stays with probability
    :math:`r`, else becomes ``d``; ``b`` becomes ``d``).  :math:`r` is the
    probability that the idle period outlasts the handler :math:`T =
    o_{sched} + X`, :math:`X` gamma of mean ``S`` and SCV ``cs2``:

    .. math::

        r = E[e^{-T/I}] = e^{-o_{sched}/I} (1 + c_s^2 S / I)^{-1/c_s^2}

    (:math:`e^{-S_0/I}` at ``cs2 = 0``).  By PASTA

    .. math::

        p = \sum_{f = 0,\ c > 0,\ q = 0} \pi, \qquad
        \theta = \frac{E[c]}{E[c + f]} \ (q = 0).

    Limits: :math:`p \to u_c^k`, :math:`\theta \to u_c` as
    :math:`\lambda \to 0`; :math:`p = 0` at :math:`u_c = 0`; by Little's law
    :math:`\lambda (S_0 + p\, O_{int}) = E[a + d + b] < k`.  The queue is
    truncated where at most :data:`INTERRUPT_QUEUE_TOL` of the probability
    is left at its limit (:data:`INTERRUPT_MAX_QUEUE` levels at most;
    beyond, the mass left is reported).  Handler times are otherwise
    exponential, and keys are ignored here: the key-aware model charges the
    interrupt only to the handlers it dispatches on arrival.  The earlier
    independent-processor version, :math:`p = (1 - (1-\theta)(1-\rho))^k -
    \rho^k`, left out that handlers take the free processors first, so that
    the interrupts concentrate where few threads are idle.

    References
    ----------
    B. Falsafi and D. A. Wood, HPCA 1999, section 4 (Hurricane-1 Mult);
    L. Kleinrock, *Queueing Systems, Volume 1*, 1975 (PASTA, Little).

    Examples
    --------
    >>> p, th = _interrupt_probability(np.array(4.0), np.array(1e-9), np.array(150.0),
    ...                                np.array(200.0), np.array(0.5), np.array(100.0),
    ...                                np.array(1.0))
    >>> round(float(p), 4), round(float(th), 4)      # a trickle: u_c^k, u_c
    (0.0625, 0.5)
    """
    shape = np.broadcast(k, lam, S0, O_int, uc, S, cs2).shape
    kk, ll, s0, oo, uu, ss, cc = (np.broadcast_to(np.asarray(x, dtype=float), shape)
                                  for x in (k, lam, S0, O_int, uc, S, cs2))
    p = np.zeros(shape)
    theta = np.array(np.broadcast_to(uu, shape), dtype=float)
    worst = 0.0
    cache: dict[tuple[float, ...], tuple[float, float, float]] = {}
    for idx in np.ndindex(shape):
        kp, lp, sp = int(kk[idx]), float(ll[idx]), float(s0[idx])
        if uu[idx] <= 0.0 or lp <= 0.0 or lp * sp >= kp:
            continue              # no compute, no arrivals, or saturated (flagged downstream)
        key = (kp, lp, sp, float(oo[idx]), float(uu[idx]), float(ss[idx]), float(cc[idx]))
        if key not in cache:
            burst = COMPUTE_BURST_OVER_S * key[5]
            s = key[4] / (burst * (1.0 - key[4]))          # 1 / I, the idle period's rate
            # P(idle period > handler) = E[exp(-T / I)], T = o_sched + gamma(S, cs2)
            c2 = key[6]
            lst = np.exp(-s * key[5]) if c2 == 0.0 else (1.0 + s * key[5] * c2) ** (-1.0 / c2)
            cache[key] = _interrupt_chain(kp, lp, sp, key[3], key[4], burst,
                                          float(np.exp(-s * (sp - key[5])) * lst))
        p[idx], theta[idx], tail = cache[key]
        worst = max(worst, tail)
    if worst > INTERRUPT_QUEUE_TOL:
        from mva.errors import report_nonconvergence
        report_nonconvergence("warn", "pdq multiplexed: the interrupt chain leaves "
                              f"{worst:.3g} of its probability at its {INTERRUPT_MAX_QUEUE}-"
                              "handler queue limit", iterations=INTERRUPT_MAX_QUEUE)
    return p, theta


def _finish(a: Mapping[str, np.ndarray], discipline: str, W: np.ndarray, Sh: np.ndarray,
            conflict: np.ndarray, busy: np.ndarray, sat: np.ndarray, bott: np.ndarray,
            method: str) -> PDQResult:
    """Combine ordinary and sequential handlers into a result (NaN where saturated)."""
    fs = a["f_sequential"]
    R_ord = Sh + W
    R_seq = W + a["drain"] + a["Sp"]
    R = (1.0 - fs) * R_ord + fs * R_seq
    Sbar = (1.0 - fs) * Sh + fs * a["Sp"]
    nan = np.where(sat, np.nan, 1.0)
    lam = a["lam"]
    if discipline != "spinlock":
        # processors are busy only while they run a handler: the drain before a
        # sequential handler leaves them idle, so it is no utilization
        busy = lam * a["Sp"]
    util = np.minimum(busy / a["avail"], 1.0)
    out = dict(response_time=R * nan, waiting_time=(R - Sbar) * nan,
               response_time_s=R / a["clock_hz"] * nan, throughput=lam * nan,
               utilization=util * nan, busy_processors=busy * nan, mean_in_system=lam * R * nan,
               conflict_probability=conflict * nan, available_processors=a["avail"])
    vals = {k: scalar_or_array(v) for k, v in out.items()}
    sat_v: Any = bool(sat) if np.ndim(sat) == 0 else np.asarray(sat)
    bott_v: Any = str(bott) if np.ndim(bott) == 0 else np.asarray(bott, dtype=object)
    return PDQResult(discipline=discipline, saturated=sat_v, bottleneck=bott_v, method=method,
                     **vals)


def _shared(a: Mapping[str, np.ndarray]) -> PDQResult:
    avail, Sp, lam = a["avail"], a["Sp"], a["lam_ns"]
    # composition of the *ordinary* (non-sequential) handlers
    ordinary = np.maximum(1.0 - a["f_sequential"], 1e-300)
    fk_o = np.where(a["f_sequential"] < 1.0, a["fk"] / ordinary, 0.0)
    fns_o = np.where(a["f_sequential"] < 1.0, a["f_nosync"] / ordinary, 0.0)
    Du, Cu, pmax_u, inv = _key_sums(a["n_keys"], a["key_skew"], fk_o, fns_o, _NMAX)
    shape = lam.shape
    pmax = pmax_u[inv].reshape(shape)
    # asymptotic capacity: a, or the number of keys when there are fewer keys than processors
    keys_inf = np.where(fns_o > 0, np.inf, np.where(fk_o > 0, a["n_keys"], 0.0))
    cap_inf = np.minimum(avail, keys_inf)
    Seff = Sp / np.maximum(1.0 - a["vac"], 1e-300)   # pool slowed by sequential vacations
    sat_proc = (a["vac"] >= 1.0) | (lam * Seff >= cap_inf)
    sat_key = (a["lam"] * a["fk"] * pmax * Seff >= 1.0) & ~sat_proc
    sat = sat_proc | sat_key
    lam_ok: np.ndarray = np.where(sat, 0.0, lam).ravel()   # flat here, reshaped at the end
    cinf = np.where(sat, 1.0, cap_inf).ravel()
    av = avail.ravel()
    Sf = np.where(sat | ~np.isfinite(Seff), 1.0, Seff).ravel()
    # states needed explicitly: until min(a, D(n)) reaches its limit (geometric beyond)
    first = np.empty(av.size, dtype=int)
    for j in range(Du.shape[0]):
        sel = inv == j
        first[sel] = np.searchsorted(Du[j], np.minimum(cinf[sel], av[sel]) * (1.0 - 1e-12))
    first = np.clip(first, 1, _NMAX)
    nmax = int(first.max(initial=1))
    N: np.ndarray = np.empty(av.size)
    conflict: np.ndarray = np.empty(av.size)
    for lo in range(0, av.size, _CHUNK):
        sl = slice(lo, lo + _CHUNK)
        cap = np.minimum(av[sl, None], Du[inv[sl], :nmax + 1])
        Cn = Cu[inv[sl], :nmax + 1]
        # Each point keeps its own truncation: beyond its ``first`` state the
        # capacity is the asymptotic one (as in the geometric tail), so a point's
        # result does not depend on which other points share the grid.
        beyond = np.arange(nmax + 1)[None, :] > first[sl, None]
        cap = np.where(beyond, cinf[sl, None], cap)
        Cn = np.where(beyond, np.take_along_axis(Cn, first[sl, None], axis=1), Cn)
        pi, N[sl] = _birth_death(lam_ok[sl], Sf[sl], cap, cinf[sl])
        # PASTA: an arrival sees n handlers with probability pi(n); beyond nmax C(n) ~ C(nmax)
        conflict[sl] = (pi * Cn).sum(axis=-1) + (1.0 - pi.sum(axis=-1)) * Cn[:, -1]
    N, conflict, lam_ok = N.reshape(shape), conflict.reshape(shape), lam_ok.reshape(shape)
    factor = (1.0 + a["cs2"]) / 2.0
    W = (np.where(lam_ok > 0, N / np.maximum(lam_ok, 1e-300), Seff) - Seff) * factor
    bott = np.where(sat_proc, "processors", np.where(sat_key, "key", ""))
    return _finish(a, "shared", W, Seff, conflict, lam * Seff, sat, bott, "birth-death")


# ---------------------------------------------------------------------------
# exact chain of the shared queue (small configurations)
# ---------------------------------------------------------------------------

_NOSYNC, _SEQ = -1, -2
#: default largest chain :func:`solve` builds for ``method="ctmc"`` (states)
CTMC_MAX_STATES = 20_000
#: largest chain ``method="auto"`` builds before it uses the key-aware approximation
AUTO_MAX_STATES = 3_000
#: ``method="auto"`` tries the chain only up to this many processors ...
AUTO_MAX_K = 4
#: ... and this mean number of handlers present (key-aware estimate)
AUTO_MAX_POPULATION = 1.5
#: ``method="auto"`` uses the birth-death method without sequential handlers and
#: with at least this many effective keys ``1 / sum p_i^2`` per processor
AUTO_BD_KEYS_PER_PROCESSOR = 4.0
#: largest probability the truncated chain may leave at its population limit
CTMC_TRUNCATION_TOL = 1e-6


def _ctmc_point(k: int, lam: float, S: float, cs2: float, n_keys: int, skew: float,
                f_seq: float, f_nosync: float, n_max: int, max_states: int,
                max_order: int) -> dict[str, float]:
    """Exact CTMC of one shared PDQ (001 section 3) with phase-type handler times.

    State: the running handlers (a sorted tuple of ``(key, phase)``) and the
    waiting handlers' keys in arrival order.  Dispatch follows the PDQ rules
    exactly as the simulator does: scan the waiting handlers in arrival
    order; a keyed handler is eligible when no handler of its key runs or
    waits before it, a nosync handler always, a sequential one only when
    nothing runs -- and then it blocks every handler behind it.  Uniform
    keys are relabelled canonically (keys are exchangeable), so the chain
    does not grow with ``n_keys``; skewed keys keep their identity.  The
    population is truncated at ``n_max``; the probability of the full
    states is returned as ``truncation``.
    """
    import warnings

    from mva.markov import build_state_space
    from mva.phasetype import PhaseTypeFitWarning, fit

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PhaseTypeFitWarning)
        ph = fit(S, cs2, max_order=max_order, on_unreachable="ignore")
    alpha = np.asarray(ph.alpha, float)
    T = np.asarray(ph.T, float)
    exit_ = -T.sum(axis=1)
    m = alpha.size
    starts = [(j, float(alpha[j])) for j in range(m) if alpha[j] > 0]
    moves = [[(j2, float(T[j, j2])) for j2 in range(m) if j2 != j and T[j, j2] > 0]
             for j in range(m)]
    fk = max(1.0 - f_seq - f_nosync, 0.0)
    uniform = skew == 0.0
    p = key_probabilities(n_keys, skew)

    def canon(run: tuple, q: tuple) -> tuple:
        if not uniform:
            return (tuple(sorted(run)), q)
        lab: dict[int, int] = {}
        for x in q:
            if x >= 0 and x not in lab:
                lab[x] = len(lab)
        rest = sorted((ph_, x) for x, ph_ in run if x >= 0 and x not in lab)
        for _, x in rest:
            lab[x] = len(lab)
        run2 = tuple(sorted((lab.get(x, x), ph_) for x, ph_ in run))
        return (run2, tuple(lab.get(x, x) for x in q))

    def dispatch(run: tuple, q: tuple) -> list[tuple[tuple, float]]:
        if len(run) >= k or any(x == _SEQ for x, _ in run):
            return [((run, q), 1.0)]
        busy = {x for x, _ in run}
        seen: set[int] = set()
        for i, x in enumerate(q):
            if x == _SEQ:
                if run:
                    break
            elif x >= 0 and (x in busy or x in seen):
                seen.add(x)
                continue
            rest = q[:i] + q[i + 1:]
            out = []
            for j, pj in starts:
                for st, pr in dispatch(run + ((x, j),), rest):
                    out.append((st, pj * pr))
            return out
        return [((run, q), 1.0)]

    def transitions(state: tuple) -> Any:
        run, q = state
        n = len(run) + len(q)
        if n < n_max:
            arr: list[tuple[int, float]] = []
            if f_nosync > 0:
                arr.append((_NOSYNC, lam * f_nosync))
            if f_seq > 0:
                arr.append((_SEQ, lam * f_seq))
            if fk > 0:
                if uniform:
                    present = {x for x, _ in run if x >= 0} | {x for x in q if x >= 0}
                    for x in present:
                        arr.append((x, lam * fk / n_keys))
                    if len(present) < n_keys:
                        arr.append((len(present) + n_keys, lam * fk * (n_keys - len(present))
                                    / n_keys))   # a fresh label, canonicalised below
                else:
                    arr.extend((i, lam * fk * float(p[i])) for i in range(n_keys))
            for x, r in arr:
                for (r2, q2), pr in dispatch(run, q + (x,)):
                    yield canon(r2, q2), r * pr, "arrival"
        else:
            yield state, lam, "blocked"
        done: set[tuple[int, int]] = set()
        for i, (x, j) in enumerate(run):
            if (x, j) in done:
                continue
            done.add((x, j))
            mult = sum(1 for e in run if e == (x, j))
            others = run[:i] + run[i + 1:]
            for j2, r in moves[j]:
                yield canon(others + ((x, j2),), q), mult * r
            if exit_[j] > 0:
                for (r2, q2), pr in dispatch(others, q):
                    yield canon(r2, q2), mult * exit_[j] * pr, "departure"

    space = build_state_space(((), ()), transitions, max_states=max_states)
    from mva.errors import ConvergenceError
    try:
        pi = space.solve(on_fail="raise").pi
    except ConvergenceError:
        # last resort: the direct solve (which retries with partial pivoting when the
        # diagonal pivots cancel, mva.markov) did not reach its residual; the power
        # method converges on any irreducible chain
        pi = space.solve(method="power", on_fail="raise").pi
    N = space.mean(pi, lambda s: len(s[0]) + len(s[1]))
    busy = space.mean(pi, lambda s: len(s[0]))
    full = float(space.values(lambda s: float(len(s[0]) + len(s[1]) >= n_max)) @ pi)
    keyed_conf = 0.0
    if fk > 0:
        # PASTA: probability that an arriving keyed handler finds its key present
        if uniform:
            def present(s: tuple) -> float:
                return len({x for x, _ in s[0] if x >= 0} | {x for x in s[1] if x >= 0}) / n_keys
        else:
            def present(s: tuple) -> float:
                ks = {x for x, _ in s[0] if x >= 0} | {x for x in s[1] if x >= 0}
                return float(sum(p[x] for x in ks))
        keyed_conf = space.mean(pi, present)
    lam_acc = lam * (1.0 - full)
    Sbar = float(ph.mean)
    return dict(N=N, busy=busy, R=N / lam_acc, truncation=full, states=float(len(space.states)),
                conflict=keyed_conf, Sbar=Sbar)


def _shared_ctmc(a: Mapping[str, np.ndarray], *, n_max: int, max_states: int,
                 max_order: int, fallback: bool) -> PDQResult:
    """The shared queue by the exact chain, point by point (birth-death where it cannot)."""
    shape = a["lam"].shape
    names = ("R", "busy", "conflict")
    out = {n: np.full(shape, np.nan) for n in names}
    ok = np.zeros(shape, dtype=bool)
    sat = np.zeros(shape, dtype=bool)
    bott = np.full(shape, "", dtype=object)
    from mva.errors import ConvergenceError

    kd = _shared_keyed(a) if fallback else None
    L_kd = np.asarray(kd.mean_in_system, float) if kd is not None else None
    for idx in np.ndindex(shape):
        g = {n: float(v[idx]) for n, v in a.items()}
        if L_kd is not None and not (g["k"] <= AUTO_MAX_K and L_kd[idx] <= AUTO_MAX_POPULATION):
            continue      # auto: the chain would exceed the cost limit (gate, no attempt)
        if g["avail"] != g["k"]:
            if fallback:
                continue
            raise ValueError("method='ctmc' needs whole dedicated processors; got "
                             "multiplexed processors (available a = "
                             f"{g['avail']:.4g}); use method='birth-death'")
        lam, S = g["lam"], g["Sp"]
        p1 = float(key_probabilities(int(g["n_keys"]), g["key_skew"])[0])
        fk = max(1.0 - g["f_sequential"] - g["f_nosync"], 0.0)
        if lam * S >= g["k"] or lam * fk * p1 * S >= 1.0:
            sat[idx] = True
            bott[idx] = "processors" if lam * S >= g["k"] else "key"
            ok[idx] = True
            continue
        if lam <= 0:
            out["R"][idx], out["busy"][idx], out["conflict"][idx] = S, 0.0, 0.0
            ok[idx] = True
            continue
        r = None
        try:
            # grow the population limit until the truncated mass is negligible
            for n_lim in sorted({min(x, n_max) for x in (8, 12, 16, 24, 32, 48, 64, 96, 128)}):
                r = _ctmc_point(int(g["k"]), lam, S, g["cs2"], int(g["n_keys"]),
                                g["key_skew"], g["f_sequential"], g["f_nosync"], n_lim,
                                max_states, max_order)
                if r["truncation"] <= CTMC_TRUNCATION_TOL:
                    break
        except (ValueError, ConvergenceError) as exc:
            if fallback:
                continue
            raise ValueError(f"method='ctmc': the chain of this point (k={int(g['k'])}, "
                             f"n_keys={int(g['n_keys'])}, key_skew={g['key_skew']:.3g}, "
                             f"cs2={g['cs2']:.3g}, load={lam * S / g['k']:.3g}) is too "
                             f"large: {exc}; use method='auto' or 'birth-death'") from exc
        assert r is not None
        if r["truncation"] > CTMC_TRUNCATION_TOL:
            if fallback:
                continue
            raise ValueError(f"method='ctmc': the chain truncated at n_max={n_max} handlers "
                             f"keeps probability {r['truncation']:.3g} > "
                             f"{CTMC_TRUNCATION_TOL} at its limit (k={int(g['k'])}, "
                             f"load={lam * S / g['k']:.3g}); raise n_max or use "
                             "method='birth-death'")
        out["R"][idx], out["busy"][idx], out["conflict"][idx] = r["R"], r["busy"], r["conflict"]
        ok[idx] = True
    lam_all = a["lam"]
    used_bd = np.zeros(shape, dtype=bool)
    if not ok.all():
        bd = kd if kd is not None else _shared_keyed(a)
        if fallback:
            # many effective keys and no sequential handlers: the birth-death
            # method (the M/M/k limit) is the more accurate one there
            keff = np.ones(shape)
            cache: dict[tuple[int, float], float] = {}
            for idx in np.ndindex(shape):
                kk = (int(a["n_keys"][idx]), float(a["key_skew"][idx]))
                if kk not in cache:
                    cache[kk] = 1.0 / float(np.sum(key_probabilities(*kk) ** 2))
                keff[idx] = cache[kk]
            used_bd = (~ok & (a["f_sequential"] == 0.0)
                       & (keff >= AUTO_BD_KEYS_PER_PROCESSOR * a["k"]))
            if used_bd.any():
                b2 = _shared(a)
                for name, field in (("R", "response_time"), ("busy", "busy_processors"),
                                    ("conflict", "conflict_probability")):
                    out[name] = np.where(used_bd, np.asarray(getattr(b2, field), float),
                                         out[name])
                sat = np.where(used_bd, np.asarray(b2.saturated, bool), sat)
                bott = np.where(used_bd, np.asarray(b2.bottleneck, dtype=object), bott)
        rest = ~ok & ~used_bd
        for name, field in (("R", "response_time"), ("busy", "busy_processors"),
                            ("conflict", "conflict_probability")):
            out[name] = np.where(rest, np.asarray(getattr(bd, field), float), out[name])
        sat = np.where(rest, np.asarray(bd.saturated, bool), sat)
        bott = np.where(rest, np.asarray(bd.bottleneck, dtype=object), bott)
    nan = np.where(sat, np.nan, 1.0)
    Sbar = a["Sp"]
    R = out["R"] * nan
    vals = dict(response_time=R, waiting_time=(R - Sbar), response_time_s=R / a["clock_hz"],
                throughput=lam_all * nan, utilization=out["busy"] / a["avail"] * nan,
                busy_processors=out["busy"] * nan, mean_in_system=lam_all * R,
                conflict_probability=out["conflict"] * nan, available_processors=a["avail"])
    parts = [m for m, sel in (("ctmc", ok), ("keyed", ~ok & ~used_bd),
                              ("birth-death", used_bd)) if sel.any()]
    method = "+".join(parts) if parts else "ctmc"
    sat_v: Any = bool(sat) if np.ndim(sat) == 0 else np.asarray(sat)
    bott_v: Any = str(bott) if np.ndim(bott) == 0 else np.asarray(bott, dtype=object)
    return PDQResult(discipline="shared", saturated=sat_v, bottleneck=bott_v, method=method,
                     **{n: scalar_or_array(np.asarray(v, float)) for n, v in vals.items()})


# ---------------------------------------------------------------------------
# key-aware approximation of the shared queue
# ---------------------------------------------------------------------------

_KEYED_MMAX = 800   # pool states of the key-aware birth-death chain
_KEYED_ITER = 5000  # fixed-point iterations at most
_BATCH_ITER = 20   # multiplexed: outer iterations of the released batch's interrupts


def _key_queues(lam_i: np.ndarray, S: float, cs2: float, Wp: float, first: float = 0.0,
                jump: float = 0.0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per-key M/G/1 queues with an exceptional first service (Welch 1964).

    A handler that finds its key idle enters the pool of eligible handlers and
    waits ``Wp`` for a processor, ``B0 = Wp + S``; one released by its key's
    predecessor has an older arrival number than the fresh arrivals and takes
    the processor just freed, ``B1 = S``.  Returns ``(P0, Wq, R)``: the
    probability that an arrival finds its key idle
    ``P0 = (1 - rho1) / (1 - rho1 + rho0)``, the mean wait behind the key
    ``Wq = lambda (P0 E[B0^2] + (1 - P0) E[B1^2]) / (2 (1 - rho1))`` and the
    response ``Wq + P0 B0 + (1 - P0) B1``.  ``first``: a mean cost only the
    first handler of a key's busy period pays (multiplexed processors: the
    interrupt; the released ones run on the processor their predecessor
    freed), ``B0 = Wp + S + first``; with ``jump`` the cost is that jump
    with probability ``first / jump`` (its variance ``first (jump - first)``
    joins ``E[B0^2]``), else a constant.
    """
    EB1 = S * S * (1.0 + cs2)
    EB0 = EB1 + 2.0 * S * Wp + 2.0 * Wp * Wp      # pool wait taken exponential
    if first:
        EB0 = EB0 + 2.0 * (S + Wp) * first + first * max(jump, first)
    rho0, rho1 = lam_i * (S + Wp + first), lam_i * S
    P0 = (1.0 - rho1) / (1.0 - rho1 + rho0)
    Wq = lam_i * (P0 * EB0 + (1.0 - P0) * EB1) / (2.0 * (1.0 - rho1))
    return P0, Wq, Wq + P0 * (S + Wp + first) + (1.0 - P0) * S


def _batch_backlog_wait(lam_s: float, nu: float, v: float, k: float, S: float,
                        rho_o: float) -> float:
    r"""Mean wait of an ordinary handler for the processors behind the batch an episode releases.

    When a sequential handler ends, nothing runs and the ``N`` handlers held
    back behind it (geometric, mean ``nu``: :math:`P(N = n) = (1 - p) p^n`,
    :math:`p = \nu / (1 + \nu)`) become eligible at once on ``k`` free
    processors.  The member in place ``j`` waits for :math:`(j - k)^+` of
    the members ahead to be served ``k`` at a time, :math:`(j - k)^+ S / k`;
    over the members, :math:`E[\sum_j (j - k)^+] / E[N] = p^k (1 + \nu)`,
    and an arrival is such a member with probability ``v`` (it arrived
    during an episode).  The ``W_0 = (N - k)^+`` members left over are
    worked off at the spare rate :math:`(k / S)(1 - \rho_o)` while new
    arrivals queue behind them: a fluid area of :math:`\lambda_o W_0^2
    S^2 / (2 k^2 (1 - \rho_o))` per episode, with :math:`E[W_0^2] =
    p^{k+1} (1 + p) / (1 - p)^2`.  Together

    .. math::

        W_b = v \frac{S}{k} p^k (1 + \nu)
              + \lambda_s \frac{S^2}{2 k^2 (1 - \rho_o)}
                \frac{p^{k+1} (1 + p)}{(1 - p)^2}.

    It replaces a fluid area of the episode's whole lost capacity
    (:math:`\lambda_s E[B^2] \rho_o / (2 (1 - v)(1 - \rho_o))`), which let
    every held handler wait as if the processors were its bottleneck even
    when the batch fits on them, and overestimated the ordinary handlers by
    25-35% where the episodes themselves were right
    (``benchmarks/pdq_episodes.py``, ``docs/models/pdq.rst``); multiplexed
    processors take the batch too, the idle ones and by interrupting the
    computing ones (:func:`_released_cdf`).

    Examples
    --------
    >>> _batch_backlog_wait(0.01, 0.0, 0.5, 4, 10.0, 0.3)       # no batch: no wait
    0.0
    >>> round(_batch_backlog_wait(0.01, 2.0, 0.5, 1, 10.0, 0.3), 6)   # one processor
    14.761905
    """
    return sum(_batch_backlog_parts(lam_s, nu, v, k, S, rho_o))


def _batch_backlog_parts(lam_s: float, nu: float, v: float, k: float, S: float,
                         rho_o: float) -> tuple[float, float]:
    """The two terms of :func:`_batch_backlog_wait`: the batch's members' wait for the
    processors (an arrival is one with probability ``v``) and the wait behind what is
    left of the batch.

    >>> _batch_backlog_parts(0.01, 2.0, 0.5, 1, 10.0, 0.3)
    (10.0, 4.761904761904761)
    """
    if lam_s <= 0.0 or nu <= 0.0:
        return 0.0, 0.0
    p = nu / (1.0 + nu)
    pk = p ** max(k, 1.0)
    rho_o = min(rho_o, 1.0 - 1e-12)
    return (v * (S / k) * pk * (1.0 + nu),
            lam_s * S * S / (2.0 * k * k * (1.0 - rho_o)) * pk * p * (1.0 + p) / (1.0 - p) ** 2)


def _batch_interrupts(k: int, nu: float, theta: float) -> float:
    """Mean number of interrupts by the batch a sequential episode released (multiplexed).

    When the sequential handler ends, the batch held back behind it (``N``
    handlers, geometric of mean ``nu``) becomes eligible at once: its first
    handler continues on the processor the sequential one freed, the next
    ones take the idle processors among the ``k - 1`` others (``I``, binomial:
    each one's compute thread is outside a burst with probability ``1 -
    theta``), then interrupt the computing ones, and the rest wait:
    ``E[min((N - 1 - I)^+, k - 1 - I)]``.
    """
    from scipy.stats import binom

    if nu <= 0.0 or k <= 1:
        return 0.0
    q = nu / (1.0 + nu)
    i = np.arange(k)                                   # idle processors among k - 1
    pi = binom.pmf(i, k - 1, 1.0 - theta)
    # E[min((N - 1 - i)^+, c)] = sum_{j=1}^{c} P(N - 1 - i >= j), c = k - 1 - i
    tot = 0.0
    for ii, w in zip(i, pi):
        c = k - 1 - ii
        if c <= 0 or w == 0.0:
            continue
        j = np.arange(1, c + 1)
        tot += w * float(np.sum(q ** (1 + ii + j)))    # P(N >= 1 + i + j), geometric
    return tot


def _batch_dispatchable(nu: float, fk: float, fn: float, p: np.ndarray) -> float:
    r"""Mean number of a released batch's handlers that can start at once (multiplexed).

    A batch of mean ``nu`` ordinary handlers is held back behind a
    sequential one; of its keyed members (a fraction ``fk / (fk + fn)``)
    only the first of each key can start, the others follow on the
    processor their key's predecessor frees (no interrupt).  With the keyed
    members' mean ``n = nu fk / (fk + fn)`` and key probabilities ``p_i``:

    .. math::

        \nu_d = \nu \frac{f_n}{f_k + f_n} + \sum_i \left(1 - (1 - p_i)^{n}\right)

    (the expected number of distinct keys among ``n`` draws, taken at the
    mean).  Many keys: ``nu_d -> nu``; one key: ``nu_d = nu f_n / (f_k +
    f_n) + 1 - 0^n``.
    """
    tot = fk + fn
    if nu <= 0.0 or tot <= 0.0:
        return 0.0
    n = nu * fk / tot
    distinct = float(np.sum(-np.expm1(n * np.log1p(-np.minimum(p, 1.0 - 1e-15))))) \
        if n > 0 else 0.0
    return min(nu * fn / tot + distinct, nu)


class _Mixing:
    r"""The key-aware fixed point's step on ``x = (W_p, C, v)``: Anderson mixing.

    The plain step is ``x + (g(x) - x) / 2``; with the last :data:`MIXING_MEMORY`
    iterates and residuals ``f = g(x) - x`` (times scaled by ``S``), Anderson's
    type-II step :math:`x + f/2 - (\Delta X + \Delta F / 2)\gamma`, :math:`\gamma`
    the least-squares fit of ``f`` by :math:`\Delta F`, is taken where it stays in
    the domain (no negative time, ``v < 1``, no longer than ten plain steps); else
    the plain step, and the history restarts.  An Anderson step after which the
    processors or the episodes saturate is replaced by the plain one, and the
    iteration goes on with plain steps (:meth:`retreat`): the stability region
    is the plain iteration's.  Same fixed point, a third to a fifth of the
    steps (Walker and Ni 2011).
    """

    def __init__(self, S: float) -> None:
        self.unit = np.array([S, S, 1.0])
        self.X: list[np.ndarray] = []
        self.F: list[np.ndarray] = []
        self.accelerated = False       # the last step was Anderson's
        self.off = False               # plain steps only (after an overshoot)
        self.plain = np.zeros(3)

    def retreat(self) -> tuple[float, float, float]:
        """The plain step instead of the last one, which left the stable region (the
        processors or the episodes saturated there); plain steps from now on."""
        self.off, self.accelerated, self.X, self.F = True, False, [], []
        Wp, C, v = self.plain * self.unit
        return float(Wp), float(C), float(v)

    def step(self, x: np.ndarray, g: np.ndarray) -> tuple[float, float, float]:
        z, f = x / self.unit, (g - x) / self.unit
        plain = z + 0.5 * f
        self.X.append(z)
        self.F.append(f)
        self.X, self.F = self.X[-MIXING_MEMORY - 1:], self.F[-MIXING_MEMORY - 1:]
        out, self.plain, self.accelerated = plain, plain, False
        if len(self.F) > 1 and not self.off:
            dF = np.diff(np.array(self.F), axis=0).T
            dX = np.diff(np.array(self.X), axis=0).T
            gam = np.linalg.lstsq(dF, f, rcond=1e-12)[0]
            cand = plain - (dX + 0.5 * dF) @ gam
            if (np.all(np.isfinite(cand)) and cand.min() >= 0.0 and cand[2] < 1.0
                    and np.max(np.abs(cand - z)) <= 10.0 * np.max(np.abs(0.5 * f))):
                out, self.accelerated = cand, True
            else:
                self.X, self.F = [z], [f]
        Wp, C, v = out * self.unit
        return float(Wp), float(C), float(v)


#: iterates the key-aware fixed point's Anderson mixing remembers (:class:`_Mixing`)
MIXING_MEMORY = 2


def _keyed_point(k: float, lam: float, S: float, cs2: float, p: np.ndarray, fs: float,
                 fn: float, first: float = 0.0, jump: float = 0.0,
                 first_seq: float | None = None, p_stream: float = 0.0,
                 released_theta: float = 0.0,
                 start: tuple[float, ...] | None = None,
                 busiest_only: bool = False) -> dict[str, Any]:
    """Key-aware decomposition of one shared PDQ point (see :func:`solve`, Notes).

    ``first`` (multiplexed processors): the mean interrupt cost a handler
    pays when it is dispatched on arrival -- a nosync handler, or the first
    of its key's busy period; a handler released by its key's predecessor
    runs on the processor that predecessor freed and pays none.  ``jump``:
    the interrupt cost itself (``first = P(interrupt) jump``; 0: taken
    constant), so that the key queues see its variance and the handlers a
    sequential one drains are mixtures (:func:`_interrupt_shape`): those
    started as they arrived pay it with probability ``p_stream`` (a
    nosync handler or the first of its key's busy period); the
    members of a batch an episode held back beyond the idle processors pay
    it (``released_theta``: the fraction of the processors not running
    handlers that compute, :func:`_released_cdf`).  ``start``: the fixed
    point's state ``out["state"]`` of a nearby solve to start from (the
    multiplexed batch iteration; the same fixed point, fewer steps).
    ``busiest_only`` (multiplexed processors, with or without interrupts): the
    drain takes the busiest key alone as a lane (:func:`_lanes`).
    ``first_seq``: the mean interrupt cost of a sequential handler that
    arrives at an empty node (default ``first``, charged to every one); it
    is paid in a free period (``1 - v``) when no ordinary handler runs
    (Poisson, ``exp(-lambda_o S_q)``), since otherwise the handler starts
    on the processor the drain's last handler frees.
    """
    fk = max(1.0 - fs - fn, 0.0)
    lam_k, lam_n, lam_s = lam * fk, lam * fn, lam * fs
    lam_i = lam_k * p
    ac = (1.0 + cs2) / 2.0
    keff = 1.0 / float(np.sum(p * p))
    lam_p = lam_k + lam_n
    phi = lam_k / lam_p if lam_p > 0 else 0.0
    m = np.arange(_KEYED_MMAX + 1, dtype=float)
    Wp, C, v, varD, drain, nu, held = 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0
    if start is not None:
        Wp, C, v, varD, drain = start
    out: dict[str, Any] = {"sat": "", "conv": False}
    fseq = first if first_seq is None else 0.0
    if lam * S >= k:
        out["sat"] = "processors"
        return out
    if lam_s * S >= 1.0:
        out["sat"] = "processors"
        return out
    if lam_i.size and lam_i[0] * S >= 1.0:
        out["sat"] = "key"
        return out
    if k <= 1.0 or (fn == 0.0 and lam_i.size == 1):
        # one processor, or one key and no nosync handlers: keyed and sequential
        # handlers alike run one at a time in arrival order -- an M/G/1 queue,
        # exactly
        if lam * S >= 1.0:
            out["sat"] = "key" if k > 1.0 else "processors"
            return out
        if first:
            # multiplexed: the first handler of a busy period interrupts (Welch)
            P0_, _, R1 = _key_queues(np.array([lam]), S, cs2, 0.0, first)
            out.update(R=float(R1[0]), conflict=1.0 - float(P0_[0]), conv=True, iterations=0,
                       busy=lam * S + lam * float(P0_[0]) * first)
            return out
        out.update(R=S + lam * S * S * (1.0 + cs2) / (2.0 * (1.0 - lam * S)),
                   conflict=float(np.sum(p * lam_i)) * S, conv=True, iterations=0)
        return out
    accel = _Mixing(S)
    for it in range(_KEYED_ITER):
        # the processors' capacity the episodes leave: dedicated, all but v (idle
        # through the drain); multiplexed, all but the sequential handler's own time
        # (through the drain they run the handlers ahead and compute, and the batch
        # released after it starts at once, interrupting; charging the whole episode
        # called points saturated that the simulator carries)
        vcap = lam_s * (S + fseq) if jump > 0.0 else v
        if v >= 1.0 or lam * (1.0 - fs) * S >= k * (1.0 - vcap):
            if accel.accelerated:         # an overshoot of the mixing: plain steps
                Wp, C, v = accel.retreat()
                continue
            out["sat"] = "processors"
            return out
        P0, Wkey, _ = _key_queues(lam_i, S, cs2, Wp, first, jump)
        # the pool's holding time: the handlers dispatched on arrival pay ``first``
        Sq = S
        if first and lam_p > 0:
            Sq = S + first * (lam_n + lam_k * float(np.sum(p * P0))) / lam_p
        # pool of eligible handlers: keys with a backlog hold one place each
        if lam_p > 0:
            births = lam_n + lam_k * np.maximum(keff - phi * m, 0.0) / keff
            deaths = np.minimum(k, m) / Sq
            with np.errstate(divide="ignore"):
                logr = np.log(np.maximum(births[:-1], 1e-300)) - np.log(
                    np.maximum(deaths[1:], 1e-300))
            logr = np.where(births[:-1] > 0, logr, -np.inf)
            logp = np.concatenate([[0.0], np.cumsum(logr)])
            w = np.exp(logp - logp.max())
            pi = w / w.sum()
            if pi[-1] > 1e-9:
                if accel.accelerated:
                    Wp, C, v = accel.retreat()
                    continue
                out["sat"] = "processors"
                return out
            Lq = float(np.sum(pi * np.maximum(m - k, 0.0)))
            Wp_new = ac * Lq / lam_p
        else:
            Lq, Wp_new = 0.0, 0.0
        if first_seq is not None:
            fseq = first_seq * (1.0 - v) * float(np.exp(-lam * (1.0 - fs) * Sq))
        E1 = C + S + fseq
        E2 = E1 * E1 + cs2 * S * S + varD + max(C - drain, 0.0) ** 2
        vcap = lam_s * (S + fseq) if jump > 0.0 else v
        rho_eff = lam * (1.0 - fs) * Sq / (k * (1.0 - vcap))
        if rho_eff >= 1.0:
            if accel.accelerated:         # an overshoot of the mixing: plain steps
                Wp, C, v = accel.retreat()
                continue
            out["sat"] = "processors"
            return out
        # sequential episodes (from reaching the head to the end of the
        # handler, E1, E2) as the customers of an M/G/1 queue: the wait until
        # the episode in progress and those queued before it end
        Wb = lam_s * E2 / 2.0 / (1.0 - v)
        Rs = Wb + C + S + fseq                # a sequential handler's response
        # handlers held back behind one sequential handler: those arriving
        # between it and the next (Exp(lam_s) apart) within its response
        # (taken exponential): mean lambda_o R_s / (1 + lambda_s R_s), geometric
        held = Rs / (1.0 + lam_s * Rs)
        nu = lam * (1.0 - fs) * held
        if lam_s > 0:
            # the drain with the busiest key's handlers one after another (its work
            # since the last episode, or the batch held back), the others in parallel
            # (multiplexed: the busiest key only -- the others' handlers held back by an
            # episode pay the released batch's interrupts, _released_cdf; also where the
            # interrupt costs nothing, so that R grows with its cost from 0)
            top = _lanes(lam_i)[:1] if busiest_only else _lanes(lam_i)
            # multiplexed: the handlers drained pay the interrupt or not (mixtures)
            # (of the handlers started as they arrive, a key's successors pay none)
            arr = (lam_n + lam_k * float(np.sum(p * P0))) / lam_p if lam_p > 0 else 0.0
            # (to 6 digits: the drain's grid is reused once the fixed point settles)
            shs = _interrupt_shape(float(cs2), S, float(f"{p_stream * arr:.6g}"), jump)
            rel = None
            if jump > 0.0:
                nall = lam * (1.0 - fs) * held
                d = _batch_dispatchable(nall, fk, fn, p) / nall if nall > 0.0 else 1.0
                rel = (jump / S, int(k), released_theta, d)
            # (dedicated processors: the released batch on k processors; multiplexed
            # ones take it as _released_cdf does)
            kb = k if (rel is None and not busiest_only) else None
            m1_, m2_ = _lane_drain_moments(float(cs2), top * S,
                                           (lam * (1.0 - fs) - float(top.sum())) * S,
                                           lam_s * S, held / S, v, shs, rel, kb)
            drain, varD = S * m1_, S * S * (m2_ - m1_ * m1_)
            # all in parallel (as if unkeyed, no interrupts), for the processors' bound below
            dpar = S * _drain_moments(float(cs2), lam * (1.0 - fs) * S, lam_s * S, nu, nu, v,
                                      kb)[0]
        else:
            dpar = 0.0
        # where the processors bind, the handlers ahead that have not started (the
        # keys' waiting ones and the pool queue) are worked off on all processors
        # after the parallel drain
        clear = max(drain, dpar + (float(np.sum(lam_i * Wkey)) + Lq) * S / k)
        v_new = lam_s * (clear + S + fseq)
        done = abs(Wp_new - Wp) <= 1e-10 * (S + Wp) and abs(clear - C) <= 1e-10 * (S + C)
        if done:
            Wp, C, v = 0.5 * (Wp + Wp_new), 0.5 * (C + clear), 0.5 * (v + v_new)
            out["conv"] = True
            break
        Wp, C, v = accel.step(np.array([Wp, C, v]), np.array([Wp_new, clear, v_new]))
    P0, Wkey, Ri = _key_queues(lam_i, S, cs2, Wp, first, jump)
    E1 = C + S + fseq
    E2 = E1 * E1 + cs2 * S * S + varD + max(C - drain, 0.0) ** 2
    # an arrival waits until the sequential episodes in progress and queued
    # end: the M/G/1 wait lambda_s E[E^2] / 2 / (1 - v), v = lambda_s E[E]
    Wres = lam_s * E2 / 2.0 / (1.0 - v)
    # an ordinary handler also waits for the processors behind the batch an
    # episode releases onto the k processors (a member of it, or an arrival
    # queued behind what is left of it); multiplexed processors take it too, the
    # free ones and by interrupting the computing ones (_released_cdf)
    batch = _batch_backlog_parts(lam_s, nu, v, k, Sq, lam * (1.0 - fs) * Sq / k)
    Wres_o = Wres + sum(batch)
    if lam_s > 0 and lam_i.size:
        # a keyed handler arriving in a free period (1 - v) waits for its key's work
        # since the last episode, not the stationary wait: the key's M/G/1 wait Wkey
        # scaled by the ratio of the two workloads (_lane_workload, and Pollaczek-
        # Khinchine's lambda E[S^2] / (2 (1 - rho)), 1 without sequential handlers);
        # one held back (v) waits for the key's handlers held back before it, about
        # its held window's worth (the episodes' own wait is in Wres_o)
        uniq, inv = np.unique(lam_i, return_inverse=True)
        m2 = _handler_m2(float(cs2))
        rho_u = np.minimum(uniq * S, 1.0 - 1e-12)
        stat = rho_u * m2 / (2.0 * (1.0 - rho_u))
        EVf = _lane_workload(uniq * S, lam_s * S, held / S, float(cs2))[0]
        ratio = np.where(stat > 0.0, EVf / np.maximum(stat, 1e-300), 1.0)[inv]
        Ri = Ri - Wkey + (1.0 - v) * Wkey * ratio + v * lam_i * held * S
    R_k = float(np.sum(p * Ri))
    R = fk * (R_k + Wres_o) + fn * (Wp + S + first + Wres_o) \
        + fs * (Wp + Wres + C + S + fseq)
    conflict = float(np.sum(p * (1.0 - P0)))
    # busy processors: every handler's S, the interrupts of those dispatched on arrival
    busy = lam * S + first * (lam_n + lam_k * float(np.sum(p * P0))) + fseq * lam_s
    # the sequential episodes' queue (drain and handler: mean E1, second moment E2,
    # load v), reported for benchmarks/pdq_episodes.py
    out.update(R=R, conflict=conflict, iterations=it + 1, busy=busy, nu=nu if lam_s > 0 else 0.0,
               state=(Wp, C, v, varD, drain),
               episode=(E1, E2, v) if lam_s > 0 else None,
               R_seq=Wp + Wres + C + S + fseq if lam_s > 0 else None,
               # a nosync handler's waits (benchmarks/pdq_components.py): the pool, the
               # episodes' queue, the released batch as a member of it, behind what is
               # left of it
               waits=(Wp, Wres, batch[0], batch[1]))
    return out


def _mgk_floor(k: float, lam: float, S: float, cs2: float) -> float:
    r"""Response of ``k`` processors serving every handler in arrival order (M/G/k), a floor.

    Keys only hold handlers back (a keyed handler may wait with a processor
    idle) and sequential handlers take capacity away, so the shared queue
    and the spin-lock discipline respond no faster, about, than the same
    handlers on ``k`` unrestricted processors.  Allen-Cunneen:
    :math:`S + \frac{1 + c_s^2}{2} \frac{C(k, a)\, S}{k - a}`, ``a = lam S``,
    ``C`` Erlang's delay probability; ``S`` where ``a >= k`` (no floor).

    >>> round(_mgk_floor(1, 0.5, 1.0, 1.0), 6)      # M/M/1 at 0.5: 2
    2.0
    >>> round(_mgk_floor(2, 0.8, 1.0, 1.0), 6)      # M/M/2 at 0.4: 1 + 0.2286 / 1.2
    1.190476
    """
    from mva.open import mmc

    kk = int(round(k))
    if lam <= 0.0 or lam * S >= kk:
        return S
    return S + (1.0 + cs2) / 2.0 * float(mmc(lam, S, kk).waiting_time)


def _gamma_m3(m: float, cs2: float) -> float:
    """Third moment of a handler time of mean ``m`` and SCV ``cs2`` (gamma shape)."""
    return m ** 3 * (1.0 + cs2) * (1.0 + 2.0 * cs2)


def _spin_point(k: float, lam: float, S: float, cs2: float, o_lock: float, p: np.ndarray,
                fs: float, fn: float) -> dict[str, Any]:
    """Spin-lock decomposition of one point (see :func:`solve`, Notes, *Spin-lock*).

    Each key's lock is an M/G/1 server of the handlers dispatched with that
    key (holding ``h = S + o_lock``); the wait for it is spent spinning on a
    processor, so the FCFS processor pool serves keyed handlers for the
    spin plus ``h``; sequential episodes are the customers of an M/G/1
    queue as in the key-aware shared queue (:func:`_keyed_point`).
    """
    from mva.open import mmc

    fk = max(1.0 - fs - fn, 0.0)
    lam_k, lam_n, lam_s = lam * fk, lam * fn, lam * fs
    lam_i = lam_k * p
    h = S + o_lock
    V = cs2 * S * S                                   # the lock cost is constant
    Eh2 = h * h + V
    out: dict[str, Any] = {"sat": "", "conv": False}
    r = lam_i * h
    if r.size and r[0] >= 1.0:
        out["sat"] = "lock"
        return out
    if lam_s * S >= 1.0:
        out["sat"] = "processors"
        return out
    if fn == 0.0 and p.size == 1:
        # one key, no nosync handlers: keyed (h) and sequential (S) handlers run one at
        # a time in arrival order -- an M/G/1 queue, exactly
        m1 = fk * h + fs * S
        m2 = fk * Eh2 + fs * S * S * (1.0 + cs2)
        if lam * m1 >= 1.0:
            out["sat"] = "lock"
            return out
        W = lam * m2 / (2.0 * (1.0 - lam * m1))
        out.update(R=W + m1, conflict=float(lam_k * h), busy=lam * (W * fk + m1), conv=True)
        return out
    # spin per key: the M/G/1 wait of its lock (Pollaczek-Khinchine), and its second moment
    Eh3 = o_lock ** 3 + 3.0 * o_lock ** 2 * S + 3.0 * o_lock * S * S * (1.0 + cs2) \
        + _gamma_m3(S, cs2)
    spin_pk = lam_i * Eh2 / (2.0 * (1.0 - r))
    spin2_pk = 2.0 * spin_pk * spin_pk + lam_i * Eh3 / (3.0 * (1.0 - r))
    lam_o = lam_k + lam_n
    qk = lam_k / lam_o if lam_o > 0.0 else 0.0
    # a handler's own time on its processor, without spinning
    Sw = qk * h + (1.0 - qk) * S
    rsafe = np.maximum(r, 1e-300)

    def pool(Wp: float) -> tuple[float, np.ndarray, float, float]:
        """The pool's wait (Erlang C, scaled by (1 + cs2) / 2 of the holding times) given
        the pool wait ``Wp`` the handlers have already spent: the lock's queue ahead of a
        handler is served meanwhile, so it spins ``E[max(W_L - Wp, 0)]`` (the lock wait
        ``W_L`` exponential given positive, probability ``r_i``)."""
        with np.errstate(divide="ignore", invalid="ignore"):
            keep = np.where(spin_pk > 0.0, np.exp(-rsafe * Wp / np.maximum(spin_pk, 1e-300)),
                            0.0)
        spin = spin_pk * keep
        spin2 = spin2_pk * keep
        Sb = qk * float(np.sum(p * (h + spin))) + (1.0 - qk) * S
        m2 = qk * float(np.sum(p * (h * h + 2.0 * h * spin + spin2 + V))) \
            + (1.0 - qk) * S * S * (1.0 + cs2)
        if lam_o <= 0.0:
            return 0.0, spin, Sb, 0.0
        if lam_o * Sb >= k:
            return np.inf, spin, Sb, np.inf
        Wq = float(mmc(lam_o, Sb, int(round(k))).waiting_time)
        return m2 / (2.0 * Sb * Sb) * Wq, spin, Sb, lam_o * Wq

    if lam_o * Sw >= k:
        # even without spinning (a wait for the processors long enough that the lock's
        # queue ahead is served meanwhile) the keyed and nosync handlers fill the pool
        out["sat"] = "processors"
        return out
    # the pool wait is the fixed point Wp = g(Wp), g decreasing (the longer the wait, the
    # shorter the spin): it lies above lo = g(inf); bracket it and bisect
    lo = pool(np.inf)[0]
    hi, step = lo, S
    while pool(hi)[0] > hi:
        hi, step = lo + step, 2.0 * step
    for _ in range(200):
        if hi - lo <= 1e-12 * (S + hi):
            break
        mid = 0.5 * (lo + hi)
        if pool(mid)[0] > mid:
            lo = mid
        else:
            hi = mid
    Wp = 0.5 * (lo + hi)
    _, spin, Sb, Lq = pool(Wp)
    hold = h + spin                                   # a keyed handler on its processor
    # sequential episodes: the fixed point of their clearing time C (the fraction of the
    # time they block the queue v = lambda_s (C + S)); no fixed point: no steady state
    C, varD, drain, it = 0.0, 0.0, 0.0, 0
    # the drain (the handlers started since the last episode, their own times: a key's
    # spinners are its backlog), in units of the lock's holding time h: the busiest
    # key's handlers hold its lock one after another (a lane, as in the key-aware shared
    # queue), the others run in parallel as the mixture they are -- a keyed one
    # S + o_lock, a nosync one S; or, if longer, all of them in parallel and then the
    # pool queue worked off on all processors (as _keyed_point's clearing time)
    # (without keyed handlers in units of S: the shared queue's drain, exactly)
    lanes = _lanes(lam_i)
    top = float(lanes.sum())
    u = h if lam_k > 0.0 else S
    lane = _lock_shape(cs2, S / u, 1.0, o_lock / u)
    rest = _lock_shape(cs2, S / u, (lam_k - top) / (lam_o - top) if lam_o > top else 0.0,
                       o_lock / u)
    every = _lock_shape(cs2, S / u, qk, o_lock / u)
    pool_q = Lq * Sb / k

    def drain_of(held: float, v: float) -> tuple[float, float, float]:
        # (the held batches on the k processors, as in the key-aware shared queue)
        m1_, m2_ = _lane_drain_moments(lane, lanes * u, (lam_o - top) * u, lam_s * u, held / u,
                                       v, rest, None, k)
        par = u * m1_ if top <= 0.0 else \
            u * _drain_moments(every, lam_o * u, lam_s * u, lam_o * held, lam_o * held, v,
                               k)[0]
        return max(u * m1_, par + pool_q), u * m1_, u * u * (m2_ - m1_ * m1_)

    if lam_s > 0.0:
        found = _episode_clearing(lam_s, S, V, drain_of,
                                  (1.0 - lam_o * Sb / k) / lam_s - S)
        if found is None:
            out["sat"] = "sequential"
            return out
        C, drain, varD, it = found
    v = lam_s * (C + S)
    E1 = C + S
    E2 = E1 * E1 + V + varD + max(C - drain, 0.0) ** 2
    Wres = lam_s * E2 / 2.0 / (1.0 - v) if lam_s > 0.0 else 0.0
    # the processors behind the batch an episode releases (held back during the
    # sequential handler's response Rs, geometric), as in the key-aware shared queue
    # (_keyed_point): the sequential handler ran alone, so the k processors are free
    Rs = Wres + C + S
    nu = lam_o * Rs / (1.0 + lam_s * Rs)
    Wres_o = Wres + _batch_backlog_wait(lam_s, nu, v, k, Sb, lam_o * Sb / k)
    R = fk * (Wp + float(np.sum(p * hold)) + Wres_o) + fn * (Wp + S + Wres_o) \
        + fs * (Wp + Wres + C + S)
    busy = lam_k * float(np.sum(p * hold)) + (lam_n + lam_s) * S
    # the sequential episodes (mean, second moment, load, clearing time), reported for
    # benchmarks/pdq_spinlock.py
    out.update(R=R, conflict=float(np.sum(p * r)), busy=busy, conv=True, iterations=it + 1,
               episode=(E1, E2, v, C) if lam_s > 0.0 else None)
    return out


#: sequential episodes (spin-lock): monotone iterations before the fold test, and the
#: grid of the fold test
_EPISODE_ITER = 60
_EPISODE_GRID = 48

#: sequential episodes (spin-lock): relative tolerance of the clearing time and the drain,
#: and the rounding level below which a step that no longer shrinks ends the iteration
#: too (the busiest key's workload cancels terms of order ``1 / q^2`` for rare sequential
#: handlers, about 1e-8 of its mean at ``q =`` :data:`LANE_MIN_RATE`)
_EPISODE_TOL = 1e-11
_EPISODE_NOISE = 1e-6

#: ... and the largest step of a drain iteration that, after 200 steps, is taken for a
#: cycle at the drain's rounding (the midpoint of its last two iterates is used) rather
#: than a failure to converge
_EPISODE_CYCLE = 1e-4


def _episode_clearing(lam_s: float, S: float, V: float,
                      drain_of: Callable[[float, float], tuple[float, float, float]],
                      C_max: float) -> tuple[float, float, float, int] | None:
    """Smallest fixed point ``C = g(C)`` of a sequential episode's clearing time (spin-lock).

    ``g(C)`` is the clearing time of ``drain_of(held, v)`` (with the drain's
    mean and variance; the clearing time adds what the processors hold back,
    a constant part), given the window ``held`` over which the previous
    episode held handlers back and the episodes' load ``v``; the window grows
    with the episodes' own M/G/1 wait, so with ``C``.  The episodes block the queue a
    fraction ``v = lambda_s (C + S)`` of the time; a steady state needs
    ``lambda_o S_b < k (1 - v)``, i.e. ``C < C_max``.  ``g`` increases with
    ``C``, so the iteration ``C_{n+1} = g(C_n)`` from 0 rises to the smallest
    fixed point, and there is none below ``C_max`` when it passes ``C_max``.
    Where the iteration converges slowly (linearly: the busiest key's work
    grows with the window held back), Aitken's extrapolation of three
    iterates, once past the fixed point, brackets it for Brent's method.
    Near the fold (a double root: the iteration slows down without end) the
    question is decided by the minimum of ``g(C) - C`` over ``[C_n, C_max)``
    (a grid, refined by a bounded scalar minimisation) and the root found by
    Brent's method.  At each ``C`` the window held back and the drain are
    themselves a fixed point (the window grows with the drain's variance),
    iterated from the previous ``C``'s drain with Aitken's extrapolation of
    every three windows.  ``g`` is evaluated once per ``C`` (the drain's warm
    start moves it within its rounding, and a bracket must keep its signs).
    Returns ``(C, drain, var_drain, iterations)`` or ``None`` when there is
    no steady state.
    """
    from scipy.optimize import brentq, minimize_scalar

    if C_max <= 0.0:
        return None
    state = [0.0, 0.0]                     # drain, its variance (warm start of the inner loop)
    # (values kept: the warm start moves g(C) within the drain's rounding, and the
    # bracketing below must see the same sign at the same C)
    memo: dict[float, tuple[float, float, float]] = {}

    def g(C: float) -> tuple[float, float, float]:
        if C in memo:
            return memo[C]
        if C > 1e100 * S:                  # (the fold test's grid reaches C_max ~ 1 / lam_s)
            return np.inf, np.inf, np.inf
        v = lam_s * (C + S)
        drain, varD = state
        last = np.inf
        seen: list[float] = []             # the windows since the last extrapolation
        c_new = step = np.inf
        for _ in range(200):
            E1 = C + S
            E2 = E1 * E1 + V + varD + max(C - drain, 0.0) ** 2
            Wb = lam_s * E2 / 2.0 / (1.0 - v)
            Rs = Wb + C + S
            held = Rs / (1.0 + lam_s * Rs)
            seen.append(held)
            if len(seen) == 3:
                # the window is a scalar fixed point converging linearly: Aitken's
                # extrapolation of three plain iterates (the iteration goes on from
                # it, so it ends at the same fixed point, within the tolerance)
                d1, d2 = seen[1] - seen[0], seen[2] - seen[1]
                if d1 != 0.0 and 0.0 < d2 / d1 < 1.0:
                    held = seen[2] + d2 * (d2 / d1) / (1.0 - d2 / d1)
                seen = []
            prev = (c_new, drain, varD)    # the last iterate
            c_new, d_new, vd_new = drain_of(held, v)
            step = max(abs(d_new - drain) / (S + d_new), abs(vd_new - varD) / (S * S + vd_new))
            drain, varD = d_new, vd_new
            if step <= _EPISODE_TOL or (step <= _EPISODE_NOISE and step >= last):
                break
            last = step
        else:
            if step > _EPISODE_CYCLE:
                from mva.errors import ConvergenceError
                raise ConvergenceError(f"pdq spinlock: the drain of a sequential handler did "
                                       f"not converge at C={C:.6g} (200 iterations, last step "
                                       f"{step:.3g})")
            # a two-cycle at the drain's rounding (its variance jumps by ~1e-4 where a grid
            # threshold flips between two windows 1e-9 apart): the cycle's midpoint
            c_new, drain, varD = (0.5 * (x + y) for x, y in zip(prev, (c_new, drain, varD)))
        state[0], state[1] = drain, varD
        memo[C] = (c_new, drain, varD)
        return memo[C]

    def h(x: float) -> float:
        return g(x)[0] - x

    def settle(lo: float, hi: float, it: int) -> tuple[float, float, float, int]:
        """The fixed point in ``[lo, hi]`` by Brent's method; ``hi`` where ``h(hi) > 0``
        (the fold's tangent) and ``lo`` where ``h(lo) <= 0`` (a fixed point), both within
        the drain's rounding."""
        if h(hi) > 0.0:
            root = hi
        elif h(lo) <= 0.0:
            root = lo
        else:
            root = brentq(h, lo, hi, xtol=1e-13 * (S + hi), maxiter=200)
        _, drain, varD = g(root)
        return root, drain, varD, it

    C, last, gain = 0.0, np.inf, 0.0
    for it in range(1, _EPISODE_ITER + 1):
        clear, drain, varD = g(C)
        if clear >= C_max:
            return None                   # the iterate stays below every fixed point
        step = abs(clear - C) / (S + clear)
        if step <= _EPISODE_TOL or (step <= _EPISODE_NOISE and step >= last):
            return clear, drain, varD, it
        if it % 3 == 0 and 0.0 < clear - C < gain:
            # slow, linear convergence (the busiest key's work grows with the window
            # held back, so with C): Aitken's extrapolation; past the fixed point it
            # brackets it
            r = (clear - C) / gain
            remaining = (clear - C) * r / (1.0 - r)
            for m in (1.0, 10.0, 100.0):
                guess = clear + m * remaining
                if guess >= C_max:
                    break
                if h(guess) <= 0.0:
                    return settle(clear, guess, it)
        C, last, gain = clear, step, clear - C
    # near the fold: does g(C) - C reach zero below C_max?
    top = C_max * (1.0 - 1e-9)
    if top <= C:
        return None
    xs = C + (top - C) * (np.geomspace(1e-6, 1.0, _EPISODE_GRID))
    F = np.array([h(float(x)) for x in xs])
    j = int(np.argmin(F))
    x_min, F_min = float(xs[j]), float(F[j])
    if F_min > 0.0:
        lo_b = float(xs[j - 1]) if j > 0 else C
        hi_b = float(xs[j + 1]) if j + 1 < xs.size else top
        res = minimize_scalar(h, bounds=(lo_b, hi_b), method="bounded",
                              options={"xatol": 1e-12 * (S + hi_b)})
        if not (res.fun <= 0.0):
            return None
        x_min = float(res.x)
    return settle(C, x_min, _EPISODE_ITER)


def _shared_keyed(a: Mapping[str, np.ndarray], values: bool = True) -> PDQResult:
    """The shared queue by the key-aware approximation, point by point.

    ``values=False``: the saturation flags (and bottlenecks) only, which the
    first fixed point of each point decides; the multiplexed processors'
    iteration of the released batch's interrupts, which changes the values
    only, is skipped (the values are then those of its first step).
    """
    shape = a["lam"].shape
    R = np.full(shape, np.nan)
    conf = np.full(shape, np.nan)
    sat = np.zeros(shape, dtype=bool)
    bott = np.full(shape, "", dtype=object)
    cache: dict[tuple[int, float], np.ndarray] = {}
    busy_m = np.full(shape, np.nan)       # multiplexed: busy processors of the values' model
    for idx in np.ndindex(shape):
        g = {n: float(v[idx]) for n, v in a.items()}
        key = (int(g["n_keys"]), g["key_skew"])
        if key not in cache:
            cache[key] = key_probabilities(*key)
        mult = bool(g["multiplexed"]) and g["p_int"] * g["O_int"] > 0.0
        if mult:
            # the interrupt is charged to the handlers dispatched on arrival only (a
            # key's successor and a handler taken from the queue run on a processor
            # that is already serving): values and stability region alike -- the
            # processors saturate where the interrupt chain's queue does, at
            # lambda (S + o_sched) = k, when interrupts have died out
            Sb = g["S"] + g["o_sched"]
            cs2b = g["cs2_S"] * g["S"] ** 2 / Sb ** 2
            p_arr = g["p_int"]
            rm = _keyed_point(g["avail"], g["lam"], Sb, cs2b, cache[key], g["f_sequential"],
                              g["f_nosync"], first=p_arr * g["O_int"], jump=g["O_int"],
                              first_seq=g["theta"] ** g["k"] * g["O_int"], p_stream=p_arr,
                              released_theta=g["theta"], busiest_only=True)
            r = rm
        else:
            r = _keyed_point(g["avail"], g["lam"], g["Sp"], g["cs2"], cache[key],
                             g["f_sequential"], g["f_nosync"],
                             busiest_only=bool(g["multiplexed"]))
        if r["sat"]:
            sat[idx], bott[idx] = True, r["sat"]
            continue
        if mult:
            if values and g["f_sequential"] > 0.0 and not rm["sat"] and rm["conv"]:
                # the batch an episode releases interrupts computing processors at once
                # (geometric, mean nu, from the values' fixed point): its handlers beyond
                # the idle processors interrupt, a fraction beta of the ordinary handlers
                # are such batch members (keyed ones beyond the first of their key
                # follow their predecessor, _batch_dispatchable); iterated with nu (values
                # only: the stability region stays the one above; where the iteration has
                # no steady state the last stable iterate is kept)
                lam_o = g["lam"] * (1.0 - g["f_sequential"])
                theta = g["theta"]     # computing among the processors not running handlers
                settled = False
                for _ in range(_BATCH_ITER):
                    nu = rm.get("nu", 0.0)
                    beta = min(g["lam"] * g["f_sequential"] * nu / max(lam_o, 1e-300), 1.0)
                    nu_d = _batch_dispatchable(nu, g["fk"], g["f_nosync"], cache[key])
                    p_b = _batch_interrupts(int(g["k"]), nu_d, theta) / max(nu, 1e-300)
                    p_mix = (1.0 - beta) * p_arr + beta * p_b
                    r2 = _keyed_point(g["avail"], g["lam"], Sb, cs2b, cache[key],
                                      g["f_sequential"], g["f_nosync"],
                                      first=p_mix * g["O_int"], jump=g["O_int"],
                                      first_seq=g["theta"] ** g["k"] * g["O_int"],
                                      p_stream=p_arr, released_theta=g["theta"],
                                      start=rm.get("state"), busiest_only=True)
                    if r2["sat"] or not r2["conv"]:
                        settled = True
                        break
                    settled = abs(r2["R"] - rm["R"]) <= 1e-6 * rm["R"]
                    rm = r2
                    if settled:
                        break
                if not settled:
                    from mva.errors import report_nonconvergence
                    report_nonconvergence("warn", "pdq multiplexed: the released batch's "
                                          f"interrupts did not settle in {_BATCH_ITER} "
                                          f"iterations at k={g['k']:.0f}", iterations=_BATCH_ITER)
            if not rm["sat"] and rm["conv"]:
                r = rm
                busy_m[idx] = rm["busy"]
        if not r["conv"]:
            from mva.errors import report_nonconvergence
            report_nonconvergence("warn", f"pdq keyed: no fixed point after {_KEYED_ITER} "
                                  f"iterations at k={g['k']:.0f}, "
                                  f"load={g['lam'] * g['Sp'] / g['avail']:.3g}",
                                  iterations=_KEYED_ITER)
        # no faster than the same handlers on k unrestricted processors (multiplexed:
        # without the interrupts, which only some of them pay)
        Sf = g["S"] + g["o_sched"] if mult else g["Sp"]
        floor = _mgk_floor(g["avail"], g["lam"], Sf, g["cs2_S"] * g["S"] ** 2 / Sf ** 2)
        R[idx], conf[idx] = max(r["R"], floor), r["conflict"]
    lam = a["lam"]
    nan = np.where(sat, np.nan, 1.0)
    busy = np.where(np.isfinite(busy_m), busy_m, lam * a["Sp"])
    own = busy / np.maximum(lam, 1e-300)          # the mean holding time per handler
    vals = dict(response_time=R * nan, waiting_time=(R - np.where(lam > 0, own, a["Sp"])) * nan,
                response_time_s=R / a["clock_hz"] * nan, throughput=lam * nan,
                utilization=np.minimum(busy / a["avail"], 1.0) * nan, busy_processors=busy * nan,
                mean_in_system=lam * R * nan, conflict_probability=conf * nan,
                available_processors=a["avail"])
    sat_v: Any = bool(sat) if np.ndim(sat) == 0 else np.asarray(sat)
    bott_v: Any = str(bott) if np.ndim(bott) == 0 else np.asarray(bott, dtype=object)
    return PDQResult(discipline="shared", saturated=sat_v, bottleneck=bott_v, method="keyed",
                     **{n: scalar_or_array(np.asarray(v, float)) for n, v in vals.items()})


def _partitioned(a: Mapping[str, np.ndarray]) -> PDQResult:
    from mva.open import mg1

    k, avail, Sp = a["k"], a["avail"], a["Sp"]
    Seff = Sp / np.maximum(1.0 - a["vac"], 1e-300) * k / avail   # one processor's share
    lam = a["lam_ns"]
    kmax = int(k.max())
    shape = k.shape
    # per-queue share of the ordinary handlers: keys i -> queue (i mod k); nosync evenly
    share = np.zeros(shape + (kmax,))
    flat = np.stack([a["n_keys"].ravel(), a["key_skew"].ravel(), k.ravel()], axis=1)
    uniq, inv = np.unique(flat, axis=0, return_inverse=True)
    inv = np.asarray(inv).ravel()
    us = np.zeros((len(uniq), kmax))
    for j, (K_, s_, k_) in enumerate(uniq):
        p = key_probabilities(int(K_), s_)
        us[j, :int(k_)] = np.bincount(np.arange(p.size) % int(k_), weights=p, minlength=int(k_))
    keyshare = us[inv].reshape(shape + (kmax,))
    real = np.arange(kmax) < k[..., None]
    fk = np.where(a["f_sequential"] < 1.0, a["fk"] / np.maximum(1.0 - a["f_sequential"], 1e-300),
                  0.0)
    fns = 1.0 - fk
    share = np.where(real, fk[..., None] * keyshare + (fns / k)[..., None], 0.0)
    lam_j = lam[..., None] * share
    rho = lam_j * Seff[..., None]
    sat = (a["vac"] >= 1.0) | np.any(rho >= 1.0, axis=-1)
    lam_j = np.where(sat[..., None] | ~real, 0.0, lam_j)
    Seff_ok = np.where(sat | ~np.isfinite(Seff), 1.0, Seff)
    q = mg1(lam_j, np.broadcast_to(Seff_ok[..., None], lam_j.shape),
            np.broadcast_to(a["cs2"][..., None], lam_j.shape))
    Wj = np.asarray(q.waiting_time, dtype=float)
    W = np.where(sat, 0.0, (share * Wj).sum(axis=-1))
    conflict = (share * np.asarray(q.prob_wait, dtype=float)).sum(axis=-1)
    bott = np.where(sat, np.where(a["vac"] >= 1.0, "processors", "partition"), "")
    busy = lam * Sp / np.maximum(1.0 - a["vac"], 1e-300)
    return _finish(a, "partitioned", W, Seff, conflict, busy, sat, bott, "M/G/1 per queue")


def _spinlock(a: Mapping[str, np.ndarray]) -> PDQResult:
    """The spin-lock discipline by :func:`_spin_point`, point by point.

    The stability region is the decomposition's own: a point is saturated
    exactly where it has no steady state (the hottest lock, the processors
    without spinning, or the sequential episodes -- drain, spinners and pool
    queue -- filling the time), which is monotone in the load.
    """
    shape = a["lam"].shape
    R = np.full(shape, np.nan)
    busy = np.full(shape, np.nan)
    conf = np.full(shape, np.nan)
    sat = np.zeros(shape, dtype=bool)
    bott = np.full(shape, "", dtype=object)
    cache: dict[tuple[int, float], np.ndarray] = {}
    own = a["Sp"] + a["fk"] * a["o_lock"]             # the handler and its lock cost
    for idx in np.ndindex(shape):
        g = {n: float(v[idx]) for n, v in a.items()}
        key = (int(g["n_keys"]), g["key_skew"])
        if key not in cache:
            cache[key] = key_probabilities(*key)
        r = _spin_point(g["avail"], g["lam"], g["Sp"], g["cs2"], g["o_lock"], cache[key],
                        g["f_sequential"], g["f_nosync"])
        if r["sat"]:
            sat[idx], bott[idx] = True, r["sat"]
            continue
        # no faster than the same handlers, with their lock cost, on k unrestricted
        # processors
        own1 = float(own[idx])
        floor = _mgk_floor(g["avail"], g["lam"], own1, g["cs2"] * g["Sp"] ** 2 / own1 ** 2)
        R[idx], busy[idx], conf[idx] = max(r["R"], floor), r["busy"], r["conflict"]
    lam = a["lam"]
    nan = np.where(sat, np.nan, 1.0)
    vals = dict(response_time=R * nan, waiting_time=(R - own) * nan,
                response_time_s=R / a["clock_hz"] * nan, throughput=lam * nan,
                utilization=np.minimum(busy / a["avail"], 1.0) * nan, busy_processors=busy * nan,
                mean_in_system=lam * R * nan, conflict_probability=conf * nan,
                available_processors=a["avail"])
    sat_v: Any = bool(sat) if np.ndim(sat) == 0 else np.asarray(sat)
    bott_v: Any = str(bott) if np.ndim(bott) == 0 else np.asarray(bott, dtype=object)
    return PDQResult(discipline="spinlock", saturated=sat_v, bottleneck=bott_v,
                     method="spin decomposition",
                     **{n: scalar_or_array(np.asarray(v, float)) for n, v in vals.items()})


def _key_concentration(a: Mapping[str, np.ndarray], where: np.ndarray) -> np.ndarray:
    """``sum_i p_i^2`` of the key distribution at the points ``where`` (0 elsewhere)."""
    shape = np.broadcast(a["n_keys"], a["key_skew"], where).shape
    n = np.broadcast_to(a["n_keys"], shape)
    z = np.broadcast_to(a["key_skew"], shape)
    w = np.broadcast_to(where, shape)
    out = np.zeros(shape)
    flat_n, flat_z, flat_out = n.reshape(-1), z.reshape(-1), out.reshape(-1)
    for i in np.flatnonzero(w):
        p = key_probabilities(int(flat_n[i]), float(flat_z[i]))
        flat_out[i] = float(np.dot(p, p))
    return out


def _single_server(a: Mapping[str, np.ndarray], res: PDQResult, discipline: str) -> PDQResult:
    """Exact values where ``k = 1``: one server, an M/G/1 queue (Pollaczek-Khinchine).

    With one processor every discipline is one FCFS server (no key can be
    held by another processor, a sequential handler has nothing to drain);
    its holding time is ``S'`` (``S' + o_lock`` for keyed spin-lock handlers)
    with the variance of the handler alone (``cs2 S^2``, plus the Bernoulli
    interrupt term when multiplexed) -- constant overheads add none.
    """
    one = a["k"] == 1
    if not np.any(one):
        return res
    lam = a["lam"]
    # ordinary holding time b: S (+ o_sched when multiplexed; + o_lock if keyed spin-lock)
    Sp = a["Sp"] - a["p_int"] * a["O_int"]
    fk = a["fk"] if discipline == "spinlock" else np.zeros_like(Sp)
    hold = Sp + (a["o_lock"] if discipline == "spinlock" else 0.0)
    V = a["cs2_S"] * a["S"] ** 2
    m1 = fk * hold + (1.0 - fk) * Sp
    m2 = fk * (hold ** 2 + V) + (1.0 - fk) * (Sp ** 2 + V)
    rho = lam * m1
    sat1 = rho >= 1.0
    rho_ok = np.where(sat1, 0.0, rho)
    # multiplexed: the first handler of a busy period interrupts the compute
    # thread if it is in a burst, probability q = theta (bursts long against
    # handlers); Welch's M/G/1 with exceptional first service
    uc = np.where(a["multiplexed"] > 0, a["compute_utilization"], 0.0)
    q = np.where(uc > 0, uc / np.maximum(uc + (1.0 - uc) * (1.0 - rho_ok), 1e-300), 0.0)
    O_i = a["O_int"]
    d1, d2 = q * O_i, 2.0 * m1 * q * O_i + q * O_i ** 2      # b0 - b, b0_2 - b_2
    P0 = (1.0 - rho_ok) / (1.0 - rho_ok + lam * (m1 + d1))
    Wq = lam * m2 / (2.0 * (1.0 - rho_ok)) + lam * d2 / (2.0 * (1.0 - rho_ok + lam * (m1 + d1)))
    R1 = Wq + m1 + P0 * d1
    m1 = R1 - Wq                                              # mean holding time per handler
    rho = lam * m1
    nan1 = np.where(sat1, np.nan, 1.0)
    new = dict(response_time=R1 * nan1, waiting_time=(R1 - m1) * nan1,
               response_time_s=R1 / a["clock_hz"] * nan1, throughput=lam * nan1,
               utilization=rho * nan1, busy_processors=rho * nan1,
               mean_in_system=lam * R1 * nan1, available_processors=a["avail"])
    vals: dict[str, Any] = {}
    for name, v1 in new.items():
        v0 = np.asarray(getattr(res, name), dtype=float)
        vals[name] = scalar_or_array(np.where(one, v1, v0))
    sat0 = np.asarray(res.saturated, dtype=bool)
    sat = np.where(one, sat1, sat0)
    conflict = np.asarray(res.conflict_probability, dtype=float)
    if discipline == "partitioned":
        # one queue: an arrival waits behind a handler iff the server is busy (PASTA)
        conflict = np.where(one, rho, conflict)
    elif discipline == "spinlock":
        # the key is locked iff the server runs a keyed handler of the same key (PASTA):
        # sum_i p_i * lam fk p_i hold
        conflict = np.where(one, lam * fk * hold * _key_concentration(a, one), conflict)
    vals["conflict_probability"] = scalar_or_array(np.where(one & sat1, np.nan, conflict))
    bott0 = np.asarray(res.bottleneck, dtype=object)
    bott = np.where(one, np.where(sat1, "processors", ""), bott0)
    sat_v: Any = bool(sat) if np.ndim(sat) == 0 else np.asarray(sat)
    bott_v: Any = str(bott) if np.ndim(bott) == 0 else np.asarray(bott, dtype=object)
    method = "M/G/1 (k=1)" if np.all(one) else res.method
    return PDQResult(discipline=res.discipline, saturated=sat_v, bottleneck=bott_v,
                     method=method, **vals)


def _solve_shared(a: Mapping[str, np.ndarray], method: str, n_max: int,
                  max_states: int | None, max_order: int, values: bool = True) -> PDQResult:
    """The shared queue by one method (``auto``: chain, birth-death or keyed, see :func:`solve`;
    ``values=False``: the keyed method's flags only, :func:`_shared_keyed`)."""
    if method == "birth-death":
        return _shared(a)
    if method == "keyed":
        return _shared_keyed(a, values)
    n_max_ = int(check_integer("n_max", n_max, minimum=2))
    if max_states is None:
        max_states = AUTO_MAX_STATES if method == "auto" else CTMC_MAX_STATES
    ms = int(check_integer("max_states", max_states, minimum=1))
    mo = int(check_integer("max_order", max_order, minimum=1))
    return _shared_ctmc(a, n_max=n_max_, max_states=ms, max_order=mo,
                        fallback=method == "auto")


def _at_least(pt: PDQResult, sh: PDQResult, a: Mapping[str, np.ndarray]) -> PDQResult:
    """Partitioning never beats the shared queue: take the larger response time.

    Measured in simulation (``benchmarks/pdq_accuracy.py``: the simulated shared
    queue against an exact sample-path recursion of partitioned queues with
    sequential barriers, 204 and 208 stable points of two designs, never slower
    beyond the simulation's 95% half-width).  The per-queue vacation model of
    partitioning is optimistic with sequential handlers; the shared queue's
    estimate bounds it from below.
    """
    Rp = np.asarray(pt.response_time, float)
    Rs = np.asarray(sh.response_time, float)
    sat = np.asarray(pt.saturated, bool) | np.asarray(sh.saturated, bool)
    R = np.where(sat, np.nan, np.fmax(Rp, Rs))
    bott = np.where(np.asarray(pt.saturated, bool), np.asarray(pt.bottleneck, dtype=object),
                    np.where(sat, np.asarray(sh.bottleneck, dtype=object), ""))
    lifted = ~sat & (Rs > Rp)
    dR = np.where(sat, np.nan, R - Rp)
    nan = np.where(sat, np.nan, 1.0)
    vals = dict(response_time=R, waiting_time=np.asarray(pt.waiting_time, float) + dR,
                response_time_s=R / a["clock_hz"],
                throughput=a["lam"] * nan,
                utilization=np.asarray(pt.utilization, float) * nan,
                busy_processors=np.asarray(pt.busy_processors, float) * nan,
                mean_in_system=a["lam"] * R,
                conflict_probability=np.asarray(pt.conflict_probability, float) * nan,
                available_processors=a["avail"])
    method = pt.method + (" (bounded by the shared queue)" if np.any(lifted) else "")
    sat_v: Any = bool(sat) if np.ndim(sat) == 0 else np.asarray(sat)
    bott_v: Any = str(bott) if np.ndim(bott) == 0 else np.asarray(bott, dtype=object)
    return PDQResult(discipline="partitioned", saturated=sat_v, bottleneck=bott_v, method=method,
                     **{n: scalar_or_array(np.asarray(v, float)) for n, v in vals.items()})


#: solution methods of the shared queue (:func:`solve`)
METHODS = ("birth-death", "keyed", "ctmc", "auto")


def solve(params: PDQParams, discipline: str = "shared", *,
          on_saturation: str = "flag", method: str | None = None, n_max: int = 64,
          max_states: int | None = None, max_order: int = 4) -> PDQResult:
    """Mean response time of protocol handlers under one dispatch discipline.

    Parameters
    ----------
    params : PDQParams
    discipline : {"shared", "partitioned", "spinlock"}
        One parallel dispatch queue (PDQ), static partitioning into ``k``
        queues, or one queue with spin-locks inside the handlers.
    on_saturation : {"flag", "raise"}
        ``"flag"`` (default): saturated points get NaN values,
        ``saturated=True`` and the ``bottleneck`` named; ``"raise"``:
        :class:`mva.errors.SaturationError` naming the bottleneck.
    method : {"auto", "keyed", "ctmc", "birth-death"}
        ``"shared"`` only (the other disciplines have one method each, which
        ``"auto"`` and ``"birth-death"`` name).  ``"auto"`` (default): the exact
        chain where it is cheap -- at most
        :data:`AUTO_MAX_K` processors, a key-aware estimate of at most
        :data:`AUTO_MAX_POPULATION` handlers present and at most
        :data:`AUTO_MAX_STATES` states (about a second per point) -- the
        birth-death method without sequential handlers and with at least
        :data:`AUTO_BD_KEYS_PER_PROCESSOR` effective keys ``1 / sum p_i^2``
        per processor, and the key-aware approximation elsewhere;
        ``result.method`` says which (on a grid the methods used, joined by
        ``"+"``).
        ``"keyed"``: the key-aware approximation (below).  ``"ctmc"``: the
        exact Markov chain of the PDQ (keys in service and waiting in
        arrival order, phase-type handler times); ``ValueError`` where it
        exceeds ``max_states`` or cannot reach a truncation mass below
        :data:`CTMC_TRUNCATION_TOL` within ``n_max`` handlers.
        ``"birth-death"``: the older approximation on the expected number
        of distinct keys (the default before; see Notes).
    n_max, max_states, max_order : int, optional
        Chain only: largest population of the truncated chain, largest
        number of states (default :data:`CTMC_MAX_STATES`, or
        :data:`AUTO_MAX_STATES` for ``"auto"``), largest number of phases of
        the handler-time fit (:func:`mva.phasetype.fit`; ``cs2 <
        1/max_order`` is replaced by the Erlang-``max_order``).

    Returns
    -------
    PDQResult

    Notes
    -----
    *Shared (PDQ).*  A birth-death queue on the number ``n`` of ordinary
    handlers present, served at rate ``min(a, D(n)) / S_eff`` where

    .. math::

        D(n) = n f_{ns} + \\sum_i \\left[1 - (1 - f_k p_i)^n\\right]

    is the expected number of handlers among ``n`` that may run at once
    (distinct keys plus nosync handlers) and ``p_i`` the Zipf key
    popularities.  The most popular key alone must satisfy
    ``lambda f_k p_1 S_eff < 1``.
    *Partitioned.*  Queue ``j`` receives the keys ``i = j (mod k)`` and
    ``1/k`` of the nosync handlers; each is an M/G/1 queue
    (:func:`mva.mg1`) with ``S_eff k / a``.  The response time is at least
    the shared queue's (``method="auto"``): partitioning is never faster
    than one parallel dispatch queue, as measured in simulation (see
    ``docs/models/pdq.rst``), and with sequential handlers the per-queue
    vacation treatment alone is optimistic.
    *Spin-lock.*  Each key's lock is an M/G/1 server (holding
    ``h = S' + o_lock``, utilization ``r_i = lambda f_k p_i h``) whose
    Pollaczek-Khinchine wait ``s_i`` is spent spinning, so an M/M/k pool
    (Erlang C, scaled by ``(1 + c_h^2) / 2`` of the holding times) serves
    keyed handlers for ``h + s_i``; a handler that waited ``W_p`` for a
    processor spins ``s_i exp(-r_i W_p / s_i)`` (the lock's queue ahead was
    served meanwhile), a fixed point in ``W_p``; sequential episodes as in
    the key-aware shared queue, their drain the busiest key's lock as a lane
    and the other handlers in parallel as the mixture of ``S' + o_lock``
    (keyed) and ``S'`` (nosync), or all in parallel and then the pool queue,
    whichever is longer.  Exact for one key without nosync handlers
    (one FCFS server) and equal to the shared queue without keyed handlers.
    Saturated exactly where the decomposition has no steady state: the
    hottest lock (``r_1 >= 1``, ``"lock"``), the processors without spinning
    (``"processors"``) or no clearing time of the sequential episodes below
    the processors' limit (``"sequential"``; monotone in the load).
    *Sequential handlers* (birth-death and partitioned) drain the running handlers
    (expected ``S' H(m)``, ``m`` busy processors, ``H`` the harmonic number)
    and run alone; the pool is treated as unavailable for a fraction
    ``v = lambda f_seq (S' + drain)`` of the time, ``S_eff = S' / (1 - v)``.
    Waiting times carry the factor ``(1 + cs2) / 2`` (spin-lock: of the
    holding-time mixture, whose variance is the handler's alone,
    ``cs2 S'^2``; multiplexed: ``cs2 = cs2_S S^2 / S'^2``).
    *Multiplexed* (``multiplexed=True``): handlers preempt computation, so
    ``a = k``, and ``S' = S + o_sched + p_int O_int`` with the interrupt
    probability ``p_int`` of a Markov chain over the processors' states
    (free, computing, serving; handlers take free processors first, an
    arrival interrupts only when none is free and not all serve; bursts of
    :data:`COMPUTE_BURST_OVER_S` ``S``; see ``_interrupt_probability``);
    the key-aware shared queue charges the interrupt only to the handlers
    dispatched on arrival (nosync, the first of a key's busy period:
    Welch's exceptional first service per key, with the interrupt's
    variance) -- values and stability region alike -- and, with sequential
    handlers, to the batch an episode releases (those of its members that
    can start at once -- the first of each key -- beyond the idle
    processors interrupt computing ones, ``E[min((N - 1 - I)^+, k - 1 -
    I)]``); a sequential handler starts on the processor the drain's last
    handler frees, and pays the interrupt only on arrival at an empty node
    with every processor computing (``theta^k``); the handlers it drains
    are mixtures -- those started on arrival pay ``O_int`` with ``p_int``
    (:func:`_interrupt_shape`), the released batch's members beyond the
    idle processors pay it (:func:`_released_cdf`) -- and the processors'
    capacity check counts only the sequential handler's own time as lost.
    *One processor* (``k = 1``; all but ``method="ctmc"``): exact M/G/1
    (Pollaczek-Khinchine on the holding time's two moments; multiplexed:
    Welch's exceptional first service, the first handler of a busy period
    interrupting with probability ``theta``).
    *Key-aware shared queue* (``method="keyed"``): per-key M/G/1 queues with
    an exceptional first service (the pool wait) over a birth-death pool of
    eligible handlers bounded by the keys present, and sequential episodes
    (the queue ahead -- the handlers running, the key backlogs and the pool
    queue -- empties, then one handler runs alone) that block every later
    arrival.  The episodes are the customers of an M/G/1 queue (every
    arrival waits ``lambda_s E[E^2] / 2 / (1 - v)``, ``v = lambda_s E[E]``,
    and an ordinary one also for the processors behind the batch an episode
    releases onto the ``k`` processors (:func:`_batch_backlog_wait`, the
    spin-lock discipline and multiplexed processors likewise);
    the drain is the later of the
    busiest key's work -- its handlers one after another, the M/G/1 workload
    at the sequential arrival, an exponential time after the last episode
    left it the batch it held back (Takacs' transform, :func:`_lane_workload`),
    or that batch alone after an episode -- and the longest remaining time of
    the other handlers started since the last episode (those arriving since,
    and the batch it held back, taken geometric), with the simulator's
    handler-time family (deterministic, Erlang, exponential, balanced H2); a
    keyed handler arriving between episodes waits for its key's work since
    the last episode (its M/G/1 wait scaled by that workload over the
    stationary one), one held back for its key's handlers held back before
    it, ``lambda_i`` times the held window; exact for one key without nosync handlers
    (with or without sequential ones), for one processor and for no more
    keys than processors; its response (and the spin-lock discipline's) is
    taken no lower than that of the same handlers on ``k`` unrestricted
    processors, M/G/k by Allen-Cunneen (:func:`_mgk_floor`; multiplexed:
    without the interrupts); see ``docs/models/pdq.rst`` for the equations and
    the measured accuracy.  *Exact chain* (``method="ctmc"``): the CTMC of the
    PDQ dispatch rules with phase-type handler times (:mod:`mva.markov`,
    :func:`mva.phasetype.fit`), for small configurations only.

    References
    ----------
    .. [1] Falsafi and Wood 1999, sections 3 (PDQ semantics) and 4.2 (Hurricane-1 Mult).

    Examples
    --------
    >>> prm = PDQParams(k=4, load=0.6, S=100, n_keys=256)
    >>> sh = solve(prm, "shared")
    >>> pt = solve(prm, "partitioned")
    >>> sh.response_time < pt.response_time
    True
    """
    check_choice("on_saturation", on_saturation, ("flag", "raise"))
    asked = "auto" if method is None else method   # the accuracy map's key
    res = _solve(params, discipline, method, n_max, max_states, max_order)
    if on_saturation == "raise" and np.any(res.saturated):
        from mva.errors import SaturationError

        b = np.atleast_1d(np.asarray(res.bottleneck, dtype=object))
        name = next(str(x) for x in b.ravel() if x)
        raise SaturationError(f"pdq {discipline}: saturated at "
                              f"{int(np.count_nonzero(res.saturated))} point(s); bottleneck: "
                              f"{name}", bottleneck=name)
    # the map's variants: the disciplines, and the shared queue on multiplexed processors
    # (partitioned queues on multiplexed processors have no map entry of their own)
    variant = discipline if not params.multiplexed else (
        "multiplexed" if discipline == "shared" else f"{discipline}-multiplexed")
    return _attach_accuracy(with_inputs(res, params), "pdq", variant=variant, method=asked)


def _solve(params: PDQParams, discipline: str, method: str | None, n_max: int = 64,
           max_states: int | None = None, max_order: int = 4,
           values: bool = True) -> PDQResult:
    """:func:`solve`'s result before the accuracy map (``values=False``: see
    :func:`_saturated`)."""
    check_choice("discipline", discipline, DISCIPLINES)
    if method is None:
        method = "auto"
    check_choice("method", method, METHODS)
    if method == "auto" and discipline != "shared":
        method = "birth-death"          # the other disciplines have one method each
    if method != "birth-death" and discipline != "shared":
        raise ValueError(f"method={method!r} applies to discipline='shared' only; got "
                         f"discipline={discipline!r}")
    a = _prepare(params)
    if discipline == "shared":
        res = _solve_shared(a, method, n_max, max_states, max_order, values)
    elif discipline == "partitioned":
        res = _at_least(_partitioned(a),
                        _solve_shared(a, "auto", n_max, max_states, max_order, values), a)
    else:
        res = _spinlock(a)
    if method != "ctmc":           # the chain is exact at k = 1 already
        res = _single_server(a, res, discipline)
    return res


def _saturated(params: PDQParams, discipline: str = "shared",
               method: str | None = None) -> Any:
    """``solve(params, discipline, method=method).saturated``, without what only the values need.

    The saturation bisections of :func:`validation.domain.pdq_saturation_load`
    ask for the flag alone: the key-aware method's multiplexed processors then
    skip the iteration of the released batch's interrupts, which moves the
    values but not the flags (the first fixed point decides them), 5-20
    solves of the key-aware fixed point a point.

    Examples
    --------
    >>> prm = PDQParams(k=8, load=0.5, S=100, n_keys=64, f_sequential=0.1, multiplexed=True,
    ...                 compute_utilization=0.8, O_int=500, o_sched=50)
    >>> bool(_saturated(prm, method="keyed")) == bool(solve(prm, method="keyed").saturated)
    True
    """
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")          # (values not computed are not reported)
        return _solve(params, discipline, method, values=False).saturated


def compare(params: PDQParams) -> PDQComparison:
    """Shared queue, static partitioning and spin-locks on the same parameters.

    Examples
    --------
    >>> c = compare(PDQParams(k=2, load=0.5, S=100, n_keys=64))
    >>> c.partitioned_over_shared > 1
    True
    """
    sh = solve(params, "shared")
    pt = solve(params, "partitioned")
    sp = solve(params, "spinlock")
    R0 = np.asarray(sh.response_time, dtype=float)
    res = PDQComparison(
        shared=sh, partitioned=pt, spinlock=sp,
        partitioned_over_shared=scalar_or_array(np.asarray(pt.response_time, dtype=float) / R0),
        spinlock_over_shared=scalar_or_array(np.asarray(sp.response_time, dtype=float) / R0))
    return with_inputs(res, params)


# ---------------------------------------------------------------------------
# command line
# ---------------------------------------------------------------------------

def equations() -> dict[str, Any]:
    """Key formulas of the PDQ model as SymPy equations (uniform keys, no sequential handlers).

    Returns
    -------
    dict of str to sympy.Eq
        ``"C_n"`` probability that a keyed arrival shares its key with one of
        :math:`n` running handlers (:math:`K` equally likely keys, keyed
        fraction :math:`f_k`); ``"pi_lock"`` probability that a keyed
        handler finds its lock held, the lock's utilization (spin-lock
        discipline, lock holding time :math:`h = S_p + o_l`);
        ``"s_PK"`` the Pollaczek-Khinchine wait of a lock (an M/G/1
        server, the variance the handler's alone, :math:`c_s^2 S_p^2`);
        ``"s_spin"`` the mean spin of a handler that waited :math:`W_p`
        for a processor (the lock's queue ahead was served meanwhile; the
        lock wait exponential given positive); ``"W_p"`` the pool wait,
        the M/M/a wait :math:`W_q` of the processor holding times (keyed
        :math:`h + s_{spin}`, unkeyed :math:`S_p`) scaled by
        :math:`(1 + c_h^2)/2` of those times (the spin's second moment
        :math:`2 s_{PK}^2 + \\lambda_i E[h^3] / (3 (1 - \\pi))`, gamma-shaped
        handler times, thinned like the mean) -- a fixed point in
        :math:`W_p`; ``"R_spin"`` the spin-lock response time;
        ``"lambda_j"`` and
        ``"R_part"`` the arrival rate and M/G/1 (Pollaczek-Khinchine)
        response time of one of :math:`k` partitioned queues (:math:`K`
        a multiple of :math:`k`, :math:`a = k`).

    Notes
    -----
    For skewed keys the code sums the same terms over the key
    probabilities :math:`p_i` (:math:`1/K` here).  These are the
    expressions :func:`solve` evaluates (``tests/models/test_pdq.py``
    lambdifies them and compares).

    References
    ----------
    .. [1] Falsafi and Wood 1999, Sections 3 and 4.

    Examples
    --------
    >>> list(equations())
    ['C_n', 'pi_lock', 's_PK', 's_spin', 'W_p', 'R_spin', 'lambda_j', 'R_part']
    """
    import sympy as sp

    def S(n: str) -> Any:
        return sp.Symbol(n, nonnegative=True)

    n, K, fk, lam, Sp, o_l, a, c2, Wq, k = (
        S(x) for x in ("n", "K", "f_k", "lambda", "S_p", "o_l", "a", "c_s^2", "W_q", "k"))
    Eq = lambda lhs, rhs: sp.Eq(lhs, rhs, evaluate=False)  # noqa: E731
    hold = Sp + o_l
    V = c2 * Sp ** 2                                  # the lock cost is constant
    lam_i = lam * fk / K
    pi = lam_i * hold
    pi_s, spin_s, lam_j = sp.Symbol("pi_lock"), sp.Symbol("s_spin"), sp.Symbol("lambda_j")
    s0, Wp = sp.Symbol("s_PK"), S("W_p")
    Eh3 = o_l ** 3 + 3 * o_l ** 2 * Sp + 3 * o_l * Sp ** 2 * (1 + c2) \
        + Sp ** 3 * (1 + c2) * (1 + 2 * c2)
    keep = sp.exp(-pi_s * Wp / s0)
    spin2 = (2 * s0 ** 2 + lam_i * Eh3 / (3 * (1 - pi_s))) * keep
    m1 = fk * (hold + spin_s) + (1 - fk) * Sp
    m2 = fk * (hold ** 2 + 2 * hold * spin_s + spin2 + V) + (1 - fk) * (1 + c2) * Sp ** 2
    return {
        "C_n": Eq(sp.Symbol("C_n"), 1 - (1 - fk / K) ** n),
        "pi_lock": Eq(pi_s, pi),
        "s_PK": Eq(s0, lam_i * (hold ** 2 + V) / (2 * (1 - pi_s))),
        "s_spin": Eq(spin_s, s0 * keep),
        "W_p": Eq(Wp, Wq * m2 / (2 * m1 ** 2)),
        "R_spin": Eq(sp.Symbol("R_spin"), m1 + Wp),
        "lambda_j": Eq(lam_j, lam / k),
        "R_part": Eq(sp.Symbol("R_part"), Sp + lam_j * Sp ** 2 * (1 + c2) / (2 * (1 - lam_j * Sp))),
    }


def register_cli(subparsers: Any) -> None:
    """Add the ``pdq`` subcommand (kept for compatibility: see :mod:`models.cli.pdq`)."""
    from models.cli.pdq import register

    register(subparsers)
