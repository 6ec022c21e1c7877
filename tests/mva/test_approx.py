"""Bard-Schweitzer, Linearizer, Seidmann and Rolia: accuracy, diagnostics, non-convergence."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import assume, given
from scipy.optimize import brentq

import mva
from mva.network import ClosedNetwork
from tests.strategies import closed_networks

APPROX = (mva.schweitzer, mva.linearizer)


def _rel_err(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.max(np.abs(a - b) / np.maximum(np.abs(b), 1e-300)))


# --------------------------------------------------------------------------
# values
# --------------------------------------------------------------------------
def test_schweitzer_single_class_solves_its_fixed_point():
    """Single class: Q_k = X D_k (1 + (N-1)/N Q_k) gives Q_k = X D_k / (1 - X D_k (N-1)/N).

    Substituting in N = X (Z + sum_k D_k (1 + (N-1)/N Q_k)) leaves one equation in X,
    solved here independently with Brent's method.
    """
    D, N, Z = np.array([0.605, 2.1, 1.35]), 10, 15.0
    a = (N - 1) / N

    def f(X):
        Q = X * D / (1 - a * X * D)
        return X * (Z + np.sum(D * (1 + a * Q))) - N

    X = brentq(f, 1e-9, 1 / D.max() / a * (1 - 1e-12))
    res = mva.schweitzer(ClosedNetwork.single_class(D, population=N, think_time=Z), tol=1e-13)
    assert res.throughput[0] == pytest.approx(X, rel=1e-10)
    assert res.converged and res.method == "schweitzer" and res.iterations > 1
    assert res.residual <= 1e-13


def test_single_customer_is_exact_for_all_methods():
    net = ClosedNetwork.single_class([1.0, 2.0, 0.5], population=1, think_time=2.0)
    for fn in APPROX:
        res = fn(net)
        assert res.response_time[0] == pytest.approx(3.5)
        assert res.throughput[0] == pytest.approx(1 / 5.5)


def test_linearizer_three_passes_is_chandy_neuse():
    net = ClosedNetwork(demands=[[1.0, 2.0, 0.5], [2.0, 1.0, 0.7]], populations=[5, 5])
    r3 = mva.linearizer(net, passes=3, tol=1e-12)
    rc = mva.linearizer(net, tol=1e-12)
    ex = mva.exact_mva(net)
    assert r3.converged
    assert _rel_err(r3.throughput, ex.throughput) < 2e-3
    assert _rel_err(rc.throughput, r3.throughput) < 1e-3


def test_seidmann_exact_at_one_customer_and_saturation():
    net1 = ClosedNetwork.single_class([4.0, 1.0], population=1, servers=[4, 1], think_time=1.0)
    assert mva.seidmann(net1).response_time[0] == pytest.approx(5.0)
    big = ClosedNetwork.single_class([4.0, 0.1], population=200, servers=[4, 1])
    res = mva.seidmann(big)
    assert res.throughput[0] == pytest.approx(1.0, rel=1e-6)        # m / D
    assert res.utilization[0, 0] == pytest.approx(1.0, rel=1e-6)    # per server
    assert res.method == "seidmann+exact"
    assert res.residence_time.shape == (1, 2)                        # folded back
    np.testing.assert_allclose(res.queue_length.sum(), 200, rtol=1e-9)


def test_seidmann_and_rolia_close_to_exact_multi_server():
    net = ClosedNetwork.single_class([3.0, 1.0, 0.5], population=8, servers=[3, 1, 1],
                                     think_time=4.0)
    ex = mva.exact_mva(net)
    for res in (mva.seidmann(net), mva.rolia(net), mva.schweitzer(net), mva.linearizer(net),
                mva.rolia(net, base="linearizer"), mva.seidmann(net, base="schweitzer")):
        assert _rel_err(res.throughput, ex.throughput) < 0.1, res.method
        np.testing.assert_allclose(res.queue_length.sum() + res.throughput[0] * 4.0, 8, rtol=1e-6)
    assert mva.rolia(net).method == "rolia"
    assert mva.schweitzer(net, multiserver="rolia").method == "schweitzer+rolia"


def test_ld_station_single_customer_is_exact():
    """One customer finds every station empty: R = D / alpha(1) at the LD station."""
    net = ClosedNetwork.single_class([1.0, 1.0], population=1, kinds=["queue", "ld"],
                                     rates=[None, [2.0, 3.0]], think_time=1.0)
    for fn in APPROX:
        res = fn(net)
        assert res.residence_time[0].tolist() == pytest.approx([1.0, 0.5])


def test_priorities_and_chains_lopc_like_network():
    """Threads (chains of one customer) with compute (low) and handler (high) classes."""
    P, W, o, L = 4, 100.0, 20.0, 10.0
    C, K = 3 * P, P + 1
    D, V = np.zeros((C, K)), np.zeros((C, K))
    ch, pr = np.repeat(np.arange(P), 3), np.tile([0, 1, 1], P)
    for r in range(P):
        D[3 * r, r], V[3 * r, r] = W, 1
        for j in range(P):
            if j != r:
                D[3 * r + 1, j], V[3 * r + 1, j] = o / (P - 1), 1 / (P - 1)
        D[3 * r + 1, P], V[3 * r + 1, P] = 2 * L, 1
        D[3 * r + 2, r], V[3 * r + 2, r] = o, 1
    net = ClosedNetwork(demands=D, populations=np.ones(P, int), kinds=("queue",) * P + ("delay",),
                        visits=V, chains=ch, priorities=pr)
    ex = mva.exact_mva(net)
    for fn in APPROX:
        res = fn(net)
        assert res.converged
        assert _rel_err(res.chain_throughput, ex.chain_throughput) < 0.01
    # compute-thread equation of LoPC: with one thread per processor the arriving compute
    # customer finds only other threads' handlers, R_w = (W + o Q_q) / (1 - U_q)
    sch = mva.schweitzer(net, tol=1e-13)
    X = sch.chain_throughput[0]
    Qq = sum(sch.queue_length[3 * s + 1, 0] for s in range(1, P))
    Uq = X * o
    assert sch.residence_time[0, 0] == pytest.approx((W + o * Qq) / (1 - Uq), rel=1e-9)


def _lopc_like(P, W, o, L):
    C, K = 3 * P, P + 1
    D, V = np.zeros((C, K)), np.zeros((C, K))
    for r in range(P):
        D[3 * r, r], V[3 * r, r] = W, 1
        for j in range(P):
            if j != r:
                D[3 * r + 1, j], V[3 * r + 1, j] = o / (P - 1), 1 / (P - 1)
        D[3 * r + 1, P], V[3 * r + 1, P] = 2 * L, 1
        D[3 * r + 2, r], V[3 * r + 2, r] = o, 1
    return ClosedNetwork(demands=D, populations=np.ones(P, int), kinds=("queue",) * P + ("delay",),
                         visits=V, chains=np.repeat(np.arange(P), 3),
                         priorities=np.tile([0, 1, 1], P))


@pytest.mark.parametrize("fn", APPROX)
def test_light_load_does_not_stop_before_priority_terms_settle(fn):
    """Regression: at light load the queue lengths barely move between iterates, so a
    Q-only stopping test ended after the first sweep, before BKT's 1/(1 - U) stretch of the
    compute phase took effect (R was 1000100 instead of 1000120 at the default tol)."""
    net = _lopc_like(2, 1e6, 20.0, 30.0)
    ex = mva.exact_mva(net)
    res = fn(net)          # default tolerance
    assert res.converged
    R_ex = 1.0 / ex.chain_throughput[0]
    assert R_ex == pytest.approx(1000120.0, abs=0.5)
    assert 1.0 / res.chain_throughput[0] == pytest.approx(R_ex, rel=1e-7)


# --------------------------------------------------------------------------
# non-convergence
# --------------------------------------------------------------------------
@pytest.mark.parametrize("fn", APPROX)
def test_non_convergence_warns_raises_or_is_ignored(fn):
    net = ClosedNetwork(demands=[[1.0, 2.0, 0.5], [2.0, 1.0, 0.7]], populations=[20, 20])
    with pytest.warns(mva.ConvergenceWarning, match="did not converge"):
        res = fn(net, max_iter=2)
    assert not res.converged and res.residual > 1e-8 and res.iterations >= 2
    with pytest.raises(mva.ConvergenceError) as info:
        fn(net, max_iter=2, on_fail="raise")
    assert info.value.iterations >= 2 and info.value.residual > 1e-8
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        res = fn(net, max_iter=2, on_fail="ignore")
    assert not res.converged


@pytest.mark.parametrize("fn", APPROX)
def test_tolerance_is_honoured(fn):
    net = ClosedNetwork(demands=[[1.0, 2.0, 0.5], [2.0, 1.0, 0.7]], populations=[20, 20])
    loose, tight = fn(net, tol=1e-3), fn(net, tol=1e-12)
    assert loose.converged and tight.converged
    assert loose.iterations < tight.iterations
    assert tight.residual <= 1e-12
    assert _rel_err(loose.throughput, tight.throughput) < 1e-2


@pytest.mark.parametrize("bad", [dict(tol=0.0), dict(tol=-1.0), dict(max_iter=0),
                                 dict(on_fail="explode"), dict(multiserver="magic")])
def test_bad_options(bad):
    net = ClosedNetwork.single_class([1.0], population=2)
    name = next(iter(bad))
    with pytest.raises(ValueError, match=name):
        mva.schweitzer(net, **bad)


# --------------------------------------------------------------------------
# properties
# --------------------------------------------------------------------------
@given(closed_networks(kinds=("queue", "queue", "delay", "multi"), chains=True, priorities=True,
                       cs2=True, max_population=8, max_lattice=10**6))
def test_littles_law_and_conservation_for_approximations(net):
    for fn in APPROX:
        try:
            res = fn(net, tol=1e-10)
        except mva.SaturationError:   # a high-priority chain can starve a low one (cs2 < 1)
            assume(False)
            return
        assert res.converged
        np.testing.assert_allclose(res.queue_length, res.throughput[:, None] * res.residence_time,
                                   rtol=1e-12, atol=1e-12)
        per_chain = np.bincount(net.chains, weights=res.queue_length.sum(axis=1),
                                minlength=net.n_chains)
        np.testing.assert_allclose(per_chain + res.chain_throughput * net.think_times,
                                   net.populations, rtol=1e-7)


@given(closed_networks(kinds=("queue", "queue", "delay"), chains=True))
def test_approximations_close_to_exact(net):
    ex = mva.exact_mva(net)
    sch = mva.schweitzer(net, tol=1e-12)
    lin = mva.linearizer(net, tol=1e-12)
    on = ex.throughput > 0
    assert _rel_err(sch.throughput[on], ex.throughput[on]) < 0.3
    assert _rel_err(lin.throughput[on], ex.throughput[on]) < 0.05
    # utilization per server stays within [0, 1] up to the approximation error (a station that
    # is never idle, U = 1 exactly, can come out a little above 1 with Linearizer)
    queueing = np.array(net.kinds) != "delay"
    for res in (sch, lin):
        assert (res.utilization >= 0).all()
        assert (res.station_utilization[queueing] <= 1 + 1e-3).all()


def test_linearizer_closer_than_schweitzer_on_average():
    rng = np.random.default_rng(2024)
    err_s, err_l = [], []
    for _ in range(150):
        C, K = rng.integers(1, 4), rng.integers(1, 5)
        D = rng.uniform(0.05, 5.0, (C, K)) * (rng.random((C, K)) < 0.8)
        for c in range(C):
            if D[c].max() == 0:
                D[c, rng.integers(K)] = 1.0
        net = ClosedNetwork(demands=D, populations=rng.integers(1, 7, C),
                            think_times=rng.uniform(0, 10, C) * (rng.random(C) < 0.5),
                            kinds=tuple(rng.choice(["queue", "queue", "delay"], K)))
        ex = mva.exact_mva(net)
        err_s.append(_rel_err(mva.schweitzer(net).queue_length + 1e-12, ex.queue_length + 1e-12))
        err_l.append(_rel_err(mva.linearizer(net).queue_length + 1e-12, ex.queue_length + 1e-12))
    assert np.mean(err_l) < np.mean(err_s) / 5
    assert np.mean(err_l) < 0.01
