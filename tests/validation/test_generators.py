"""Seeded synthetic workloads and distributions."""

from __future__ import annotations

import collections
import random
import statistics

import pytest

from validation.generators import Workload, generate, stream_rng, thread_records
from validation.sim.dists import Dist
from validation.sim.machine import Machine, NodeSpec
from validation.traces import NOSYNC, SEQUENTIAL


@pytest.mark.parametrize("dist, cs2", [
    (Dist.exponential(50.0), 1.0),
    (Dist.constant(50.0), 0.0),
    (Dist(family="erlang", mean=50.0, k=4), 0.25),
    (Dist(family="hyperexponential", mean=50.0, cs2=4.0), 4.0),
    (Dist(family="uniform", mean=50.0, width=30.0), 30.0 ** 2 / (3 * 50.0 ** 2)),
    (Dist.from_cs2(50.0, 0.5), 0.5),
])
def test_distribution_moments(dist, cs2) -> None:
    draw = dist.sampler(random.Random(42))
    xs = [draw() for _ in range(60_000)]
    mean = statistics.fmean(xs)
    assert dist.cs2 == pytest.approx(cs2)
    assert mean == pytest.approx(50.0, rel=0.03)
    assert statistics.pvariance(xs) / mean ** 2 == pytest.approx(cs2, rel=0.1, abs=1e-12)
    assert min(xs) >= 0


def test_dist_validation() -> None:
    with pytest.raises(ValueError, match="cs2 must be > 1"):
        Dist(family="hyperexponential", mean=1.0, cs2=0.5)
    with pytest.raises(ValueError, match="family must be one of"):
        Dist(family="pareto")
    with pytest.raises(ValueError, match="mean must be finite and >= 0"):
        Dist(mean=-1)


def test_same_seed_same_records_and_streams_per_thread() -> None:
    m = Machine.homogeneous(4, NodeSpec(compute=1), latency=1)
    w = Workload(burst=Dist.exponential(10), request_cost=1, reply_cost=1)
    a = list(generate(w, m, requests=20, seed=5))
    assert a == list(generate(w, m, requests=20, seed=5))
    assert a != list(generate(w, m, requests=20, seed=6))
    # the interleaved trace holds exactly each thread's own stream
    for t in range(4):
        mine = [r for r in a if r.thread == t]
        assert mine == list(thread_records(w, m, t, stream_rng(5, 0, t), 20))


def test_uniform_destinations_exclude_self() -> None:
    m = Machine.homogeneous(5, NodeSpec(compute=1), latency=1)
    w = Workload(burst=1, request_cost=1, reply_cost=1)
    dests = collections.Counter(r.dest for r in thread_records(w, m, 2, random.Random(1), 20_000)
                                if r.kind == "request")
    assert set(dests) == {0, 1, 3, 4}
    assert max(dests.values()) / min(dests.values()) < 1.1


def test_zipf_destinations_are_skewed() -> None:
    m = Machine.homogeneous(6, NodeSpec(compute=1), latency=1)
    w = Workload(burst=1, request_cost=1, reply_cost=1, dest="zipf", zipf=1.0)
    counts = collections.Counter(r.dest for r in thread_records(w, m, 0, random.Random(1), 30_000)
                                 if r.kind == "request")
    freq = [counts[d] for d in (1, 2, 3, 4, 5)]
    assert freq == sorted(freq, reverse=True)
    assert freq[0] / freq[1] == pytest.approx(2.0, rel=0.08)  # 1/1 : 1/2


def test_remote_cluster_destinations() -> None:
    m = Machine(nodes=(NodeSpec(compute=1),) * 6, cluster_size=3, inis=1)
    w = Workload(burst=1, request_cost=1, reply_cost=1, dest="remote_cluster")
    for t in range(6):
        for r in thread_records(w, m, t, random.Random(t), 200):
            if r.kind == "request":
                assert m.cluster_of(r.dest) != m.cluster_of(t)
    with pytest.raises(ValueError, match="two clusters"):
        list(thread_records(w, Machine.homogeneous(2, NodeSpec()), 0, random.Random(0), 1))


def test_key_distribution() -> None:
    m = Machine.homogeneous(2, NodeSpec(compute=1), latency=1)
    w = Workload(burst=1, request_cost=1, reply_cost=1, keys=3, p_sequential=0.1, p_nosync=0.2)
    keys = collections.Counter(r.key for r in thread_records(w, m, 0, random.Random(3), 20_000)
                               if r.kind == "request")
    assert set(keys) == {"k0", "k1", "k2", SEQUENTIAL, NOSYNC}
    assert keys[SEQUENTIAL] / 20_000 == pytest.approx(0.1, abs=0.01)
    assert keys[NOSYNC] / 20_000 == pytest.approx(0.2, abs=0.012)


def test_one_way_and_sizes() -> None:
    m = Machine.homogeneous(2, NodeSpec(compute=1), latency=1)
    w = Workload(burst=1, request_cost=1, reply_cost=None,
                 size=Dist(family="uniform", mean=100, width=50))
    recs = [r for r in thread_records(w, m, 0, random.Random(3), 500) if r.kind == "request"]
    assert all(r.reply_cost is None for r in recs)
    assert all(50 <= r.size <= 150 and isinstance(r.size, int) for r in recs)


@pytest.mark.parametrize("kw", [
    dict(),                                                          # uniform destinations
    dict(dest="zipf", zipf=1.1, size=Dist.exponential(64)),
    dict(keys=3, p_sequential=0.1, p_nosync=0.1, reply_cost=None),  # keyed, one-way
    dict(burst=Dist(family="hyperexponential", mean=300.0, cs2=3.0)),
])
def test_plain_stream_is_the_same_records(kw) -> None:
    # the simulator's compact stream: a compute record is its burst, a request a tuple
    base = dict(burst=Dist.exponential(500.0), request_cost=Dist.exponential(40.0),
                reply_cost=Dist.constant(30.0))
    w = Workload(**{**base, **kw})
    m = Machine.homogeneous(5, NodeSpec(compute=1), latency=10)
    for t in range(m.n_threads):
        recs = list(thread_records(w, m, t, stream_rng(3, 0, t), requests=300))  # not whole chunks
        plain = list(thread_records(w, m, t, stream_rng(3, 0, t), requests=300, plain=True))
        assert len(recs) == len(plain) == 600
        for r, p in zip(recs, plain):
            if r.kind == "compute":
                assert type(p) is float and p == r.cycles
            else:
                assert type(p) is tuple and p == tuple(r)
