"""Fuzz every public ``solve``: random parameter sets, valid and invalid.

Each parameter set is drawn from the declarations (:mod:`mva.params`): every
field inside its validity range, and sometimes one field outside its legal
domain.  ``solve`` must either return a result satisfying the model's
invariants (no NaN; times, queue lengths and throughputs >= 0;
utilizations and probabilities in [0, 1]) or raise a ``ValueError`` (or its
subclass :class:`mva.errors.SaturationError`) whose message names the
offending parameter -- never another exception, never a hang.
"""

from __future__ import annotations

import dataclasses
import os
import signal
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from mva.params import declarations
from tests.strategies import invalid_values, parameter_class, valid_values

BOUND = 10  # CPU seconds (ITIMER_PROF: immune to the load of a shared machine)

#: model -> (parameter class, solve, keyword of the variant, its values)
MODELS = {
    "lopc": ("models.lopc:LoPCParams", "models.lopc:solve", "method",
             ("auto", "node", "lopc", "mva", "linearizer", "schweitzer")),
    "ini": ("models.ini:INIParams", "models.ini:solve", "method",
            ("auto", "node", "thesis", "linearizer", "schweitzer")),
    "policy": ("models.policy:PolicyParams", "models.policy:solve", "policy",
               ("fixed", "floating", "single")),
    "pdq": ("models.pdq:PDQParams", "models.pdq:solve", "discipline",
            ("shared", "partitioned", "spinlock")),
    "mechanisms": ("models.mechanisms:MechanismParams", "models.mechanisms:solve", "mechanism",
                   ("shared_memory", "prefetch", "interrupt", "polling", "bulk")),
}

#: parameter sets per model (5,000 in all; API_FUZZ_N changes it for extra runs)
EXAMPLES = {m: int(os.environ.get("API_FUZZ_N", 1000)) for m in MODELS}

#: CI runs the fixed (derandomized) examples; FUZZ_RANDOM=1 lets ``--hypothesis-seed=N``
#: pick others
DERANDOMIZE = os.environ.get("FUZZ_RANDOM", "0") != "1"


class Hang(BaseException):
    """Raised by the alarm."""


@st.composite
def parameter_sets(draw, model):
    cls = parameter_class(MODELS[model][0])
    decl = declarations(cls)
    kw = {}
    for name, spec in decl.items():
        if spec.valid is not None and (not spec.has_default or draw(st.integers(0, 2))):
            kw[name] = draw(valid_values(spec))
    bad = None
    if draw(st.integers(0, 3)) == 0:
        bad = draw(st.sampled_from(sorted(n for n, s in decl.items() if s.kind != "text")))
        kw[bad] = draw(invalid_values(decl[bad]))
    return cls, kw, bad


def _numeric(value):
    try:
        a = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        return None
    return a


def check_invariants(res):
    sat = np.asarray(getattr(res, "saturated", False), dtype=bool).any() or bool(
        np.asarray(getattr(res, "bottleneck", "") or "", dtype=object).astype(bool).any())
    for f in dataclasses.fields(res):
        a = _numeric(getattr(res, f.name))
        if a is None or a.dtype.kind not in "fiu" or f.name in ("residual",):
            continue
        if not sat:
            assert not np.isnan(a).any(), (f.name, a)
        fin = a[np.isfinite(a)]
        if f.name.startswith(("U", "utilization", "P_", "conflict", "interrupt")):
            assert ((fin >= -1e-9) & (fin <= 1 + 1e-9)).all(), (f.name, a)
        elif f.name not in ("contention", "overhead", "stall", "wait", "congestion"):
            assert (fin >= -1e-9 * max(1.0, np.abs(fin).max(initial=0))).all(), (f.name, a)


@pytest.mark.parametrize("model", sorted(MODELS))
def test_api_fuzz(model):
    from tests.strategies import parameter_class as load

    solve = load(MODELS[model][1])
    key, variants = MODELS[model][2], MODELS[model][3]

    @settings(max_examples=EXAMPLES[model], derandomize=DERANDOMIZE, deadline=None, database=None,
              suppress_health_check=list(HealthCheck))
    @given(parameter_sets(model), st.sampled_from(variants))
    def run(case, variant):
        cls, kw, bad = case

        def alarm(signum, frame):  # pragma: no cover - only on a hang
            raise Hang(f"{BOUND} CPU s exceeded: {model} {variant} {kw}")

        old = signal.signal(signal.SIGPROF, alarm)
        signal.setitimer(signal.ITIMER_PROF, BOUND)
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                try:
                    res = solve(cls(**kw), **{key: variant})
                except ValueError as exc:
                    msg = str(exc)
                    names = set(kw) | {s.symbol for s in declarations(cls).values()}
                    assert any(n in msg for n in names) or "saturat" in msg.lower(), msg
                    return
        finally:
            signal.setitimer(signal.ITIMER_PROF, 0)
            signal.signal(signal.SIGPROF, old)
        assert bad is None, f"{bad}={kw[bad]!r} was accepted"
        check_invariants(res)

    run()


def test_examples_reach_5000():
    assert sum(EXAMPLES.values()) >= 5000


# --------------------------------------------------------------------------
# regressions the fuzz found (each fixed at its cause)
# --------------------------------------------------------------------------


@pytest.mark.parametrize("method", MODELS["lopc"][3])
@pytest.mark.parametrize("P,W,o,L", [(2, 0.0, 100.0, 2.2e-308), (3, 0.0, 1.0, 1e-300),
                                     (16, 0.0, 1e-308, 0.0), (4, 1e300, 1e-300, 1.0),
                                     (16, 1.0, 1.0, 1e300), (2, 1e-310, 1e-308, 5e-324)])
def test_lopc_times_far_apart_give_finite_results(P, W, o, L, method):
    """A denormal L (P=2, W=0) gave R = NaN from the whole-machine chain; times 1e300 apart
    overflowed rates in every method.  Each method is homogeneous in the times: the
    result must be finite, and equal to the one at the same ratios in ordinary units
    (a time below TIME_EPS of the largest counts as 0)."""
    from models.lopc import TIME_EPS, LoPCParams, solve

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = solve(LoPCParams(P=P, W=W, o=o, L=L), method=method)
    check_invariants(r)
    assert np.isfinite([r.R, r.lam, r.R_w, r.R_q, r.R_y, r.Q_q, r.Q_y, r.U_q]).all(), r
    big = max(W, o, L)
    unit = [x / big * 1000.0 if x > TIME_EPS * big else 0.0 for x in (W, o, L)]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        ref = solve(LoPCParams(P=P, W=unit[0], o=unit[1], L=unit[2]), method=method)
    assert r.R / big == pytest.approx(ref.R / 1000.0, rel=1e-6)
    assert r.Q_q == pytest.approx(ref.Q_q, rel=1e-6, abs=1e-12)


def test_lopc_denormal_latency_equals_zero_latency():
    from models.lopc import LoPCParams, solve

    a = solve(LoPCParams(P=2, W=0, o=100, L=2.2e-308), method="auto")
    b = solve(LoPCParams(P=2, W=0, o=100, L=0), method="auto")
    assert np.isfinite(a.R) and a.R == pytest.approx(b.R, rel=1e-12)


@pytest.mark.parametrize("cls,field", [("models.lopc:LoPCParams", "cs2"),
                                       ("models.ini:INIParams", "cs2_o"),
                                       ("models.ini:INIParams", "cs2_O"),
                                       ("models.pdq:PDQParams", "cs2"),
                                       ("models.policy:PolicyParams", "handler_cs2")])
def test_scv_has_a_legal_upper_bound(cls, field):
    """cs2 = 1e308 ran the phase-type chains for minutes; an SCV above the declared bound
    is refused with the parameter and its range."""
    spec = declarations(parameter_class(cls))[field]
    assert spec.high is not None and spec.high >= spec.valid[1]
    with pytest.raises(ValueError,
                       match=rf"{field} must lie in \[0, {spec.high:g}\]; got 1000000\.0"):
        spec.check(1e6)


@pytest.mark.parametrize("method,P", [("linearizer", 58), ("linearizer", 24)])
def test_lopc_engine_methods_refuse_what_would_take_long(method, P):
    from models.lopc import LoPCParams, solve
    from mva.errors import CostError

    with pytest.raises(CostError, match=r"P=\d+ .*would take about .* use method='exact'"):
        solve(LoPCParams(P=P, W=0, o=100, L=0, cs2=10), method=method)


def test_ini_engine_methods_refuse_what_would_take_long():
    from models.ini import INIParams, solve
    from mva.errors import CostError

    with pytest.raises(CostError, match=r"clusters \* S = 216 PE threads.*would take about"):
        solve(INIParams(N=1, K=8, clusters=27, W=0, o=100, O=200), method="schweitzer")
    r = solve(INIParams(N=1, K=8, clusters=27, W=0, o=100, O=200), method="auto")
    check_invariants(r)
