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
    "sphinx.ext.intersphinx",
    "sphinx.ext.viewcode",
    "numpydoc",
]
local_extensions = [name for name in ("model_table",) if os.path.exists(os.path.join("_ext", name + ".py"))]
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
html_static_path: list[str] = []
math_number_all = False
nitpicky = False
suppress_warnings = ["autosummary.import_cycle"]
