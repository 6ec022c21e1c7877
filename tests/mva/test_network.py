"""Network description: validation, defaults, graph input and traffic equations."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import mva
from mva.network import ClosedNetwork, visit_ratios


def test_defaults():
    net = ClosedNetwork(demands=[[1.0, 0.0], [0.5, 2.0]], populations=[2, 3])
    assert net.n_classes == 2 and net.n_stations == 2 and net.n_chains == 2
    assert net.kinds == ("queue", "queue") and net.disciplines == ("ps", "ps")
    np.testing.assert_array_equal(net.think_times, [0.0, 0.0])
    np.testing.assert_array_equal(net.chains, [0, 1])
    np.testing.assert_array_equal(net.visit_matrix, [[1, 0], [1, 1]])
    assert net.station_names == ("station0", "station1")
    assert net.class_names == ("class0", "class1")
    assert not net.has_priorities
    # servers > 1 makes a multi-server station; cs2 != 1 makes it FCFS
    net = ClosedNetwork.single_class([1.0, 1.0], population=2, servers=[1, 3], cs2=[0.5, 1.0])
    assert net.kinds == ("queue", "multi") and net.disciplines == ("fcfs", "ps")
    # arrays are read-only: the dataclass is immutable
    with pytest.raises(ValueError):
        net.demands[0, 0] = 5.0
    with pytest.raises(dataclasses.FrozenInstanceError):
        net.demands = np.ones((1, 2))  # type: ignore[misc]


@pytest.mark.parametrize("kwargs, message", [
    (dict(demands=[[1.0, -2.0]], populations=[1]), r"demands must be finite and >= 0; got -2.0"),
    (dict(demands=[[1.0, np.nan]], populations=[1]), r"demands must be finite and >= 0; got nan"),
    (dict(demands=[[1.0, np.inf]], populations=[1]), r"demands must be finite and >= 0; got inf"),
    (dict(demands=[[1.0]], populations=[0]),
     r"populations must have at least one chain with a population > 0; got \[0\]"),
    (dict(demands=[[1.0]], populations=[-1]), r"populations must be >= 0; got -1"),
    (dict(demands=[[1.0]], populations=[1.5]), r"populations must be an integer; got 1.5"),
    (dict(demands=[[1.0], [2.0]], populations=[1]),
     r"populations must have shape \(2,\) \(one population per chain, 2 chain\(s\)\); "
     r"got shape \(1,\)"),
    (dict(demands=[[1.0]], populations=[1], think_times=[1.0, 2.0]),
     r"think_times must have shape \(1,\) \(one think time per chain\); got shape \(2,\)"),
    (dict(demands=[[1.0]], populations=[1], think_times=[-1.0]),
     r"think_times must be finite and >= 0; got -1.0"),
    (dict(demands=[[1.0, 1.0]], populations=[1], kinds=("queue",)),
     r"kinds must have 2 entries \(one per station\); got 1"),
    (dict(demands=[[1.0]], populations=[1], kinds=("fifo",)),
     r"kinds\[0\] must be one of 'queue', 'delay', 'multi', 'ld'; got 'fifo'"),
    (dict(demands=[[1.0]], populations=[1], kinds=("queue",), servers=[2]),
     r"servers\[0\] must be 1 at a 'queue' station; got 2"),
    (dict(demands=[[1.0]], populations=[1], servers=[0]), r"servers must be >= 1; got 0"),
    (dict(demands=[[1.0]], populations=[1], kinds=("ld",)), r"rates\[0\] must be a 1-D array"),
    (dict(demands=[[1.0]], populations=[1], kinds=("ld",), rates=([1.0, 0.0],)),
     r"rates\[0\] must be a non-empty 1-D array of values > 0; got 0.0"),
    (dict(demands=[[1.0]], populations=[1], rates=([1.0],)), r"rates\[0\] must be None unless"),
    (dict(demands=[[1.0]], populations=[1], cs2=[-0.5]), r"cs2 must be finite and >= 0; got -0.5"),
    (dict(demands=[[1.0, 1.0]], populations=[1], visits=[[1.0, 0.0]]),
     r"visits\[0, 1\] must be > 0 where demands\[0, 1\] > 0; got 0.0"),
    (dict(demands=[[1.0], [1.0]], populations=[1], chains=[1, 1]),
     r"chains must use every chain index 0..1"),
    (dict(demands=[[1.0], [1.0]], populations=[1, 1], priorities=[1]),
     r"priorities must have shape \(2,\)"),
    (dict(demands=[[1.0]], populations=[1], disciplines=("lifo",)),
     r"disciplines\[0\] must be one of 'ps', 'fcfs'; got 'lifo'"),
    (dict(demands=[[0.0]], populations=[2]), r"chain 0 has population 2 but zero total demand"),
    (dict(demands=[["a"]], populations=[1]), r"demands must be numeric"),
    (dict(demands=[[1.0]], populations=[1], station_names=("a", "b")),
     r"station_names must have 1 entries"),
])
def test_bad_input_names_parameter_value_and_allowed(kwargs, message):
    with pytest.raises(ValueError, match=message):
        ClosedNetwork(**kwargs)


def test_single_class_constructor_validation():
    with pytest.raises(ValueError, match="population must be >= 1; got 0"):
        ClosedNetwork.single_class([1.0], population=0)
    with pytest.raises(ValueError, match="demands must be 1-D"):
        ClosedNetwork.single_class([[1.0]], population=1)
    with pytest.raises(ValueError, match="think_time must be finite and >= 0; got nan"):
        ClosedNetwork.single_class([1.0], population=1, think_time=float("nan"))


def test_with_populations_revalidates():
    net = ClosedNetwork.single_class([1.0, 2.0], population=3)
    assert net.with_populations([7]).populations.tolist() == [7]
    with pytest.raises(ValueError, match="populations"):
        net.with_populations([0])


def test_visit_ratios_closed_and_open():
    P = [[0.2, 0.5, 0.3], [1.0, 0.0, 0.0], [1.0, 0.0, 0.0]]
    np.testing.assert_allclose(visit_ratios(P), [1.0, 0.5, 0.3])
    np.testing.assert_allclose(visit_ratios(P, reference=1), [2.0, 1.0, 0.6])
    # open: CPU with 90% return through disks, arrivals at the CPU
    Po = [[0.0, 0.6, 0.3], [1.0, 0.0, 0.0], [1.0, 0.0, 0.0]]
    np.testing.assert_allclose(visit_ratios(Po, arrivals=[1.0, 0.0, 0.0]), [10.0, 6.0, 3.0])
    # class switching: rows indexed by (class, station) pairs work the same way
    with pytest.raises(ValueError,
                       match="routing row 0 must sum to 1 in a closed network; got 0.9"):
        visit_ratios(Po)
    with pytest.raises(ValueError, match="routing row 0 must sum to <= 1; got 1.5"):
        visit_ratios([[0.5, 1.0], [1.0, 0.0]])
    with pytest.raises(ValueError, match="square"):
        visit_ratios([[1.0, 0.0]])
    with pytest.raises(ValueError, match="routing must be finite and >= 0; got -0.5"):
        visit_ratios([[1.5, -0.5], [1.0, 0.0]])
    with pytest.raises(ValueError, match="singular"):
        visit_ratios([[1.0, 0.0], [0.0, 1.0]])           # two disconnected loops


def test_from_graph_single_class_matches_arrays():
    nx = pytest.importorskip("networkx")
    G = nx.DiGraph()
    G.add_node("term", kind="delay", service_time=5.0)
    G.add_node("cpu", service_time=0.02)
    G.add_node("disk", service_time=0.05, servers=2, cs2=0.5)
    G.add_edge("term", "cpu", weight=1.0)
    G.add_edge("cpu", "disk", weight=0.8)
    G.add_edge("cpu", "term", weight=0.2)
    G.add_edge("disk", "cpu", weight=1.0)
    net = ClosedNetwork.from_graph(G, populations=10, reference="term")
    np.testing.assert_allclose(net.visits[0], [1.0, 5.0, 4.0])
    np.testing.assert_allclose(net.demands[0], [5.0, 0.1, 0.2])
    assert net.kinds == ("delay", "queue", "multi")
    assert net.station_names == ("term", "cpu", "disk")
    arr = ClosedNetwork.single_class([5.0, 0.1, 0.2], population=10,
                                     kinds=["delay", "queue", "multi"],
                                     servers=[1, 1, 2])
    np.testing.assert_allclose(mva.exact_mva(net).throughput, mva.exact_mva(arr).throughput)


def test_from_graph_two_classes_with_own_routing():
    nx = pytest.importorskip("networkx")
    G = nx.DiGraph()
    G.add_node("cpu", service_time={"batch": 1.0, "web": 0.2})
    G.add_node("disk", service_time={"batch": 0.5, "web": 0.1})
    G.add_edge("cpu", "disk", weight={"batch": 1.0, "web": 0.5})
    G.add_edge("cpu", "cpu", weight={"web": 0.5})
    G.add_edge("disk", "cpu", weight=1.0)
    net = ClosedNetwork.from_graph(G, populations={"batch": 2, "web": 3}, think_times={"web": 1.0})
    assert net.class_names == ("batch", "web")
    np.testing.assert_allclose(net.visits, [[1.0, 1.0], [1.0, 0.5]])
    np.testing.assert_allclose(net.demands, [[1.0, 0.5], [0.2, 0.05]])
    np.testing.assert_allclose(net.think_times, [0.0, 1.0])


def test_from_graph_errors():
    nx = pytest.importorskip("networkx")
    with pytest.raises(ValueError, match="empty graph"):
        ClosedNetwork.from_graph(nx.DiGraph(), populations=1)
    G = nx.DiGraph()
    G.add_node("a", service_time=1.0)
    G.add_edge("a", "a", weight=0.5)
    with pytest.raises(ValueError,
                       match="routing row 'a' must sum to 1 in a closed network; got 0.5"):
        ClosedNetwork.from_graph(G, populations=1)
    with pytest.raises(ValueError, match="reference must be a node of the graph; got 'zz'"):
        ClosedNetwork.from_graph(G, populations=1, reference="zz")
