"""The simulator against queueing theory and the LoPC reference value.

Every run uses a fixed seed, so these statistical checks are deterministic.
"""

from __future__ import annotations

import math

import pytest

import mva
from mva.network import ClosedNetwork
from models.lopc import LoPCParams
from validation import Dist, Machine, NodeSpec, Workload, simulate


def _open_queue(service: Dist, *, servers: int = 1, rate: float, dispatch: str = "fifo",
                keys: int | None = None) -> tuple[Machine, Workload]:
    """One Poisson source (one-way requests) feeding a node of ``servers`` protocol processors."""
    m = Machine(nodes=(NodeSpec(compute=1),
                       NodeSpec(compute=0, protocol=servers, dispatch=dispatch)),
                latency=0.0)
    w = Workload(burst=Dist.exponential(1.0 / rate), request_cost=service, reply_cost=None,
                 targets=(1,), keys=keys)
    return m, w


def _check_open(res, theory) -> None:
    server = res.resource("node1.protocol")
    assert res.response["request_handler"].contains(theory.response_time), \
        (res.response["request_handler"], theory.response_time)
    assert server.queue_length.contains(theory.queue_length), \
        (server.queue_length, theory.queue_length)
    assert server.utilization.contains(theory.utilization), (server.utilization, theory.utilization)


def test_mm1() -> None:
    # Kleinrock (1975) 3.2: rho = 0.7, R = S / (1 - rho)
    m, w = _open_queue(Dist.exponential(1.0), rate=0.7)
    res = simulate(m, w, cycles=200_000, seed=3)
    _check_open(res, mva.mm1(0.7, 1.0))
    assert res.counts["interrupts"] == 0


def test_mmc() -> None:
    # Erlang C, c = 3 servers, rho = 0.8 per server
    m, w = _open_queue(Dist.exponential(1.0), servers=3, rate=2.4)
    res = simulate(m, w, cycles=200_000, seed=5)
    _check_open(res, mva.mmc(2.4, 1.0, 3))


def test_md1() -> None:
    # Pollaczek-Khinchine with cs2 = 0: W = rho S / (2 (1 - rho))
    m, w = _open_queue(Dist.constant(1.0), rate=0.75)
    res = simulate(m, w, cycles=200_000, seed=1)
    theory = mva.mg1(0.75, 1.0, 0.0)
    _check_open(res, theory)
    assert math.isclose(theory.response_time, 1.0 + 0.75 / (2 * 0.25))


def test_pdq_nosync_is_mmc_and_one_key_is_mm1() -> None:
    # PDQ with 2 protocol processors: without keys handlers run in parallel (M/M/2);
    # with a single key they are serialized (M/M/1 at the same load)
    m, w = _open_queue(Dist.exponential(1.0), servers=2, rate=0.7, dispatch="pdq")
    _check_open(simulate(m, w, cycles=100_000, seed=11), mva.mmc(0.7, 1.0, 2))
    m, w = _open_queue(Dist.exponential(1.0), servers=2, rate=0.7, dispatch="pdq", keys=1)
    res = simulate(m, w, cycles=100_000, seed=11)
    theory = mva.mm1(0.7, 1.0)
    assert res.response["request_handler"].contains(theory.response_time)
    # utilization is per server: one of two busy 70% of the time
    assert res.resource("node1.protocol").utilization.contains(0.35)


def test_machine_repairman_against_exact_mva() -> None:
    # N = 6 threads think Z = 4 (exponential), then visit one FCFS server S = 1
    # (exponential); replies cost nothing.  Closed network: exact MVA.
    N, Z, S = 6, 4.0, 1.0
    m = Machine(nodes=(NodeSpec(compute=N, protocol=1), NodeSpec(compute=0, protocol=1)),
                latency=0.0)
    w = Workload(burst=Dist.exponential(Z), request_cost=Dist.exponential(S), reply_cost=0.0,
                 targets=(1,))
    res = simulate(m, w, cycles=150_000, seed=2)
    net = ClosedNetwork.single_class([S], population=N, think_time=Z)
    exact = mva.exact_mva(net)
    X = float(exact.throughput[0])
    assert res.cycle_time.contains(N / X), (res.cycle_time, N / X)
    assert res.machine_throughput.contains(X), (res.machine_throughput, X)
    server = res.resource("node1.protocol")
    assert server.queue_length.contains(float(exact.queue_length[0, 0]))
    assert server.utilization.contains(float(exact.utilization[0, 0]))
    assert res.response["request_handler"].contains(float(exact.residence_time[0, 0]))


def test_lopc_all_to_all_reference() -> None:
    # P=16, W=1000 exponential, o=100 exponential, L=50 constant, 100,000 request
    # cycles: four independent simulators agree on R = 1404.7 .. 1407.6 (issue 5)
    res = simulate(LoPCParams(P=16, W=1000, o=100, L=50), cycles=100_000, seed=11)
    assert abs(res.cycle_time.mean - 1406.0) <= 0.005 * 1406.0, res.cycle_time
    assert res.cycle_time.relative_half_width < 0.01
    assert res.counts["cycles"] >= 100_000


def test_contention_free_round_trips_are_exact() -> None:
    # one thread, deterministic everything: R is the zero-load sum of its parts
    m = Machine(nodes=(NodeSpec(compute=1), NodeSpec(compute=0, protocol=1)), latency=50)
    w = Workload(burst=1000, request_cost=100, reply_cost=70, targets=(1,))
    res = simulate(m, w, cycles=100, warmup=5)
    assert res.cycle_time.mean == pytest.approx(1000 + 2 * 50 + 100 + 70, abs=1e-9)
    # the same through INIs: W + 2l + 2L + 2o + 4O (thesis eq. 6.1 at zero load);
    # the simulator splits l over the two intra-cluster hops of each direction
    from models.ini import INIParams
    p = INIParams(S=1, K=1, W=1000, o=10, l=30, O=200, L=50, cs2_o=0, cs2_O=0)
    one = Machine(nodes=(NodeSpec(compute=1), NodeSpec(compute=0, protocol=1)), latency=50,
                  cluster_size=1, inis=1, ini_cost=200, intra_latency=15)
    res = simulate(one, Workload(burst=1000, request_cost=10, reply_cost=10, targets=(1,)),
                   cycles=100, warmup=5)
    assert res.cycle_time.mean == pytest.approx(p.contention_free, abs=1e-9)
    assert res.counts["ini_visits"] == 4 * res.counts["cycles"]


def test_pdq_params_drive_the_simulator() -> None:
    # PDQParams with nosync handlers only: k=2 servers, M/M/2
    from models.pdq import PDQParams
    p = PDQParams(k=2, load=0.6, S=100.0, f_nosync=1.0)
    res = simulate(p, cycles=60_000, seed=2)
    theory = mva.mmc(p.rate, 100.0, 2)
    assert res.response["request_handler"].contains(theory.response_time)
    with pytest.raises(ValueError, match="multiplexed"):
        simulate(PDQParams(k=2, load=0.5, multiplexed=True), cycles=100)
