"""The INI thesis method in one time unit for the whole grid (models.ini._time_units).

A grid whose non-zero times lie within ``GRID_UNIT_RANGE`` of each other is
scaled by one power of two instead of one per point (no grid-sized copies of
the times); the results must be bit-identical to per-point units.
"""

import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import models.ini as ini

_FIELDS = ("R", "lam", "R_w", "R_q", "R_y", "R_o", "Q_q", "Q_y", "Q_o", "U_q", "U_o",
           "converged")


def _solve_both(p):
    """(result with the grid unit, result with per-point units) of the thesis method."""
    orig = ini._time_units
    with warnings.catch_warnings(), pytest.MonkeyPatch.context() as mp:
        warnings.simplefilter("ignore")
        grid = ini.solve(p, method="thesis")
        mp.setattr(ini, "_time_units", lambda q, grid_unit=False: orig(q))
        point = ini.solve(p, method="thesis")
    return grid, point


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 2 ** 32 - 1), decades=st.floats(0.0, 17.0),
       scale=st.floats(-250.0, 250.0), dispatch=st.sampled_from(ini.DISPATCH))
def test_grid_unit_is_bit_identical_to_per_point_units(seed, decades, scale,
                                                       dispatch):
    rng = np.random.default_rng(seed)
    n = 64

    def times(zero_share=0.0):
        x = 10.0 ** (scale + rng.uniform(0.0, decades, n))
        return np.where(rng.random(n) < zero_share, 0.0, x)

    p = ini.INIParams(N=rng.choice([1, 2, 4, 8], n), K=rng.choice([1, 2], n), W=times(0.1),
                      o=times(), l=times(0.3), O=times(), L=times(0.3),
                      cs2_o=rng.uniform(0, 4, n), cs2_O=rng.uniform(0, 8, n), dispatch=dispatch)
    q, unit = ini._time_units(p, grid_unit=True)
    assert np.ndim(unit) == 0                       # the range allows one unit
    assert all(np.shape(getattr(q, k)) == (n,) for k in ("W", "o", "l", "O", "L"))
    grid, point = _solve_both(p)
    for k in _FIELDS:
        np.testing.assert_array_equal(np.asarray(getattr(grid, k)),
                                      np.asarray(getattr(point, k)), err_msg=k)


def test_open_mesh_times_keep_their_shapes():
    """The scaled times of an open mesh are not broadcast to the grid."""
    p = ini.INIParams(N=4, W=np.linspace(1e3, 5e4, 50)[:, None, None],
                      o=np.linspace(10, 1e3, 40)[None, :, None], O=np.linspace(100, 3e3, 30))
    q, unit = ini._time_units(p, grid_unit=True)
    assert np.ndim(unit) == 0 and unit == 2.0 ** 15     # 5e4 in [2**15, 2**16)
    assert np.shape(q.W) == (50, 1, 1) and np.shape(q.o) == (1, 40, 1) and np.shape(q.O) == (30,)
    np.testing.assert_array_equal(q.W * unit, p.W)


@pytest.mark.parametrize("small", [1e-30, 2.0 ** -59 * 0.99])
def test_wide_range_falls_back_to_per_point_units(small):
    """Times further apart than GRID_UNIT_RANGE: one unit per point (and the tiny time of a
    point is taken as 0 there when below TIME_EPS of its largest)."""
    p = ini.INIParams(N=2, W=np.array([1.0, 1000.0]), o=10.0, O=50.0, l=small)
    q, unit = ini._time_units(p, grid_unit=True)
    assert np.shape(unit) == (2,)
    grid, point = _solve_both(p)
    for k in _FIELDS:
        np.testing.assert_array_equal(np.asarray(getattr(grid, k)),
                                      np.asarray(getattr(point, k)), err_msg=k)


def test_range_bound_keeps_every_time():
    """Within GRID_UNIT_RANGE no time is below TIME_EPS of its point's largest."""
    assert 1.0 / ini.GRID_UNIT_RANGE > ini.TIME_EPS
