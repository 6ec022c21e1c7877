"""Convolution: normalizing constants, marginals and means against a 40-digit
brute-force enumeration of the product form and against exact MVA."""

from __future__ import annotations

import mpmath
import numpy as np
import pytest

from mva.normalizing import convolution, marginal_probabilities, normalizing_constant
from mva.exact import exact_mva
from mva.network import ClosedNetwork

from ._product_form import enumerate_network, random_network, throughputs


def _rel(a, b):
    a, b = np.asarray(a, float), np.asarray(b, float)
    return float(np.max(np.abs(a - b) / np.maximum(np.abs(b), 1e-300)))


def test_matches_enumeration_on_random_networks():
    rng = np.random.default_rng(2026_11_23)
    for _ in range(110):
        net = random_network(rng)
        G, Q, P = enumerate_network(net)
        Gc = normalizing_constant(net)
        with mpmath.workdps(40):
            assert abs(Gc[tuple(net.populations)] / float(G) - 1) < 1e-9
        Pc = marginal_probabilities(net)
        nz = P > 1e-250
        assert _rel(Pc[nz], P[nz]) < 1e-9
        res = convolution(net)
        Qch = np.zeros_like(Q)
        np.add.at(Qch, net.chains, res.queue_length)
        nz = Q > 0
        assert _rel(Qch[nz], Q[nz]) < 1e-9
        X = throughputs(net)
        assert _rel(res.chain_throughput[X > 0], X[X > 0]) < 1e-9
        assert np.all(res.chain_throughput[X == 0] == 0)


def test_matches_exact_mva_with_chains_of_several_classes():
    rng = np.random.default_rng(11)
    for _ in range(100):
        net = random_network(rng, max_population=4, classes_per_chain=int(rng.integers(1, 3)))
        a, b = exact_mva(net), convolution(net)
        for field in ("throughput", "queue_length", "residence_time", "utilization"):
            x, y = getattr(b, field), getattr(a, field)
            assert np.allclose(x, y, rtol=1e-9, atol=1e-12), field
        # Little's law, marginals sum to one, mean from the marginal
        assert np.allclose(b.queue_length, b.throughput[:, None] * b.residence_time, rtol=1e-12)
        P = marginal_probabilities(net)
        assert np.allclose(P.sum(axis=1), 1.0, rtol=1e-12)
        assert np.allclose(P @ np.arange(P.shape[1]), b.station_queue_length, rtol=1e-9, atol=1e-12)


def test_buzen_closed_form_and_scaling():
    # G(n) = sum_i 1^i 2^(n-i) = 2^(n+1) - 1, and large populations stay finite
    G = normalizing_constant(ClosedNetwork.single_class([1.0, 2.0], population=30))
    assert G.tolist() == [2.0 ** (n + 1) - 1 for n in range(31)]
    res = convolution(ClosedNetwork.single_class([1e3, 2e3, 5e2], population=400))
    assert res.throughput[0] == pytest.approx(1 / 2e3, rel=1e-12)


def test_refuses_non_product_form_and_large_lattices():
    fcfs = ClosedNetwork(demands=[[1.0], [2.0]], populations=[1, 1], disciplines=["fcfs"])
    with pytest.raises(ValueError, match="class-dependent service times"):
        convolution(fcfs)
    with pytest.raises(ValueError, match="cs2"):
        convolution(ClosedNetwork.single_class([1.0], population=2, cs2=[0.5]))
    with pytest.raises(ValueError, match="priorities"):
        convolution(ClosedNetwork(demands=[[1.0], [1.0]], populations=[1, 1], priorities=[0, 1]))
    with pytest.raises(ValueError, match="max_states is 10"):
        convolution(ClosedNetwork.single_class([1.0], population=20), max_states=10)
    with pytest.raises(ValueError, match="G\\(n\\) overflows"):
        normalizing_constant(ClosedNetwork.single_class([1e9], population=100))
