"""Policy on two nodes: the node chain's decomposition against closed-network MVA by thread count.

Run ``python -m benchmarks.policy_two_node_threads [--points 40] [--seed 4321]
[--policy fixed] [--p 3] [--reuse]``.

The default (``method="auto"``) solves two-node points with more compute
threads per node than :data:`models.policy.AUTO_TWO_NODE_THREADS` by
closed-network MVA, and the others by the node chain.  This script draws a
fresh scrambled-Sobol design of ``--points`` points over the declared domain
(:func:`mva.params.design` of :class:`models.policy.PolicyParams`, ``--seed``)
with ``nodes = 2`` and ``p = --p`` imposed and the handler ``cs2`` snapped to
what the simulator draws, simulates each under ``--policy`` with
:func:`validation.domain.simulate_point` (seed ``seed * 1000 + i``, to a 1%
half-width of the cycle time or 10^6 requests), and prints the mean / p95 /
max / bias of the error of ``R`` (%) of ``method="node"`` and of
``method="mva"``.  Results (with the simulations: ``--reuse`` takes them
from there) go to ``benchmarks/results/policy_two_node_<policy>_p<p>_<seed>.json``.

Runs behind :data:`models.policy.AUTO_TWO_NODE_THREADS` (Fixed ``p = 3``:
seed 4321, and 4324 held out; Fixed ``p = 4``: 4322; Floating ``p = 2``:
4323).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import warnings
from typing import Any

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results",
                   "policy_two_node_{policy}_p{p}_{seed}.json")
FIELDS = ("p", "nodes", "U", "o_req", "o_reply", "o_resp", "L", "O_int", "o_direct",
          "o_indirect", "t_transfer", "handler_cs2")


def fresh_points(n: int, seed: int, p: int) -> list[dict[str, Any]]:
    """The design's points with ``nodes = 2``, ``p`` imposed and ``cs2`` snapped."""
    from mva.params import design
    from models.policy import PolicyParams
    from validation.model_accuracy import snap_cs2

    d = design(PolicyParams, n, seed=seed)
    out = []
    for i in range(n):
        f = {k: float(d[k][i]) for k in FIELDS}
        f.update(p=p, nodes=2, handler_cs2=snap_cs2(f["handler_cs2"]))
        out.append(f)
    return out


def simulate(points: list[dict[str, Any]], policy: str, seed: int) -> list[dict[str, Any]]:
    """Each point simulated (``None`` where the simulated machine saturates)."""
    from benchmarks._stored import steps
    from validation.domain import simulate_point

    rows = []
    for i, f in steps(list(enumerate(points)), f"policy two nodes: simulate {policy}"):
        s = simulate_point(family="policy", variant=policy, seed=seed * 1000 + i, **f)
        rows.append(None if s.get("saturated") or not s.get("R") else
                    {"i": i, **f, "R": s["R"], "R_hw": s["R_hw"], "cycles": s["cycles"]})
    return rows


def errors(rows: list[dict[str, Any] | None], policy: str) -> dict[str, Any]:
    """Per method, the errors of ``R`` (%) and their mean / p95 / max / bias."""
    import numpy as np

    from models.policy import PolicyParams, solve

    ok = [r for r in rows if r is not None]
    out: dict[str, Any] = {"n": len(ok)}
    for method in ("node", "mva"):
        R = [float(solve(PolicyParams(**{k: r[k] for k in FIELDS}), policy, method=method).R)
             for r in ok]
        e = np.array([100.0 * (m / r["R"] - 1.0) for m, r in zip(R, ok)])
        a = np.abs(e)
        out[method] = {"errors": e.round(4).tolist(), "mean": float(a.mean()),
                       "p95": float(np.percentile(a, 95)), "max": float(a.max()),
                       "bias": float(e.mean())}
    return out


def main(argv: list[str] | None = None) -> None:
    from benchmarks._stored import fail, parse

    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    ap.add_argument("--points", type=int, default=40)
    ap.add_argument("--seed", type=int, default=4321)
    ap.add_argument("--policy", default="fixed")
    ap.add_argument("--p", type=int, default=3)
    ap.add_argument("--reuse", action="store_true",
                    help="take the simulations from the results file of an earlier run")
    a = parse(ap, argv)
    if a.policy not in ("fixed", "floating", "single"):
        fail(f"--policy must be fixed, floating or single; got {a.policy!r}")
    if not 1 <= a.p <= 16 or (a.policy == "fixed" and a.p < 2):
        fail(f"--p must be 1-16 (2-16 for Fixed); got {a.p}")
    warnings.simplefilter("ignore")
    out = OUT.format(policy=a.policy, p=a.p, seed=a.seed)
    rows = None
    if a.reuse and os.path.exists(out):
        with open(out) as fh:
            old = json.load(fh)
        if old.get("design") == [a.points, a.seed, a.policy, a.p]:
            rows = old["rows"]
    if rows is None:
        rows = simulate(fresh_points(a.points, a.seed, a.p), a.policy, a.seed)
    res = errors(rows, a.policy)
    for m in ("node", "mva"):
        r = res[m]
        print(f"{a.policy} p={a.p} on two nodes, seed {a.seed}, {res['n']} points: {m:>4} "
              f"{r['mean']:.2f} / {r['p95']:.2f} / {r['max']:.2f}% (bias {r['bias']:+.2f})")
    with open(out, "w") as fh:
        json.dump({"command": "python -m benchmarks.policy_two_node_threads --points %d --seed %d "
                              "--policy %s --p %d" % (a.points, a.seed, a.policy, a.p),
                   "design": [a.points, a.seed, a.policy, a.p], "summary": res, "rows": rows},
                  fh, indent=1)
    print(f"written {out}")


if __name__ == "__main__":
    main()
