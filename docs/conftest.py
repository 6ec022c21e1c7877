"""pytest configuration for the docs: collect the reST pages as doctests only.

``python -m pytest`` (the README's test command) runs every ``>>>`` example
of the ``docs/**/*.rst`` pages (``--doctest-glob=*.rst`` in setup.cfg).  The
Sphinx configuration and extensions are not test modules (they import
Sphinx, which is not in the ``test`` extra), nor is a local build tree.
"""

collect_ignore = ["conf.py"]
collect_ignore_glob = ["_ext/*", "_build/*", "_templates/*", "api/generated/*"]
