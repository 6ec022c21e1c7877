"""The ``layers`` command (moved out of :mod:`models.layers`)."""

from __future__ import annotations

import argparse
from typing import Any

from models.layers import (
    AppProfile,
    COMM_PRESETS,
    CommParams,
    LAYER_COMBINATIONS,
    PROTOCOL_PRESETS,
    block_fetch,
    fetch_contention,
    layer_settings,
    layered_whatif,
    message_cost,
    page_fetch,
)

__all__ = ["register"]


def _cli_presets(args: argparse.Namespace) -> Any:
    from mva.table import Table

    from models.cli._common import emit
    comm_rows = [{"set": k, **{f: COMM_PRESETS[k].get(f, getattr(CommParams(), f))
                               for f in ("host_overhead", "io_bus_bandwidth", "ni_occupancy",
                                         "message_handling", "link_latency", "link_bandwidth")}}
                 for k in ("A", "B", "H", "W", "B+", "real")]
    proto_rows = [{"set": k, **PROTOCOL_PRESETS[k]} for k in ("O", "B", "H")]
    return emit([Table.from_records(comm_rows, title="Communication layer (Table 2 of the "
                                                     "layered-approach paper; cycles, "
                                                     "bytes/cycle)"),
                 Table.from_records(proto_rows, title="Protocol layer (Table 3 of the "
                                                      "layered-approach paper; cycles)")], args)


def _cli_message(args: argparse.Namespace) -> Any:
    from mva.table import Table

    from models.cli._common import emit
    rows = []
    for pre in args.preset:
        for s in args.size:
            m = message_cost(pre, s, handler=not args.data)
            rows.append({"preset": pre, "size": s, "packets": m.packets, "latency": m.latency,
                         "host_send": m.host_send, "ni_send": m.ni_send, "ni_recv": m.ni_recv,
                         "io_bus": m.io_bus, "host_recv": m.host_recv})
    return emit(Table.from_records(rows, title="One-way message cost (cycles)"), args)


def _cli_fetch(args: argparse.Namespace) -> Any:
    from mva.table import Table

    from models.cli._common import emit
    rows = []
    for code in args.layers:
        c, p = layer_settings(code)
        for b in args.block_size:
            r = block_fetch(c, p, b)
            rows.append({"layers": code, "fetch": f"block {int(b)} B", "round_trip": r.round_trip,
                         "host": r.host, "ni": r.ni, "io_bus": r.io_bus})
        for d in args.diff_words:
            r = page_fetch(c, p, diff_words=d)
            rows.append({"layers": code, "fetch": f"page, diff {int(d)} words",
                         "round_trip": r.round_trip, "host": r.host, "ni": r.ni,
                         "io_bus": r.io_bus})
    return emit(Table.from_records(rows, title="Fetch round trip and occupancy (cycles)"), args)


def _cli_contention(args: argparse.Namespace) -> Any:
    from mva.table import Table

    from models.cli._common import emit
    rows = []
    for code in args.layers:
        c, p = layer_settings(code)
        for rate in args.rate:
            r = fetch_contention(c, p, rate, kind=args.kind, block_size=args.block_size[0],
                                 diff_words=args.diff_words[0])
            rows.append({"layers": code, "rate": rate, "uncontended": r.uncontended,
                         "round_trip": r.round_trip, "U_host": r.utilization_host,
                         "U_ni": r.utilization_ni, "U_io_bus": r.utilization_io_bus,
                         "bottleneck": r.bottleneck or "-"})
    return emit(Table.from_records(rows, title=f"Contended {args.kind} fetch (cycles)",
                                   formats={"U_host": ".3f", "U_ni": ".3f",
                                            "U_io_bus": ".3f"}), args)


def _cli_speedup(args: argparse.Namespace) -> Any:
    from models.cli._common import emit
    app = AppProfile(sequential_time=args.sequential_time, processors=args.processors,
                     imbalance=args.imbalance, block_fetches=args.block_fetches,
                     block_size=args.block_size[0], page_fetches=args.page_fetches,
                     diffs=args.diffs, diff_words=args.diff_words[0], twins=args.twins,
                     protections=args.protections, write_notices=args.write_notices,
                     messages=args.messages, locks=args.locks, barriers=args.barriers)
    return emit(layered_whatif(app, args.layers, title="Speedup by layer combination"), args)


def register(subparsers: Any) -> None:
    """Add the ``layers`` subcommand (``presets``, ``message``, ``fetch``, ``contention``,
    ``speedup``)."""
    from models.cli._common import add_common, add_param_options, number_list

    parser = subparsers.add_parser(
        "layers", help="communication and protocol layers of software shared memory (the "
                       "layered-approach paper)",
        description="What-if tables for the layered model of the layered-approach paper: "
                    "message and fetch costs, contention at NI and I/O bus, speedup for layer "
                    "combinations (AO, BB, ...).")
    sub = parser.add_subparsers(dest="layers_command", metavar="WHAT", required=True)

    def layers_arg(p: argparse.ArgumentParser, default: str) -> None:
        p.add_argument("--layers", type=lambda s: [x.strip() for x in s.split(",") if x.strip()],
                       default=default.split(","), help=f"layer combinations (default {default})")

    p = sub.add_parser("presets", help="the parameter sets of Tables 2 and 3")
    add_common(p)
    p.set_defaults(func=_cli_presets)

    p = sub.add_parser("message", help="one-way latency and occupancy of a message")
    p.add_argument("--preset", type=lambda s: [x.strip() for x in s.split(",") if x.strip()],
                   default=["A", "H", "B", "W"], help="communication presets (default A,H,B,W)")
    p.add_argument("--size", type=number_list, default=[64.0, 1024.0, 4096.0],
                   help="message sizes in bytes (default 64,1024,4096)")
    p.add_argument("--data", action="store_true", help="data message (no handler at the receiver)")
    add_common(p)
    p.set_defaults(func=_cli_message)

    p = sub.add_parser("fetch", help="round trip of SC block fetches and HLRC page fetches")
    layers_arg(p, "AO,HO,BO,BB")
    add_param_options(p, AppProfile, ("block_size", "diff_words"),
                      defaults={"block_size": [64.0, 256.0, 1024.0, 4096.0],
                                "diff_words": [0.0, 64.0]})
    add_common(p)
    p.set_defaults(func=_cli_fetch)

    p = sub.add_parser("contention", help="fetch round trip with M/G/1 contention at a fetch rate")
    layers_arg(p, "AO,BO")
    p.add_argument("--rate", type=number_list, default=[1e-5, 5e-5, 1e-4],
                   help="fetches per node per cycle (default: 1e-05,5e-05,0.0001)")
    p.add_argument("--kind", choices=("block", "page"), default="block",
                   help="what is fetched: an SC block or an HLRC page (default: block)")
    add_param_options(p, AppProfile, ("block_size", "diff_words"),
                      defaults={"block_size": [64.0], "diff_words": [0.0]})
    add_common(p)
    p.set_defaults(func=_cli_contention)

    p = sub.add_parser("speedup", help="speedup of an application for layer combinations")
    layers_arg(p, ",".join(LAYER_COMBINATIONS))
    p.add_argument("--sequential-time", type=float, default=1.6e9, help="cycles (default 1.6e9)")
    add_param_options(p, AppProfile, ("processors", "imbalance"),
                      single=("processors", "imbalance"))
    for name, default in (("block-fetches", 0.0), ("page-fetches", 2000.0), ("diffs", 500.0),
                          ("twins", 500.0), ("protections", 0.0), ("write-notices", 0.0),
                          ("messages", 0.0), ("locks", 100.0), ("barriers", 20.0)):
        p.add_argument(f"--{name}", type=float, default=default,
                       help=f"per processor (default {default:g})")
    add_param_options(p, AppProfile, ("block_size", "diff_words"))
    add_common(p)
    p.set_defaults(func=_cli_speedup)
