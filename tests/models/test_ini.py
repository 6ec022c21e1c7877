"""Tests for the two-level INI model (Jiang 1997, thesis chapter 6)."""

import math
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.optimize import brentq

from models import ini
from models.accuracy import AccuracyWarning
from models.ini import FIGURE_6_3, INIParams, ini_overhead, solve

# -- an independent solution of equations 6.1-6.10, written out separately ----------


def thesis_reference(N, W, o, l, O, L):
    """Scalar brentq on R of the ten published equations (thesis section 6.3)."""

    def unknowns(R):
        lam = 1.0 / R                         # 6.2
        U_q = o / R                           # 6.10
        # 6.3, 6.4, 6.6, 6.7: R_q = o(1 + lam R_q + lam R_y), R_y = o(1 + lam R_q)
        # -> R_q (1 - o lam) = o + o lam R_y,  R_y = o + o lam R_q
        R_q = (o + o * lam * o) / (1.0 - o * lam - (o * lam) ** 2)
        R_y = o * (1.0 + lam * R_q)
        Q_q, Q_y = lam * R_q, lam * R_y
        R_o = O / (1.0 - 4.0 * N * lam * O)   # 6.5 + 6.8
        Q_o = 4.0 * N * lam * R_o
        R_w = (W + o * Q_q) / (1.0 - U_q)     # 6.9
        return dict(R=R, lam=lam, U_q=U_q, R_q=R_q, R_y=R_y, Q_q=Q_q, Q_y=Q_y, R_o=R_o,
                    Q_o=Q_o, R_w=R_w)

    def f(R):                                  # 6.1
        u = unknowns(R)
        return u["R_w"] + 2 * l + u["R_q"] + 2 * L + 4 * u["R_o"] + u["R_y"] - R

    lo = max(4.0 * N * O, o * (1 + math.sqrt(5)) / 2) * (1 + 1e-12) + 1e-9
    R = brentq(f, lo, 1e13, xtol=1e-300, rtol=4 * np.finfo(float).eps, maxiter=500)
    return unknowns(R)


params = st.fixed_dictionaries({
    "N": st.floats(0.25, 64.0),
    "W": st.floats(0.0, 1e5),
    "o": st.floats(0.0, 3000.0),
    "l": st.floats(0.0, 1000.0),
    "O": st.floats(0.0, 5000.0),
    "L": st.floats(0.0, 3000.0),
}).filter(lambda p: p["W"] + 2 * p["l"] + 2 * p["L"] + 2 * p["o"] + 4 * p["O"] > 1.0)


@given(params)
def test_thesis_matches_independent_brentq(p):
    ref = thesis_reference(**p)
    r = solve(INIParams(**p), method="thesis")
    assert r.converged
    for k in ("R", "lam", "R_q", "R_y", "R_o", "R_w", "Q_q", "Q_y", "Q_o", "U_q"):
        assert getattr(r, k) == pytest.approx(ref[k], rel=1e-9, abs=1e-12), k


def test_thesis_grid_matches_pointwise_reference():
    rng = np.random.default_rng(7)
    n = 40
    grid = dict(N=rng.uniform(1, 32, n), W=rng.uniform(0, 5e4, n), o=rng.uniform(0, 2000, n),
                l=rng.uniform(0, 500, n), O=rng.uniform(1, 4000, n), L=rng.uniform(0, 500, n))
    r = solve(**grid, method="thesis")
    assert np.shape(r.R) == (n,) and np.all(r.converged)
    for i in range(n):
        ref = thesis_reference(**{k: v[i] for k, v in grid.items()})
        assert r.R[i] == pytest.approx(ref["R"], rel=1e-9)
        assert r.Q_o[i] == pytest.approx(ref["Q_o"], rel=1e-9)


variants = st.fixed_dictionaries({
    "cs2_o": st.floats(0.0, 4.0), "cs2_O": st.floats(0.0, 4.0),
    "K": st.integers(1, 4), "dispatch": st.sampled_from(ini.DISPATCH)})


@given(params, variants)
def test_q_o_bounded_by_n(p, v):
    """Equation 6.11: Q_o <= N (every configuration, cs2 and dispatch variants too)."""
    r = solve(INIParams(**p, **v), method="thesis")
    assert 0.0 <= r.Q_o <= p["N"] * (1 + 1e-9)
    assert 0.0 <= r.U_o < 1.0
    assert 0.0 <= r.U_q <= 1.0


@given(params, variants)
def test_round_trip_at_least_contention_free(p, v):
    r = solve(INIParams(**p, **v), method="thesis")
    r0 = p["W"] + 2 * p["l"] + 2 * p["L"] + 2 * p["o"] + 4 * p["O"]
    assert r.contention_free == pytest.approx(r0)
    assert r.R >= r0 * (1 - 1e-12)
    assert r.contention >= -1e-9 * r0
    assert r.R == pytest.approx(r.R_w + 2 * p["l"] + r.R_q + 2 * p["L"] + 4 * r.R_o + r.R_y,
                                rel=1e-9)
    # Little's law
    assert r.Q_q == pytest.approx(r.lam * r.R_q, rel=1e-9)
    assert r.Q_o == pytest.approx(4 * (p["N"]) * r.lam * r.R_o, rel=1e-9)


@given(params, st.floats(1.01, 4.0), st.sampled_from(["N", "O", "o"]))
def test_round_trip_non_decreasing_in_n_o_and_big_o(p, factor, which):
    base = solve(INIParams(**p), method="thesis").R
    q = dict(p)
    q[which] = q[which] * factor + (1.0 if which != "N" else 0.0)
    assert solve(INIParams(**q), method="thesis").R >= base * (1 - 1e-12)


def test_q_o_bound_symbolic():
    import sympy as sp

    b = ini.q_o_bound()
    y = ini._symbols()
    assert sp.simplify(b["limit"] - y["N"]) == 0
    # the slack N - Q_o is N (R - 4 R_o)/R: a product/ratio of non-negative terms
    slack = b["slack"]
    pos = {s: sp.Symbol(s.name, positive=True) for s in slack.free_symbols}
    assert sp.simplify(slack.subs(pos)).is_nonnegative
    # equality case numerically: W = o = l = L = 0 gives Q_o = N
    r = solve(N=np.array([1.0, 3.0, 7.5]), W=0, o=0, O=100, method="thesis")
    np.testing.assert_allclose(r.Q_o, [1.0, 3.0, 7.5], rtol=1e-10)


def test_reduced_equation_is_quintic_and_renders():
    from mva.symbolic import clear_denominators, to_latex

    e = ini.reduced_equation()
    num, den, coeffs = clear_denominators(e.residual, e.keep)
    assert len(coeffs) == 6
    assert "\\lambda" in to_latex(num)
    assert len(ini.thesis_system().equations) == 10


def test_general_system_reduces_to_published():
    import sympy as sp

    y = ini._symbols()
    s, d, m, ch, cO, phi = sp.symbols("s d m c_h c_O phi", positive=True)
    g = ini.reduced_equation(general=True).residual.subs(
        {s: y["O"], d: 0, m: y["N"], ch: 1, cO: 1, phi: 1})
    assert sp.simplify(g - ini.reduced_equation().residual) == 0


def test_figure_6_3_queue_grows_linearly_when_ini_dominates():
    """Thesis section 6.4: with Figure 6-3's parameters, Q_o grows linearly with N once
    the INI overhead dominates the cycle (4 N O >> W)."""
    N = np.arange(1, 65, dtype=float)
    r = solve(INIParams(N=N, **FIGURE_6_3), method="thesis")
    q = np.asarray(r.Q_o)
    assert np.all(np.diff(q) > 0)
    big = N >= 24                         # 4 N O >= 5.4 W: INI-dominated
    slope, icpt = np.polyfit(N[big], q[big], 1)
    fit = slope * N[big] + icpt
    assert slope == pytest.approx(1.0, abs=0.02)
    assert np.max(np.abs(q[big] - fit)) < 0.05
    # ... and far below N while the PEs dominate
    assert q[0] < 0.25 and q[1] < 0.5
    assert np.all(r.bottleneck[big] == "INI")


def test_scalars_in_scalars_out_and_broadcasting():
    r = solve(N=4, **FIGURE_6_3, method="thesis")
    assert isinstance(r.R, float) and isinstance(r.Q_o, float) and isinstance(r.converged, bool)
    r = solve(N=np.array([[1.0], [2.0]]), W=np.array([1e3, 1e4, 1e5]), o=10, O=100, method="thesis")
    assert np.shape(r.R) == (2, 3) and np.shape(r.contention_free) == (2, 3)
    assert r.to_dict()["method"] == "thesis"


def test_cs2_effects():
    base = solve(N=8, **FIGURE_6_3, method="thesis")
    det = solve(N=8, cs2_O=0.0, **FIGURE_6_3, method="thesis")
    bursty = solve(N=8, cs2_O=3.0, **FIGURE_6_3, method="thesis")
    assert det.R < base.R < bursty.R
    assert solve(N=8, cs2_o=0.0, **FIGURE_6_3, method="thesis").R < base.R
    same = solve(N=8, cs2_O=1.0, cs2_o=1.0, **FIGURE_6_3, method="thesis")
    assert same.R == base.R


def test_dispatch_disciplines():
    common = dict(S=16, W=41789.0, o=742.0, O=2336.0)
    for K in (1,):
        vals = [solve(INIParams(K=K, dispatch=d, **common), method="thesis").R
                for d in ini.DISPATCH]
        assert vals[0] == pytest.approx(vals[1], rel=1e-12)
        assert vals[0] == pytest.approx(vals[2], rel=1e-12)
    K = 4
    st_ = solve(INIParams(K=K, dispatch="static", **common), method="thesis")
    rr = solve(INIParams(K=K, dispatch="round_robin", **common), method="thesis")
    sh = solve(INIParams(K=K, dispatch="shared", **common), method="thesis")
    # static equals the thesis model with N = S / K
    assert st_.R == pytest.approx(solve(N=4, W=41789.0, o=742.0, O=2336.0, method="thesis").R,
                                  rel=1e-12)
    # pooling beats splitting; regular (round-robin) splitting beats static binding
    assert sh.R < rr.R < st_.R
    assert sh.U_o == pytest.approx(4 * 4 * sh.lam * 2336.0)


def test_round_robin_arrival_scv_limits():
    assert ini.round_robin_arrival_scv(1, 32, 0.5) == pytest.approx(1.0)
    assert ini.round_robin_arrival_scv(4, 1, 0.5) == pytest.approx(0.25)
    v = ini.round_robin_arrival_scv(4, np.array([2, 8, 64]), 0.5)
    assert np.all(np.diff(v) > 0) and np.all((v > 0.25) & (v < 1))


def test_ini_overhead_tables():
    for path, tab in (("send", ini.TABLE_5_1), ("receive", ini.TABLE_5_2)):
        got = ini_overhead(np.array(tab["len"]), path=path)
        np.testing.assert_allclose(got, tab["total"])
        # linear growth below the MTU, fragmentation step above it
        assert ini_overhead(1500, path) < ini_overhead(1501, path) - 5000
        assert np.all(np.diff(ini_overhead(np.arange(0, 1501, 50), path)) > 0)
    assert ini_overhead(0, "mean") == pytest.approx((2318 + 2513) / 2)
    with pytest.raises(ValueError, match="message_bytes"):
        ini_overhead(70000)
    with pytest.raises(ValueError, match="path"):
        ini_overhead(10, path="both")


def test_tables_are_consistent_with_their_columns():
    # the thesis's totals include time outside the five listed modules: total >= parts
    t = ini.TABLE_5_1
    for i in range(len(t["len"])):
        parts = sum(t[c][i] for c in ("handler", "queue", "slid_win", "UDP", "IP"))
        assert parts <= t["total"][i]
    assert len(set(map(len, ini.TABLE_5_2.values()))) == 1


@pytest.mark.parametrize("kw, match", [
    (dict(N=-1, W=1, o=1, O=1), "N"),
    (dict(N=2, W=-1, o=1, O=1), "W"),
    (dict(N=2, W=1, o=float("nan"), O=1), "o"),
    (dict(N=2, W=1, o=1, O=1, cs2_O=-0.5), "cs2_O"),
    (dict(N=2, W=1, o=1, O=1, K=0), "K"),
    (dict(N=2, W=1, o=1, O=1, dispatch="random"), "dispatch"),
    (dict(N=2, S=5, K=2, W=1, o=1, O=1), "N must equal S / K"),
    (dict(W=1, o=1, O=1), "give N"),
    (dict(N=2, W=0, o=0, O=0), "contention-free"),
    (dict(N=2, W=1, o=1, O=1, clusters=1), "clusters"),
])
def test_bad_parameters(kw, match):
    with pytest.raises(ValueError, match=match):
        INIParams(**kw)


def test_bad_solver_arguments():
    p = INIParams(N=2, W=1, o=1, O=1)
    with pytest.raises(ValueError, match="method"):
        solve(p, method="magic")
    with pytest.raises(ValueError, match="unknown keyword"):
        solve(N=2, W=1, o=1, O=1, bogus=3, method="thesis")
    with pytest.raises(ValueError, match="on_fail"):
        solve(p, on_fail="shrug", method="thesis")


def test_cli_ini_markdown():
    from models.cli import main
    import contextlib
    import io

    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        assert main(["ini", "--N", "1,2,4,8", "--W", "41789", "--o", "742", "--O", "2336",
                     "--format", "md"]) == 0
    out = buf.getvalue()
    rows = [line for line in out.splitlines() if line.startswith("|") and "---" not in line]
    assert len(rows) == 5 and "Q_o" in rows[0]
    q = [float(line.split("|")[4]) for line in rows[1:]]
    # the CLI and the API share the default (auto)
    ref = solve(N=np.array([1.0, 2, 4, 8]), **FIGURE_6_3).Q_o
    np.testing.assert_allclose(q, ref, atol=1e-4)


def test_presets():
    assert FIGURE_6_3 == {"W": 41789.0, "o": 742.0, "O": 2336.0, "l": 0.0, "L": 0.0}
    assert ini.MTU_BYTES == 1500


# -- queueing-network methods (mva engine) ------------------------------------------

@pytest.mark.parametrize("dispatch", ini.DISPATCH)
def test_network_methods_agree_with_thesis_at_light_load(dispatch):
    p = INIParams(S=2, K=2, W=1e7, o=50.0, l=10.0, O=80.0, L=20.0, dispatch=dispatch)
    ref = solve(p, method="thesis").R
    for m in ("exact", "linearizer", "schweitzer"):
        r = solve(p, method=m)
        assert r.method == m and r.converged
        assert r.R == pytest.approx(ref, rel=1e-4)
        assert r.R >= p.contention_free * (1 - 1e-12)


def test_network_exact_vs_linearizer_and_thesis():
    """Figure 6-3 workload, S = 4 PEs per INI, 2 clusters (8 threads).  Exact MVA and
    Linearizer agree closely; the thesis's arrival-instant equations let a message see
    its own thread's share of the INI queue, so they over-estimate R_o (and R)."""
    p = INIParams(S=4, **FIGURE_6_3)
    ex, li, th = (solve(p, method=m) for m in ("exact", "linearizer", "thesis"))
    assert li.R == pytest.approx(ex.R, rel=0.005)
    assert th.R > ex.R and th.R_o > ex.R_o
    assert th.R == pytest.approx(ex.R, rel=0.10)
    assert ex.Q_o <= 4.0 and ex.U_o < 1
    # Little's law on the network results
    assert ex.Q_o == pytest.approx(4 * 4 * ex.lam * ex.R_o, rel=1e-6)
    assert ex.R == pytest.approx(ex.R_w + ex.R_q + 4 * ex.R_o + ex.R_y, rel=1e-6)


def test_network_round_trip_non_decreasing_in_population():
    R = [solve(INIParams(S=s, **FIGURE_6_3), method="linearizer").R for s in (1, 2, 4)]
    assert R[0] <= R[1] <= R[2]


def test_network_exact_refuses_huge_lattice():
    with pytest.raises(ValueError, match="linearizer"):
        solve(INIParams(S=8, **FIGURE_6_3), method="exact")
    with pytest.raises(ValueError, match="whole number of PEs per cluster"):
        solve(INIParams(N=1.5, **FIGURE_6_3), method="linearizer")


def test_quintic_coefficients_printed_in_docs():
    """docs/models/ini.rst prints c_0..c_5 of the reduced equation; check them."""
    import sympy as sp

    from mva.symbolic import clear_denominators

    y = ini._symbols()
    N, O, o, l, L, W = (y[k] for k in ("N", "O", "o", "l", "L", "W"))
    docs = [
        -8 * N * O * o**3 * (l + L),
        2 * o**2 * (l * o + L * o + 2 * N * O * W + 2 * N * O * o + 2 * O * o),
        o * (16 * N * O * l + 16 * N * O * L + 4 * N * O * W - W * o - o**2),
        -(8 * N * O * l + 8 * N * O * L + 4 * N * O * W + 16 * N * O * o + 8 * O * o
          + 4 * l * o + 4 * L * o + W * o),
        W + 2 * l + 2 * L + 4 * o + 4 * O + 4 * N * O,
        sp.Integer(-1),
    ]
    num, den, coeffs = clear_denominators(ini.reduced_equation().residual, y["lambda"])
    k = sp.simplify(coeffs[-1] / docs[-1])         # common normalisation
    assert all(sp.expand(c - k * d) == 0 for c, d in zip(coeffs, docs))
    lam = y["lambda"]
    doc_den = lam * (1 - o * lam) * (1 - 4 * N * O * lam) * (1 - o * lam - o**2 * lam**2)
    poly = sum(d * lam**(5 - i) for i, d in enumerate(docs))
    # the docs: 1/lambda - RHS(6.1) = -(sum_k c_k lambda^k) / doc_den
    assert sp.simplify(ini.reduced_equation().residual * doc_den + poly) == 0


def test_no_contention_edge_cases():
    r = solve(N=3, W=5.0, o=0.0, O=0.0, l=0.7, L=1.3, method="thesis")
    assert r.R == pytest.approx(9.0, rel=1e-12) and r.Q_o == 0.0 and r.contention == \
        pytest.approx(0.0, abs=1e-9)
    r = solve(N=3, W=0.0, o=0.0, O=10.0, l=0.0, L=0.0, method="thesis")
    assert r.Q_o == pytest.approx(3.0, rel=1e-10)


def test_round_robin_k1_is_static_and_converges():
    a = solve(INIParams(S=8, K=1, dispatch="round_robin", **FIGURE_6_3), method="thesis")
    b = solve(INIParams(S=8, K=1, dispatch="static", **FIGURE_6_3), method="thesis")
    assert a.R == b.R
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        warnings.simplefilter("ignore", AccuracyWarning)   # the map's notice, not a failure
        r = solve(INIParams(S=np.array([4, 16, 64]), K=4, dispatch="round_robin",
                            cs2_O=np.array([0.0, 1.0, 3.0]), **FIGURE_6_3), method="thesis")
    assert np.all(r.converged) and np.all(r.Q_o <= np.array([1, 4, 16]))


def test_result_to_dict_and_frame():
    r = solve(N=np.array([1.0, 2.0]), **FIGURE_6_3, method="thesis")
    d = r.to_dict()
    assert set(d) >= {"R", "lam", "Q_o", "U_o", "bottleneck", "converged", "method"}
    f = r.to_frame()
    assert list(f["N" if "N" in f else "R"].shape) == [2]
    np.testing.assert_allclose(f["Q_o"], r.Q_o)


def test_heavy_load_is_finite_and_reported():
    """The system is closed: no configuration saturates; heavy INI load shows as U_o -> 1
    and the INI named as bottleneck (saturated stays False, see INIResult)."""
    r = solve(N=np.array([64.0, 1024.0]), W=1.0, o=1.0, O=1e4, method="thesis")
    assert np.all(np.isfinite(r.R)) and np.all(r.U_o < 1) and np.all(r.U_o > 0.98)
    assert r.saturated is False and list(r.bottleneck) == ["INI", "INI"]
    assert np.all(r.Q_o <= np.array([64.0, 1024.0]))


def test_params_replace():
    p = INIParams(S=8, K=2, **FIGURE_6_3)
    q = p.replace(K=4)
    assert q.N == 2.0 and q.S == 8 and q.K == 4
    r = p.replace(N=3)
    assert r.N == 3 and r.K == 2 and r.S == 6
    assert p.replace(W=0.0).W == 0.0 and p.replace(W=0.0).S == 8


# -- node method (the default) -------------------------------------------------------

def test_auto_is_node_and_answers_large_machines():
    p = INIParams(N=8, K=1, clusters=2, W=1000.0, o=100.0, O=200.0)
    r = solve(p)
    assert r.method == ini.AUTO_METHOD == "node" and r.converged
    big = solve(INIParams(N=32, K=8, clusters=64, W=1000.0, o=100.0, O=100.0,
                          dispatch="shared", cs2_O=10.0))
    assert big.converged and 0 < big.U_o <= 1 + 1e-6


@given(st.sampled_from(ini.DISPATCH), st.integers(1, 8), st.integers(1, 4),
       st.integers(2, 8), st.floats(0.0, 1e6), st.floats(1.0, 5000.0), st.floats(1.0, 1e4),
       st.floats(0.0, 1e4), st.floats(0.0, 1e4), st.sampled_from([0.0, 0.5, 1.0, 4.0, 10.0]),
       st.sampled_from([0.0, 0.5, 1.0, 4.0, 10.0]))
@settings(max_examples=20, deadline=None)
def test_node_method_invariants(dispatch, N, K, clusters, W, o, O, l_, L, co, cO):
    p = INIParams(N=N, K=K, clusters=clusters, W=W, o=o, O=O, l=l_, L=L, cs2_o=co, cs2_O=cO,
                  dispatch=dispatch)
    r = solve(p, method="node")
    assert r.converged
    assert r.R >= p.contention_free * (1 - 1e-6)
    assert r.R == pytest.approx(r.R_w + r.R_p + 2 * l_ + 2 * L + r.R_q + r.R_y + 4 * r.R_o,
                                rel=1e-5)
    assert r.R_o >= O * (1 - 1e-9)
    assert r.U_o <= 1 + 1e-6 and r.U_q < 1
    # Little's law at one INI node: 4 N lambda visits per cycle, R_o each
    assert r.Q_o == pytest.approx(4 * N * r.lam * r.R_o, rel=1e-4)


def test_node_method_variability_orders_round_trip():
    vals = [solve(N=4, cs2_O=c, method="node", **FIGURE_6_3).R for c in (0.0, 1.0, 4.0, 10.0)]
    assert all(a < b for a, b in zip(vals, vals[1:]))


def test_huge_network_method_refused_before_allocating():
    # issue 20: `ini --N 1000 --method linearizer` died allocating 239 GiB
    from mva.errors import CostError

    with pytest.raises(CostError, match=r"PE threads .* needs about .* use method='auto'"):
        ini.solve(ini.INIParams(N=1000, W=41789, o=742, O=2336, l=0, L=0), method="linearizer")


def test_node_fixed_point_stays_physical():
    # an Anderson step overshot R_q past the finite source's limit (X R_q >= sources) and
    # ended in a ZeroDivisionError at W = 8538.46; R must be monotone in W around it
    r = ini.solve(INIParams(N=4, W=[8000.0, 8538.461538461539, 9000.0], o=742, O=2336),
                  method="node")
    assert np.all(r.converged) and np.all(np.diff(r.R) > 0)


def test_auto_takes_the_closed_form_on_large_grids_and_says_so():
    from models._node import AUTO_GRID_LIMIT

    N = np.arange(1, AUTO_GRID_LIMIT + 2)
    with pytest.warns(UserWarning,
                      match=r"INI method='auto': a grid of \d+ points .*method='thesis'"):
        r = ini.solve(N=N, W=41789, o=742, O=2336)
    assert r.method == "thesis"
    np.testing.assert_array_equal(r.R, ini.solve(N=N, W=41789, o=742, O=2336, method="thesis").R)
    assert ini.solve(N=[1, 2], W=41789, o=742, O=2336).method == "node"


@pytest.mark.parametrize("clusters", [2, 3])
def test_one_pe_per_cluster_is_lopcs_whole_machine_chain(clusters):
    """A machine of one PE per cluster and at most three PEs is LoPC's whole-machine chain;
    with no INI time its one-way latency is l + L (two hops of l/2 and one of L)."""
    from models import lopc

    r = solve(N=1, K=1, clusters=clusters, W=8.0, o=1750.0, O=0.0, l=100.0, L=50.0)
    ref = lopc.solve(P=clusters, W=8.0, o=1750.0, L=150.0, method="node")
    assert r.method == "node"
    for k in ("R", "R_w", "R_q", "R_y"):
        assert getattr(r, k) == pytest.approx(getattr(ref, k), rel=1e-9), k


def test_two_pe_lockstep_and_ini_time():
    """The seed-7 design's worst point (two PEs, handler-bound: the node chain gave R 26% low
    against the simulator's 7315): INI time lengthens the cycle, whose parts add up."""
    p = dict(N=1, K=1, clusters=2, W=8.1, o=1750.8, l=117.5, L=0.33, cs2_o=0.5, cs2_O=8.0)
    r0 = solve(O=0.0, **p)
    r = solve(O=17.8, **p)
    assert r.converged and r.R > r0.R and r.R_o >= 17.8
    assert r.R == pytest.approx(r.R_w + r.R_p + r.R_q + r.R_y + 2 * 117.5 + 2 * 0.33
                                + 4 * r.R_o, rel=1e-9)
    assert r.Q_o == pytest.approx(4 * r.lam * r.R_o, rel=1e-12)


_EXTREME = [0.0, 5e-324, 1e-308, 1e-300, 1e-12, 1.0, 1e12, 1e300]


@pytest.mark.parametrize("seed", range(6))
def test_times_far_apart_give_finite_results(seed):
    """Extreme-time probe: times from 0 and denormals to 1e300 in one point.  Before the INI
    was solved in power-of-two time units, 112 of 300 such solves raised or returned NaN.
    Every result must be finite and non-negative, at least the contention-free round trip
    and answered quickly (no hang)."""
    import time as _time

    rng = np.random.default_rng(seed)
    done = 0
    while done < 6:
        W, o, l_, O, L = (float(x) for x in rng.choice(_EXTREME, 5))
        if not 0 < W + 2 * l_ + 2 * L + 2 * o + 4 * O < math.inf:
            continue
        N, K, clusters = (int(rng.choice([1, 2, 8])), int(rng.choice([1, 2])),
                          int(rng.choice([2, 3, 5])))
        dispatch = ini.DISPATCH[done % 3]
        for method in ("auto", "thesis"):
            t = _time.perf_counter()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                r = solve(N=N, K=K, clusters=clusters, W=W, o=o, l=l_, O=O, L=L, cs2_O=4.0,
                          dispatch=dispatch, method=method)
            assert _time.perf_counter() - t < 10.0
            v = np.array([r.R, r.lam, r.R_w, r.R_p, r.R_q, r.R_y, r.R_o, r.Q_q, r.Q_y, r.Q_o,
                          r.U_q, r.U_o])
            assert np.isfinite(v).all() and (v >= 0).all(), (method, W, o, l_, O, L, v)
            assert r.R >= r.contention_free * (1 - 1e-9)
        done += 1


@pytest.mark.parametrize("method", ["auto", "thesis"])
def test_results_scale_with_the_time_unit(method):
    """Every method is homogeneous of degree one in the times: the same machine in units
    2**-900 or 1e250 times as large gives the same result, scaled."""
    p = dict(N=4, K=2, clusters=3, W=1000.0, o=100.0, l=10.0, O=300.0, L=50.0, cs2_O=4.0)
    ref = solve(method=method, **p)
    for s in (2.0 ** -900, 1e250):
        r = solve(method=method, **{k: (v * s if k in "W o l O L".split() else v)
                                    for k, v in p.items()})
        for k in ("R", "R_w", "R_q", "R_y", "R_o"):
            assert getattr(r, k) == pytest.approx(getattr(ref, k) * s, rel=1e-9), k
        assert r.Q_o == pytest.approx(ref.Q_o, rel=1e-9) and r.lam * s == pytest.approx(ref.lam,
                                                                                        rel=1e-9)


@pytest.mark.parametrize("N, dispatch, cO", [(11, "static", 3.3), (6, "round_robin", 9.0),
                                             (16, "shared", 0.5)])
def test_twin_ini_correction_is_the_twin_fixed_point(N, dispatch, cO):
    """Two clusters of one INI: the node fixed point with the single station's waiting time
    scaled (a few twin-chain solves) ends where the twin chain solved at every step ends,
    and its INI residence is the twin chain's at that point."""
    from models import _node

    W, o, O, l_, L, co = 50.0, 40.0, 60.0, 5.0, 20.0, 4.0
    st_ = ini._ini_station(N, 1, 2, dispatch, O, cO)
    assert st_["pair"] == 2 * N
    sources = N
    tol = 1e-7
    v = ini._solve_pair_point(W, o, l_, O, L, co, cO, sources, st_, tol, 200)
    ref = _node.solve_node(sources, W, o, co, 2 * l_ + 2 * L, station=st_, tol=tol)
    assert v["converged"]
    assert v["R"] == pytest.approx(ref["R"], rel=1e-5)
    assert v["R_o"] == pytest.approx(ref["R_o"], rel=1e-5)
    lam_o = 4.0 * N / v["R"]
    assert _node.pair_effective(lam_o, v["R_o"], 2 * N, O, cO)[0] == pytest.approx(v["R_o"],
                                                                                   rel=1e-5)


@given(st.sampled_from(ini.DISPATCH), st.integers(1, 16), st.integers(1, 3), st.integers(2, 6),
       st.sampled_from([0.5, 1.0, 4.0]), st.sampled_from(["W", "L", "l"]))
@settings(max_examples=15, deadline=None)
def test_node_round_trip_non_decreasing_in_w_and_latencies(dispatch, N, K, clusters, cO,
                                                           which):
    """More compute or a longer latency never shortens the round trip (node method)."""
    base = dict(N=N, K=K, clusters=clusters, W=200.0, o=30.0, O=40.0, l=10.0, L=50.0,
                cs2_o=2.0, cs2_O=cO, dispatch=dispatch)
    r = [float(solve(INIParams(**dict(base, **{which: base[which] * f})), method="node").R)
         for f in (1.0, 2.0)]
    assert r[1] >= r[0] * (1 - 1e-6)


@pytest.mark.parametrize("N, K, dispatch, clusters, pop, S1", [
    (3, 2, "shared", 2, 12, 30.0), (2, 4, "shared", 2, 16, 15.0),
    (4, 3, "round_robin", 2, 8, 60.0), (5, 1, "static", 2, 10, 60.0),
    (5, 1, "static", 3, 15, 60.0), (2, 3, "round_robin", 4, 8, 60.0), (1, 2, "shared", 4, 8, 30.0)])
def test_twin_station_of_two_cluster_machines(N, K, dispatch, clusters, pop, S1):
    """The twin correction's population and server (a shared queue as one K-times-faster
    server of all ``clusters S`` customers; round robin as K sets of single INIs with
    ``clusters N`` customers each); exact only for one INI per cluster at two clusters."""
    st_ = ini._ini_station(N, K, clusters, dispatch, 60.0, 6.0)
    assert st_["pair"] == pop and st_["pair_S"] == pytest.approx(S1)
    assert st_["pair_exact"] == (K == 1 and clusters == 2)
    assert st_["pair_stations"] == clusters


@pytest.mark.parametrize("N, K, dispatch, clusters", [
    (3, 2, "static", 2), (4, 8, "shared", 2), (3, 5, "shared", 3), (3, 3, "static", 4),
    (1, 2, "shared", 5), (1, 1, "static", 12), (2, 9, "shared", 2)])
def test_no_twin_station_outside_its_limits(N, K, dispatch, clusters):
    """No twin or split correction for static dispatch with K > 1, more than
    SPLIT_MAX_CLUSTERS clusters, a shared queue of more than PAIR_MAX_SERVERS INIs, or
    of more than PAIR_CAP_SERVERS where the chain's population would be reduced (4 x 8
    PEs on two clusters: 64 customers; 3 x 5 on three: 45)."""
    assert "pair" not in ini._ini_station(N, K, clusters, dispatch, 60.0, 6.0)


@pytest.mark.parametrize("N, K, clusters, pop",
                         [(2, 8, 2, 32), (3, 8, 2, 48), (1, 6, 3, 18), (1, 7, 4, 28)])
def test_twin_station_of_large_shared_queues_at_full_population(N, K, clusters, pop):
    """Shared queues of 5 to 8 INIs get the correction where its chain holds every
    customer (PAIR_FULL_POP at two clusters, SPLIT_MAX_POP at three or four)."""
    st_ = ini._ini_station(N, K, clusters, "shared", 60.0, 6.0)
    assert ini.PAIR_CAP_SERVERS < K <= ini.PAIR_MAX_SERVERS
    assert st_["pair"] == pop and st_["pair_scale"] == 1.0 and not st_["pair_exact"]
    assert st_["pair_S"] == pytest.approx(60.0 / K)


@pytest.mark.parametrize("N, K, dispatch, clusters, pop", [
    (20, 2, "shared", 2, 80), (25, 2, "round_robin", 2, 50), (25, 1, "static", 2, 50),
    (11, 1, "static", 3, 33), (6, 2, "shared", 3, 36), (8, 1, "round_robin", 4, 32)])
def test_reduced_population_beyond_the_chains_limits(N, K, dispatch, clusters, pop):
    """Beyond PAIR_FULL_POP customers at two clusters (SPLIT_MAX_POP at three or four) the
    factor's chain has PAIR_CAP_POP (SPLIT_CAP_POP) customers, the population ratio is
    recorded, and the twin chain is not the station any more."""
    st_ = ini._ini_station(N, K, clusters, dispatch, 60.0, 6.0)
    cap = ini.PAIR_CAP_POP if clusters == 2 else ini.SPLIT_CAP_POP
    assert st_["pair"] == cap and st_["pair_scale"] == pytest.approx(cap / pop)
    assert not st_["pair_exact"]
    small = ini._ini_station(1, 1, clusters, dispatch, 60.0, 6.0)
    assert small["pair_scale"] == 1.0 and small["pair"] == clusters


@pytest.mark.parametrize("N, K, dispatch, clusters, cO", [
    (25, 1, "static", 2, 8.0), (13, 2, "shared", 2, 6.0), (27, 2, "round_robin", 2, 3.0),
    (11, 1, "static", 3, 8.0), (6, 2, "shared", 3, 6.0)])
def test_reduced_population_factor_is_close_to_the_full_one(N, K, dispatch, clusters, cO):
    """At the corrected fixed point the waiting factor of the reduced chain (waiting part
    of R_o scaled by the population ratio) is within 3% of the factor of the chain with the
    full population (up to 54 customers), and both lengthen the wait.  Without the scaling
    the reduced chain's factor falls below 1 at two clusters."""
    W, o, O, l_, L, co = 50.0, 40.0, 60.0, 5.0, 20.0, 4.0
    st_ = ini._ini_station(N, K, clusters, dispatch, O, cO)
    v = ini._solve_pair_point(W, o, l_, O, L, co, cO, N * K * (clusters - 1), st_, 1e-9, 200)
    assert v["converged"]
    lam_o = 4.0 * st_["threads"] / v["R"]
    f_cap = ini._twin_factor(st_, lam_o, v["R_o"])
    full = dict(st_, pair=int(round(st_["pair"] / st_["pair_scale"])), pair_scale=1.0)
    f_full = ini._twin_factor(full, lam_o, v["R_o"])
    assert f_cap > 1.0 and f_full > 1.0
    assert f_cap == pytest.approx(f_full, rel=0.03)
    # the self-consistency of the correction, to the approximate forms' tolerance
    single = {k: x for k, x in st_.items() if k != "pair"}
    from models import _node
    Rs = _node.station_effective(lam_o, v["R_o"], single["sources"], single["servers"], O, cO,
                                 single["phi"])[0]
    assert v["R_o"] == pytest.approx(O + f_cap * (Rs - O), rel=ini.PAIR_APPROX_TOL)


@pytest.mark.parametrize("clusters, Ns", [(2, (15, 16, 17, 18)), (2, (23, 24, 25, 26)),
                                          (3, (9, 10, 11, 12))])
def test_round_trip_non_decreasing_across_the_population_limit(clusters, Ns):
    """R keeps growing with N where the exact twin chain gives way to its waiting factor
    (at 2 x 16 PEs' worth of customers) and the full chain to the reduced one (2 x 24,
    3 x 10)."""
    for cO in (2.0, 8.0):
        R = [float(solve(INIParams(N=N, K=1, clusters=clusters, W=200.0, o=30.0, O=60.0, l=10.0,
                                   L=50.0, cs2_o=2.0, cs2_O=cO), method="node").R) for N in Ns]
        assert all(b > a for a, b in zip(R, R[1:]))


@pytest.mark.parametrize("N, cO", [(4, 6.0), (7, 3.0), (2, 9.0)])
def test_twin_factor_of_the_fast_server_form_at_one_ini_is_the_exact_one(N, cO):
    """At K = 1 the fast-server form of the twin factor (``pair_exact`` off: the single
    station rebuilt from the twin's population) equals the exact twin factor."""
    st_ = ini._ini_station(N, 1, 2, "shared", 60.0, cO)
    lam_o, Ro = 4.0 * N / 900.0, 75.0
    a = ini._twin_factor(st_, lam_o, Ro)
    b = ini._twin_factor(dict(st_, pair_exact=False), lam_o, Ro)
    assert a == pytest.approx(b, rel=1e-10) and a > 0.0


@pytest.mark.parametrize("N, K, dispatch, clusters", [(3, 2, "shared", 2), (2, 3, "round_robin", 2),
                                                      (5, 1, "static", 3), (2, 2, "shared", 4)])
def test_twin_correction_with_several_inis_is_self_consistent(N, K, dispatch, clusters):
    """K > 1 at two clusters, or more clusters: the node fixed point ends where the single
    station's waiting time scaled by the twin (split) factor at that point is the INI
    residence, and the correction lengthens the round trip at cs2_O = 8 (the INIs starve
    each other in turn)."""
    from models import _node

    W, o, O, l_, L, co, cO = 50.0, 40.0, 60.0, 5.0, 20.0, 4.0, 8.0
    st_ = ini._ini_station(N, K, clusters, dispatch, O, cO)
    sources = N * K * (clusters - 1)
    v = ini._solve_pair_point(W, o, l_, O, L, co, cO, sources, st_, 1e-9, 200)
    assert v["converged"]
    n = st_["threads"]
    lam_o = 4.0 * n / v["R"]
    single = {k: x for k, x in st_.items() if k != "pair"}
    Rs = _node.station_effective(lam_o, v["R_o"], single["sources"], single["servers"], O, cO,
                                 single["phi"])[0]
    f = ini._twin_factor(st_, lam_o, v["R_o"])
    # the approximate factor forms are converged to PAIR_APPROX_TOL (not the node tolerance)
    assert v["R_o"] == pytest.approx(O + f * (Rs - O), rel=ini.PAIR_APPROX_TOL)
    plain = _node.solve_node(sources, W, o, co, 2 * l_ + 2 * L, station=single, tol=1e-9)
    assert f > 1.0 and v["R"] > plain["R"]
    # Little's law at the INI station and the round trip's parts
    r = solve(INIParams(N=N, K=K, clusters=clusters, W=W, o=o, O=O, l=l_, L=L, cs2_o=co, cs2_O=cO,
                        dispatch=dispatch), method="node")
    assert float(r.R) == pytest.approx(v["R"], rel=1e-5)
    assert float(r.Q_o) == pytest.approx(4.0 * N * float(r.R_o) / float(r.R), rel=1e-9)


@pytest.mark.parametrize("N", (0.5, 1e-320))
def test_fewer_than_one_pe_per_cluster_is_refused_by_the_machine_methods(N):
    # the thesis's N is continuous; the node chain and the networks need a PE per cluster
    # (the node chain divided by zero at N = 0.5, and N = 1e-320 rounded to S = 0)
    with pytest.raises(ValueError, match=r"needs at least one PE per cluster, N \* K >= 1"):
        solve(INIParams(N=N, W=1000, o=100, O=200))
    with pytest.raises(ValueError, match=r"needs a whole number of PEs per cluster, at least 1"):
        solve(INIParams(N=N, W=1000, o=100, O=200), method="exact")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = solve(INIParams(N=N, W=1000, o=100, O=200), method="thesis")
    assert np.isfinite(r.R) and r.R >= 1000 + 2 * 100 + 4 * 200
    assert INIParams(N=N, W=1000, o=100, O=200).S is None


def test_a_round_trip_beyond_double_precision_is_refused_not_infinite():
    # an INI time near 1e307 made R = inf, silently; 1e300 (test above) stays finite
    for method in ("auto", "thesis"):
        with pytest.raises(ValueError, match=r"overflows double precision .* at O=1e\+307"):
            solve(INIParams(N=4, W=1000, o=100, O=1e307, l=10, L=50, cs2_O=4.0), method=method)


# -- the revisit station of one home thread (models._node.revisit_station_residence) --

#: one PE per cluster, INI-bound, every time exponential: the network is product form and
#: exact MVA (the thesis network, one chain per thread) is the truth
_REVISIT_POINT = dict(N=1, K=1, clusters=8, W=4764.0, o=14.0, O=6027.0, l=3.0, L=5.0,
                      cs2_o=1.0, cs2_O=1.0, dispatch="static")


def test_revisit_station_closer_to_exact_mva(monkeypatch):
    """With one home thread per INI the two populations and the paired visits take the node
    method from -3.5% to within 2.5% of exact MVA (exponential times: product form)."""
    from models import _node

    exact = float(solve(INIParams(**_REVISIT_POINT), method="exact").R)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", AccuracyWarning)
        new = float(solve(INIParams(**_REVISIT_POINT)).R)
        monkeypatch.setattr(_node, "REVISIT_MAX_HOME", 0)
        old = float(solve(INIParams(**_REVISIT_POINT)).R)
    assert abs(new / exact - 1) < 0.025
    assert abs(new / exact - 1) < abs(old / exact - 1) - 0.01


@pytest.mark.parametrize("change, used", [({}, True), ({"l": 20000.0}, False),
                                          ({"N": 2}, False),
                                          ({"K": 2, "dispatch": "round_robin"}, False)])
def test_revisit_station_only_where_declared(monkeypatch, change, used):
    """The revisit station replaces the one-population station only with one home thread
    per INI, visits paired at the same INI (not round robin over several) and a gap between
    them of at most REVISIT_MAX_GAP services; elsewhere the answer is the old one, bit for
    bit."""
    from models import _node

    p = INIParams(**dict(_REVISIT_POINT, cs2_O=4.0, **change))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", AccuracyWarning)
        a = float(solve(p).R)
        monkeypatch.setattr(_node, "REVISIT_MAX_HOME", 0)
        b = float(solve(p).R)
    assert (a != b) == used


@pytest.mark.parametrize("clusters, cs2_o", [(2, 0.5), (3, 0.5), (2, 4.0), (3, 1.0), (4, 1.0),
                                             (4, 4.0)])
def test_one_pe_per_cluster_without_ini_time_is_lopc(clusters, cs2_o):
    """One PE per cluster and no INI time: every request goes to a uniformly chosen other PE
    across l + L, which is LoPC's machine of P = clusters; the default methods agree to
    rounding (up to four clusters both solve the whole machine as one chain: ordered
    channels up to three, LoPC's lumped chain of unordered channels at four with a variable
    or exponential handler)."""
    from models.lopc import LoPCParams
    from models.lopc import solve as solve_lopc

    a = float(solve(INIParams(N=1, K=1, clusters=clusters, W=300.0, o=150.0, O=0.0, l=40.0,
                              L=60.0, cs2_o=cs2_o, cs2_O=1.0)).R)
    b = float(solve_lopc(LoPCParams(P=clusters, W=300.0, o=150.0, L=100.0, cs2=cs2_o)).R)
    assert a == pytest.approx(b, rel=1e-12)
