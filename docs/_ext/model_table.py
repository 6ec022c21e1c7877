"""Sphinx directives that put the library's own output into the docs at build time.

``.. model-table::`` evaluates a model over a parameter grid when the docs are
built, so every number in a table comes from the code::

    .. model-table:: models.ini.solve
       :params: models.ini.INIParams
       :grid: N=1,2,4,8,16
       :fixed: W=41789, o=742, O=2336, l=0, L=0
       :options: method="thesis"
       :columns: N, R, Q_o, U_o
       :formats: R=.1f, Q_o=.3f, U_o=.3f
       :caption: INI queue length against PEs per INI

Without ``:params:`` the target is called as ``target(**grid, **fixed)``.
Values are parsed as Python literals (numbers, strings, tuples), never
evaluated as code.

``.. cli-help:: [SUBCOMMAND]`` prints the ``--help`` text of the
``smp-contention`` command (or one subcommand) as a literal block.
"""

from __future__ import annotations

import ast
import importlib
from typing import Any

from docutils import nodes
from docutils.parsers.rst import directives
from docutils.statemachine import StringList
from sphinx.util.docutils import SphinxDirective


def _resolve(path: str) -> Any:
    module, _, attr = path.replace(":", ".").rpartition(".")
    return getattr(importlib.import_module(module), attr)


def _split_assignments(text: str) -> dict[str, Any]:
    """Parse ``a=1, b=2,3, c="x"`` (commas inside a value allowed) into literals."""
    out: dict[str, Any] = {}
    if not text:
        return out
    parts = [p.strip() for p in text.replace("\n", " ").split(",")]
    key = None
    for p in parts:
        if "=" in p and p.split("=", 1)[0].strip().isidentifier():
            key, val = (s.strip() for s in p.split("=", 1))
            out[key] = [val]
        elif key is not None and p:
            out[key].append(p)
    parsed: dict[str, Any] = {}
    for k, vals in out.items():
        lits = [ast.literal_eval(v) for v in vals]
        parsed[k] = lits[0] if len(lits) == 1 else lits
    return parsed


class ModelTable(SphinxDirective):
    """Evaluate a model over a grid and insert the result as a table."""

    required_arguments = 1
    has_content = False
    option_spec = {
        "params": directives.unchanged,
        "grid": directives.unchanged,
        "fixed": directives.unchanged,
        "options": directives.unchanged,
        "columns": directives.unchanged,
        "formats": directives.unchanged,
        "caption": directives.unchanged,
    }

    def run(self) -> list[nodes.Node]:
        import numpy as np

        from mva.table import Table, grid_points

        target = _resolve(self.arguments[0])
        grid = {k: np.atleast_1d(v) for k, v in _split_assignments(self.options.get("grid", "")).items()}
        fixed = _split_assignments(self.options.get("fixed", ""))
        opts = _split_assignments(self.options.get("options", ""))
        columns = [c.strip() for c in self.options.get("columns", "").split(",") if c.strip()]
        formats = {k: str(v) for k, v in _split_assignments(self.options.get("formats", "")).items()}
        pts = grid_points(grid)
        if "params" in self.options:
            params = _resolve(self.options["params"])(**pts, **fixed)
            result = target(params, **opts)
        else:
            result = target(**pts, **fixed, **opts)
        n = len(next(iter(pts.values()))) if pts else 1
        data: dict[str, Any] = {}
        for c in columns or list(pts):
            if c in pts:
                data[c] = pts[c]
            else:
                v = np.asarray(getattr(result, c) if not isinstance(result, dict) else result[c])
                data[c] = np.broadcast_to(v, (n,)) if v.ndim == 0 else v.reshape(n)
        table = Table(columns=tuple(data), data=data, formats=formats)
        rst = table.to_rst().splitlines()
        body = StringList(rst, source=self.get_source_info()[0])
        container = nodes.container(classes=["model-table"])
        self.state.nested_parse(body, self.content_offset, container)
        caption = self.options.get("caption")
        if caption and container.children and isinstance(container.children[0], nodes.table):
            title = nodes.title(caption, caption)
            container.children[0].insert(0, title)
        return list(container.children)


class CliHelp(SphinxDirective):
    """Insert ``smp-contention [SUBCOMMAND] --help`` as a literal block."""

    optional_arguments = 1
    has_content = False

    def run(self) -> list[nodes.Node]:
        from models.cli import build_parser

        parser = build_parser()
        if self.arguments:
            sub = next(a for a in parser._actions if a.dest == "command")
            parser = sub.choices[self.arguments[0]]  # type: ignore[attr-defined]
        text = parser.format_help()
        return [nodes.literal_block(text, text, language="text")]


def setup(app: Any) -> dict[str, Any]:
    app.add_directive("model-table", ModelTable)
    app.add_directive("cli-help", CliHelp)
    return {"version": "1.0", "parallel_read_safe": True, "parallel_write_safe": True}
