"""Sphinx-free core of the documentation directives (see :mod:`model_table`).

Everything that computes what the docs show lives here, so that the test
suite (``tests/test_docs.py``) can evaluate every generated table, command
output and figure of the docs without Sphinx:

* :func:`model_table` -- evaluate a model over a grid (``.. model-table::``);
* :func:`cli_help` / :func:`cli_output` -- the command line's help text and
  output (``.. cli-help::``, ``.. cli-output::``);
* :func:`computed_tables` -- run a code block whose last expression is a
  :class:`mva.table.Table` (``.. computed-table::``);
* :func:`directive_blocks` -- find the directives of a reST file;
* :func:`plot_marked` / :func:`note_saturated` -- draw a model curve whose
  saturated points are marked (hollow markers) and say so on the figure.

Option values are Python literals (:func:`ast.literal_eval`); ``:derived:``
expressions are evaluated by a small arithmetic interpreter that knows the
grid's names and a few NumPy functions, never by :func:`eval`.
"""

from __future__ import annotations

import ast
import contextlib
import importlib
import io
import re
import shlex
from typing import Any, Iterator, Mapping

__all__ = ["resolve", "split_assignments", "split_formats", "rst_safe", "parse_derived",
           "model_table", "cli_parser", "cli_help", "cli_output", "computed_tables",
           "reference_table_rst", "directive_blocks", "SAFE_FUNCTIONS", "quick_validation",
           "sympy_equations_rst", "plot_marked", "note_saturated"]


def resolve(path: str) -> Any:
    """Import ``package.module.attr`` (or ``package.module:attr``)."""
    module, _, attr = path.strip().replace(":", ".").rpartition(".")
    if not module:
        raise ValueError(f"expected a dotted path module.attribute; got {path!r}")
    return getattr(importlib.import_module(module), attr)


def split_formats(text: str) -> dict[str, str]:
    """Parse ``R=.1f, Q_o=".3f"`` (quotes optional) into format specs.

    Examples
    --------
    >>> split_formats('R=.1f, Q_o=".3f"')
    {'R': '.1f', 'Q_o': '.3f'}
    """
    out: dict[str, str] = {}
    for part in _split_top((text or "").replace("\n", " "), ","):
        part = part.strip()
        if not part:
            continue
        key, eq, val = part.partition("=")
        if not eq or not key.strip().isidentifier() and "." not in key:
            raise ValueError(f"formats: expected column=spec; got {part!r}")
        val = val.strip()
        if len(val) >= 2 and val[0] == val[-1] and val[0] in "\"'":
            val = val[1:-1]
        format(1.5, val)  # raises ValueError for a bad spec
        out[key.strip()] = val
    return out


def split_assignments(text: str) -> dict[str, Any]:
    """Parse ``a=1, b=2,3, c="x"`` (commas inside a value allowed) into literals.

    A name with several comma-separated values gets a list.

    Examples
    --------
    >>> split_assignments('N=1,2,4, O=2336, m="thesis"')
    {'N': [1, 2, 4], 'O': 2336, 'm': 'thesis'}
    """
    out: dict[str, list[str]] = {}
    if not text:
        return {}
    parts = [p.strip() for p in _split_top(text.replace("\n", " "), ",")]
    key = None
    for p in parts:
        if "=" in p and p.split("=", 1)[0].strip().isidentifier():
            key, val = (s.strip() for s in p.split("=", 1))
            out[key] = [val]
        elif key is not None and p:
            out[key].append(p)
        elif p:
            raise ValueError(f"expected name=value; got {p!r}")
    parsed: dict[str, Any] = {}
    for k, vals in out.items():
        try:
            lits = [ast.literal_eval(v) for v in vals]
        except (ValueError, SyntaxError) as exc:
            raise ValueError(f"{k}: values must be Python literals; got {', '.join(vals)!r}") \
                from exc
        parsed[k] = lits[0] if len(lits) == 1 else lits
    return parsed


def _split_top(text: str, sep: str) -> list[str]:
    """Split on ``sep`` outside brackets and quotes."""
    parts, depth, quote, cur = [], 0, "", []
    for ch in text:
        if quote:
            if ch == quote:
                quote = ""
        elif ch in "\"'":
            quote = ch
        elif ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif ch == sep and depth == 0:
            parts.append("".join(cur))
            cur = []
            continue
        cur.append(ch)
    parts.append("".join(cur))
    return parts


def _int(x: Any) -> Any:
    import numpy as np

    return np.rint(x).astype(np.int64)


def _safe_functions() -> dict[str, Any]:
    import numpy as np

    return {"sqrt": np.sqrt, "log": np.log, "log2": np.log2, "exp": np.exp, "floor": np.floor,
            "ceil": np.ceil, "minimum": np.minimum, "maximum": np.maximum, "abs": np.abs,
            "int": _int}


#: functions a ``:derived:`` expression may call
SAFE_FUNCTIONS = ("sqrt", "log", "log2", "exp", "floor", "ceil", "minimum", "maximum", "abs",
                  "int")

_BINOPS = {ast.Add: lambda a, b: a + b, ast.Sub: lambda a, b: a - b,
           ast.Mult: lambda a, b: a * b, ast.Div: lambda a, b: a / b,
           ast.FloorDiv: lambda a, b: a // b, ast.Mod: lambda a, b: a % b,
           ast.Pow: lambda a, b: a ** b}


def _eval_expr(node: ast.AST, names: Mapping[str, Any], funcs: Mapping[str, Any]) -> Any:
    if isinstance(node, ast.Expression):
        return _eval_expr(node.body, names, funcs)
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)):
        return node.value
    if isinstance(node, ast.Name):
        if node.id not in names:
            raise ValueError(f"derived: unknown name {node.id!r}; known: {', '.join(names)}")
        return names[node.id]
    if isinstance(node, ast.BinOp) and type(node.op) in _BINOPS:
        return _BINOPS[type(node.op)](_eval_expr(node.left, names, funcs),
                                      _eval_expr(node.right, names, funcs))
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        v = _eval_expr(node.operand, names, funcs)
        return -v if isinstance(node.op, ast.USub) else v
    if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
            and node.func.id in funcs and not node.keywords):
        return funcs[node.func.id](*(_eval_expr(a, names, funcs) for a in node.args))
    raise ValueError(f"derived: unsupported expression {ast.dump(node)!r} (arithmetic, grid "
                     f"names and {', '.join(SAFE_FUNCTIONS)} only)")


def parse_derived(text: str, names: Mapping[str, Any]) -> dict[str, Any]:
    """Evaluate ``K = sqrt(S); W = 41789 * sqrt(S)`` against the grid ``names``.

    Assignments are separated by ``;`` or new lines and may use earlier ones.

    Examples
    --------
    >>> import numpy as np
    >>> d = parse_derived("K = int(sqrt(S)); W = 10 * K", {"S": np.array([1, 4, 16])})
    >>> d["K"].tolist(), d["W"].tolist()
    ([1, 2, 4], [10, 20, 40])
    """
    funcs = _safe_functions()
    env = dict(names)
    out: dict[str, Any] = {}
    for stmt in re.split(r"[;\n]", text or ""):
        stmt = stmt.strip()
        if not stmt:
            continue
        name, eq, expr = stmt.partition("=")
        name = name.strip()
        if not eq or not name.isidentifier():
            raise ValueError(f"derived: expected name = expression; got {stmt!r}")
        val = _eval_expr(ast.parse(expr.strip(), mode="eval"), env, funcs)
        env[name] = out[name] = val
    return out


def _lookup(obj: Any, path: str) -> Any:
    """``a.b.c`` through attributes or mapping keys."""
    for part in path.split("."):
        if isinstance(obj, Mapping):
            if part not in obj:
                raise ValueError(f"columns: no key {part!r} in {path!r}; have {', '.join(obj)}")
            obj = obj[part]
        elif hasattr(obj, part):
            obj = getattr(obj, part)
        else:
            raise ValueError(f"columns: result has no field {part!r} (in {path!r})")
    return obj


def model_table(target: str, options: Mapping[str, str]) -> Any:
    """Evaluate ``target`` as the ``.. model-table::`` directive does; return a Table.

    Parameters
    ----------
    target : str
        Dotted path of the function to call.
    options : mapping
        The directive's options (strings): ``params``, ``grid``, ``zip``,
        ``derived``, ``fixed``, ``options``, ``columns``, ``headers``,
        ``formats``, ``caption``.

    Returns
    -------
    mva.table.Table

    Examples
    --------
    >>> t = model_table("models.lopc.solve", {"params": "models.lopc.LoPCParams",
    ...                 "grid": "W=0,1000", "fixed": "P=16, o=100, L=50",
    ...                 "options": "method='lopc'",
    ...                 "columns": "W, R", "formats": "R='.1f'"})
    >>> print(t.to_rst())
    ==== ======
    W    R
    ==== ======
    0    451.9
    1000 1409.4
    ==== ======
    """
    import numpy as np

    from mva.table import Table, grid_points

    fn = resolve(target)
    grid = {k: np.atleast_1d(v) for k, v in split_assignments(options.get("grid", "")).items()}
    zipped = {k: np.atleast_1d(v) for k, v in split_assignments(options.get("zip", "")).items()}
    if zipped:
        lengths = {len(v) for v in zipped.values()}
        if len(lengths) != 1:
            raise ValueError("zip: parameters must have equal lengths; got "
                             + ", ".join(f"{k}={len(v)}" for k, v in zipped.items()))
        # cross the zipped block (one axis) with the grid
        idx = np.arange(lengths.pop())
        pts = grid_points({"__zip__": idx, **grid})
        order = pts.pop("__zip__")
        pts = {**{k: v[order] for k, v in zipped.items()}, **pts}
    else:
        pts = grid_points(grid)
    n = len(next(iter(pts.values()))) if pts else 1
    fixed = split_assignments(options.get("fixed", ""))
    derived = parse_derived(options.get("derived", ""), {**fixed, **pts})
    derived = {k: np.broadcast_to(np.asarray(v), (n,)) if pts else v for k, v in derived.items()}
    inputs = {**pts, **derived}
    # names starting with "_" are for display and derivations only
    passed = {k: v for k, v in inputs.items() if not k.startswith("_")}
    opts = split_assignments(options.get("options", ""))
    if options.get("params"):
        result = fn(resolve(options["params"])(**passed, **fixed), **opts)
    else:
        result = fn(**passed, **fixed, **opts)
    columns = [c.strip() for c in options.get("columns", "").split(",") if c.strip()]
    headers = [c.strip() for c in options.get("headers", "").split(",") if c.strip()]
    formats = split_formats(options.get("formats", ""))
    caption = options.get("caption") or None
    if isinstance(result, Table):
        table = result.select(columns) if columns else result
        data = {c: table[c] for c in table.columns}
        formats = {**table.formats, **formats}
        columns = list(table.columns)
        caption = caption or table.title
    else:
        data = {}
        for c in columns or list(inputs):
            if c in inputs:
                v = np.asarray(inputs[c])
            elif c == "result" and (np.isscalar(result) or isinstance(result, np.ndarray)):
                v = np.asarray(result)
            else:
                v = np.asarray(_lookup(result, c))
            if v.ndim == 0:
                v = np.broadcast_to(v, (n,))
            if v.size != n:
                raise ValueError(f"columns: {c!r} has {v.size} values for {n} grid points")
            data[c] = v.reshape(n)
        columns = list(data)
    if headers:
        if len(headers) != len(columns):
            raise ValueError(f"headers: {len(headers)} names for {len(columns)} columns")
        data = {h: data[c] for h, c in zip(headers, columns)}
        formats = {h: formats.get(h, formats.get(c)) for h, c in zip(headers, columns)
                   if h in formats or c in formats}
        columns = headers
    return Table(columns=tuple(columns), data=data, formats=formats, title=caption)


_RST_SPECIAL = re.compile(r"([\\*`|_\[\]])")


def param_table(target: str, fields: str | None = None) -> Any:
    """The declared parameters of a parameter class as a table (``.. param-table::``).

    One row per field: name, symbol, meaning, unit, default, allowed values
    and the validity range, all read from :mod:`mva.params` declarations.
    """
    from mva.params import parameter_rows
    from mva.table import Table

    cls = resolve(target)
    rows = parameter_rows(cls)
    if fields:
        wanted = [f.strip() for f in fields.split(",") if f.strip()]
        rows = [r for r in rows if r["name"] in wanted]
    return Table.from_records(rows, title=f"Parameters of {cls.__name__}")


def parameter_glossary(targets: list[str] | None = None) -> Any:
    """Every declared parameter of ``targets`` (``module:Class``; default: all of
    :data:`models.PARAMETER_CLASSES`) with the classes using it."""
    from models import PARAMETER_CLASSES
    from mva.params import declarations
    from mva.table import Table

    targets = list(targets or PARAMETER_CLASSES)
    seen: dict[tuple[str, str], dict[str, str]] = {}
    for t in targets:
        cls = resolve(t)
        for name, p in declarations(cls).items():
            key = (name, p.unit)
            row = seen.setdefault(key, {"name": name, "symbol": p.symbol, "meaning": p.meaning,
                                        "unit": p.unit or "-", "used by": ""})
            row["used by"] = ", ".join(x for x in (row["used by"], cls.__name__) if x)
    rows = sorted(seen.values(), key=lambda r: (r["name"].lower(), r["name"]))
    return Table.from_records(rows, title="Model parameters (from the declarations)")


def rst_safe(table: Any) -> Any:
    """A copy of ``table`` whose text cells are escaped for reST (``*``, backquotes, ``|``...).

    Examples
    --------
    >>> from mva.table import Table
    >>> rst_safe(Table.from_columns({"clock": ["40*", "20"]}))["clock"].tolist()
    ['40\\\\*', '20']
    """
    import numpy as np

    from mva.table import Table

    data = {}
    for c in table.columns:
        col = np.asarray(table[c])
        if col.dtype.kind in "OUS":
            col = np.asarray([_RST_SPECIAL.sub(r"\\\1", v) if isinstance(v, str) else v
                              for v in col.tolist()], dtype=object)
        data[c] = col
    return Table(columns=table.columns, data=data, title=table.title, formats=table.formats)


def _subparsers(parser: Any) -> Any:
    subs = [a for a in parser._actions if a.__class__.__name__ == "_SubParsersAction"]
    return subs[0] if subs else None


def cli_parser(words: list[str] | tuple[str, ...] = (), register: str | None = None) -> Any:
    """The ``smp-contention`` parser, or the subparser reached by ``words``.

    ``register`` (``"module:function"``) adds a subcommand that other
    packages register through the ``smp_contention.commands`` entry-point
    group, for when the distribution is not installed (entry points absent).
    """
    from models.cli import build_parser

    parser = build_parser()
    if register:
        sub = _subparsers(parser)
        fn = resolve(register)
        if not words or words[0] not in sub.choices:
            fn(sub)
    path = ["smp-contention"]
    for w in words:
        sub = _subparsers(parser)
        choices = sub.choices if sub is not None else {}
        if w not in choices:
            raise ValueError(f"cli-help: {' '.join(path)} has no subcommand {w!r}; "
                             f"have {', '.join(choices) or 'none'}")
        parser = choices[w]
        path.append(w)
    return parser


def cli_subcommands(words: list[str] | tuple[str, ...] = ()) -> list[str]:
    """Names of the subcommands of ``smp-contention [words...]`` (as installed)."""
    sub = _subparsers(cli_parser(words))
    return list(sub.choices) if sub is not None else []


def cli_help(words: list[str] | tuple[str, ...] = (), register: str | None = None) -> str:
    """``smp-contention [words...] --help`` (see :func:`cli_parser` for ``register``)."""
    import os

    old = os.environ.get("COLUMNS")
    os.environ["COLUMNS"] = "88"  # stable wrapping whatever the terminal
    try:
        return cli_parser(words, register).format_help()
    finally:
        if old is None:
            os.environ.pop("COLUMNS", None)
        else:
            os.environ["COLUMNS"] = old


def cli_output(command: str) -> str:
    """Run ``smp-contention <command>`` in-process and return what it prints."""
    from models.cli import build_parser

    argv = shlex.split(command)
    parser = build_parser()
    err = io.StringIO()
    try:
        with contextlib.redirect_stderr(err):
            args = parser.parse_args(argv)
            if args.command is None:
                args = parser.parse_args(["whatif", *argv])
    except SystemExit as exc:
        raise ValueError(f"smp-contention {command}: {err.getvalue().strip()}") from exc
    buf = io.StringIO()
    with contextlib.redirect_stdout(buf):
        out = args.func(args)
    text = buf.getvalue() + (out if isinstance(out, str) else "")
    return text.rstrip("\n")


#: bibliography labels of the reference tables' papers (``docs/guide/zz_bibliography.rst``)
REFERENCE_CITATIONS = {"jiang97": "Jiang97", "pdq99": "PDQ", "falsafi97": "Falsafi97",
                       "chong98": "Chong95", "layers": "Layers"}


def reference_table_rst(table_id: str, bibliography: str = "") -> str:
    """The reST of one bundled reference table (``.. reference-table::``).

    Everything comes from :mod:`validation.reference`: the catalog entry
    (:func:`~validation.reference.table_info`: source, caption, columns,
    notes) and the data (:func:`~validation.reference.load_table`).
    ``bibliography`` is the document path of the bibliography page; with it,
    the source links to the paper's entry.

    Examples
    --------
    >>> rst = reference_table_rst("jiang97_table_5_1")
    >>> "2318" in rst and "Transcribed from" in rst
    True
    """
    from mva.table import Table
    from validation.reference import load_table, table_info

    info = table_info(table_id)
    label = REFERENCE_CITATIONS.get(info.paper)
    cite = f" :doc:`[{label}] <{bibliography}>`" if bibliography and label else ""
    caption = _RST_SPECIAL.sub(r"\\\1", info.caption)
    lines = [f"* **Source:** {info.source}{cite}",
             f"* **Table:** {info.table} -- *{caption}*",
             f"* **Rows:** {info.row_count}",
             f"* **Transcribed from:** ``{info.paper_file}``, lines "
             f"{info.paper_lines[0]}-{info.paper_lines[1]}", ""]
    cols = Table.from_records(
        [{"column": f"``{c.name}``", "unit": c.unit or "--",
          "description": f"{c.description.replace('*', chr(92) + '*')} ({c.kind})"}
         for c in info.columns],
        columns=["column", "unit", "description"])
    lines += [".. list-table:: Columns", "   :header-rows: 1", "   :widths: 25 20 55", ""]
    for row in [cols.columns, *zip(*(cols[c] for c in cols.columns))]:
        lines += [f"   * - {row[0]}"] + [f"     - {v}" for v in row[1:]]
    lines.append("")
    if info.notes:
        lines += ["Notes:", ""] + [f"* {n}" for n in info.notes] + [""]
    lines += ["Data:", "", *rst_safe(load_table(table_id)).to_rst().splitlines(), ""]
    return "\n".join(lines)


def sympy_equations_rst(target: str) -> str:
    """reST ``.. math::`` blocks for the SymPy equations returned by ``target()``.

    ``target`` is a dotted path to a function returning a
    :class:`mva.symbolic.EquationSystem` or a mapping of label to
    :class:`sympy.Eq`; each equation becomes one labelled math block
    (``.. sympy-equations::``).
    """
    from mva.symbolic import to_latex

    result = resolve(target)()
    eqs = getattr(result, "equations", result)
    if not eqs:
        raise ValueError(f"{target}() returned no equations")
    lines: list[str] = []
    for label, eq in eqs.items():
        lines += [f"``{label}``", "", ".. math::", "", f"    {to_latex(eq)}", ""]
    return "\n".join(lines)


def computed_tables(code: str, namespace: dict[str, Any] | None = None) -> list[Any]:
    """Run ``code``; its last statement must be an expression giving Table(s).

    Returns
    -------
    list of mva.table.Table

    Examples
    --------
    >>> code = "from mva.table import Table\\nTable.from_columns({'x': [1, 2]})"
    >>> [t.columns for t in computed_tables(code)]
    [('x',)]
    """
    from mva.table import Table

    tree = ast.parse(code)
    if not tree.body or not isinstance(tree.body[-1], ast.Expr):
        raise ValueError("computed-table: the code must end with an expression giving a Table")
    last = ast.Expression(tree.body.pop().value)
    ns: dict[str, Any] = {"__name__": "__computed_table__"} if namespace is None else namespace
    exec(compile(tree, "<computed-table>", "exec"), ns)  # noqa: S102 - trusted docs source
    value = eval(compile(last, "<computed-table>", "eval"), ns)  # noqa: S307
    tables = list(value) if isinstance(value, (list, tuple)) else [value]
    for t in tables:
        if not isinstance(t, Table):
            raise ValueError(f"computed-table: expected mva.table.Table(s); got {type(t).__name__}")
    return tables


_DIRECTIVE = re.compile(r"^(?P<indent>[ \t]*)\.\.[ \t]+(?P<name>[\w-]+)::[ \t]*(?P<arg>.*)$")
_OPTION = re.compile(r"^:(?P<key>[\w-]+):[ \t]*(?P<value>.*)$")


def directive_blocks(text: str, names: tuple[str, ...] | None = None) -> Iterator[dict[str, Any]]:
    """Yield the directives of a reST source: name, argument, options, content, line.

    Only the directive syntax used in these docs is understood (options are
    the first indented ``:key: value`` lines, a value may continue on more
    indented lines; the content follows a blank line).

    Examples
    --------
    >>> src = ".. plot::\\n   :width: 50%\\n\\n   x = 1\\n\\ntext\\n"
    >>> b = next(directive_blocks(src))
    >>> b["name"], b["options"], b["content"]
    ('plot', {'width': '50%'}, 'x = 1')
    """
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        m = _DIRECTIVE.match(lines[i])
        if not m or (names is not None and m["name"] not in names):
            i += 1
            continue
        base = len(m["indent"].expandtabs())
        start = i
        body: list[str] = []
        i += 1
        while i < len(lines):
            ln = lines[i]
            if ln.strip() and len(ln) - len(ln.lstrip()) <= base:
                break
            body.append(ln)
            i += 1
        while body and not body[-1].strip():
            body.pop()
        indent = min((len(b) - len(b.lstrip()) for b in body if b.strip()), default=0)
        body = [b[indent:] for b in body]
        options: dict[str, str] = {}
        j = 0
        key = None
        while j < len(body) and body[j].strip():
            om = _OPTION.match(body[j])
            if om:
                key = om["key"]
                options[key] = om["value"].strip()
            elif key is not None and body[j].startswith(" "):
                options[key] = (options[key] + " " + body[j].strip()).strip()
            else:
                break
            j += 1
        content = "\n".join(body[j:]).strip("\n")
        yield {"name": m["name"], "argument": m["arg"].strip(), "options": options,
               "content": content, "line": start + 1}


_QUICK: dict[int, Any] = {}


def quick_validation(seed: int = 0) -> Any:
    """The quick model-against-simulator validation, run once per docs build.

    Runs :func:`validation.report.run_validation` (``quick=True``; about a
    minute on two cores) the first time a page asks for it and keeps the
    result for the other tables of the build, so the accuracy figures in the
    docs are always those of the code being documented.
    """
    if seed not in _QUICK:
        from validation.report import run_validation

        _QUICK[seed] = run_validation(quick=True, seed=seed, workers=2, progress=False)
    return _QUICK[seed]


#: label of the legend entry :func:`note_saturated` adds
SATURATED_LABEL = "hollow marker: saturated point (no steady state; value not meaningful)"


def plot_marked(ax: Any, x: Any, y: Any, saturated: Any, *fmt: str, **kw: Any) -> Any:
    """Plot a model curve and mark its saturated points with hollow markers.

    The curve is drawn as usual (``ax.plot(x, y, *fmt, **kw)``); every point
    where ``saturated`` is true gets a hollow circle in the curve's colour on
    top, so a saturated stretch -- where a model's value is a fixed point of
    a machine with no steady state, not a prediction -- cannot be read as
    data.  Returns the number of saturated points drawn.

    Examples
    --------
    >>> import matplotlib
    >>> matplotlib.use("Agg")
    >>> import matplotlib.pyplot as plt
    >>> fig, ax = plt.subplots()
    >>> plot_marked(ax, [1, 2, 3], [1.0, 2.0, 3.0], [True, False, True], "-", label="a")
    2
    >>> plt.close(fig)
    """
    import numpy as np

    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    sat = np.broadcast_to(np.asarray(saturated, dtype=bool), x.shape)
    (line,) = ax.plot(x, y, *fmt, **kw)
    if sat.any():
        ax.plot(x[sat], y[sat], "o", ms=5.5, mfc="white", mec=line.get_color(),
                mew=1.2, ls="none", zorder=line.get_zorder() + 1)
    return int(sat.sum())


def note_saturated(ax: Any, count: int) -> None:
    """Add the legend entry explaining hollow markers when ``count`` points were saturated."""
    if count:
        ax.plot([], [], "o", ms=5.5, mfc="white", mec="0.3", ls="none", label=SATURATED_LABEL)
