"""The trace-driven discrete-event simulator.

* :mod:`~validation.sim.kernel` -- the event loop (a heap of ``(time, seq, event)``);
* :mod:`~validation.sim.machine` -- :class:`Machine` and :class:`NodeSpec`, the
  simulator's own description of the hardware;
* :mod:`~validation.sim.dists` -- :class:`Dist`, times and sizes;
* :mod:`~validation.sim.hardware` -- threads, processors, protocol queues, INIs;
* :mod:`~validation.sim.builders` -- machines from the parameter objects of :mod:`models`;
* :mod:`~validation.sim.stats` -- confidence intervals;
* :mod:`~validation.sim.result` -- :class:`SimResult`;
* :mod:`~validation.sim.simulate` -- :func:`simulate`.
"""

from __future__ import annotations

import importlib
from typing import Any

# public name -> submodule (imported lazily: validation.generators imports
# validation.sim.dists and validation.sim.machine, which must not pull in the
# rest of the package)
_EXPORTS = {
    "simulate": "simulate", "trace_sources": "simulate",
    "machine_from_params": "builders",
    "Machine": "machine", "NodeSpec": "machine",
    "Dist": "dists",
    "SimResult": "result", "ResourceStats": "result",
    "Estimate": "stats",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'validation.sim' has no attribute {name!r}")
    value = getattr(importlib.import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return __all__
