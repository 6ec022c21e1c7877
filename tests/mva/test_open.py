"""Open queues (M/M/1, M/M/c, M/G/1) and open networks against known values."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import mva
from mva.open import OpenNetwork, solve_open


def test_mm1_known_values():
    # lambda = 0.8, S = 1: rho 0.8, L = 4, R = 5, W = 4, Lq = 3.2 (Kleinrock 1975, section 3.2)
    r = mva.mm1(0.8, 1.0)
    assert (r.utilization, r.queue_length, r.response_time) == pytest.approx((0.8, 4.0, 5.0))
    assert (r.waiting_time, r.waiting_queue_length, r.prob_wait) == pytest.approx((4.0, 3.2, 0.8))
    assert r.model == "M/M/1" and isinstance(r.response_time, float)


def test_mmc_erlang_c_known_values():
    # c = 3, lambda = 2, S = 1 (a = 2 Erlangs, rho = 2/3): P(wait) = 4/9, Lq = 8/9, Wq = 4/9
    # (the textbook M/M/3 example, e.g. Gross and Harris, Fundamentals of Queueing Theory)
    r = mva.mmc(2.0, 1.0, 3)
    assert r.prob_wait == pytest.approx(4 / 9, rel=1e-12)
    assert r.waiting_queue_length == pytest.approx(8 / 9, rel=1e-12)
    assert r.waiting_time == pytest.approx(4 / 9, rel=1e-12)
    assert r.queue_length == pytest.approx(8 / 9 + 2, rel=1e-12)
    assert r.utilization == pytest.approx(2 / 3)
    # c = 2, a = 1: C = 1/3 ; one server reduces to M/M/1
    assert mva.erlang_c(2, 1.0) == pytest.approx(1 / 3)
    assert mva.mmc(0.7, 1.0, 1).response_time == pytest.approx(mva.mm1(0.7, 1.0).response_time)


def test_mmc_large_server_count_is_stable():
    r = mva.mmc(95.0, 1.0, 100)
    assert 0 < r.prob_wait < 1 and np.isfinite(r.waiting_time)


def test_mg1_pollaczek_khinchine():
    # M/D/1 at rho = 0.5: W = 0.5 S; M/M/1 recovered at cs2 = 1
    assert mva.mg1(0.5, 1.0, 0.0).waiting_time == pytest.approx(0.5)
    assert (mva.mg1(0.5, 2.0 / 2, 1.0).response_time
            == pytest.approx(mva.mm1(0.5, 1.0).response_time))
    # hyperexponential cs2 = 4 at rho = 0.9: W = 0.9 * 5 / (2 * 0.1) = 22.5
    assert mva.mg1(0.9, 1.0, 4.0).waiting_time == pytest.approx(22.5)


def test_vectorised_broadcasting():
    r = mva.mmc([0.5, 1.0, 1.5], 1.0, [1, 2, 2])
    assert r.response_time.shape == (3,)
    assert r.response_time[0] == pytest.approx(2.0)
    lam = np.linspace(0.1, 0.9, 9)[:, None]
    cs2 = np.array([0.0, 1.0, 2.0])[None, :]
    assert mva.mg1(lam, 1.0, cs2).waiting_time.shape == (9, 3)


@given(st.floats(0.0, 0.99), st.floats(0.01, 100.0), st.integers(1, 30))
def test_mmc_littles_law_and_bounds(rho, S, c):
    lam = rho * c / S
    r = mva.mmc(lam, S, c)
    assert r.queue_length == pytest.approx(lam * r.response_time, rel=1e-12, abs=1e-12)
    assert 0.0 <= r.prob_wait <= 1.0
    assert r.response_time >= S


def test_saturation_raises():
    with pytest.raises(mva.SaturationError, match="rho must be < 1.*got 1.0") as info:
        mva.mm1(1.0, 1.0)
    assert info.value.utilization == 1.0
    with pytest.raises(mva.SaturationError):
        mva.mmc([1.0, 4.0], 1.0, 3)
    with pytest.raises(mva.SaturationError):
        mva.mg1(2.0, 0.6, 0.5)


def test_bad_input():
    with pytest.raises(ValueError, match="arrival_rate must be finite and >= 0; got -1.0"):
        mva.mm1(-1.0, 1.0)
    with pytest.raises(ValueError, match="service_time must be finite and > 0; got 0.0"):
        mva.mm1(0.5, 0.0)
    with pytest.raises(ValueError, match="servers must be >= 1; got 0"):
        mva.mmc(0.5, 1.0, 0)
    with pytest.raises(ValueError, match="service_time must be finite and > 0; got nan"):
        mva.mg1(0.5, float("nan"))


def test_open_network_jackson_example():
    """CPU + two disks, 2 jobs/s; each station an M/M/1 with its total demand (Lazowska ch. 6)."""
    net = OpenNetwork(arrival_rates=[2.0], demands=[[0.2, 0.1, 0.15]])
    res = solve_open(net)
    np.testing.assert_allclose(res.utilization[0], [0.4, 0.2, 0.3])
    np.testing.assert_allclose(res.residence_time[0], [0.2 / 0.6, 0.1 / 0.8, 0.15 / 0.7])
    np.testing.assert_allclose(res.queue_length, 2.0 * res.residence_time)
    assert mva.solve(net).response_time == pytest.approx(res.response_time)


def test_open_network_from_routing_and_graph_agree():
    nx = pytest.importorskip("networkx")
    P = [[0.0, 0.6, 0.3], [1.0, 0.0, 0.0], [1.0, 0.0, 0.0]]
    a = [1.0, 0.0, 0.0]
    S = [0.05, 0.08, 0.1]
    net = OpenNetwork.from_routing(P, a, S, servers=[1, 2, 1])
    # visits: V_cpu = 1 / (1 - 0.9) = 10, disk1 6, disk2 3
    np.testing.assert_allclose(net.visits[0], [10.0, 6.0, 3.0])
    G = nx.DiGraph()
    G.add_node("cpu", service_time=0.05, arrival_rate=1.0)
    G.add_node("d1", service_time=0.08, servers=2)
    G.add_node("d2", service_time=0.1)
    G.add_edge("cpu", "d1", weight=0.6)
    G.add_edge("cpu", "d2", weight=0.3)
    G.add_edge("d1", "cpu", weight=1.0)
    G.add_edge("d2", "cpu", weight=1.0)
    r1, r2 = solve_open(net), solve_open(OpenNetwork.from_graph(G))
    np.testing.assert_allclose(r1.response_time, r2.response_time)
    # the two-server disk is an M/M/2 of the station's load
    mm2 = mva.mmc(6.0, 0.08, 2)
    assert r1.residence_time[0, 1] == pytest.approx(6.0 * mm2.response_time)


def test_open_network_fcfs_cs2_is_pollaczek_khinchine():
    net = OpenNetwork(arrival_rates=[0.5], demands=[[1.0]], cs2=[0.0])
    assert solve_open(net).response_time[0] == pytest.approx(mva.mg1(0.5, 1.0, 0.0).response_time)


def test_open_network_saturation_names_station():
    net = OpenNetwork(arrival_rates=[1.0, 1.0], demands=[[0.3, 0.6], [0.2, 0.5]],
                      station_names=["cpu", "disk"])
    with pytest.raises(mva.SaturationError, match="'disk'") as info:
        solve_open(net)
    assert info.value.bottleneck == "disk"
    assert info.value.utilization == pytest.approx(1.1)


def test_open_results_to_dict_and_frame():
    res = solve_open(OpenNetwork(arrival_rates=[1.0], demands=[[0.5, 0.2]]))
    d = res.to_dict()
    assert d["throughput"] == [1.0] and d["method"] == "open"
    pytest.importorskip("pandas")
    assert len(res.to_frame()) == 2
    r = mva.mm1([0.1, 0.2], 1.0)
    assert r.to_dict()["response_time"] == pytest.approx([1 / 0.9, 1 / 0.8])
    assert len(r.to_frame()) == 2


# ----------------------------------------------------------------------
# class switching from routing matrices
# ----------------------------------------------------------------------
def _random_switching(rng, C, K, util):
    P = rng.random((C, K, C, K)) * (rng.random((C, K, C, K)) < 0.5)
    rows = P.reshape(C * K, -1).sum(axis=1).reshape(C, K)
    keep = rng.uniform(0.0, 0.8, size=(C, K))                 # probability of staying
    P = P * np.where(rows > 0, keep / np.where(rows > 0, rows, 1.0), 0.0)[:, :, None, None]
    a = rng.uniform(0.0, 1.0, size=(C, K)) * (rng.random((C, K)) < 0.6)
    a[0, 0] += 0.1
    S = rng.uniform(0.05, 1.0, size=(C, K))
    lam = np.linalg.solve(np.eye(C * K) - P.reshape(C * K, -1).T, a.ravel()).reshape(C, K)
    load = (lam * S).sum(axis=0)
    S *= util / load.max()
    return P, a, S


def test_class_switching_visits_and_queues_on_random_networks():
    from mva.open import OpenNetwork, solve_open
    rng = np.random.default_rng(31337)
    for _ in range(100):
        C, K = int(rng.integers(1, 4)), int(rng.integers(1, 4))
        P, a, S = _random_switching(rng, C, K, rng.uniform(0.1, 0.9))
        net = OpenNetwork.from_class_routing(P, a, S)
        # throughputs by the Neumann series sum_n a P^n, an independent route
        flat = P.reshape(C * K, -1)
        lam, term = np.zeros(C * K), a.ravel().copy()
        while term.sum() > 1e-18 * max(lam.sum(), 1.0):
            lam += term
            term = term @ flat
        lam = lam.reshape(C, K)
        np.testing.assert_allclose(net.arrival_rates[:, None] * net.demands, lam * S, rtol=1e-9,
                                   atol=1e-15)
        # every job arrives once: the chains' arrival rates add up to the external total
        res = solve_open(net)
        U = (lam * S).sum(axis=0)
        np.testing.assert_allclose(res.queue_length.sum(axis=0), U / (1 - U), rtol=1e-9, atol=1e-15)
        np.testing.assert_allclose(res.queue_length, res.throughput[:, None] * res.residence_time,
                                   rtol=1e-12)


def test_class_switching_against_truncated_ctmc():
    """Processor-sharing CTMC over (class, station) counts, truncated at T per station."""
    import itertools

    import scipy.sparse as sp
    import scipy.sparse.linalg as spla

    from mva.open import OpenNetwork, solve_open
    rng = np.random.default_rng(4)
    C, K, T = 2, 2, 10
    for _ in range(2):
        P, a, S = _random_switching(rng, C, K, 0.08)
        per_station = [s for s in itertools.product(range(T + 1), repeat=C) if sum(s) <= T]
        states = list(itertools.product(per_station, repeat=K))
        index = {s: i for i, s in enumerate(states)}
        rows, cols, vals = [], [], []

        def move(state, frm, to):
            st = [list(x) for x in state]
            if frm is not None:
                st[frm[1]][frm[0]] -= 1
            if to is not None:
                if sum(st[to[1]]) >= T:
                    return None                               # truncation: lost (prob ~ U^T)
                st[to[1]][to[0]] += 1
            return tuple(tuple(x) for x in st)

        for i, s in enumerate(states):
            for c in range(C):
                for k in range(K):
                    if a[c, k] > 0:
                        t = move(s, None, (c, k))
                        if t is not None:
                            rows.append(i), cols.append(index[t]), vals.append(a[c, k])
                    n = sum(s[k])
                    if s[k][c] == 0:
                        continue
                    rate = s[k][c] / n / S[c, k]
                    leave = 1.0 - P[c, k].sum()
                    if leave > 0:
                        t = move(s, (c, k), None)
                        rows.append(i), cols.append(index[t]), vals.append(rate * leave)
                    for d in range(C):
                        for j in range(K):
                            if P[c, k, d, j] > 0:
                                t = move(s, (c, k), (d, j))
                                if t is None:
                                    t = move(s, (c, k), None)
                                (rows.append(i), cols.append(index[t]),
                                 vals.append(rate * P[c, k, d, j]))
        n = len(states)
        Q = sp.csr_matrix((vals, (rows, cols)), shape=(n, n))
        Q = Q - sp.diags(np.asarray(Q.sum(axis=1)).ravel())
        A = sp.vstack([sp.csr_matrix(np.ones((1, n))), Q.T.tocsr()[1:]]).tocsc()
        b = np.zeros(n)
        b[0] = 1.0
        pi = spla.spsolve(A, b)
        occ = np.array([[s[k][c] for k in range(K) for c in range(C)] for s in states], dtype=float)
        mean = (pi @ occ).reshape(K, C).T                      # (C, K)
        res = solve_open(OpenNetwork.from_class_routing(P, a, S))
        np.testing.assert_allclose(res.queue_length, mean, rtol=1e-9, atol=1e-14)


def test_class_switching_bad_input():
    from mva.open import OpenNetwork
    P = np.zeros((2, 2, 2, 2))
    with pytest.raises(ValueError, match=r"arrivals must have shape \(2, 2\)"):
        OpenNetwork.from_class_routing(P, [1.0, 0.0], np.ones((2, 2)))
    with pytest.raises(ValueError, match=r"routing must have shape \(2, 2, 2, 2\) or \(4, 4\)"):
        OpenNetwork.from_class_routing(np.zeros((3, 3)), np.ones((2, 2)), np.ones((2, 2)))
    P[0, 0, 0, 0] = 1.0
    with pytest.raises(ValueError, match="every customer must eventually leave"):
        OpenNetwork.from_class_routing(P, [[1.0, 0.0], [0.0, 0.0]], np.ones((2, 2)))
