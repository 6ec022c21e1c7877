"""The ``whatif`` command (moved out of :mod:`models.whatif`)."""

from __future__ import annotations

import argparse
from typing import Any

from models.whatif import DEFAULT_N, DEFAULT_W, report

__all__ = ["register"]


def register(subparsers: Any) -> None:
    """Add the ``whatif`` subcommand (also what ``smp-contention`` runs with no arguments)."""
    from models.cli._common import add_common, int_list, number_list

    p = subparsers.add_parser(
        "whatif", help="the default what-if report (LoPC, INI, policies)",
        description="The default what-if report: what contention adds to a round trip "
                    "(LoPC), INI queueing against PEs per INI (thesis Figure 6-3) and, "
                    "Fixed/Floating/Single protocol processing.")
    p.add_argument("--P", type=int, default=16, help="processors in the LoPC table (default 16)")
    p.add_argument("--o", type=float, default=100.0,
                   help="LoPC handler occupancy (cycles) (default: 100)")
    p.add_argument("--L", type=float, default=50.0,
                   help="LoPC network latency (cycles) (default: 50)")
    p.add_argument("--W", type=number_list, default=list(DEFAULT_W),
                   help="LoPC compute times to sweep (cycles) (default: "
                        + ",".join(f"{w:g}" for w in DEFAULT_W) + ")")
    p.add_argument("--N", type=int_list, default=list(DEFAULT_N),
                   help="PEs per INI to sweep (default: "
                        + ",".join(str(n) for n in DEFAULT_N) + ")")
    add_common(p)
    p.set_defaults(func=_cli_run)


def _cli_run(args: argparse.Namespace) -> str:
    from models.cli._common import emit

    return emit(report(P=args.P, o=args.o, L=args.L, W=args.W, N=args.N), args)
