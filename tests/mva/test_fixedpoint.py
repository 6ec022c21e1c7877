"""Tests for the vectorised fixed-point and root-finding helpers."""

import warnings

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from mva.errors import ConvergenceError, ConvergenceWarning
from mva.fixedpoint import bracketed_root, fixed_point


def test_fixed_point_scalar_cosine():
    r = fixed_point(lambda x: np.cos(x), [1.0])
    assert r.all_converged
    assert r.x[0] == pytest.approx(0.7390851332151607, rel=1e-9)
    assert r.residual <= 1e-10
    assert r.method == "substitution"


def test_fixed_point_grid_matches_pointwise():
    a = np.linspace(0.1, 3.0, 50)
    r = fixed_point(lambda x: np.cos(a * x), np.zeros((1, 50)))
    assert r.x.shape == (1, 50)
    np.testing.assert_allclose(r.x[0], np.cos(a * r.x[0]), rtol=1e-9, atol=1e-12)
    for i in (0, 17, 49):
        single = fixed_point(lambda x, ai=a[i]: np.cos(ai * x), [0.0])
        assert single.x[0] == pytest.approx(r.x[0, i], rel=1e-8)


def test_fixed_point_system_of_two_unknowns():
    # x = (y + 1)/2, y = x/3  ->  x = 0.6, y = 0.2
    def g(v):
        x, y = v
        return np.array([(y + 1) / 2, x / 3])
    r = fixed_point(g, [0.0, 0.0])
    np.testing.assert_allclose(r.x, [0.6, 0.2], rtol=1e-9)


def test_adaptive_damping_handles_oscillating_map():
    # undamped x -> 3.5 - 2.5 x oscillates and diverges (slope -2.5); damping fixes it
    r = fixed_point(lambda x: 3.5 - 2.5 * x, [0.0], damping=1.0)
    assert r.all_converged
    assert r.x[0] == pytest.approx(1.0, rel=1e-9)


def test_fallback_solves_what_substitution_cannot():
    # x = x**2 + 0.25 - 1e-6 has an attracting fixed point only very slowly reached
    r = fixed_point(lambda x: 2.0 * x - np.sin(x) + 0.0, [1.0], max_iter=5, on_fail="ignore")
    assert r.method.startswith("substitution+")
    assert r.fallback_points == 1
    assert abs(np.sin(r.x[0])) < 1e-8


def test_non_convergence_warns_and_flags():
    with pytest.warns(ConvergenceWarning, match="did not converge"):
        r = fixed_point(lambda x: x + 1.0, [0.0], max_iter=3, fallback=False)
    assert not r.all_converged


def test_non_convergence_raises_when_asked():
    with pytest.raises(ConvergenceError) as info:
        fixed_point(lambda x: x + 1.0, [0.0], max_iter=3, fallback=False, on_fail="raise")
    assert info.value.iterations == 3


@pytest.mark.parametrize("kw, match", [
    ({"damping": 0.0}, "damping"), ({"damping": 1.5}, "damping"), ({"tol": -1}, "tol"),
    ({"max_iter": 0}, "max_iter"), ({"on_fail": "explode"}, "on_fail")])
def test_fixed_point_rejects_bad_options(kw, match):
    with pytest.raises(ValueError, match=match):
        fixed_point(np.cos, [1.0], **kw)


@given(st.floats(1.01, 1e6), st.floats(0.5, 20.0))
def test_bracketed_root_solves_power_equation(c, p):
    r = bracketed_root(lambda x: x**p - c, 0.0, 2.0 * c ** (1.0 / p) + 1.0)
    assert r.all_converged
    assert r.x ** p == pytest.approx(c, rel=1e-9)


def test_bracketed_root_vectorised_and_exact_zero_endpoints():
    c = np.array([0.0, 4.0, 9.0, 1e4])
    r = bracketed_root(lambda x: x**2 - c, 0.0, 200.0)
    np.testing.assert_allclose(r.x, np.sqrt(c), rtol=1e-12, atol=1e-12)
    assert r.converged.all()


def test_bracketed_root_rejects_bad_bracket():
    with pytest.raises(ValueError, match="opposite signs"):
        bracketed_root(lambda x: x**2 + 1, -1.0, 1.0)


def test_bracketed_root_reports_iteration_limit():
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        r = bracketed_root(lambda x: np.exp(x) - 50.0, 0.0, 100.0, max_iter=2)
    assert not r.all_converged
    assert any(issubclass(x.category, ConvergenceWarning) for x in w)
