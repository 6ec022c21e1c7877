"""Tests for the LoPC model (Frank, Agarwal and Vernon, PPoPP 1997)."""

import contextlib
import io
import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import brentq

from models import lopc
from models.lopc import LoPCParams, optimal_servers, solve, solve_client_server


def lopc_reference(W, o, L, c=1.0):
    """Scalar brentq on R of the published LoPC equations (design item 1), written out."""

    def parts(R):
        lam = 1.0 / R
        U = o * lam
        # R_q = o(1 + lam R_q + lam R_y + 2U h), R_y = o(1 + lam R_q + U h), h = (c-1)/2
        h = (c - 1) / 2
        a11, a12, b1 = 1 - o * lam, -o * lam, o * (1 + 2 * U * h)
        a21, a22, b2 = -o * lam, 1.0, o * (1 + U * h)
        det = a11 * a22 - a12 * a21
        R_q = (b1 * a22 - a12 * b2) / det
        R_y = (a11 * b2 - a21 * b1) / det
        Q_q = lam * R_q
        R_w = (W + o * Q_q + o * U * h) / (1 - U)
        return dict(R=R, R_q=R_q, R_y=R_y, R_w=R_w, Q_q=Q_q, Q_y=lam * R_y, U_q=U)

    def f(R):
        p = parts(R)
        return p["R_w"] + 2 * L + p["R_q"] + p["R_y"] - R

    r0 = W + 2 * L + 2 * o
    R = brentq(f, r0, 100 * r0 + 10 * o, xtol=1e-300, rtol=4 * np.finfo(float).eps)
    return parts(R)


def test_reference_workload_1406():
    """P=16, W=1000, o=100, L=50: four independent simulators give 1404.7-1407.6 cycles
    (issue 3); the model must be within 1% of 1406."""
    for m in ("auto", "lopc", "node", "exact"):
        r = solve(LoPCParams(P=16, W=1000, o=100, L=50), method=m)
        assert r.R == pytest.approx(1406, rel=0.01), m
        assert r.contention == pytest.approx(r.R - 1300)
        assert r.converged and r.method == (lopc.AUTO_METHOD if m == "auto" else m)


lopc_params = st.fixed_dictionaries({
    "W": st.floats(0.0, 1e5), "o": st.floats(0.0, 5000.0), "L": st.floats(0.0, 5000.0),
    "cs2": st.floats(0.0, 4.0)}).filter(lambda p: p["W"] + 2 * p["L"] + 2 * p["o"] > 1.0)


@given(lopc_params, st.integers(2, 256))
def test_matches_independent_brentq(p, P):
    ref = lopc_reference(p["W"], p["o"], p["L"], p["cs2"])
    r = solve(P=P, **p, method="lopc")
    for k in ("R", "R_q", "R_y", "R_w", "Q_q", "Q_y", "U_q"):
        assert getattr(r, k) == pytest.approx(ref[k], rel=1e-9, abs=1e-12), k


@given(lopc_params, st.floats(1.01, 3.0), st.sampled_from(["W", "o", "L"]))
def test_invariants_and_monotonicity(p, factor, which):
    r = solve(P=8, **p, method="lopc")
    r0 = p["W"] + 2 * p["L"] + 2 * p["o"]
    assert r.R >= r0 * (1 - 1e-12)
    assert r.R == pytest.approx(r.R_w + 2 * p["L"] + r.R_q + r.R_y, rel=1e-9)
    assert r.Q_q == pytest.approx(r.lam * r.R_q, rel=1e-9)
    assert 0 <= r.U_q < 1
    q = dict(p)
    q[which] = q[which] * factor + 1.0
    assert solve(P=8, **q, method="lopc").R >= r.R * (1 - 1e-12)


def test_published_equations_independent_of_p():
    r = solve(P=np.array([2, 4, 64, 1024]), W=1000, o=100, L=50, method="lopc")
    assert np.ptp(r.R) == 0.0


def test_cs2_orders_round_trip():
    vals = [solve(P=16, W=1000, o=100, L=50, cs2=c).R for c in (0.0, 1.0, 3.0)]
    assert vals[0] < vals[1] < vals[2]


def test_symbolic_reduction_is_quartic():
    from mva.symbolic import clear_denominators

    e = lopc.reduced_equation()
    num, den, coeffs = clear_denominators(e.residual, e.keep)
    assert len(coeffs) == 5
    assert len(lopc.lopc_system().equations) == 8


def test_grid_shapes():
    r = solve(P=16, W=np.linspace(0, 1e4, 5)[:, None], o=np.array([10.0, 100.0]), L=50)
    assert np.shape(r.R) == (5, 2) and np.shape(r.converged) == (5, 2)
    assert isinstance(solve(P=4, W=1, o=1, L=1).R, float)


@pytest.mark.parametrize("kw, match", [
    (dict(P=1, W=1, o=1, L=1), "P"),
    (dict(P=2.5, W=1, o=1, L=1), "P"),
    (dict(P=4, W=-1, o=1, L=1), "W"),
    (dict(P=4, W=1, o=1, L=float("inf")), "L"),
    (dict(P=4, W=1, o=1, L=1, cs2=-1), "cs2"),
    (dict(P=4, W=0, o=0, L=0), "contention-free"),
])
def test_bad_parameters(kw, match):
    with pytest.raises(ValueError, match=match):
        LoPCParams(**kw)


def test_bad_solver_arguments():
    with pytest.raises(ValueError, match="method"):
        solve(P=4, W=1, o=1, L=1, method="simulate")
    with pytest.raises(ValueError, match="unknown keyword"):
        solve(P=4, W=1, o=1, L=1, N=3)


# -- client-server ------------------------------------------------------------------

def cs_reference(P, S, W, o, L, c=1.0):
    C = P - S

    def f(R):
        lam = 1 / R
        U = C * o * lam / S
        # R_q = o (1 + (C/S) lam R_q + U (c-1)/2)
        R_q = o * (1 + U * (c - 1) / 2) / (1 - C / S * o * lam)
        return W + 2 * L + R_q + o - R

    lo = max(W + 2 * L + 2 * o, C / S * o * (1 + 1e-12))
    return brentq(f, lo * (1 + 1e-15), 1e3 * (W + 2 * L + 2 * o) + 1e3 * C * o,
                  xtol=1e-300, rtol=4 * np.finfo(float).eps)


@given(st.integers(2, 64), st.data(), st.floats(0, 1e4), st.floats(1, 1e3),
       st.floats(0, 1e3), st.floats(0, 3))
def test_client_server_closed_form(P, data, W, o, L, c):
    S = data.draw(st.integers(1, P - 1))
    r = solve_client_server(P, S, W, o, L, c)
    assert r.R == pytest.approx(cs_reference(P, S, W, o, L, c), rel=1e-9)
    assert r.R >= W + 2 * L + 2 * o
    assert 0 <= r.U_server < 1
    assert r.throughput == pytest.approx((P - S) / r.R)


def test_optimal_servers_brute_force():
    P, W, o, L = 32, 2000.0, 150.0, 40.0
    X = [solve_client_server(P, s, W, o, L).throughput for s in range(1, P)]
    best = optimal_servers(P, W, o, L)
    assert best.servers == int(np.argmax(X)) + 1
    assert best.throughput == pytest.approx(max(X))
    grid = optimal_servers(np.array([4, 16, 64]), W, o, L)
    assert grid.servers.tolist() == [optimal_servers(p, W, o, L).servers for p in (4, 16, 64)]
    # heuristic balance point of the docs is close to the optimum
    assert abs(best.servers - P * o / (W + 2 * L + 3 * o)) <= 2


def test_client_server_errors():
    with pytest.raises(ValueError, match="S must be <= P - 1"):
        solve_client_server(4, 4, 1, 1, 1)
    with pytest.raises(ValueError, match="method"):
        solve_client_server(4, 1, 1, 1, 1, method="magic")


def test_cli_lopc():
    from models.cli import main

    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        assert main(["lopc", "--P", "16", "--W", "1000", "--o", "100", "--L", "50",
                     "--format", "csv"]) == 0
    lines = buf.getvalue().strip().splitlines()
    head = lines[0].split(",")
    row = dict(zip(head, lines[1].split(",")))
    assert float(row["R"]) == pytest.approx(1406, rel=0.01)
    assert math.isclose(float(row["contention"]), float(row["R"]) - 1300, rel_tol=1e-9)


# -- queueing-network methods (mva engine) ------------------------------------------

def test_network_methods_reference_workload():
    """The closed-network solutions of the same machine also land near 1406 (the
    simulators' 1404.7-1407.6)."""
    for m in ("mva", "linearizer", "schweitzer"):
        r = solve(P=16, W=1000, o=100, L=50, method=m)
        assert r.R == pytest.approx(1406, rel=0.01), m
        assert r.converged
    assert solve(P=16, W=1000, o=100, L=50, method="mva").method == "exact"
    assert solve(P=6, W=1000, o=100, L=50, method="mva").method == "exact"


@pytest.mark.parametrize("P", [2, 3, 8])
def test_methods_agree_at_light_load(P):
    ref = solve(P=P, W=1e6, o=20.0, L=30.0, method="lopc").R
    for m in ("exact", "linearizer", "schweitzer", "node"):
        r = solve(P=P, W=1e6, o=20.0, L=30.0, method=m)
        assert r.R == pytest.approx(ref, rel=1e-5), m


def test_network_exact_structure():
    r = solve(P=4, W=500.0, o=100.0, L=20.0, method="exact")
    assert r.R == pytest.approx(r.R_w + 40.0 + r.R_q + r.R_y, rel=1e-9)
    assert r.Q_q == pytest.approx(r.lam * r.R_q, rel=1e-9)
    # the arrival theorem: a reply never waits for its own request, and a thread's
    # compute phase never sees its own reply, so R_y < R_q
    assert r.R_y < r.R_q
    # exact is below the LoPC equations (no self-interference) at small P
    assert r.R < solve(P=4, W=500.0, o=100.0, L=20.0, method="lopc").R


def test_engine_methods_refuse_large_p():
    with pytest.raises(ValueError, match="P must be <= 64"):
        solve(P=65, W=1, o=1, L=1, method="linearizer")


@pytest.mark.parametrize("P", [2, 3, 5, 8])
@pytest.mark.parametrize("cs2", [0.0, 1.0, 6.0])
def test_symmetric_exact_equals_engine_exact(P, cs2):
    """The O(P) symmetric recursion is exact MVA of the full network (mva.exact_mva)."""
    import mva

    for W, o, L in ((1000.0, 100.0, 50.0), (0.0, 300.0, 0.0), (50.0, 200.0, 500.0)):
        net = lopc._lopc_network(P, W, o, L, cs2)
        res = mva.exact_mva(net)
        X = float(np.mean(np.asarray(res.chain_throughput)))
        Rk = np.asarray(res.residence_time)
        r = solve(P=P, W=W, o=o, L=L, cs2=cs2, method="exact")
        assert r.R == pytest.approx(1.0 / X, rel=1e-12)
        assert r.R_w == pytest.approx(float(np.mean(Rk[0::3].sum(axis=1))), rel=1e-12)
        assert r.R_q == pytest.approx(float(np.mean(Rk[1::3].sum(axis=1))), rel=1e-12)
        assert r.R_y == pytest.approx(float(np.mean(Rk[2::3].sum(axis=1))), rel=1e-12)
    # a grid of mixed P runs the same recursion vectorised
    g = solve(P=np.array([P, 16, 1024]), W=1000.0, o=100.0, L=50.0, cs2=cs2, method="exact")
    assert g.R[0] == pytest.approx(solve(P=P, W=1000.0, o=100.0, L=50.0, cs2=cs2,
                                         method="exact").R, rel=1e-13)


@given(st.integers(2, 1024), st.floats(0.0, 1e5), st.floats(1.0, 5000.0),
       st.floats(0.0, 5000.0), st.sampled_from([0.0, 0.25, 0.5, 1.0, 2.0, 10.0]))
def test_node_method_invariants(P, W, o, L, cs2):
    r = solve(P=P, W=W, o=o, L=L, cs2=cs2, method="node")
    assert r.converged
    assert r.R >= (W + 2 * L + 2 * o) * (1 - 1e-9)
    assert r.R == pytest.approx(r.R_w + r.R_p + 2 * L + r.R_q + r.R_y, rel=1e-6)
    assert r.R_q >= o * (1 - 1e-9) and r.R_y >= o * (1 - 1e-9)
    assert r.R_w >= W * (1 - 1e-6)
    assert 0 <= r.U_q < 1 and r.Q_y == pytest.approx(r.R_y / r.R, rel=1e-9)
    assert r.Q_q == pytest.approx(r.lam * r.R_q, rel=1e-4)   # Little, arrival rate = 1/R


def test_node_method_monotone_in_cs2_and_o():
    vals = [solve(P=16, W=1000, o=100, L=50, cs2=c, method="node").R for c in (0.0, 1.0, 4.0, 10.0)]
    assert all(a < b for a, b in zip(vals, vals[1:]))
    vals = [solve(P=64, W=0, o=o, L=50, method="node").R for o in (50.0, 100.0, 200.0)]
    assert all(a < b for a, b in zip(vals, vals[1:]))


def test_node_method_no_handler_time():
    r = solve(P=8, W=100.0, o=0.0, L=20.0, method="node")
    assert r.R == 140.0 and r.contention == 0.0


def test_client_server_mva_close_to_lopc():
    a = solve_client_server(16, 4, 1000.0, 100.0, 50.0)
    b = solve_client_server(16, 4, 1000.0, 100.0, 50.0, method="mva")
    assert b.R == pytest.approx(a.R, rel=0.03)
    assert b.R <= a.R          # arrival theorem: no self-queueing
    light = [solve_client_server(8, 2, 1e6, 10.0, 5.0, method=m).R for m in ("lopc", "mva")]
    assert light[0] == pytest.approx(light[1], rel=1e-6)


def test_quartic_printed_in_docs():
    """docs/models/lopc.rst prints the reduced quartic in R; check it."""
    import sympy as sp

    from mva.symbolic import clear_denominators

    y = lopc._symbols()
    R, W, o, L = y["R"], y["W"], y["o"], y["L"]
    docs = R**4 - (W + 2 * L + 4 * o) * R**3 + o * (W + 4 * L) * R**2 + o**2 * (W + o) * R \
        - 2 * L * o**3
    res = lopc.reduced_equation().residual
    assert sp.simplify(res - docs / ((R - o) * (R**2 - R * o - o**2))) == 0
    num, den, coeffs = clear_denominators(res, R)
    assert len(coeffs) == 5


def test_result_to_dict_and_frame():
    r = solve(P=16, W=np.array([0.0, 1000.0]), o=100, L=50, method="lopc")
    assert r.to_dict()["method"] == "lopc"
    f = r.to_frame()
    assert len(f) == 2
    np.testing.assert_allclose(f["R"], r.R)
    cs = solve_client_server(16, np.array([1, 2, 4]), 1000, 100, 50)
    assert len(cs.to_frame()) == 3 and cs.to_dict()["method"] == "lopc"


def test_an_infinite_contention_free_round_trip_is_refused():
    # found by fuzzing: o = L = 1e308 overflowed W + 2L + 2o and the node method never returned
    import pytest

    with pytest.raises(ValueError, match=r"W \+ 2L \+ 2o .* must be a finite number of cycles"):
        LoPCParams(P=16, W=1000, o=1e308, L=1e308)


@given(st.integers(2, 256), st.sampled_from([0.0, 0.5, 1.0, 4.0, 10.0]),
       st.sampled_from(["W", "L"]), st.floats(1.1, 10.0))
def test_node_method_monotone_in_w_and_l(P, cs2, which, factor):
    """The node method's cycle grows with compute time and latency; handler residences do
    not grow with compute time (the handlers' load falls)."""
    base = dict(P=P, W=100.0, o=50.0, L=20.0, cs2=cs2)
    a = solve(**base, method="node")
    b = solve(**dict(base, **{which: base[which] * factor}), method="node")
    assert b.R >= a.R * (1 - 1e-6)
    if which == "W":
        assert b.R_q <= a.R_q * (1 + 1e-6) and b.R_y <= a.R_y * (1 + 1e-6)
        assert b.U_q <= a.U_q * (1 + 1e-9)


# -- whole-machine chains (P <= 5) and the corrected node chain (P 6-64) --------------

small_machine = st.fixed_dictionaries({
    "P": st.integers(4, 40), "W": st.floats(0.0, 2000.0), "o": st.floats(1.0, 3000.0),
    "L": st.floats(0.0, 500.0), "cs2": st.sampled_from([0.25, 0.5, 1.0, 2.0, 6.0])})


@settings(max_examples=15, deadline=None)
@given(small_machine)
def test_node_small_machines_invariants(p):
    """P 4-40 (whole machine or corrected node chain): the cycle is its parts, Little's law,
    every residence at least its own handler, R at least the contention-free round trip."""
    r = solve(method="node", **p)
    assert r.converged and r.method == "node"
    assert r.R == pytest.approx(r.R_w + r.R_p + r.R_q + r.R_y + 2 * p["L"], rel=1e-8)
    assert r.Q_q == pytest.approx(r.R_q / r.R, rel=1e-8)
    assert r.Q_y == pytest.approx(r.R_y / r.R, rel=1e-8)
    assert r.R_q >= p["o"] * (1 - 1e-9) and r.R_y >= p["o"] * (1 - 1e-9)
    assert r.R >= (p["W"] + 2 * p["L"] + 2 * p["o"]) * (1 - 1e-9)


def test_whole_machine_and_correction_are_used():
    """P = 4 with a variable handler: the lumped whole-machine chain itself; P = 6, and a
    regular handler at P = 4: the node chain plus the whole machine's correction."""
    from models import _node

    W, o, L = 20.0, 1000.0, 30.0
    whole = _node.solve_full(4, W, o, 6.0, L, latency_stages=1, fifo=False)
    assert solve(P=4, W=W, o=o, L=L, cs2=6.0).R == pytest.approx(whole["R"], rel=1e-9)
    node4 = _node.solve_node(3, W, o, 6.0, 2 * L, tol=1e-8, max_iter=200)
    node6 = _node.solve_node(5, W, o, 6.0, 2 * L, tol=1e-8, max_iter=200)
    want = node6["R"] + (3 / 5) ** lopc.CORRECT_BETA * (whole["R"] - node4["R"])
    assert solve(P=6, W=W, o=o, L=L, cs2=6.0).R == pytest.approx(want, rel=1e-5)
    # the correction raises R here (the node chain is 5-10% low on handler-bound machines)
    assert solve(P=6, W=W, o=o, L=L, cs2=6.0).R > node6["R"] * 1.02
    w1 = _node.solve_full(4, W, o, 1.0, L, latency_stages=1, fifo=False)
    n1 = _node.solve_node(3, W, o, 1.0, 2 * L, tol=1e-8, max_iter=200)
    nk = _node.solve_node(3, W, o, 0.5, 2 * L, tol=1e-8, max_iter=200)
    assert solve(P=4, W=W, o=o, L=L, cs2=0.5).R == pytest.approx(
        nk["R"] + w1["R"] - n1["R"], rel=1e-5)


def test_correction_fades_with_machine_size():
    """Beyond CORRECT_MAX_P, or with lightly loaded handlers, the node chain is returned as is;
    the correction's share of R falls as P grows."""
    from models import _node

    W, o, L, c = 20.0, 1000.0, 30.0, 6.0
    P = lopc.CORRECT_MAX_P + 1
    bare = _node.solve_node(P - 1, W, o, c, 2 * L, tol=1e-8, max_iter=200)["R"]
    assert solve(P=P, W=W, o=o, L=L, cs2=c).R == pytest.approx(bare, rel=1e-5)
    light = _node.solve_node(7, 1e5, 10.0, c, 2 * L, tol=1e-8, max_iter=200)["R"]
    assert solve(P=8, W=1e5, o=10.0, L=L, cs2=c).R == pytest.approx(light, rel=1e-5)
    share = []
    for P in (6, 12, 48):
        node = _node.solve_node(P - 1, W, o, c, 2 * L, tol=1e-8, max_iter=200)["R"]
        share.append(solve(P=P, W=W, o=o, L=L, cs2=c).R / node - 1)
    assert share[0] > share[1] > share[2] > 0


@pytest.mark.parametrize("W, o, L, cs2", [(0.5, 50.0, 200.0, 1.0), (0.1, 10.0, 40.0, 1 / 3),
                                          (20.0, 1000.0, 3000.0, 4.0)])
def test_two_processors_handler_bound_against_the_simulator(W, o, L, cs2):
    """P = 2 with W well below o: the default (the whole-machine chain, 16 latency stages on
    shared clocks) against a short simulation (20,000 cycles, half-width below 1%); the
    version with independent clocks per message was 11-14% low at these points."""
    from validation.domain import simulate_point

    s = simulate_point(family="lopc", seed=7, target=0.01, P=2, W=W, o=o, L=L, cs2=cs2)
    r = solve(P=2, W=W, o=o, L=L, cs2=cs2)
    assert abs(r.R - s["R"]) <= 0.02 * s["R"]
    assert abs(r.R_q - s["R_q"]) <= 0.05 * s["R_q"]
