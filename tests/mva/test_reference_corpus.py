"""The new solvers against published worked examples (tests/mva/reference_data.py)."""

from __future__ import annotations

import numpy as np

import mva
from mva.network import ClosedNetwork

from . import reference_data as ref


def test_bolch_8_1_convolution_multiserver():
    d = ref.BOLCH_8_1
    S, V = np.array(d["service_times"]), np.array(d["visits"])
    net = ClosedNetwork.single_class(S * V, population=d["population"], servers=d["servers"],
                                     visits=V)
    tol = d["atol"]
    # G printed to 3 decimals
    np.testing.assert_allclose(mva.normalizing_constant(net), d["G"], atol=5e-3)
    res = mva.convolution(net)
    np.testing.assert_allclose(res.throughput[0] * V, d["station_throughput"], atol=tol)
    np.testing.assert_allclose(res.utilization[0], d["utilization"], atol=tol)
    np.testing.assert_allclose(res.queue_length[0], d["queue_length"], atol=tol)
    np.testing.assert_allclose(res.residence_time[0] / V, d["response_time"], atol=tol)
    # the marginals reproduce the means
    P = mva.marginal_probabilities(net)
    np.testing.assert_allclose(P @ np.arange(4), res.queue_length[0], rtol=1e-12)


def test_lazowska_p148_mixed():
    d = ref.LAZOWSKA_P148
    closed = ClosedNetwork(demands=d["closed_demands"], populations=d["populations"])
    res = mva.solve_mixed(mva.MixedNetwork(closed=closed, arrival_rates=d["arrival_rates"],
                                           open_demands=d["open_demands"]))
    np.testing.assert_allclose(res.closed.queue_length, d["closed_queue_length"], atol=d["atol"])


def test_bolch_8_6_mixed():
    d = ref.BOLCH_8_6
    V, S = np.array(d["visits"], float), np.array(d["service_times"], float)
    D = V * S
    closed = ClosedNetwork(demands=D[2:], populations=d["populations"], visits=V[2:])
    res = mva.solve_mixed(mva.MixedNetwork(closed=closed, arrival_rates=d["arrival_rates"],
                                           open_demands=D[:2]))
    tol = d["atol"]
    np.testing.assert_allclose(res.open.utilization, d["open_utilization"], atol=tol)
    np.testing.assert_allclose(res.closed.residence_time / V[2:], d["closed_response_time"],
                               atol=tol)
    np.testing.assert_allclose(res.closed.queue_length, d["closed_queue_length"], atol=tol)
    np.testing.assert_allclose(res.open.residence_time / V[:2], d["open_response_time"], atol=tol)
    np.testing.assert_allclose(res.closed.throughput, d["closed_throughput"], atol=tol)


def test_schwetman_fig10_mixed():
    d = ref.SCHWETMAN_FIG10
    closed = ClosedNetwork(demands=d["closed_demands"], populations=d["populations"])
    res = mva.solve_mixed(mva.MixedNetwork(closed=closed, arrival_rates=d["arrival_rates"],
                                           open_demands=d["open_demands"]))
    assert abs(res.open.residence_time[0, 0] - d["open_cpu_response"]) < d["atol"]
    np.testing.assert_allclose(res.closed.residence_time[0], d["closed_response"], atol=d["atol"])


def test_octave_mmck_examples():
    for d in ref.MMCK:
        r = mva.mmck(d["lam"], 1 / d["mu"], d["c"], d["K"])
        for field, attr in (("p0", "prob_empty"), ("R", "response_time"), ("pK", "blocking"),
                            ("L", "queue_length"), ("Wq", "waiting_time")):
            if d[field] is not None:
                assert abs(getattr(r, attr) - d[field]) < d.get(f"{field}_atol", d["atol"]), \
                    (d, field)
    d = ref.MM1K_BALANCED
    assert abs(mva.mm1k(d["lam"], 1 / d["mu"], d["K"]).queue_length - d["L"]) < d["atol"]


def test_engset_and_erlang_b_tables():
    d = ref.ENGSET_R
    assert abs(mva.engset(d["servers"], d["sources"], d["beta"], congestion="time")
               - d["time"]) < d["atol"]
    for d in ref.ERLANG_B:
        assert abs(mva.erlang_b(d["c"], d["a"]) - d["B"]) < d["atol"]


def test_casale_table_iv_proportional_bounds():
    d = ref.CASALE_TABLE_IV_PB
    N = [r[0] for r in d["rows"]]
    b = mva.proportional_bounds(d["demands"], population=N)
    np.testing.assert_allclose(b.throughput_lower, [r[1] for r in d["rows"]], atol=d["atol"])
    np.testing.assert_allclose(b.throughput_upper, [r[2] for r in d["rows"]], atol=d["atol"])


def test_casale_tables_iv_and_v_geometric_bounds():
    for d in (ref.CASALE_TABLE_IV_GB, ref.CASALE_TABLE_V_GSB):
        N = [r[0] for r in d["rows"]]
        b = mva.geometric_bounds(d["demands"], population=N, think_time=d["think_time"])
        np.testing.assert_allclose(b.throughput_lower, [r[1] for r in d["rows"]], atol=d["atol"])
        np.testing.assert_allclose(b.throughput_upper, [r[2] for r in d["rows"]], atol=d["atol"])
