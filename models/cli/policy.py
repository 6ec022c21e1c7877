"""The ``policy`` command (moved out of :mod:`models.policy`)."""

from __future__ import annotations

from typing import Any

import numpy as np

from models.policy import (
    METHODS,
    POLICIES,
    PRESETS,
    PolicyParams,
    compare,
    solve,
)

__all__ = ["register"]


def register(subparsers: Any) -> None:
    """Add the ``policy`` subcommand (``smp-contention policy --preset null-handler ...``)."""
    from models.cli import add_shared_params
    from models.cli._common import add_common

    ps = subparsers.add_parser(
        "policy", help="Fixed / Floating / Single protocol processing (Falsafi & Wood 1997)",
        description="Cycle time, throughput, protocol-processor utilization, interrupt "
                    "probability and execution-time ratios Floating/Fixed and Single/Fixed over "
                    "a grid (comma lists or start:stop[:step] ranges). Defaults: the preset.")
    ps.add_argument("--preset", choices=tuple(PRESETS), default="null-handler",
                    help="workload of Falsafi & Wood 1997 (default: null-handler)")
    ps.add_argument("--policy", choices=("compare",) + POLICIES, default="compare",
                    help="one policy, or 'compare' for all three and their ratios "
                         "(default: compare)")
    ps.add_argument("--method", choices=METHODS, default="auto",
                    help="solution method: auto (closed-network MVA per node, the fixed point "
                         "for very large machines), exact, linearizer, schweitzer, fixed-point "
                         "(the fast mean-value fixed point for grids of 10^5 points and more) "
                         "(default: auto)")
    add_shared_params(ps, "policy")
    add_common(ps)
    ps.set_defaults(func=_cli_run)


def grid_from_args(args: Any) -> dict[str, Any]:
    """The parameter grid of the ``policy`` options (shared with ``simulate policy``)."""
    from models.cli import SHARED_PARAMS

    grid: dict[str, Any] = {"p": args.p}
    if args.C is not None and args.U is not None:
        raise ValueError("give --U or --C, not both")
    if args.C is None:
        grid["U"] = args.U if args.U is not None else [0.3, 0.7]
    else:
        grid["C"] = args.C
    for name in SHARED_PARAMS["policy"][1]:
        v = getattr(args, name, None)
        if v is not None and name not in grid:
            grid[name] = v
    return grid


def _cli_run(args: Any) -> str:
    from models.cli._common import emit
    from mva.table import Table, grid_points

    base = dict(PRESETS[args.preset])
    grid = grid_from_args(args)
    shown = [k for k, v in grid.items() if len(v) > 1 or k in ("p", "U", "C")]
    pts = grid_points(grid)
    kw = {**base, **pts}
    prm = PolicyParams(**kw)
    cols: dict[str, Any] = {k: pts[k] for k in shown}
    if args.policy == "compare":
        c = compare(prm, method=args.method)
        cols.update({
            "X_fixed": c.fixed.throughput, "X_floating": c.floating.throughput,
            "X_single": c.single.throughput,
            "U_pp_fixed": c.fixed.pp_utilization, "U_pp_floating": c.floating.pp_utilization,
            "P_int_floating": c.floating.interrupt_probability,
            "floating/fixed": c.floating_over_fixed, "single/fixed": c.single_over_fixed,
            "saturated": c.saturated})
        title = (f"Floating and Single against Fixed ({args.preset}); X in requests per cycle "
                 "per node")
    else:
        r = solve(prm, args.policy, method=args.method)
        cols.update({"cycle_time": r.cycle_time, "throughput": r.throughput,
                     "U_pp": r.pp_utilization, "P_int": r.interrupt_probability,
                     "exec_time_ms": np.atleast_1d(r.execution_time_s) * 1e3,
                     "saturated": r.saturated, "R_expected_error": r.R_expected_error})
        title = f"{args.policy} policy ({args.preset})"
    n = len(pts["p"])
    data = {k: np.broadcast_to(np.asarray(v), (n,)) for k, v in cols.items()}
    fmts = {k: ".4g" for k in data}
    return emit(Table(columns=tuple(data), data=data, title=title, formats=fmts), args)
