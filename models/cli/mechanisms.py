"""The ``mechanisms`` command (moved out of :mod:`models.mechanisms`)."""

from __future__ import annotations

import argparse
from typing import Any

from models.mechanisms import (
    MECHANISMS,
    MechanismParams,
    _mech_names,
    crossover_bandwidth,
    crossover_latency,
    machine,
    machine_table,
    miss_penalty_table,
    sweep,
)

__all__ = ["register"]


def _mech_list(text: str) -> list[str]:
    """``--mechanisms`` value: comma-separated mechanisms or ``all`` (argparse type)."""
    items = [x.strip() for x in text.split(",") if x.strip()]
    if items == ["all"]:
        return list(MECHANISMS)
    try:
        return _mech_names("", items)  # argparse prefixes "argument --mechanisms:"
    except ValueError as exc:  # argparse prints an ArgumentTypeError's message as given
        raise argparse.ArgumentTypeError(str(exc)) from None


def _params_from(args: argparse.Namespace) -> MechanismParams:
    kw = {k: getattr(args, k) for k in ("compute", "processors", "channels", "sm_occupancy",
                                        "values_per_message", "bulk_values", "prefetch_coverage")
          if getattr(args, k, None) is not None}
    if getattr(args, "machine", None):
        return machine(args.machine).params(**kw)
    return MechanismParams(**kw)


def _cli_sweep(args: argparse.Namespace) -> Any:
    from models.cli._common import emit
    p = _params_from(args)
    bandwidth = args.bandwidth if args.bandwidth is not None else (
        [p.bisection_bandwidth] if args.machine else [1.0, 2.0, 4.0, 8.0, 18.0, 50.0])
    latency = args.latency if args.latency is not None else [p.latency]
    return emit(sweep(p, bandwidth=bandwidth, latency=latency, mechanisms=args.mechanisms), args)


def _cli_crossover(args: argparse.Namespace) -> Any:
    from mva.table import Table

    from models.cli._common import emit
    base = _params_from(args)
    rows = []
    for L in args.latency:
        r = crossover_bandwidth(base, args.first, args.second, latency=L, on_fail="ignore")
        rows.append({"latency": L, "crossover bytes/cycle": r.value,
                     "faster above": r.first if r.first_wins_above else r.second})
    t1 = Table.from_records(rows,
                            title=f"Crossover bisection bandwidth, {args.first} vs {args.second}",
                            formats={"crossover bytes/cycle": ".3f"})
    rows = []
    for B in args.bandwidth:
        r = crossover_latency(base, args.first, args.second, bisection_bandwidth=B,
                              on_fail="ignore")
        rows.append({"bytes/cycle": B, "crossover latency": r.value,
                     "faster above": r.first if r.first_wins_above else r.second})
    t2 = Table.from_records(rows, title=f"Crossover network latency, {args.first} vs {args.second}",
                            formats={"crossover latency": ".2f"})
    return emit([t1, t2], args)


def _cli_machines(args: argparse.Namespace) -> Any:
    from models.cli._common import emit
    return emit(machine_table(evaluate=args.evaluate), args)


def _cli_alewife(args: argparse.Namespace) -> Any:
    from models.cli._common import emit
    return emit(miss_penalty_table(), args)


def register(subparsers: Any) -> None:
    """Add the ``mechanisms`` subcommand (``sweep``, ``crossover``, ``machines``, ``alewife``)."""
    from models.cli._common import add_common, add_param_options, number_list

    parser = subparsers.add_parser(
        "mechanisms", help="shared memory vs message passing against bandwidth and latency "
                           "(Chong et al. 1998)",
        description="What-if tables for Chong et al. 1998: time per communicated value of shared "
                    "memory, prefetching, message passing (interrupt, polling) and bulk transfer "
                    "as bisection bandwidth and network latency vary; regions and crossovers.")
    sub = parser.add_subparsers(dest="mechanisms_command", metavar="WHAT", required=True)

    def common_model(p: argparse.ArgumentParser) -> None:
        p.add_argument("--machine", default=None,
                       help="start from a Table 1 machine, e.g. 'MIT Alewife' (default: none, "
                            "the Alewife parameters)")
        p.add_argument("--compute", type=float, default=None, help="cycles per value (default 200)")
        names = ("processors", "channels", "sm_occupancy", "values_per_message", "bulk_values",
                 "prefetch_coverage")
        add_param_options(p, MechanismParams, names, defaults=dict.fromkeys(names), single=names,
                          default_text=dict.fromkeys(names, "the machine's, else Alewife's"))

    p = sub.add_parser("sweep", help="time per value and region over bandwidth x latency")
    p.add_argument("--bandwidth", type=number_list, default=None,
                   help="bisection bytes per processor cycle (default 1,2,4,8,18,50, or the "
                        "machine's)")
    p.add_argument("--latency", type=number_list, default=None,
                   help="one-way latency in cycles (default 15, or the machine's)")
    p.add_argument("--mechanisms", type=_mech_list, default=list(MECHANISMS),
                   help="comma list or 'all' (shared_memory, prefetch, interrupt, polling, bulk) "
                        "(default: all)")
    common_model(p)
    add_common(p)
    p.set_defaults(func=_cli_sweep)

    p = sub.add_parser("crossover", help="crossover bandwidth and latency between two mechanisms")
    p.add_argument("--first", default="shared_memory",
                   help="first mechanism (default: shared_memory)")
    p.add_argument("--second", default="polling", help="second mechanism (default: polling)")
    p.add_argument("--latency", type=number_list, default=[15.0, 50.0, 100.0],
                   help="one-way latencies (cycles) at which to find the crossover bandwidth "
                        "(default: 15,50,100)")
    p.add_argument("--bandwidth", type=number_list, default=[4.0, 18.0, 64.0],
                   help="bisection bandwidths (bytes/cycle) at which to find the crossover "
                        "latency (default: 4,18,64)")
    common_model(p)
    add_common(p)
    p.set_defaults(func=_cli_crossover)

    p = sub.add_parser("machines", help="Table 1: fourteen 32-processor machines")
    p.add_argument("--evaluate", action="store_true",
                   help="add model times and regions at each machine's bandwidth and latency")
    add_common(p)
    p.set_defaults(func=_cli_machines)

    p = sub.add_parser("alewife", help="Alewife shared-memory miss penalties (Figure 3)")
    add_common(p)
    p.set_defaults(func=_cli_alewife)
