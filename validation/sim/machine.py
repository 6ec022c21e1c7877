"""The simulator's own description of a machine: nodes, processors, INIs, latencies.

A :class:`Machine` is a tuple of :class:`NodeSpec` (one per node), a network
latency and, optionally, a grouping of nodes into clusters joined by
intelligent network interfaces (INIs).  It says nothing about the workload;
see :class:`validation.generators.Workload` for that.

The model parameter objects of :mod:`models` are translated into a
``Machine`` (and a ``Workload``) by :func:`validation.sim.builders.machine_from_params`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Callable

from mva._validate import check_integer
from mva.params import param

from .dists import Dist, dist_param, validate_declared

__all__ = ["NodeSpec", "Machine", "INI_DISPATCH", "NODE_DISPATCH"]

#: how messages are spread over the K INIs of a cluster
INI_DISPATCH = ("static", "round_robin", "shared")
#: how a node's protocol queue dispatches handlers
NODE_DISPATCH = ("fifo", "pdq", "spin")

_ZERO = Dist(family="deterministic", mean=0.0)


@dataclass(frozen=True, kw_only=True)
class NodeSpec:
    """One node (an SMP, or a single processor) and its protocol processing.

    Every compute processor runs one thread of the closed population.
    Handlers for messages addressed to the node wait in one queue per node and
    run either on dedicated protocol processors or, when there are none, on
    the compute processors themselves (*multiplexed*).

    Parameters
    ----------
    compute : int
        Compute processors (threads), ``>= 0``.
    protocol : int
        Dedicated protocol processors, ``>= 0``.  ``protocol > 0`` is the
        Fixed policy (k > 1 with ``dispatch="pdq"`` is Hurricane / Hurricane-1);
        ``protocol == 0`` multiplexes handlers onto the compute processors
        (Floating; with ``compute == 1`` Single, and the LoPC processor).
    max_acting : int, optional
        How many processors may run handlers at once.  Default: ``protocol``
        when there are dedicated protocol processors, else 1 (one acting
        protocol processor per node, the Tempest atomicity rule).
    dispatch : {"fifo", "pdq", "spin"}
        ``"fifo"``: handlers start in arrival order.  ``"pdq"``: parallel
        dispatch queue -- the earliest handler whose synchronization key is not
        running starts; ``"sequential"`` waits for all running handlers and runs
        alone; ``"nosync"`` (or no key) can run with anything.  ``"spin"``
        (dedicated protocol processors only): handlers start in arrival order
        on any idle processor and synchronize *after* dispatch -- a keyed
        handler pays ``lock`` to acquire and release its key's spin-lock and,
        while another processor holds the key, busy-waits on its processor
        (the waiters acquire in arrival order); ``"sequential"`` drains and
        runs alone as with ``"pdq"``; ``"nosync"`` takes no lock.
    interrupt : Dist or float
        Interrupt overhead ``O_int`` in cycles, paid by a computing processor
        that is interrupted because every processor is busy (multiplexed only).
    direct : Dist or float
        Direct overhead in cycles, paid each time a compute processor assumes
        the protocol-processor role (multiplexed only).
    indirect : Dist or float
        Indirect overhead in cycles added to every handler run by a compute
        processor (cache pollution, migration; multiplexed only).
    send : Dist or float, optional
        Cost in cycles of a *send* handler run on the requester's own node
        before the request enters the network (the "request" handler of
        Falsafi and Wood).  ``None`` (default): no send handler.
    lock : Dist or float
        Spin-lock acquire and release cost ``o_lock`` in cycles, added to every
        keyed handler (``dispatch="spin"`` only).
    extra_delay : Dist or float
        A pure delay in cycles added to every request of this node's threads
        (occupies no processor), e.g. cache-to-cache transfers between a
        compute and a dedicated protocol processor.  Applied when the request
        leaves the node.

    Examples
    --------
    >>> NodeSpec(compute=3, protocol=1).policy
    'fixed'
    >>> NodeSpec(compute=4, interrupt=200).policy
    'floating'
    >>> NodeSpec(compute=1).policy
    'single'
    """

    compute: int = param(symbol="n_c", meaning="compute processors (threads) of the node",
                         unit="", kind="int", low=0, default=1, cli=False)
    protocol: int = param(symbol="k", meaning="dedicated protocol processors (0: handlers "
                          "multiplexed onto the compute processors)", unit="", kind="int",
                          low=0, default=0, cli=False)
    max_acting: int | None = param(symbol="max_acting", meaning="processors that may run "
                                   "handlers at once (<= the handler servers; None: protocol, "
                                   "else 1)", unit="", kind="int", low=1, optional=True,
                                   default=None, cli=False)
    dispatch: str = param(symbol="dispatch", meaning="handler dispatch of the protocol queue",
                          unit="", kind="choice", choices=NODE_DISPATCH, default="fifo",
                          cli=False)
    interrupt: Any = dist_param(symbol="O_int", meaning="interrupt overhead paid by an "
                                "interrupted computing processor (multiplexed only)")
    direct: Any = dist_param(symbol="o_direct", meaning="direct overhead of a compute processor "
                             "taking the protocol role (multiplexed only)")
    indirect: Any = dist_param(symbol="o_indirect", meaning="indirect overhead added to every "
                               "handler run by a compute processor (multiplexed only)")
    send: Any = dist_param(symbol="o_req", meaning="send handler on the requester's node "
                           "(None: no send handler)", default=None, optional=True)
    extra_delay: Any = dist_param(symbol="t_transfer", meaning="pure delay added to every "
                                  "request leaving the node")
    lock: Any = dist_param(symbol="o_lock", meaning="spin-lock acquire and release cost per "
                           "keyed handler (dispatch='spin' only)")

    def __post_init__(self) -> None:
        v = validate_declared(self, skip=("max_acting",))
        c, p = int(v["compute"]), int(v["protocol"])
        if c + p < 1:
            raise ValueError("a node needs at least one processor; got compute=0 and protocol=0")
        object.__setattr__(self, "compute", c)
        object.__setattr__(self, "protocol", p)
        if self.dispatch == "spin" and p == 0:
            raise ValueError("dispatch='spin' needs dedicated protocol processors (protocol >= 1); "
                             "got protocol=0")
        servers = p if p > 0 else c
        ma = (p if p > 0 else 1) if self.max_acting is None else int(
            check_integer("max_acting", self.max_acting, minimum=1, maximum=servers))
        object.__setattr__(self, "max_acting", ma)

    @property
    def servers(self) -> int:
        """Processors that can run handlers (dedicated ones, else the compute ones)."""
        return self.protocol if self.protocol > 0 else self.compute

    @property
    def dedicated(self) -> bool:
        """True when handlers run only on dedicated protocol processors."""
        return self.protocol > 0

    @property
    def policy(self) -> str:
        """``"fixed"``, ``"floating"`` or ``"single"`` (descriptive)."""
        if self.protocol > 0:
            return "fixed"
        return "single" if self.compute == 1 else "floating"


@dataclass(frozen=True, kw_only=True)
class Machine:
    """A whole machine for the simulator.

    Parameters
    ----------
    nodes : tuple of NodeSpec
        One entry per node.  Threads are numbered over the compute processors
        node by node.
    latency : Dist or float
        Network latency in cycles between nodes (one-level machine), or
        between INIs of different clusters (two-level machine).
    cluster_size : int, optional
        Nodes per cluster; ``None`` (default) is a one-level machine without
        INIs.  Nodes ``[c*cluster_size, (c+1)*cluster_size)`` form cluster ``c``.
    inis : int
        INIs per cluster (``K``; two-level machines only).
    ini_dispatch : {"static", "round_robin", "shared"}
        ``"static"``: node *i* of a cluster always uses INI ``i mod K`` (for
        messages it sends and receives); ``"round_robin"``: each node sends
        its successive outgoing messages through its cluster's INIs in turn
        and receives its successive incoming messages through its cluster's
        INIs in turn (one rotation per node and direction, starting at INI
        ``i mod K``; Jiang 1997, sec. 3.3); ``"shared"``: one FIFO queue per
        cluster served by any idle INI.
    ini_cost : Dist or float
        INI overhead ``O`` per message visit, in cycles.
    ini_cost_of_size : callable, optional
        ``f(size_bytes) -> mean cycles``; when given, each INI service time is
        ``ini_cost`` drawn and rescaled to mean ``f(size)`` (e.g. the thesis's
        Tables 5.1-5.2 with the jump at the 1500-byte MTU).
    intra_latency : Dist or float
        Latency in cycles between a node and its cluster's INIs, and between
        two nodes of the same cluster (two-level machines only).
    name : str
        Free text used in reports.

    Examples
    --------
    >>> m = Machine.homogeneous(16, NodeSpec(compute=1), latency=50)
    >>> m.n_nodes, m.n_threads, m.thread_nodes[:3]
    (16, 16, (0, 1, 2))
    """

    nodes: tuple[NodeSpec, ...] = param(symbol="nodes", meaning="the nodes of the machine",
                                        unit="", kind="object", cli=False,
                                        note="a non-empty sequence of NodeSpec")
    latency: Any = dist_param(symbol="L", meaning="network latency between nodes (between "
                              "clusters on a two-level machine)")
    cluster_size: int | None = param(symbol="N", meaning="nodes per cluster (None: one-level "
                                     "machine without INIs); divides the number of nodes",
                                     unit="", kind="int", low=1, optional=True, default=None,
                                     cli=False)
    inis: int = param(symbol="K", meaning="INIs per cluster (two-level machines only)",
                      unit="", kind="int", low=1, default=1, cli=False)
    ini_dispatch: str = param(symbol="ini_dispatch", meaning="how messages are spread over "
                              "a cluster's INIs", unit="", kind="choice", choices=INI_DISPATCH,
                              default="static", cli=False)
    ini_cost: Any = dist_param(symbol="O", meaning="INI overhead per message visit")
    ini_cost_of_size: Callable[[int], float] | None = param(
        symbol="O(size)", meaning="INI cost as a function of the message size in bytes",
        unit="cycles", kind="object", optional=True, default=None, cli=False,
        note="a callable size_bytes -> mean cycles, or None")
    intra_latency: Any = dist_param(symbol="l", meaning="latency between a node and its "
                                    "cluster's INIs (two-level machines only)")
    name: str = param(symbol="name", meaning="free text used in reports", unit="",
                      kind="text", default="", cli=False)
    _thread_nodes: tuple[int, ...] = field(default=(), repr=False, compare=False)

    def __post_init__(self) -> None:
        nodes = tuple(self.nodes)
        if not nodes or not all(isinstance(n, NodeSpec) for n in nodes):
            raise ValueError(f"nodes must be a non-empty sequence of NodeSpec; got {self.nodes!r}")
        object.__setattr__(self, "nodes", nodes)
        # inis is checked only on two-level machines (as before)
        validate_declared(self, skip=("cluster_size", "inis"))
        if self.cluster_size is not None:
            cs = int(check_integer("cluster_size", self.cluster_size, minimum=1))
            if len(nodes) % cs:
                raise ValueError(f"cluster_size must divide the number of nodes ({len(nodes)}); "
                                 f"got {cs}")
            object.__setattr__(self, "cluster_size", cs)
            object.__setattr__(self, "inis", int(check_integer("inis", self.inis, minimum=1)))
        tn = tuple(i for i, n in enumerate(nodes) for _ in range(n.compute))
        if not tn:
            raise ValueError("the machine has no compute processor (no thread to run)")
        object.__setattr__(self, "_thread_nodes", tn)

    @classmethod
    def homogeneous(cls, n_nodes: int, node: NodeSpec, **kwargs: Any) -> "Machine":
        """``n_nodes`` copies of ``node``; other keywords as for :class:`Machine`."""
        n = int(check_integer("n_nodes", n_nodes, minimum=1))
        return cls(nodes=(node,) * n, **kwargs)

    @property
    def n_nodes(self) -> int:
        """Number of nodes."""
        return len(self.nodes)

    @property
    def n_threads(self) -> int:
        """Number of threads (= compute processors)."""
        return len(self._thread_nodes)

    @property
    def thread_nodes(self) -> tuple[int, ...]:
        """Node of each thread."""
        return self._thread_nodes

    @property
    def n_clusters(self) -> int:
        """Number of clusters (1 for a one-level machine)."""
        return 1 if self.cluster_size is None else self.n_nodes // self.cluster_size

    def cluster_of(self, node: int) -> int:
        """Cluster of ``node`` (0 for a one-level machine)."""
        return 0 if self.cluster_size is None else node // self.cluster_size

    def describe(self) -> str:
        """One-line summary."""
        kinds: dict[str, int] = {}
        for n in self.nodes:
            k = f"{n.policy}(c={n.compute},pp={n.protocol},{n.dispatch})"
            kinds[k] = kinds.get(k, 0) + 1
        parts = [f"{v}x{k}" for k, v in kinds.items()]
        text = (f"{self.name + ': ' if self.name else ''}{' + '.join(parts)}, "
                f"L={self.latency.describe()}")
        if self.cluster_size is not None:
            text += (f", clusters of {self.cluster_size} with {self.inis} INI(s) "
                     f"[{self.ini_dispatch}], O={self.ini_cost.describe()}, "
                     f"l={self.intra_latency.describe()}")
        return text
