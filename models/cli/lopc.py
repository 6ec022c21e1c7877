"""The ``lopc`` command (moved out of :mod:`models.lopc`)."""

from __future__ import annotations

from typing import Any

import numpy as np

from models.lopc import LoPCParams, METHODS, optimal_servers, solve

__all__ = ["register"]


def register(subparsers: Any) -> None:
    """Add the ``lopc`` subcommand (``smp-contention lopc --P 16 --W 1000 --o 100 --L 50``)."""
    from models.cli import add_shared_params
    from models.cli._common import add_common

    p = subparsers.add_parser(
        "lopc", help="LoPC request/reply contention (Frank, Agarwal, Vernon 1997)",
        description="Round trip and contention cost of the LoPC all-to-all model over a grid "
                    "of the given values (comma lists or start:stop[:step] ranges).")
    add_shared_params(p, "lopc")
    p.add_argument("--method", choices=METHODS, default="auto",
                   help="solution method: auto (the most accurate method that answers the point: "
                        "node), node (node-level Markov chain), lopc (published equations), "
                        "mva/exact (exact MVA by symmetry), linearizer, schweitzer "
                        "(default: auto)")
    p.add_argument("--client-server", dest="client_server", action="store_true",
                   help="also print the best client/server split")
    add_common(p)
    p.set_defaults(func=_cli_run)


def _cli_run(args: Any) -> str:
    from models.cli._common import emit
    from mva.table import Table, tabulate

    grid = {"P": args.P, "W": args.W, "o": args.o, "L": args.L, "cs2": args.cs2}
    tables = [tabulate(lambda **kw: solve(LoPCParams(**kw), method=args.method), grid,
                       columns=["R", "contention", "R_w", "R_q", "R_y", "Q_q", "Q_y", "U_q",
                                "R_expected_error"],
                       title=f"LoPC all-to-all ({args.method})",
                       formats={k: ".2f" for k in ("R", "contention", "R_w", "R_q", "R_y")}
                       | {k: ".4f" for k in ("Q_q", "Q_y", "U_q")} | {"R_expected_error": ".3f"})]
    if args.client_server:
        from mva.table import grid_points

        pts = grid_points({k: v for k, v in grid.items()})
        best = optimal_servers(pts["P"], pts["W"], pts["o"], pts["L"], pts["cs2"],
                               method="lopc" if args.method == "lopc" else "mva")
        cols = dict(pts)
        cols.update(servers=np.atleast_1d(best.servers), throughput=np.atleast_1d(best.throughput),
                    all_to_all=np.atleast_1d(best.all_to_all_throughput))
        tables.append(Table.from_columns(cols, title="Best client/server split "
                                         f"({'lopc' if args.method == 'lopc' else 'mva'})",
                                         formats={"throughput": ".6g", "all_to_all": ".6g"}))
    return emit(tables, args)
