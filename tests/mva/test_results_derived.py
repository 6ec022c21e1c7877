"""Result fields derived on access (mva.results.Derived / DerivedFields)."""

from __future__ import annotations

import dataclasses
import pickle

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from mva.results import Derived, DerivedFields, ResultMixin

_CALLS: list[int] = []


def _counted_reciprocal(x: np.ndarray) -> np.ndarray:
    _CALLS.append(1)
    return 1.0 / x


@dataclasses.dataclass(frozen=True, kw_only=True)
class _Demo(DerivedFields, ResultMixin):
    lam: object
    R: object
    Q: object
    method: str = "demo"


def _same(a: _Demo, b: _Demo) -> bool:
    """Field-wise equality, bit for bit (dataclass ``==`` is ambiguous on arrays)."""
    return all(np.array_equal(getattr(a, f.name), getattr(b, f.name))
               for f in dataclasses.fields(a))


def _lazy(lam: np.ndarray, R_q: np.ndarray) -> _Demo:
    R = Derived(_counted_reciprocal, lam)
    return _Demo(lam=lam, R=R, Q=Derived(np.multiply, R, R_q))


finite = arrays(np.float64, st.integers(1, 20),
                elements=st.floats(1e-6, 1e6, allow_nan=False, allow_infinity=False))


@settings(max_examples=40, deadline=None)
@given(finite)
def test_lazy_fields_equal_the_eager_formula(lam):
    R_q = lam[::-1].copy()
    r = _lazy(lam, R_q)
    eager = _Demo(lam=lam, R=1.0 / lam, Q=(1.0 / lam) * R_q)
    np.testing.assert_array_equal(r.Q, eager.Q)        # a derived argument resolved first
    np.testing.assert_array_equal(r.R, eager.R)
    assert _same(r, eager)
    # the value replaces the Derived in the instance: plain arrays from then on
    assert type(vars(r)["R"]) is np.ndarray and type(vars(r)["Q"]) is np.ndarray


def test_computed_once_and_shared_between_fields():
    _CALLS.clear()
    lam = np.array([0.5, 0.25])
    r = _lazy(lam, np.array([2.0, 3.0]))
    assert _CALLS == []                  # nothing computed on construction
    r.Q, r.R, r.R, r.Q
    assert len(_CALLS) == 1              # R computed once, for Q and for itself
    assert r.R is r.R


def test_pickle_keeps_pending_formulas_and_values():
    lam = np.array([0.5, 0.25, 0.125])
    r = _lazy(lam, np.array([2.0, 3.0, 4.0]))
    back = pickle.loads(pickle.dumps(r))
    assert type(vars(back)["R"]) is Derived          # still pending after the round trip
    assert _same(back, r)
    done = pickle.loads(pickle.dumps(r))              # r is resolved now: values travel
    assert type(vars(done)["R"]) is np.ndarray and _same(done, r)


def test_replace_frame_and_table_see_values():
    lam = np.array([0.5, 0.25])
    r = _lazy(lam, np.array([2.0, 3.0]))
    r2 = dataclasses.replace(r, lam=lam * 2)         # unchanged fields: their values
    np.testing.assert_array_equal(r2.R, [2.0, 4.0])
    frame = _lazy(lam, np.array([2.0, 3.0])).to_frame()
    assert frame["Q"].tolist() == [4.0, 12.0]
    assert list(_lazy(lam, np.array([2.0, 3.0])).table()["R"]) == [2.0, 4.0]


def test_plain_values_pass_through():
    r = _Demo(lam=1.0, R=2.0, Q=None)
    assert (r.lam, r.R, r.Q, r.method) == (1.0, 2.0, None, "demo")
