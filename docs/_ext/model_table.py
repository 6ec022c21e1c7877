"""Sphinx directives that put the library's own output into the docs at build time.

Every number these directives show is computed by the library while the docs
are built; none is typed into the reST sources.  The computations live in
:mod:`doc_tables` (no Sphinx needed), so ``tests/test_docs.py`` evaluates
the same directives under pytest.

``.. model-table::`` evaluates a model over a parameter grid::

    .. model-table:: models.ini.solve
       :params: models.ini.INIParams
       :grid: N=1,2,4,8,16
       :fixed: W=41789, o=742, O=2336, l=0, L=0
       :options: method="thesis"
       :columns: N, R, Q_o, U_o
       :formats: R=".1f", Q_o=".3f", U_o=".3f"
       :caption: INI queue length against PEs per INI

Options:

``:params:``
    a parameter class; the target is called as ``target(params(**grid,
    **fixed), **options)``.  Without it, ``target(**grid, **fixed,
    **options)``.
``:grid:``
    ``name=v1,v2,...`` lists, crossed (cartesian product, first name
    slowest).
``:zip:``
    ``name=...`` lists of equal length that vary *together* (one row each),
    crossed with ``:grid:``.
``:derived:``
    ``name = expression`` assignments separated by ``;``, computed from the
    grid, zip and fixed names with arithmetic and ``sqrt``, ``log``,
    ``log2``, ``exp``, ``floor``, ``ceil``, ``minimum``, ``maximum``,
    ``abs``, ``int`` (e.g. ``K = int(sqrt(S)); W = 41789 * sqrt(S)``).
``:fixed:`` / ``:options:``
    constant keyword arguments of the parameter class / of the target.

Grid, zip and derived names that start with ``_`` are not passed to the
target: they serve derivations and display only.

``:columns:``
    input names and result fields to show; a dotted path reaches into nested
    results (``floating.throughput``, ``policies.fixed.best_p``); ``result``
    is the return value itself when it is a number or an array.  Default:
    the inputs only.  A target that returns an :class:`mva.table.Table` is
    shown as it is (``:columns:`` selects).
``:headers:``
    display names for the columns (same number).
``:formats:``
    ``column=".3f"`` format specs (quotes optional; by column or header
    name); ``:caption:`` the table title.

Values are Python literals (:func:`ast.literal_eval`), never evaluated as
code.

``.. param-table:: models.lopc.LoPCParams`` inserts the declared parameters of
a parameter class (:mod:`mva.params`): symbol, meaning, unit, default, allowed
values and validity range (``:fields:`` a comma list to keep, ``:caption:``).
``.. param-glossary:: [CLASS ...]`` lists every declared parameter of the
classes (default: :data:`models.PARAMETER_CLASSES`) once, with the classes
that use it.

``.. computed-table::`` runs its content, a short Python block whose last
expression is an :class:`mva.table.Table` (or a list of them), and inserts
the table(s); ``:caption:`` overrides the title, ``:show-code:`` also shows
the code.

``.. reference-table:: TABLE_ID`` inserts one of the papers' tables bundled
with :mod:`validation.reference`: its catalog entry (source, caption, columns,
notes) and its data, all read at build time; ``:bibliography:`` is the
document path of the bibliography the source links to.

``.. sympy-equations:: models.layers.equations`` calls the function (which
returns an :class:`mva.symbolic.EquationSystem` or a mapping of label to
:class:`sympy.Eq`) and inserts one labelled ``.. math::`` block per
equation, rendered with :func:`sympy.latex`.

``.. cli-help:: [SUBCOMMAND ...]`` inserts ``smp-contention [SUBCOMMAND ...]
--help`` as a literal block (nested subcommands allowed, e.g.
``.. cli-help:: layers fetch``).  ``:register: module:function`` documents a
subcommand that another package adds through the
``smp_contention.commands`` entry-point group even when the distribution is
not installed (``:register: validation.cli:register``).

``.. cli-output:: ARGUMENTS`` runs ``smp-contention ARGUMENTS`` in-process
and inserts the command and what it prints as a console block.

This extension also loads :mod:`matplotlib.sphinxext.plot_directive`
(figures drawn at build time with ``.. plot::``) with light defaults (one PNG
per figure, no source or format links) unless ``conf.py`` sets them.
"""

from __future__ import annotations

from typing import Any

from docutils import nodes
from docutils.parsers.rst import directives
from docutils.statemachine import StringList
from sphinx.util.docutils import SphinxDirective

import doc_tables


def _table_nodes(directive: SphinxDirective, table: Any, caption: str | None) -> list[nodes.Node]:
    """Parse ``table.to_rst()`` and give the table a title."""
    rst = doc_tables.rst_safe(table).to_rst()
    body = StringList(rst.splitlines(), source=directive.get_source_info()[0])
    container = nodes.container(classes=["model-table"])
    directive.state.nested_parse(body, directive.content_offset, container)
    title = caption or table.title
    if title and container.children and isinstance(container.children[0], nodes.table):
        container.children[0].insert(0, nodes.title(title, title))
    return list(container.children)


def _error(directive: SphinxDirective, exc: Exception) -> list[nodes.Node]:
    msg = f"{directive.name}: {type(exc).__name__}: {exc}"
    return [directive.state.document.reporter.error(msg, line=directive.lineno)]


class ModelTable(SphinxDirective):
    """Evaluate a model over a grid and insert the result as a table."""

    required_arguments = 1
    has_content = False
    option_spec = {name: directives.unchanged for name in (
        "params", "grid", "zip", "derived", "fixed", "options", "columns", "headers", "formats",
        "caption")}

    def run(self) -> list[nodes.Node]:
        try:
            table = doc_tables.model_table(self.arguments[0], self.options)
        except Exception as exc:  # reported as a build error naming the directive
            return _error(self, exc)
        return _table_nodes(self, table, self.options.get("caption"))


class ParamTable(SphinxDirective):
    """Insert the declared parameters of a parameter class (``mva.params``)."""

    required_arguments = 1
    has_content = False
    option_spec = {"fields": directives.unchanged, "caption": directives.unchanged}

    def run(self) -> list[nodes.Node]:
        try:
            table = doc_tables.param_table(self.arguments[0], self.options.get("fields"))
        except Exception as exc:
            return _error(self, exc)
        return _table_nodes(self, table, self.options.get("caption"))


class ParamGlossary(SphinxDirective):
    """Insert every declared parameter of the given classes (default: all of them)."""

    required_arguments = 0
    optional_arguments = 20
    has_content = False

    def run(self) -> list[nodes.Node]:
        try:
            table = doc_tables.parameter_glossary(list(self.arguments) or None)
        except Exception as exc:
            return _error(self, exc)
        return _table_nodes(self, table, None)


class ComputedTable(SphinxDirective):
    """Run a Python block whose last expression is a Table; insert the table(s)."""

    has_content = True
    option_spec = {"caption": directives.unchanged, "show-code": directives.flag}

    def run(self) -> list[nodes.Node]:
        code = "\n".join(self.content)
        try:
            tables = doc_tables.computed_tables(code)
        except Exception as exc:
            return _error(self, exc)
        out: list[nodes.Node] = []
        if "show-code" in self.options:
            block = nodes.literal_block(code, code, language="python")
            out.append(block)
        caption = self.options.get("caption")
        for t in tables:
            out.extend(_table_nodes(self, t, caption if len(tables) == 1 else None))
        return out


class ReferenceTable(SphinxDirective):
    """Insert a bundled reference table: catalog metadata, columns, notes and data."""

    required_arguments = 1
    has_content = False
    option_spec = {"bibliography": directives.unchanged}

    def run(self) -> list[nodes.Node]:
        try:
            rst = doc_tables.reference_table_rst(self.arguments[0],
                                                 self.options.get("bibliography", ""))
        except Exception as exc:
            return _error(self, exc)
        body = StringList(rst.splitlines(), source=self.get_source_info()[0])
        container = nodes.container(classes=["reference-table"])
        self.state.nested_parse(body, self.content_offset, container)
        return list(container.children)


class SympyEquations(SphinxDirective):
    """Insert the SymPy equations returned by a function as math blocks."""

    required_arguments = 1
    has_content = False

    def run(self) -> list[nodes.Node]:
        try:
            rst = doc_tables.sympy_equations_rst(self.arguments[0])
        except Exception as exc:
            return _error(self, exc)
        body = StringList(rst.splitlines(), source=self.get_source_info()[0])
        container = nodes.container(classes=["sympy-equations"])
        self.state.nested_parse(body, self.content_offset, container)
        return list(container.children)


class CliHelp(SphinxDirective):
    """Insert ``smp-contention [SUBCOMMAND ...] --help`` as a literal block."""

    optional_arguments = 4
    has_content = False
    option_spec = {"register": directives.unchanged}

    def run(self) -> list[nodes.Node]:
        try:
            text = doc_tables.cli_help(self.arguments, self.options.get("register"))
        except Exception as exc:
            return _error(self, exc)
        return [nodes.literal_block(text, text, language="text")]


class CliOutput(SphinxDirective):
    """Run ``smp-contention ARGUMENTS`` and insert the command and its output."""

    required_arguments = 1
    final_argument_whitespace = True
    has_content = False

    def run(self) -> list[nodes.Node]:
        command = " ".join(self.arguments[0].split())
        try:
            out = doc_tables.cli_output(command)
        except Exception as exc:
            return _error(self, exc)
        text = f"$ smp-contention {command}\n{out}"
        return [nodes.literal_block(text, text, language="console")]


_PLOT_DEFAULTS = {
    "plot_formats": [("png", 96)],
    "plot_html_show_formats": False,
    "plot_html_show_source_link": False,
    "plot_include_source": False,
}


def _plot_defaults(app: Any, config: Any) -> None:
    raw = getattr(config, "_raw_config", {})
    for name, value in _PLOT_DEFAULTS.items():
        if name not in raw:
            setattr(config, name, value)


def setup(app: Any) -> dict[str, Any]:
    app.add_directive("model-table", ModelTable)
    app.add_directive("computed-table", ComputedTable)
    app.add_directive("param-table", ParamTable)
    app.add_directive("param-glossary", ParamGlossary)
    app.add_directive("reference-table", ReferenceTable)
    app.add_directive("sympy-equations", SympyEquations)
    app.add_directive("cli-help", CliHelp)
    app.add_directive("cli-output", CliOutput)
    try:
        import matplotlib
    except ImportError:  # pragma: no cover - matplotlib is in the docs extra
        pass
    else:
        matplotlib.use("Agg")
        app.setup_extension("matplotlib.sphinxext.plot_directive")
        app.connect("config-inited", _plot_defaults)
    return {"version": "1.1", "parallel_read_safe": True, "parallel_write_safe": True}
