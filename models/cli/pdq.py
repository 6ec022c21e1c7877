"""The ``pdq`` command (moved out of :mod:`models.pdq`)."""

from __future__ import annotations

from typing import Any

import numpy as np

from models.pdq import PRESETS, compare, preset

__all__ = ["register"]


def register(subparsers: Any) -> None:
    """Add the ``pdq`` subcommand (``smp-contention pdq --preset hurricane-1 --k 1,2,4``)."""
    from models.cli._common import add_common, add_param_options
    from models.pdq import PDQParams

    ps = subparsers.add_parser(
        "pdq", help="parallel dispatch queue vs static partitioning vs spin-locks (PDQ, Falsafi "
                    "and Wood 1999)",
        description="Handler response times (cycles) for one shared PDQ, k static queues and "
                    "spin-locks, over a grid (comma lists or start:stop[:step] ranges). "
                    "Presets from Table 1 of Falsafi and Wood 1999.")
    ps.add_argument("--preset", choices=tuple(PRESETS), default="hurricane-1",
                    help="system of Falsafi & Wood 1999, Table 1 (default: hurricane-1)")
    names = ("k", "load", "arrival_rate", "S", "n_keys", "key_skew", "f_sequential", "f_nosync",
             "o_lock", "compute_utilization", "cs2")
    add_param_options(ps, PDQParams, names,
                      defaults={"k": [1, 2, 4, 8], **{n: None for n in names[1:]}},
                      default_text={"load": "arrival rate 0.002 per cycle",
                                    "arrival_rate": "0.002 unless --load is given",
                                    **{n: "the preset's" for n in names[3:]}})
    add_common(ps)
    ps.set_defaults(func=_cli_run)


def _cli_run(args: Any) -> str:
    from models.cli._common import emit
    from mva.table import Table, grid_points

    if args.load is not None and args.arrival_rate is not None:
        raise ValueError("give --load or --arrival-rate, not both")
    grid: dict[str, Any] = {"k": args.k}
    for name in ("load", "arrival_rate", "S", "n_keys", "key_skew", "f_sequential", "f_nosync",
                 "o_lock", "compute_utilization", "cs2"):
        v = getattr(args, name)
        if v is not None:
            grid[name] = v
    pts = grid_points(grid)
    c = compare(preset(args.preset, **pts))
    n = len(pts["k"])
    cols: dict[str, Any] = {k: v for k, v in pts.items() if len(grid[k]) > 1 or k == "k"}
    cols.update({"R_shared": c.shared.response_time, "R_partitioned": c.partitioned.response_time,
                 "R_spinlock": c.spinlock.response_time,
                 "U_shared": c.shared.utilization,
                 "P_conflict": c.shared.conflict_probability,
                 "partitioned/shared": c.partitioned_over_shared,
                 "spinlock/shared": c.spinlock_over_shared,
                 "R_expected_error_shared": c.shared.R_expected_error,
                 "R_expected_error_partitioned": c.partitioned.R_expected_error})
    data = {k: np.broadcast_to(np.asarray(v) if k in pts else np.asarray(v, dtype=float), (n,))
            for k, v in cols.items()}
    for name, r in (("saturated_shared", c.shared), ("saturated_partitioned", c.partitioned),
                    ("saturated_spinlock", c.spinlock)):
        data[name] = np.broadcast_to(np.asarray(r.bottleneck, dtype=object), (n,))
        data[name] = np.asarray([b if b else "no" for b in data[name]], dtype=object)
    title = f"Dispatch disciplines ({args.preset}); response times in 400-MHz cycles"
    return emit(Table(columns=tuple(data), data=data, title=title,
                      formats={k: ".4g" for k in data}), args)
