"""Tests of models.cost (Wood and Hill cost model as used by 000)."""

from __future__ import annotations

import contextlib
import io
import warnings

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from models.cost import DEFAULT_F, CostResult, cost_performance, costup, policy_cost
from models.policy import preset, solve


def test_costup_published_values():
    # 000 section 4: "a two-processor node and a five-processor node have costups of
    # 1.3 and 2.2"
    assert costup(2) == 1.3 and costup(5) == 2.2 and costup(1) == 1.0
    assert DEFAULT_F == 0.3
    assert costup(np.array([1, 2, 3]), f=0.5).tolist() == [1.0, 1.5, 2.0]


def test_cost_performance_hand_computed():
    # speedups 1, 1.5, 1.8 at p = 1, 2, 3 -> cp = 1, 1.3/1.5, 1.6/1.8
    r = cost_performance([2.0, 3.0, 3.6], [1, 2, 3], baseline=2.0)
    assert isinstance(r, CostResult)
    assert r.speedup.tolist() == pytest.approx([1.0, 1.5, 1.8])
    assert r.cost_performance.tolist() == pytest.approx([1.0, 1.3 / 1.5, 1.6 / 1.8])
    assert r.cost_effective.tolist() == [False, True, True]
    assert r.best_p == 2 and r.best_cost_performance == pytest.approx(1.3 / 1.5)


def test_throughput_forms_agree():
    p = [1, 2, 4]
    f = lambda pv: 1.0 + 0.5 * (np.asarray(pv) - 1)  # noqa: E731
    a = cost_performance(f, p, baseline=1.0)
    b = cost_performance({1: 1.0, 2: 1.5, 4: 2.5}, p, baseline=1.0)
    c = cost_performance(np.array([1.0, 1.5, 2.5]), p, baseline=1.0)
    assert np.allclose(a.cost_performance, b.cost_performance)
    assert np.allclose(a.cost_performance, c.cost_performance)


def test_vectorised_over_leading_axes():
    X = np.array([[1.0, 2.0, 3.0], [1.0, 1.1, 1.15]])
    r = cost_performance(X, [1, 2, 3], baseline=np.array([1.0, 1.0]), f=0.3)
    assert r.best_p.tolist() == [3, 1]
    assert r.cost_performance.shape == (2, 3)


@given(st.lists(st.floats(0.1, 10.0), min_size=1, max_size=8), st.floats(0.0, 1.0),
       st.floats(0.1, 10.0))
def test_definitions_hold(X, f, base):
    p = np.arange(1, len(X) + 1)
    r = cost_performance(np.asarray(X), p, baseline=base, f=f)
    assert np.allclose(r.costup, 1 + f * (p - 1))
    assert np.allclose(r.cost_performance * r.speedup, r.costup)
    assert np.array_equal(r.cost_effective, r.cost_performance < 1)
    assert r.best_cost_performance == pytest.approx(np.min(r.cost_performance))
    assert r.cost_performance[list(p).index(r.best_p)] == pytest.approx(r.best_cost_performance)


def test_errors():
    with pytest.raises(ValueError, match="p must be >= 1"):
        costup(0)
    with pytest.raises(ValueError, match="f must be finite and >= 0"):
        costup(2, f=-0.1)
    with pytest.raises(ValueError, match="no value for p"):
        cost_performance({1: 1.0}, [1, 2], baseline=1.0)
    with pytest.raises(ValueError, match="last axis"):
        cost_performance([1.0, 2.0], [1, 2, 3], baseline=1.0)
    with pytest.raises(ValueError, match="baseline must be finite and > 0"):
        cost_performance([1.0], [1], baseline=0.0)
    with pytest.raises(ValueError, match="policies must be one of"):
        policy_cost(preset("null-handler"), policies=["hybrid"])


def test_policy_cost_uses_single_as_baseline():
    prm = preset("null-handler", U=0.3)
    r = policy_cost(prm, p=[1, 2, 3])
    single = solve(prm, "single").throughput
    assert r.baseline == pytest.approx(single)
    fl = r.policies["floating"]
    assert fl.p.tolist() == [1, 2, 3]
    assert fl.cost_performance[0] == pytest.approx(1.0)   # Floating on one processor = Single
    assert r.policies["fixed"].p.tolist() == [2, 3]
    fx2 = solve(prm.replace(p=2), "fixed").throughput
    assert r.policies["fixed"].speedup[0] == pytest.approx(fx2 / single)


@pytest.mark.parametrize("name,U,nodes", [("null-handler", 0.3, 16), ("fetch-block", 0.8, 2),
                                          ("stache", 0.1, 4)])
def test_floating_on_one_processor_is_single_bit_for_bit(name, U, nodes):
    """policy_cost reuses Single's throughput for Floating at p = 1 (scalar parameters):
    the same as solving Floating there, bit for bit."""
    from models.policy import solve as solve_policy
    prm = preset(name, U=U, nodes=nodes)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = policy_cost(prm, p=[1, 2])
        single = solve_policy(prm.replace(p=1), "single").throughput
        floating = solve_policy(prm.replace(p=np.array([1, 2])), "floating").throughput
    assert float(floating[0]) == float(single) == float(r.baseline)
    assert r.policies["floating"].throughput.tolist() == np.asarray(floating).tolist()
    assert r.policies["floating"].cost_performance[0] == 1.0


def test_policy_cost_vectorised_over_U():
    r = policy_cost(preset("fetch-block", U=np.array([0.3, 0.7])))
    assert r.policies["fixed"].cost_performance.shape == (2, 7)
    assert list(r.most_cost_effective_policy) == ["floating", "floating"]


def test_cli_cost():
    from models.cli import main

    for fmt in ("md", "csv", "html", "rst", "latex"):
        buf = io.StringIO()
        with contextlib.redirect_stdout(buf):
            assert main(["cost", "--preset", "fetch-block", "--U", "0.3", "--format", fmt]) == 0
        assert "cost" in buf.getvalue()
