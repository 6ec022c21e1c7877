"""CI accuracy gate: the quick validation grid must keep every accuracy target.

Runs :func:`validation.report.run_validation` with ``quick=True`` and seed 0
(deterministic: every point is seeded from the base seed and its parameters,
whatever the executor) on a two-process pool -- about 1.5 minutes on an idle
two-core machine.  The grids and targets are in :mod:`validation.targets`;
the errors and their causes are discussed in docs/validation/accuracy.rst.

Targets that are met are asserted at the target.  Targets that are *not*
met are asserted at the level currently achieved (a regression guard), with
the target stated beside it; they are model approximations, diagnosed in the
accuracy page, not simulator faults.
"""

from __future__ import annotations

import pytest

from validation.report import run_validation
from validation.targets import TARGETS

#: targets met by the quick grid (asserted at the target itself)
MET = ("lopc.best.mean", "lopc.best.max", "ini.best.mean", "ini.best.max", "ini.best.Q",
       "ini.dispatch.Q", "ini.cs2.max", "pdq.shared.max", "pdq.partitioned.max")

#: target not met: name -> (achieved with seed 0, regression guard).  Upper-bound
#: statistics must stay <= guard, the winner share >= guard.
NOT_MET = {
    # round-robin INI dispatch: the network methods treat it as random splitting
    "ini.dispatch.mean": (0.0119, 0.015),
    "ini.dispatch.max": (0.0497, 0.055),
    # policy model (Schweitzer MVA + residual correction) at high handler load
    "policy.ratio.mean": (0.0627, 0.070),
    "policy.ratio.max": (0.1757, 0.185),
    "policy.winner": (0.90, 0.90),
}


@pytest.fixture(scope="module")
def quick():
    return run_validation(quick=True, seed=0, workers=2, progress=False)


def test_every_promised_target_is_classified():
    promised = {t.name for t in TARGETS if not t.informational}
    assert promised == set(MET) | set(NOT_MET)


@pytest.mark.parametrize("name", MET)
def test_target_met(quick, name):
    r = quick.target(name)
    t = r.target
    assert r.met, (f"{t.description}: achieved {100 * r.achieved:.2f}% "
                   f"(target {100 * t.threshold:.2f}%); worst: {r.worst}")


@pytest.mark.parametrize("name", sorted(NOT_MET))
def test_target_not_met_regression_guard(quick, name):
    achieved, guard = NOT_MET[name]
    r = quick.target(name)
    t = r.target
    msg = (f"target not met: achieved {100 * achieved:.2f}% when recorded, now "
           f"{100 * r.achieved:.2f}%; guard {100 * guard:.2f}%, target "
           f"{100 * t.threshold:.2f}% ({t.description}); worst: {r.worst}")
    if t.upper:
        assert r.achieved <= guard, msg
    else:
        assert r.achieved >= guard, msg
    # still stated against the real target: flag when it starts to be met
    assert not r.met or r.achieved == pytest.approx(t.threshold), \
        f"{name} now meets its target; move it to MET ({msg})"
