"""Accuracy of the default LoPC and INI methods against the simulator (fixed-seed subsample).

The full study (>= 200 points per model, ``python -m validation.model_accuracy``)
prints mean / p95 / max per measure and method; this test re-runs a small
fixed-seed subsample of the same design so that CI notices a regression.  The
domain lives in ONE place, :data:`validation.model_accuracy.DOMAIN`.

Bounds: the default ``"node"`` method must stay within the errors measured on
the full design (docs/models/lopc.rst, ini.rst), with the subsample's
simulation noise on top, and must beat the papers' equations on the same
points.
"""

import numpy as np
import pytest

from validation.model_accuracy import DOMAIN, design, model_errors, simulate_design

SEED = 2026
CYCLES = 40_000


def _subsample(family, n, max_threads):
    pts = design(family, 256, seed=SEED)
    if family == "lopc":
        keep = [p for p in pts if p["P"] <= max_threads]
    else:
        keep = [p for p in pts if p["N"] * p["K"] * p["clusters"] <= max_threads]
    return keep[:n]


def test_domain_declared_once():
    assert set(DOMAIN) == {"lopc", "ini"}
    assert DOMAIN["lopc"]["P"][:2] == (2, 1024) and DOMAIN["ini"]["clusters"][:2] == (2, 64)
    for fam in DOMAIN:
        for p in design(fam, 32, seed=SEED):
            for k, (lo, hi, _) in DOMAIN[fam].items():
                assert lo <= p[k] <= hi, (fam, k, p[k])


@pytest.mark.parametrize("family, n, max_threads, paper", [
    ("lopc", 16, 256, "lopc"),
    ("ini", 10, 128, "thesis"),
])
def test_default_method_accuracy(family, n, max_threads, paper):
    pts = _subsample(family, n, max_threads)
    assert len(pts) == n
    sims = simulate_design(family, pts, cycles=CYCLES, seed=SEED, per_thread=20)
    auto = model_errors(family, pts, sims, "auto")
    ref = model_errors(family, pts, sims, paper)
    assert auto["used"] == ["node"]
    eR = np.abs(auto["errors"]["R"])
    assert eR.size == n
    # measured on the full design: mean |R error| ~1.2% (LoPC) / ~2% (INI), max ~7%;
    # the subsample's simulations carry ~1-2% noise of their own
    assert eR.mean() <= 0.03
    assert eR.max() <= 0.10
    assert eR.mean() < np.abs(ref["errors"]["R"]).mean()
    for m in ("R_q", "R_y", "R_w", "Q_h"):
        e = np.abs(auto["errors"][m])
        if e.size:
            assert e.mean() <= 0.06, m
