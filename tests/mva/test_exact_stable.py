"""Exact MVA with multi-server and load-dependent stations near and past saturation.

Every expected value comes from :mod:`tests.mva._convolution_ref`, the
convolution algorithm in 60-digit mpmath arithmetic (an independent
algorithm: normalising constants, no MVA), and is compared at 1e-9 relative.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import mva
from mva.network import ClosedNetwork
from tests.mva._convolution_ref import convolution_reference

RTOL = 1e-9


def _chain_q(net: ClosedNetwork, res: mva.MVAResult) -> np.ndarray:
    out = np.zeros((net.n_chains, net.n_stations))
    np.add.at(out, net.chains, res.queue_length)
    return out


def _check(net: ClosedNetwork, res: mva.MVAResult | None = None) -> mva.MVAResult:
    with warnings.catch_warnings():
        warnings.simplefilter("error", mva.PrecisionWarning)
        res = mva.exact_mva(net) if res is None else res
    X, Q = convolution_reference(net)
    np.testing.assert_allclose(res.chain_throughput, X, rtol=RTOL, atol=0)
    np.testing.assert_allclose(_chain_q(net, res), Q, rtol=RTOL,
                               atol=1e-12 * float(net.populations.sum()))
    U = res.station_utilization[np.array(net.kinds) != "delay"]
    assert (U <= 1 + 1e-12).all(), U
    return res


# --------------------------------------------------------------------------
# the three cases of issue 20 (subtraction gave X = 0.2256, 0.308, 1.0385)
# --------------------------------------------------------------------------
@pytest.mark.parametrize("D, m, N, X", [
    ([2.0, 31.0], [1, 16], 50, 0.4936417),
    ([1.0, 20.0], [1, 20], 100, 0.98841165),
    ([1.0, 7.0], [1, 8], 100, 0.99999963),
])
def test_issue_20_saturated_multi_server_cases(D, m, N, X):
    net = ClosedNetwork.single_class(D, population=N, servers=m)
    res = _check(net)
    assert res.throughput[0] == pytest.approx(X, rel=1e-7)
    assert res.utilization.max() <= 1.0


def test_auto_method_picks_the_stable_exact_solver():
    net = ClosedNetwork.single_class([1.0, 7.0], population=100, servers=[1, 8])
    res = mva.solve(net, method="auto")
    assert res.method == "exact"
    _check(net, res)


@pytest.mark.slow
@pytest.mark.parametrize("ratio", [1.0, 1.5])
def test_population_1000_and_64_servers(ratio):
    """N = 1000, a 64-server station at and past the single queue's capacity."""
    net = ClosedNetwork.single_class([1.0, 64.0 * ratio], population=1000, think_time=5.0,
                                     servers=[1, 64])
    _check(net)


def test_load_dependent_station_past_saturation():
    rates = np.minimum(np.arange(1, 41), 12.0) ** 0.8       # sub-linear speed-up, capped
    net = ClosedNetwork.single_class([0.5, 9.0, 0.3], population=300, think_time=2.0,
                                     kinds=("queue", "ld", "delay"), rates=(None, rates, None))
    _check(net)


def test_two_multi_server_stations_and_ld_need_all_complements():
    net = ClosedNetwork.single_class([3.0, 5.0, 2.0, 1.0], population=200, think_time=1.0,
                                     kinds=("multi", "multi", "ld", "queue"), servers=[4, 6, 1, 1],
                                     rates=(None, None, [1.0, 1.7, 2.2, 2.5], None))
    _check(net)


def test_multi_class_near_saturation():
    """Two chains sharing a saturated 8-server station (the old path was 1e-4 off here)."""
    net = ClosedNetwork(demands=[[1.0, 7.5, 0.2], [0.6, 9.0, 0.0]], populations=[24, 20],
                        think_times=[1.0, 3.0], kinds=("queue", "multi", "delay"),
                        servers=[1, 8, 1])
    _check(net)


def test_multi_class_load_dependent_and_classes_in_chains():
    net = ClosedNetwork(demands=[[0.5, 4.0, 0.0], [0.0, 1.0, 0.3], [0.7, 3.5, 0.1]],
                        populations=[14, 12], chains=[0, 0, 1], think_times=[0.5, 1.0],
                        kinds=("queue", "ld", "multi"), servers=[1, 1, 3],
                        rates=(None, [1.0, 1.8, 2.4, 2.8, 3.0], None))
    _check(net)


def test_chain_with_demand_only_at_a_multi_server_station_and_no_think_time():
    """Removing the station leaves the chain nowhere to be: G_{-k}(n) = 0, p(0) = 0 exactly."""
    net = ClosedNetwork(demands=[[0.0, 3.0], [1.0, 2.0]], populations=[6, 5],
                        kinds=("queue", "multi"), servers=[1, 2])
    _check(net)


# --------------------------------------------------------------------------
# random instances
# --------------------------------------------------------------------------
@st.composite
def saturated_single_class(draw):
    """One multi-server or LD station whose load ranges from light to far past saturation."""
    m = draw(st.integers(1, 64))
    N = draw(st.integers(1, 300))
    load = draw(st.floats(0.2, 4.0))            # demand / (servers x other demand)
    others = draw(st.lists(st.floats(0.1, 2.0), min_size=1, max_size=3))
    kinds = ["queue"] * len(others)
    if draw(st.booleans()):
        kinds[-1] = "delay"
    Dm = load * m * max(others)
    if draw(st.booleans()):
        kind, servers, rates = "multi", m, None
    else:
        top = draw(st.integers(1, 10))
        kind, servers = "ld", 1
        rates = np.minimum(np.arange(1, top + 1), float(m)) ** draw(st.floats(0.5, 1.0))
        Dm = load * float(rates[-1]) * max(others)
    return ClosedNetwork.single_class(
        others + [Dm], population=N, think_time=draw(st.sampled_from([0.0, 1.0, 20.0])),
        kinds=tuple(kinds) + (kind,), servers=[1] * len(others) + [servers],
        rates=tuple([None] * len(others) + [rates]))


@settings(max_examples=40, deadline=None)
@given(saturated_single_class())
def test_random_single_class_equals_convolution(net):
    _check(net)


@st.composite
def multi_class_with_servers(draw):
    R = draw(st.integers(2, 3))
    K = draw(st.integers(2, 3))
    pops = [draw(st.integers(1, 12 if R == 2 else 5)) for _ in range(R)]
    D = np.array([[draw(st.floats(0.05, 3.0)) for _ in range(K)] for _ in range(R)])
    m = draw(st.integers(2, 8))
    load = draw(st.floats(0.5, 4.0))
    D[:, -1] *= load * m
    kinds = tuple(draw(st.sampled_from(["queue", "delay"])) for _ in range(K - 1)) + ("multi",)
    return ClosedNetwork(demands=D, populations=pops, kinds=kinds, servers=[1] * (K - 1) + [m],
                         think_times=[draw(st.sampled_from([0.0, 1.0, 5.0])) for _ in range(R)])


@settings(max_examples=25, deadline=None)
@given(multi_class_with_servers())
def test_random_multi_class_equals_convolution(net):
    _check(net)


# --------------------------------------------------------------------------
# where the stable recursion does not apply, precision loss is reported
# --------------------------------------------------------------------------
def test_non_product_form_saturated_multi_server_warns():
    # FCFS with cs2 != 1 at the queue makes the network non-product-form: p(0) by subtraction
    net = ClosedNetwork.single_class([2.0, 31.0], population=50, servers=[1, 16], cs2=[0.5, 1.0])
    with pytest.warns(mva.PrecisionWarning, match=r"p\(0\) = .* by subtraction"):
        mva.exact_mva(net)


def test_non_product_form_light_load_is_silent():
    net = ClosedNetwork.single_class([2.0, 3.0], population=5, servers=[1, 4], cs2=[0.5, 1.0],
                                     think_time=10.0)
    with warnings.catch_warnings():
        warnings.simplefilter("error", mva.PrecisionWarning)
        res = mva.exact_mva(net)
    assert 0 < res.throughput[0] < 0.5


def test_complement_count_is_part_of_the_state_limit():
    net = ClosedNetwork.single_class([1.0, 2.0, 3.0], population=30, servers=[2, 3, 4])
    # 31 population vectors x 2**3 complement networks = 248 > 100: subtraction fallback
    res = mva.exact_mva(net, max_states=100)
    ref = mva.exact_mva(net)
    np.testing.assert_allclose(res.throughput, ref.throughput, rtol=1e-9)
