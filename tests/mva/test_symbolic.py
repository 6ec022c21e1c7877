"""Tests for the generic SymPy helpers in mva.symbolic."""

import numpy as np
import pytest
import sympy as sp
from hypothesis import given
from hypothesis import strategies as st

from mva.symbolic import (clear_denominators, eliminate, equation_system, horner, lambdify,
                          to_latex)

x, y, z, a, b = sp.symbols("x y z a b", positive=True)


def test_equation_system_labels_and_parameters():
    s = equation_system({"first": (x, a * y), "second": sp.Eq(y, 1 + x / 2)}, [x, y])
    assert list(s.equations) == ["first", "second"]
    assert s.parameters == (a,)
    assert set(s.residuals()) == {"first", "second"}
    assert "\\begin{aligned}" in s.to_latex() and "(first)" in s.to_latex()


def test_equation_system_needs_unknowns():
    with pytest.raises(ValueError, match="unknowns"):
        equation_system([(x, 1)], [])


def test_eliminate_linear_system_matches_direct_solution():
    s = equation_system([(x, a * y + z), (y, 1 + x / 2), (z, b * x)], [x, y, z])
    e = eliminate(s, y)
    ysol = sp.solve(e.residual, y)
    direct = sp.solve([eq for eq in s.equations.values()], [x, y, z], dict=True)[0]
    assert len(ysol) == 1
    assert sp.simplify(ysol[0] - direct[y]) == 0
    for u in (x, z):
        assert sp.simplify(e.solutions[u].subs(y, ysol[0]) - direct[u]) == 0
    assert {u for u, _ in e.order} == {x, z}


def test_eliminate_nonlinear_rational_system():
    # x = 1/y, y = a + x  ->  y^2 - a y - 1 = 0
    s = equation_system([(x, 1 / y), (y, a + x)], [x, y])
    e = eliminate(s, y)
    num, den, coeffs = clear_denominators(e.residual, y)
    ratio = [sp.simplify(c / coeffs[0]) for c in coeffs]
    assert ratio == [1, -a, -1]


def test_eliminate_using_prescribed_equation():
    s = equation_system({"x": (x, 2 * y), "y": (y, 3 + x / 4)}, [x, y])
    e = eliminate(s, x, using={y: "y"})
    assert e.order == ((y, "y"),)
    assert sp.simplify(e.solutions[y] - (3 + x / 4)) == 0
    with pytest.raises(ValueError, match="no equation labelled"):
        eliminate(s, x, using={y: "nope"})


def test_eliminate_errors():
    s = equation_system([(x, a * y)], [x, y])
    with pytest.raises(ValueError, match="square"):
        eliminate(s, y)
    s2 = equation_system([(x, a * y), (y, 1 + x)], [x, y])
    with pytest.raises(ValueError, match="keep must be one of"):
        eliminate(s2, a)


def test_clear_denominators_coefficients():
    num, den, c = clear_denominators(1 / x - a / (1 - x), x)
    assert [sp.simplify(ci) for ci in c] == [a + 1, -1] or \
        [sp.simplify(-ci) for ci in c] == [a + 1, -1]
    assert sp.simplify(num / den - (1 / x - a / (1 - x))) == 0


def test_to_latex():
    assert to_latex(sp.Eq(x ** 2, 1)) == "x^{2} = 1"
    assert "\\frac" in to_latex(a / (1 - x))


@given(st.lists(st.floats(0.1, 10.0), min_size=1, max_size=5), st.floats(-3.0, 3.0))
def test_lambdify_matches_sympy_including_unrolled_powers(vals, v2):
    expr = [(x ** 3 - 2 * x * a ** 2) / (1 + x ** 2), x ** -2 + a ** 7, sp.Integer(4)]
    f = lambdify([x, a], expr)
    xs = np.asarray(vals)
    out = f(xs, v2)
    for e, o in zip(expr, out):
        ref = np.array([float(e.subs({x: xi, a: v2})) for xi in xs])
        np.testing.assert_allclose(np.asarray(o), ref, rtol=1e-12, atol=1e-12)
        assert np.shape(o) == xs.shape


def test_lambdify_horner_form_same_values():
    e = (x ** 4 * a - 3 * x ** 2 + a) / (x ** 3 + 2)
    f1 = lambdify([x, a], e)
    f2 = lambdify([x, a], e, horner_in=x)
    xs = np.linspace(0.1, 5, 20)
    np.testing.assert_allclose(f1(xs, 1.5), f2(xs, 1.5), rtol=1e-12)
    assert "x" in (f2.__doc__ or "")


def test_horner():
    assert float(horner([1.0, -3.0, 2.0], 2.0)) == 0.0
    c = [np.array([1.0, 2.0]), 0.0, np.array([-1.0, -8.0])]
    np.testing.assert_allclose(horner(c, np.array([1.0, 2.0])), [0.0, 0.0])
    with pytest.raises(ValueError):
        horner([], 1.0)


def test_lazy_exports():
    import mva

    assert mva.eliminate is eliminate
    assert "lambdify" in dir(mva)


def test_polynomial_root_grid_and_exact_roots():
    from mva.symbolic import polynomial_root

    rng = np.random.default_rng(3)
    r1 = rng.uniform(0.5, 2.0, 1000)
    # (x - r1)(x + 3)(x^2 + 1): one root in [0, 5] per point
    c = [np.ones_like(r1), 3 - r1, 1 - 3 * r1, 3 - r1, -3 * r1]
    res = polynomial_root(c, 0.0, 5.0)
    assert res.all_converged
    np.testing.assert_allclose(res.x, r1, rtol=1e-12)
    # a root the Newton steps hit exactly (regression: must not bisect away from it)
    exact = polynomial_root([1.0, -1.0], 0.0, 4.0)
    assert float(exact.x) == 1.0
    # decreasing orientation and a degree-0-in-bracket edge
    dec = polynomial_root([-1.0, 0.0, 2.0], 0.0, 3.0)
    assert float(dec.x) == pytest.approx(np.sqrt(2.0), rel=1e-13)
    with pytest.raises(ValueError, match="opposite signs"):
        polynomial_root([1.0, 1.0], 0.0, 1.0)
