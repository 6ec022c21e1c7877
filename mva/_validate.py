"""Argument checking shared by all public wrappers.

Every check raises :class:`ValueError` whose message names the parameter,
the offending value and what is allowed, e.g.::

    ValueError: W must be finite and >= 0; got -1.0

The helpers accept scalars or array-likes and return ``float`` arrays
(``numpy.ndarray`` of dtype float64), so callers can broadcast.
"""

from __future__ import annotations

from typing import Any, Iterable

import numpy as np

__all__ = [
    "as_float_array",
    "check_nonnegative",
    "check_positive",
    "check_probability",
    "check_integer",
    "check_choice",
    "check_kwargs",
    "check_finite",
    "check_range",
    "check_positive_or_inf",
    "scalar_or_array",
    "fmt_value",
]


def fmt_value(value: Any) -> str:
    """Short, readable rendering of an offending value for an error message."""
    arr = np.asarray(value)
    if arr.ndim == 0:
        return repr(arr.item())
    if arr.size <= 6:
        return repr(arr.tolist())
    return f"array of shape {arr.shape}"


def _first_bad(arr: np.ndarray, bad: np.ndarray) -> Any:
    """The first offending element as a plain Python number."""
    if arr.ndim == 0:
        return arr.item()
    return arr[bad].flat[0].item()


def as_float_array(name: str, value: Any) -> np.ndarray:
    """Convert ``value`` to a float64 array, rejecting non-numeric input."""
    if isinstance(value, (str, bytes)):
        raise ValueError(f"{name} must be numeric; got {value!r}")
    try:
        arr = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be numeric; got {value!r}") from None
    return arr


def check_finite(name: str, value: Any) -> np.ndarray:
    """Return ``value`` as a float array; raise if any element is NaN or infinite."""
    arr = as_float_array(name, value)
    bad = ~np.isfinite(arr)
    if bad.any():
        raise ValueError(f"{name} must be finite; got {_first_bad(arr, bad)!r}")
    return arr


def check_nonnegative(name: str, value: Any, *, allow_inf: bool = False) -> np.ndarray:
    """Return ``value`` as a float array; raise unless every element is ``>= 0``.

    Examples
    --------
    >>> check_nonnegative("W", [0.0, 2.5])
    array([0. , 2.5])
    >>> check_nonnegative("W", -1)
    Traceback (most recent call last):
    ...
    ValueError: W must be finite and >= 0; got -1.0
    """
    arr = as_float_array(name, value)
    ok = arr >= 0
    if not allow_inf:
        ok &= np.isfinite(arr)
    bad = ~ok  # NaN fails ``>= 0`` too
    if bad.any():
        what = ">= 0" if allow_inf else "finite and >= 0"
        raise ValueError(f"{name} must be {what}; got {_first_bad(arr, bad)!r}")
    return arr


def check_positive(name: str, value: Any) -> np.ndarray:
    """Return ``value`` as a float array; raise unless every element is finite and ``> 0``."""
    arr = as_float_array(name, value)
    bad = ~(np.isfinite(arr) & (arr > 0))
    if bad.any():
        raise ValueError(f"{name} must be finite and > 0; got {_first_bad(arr, bad)!r}")
    return arr


def check_probability(name: str, value: Any, *, open_low: bool = False,
                      open_high: bool = False) -> np.ndarray:
    """Return ``value`` as a float array; raise unless every element lies in [0, 1].

    ``open_low`` / ``open_high`` exclude the end points.
    """
    arr = as_float_array(name, value)
    lo_ok = arr > 0 if open_low else arr >= 0
    hi_ok = arr < 1 if open_high else arr <= 1
    bad = ~(lo_ok & hi_ok)
    if bad.any():
        lo = "(" if open_low else "["
        hi = ")" if open_high else "]"
        raise ValueError(f"{name} must lie in {lo}0, 1{hi}; got {_first_bad(arr, bad)!r}")
    return arr


def check_integer(name: str, value: Any, *, minimum: int | None = None,
                  maximum: int | None = None) -> np.ndarray:
    """Return ``value`` as an int64 array; raise unless integral and within bounds."""
    if isinstance(value, (str, bytes)):
        raise ValueError(f"{name} must be an integer; got {value!r}")
    try:
        arr = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be an integer; got {value!r}") from None
    with np.errstate(invalid="ignore"):
        bad = ~np.isfinite(arr) | (arr != np.round(arr)) | (np.abs(arr) > 2.0 ** 62)
    if bad.any():
        raise ValueError(f"{name} must be an integer; got {_first_bad(arr, bad)!r}")
    iarr = arr.astype(np.int64)
    if minimum is not None and (iarr < minimum).any():
        raise ValueError(f"{name} must be >= {minimum}; got {_first_bad(iarr, iarr < minimum)!r}")
    if maximum is not None and (iarr > maximum).any():
        raise ValueError(f"{name} must be <= {maximum}; got {_first_bad(iarr, iarr > maximum)!r}")
    return iarr


def check_positive_or_inf(name: str, value: Any) -> np.ndarray:
    """Return ``value`` as a float array; raise unless every element is ``> 0`` (``inf`` allowed).

    Examples
    --------
    >>> check_positive_or_inf("bandwidth", 0)
    Traceback (most recent call last):
    ...
    ValueError: bandwidth must be > 0 (inf allowed); got 0.0
    """
    arr = as_float_array(name, value)
    bad = ~(arr > 0)  # NaN fails too; +inf allowed
    if bad.any():
        raise ValueError(f"{name} must be > 0 (inf allowed); got {_first_bad(arr, bad)!r}")
    return arr


def _num(x: float) -> str:
    return f"{x:g}"


def check_range(name: str, value: Any, *, low: float | None = None, high: float | None = None,
                low_open: bool = False, high_open: bool = False,
                allow_inf: bool = False) -> np.ndarray:
    """Return ``value`` as a float array; raise unless every element lies in the interval.

    ``low`` / ``high`` (``None``: unbounded) with ``low_open`` / ``high_open``
    excluding the end points; ``allow_inf`` lets ``+inf`` through when
    ``high`` is ``None``.

    Examples
    --------
    >>> check_range("imbalance", [1.0, 2.5], low=1)
    array([1. , 2.5])
    >>> check_range("imbalance", 0.5, low=1)
    Traceback (most recent call last):
    ...
    ValueError: imbalance must be >= 1; got 0.5
    >>> check_range("skew", -1, low=0, high=2)
    Traceback (most recent call last):
    ...
    ValueError: skew must lie in [0, 2]; got -1.0
    """
    arr = as_float_array(name, value)
    ok = np.isfinite(arr) | (allow_inf & (arr == np.inf) & (high is None))
    if low is not None:
        ok &= (arr > low) if low_open else (arr >= low)
    if high is not None:
        ok &= (arr < high) if high_open else (arr <= high)
    bad = ~ok
    if bad.any():
        if low is not None and high is not None:
            what = (f"lie in {'(' if low_open else '['}{_num(low)}, {_num(high)}"
                    f"{')' if high_open else ']'}")
        elif low is not None:
            what = f"be {'>' if low_open else '>='} {_num(low)}"
        elif high is not None:
            what = f"be {'<' if high_open else '<='} {_num(high)}"
        else:
            what = "be finite"
        raise ValueError(f"{name} must {what}; got {_first_bad(arr, bad)!r}")
    return arr


def check_choice(name: str, value: Any, allowed: Iterable[str]) -> str:
    """Raise unless ``value`` is one of ``allowed`` (listed in the message).

    Examples
    --------
    >>> check_choice("method", "exact", ["exact", "schweitzer"])
    'exact'
    >>> check_choice("method", "magic", ["exact", "schweitzer"])
    Traceback (most recent call last):
    ...
    ValueError: method must be one of 'exact', 'schweitzer'; got 'magic'
    """
    allowed = list(allowed)
    if value not in allowed:
        choices = ", ".join(repr(a) for a in allowed)
        raise ValueError(f"{name} must be one of {choices}; got {value!r}")
    return value


def check_kwargs(func_name: str, kwargs: dict[str, Any], allowed: Iterable[str]) -> None:
    """Raise ``ValueError`` for keyword arguments a solver does not accept."""
    allowed = set(allowed)
    unknown = sorted(set(kwargs) - allowed)
    if unknown:
        ok = ", ".join(sorted(allowed)) or "none"
        raise ValueError(
            f"{func_name} got unknown keyword argument(s) {', '.join(map(repr, unknown))}; "
            f"allowed: {ok}")


def scalar_or_array(x: Any) -> Any:
    """Return a Python float for 0-d input, the array otherwise (scalars in, scalars out)."""
    arr = np.asarray(x)
    if arr.ndim == 0:
        v = arr.item()
        return (float(v) if isinstance(v, (float, int, np.floating, np.integer))
                and not isinstance(v, bool) else v)
    return arr
