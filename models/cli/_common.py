"""Shared command-line plumbing: number lists, parameter options, output.

Parameter options are generated from the declarations of :mod:`mva.params`
(:func:`add_param_options`): one option per declared field, spelled
``--name-with-hyphens``, typed (integer or real lists, choices), with help
giving the meaning, unit, allowed values and default.  The underscore
spellings of earlier releases (``--O_int``, ``--cs2_O``) remain as hidden
aliases that print a deprecation note.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any, Callable, Iterable, Mapping

import numpy as np

from mva.table import FORMATS, Table

__all__ = ["number_list", "int_list", "add_common", "emit", "add_param_options",
           "deprecated_alias", "GLOSSARY_EPILOG", "load"]

#: the width default text tables fit (``--wide`` / ``--columns all`` lift it)
WIDTH = 100

#: pointer to the glossary, appended to every command's ``--help``
GLOSSARY_EPILOG = ("Symbols and abbreviations (SCV = cs2, costup, layer codes, ...) are explained "
                   "in the glossary of the documentation (docs/guide/glossary.rst).")


def load(spec: str) -> Any:
    """``"module:attr"`` -> the object (imported on demand)."""
    import importlib

    module, _, attr = spec.partition(":")
    return getattr(importlib.import_module(module), attr)


def _parse_numbers(text: str, cast: Callable[[str], Any]) -> list[Any]:
    out: list[Any] = []
    parts = text.split(",")
    for part in parts:
        part = part.strip()
        if not part:
            if len(parts) > 1 or not text.strip():
                raise argparse.ArgumentTypeError(
                    f"empty value in {text!r}; give numbers separated by single commas, "
                    "e.g. 1,2,4 or 1:16")
            continue
        if ":" in part:  # start:stop[:step], stop inclusive
            bits = part.split(":")
            if len(bits) not in (2, 3):
                raise argparse.ArgumentTypeError(f"bad range {part!r}; use start:stop[:step]")
            try:
                start, stop = float(bits[0]), float(bits[1])
                step = float(bits[2]) if len(bits) == 3 else 1.0
            except ValueError:
                raise argparse.ArgumentTypeError(
                    f"bad range {part!r}; use numbers as start:stop[:step]") from None
            if not all(np.isfinite([start, stop, step])):
                raise argparse.ArgumentTypeError(f"bad range {part!r}; ends must be finite")
            if step <= 0:
                raise argparse.ArgumentTypeError(f"range step must be > 0; got {step:g}")
            if stop < start:
                raise argparse.ArgumentTypeError(
                    f"range {part!r} is descending (start {start:g} > stop {stop:g}); ranges "
                    f"run upwards: use {bits[1]}:{bits[0]}"
                    + (f":{bits[2]}" if len(bits) == 3 else ""))
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
    """argparse type: ``"1,2.5,4"`` or a range ``"0:1:0.25"`` -> list of floats.

    Examples
    --------
    >>> number_list("0:1:0.5")
    [0.0, 0.5, 1.0]
    >>> number_list("16,,")
    Traceback (most recent call last):
    ...
    argparse.ArgumentTypeError: empty value in '16,,'; give numbers separated by single commas, e.g. 1,2,4 or 1:16
    """
    return _parse_numbers(text, float)


def int_list(text: str) -> list[int]:
    """argparse type: ``"1,2,4,8"`` or ``"1:16"`` -> list of ints."""
    return _parse_numbers(text, int)


def add_common(parser: argparse.ArgumentParser) -> None:
    """Options every what-if command has: ``--format`` and ``--columns``.

    ``--format`` has no short option: one-letter options are parameter names
    (``cost -f 0.2`` is the processor cost fraction).
    """
    parser.add_argument("--format", choices=FORMATS, default="md",
                        help="table format (default: md)")
    parser.add_argument("--columns", type=lambda s: [c.strip() for c in s.split(",") if c.strip()],
                        default=None, help="comma-separated result columns to show, or 'all' "
                                           "(default: all, in groups that fit "
                                           f"{WIDTH} characters)")
    parser.add_argument("--wide", action="store_true",
                        help=f"print wide tables whole, even beyond {WIDTH} characters "
                             "(same as --columns all; default: split into column groups)")
    if parser.epilog is None:
        parser.epilog = GLOSSARY_EPILOG


def _width(t: Table, fmt: str) -> int:
    return max((len(line) for line in t.render(fmt).splitlines()), default=0)


def _key_columns(t: Table) -> list[str]:
    """The shortest prefix of columns (at most 3) that tells the rows apart."""
    cols = list(t.columns)
    n = len(np.asarray(t.data[cols[0]])) if cols else 0
    for k in range(1, min(3, len(cols)) + 1):
        keys = set(zip(*(np.asarray(t.data[c]).tolist() for c in cols[:k])))
        if len(keys) == n:
            return cols[:k]
    return cols[:1]


def _split(t: Table, fmt: str, width: int) -> list[Table]:
    """``t`` as one table, or as column groups that fit ``width``, each repeating the key.

    The first group keeps the title; the others are titled "... (continued)".
    """
    from dataclasses import replace

    if _width(t, fmt) <= width or len(t.columns) <= 1:
        return [t]
    key = _key_columns(t)
    rest = [c for c in t.columns if c not in key]
    groups: list[list[str]] = []
    current: list[str] = []
    for c in rest:
        if current and _width(t.select(key + current + [c]), fmt) > width:
            groups.append(current)
            current = []
        current.append(c)
    if current:
        groups.append(current)
    out = []
    for i, g in enumerate(groups):
        sub = t.select(key + g)
        if i:
            sub = replace(sub, title=f"{t.title} (continued)" if t.title else "(continued)")
        out.append(sub)
    return out


def emit(tables: Table | list[Table], args: argparse.Namespace) -> str:
    """Render one or more tables in ``args.format`` (titles as headings).

    With ``--columns``, each table keeps only the named columns that it has,
    in its own order (``--columns all``: every column).  Otherwise text
    tables (``md``, ``rst``) keep the leading columns that fit
    :data:`WIDTH` characters, and say which columns ``--wide`` adds;
    ``csv``, ``latex`` and ``html`` always carry every column.
    """
    if isinstance(tables, Table):
        tables = [tables]
    parts = []
    wanted = getattr(args, "columns", None)
    if wanted and [c.lower() for c in wanted] == ["all"]:
        wanted = None
        wide = True
    else:
        wide = bool(getattr(args, "wide", False))
    if not wanted and not wide and args.format in ("md", "rst"):
        tables = [part for t in tables for part in _split(t, args.format, WIDTH)]
    for t in tables:
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


# ---------------------------------------------------------------------------
# options generated from parameter declarations
# ---------------------------------------------------------------------------

def deprecated_alias(parser: Any, old: str, new: str, dest: str, type: Any = None,
                     choices: Any = None) -> None:
    """A hidden option ``old`` that stores into ``dest`` and notes that ``new`` replaces it."""

    class _Deprecated(argparse.Action):
        def __call__(self, p: Any, namespace: Any, values: Any, option_string: Any = None) -> None:
            sys.stderr.write(f"smp-contention: warning: {option_string} is deprecated; "
                             f"use {new}\n")
            setattr(namespace, self.dest, values)

    parser.add_argument(old, dest=dest, type=type, choices=choices, action=_Deprecated,
                        default=argparse.SUPPRESS, help=argparse.SUPPRESS)


def _fmt_default(value: Any) -> str:
    if value is None:
        return "none"
    if isinstance(value, (list, tuple)):
        return ",".join(_fmt_default(v) for v in value)
    if isinstance(value, float):
        return f"{value:g}"
    return str(value)


def option_name(name: str) -> str:
    """``O_int`` -> ``--O-int``: the option spelling of a parameter."""
    return "--" + name.replace("_", "-")


def add_param_options(parser: Any, cls: Any, names: Iterable[str], *,
                      defaults: Mapping[str, Any] | None = None,
                      single: Iterable[str] = (), default_text: Mapping[str, str] | None = None,
                      title: str | None = None) -> dict[str, str]:
    """Add one option per declared parameter ``names`` of ``cls``; return name -> option.

    Numeric parameters take comma lists and ``start:stop[:step]`` ranges
    (one value for the names in ``single``); choice parameters one of their
    choices.  The default is ``defaults[name]`` when given (``None`` meaning
    "not given"), otherwise the declared :attr:`~mva.params.Param.example`
    as a one-element list; ``default_text[name]`` describes a ``None``
    default in the help.
    """
    from mva.params import declared

    defaults = dict(defaults or {})
    default_text = dict(default_text or {})
    single = set(single)
    group = parser.add_argument_group(title) if title else parser
    out = {}
    for name in names:
        spec = declared(cls, name)
        opt = option_name(name)
        if name in defaults:
            dflt = defaults[name]
        elif spec.example is None:
            dflt = None
        elif name in single or spec.kind == "choice":
            dflt = spec.example
        else:
            dflt = [spec.example]
        kw: dict[str, Any] = {}
        if spec.kind == "choice":
            kw["choices"] = spec.choices
        elif spec.kind == "int":
            kw["type"] = int if name in single else int_list
        else:
            kw["type"] = float if name in single else number_list
        shown = default_text.get(name) if dflt is None else _fmt_default(dflt)
        lists = "" if name in single or spec.kind == "choice" else "; comma list or a:b[:step]"
        hlp = f"{spec.help()}{lists} (default: {shown or 'none'})".replace("%", "%%")
        group.add_argument(opt, dest=name, default=dflt,
                           metavar=None if spec.kind == "choice" else name, help=hlp, **kw)
        if "_" in name:
            deprecated_alias(group, f"--{name}", opt, name, **kw)
        out[name] = opt
    return out
