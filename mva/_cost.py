"""Cost guards: estimate a computation's memory before allocating, refuse with advice.

A solver (or a model building a network for one) calls :func:`check_memory`
or :func:`check_network` *before* it allocates.  When the estimate exceeds
the limit, :class:`mva.errors.CostError` (a :class:`ValueError`) is raised
with the estimate, what it counts and the method to use instead -- never a
raw ``MemoryError`` (or the operating system killing the process) after
minutes of work.

The limit is :func:`memory_limit`: the environment variable
``SMP_CONTENTION_MAX_MEMORY`` (bytes, or with a ``K``/``M``/``G``/``T``
suffix) when set, otherwise half of the machine's physical memory.

Examples
--------
>>> format_bytes(array_bytes((3_000_000, 1_000_000)))
'21.8 TiB'
>>> check_memory("demo", 2**20, instead="a smaller grid", limit=2**30)   # fits: silent
>>> check_memory("demo", 2**40, instead="a smaller grid", limit=2**30)
Traceback (most recent call last):
...
mva.errors.CostError: demo needs about 1 TiB of memory (limit 1 GiB); use a smaller grid instead
"""

from __future__ import annotations

import math
import os
from typing import Sequence

from .errors import CostError

__all__ = ["array_bytes", "format_bytes", "memory_limit", "check_memory", "network_bytes",
           "check_network", "NETWORK_ARRAYS"]

#: arrays of shape (classes, stations) an approximate MVA method keeps (demands, visits,
#: queue lengths, residence times and work arrays), and for Linearizer additionally the
#: fraction corrections of shape (classes, chains, stations) with their updates
NETWORK_ARRAYS = {"schweitzer": (8, 0), "linearizer": (8, 4), "exact": (8, 0)}


def array_bytes(*shapes: Sequence[int], itemsize: int = 8) -> int:
    """Bytes of float arrays of the given shapes (Python integers: no overflow)."""
    return sum(math.prod(int(d) for d in shape) for shape in shapes) * int(itemsize)


def format_bytes(n: float) -> str:
    """``n`` bytes in binary units with three significant digits (``'21.8 TiB'``)."""
    units = ("B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB")
    x = float(n)
    i = 0
    while x >= 1024 and i < len(units) - 1:
        x /= 1024
        i += 1
    return f"{x:.3g} {units[i]}"


def _parse_bytes(text: str) -> int:
    t = text.strip().upper().removesuffix("B").removesuffix("I")
    scale = 1
    if t and t[-1] in "KMGT":
        scale = 1024 ** ("KMGT".index(t[-1]) + 1)
        t = t[:-1]
    value = float(t)
    if not (value > 0 and math.isfinite(value)):
        raise ValueError
    return int(value * scale)


def memory_limit() -> int:
    """Bytes a single computation may allocate (see the module docstring)."""
    env = os.environ.get("SMP_CONTENTION_MAX_MEMORY")
    if env:
        try:
            return _parse_bytes(env)
        except ValueError:
            raise ValueError(f"SMP_CONTENTION_MAX_MEMORY must be a positive number of bytes, "
                             f"optionally with K, M, G or T; got {env!r}") from None
    try:
        physical = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):  # pragma: no cover - non-POSIX
        physical = 8 * 1024 ** 3
    return int(physical) // 2


def check_memory(what: str, nbytes: int, *, instead: str, states: int | None = None,
                 limit: int | None = None) -> None:
    """Raise :class:`~mva.errors.CostError` if ``nbytes`` exceeds ``limit`` (default :func:`memory_limit`).

    Parameters
    ----------
    what : str
        The computation, e.g. ``"lopc method='schweitzer' at P=1000000"``.
    nbytes : int
        Estimated memory.
    instead : str
        What to use instead (named in the message).
    states : int, optional
        Array elements or population vectors behind the estimate (reported).
    limit : int, optional
        Bytes allowed.
    """
    cap = memory_limit() if limit is None else int(limit)
    if nbytes > cap:
        count = f" ({states:,} states)" if states is not None else ""
        raise CostError(f"{what} needs about {format_bytes(nbytes)} of memory{count} (limit "
                        f"{format_bytes(cap)}); use {instead} instead",
                        nbytes=int(nbytes), states=states, instead=instead)


def network_bytes(method: str, classes: int, stations: int, chains: int) -> int:
    """Estimated memory of solving a closed network by ``method`` (``"schweitzer"``, ...).

    ``NETWORK_ARRAYS[method] = (a, b)``: ``a`` arrays of shape (classes,
    stations) and ``b`` of shape (classes, chains, stations), float64.
    """
    a, b = NETWORK_ARRAYS.get(method, (8, 0))
    return array_bytes(*([(classes, stations)] * a + [(classes, chains, stations)] * b))


def check_network(what: str, method: str, classes: int, stations: int, chains: int, *,
                  instead: str, limit: int | None = None) -> None:
    """:func:`check_memory` for a closed network of the given size solved by ``method``.

    Call it *before* building the network's (classes x stations) arrays.

    Examples
    --------
    >>> check_network("lopc at P=1000000", "schweitzer", 3_000_000, 1_000_000, 1_000_000,
    ...               instead="method='lopc'")
    Traceback (most recent call last):
    ...
    mva.errors.CostError: lopc at P=1000000 (method 'schweitzer', 3000000 classes x 1000000 stations) needs about 175 TiB of memory (24,000,000,000,000 states) (limit ...); use method='lopc' instead
    """
    a, b = NETWORK_ARRAYS.get(method, (8, 0))
    states = a * classes * stations + b * classes * chains * stations
    check_memory(f"{what} (method {method!r}, {classes} classes x {stations} stations)",
                 network_bytes(method, classes, stations, chains), instead=instead,
                 states=states, limit=limit)
