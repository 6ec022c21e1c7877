"""Shared by the diagnosis benchmarks: their arguments and the stored references' worst points."""

from __future__ import annotations

import contextlib
import sys
import warnings
from typing import Any, Callable, Iterable, Iterator, Sequence


def fail(message: str) -> None:
    """Leave with one ``error:`` line on standard error and exit status 2 (no traceback)."""
    print(f"error: {message}", file=sys.stderr)
    raise SystemExit(2)


def int_args(argv: Sequence[str], defaults: Sequence[int],
             names: Sequence[str] = ()) -> list[int]:
    """Positional integer arguments, ``defaults`` where absent.

    Each must be positive, a ``seed`` non-negative; a bad one ends the script
    with one ``error:`` line (:func:`fail`).

    >>> int_args(["5"], (1, 2, 3))
    [5, 2, 3]
    """
    if len(argv) > len(defaults):
        fail(f"at most {len(defaults)} arguments ({' '.join(names) or 'integers'}); "
             f"got {len(argv)}")
    out = []
    for j, d in enumerate(defaults):
        name = names[j] if j < len(names) else f"argument {j + 1}"
        low, what = (0, "a non-negative") if name == "seed" else (1, "a positive")
        try:
            v = int(argv[j]) if len(argv) > j else d
        except ValueError:
            fail(f"{name} must be {what} integer; got {argv[j]!r}")
        if v < low:
            fail(f"{name} must be {what} integer; got {v}")
        out.append(v)
    return out


def parse(ap: Any, argv: Sequence[str] | None) -> Any:
    """``ap.parse_args(argv)`` with one ``error:`` line for a bad argument (:func:`fail`),
    and ``points`` (if any) positive, ``seed`` (if any) non-negative."""
    ap.error = fail
    a = ap.parse_args(argv)
    if getattr(a, "points", 1) < 1:
        fail(f"--points must be a positive integer; got {a.points}")
    if getattr(a, "seed", 0) < 0:
        fail(f"--seed must be a non-negative integer; got {a.seed}")
    return a


def steps(items: Sequence[Any], desc: str) -> Iterable[Any]:
    """``items`` with a bar named ``desc`` on a terminal (:func:`mva.progress.progress`)."""
    from mva.progress import progress

    return progress(items, total=len(items), desc=desc, delay=2.0)


def worst_first(family: str, keep: Callable[[dict[str, Any]], bool],
                model: Callable[[dict[str, Any]], Any]) -> list[tuple[float, Any, dict[str, Any]]]:
    """``(|R error|, model(row), row)`` of the stored references of ``family``, worst first.

    Rows the simulator saturated or failed at, or that ``keep`` rejects, are
    left out; ``model(row)`` returns the model's answer, whose ``R`` (or its
    first element) is compared with the row's.
    """
    from validation.domain import load_references

    warnings.simplefilter("ignore")
    out = []
    for r in load_references(family)["rows"]:
        if r.get("saturated") or r.get("error") or not keep(r):
            continue
        m = model(r)
        R = float(m[0] if isinstance(m, tuple) else m)
        out.append((abs(R / r["R"] - 1.0), m, r))
    out.sort(key=lambda x: -x[0])
    return out


def write_results(name: str, payload: dict[str, Any]) -> str:
    """Write ``payload`` as ``benchmarks/results/<name>`` (JSON) and say so; the path."""
    import json
    import os

    here = os.path.dirname(os.path.abspath(__file__))
    path = os.path.join(here, "results", name)
    with open(path, "w") as fh:
        json.dump(payload, fh, indent=1)
    print(f"written {os.path.relpath(path, os.path.dirname(here))}")
    return path


@contextlib.contextmanager
def recorded(module: Any, name: str) -> Iterator[list[Any]]:
    """While the block runs, what ``module.name`` returns is appended to the yielded list.

    >>> import types
    >>> m = types.SimpleNamespace(f=lambda x: 2 * x)
    >>> with recorded(m, "f") as calls:
    ...     _ = m.f(3)
    >>> calls, m.f(1)
    ([6], 2)
    """
    original = getattr(module, name)
    calls: list[Any] = []

    def spy(*a: Any, **kw: Any) -> Any:
        res = original(*a, **kw)
        calls.append(res)
        return res

    setattr(module, name, spy)
    try:
        yield calls
    finally:
        setattr(module, name, original)
