"""The node chain's linear-algebra helpers, its work budget and ``auto`` at 9-16 threads."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from models import _policy_node as pn
from models.accuracy import AccuracyWarning
from models import policy
from models.policy import _arrays, _unique_points, preset, solve


def _point(pol: str, **kw) -> dict[str, float]:
    names, uniq, _ = _unique_points(_arrays(preset("stache", **kw), pol))
    return {k: float(x) for k, x in zip(names, uniq[0])}


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 30_000), st.integers(0, 2**32 - 1), st.sampled_from(["f", "i", "b"]))
def test_dot_and_norm_agree_with_numpy(n, seed, kind):
    # the BLAS-free products (einsum) against numpy's @ and norm, on both sides of OpenBLAS's
    # 10,000-element threading threshold, with the integer and boolean masks solve_point uses
    rng = np.random.default_rng(seed)
    x = rng.random(n) * 10.0 ** rng.integers(-30, 5)
    y = {"f": rng.standard_normal(n), "i": rng.integers(0, 17, n),
         "b": rng.random(n) < 0.3}[kind]
    ref = float(x @ y.astype(float))
    assert pn._dot(x, y) == pytest.approx(ref, rel=1e-12, abs=1e-300)
    assert pn._norm(x) == pytest.approx(float(np.linalg.norm(x)), rel=1e-12)
    assert pn._norm(x) >= 0.0


@pytest.mark.parametrize("pol, p, nodes", [("fixed", 4, 5), ("floating", 3, 6)])
def test_work_budget_stops_the_fixed_point_and_says_so(pol, p, nodes):
    v = _point(pol, p=p, nodes=nodes, U=0.6, O_int=3000.0)
    free = pn.solve_point(v, pol, tol=1e-9)
    assert free["conv"] and not free["over_budget"] and free["work"] > 0
    # the work is deterministic: the same solve counts the same work, to the last bit
    again = pn.solve_point(v, pol, tol=1e-9)
    assert again["work"] == free["work"] and again["X"] == free["X"]
    # a budget above the work changes nothing (bit for bit)
    roomy = pn.solve_point(v, pol, tol=1e-9, max_work=free["work"] * 1.01)
    assert roomy["conv"] and not roomy["over_budget"]
    for key in ("X", "R", "U", "P_int", "R_y", "it"):
        assert roomy[key] == free[key]
    # below it: stopped, unconverged, flagged, having spent just over the budget
    short = pn.solve_point(v, pol, tol=1e-9, max_work=0.5 * free["work"])
    assert not short["conv"] and short["over_budget"]
    assert 0.5 * free["work"] < short["work"] <= free["work"]
    assert short["it"] < free["it"]


def test_work_counts_factorisations_and_triangular_solves(monkeypatch):
    # every iteration factorised (GMRES disabled): each adds (1 + SOLVE_WORK) * nnz of its LU
    v = _point("fixed", p=3, nodes=4, U=0.5)
    nnz: list[int] = []
    real = pn._factor

    def counted(A, pivot=False):
        lu = real(A, pivot)
        nnz.append(lu.nnz)
        return lu

    monkeypatch.setattr(pn, "_factor", counted)
    monkeypatch.setattr(pn, "_gmres", lambda A, M, b, x, *a, **k: (x * np.nan, False, 0))
    r = pn.solve_point(v, "fixed", tol=1e-9)
    assert r["conv"] and len(nnz) >= r["it"]
    assert r["work"] == pytest.approx((1.0 + pn.SOLVE_WORK) * sum(nnz), rel=1e-12)


def test_pair_chain_reports_no_work():
    r = pn.solve_point(_point("single", p=2, nodes=2), "single", max_work=1.0)
    assert r["conv"] and r["work"] == 0.0 and not r["over_budget"]


@pytest.mark.parametrize("pol, p, nodes", [("floating", 10, 4), ("fixed", 13, 3)])
def test_auto_takes_the_node_chain_at_9_to_16_threads(pol, p, nodes):
    prm = preset("stache", p=p, nodes=nodes, U=0.5, O_int=1000.0)
    r = solve(prm, pol)
    assert r.method == "node-chain" and r.converged
    node = solve(prm, pol, method="node", max_iter=policy.AUTO_NODE_MAX_ITER)
    assert r.cycle_time == node.cycle_time
    n_c = p - 1 if pol == "fixed" else p
    # invariants: Little's law, bounds, the utilization law to the one-queue chain's 1%
    assert r.throughput * r.cycle_time == pytest.approx(n_c, rel=1e-9)
    assert 0.0 <= r.pp_utilization <= 1.0 and 0.0 <= r.interrupt_probability <= 1.0
    assert r.throughput <= r.throughput_bound * (1 + 1e-9)
    assert r.pp_utilization == pytest.approx(r.throughput * r.pp_demand, rel=0.01)


def test_auto_falls_back_to_mva_over_the_work_budget_and_says_so(monkeypatch):
    grid = preset("stache", p=np.array([3, 12]), nodes=4, U=0.5)
    free = solve(grid, "floating")
    assert free.method == "node-chain"
    # a budget between the two points' work: the 12-thread point goes to MVA
    works = [pn.solve_point(_point("floating", p=p, nodes=4, U=0.5), "floating", tol=1e-9,
                            max_iter=policy.AUTO_NODE_MAX_ITER)["work"] for p in (3, 12)]
    assert works[0] < works[1]
    monkeypatch.setattr(policy, "AUTO_NODE_WORK", 0.5 * (works[0] + works[1]))
    with warnings.catch_warnings():
        warnings.simplefilter("error", category=UserWarning)   # nothing left unconverged
        warnings.simplefilter("ignore", category=AccuracyWarning)
        r = solve(grid, "floating")
    mva = solve(preset("stache", p=12, nodes=4, U=0.5), "floating", method="mva")
    assert r.method == (f"node-chain + {mva.method} (mva at 1 point over the node chain's "
                        "work budget)")
    assert np.all(r.converged)
    assert r.cycle_time[0] == free.cycle_time[0]
    assert r.cycle_time[1] == pytest.approx(mva.cycle_time, rel=1e-12)
    # one point, over the budget: MVA alone, and the method says why
    one = solve(preset("stache", p=12, nodes=4, U=0.5), "floating")
    assert one.method == f"{mva.method} (mva at 1 point over the node chain's work budget)"
    assert one.cycle_time == pytest.approx(mva.cycle_time, rel=1e-12)


#: a Fixed point of the declared domain (design point 446 of the shipped policy design at
#: p=9 on 3 nodes) where the LU without pivoting met an exactly zero pivot with the SciPy of
#: its time: solve() raised RuntimeError("Factor is exactly singular") under the default method
_ZERO_PIVOT = dict(p=9, nodes=3, U=0.0859061836823821, o_req=132.21989296479248,
                   o_reply=232.83703198158102, o_resp=1839.6952144478769, L=37.090619411235,
                   O_int=3.8778453912711224, o_direct=80.23252850398421,
                   o_indirect=332.7263221144676, t_transfer=118.47785022109747,
                   handler_cs2=0.5)


def test_a_zero_pivot_refactorises_with_pivoting(monkeypatch):
    """When the unpivoted symmetric-mode factorisation fails (SuperLU's "Factor is exactly
    singular", met at a Fixed point of the declared domain with an older SciPy and no
    longer reproducible with SciPy 1.17: here it is made to fail), the node chain factorises
    again with partial pivoting and solves the point, the same answer as a pivoted solve
    from the start."""
    import mva._scipy_kernels as kern

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", category=AccuracyWarning)
        ref = solve(policy.PolicyParams(**_ZERO_PIVOT), "fixed")
    real = kern.splu_csc
    seen: list[tuple[bool, bool]] = []

    def failing(*a, **k):
        piv = "diag_pivot_thresh" not in k
        if not piv:
            seen.append((piv, True))
            raise RuntimeError("Factor is exactly singular")
        seen.append((piv, False))
        return real(*a, **k)

    monkeypatch.setattr(kern, "splu_csc", failing)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", category=AccuracyWarning)
        r = solve(policy.PolicyParams(**_ZERO_PIVOT), "fixed")
    k = seen.index((False, True))
    assert seen[k + 1] == (True, False)
    assert r.method == "node-chain" and r.converged
    assert r.cycle_time == pytest.approx(ref.cycle_time, rel=1e-9)


def test_the_former_zero_pivot_point_solves():
    """The Fixed point where the unpivoted factorisation met an exact zero pivot (with the
    SciPy of its time; SciPy 1.17 does not meet it there any more, the fallback is tested
    on its own above) solves by the node chain with consistent measures."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", category=AccuracyWarning)
        r = solve(policy.PolicyParams(**_ZERO_PIVOT), "fixed")
    assert r.method == "node-chain" and r.converged
    assert np.isfinite(r.cycle_time) and r.cycle_time > 0
    assert r.throughput * r.cycle_time == pytest.approx(8, rel=1e-9)
    assert 0.0 < r.pp_utilization <= 1.0
    assert r.pp_utilization == pytest.approx(r.throughput * r.pp_demand, rel=0.01)
