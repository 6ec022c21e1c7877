"""INIResult fields derived on access (thesis method): same values as eager evaluation.

The thesis method stores the primary per-point arrays (``lam``, ``R_w``, ``R_q``,
``R_y``, ``R_o``) and derives ``R``, ``Q_*``, ``U_*``, ``contention``,
``contention_free`` and ``bottleneck`` when read (memory of large grids, issue 19).
"""

from __future__ import annotations

import dataclasses
import pickle
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import models.ini as ini
from mva._chunks import DEFAULT_CHUNK
from mva.results import Derived

DERIVED = ("R", "Q_q", "Q_y", "Q_o", "U_q", "U_y", "U_o", "contention", "contention_free",
           "bottleneck")


def _solve(**kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return ini.solve(**kw)


def _eager(r, p):
    """The outputs by the eager formulas of the thesis model (thesis Table 6.2)."""
    N, o, O = (np.asarray(getattr(p, k), float) for k in ("N", "o", "O"))
    lam = np.asarray(r.lam, float)
    R = 1.0 / lam
    U_q = o * lam
    U_o = 4.0 * N * lam * O
    r0 = np.asarray(p.contention_free, float)
    return {"R": R, "Q_q": lam * r.R_q, "Q_y": lam * r.R_y, "Q_o": 4.0 * N * lam * r.R_o,
            "U_q": U_q, "U_y": U_q, "U_o": U_o, "contention": R - r0,
            "contention_free": np.broadcast_to(r0, R.shape),
            "bottleneck": np.where(U_o >= U_q + U_q + np.asarray(p.W, float) / R, "INI", "PE")}


GRID = dict(N=4, W=np.linspace(0.0, 5e4, 70)[:, None, None],
            o=np.linspace(0.0, 1000.0, 40)[None, :, None], O=np.linspace(100.0, 3000.0, 30),
            l=5.0, L=20.0)


def test_large_grid_stores_only_primary_arrays_and_derives_the_rest():
    assert 70 * 40 * 30 > DEFAULT_CHUNK                  # the chunked path
    r = _solve(**GRID, method="thesis")
    stored = vars(r)
    # U_o is read by the accuracy map's warning (its axis 1) at solve time
    assert [k for k in DERIVED if type(stored[k]) is not Derived] == ["U_o"]
    assert all(type(stored[k]) is np.ndarray for k in ("lam", "R_w", "R_q", "R_y", "R_o"))
    eager = _eager(r, r.params)
    for k in DERIVED:
        got = getattr(r, k)
        assert np.shape(got) == (70, 40, 30), k
        np.testing.assert_array_equal(got, eager[k], err_msg=k)
        assert type(vars(r)[k]) is not Derived           # cached in place
    assert r.U_q is r.U_y                                # one array for both, as before
    # invariants: Little's law at the PE, U_q = o / R, 0 <= U_o <= 1
    np.testing.assert_allclose(r.Q_q, r.R_q / r.R, rtol=1e-12)
    assert np.all((r.U_o >= 0) & (r.U_o <= 1 + 1e-12))


def test_chunked_grid_equals_slice_by_slice_solves():
    r = _solve(**GRID, method="thesis")
    for i in (0, 33, 69):                               # each slice <= one chunk: unchunked
        s = _solve(**{**GRID, "W": GRID["W"][i:i + 1]}, method="thesis")
        for f in dataclasses.fields(r):
            a, b = getattr(r, f.name), getattr(s, f.name)
            if np.ndim(a) == 3:
                np.testing.assert_array_equal(a[i:i + 1], b, err_msg=f.name)


@settings(max_examples=25, deadline=None)
@given(N=st.integers(1, 64), W=st.floats(0.0, 1e5), o=st.floats(0.0, 2000.0),
       O=st.floats(1.0, 5000.0), L=st.floats(0.0, 2000.0),
       dispatch=st.sampled_from(["static", "shared", "round_robin"]), K=st.integers(1, 4))
def test_single_point_types_and_values(N, W, o, O, L, dispatch, K):
    r = _solve(N=N, W=W, o=o, O=O, L=L, K=K, dispatch=dispatch, method="thesis")
    eager = _eager(r, r.params)
    for k in DERIVED:
        got = getattr(r, k)
        assert isinstance(got, str if k == "bottleneck" else float), (k, type(got))
        assert got == (str(eager[k]) if k == "bottleneck" else float(eager[k])), k


def test_pickle_table_frame_and_expected_error_of_a_lazy_result():
    r = _solve(**GRID, method="thesis")
    back = pickle.loads(pickle.dumps(r))
    assert type(vars(back)["Q_o"]) is Derived           # still pending: nothing materialised
    np.testing.assert_array_equal(back.Q_o, r.Q_o)
    err = r.R_expected_error
    assert np.shape(err) == (70, 40, 30) and np.all(np.isfinite(err))
    small = _solve(N=4, W=np.array([1000.0, 5000.0]), o=np.array([[10.0], [100.0]]), O=300.0)
    frame = small.to_frame()
    np.testing.assert_array_equal(frame["R"].to_numpy(), np.ravel(small.R))
    assert {"Q_o", "U_o", "bottleneck", "R_expected_error"} <= set(frame.columns)
    assert dataclasses.replace(small, method="x").R_q.shape == (2, 2)


@pytest.mark.parametrize("method", ["node", "exact"])
def test_other_methods_keep_their_arrays(method):
    r = _solve(N=3, W=np.array([1000.0, 3000.0]), o=10.0, O=100.0, method=method)
    assert type(vars(r)["R"]) is np.ndarray and type(vars(r)["U_o"]) is np.ndarray
    np.testing.assert_array_equal(r.contention, r.R - np.asarray(r.params.contention_free))
