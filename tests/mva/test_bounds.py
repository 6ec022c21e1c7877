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


@given(single_class_networks(kinds=("queue", "queue", "delay"), max_population=30), st.integers(1, 40))
def test_bjb_encloses_exact(net, n):
    if not (np.array(net.kinds) == "queue").any() or not net.demands[0][np.array(net.kinds) == "queue"].any():
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
    net = ClosedNetwork(demands=[[1.0, 2.0], [0.5, 0.5]], populations=[1, 0], think_times=[3.0, 0.0])
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
