"""Tests of models.mechanisms: communication mechanisms vs bandwidth and latency (paper 002).

Reference values: Table 1 and the Alewife miss-penalty table (Figure 3) of 002
(../shared/papers/002_cf49ff90d24bd5e5.txt).
"""

from __future__ import annotations

import argparse
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from models import mechanisms as mm
from models.mechanisms import (ALEWIFE_MISS_PENALTIES, MACHINES, MECHANISMS, MechanismParams,
                               compare, crossover_bandwidth, crossover_latency, machine,
                               machine_table, miss_penalty_table, solve)

bandwidths = st.floats(min_value=0.5, max_value=256.0, allow_nan=False)
latencies = st.floats(min_value=0.0, max_value=500.0, allow_nan=False)


# --------------------------------------------------------------------------
# presets
# --------------------------------------------------------------------------

def test_table1_has_fourteen_machines_transcribed():
    assert len(MACHINES) == 14
    a = machine("MIT Alewife")
    assert (a.clock_mhz, a.bisection_mb_s, a.bisection_bytes_per_cycle, a.latency,
            a.remote_miss_penalty, a.local_miss_penalty) == (20.0, 360, 18.0, 15, 50, 11)
    o = machine("SGI Origin")
    assert (o.clock_mhz, o.bisection_mb_s, o.bisection_bytes_per_cycle, o.latency,
            o.remote_miss_penalty, o.local_miss_penalty) == (200.0, 10800, 54.0, 60, 150, 61)
    t3e = machine("Cray T3E")
    assert (t3e.remote_miss_low, t3e.remote_miss_high) == (300, 600)
    assert machine("Stanford FLASH").clock_note == "projected"
    assert machine("MIT M-Machine").clock_note == "simulated"


def test_table1_bytes_per_cycle_is_mb_per_s_over_mhz():
    for m in MACHINES:
        if not math.isnan(m.bisection_mb_s):
            # printed to one decimal place (DASH: 480 / 33 = 14.55 printed 14.5)
            assert m.bisection_mb_s / m.clock_mhz == pytest.approx(m.bisection_bytes_per_cycle,
                                                                   abs=0.051)


def test_table1_missing_values_stay_missing():
    assert math.isnan(machine("KSR-2").latency)
    for name in ("TMC CM5", "MIT J-Machine", "Intel Delta", "Intel Paragon"):
        assert math.isnan(machine(name).remote_miss_penalty)
        assert not machine(name).has_shared_memory
    for name in ("Wisconsin T0", "Wisconsin T1"):
        assert math.isnan(machine(name).bisection_bytes_per_cycle)
    with pytest.raises(ValueError, match="latency is missing"):
        machine("KSR-2").params()
    with pytest.raises(ValueError, match="bisection_bandwidth is missing"):
        machine("Wisconsin T0").params()
    p = machine("KSR-2").params(latency=30.0)
    assert p.latency == 30.0 and p.sm_occupancy == 126 - 60
    t = machine_table()
    assert t.to_markdown().count(" - ") >= 6


def test_alewife_miss_penalties():
    assert len(ALEWIFE_MISS_PENALTIES) == 12
    for r in ALEWIFE_MISS_PENALTIES:
        assert r.cycles / 20.0 == pytest.approx(r.microseconds)  # 20 MHz Sparcle
    hw = {(r.miss_type, r.home, r.invalidations): r.cycles
          for r in ALEWIFE_MISS_PENALTIES if r.handler == "hw"}
    assert hw[("load", "remote", 0)] == 38 and hw[("store", "remote", 5)] == 84
    sw = [r for r in ALEWIFE_MISS_PENALTIES if r.handler == "sw"]
    assert [r.cycles for r in sw] == [425, 707] and math.isnan(sw[0].invalidations)
    assert len(miss_penalty_table()) == 12


def test_machine_params_alewife():
    p = machine("MIT Alewife").params()
    assert (p.bisection_bandwidth, p.latency) == (18.0, 15.0)
    assert p.sm_occupancy == 50 - 2 * 15


# --------------------------------------------------------------------------
# formulas against hand computation
# --------------------------------------------------------------------------

def _sm_closed_form(p: MechanismParams) -> float:
    """Shared-memory time per value: the quadratic (T - c0)(T - a) = c1 (see solve's Notes)."""
    h, ln, c, B, P, cf = (p.header_bytes, p.line_bytes, p.channels, p.bisection_bandwidth,
                          p.processors, p.cross_fraction)
    m, r = p.sm_messages, p.sm_round_trips
    ser = max(0.0, h + ln - p.ref_bytes) * c / B
    S0 = (2 * r) * p.latency + ser + r * p.sm_occupancy
    c0 = p.compute + S0
    V = (m - 1) * h + h + ln
    a = P * cf * V / B
    mES2 = (m - 1) * (h * c / B) ** 2 + ((h + ln) * c / B) ** 2
    K = P * cf * mES2 / (2 * c)  # W = K / (T - a)
    c1 = 2 * r * cf * K
    return 0.5 * ((c0 + a) + math.sqrt((c0 - a) ** 2 + 4 * c1))


@given(bandwidths, latencies, st.floats(10, 2000))
def test_shared_memory_matches_closed_form(B, L, w):
    p = MechanismParams(bisection_bandwidth=B, latency=L, compute=w)
    r = solve(p, "shared_memory")
    assert r.time_per_value == pytest.approx(_sm_closed_form(p), rel=1e-9)
    assert r.converged


def test_uncongested_hand_values():
    # Infinite bandwidth: no serialization, no queueing.
    # SM: 4 traversals of 15 + 2 round trips x 20 occupancy = 100, on top of 200 compute.
    r = solve(mechanism="shared_memory", bisection_bandwidth=np.inf)
    assert r.time_per_value == pytest.approx(300.0)
    # polling: 102 overhead, latency 15 hidden by 200 cycles of slack
    assert solve(mechanism="polling", bisection_bandwidth=np.inf).time_per_value == 302.0
    assert solve(mechanism="interrupt", bisection_bandwidth=np.inf).time_per_value == 357.0
    # prefetch: 80% prefetched with 400 cycles of lookahead hide it; 20% stall 100; 2 per prefetch
    assert solve(mechanism="prefetch", bisection_bandwidth=np.inf).time_per_value == \
        pytest.approx(200 + 0.8 * 2 + 0.2 * 100)
    # bulk of 16 values: 157/16 + 60 cycles per 16-byte line x 8/16
    assert solve(mechanism="bulk", bisection_bandwidth=np.inf).time_per_value == \
        pytest.approx(200 + 157 / 16 + 30)
    # latency not hidden: 400-cycle latency - 200 slack
    assert solve(mechanism="polling", bisection_bandwidth=np.inf, latency=400).time_per_value == \
        pytest.approx(302 + 200)


def test_volume_and_messages_per_value():
    # 002 Section 5.1: shared memory needs at least four messages per value, message passing one
    r = compare()
    assert r["shared_memory"].messages == 4 and r["polling"].messages == 1
    assert r["shared_memory"].volume == 3 * 8 + 8 + 16
    assert r["polling"].volume == 8 + 8
    assert r["shared_memory"].volume / r["polling"].volume <= 6  # "up to six times"


@given(bandwidths, st.sampled_from(MECHANISMS))
def test_utilization_below_one_and_consistent(B, mech):
    p = MechanismParams(bisection_bandwidth=B)
    r = solve(p, mech)
    assert 0 <= r.utilization < 1
    assert r.utilization == pytest.approx(
        p.processors * p.cross_fraction * r.volume / (B * r.time_per_value), rel=1e-9)
    assert r.time == pytest.approx(p.values * r.time_per_value)
    assert r.time_per_value >= r.ideal - 1e-9
    assert r.time_per_value == pytest.approx(r.compute + r.overhead + r.stall)


# --------------------------------------------------------------------------
# monotonicity and the paper's findings
# --------------------------------------------------------------------------

@given(st.sampled_from(MECHANISMS), st.floats(5, 1000), latencies)
def test_more_bandwidth_never_slows_a_mechanism(mech, w, L):
    B = np.geomspace(0.25, 512, 40)
    r = solve(mechanism=mech, bisection_bandwidth=B, compute=w, latency=L)
    assert np.all(np.diff(r.time_per_value) <= 1e-9 * r.time_per_value[:-1])


@given(st.sampled_from(MECHANISMS), st.floats(1, 100))
def test_more_latency_never_speeds_a_mechanism(mech, B):
    L = np.linspace(0, 1000, 30)
    r = solve(mechanism=mech, latency=L, bisection_bandwidth=B)
    assert np.all(np.diff(r.time_per_value) >= -1e-9 * r.time_per_value[:-1])


@given(bandwidths, bandwidths, st.sampled_from(["polling", "interrupt", "bulk"]))
def test_shared_memory_degrades_faster_as_bandwidth_falls(b1, b2, mp):
    # 002 Sections 2.1 and 5.2: the main finding
    lo, hi = sorted((b1, b2))
    sm = solve(mechanism="shared_memory", bisection_bandwidth=np.array([lo, hi]))
    other = solve(mechanism=mp, bisection_bandwidth=np.array([lo, hi]))
    d_sm = sm.time_per_value[0] - sm.time_per_value[1]
    d_mp = other.time_per_value[0] - other.time_per_value[1]
    assert d_sm >= d_mp - 1e-9
    assert sm.time_per_value[0] / sm.time_per_value[1] >= \
        other.time_per_value[0] / other.time_per_value[1] - 1e-12


@given(latencies, latencies, st.sampled_from(["polling", "interrupt", "bulk"]))
def test_message_passing_less_sensitive_to_latency(l1, l2, mp):
    # 002 Sections 2.2 and 5.3
    lo, hi = sorted((l1, l2))
    for sm_mech in ("shared_memory", "prefetch"):
        sm = solve(mechanism=sm_mech, latency=np.array([lo, hi]))
        other = solve(mechanism=mp, latency=np.array([lo, hi]))
        assert sm.time_per_value[1] - sm.time_per_value[0] >= \
            other.time_per_value[1] - other.time_per_value[0] - 1e-9


def test_prefetching_helps_shared_memory():
    B = np.geomspace(0.5, 100, 20)
    assert np.all(solve(mechanism="prefetch", bisection_bandwidth=B).time_per_value
                  <= solve(mechanism="shared_memory", bisection_bandwidth=B).time_per_value)


def test_regions():
    # Alewife: message passing hides the latency, shared memory cannot (round trips)
    assert solve(mechanism="polling").region == "latency hiding"
    assert solve(mechanism="shared_memory").region == "latency dominated"
    assert (solve(mechanism="shared_memory", bisection_bandwidth=1.0).region
            == "congestion dominated")
    assert solve(mechanism="polling", bisection_bandwidth=0.5).region == "congestion dominated"
    assert solve(mechanism="polling", latency=1000).region == "latency dominated"


@given(st.sampled_from(MECHANISMS))
def test_regions_progress_as_bandwidth_falls(mech):
    B = np.geomspace(512, 0.1, 60)  # decreasing
    reg = solve(mechanism=mech, bisection_bandwidth=B).region
    idx = np.array([mm.REGIONS.index(x) for x in reg])
    assert np.all(np.diff(idx) >= 0)  # hiding -> latency dominated -> congestion dominated
    assert idx[-1] == 2


# --------------------------------------------------------------------------
# crossovers
# --------------------------------------------------------------------------

def test_crossover_bandwidth_equalises_times():
    r = crossover_bandwidth()
    assert r.found and r.first_wins_above
    B = r.value
    # 002 Section 5.2: most machines are above the crossover; DASH (14.5) and FLASH (16) near it
    assert 4 < B < 18
    sm = solve(mechanism="shared_memory", bisection_bandwidth=B).time_per_value
    mp = solve(mechanism="polling", bisection_bandwidth=B).time_per_value
    assert sm == pytest.approx(mp, rel=1e-8)
    assert solve(mechanism="shared_memory", bisection_bandwidth=1.1 * B).time_per_value < \
        solve(mechanism="polling", bisection_bandwidth=1.1 * B).time_per_value
    assert solve(mechanism="shared_memory", bisection_bandwidth=0.9 * B).time_per_value > \
        solve(mechanism="polling", bisection_bandwidth=0.9 * B).time_per_value


def test_crossover_vectorised_and_missing():
    L = np.array([5.0, 15.0, 100.0])
    r = crossover_bandwidth(latency=L)
    assert r.value.shape == (3,)
    assert r.found.tolist() == [True, True, False]  # at 100 cycles message passing always wins
    assert np.isnan(r.value[2])
    for i in range(2):
        assert r.value[i] == pytest.approx(crossover_bandwidth(latency=L[i]).value, rel=1e-8)
    assert r.value[0] < r.value[1]  # more latency: shared memory needs more bandwidth


def test_crossover_latency():
    r = crossover_latency()
    assert r.found and not r.first_wins_above  # message passing wins at higher latency
    sm = solve(mechanism="shared_memory", latency=r.value).time_per_value
    mp = solve(mechanism="polling", latency=r.value).time_per_value
    assert sm == pytest.approx(mp, rel=1e-8)
    r2 = crossover_latency(first="prefetch", second="interrupt")
    assert r2.found and r2.value > r.value  # prefetching tolerates more latency


# --------------------------------------------------------------------------
# API details
# --------------------------------------------------------------------------

def test_vectorised_grid_and_frame():
    B = np.array([[1.0], [18.0]])
    L = np.array([15.0, 50.0, 100.0])
    r = solve(mechanism="shared_memory", bisection_bandwidth=B, latency=L)
    assert r.time_per_value.shape == (2, 3) and r.region.shape == (2, 3)
    one = solve(mechanism="shared_memory", bisection_bandwidth=18.0, latency=50.0)
    assert r.time_per_value[1, 1] == pytest.approx(one.time_per_value, rel=1e-12)
    f = r.to_frame()
    assert len(f) == 6 and "region" in f.columns


@pytest.mark.parametrize("kw, msg", [
    ({"bisection_bandwidth": 0}, "bisection_bandwidth"), ({"latency": -1}, "latency"),
    ({"cross_fraction": 0}, "cross_fraction"), ({"prefetch_coverage": 2}, "prefetch_coverage"),
    ({"sm_messages": 3}, "sm_messages")])
def test_validation(kw, msg):
    with pytest.raises(ValueError, match=msg):
        MechanismParams(**kw)


def test_bad_names():
    with pytest.raises(ValueError, match="mechanism"):
        solve(mechanism="telepathy")
    with pytest.raises(ValueError, match="unknown keyword"):
        solve(mechanism="sm", bandwidth=3)
    with pytest.raises(ValueError, match="machine"):
        machine("ENIAC")


def _cli(argv):
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="command")
    mm.register_cli(sub)
    args = ap.parse_args(argv)
    return args.func(args)


def test_cli():
    out = _cli(["mechanisms", "sweep", "--bandwidth", "1,18", "--mechanisms", "sm,polling",
                "--wide"])
    assert "congestion dominated" in out and "latency hiding" in out
    out = _cli(["mechanisms", "machines", "--evaluate", "--format", "csv"])
    assert out.count("\n") == 15 and "Stanford DASH" in out
    out = _cli(["mechanisms", "sweep", "--machine", "Stanford DASH", "--mechanisms", "sm"])
    assert "14.5" in out and "31" in out
    out = _cli(["mechanisms", "crossover", "--latency", "15", "--bandwidth", "18"])
    assert "shared_memory" in out
    assert "707" in _cli(["mechanisms", "alewife"])


# ---------------------------------------------------------------------------
# equations(): the rendered SymPy formulas are the ones the code computes
# ---------------------------------------------------------------------------


@pytest.mark.parametrize("overrides", [{}, {"bisection_bandwidth": 2.0, "latency": 40.0},
                                       {"bisection_bandwidth": 1.0, "compute": 50.0,
                                        "values_per_message": 4.0}])
def test_equations_match_numeric_implementation(overrides):
    from mva.symbolic import lambdify

    from models import mechanisms as mech

    eqs = mech.equations()
    prm = mech.MechanismParams(**overrides)
    vals = {"l": prm.latency, "s_ref": prm.ref_bytes, "c": prm.channels,
            "B": prm.bisection_bandwidth, "f": prm.cross_fraction, "h": prm.header_bytes,
            "b": prm.line_bytes, "r": prm.sm_round_trips, "o_sm": prm.sm_occupancy,
            "w": prm.compute, "P": prm.processors, "M": prm.sm_messages,
            "k": prm.values_per_message, "v": prm.value_bytes,
            "sigma": prm.compute if prm.slack is None else prm.slack}

    def ev(name, **extra):
        e = eqs[name].rhs
        syms = sorted(e.free_symbols, key=lambda x: x.name)
        env = {**vals, **extra}
        return float(lambdify(syms, e)(*(env[x.name] for x in syms)))

    sm = mech.solve(prm, "shared_memory")
    T, W = float(sm.time_per_value), float(sm.wait)
    assert W > 0
    assert ev("T_sm", W=W) == pytest.approx(T, rel=1e-9)
    assert ev("W_sm", T=T) == pytest.approx(W, rel=1e-9)
    assert ev("rho_sm", T=T) == pytest.approx(float(sm.utilization), rel=1e-9)
    for m, over in (("interrupt", prm.interrupt_overhead), ("polling", prm.polling_overhead)):
        r = mech.solve(prm, m)
        T, W = float(r.time_per_value), float(r.wait)
        assert ev("T_mp", W=W, o_m=over) == pytest.approx(T, rel=1e-9)
        assert ev("W_mp", T=T) == pytest.approx(W, rel=1e-9)
        assert ev("rho_mp", T=T) == pytest.approx(float(r.utilization), rel=1e-9)


def test_crossover_of_a_mechanism_with_itself_is_an_error():
    # issue 20: `mechanisms crossover --first shared_memory --second shared_memory` printed one
    for fn in (mm.crossover_bandwidth, mm.crossover_latency):
        with pytest.raises(ValueError, match=r"first and second.*first='shared_memory'.*"
                                             r"second='shared_memory'"):
            fn(first="shared_memory", second="sm")
    with pytest.raises(ValueError, match=r"second must be one of .*got 'telepathy'"):
        mm.crossover_latency(second="telepathy")


def test_sweep_mechanisms_validated_with_allowed_values():
    from models.cli.mechanisms import _mech_list
    # issue 20: `mechanisms sweep --mechanisms telepathy` said "invalid _mech_list value"
    with pytest.raises(ValueError, match=r"mechanisms: unknown mechanism 'telepathy'; "
                                         r"allowed: 'shared_memory', 'prefetch'"):
        mm.sweep(mechanisms=["telepathy"])
    with pytest.raises(ValueError, match="non-empty"):
        mm.sweep(mechanisms=[])
    with pytest.raises(ValueError, match="listed twice"):
        mm.sweep(mechanisms=["sm", "shared_memory"])
    with pytest.raises(argparse.ArgumentTypeError, match=r"unknown mechanism 'telepathy'; allowed"):
        _mech_list("polling,telepathy")
    assert _mech_list("sm, poll") == ["shared_memory", "polling"]


@pytest.mark.parametrize("name", [n for n, d in __import__("mva.params", fromlist=["x"])
                                  .declarations(__import__("models.mechanisms", fromlist=["x"])
                                                .MechanismParams).items()
                                  if d.high is not None or (d.low is not None and d.low > 0)])
def test_declared_ends_give_finite_results(name):
    """Every bounded parameter at its declared end gives a finite time and utilization for
    every mechanism, and a value past it is refused naming it (a compute, value count or
    channel count of 1e308 gave inf silently before)."""
    from mva.params import declarations
    from models.mechanisms import MECHANISMS, MechanismParams, solve

    d = declarations(MechanismParams)[name]
    ends = [e for e in (d.low, d.high) if e is not None and math.isfinite(e) and e != 0]
    for end in ends:
        for mech in MECHANISMS:
            try:
                r = solve(MechanismParams(**{name: end}), mech)
            except ValueError as exc:       # a cross-field rule (sm_messages >= 2 round trips)
                assert "sm_" in str(exc)
                continue
            assert np.all(np.isfinite(r.time)) and np.all(np.isfinite(r.utilization))
    if d.high is not None and d.high < 1e308:
        with pytest.raises(ValueError, match=name):
            MechanismParams(**{name: 1e308})
