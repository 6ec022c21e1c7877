"""Cost guards (mva._cost): estimates before allocating, CostError with the estimate and advice."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from mva import _cost
from mva.errors import CostError


@given(st.lists(st.integers(0, 10**7), min_size=1, max_size=3), st.sampled_from([1, 4, 8]))
def test_array_bytes_is_exact_and_never_overflows(shape, itemsize):
    want = int(np.prod([int(d) for d in shape], dtype=object)) * itemsize
    assert _cost.array_bytes(shape, itemsize=itemsize) == want


def test_format_bytes():
    assert _cost.format_bytes(512) == "512 B"
    assert _cost.format_bytes(239 * 1024**3) == "239 GiB"
    assert _cost.format_bytes(_cost.array_bytes((3_000_000, 1_000_000))) == "21.8 TiB"


def test_check_memory_refuses_with_estimate_and_advice():
    _cost.check_memory("x", 10, instead="y", limit=10)          # at the limit: fine
    with pytest.raises(CostError) as info:
        _cost.check_memory("lopc at P=1000000", 2 * 1024**4, instead="method='lopc'",
                           states=10**12, limit=1024**3)
    exc = info.value
    assert isinstance(exc, ValueError)
    assert str(exc) == ("lopc at P=1000000 needs about 2 TiB of memory (1,000,000,000,000 "
                        "states) (limit 1 GiB); use method='lopc' instead")
    assert (exc.nbytes, exc.states, exc.instead) == (2 * 1024**4, 10**12, "method='lopc'")


@given(st.integers(1, 10**6), st.integers(1, 10**6), st.integers(1, 10**4))
def test_network_estimate_grows_with_size_and_linearizer_costs_more(R, K, C):
    s = _cost.network_bytes("schweitzer", R, K, C)
    assert s == 8 * R * K * 8
    assert _cost.network_bytes("linearizer", R, K, C) > s
    assert _cost.network_bytes("schweitzer", R + 1, K, C) > s


def test_memory_limit_from_environment(monkeypatch):
    monkeypatch.setenv("SMP_CONTENTION_MAX_MEMORY", "2G")
    assert _cost.memory_limit() == 2 * 1024**3
    monkeypatch.setenv("SMP_CONTENTION_MAX_MEMORY", "1000")
    assert _cost.memory_limit() == 1000
    monkeypatch.setenv("SMP_CONTENTION_MAX_MEMORY", "lots")
    with pytest.raises(ValueError, match="SMP_CONTENTION_MAX_MEMORY must be"):
        _cost.memory_limit()
    monkeypatch.delenv("SMP_CONTENTION_MAX_MEMORY")
    assert _cost.memory_limit() > 0


def test_cost_error_is_exported():
    import mva
    assert mva.CostError is CostError
