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
  block).
* Every message addressed to a node waits in the node's **protocol queue**
  (FIFO, or PDQ with synchronization keys).  Handlers run on a dedicated
  protocol processor if the node has any (Fixed), else on a compute
  processor (*multiplexed*: Floating, Single, LoPC): first on an *idle* one --
  a processor whose thread is blocked -- and only when all are busy computing by
  **interrupting** one (round-robin), which pays ``O_int``.  A processor that
  assumes the protocol role pays the direct overhead; every handler on a
  compute processor pays the indirect overhead.  At most ``max_acting``
  processors of a node run handlers at once (1: Tempest atomicity).
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
The state lives in flat lists indexed by thread, node or resource number and
the event functions are closures over them, with ``heappush``, the heap and
the sequence counter bound locally: an event costs a tuple push and pop and a
few list operations, no object allocation besides the event tuple and one
list per request.  Suspension uses *lazy rescheduling*: a handler started on a
computing processor moves that thread's burst end later by the handler's
duration; the burst's end event, when it fires early, re-schedules itself.

Protocol queues and INIs integrate their number present and busy servers
over time at every change; compute resources instead count per burst (the
integral of the number present is the bursts' residence, the busy time the
work done), completed at each snapshot for the bursts in progress -- so a
preemption costs no accounting.  The PDQ keeps its eligible handlers in a heap
ordered by arrival and each key's later handlers in a per-key FIFO.  Round-robin
INI dispatch keeps one rotation per node and direction.  A protocol queue or
INI that exceeds ``max_queue`` messages raises
:class:`~mva.errors.SaturationError`.
"""

from __future__ import annotations

import itertools
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

# message fields (a request is one mutable list for its whole life)
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


@dataclass
class RawRun:
    """What one run returns: snapshots at the marks plus run facts."""

    resources: list[ResourceInfo]
    snapshots: list[Snapshot]
    events: int
    wall_time: float
    end: str
    extra: dict[str, Any] = field(default_factory=dict)


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
        Largest number of messages one protocol queue or INI may hold; one
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
    r_n = [0] * NR          # jobs present
    r_busy = [0] * NR       # jobs in service (servers busy)
    r_area = [0.0] * NR     # integral of r_n
    r_barea = [0.0] * NR    # integral of r_busy
    r_last = [0.0] * NR     # time of the last change
    r_dep = [0] * NR        # departures
    r_arr = [0] * NR        # arrivals
    r_res = [0.0] * NR      # sum of residence times of departed jobs
    r_arrsum = [0.0] * NR   # sum of arrival times of present jobs
    # compute resources skip the time integration: their area is the bursts'
    # residence and their busy area the work done (sum of burst lengths),
    # both completed at each snapshot from the bursts in progress
    c_work = [0.0] * NR

    def flush(r: int, now: float) -> None:
        dt = now - r_last[r]
        if dt:
            r_area[r] += r_n[r] * dt
            r_barea[r] += r_busy[r] * dt
            r_last[r] = now

    # ------------------------------------------------------------------ nodes
    specs = M.nodes
    dedicated = [s.dedicated for s in specs]
    limit = [s.max_acting for s in specs]
    pdq = [s.dispatch == "pdq" for s in specs]
    # processors of each node running handlers: the busy count of its protocol
    # resource (resources 0 .. N-1 are the nodes' protocol resources)
    acting_n = r_busy
    # FIFO: a deque of waiting messages.  PDQ: a heap of (arrival number,
    # message) of the *eligible* messages -- unkeyed, nosync, sequential, and
    # the earliest waiting message of each key that is not running -- while
    # the later messages of a key wait in that key's FIFO in pdq_keys.
    queue: list[Any] = [([] if s.dispatch == "pdq" else deque()) for s in specs]
    pdq_seq = itertools.count()
    qcap = max_queue if max_queue is not None else 1 << 62
    idle: list[list[int]] = [[] for _ in specs]
    procs: list[list[int]] = [[] for _ in specs]
    rr = [0] * N
    pdq_keys: list[dict[str, deque[Any]]] = [{} for _ in specs]  # key -> later messages
    seq_running = [False] * N
    node_rng = [stream_rng(seed, 2, n) for n in range(N)]
    s_int = [_sampler_or_none(s.interrupt, g) for s, g in zip(specs, node_rng)]
    s_dir = [_sampler_or_none(s.direct, g) for s, g in zip(specs, node_rng)]
    s_ind = [_sampler_or_none(s.indirect, g) for s, g in zip(specs, node_rng)]
    s_send = [(s.send.sampler(g) if s.send is not None else None) for s, g in zip(specs, node_rng)]
    s_extra = [_sampler_or_none(s.extra_delay, g) for s, g in zip(specs, node_rng)]
    overheads = [a is not None or b is not None or c is not None
                 for a, b, c in zip(s_int, s_dir, s_ind)]

    # ---------------------------------------------------------------- threads
    th_node = list(M.thread_nodes)
    for x, n in enumerate(th_node):
        procs[n].append(x)
    th_state = [_BLOCKED] * T
    comp_end = [0.0] * T
    comp_start = [0.0] * T
    comp_len = [0.0] * T        # length of the current burst (computing time, no suspension)
    acting_p = [False] * T
    hend = [0.0] * T            # end of the handler a processor is running
    issuer = -1                 # the thread issuing a request right now
    cyc_start = [0.0] * T
    th_next = [iter(s).__next__ for s in sources]

    # ---------------------------------------------------------------- network
    lat = M.latency.sampler(stream_rng(seed, 1, 0))
    lat_c = M.latency.mean if M.latency.family == "deterministic" else None
    intra = M.intra_latency.sampler(stream_rng(seed, 1, 1))
    cluster_size = M.cluster_size or N
    node_cluster = [n // cluster_size for n in range(N)]
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
        return base * (size_cost(m[_SIZE]) / ini_mean) if ini_mean > 0 else float(size_cost(m[_SIZE]))

    def station_for(node: int, rr: list[int]) -> int:
        """The INI station of ``node``'s cluster for its next message (``rr``: rotations)."""
        c = node_cluster[node]
        if shared_ini:
            return c
        if rr_ini:
            k = rr[node]
            rr[node] = k + 1 if k + 1 < K else 0
            return c * K + k
        return c * K + (node % cluster_size) % K

    # ---------------------------------------------------------------- counters
    completed = 0
    response_sum = 0.0
    n_cycles = 0
    cycle_sum = 0.0
    interrupts = 0
    phase_n = [0, 0, 0]
    phase_sum = [0.0, 0.0, 0.0]
    mark_i = 0
    next_mark = marks[0]
    snapshots: list[Snapshot] = []

    # ================================================================ events
    def travel(now: float, m: list[Any], a: int, b: int) -> None:
        """Message ``m`` leaves node ``a`` for node ``b``."""
        m[_TO] = b
        if not clustered:
            push(heap, (now + lat(), nxt(), node_arrive, m))
        elif node_cluster[a] == node_cluster[b]:
            push(heap, (now + intra(), nxt(), node_arrive, m))
        else:
            m[_HOP] = 0
            m[_STATION] = station_for(a, rr_out)
            push(heap, (now + intra(), nxt(), ini_arrive, m))

    lat_direct = lat_c if not clustered else None
    if lat_direct is not None:
        def travel(now: float, m: list[Any], a: int, b: int) -> None:
            """Message ``m`` leaves node ``a`` for node ``b`` (constant latency, one level)."""
            m[_TO] = b
            push(heap, (now + lat_c, nxt(), node_arrive, m))

    def ini_arrive(now: float, m: list[Any]) -> None:
        s = m[_STATION]
        r = R_INI + s
        flush(r, now)
        r_n[r] += 1
        if r_n[r] > qcap:
            overflow(r, now)
        r_arr[r] += 1
        r_arrsum[r] += now
        m[_ARR] = now
        if st_busy[s] < st_servers[s]:
            st_busy[s] += 1
            r_busy[r] += 1
            push(heap, (now + ini_service(m), nxt(), ini_done, m))
        else:
            st_q[s].append(m)

    def ini_done(now: float, m: list[Any]) -> None:
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
            push(heap, (now + lat(), nxt(), ini_arrive, m))
        else:
            push(heap, (now + intra(), nxt(), node_arrive, m))

    def node_arrive(now: float, m: list[Any]) -> None:
        n = m[_TO]
        dt = now - r_last[n]
        if dt:
            r_area[n] += r_n[n] * dt
            r_barea[n] += r_busy[n] * dt
            r_last[n] = now
        r_n[n] += 1
        if r_n[n] > qcap:
            overflow(n, now)
        r_arr[n] += 1
        r_arrsum[n] += now
        m[_ARR] = now
        if pdq[n]:
            pdq_enqueue(n, m)
            dispatch_more(n, now)
        elif acting_n[n] < limit[n]:
            start(n, now, m, -1)
        else:
            queue[n].append(m)

    def overflow(r: int, now: float) -> None:
        raise SaturationError(
            f"{resources[r].name} holds more than max_queue={qcap} messages at t={now:.6g}: "
            "open (one-way) arrivals exceed its capacity", bottleneck=resources[r].name)

    def pdq_enqueue(n: int, m: list[Any]) -> None:
        """Message ``m`` joins node ``n``'s PDQ: eligible, or behind its key's earlier messages."""
        e = (next(pdq_seq), m)         # arrival order is kept while waiting behind a key
        k = m[_KEY]
        if k is not None and k != NOSYNC and k != SEQUENTIAL:
            keys = pdq_keys[n]
            later = keys.get(k)
            if later is not None:      # the key is running or already has an eligible message
                later.append(e)
                return
            keys[k] = deque()
        heappush(queue[n], e)

    def pick(n: int) -> Any:
        """Remove and return the next dispatchable handler of node ``n`` (or None).

        PDQ: the earliest eligible message; a sequential one only when nothing
        runs, and nothing behind it (in arrival order) before it.
        """
        if acting_n[n] >= limit[n]:
            return None
        q = queue[n]
        if not q:
            return None
        if not pdq[n]:
            return q.popleft()
        if seq_running[n]:
            return None
        m = q[0][1]
        if m[_KEY] == SEQUENTIAL and acting_n[n]:
            return None  # drains: nothing behind it dispatches
        heappop(q)
        return m

    def dispatch_more(n: int, now: float) -> None:
        while True:
            m = pick(n)
            if m is None:
                return
            start(n, now, m, -1)

    def victim(n: int) -> int:
        """A computing processor of node ``n`` to interrupt (round-robin)."""
        ps = procs[n]
        if len(ps) == 1:               # one-processor node
            y = ps[0]
            return y if th_state[y] == _COMPUTING and not acting_p[y] else -1
        k = len(ps)
        i = rr[n]
        for _ in range(k):
            i = i + 1 if i + 1 < k else 0
            y = ps[i]
            if th_state[y] == _COMPUTING and not acting_p[y]:
                rr[n] = i
                return y
        return -1

    def start(n: int, now: float, m: list[Any], x: int) -> None:
        """Start handler ``m`` at node ``n`` (caller flushed resource ``n`` at ``now``).

        ``x`` is the processor continuing as protocol processor, or -1 to choose one.
        """
        nonlocal interrupts
        acting_n[n] += 1              # (also r_busy[n]: the same list)
        dur = m[_COST]
        if pdq[n] and m[_KEY] == SEQUENTIAL:
            seq_running[n] = True
        if not dedicated[n]:
            ovh = overheads[n]
            if x < 0:
                ids = idle[n]
                if ids:
                    x = ids.pop()
                else:
                    x = victim(n)
                    if x >= 0:
                        interrupts += 1
                        if ovh and s_int[n] is not None:
                            dur += s_int[n]()
                    else:  # only the thread issuing this message is left: it runs it
                        x = issuer
                        assert x >= 0 and th_node[x] == n and not acting_p[x]
                if ovh and s_dir[n] is not None:
                    dur += s_dir[n]()
                acting_p[x] = True
            if ovh and s_ind[n] is not None:
                dur += s_ind[n]()
            if th_state[x] == _COMPUTING:
                comp_end[x] += dur
            hend[x] = now + dur
        m[_PROC] = x
        push(heap, (now + dur, nxt(), handler_done, m))

    def handler_done(now: float, m: list[Any]) -> None:
        n = m[_TO]
        dt = now - r_last[n]
        if dt:
            r_area[n] += r_n[n] * dt
            r_barea[n] += r_busy[n] * dt
            r_last[n] = now
        r_n[n] -= 1
        acting_n[n] -= 1              # (also r_busy[n]: the same list)
        a = m[_ARR]
        r_arrsum[n] -= a
        r_res[n] += now - a
        r_dep[n] += 1
        if pdq[n]:
            k = m[_KEY]
            if k == SEQUENTIAL:
                seq_running[n] = False
            elif k is not None and k != NOSYNC:
                keys = pdq_keys[n]
                later = keys[k]
                if later:               # the key's next message becomes eligible
                    heappush(queue[n], later.popleft())
                else:
                    del keys[k]
        ph = m[_PHASE]
        phase_n[ph] += 1
        phase_sum[ph] += now - a
        # the message moves on
        if ph == _REQUEST:
            if m[_REPLY] is None:
                complete(now, m)
            else:
                m[_PHASE] = _RESPONSE
                m[_COST] = m[_REPLY]
                if lat_direct is None:
                    travel(now, m, n, m[_SRC])
                else:                      # one level, constant latency
                    m[_TO] = m[_SRC]
                    push(heap, (now + lat_direct, nxt(), node_arrive, m))
        elif ph == _SEND:
            m[_PHASE] = _REQUEST
            m[_COST] = m[_REQ]
            sx = s_extra[n]
            travel(now if sx is None else now + sx(), m, n, m[_DST])
        else:
            complete(now, m)
            th = m[_THREAD]
            if acting_p[th]:
                th_state[th] = _READY
            else:
                if not dedicated[n]:
                    idle[n].remove(th)
                begin(now, th)
        # the node's protocol processing goes on
        if dedicated[n]:
            dispatch_more(n, now)
            return
        x = m[_PROC]
        nm = pick(n) if queue[n] else None
        if nm is None:                     # x stops acting as protocol processor (release)
            acting_p[x] = False
            st = th_state[x]
            if st == _READY:
                begin(now, x)
            elif st != _COMPUTING:         # (a computing one resumes: its end moved already)
                become_idle(now, x, n)
        else:
            st = th_state[x]
            if (st == _COMPUTING or st == _READY) and idle[n]:
                start(n, now, nm, -1)      # an idle processor takes over
                release(now, x, n)
            else:
                start(n, now, nm, x)       # x keeps the protocol role
        if pdq[n]:
            dispatch_more(n, now)

    def release(now: float, x: int, n: int) -> None:
        """Processor ``x`` stops acting as protocol processor."""
        acting_p[x] = False
        st = th_state[x]
        if st == _COMPUTING:          # an interrupted burst resumes (its end moved already)
            return
        if st == _READY:
            begin(now, x)
        else:
            become_idle(now, x, n)

    def become_idle(now: float, x: int, n: int) -> None:
        if dedicated[n]:
            return
        m = pick(n) if queue[n] else None
        if m is None:
            idle[n].append(x)
        else:
            idle[n].append(x)
            start(n, now, m, -1)       # pops x back: it assumes the role

    def begin(now: float, x: int) -> None:
        """Thread ``x`` proceeds to its next record(s)."""
        nonlocal issuer
        n = th_node[x]
        get = th_next[x]
        while True:
            try:
                rec = get()
            except StopIteration:
                th_state[x] = _DONE
                if not acting_p[x]:
                    become_idle(now, x, n)
                return
            if rec[1] == "compute":
                th_state[x] = _COMPUTING
                c = R_COMP + n
                w = rec[2]
                # acting: it runs its own one-way message's send handler, suspended from the start
                end = (hend[x] if acting_p[x] else now) + w
                comp_end[x] = end
                comp_len[x] = w
                comp_start[x] = now
                r_n[c] += 1
                r_arr[c] += 1
                r_arrsum[c] += now
                push(heap, (end, nxt(), compute_done, x))
                return
            d = rec[3]
            if d >= N:
                raise ValueError(f"thread {x}: request to node {d}, but the machine has {N} nodes")
            m = [x, n, d, rec[5], rec[6], rec[7], rec[4], _REQUEST, 0.0, -1, now, d, 0, 0, rec[5]]
            if rec[6] is None:        # one-way: the thread goes on
                th_state[x] = _BETWEEN
                issuer = x
                issue(now, m, n)
                issuer = -1
                continue
            th_state[x] = _BLOCKED
            if queue[n]:
                become_idle(now, x, n)
            elif not dedicated[n]:
                idle[n].append(x)
            if s_send[n] is not None or s_extra[n] is not None:
                issue(now, m, n)
            elif lat_direct is None:
                travel(now, m, n, d)
            else:                          # one level, constant latency (m[_TO] is d)
                push(heap, (now + lat_direct, nxt(), node_arrive, m))
            return

    def issue(now: float, m: list[Any], n: int) -> None:
        ss = s_send[n]
        if ss is None:
            sx = s_extra[n]
            travel(now if sx is None else now + sx(), m, n, m[_DST])
        else:
            m[_PHASE] = _SEND
            m[_COST] = ss()
            m[_TO] = n
            node_arrive(now, m)

    def compute_done(now: float, x: int) -> None:
        end = comp_end[x]
        if end > now or acting_p[x]:  # suspended meanwhile: the burst ends later
            push(heap, (end, nxt(), compute_done, x))
            return
        c = R_COMP + th_node[x]
        r_n[c] -= 1
        c_work[c] += comp_len[x]
        a = comp_start[x]
        r_arrsum[c] -= a
        r_res[c] += now - a
        r_dep[c] += 1
        begin(now, x)

    def complete(now: float, m: list[Any]) -> None:
        nonlocal completed, response_sum, n_cycles, cycle_sum
        completed += 1
        response_sum += now - m[_ISSUE]
        if m[_REPLY] is not None:
            th = m[_THREAD]
            n_cycles += 1
            cycle_sum += now - cyc_start[th]
            cyc_start[th] = now
        if completed == next_mark:
            push(heap, (now, nxt(), mark_event, None))

    def snapshot(now: float) -> Snapshot:
        for r in range(NR):
            if resources[r].kind != "compute":
                flush(r, now)
        for n in range(N):
            # compute: area from the bursts' residences, busy area = work done
            c = R_COMP + n
            r_area[c] = r_res[c] + (r_n[c] * now - r_arrsum[c])
            done = c_work[c]
            for x in procs[n]:
                if th_state[x] == _COMPUTING:   # minus the part of the burst still to run
                    done += comp_len[x] - (comp_end[x] - (max(hend[x], now) if acting_p[x] else now))
            r_barea[c] = done
        return Snapshot(
            time=now, completed=completed, response_sum=response_sum, cycles=n_cycles,
            cycle_sum=cycle_sum, phase_n=phase_n[:], phase_sum=phase_sum[:],
            interrupts=interrupts, area=r_area[:], busy_area=r_barea[:],
            departures=r_dep[:], arrivals=r_arr[:],
            residence=[r_res[r] + (r_n[r] * now - r_arrsum[r]) for r in range(NR)],
            departed_residence=r_res[:])

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
    def start_thread(now: float, x: int) -> None:
        n = th_node[x]
        if not dedicated[n]:
            idle[n].remove(x)
        begin(now, x)

    for x in range(T):
        if not dedicated[th_node[x]]:
            idle[th_node[x]].append(x)   # blocked until it starts
    for x in range(T):
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
                  extra={"time": kernel.now, "compute": {n: s.compute for n, s in enumerate(specs)}})
