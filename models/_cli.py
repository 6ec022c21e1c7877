"""Shared command-line plumbing for the what-if subcommands.

Each model module exposes ``register_cli(subparsers)``; it adds its own
subparser with :func:`add_common` options and sets ``func`` to a callable
``func(args) -> Table | list[Table]``.  :mod:`models.cli` prints the tables
in the format chosen with ``--format``.
"""

from __future__ import annotations

import argparse
from typing import Any, Callable

import numpy as np

from mva.table import FORMATS, Table

__all__ = ["number_list", "int_list", "add_common", "emit"]


def _parse_numbers(text: str, cast: Callable[[str], Any]) -> list[Any]:
    out: list[Any] = []
    for part in text.split(","):
        part = part.strip()
        if not part:
            continue
        if ":" in part:  # start:stop[:step], stop inclusive
            bits = part.split(":")
            if len(bits) not in (2, 3):
                raise argparse.ArgumentTypeError(f"bad range {part!r}; use start:stop[:step]")
            start, stop = float(bits[0]), float(bits[1])
            step = float(bits[2]) if len(bits) == 3 else 1.0
            if step <= 0:
                raise argparse.ArgumentTypeError(f"range step must be > 0; got {step}")
            vals = np.arange(start, stop + step * 1e-9, step)
            out.extend(cast(repr(float(v)) if cast is float else str(int(round(v)))) for v in vals)
        else:
            try:
                out.append(cast(part))
            except ValueError:
                raise argparse.ArgumentTypeError(f"not a number: {part!r}") from None
    if not out:
        raise argparse.ArgumentTypeError("expected one or more numbers, e.g. 1,2,4 or 1:16")
    return out


def number_list(text: str) -> list[float]:
    """argparse type: ``"1,2.5,4"`` or a range ``"0:1:0.25"`` -> list of floats."""
    return _parse_numbers(text, float)


def int_list(text: str) -> list[int]:
    """argparse type: ``"1,2,4,8"`` or ``"1:16"`` -> list of ints."""
    return _parse_numbers(text, int)


def add_common(parser: argparse.ArgumentParser) -> None:
    """Options every what-if command has: ``--format`` and ``--columns``."""
    parser.add_argument("--format", "-f", choices=FORMATS, default="md",
                        help="table format (default: md)")
    parser.add_argument("--columns", type=lambda s: [c.strip() for c in s.split(",") if c.strip()],
                        default=None, help="comma-separated result columns to show")


def emit(tables: Table | list[Table], args: argparse.Namespace) -> str:
    """Render one or more tables in ``args.format`` (titles as headings).

    With ``--columns``, each table keeps only the named columns that it has,
    in its own order.
    """
    if isinstance(tables, Table):
        tables = [tables]
    parts = []
    for t in tables:
        wanted = getattr(args, "columns", None)
        if wanted:
            unknown = [c for c in wanted if not any(c in tt.columns for tt in tables)]
            if unknown:
                raise ValueError(f"--columns: unknown column(s) {unknown}; "
                                 f"available: {', '.join(t.columns)}")
            t = t.select([c for c in t.columns if c in wanted])
        text = t.render(args.format)
        if t.title and args.format == "md":
            text = f"### {t.title}\n\n{text}"
        elif t.title and args.format == "rst":
            text = f"{t.title}\n{'-' * len(t.title)}\n\n{text}"
        parts.append(text)
    return "\n\n".join(parts)
