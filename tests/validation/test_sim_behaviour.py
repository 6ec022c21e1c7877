"""Behaviour of the simulated hardware: policies, PDQ keys, INIs, Little's law, determinism."""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from validation import Dist, Machine, NodeSpec, Workload, generate, simulate, write_trace
from validation.traces import compute, request


def _interrupt_machine(second_thread_computes: bool) -> tuple[Machine, list]:
    # node 0: two floating processors (threads 0, 1); node 1: one processor (thread 2)
    # sending requests to node 0.
    m = Machine(nodes=(NodeSpec(compute=2, interrupt=200), NodeSpec(compute=1)), latency=10)
    recs = [compute(0, 1e9)]
    if second_thread_computes:
        recs.append(compute(1, 1e9))
    for _ in range(60):
        recs += [compute(2, 1000.0), request(2, 0, 8, 100.0, 0.0)]
    return m, recs


def test_floating_interrupts_only_when_all_processors_busy() -> None:
    # thread 1 has nothing to do, so its processor is idle and acts as protocol
    # processor: no interrupt ever
    m, recs = _interrupt_machine(False)
    res = simulate(m, trace=recs, cycles=50, warmup=0, batches=2)
    assert res.counts["interrupts"] == 0
    assert res.response["request_handler"].mean == pytest.approx(100.0)
    # both processors compute: every request interrupts one and pays O_int = 200
    m, recs = _interrupt_machine(True)
    res = simulate(m, trace=recs, cycles=50, warmup=0, batches=2)
    assert res.counts["interrupts"] == res.counts["request_handlers"] == 50
    assert res.response["request_handler"].mean == pytest.approx(300.0)


def test_preemptive_resume_suspends_the_burst_for_the_handler_time() -> None:
    # a single processor computes 10,000 cycles while 5 handlers of 100 cycles
    # interrupt it: the burst ends at exactly 10,500 (resume, not restart)
    m = Machine(nodes=(NodeSpec(compute=1), NodeSpec(compute=1)), latency=0)
    recs = [compute(0, 10_000.0), request(0, 1, 0, 1.0, None)]
    for _ in range(5):
        recs += [compute(1, 1000.0), request(1, 0, 0, 100.0, None)]
    res = simulate(m, trace=recs, cycles=6, warmup=0, batches=2)
    node0 = res.resource("node0.compute")
    assert node0.residence == pytest.approx(10_500.0)
    assert res.counts["interrupts"] == 5


def test_fixed_never_interrupts_and_one_protocol_processor_per_node() -> None:
    node = NodeSpec(compute=3, protocol=1, send=Dist.exponential(50))
    m = Machine.homogeneous(3, node, latency=100)
    w = Workload(burst=Dist.exponential(300), request_cost=Dist.exponential(100),
                 reply_cost=Dist.exponential(100))
    res = simulate(m, w, cycles=5000, seed=1)
    assert res.counts["interrupts"] == 0
    assert res.counts["send_handlers"] > 4900
    for r in res.resources_of("protocol"):
        assert 0.0 < r.utilization.mean <= 1.0


def test_floating_handler_atomicity() -> None:
    # at most one acting protocol processor per node: busy processors <= 1
    node = NodeSpec(compute=4, interrupt=200, indirect=100)
    m = Machine.homogeneous(2, node, latency=100)
    w = Workload(burst=Dist.exponential(3000), request_cost=100, reply_cost=100)
    res = simulate(m, w, cycles=5000, seed=2)
    for r in res.resources_of("protocol"):
        assert r.utilization.mean * r.servers <= 1.0 + 1e-12
    assert res.counts["interrupts"] > 0


def test_pdq_sequential_key_runs_alone() -> None:
    # four protocol processors; every request is "sequential": no two handlers
    # ever overlap, so at most one of the four is busy.  Offered load 8 * 10 / 200
    # = 0.4 of one processor (8 / 50 * 10 = 1.6 would overload the serialized
    # queue, which the simulator now reports with SaturationError)
    node = NodeSpec(compute=0, protocol=4, dispatch="pdq")
    m = Machine(nodes=(NodeSpec(compute=8), node), latency=0)
    w = Workload(burst=Dist.exponential(200), request_cost=Dist.exponential(10), reply_cost=None,
                 targets=(1,), p_sequential=1.0)
    res = simulate(m, w, cycles=4000, seed=4)
    srv = res.resource("node1.protocol")
    assert srv.utilization.mean * 4 <= 1.0 + 1e-12
    # nosync: the same load spreads over the four processors and waits less
    w2 = Workload(burst=Dist.exponential(200), request_cost=Dist.exponential(10), reply_cost=None,
                  targets=(1,), p_nosync=1.0)
    res2 = simulate(m, w2, cycles=4000, seed=4)
    assert res2.response["request_handler"].mean < res.response["request_handler"].mean
    assert srv.utilization.mean * 4 == pytest.approx(0.4, rel=0.1)


def test_ini_dispatch_shared_waits_least() -> None:
    from models.ini import INIParams
    base = dict(S=4, K=2, W=200, o=20, O=100, l=10, L=20)
    r = {d: simulate(INIParams(dispatch=d, **base), cycles=6000, seed=3).response["ini"].mean
         for d in ("static", "round_robin", "shared")}
    assert r["shared"] < r["static"]
    assert r["shared"] < r["round_robin"]


def test_same_seed_same_result_bit_for_bit() -> None:
    from models.lopc import LoPCParams
    p = LoPCParams(P=5, W=300, o=40, L=20)
    a = simulate(p, cycles=3000, seed=9).to_dict()
    b = simulate(p, cycles=3000, seed=9).to_dict()
    c = simulate(p, cycles=3000, seed=10).to_dict()
    for d in (a, b, c):
        d.pop("wall_time")
    assert a == b
    assert a != c


def test_replications_method() -> None:
    from models.lopc import LoPCParams
    res = simulate(LoPCParams(P=4, W=300, o=40, L=20), cycles=2000, replications=5, seed=1)
    assert res.method == "replications" and res.n == 5
    assert math.isfinite(res.cycle_time.half_width)
    assert res.counts["completed"] >= 5 * 2000


_TRACE_CASES = {
    "zipf": (Machine.homogeneous(4, NodeSpec(compute=1), latency=Dist.exponential(30)),
             Workload(burst=Dist(family="erlang", mean=500, k=3), request_cost=Dist.exponential(50),
                      reply_cost=Dist.from_cs2(50, 4.0), dest="zipf", zipf=1.2, size=64)),
    # uniform destinations, keys on PDQ nodes, send handlers, INIs, one-way requests
    "pdq-ini-one-way": (
        Machine.homogeneous(4, NodeSpec(compute=2, dispatch="pdq", max_acting=2,
                                        send=Dist.exponential(5), interrupt=20.0),
                            latency=10, cluster_size=2, inis=2, ini_dispatch="round_robin",
                            ini_cost=Dist.exponential(8), intra_latency=2),
        Workload(burst=Dist.exponential(900), request_cost=Dist.exponential(40), reply_cost=None,
                 keys=3, p_sequential=0.05)),
}


@pytest.mark.parametrize("case", sorted(_TRACE_CASES))
def test_generated_trace_drives_the_same_run(tmp_path, case) -> None:
    # the generator, written to a file and read back, gives the identical result
    # (the simulator reads the generator's compact stream, and Records from a trace)
    m, w = _TRACE_CASES[case]
    for fmt in ("csv", "jsonl"):
        path = tmp_path / f"t.{fmt}"
        write_trace(generate(w, m, requests=1500, seed=21), path)
        a = simulate(m, w, cycles=4000, seed=21).to_dict()
        b = simulate(m, trace=path, cycles=4000, seed=21).to_dict()
        a.pop("wall_time"), b.pop("wall_time")
        assert a["counts"]["completed"] >= 4000
        # (compared as JSON: one-way runs have NaN cycle times, and NaN != NaN)
        assert json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)


def test_trace_that_ends_early_is_reported() -> None:
    m = Machine.homogeneous(2, NodeSpec(compute=1), latency=5)
    w = Workload(burst=100, request_cost=10, reply_cost=10)
    res = simulate(m, trace=list(generate(w, m, requests=50, seed=0)), cycles=1000, warmup=10)
    assert res.exhausted
    assert res.counts["completed"] == 100 - 10


def test_bad_inputs_are_reported() -> None:
    m = Machine.homogeneous(2, NodeSpec(compute=1), latency=5)
    with pytest.raises(ValueError, match="workload or a trace"):
        simulate(m)
    with pytest.raises(ValueError, match="node 7"):
        simulate(m, trace=[request(0, 7, 0, 1.0, 1.0)], cycles=10, batches=2)
    with pytest.raises(ValueError, match="node -1, but the machine has nodes 0 to 1"):
        simulate(m, trace=[request(0, -1, 0, 1.0, 1.0)], cycles=10, batches=2)
    with pytest.raises(ValueError, match="thread 5"):
        simulate(m, trace=[compute(5, 1.0)], cycles=10, batches=2)
    with pytest.raises(ValueError, match="unknown keyword"):
        simulate(m, Workload(), cycles=10, batches=2, bogus=1)
    with pytest.raises(ValueError, match="max_acting"):
        NodeSpec(compute=2, max_acting=3)


# --------------------------------------------------------------------------
# Little's law on every resource of every run
# --------------------------------------------------------------------------

dists = st.builds(
    lambda fam, mean, k: Dist(family=fam, mean=mean, k=k, cs2=3.0),
    st.sampled_from(["deterministic", "exponential", "erlang", "hyperexponential"]),
    st.floats(1.0, 200.0), st.integers(1, 4))

nodes = st.builds(
    lambda c, p, disp, oi, od, send: NodeSpec(compute=c, protocol=p if c else max(p, 1),
                                              dispatch=disp,
                                              interrupt=oi, direct=od, indirect=od, send=send),
    st.integers(0, 3), st.integers(0, 2), st.sampled_from(["fifo", "pdq"]),
    st.floats(0.0, 100.0), st.floats(0.0, 30.0), st.none() | dists,
)


@st.composite
def configs(draw):
    ns = draw(st.lists(nodes, min_size=2, max_size=4))
    if not any(n.compute for n in ns):
        ns[0] = NodeSpec(compute=1)
    clustered = draw(st.booleans()) and len(ns) % 2 == 0
    m = Machine(nodes=tuple(ns), latency=draw(dists),
                cluster_size=len(ns) // 2 if clustered else None,
                inis=draw(st.integers(1, 2)),
                ini_dispatch=draw(st.sampled_from(["static", "round_robin", "shared"])),
                ini_cost=draw(dists), intra_latency=draw(dists))
    one_way = draw(st.booleans())
    # open (one-way) arrivals are kept below saturation: handlers cost at most
    # ~360 cycles with overheads, each of T threads sends every T * 500 cycles
    burst = Dist.exponential(500.0 * m.n_threads) if one_way else draw(dists)
    w = Workload(burst=burst, request_cost=draw(dists),
                 reply_cost=None if one_way else draw(dists),
                 keys=draw(st.none() | st.integers(1, 3)),
                 p_sequential=draw(st.sampled_from([0.0, 0.1])),
                 allow_self=True)
    return m, w, draw(st.integers(0, 2**16))


@settings(max_examples=40)
@given(configs())
def test_littles_law_on_every_resource(cfg) -> None:
    m, w, seed = cfg
    res = simulate(m, w, cycles=600, warmup=50, batches=4, seed=seed)
    T = res.simulated_time
    assert T > 0
    for r in res.resources:
        # finite-window Little identity: integral of N == sum of residences in the window
        assert r.little_error < 1e-7, (r.name, r.little_error)
        assert -1e-12 <= r.utilization.mean <= 1.0 + 1e-12, (r.name, r.utilization)
        assert r.queue_length.mean >= r.utilization.mean * r.servers - 1e-9
        if r.departures > 200:
            # L = X R up to the jobs straddling the window ends
            assert r.queue_length.mean == pytest.approx(r.throughput * r.residence, rel=0.25,
                                                        abs=0.05)


def test_round_robin_rotates_per_pe_not_per_cluster() -> None:
    # Jiang (1997) sec. 3.3: "routes out-going messages from each compute node to
    # the INI nodes of its cluster in a round-robin fashion" -- one rotation per
    # PE (and, on the receiving side, per destination PE), starting at INI j mod K.
    # Clusters {0, 1} and {2, 3}, K = 2, zero latencies, one-way requests:
    #   t=0   node 0 -> node 2,  t=50  node 1 -> node 3,  t=100 node 0 -> node 2.
    # Per PE: out 0,1 (node 0) and 1 (node 1): cluster0 INIs visited (1, 2);
    #         in  0,1 (node 2) and 1 (node 3): cluster1 INIs visited (1, 2).
    # One rotation per cluster would give 0,1,0 on both sides: (2, 1) and (2, 1).
    m = Machine(nodes=(NodeSpec(compute=1),) * 4, latency=0, cluster_size=2, inis=2,
                ini_dispatch="round_robin", ini_cost=1.0, intra_latency=0)
    recs = [request(0, 2, 0, 1.0, None), compute(0, 100.0), request(0, 2, 0, 1.0, None),
            compute(1, 50.0), request(1, 3, 0, 1.0, None)]
    res = simulate(m, trace=recs, cycles=3, warmup=0, batches=2)
    visits = {r.name: r.departures for r in res.resources_of("ini")}
    assert visits == {"cluster0.ini0": 1, "cluster0.ini1": 2,
                      "cluster1.ini0": 1, "cluster1.ini1": 2}
    # static: every message of node j uses INI j mod 2 on each side
    ms = Machine(nodes=(NodeSpec(compute=1),) * 4, latency=0, cluster_size=2, inis=2,
                 ini_dispatch="static", ini_cost=1.0, intra_latency=0)
    res = simulate(ms, trace=recs, cycles=3, warmup=0, batches=2)
    visits = {r.name: r.departures for r in res.resources_of("ini")}
    assert visits == {"cluster0.ini0": 2, "cluster0.ini1": 1,
                      "cluster1.ini0": 2, "cluster1.ini1": 1}


def test_round_robin_balances_each_pe_over_the_inis() -> None:
    # a single sender with K = 2: per-PE rotation alternates its messages exactly,
    # so its two home INIs see equal counts whatever the other PEs do
    m = Machine(nodes=(NodeSpec(compute=1),) * 4, latency=0, cluster_size=2, inis=2,
                ini_dispatch="round_robin", ini_cost=1.0, intra_latency=0)
    recs = []
    for i in range(10):
        recs += [compute(0, 10.0), request(0, 3, 0, 1.0, None)]
    res = simulate(m, trace=recs, cycles=10, warmup=0, batches=2)
    visits = {r.name: r.departures for r in res.resources_of("ini")}
    assert visits["cluster0.ini0"] == visits["cluster0.ini1"] == 5
    assert visits["cluster1.ini0"] == visits["cluster1.ini1"] == 5


# --------------------------------------------------------------------------
# open overload stops with SaturationError naming the resource
# --------------------------------------------------------------------------

def _open_node(rate: float, dispatch: str = "fifo",
               keys: int | None = None) -> tuple[Machine, Workload]:
    m = Machine(nodes=(NodeSpec(compute=1), NodeSpec(compute=0, protocol=2, dispatch=dispatch)),
                latency=0.0)
    w = Workload(burst=Dist.exponential(1.0 / rate), request_cost=Dist.exponential(1.0),
                 reply_cost=None, targets=(1,), keys=keys)
    return m, w


@pytest.mark.parametrize("dispatch,keys", [("fifo", None), ("pdq", None), ("pdq", 3)])
def test_open_overload_raises_saturation(dispatch, keys) -> None:
    from mva.errors import SaturationError
    # two servers of mean 1 offered 4 arrivals per cycle: the queue grows by ~half
    # the arrivals, so the queue bound (10,000 + T + 1% of the run) trips after
    # ~20,000 arrivals instead of the run growing a 10^6-message queue
    m, w = _open_node(4.0, dispatch, keys)
    with pytest.raises(SaturationError, match="node1.protocol") as info:
        simulate(m, w, cycles=1_000_000, seed=1)
    assert info.value.bottleneck == "node1.protocol"
    # an explicit bound trips earlier
    with pytest.raises(SaturationError, match="max_queue=50"):
        simulate(m, w, cycles=1_000_000, seed=1, max_queue=50)


def test_mild_open_overload_is_caught_by_the_growth_rule() -> None:
    from mva.errors import SaturationError
    # 5% above capacity: the queue never reaches the bound in this short run,
    # but it gains ~5% of the window's arrivals (> 2%)
    m, w = _open_node(2.1)
    with pytest.raises(SaturationError, match="gained") as info:
        simulate(m, w, cycles=40_000, seed=2)
    assert info.value.bottleneck == "node1.protocol"
    # just below capacity (rho = 0.9 per server) the same run completes
    m, w = _open_node(1.8)
    assert simulate(m, w, cycles=40_000, seed=2).resource("node1.protocol").utilization.mean < 0.95


def test_ini_overload_names_the_ini() -> None:
    from mva.errors import SaturationError
    m = Machine(nodes=(NodeSpec(compute=1), NodeSpec(compute=0, protocol=4)), latency=0,
                cluster_size=1, inis=1, ini_cost=Dist.exponential(20.0))
    w = Workload(burst=Dist.exponential(10.0), request_cost=1.0, reply_cost=None, targets=(1,))
    with pytest.raises(SaturationError) as info:
        simulate(m, w, cycles=1_000_000, seed=3)
    assert info.value.bottleneck == "cluster0.ini0"


def test_pooled_estimates_and_interrupts_per_request() -> None:
    node = NodeSpec(compute=2, interrupt=50)
    m = Machine(nodes=(node, node, NodeSpec(compute=0, protocol=1)), latency=20)
    w = Workload(burst=Dist.exponential(300), request_cost=Dist.exponential(40),
                 reply_cost=Dist.exponential(40))
    res = simulate(m, w, cycles=4000, seed=3)
    # pooled utilization: busy time of all servers of a kind over their capacity, i.e.
    # the server-weighted mean of the per-resource utilizations; the compute
    # resource of node 2 (no compute processor) is left out
    comp = [r for r in res.resources_of("compute") if r.name != "node2.compute"]
    want = sum(r.utilization.mean * r.servers for r in comp) / sum(r.servers for r in comp)
    assert res.pooled["compute"]["utilization"].mean == pytest.approx(want, rel=1e-12)
    prot = res.resources_of("protocol")
    assert res.pooled["protocol"]["queue_length"].mean == pytest.approx(
        sum(r.queue_length.mean for r in prot) / len(prot), rel=1e-12)
    for kind in ("compute", "protocol"):
        for e in res.pooled[kind].values():
            assert e.n == 20 and math.isfinite(e.half_width) and e.half_width > 0
    ipr = res.interrupts_per_request
    assert ipr.mean == pytest.approx(res.counts["interrupts"] / res.counts["completed"])
    assert 0 < ipr.mean < 1 and 0 < ipr.half_width < ipr.mean
    assert "pooled" in res.to_dict() and "interrupts_per_request" in res.to_dict()
