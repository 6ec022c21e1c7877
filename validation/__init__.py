"""validation: the trace-driven simulator and model-against-simulator comparison.

Imports :mod:`models` and :mod:`mva`; neither imports it.
"""

from __future__ import annotations

from mva._version import __version__

__all__ = ["__version__"]
