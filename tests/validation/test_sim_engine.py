"""The compiled engine against the pure-Python reference: the same results for the same seed.

Every reported measure (``SimResult.to_dict()`` but the wall time) must agree
to 1e-9 relative: both engines draw the same random numbers in the same
order and run the same events in the same order; only the order of a few
sums inside a snapshot may differ.
"""

from __future__ import annotations

import math
import warnings

import pytest
from hypothesis import HealthCheck, given, settings

from models.ini import INIParams
from models.lopc import LoPCParams
from models.pdq import PDQParams
from models.policy import preset
from mva.errors import SaturationError
from tests.strategies import sim_machines
from validation import Dist, Machine, NodeSpec, Workload, generate, simulate, write_trace
from validation.sim import engine as eng
from validation.traces import compute, request


def _flat(res) -> dict:
    out = {}

    def walk(path, v):
        if isinstance(v, dict):
            for k, w in v.items():
                walk(f"{path}.{k}", w)
        elif isinstance(v, (list, tuple)):
            for i, w in enumerate(v):
                walk(f"{path}[{i}]", w)
        else:
            out[path] = v
    d = res.to_dict()
    d.pop("wall_time")
    walk("", d)
    return out


def _same(a, b) -> None:
    x, y = _flat(a), _flat(b)
    assert x.keys() == y.keys()
    bad = []
    for k, u in x.items():
        v = y[k]
        if isinstance(u, float) and isinstance(v, float):
            if math.isnan(u) and math.isnan(v):
                continue
            if abs(u - v) <= 1e-9 * max(abs(u), abs(v)) or u == v:
                continue
        elif u == v:
            continue
        bad.append((k, u, v))
    assert not bad, bad[:10]


def _both(*args, **kwargs):
    p = simulate(*args, engine="python", **kwargs)
    c = simulate(*args, engine="compiled", **kwargs)
    assert p.extra["engine"] == "python" and c.extra["engine"] == "compiled"
    _same(p, c)
    return c


def test_lopc_all_to_all() -> None:
    r = _both(LoPCParams(P=16, W=1000, o=100, L=50), cycles=20_000, seed=1)
    assert r.counts["interrupts"] > 0 and r.counts["completed"] == 20_000


def test_lopc_client_server_and_handler_cs2() -> None:
    _both(LoPCParams(P=10, W=500, o=50, L=20, cs2=0.25), servers=3, cycles=10_000, seed=2)
    _both(LoPCParams(P=6, W=500, o=50, L=20, cs2=4.0), cycles=10_000, seed=3)


@pytest.mark.parametrize("dispatch", ["static", "round_robin", "shared"])
def test_ini_dispatch(dispatch: str) -> None:
    r = _both(INIParams(S=4, K=2, W=1000, o=10, O=100, l=20, L=50, dispatch=dispatch,
                        clusters=3, cs2_O=0.5), cycles=10_000, seed=4)
    # four INI visits per round trip, up to the requests in flight at the window's ends
    assert abs(r.counts["ini_visits"] - 4 * r.counts["completed"]) <= 4 * 2 * 12


@pytest.mark.parametrize("policy", ["fixed", "floating", "single"])
def test_policies_with_interrupts(policy: str) -> None:
    r = _both(preset("null-handler", p=3, U=0.7), policy=policy, cycles=10_000, seed=5)
    if policy != "fixed":
        assert r.counts["interrupts"] > 0


@pytest.mark.parametrize("f_seq, f_nosync", [(0.0, 0.0), (0.1, 0.3)])
def test_pdq_keys(f_seq: float, f_nosync: float) -> None:
    _both(PDQParams(k=4, load=0.5, S=100, n_keys=32, key_skew=0.5, f_sequential=f_seq,
                    f_nosync=f_nosync), cycles=10_000, seed=6)


@pytest.mark.parametrize("f_seq, f_nosync", [(0.0, 0.0), (0.1, 0.3)])
def test_spinlock_keys(f_seq: float, f_nosync: float) -> None:
    from validation.compare import pdq_machine
    m, w = pdq_machine(PDQParams(k=4, load=0.4, S=100, n_keys=16, key_skew=0.5, f_sequential=f_seq,
                                 f_nosync=f_nosync, o_lock=50), discipline="spinlock")
    r = _both(m, w, cycles=10_000, seed=6)
    assert r.resources[0].spinning.mean > 0


def test_spinlock_random_lock_cost_with_replies() -> None:
    # spin-lock nodes on both ends of blocking requests, a random lock cost, sequential keys
    m = Machine(nodes=(NodeSpec(compute=2, protocol=2, dispatch="spin", lock=Dist.exponential(30)),
                       NodeSpec(compute=1, protocol=3, dispatch="spin", lock=Dist(family="erlang",
                                                                                  mean=20, k=2)),
                       NodeSpec(compute=2)),
                latency=Dist.exponential(25))
    w = Workload(burst=Dist.exponential(150), request_cost=Dist.exponential(60),
                 reply_cost=Dist.exponential(40), keys=2, p_sequential=0.05, p_nosync=0.1)
    r = _both(m, w, cycles=6_000, seed=15)
    assert all(x.spinning.mean > 0 for x in r.resources[:2])


@pytest.mark.parametrize("discipline", ["shared", "partitioned"])
def test_multiplexed_pdq_compute_threads(discipline: str) -> None:
    from validation.compare import pdq_machine
    prm = PDQParams(k=3, load=0.2, S=100, n_keys=12, f_nosync=0.2, multiplexed=True,
                    compute_utilization=0.6, O_int=200, o_sched=50)
    m, w = pdq_machine(prm, discipline=discipline)
    r = _both(m, w, cycles=8_000, seed=16)
    assert r.counts["interrupts"] > 0 and r.counts["compute_bursts"] > 0


def test_multiplexed_pdq_direct_overhead_random_latency_and_replications() -> None:
    m = Machine(nodes=(NodeSpec(compute=3, dispatch="pdq", max_acting=2,
                                interrupt=Dist.exponential(30),
                                direct=10, indirect=Dist.constant(5)),
                       NodeSpec(compute=2, send=Dist.exponential(20),
                                extra_delay=Dist.exponential(15)),
                       NodeSpec(compute=1, protocol=2, dispatch="pdq")),
                latency=Dist(family="erlang", mean=40, k=3))
    w = Workload(burst=Dist.exponential(400), request_cost=Dist.exponential(40),
                 reply_cost=Dist.exponential(30), keys=3, p_sequential=0.1, p_nosync=0.2)
    _both(m, w, cycles=8_000, seed=7)
    _both(m, w, cycles=4_000, replications=3, seed=8)


def test_ini_cost_of_size() -> None:
    m = Machine(nodes=(NodeSpec(compute=1),) * 4, latency=30, cluster_size=2, inis=1,
                ini_cost=Dist.exponential(50), ini_cost_of_size=lambda b: 20 + b / 10)
    w = Workload(burst=Dist.exponential(500), request_cost=10, reply_cost=10,
                 size=Dist(family="uniform", mean=1000, width=900), dest="remote_cluster")
    _both(m, w, cycles=5_000, seed=9)


def test_traces_in_memory_and_from_a_file(tmp_path) -> None:
    m = Machine(nodes=(NodeSpec(compute=2), NodeSpec(compute=1, protocol=1, dispatch="pdq"),
                       NodeSpec(compute=1)), latency=25)
    w = Workload(burst=Dist.exponential(300), request_cost=Dist.exponential(40),
                 reply_cost=Dist.exponential(40), keys=4, p_nosync=0.3)
    recs = list(generate(w, m, requests=2_000, seed=10))
    # hand-made records too: one-way requests in a row, arbitrary key names
    recs += [request(0, 1, 0, 30.0, None, key="alpha"), request(0, 2, 0, 20.0, None, key="beta"),
             request(0, 1, 0, 10.0, 5.0, key="alpha"), compute(0, 100.0)]
    a = _both(m, trace=recs, cycles=6_000, seed=11)
    path = tmp_path / "t.csv"
    write_trace(recs, path)
    b = _both(m, trace=path, cycles=6_000, seed=11)
    assert a.cycle_time.mean == pytest.approx(b.cycle_time.mean, rel=1e-12)
    # a trace that runs out: both report it exhausted, with the same numbers
    short = [r for r in recs if r.thread != 3][:3_000]
    c = _both(m, trace=short, cycles=4_000, warmup=100, seed=12)
    assert c.exhausted


def test_generated_trace_equals_its_workload_on_the_compiled_engine() -> None:
    m = Machine.homogeneous(4, NodeSpec(compute=1), latency=50)
    w = Workload(burst=Dist.exponential(1000), request_cost=Dist.exponential(100),
                 reply_cost=Dist.exponential(100))
    direct = simulate(m, w, cycles=4_000, seed=13, engine="compiled")
    traced = simulate(m, trace=list(generate(w, m, requests=3_000, seed=13)), cycles=4_000,
                      seed=13, engine="compiled")
    assert direct.cycle_time == traced.cycle_time


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(sim_machines())
def test_random_machines(mw) -> None:
    m, w = mw
    outcomes = []
    for e in ("python", "compiled"):
        try:
            outcomes.append(simulate(m, w, cycles=600, seed=14, engine=e, max_queue=500))
        except (SaturationError, ValueError) as exc:
            outcomes.append(exc)
    p, c = outcomes
    if isinstance(p, Exception):
        assert type(c) is type(p) and str(c) == str(p)
    else:
        _same(p, c)


def test_errors_are_the_references() -> None:
    m = Machine.homogeneous(2, NodeSpec(compute=1), latency=5)
    bad = [compute(0, 10.0), request(0, 7, 0, 1.0, 1.0), compute(1, 10.0),
           request(1, 0, 0, 1.0, 1.0)]
    msgs = []
    for e in ("python", "compiled"):
        with pytest.raises(ValueError, match="request to node 7") as info:
            simulate(m, trace=bad * 10, cycles=4, warmup=0, batches=2, engine=e)
        msgs.append(str(info.value))
    assert msgs[0] == msgs[1]
    src = Machine(nodes=(NodeSpec(compute=1), NodeSpec(compute=0, protocol=1)), latency=0.0)
    over = Workload(burst=Dist.exponential(1.0), request_cost=Dist.exponential(2.0),
                    reply_cost=None, targets=(1,))
    for e in ("python", "compiled"):
        with pytest.raises(SaturationError, match="node1.protocol holds more than max_queue=50"):
            simulate(src, over, cycles=10_000, seed=1, max_queue=50, engine=e)


def test_engine_choice_and_fallback(monkeypatch) -> None:
    with pytest.raises(ValueError, match="engine must be one of"):
        simulate(LoPCParams(P=2, W=10, o=1, L=1), cycles=20, engine="fast")
    monkeypatch.setattr(eng, "numba_available", lambda: False)
    monkeypatch.setattr(eng, "_noted", False)
    with pytest.raises(ValueError, match="engine='compiled' needs numba"):
        simulate(LoPCParams(P=2, W=10, o=1, L=1), cycles=20, engine="compiled")
    with pytest.warns(RuntimeWarning, match="numba is not installed"):
        r = simulate(LoPCParams(P=2, W=10, o=1, L=1), cycles=20)
    assert r.extra["engine"] == "python"
    with warnings.catch_warnings():
        warnings.simplefilter("error")          # the note is given once
        simulate(LoPCParams(P=2, W=10, o=1, L=1), cycles=20)
