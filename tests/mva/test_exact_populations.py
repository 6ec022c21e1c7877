"""``mva.exact._exact_populations``: one network at several populations.

Each result must be what :func:`mva.exact.exact_mva` gives for the network with
that population, bit for bit, whether it is read from the kept lattice (the
general, non-product-form route) or solved (product form, larger rows).
"""

from __future__ import annotations

import itertools
import warnings
from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import mva.exact as E
from mva.errors import SaturationError
from mva.network import ClosedNetwork
from tests.strategies import closed_networks

FIELDS = ("throughput", "response_time", "residence_time", "queue_length", "utilization",
          "chain_throughput")


def _equal(a, b):
    for f in FIELDS:
        assert np.array_equal(getattr(a, f), getattr(b, f)), f
    assert (a.method, a.iterations, a.converged) == (b.method, b.iterations, b.converged)


def _rows(net, draw_extra):
    """Every population below the network's, and ``draw_extra`` rows (some above it)."""
    N = [int(x) for x in net.populations]
    below = [list(p) for p in itertools.product(*(range(n + 1) for n in N)) if any(p)]
    return below + draw_extra


@settings(max_examples=25, deadline=None)
@given(net=closed_networks(max_classes=3, max_stations=3, max_population=4, chains=True,
                           cs2=True, priorities=False, max_lattice=30),
       bump=st.integers(0, 1), general=st.booleans())
def test_each_population_as_exact_mva_gives_it(net, bump, general):
    """Bit for bit equal to exact_mva on the network with that population (fresh lattice
    cache), for every population below the network's and one above it."""
    if general:      # FCFS variability: the lattice route
        net = replace(net, cs2=np.full(net.demands.shape[1], 0.4),
                      disciplines=["fcfs"] * net.demands.shape[1])
    extra = [[int(x) + bump for x in net.populations]]
    rows = _rows(net, extra)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            E._LATTICES.clear()
            got = E._exact_populations(net, rows)
        except SaturationError:
            return
        for pop, g in zip(rows, got):
            E._LATTICES.clear()
            _equal(g, E.exact_mva(replace(net, populations=pop)))


def test_smaller_populations_are_read_not_solved(monkeypatch):
    """On the lattice route one recursion serves every population at most the network's."""
    net = ClosedNetwork(demands=[[1.0, 2.0], [2.0, 1.0]], populations=[4, 3],
                        cs2=[0.3, 2.0], disciplines=["fcfs", "fcfs"], think_times=[5.0, 1.0])
    E._LATTICES.clear()
    calls = []
    real = E._exact_lattice
    monkeypatch.setattr(E, "_exact_lattice",
                        lambda cm, m: calls.append(cm.N.tolist()) or real(cm, m))
    rows = [[4, 3], [0, 1], [2, 2], [4, 0], [1, 3]]
    got = E._exact_populations(net, rows)
    assert calls == [[4, 3]]
    # Little's law per chain and 0 <= U <= 1 at every population
    for pop, r in zip(rows, got):
        cyc = r.chain_throughput * (np.array([5.0, 1.0]) + r.residence_time.sum(axis=1))
        np.testing.assert_allclose(cyc, pop, rtol=1e-12)
        assert np.all(r.utilization.sum(axis=0) <= 1.0 + 1e-12)


def test_rejects_a_non_network():
    with pytest.raises(ValueError, match="network must be a ClosedNetwork"):
        E._exact_populations([[1.0]], [[1]])


def test_an_empty_population_is_refused_as_exact_mva_refuses_it():
    net = ClosedNetwork(demands=[[1.0, 2.0], [2.0, 1.0]], populations=[2, 1], cs2=[0.3, 2.0],
                        disciplines=["fcfs", "fcfs"])
    with pytest.raises(ValueError, match="at least one chain with a population > 0"):
        E._exact_populations(net, [[1, 1], [0, 0]])


@settings(max_examples=40, deadline=None)
@given(net=closed_networks(max_classes=4, max_stations=4, max_population=4, chains=True,
                           cs2=True, kinds=("queue", "delay", "multi"), max_lattice=80))
def test_one_level_shortcut_equals_the_general_terms(net):
    """The lattice recursion's one-priority-level residence (no class_terms / queue_residence
    call) equals the general BKT terms bit for bit."""
    def run(flag):
        E._LATTICES.clear()
        old = E._ONE_LEVEL_SHORTCUT
        E._ONE_LEVEL_SHORTCUT = flag
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                return E._exact_lattice(E.compile_network(net), E.DEFAULT_MAX_STATES)
        except SaturationError as e:
            return str(e)
        finally:
            E._ONE_LEVEL_SHORTCUT = old

    a, b = run(True), run(False)
    if isinstance(a, str) or isinstance(b, str):
        assert a == b
    else:
        _equal(a, b)
