r"""Open queues and open networks.

Single queues (vectorised: every argument broadcasts, scalars in give
scalars out):

* :func:`mm1` -- M/M/1: ``R = S / (1 - rho)``.
* :func:`mmc` -- M/M/c: Erlang's C formula for the probability of waiting,
  ``W = C(c, a) S / (c (1 - rho))`` with offered load ``a = lambda S`` and
  ``rho = a / c``.
* :func:`mg1` -- M/G/1: Pollaczek-Khinchine,
  ``W = rho S (1 + cs2) / (2 (1 - rho))``.

Open networks (:class:`OpenNetwork`, :func:`solve_open`): Poisson arrivals
per class, visit ratios from the traffic equations
(:func:`mva.network.visit_ratios`; several classes with class switching by
:meth:`OpenNetwork.from_class_routing`), each station solved as an
independent queue (Jackson / BCMP product form; approximations where
noted).

A utilization ``rho >= 1`` raises :class:`~mva.errors.SaturationError`
(the offending value and, for networks, the bottleneck station named), never
an infinite or negative time.

References
----------
L. Kleinrock, *Queueing Systems, Volume 1: Theory*, Wiley, 1975 (M/M/1,
M/M/c, M/G/1).  Lazowska et al., *Quantitative System Performance*, 1984,
chapter 6 (open networks).
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any

import numpy as np

from ._validate import (check_choice, check_integer, check_nonnegative, check_positive, fmt_value,
                        scalar_or_array)
from .errors import SaturationError
from .network import visit_ratios
from .results import plain_dict

__all__ = ["OpenQueueResult", "mm1", "mmc", "mg1", "mg1_wait", "erlang_c", "OpenNetwork",
           "OpenNetworkResult", "solve_open"]


@dataclass(frozen=True, kw_only=True)
class OpenQueueResult:
    """Mean measures of a single open queue (scalars or broadcast arrays).

    Attributes
    ----------
    model : str
        ``"M/M/1"``, ``"M/M/c"`` or ``"M/G/1"``.
    throughput : float or numpy.ndarray
        Arrival rate = departure rate ``lambda``.
    utilization : float or numpy.ndarray
        Per-server utilization ``rho = lambda S / c``.
    queue_length : float or numpy.ndarray
        Mean number in the system ``L = lambda R``.
    response_time : float or numpy.ndarray
        Mean time in the system ``R = W + S``.
    waiting_time : float or numpy.ndarray
        Mean time in the queue before service ``W``.
    waiting_queue_length : float or numpy.ndarray
        Mean number waiting ``Lq = lambda W``.
    prob_wait : float or numpy.ndarray
        Probability that an arrival waits (``rho`` for one server, Erlang C
        for ``c`` servers).
    """

    model: str
    throughput: Any
    utilization: Any
    queue_length: Any
    response_time: Any
    waiting_time: Any
    waiting_queue_length: Any
    prob_wait: Any

    def to_dict(self) -> dict[str, Any]:
        """Plain dictionary (arrays as lists)."""
        return plain_dict(self)

    def to_frame(self) -> Any:
        """:class:`pandas.DataFrame` with one row per (broadcast) point."""
        import pandas as pd
        cols = {f.name: np.atleast_1d(getattr(self, f.name)) for f in fields(self)
                if f.name != "model"}
        n = max(v.size for v in cols.values())
        return pd.DataFrame({k: np.broadcast_to(v.ravel(), (n,)) if v.size in (1, n) else v.ravel()
                             for k, v in cols.items()})


def _saturated(model: str, rho: np.ndarray) -> None:
    bad = ~(rho < 1.0)
    if bad.any():
        worst = float(np.max(rho[bad])) if rho.ndim else float(rho)
        raise SaturationError(
            f"{model}: utilization rho must be < 1 for a stable queue; got {worst!r} "
            f"(arrival rate x service time / servers)", bottleneck=model, utilization=worst)


def _result(model: str, lam: np.ndarray, rho: np.ndarray, S: np.ndarray, W: np.ndarray,
            pw: np.ndarray) -> OpenQueueResult:
    R = W + S
    return OpenQueueResult(model=model, throughput=scalar_or_array(lam),
                           utilization=scalar_or_array(rho),
                           queue_length=scalar_or_array(lam * R), response_time=scalar_or_array(R),
                           waiting_time=scalar_or_array(W),
                           waiting_queue_length=scalar_or_array(lam * W),
                           prob_wait=scalar_or_array(pw))


def mm1(arrival_rate: Any, service_time: Any) -> OpenQueueResult:
    """M/M/1 queue.

    Parameters
    ----------
    arrival_rate : float or array_like
        Poisson arrival rate ``lambda >= 0`` (per time unit).
    service_time : float or array_like
        Mean exponential service time ``S > 0`` (time units).

    Returns
    -------
    OpenQueueResult

    Raises
    ------
    SaturationError
        If ``rho = lambda S >= 1``.

    Notes
    -----
    ``rho = lambda S``, ``R = S / (1 - rho)``, ``L = rho / (1 - rho)``,
    ``W = rho S / (1 - rho)``, ``Lq = rho^2 / (1 - rho)``.

    References
    ----------
    Kleinrock (1975), section 3.2.

    Examples
    --------
    >>> r = mm1(0.5, 1.0)
    >>> r.response_time, r.queue_length, r.waiting_time
    (2.0, 1.0, 1.0)
    >>> mm1([0.1, 0.5, 0.9], 1.0).queue_length.round(4).tolist()
    [0.1111, 1.0, 9.0]
    """
    lam = check_nonnegative("arrival_rate", arrival_rate)
    S = check_positive("service_time", service_time)
    lam, S = np.broadcast_arrays(lam, S)
    rho = lam * S
    _saturated("M/M/1", rho)
    W = rho * S / (1.0 - rho)
    return _result("M/M/1", lam, rho, S, W, rho)


def erlang_c(servers: Any, offered_load: Any) -> Any:
    """Erlang's C formula: probability that an M/M/c arrival has to wait.

    Parameters
    ----------
    servers : int or array_like of int
        ``c >= 1``.
    offered_load : float or array_like
        ``a = lambda S`` in Erlangs, ``0 <= a < c``.

    Notes
    -----
    Computed through Erlang B, ``B(0) = 1``, ``B(j) = a B(j-1) / (j + a B(j-1))``
    (numerically stable for large ``c``), then
    ``C = B / (1 - (a/c)(1 - B))``.

    Examples
    --------
    >>> round(erlang_c(2, 1.0), 6)   # two servers at rho = 0.5
    0.333333
    """
    c = check_integer("servers", servers, minimum=1)
    a = check_nonnegative("offered_load", offered_load)
    c, a = np.broadcast_arrays(c, a)
    _saturated("M/M/c", a / c)
    B = np.ones(a.shape)
    out = np.zeros(a.shape)
    for j in range(1, int(c.max()) + 1):
        B = a * B / (j + a * B)
        out = np.where(c == j, B, out)
    C = out / (1.0 - (a / c) * (1.0 - out))
    return scalar_or_array(C)


def mmc(arrival_rate: Any, service_time: Any, servers: Any) -> OpenQueueResult:
    """M/M/c queue (Erlang C).

    Parameters
    ----------
    arrival_rate : float or array_like
        Poisson arrival rate ``lambda >= 0``.
    service_time : float or array_like
        Mean exponential service time ``S > 0`` of one server.
    servers : int or array_like of int
        Number of servers ``c >= 1``.

    Returns
    -------
    OpenQueueResult
        ``utilization`` is per server, ``rho = lambda S / c``.

    Raises
    ------
    SaturationError
        If ``rho >= 1``.

    Notes
    -----
    ``a = lambda S``, ``rho = a / c``, ``P(wait) = C(c, a)`` (Erlang C),
    ``W = C(c, a) S / (c (1 - rho))``, ``R = W + S``, ``L = lambda R``.

    References
    ----------
    Kleinrock (1975), section 3.5.

    Examples
    --------
    >>> r = mmc(1.0, 1.0, 2)          # a = 1 Erlang on two servers
    >>> round(r.prob_wait, 6), round(r.waiting_time, 6), round(r.queue_length, 6)
    (0.333333, 0.333333, 1.333333)
    >>> mmc(0.5, 1.0, 1).response_time == mm1(0.5, 1.0).response_time
    True
    """
    lam = check_nonnegative("arrival_rate", arrival_rate)
    S = check_positive("service_time", service_time)
    c = check_integer("servers", servers, minimum=1)
    lam, S, c = np.broadcast_arrays(lam, S, c)
    a = lam * S
    rho = a / c
    _saturated("M/M/c", rho)
    C = np.asarray(erlang_c(c, a), dtype=float)
    W = C * S / (c * (1.0 - rho))
    return _result("M/M/c", lam, rho, S, W, C)


def mg1(arrival_rate: Any, service_time: Any, cs2: Any = 1.0) -> OpenQueueResult:
    """M/G/1 queue (Pollaczek-Khinchine mean value formula).

    Parameters
    ----------
    arrival_rate : float or array_like
        Poisson arrival rate ``lambda >= 0``.
    service_time : float or array_like
        Mean service time ``S > 0``.
    cs2 : float or array_like
        Squared coefficient of variation of the service time (1 exponential,
        0 deterministic).

    Returns
    -------
    OpenQueueResult

    Raises
    ------
    SaturationError
        If ``rho = lambda S >= 1``.

    Notes
    -----
    ``W = lambda E[S^2] / (2 (1 - rho)) = rho S (1 + cs2) / (2 (1 - rho))``;
    ``cs2 = 1`` gives M/M/1 and ``cs2 = 0`` M/D/1 (half the waiting).

    References
    ----------
    Kleinrock (1975), section 5.6.

    Examples
    --------
    >>> mg1(0.5, 1.0, 0.0).waiting_time      # M/D/1
    0.5
    >>> mg1(0.5, 1.0, 1.0).waiting_time == mm1(0.5, 1.0).waiting_time
    True
    """
    lam = check_nonnegative("arrival_rate", arrival_rate)
    S = check_positive("service_time", service_time)
    c2 = check_nonnegative("cs2", cs2)
    lam, S, c2 = np.broadcast_arrays(lam, S, c2)
    rho = lam * S
    _saturated("M/G/1", rho)
    W = rho * S * (1.0 + c2) / (2.0 * (1.0 - rho))
    return _result("M/G/1", lam, rho, S, W, rho)


def mg1_wait(arrival_rate: Any, service_time: Any, cs2: Any = 1.0) -> np.ndarray:
    """M/G/1 mean waiting time over a grid that may contain saturated points.

    For models that evaluate many points at once and flag saturation in their
    own results (naming the bottleneck): the waiting time of :func:`mg1`
    where ``rho = lambda S < 1``, ``NaN`` where ``rho >= 1``, and ``0`` where
    there is no traffic or no service time.  Use :func:`mg1` when a saturated
    queue should raise.

    Parameters
    ----------
    arrival_rate, service_time, cs2 : float or array_like
        As for :func:`mg1`, except that ``service_time`` may be 0.

    Returns
    -------
    numpy.ndarray
        Mean waiting time (time units), broadcast shape of the inputs.

    Notes
    -----
    ``W = rho S (1 + cs2) / (2 (1 - rho))`` (Pollaczek-Khinchine).

    Examples
    --------
    >>> mg1_wait([0.5, 1.5, 0.0], 1.0, 0.0).tolist()
    [0.5, nan, 0.0]
    """
    lam = check_nonnegative("arrival_rate", arrival_rate)
    S = check_nonnegative("service_time", service_time)
    c2 = check_nonnegative("cs2", cs2)
    lam, S, c2 = np.broadcast_arrays(lam, S, c2)
    rho = lam * S
    ok = rho < 1.0
    busy = ok & (S > 0) & (lam > 0)
    W = np.asarray(mg1(np.where(busy, lam, 0.0), np.where(busy, S, 1.0),
                       np.where(busy, c2, 0.0)).waiting_time, dtype=float)
    return np.where(ok, np.where(busy, W, 0.0), np.nan)


# ----------------------------------------------------------------------
# open networks
# ----------------------------------------------------------------------
_OPEN_KINDS = ("queue", "delay", "multi")


@dataclass(frozen=True, kw_only=True)
class OpenNetwork:
    """An open multi-class queueing network.

    Parameters
    ----------
    arrival_rates : array_like, shape (C,)
        External Poisson arrival rate of each class (jobs per time unit).
    demands : array_like, shape (C, K) or (K,)
        Total service demand ``D = V S`` of one job of each class at each
        station (time units).
    kinds : sequence of {"queue", "delay", "multi"}, optional
        Default ``"multi"`` where ``servers > 1`` else ``"queue"``.
    servers : int or array_like of int, shape (K,), optional
    cs2 : float or array_like, shape (K,), optional
        Service-time squared coefficient of variation (FCFS; default 1).
    visits : array_like, shape (C, K), optional
        Visits per job (default 1 where the demand is positive); gives the
        per-visit service time ``S = D / V`` used by the FCFS formulas.
    disciplines : sequence of {"ps", "fcfs"}, optional
        Default ``"fcfs"`` where ``cs2 != 1`` else ``"ps"``.
    station_names, class_names : sequence of str, optional

    Examples
    --------
    >>> net = OpenNetwork(arrival_rates=[0.5], demands=[[1.0, 0.8]])
    >>> solve_open(net).response_time.round(4).tolist()   # 1/(1-0.5) + 0.8/(1-0.4)
    [3.3333]
    """

    # fields that default to None are filled in by __post_init__ (hence the ignores)
    arrival_rates: np.ndarray
    demands: np.ndarray
    kinds: tuple[str, ...] = None  # type: ignore[assignment]
    servers: np.ndarray = None  # type: ignore[assignment]
    cs2: np.ndarray = None  # type: ignore[assignment]
    visits: np.ndarray = None  # type: ignore[assignment]
    disciplines: tuple[str, ...] = None  # type: ignore[assignment]
    station_names: tuple[str, ...] = None  # type: ignore[assignment]
    class_names: tuple[str, ...] = None  # type: ignore[assignment]

    def __post_init__(self) -> None:
        put = object.__setattr__
        D = check_nonnegative("demands", self.demands)
        if D.ndim == 1:
            D = D[None, :]
        if D.ndim != 2 or 0 in D.shape:
            raise ValueError("demands must be a non-empty (classes, stations) array; got shape "
                             f"{D.shape}")
        C, K = D.shape
        lam = check_nonnegative("arrival_rates", self.arrival_rates)
        if lam.ndim == 0:
            lam = lam.reshape(1)
        if lam.shape != (C,):
            raise ValueError(f"arrival_rates must have shape {(C,)} (one per class); got shape "
                             f"{lam.shape}")
        m = check_integer("servers", 1 if self.servers is None else self.servers, minimum=1)
        m = np.broadcast_to(m, (K,)).copy() if m.ndim == 0 else m
        if m.shape != (K,):
            raise ValueError(f"servers must have shape {(K,)} (one per station); got shape "
                             f"{m.shape}")
        kinds = (tuple("multi" if mk > 1 else "queue" for mk in m) if self.kinds is None
                 else tuple([self.kinds] if isinstance(self.kinds, str) else self.kinds))
        if len(kinds) != K:
            raise ValueError(f"kinds must have {K} entries (one per station); got {len(kinds)}")
        for k, kd in enumerate(kinds):
            check_choice(f"kinds[{k}]", kd, _OPEN_KINDS)
            if kd == "queue" and m[k] > 1:
                raise ValueError(f"servers[{k}] must be 1 at a 'queue' station; got {int(m[k])} "
                                 f"(use kind 'multi')")
        c2 = check_nonnegative("cs2", 1.0 if self.cs2 is None else self.cs2)
        c2 = np.broadcast_to(c2, (K,)).copy() if c2.ndim == 0 else c2
        if c2.shape != (K,):
            raise ValueError(f"cs2 must have shape {(K,)} (one per station); got shape {c2.shape}")
        if self.visits is None:
            V = (D > 0).astype(float)
        else:
            V = check_nonnegative("visits", self.visits)
            V = V[None, :] if V.ndim == 1 else V
            if V.shape != (C, K):
                raise ValueError(f"visits must have shape {(C, K)}; got shape {V.shape}")
            if ((D > 0) & (V <= 0)).any():
                c, k = np.argwhere((D > 0) & (V <= 0))[0]
                raise ValueError(f"visits[{c}, {k}] must be > 0 where demands[{c}, {k}] > 0; "
                                 f"got {float(V[c, k])!r}")
        disc = (tuple("fcfs" if c2[k] != 1 else "ps" for k in range(K)) if self.disciplines is None
                else tuple(self.disciplines))
        if len(disc) != K:
            raise ValueError(f"disciplines must have {K} entries; got {len(disc)}")
        for k, d in enumerate(disc):
            check_choice(f"disciplines[{k}]", d, ("ps", "fcfs"))
        sn = tuple(self.station_names) if self.station_names is not None else tuple(
            f"station{k}" for k in range(K))
        cn = tuple(self.class_names) if self.class_names is not None else tuple(
            f"class{c}" for c in range(C))
        if len(sn) != K:
            raise ValueError(f"station_names must have {K} entries; got {len(sn)}")
        if len(cn) != C:
            raise ValueError(f"class_names must have {C} entries; got {len(cn)}")
        for name, val in (("demands", D), ("arrival_rates", lam), ("servers", m), ("kinds", kinds),
                          ("cs2", c2), ("visits", V), ("disciplines", disc), ("station_names", sn),
                          ("class_names", cn)):
            put(self, name, val)

    @classmethod
    def from_routing(cls, routing: Any, arrivals: Any, service_times: Any,
                     **kw: Any) -> "OpenNetwork":
        """One class: visit ratios from the traffic equations ``V = a + V P``.

        Parameters
        ----------
        routing : array_like, shape (K, K)
            ``P[i, j]``: probability of going from ``i`` to ``j``; row deficit
            = probability of leaving.
        arrivals : array_like, shape (K,)
            External arrival rate at each station.
        service_times : array_like, shape (K,)
            Mean service time per visit.
        **kw
            Other :class:`OpenNetwork` fields (kinds, servers, cs2, ...).

        Examples
        --------
        >>> net = OpenNetwork.from_routing([[0, 1.0], [0.1, 0]], [1.0, 0.0], [0.3, 0.5])
        >>> net.arrival_rates.tolist(), net.visits.round(4).tolist()
        ([1.0], [[1.1111, 1.1111]])
        """
        a = check_nonnegative("arrivals", arrivals)
        total = float(a.sum())
        if total <= 0:
            raise ValueError(f"arrivals must have a positive total rate; got {fmt_value(a)}")
        V = visit_ratios(routing, arrivals=a / total)
        S = check_nonnegative("service_times", service_times)
        if S.shape != V.shape:
            raise ValueError(f"service_times must have shape {V.shape} (one per station); "
                             f"got shape {S.shape}")
        return cls(arrival_rates=np.array([total]), demands=(V * S)[None, :], visits=V[None, :],
                   **kw)

    @classmethod
    def from_class_routing(cls, routing: Any, arrivals: Any, service_times: Any,
                           **kw: Any) -> "OpenNetwork":
        r"""Several classes with class switching, from a routing matrix over (class, station).

        Parameters
        ----------
        routing : array_like, shape (C, K, C, K) or (C K, C K)
            ``P[c, i, d, j]``: probability that a class-``c`` job leaving
            station ``i`` goes to station ``j`` as class ``d`` (flat index
            ``c K + i``); the row deficit is the probability of leaving.
            LINE's ``P{c, d}`` blocks and Octave's ``qnopen`` ``P(c, i, d, j)``
            have this layout.
        arrivals : array_like, shape (C, K)
            External Poisson arrival rate of class ``c`` at station ``k``.
        service_times : array_like, shape (C, K)
            Mean service time of a class-``c`` visit to station ``k``.
        **kw
            Other :class:`OpenNetwork` fields (kinds, servers, cs2, names).

        Returns
        -------
        OpenNetwork
            One class per class.  Classes joined by switching form a *chain*;
            as for closed networks, every class of a chain gets the chain's
            arrival rate ``Lambda_r`` (the sum of the chain's external
            arrivals) and demands per chain job,
            ``D_ck = lambda_ck S_ck / Lambda_r``, so ``Lambda_r D_ck`` is the
            class's load and the reported response time of class ``c`` is
            its time per chain job.

        Notes
        -----
        The traffic equations over the ``C K`` (class, station) pairs,

        .. math::

            \lambda_{dj} = a_{dj} + \sum_{c, i} \lambda_{ci}\, P_{ci, dj},

        are solved as ``lambda (I - P) = a`` (:func:`mva.network.visit_ratios`);
        ``V_ck = lambda_ck / Lambda_r`` are the visits per chain job.

        References
        ----------
        F. Baskett, K. M. Chandy, R. R. Muntz, F. G. Palacios, "Open, closed,
        and mixed networks of queues with different classes of customers",
        J. ACM 22(2), 1975 (class switching); Bolch et al. (2006), section
        7.3.6.

        Examples
        --------
        Class 0 arrives at station 0, then moves to station 1 as class 1
        and leaves:

        >>> P = np.zeros((2, 2, 2, 2))
        >>> P[0, 0, 1, 1] = 1.0
        >>> net = OpenNetwork.from_class_routing(P, [[1.0, 0.0], [0.0, 0.0]],
        ...                                      [[0.5, 0.0], [0.0, 0.8]])
        >>> net.arrival_rates.tolist(), net.demands.tolist()
        ([1.0, 1.0], [[0.5, 0.0], [0.0, 0.8]])
        >>> solve_open(net).response_time.round(4).tolist()    # M/M/1 at 0.5 and at 0.8
        [1.0, 4.0]
        """
        S = check_nonnegative("service_times", service_times)
        if S.ndim != 2:
            raise ValueError(f"service_times must have shape (C, K); got shape {S.shape}")
        C, K = S.shape
        a = check_nonnegative("arrivals", arrivals)
        if a.shape != (C, K):
            raise ValueError(f"arrivals must have shape {(C, K)} (class, station); got shape "
                             f"{a.shape}")
        P = check_nonnegative("routing", routing)
        if P.shape == (C, K, C, K):
            P = P.reshape(C * K, C * K)
        if P.shape != (C * K, C * K):
            raise ValueError(f"routing must have shape {(C, K, C, K)} or {(C * K, C * K)}; "
                             f"got shape {P.shape}")
        if a.sum() <= 0:
            raise ValueError(f"arrivals must have a positive total rate; got {fmt_value(a)}")
        names = [f"(class {c}, station {k})" for c in range(C) for k in range(K)]
        lam = visit_ratios(P, arrivals=a.ravel(), names=names).reshape(C, K)
        # chains: classes joined by switching (either direction)
        link = P.reshape(C, K, C, K).sum(axis=(1, 3)) > 0
        chain = list(range(C))

        def find(x: int) -> int:
            while chain[x] != x:
                chain[x] = chain[chain[x]]
                x = chain[x]
            return x
        for c, d in zip(*np.nonzero(link | link.T)):
            chain[find(int(c))] = find(int(d))
        root = np.array([find(c) for c in range(C)])
        ext = a.sum(axis=1)
        Lam = np.array([ext[root == root[c]].sum() for c in range(C)])
        with np.errstate(divide="ignore", invalid="ignore"):
            V = np.where(Lam[:, None] > 0, lam / np.where(Lam[:, None] > 0, Lam[:, None], 1.0), 0.0)
        return cls(arrival_rates=Lam, demands=V * S, visits=V, **kw)

    @classmethod
    def from_graph(cls, graph: Any, *, weight: str = "weight", service: str = "service_time",
                   arrival: str = "arrival_rate") -> "OpenNetwork":
        """One class from a :class:`networkx.DiGraph`.

        Nodes carry ``service_time``, optional ``arrival_rate`` (external
        Poisson arrivals), ``kind``, ``servers``, ``cs2``; edge ``weight`` is
        the routing probability (a node's out-weights sum to at most 1, the
        rest leaves the network).

        Examples
        --------
        >>> import networkx as nx
        >>> G = nx.DiGraph()
        >>> G.add_node("web", service_time=0.01, arrival_rate=25.0)
        >>> G.add_node("db", service_time=0.004)
        >>> G.add_edge("web", "db", weight=0.5)
        >>> G.add_edge("db", "web", weight=1.0)
        >>> solve_open(OpenNetwork.from_graph(G)).utilization.round(3).tolist()
        [[0.5, 0.1]]
        """
        nodes = list(graph.nodes)
        if not nodes:
            raise ValueError("graph must have at least one node (station); got an empty graph")
        index = {n: i for i, n in enumerate(nodes)}
        K = len(nodes)
        P = np.zeros((K, K))
        for u, v, d in graph.edges(data=True):
            P[index[u], index[v]] = d.get(weight, 1.0)
        a = np.array([graph.nodes[n].get(arrival, 0.0) for n in nodes], dtype=float)
        S = np.array([graph.nodes[n].get(service, 0.0) for n in nodes], dtype=float)
        servers = [int(graph.nodes[n].get("servers", 1)) for n in nodes]
        kinds = tuple(graph.nodes[n].get("kind", "multi" if servers[i] > 1 else "queue")
                      for i, n in enumerate(nodes))
        cs2 = [graph.nodes[n].get("cs2", 1.0) for n in nodes]
        return cls.from_routing(P, a, S, kinds=kinds, servers=servers, cs2=cs2,
                                station_names=tuple(str(n) for n in nodes))


@dataclass(frozen=True, kw_only=True)
class OpenNetworkResult:
    """Mean measures of an open network (arrays, classes x stations).

    Attributes
    ----------
    throughput : numpy.ndarray, shape (C,)
        Class throughput (= arrival rate).
    response_time : numpy.ndarray, shape (C,)
        Time in the network per job.
    residence_time, queue_length, utilization : numpy.ndarray, shape (C, K)
        As in :class:`~mva.results.MVAResult` (utilization per server).
    method : str
    """

    throughput: np.ndarray
    response_time: np.ndarray
    residence_time: np.ndarray
    queue_length: np.ndarray
    utilization: np.ndarray
    method: str = "open"
    station_names: tuple[str, ...] = ()
    class_names: tuple[str, ...] = ()

    def to_dict(self) -> dict[str, Any]:
        """Plain dictionary (arrays as lists)."""
        return plain_dict(self)

    def to_frame(self) -> Any:
        """Long-format :class:`pandas.DataFrame`, one row per (class, station)."""
        import pandas as pd
        C, K = self.residence_time.shape
        return pd.DataFrame({
            "class": np.repeat(np.asarray(self.class_names, dtype=object), K),
            "station": np.tile(np.asarray(self.station_names, dtype=object), C),
            "throughput": np.repeat(self.throughput, K),
            "response_time": np.repeat(self.response_time, K),
            "residence_time": self.residence_time.ravel(),
            "queue_length": self.queue_length.ravel(),
            "utilization": self.utilization.ravel()})


def solve_open(network: OpenNetwork) -> OpenNetworkResult:
    r"""Solve an open network station by station.

    Parameters
    ----------
    network : OpenNetwork

    Returns
    -------
    OpenNetworkResult

    Raises
    ------
    SaturationError
        If a queueing station has utilization ``>= 1`` (bottleneck named).

    Notes
    -----
    With ``U_k = sum_c lambda_c D_ck`` (divided by ``m_k`` at multi-server
    stations), per job:

    * delay: ``R_ck = D_ck``;
    * PS queue: ``R_ck = D_ck / (1 - U_k)`` (exact, BCMP);
    * FCFS queue: ``R_ck = D_ck + V_ck W_k`` with the multi-class
      Pollaczek-Khinchine waiting time
      ``W_k = sum_s U_sk S_sk (1 + cs2_k)/2 / (1 - U_k)``;
    * multi (``m`` servers): ``R_ck = D_ck + V_ck W_k`` with the M/M/c
      waiting time ``W_k = C(m, a) Sbar / (m (1 - rho))`` at the offered
      load ``a = sum_c lambda_c D_ck``, the visit-weighted mean service
      time ``Sbar``, times ``(1 + cs2)/2`` (Allen-Cunneen) when ``cs2 != 1``.
      Exact for one class with exponential service.

    Queue lengths follow from Little's law, ``Q = lambda R``.

    References
    ----------
    Lazowska et al. (1984), chapter 6; Kleinrock (1975).

    Examples
    --------
    >>> net = OpenNetwork(arrival_rates=[1.0], demands=[[0.5, 0.8]], servers=[1, 2])
    >>> res = solve_open(net)
    >>> res.residence_time.round(4).tolist()   # M/M/1 then M/M/2 (rho = 0.4)
    [[1.0, 0.9524]]
    """
    if not isinstance(network, OpenNetwork):
        raise ValueError(f"network must be an OpenNetwork; got {type(network).__name__}")
    lam, D, V = network.arrival_rates, network.demands, network.visits
    C, K = D.shape
    with np.errstate(divide="ignore", invalid="ignore"):
        S = np.where(V > 0, D / np.where(V > 0, V, 1.0), 0.0)
    kinds = np.array(network.kinds)
    m = network.servers.astype(float)
    load = lam[:, None] * D                     # (C, K) busy servers per class
    a = load.sum(axis=0)                       # offered load per station
    cap = np.where(kinds == "multi", m, 1.0)
    U_station = a / cap
    for k in range(K):
        if kinds[k] != "delay" and U_station[k] >= 1.0:
            raise SaturationError(
                f"station {network.station_names[k]!r} would need utilization "
                f"{U_station[k]:.6g} >= 1 (offered load {a[k]:.6g} on {int(cap[k])} server(s))",
                bottleneck=network.station_names[k], utilization=float(U_station[k]))
    Rck = D.copy()
    for k in range(K):
        if kinds[k] == "delay" or a[k] == 0:
            continue
        if kinds[k] == "queue":
            if network.disciplines[k] == "ps":
                Rck[:, k] = D[:, k] / (1.0 - U_station[k])
            else:
                W = ((load[:, k] * S[:, k]).sum() * (1.0 + network.cs2[k]) / 2.0
                     / (1.0 - U_station[k]))
                Rck[:, k] = D[:, k] + V[:, k] * W
        else:  # multi
            visits_rate = (lam * V[:, k]).sum()
            Sbar = a[k] / visits_rate
            Cw = float(erlang_c(int(m[k]), a[k]))
            W = Cw * Sbar / (m[k] * (1.0 - U_station[k])) * (1.0 + network.cs2[k]) / 2.0
            Rck[:, k] = D[:, k] + V[:, k] * W
    Q = lam[:, None] * Rck
    return OpenNetworkResult(throughput=lam.copy(), response_time=Rck.sum(axis=1),
                             residence_time=Rck,
                             queue_length=Q, utilization=load / cap, method="open",
                             station_names=network.station_names, class_names=network.class_names)
