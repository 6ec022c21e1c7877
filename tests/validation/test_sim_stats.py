"""The stored Student-t quantiles of the simulator's confidence intervals."""

from __future__ import annotations

import math
import os

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from scipy.special import stdtrit

from validation.sim import _tquantiles
from validation.sim.stats import estimate, t_quantile


def test_the_stored_table_is_what_scipy_gives_now() -> None:
    path = _tquantiles.__file__
    with open(os.path.abspath(path), encoding="utf-8") as fh:
        assert fh.read() == _tquantiles.generate()


@pytest.mark.parametrize("p", _tquantiles.LEVELS)
def test_every_stored_quantile_equals_scipy_bit_for_bit(p: float) -> None:
    got = _tquantiles.T_QUANTILES[p]
    assert len(got) == _tquantiles.MAX_DOF
    for dof, q in enumerate(got, start=1):
        assert q == float(stdtrit(dof, p)), (p, dof)


@settings(max_examples=60, deadline=None)
@given(level=st.sampled_from([0.9, 0.95, 0.99, 0.8]), dof=st.integers(1, 400))
def test_t_quantile_equals_scipy_inside_and_outside_the_table(level: float, dof: int) -> None:
    p = 0.5 + level / 2.0
    t_quantile.cache_clear()
    assert t_quantile(p, dof) == float(stdtrit(dof, p))
    assert t_quantile(p, dof) > 0.0


def test_quantiles_decrease_with_degrees_of_freedom_and_grow_with_level() -> None:
    for p in _tquantiles.LEVELS:
        q = _tquantiles.T_QUANTILES[p]
        assert all(a > b for a, b in zip(q, q[1:]))
    a, b, c = (_tquantiles.T_QUANTILES[p] for p in _tquantiles.LEVELS)
    assert all(x < y < z for x, y, z in zip(a, b, c))


def test_estimate_uses_the_t_quantile_of_its_level() -> None:
    ys = [1.0, 2.0, 4.0, 3.5, 2.5]
    e = estimate(2.6, ys)
    mean = sum(ys) / 5
    s2 = sum((y - mean) ** 2 for y in ys) / 4
    assert e.half_width == float(stdtrit(4, 0.975)) * math.sqrt(s2 / 5)
