"""The ``simulate`` subcommand."""

from __future__ import annotations

import argparse

from validation.cli import register
from validation.generators import Workload, generate
from validation.sim.machine import Machine, NodeSpec
from validation.traces import write_trace


def _run(argv: list[str]) -> str:
    ap = argparse.ArgumentParser()
    register(ap.add_subparsers(dest="command"))
    args = ap.parse_args(argv)
    return args.func(args)


def test_simulate_lopc_prints_means_with_intervals() -> None:
    out = _run(["simulate", "lopc", "--P", "4", "--cycles", "2000", "--seed", "1"])
    assert "cycle_time" in out and "ci95" in out and "request_handler" in out


def test_simulate_ini_and_policy_with_resources() -> None:
    out = _run(["simulate", "ini", "--S", "2", "--K", "2", "--dispatch", "shared", "--cycles",
                "1000", "--resources", "--format", "csv"])
    assert "cluster0.ini" in out and "ini" in out
    out = _run(["simulate", "policy", "--policy", "floating", "--p", "3", "--cycles", "1000"])
    assert "send_handler" in out


def test_simulate_trace_file(tmp_path) -> None:
    m = Machine.homogeneous(3, NodeSpec(compute=1), latency=5)
    path = tmp_path / "t.jsonl"
    write_trace(generate(Workload(burst=100, request_cost=10, reply_cost=10), m, requests=300,
                         seed=1), path)
    out = _run(["simulate", "trace", str(path), "--nodes", "3", "--L", "5", "--cycles", "500"])
    assert "cycle_time" in out


def test_simulate_trace_infers_the_nodes_it_needs(tmp_path) -> None:
    # issue 20: a 4-node trace with the old default --nodes 2 failed with no hint
    m = Machine.homogeneous(4, NodeSpec(compute=1), latency=5)
    path = tmp_path / "t4.csv"
    write_trace(generate(Workload(burst=100, request_cost=10, reply_cost=10), m, requests=300,
                         seed=1), path)
    inferred = _run(["simulate", "trace", str(path), "--L", "5", "--cycles", "500", "--seed", "3"])
    given = _run(["simulate", "trace", str(path), "--nodes", "4", "--L", "5", "--cycles", "500",
                  "--seed", "3"])

    def body(out: str) -> str:              # the title line carries the wall time
        return out.split("\n", 1)[1]
    assert body(inferred) == body(given) and "cycle_time" in inferred
    import pytest
    with pytest.raises(ValueError, match=r"t4.csv:\d+: .*pass --nodes 4"):
        _run(["simulate", "trace", str(path), "--nodes", "2", "--cycles", "500"])


def test_simulate_trace_overload_reports_saturation(tmp_path) -> None:
    import pytest

    from mva.errors import SaturationError
    from validation.sim.dists import Dist
    # node 0 sends one-way requests every ~10 cycles to node 1, whose handlers cost 100
    m = Machine.homogeneous(2, NodeSpec(compute=1), latency=5)
    w = Workload(burst=Dist.exponential(10.0), request_cost=100.0, reply_cost=None, targets=(1,))
    path = tmp_path / "t.csv"
    write_trace(generate(w, m, requests=400, seed=1, threads=(0,)), path)
    with pytest.raises(SaturationError, match="node1.protocol"):
        _run(["simulate", "trace", str(path), "--nodes", "2", "--L", "5", "--cycles", "300",
              "--max-queue", "100"])
