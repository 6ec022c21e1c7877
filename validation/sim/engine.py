"""The compiled simulator: the state arrays, their buffers, and the choice of engine.

:func:`run_machine_compiled` is :func:`validation.sim.hardware.run_machine`
(the readable reference) run by the numba port in :mod:`._compiled`: the
same hardware, the same random streams, the same events in the same order,
hence the same :class:`~validation.sim.hardware.RawRun` up to rounding in the
order of a few sums.

How the two paths see the same random numbers
---------------------------------------------
Every random quantity comes from a NumPy block stream: the machine's
latencies, overheads and INI service times from ``Dist.arrays`` on the
reference's streams (``stream_rng(seed, 1, 0)`` ...), and the threads'
records from :func:`validation.generators.thread_columns` (or a trace).  The
reference hands those values out one at a time; here Python copies them into
per-stream and per-thread buffers which the compiled loop reads.  The loop
returns before any event when a buffer (or the message pool) runs low, Python
tops it up with the next blocks of the same streams and calls the loop again;
an event never finds a buffer empty (it would be reported as an internal
error, never silently).

Choosing the engine
-------------------
``simulate(..., engine="auto")`` (default) runs this path when numba can be
imported, else the reference, with a one-time note; ``engine="compiled"``
insists (error without numba), ``engine="python"`` runs the reference.
Compiled code is cached on disk: numba's cache of :mod:`._compiled`
(``cache=True``) and the loop's native object (:mod:`._native`), both in the
package's ``__pycache__``.  A process that finds the object loads it with
llvmlite and never imports numba; when the directory is not writable the
loop is compiled in memory and the simulator still works, only each new
process compiles again.
"""

from __future__ import annotations

import math
import time as _time
import warnings
from typing import Any, Callable, Iterator, Sequence

import numpy as np

from mva.errors import SaturationError

from ..generators import Columns, stream_rng
from ..traces import NOSYNC, SEQUENTIAL
from .hardware import RawRun, ResourceInfo, Snapshot
from .machine import Machine

__all__ = ["run_machine_compiled", "numba_available", "choose_engine", "ENGINES",
           "WorkloadFeeder", "RecordFeeder"]

#: values of ``simulate(engine=...)``
ENGINES = ("auto", "compiled", "python")

_BLOCK = 256            # the block size of every Dist stream (as in the reference)
_noted = False


def numba_available() -> bool:
    """Whether numba is installed (the compiled path's only requirement).

    Found without importing it: a process that loads the loop's cached
    machine code (:mod:`._native`) never imports numba.
    """
    from importlib.util import find_spec
    try:
        return find_spec("numba") is not None and find_spec("llvmlite") is not None
    except (ImportError, ValueError):
        return False


def choose_engine(engine: str) -> str:
    """``"compiled"`` or ``"python"`` for ``engine`` (see the module notes).

    Examples
    --------
    >>> choose_engine("python")
    'python'
    """
    global _noted
    if engine not in ENGINES:
        raise ValueError(f"engine must be one of {', '.join(map(repr, ENGINES))}; got {engine!r}")
    if engine == "python":
        return "python"
    if numba_available():
        return "compiled"
    if engine == "compiled":
        raise ValueError("engine='compiled' needs numba (pip install numba); "
                         "engine='python' runs the pure-Python reference")
    if not _noted:
        _noted = True
        warnings.warn("numba is not installed: the simulator runs its pure-Python reference "
                      "engine (same results, several times slower); pip install numba for the "
                      "compiled one", RuntimeWarning, stacklevel=3)
    return "python"


# --------------------------------------------------------------------------
# record feeders: per-thread records as columns
# --------------------------------------------------------------------------

#: the per-thread record columns (``r_<name>`` in the state): kind (0 compute,
#: 1 request, 2 idle), cycles (of a compute or idle record), dest, size, request cost, reply cost
#: (nan: one-way), key code, INI size factor
_RECORD = ("kind", "cyc", "dest", "size", "req", "reply", "key", "inif")


class WorkloadFeeder:
    """A thread's records from :func:`validation.generators.thread_columns`."""

    def __init__(self, columns: Iterator[Columns], *, one_way: bool = False,
                 idle: bool = False) -> None:
        self._next = columns.__next__
        self._one_way = one_way and not idle    # idle records block, as compute records do
        self._idle = idle
        self._block: Columns | None = None
        self._at = 0                          # requests of the current block already written

    def fill(self, a: dict[str, Any], x: int, at: int, room: int,
             inif: Callable[[Any], Any] | None) -> tuple[int, int, bool]:
        """Write up to ``room`` records into thread ``x``'s buffer from ``at``.

        Returns ``(records, blocking records, eof)``.
        """
        k = 0
        while room - k >= 2:
            c = self._block
            if c is None:
                try:
                    c = self._block = self._next()
                except StopIteration:
                    return k, k // 2 if self._one_way else k, True
                self._at = 0
            j = self._at
            n = min(len(c.burst) - j, (room - k) // 2)
            lo, hi = at + k, at + k + 2 * n
            src = slice(j, j + n)
            a["r_kind"][x, lo:hi:2] = 0
            a["r_kind"][x, lo + 1:hi:2] = 2 if self._idle else 1
            a["r_cyc"][x, lo:hi:2] = c.burst[src]
            if self._idle:                    # compute-only thread: idle time after each burst
                a["r_cyc"][x, lo + 1:hi:2] = c.req[src]
            a["r_dest"][x, lo + 1:hi:2] = c.dest[src]
            a["r_size"][x, lo + 1:hi:2] = c.size[src]
            a["r_req"][x, lo + 1:hi:2] = c.req[src]
            a["r_reply"][x, lo + 1:hi:2] = np.nan if c.reply is None else c.reply[src]
            a["r_key"][x, lo + 1:hi:2] = -1 if c.key is None else c.key[src]
            if inif is not None:
                a["r_inif"][x, lo + 1:hi:2] = inif(c.size[src])
            k += 2 * n
            self._at = j + n
            if self._at == len(c.burst):
                self._block = None
        # every compute record blocks, and every request with a reply
        return k, k // 2 if self._one_way else k, False


class RecordFeeder:
    """A thread's records from an iterator of trace records (``keys`` maps key strings to codes)."""

    def __init__(self, records: Iterator[Any], keys: dict[Any, int]) -> None:
        self._next = iter(records).__next__
        self._keys = keys

    def fill(self, a: dict[str, Any], x: int, at: int, room: int,
             inif: Callable[[Any], Any] | None) -> tuple[int, int, bool]:
        kind, cyc, dest, size, req, reply, key = [], [], [], [], [], [], []
        keys = self._keys
        eof = False
        nan = math.nan
        for _ in range(room):
            try:
                r = self._next()
            except StopIteration:
                eof = True
                break
            if r.__class__ is float or r[1] == "compute" or r[1] == "idle":
                kind.append(0 if r.__class__ is float or r[1] == "compute" else 2)
                cyc.append(r if r.__class__ is float else r[2])
                dest.append(0)
                size.append(0)
                req.append(0.0)
                reply.append(nan)
                key.append(-1)
            else:
                kind.append(1)
                cyc.append(0.0)
                dest.append(r[3])
                size.append(0 if r[4] is None else r[4])
                req.append(r[5])
                reply.append(nan if r[6] is None else r[6])
                k = r[7]
                code = keys.get(k)
                if code is None:
                    code = keys[k] = len(keys) - 3   # after the three reserved codes
                key.append(code)
        n = len(kind)
        if n:
            sl = slice(at, at + n)
            a["r_kind"][x, sl] = kind
            a["r_cyc"][x, sl] = cyc
            a["r_dest"][x, sl] = dest
            a["r_size"][x, sl] = size
            a["r_req"][x, sl] = req
            a["r_reply"][x, sl] = reply
            a["r_key"][x, sl] = key
            if inif is not None:
                a["r_inif"][x, sl] = np.where(a["r_kind"][x, sl] == 1, inif(a["r_size"][x, sl]),
                                              0.0)
        blocking = int(np.count_nonzero((a["r_kind"][x, at:at + n] != 1)
                                        | ~np.isnan(a["r_reply"][x, at:at + n])))
        return n, blocking, eof


def trace_key_codes() -> dict[Any, int]:
    """A fresh key-string to key-code map for :class:`RecordFeeder` (reserved keys preset)."""
    return {None: -1, NOSYNC: -2, SEQUENTIAL: -3}


# --------------------------------------------------------------------------
# the state
# --------------------------------------------------------------------------

def _stream(dist: Any, rng: Any) -> tuple[int, float, Callable[[], Any] | None]:
    """(kind, constant, block function) of one Dist stream, drawing from ``rng`` as the
    reference."""
    if dist.family == "deterministic" or dist.mean == 0.0:
        return 0, float(dist.mean), None
    return 1, 0.0, dist.arrays(rng, chunk=_BLOCK)


class _Sim:
    """The arrays of one compiled run, and their upkeep between calls of the loop."""

    def __init__(self, machine: Machine, feeders: Sequence[Any], seed: int | None,
                 marks: Sequence[int], qcap: int, n_keys: int) -> None:
        from . import _state as C
        self.C = C
        M = machine
        N, T = M.n_nodes, M.n_threads
        self.M, self.N, self.T = M, N, T
        self.feeders = list(feeders)
        self._resized = False
        clustered = M.cluster_size is not None
        cs = M.cluster_size or N
        K = M.inis
        shared = M.ini_dispatch == "shared"
        rr = M.ini_dispatch == "round_robin"

        # resources, as the reference names them
        res = [ResourceInfo(f"node{n}.protocol", "protocol", s.servers, n)
               for n, s in enumerate(M.nodes)]
        res += [ResourceInfo(f"node{n}.compute", "compute", max(s.compute, 1), n)
                for n, s in enumerate(M.nodes)]
        if clustered:
            if shared:
                res += [ResourceInfo(f"cluster{c}.ini", "ini", K) for c in range(M.n_clusters)]
            else:
                res += [ResourceInfo(f"cluster{c}.ini{k}", "ini", 1)
                        for c in range(M.n_clusters) for k in range(K)]
        self.resources = res
        NR = len(res)
        n_st = (M.n_clusters if shared else M.n_clusters * K) if clustered else 0

        # streams, created in the reference's order: latency, intra, per node, INI
        # (each stream has its own generator, so only the order within a node matters)
        streams = [_stream(M.latency, stream_rng(seed, 1, 0)),
                   _stream(M.intra_latency, stream_rng(seed, 1, 1)),
                   _stream(M.ini_cost, stream_rng(seed, 3, 0))]
        nd_stream = np.full((N, 6), -1, np.int64)
        for n, spec in enumerate(M.nodes):
            rng = stream_rng(seed, 2, n)
            for slot, d in enumerate((spec.interrupt, spec.direct, spec.indirect)):
                if d is not None and not (d.family == "deterministic" and d.mean == 0.0):
                    nd_stream[n, slot] = len(streams)
                    streams.append(_stream(d, rng))
            if spec.send is not None:
                nd_stream[n, 3] = len(streams)
                streams.append(_stream(spec.send, rng))
            for slot, d in ((4, spec.extra_delay), (5, spec.lock)):
                if slot == 5 and spec.dispatch != "spin":
                    continue
                if d is not None and not (d.family == "deterministic" and d.mean == 0.0):
                    nd_stream[n, slot] = len(streams)
                    streams.append(_stream(d, rng))
        self.st_fns = [s[2] for s in streams]

        max_limit = max(int(s.max_acting or 1) for s in M.nodes)
        self.stream_low = 64 + 8 * max_limit
        self.scap = max(16 * _BLOCK, -(-4 * self.stream_low // _BLOCK) * _BLOCK)
        self.B = int(max(4 * _BLOCK, min(16 * _BLOCK, (1 << 20) // T)))   # records per thread
        self.pool_low = 2 * self.B + 2 * T + 64
        pool = 2 * self.pool_low + T
        maxp = max(max(s.compute for s in M.nodes), 1)

        size_cost = M.ini_cost_of_size
        mean = M.ini_cost.mean
        if size_cost is None:
            self.inif = None
        elif mean > 0:
            self.inif = lambda sizes: np.array([size_cost(int(s)) / mean for s in sizes], float)
        else:
            self.inif = lambda sizes: np.array([float(size_cost(int(s))) for s in sizes], float)

        lat_c = M.latency.mean if M.latency.family == "deterministic" else None
        lat_direct = lat_c is not None and not clustered
        pdq_nodes = [n for n, s in enumerate(M.nodes) if s.dispatch == "pdq"]
        nd_pdqrow = np.full(N, -1, np.int64)
        for i, n in enumerate(pdq_nodes):
            nd_pdqrow[n] = i

        iv = np.zeros(C.IV_N, np.int64)
        iv[C.IV_SEQ] = T
        iv[C.IV_HN] = T
        iv[C.IV_NEXTMARK] = marks[0]
        iv[C.IV_ISSUER] = -1
        iv[C.IV_FREE] = 0
        iv[C.IV_NFREE] = pool
        iv[C.IV_POOL_LOW] = self.pool_low
        iv[C.IV_STREAM_LOW] = self.stream_low
        iv[C.IV_LOW] = 1                       # fill every buffer before the first event
        cfg = np.zeros(C.C_N_, np.int64)
        cfg[C.C_N], cfg[C.C_T], cfg[C.C_CLUSTERED], cfg[C.C_K] = N, T, clustered, K
        cfg[C.C_CSIZE], cfg[C.C_SHARED], cfg[C.C_RR] = cs, shared, rr
        cfg[C.C_LATDIRECT], cfg[C.C_QCAP], cfg[C.C_NMARKS] = lat_direct, qcap, len(marks)
        cfg[C.C_SIZECOST], cfg[C.C_RINI] = size_cost is not None, 2 * N
        fcfg = np.zeros(C.F_N)
        fcfg[C.F_LATDIRECT] = lat_c if lat_direct else 0.0
        fcfg[C.F_INIMEAN] = mean

        heap = pool + T + 16
        ht = np.zeros(heap)
        hs = np.zeros(heap, np.int64)
        hc = np.zeros(heap, np.int64)
        hs[:T] = np.arange(T)
        hc[:T] = np.arange(T) * 8 + C.START     # start_thread events at time 0, in thread order

        p_node = np.array(M.thread_nodes, np.int64)
        nd_procs = np.full((N, maxp), -1, np.int64)
        nd_nprocs = np.zeros(N, np.int64)
        nd_idle = np.full((N, maxp), -1, np.int64)
        nd_nidle = np.zeros(N, np.int64)
        for x, n in enumerate(M.thread_nodes):
            nd_procs[n, nd_nprocs[n]] = x
            nd_nprocs[n] += 1
        for x, n in enumerate(M.thread_nodes):   # blocked until it starts
            if not M.nodes[n].dedicated:
                nd_idle[n, nd_nidle[n]] = x
                nd_nidle[n] += 1
        nk = max(n_keys, 1)
        B = self.B
        m_next = np.arange(1, pool + 1, dtype=np.int64)
        m_next[-1] = -1
        rr0 = np.array([(n % cs) % K for n in range(N)], np.int64) if rr else np.zeros(N, np.int64)
        f, i8 = np.zeros, (lambda n, v=0: np.full(n, v, np.int64))
        self.a: dict[str, Any] = dict(
            iv=iv, fv=f(C.FV_N), cfg=cfg, fcfg=fcfg, marks=np.array(marks, np.int64),
            ht=ht, hs=hs, hc=hc,
            nd_cluster=np.array([n // cs for n in range(N)], np.int64),
            nd_dedicated=np.array([s.dedicated for s in M.nodes], np.int64),
            nd_limit=np.array([s.max_acting for s in M.nodes], np.int64),
            nd_pdq=np.array([s.dispatch == "pdq" for s in M.nodes], np.int64),
            nd_nacting=i8(N), nd_qhead=i8(N, -1), nd_qtail=i8(N, -1), nd_qlen=i8(N),
            nd_idle=nd_idle, nd_nidle=nd_nidle, nd_procs=nd_procs, nd_nprocs=nd_nprocs,
            nd_rr=i8(N), nd_seqrun=i8(N), nd_pdqwait=i8(N), nd_hwork=f(N),
            nd_phdep=np.zeros((N, 3), np.int64), nd_phres=f((N, 3)), nd_stream=nd_stream,
            nd_directout=np.array([s.send is None and (s.extra_delay is None or (
                s.extra_delay.family == "deterministic" and s.extra_delay.mean == 0.0))
                for s in M.nodes], np.int64),
            nd_pdqrow=nd_pdqrow, pq=np.zeros((max(len(pdq_nodes), 1), pool), np.int64),
            pq_n=i8(max(len(pdq_nodes), 1)),
            key_on=np.zeros((N, nk), np.int64), key_head=np.full((N, nk), -1, np.int64),
            key_tail=np.full((N, nk), -1, np.int64),
            p_node=p_node, p_state=i8(T, C.BLOCKED), p_acting=i8(T), p_hend=f(T),
            p_comp_start=f(T), p_comp_end=f(T), p_work=f(T), p_dep=i8(T), p_res=f(T),
            p_cyc_start=f(T),
            r_kind=np.zeros((T, B), np.int64), r_cyc=f((T, B)), r_dest=np.zeros((T, B), np.int64),
            r_size=np.zeros((T, B), np.int64), r_req=f((T, B)), r_reply=f((T, B)),
            r_key=np.zeros((T, B), np.int64), r_inif=f((T, B)), r_pos=i8(T), r_len=i8(T),
            r_eof=i8(T), r_nblock=i8(T),
            m_thread=i8(pool), m_src=i8(pool), m_dst=i8(pool), m_req=f(pool), m_reply=f(pool),
            m_key=i8(pool), m_size=i8(pool), m_phase=i8(pool), m_arr=f(pool), m_proc=i8(pool),
            m_issue=f(pool), m_to=i8(pool), m_hop=i8(pool), m_station=i8(pool), m_cost=f(pool),
            m_next=m_next, m_pseq=i8(pool), m_inif=f(pool),
            st_kind=np.array([s[0] for s in streams], np.int64),
            st_const=np.array([s[1] for s in streams], float),
            st_buf=f((len(streams), self.scap)), st_pos=i8(len(streams)), st_len=i8(len(streams)),
            r_n=i8(NR), r_busy=i8(NR), r_area=f(NR), r_barea=f(NR), r_last=f(NR), r_dep=i8(NR),
            r_res=f(NR), r_arrsum=f(NR),
            ini_servers=i8(n_st, K if shared else 1), ini_busy=i8(n_st), ini_head=i8(n_st, -1),
            ini_tail=i8(n_st, -1), rr_out=rr0, rr_in=rr0.copy(),
            nd_spin=np.array([s.dispatch == "spin" for s in M.nodes], np.int64), nd_nspin=i8(N),
            nd_spinwork=f(N), m_spin=f(pool),
        )
        self._layout(self.a)

    # ------------------------------------------------------------------ layout
    def _layout(self, arrays: dict[str, Any]) -> None:
        """Lay ``arrays`` out in the flat ``I``/``F`` pair; ``self.a`` becomes views into it."""
        C = self.C
        n_int = C.HEADER
        n_flt = 0
        offs = {}
        for f in C.FIELDS:
            size = arrays[f].size
            if f in C.FLOAT_FIELDS:
                offs[f] = n_flt
                n_flt += size
            else:
                offs[f] = n_int
                n_int += size
        I = np.zeros(n_int, np.int64)
        F = np.zeros(max(n_flt, 1))
        views = {}
        for k, f in enumerate(C.FIELDS):
            arr = arrays[f]
            o = offs[f]
            I[k] = o
            base = F if f in C.FLOAT_FIELDS else I
            v = base[o:o + arr.size].reshape(arr.shape)
            if (arr.view(np.uint64) if arr.dtype == np.float64 else arr).any():
                v[...] = arr                    # (I and F start zeroed: all-zero bits need no copy)
            views[f] = v
        I[C.W_MAXP] = arrays["nd_idle"].shape[1]
        I[C.W_3] = 3
        I[C.W_NS] = 6
        I[C.W_POOL] = arrays["pq"].shape[1]
        I[C.W_NK] = arrays["key_on"].shape[1]
        I[C.W_SCAP] = arrays["st_buf"].shape[1]
        I[C.W_B] = arrays["r_kind"].shape[1]
        self.I, self.F, self.a = I, F, views

    # ------------------------------------------------------------------ upkeep
    def refill(self, keys: dict[Any, int] | None) -> None:
        """Top up every low buffer, grow the pool and the key tables if needed."""
        a = self.a
        C = self.C
        # random streams
        pos, ln, buf = a["st_pos"], a["st_len"], a["st_buf"]
        for s, fn in enumerate(self.st_fns):
            if fn is None or ln[s] - pos[s] >= 2 * self.stream_low:
                continue
            left = ln[s] - pos[s]
            buf[s, :left] = buf[s, pos[s]:ln[s]]
            k = left
            while k + _BLOCK <= self.scap:
                buf[s, k:k + _BLOCK] = fn()
                k += _BLOCK
            pos[s], ln[s] = 0, k
        # thread records
        B = self.B
        for x, feed in enumerate(self.feeders):
            p, n = int(a["r_pos"][x]), int(a["r_len"][x])
            if a["r_eof"][x] or (n - p >= B // 2 and a["r_nblock"][x] >= 2):
                continue
            while True:
                self._shift(x)
                n = int(a["r_len"][x])
                k, blocking, eof = feed.fill(a, x, n, B - n, self.inif)
                a["r_len"][x] = n + k
                a["r_nblock"][x] += blocking
                if eof:
                    a["r_eof"][x] = 1
                    break
                if a["r_nblock"][x] >= 2:
                    break
                self._grow_records()          # a long run of one-way requests
                B = self.B
        # message pool
        if a["iv"][C.IV_NFREE] < 2 * self.pool_low:
            self._grow_pool()
        if keys is not None and len(keys) - 3 > a["key_on"].shape[1]:
            self._grow_keys(2 * (len(keys) - 3))
        a["iv"][C.IV_LOW] = 0
        if self._resized:
            self._layout(dict(self.a))
            self._resized = False

    def _shift(self, x: int) -> None:
        a = self.a
        p, n = int(a["r_pos"][x]), int(a["r_len"][x])
        if p:
            for f in _RECORD:
                col = a["r_" + f]
                col[x, :n - p] = col[x, p:n]
            a["r_pos"][x], a["r_len"][x] = 0, n - p

    def _grow_records(self) -> None:
        a = self.a
        self.B *= 2
        for f in _RECORD:
            old = a["r_" + f]
            new = np.zeros((old.shape[0], self.B), old.dtype)
            new[:, :old.shape[1]] = old
            a["r_" + f] = new
        self._resized = True
        self.pool_low = 2 * self.B + 2 * self.T + 64
        a["iv"][self.C.IV_POOL_LOW] = self.pool_low

    def _grow_pool(self) -> None:
        a = self.a
        C = self.C
        old = len(a["m_next"])
        new = max(2 * old, 4 * self.pool_low)
        for name in ("m_thread", "m_src", "m_dst", "m_req", "m_reply", "m_key", "m_size",
                     "m_phase", "m_arr", "m_proc", "m_issue", "m_to", "m_hop", "m_station",
                     "m_cost", "m_next", "m_pseq", "m_inif", "m_spin"):
            arr = np.zeros(new, a[name].dtype)
            arr[:old] = a[name]
            a[name] = arr
        # the new messages join the free list in front
        nxt = a["m_next"]
        nxt[old:new - 1] = np.arange(old + 1, new)
        nxt[new - 1] = a["iv"][C.IV_FREE]
        a["iv"][C.IV_FREE] = old
        a["iv"][C.IV_NFREE] += new - old
        heap = new + self.T + 16
        for name in ("ht", "hs", "hc"):
            arr = np.zeros(heap, a[name].dtype)
            arr[:len(a[name])] = a[name]
            a[name] = arr
        pq = np.zeros((a["pq"].shape[0], new), np.int64)
        pq[:, :old] = a["pq"]
        a["pq"] = pq
        self._resized = True

    def _grow_keys(self, n: int) -> None:
        a = self.a
        for name, fill in (("key_on", 0), ("key_head", -1), ("key_tail", -1)):
            old = a[name]
            arr = np.full((old.shape[0], n), fill, np.int64)
            arr[:, :old.shape[1]] = old
            a[name] = arr
        self._resized = True

    # ------------------------------------------------------------------ snapshot
    def snapshot(self) -> Snapshot:
        """The reference's snapshot, from the arrays."""
        a = self.a
        C = self.C
        now = float(a["fv"][C.FV_NOW])
        N = self.N
        NR = len(self.resources)
        r_n = a["r_n"].tolist()
        r_busy = a["r_busy"].tolist()
        r_area = a["r_area"]
        r_barea = a["r_barea"]
        r_last = a["r_last"]
        for r in range(2 * N, NR):             # flush the INIs
            dt = now - r_last[r]
            if dt:
                r_area[r] += r_n[r] * dt
                r_barea[r] += r_busy[r] * dt
                r_last[r] = now
        area = r_area.tolist()
        barea = r_barea.tolist()
        dep = a["r_dep"].tolist()
        res = a["r_res"].tolist()
        arrsum = a["r_arrsum"].tolist()
        m_arr, m_to = a["m_arr"], a["m_to"]
        run_n = [0] * N
        run_arr = [0.0] * N
        run_left = [0.0] * N
        hn = int(a["iv"][C.IV_HN])
        for t, c in zip(a["ht"][:hn].tolist(), a["hc"][:hn].tolist()):
            if c & 7 == C.HANDLER_DONE:
                m = c >> 3
                n = int(m_to[m])
                run_n[n] += 1
                run_arr[n] += float(m_arr[m])
                run_left[n] += t - now
        nspin = a["nd_nspin"].tolist()
        assert run_n == [u - v for u, v in zip(a["nd_nacting"].tolist(), nspin)], run_n
        spin_area = [0.0] * NR
        spinwork = a["nd_spinwork"].tolist()
        phdep = a["nd_phdep"].tolist()
        phres = a["nd_phres"].tolist()
        hwork = a["nd_hwork"].tolist()
        procs: list[list[int]] = [[] for _ in range(N)]
        for x, n in enumerate(a["p_node"].tolist()):
            procs[n].append(x)
        p_state, p_work = a["p_state"].tolist(), a["p_work"].tolist()
        p_acting, p_hend = a["p_acting"].tolist(), a["p_hend"].tolist()
        p_cs, p_ce = a["p_comp_start"].tolist(), a["p_comp_end"].tolist()
        p_dep, p_res = a["p_dep"].tolist(), a["p_res"].tolist()
        for n in range(N):
            waiting = self._waiting(n)
            spinning = self._spinning(n)
            spin_now = sum(now - float(a["m_spin"][m]) for m in spinning)
            r_n[n] = run_n[n] + len(spinning) + len(waiting)
            r_busy[n] = run_n[n] + len(spinning)
            dep[n] = sum(phdep[n])
            res[n] = sum(phres[n])
            arrsum[n] = (run_arr[n] + sum(float(m_arr[m]) for m in spinning)
                         + sum(float(m_arr[m]) for m in waiting))
            area[n] = res[n] + (r_n[n] * now - arrsum[n])
            barea[n] = hwork[n] - run_left[n] + spin_now
            spin_area[n] = spinwork[n] + spin_now
            c = N + n
            present, asum, work = 0, 0.0, 0.0
            for x in procs[n]:
                work += p_work[x]
                if p_state[x] == C.COMPUTING:
                    present += 1
                    asum += p_cs[x]
                    work -= p_ce[x] - (max(p_hend[x], now) if p_acting[x] else now)
            r_n[c] = r_busy[c] = present
            dep[c] = sum(p_dep[x] for x in procs[n])
            res[c] = sum(p_res[x] for x in procs[n])
            arrsum[c] = asum
            area[c] = res[c] + (present * now - asum)
            barea[c] = work
        iv = a["iv"]
        completed = int(iv[C.IV_COMPLETED])
        return Snapshot(
            time=now, completed=completed, response_sum=float(a["fv"][C.FV_RESP_SUM]),
            cycles=completed - int(iv[C.IV_ONEWAY]),
            cycle_sum=math.fsum(a["p_cyc_start"].tolist()),
            phase_n=[sum(phdep[n][ph] for n in range(N)) for ph in range(3)],
            phase_sum=[sum(phres[n][ph] for n in range(N)) for ph in range(3)],
            interrupts=int(iv[C.IV_INTERRUPTS]), area=area, busy_area=barea, departures=dep,
            arrivals=[d + k for d, k in zip(dep, r_n)],
            residence=[res[r] + (r_n[r] * now - arrsum[r]) for r in range(NR)],
            departed_residence=res, spin_area=spin_area)

    def _spinning(self, n: int) -> list[int]:
        """Handlers busy-waiting on a held spin-lock at node ``n`` (per key, in order)."""
        a = self.a
        out: list[int] = []
        if not a["nd_spin"][n]:
            return out
        nxt = a["m_next"]
        for k in np.flatnonzero(a["key_on"][n]).tolist():
            m = int(a["key_head"][n, k])
            while m >= 0:
                out.append(m)
                m = int(nxt[m])
        return out

    def _waiting(self, n: int) -> list[int]:
        """Messages waiting at node ``n`` (FIFO queue; or PDQ eligible heap and key queues)."""
        a = self.a
        nxt = a["m_next"]
        out: list[int] = []
        if a["nd_pdq"][n]:
            row = a["nd_pdqrow"][n]
            out.extend(a["pq"][row, :a["pq_n"][row]].tolist())
            for k in np.flatnonzero(a["key_on"][n]).tolist():
                m = int(a["key_head"][n, k])
                while m >= 0:
                    out.append(m)
                    m = int(nxt[m])
            return out
        m = int(a["nd_qhead"][n])
        while m >= 0:
            out.append(m)
            m = int(nxt[m])
        return out

    def error(self) -> Exception:
        a = self.a
        C = self.C
        iv = a["iv"]
        code, x, d = int(iv[C.IV_ERR]), int(iv[C.IV_ERR_A]), int(iv[C.IV_ERR_B])
        if code == C.ERR_OVERFLOW:
            name = self.resources[x].name
            now = float(a["fv"][C.FV_ERR_T])
            qcap = int(a["cfg"][C.C_QCAP])
            return SaturationError(
                f"{name} holds more than max_queue={qcap} messages at t={now:.6g}: "
                "open (one-way) arrivals exceed its capacity", bottleneck=name)
        if code == C.ERR_DEST:
            return ValueError(f"thread {x}: request to node {d}, but the machine has "
                              f"nodes 0 to {self.N - 1}")
        return RuntimeError(f"compiled simulator: internal buffer error {code} ({x}); "
                            "please report it (engine='python' avoids it)")


def run_machine_compiled(machine: Machine, feeders: Sequence[Any], *, seed: int | None,
                         marks: Sequence[int], on_pause: Callable[[int], None] | None = None,
                         max_queue: int | None = None,
                         keys: dict[Any, int] | None = None, n_keys: int = 0) -> RawRun:
    """:func:`~validation.sim.hardware.run_machine` on the compiled engine.

    Parameters
    ----------
    machine : Machine
    feeders : sequence of WorkloadFeeder or RecordFeeder
        One per thread.
    seed, marks, on_pause, max_queue
        As for :func:`~validation.sim.hardware.run_machine`.
    keys : dict, optional
        The key-code map shared by the :class:`RecordFeeder` objects (it
        grows as new keys are read).
    n_keys : int
        Key codes ``0 .. n_keys-1`` a workload can produce.

    Returns
    -------
    RawRun
        As the reference's, up to rounding in the order of a few sums.
    """
    from . import _native
    from . import _state as C
    run = _native.runner()
    T = machine.n_threads
    if len(feeders) != T:
        raise ValueError(f"sources must have one iterator per thread ({T}); got {len(feeders)}")
    marks = [int(m) for m in marks]
    if not marks or any(b <= a for a, b in zip(marks, marks[1:])) or marks[0] < 1:
        raise ValueError(f"marks must be increasing positive counts; got {marks[:5]}")
    qcap = max_queue if max_queue is not None else 1 << 62
    sim = _Sim(machine, feeders, seed, marks, qcap,
               max(n_keys, 0 if keys is None else len(keys) - 3))
    snapshots: list[Snapshot] = []
    wall0 = _time.perf_counter()
    while True:
        status = run(sim.I, sim.F)
        if status == C.REFILL:
            sim.refill(keys)
            continue
        if status == C.ERROR:
            raise sim.error()
        if status == C.PAUSE:
            snapshots.append(sim.snapshot())
            if on_pause is not None:
                on_pause(len(snapshots) - 1)
            continue
        if status == C.STOP:
            snapshots.append(sim.snapshot())
            end = "stop"
        else:
            snapshots.append(sim.snapshot())
            end = "empty"
        break
    wall = _time.perf_counter() - wall0
    iv = sim.a["iv"]
    return RawRun(resources=sim.resources, snapshots=snapshots,
                  events=int(iv[C.IV_SEQ] - iv[C.IV_HN]), wall_time=wall, end=end,
                  extra={"time": float(sim.a["fv"][C.FV_NOW]),
                         "compute": {n: s.compute for n, s in enumerate(machine.nodes)}})
