"""Network descriptions for the MVA solvers, and the traffic equations.

A closed queueing network is described by :class:`ClosedNetwork`: plain
arrays of service demands per class and station, chain populations, think
times, station kinds and server counts.  It can also be built from a
:class:`networkx.DiGraph` (:meth:`ClosedNetwork.from_graph`) whose nodes are
stations with attributes and whose edge weights are routing probabilities;
the visit ratios then come from the traffic equations (:func:`visit_ratios`).

Units
-----
All times (demands, service times, think times) share one time unit chosen
by the caller (the models use processor cycles).  A *demand*
``D[c, k] = V[c, k] * S[c, k]`` is the total service time a class-``c``
customer needs at station ``k`` during one *cycle* of its chain (one pass of
the chain's reference point, where the think time ``Z`` is spent once).
``V`` are visits per cycle and ``S`` the mean service time per visit.

Classes and chains
------------------
A *chain* is a closed population of identical customers; a chain may pass
through several *classes* (phases) during one cycle -- e.g. a thread that
computes (one class) and then has its request handled at another processor
(another class).  All demands are per chain cycle, so the throughput of every
class of a chain equals the chain throughput (cycles per time unit); the
throughput of class ``c`` *at station* ``k`` (visits per time unit) is
``X[c] * V[c, k]``.  By default every class is its own chain.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, Any, Iterable, Mapping, Sequence

import numpy as np

from ._validate import check_choice, check_integer, check_nonnegative, fmt_value

if TYPE_CHECKING:
    from numpy.typing import ArrayLike

__all__ = ["ClosedNetwork", "visit_ratios", "KINDS", "DISCIPLINES"]

#: station kinds understood by the solvers
KINDS = ("queue", "delay", "multi", "ld")

#: scheduling disciplines of ``"queue"`` stations (see :class:`ClosedNetwork`)
DISCIPLINES = ("ps", "fcfs")


def _shape_error(name: str, expected: tuple[int, ...], got: tuple[int, ...],
                 what: str) -> ValueError:
    return ValueError(f"{name} must have shape {expected} ({what}); got shape {got}")


def _vector(name: str, value: Any, n: int, what: str, *, checker: Any = check_nonnegative,
            **kw: Any) -> np.ndarray:
    arr = checker(name, value, **kw)
    if arr.ndim == 0:
        arr = np.full(n, arr.item(), dtype=arr.dtype)
    if arr.shape != (n,):
        raise _shape_error(name, (n,), arr.shape, what)
    return arr


def _names(name: str, value: Any, n: int, default: str, what: str) -> tuple[str, ...]:
    if value is None:
        return tuple(f"{default}{i}" for i in range(n))
    if isinstance(value, str):
        value = (value,)
    out = tuple(str(v) for v in value)
    if len(out) != n:
        raise ValueError(f"{name} must have {n} entries ({what}); got {len(out)}: "
                         f"{fmt_value(list(out))}")
    return out


@dataclass(frozen=True, kw_only=True)
class ClosedNetwork:
    """A closed multi-chain queueing network.

    Parameters
    ----------
    demands : array_like, shape (C, K) or (K,)
        Service demand ``D[c, k] = V[c, k] * S[c, k]`` of class ``c`` at
        station ``k`` per chain cycle (time units); 0 means no visit.  A 1-D
        array is one class.
    populations : int or array_like of int, shape (R,)
        Number of customers of each chain (``>= 0``, at least one ``> 0``).
    think_times : float or array_like, shape (R,), optional
        Think time ``Z`` of each chain per cycle (time units; default 0).
        Equivalent to a delay station visited only by that chain.
    kinds : sequence of str, length K, optional
        Per station: ``"queue"`` (one load-independent server, processor
        sharing or FCFS, see ``disciplines``), ``"delay"`` (infinite
        server: no queueing), ``"multi"`` (``servers[k]`` identical servers,
        exponential) or ``"ld"`` (load-dependent: service-rate multiplier
        ``rates[k][j-1]`` with ``j`` customers present).  Default:
        ``"multi"`` where ``servers > 1``, else ``"queue"``.
    servers : int or array_like of int, shape (K,), optional
        Server count ``m_k`` (used by ``"multi"``; default 1).
    rates : sequence, length K, optional
        Per station ``None`` or a 1-D array ``alpha(j), j = 1..``: rate
        multiplier of an ``"ld"`` station with ``j`` customers present
        (``alpha(j) > 0``; the demand is the one at rate multiplier 1).  A
        shorter array is extended with its last value.  Required exactly for
        the ``"ld"`` stations.
    cs2 : float or array_like, shape (K,), optional
        Squared coefficient of variation of the service time at each station
        (1 exponential, 0 deterministic; default 1).  Used at FCFS
        ``"queue"`` stations by the residual-life correction (see
        :mod:`mva.exact`); processor sharing is insensitive to it.
    visits : array_like, shape (C, K), optional
        Visit ratios ``V`` per chain cycle; needed to obtain per-visit
        service times ``S = D / V`` when they matter (FCFS residual life,
        priorities).  Default: 1 wherever ``D > 0``.
    chains : array_like of int, shape (C,), optional
        Chain index of each class, ``0..R-1``, every chain used at least
        once.  Default ``arange(C)`` (each class its own chain).
    priorities : array_like of int, shape (C,), optional
        Priority of each class (larger is more urgent).  At ``"queue"``
        stations classes of higher priority preempt lower ones
        (preemptive-resume, by the BKT approximation, see
        :mod:`mva.priority`).  Default: all equal (no priorities).
    disciplines : sequence of {"ps", "fcfs"}, length K, optional
        Discipline of each ``"queue"`` station.  ``"ps"`` gives the standard
        MVA residence ``D[c,k] (1 + Q_k)`` (exact for processor sharing and
        for FCFS with class-independent service times); ``"fcfs"`` charges
        each customer found waiting its own class's service time and applies
        the ``cs2`` residual-life correction.  Default: ``"fcfs"`` where
        ``cs2 != 1``, else ``"ps"``.  At ``"multi"`` stations every solver
        uses the processor-sharing multi-server formula; ``"fcfs"`` there with
        class-dependent service times has no product form and issues
        :class:`~mva.errors.NonProductFormWarning` naming the station.
        Ignored at other kinds.
    station_names, class_names : sequence of str, optional
        Labels for results (default ``station0..`` and ``class0..``).

    Notes
    -----
    Validation (``ValueError`` naming the parameter, its value and what is
    allowed) happens at construction.  Use :func:`dataclasses.replace` or
    :meth:`with_populations` to derive variants.

    Examples
    --------
    >>> net = ClosedNetwork(demands=[[1.0, 2.0, 0.5]], populations=[3], think_times=[4.0])
    >>> net.n_classes, net.n_stations, net.n_chains
    (1, 3, 1)
    >>> net.kinds
    ('queue', 'queue', 'queue')
    >>> ClosedNetwork(demands=[[1.0, -2.0]], populations=[1])
    Traceback (most recent call last):
    ...
    ValueError: demands must be finite and >= 0; got -2.0
    """

    # fields that default to None are filled in by __post_init__ (hence the ignores)
    demands: np.ndarray
    populations: np.ndarray
    think_times: np.ndarray = None  # type: ignore[assignment]
    kinds: tuple[str, ...] = None  # type: ignore[assignment]
    servers: np.ndarray = None  # type: ignore[assignment]
    rates: tuple = None  # type: ignore[assignment]
    cs2: np.ndarray = None  # type: ignore[assignment]
    visits: np.ndarray | None = None
    chains: np.ndarray = None  # type: ignore[assignment]
    priorities: np.ndarray | None = None
    disciplines: tuple[str, ...] = None  # type: ignore[assignment]
    station_names: tuple[str, ...] = None  # type: ignore[assignment]
    class_names: tuple[str, ...] = None  # type: ignore[assignment]

    if TYPE_CHECKING:
        # The constructor accepts what ``__post_init__`` converts (array_like,
        # sequences, scalars); the fields above are the converted types.
        def __init__(self, *, demands: ArrayLike, populations: ArrayLike,
                     think_times: ArrayLike | None = None,
                     kinds: str | Sequence[str] | None = None,
                     servers: ArrayLike | None = None,
                     rates: Sequence[ArrayLike | None] | None = None,
                     cs2: ArrayLike | None = None,
                     visits: ArrayLike | None = None,
                     chains: ArrayLike | None = None,
                     priorities: ArrayLike | None = None,
                     disciplines: str | Sequence[str] | None = None,
                     station_names: str | Sequence[str] | None = None,
                     class_names: str | Sequence[str] | None = None) -> None: ...

    def __post_init__(self) -> None:  # noqa: C901 - one validation pass
        put = object.__setattr__
        D = check_nonnegative("demands", self.demands)
        if D.ndim == 1:
            D = D[None, :]
        if D.ndim != 2 or D.shape[0] < 1 or D.shape[1] < 1:
            raise ValueError("demands must be a non-empty (classes, stations) array; got shape "
                             f"{D.shape}")
        C, K = D.shape
        put(self, "demands", D)

        # chains
        if self.chains is None:
            ch = np.arange(C, dtype=np.int64)
        else:
            ch = check_integer("chains", self.chains, minimum=0)
            if ch.ndim == 0:
                ch = np.full(C, int(ch))
            if ch.shape != (C,):
                raise _shape_error("chains", (C,), ch.shape, "one chain index per class")
        R = int(ch.max()) + 1
        missing = sorted(set(range(R)) - set(ch.tolist()))
        if missing:
            raise ValueError(f"chains must use every chain index 0..{R - 1}; got {fmt_value(ch)} "
                             f"(no class in chain {missing[0]})")
        put(self, "chains", ch)

        pop = check_integer("populations", self.populations, minimum=0)
        if pop.ndim == 0:
            pop = pop.reshape(1)
        if pop.shape != (R,):
            raise _shape_error("populations", (R,), pop.shape,
                               f"one population per chain, {R} chain(s)")
        if not (pop > 0).any():
            raise ValueError(f"populations must have at least one chain with a population > 0; "
                             f"got {fmt_value(pop)}")
        put(self, "populations", pop)

        Z = _vector("think_times", 0.0 if self.think_times is None else self.think_times, R,
                    "one think time per chain")
        put(self, "think_times", Z)

        m = _vector("servers", 1 if self.servers is None else self.servers, K,
                    "one server count per station", checker=check_integer, minimum=1)
        put(self, "servers", m)

        if self.kinds is None:
            kinds = tuple("multi" if mk > 1 else "queue" for mk in m)
        else:
            kinds = (self.kinds,) if isinstance(self.kinds, str) else tuple(self.kinds)
            if len(kinds) != K:
                raise ValueError(f"kinds must have {K} entries (one per station); got "
                                 f"{len(kinds)}: {fmt_value(list(kinds))}")
            for k, kd in enumerate(kinds):
                check_choice(f"kinds[{k}]", kd, KINDS)
                if kd == "queue" and m[k] > 1:
                    raise ValueError(f"servers[{k}] must be 1 at a 'queue' station; got "
                                     f"{int(m[k])} (use kind 'multi' for several servers)")
        put(self, "kinds", kinds)

        # load-dependent rates
        if self.rates is None:
            rates: list[Any] = [None] * K
        else:
            rates = list(self.rates)
            if len(rates) != K:
                raise ValueError(f"rates must have {K} entries (None or an array per station); "
                                 f"got {len(rates)}")
        for k in range(K):
            if kinds[k] == "ld":
                if rates[k] is None:
                    raise ValueError(f"rates[{k}] must be a 1-D array of rate multipliers "
                                     f"alpha(1), alpha(2), ... > 0 for the 'ld' station {k}; "
                                     "got None")
                a = check_nonnegative(f"rates[{k}]", rates[k])
                a = np.atleast_1d(a).astype(float)
                if a.ndim != 1 or a.size == 0 or (a <= 0).any():
                    bad = repr(float(a[a <= 0].flat[0])) if (a <= 0).any() else f"shape {a.shape}"
                    raise ValueError(f"rates[{k}] must be a non-empty 1-D array of values > 0; "
                                     f"got {bad}")
                a.setflags(write=False)
                rates[k] = a
            elif rates[k] is not None:
                raise ValueError(f"rates[{k}] must be None unless kinds[{k}] is 'ld'; "
                                 f"kinds[{k}] is {kinds[k]!r}")
        put(self, "rates", tuple(rates))

        cs2 = _vector("cs2", 1.0 if self.cs2 is None else self.cs2, K, "one value per station")
        put(self, "cs2", cs2)

        if self.visits is not None:
            V = check_nonnegative("visits", self.visits)
            if V.ndim == 1 and C == 1:
                V = V[None, :]
            if V.shape != (C, K):
                raise _shape_error("visits", (C, K), V.shape, "classes x stations")
            novisit = (D > 0) & (V <= 0)
            if novisit.any():
                c, k = np.argwhere(novisit)[0]
                raise ValueError(f"visits[{c}, {k}] must be > 0 where demands[{c}, {k}] > 0; "
                                 f"got {float(V[c, k])!r}")
            put(self, "visits", V)

        if self.priorities is not None:
            p = check_integer("priorities", self.priorities)
            if p.ndim == 0:
                p = np.full(C, int(p))
            if p.shape != (C,):
                raise _shape_error("priorities", (C,), p.shape, "one priority per class")
            put(self, "priorities", p)

        if self.disciplines is None:
            disc = tuple("fcfs" if cs2[k] != 1.0 else "ps" for k in range(K))
        else:
            disc = ((self.disciplines,) if isinstance(self.disciplines, str)
                    else tuple(self.disciplines))
            if len(disc) != K:
                raise ValueError(f"disciplines must have {K} entries (one per station); got "
                                 f"{len(disc)}")
            for k, dk in enumerate(disc):
                check_choice(f"disciplines[{k}]", dk, DISCIPLINES)
        put(self, "disciplines", disc)

        put(self, "station_names", _names("station_names", self.station_names, K, "station",
                                          "one per station"))
        put(self, "class_names", _names("class_names", self.class_names, C, "class",
                                        "one per class"))

        # every populated chain must take time to cycle
        chain_work = np.bincount(ch, weights=D.sum(axis=1), minlength=R) + Z
        dead = (pop > 0) & (chain_work <= 0)
        if dead.any():
            r = int(np.argmax(dead))
            raise ValueError(f"chain {r} has population {int(pop[r])} but zero total demand "
                             "and think time; its throughput would be infinite (give it a "
                             "demand or think time > 0)")
        for arr in (D, ch, pop, Z, m, cs2):
            arr.setflags(write=False)
        self._warn_fcfs_multi()

    def _warn_fcfs_multi(self) -> None:
        """Warn about FCFS multi-server stations whose classes differ in service time."""
        S = self.service_times
        V = self.visit_matrix
        for k, (kd, dk) in enumerate(zip(self.kinds, self.disciplines)):
            if kd != "multi" or dk != "fcfs":
                continue
            s = S[V[:, k] > 0, k]
            if s.size and not np.allclose(s, s[0], rtol=1e-12, atol=0.0):
                import warnings

                from .errors import NonProductFormWarning
                warnings.warn(
                    f"station {self.station_names[k]!r} (kinds[{k}]='multi', "
                    f"disciplines[{k}]='fcfs') has class-dependent service times "
                    f"{np.unique(s).tolist()}: a FCFS multi-server station "
                    f"is product form only with equal service times; every solver treats it as "
                    f"processor sharing (an approximation)", NonProductFormWarning, stacklevel=4)

    # ------------------------------------------------------------------
    # sizes and derived arrays
    # ------------------------------------------------------------------
    @property
    def n_classes(self) -> int:
        """Number of classes ``C``."""
        return int(self.demands.shape[0])

    @property
    def n_stations(self) -> int:
        """Number of stations ``K``."""
        return int(self.demands.shape[1])

    @property
    def n_chains(self) -> int:
        """Number of chains ``R``."""
        return int(self.populations.shape[0])

    @property
    def visit_matrix(self) -> np.ndarray:
        """Visit ratios ``V`` (C, K): ``visits`` or 1 wherever the demand is positive."""
        if self.visits is not None:
            return self.visits
        return (self.demands > 0).astype(float)

    @property
    def service_times(self) -> np.ndarray:
        """Per-visit mean service times ``S = D / V`` (C, K); 0 where there is no visit."""
        V = self.visit_matrix
        with np.errstate(divide="ignore", invalid="ignore"):
            return np.where(V > 0, self.demands / np.where(V > 0, V, 1.0), 0.0)

    @property
    def chain_demands(self) -> np.ndarray:
        """Total demand of each chain at each station, shape (R, K)."""
        out = np.zeros((self.n_chains, self.n_stations))
        np.add.at(out, self.chains, self.demands)
        return out

    @property
    def has_priorities(self) -> bool:
        """True when at least two classes have different priorities."""
        return self.priorities is not None and np.unique(self.priorities).size > 1

    # ------------------------------------------------------------------
    # constructors
    # ------------------------------------------------------------------
    @classmethod
    def single_class(cls, demands: Any, population: int, think_time: float = 0.0, *,
                     kinds: Sequence[str] | None = None, servers: Any = None,
                     rates: Sequence[Any] | None = None, cs2: Any = None,
                     visits: Any = None, disciplines: Sequence[str] | None = None,
                     station_names: Sequence[str] | None = None,
                     class_name: str = "class0") -> "ClosedNetwork":
        """One class (one chain) of ``population`` customers.

        Parameters
        ----------
        demands : array_like, shape (K,)
            Service demand per station (time units per cycle).
        population : int
            Number of customers ``N >= 1``.
        think_time : float
            Think time ``Z >= 0``.
        kinds, servers, rates, cs2, visits, disciplines, station_names
            As in :class:`ClosedNetwork` (per station).

        Examples
        --------
        >>> net = ClosedNetwork.single_class([0.2, 0.1], population=10, think_time=1.0,
        ...                                  kinds=["queue", "multi"], servers=[1, 2])
        >>> net.kinds, net.servers.tolist()
        (('queue', 'multi'), [1, 2])
        """
        D = check_nonnegative("demands", demands)
        if D.ndim != 1:
            raise ValueError(f"demands must be 1-D (one demand per station) for a single class; "
                             f"got shape {D.shape}")
        pop = check_integer("population", population, minimum=1)
        if pop.ndim != 0:
            raise ValueError(f"population must be a single integer >= 1; got {fmt_value(pop)}")
        Z = check_nonnegative("think_time", think_time)
        if Z.ndim != 0:
            raise ValueError(f"think_time must be a single number >= 0; got {fmt_value(Z)}")
        kw: dict[str, Any] = dict(
            demands=D[None, :], populations=pop.reshape(1), think_times=Z.reshape(1),
            kinds=None if kinds is None else tuple(kinds), servers=servers, rates=rates,
            cs2=cs2, visits=None if visits is None else np.atleast_2d(visits),
            disciplines=None if disciplines is None else tuple(disciplines),
            station_names=station_names, class_names=(class_name,))
        return cls(**kw)

    def with_populations(self, populations: Any) -> "ClosedNetwork":
        """A copy with other chain populations (validated)."""
        return replace(self, populations=populations)

    @classmethod
    def from_graph(cls, graph: Any, *, populations: Any, think_times: Any = 0.0,
                   reference: Any = None, weight: str = "weight",
                   service: str = "service_time") -> "ClosedNetwork":
        """Build a network from a :class:`networkx.DiGraph`.

        Nodes are stations; edges carry routing probabilities.  The visit
        ratios of each class come from the traffic equations
        ``V = V P`` normalised to ``V[reference] = 1`` (one cycle = one
        visit to the reference station, where the think time is spent), and
        the demands are ``D = V * S``.

        Parameters
        ----------
        graph : networkx.DiGraph
            Node attributes (all optional except the service time):
            ``service_time`` (float, or dict class -> float; 0 / missing
            means the class does not use the station), ``kind``
            (``"queue"``, ``"delay"``, ``"multi"``, ``"ld"``; default
            ``"multi"`` when ``servers > 1`` else ``"queue"``), ``servers``
            (int), ``cs2`` (float), ``rates`` (array, for ``"ld"``),
            ``discipline`` (``"ps"`` / ``"fcfs"``).  Edge attribute
            ``weight``: routing probability from the tail to the head node
            (float, or dict class -> probability); the out-probabilities of
            every visited node must sum to 1.
        populations : int or dict
            Population of the single class, or a dict ``{class name:
            population}`` (one chain per class, routed by its own weights).
        think_times : float or dict
            Think time per class (default 0).
        reference : node, optional
            Reference station (default: the first node).
        weight, service : str
            Names of the edge and node attributes to read.

        Examples
        --------
        >>> import networkx as nx
        >>> G = nx.DiGraph()
        >>> G.add_node("cpu", service_time=0.01)
        >>> G.add_node("disk1", service_time=0.03)
        >>> G.add_node("disk2", service_time=0.02)
        >>> G.add_edge("cpu", "disk1", weight=0.5)
        >>> G.add_edge("cpu", "disk2", weight=0.3)
        >>> G.add_edge("cpu", "cpu", weight=0.2)
        >>> G.add_edge("disk1", "cpu", weight=1.0)
        >>> G.add_edge("disk2", "cpu", weight=1.0)
        >>> net = ClosedNetwork.from_graph(G, populations=5, think_times=1.0)
        >>> net.visits.round(3).tolist()
        [[1.0, 0.5, 0.3]]
        >>> net.demands.round(4).tolist()
        [[0.01, 0.015, 0.006]]
        """
        nodes = list(graph.nodes)
        if not nodes:
            raise ValueError("graph must have at least one node (station); got an empty graph")
        K = len(nodes)
        index = {n: i for i, n in enumerate(nodes)}
        ref = nodes[0] if reference is None else reference
        if ref not in index:
            raise ValueError(f"reference must be a node of the graph; got {ref!r} "
                             f"(nodes: {nodes[:6]})")
        if isinstance(populations, Mapping):
            class_names = [str(c) for c in populations]
            class_keys = list(populations)
            pops = [populations[c] for c in class_keys]
        else:
            class_keys = [None]
            class_names = ["class0"]
            pops = [populations]
        C = len(class_keys)
        if isinstance(think_times, Mapping):
            Z = [think_times.get(c, 0.0) for c in class_keys]
        else:
            Z = [think_times] * C

        def per_class(value: Any, key: Any, default: float) -> float:
            if isinstance(value, Mapping):
                return value.get(key, default) if key is not None else default
            return default if value is None else value

        S = np.zeros((C, K))
        V = np.zeros((C, K))
        for c, key in enumerate(class_keys):
            Pm = np.zeros((K, K))
            for u, v, data in graph.edges(data=True):
                Pm[index[u], index[v]] = per_class(data.get(weight, 1.0), key, 0.0)
            for n in nodes:
                S[c, index[n]] = per_class(graph.nodes[n].get(service, 0.0), key, 0.0)
            # stations reachable from the reference in this class's routing
            reach = _reachable(Pm, index[ref])
            sub = np.array(sorted(reach))
            Vc = visit_ratios(Pm[np.ix_(sub, sub)], reference=int(np.searchsorted(sub, index[ref])),
                              names=[nodes[i] for i in sub])
            V[c, sub] = Vc
        S = check_nonnegative(f"graph node attribute {service!r}", S)
        D = V * S
        kinds, servers, cs2, rates, disc = [], [], [], [], []
        for n in nodes:
            a = graph.nodes[n]
            m = int(a.get("servers", 1))
            kinds.append(a.get("kind", "multi" if m > 1 else "queue"))
            servers.append(m)
            cs2.append(a.get("cs2", 1.0))
            rates.append(a.get("rates"))
            disc.append(a.get("discipline", "fcfs" if a.get("cs2", 1.0) != 1.0 else "ps"))
        kw: dict[str, Any] = dict(
            demands=D, populations=pops, think_times=Z, kinds=tuple(kinds), servers=servers,
            rates=tuple(rates), cs2=cs2, visits=np.where(D > 0, V, 0.0),
            disciplines=tuple(disc), station_names=tuple(str(n) for n in nodes),
            class_names=tuple(class_names))
        return cls(**kw)


def _reachable(P: np.ndarray, start: int) -> set[int]:
    seen = {start}
    stack = [start]
    while stack:
        u = stack.pop()
        for v in np.nonzero(P[u] > 0)[0].tolist():
            if v not in seen:
                seen.add(v)
                stack.append(v)
    return seen


def visit_ratios(routing: Any, *, arrivals: Any = None, reference: int = 0,
                 names: Iterable[Any] | None = None, tol: float = 1e-9) -> np.ndarray:
    """Solve the traffic equations for visit ratios.

    Parameters
    ----------
    routing : array_like, shape (K, K)
        Routing matrix: ``P[i, j]`` is the probability that a customer
        leaving station ``i`` goes next to station ``j``.  For a closed
        network every row sums to 1; for an open network a row may sum to
        less than 1, the deficit being the probability of leaving the network.
        (For class switching, index the rows by (class, station) pairs.)
    arrivals : array_like, shape (K,), optional
        Open network: external arrival rate (or probability) at each station.
        When given, the open equations ``V = a + V P`` are solved.  When
        omitted, the closed equations ``V = V P`` with ``V[reference] = 1``.
    reference : int
        Closed network: the station whose visit ratio is 1.
    names : iterable, optional
        Station labels used in error messages.
    tol : float
        Tolerance for the row-sum checks.

    Returns
    -------
    numpy.ndarray, shape (K,)
        Visit ratios (closed: visits per visit to the reference station;
        open: visits per unit of ``arrivals``, i.e. station throughputs when
        ``arrivals`` are rates).

    Notes
    -----
    Closed: ``V (I - P) = 0``, ``V_ref = 1`` -- solved by replacing the
    reference column of ``I - P`` by the unit vector, which is non-singular
    when every station is reachable from the reference and back (one
    recurrent class).  Open: ``V (I - P) = a``, non-singular when every
    customer eventually leaves.

    Examples
    --------
    Central server: CPU -> disk1 (0.5), disk2 (0.3), back to CPU (0.2):

    >>> P = [[0.2, 0.5, 0.3], [1, 0, 0], [1, 0, 0]]
    >>> visit_ratios(P).tolist()
    [1.0, 0.5, 0.3]

    Open tandem with feedback: arrivals at station 0, 10% return from 1 to 0:

    >>> visit_ratios([[0, 1.0], [0.1, 0]], arrivals=[1.0, 0.0]).round(6).tolist()
    [1.111111, 1.111111]
    """
    P = check_nonnegative("routing", routing)
    if P.ndim != 2 or P.shape[0] != P.shape[1] or P.shape[0] == 0:
        raise ValueError("routing must be a square (K, K) matrix of probabilities; got shape "
                         f"{P.shape}")
    K = P.shape[0]
    label = list(names) if names is not None else list(range(K))
    rows = P.sum(axis=1)
    if (rows > 1 + tol).any():
        i = int(np.argmax(rows))
        raise ValueError(f"routing row {label[i]!r} must sum to <= 1; got {float(rows[i]):.6g}")
    A = np.eye(K) - P
    if arrivals is None:
        ref = int(check_integer("reference", reference, minimum=0, maximum=K - 1))
        short = np.abs(rows - 1) > tol
        if short.any():
            i = int(np.argmax(short))
            raise ValueError(f"routing row {label[i]!r} must sum to 1 in a closed network; "
                             f"got {float(rows[i]):.6g}")
        A = A.copy()
        A[:, ref] = 0.0
        A[ref, ref] = 1.0
        b = np.zeros(K)
        b[ref] = 1.0
    else:
        b = check_nonnegative("arrivals", arrivals)
        if b.shape != (K,):
            raise _shape_error("arrivals", (K,), b.shape, "one external arrival rate per station")
    try:
        V = np.linalg.solve(A.T, b)
    except np.linalg.LinAlgError:
        what = ("every station must be reachable from the reference station and back"
                if arrivals is None else "every customer must eventually leave the network")
        raise ValueError(f"routing gives singular traffic equations: {what}") from None
    if not np.all(np.isfinite(V)) or (V < -1e-9).any():
        raise ValueError("routing gives traffic equations without a non-negative solution; "
                         "check that the routing is connected")
    V = np.maximum(V, 0.0)
    return V
