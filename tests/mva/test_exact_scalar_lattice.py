"""``mva.exact._lattice_scalar``: the general lattice recursion in Python floats.

On the small one-priority-level networks it accepts (:func:`mva.exact._scalar_lattice_fits`)
it must give the NumPy levels' values bit for bit -- the final result and every vector of
the kept lattice -- including where the utilization cap's Newton steps act.
"""

from __future__ import annotations

import warnings
from dataclasses import replace

import numpy as np
import pytest
from hypothesis import given, settings

import mva.exact as E
from mva.errors import SaturationError
from mva.network import ClosedNetwork
from tests.strategies import closed_networks


def _run(net, scalar):
    """The lattice recursion of ``net`` (fresh cache), with or without the scalar path:
    (result, kept lattice) or the error message."""
    E._LATTICES.clear()
    old = E._SCALAR_STATES
    E._SCALAR_STATES = old if scalar else 0
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            res = E._exact_lattice(E.compile_network(net), E.DEFAULT_MAX_STATES)
        return res, [(n.copy(), x.copy(), r.copy()) for n, x, r in E._LATTICES.values()]
    except SaturationError as e:
        return str(e), None
    finally:
        E._SCALAR_STATES = old
        E._LATTICES.clear()


def _same(a, b):
    ra, la = a
    rb, lb = b
    if isinstance(ra, str) or isinstance(rb, str):
        assert ra == rb
        return
    for f in ("throughput", "residence_time", "queue_length", "utilization",
              "chain_throughput", "response_time"):
        assert np.array_equal(getattr(ra, f), getattr(rb, f)), f
    assert (ra.method, ra.iterations) == (rb.method, rb.iterations)
    assert len(la) == len(lb)
    for (na, xa, qa), (nb, xb, qb) in zip(la, lb):
        assert np.array_equal(na, nb) and np.array_equal(xa, xb) and np.array_equal(qa, qb)


def _policy_network(n, s_q, s_y, s_r, Z, cs2):
    from models.policy import _node_network

    return _node_network(n, 2, s_q, s_y, s_r, Z, cs2)


@pytest.mark.parametrize("n,cs2", [(1, 0.0), (3, 0.0), (8, 0.0), (5, 0.5), (8, 2.0)])
def test_policy_networks_take_the_scalar_path_and_match_the_numpy_levels(n, cs2,
                                                                         monkeypatch):
    """The policy model's two-node networks (deterministic handlers: the cap's Newton
    steps at most vectors) give the NumPy levels' lattice bit for bit."""
    rng = np.random.default_rng(n + int(10 * cs2))
    real = E._lattice_scalar
    calls = []
    monkeypatch.setattr(E, "_lattice_scalar", lambda *a: calls.append(1) or real(*a))
    for _ in range(4):
        s_q, s_y, s_r = rng.uniform(50.0, 2000.0, 3)
        net = _policy_network(n, s_q, s_y, s_r, float(rng.uniform(0.0, 5000.0)), cs2)
        cm = E.compile_network(net)
        assert E._scalar_lattice_fits(cm, E.lattice_size(cm.N))
        calls.clear()
        fast = _run(net, True)
        assert calls == [1]
        _same(fast, _run(net, False))


@settings(max_examples=60, deadline=None)
@given(net=closed_networks(max_classes=4, max_stations=3, max_population=5, chains=True,
                           cs2=True, priorities=False, kinds=("queue", "delay"),
                           max_lattice=200))
def test_scalar_path_equals_the_numpy_levels(net):
    """Random networks with FCFS variability (and a processor-sharing station among
    three): where the scalar path applies, the result and the kept lattice equal the
    NumPy levels' bit for bit."""
    K = net.demands.shape[1]
    net = replace(net, cs2=np.where(np.arange(K) % 2 == 0, 0.0, 2.5),
                  disciplines=["ps" if k == 2 else "fcfs" for k in range(K)])
    _same(_run(net, True), _run(net, False))


def test_scalar_path_is_refused_where_sums_would_differ():
    """Three classes of a chain at one station, eight terms in a chain's cycle, a
    multi-server station, priorities, or a large lattice: the NumPy levels."""
    base = dict(cs2=[0.0, 0.0], disciplines=["fcfs", "fcfs"])
    three = ClosedNetwork(demands=[[1.0, 1.0], [2.0, 0.5], [0.5, 2.0]], populations=[2],
                          chains=[0, 0, 0], **base)
    assert not E._scalar_lattice_fits(E.compile_network(three), 3)
    ok = ClosedNetwork(demands=[[1.0, 0.0], [0.0, 2.0]], populations=[2, 2], chains=[0, 1],
                       **base)
    cm = E.compile_network(ok)
    assert E._scalar_lattice_fits(cm, 9)
    assert not E._scalar_lattice_fits(cm, E._SCALAR_STATES + 1)
    prio = replace(ok, priorities=[0, 1])
    assert not E._scalar_lattice_fits(E.compile_network(prio), 9)
    multi = ClosedNetwork(demands=[[1.0, 0.0], [0.0, 2.0]], populations=[2, 2],
                          chains=[0, 1], kinds=["multi", "queue"], servers=[2, 1], **base)
    assert not E._scalar_lattice_fits(E.compile_network(multi), 9)
    wide = ClosedNetwork(demands=[[1.0, 1.0, 1.0, 1.0], [1.0, 1.0, 1.0, 1.0]],
                         populations=[2], chains=[0, 0], cs2=[0.0] * 4,
                         disciplines=["fcfs"] * 4)
    assert not E._scalar_lattice_fits(E.compile_network(wide), 3)


def test_a_network_object_is_compiled_once(monkeypatch):
    """_exact_populations keeps the compilation of a network object for its next call."""
    net = ClosedNetwork(demands=[[1.0, 2.0], [2.0, 1.0]], populations=[3, 3], cs2=[0.0, 0.0],
                        disciplines=["fcfs", "fcfs"])
    E._LATTICES.clear()
    count = []
    real = E.compile_network
    monkeypatch.setattr(E, "compile_network", lambda n: count.append(1) or real(n))
    a = E._exact_populations(net, [[3, 3], [1, 2]])
    b = E._exact_populations(net, [[2, 2], [3, 3]])
    assert len(count) == 1
    assert np.array_equal(a[0].throughput, b[1].throughput)
    E._LATTICES.clear()
    fresh = E.exact_mva(replace(net, populations=[2, 2]))
    assert np.array_equal(b[0].throughput, fresh.throughput)
    assert np.array_equal(b[0].residence_time, fresh.residence_time)
