"""Synthetic workloads: seeded generators of trace records.

A :class:`Workload` describes what every thread does: compute a burst, send a
request, block for the reply, repeat.  :func:`thread_records` produces the
record stream of one thread and :func:`generate` the interleaved records of all
threads of a machine -- the very same :class:`~validation.traces.Record`
tuples that :func:`validation.traces.read_trace` yields, so a generated
workload written with :func:`~validation.traces.write_trace` and read back
drives the simulator to a bit-for-bit identical result.

Every thread draws from its own random stream, derived from the seed and the
thread number with :class:`numpy.random.SeedSequence`; values are drawn in a
fixed order (see :func:`thread_columns`).
"""

from __future__ import annotations

import bisect
import functools
import itertools
import random
from dataclasses import dataclass
from typing import Any, Callable, Iterator, NamedTuple

from mva._validate import check_integer

from mva.params import param

from .sim.dists import Dist, dist_param, validate_declared
from .sim.machine import Machine
from .traces import NOSYNC, SEQUENTIAL, Record

__all__ = ["Workload", "Dist", "thread_records", "thread_columns", "Columns", "key_name",
           "generate", "stream_rng", "DESTINATIONS", "KEY_NONE", "KEY_NOSYNC", "KEY_SEQUENTIAL"]

#: destination patterns of :class:`Workload`
DESTINATIONS = ("uniform", "zipf", "remote_cluster")

_new = tuple.__new__


@dataclass(frozen=True, kw_only=True)
class Workload:
    """What each thread of a closed population does.

    Parameters
    ----------
    burst : Dist or float
        Compute time between requests, cycles (``W`` of LoPC, ``C`` of
        Falsafi and Wood).
    request_cost : Dist or float
        Request-handler cost at the destination, cycles (``o``).
    reply_cost : Dist or float or None
        Reply-handler cost at the source, cycles; ``None`` makes every request
        one-way (open arrivals: the thread does not block).
    size : Dist or float
        Message size in bytes (rounded to an integer).
    dest : {"uniform", "zipf", "remote_cluster"}
        ``"uniform"``: any target node other than the sender's own, equally
        likely; ``"zipf"``: target ``i`` (in the order of ``targets``) with
        probability proportional to ``1 / (i + 1) ** zipf``;
        ``"remote_cluster"``: uniform over the nodes of the other clusters.
    targets : tuple of int, optional
        Candidate destination nodes (default: every node).  The sender's own
        node is excluded unless ``allow_self``.
    zipf : float
        Skew exponent for ``dest="zipf"`` (0 is uniform).
    allow_self : bool
        Whether a thread may send to its own node.
    keys : int, optional
        Number of distinct synchronization keys (``"k0"`` ... ); ``None`` (default)
        gives requests no key.
    key_zipf : float
        Skew of the key choice (0 uniform).
    p_sequential, p_nosync : float
        Probabilities that a request carries the reserved ``"sequential"`` or
        ``"nosync"`` key instead.
    idle : Dist or float, optional
        A *compute-only* thread: after each burst its processor is idle for
        this time (free for handlers of a multiplexed node) instead of
        sending a request; the request fields are then unused.  ``None``
        (default): requests.  Idle records exist only in generated streams
        (kind ``"idle"``), not in the trace file formats.

    Examples
    --------
    >>> w = Workload(burst=Dist.exponential(1000), request_cost=Dist.exponential(100),
    ...              reply_cost=Dist.exponential(100))
    >>> w.burst.family, w.reply_cost.mean
    ('exponential', 100.0)
    """

    burst: Any = dist_param(symbol="W", meaning="compute time between requests")
    request_cost: Any = dist_param(symbol="o", meaning="request-handler cost at the destination")
    reply_cost: Any = dist_param(symbol="o_reply", meaning="reply-handler cost at the source "
                                 "(None: one-way requests)", optional=True)
    size: Any = dist_param(symbol="size", meaning="message size (rounded to an integer)",
                           unit="bytes")
    dest: str = param(symbol="dest", meaning="how a thread chooses the destination node",
                      unit="", kind="choice", choices=DESTINATIONS, default="uniform", cli=False)
    targets: tuple[int, ...] | None = param(
        symbol="targets", meaning="candidate destination nodes (None: every node)", unit="",
        kind="object", optional=True, default=None, cli=False,
        note="a non-empty sequence of node numbers >= 0, or None")
    zipf: float = param(symbol="zipf", meaning="skew exponent of dest='zipf' (0: uniform)",
                        unit="", low=0, default=1.0, cli=False)
    allow_self: bool = param(symbol="allow_self", meaning="whether a thread may send to its "
                             "own node", unit="", kind="object", default=False, cli=False,
                             note="True or False")
    keys: int | None = param(symbol="keys", meaning="distinct synchronization keys (None: "
                             "requests carry no key)", unit="", kind="int", low=1,
                             optional=True, default=None, cli=False)
    key_zipf: float = param(symbol="key_zipf", meaning="skew of the key choice (0: uniform)",
                            unit="", low=0, default=0.0, cli=False)
    p_sequential: float = param(symbol="f_sequential", meaning="probability that a request "
                                "carries the 'sequential' key", unit="", low=0, high=1,
                                default=0.0, cli=False)
    p_nosync: float = param(symbol="f_nosync", meaning="probability that a request carries "
                            "the 'nosync' key (p_sequential + p_nosync <= 1)", unit="", low=0,
                            high=1, default=0.0, cli=False)
    idle: Any = dist_param(symbol="I", meaning="compute-only thread: idle time after each burst "
                           "(None: requests)", default=None, optional=True)

    def __post_init__(self) -> None:
        v = validate_declared(self)
        if self.targets is not None:
            t = tuple(int(x) for x in check_integer("targets", list(self.targets), minimum=0))
            if not t:
                raise ValueError("targets must name at least one node; got ()")
            object.__setattr__(self, "targets", t)
        object.__setattr__(self, "zipf", float(v["zipf"]))
        object.__setattr__(self, "key_zipf", float(v["key_zipf"]))
        if self.keys is not None:
            object.__setattr__(self, "keys", int(v["keys"]))
        ps = float(v["p_sequential"])
        pn = float(v["p_nosync"])
        if ps + pn > 1:
            raise ValueError(f"p_sequential + p_nosync must be <= 1; got {ps + pn!r}")
        object.__setattr__(self, "p_sequential", ps)
        object.__setattr__(self, "p_nosync", pn)

    @property
    def one_way(self) -> bool:
        """True when requests expect no reply."""
        return self.reply_cost is None

    def destinations(self, machine: Machine,
                     node: int) -> tuple[tuple[int, ...], tuple[float, ...] | None]:
        """Candidate destinations of a thread on ``node`` and their cumulative weights.

        Returns ``(nodes, cumulative)``; ``cumulative`` is ``None`` for a
        uniform choice.
        """
        n = machine.n_nodes
        cands = self.targets if self.targets is not None else tuple(range(n))
        bad = [c for c in cands if c >= n]
        if bad:
            raise ValueError(f"targets must be node numbers < {n}; got {bad[0]}")
        if self.dest == "remote_cluster":
            if machine.cluster_size is None or machine.n_clusters < 2:
                raise ValueError("dest='remote_cluster' needs a machine with at least two clusters")
            mine = machine.cluster_of(node)
            cands = tuple(c for c in cands if machine.cluster_of(c) != mine)
        if not self.allow_self:
            cands = tuple(c for c in cands if c != node)
        if not cands:
            raise ValueError(f"a thread on node {node} has no destination "
                             f"(targets={self.targets!r})")
        if self.dest != "zipf" or self.zipf == 0.0:
            return cands, None
        w = list(itertools.accumulate(1.0 / (i + 1) ** self.zipf for i in range(len(cands))))
        total = w[-1]
        return cands, tuple(x / total for x in w)


def stream_rng(seed: int | None, *key: int) -> random.Random:
    """An independent :class:`random.Random` for the stream named by ``key``.

    ``stream_rng(seed, 0, t)`` is thread ``t``'s workload stream; the simulator
    uses other keys for the network, nodes and INIs.  Derived with
    :class:`numpy.random.SeedSequence` (``spawn_key=key``).

    Examples
    --------
    >>> stream_rng(1, 0, 3).random() == stream_rng(1, 0, 3).random()
    True
    >>> stream_rng(1, 0, 3).random() == stream_rng(1, 0, 4).random()
    False
    """
    import numpy as np
    ss = np.random.SeedSequence(seed, spawn_key=tuple(int(k) for k in key))
    state = ss.generate_state(4, dtype=np.uint64)
    return random.Random(int.from_bytes(state.tobytes(), "little"))


#: requests per block of :func:`thread_columns` (the samplers' block size)
_CHUNK = 1024

#: key codes of :class:`Columns` (``k<i>`` is code ``i >= 0``)
KEY_NONE, KEY_NOSYNC, KEY_SEQUENTIAL = -1, -2, -3


class Columns(NamedTuple):
    """One block of a thread's requests as NumPy columns (see :func:`thread_columns`).

    ``burst`` is the compute burst before each request; ``reply`` is ``None``
    for one-way requests; ``key`` holds key codes (:data:`KEY_NONE`,
    :data:`KEY_NOSYNC`, :data:`KEY_SEQUENTIAL`, or ``i`` for ``"k<i>"``).
    """

    burst: Any
    dest: Any
    size: Any
    req: Any
    reply: Any
    key: Any


def key_name(code: int) -> str | None:
    """The key string of a key code of :class:`Columns`.

    Examples
    --------
    >>> key_name(3), key_name(KEY_NOSYNC), key_name(KEY_NONE)
    ('k3', 'nosync', None)
    """
    if code >= 0:
        return f"k{code}"
    return {KEY_NONE: None, KEY_NOSYNC: NOSYNC, KEY_SEQUENTIAL: SEQUENTIAL}[code]


def _chooser(rnd: Callable[[], float], items: tuple[Any, ...],
             cum: tuple[float, ...] | None) -> Callable[[], Any]:
    n = len(items)
    if n == 1:
        only = items[0]
        return lambda: only
    if cum is None:
        return lambda: items[int(rnd() * n)]
    bis = bisect.bisect_right
    last = n - 1
    return lambda: items[min(bis(cum, rnd()), last)]


def _key_sampler(w: Workload, rnd: Callable[[], float]) -> Callable[[], int] | None:
    """Per request: one uniform for the class, then (for a named key) one for the key; a key
    code."""
    if w.keys is None and w.p_sequential == 0.0 and w.p_nosync == 0.0:
        return None
    codes = tuple(range(w.keys or 0))
    cum = None
    if codes and w.key_zipf > 0:
        acc = list(itertools.accumulate(1.0 / (i + 1) ** w.key_zipf for i in range(len(codes))))
        cum = tuple(x / acc[-1] for x in acc)
    pick = _chooser(rnd, codes, cum) if codes else (lambda: KEY_NONE)
    ps, pn = w.p_sequential, w.p_nosync

    def key() -> int:
        u = rnd()
        if u < ps:
            return KEY_SEQUENTIAL
        if u < ps + pn:
            return KEY_NOSYNC
        return pick()
    return key


def _python_uniforms(rng: random.Random) -> Callable[[int], Any]:
    """``f(n)``: the next ``n`` values of ``rng.random()`` as an array, drawn by NumPy.

    NumPy's MT19937 takes over ``rng``'s state (the same generator), and each
    double is built from two 32-bit outputs exactly as CPython does:
    ``((a >> 5) * 2**26 + (b >> 6)) / 2**53``.  ``rng`` itself must not be
    used afterwards.
    """
    import numpy as np
    state = rng.getstate()[1]
    bg = np.random.MT19937()
    bg.state = {"bit_generator": "MT19937",
                "state": {"key": np.array(state[:-1], dtype=np.uint32), "pos": state[-1]}}

    def draw(n: int) -> Any:
        raw = bg.random_raw(2 * n)
        a = (raw[0::2] >> 5).astype(np.float64)
        b = (raw[1::2] >> 6).astype(np.float64)
        return (a * 67108864.0 + b) * (1.0 / 9007199254740992.0)
    return draw


def thread_columns(workload: Workload, machine: Machine, thread: int, rng: random.Random,
                   requests: int | None = None) -> Iterator[Columns]:
    """The requests of one thread in blocks of NumPy columns (at most 1024 requests each).

    :func:`thread_records` builds its records from these blocks, and the
    compiled simulator reads them directly, so both see the same values.

    Notes
    -----
    Stream layout: the burst, size, request-cost and reply-cost
    distributions each draw from their own NumPy generator, seeded in that
    order from ``rng`` (see :meth:`Dist.arrays`; a constant seeds none);
    ``rng`` itself then draws, request by request, the destination (one
    uniform, none when there is a single candidate) and then the key (one
    uniform for sequential / nosync / named, and one more to pick a named
    key among several).  Without keys the destinations' uniforms are drawn
    by NumPy from ``rng``'s own state (:func:`_python_uniforms`), giving the
    very values ``rng.random()`` would.

    Examples
    --------
    >>> from validation.sim.machine import Machine, NodeSpec
    >>> m = Machine.homogeneous(3, NodeSpec(compute=1), latency=1)
    >>> w = Workload(burst=Dist.exponential(10), request_cost=1, reply_cost=None)
    >>> c = next(thread_columns(w, m, 0, stream_rng(1, 0, 0), requests=5))
    >>> len(c.burst), sorted(set(c.dest.tolist())) <= [1, 2], c.reply is None
    (5, True, True)
    """
    import numpy as np
    node = machine.thread_nodes[thread]
    burst = workload.burst.arrays(rng, chunk=_CHUNK)
    if workload.idle is not None:       # compute-only: bursts and idle times (in req), dest -1
        idle = workload.idle.arrays(rng, chunk=_CHUNK)
        none = np.full(_CHUNK, -1, dtype=np.int64)
        zero = np.zeros(_CHUNK, dtype=np.int64)
        left_i = None if requests is None else int(requests)
        while left_i is None or left_i > 0:
            n = _CHUNK if left_i is None else min(_CHUNK, left_i)
            if left_i is not None:
                left_i -= n
            yield Columns(burst=burst()[:n], dest=none[:n], size=zero[:n], req=idle()[:n],
                          reply=None, key=None)
        return
    dests, cum = workload.destinations(machine, node)
    size_d = workload.size
    size_c = int(size_d.mean) if size_d.family == "deterministic" else None
    size = size_d.arrays(rng, chunk=_CHUNK)
    req = workload.request_cost.arrays(rng, chunk=_CHUNK)
    reply = (workload.reply_cost.arrays(rng, chunk=_CHUNK) if workload.reply_cost is not None
             else None)
    key = _key_sampler(workload, rng.random)
    n_d = len(dests)
    if key is None and n_d > 1:
        uniforms = _python_uniforms(rng)
        dest_arr = np.asarray(dests, dtype=np.int64)
        cum_arr = None if cum is None else np.asarray(cum)
    else:
        dest = _chooser(rng.random, dests, cum)
    left = None if requests is None else int(requests)
    while left is None or left > 0:
        n = _CHUNK if left is None else min(_CHUNK, left)
        if left is not None:
            left -= n
        ks = None
        if key is not None:        # per request: destination, then key
            pairs = [(dest(), key()) for _ in range(n)]
            ds = np.array([d for d, _ in pairs], dtype=np.int64)
            ks = np.array([k for _, k in pairs], dtype=np.int64)
        elif n_d == 1:
            ds = np.full(n, dests[0], dtype=np.int64)
        elif cum_arr is None:
            ds = dest_arr[(uniforms(n) * n_d).astype(np.int64)]
        else:
            ds = dest_arr[np.minimum(np.searchsorted(cum_arr, uniforms(n), side="right"), n_d - 1)]
        ss = np.full(_CHUNK, size_c, dtype=np.int64) if size_c is not None else \
            np.round(size()).astype(np.int64)
        c = Columns(burst=burst(), dest=ds, size=ss, req=req(), reply=reply() if reply else None,
                    key=ks)
        if n < _CHUNK:
            c = Columns(*(None if v is None else v[:n] for v in c))
        yield c


def thread_records(workload: Workload, machine: Machine, thread: int, rng: random.Random,
                   requests: int | None = None, *, plain: bool = False) -> Iterator[Record]:
    """The records of one thread: compute, request, compute, request, ...

    Parameters
    ----------
    workload : Workload
    machine : Machine
        Gives the thread's node and the candidate destinations.
    thread : int
        Thread number.
    rng : random.Random
        The thread's stream (normally ``stream_rng(seed, 0, thread)``).
    requests : int, optional
        Number of (compute, request) pairs; ``None`` is endless.
    plain : bool
        The simulator's compact form of the same stream: a compute record is
        its burst length alone (a float) and a request record a plain tuple
        with the fields of :class:`Record`.  About three times cheaper to
        build; :func:`validation.simulate` reads it.

    Returns
    -------
    iterator of Record
        Compute and request records alternately.

    Notes
    -----
    The values are those of :func:`thread_columns` (see its stream layout),
    handed out by a C-level iterator.
    """
    import numpy as np
    names = np.array([SEQUENTIAL, NOSYNC, None] + [f"k{i}" for i in range(workload.keys or 0)],
                     dtype=object)

    def chunks() -> Iterator[list[Record]]:
        nones: list[Any] = [None] * _CHUNK  # an empty column, of any field
        ths = [thread] * _CHUNK
        computes = ["compute"] * _CHUNK
        requests_ = ["request"] * _CHUNK
        make = None if plain else functools.partial(_new, Record)
        for c in thread_columns(workload, machine, thread, rng, requests):
            n = len(c.burst)
            ks = nones if c.key is None else names[c.key + 3].tolist()
            ys = nones if c.reply is None else c.reply.tolist()
            reqs = zip(ths, requests_, nones, c.dest.tolist(), c.size.tolist(), c.req.tolist(),
                       ys, ks)
            bs = c.burst.tolist()
            if workload.idle is not None:     # compute-only: idle records after the bursts
                reqs = zip(ths, ["idle"] * n, c.req.tolist(), nones, nones, nones, nones, nones)
            out: list[Any] = [None] * (2 * n)
            if make is None:                  # compact: a compute record is its burst
                out[0::2] = bs
                out[1::2] = reqs
            else:
                out[0::2] = map(make, zip(ths, computes, bs, nones, nones, nones, nones, nones))
                out[1::2] = map(make, reqs)
            yield out
    return itertools.chain.from_iterable(chunks())


def generate(workload: Workload, machine: Machine, *, requests: int, seed: int | None = 0,
             threads: tuple[int, ...] | None = None) -> Iterator[Record]:
    """All threads' records, interleaved round-robin (compute and request pairs).

    Parameters
    ----------
    workload : Workload
    machine : Machine
    requests : int
        Requests per thread.
    seed : int
        Seed; thread ``t`` uses ``stream_rng(seed, 0, t)``.
    threads : tuple of int, optional
        Only these threads (default: all).

    Yields
    ------
    Record

    Examples
    --------
    >>> from validation.sim.machine import Machine, NodeSpec
    >>> m = Machine.homogeneous(4, NodeSpec(compute=1), latency=50)
    >>> w = Workload(burst=Dist.exponential(1000), request_cost=100, reply_cost=100)
    >>> recs = list(generate(w, m, requests=2, seed=7))
    >>> len(recs), recs[0].kind, recs[1].kind, recs[2].thread
    (16, 'compute', 'request', 1)
    >>> recs == list(generate(w, m, requests=2, seed=7))
    True
    """
    n = int(check_integer("requests", requests, minimum=0))
    ths = tuple(range(machine.n_threads)) if threads is None else tuple(threads)
    its = [thread_records(workload, machine, t, stream_rng(seed, 0, t), n) for t in ths]
    nexts = [it.__next__ for it in its]
    for _ in range(n):
        for nx in nexts:
            yield nx()
            yield nx()
