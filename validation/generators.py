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
fixed order (burst; then destination, size, request cost, reply cost, key).
"""

from __future__ import annotations

import bisect
import functools
import itertools
import random
from dataclasses import dataclass
from typing import Any, Callable, Iterator

from mva._validate import check_choice, check_integer, check_nonnegative, check_probability

from .sim.dists import Dist, as_dist
from .sim.machine import Machine
from .traces import NOSYNC, SEQUENTIAL, Record

__all__ = ["Workload", "Dist", "thread_records", "generate", "stream_rng", "DESTINATIONS"]

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

    Examples
    --------
    >>> w = Workload(burst=Dist.exponential(1000), request_cost=Dist.exponential(100),
    ...              reply_cost=Dist.exponential(100))
    >>> w.burst.family, w.reply_cost.mean
    ('exponential', 100.0)
    """

    burst: Any = 0.0
    request_cost: Any = 0.0
    reply_cost: Any = 0.0
    size: Any = 0.0
    dest: str = "uniform"
    targets: tuple[int, ...] | None = None
    zipf: float = 1.0
    allow_self: bool = False
    keys: int | None = None
    key_zipf: float = 0.0
    p_sequential: float = 0.0
    p_nosync: float = 0.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "burst", as_dist("burst", self.burst))
        object.__setattr__(self, "request_cost", as_dist("request_cost", self.request_cost))
        if self.reply_cost is not None:
            object.__setattr__(self, "reply_cost", as_dist("reply_cost", self.reply_cost))
        object.__setattr__(self, "size", as_dist("size", self.size))
        check_choice("dest", self.dest, DESTINATIONS)
        if self.targets is not None:
            t = tuple(int(x) for x in check_integer("targets", list(self.targets), minimum=0))
            if not t:
                raise ValueError("targets must name at least one node; got ()")
            object.__setattr__(self, "targets", t)
        object.__setattr__(self, "zipf", float(check_nonnegative("zipf", self.zipf)))
        object.__setattr__(self, "key_zipf", float(check_nonnegative("key_zipf", self.key_zipf)))
        if self.keys is not None:
            object.__setattr__(self, "keys", int(check_integer("keys", self.keys, minimum=1)))
        ps = float(check_probability("p_sequential", self.p_sequential))
        pn = float(check_probability("p_nosync", self.p_nosync))
        if ps + pn > 1:
            raise ValueError(f"p_sequential + p_nosync must be <= 1; got {ps + pn!r}")
        object.__setattr__(self, "p_sequential", ps)
        object.__setattr__(self, "p_nosync", pn)

    @property
    def one_way(self) -> bool:
        """True when requests expect no reply."""
        return self.reply_cost is None

    def destinations(self, machine: Machine, node: int) -> tuple[tuple[int, ...], tuple[float, ...] | None]:
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
            raise ValueError(f"a thread on node {node} has no destination (targets={self.targets!r})")
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


#: requests built per batch by :func:`thread_records` (the samplers' block size)
_CHUNK = 256


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
    Stream layout: the burst, size, request-cost and reply-cost
    distributions each draw from their own NumPy generator, seeded in that
    order from ``rng`` (see :meth:`Dist.sampler`; a constant seeds none);
    the destination and then the key of each request are drawn from ``rng``
    itself.  Records are built 256 requests at a time (one block of every
    sampler), which gives exactly the values one-at-a-time drawing would,
    and handed out by a C-level iterator.
    """
    node = machine.thread_nodes[thread]
    rnd = rng.random
    burst = workload.burst.blocks(rng, chunk=_CHUNK)
    dests, cum = workload.destinations(machine, node)
    dest = _chooser(rnd, dests, cum)
    size_d = workload.size
    size_c = int(size_d.mean) if size_d.family == "deterministic" else None
    size = size_d.blocks(rng, chunk=_CHUNK)
    req = workload.request_cost.blocks(rng, chunk=_CHUNK)
    reply = workload.reply_cost.blocks(rng, chunk=_CHUNK) if workload.reply_cost is not None else None
    key = _key_sampler(workload, rnd)
    total = None if requests is None else int(requests)

    n_dests = len(dests)
    uniform = cum is None and n_dests > 1

    def chunks() -> Iterator[list[Record]]:
        left = total
        nones: list[Any] = [None] * _CHUNK  # an empty column, of any field
        ths = [thread] * _CHUNK
        computes = ["compute"] * _CHUNK
        requests_ = ["request"] * _CHUNK
        make = None if plain else functools.partial(_new, Record)
        while left is None or left > 0:
            n = _CHUNK if left is None else min(_CHUNK, left)
            if left is not None:
                left -= n
            if key is not None:  # per request: destination, then key
                pairs = [(dest(), key()) for _ in range(n)]
                ds, ks = [d for d, _ in pairs], [k for _, k in pairs]
            elif uniform:        # dest() inlined: the same draws
                ds, ks = [dests[int(rnd() * n_dests)] for _ in range(n)], nones
            else:
                ds, ks = [dest() for _ in range(n)], nones
            ss = [size_c] * n if size_c is not None else [int(round(v)) for v in size()]
            ys = reply() if reply is not None else nones
            # compute and request records alternately, built by C-level zips
            # (every column has at least n items, ds exactly n)
            bs = burst()
            if n < _CHUNK:
                bs = bs[:n]
            reqs = zip(ths, requests_, nones, ds, ss, req(), ys, ks)
            out: list[Any] = [None] * (2 * n)
            if make is None:                  # compact: a compute record is its burst
                out[0::2] = bs
                out[1::2] = reqs
            else:
                out[0::2] = map(make, zip(ths, computes, bs, nones, nones, nones, nones, nones))
                out[1::2] = map(make, reqs)
            yield out
    return itertools.chain.from_iterable(chunks())


def _key_sampler(w: Workload, rnd: Callable[[], float]) -> Callable[[], str | None] | None:
    if w.keys is None and w.p_sequential == 0.0 and w.p_nosync == 0.0:
        return None
    names = tuple(f"k{i}" for i in range(w.keys or 0))
    cum = None
    if names and w.key_zipf > 0:
        acc = list(itertools.accumulate(1.0 / (i + 1) ** w.key_zipf for i in range(len(names))))
        cum = tuple(x / acc[-1] for x in acc)
    pick = _chooser(rnd, names, cum) if names else (lambda: None)
    ps, pn = w.p_sequential, w.p_nosync

    def key() -> str | None:
        u = rnd()
        if u < ps:
            return SEQUENTIAL
        if u < ps + pn:
            return NOSYNC
        return pick()
    return key


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

