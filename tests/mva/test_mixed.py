"""Mixed open/closed networks against a 40-digit brute-force enumeration of
the product form (open customers summed term by term at each station)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import mva
from mva.errors import SaturationError
from mva.mixed import MixedNetwork, solve_mixed
from mva.network import ClosedNetwork

from ._product_form import enumerate_network, random_network, throughputs


def _random_mixed(rng):
    net = random_network(rng, kinds=("queue", "delay"), max_population=3)
    K = net.n_stations
    O = int(rng.integers(1, 3))
    Do = rng.uniform(0.05, 2.0, size=(O, K)) * (rng.random((O, K)) < 0.8)
    lam = rng.uniform(0.05, 1.0, size=O)
    Uo = lam @ Do
    target = rng.uniform(0.05, 0.7)
    if Uo.max() > 0:
        lam = lam * target / Uo.max()
    return MixedNetwork(closed=net, arrival_rates=lam, open_demands=Do)


def test_matches_enumeration_on_random_networks():
    rng = np.random.default_rng(5150)
    for _ in range(100):
        mixed = _random_mixed(rng)
        net = mixed.closed
        Uo = mixed.arrival_rates @ mixed.open_demands
        _, Q, Eo = enumerate_network(net, open_load=Uo)
        X = throughputs(net, open_load=Uo)
        res = solve_mixed(mixed)
        Qch = np.zeros_like(Q)
        np.add.at(Qch, net.chains, res.closed.queue_length)
        assert np.allclose(Qch, Q, rtol=1e-9, atol=1e-300)
        assert np.allclose(res.closed.chain_throughput, X, rtol=1e-9, atol=1e-300)
        # open customers per station, split over the open classes by their load
        Qo = res.open.queue_length.sum(axis=0)
        queue = np.array(net.kinds) == "queue"
        assert np.allclose(Qo[queue], Eo[queue], rtol=1e-9, atol=1e-300)
        # Little's law and utilizations
        assert np.allclose(res.open.queue_length,
                           res.open.throughput[:, None] * res.open.residence_time, rtol=1e-12)
        assert np.all(res.station_utilization[queue] <= 1 + 1e-12)


def test_without_open_load_equals_closed_and_without_closed_equals_open():
    net = ClosedNetwork.single_class([1.0, 2.0, 0.5], population=4, think_time=1.0)
    res = solve_mixed(MixedNetwork(closed=net, arrival_rates=[0.0], open_demands=[[1, 1, 1]]))
    np.testing.assert_allclose(res.closed.queue_length, mva.exact_mva(net).queue_length, rtol=1e-14)
    # a closed chain that never visits: open classes see M/M/1 queues
    silent = ClosedNetwork(demands=[[1.0, 0.0]], populations=[1], kinds=["queue", "queue"])
    res = solve_mixed(MixedNetwork(closed=silent, arrival_rates=[0.4], open_demands=[[0.0, 1.5]]))
    assert res.open.residence_time[0, 1] == pytest.approx(mva.mm1(0.4, 1.5).response_time,
                                                          rel=1e-14)


def test_closed_methods_and_solve_dispatch():
    net = ClosedNetwork(demands=[[1.0, 2.0], [0.5, 1.0]], populations=[3, 2])
    mixed = MixedNetwork(closed=net, arrival_rates=[0.1], open_demands=[[1.0, 2.0]])
    exact = mva.solve(mixed)
    assert isinstance(exact, mva.MixedResult) and exact.method == "exact"
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        approx = mva.solve(mixed, method="linearizer", tol=1e-10)
    assert approx.method == "linearizer"
    np.testing.assert_allclose(approx.closed.throughput, exact.closed.throughput, rtol=0.02)
    conv = mva.solve(mixed, method="convolution")
    np.testing.assert_allclose(conv.open.residence_time, exact.open.residence_time, rtol=1e-12)


def test_bad_input():
    net = ClosedNetwork.single_class([1.0, 2.0], population=2)
    with pytest.raises(SaturationError, match="station 'station1'"):
        solve_mixed(MixedNetwork(closed=net, arrival_rates=[0.6], open_demands=[[1.0, 2.0]]))
    with pytest.raises(ValueError, match=r"open_demands must have shape \(O, 2\)"):
        MixedNetwork(closed=net, arrival_rates=[0.1], open_demands=[[1.0, 2.0, 3.0]])
    with pytest.raises(ValueError, match=r"arrival_rates must have shape \(1,\)"):
        MixedNetwork(closed=net, arrival_rates=[0.1, 0.2], open_demands=[[1.0, 2.0]])
    multi = ClosedNetwork.single_class([1.0, 2.0], population=2, servers=[1, 2])
    with pytest.raises(ValueError, match="of kind 'multi'"):
        MixedNetwork(closed=multi, arrival_rates=[0.1], open_demands=[[1.0, 2.0]])
    with pytest.raises(ValueError, match="closed must be a ClosedNetwork"):
        MixedNetwork(closed=None, arrival_rates=[0.1], open_demands=[[1.0]])
