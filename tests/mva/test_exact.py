"""Exact MVA: worked values, product-form brute force, and properties on random networks."""

from __future__ import annotations

import itertools
import math
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

import mva
from mva.network import ClosedNetwork
from tests.strategies import closed_networks, single_class_networks


# --------------------------------------------------------------------------
# reference: brute-force product form (normalising constant by enumeration)
# --------------------------------------------------------------------------
def _compositions(n: int, parts: int):
    for cut in itertools.combinations(range(n + parts - 1), parts - 1):
        prev = -1
        out = []
        for c in cut + (n + parts - 1,):
            out.append(c - prev - 1)
            prev = c
        yield out


def _alpha(net: ClosedNetwork, k: int, j: int) -> float:
    kind = net.kinds[k]
    if kind == "multi":
        return float(min(j, net.servers[k]))
    if kind == "ld":
        a = net.rates[k]
        return float(a[min(j, a.size) - 1])
    return 1.0


def _station_factor(net: ClosedNetwork, Dr: np.ndarray, k: int, n: list[int]) -> float:
    """Product-form factor of station k holding n[r] customers of chain r (chain demands Dr)."""
    f = 1.0
    for r, nr in enumerate(n):
        if nr:
            f *= Dr[r, k] ** nr
    if net.kinds[k] == "delay":
        for nr in n:
            f /= math.factorial(nr)
        return f
    tot = sum(n)
    f *= math.factorial(tot)
    for nr in n:
        f /= math.factorial(nr)
    for j in range(1, tot + 1):
        f /= _alpha(net, k, j)
    return f


def brute_force(net: ClosedNetwork):
    """Chain throughputs and per-(chain, station) queue lengths of a product-form network."""
    Dr = net.chain_demands
    R, K = Dr.shape
    Z = net.think_times

    def enumerate_states(pop):
        per_chain = [list(_compositions(int(pop[r]), K + 1)) for r in range(R)]
        for combo in itertools.product(*per_chain):
            w = 1.0
            for r in range(R):
                nz = combo[r][K]
                w *= Z[r] ** nz / math.factorial(nz) if nz else 1.0
            for k in range(K):
                w *= _station_factor(net, Dr, k, [combo[r][k] for r in range(R)])
            yield combo, w

    def G(pop):
        return sum(w for _, w in enumerate_states(pop))

    N = net.populations
    g = G(N)
    Q = np.zeros((R, K))
    for combo, w in enumerate_states(N):
        for r in range(R):
            Q[r] += w * np.array(combo[r][:K], dtype=float)
    Q /= g
    X = np.zeros(R)
    for r in range(R):
        if N[r] > 0:
            X[r] = G(N - np.eye(R, dtype=int)[r]) / g
    return X, Q


def _chain_q(net: ClosedNetwork, res: mva.MVAResult) -> np.ndarray:
    out = np.zeros((net.n_chains, net.n_stations))
    np.add.at(out, net.chains, res.queue_length)
    return out


# --------------------------------------------------------------------------
# worked examples
# --------------------------------------------------------------------------
def test_hand_computed_three_station_example():
    """Single class, Z = 15 with CPU / two disks, solved by hand (exact rationals).

    The numbers are the recursion of Lazowska et al., *Quantitative System
    Performance* (1984), Algorithm 6.1 (section 6.4.1), carried out here in exact
    rational arithmetic: the book's own table was not available to us, so the
    reference values are computed by hand, not copied.
    """
    D = [Fraction(605, 1000), Fraction(21, 10), Fraction(135, 100)]
    Z = Fraction(15)
    Q = [Fraction(0)] * 3
    expected = []
    for n in range(1, 4):
        R = [d * (1 + q) for d, q in zip(D, Q)]
        X = n / (Z + sum(R))
        Q = [X * r for r in R]
        expected.append((X, R, Q))
    # n = 1 by hand: R = D, X = 1 / (15 + 4.055) = 1/19.055
    assert expected[0][0] == Fraction(1000, 19055)
    net = ClosedNetwork.single_class([0.605, 2.1, 1.35], population=3, think_time=15.0)
    res = mva.exact_mva(net)
    X, R, Q = expected[-1]
    assert res.throughput[0] == pytest.approx(float(X), rel=1e-14)
    np.testing.assert_allclose(res.residence_time[0], [float(r) for r in R], rtol=1e-14)
    np.testing.assert_allclose(res.queue_length[0], [float(q) for q in Q], rtol=1e-14)
    assert res.method == "exact" and res.converged and res.iterations == 3


def test_balanced_network_closed_form():
    """K equal queues of demand D, no think time: X(N) = N / ((N + K - 1) D).

    Lazowska et al. (1984), section 5.3 (balanced systems).
    """
    for K, N, D in [(3, 5, 2.0), (10, 40, 0.3), (1, 7, 1.5)]:
        res = mva.exact_mva(ClosedNetwork.single_class([D] * K, population=N))
        assert res.throughput[0] == pytest.approx(N / ((N + K - 1) * D), rel=1e-13)
        np.testing.assert_allclose(res.queue_length[0], N / K, rtol=1e-13)


def test_machine_repairman_closed_form():
    """One queue (service S) and N terminals thinking Z: Erlang's finite-source formula.

    p0 = [sum_n N!/(N-n)! (S/Z)^n]^-1, X = (1 - p0) / S (Kleinrock 1975, section 3.9).
    """
    for N, S, Z in [(5, 1.0, 4.0), (20, 0.5, 8.0), (1, 3.0, 2.0)]:
        terms = [math.factorial(N) / math.factorial(N - n) * (S / Z) ** n for n in range(N + 1)]
        p0 = 1.0 / sum(terms)
        res = mva.exact_mva(ClosedNetwork.single_class([S], population=N, think_time=Z))
        assert res.throughput[0] == pytest.approx((1 - p0) / S, rel=1e-12)


def test_two_chain_example_against_brute_force():
    net = ClosedNetwork(demands=[[1.0, 2.0, 0.5], [2.0, 1.0, 0.7]], populations=[2, 3],
                        think_times=[1.0, 0.5])
    res = mva.exact_mva(net)
    X, Q = brute_force(net)
    np.testing.assert_allclose(res.chain_throughput, X, rtol=1e-12)
    np.testing.assert_allclose(_chain_q(net, res), Q, rtol=1e-12, atol=1e-14)


def test_multi_server_and_ld_against_brute_force():
    net = ClosedNetwork(demands=[[1.0, 2.0, 0.5, 3.0], [2.0, 1.0, 0.7, 0.0]], populations=[3, 2],
                        kinds=("queue", "multi", "delay", "ld"), servers=[1, 3, 1, 1],
                        rates=(None, None, None, [1.0, 1.5, 1.8]), think_times=[1.0, 2.0])
    res = mva.exact_mva(net)
    X, Q = brute_force(net)
    np.testing.assert_allclose(res.chain_throughput, X, rtol=1e-11)
    np.testing.assert_allclose(_chain_q(net, res), Q, rtol=1e-10, atol=1e-13)
    # ld capacity is the largest rate: utilization X D / 1.8
    assert res.utilization[0, 3] == pytest.approx(res.throughput[0] * 3.0 / 1.8)


def test_mm_c_closed_single_customer_sees_no_queue():
    net = ClosedNetwork.single_class([4.0, 1.0], population=1, servers=[3, 1])
    res = mva.exact_mva(net)
    assert res.response_time[0] == pytest.approx(5.0)


def test_chains_with_several_classes_share_the_population():
    # one chain of two classes (phases) behaves as one class with summed demands
    net2 = ClosedNetwork(demands=[[1.0, 0.0, 0.5], [0.0, 2.0, 0.5]], populations=[4], chains=[0, 0],
                         think_times=[3.0])
    net1 = ClosedNetwork.single_class([1.0, 2.0, 1.0], population=4, think_time=3.0)
    r2, r1 = mva.exact_mva(net2), mva.exact_mva(net1)
    assert r2.chain_throughput[0] == pytest.approx(r1.throughput[0], rel=1e-13)
    np.testing.assert_allclose(r2.throughput, r1.throughput[0])
    np.testing.assert_allclose(r2.queue_length.sum(axis=0), r1.queue_length[0], rtol=1e-13)


def test_zero_population_chain_is_idle():
    net = ClosedNetwork(demands=[[1.0, 2.0], [0.5, 0.5]], populations=[3, 0])
    res = mva.exact_mva(net)
    single = mva.exact_mva(ClosedNetwork.single_class([1.0, 2.0], population=3))
    assert res.throughput[1] == 0.0 and not res.queue_length[1].any()
    assert res.throughput[0] == pytest.approx(single.throughput[0], rel=1e-13)


def test_large_lattice_is_refused_with_count():
    net = ClosedNetwork(demands=np.ones((4, 2)), populations=[60, 60, 60, 60])
    with pytest.raises(ValueError, match=r"13845841 population vectors.*max_states"):
        mva.exact_mva(net)
    assert mva.lattice_size([60, 60, 60, 60]) == 61 ** 4


def test_cs2_residual_life_open_limit_is_pollaczek_khinchine():
    # many terminals with a long think time ~ Poisson arrivals at rate N / Z
    N, S, lam = 4000, 1.0, 0.5
    for cs2 in (0.0, 1.0, 3.0):
        net = ClosedNetwork.single_class([S], population=N, think_time=N / lam, cs2=[cs2])
        res = mva.exact_mva(net)
        pk = mva.mg1(float(res.throughput[0]), S, cs2).response_time
        assert res.response_time[0] == pytest.approx(pk, rel=2e-3)


def test_cs2_deterministic_reduces_queueing():
    base = dict(population=5, think_time=2.0)
    r1 = mva.exact_mva(ClosedNetwork.single_class([1.0, 0.5], cs2=[1.0, 1.0], **base))
    r0 = mva.exact_mva(ClosedNetwork.single_class([1.0, 0.5], cs2=[0.0, 1.0], **base))
    assert r0.residence_time[0, 0] < r1.residence_time[0, 0]
    # "ps" is insensitive to cs2
    rp = mva.exact_mva(ClosedNetwork.single_class([1.0, 0.5], cs2=[0.0, 1.0],
                                                  disciplines=["ps", "ps"], **base))
    assert rp.throughput[0] == pytest.approx(r1.throughput[0], rel=1e-14)


# --------------------------------------------------------------------------
# properties on random networks
# --------------------------------------------------------------------------
ALL_KINDS = ("queue", "queue", "delay", "multi")


@given(closed_networks(kinds=ALL_KINDS, chains=True))
def test_exact_equals_product_form_brute_force(net):
    res = mva.exact_mva(net)
    X, Q = brute_force(net)
    np.testing.assert_allclose(res.chain_throughput, X, rtol=1e-9)
    np.testing.assert_allclose(_chain_q(net, res), Q, rtol=1e-8, atol=1e-10)


@given(closed_networks(kinds=ALL_KINDS, chains=True, priorities=True, cs2=True))
def test_littles_law_and_population_conservation(net):
    try:
        res = mva.exact_mva(net)
    except mva.SaturationError:   # a high-priority chain can starve a low one (cs2 < 1)
        assume(False)
        return
    queueing = np.array(net.kinds) != "delay"
    assert (res.station_utilization[queueing] <= 1 + 1e-9).all()
    np.testing.assert_allclose(res.queue_length, res.throughput[:, None] * res.residence_time,
                               rtol=1e-12, atol=1e-12)
    per_chain = np.bincount(net.chains, weights=res.queue_length.sum(axis=1),
                            minlength=net.n_chains)
    np.testing.assert_allclose(per_chain + res.chain_throughput * net.think_times, net.populations,
                               rtol=1e-9)
    np.testing.assert_allclose(res.response_time, res.residence_time.sum(axis=1))


@given(closed_networks(kinds=ALL_KINDS, chains=True))
def test_utilization_per_server_in_unit_interval(net):
    res = mva.exact_mva(net)
    U = res.station_utilization
    queueing = np.array(net.kinds) != "delay"
    assert (res.utilization >= 0).all()
    assert (U[queueing] <= 1 + 1e-9).all()


@given(single_class_networks(kinds=ALL_KINDS, max_population=8), st.integers(1, 4))
def test_throughput_and_response_nondecreasing_in_population(net, extra):
    N = int(net.populations[0])
    prev = mva.exact_mva(net)
    for n in range(N + 1, N + extra + 1):
        cur = mva.exact_mva(net.with_populations([n]))
        assert cur.throughput[0] >= prev.throughput[0] * (1 - 1e-12)
        assert cur.response_time[0] >= prev.response_time[0] * (1 - 1e-12)
        prev = cur


@given(closed_networks(kinds=("queue", "multi", "delay", "multi"), chains=True))
def test_load_dependent_equals_multi_server(net):
    Ntot = int(net.populations.sum())
    kinds, rates = [], []
    for k, kd in enumerate(net.kinds):
        if kd == "multi":
            m = int(net.servers[k])
            kinds.append("ld")
            rates.append(np.minimum(np.arange(1, max(Ntot, m) + 1), m))
        else:
            kinds.append(kd)
            rates.append(None)
    twin = ClosedNetwork(demands=net.demands, populations=net.populations,
                         think_times=net.think_times, kinds=tuple(kinds), rates=tuple(rates),
                         chains=net.chains)
    a, b = mva.exact_mva(net), mva.exact_mva(twin)
    for field in ("throughput", "residence_time", "queue_length", "utilization"):
        np.testing.assert_allclose(getattr(b, field), getattr(a, field), rtol=1e-9, atol=1e-12,
                                   err_msg=field)


@settings(max_examples=20)
@given(closed_networks(max_classes=1, kinds=("queue", "delay")))
def test_single_class_fast_path_matches_general_lattice(net):
    from mva._model import compile_network
    from mva.exact import _exact_lattice
    fast = mva.exact_mva(net)
    slow = _exact_lattice(compile_network(net), 10**6)
    np.testing.assert_allclose(fast.queue_length, slow.queue_length, rtol=1e-12, atol=1e-14)
    np.testing.assert_allclose(fast.throughput, slow.throughput, rtol=1e-12)


def test_single_class_fast_paths_agree_small_and_large_k():
    rng = np.random.default_rng(3)
    d = rng.uniform(0.1, 1.0, 30)
    big = mva.exact_mva(ClosedNetwork.single_class(d, population=25, think_time=3.0))
    from mva._model import compile_network
    from mva.exact import _exact_lattice
    ref = _exact_lattice(compile_network(ClosedNetwork.single_class(d, population=25,
                                                                    think_time=3.0)),
                         10**6)
    np.testing.assert_allclose(big.queue_length, ref.queue_length, rtol=1e-12)


def test_starved_low_priority_class_raises_saturation():
    # the high-priority chain never leaves the station: the low class is never served
    net = ClosedNetwork(demands=[[1.0], [1.0]], populations=[1, 1], priorities=[0, 1])
    with pytest.raises(mva.SaturationError, match="station0") as info:
        mva.exact_mva(net)
    assert info.value.bottleneck == "station0"
