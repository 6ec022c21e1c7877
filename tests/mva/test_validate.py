"""Tests for the argument-checking helpers: messages name parameter, value and range."""

import numpy as np
import pytest

from mva._validate import (check_choice, check_integer, check_kwargs, check_nonnegative,
                           check_positive, check_probability, scalar_or_array)


@pytest.mark.parametrize("fn, value, message", [
    (check_nonnegative, -1.0, "W must be finite and >= 0; got -1.0"),
    (check_nonnegative, float("nan"), "W must be finite and >= 0; got nan"),
    (check_nonnegative, [1.0, -2.0], "W must be finite and >= 0; got -2.0"),
    (check_positive, 0.0, "W must be finite and > 0; got 0.0"),
    (check_positive, float("inf"), "W must be finite and > 0; got inf"),
    (check_probability, 1.5, r"W must lie in \[0, 1\]; got 1.5"),
])
def test_messages_name_parameter_value_and_range(fn, value, message):
    with pytest.raises(ValueError, match=message):
        fn("W", value)


def test_nonnegative_accepts_inf_only_when_allowed():
    assert check_nonnegative("Z", np.inf, allow_inf=True) == np.inf
    with pytest.raises(ValueError):
        check_nonnegative("Z", np.inf)


def test_non_numeric_is_rejected():
    with pytest.raises(ValueError, match="N must be numeric; got 'abc'"):
        check_positive("N", "abc")


def test_integer_bounds_and_integrality():
    assert check_integer("P", [1, 2, 3], minimum=1).tolist() == [1, 2, 3]
    with pytest.raises(ValueError, match="P must be an integer; got 2.5"):
        check_integer("P", 2.5)
    with pytest.raises(ValueError, match="P must be >= 1; got 0"):
        check_integer("P", 0, minimum=1)
    with pytest.raises(ValueError, match="P must be <= 4; got 9"):
        check_integer("P", [2, 9], maximum=4)


def test_choice_and_kwargs():
    with pytest.raises(ValueError, match="method must be one of 'a', 'b'; got 'c'"):
        check_choice("method", "c", ["a", "b"])
    with pytest.raises(ValueError, match="unknown keyword argument.*'speed'.*allowed: tol"):
        check_kwargs("solve", {"speed": 1}, ["tol"])
    check_kwargs("solve", {"tol": 1}, ["tol"])


def test_scalar_or_array():
    out = scalar_or_array(np.array(2.5))
    assert isinstance(out, float) and out == 2.5
    arr = scalar_or_array(np.array([1.0, 2.0]))
    assert isinstance(arr, np.ndarray) and arr.shape == (2,)
