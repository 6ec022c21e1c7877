"""The simulated hardware: threads, processors, protocol queues, INIs, network.

:func:`run_machine` runs one simulation of a :class:`~validation.sim.machine.Machine`
whose threads read their records from per-thread iterators, and returns the
raw cumulative counters at a list of *marks* (numbers of completed requests:
the end of the warm-up, the batch boundaries, the end).

How the hardware behaves
------------------------
* A **thread** runs on its own compute processor.  A compute record keeps the
  processor busy for ``cycles``; a request record sends a message and blocks
  the thread until its reply handler has run (a one-way request does not
  block); an idle record (compute-only threads) blocks it for ``cycles``,
  leaving the processor free for handlers.
* Every message addressed to a node waits in the node's **protocol queue**
  (FIFO, or PDQ with synchronization keys).  Handlers run on a dedicated
  protocol processor if the node has any (Fixed), else on a compute
  processor (*multiplexed*: Floating, Single, LoPC): first on an *idle* one --
  a processor whose thread is blocked -- and only when all are busy computing by
  **interrupting** one (round-robin), which pays ``O_int``.  A processor that
  assumes the protocol role pays the direct overhead; every handler on a
  compute processor pays the indirect overhead.  At most ``max_acting``
  processors of a node run handlers at once (1: Tempest atomicity).
* A **spin-lock** node (``dispatch="spin"``, dedicated processors) starts
  handlers in arrival order on any idle processor; a keyed handler pays the
  node's lock cost and, while another processor holds its key, **busy-waits**
  on its processor (the waiters of a key acquire in arrival order when the
  holder finishes).  The spinning time counts as busy and is also counted
  apart (``Snapshot.spin_area``).  Sequential handlers drain and run alone as
  in the PDQ; nosync handlers take no lock.
* Handlers have **preemptive-resume priority** over computation: an
  interrupted burst is suspended for exactly the time the processor spends
  on handlers and then resumes where it stopped.  The processor keeps serving
  the queue while it is non-empty, unless its own thread is runnable and an
  idle processor can take over (then the role migrates).
* A **request** travels to its destination node (latency), runs its request
  handler there, and its reply travels back and runs the reply handler on
  the requester's node, which wakes the thread.  With a ``send`` cost, a send
  handler first runs on the requester's own node.
* In a two-level machine a message between clusters goes node -> (``l``) ->
  INI of the sender's cluster -> (``L``) -> INI of the receiver's cluster ->
  (``l``) -> node; INIs are FIFO servers, chosen statically, round-robin
  (each node rotates its outgoing messages over its cluster's INIs, and its
  incoming ones over its cluster's INIs) or from a shared queue.

Implementation notes
--------------------
A node and a processor (with its thread) are small ``__slots__`` objects
(:class:`_Node`, :class:`_Proc`); a request is one mutable list for its whole
life, holding the node objects it travels between.  The event functions are
closures over the machine, with ``heappush``, the heap and the sequence
counter bound locally, and most return their follow-up event to the kernel
(see :mod:`validation.sim.kernel`): an event costs a tuple, one heap sift and
a few attribute updates, and allocates nothing else but one list per request.
Suspension uses *lazy rescheduling*: a handler started on a computing
processor moves that thread's burst end later by the handler's duration; the
burst's end event, when it fires early, re-schedules itself.

INIs integrate their number present and busy servers over time at every
change.  Protocol and compute resources keep only counters per node and
phase (handlers) or per thread (bursts) and are filled in at each snapshot:
the integral of the number present is the jobs' residence (departed ones, plus
the present ones' time so far), the busy integral the service started minus
what the jobs in service have still to run, read off their end events in the
heap (handlers) or their burst ends (bursts) -- so neither an arrival nor a
preemption costs any accounting.  The PDQ keeps its eligible handlers in a
heap ordered by arrival and each key's later handlers in a per-key FIFO.
Round-robin INI dispatch keeps one rotation per node and direction.  A
protocol queue or INI that exceeds ``max_queue`` messages raises
:class:`~mva.errors.SaturationError`.
"""

from __future__ import annotations

import itertools
import math
import time as _time
from collections import deque
from dataclasses import dataclass, field
from heapq import heappop, heappush
from typing import Any, Callable, Iterator, Sequence

from mva.errors import SaturationError

from ..generators import stream_rng
from ..traces import NOSYNC, SEQUENTIAL, Record
from .kernel import Kernel, Pause, Stop
from .machine import Machine

__all__ = ["run_machine", "RawRun", "Snapshot", "ResourceInfo"]

# message fields (a request is one mutable list for its whole life):
# issuing _Proc, source _Node, destination _Node, request/reply handler cost,
# key, size, phase, arrival time at the current node, _Proc running its
# handler, issue time, current target _Node, INI hop and station, current cost
_THREAD, _SRC, _DST, _REQ, _REPLY, _KEY, _SIZE, _PHASE, _ARR, _PROC, _ISSUE, _TO, _HOP, \
    _STATION, _COST = range(15)
# phases of a message at a node
_SEND, _REQUEST, _RESPONSE = 0, 1, 2
# thread states (_BETWEEN: moving to its next record, e.g. issuing a one-way request)
_COMPUTING, _BLOCKED, _READY, _DONE, _BETWEEN = 0, 1, 2, 3, 4


@dataclass(frozen=True)
class ResourceInfo:
    """Name, kind (``"protocol"``, ``"compute"``, ``"ini"``) and server count of a resource."""

    name: str
    kind: str
    servers: int
    node: int | None = None


@dataclass
class Snapshot:
    """Cumulative counters at one instant (all from time 0)."""

    time: float
    completed: int
    response_sum: float
    cycles: int
    cycle_sum: float
    phase_n: list[int]
    phase_sum: list[float]
    interrupts: int
    area: list[float]
    busy_area: list[float]
    departures: list[int]
    arrivals: list[int]
    residence: list[float]  # residence of departed jobs + partial residence of present ones
    departed_residence: list[float]  # residence of departed jobs only
    spin_area: list[float]  # busy-waiting time on spin-locks (part of busy_area)


@dataclass
class RawRun:
    """What one run returns: snapshots at the marks plus run facts."""

    resources: list[ResourceInfo]
    snapshots: list[Snapshot]
    events: int
    wall_time: float
    end: str
    extra: dict[str, Any] = field(default_factory=dict)


class _Node:
    """One node's protocol processing: configuration, queue and counters."""

    __slots__ = ("index", "cluster", "dedicated", "limit", "pdq", "spin", "plain", "direct_out",
                 "s_int", "s_dir", "s_ind", "s_send", "s_extra", "s_lock", "n_acting", "queue",
                 "idle", "procs", "rr", "keys", "seq_running", "pdq_wait", "n_spin", "spin_work",
                 "h_work", "ph_dep", "ph_res")

    def __init__(self, index: int, cluster: int, spec: Any, rng: Any) -> None:
        self.index = index
        self.cluster = cluster
        self.dedicated = spec.dedicated
        self.limit = spec.max_acting            # processors running handlers at once, at most
        self.pdq = spec.dispatch == "pdq"
        self.spin = spec.dispatch == "spin"     # spin-locks (dedicated processors only)
        # samplers, created in this order from the node's stream
        self.s_int = _sampler_or_none(spec.interrupt, rng)
        self.s_dir = _sampler_or_none(spec.direct, rng)
        self.s_ind = _sampler_or_none(spec.indirect, rng)
        self.s_send = spec.send.sampler(rng) if spec.send is not None else None
        self.s_extra = _sampler_or_none(spec.extra_delay, rng)
        self.s_lock = _sampler_or_none(spec.lock, rng) if self.spin else None
        # a FIFO node multiplexing its compute processors with no overheads
        self.plain = not (self.dedicated or self.pdq) and \
            self.s_int is None and self.s_dir is None and self.s_ind is None
        # a message leaves straight onto the network (no send handler, no extra delay)
        self.direct_out = self.s_send is None and self.s_extra is None
        self.n_acting = 0                       # handlers running
        # FIFO: a deque of waiting messages.  PDQ: a heap of (arrival number,
        # message) of the *eligible* messages -- unkeyed, nosync, sequential,
        # and the earliest waiting message of each key that is not running --
        # while the later messages of a key wait in that key's FIFO in keys.
        # Spin: keys maps each held lock to the FIFO of (spin start, duration,
        # message) of the handlers busy-waiting for it.
        self.queue: Any = [] if self.pdq else deque()
        self.idle: list[_Proc] = []             # processors whose thread is blocked
        self.procs: list[_Proc] = []
        self.rr = 0                             # round-robin position of the interrupts
        self.keys: dict[str, deque[Any]] = {}
        self.seq_running = False
        self.pdq_wait = 0                       # PDQ: messages waiting (eligible or behind a key)
        self.n_spin = 0                         # spin: handlers busy-waiting on a held lock
        self.spin_work = 0.0                    # spin: busy-waiting time of the finished spins
        self.h_work = 0.0                       # handler time started (overheads included)
        self.ph_dep = [0, 0, 0]                 # handlers done, per phase
        self.ph_res = [0.0, 0.0, 0.0]           # their residence (arrival to end)


class _Proc:
    """A compute processor and the thread it runs."""

    __slots__ = ("index", "node", "next", "state", "acting", "hend", "comp_start", "comp_end",
                 "work", "dep", "res", "cyc_start")

    def __init__(self, index: int, node: _Node, source: Iterator[Record]) -> None:
        self.index = index
        self.node = node
        self.next = iter(source).__next__
        self.state = _BLOCKED
        self.acting = False         # running handlers (the protocol role)
        self.hend = 0.0             # end of the handler it runs
        self.comp_start = 0.0       # start of the current burst
        self.comp_end = 0.0         # end of the current burst (moved by handlers)
        self.work = 0.0             # computing time started (burst lengths)
        self.dep = 0                # bursts completed
        self.res = 0.0              # their residence (start to end, suspensions included)
        self.cyc_start = 0.0        # end of the thread's last request cycle (0: none yet)


def _sampler_or_none(dist: Any, rng: Any) -> Callable[[], float] | None:
    if dist is None:
        return None
    if dist.family == "deterministic" and dist.mean == 0.0:
        return None
    return dist.sampler(rng)


def run_machine(machine: Machine, sources: Sequence[Iterator[Record]], *, seed: int | None,
                marks: Sequence[int], on_pause: Callable[[int], None] | None = None,
                max_queue: int | None = None) -> RawRun:
    """Simulate ``machine`` with thread ``t`` reading ``sources[t]``.

    Parameters
    ----------
    machine : Machine
    sources : sequence of iterators of Record
        One per thread (``machine.n_threads``).
    seed : int or None
        Seed of the machine's own random streams (latencies, overheads, INI
        service times); the workload randomness is in ``sources``.
    marks : sequence of int
        Increasing numbers of completed requests at which to take a snapshot;
        the run stops at the last.
    on_pause : callable, optional
        Called with the index of each mark reached (progress reporting).
    max_queue : int, optional
        Largest number of messages one protocol queue or INI may hold
        (waiting plus in service, checked when a message has to wait); one
        more raises :class:`~mva.errors.SaturationError` naming it (open
        arrivals above capacity).  Default: no bound.

    Returns
    -------
    RawRun
    """
    M = machine
    N = M.n_nodes
    T = M.n_threads
    if len(sources) != T:
        raise ValueError(f"sources must have one iterator per thread ({T}); got {len(sources)}")
    marks = [int(m) for m in marks]
    if not marks or any(b <= a for a, b in zip(marks, marks[1:])) or marks[0] < 1:
        raise ValueError(f"marks must be increasing positive counts; got {marks[:5]}")

    kernel = Kernel()
    heap = kernel.heap
    nxt = kernel.next_seq
    push = heappush

    # ---------------------------------------------------------------- resources
    resources: list[ResourceInfo] = []
    for n, spec in enumerate(M.nodes):
        resources.append(ResourceInfo(f"node{n}.protocol", "protocol", spec.servers, n))
    for n, spec in enumerate(M.nodes):
        resources.append(ResourceInfo(f"node{n}.compute", "compute", max(spec.compute, 1), n))
    R_COMP = N
    R_INI = 2 * N
    clustered = M.cluster_size is not None
    K = M.inis
    n_clusters = M.n_clusters
    if clustered:
        if M.ini_dispatch == "shared":
            for c in range(n_clusters):
                resources.append(ResourceInfo(f"cluster{c}.ini", "ini", K))
        else:
            for c in range(n_clusters):
                for k in range(K):
                    resources.append(ResourceInfo(f"cluster{c}.ini{k}", "ini", 1))
    NR = len(resources)
    # per resource, as snapshots report them; the INIs keep theirs up to date
    r_n = [0] * NR          # jobs present
    r_busy = [0] * NR       # jobs in service (servers busy)
    r_area = [0.0] * NR     # integral of r_n
    r_barea = [0.0] * NR    # integral of r_busy
    r_last = [0.0] * NR     # time of the last change
    r_dep = [0] * NR        # departures
    r_res = [0.0] * NR      # sum of residence times of departed jobs
    r_arrsum = [0.0] * NR   # sum of arrival times of present jobs

    def flush(r: int, now: float) -> None:
        dt = now - r_last[r]
        if dt:
            r_area[r] += r_n[r] * dt
            r_barea[r] += r_busy[r] * dt
            r_last[r] = now

    # ------------------------------------------------------- nodes and threads
    cluster_size = M.cluster_size or N
    nodes = [_Node(n, n // cluster_size, spec, stream_rng(seed, 2, n))
             for n, spec in enumerate(M.nodes)]
    threads = [_Proc(x, nodes[n], s) for x, (n, s) in enumerate(zip(M.thread_nodes, sources))]
    for x in threads:
        x.node.procs.append(x)
    pdq_seq = itertools.count()
    qcap = max_queue if max_queue is not None else 1 << 62
    issuer: _Proc | None = None     # the thread issuing a request right now

    # ---------------------------------------------------------------- network
    lat = M.latency.sampler(stream_rng(seed, 1, 0))
    lat_c = M.latency.mean if M.latency.family == "deterministic" else None
    intra = M.intra_latency.sampler(stream_rng(seed, 1, 1))
    shared_ini = M.ini_dispatch == "shared"
    rr_ini = M.ini_dispatch == "round_robin"
    n_st = (n_clusters if shared_ini else n_clusters * K) if clustered else 0
    st_servers = [K if shared_ini else 1] * n_st
    st_busy = [0] * n_st
    st_q: list[deque[Any]] = [deque() for _ in range(n_st)]
    # round-robin: one rotation per PE and direction -- a PE sends its
    # successive outgoing messages through its cluster's INIs in turn, and
    # receives its successive incoming messages through its cluster's INIs in
    # turn; PE j's rotations start at INI j mod K (its static INI)
    rr_out = [(n % cluster_size) % K for n in range(N)] if rr_ini else []
    rr_in = rr_out[:]
    ini_draw = M.ini_cost.sampler(stream_rng(seed, 3, 0))
    size_cost = M.ini_cost_of_size
    ini_mean = M.ini_cost.mean

    def ini_service(m: list[Any]) -> float:
        if size_cost is None:
            return ini_draw()
        base = ini_draw()
        return (base * (size_cost(m[_SIZE]) / ini_mean) if ini_mean > 0
                else float(size_cost(m[_SIZE])))

    def station_for(node: _Node, rr: list[int]) -> int:
        """The INI station of ``node``'s cluster for its next message (``rr``: rotations)."""
        c = node.cluster
        if shared_ini:
            return c
        n = node.index
        if rr_ini:
            k = rr[n]
            rr[n] = k + 1 if k + 1 < K else 0
            return c * K + k
        return c * K + (n % cluster_size) % K

    # ---------------------------------------------------------------- counters
    completed = 0
    response_sum = 0.0
    one_way = 0                 # completed one-way requests (the others are request cycles)
    interrupts = 0
    mark_i = 0
    next_mark = marks[0]
    snapshots: list[Snapshot] = []

    # ================================================================ events
    # Every event function returns the one event tuple it creates last-in-line
    # for the kernel to swap in (see validation.sim.kernel), or None; other
    # events it creates are pushed.  Helpers that create one event (start,
    # begin, travel, issue, release) return it to their caller.
    def travel_any(now: float, m: list[Any], a: _Node, b: _Node) -> tuple:
        """The event of message ``m`` leaving node ``a`` for node ``b``."""
        m[_TO] = b
        if not clustered:
            return (now + lat(), nxt(), node_arrive, m)
        if a.cluster == b.cluster:
            return (now + intra(), nxt(), node_arrive, m)
        m[_HOP] = 0
        m[_STATION] = station_for(a, rr_out)
        return (now + intra(), nxt(), ini_arrive, m)

    def travel_const(now: float, m: list[Any], a: _Node, b: _Node) -> tuple:
        """:func:`travel_any` with a constant latency on a one-level machine."""
        m[_TO] = b
        return (now + lat_direct, nxt(), node_arrive, m)  # type: ignore[operator]  # not None here

    lat_direct = lat_c if not clustered else None
    travel = travel_any if lat_direct is None else travel_const

    def ini_arrive(now: float, m: list[Any]) -> tuple | None:
        s = m[_STATION]
        r = R_INI + s
        flush(r, now)
        r_n[r] += 1
        if r_n[r] > qcap:
            overflow(r, now)
        r_arrsum[r] += now
        m[_ARR] = now
        if st_busy[s] < st_servers[s]:
            st_busy[s] += 1
            r_busy[r] += 1
            return (now + ini_service(m), nxt(), ini_done, m)
        st_q[s].append(m)
        return None

    def ini_done(now: float, m: list[Any]) -> tuple:
        s = m[_STATION]
        r = R_INI + s
        flush(r, now)
        r_n[r] -= 1
        a = m[_ARR]
        r_arrsum[r] -= a
        r_res[r] += now - a
        r_dep[r] += 1
        q = st_q[s]
        if q:
            m2 = q.popleft()
            push(heap, (now + ini_service(m2), nxt(), ini_done, m2))
        else:
            st_busy[s] -= 1
            r_busy[r] -= 1
        if m[_HOP] == 0:
            m[_HOP] = 1
            m[_STATION] = station_for(m[_TO], rr_in)
            return (now + lat(), nxt(), ini_arrive, m)
        return (now + intra(), nxt(), node_arrive, m)

    def node_arrive(now: float, m: list[Any]) -> tuple | None:
        nonlocal interrupts
        nd = m[_TO]
        m[_ARR] = now
        if nd.pdq:
            pdq_enqueue(nd, m, now)
            dispatch_more(nd, now)
            return None
        if nd.spin:
            q = nd.queue
            q.append(m)
            if len(q) + nd.n_acting > qcap:
                overflow(nd.index, now)
            dispatch_more(nd, now)
            return None
        a = nd.n_acting
        if a < nd.limit:
            if not nd.plain:
                return start(nd, now, m, None)
            # start(nd, now, m, None) inlined for a plain node (the common case)
            ids = nd.idle
            if ids:
                x = ids.pop()
            else:
                x = victim(nd)
                if x is None:
                    return start(nd, now, m, None)
                interrupts += 1
            nd.n_acting = a + 1
            x.acting = True
            dur = m[_COST]
            if x.state == _COMPUTING:
                x.comp_end += dur
            end = now + dur
            x.hend = end
            m[_PROC] = x
            nd.h_work += dur
            return (end, nxt(), handler_done, m)
        q = nd.queue
        q.append(m)
        if len(q) + a > qcap:
            overflow(nd.index, now)
        return None

    def overflow(r: int, now: float) -> None:
        raise SaturationError(
            f"{resources[r].name} holds more than max_queue={qcap} messages at t={now:.6g}: "
            "open (one-way) arrivals exceed its capacity", bottleneck=resources[r].name)

    def pdq_enqueue(nd: _Node, m: list[Any], now: float) -> None:
        """Message ``m`` joins node ``nd``'s PDQ: eligible, or behind its key's earlier messages."""
        nd.pdq_wait += 1
        if nd.pdq_wait + nd.n_acting > qcap:
            overflow(nd.index, now)
        e = (next(pdq_seq), m)         # arrival order is kept while waiting behind a key
        k = m[_KEY]
        if k is not None and k != NOSYNC and k != SEQUENTIAL:
            keys = nd.keys
            later = keys.get(k)
            if later is not None:      # the key is running or already has an eligible message
                later.append(e)
                return
            keys[k] = deque()
        heappush(nd.queue, e)

    def pick(nd: _Node) -> Any:
        """Remove and return the next dispatchable handler of node ``nd`` (or None).

        PDQ: the earliest eligible message; a sequential one only when nothing
        runs, and nothing behind it (in arrival order) before it.
        """
        if nd.n_acting >= nd.limit:
            return None
        q = nd.queue
        if not q:
            return None
        if not nd.pdq:
            if nd.spin and (nd.seq_running or (q[0][_KEY] == SEQUENTIAL and nd.n_acting)):
                return None  # a sequential handler runs alone, or drains
            return q.popleft()
        if nd.seq_running:
            return None
        m = q[0][1]
        if m[_KEY] == SEQUENTIAL and nd.n_acting:
            return None  # drains: nothing behind it dispatches
        heappop(q)
        nd.pdq_wait -= 1
        return m

    def dispatch_more(nd: _Node, now: float) -> None:
        while True:
            m = pick(nd)
            if m is None:
                return
            e = start(nd, now, m, None)
            if e is not None:             # (None: a handler spinning on a held lock)
                push(heap, e)

    def victim(nd: _Node) -> _Proc | None:
        """A computing processor of node ``nd`` to interrupt (round-robin)."""
        ps = nd.procs
        if len(ps) == 1:               # one-processor node
            y = ps[0]
            return y if y.state == _COMPUTING and not y.acting else None
        k = len(ps)
        i = nd.rr
        for _ in range(k):
            i = i + 1 if i + 1 < k else 0
            y = ps[i]
            if y.state == _COMPUTING and not y.acting:
                nd.rr = i
                return y
        return None

    def start(nd: _Node, now: float, m: list[Any], x: _Proc | None) -> Any:
        """Start handler ``m`` at node ``nd``; returns the handler's end event.

        ``x`` is the processor continuing as protocol processor, or None to
        choose one: an idle one, else a computing one to interrupt.  On a
        spin-lock node a keyed handler whose lock is held busy-waits (no end
        event yet: returns None).
        """
        nonlocal interrupts
        nd.n_acting += 1
        dur = m[_COST]
        if (nd.pdq or nd.spin) and m[_KEY] == SEQUENTIAL:
            nd.seq_running = True
        if nd.dedicated:
            m[_PROC] = None
            if nd.spin:
                k = m[_KEY]
                if k is not None and k != NOSYNC and k != SEQUENTIAL:
                    if nd.s_lock is not None:
                        dur += nd.s_lock()
                    spinners = nd.keys.get(k)
                    if spinners is not None:        # held: spin until it is released
                        spinners.append((now, dur, m))
                        nd.n_spin += 1
                        return None
                    nd.keys[k] = deque()            # acquired
            nd.h_work += dur
            return (now + dur, nxt(), handler_done, m)
        if x is None:
            ids = nd.idle
            if ids:
                x = ids.pop()
            else:
                x = victim(nd)
                if x is not None:
                    interrupts += 1
                    if nd.s_int is not None:
                        dur += nd.s_int()
                else:  # only the thread issuing this message is left: it runs it
                    x = issuer
                    assert x is not None and x.node is nd and not x.acting
            if nd.s_dir is not None:
                dur += nd.s_dir()
            x.acting = True
        if nd.s_ind is not None:
            dur += nd.s_ind()
        if x.state == _COMPUTING:
            x.comp_end += dur
        end = now + dur
        x.hend = end
        m[_PROC] = x
        nd.h_work += dur
        return (end, nxt(), handler_done, m)

    def handler_done(now: float, m: list[Any]) -> tuple | None:
        nonlocal completed, response_sum
        nd = m[_TO]
        nd.n_acting -= 1
        ph = m[_PHASE]
        nd.ph_dep[ph] += 1
        nd.ph_res[ph] += now - m[_ARR]
        if nd.pdq:
            k = m[_KEY]
            if k == SEQUENTIAL:
                nd.seq_running = False
            elif k is not None and k != NOSYNC:
                keys = nd.keys
                later = keys[k]
                if later:               # the key's next message becomes eligible
                    heappush(nd.queue, later.popleft())
                else:
                    del keys[k]
        elif nd.spin:
            k = m[_KEY]
            if k == SEQUENTIAL:
                nd.seq_running = False
            elif k is not None and k != NOSYNC:
                spinners = nd.keys[k]
                if spinners:            # the lock passes to the earliest spinner
                    t0, d, w = spinners.popleft()
                    nd.n_spin -= 1
                    nd.spin_work += now - t0
                    nd.h_work += now - t0 + d
                    push(heap, (now + d, nxt(), handler_done, w))
                else:                   # released
                    del nd.keys[k]
        # the message moves on
        new = None                      # the event returned to the kernel
        if ph == _RESPONSE:             # the reply handler ran: the request cycle is complete
            completed += 1
            response_sum += now - m[_ISSUE]
            th = m[_THREAD]
            th.cyc_start = now          # (the cycles' sum telescopes: see snapshot)
            if completed == next_mark:
                push(heap, (now, nxt(), mark_event, None))
            if th.acting:
                th.state = _READY
            else:
                if not nd.dedicated:
                    nd.idle.remove(th)
                new = begin(now, th)
        elif ph == _REQUEST:
            if m[_REPLY] is None:
                complete_one_way(now, m)
            else:
                m[_PHASE] = _RESPONSE
                m[_COST] = m[_REPLY]
                if lat_direct is None:
                    new = travel(now, m, nd, m[_SRC])
                else:                      # one level, constant latency
                    m[_TO] = m[_SRC]
                    new = (now + lat_direct, nxt(), node_arrive, m)
        else:                              # _SEND
            m[_PHASE] = _REQUEST
            m[_COST] = m[_REQ]
            sx = nd.s_extra
            new = travel(now if sx is None else now + sx(), m, nd, m[_DST])
        # the node's protocol processing goes on
        if nd.dedicated:
            dispatch_more(nd, now)
            return new
        x = m[_PROC]
        if not nd.queue:                   # nothing waits: x stops acting (release)
            x.acting = False
            st = x.state
            if st == _READY:
                e = begin(now, x)
                if new is None:
                    return e
                if e is not None:
                    push(heap, e)
            elif st != _COMPUTING:         # (a computing one resumes: its end moved already)
                nd.idle.append(x)
            return new
        nm = pick(nd)
        if nm is None:                     # x stops acting as protocol processor (release)
            x.acting = False
            st = x.state
            if st == _READY:
                e = begin(now, x)
                if e is not None:
                    if new is None:
                        new = e
                    else:
                        push(heap, e)
            elif st != _COMPUTING:         # (a computing one resumes: its end moved already)
                become_idle(now, x, nd)
        else:
            st = x.state
            if (st == _COMPUTING or st == _READY) and nd.idle:
                push(heap, start(nd, now, nm, None))   # an idle processor takes over
                e = release(now, x, nd)
                if e is not None:
                    push(heap, e)
            else:
                push(heap, start(nd, now, nm, x))    # x keeps the protocol role
        if nd.pdq:
            dispatch_more(nd, now)
        return new

    def release(now: float, x: _Proc, nd: _Node) -> tuple | None:
        """Processor ``x`` stops acting as protocol processor (returns its thread's next event)."""
        x.acting = False
        st = x.state
        if st == _COMPUTING:          # an interrupted burst resumes (its end moved already)
            return None
        if st == _READY:
            return begin(now, x)
        become_idle(now, x, nd)
        return None

    def become_idle(now: float, x: _Proc, nd: _Node) -> None:
        if nd.dedicated:
            return
        m = pick(nd) if nd.queue else None
        nd.idle.append(x)
        if m is not None:
            push(heap, start(nd, now, m, None))   # pops x back: it assumes the role

    def begin(now: float, x: _Proc) -> tuple | None:
        """Thread ``x`` proceeds to its next record(s); returns the event that creates."""
        nonlocal issuer
        get = x.next
        while True:
            try:
                rec = get()
            except StopIteration:
                x.state = _DONE
                if not x.acting:
                    become_idle(now, x, x.node)
                return None
            if rec.__class__ is float:    # a compute record in the generators' compact form
                w = rec
            elif rec[1] == "compute":
                w = rec[2]
            elif rec[1] == "idle":        # a compute-only thread idles: its processor is free
                x.state = _BLOCKED
                nd = x.node
                if nd.queue:
                    become_idle(now, x, nd)
                elif not nd.dedicated:
                    nd.idle.append(x)
                idle_for = rec[2]
                assert idle_for is not None   # an idle record carries its duration
                return (now + idle_for, nxt(), wake, x)
            else:
                w = None                  # a request
            if w is not None:
                x.state = _COMPUTING
                # acting: it runs its own one-way message's send handler, suspended from the start
                end = (x.hend if x.acting else now) + w
                x.comp_end = end
                x.comp_start = now
                x.work += w
                return (end, nxt(), compute_done, x)
            d: int = rec[3]  # type: ignore[assignment]  # a request record has a dest
            if not 0 <= d < N:
                raise ValueError(f"thread {x.index}: request to node {d}, but the machine has "
                                 f"nodes 0 to {N - 1}")
            nd = x.node
            dn = nodes[d]
            m = [x, nd, dn, rec[5], rec[6], rec[7], rec[4], _REQUEST, 0.0, None, now, dn, 0, 0,
                 rec[5]]
            if rec[6] is None:        # one-way: the thread goes on
                x.state = _BETWEEN
                issuer = x
                e = issue(now, m, nd)
                if e is not None:
                    push(heap, e)
                issuer = None
                continue
            x.state = _BLOCKED
            if nd.queue:
                become_idle(now, x, nd)
            elif not nd.dedicated:
                nd.idle.append(x)
            if not nd.direct_out:
                return issue(now, m, nd)
            if lat_direct is None:
                return travel(now, m, nd, dn)
            return (now + lat_direct, nxt(), node_arrive, m)   # m[_TO] is dn

    def wake(now: float, x: _Proc) -> tuple | None:
        """The idle period of thread ``x`` ends (as a reply does for a blocked thread)."""
        if x.acting:                  # it finishes its handlers first
            x.state = _READY
            return None
        if not x.node.dedicated:
            x.node.idle.remove(x)
        return begin(now, x)

    def issue(now: float, m: list[Any], nd: _Node) -> tuple | None:
        """Message ``m`` leaves its thread: through a send handler, or onto the network."""
        ss = nd.s_send
        if ss is None:
            sx = nd.s_extra
            return travel(now if sx is None else now + sx(), m, nd, m[_DST])
        m[_PHASE] = _SEND
        m[_COST] = ss()
        m[_TO] = nd
        return node_arrive(now, m)

    def compute_done(now: float, x: _Proc) -> tuple | None:
        end = x.comp_end
        if end > now or x.acting:     # suspended meanwhile: the burst ends later
            return (end, nxt(), compute_done, x)
        x.dep += 1
        x.res += now - x.comp_start
        return begin(now, x)

    def complete_one_way(now: float, m: list[Any]) -> None:
        """A one-way request's handler ran (the reply path counts in handler_done)."""
        nonlocal completed, response_sum, one_way
        completed += 1
        one_way += 1
        response_sum += now - m[_ISSUE]
        if completed == next_mark:
            push(heap, (now, nxt(), mark_event, None))

    def snapshot(now: float) -> Snapshot:
        for r in range(R_INI, NR):
            flush(r, now)
        # protocol: the handlers running are the handler_done events in the heap
        run_n = [0] * N
        run_arr = [0.0] * N
        run_left = [0.0] * N
        for e in heap:
            if e[2] is handler_done:
                m = e[3]
                n = m[_TO].index
                run_n[n] += 1
                run_arr[n] += m[_ARR]
                run_left[n] += e[0] - now
        assert run_n == [nd.n_acting - nd.n_spin for nd in nodes], run_n
        spin_area = [0.0] * NR
        for nd in nodes:
            n = nd.index
            spinning: list[Any] = []
            if nd.pdq:
                waiting = [m for _, m in nd.queue]
                waiting += [m for later in nd.keys.values() for _, m in later]
            else:
                waiting = nd.queue
                if nd.spin:             # busy-waiting handlers occupy their processors
                    spinning = [e for spinners in nd.keys.values() for e in spinners]
            spin_now = sum(now - e[0] for e in spinning)
            r_n[n] = run_n[n] + len(spinning) + len(waiting)
            r_busy[n] = run_n[n] + len(spinning)
            r_dep[n] = sum(nd.ph_dep)
            r_res[n] = sum(nd.ph_res)
            r_arrsum[n] = (run_arr[n] + sum(e[2][_ARR] for e in spinning)
                           + sum(m[_ARR] for m in waiting))
            r_area[n] = r_res[n] + (r_n[n] * now - r_arrsum[n])
            r_barea[n] = nd.h_work - run_left[n] + spin_now
            spin_area[n] = nd.spin_work + spin_now
            # compute: the threads computing are the node's bursts in progress
            c = R_COMP + n
            present, arrsum, work = 0, 0.0, 0.0
            for x in nd.procs:
                work += x.work
                if x.state == _COMPUTING:   # minus the part of the burst still to run
                    present += 1
                    arrsum += x.comp_start
                    work -= x.comp_end - (max(x.hend, now) if x.acting else now)
            r_n[c] = r_busy[c] = present
            r_dep[c] = sum(x.dep for x in nd.procs)
            r_res[c] = sum(x.res for x in nd.procs)
            r_arrsum[c] = arrsum
            r_area[c] = r_res[c] + (present * now - arrsum)
            r_barea[c] = work
        phase_n = [sum(nd.ph_dep[ph] for nd in nodes) for ph in range(3)]
        phase_sum = [sum(nd.ph_res[ph] for nd in nodes) for ph in range(3)]
        return Snapshot(
            time=now, completed=completed, response_sum=response_sum, cycles=completed - one_way,
            cycle_sum=math.fsum(x.cyc_start for x in threads), phase_n=phase_n,
            phase_sum=phase_sum, interrupts=interrupts, area=r_area[:], busy_area=r_barea[:],
            departures=r_dep[:], arrivals=[d + k for d, k in zip(r_dep, r_n)],
            residence=[r_res[r] + (r_n[r] * now - r_arrsum[r]) for r in range(NR)],
            departed_residence=r_res[:], spin_area=spin_area)

    def mark_event(now: float, _: Any) -> None:
        nonlocal mark_i, next_mark
        snapshots.append(snapshot(now))
        i = mark_i
        mark_i += 1
        if mark_i >= len(marks):
            raise Stop
        next_mark = marks[mark_i]
        if completed >= next_mark:   # several marks at one instant
            push(heap, (now, nxt(), mark_event, None))
        raise Pause(i)

    # ================================================================= run
    def start_thread(now: float, x: _Proc) -> tuple | None:
        if not x.node.dedicated:
            x.node.idle.remove(x)
        return begin(now, x)

    for x in threads:
        if not x.node.dedicated:
            x.node.idle.append(x)       # blocked until it starts
    for x in threads:
        kernel.schedule(0.0, start_thread, x)

    wall0 = _time.perf_counter()
    while True:
        end = kernel.run()
        if end != "pause":
            break
        if on_pause is not None:
            on_pause(mark_i - 1)
    wall = _time.perf_counter() - wall0
    if end == "empty":
        snapshots.append(snapshot(kernel.now))
    return RawRun(resources=resources, snapshots=snapshots, events=kernel.events,
                  wall_time=wall, end=end,
                  extra={"time": kernel.now,
                         "compute": {n: s.compute for n, s in enumerate(M.nodes)}})
