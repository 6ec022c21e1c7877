"""Progress reporting for long work: a bar on a terminal, a line per stage otherwise.

:func:`progress` wraps an iterable.  When standard error is a terminal (and
``enable`` is not ``False``) it shows a `tqdm <https://tqdm.github.io>`_ bar
with rate and ETA if tqdm is installed (extra ``progress``), or a minimal
built-in bar otherwise.  When standard error is not a terminal (CI, pipes,
log files, doctests) it is a plain pass-through.

:func:`stage` names a unit of work made of several bars' worth of items (a
validation grid, say) and its place in the whole run: bars opened inside it
are labelled ``[3/9] lopc [mva]`` instead of their generic label, and when
standard error is not a terminal one line is written when the stage ends
(``[3/9] lopc [mva] done in 12.3 s``), so piped output still shows progress.
"""

from __future__ import annotations

import sys
import time
from contextlib import contextmanager
from typing import Any, Iterable, Iterator, TextIO, TypeVar

__all__ = ["progress", "is_interactive", "stage", "current_stage"]

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
    label = current_stage()
    if label:
        desc = label
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


_STAGES: list[str] = []


def current_stage() -> str:
    """Label of the innermost active :func:`stage` (``""`` outside any)."""
    return _STAGES[-1] if _STAGES else ""


@contextmanager
def stage(name: str, index: int | None = None, total: int | None = None, *,
          enable: bool = True, stream: TextIO | None = None) -> Iterator[str]:
    """Label the progress bars of one stage of a run, and report its end off a terminal.

    Parameters
    ----------
    name : str
        What the stage does (e.g. the grid's name).
    index, total : int, optional
        Position of the stage (1-based) and number of stages: the label is
        prefixed ``[index/total]``.
    enable : bool
        ``False``: no label and no line (bars keep their own labels).
    stream : file, optional
        Where the end-of-stage line goes off a terminal (default standard error).

    Yields
    ------
    str
        The label, e.g. ``"[2/5] ini [schweitzer]"``.

    Examples
    --------
    Off a terminal (as here) a line marks the end of each stage:

    >>> import io
    >>> out = io.StringIO()
    >>> with stage("lopc", 1, 2, stream=out) as label:
    ...     items = list(progress(range(3)))
    >>> label, out.getvalue().startswith("[1/2] lopc done in ")
    ('[1/2] lopc', True)
    """
    label = f"[{index}/{total}] {name}" if index is not None and total else name
    if not enable:
        yield label
        return
    _STAGES.append(label)
    t0 = time.perf_counter()
    try:
        yield label
    finally:
        _STAGES.pop()
    if not is_interactive():
        out = stream if stream is not None else sys.stderr
        out.write(f"{label} done in {time.perf_counter() - t0:.1f} s\n")
        out.flush()
