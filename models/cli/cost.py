"""The ``cost`` command (moved out of :mod:`models.cost`)."""

from __future__ import annotations

from typing import Any

from models.cost import DEFAULT_F, policy_cost

__all__ = ["register"]


def register(subparsers: Any) -> None:
    """Add the ``cost`` subcommand (``smp-contention cost --preset fetch-block --U 0.3,0.7``)."""
    from models.cli._common import add_common, add_param_options
    from models.policy import PRESETS, PolicyParams

    ps = subparsers.add_parser(
        "cost", help="cost-performance of Fixed and Floating against a uniprocessor node",
        description="Costup 1 + f (p - 1), speedup against Single and cost-performance "
                    "costup/speedup (cost-effective below 1) for the policy model, over a "
                    "range of processors per node.")
    ps.add_argument("--preset", choices=tuple(PRESETS), default="null-handler",
                    help="workload of Falsafi & Wood 1997 (default: null-handler)")
    add_param_options(ps, PolicyParams, ("p", "U", "O_int"),
                      defaults={"p": list(range(1, 9)), "U": [0.3, 0.7], "O_int": None},
                      default_text={"O_int": "the preset's"})
    ps.add_argument("--f", "-f", type=float, default=DEFAULT_F,
                    help="processor cost as a fraction of a uniprocessor node's cost "
                         f"(costup = 1 + f (p - 1)); >= 0 (default: {DEFAULT_F:g})")
    add_common(ps)
    ps.set_defaults(func=_cli_run)


def _cli_run(args: Any) -> str:
    from models.cli._common import emit
    from models.policy import preset
    from mva.table import Table

    tables = []
    for O in (args.O_int or [None]):
        for U in args.U:
            kw = {"U": U} if O is None else {"U": U, "O_int": O}
            r = policy_cost(preset(args.preset, **kw), p=args.p, f=args.f)
            rows: dict[str, list[Any]] = {"policy": [], "p": [], "costup": [], "speedup": [],
                                          "cost_performance": [], "cost_effective": []}
            for name, c in r.policies.items():
                for j, pv in enumerate(c.p):
                    rows["policy"].append(name)
                    rows["p"].append(int(pv))
                    rows["costup"].append(float(c.costup[j]))
                    rows["speedup"].append(float(c.speedup[j]))
                    rows["cost_performance"].append(float(c.cost_performance[j]))
                    rows["cost_effective"].append(bool(c.cost_effective[j]))
            title = (f"Cost-performance, {args.preset}, U={U:g}"
                     + ("" if O is None else f", O_int={O:g}")
                     + f", f={args.f:g}; most cost-effective: {r.most_cost_effective_policy}")
            tables.append(Table.from_columns(rows, title=title,
                                             formats={"costup": ".3g", "speedup": ".4g",
                                                      "cost_performance": ".4g"}))
    return emit(tables, args)
