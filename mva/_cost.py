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

Iterative solvers whose time grows fast with the network (the engine's
Schweitzer and Linearizer on a model's full network) are checked the same
way for time: :func:`network_seconds` estimates the CPU seconds from a
measured worst case and :func:`check_time` refuses above
:func:`time_limit` (``SMP_CONTENTION_MAX_SECONDS``, default 4 s).

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

import contextlib
import contextvars
import math
import os
from typing import Iterator, Sequence

from .errors import CostError

__all__ = ["time_budget", "array_bytes", "format_bytes", "memory_limit", "check_memory",
           "network_bytes", "check_network", "NETWORK_ARRAYS", "NETWORK_SECONDS",
           "network_seconds", "time_limit", "check_time"]

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
    """Raise :class:`~mva.errors.CostError` if ``nbytes`` exceeds ``limit`` (default
    :func:`memory_limit`).

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


#: measured worst-case CPU seconds of the engine's approximate MVA on the models' networks,
#: ``(s0, e0, k)``: ``seconds = s0 * (e / e0) ** k`` with ``e`` the elements one iteration
#: touches (classes x stations for Schweitzer, x chains for Linearizer's corrections).
#: Calibrated on an idle core (``process_time``) at the slowest points of the declared
#: legal domains (no compute time, ``cs2 = 10``): LoPC P = 16 to 20 and INI 8 to 16
#: threads (Linearizer), INI 32 to 128 threads (Schweitzer); the iteration counts grow
#: with the load and ``cs2``, so lighter points run faster than estimated.
NETWORK_SECONDS = {"schweitzer": (1.2, 32768, 1.6), "linearizer": (1.9, 12288, 1.6)}


def network_seconds(method: str, classes: int, stations: int, chains: int) -> float:
    """Estimated worst-case CPU seconds of one solve of a closed network by ``method``.

    0 for a method without a calibration (see :data:`NETWORK_SECONDS`).

    Examples
    --------
    >>> round(network_seconds("linearizer", 48, 16, 16), 1)   # LoPC at P = 16
    1.9
    """
    if method not in NETWORK_SECONDS:
        return 0.0
    s0, e0, k = NETWORK_SECONDS[method]
    e = float(classes) * float(stations) * (float(chains) if method == "linearizer" else 1.0)
    return s0 * (e / e0) ** k


_BUDGET: contextvars.ContextVar[float | None] = contextvars.ContextVar("time_budget", default=None)


@contextlib.contextmanager
def time_budget(seconds: float) -> Iterator[None]:
    """Let solves inside the ``with`` block be estimated to take up to ``seconds`` CPU s.

    For callers that want a slow method knowingly (a validation run that
    compares every method); interactive calls keep :func:`time_limit`'s
    default.  It takes precedence over ``SMP_CONTENTION_MAX_SECONDS`` in this
    thread (a context variable: worker processes do not inherit it).

    Examples
    --------
    >>> with time_budget(600):
    ...     time_limit()
    600.0
    >>> time_limit() == 600.0
    False
    """
    value = float(seconds)
    if not (value > 0 and math.isfinite(value)):
        raise ValueError(f"seconds must be a positive finite number; got {seconds!r}")
    token = _BUDGET.set(value)
    try:
        yield
    finally:
        _BUDGET.reset(token)


def time_limit() -> float:
    """CPU seconds a single solve may be estimated to take.

    The innermost :func:`time_budget`, else ``SMP_CONTENTION_MAX_SECONDS``, else 4.
    """
    budget = _BUDGET.get()
    if budget is not None:
        return budget
    env = os.environ.get("SMP_CONTENTION_MAX_SECONDS")
    if env:
        try:
            value = float(env)
        except ValueError:
            value = float("nan")
        if not (value > 0 and math.isfinite(value)):
            raise ValueError(f"SMP_CONTENTION_MAX_SECONDS must be a positive number of seconds; "
                             f"got {env!r}")
        return value
    return 4.0


def check_time(what: str, seconds: float, *, instead: str, limit: float | None = None) -> None:
    """Raise :class:`~mva.errors.CostError` if ``seconds`` exceeds ``limit`` (default
    :func:`time_limit`).

    Call it before starting a computation whose time was estimated (e.g. by
    :func:`network_seconds`).

    Examples
    --------
    >>> check_time("demo", 1.0, instead="method='exact'", limit=4)   # fits: silent
    >>> check_time("demo", 50.0, instead="method='exact'", limit=4)
    Traceback (most recent call last):
    ...
    mva.errors.CostError: demo would take about 50 CPU s (limit 4 s; SMP_CONTENTION_MAX_SECONDS raises it); use method='exact' instead
    """
    cap = time_limit() if limit is None else float(limit)
    if seconds > cap:
        raise CostError(f"{what} would take about {seconds:.3g} CPU s (limit {cap:g} s; "
                        f"SMP_CONTENTION_MAX_SECONDS raises it); use {instead} instead",
                        instead=instead)
