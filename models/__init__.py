"""models: domain models of communication contention in clusters of SMPs.

Built on :mod:`mva`.  Each module is one family of models with a parameter
dataclass, a vectorised ``solve`` and a result dataclass:

- :mod:`models.lopc` -- LoPC request/reply contention (one level);
- :mod:`models.ini` -- the two-level intelligent-network-interface model;
- :mod:`models.policy` -- Fixed / Floating / Single protocol processing;
- :mod:`models.cost` -- cost-effectiveness (costup against speedup);
- :mod:`models.pdq` -- parallel dispatch queues and the Hurricane family;
- :mod:`models.layers` -- communication- and protocol-layer costs;
- :mod:`models.mechanisms` -- shared memory against message passing.

Submodules are imported on first use.
"""

from __future__ import annotations

import importlib
from typing import Any

from mva._version import __version__

_SUBMODULES = ("lopc", "ini", "policy", "cost", "pdq", "layers", "mechanisms")

#: the public parameter dataclasses (``"module:Class"``); every field of each is
#: declared with :func:`mva.params.param` (the tests walk this list)
PARAMETER_CLASSES: tuple[str, ...] = (
    "models.lopc:LoPCParams", "models.ini:INIParams", "models.policy:PolicyParams",
    "models.pdq:PDQParams", "models.layers:CommParams", "models.layers:ProtocolParams",
    "models.layers:AppProfile", "models.mechanisms:MechanismParams")

__all__ = ["__version__", "PARAMETER_CLASSES", *_SUBMODULES]


def __getattr__(name: str) -> Any:
    if name in _SUBMODULES:
        module = importlib.import_module(f".{name}", __name__)
        globals()[name] = module
        return module
    raise AttributeError(f"module 'models' has no attribute {name!r}")
