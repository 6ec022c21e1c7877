"""Hypothesis strategies shared by the whole test suite.

Each area has its own section; append new strategies to the section of the
package they exercise.
"""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

__all__: list[str] = []

# --------------------------------------------------------------------------
# general
# --------------------------------------------------------------------------

#: a service time / demand in cycles, bounded away from zero and overflow
times = st.floats(min_value=1e-3, max_value=1e4, allow_nan=False, allow_infinity=False)

#: a non-negative latency / think time
latencies = st.floats(min_value=0.0, max_value=1e4, allow_nan=False, allow_infinity=False)

#: a squared coefficient of variation (0 deterministic, 1 exponential)
cs2s = st.floats(min_value=0.0, max_value=4.0, allow_nan=False, allow_infinity=False)

__all__ += ["times", "latencies", "cs2s"]

# --------------------------------------------------------------------------
# mva
# --------------------------------------------------------------------------

# --------------------------------------------------------------------------
# models
# --------------------------------------------------------------------------

# --------------------------------------------------------------------------
# validation
# --------------------------------------------------------------------------
