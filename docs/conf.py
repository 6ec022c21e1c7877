"""Sphinx configuration for the smp-contention documentation."""

from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.abspath(".."))
sys.path.insert(0, os.path.abspath("_ext"))

from mva._version import __version__  # noqa: E402

project = "smp-contention"
author = "The smp-contention developers"
copyright = "2026, The smp-contention developers"
release = version = __version__

extensions = [
    "sphinx.ext.autodoc",
    "sphinx.ext.autosummary",
    "sphinx.ext.mathjax",
    # MathJax 3 bundled in a pip package: equations render with no network access
    # (sets mathjax_path to the local copy and copies it into _static/mathjax).
    "sphinx-mathjax-offline",
    "sphinx.ext.intersphinx",
    "sphinx.ext.viewcode",
    "numpydoc",
]
local_extensions = [name for name in ("model_table",)
                    if os.path.exists(os.path.join("_ext", name + ".py"))]
extensions += local_extensions

autosummary_generate = True
autodoc_default_options = {"members": True, "show-inheritance": False}
autodoc_typehints = "none"
numpydoc_show_class_members = False
numpydoc_class_members_toctree = False
numpydoc_xref_param_type = False
numpydoc_validation_checks: set[str] = set()

intersphinx_mapping: dict[str, tuple[str, None]] = {}
templates_path = ["_templates"]
exclude_patterns = ["_build", "api/generated/*.rst.txt"]
html_theme = "alabaster"
html_static_path = ["_static"]
#: code blocks and wide tables scroll sideways instead of being cut off (alabaster clips them)
html_css_files = ["custom-layout.css"]
math_number_all = False
nitpicky = False
suppress_warnings = ["autosummary.import_cycle"]


#: ``SMP_DOCS_SKIP_GENERATED=1`` (used by ``tests/test_docs.py``): replace the directives that
#: run the models (generated tables, command outputs, plots) by a one-line note, so that a
#: build that checks only the rendering of equations and prose takes seconds, not minutes.
#: Never set for the published documentation (the CI's ``sphinx -W`` build runs them all).
SKIP_GENERATED = os.environ.get("SMP_DOCS_SKIP_GENERATED", "") not in ("", "0")
GENERATED_DIRECTIVES = ("model-table", "computed-table", "cli-output", "plot")


def setup(app):  # noqa: D103 - Sphinx hook
    # sphinx-mathjax-offline only sets ``mathjax_path`` and copies its files when the build
    # finishes; it keeps nothing in the environment but does not say so, and Sphinx then
    # reads every page in one process.  Declared here, ``sphinx -j auto`` (the CI's build)
    # runs the pages' generated tables on every core.
    offline = app.extensions.get("sphinx-mathjax-offline")
    if offline is not None:
        offline.parallel_read_safe = True
        offline.parallel_write_safe = True
    if not SKIP_GENERATED:
        return {"parallel_read_safe": True}
    from docutils import nodes
    from docutils.parsers.rst import Directive

    class _Omitted(Directive):
        has_content = True
        optional_arguments = 99
        final_argument_whitespace = True
        option_spec = None  # accept any option

        def run(self):
            return [nodes.paragraph(text=f"[{self.name} omitted: SMP_DOCS_SKIP_GENERATED]")]

    def _override(app_, config):
        for name in GENERATED_DIRECTIVES:
            app_.add_directive(name, _Omitted, override=True)

    app.connect("config-inited", _override, priority=900)
    return {"parallel_read_safe": True}
