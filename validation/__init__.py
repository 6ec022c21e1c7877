"""validation: the trace-driven simulator and model-against-simulator comparison.

Imports :mod:`models` and :mod:`mva`; neither imports it.

* :mod:`validation.traces` -- the trace format (CSV / JSON Lines), streaming
  reader and writer;
* :mod:`validation.generators` -- seeded synthetic workloads;
* :mod:`validation.sim` -- the discrete-event simulator and :func:`simulate`;
* :mod:`validation.compare` -- model against simulator (:func:`compare`,
  :func:`compare_grid`), :mod:`validation.report` -- the validation report;
* :mod:`validation.reference` -- the papers' published tables as data.
"""

from __future__ import annotations

from mva._version import __version__

from .generators import Workload, generate
from .sim import (Dist, Estimate, Machine, NodeSpec, ResourceStats, SimResult,
                  machine_from_params, simulate)
from .traces import Record, TraceFormatError, read_trace, write_trace
from .compare import compare, compare_grid  # noqa: E402  (after the simulator it uses)

__all__ = ["__version__", "compare", "compare_grid", "simulate", "machine_from_params", "Machine",
           "NodeSpec", "Dist", "Workload", "generate", "SimResult", "ResourceStats", "Estimate",
           "Record", "TraceFormatError", "read_trace", "write_trace"]
