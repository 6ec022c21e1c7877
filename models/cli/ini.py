"""The ``ini`` command (moved out of :mod:`models.ini`)."""

from __future__ import annotations

from typing import Any

from models.ini import INIParams, INIResult, METHODS, solve

__all__ = ["register"]


def register(subparsers: Any) -> None:
    """Add the ``ini`` subcommand (``smp-contention ini --N 1,2,4,8 ...``)."""
    from models.cli import add_shared_params
    from models.cli._common import add_common, deprecated_alias, int_list

    p = subparsers.add_parser(
        "ini", help="two-level INI contention model (Jiang 1997, chapter 6)",
        description="Round trip, queue lengths and utilizations of the INI model over a grid "
                    "of the given values (comma lists or start:stop[:step] ranges). Defaults: "
                    "the thesis's Figure 6-3 workload.")
    add_shared_params(p, "ini")
    p.add_argument("--method", choices=METHODS, default="auto",
                   help="solution method: auto (the most accurate method that answers the point: "
                        "node), node (PE and INI Markov chains), thesis (the thesis's equations), "
                        "exact, linearizer, schweitzer (queueing network) (default: auto)")
    deprecated_alias(p, "--S", "--N (S = N K)", "S", type=int_list)
    add_common(p)
    p.set_defaults(func=_cli_run)


def _cli_run(args: Any) -> str:
    from models.cli._common import emit
    from mva.table import tabulate

    first = ("S", args.S) if getattr(args, "S", None) is not None else ("N", args.N)
    grid = {first[0]: first[1], "K": args.K, "W": args.W, "o": args.o, "l": args.l, "O": args.O,
            "L": args.L, "cs2_o": args.cs2_o, "cs2_O": args.cs2_O}
    grid = {k: v for k, v in grid.items() if len(v) > 1 or k == first[0]}
    fixed = {k: getattr(args, k)[0] for k in ("K", "W", "o", "l", "O", "L", "cs2_o", "cs2_O")
             if k not in grid}

    def fn(**kw: Any) -> INIResult:
        return solve(INIParams(dispatch=args.dispatch, clusters=args.clusters, **kw),
                     method=args.method)

    table = tabulate(fn, grid, fixed=fixed,
                     columns=["R", "contention", "Q_o", "U_o", "R_o", "Q_q", "Q_y",
                              "R_expected_error"],
                     title=f"INI model ({args.method}, dispatch={args.dispatch})",
                     formats={"R": ".1f", "contention": ".1f", "Q_o": ".4f", "U_o": ".4f",
                              "R_o": ".1f", "Q_q": ".4f", "Q_y": ".4f", "R_expected_error": ".3f"})
    return emit(table, args)
