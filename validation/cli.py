"""The ``smp-contention simulate`` subcommand.

Registered through the ``smp_contention.commands`` entry-point group
(``validation.cli:register``), so :mod:`models` never imports the simulator::

    smp-contention simulate lopc --P 16 --W 1000 --o 100 --L 50 --cycles 100000
    smp-contention simulate ini --S 4 --K 2 --W 41789 --o 742 --O 2336
    smp-contention simulate policy --policy floating --p 4 --U 0.5
    smp-contention simulate trace run.csv --nodes 16 --L 50   # one thread per node
"""

from __future__ import annotations

import argparse
from typing import Any

__all__ = ["register"]


def register(subparsers: Any) -> None:
    """Add the ``simulate`` subcommand to an argparse ``subparsers`` object."""
    from models._cli import add_common
    p = subparsers.add_parser(
        "simulate", help="run the trace-driven simulator on a model's machine or a trace",
        description="Simulate the machine a model describes (lopc, ini, policy) or a trace file, "
                    "and print means with 95% confidence intervals.")
    p.add_argument("machine", choices=("lopc", "ini", "policy", "trace"),
                   help="which machine: a model's (parameters as options) or a trace file")
    p.add_argument("trace", nargs="?", default=None, help="trace file (machine 'trace')")
    g = p.add_argument_group("run")
    g.add_argument("--cycles", type=int, default=20_000, help="completed requests to measure")
    g.add_argument("--warmup", type=int, default=None, help="requests discarded first (default cycles/10)")
    g.add_argument("--batches", type=int, default=20, help="batches for batch means")
    g.add_argument("--replications", type=int, default=None,
                   help="independent replications instead of batch means")
    g.add_argument("--seed", type=int, default=0)
    g.add_argument("--resources", action="store_true", help="also print per-resource statistics")
    g.add_argument("--max-queue", type=int, default=None,
                   help="most messages a protocol queue or INI may hold before the run stops "
                        "with a saturation error (default 10,000 + threads + 1%% of the run)")
    m = p.add_argument_group("model parameters (cycles)")
    for name, default, kind in (("P", 16, int), ("W", 1000.0, float), ("o", 100.0, float),
                                ("L", 50.0, float), ("cs2", 1.0, float), ("servers", None, int),
                                ("S", 4, int), ("K", 1, int), ("clusters", 2, int),
                                ("l", 0.0, float), ("O", 100.0, float), ("cs2_O", 1.0, float),
                                ("dispatch", "static", str), ("policy", "fixed", str),
                                ("p", 2, int), ("nodes", 2, int), ("U", 0.5, float),
                                ("O_int", 200.0, float), ("preset", "null-handler", str)):
        m.add_argument(f"--{name}", type=kind, default=default)
    t = p.add_argument_group("trace machine (machine 'trace')")
    t.add_argument("--procs", type=int, default=1, help="compute processors per node")
    t.add_argument("--protocol", type=int, default=0, help="dedicated protocol processors per node")
    t.add_argument("--pdq", action="store_true", help="PDQ dispatch with synchronization keys")
    t.add_argument("--format-trace", dest="trace_format", choices=("csv", "jsonl"), default=None)
    add_common(p)
    p.set_defaults(func=_run)


def _target(args: argparse.Namespace) -> tuple[Any, dict[str, Any]]:
    if args.machine == "lopc":
        from models.lopc import LoPCParams
        kw = {} if args.servers is None else {"servers": args.servers}
        return LoPCParams(P=args.P, W=args.W, o=args.o, L=args.L, cs2=args.cs2), kw
    if args.machine == "ini":
        from models.ini import INIParams
        return INIParams(S=args.S, K=args.K, clusters=args.clusters, W=args.W, o=args.o, l=args.l,
                         O=args.O, L=args.L, cs2_o=args.cs2, cs2_O=args.cs2_O,
                         dispatch=args.dispatch), {}
    if args.machine == "policy":
        from models.policy import preset
        return preset(args.preset, p=args.p, nodes=args.nodes, U=args.U, O_int=args.O_int), \
            {"policy": args.policy}
    from .sim.machine import Machine, NodeSpec
    if args.trace is None:
        raise ValueError("machine 'trace' needs a trace file argument")
    node = NodeSpec(compute=args.procs, protocol=args.protocol,
                    dispatch="pdq" if args.pdq else "fifo")
    return Machine.homogeneous(args.nodes, node, latency=args.L, name="trace machine"), {}


def _run(args: argparse.Namespace) -> str:
    from models._cli import emit

    from .sim.simulate import simulate
    target, kw = _target(args)
    res = simulate(target, trace=args.trace if args.machine == "trace" else None,
                   cycles=args.cycles, warmup=args.warmup, batches=args.batches,
                   replications=args.replications, seed=args.seed,
                   trace_format=args.trace_format, max_queue=args.max_queue, **kw)
    tables = res.tables()
    return emit(tables if args.resources else tables[:1], args)
