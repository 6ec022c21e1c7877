"""One table type for every model: evaluate over a grid, choose columns, render.

A :class:`Table` is an ordered set of equal-length columns.  It renders to
Markdown, reStructuredText, LaTeX, HTML and CSV (and to a pandas DataFrame when
pandas is installed).  :func:`tabulate` evaluates any vectorised function (a
model's ``solve``) over the cartesian product of a parameter grid in *one*
call and collects the requested result fields as columns.

Examples
--------
>>> t = Table.from_columns({"N": [1, 2], "R": [1.5, 2.25]}, title="demo")
>>> print(t.to_markdown())
|   N |    R |
|----:|-----:|
|   1 |  1.5 |
|   2 | 2.25 |
"""

from __future__ import annotations

import csv
import html
import io
from dataclasses import dataclass, field, fields, is_dataclass
from typing import Any, Callable, ClassVar, Iterable, Mapping, Sequence

import numpy as np

from ._validate import check_choice

__all__ = ["Table", "tabulate", "grid_points", "result_fields", "FORMATS"]

FORMATS = ("md", "rst", "latex", "html", "csv")


def _fmt_cell(v: Any, spec: str, missing: str = "-") -> str:
    if isinstance(v, (bool, np.bool_)):
        return "yes" if v else "no"
    if isinstance(v, (int, np.integer)):
        return str(int(v))
    if isinstance(v, (float, np.floating)):
        f = float(v)
        if np.isnan(f):
            return missing
        if f.is_integer() and abs(f) < 1e15 and spec == ".6g":
            return str(int(f))
        return format(f, spec)
    if v is None:
        return missing
    return str(v)


@dataclass(frozen=True, kw_only=True)
class Table:
    """A rectangular table of named columns.

    Attributes
    ----------
    columns : tuple of str
        Column names, in display order.
    data : dict of str to numpy.ndarray
        One 1-D array per column, all the same length.
    title : str, optional
        Caption (used by LaTeX and HTML output, and as a heading in Markdown
        when ``caption=True``).
    formats : dict of str to str
        Per-column format spec for floats (default ``".6g"``).
    """

    columns: tuple[str, ...]
    data: Mapping[str, np.ndarray]
    title: str | None = None
    formats: Mapping[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        lengths = {len(self.data[c]) for c in self.columns}
        if len(lengths) > 1:
            raise ValueError(f"columns must have equal lengths; got {sorted(lengths)}")
        missing = [c for c in self.columns if c not in self.data]
        if missing:
            raise ValueError(f"columns {missing} have no data")

    # -- construction -----------------------------------------------------
    @classmethod
    def from_columns(cls, columns: Mapping[str, Iterable[Any]], *, title: str | None = None,
                     formats: Mapping[str, str] | None = None) -> "Table":
        """Build a table from a mapping of column name to values."""
        data = {k: np.asarray(list(v) if not isinstance(v, np.ndarray) else v).ravel()
                for k, v in columns.items()}
        return cls(columns=tuple(columns), data=data, title=title, formats=dict(formats or {}))

    @classmethod
    def from_records(cls, records: Sequence[Mapping[str, Any]], *,
                     columns: Sequence[str] | None = None,
                     title: str | None = None, formats: Mapping[str, str] | None = None) -> "Table":
        """Build a table from a list of row dicts (columns default to the first row's keys)."""
        cols = list(columns) if columns is not None else (list(records[0]) if records else [])
        data = {c: np.asarray([r.get(c) for r in records], dtype=object) for c in cols}
        return cls(columns=tuple(cols), data=data, title=title, formats=dict(formats or {}))

    # -- access -----------------------------------------------------------
    def __len__(self) -> int:
        return len(self.data[self.columns[0]]) if self.columns else 0

    def __getitem__(self, column: str) -> np.ndarray:
        return self.data[column]

    def rows(self) -> list[list[Any]]:
        """The table's rows as lists of raw values."""
        return [[self.data[c][i] for c in self.columns] for i in range(len(self))]

    def select(self, columns: Sequence[str]) -> "Table":
        """A table with only ``columns`` (in that order)."""
        for c in columns:
            if c not in self.data:
                raise ValueError(f"columns: unknown column {c!r}; available: "
                                 f"{', '.join(self.data)}")
        return Table(columns=tuple(columns), data=self.data, title=self.title, formats=self.formats)

    def to_dict(self) -> dict[str, list[Any]]:
        """Columns as plain Python lists."""
        return {c: np.asarray(self.data[c]).tolist() for c in self.columns}

    def to_frame(self) -> Any:
        """The table as a :class:`pandas.DataFrame` (requires pandas)."""
        try:
            import pandas as pd
        except ImportError as exc:  # pragma: no cover - depends on environment
            raise ImportError("Table.to_frame() needs pandas: pip install pandas") from exc
        return pd.DataFrame({c: self.data[c] for c in self.columns})

    # -- rendering --------------------------------------------------------
    def _cells(self, missing: str = "-") -> list[list[str]]:
        return [[_fmt_cell(self.data[c][i], self.formats.get(c, ".6g"), missing)
                 for c in self.columns] for i in range(len(self))]

    def _numeric(self, c: str) -> bool:
        a = np.asarray(self.data[c])
        if a.dtype.kind in "iuf":
            return True
        return all(isinstance(v, (int, float, np.integer, np.floating)) and not isinstance(v, bool)
                   for v in a)

    def to_markdown(self) -> str:
        """GitHub-flavoured Markdown (numbers right-aligned)."""
        cells = self._cells()
        widths = [max([len(c), 3] + [len(r[j]) for r in cells]) for j, c in enumerate(self.columns)]
        num = [self._numeric(c) for c in self.columns]

        def line(vals: Sequence[str]) -> str:
            return "| " + " | ".join(v.rjust(w) if n else v.ljust(w)
                                     for v, w, n in zip(vals, widths, num)) + " |"
        sep = "|" + "|".join(("-" * (w + 1) + ":") if n else ("-" * (w + 2))
                             for w, n in zip(widths, num)) + "|"
        return "\n".join([line(self.columns), sep] + [line(r) for r in cells])

    def to_rst(self) -> str:
        """reStructuredText simple table (a missing value is an escaped ``\\-``)."""
        cells = self._cells(missing="\\-")
        widths = [max([len(c)] + [len(r[j]) for r in cells]) for j, c in enumerate(self.columns)]
        border = " ".join("=" * w for w in widths)

        def line(vals: Sequence[str]) -> str:
            return " ".join(v.ljust(w) for v, w in zip(vals, widths)).rstrip()
        out = [border, line(self.columns), border] + [line(r) for r in cells] + [border]
        return "\n".join(out)

    def to_latex(self) -> str:
        """A LaTeX ``tabular`` (booktabs rules) inside a ``table`` float when titled."""
        def esc(s: str) -> str:
            for a, b in (("\\", r"\textbackslash{}"), ("&", r"\&"), ("%", r"\%"), ("$", r"\$"),
                         ("#", r"\#"), ("_", r"\_"), ("{", r"\{"), ("}", r"\}")):
                s = s.replace(a, b)
            return s
        align = "".join("r" if self._numeric(c) else "l" for c in self.columns)
        body = [r"\begin{tabular}{" + align + "}", r"\toprule",
                " & ".join(esc(c) for c in self.columns) + r" \\", r"\midrule"]
        body += [" & ".join(esc(v) for v in r) + r" \\" for r in self._cells()]
        body += [r"\bottomrule", r"\end{tabular}"]
        if self.title:
            body = [r"\begin{table}[ht]", r"\centering", r"\caption{" + esc(self.title) + "}"] + \
                body + [r"\end{table}"]
        return "\n".join(body)

    def to_html(self) -> str:
        """An HTML ``<table>`` (with ``<caption>`` when titled)."""
        out = ["<table>"]
        if self.title:
            out.append(f"<caption>{html.escape(self.title)}</caption>")
        out.append("<thead><tr>" + "".join(f"<th>{html.escape(c)}</th>" for c in self.columns)
                   + "</tr></thead>")
        out.append("<tbody>")
        for r in self._cells():
            out.append("<tr>" + "".join(f"<td>{html.escape(v)}</td>" for v in r) + "</tr>")
        out.append("</tbody></table>")
        return "\n".join(out)

    #: rows a notebook shows before eliding the middle of a long table
    DISPLAY_ROWS: ClassVar[int] = 50

    def _display_table(self) -> "Table":
        n = len(self)
        if n <= self.DISPLAY_ROWS:
            return self
        k = self.DISPLAY_ROWS // 2
        idx = np.r_[0:k, n - k:n]
        note = f"{n} rows; the first and last {k} shown"
        data = {c: np.asarray(self.data[c])[idx] for c in self.columns}
        return Table(columns=self.columns, data=data,
                     title=f"{self.title} ({note})" if self.title else note, formats=self.formats)

    def _repr_html_(self) -> str:
        """Notebook display: the HTML table (long tables show their first and last rows)."""
        return self._display_table().to_html()

    def _repr_markdown_(self) -> str:
        """Notebook display as Markdown, with the title as a caption line."""
        t = self._display_table()
        return (f"**{t.title}**\n\n" if t.title else "") + t.to_markdown()

    def to_csv(self) -> str:
        """Comma-separated values with a header row; floats at full precision."""
        buf = io.StringIO()
        w = csv.writer(buf, lineterminator="\n")
        w.writerow(self.columns)
        for i in range(len(self)):
            row = []
            for c in self.columns:
                v = self.data[c][i]
                row.append(repr(float(v)) if isinstance(v, (float, np.floating)) else
                           ("" if v is None else str(v.item() if isinstance(v, np.generic) else v)))
            w.writerow(row)
        return buf.getvalue()

    def render(self, fmt: str = "md") -> str:
        """Render in one of :data:`FORMATS` (``md``, ``rst``, ``latex``, ``html``, ``csv``)."""
        check_choice("format", fmt, FORMATS)
        return {"md": self.to_markdown, "rst": self.to_rst, "latex": self.to_latex,
                "html": self.to_html, "csv": self.to_csv}[fmt]()

    def __str__(self) -> str:
        return self.to_markdown()


def grid_points(grid: Mapping[str, Any]) -> dict[str, np.ndarray]:
    """Cartesian product of ``grid`` as flat, equal-length arrays (first key slowest).

    Examples
    --------
    >>> g = grid_points({"a": [1, 2], "b": [10, 20, 30]})
    >>> g["a"].tolist(), g["b"].tolist()
    ([1, 1, 1, 2, 2, 2], [10, 20, 30, 10, 20, 30])
    """
    names = list(grid)
    values = [np.atleast_1d(np.asarray(grid[n])) for n in names]
    if not names:
        return {}
    mesh = np.meshgrid(*values, indexing="ij")
    return {n: m.ravel() for n, m in zip(names, mesh)}


def _field_value(result: Any, name: str) -> Any:
    if isinstance(result, Mapping):
        return result[name]
    if hasattr(result, name):
        return getattr(result, name)
    raise ValueError(f"columns: result has no field {name!r}")


def result_fields(result: Any) -> list[str]:
    """Names of the fields of a result dataclass (or keys of a mapping)."""
    if isinstance(result, Mapping):
        return list(result)
    if is_dataclass(result):
        return [f.name for f in fields(result)]
    if hasattr(result, "__dict__"):
        return [n for n in vars(result) if not n.startswith("_")]
    return [n for n in dir(result) if not n.startswith("_")]


def tabulate(fn: Callable[..., Any], grid: Mapping[str, Any], *,
             columns: Sequence[str] | None = None,
             fixed: Mapping[str, Any] | None = None, title: str | None = None,
             formats: Mapping[str, str] | None = None) -> Table:
    """Evaluate a vectorised ``fn`` over the cartesian product of ``grid`` in one call.

    Parameters
    ----------
    fn : callable
        Called once as ``fn(**points, **fixed)`` with each grid parameter as a
        flat array; returns a result object (dataclass or mapping) whose
        fields are arrays of the grid's length or scalars.
    grid : mapping
        Parameter name to sequence of values.
    columns : sequence of str, optional
        Result fields to show after the grid parameters (default: every
        scalar-per-point field of the result).
    fixed : mapping, optional
        Extra keyword arguments held constant.
    title, formats
        Passed to :class:`Table`.

    Examples
    --------
    >>> from types import SimpleNamespace
    >>> def f(x, k=1.0):
    ...     return SimpleNamespace(y=k * x**2)
    >>> print(tabulate(f, {"x": [1, 2, 3]}, columns=["y"], fixed={"k": 2}).to_markdown())
    |   x |   y |
    |----:|----:|
    |   1 |   2 |
    |   2 |   8 |
    |   3 |  18 |
    """
    pts = grid_points(grid)
    res = fn(**pts, **dict(fixed or {}))
    n = len(next(iter(pts.values()))) if pts else 1
    cols: list[str]
    if columns is None:
        cols = []
        for name in result_fields(res):
            v = np.asarray(_field_value(res, name))
            if v.dtype.kind in "biuf" and (v.ndim == 0 or v.shape == (n,)):
                cols.append(name)
    else:
        cols = list(columns)
    data: dict[str, np.ndarray] = dict(pts)
    for c in cols:
        v = np.asarray(_field_value(res, c))
        data[c] = np.broadcast_to(v, (n,)).copy() if v.ndim == 0 else v.reshape(n)
    order = list(pts) + [c for c in cols if c not in pts]
    return Table(columns=tuple(order), data=data, title=title, formats=dict(formats or {}))
