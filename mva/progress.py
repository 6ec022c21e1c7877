"""Progress reporting for long work: a bar on a terminal, silence otherwise.

:func:`progress` wraps an iterable.  When standard error is a terminal (and
``enable`` is not ``False``) it shows a `tqdm <https://tqdm.github.io>`_ bar
with rate and ETA if tqdm is installed (extra ``progress``), or a minimal
built-in bar otherwise.  When standard error is not a terminal (CI, pipes,
log files, doctests) it is a plain pass-through.
"""

from __future__ import annotations

import sys
import time
from typing import Any, Iterable, Iterator, TypeVar

__all__ = ["progress", "is_interactive"]

T = TypeVar("T")


def is_interactive() -> bool:
    """True when standard error is attached to a terminal."""
    try:
        return bool(sys.stderr.isatty())
    except (AttributeError, ValueError):
        return False


def _builtin_bar(iterable: Iterable[T], total: int | None, desc: str,
                 delay: float = 0.0) -> Iterator[T]:
    start = time.perf_counter()
    last = 0.0
    n = 0
    width = 30
    shown = False
    for item in iterable:
        yield item
        n += 1
        now = time.perf_counter()
        if now - start < delay:
            continue
        if now - last < 0.1 and (total is None or n < total):
            continue
        shown = True
        last = now
        rate = n / max(now - start, 1e-9)
        if total:
            frac = n / total
            eta = (total - n) / rate if rate > 0 else float("inf")
            bar = "#" * int(frac * width)
            msg = f"\r{desc} [{bar:<{width}}] {n}/{total} {rate:,.1f}/s ETA {eta:,.0f}s"
        else:
            msg = f"\r{desc} {n} {rate:,.1f}/s"
        sys.stderr.write(msg)
        sys.stderr.flush()
    if shown:
        sys.stderr.write("\n")
        sys.stderr.flush()


def progress(iterable: Iterable[T], *, total: int | None = None, desc: str = "",
             enable: bool | None = None, delay: float = 0.0) -> Iterable[T]:
    """Wrap ``iterable`` with a progress bar when appropriate.

    Parameters
    ----------
    iterable : iterable
        What to iterate over.
    total : int, optional
        Number of items (taken from ``len(iterable)`` when available).
    desc : str
        Label shown before the bar.
    enable : bool, optional
        ``None`` (default): show only on a terminal; ``False``: never;
        ``True``: whenever standard error is a terminal (a bar is never
        written into a pipe or file).
    delay : float
        Seconds before the bar first appears: work that finishes sooner
        prints nothing (``delay=2`` for "anything that may run over two
        seconds shows progress").

    Examples
    --------
    Off a terminal (as here) the items pass through untouched:

    >>> list(progress(range(3), desc="points"))
    [0, 1, 2]
    """
    if enable is False or not is_interactive():
        return iterable
    if total is None:
        try:
            total = len(iterable)  # type: ignore[arg-type]
        except TypeError:
            total = None
    try:
        from tqdm.auto import tqdm
    except ImportError:
        return _builtin_bar(iterable, total, desc, delay)
    bar: Any = tqdm(iterable, total=total, desc=desc or None, dynamic_ncols=True, delay=delay)
    return bar
