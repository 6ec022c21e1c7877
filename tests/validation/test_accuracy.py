"""CI accuracy gate: the quick validation grid must keep every accuracy target.

Runs :func:`validation.report.run_validation` with ``quick=True`` and seed 0
(deterministic: every point is seeded from the base seed and its parameters,
whatever the executor) on a two-process pool -- about 1.5 minutes on an idle
two-core machine.  The grids and targets are in :mod:`validation.targets`;
the errors and their causes are discussed in docs/validation/accuracy.rst.

Every target is asserted at its own bound; none is currently relaxed.
"""

from __future__ import annotations

import pytest

from validation.report import run_validation
from validation.targets import TARGETS

#: targets met by the quick grid (asserted at the target itself)
#: Every promised target is met by the quick grid (seed 0).  Should one regress
#: and resist a fix, record it here beside its target with the achieved level as a
#: regression guard, and document the cause in docs/validation/accuracy.rst.
MET = ("lopc.best.mean", "lopc.best.max", "ini.best.mean", "ini.best.max", "ini.best.Q",
       # INI with K=2 and all three dispatch disciplines; round-robin rotates per PE
       # in both model and simulator (seed 0: mean 0.58%, max 1.31%)
       "ini.dispatch.mean", "ini.dispatch.max", "ini.dispatch.Q",
       "ini.cs2.max", "pdq.shared.max", "pdq.partitioned.max",
       # policy model, default 'auto' (node chain for one compute thread per node, MVA
       # otherwise; seed 0: mean 0.86%, max 2.47%, winner 100%)
       "policy.ratio.mean", "policy.ratio.max", "policy.winner")


@pytest.fixture(scope="module")
def quick():
    return run_validation(quick=True, seed=0, workers=2, progress=False)


def test_every_promised_target_is_classified():
    promised = {t.name for t in TARGETS if not t.informational}
    assert promised == set(MET)


@pytest.mark.parametrize("name", MET)
def test_target_met(quick, name):
    r = quick.target(name)
    t = r.target
    assert r.met, (f"{t.description}: achieved {100 * r.achieved:.2f}% "
                   f"(target {100 * t.threshold:.2f}%); worst: {r.worst}")
