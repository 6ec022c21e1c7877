"""Asymptotic and balanced-job bounds enclose the exact throughput."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import mva
from mva.network import ClosedNetwork
from tests.strategies import single_class_networks


def test_aba_formulas_by_hand():
    # D = 3.5, Dmax = 2, Z = 4 (Lazowska et al. 1984, section 5.2)
    b = mva.aba_bounds([1.0, 2.0, 0.5], population=[1, 10], think_time=4.0)
    np.testing.assert_allclose(b.throughput_upper, [1 / 7.5, 0.5])
    np.testing.assert_allclose(b.throughput_lower, [1 / 7.5, 10 / 39.0])
    np.testing.assert_allclose(b.response_lower, [3.5, 16.0])
    np.testing.assert_allclose(b.response_upper, [3.5, 35.0])
    assert b.n_star == pytest.approx(3.75) and b.method == "aba"


def test_bjb_formulas_by_hand():
    # D = 3, Davg = 1, Dmax = 2, N = 4, Z = 6 (Lazowska et al. 1984, section 5.3)
    b = mva.balanced_job_bounds([2.0, 0.5, 0.5], population=4, think_time=6.0)
    assert b.throughput_upper == pytest.approx(min(0.5, 4 / (3 + 6 + 3 * 1 / (1 + 6 / 3))))
    assert b.throughput_lower == pytest.approx(4 / (3 + 6 + 3 * 2 / (1 + 6 / 12)))
    assert b.response_upper == pytest.approx(3 + 3 * 2 / (1 + 6 / 12))
    assert b.method == "bjb"


def test_bjb_tighter_than_aba():
    d, Z = [1.0, 0.8, 0.6, 0.9], 5.0
    N = np.arange(1, 30)
    a, b = mva.aba_bounds(d, N, Z), mva.balanced_job_bounds(d, N, Z)
    assert (b.throughput_lower >= a.throughput_lower - 1e-12).all()
    assert (b.throughput_upper <= a.throughput_upper + 1e-12).all()


def test_bounds_from_network_and_bad_input():
    net = ClosedNetwork.single_class([1.0, 2.0], population=5, think_time=1.0)
    b = mva.aba_bounds(net)
    assert b.population == 5
    assert b.contains(mva.exact_mva(net).throughput[0])
    two = ClosedNetwork(demands=[[1.0], [1.0]], populations=[1, 1])
    with pytest.raises(ValueError, match="single-class network; got 2 classes"):
        mva.aba_bounds(two)
    with pytest.raises(ValueError, match="population must be >= 1; got 0"):
        mva.aba_bounds([1.0], population=0)
    with pytest.raises(ValueError, match=r"kinds\[0\] must be one of 'queue', 'delay'"):
        mva.balanced_job_bounds([1.0], population=2, servers=[2])
    with pytest.raises(ValueError, match="demands must be finite and >= 0; got nan"):
        mva.aba_bounds([float("nan")], population=2)


@given(single_class_networks(kinds=("queue", "queue", "delay", "multi"), max_population=30),
       st.integers(1, 40))
def test_aba_encloses_exact(net, n):
    net = net.with_populations([n])
    x = mva.exact_mva(net).throughput[0]
    b = mva.aba_bounds(net)
    assert b.contains(x)
    r = n / x - net.think_times[0]
    assert b.response_lower * (1 - 1e-9) - 1e-12 <= r <= b.response_upper * (1 + 1e-9) + 1e-12


@given(single_class_networks(kinds=("queue", "queue", "delay"), max_population=30),
       st.integers(1, 40))
def test_bjb_encloses_exact(net, n):
    if (not (np.array(net.kinds) == "queue").any()
            or not net.demands[0][np.array(net.kinds) == "queue"].any()):
        return
    net = net.with_populations([n])
    x = mva.exact_mva(net).throughput[0]
    b = mva.balanced_job_bounds(net)
    assert b.contains(x)
    r = n / x - net.think_times[0]
    assert b.response_lower * (1 - 1e-9) - 1e-12 <= r <= b.response_upper * (1 + 1e-9) + 1e-12


# ----------------------------------------------------------------------
# open networks
# ----------------------------------------------------------------------
def test_open_bounds_bracket_the_exact_response_time():
    from mva.bounds import open_bounds
    from mva.open import OpenNetwork, solve_open
    rng = np.random.default_rng(99)
    for _ in range(150):
        K = int(rng.integers(1, 6))
        d = rng.uniform(0.01, 5.0, size=K)
        lam = rng.uniform(0.0, 0.999) / d.max()
        R = float(solve_open(OpenNetwork(arrival_rates=[lam], demands=[d])).response_time[0])
        bjb, aba = open_bounds(lam, d), open_bounds(lam, d, method="aba")
        assert aba.response_lower <= bjb.response_lower * (1 + 1e-12)
        assert bjb.response_lower <= R * (1 + 1e-12) and R <= bjb.response_upper * (1 + 1e-12)
        assert aba.response_upper == np.inf
    # balanced network: both bounds are exact
    b = open_bounds(0.3, [1.0, 1.0, 1.0])
    assert b.response_lower == pytest.approx(3 / 0.7, rel=1e-14)
    assert b.response_upper == pytest.approx(3 / 0.7, rel=1e-14)


def test_open_bounds_saturation_and_bad_input():
    from mva.bounds import open_bounds
    b = open_bounds([0.5, 0.6], [2.0, 1.0])
    assert b.saturation_rate == 0.5 and np.all(np.isinf(b.response_lower))
    with pytest.raises(ValueError, match="method must be one of 'aba', 'bjb'"):
        open_bounds(0.1, [1.0], method="gb")
    with pytest.raises(ValueError, match="demands must be 1-D"):
        open_bounds(0.1, [0.0, 0.0])
    with pytest.raises(ValueError, match="arrival_rate must be finite and >= 0"):
        open_bounds(-0.1, [1.0])


# ----------------------------------------------------------------------
# multi-chain asymptotic bounds
# ----------------------------------------------------------------------
from hypothesis import settings  # noqa: E402

from tests.strategies import closed_networks  # noqa: E402


@settings(max_examples=150, deadline=None)
@given(closed_networks(kinds=("queue", "delay", "multi"), chains=True))
def test_multiclass_aba_bounds_contain_exact_mva(net):
    from mva.bounds import multiclass_aba_bounds
    b = multiclass_aba_bounds(net)
    X = mva.exact_mva(net).chain_throughput
    assert b.contains(X).all()
    assert np.all(b.throughput_lower <= b.throughput_upper * (1 + 1e-12))
    assert np.all(b.response_lower <= b.response_upper * (1 + 1e-12))


def test_multiclass_aba_bounds_single_customer_is_exact_and_bad_input():
    from mva.bounds import multiclass_aba_bounds
    net = ClosedNetwork(demands=[[1.0, 2.0], [0.5, 0.5]], populations=[1, 0],
                        think_times=[3.0, 0.0])
    b = multiclass_aba_bounds(net)
    assert b.throughput_lower[0] == pytest.approx(1 / 6, rel=1e-14)
    assert b.throughput_upper[0] == pytest.approx(1 / 6, rel=1e-14)
    assert b.throughput_upper[1] == 0.0 and b.response_upper[1] == 0.0
    ld = ClosedNetwork.single_class([1.0], population=2, kinds=["ld"], rates=[[1.0, 2.0]])
    with pytest.raises(ValueError, match="kinds\\[0\\] is 'ld'"):
        multiclass_aba_bounds(ld)


# ----------------------------------------------------------------------
# proportional bounds
# ----------------------------------------------------------------------
@settings(max_examples=200, deadline=None)
@given(single_class_networks(max_stations=6, max_population=40, max_lattice=41))
def test_proportional_bounds_contain_exact_mva(net):
    from hypothesis import assume

    from mva.bounds import proportional_bounds
    assume(bool(((np.array(net.kinds) == "queue") & (net.demands[0] > 0)).any()))
    N = np.arange(1, int(net.populations[0]) + 1)
    pb = proportional_bounds(net, population=N)
    X = np.array([mva.exact_mva(net.with_populations([n])).throughput[0] for n in N])
    assert pb.contains(X).all()
    # the lower bound is exact for one customer
    assert pb.throughput_lower[0] == pytest.approx(X[0], rel=1e-12)


def test_proportional_bounds_balanced_network_is_exact():
    from mva.bounds import proportional_bounds
    b = proportional_bounds([0.5, 0.5, 0.5], population=7)
    X = mva.exact_mva(ClosedNetwork.single_class([0.5, 0.5, 0.5], population=7)).throughput[0]
    assert b.throughput_lower == pytest.approx(X, rel=1e-13)
    assert b.throughput_upper == pytest.approx(X, rel=1e-13)


# ----------------------------------------------------------------------
# geometric bounds (Casale, Muntz and Serazzi 2008)
# ----------------------------------------------------------------------
def _throughput_sequence(loads, Z, n_max):
    """X(1..n_max) of a single-class network from its normalizing constants in 60-digit mpmath.

    An independent route (Buzen's convolution, Bolch et al. 2006 section 8.1):
    ``G(n) = sum_{j} Z^j/j! * g_queues(n - j)`` and ``X(n) = G(n-1)/G(n)``.
    """
    import mpmath

    with mpmath.workdps(60):
        g = [mpmath.mpf(1)] + [mpmath.mpf(0)] * n_max
        for L in loads:
            L = mpmath.mpf(float(L))
            for n in range(1, n_max + 1):
                g[n] += L * g[n - 1]
        z = mpmath.mpf(float(Z))
        G = [mpmath.fsum(z ** j / mpmath.factorial(j) * g[n - j] for j in range(n + 1))
             for n in range(n_max + 1)]
        return np.array([float(G[n - 1] / G[n]) for n in range(1, n_max + 1)])


def _sobol_single_class(n: int, seed: int = 20261124):
    """``n`` single-class designs: 1-6 stations, loads over three decades, Z from 0 to 100 L."""
    from scipy.stats import qmc

    u = qmc.Sobol(d=10, scramble=True, seed=seed).random(n)
    out = []
    for x in u:
        K = 1 + int(x[0] * 6)
        loads = 10.0 ** (-3.0 * x[1:1 + K])
        if x[7] < 0.2:
            loads[:] = loads.max()                               # some balanced networks
        Z = 0.0 if x[8] < 0.25 else float(loads.sum() * 10.0 ** (4.0 * x[8] - 2.0))
        out.append((loads, Z, 1 + int(x[9] * 100)))
    return out


def test_geometric_bounds_contain_exact_on_sobol_designs():
    # 128 networks x N = 1..100: every geometric bound brackets the 60-digit convolution,
    # and the lower one is never below the balanced-job lower bound
    for loads, Z, n_max in _sobol_single_class(128):
        X = _throughput_sequence(loads, Z, n_max)
        N = np.arange(1, n_max + 1)
        g = mva.geometric_bounds(loads, population=N, think_time=Z)
        assert g.contains(X).all(), (loads, Z, n_max)
        R = N / X - Z
        assert np.all(g.response_lower <= R * (1 + 1e-12) + 1e-15)
        assert np.all(R <= g.response_upper * (1 + 1e-12) + 1e-15)
        b = mva.balanced_job_bounds(loads, population=N, think_time=Z)
        assert np.all(g.throughput_lower >= b.throughput_lower * (1 - 1e-12))
        assert np.all(g.throughput_upper <= 1.0 / loads.max() * (1 + 1e-15))


@settings(max_examples=200, deadline=None)
@given(single_class_networks(kinds=("queue", "queue", "delay"), max_stations=6, max_population=40,
                             max_lattice=41))
def test_geometric_bounds_contain_exact_mva(net):
    from hypothesis import assume
    kinds = np.array(net.kinds)
    assume(bool(((kinds == "queue") & (net.demands[0] > 0)).any()))
    N = np.arange(1, int(net.populations[0]) + 1)
    g = mva.geometric_bounds(net, population=N)
    X = np.array([mva.exact_mva(net.with_populations([n])).throughput[0] for n in N])
    assert g.contains(X).all()
    # exact for one customer (lower), never looser than BJB below
    assert g.throughput_lower[0] == pytest.approx(X[0], rel=1e-12)
    b = mva.balanced_job_bounds(net, population=N)
    assert np.all(g.throughput_lower >= b.throughput_lower * (1 - 1e-12))


def test_geometric_bounds_balanced_and_bad_input():
    # a balanced network without think time: both bounds are exact (no L_k < L_max terms)
    X = mva.exact_mva(ClosedNetwork.single_class([0.5, 0.5, 0.5], population=7)).throughput[0]
    g = mva.geometric_bounds([0.5, 0.5, 0.5], population=7)
    assert g.throughput_lower == pytest.approx(X, rel=1e-13)
    assert g.throughput_upper == pytest.approx(X, rel=1e-13)
    assert g.method == "gb"
    # delay stations count as think time
    a = mva.geometric_bounds([1.0, 0.5, 2.0], population=4, kinds=["queue", "queue", "delay"])
    b = mva.geometric_bounds([1.0, 0.5], population=4, think_time=2.0)
    assert a.throughput_lower == b.throughput_lower and a.throughput_upper == b.throughput_upper
    with pytest.raises(ValueError, match=r"kinds\[0\] must be one of 'queue', 'delay'"):
        mva.geometric_bounds([1.0], population=2, kinds=["multi"])
    with pytest.raises(ValueError, match="geometric_bounds needs at least one queueing station"):
        mva.geometric_bounds([1.0], population=2, kinds=["delay"])
    with pytest.raises(ValueError, match="population must be >= 1; got 0"):
        mva.geometric_bounds([1.0], population=0)


# ----------------------------------------------------------------------
# multi-class balanced bounds
# ----------------------------------------------------------------------
def _kerola(net):
    """Kerola's balanced system bounds as Octave's qncmbsb states them (Z = 0, queues only)."""
    D = net.chain_demands
    N = net.populations.astype(float)
    K = D.shape[1]
    lo = N / (D.sum(axis=1) + (N.sum() - 1) * D.max(axis=1))
    with np.errstate(divide="ignore"):
        hi = np.minimum(1 / D.max(axis=1), N / ((K + N.sum() - 1) * D.min(axis=1)))
    return lo, hi


@settings(max_examples=200, deadline=None)
@given(closed_networks(kinds=("queue", "queue", "delay"), chains=True))
def test_multiclass_bjb_bounds_contain_exact_mva(net):
    from mva.bounds import multiclass_aba_bounds, multiclass_bjb_bounds
    b = multiclass_bjb_bounds(net)
    res = mva.exact_mva(net)
    X = res.chain_throughput
    assert b.contains(X).all()
    N = net.populations
    R = np.where(N > 0, N / np.where(X > 0, X, 1.0) - net.think_times, 0.0)
    assert np.all(b.response_lower <= R * (1 + 1e-12) + 1e-12)
    assert np.all(R <= b.response_upper * (1 + 1e-12) + 1e-12)
    # never looser than the asymptotic bounds
    a = multiclass_aba_bounds(net)
    assert np.all(b.throughput_lower >= a.throughput_lower * (1 - 1e-12))
    assert np.all(b.throughput_upper <= a.throughput_upper * (1 + 1e-12))
    # without think time or delays, at least as tight as Kerola's bounds (Octave qncmbsb)
    if (np.array(net.kinds) == "queue").all() and not net.think_times.any():
        lo, hi = _kerola(net)
        pos = N > 0
        assert np.all(b.throughput_lower[pos] >= lo[pos] * (1 - 1e-12))
        assert np.all(b.throughput_upper[pos] <= hi[pos] * (1 + 1e-12))


def test_multiclass_bjb_bounds_single_class_and_bad_input():
    from mva.bounds import multiclass_bjb_bounds
    # one class without think time: the lower bound is the balanced-job lower bound
    net = ClosedNetwork.single_class([1.0, 2.0, 0.5], population=6)
    b = multiclass_bjb_bounds(net)
    assert b.throughput_lower[0] == pytest.approx(mva.balanced_job_bounds(net).throughput_lower,
                                                  rel=1e-14)
    # a chain whose demands are balanced over the stations is bracketed exactly
    two = ClosedNetwork(demands=[[1.0, 2.0], [0.5, 0.5]], populations=[2, 3])
    b = multiclass_bjb_bounds(two)
    assert (b.throughput_lower[1] == pytest.approx(1.0)
            and b.throughput_upper[1] == pytest.approx(1.0))
    assert b.method == "bjb"
    empty = ClosedNetwork(demands=[[1.0, 2.0], [0.5, 0.5]], populations=[2, 0])
    b = multiclass_bjb_bounds(empty)
    assert b.throughput_upper[1] == 0.0 and b.response_upper[1] == 0.0
    multi = ClosedNetwork.single_class([1.0], population=2, kinds=["multi"], servers=[2])
    with pytest.raises(ValueError, match="kinds\\[0\\] is 'multi'"):
        multiclass_bjb_bounds(multi)
    with pytest.raises(ValueError, match="network must be a ClosedNetwork"):
        multiclass_bjb_bounds([[1.0]])


@settings(max_examples=150, deadline=None)
@given(single_class_networks(kinds=("queue", "queue", "delay"), max_stations=6, max_population=40,
                             max_lattice=41))
def test_geometric_queue_bounds_contain_exact_mva(net):
    # every station's mean queue length lies within [queue_lower, queue_upper] at every N,
    # delay and zero-demand stations included (exact MVA as the reference)
    from hypothesis import assume
    kinds = np.array(net.kinds)
    assume(bool(((kinds == "queue") & (net.demands[0] > 0)).any()))
    N = np.arange(1, int(net.populations[0]) + 1)
    g = mva.geometric_bounds(net, population=N)
    assert g.queue_lower.shape == g.queue_upper.shape == (N.size, kinds.size)
    Q = np.array([mva.exact_mva(net.with_populations([n])).queue_length[0] for n in N])
    assert np.all(g.queue_lower <= Q * (1 + 1e-12) + 1e-12)
    assert np.all(Q <= g.queue_upper * (1 + 1e-12) + 1e-12)
    assert np.all(g.queue_upper <= N[:, None])


def test_geometric_queue_bounds_on_sobol_designs_and_other_methods():
    # 64 Sobol networks x N = 1..100 against exact MVA; bounds tighten the trivial [0, N]
    for loads, Z, n_max in _sobol_single_class(64):
        N = np.arange(1, n_max + 1)
        g = mva.geometric_bounds(loads, population=N, think_time=Z)
        Q = np.array([mva.exact_mva(ClosedNetwork.single_class(loads, population=int(n),
                                                               think_time=Z)).queue_length[0]
                      for n in N])
        assert np.all(g.queue_lower <= Q * (1 + 1e-12) + 1e-12), (loads, Z)
        assert np.all(Q <= g.queue_upper * (1 + 1e-12) + 1e-12), (loads, Z)
    # a scalar population gives one row per station; other bound methods give none
    g = mva.geometric_bounds([0.1, 0.1, 0.09, 0.08], population=5)
    assert g.queue_lower.shape == (4,) and np.all(g.queue_lower < g.queue_upper)
    assert mva.balanced_job_bounds([0.1, 0.2], population=3).queue_lower is None
