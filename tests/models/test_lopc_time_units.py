"""The LoPC "lopc" method in one time unit for the whole grid (models.lopc._grid_time_units).

A grid whose non-zero times lie within ``GRID_UNIT_RANGE`` of each other is
scaled by one power of two instead of one per point (no grid-sized copies of
the times); the results must equal per-point units' to rounding: bit for bit up to
numpy 2.3, within 1e-14 relative since (numpy 2.4's SIMD loops round some broadcast and
contiguous operands an ulp apart: 8 of 60,000 values of the open mesh differed by 1.1e-15).
"""

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import models.lopc as lopc

_FIELDS = ("R", "lam", "R_w", "R_q", "R_y", "Q_q", "Q_y", "U_q", "U_y", "contention",
           "converged")


def _solve_both(p):
    """(result with the grid unit, result with per-point units) of the method "lopc"."""
    with warnings.catch_warnings(), pytest.MonkeyPatch.context() as mp:
        warnings.simplefilter("ignore")
        grid = lopc.solve(p, method="lopc")
        mp.setattr(lopc, "_grid_time_units", lopc._time_units)
        point = lopc.solve(p, method="lopc")
    return grid, point


def _assert_same(grid, point):
    # relative to R's scale as well: the contention is R less its contention-free part, so
    # an ulp of R is a larger part of it
    scale = np.abs(np.asarray(point.R, dtype=float))
    for k in _FIELDS:
        np.testing.assert_array_less(
            np.abs(np.asarray(getattr(grid, k), dtype=float)
                   - np.asarray(getattr(point, k), dtype=float)),
            1e-14 * np.maximum(np.abs(np.asarray(getattr(point, k), dtype=float)), scale)
            + 1e-300, err_msg=k)
    assert grid.iterations == point.iterations
    assert grid.residual == pytest.approx(point.residual, rel=1e-9, abs=1e-300)


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(0, 2 ** 32 - 1), decades=st.floats(0.0, 11.5),
       scale=st.floats(-250.0, 250.0))
def test_grid_unit_is_bit_identical_to_per_point_units(seed, decades, scale):
    rng = np.random.default_rng(seed)
    n = 64

    def times(zero_share=0.0):
        x = 10.0 ** (scale + rng.uniform(0.0, decades, n))
        return np.where(rng.random(n) < zero_share, 0.0, x)

    p = lopc.LoPCParams(P=rng.choice([2, 4, 16, 64], n), W=times(0.1), o=times(),
                        L=times(0.3), cs2=rng.uniform(0, 4, n))
    q, unit = lopc._grid_time_units(p)
    assert np.ndim(unit) == 0                       # the range allows one unit
    assert all(np.shape(getattr(q, k)) == (n,) for k in ("W", "o", "L"))
    _assert_same(*_solve_both(p))


def test_open_mesh_times_keep_their_shapes():
    """The scaled times of an open mesh are not broadcast to the grid."""
    p = lopc.LoPCParams(P=16, W=np.linspace(1e3, 5e4, 50)[:, None, None],
                        o=np.linspace(10, 1e3, 40)[None, :, None], L=np.linspace(1, 300, 30))
    q, unit = lopc._grid_time_units(p)
    assert np.ndim(unit) == 0 and unit == 2.0 ** 15     # 5e4 in [2**15, 2**16)
    assert np.shape(q.W) == (50, 1, 1) and np.shape(q.o) == (1, 40, 1) and np.shape(q.L) == (30,)
    np.testing.assert_array_equal(q.W * unit, p.W)
    _assert_same(*_solve_both(p))


@pytest.mark.parametrize("small", [1e-30, 2.0 ** -39 * 0.99])
def test_wide_range_falls_back_to_per_point_units(small):
    """Times further apart than GRID_UNIT_RANGE: one unit per point (and the tiny time of a
    point is taken as 0 there when below TIME_EPS of its largest)."""
    p = lopc.LoPCParams(P=8, W=np.array([1.0, 1000.0]), o=1.0, L=small)
    q, unit = lopc._grid_time_units(p)
    assert np.shape(unit) == (2,)
    _assert_same(*_solve_both(p))


def test_range_bound_keeps_every_time():
    """Within GRID_UNIT_RANGE no time is below TIME_EPS of its point's largest."""
    assert 1.0 / lopc.GRID_UNIT_RANGE > lopc.TIME_EPS
