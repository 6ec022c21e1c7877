"""Accuracy of the policy model's methods against the simulator on a random design.

Draws ``--points`` points with :func:`mva.params.design` (scrambled Sobol, fixed
seed) over the declared domain of :class:`models.policy.PolicyParams`, simulates
Fixed, Floating and Single at each (``validation.compare.simulate_measures``,
compiled engine) and solves each model method: ``mva`` (closed-network MVA),
``fixed-point``, ``node`` (the node-level chain, where it applies: at most 8
compute threads per node) and the default ``auto`` (the node chain at one
compute thread per node, MVA elsewhere).  Prints, per method and policy, the mean / p95 / max
relative |error| of the execution time ``T`` and the round trip, the mean
absolute error of the interrupt probability and of the protocol-processor
utilization, how often the faster of Fixed/Floating and Fixed/Single is named
correctly where the simulator separates them beyond their 95% intervals, and
the cost per solve.

``--simulate N --seed S --out-sims F`` instead simulates the points of
:func:`validation.domain.design_points` (seed ``S``) until the 95% half-width
of the cycle time is 1% of it (:func:`validation.domain.simulate_point`, as the
stored references) and writes them as JSON; ``--references F`` then solves the
methods at the stored simulations of ``F`` (such a file, or the held-out
``validation/data/domain/policy.json``) instead of simulating, ``--methods``
choosing which (``node`` only up to ``--node-threads`` compute threads: beyond,
a point can take minutes).

Usage::

    python -m benchmarks.accuracy_policy --points 64 --cycles 20000 --seed 7
    python -m benchmarks.accuracy_policy --points 200 --seed 4242 --range 0:100 --out a.json
    python -m benchmarks.accuracy_policy --points 200 --seed 4242 --range 100:200 --out b.json
    python -m benchmarks.accuracy_policy --load a.json b.json
    python -m benchmarks.accuracy_policy --simulate 160 --seed 778 --out-sims sims.json
    python -m benchmarks.accuracy_policy --references sims.json --methods auto node mva --out r.json
"""

from __future__ import annotations

import argparse
import json
import time
import warnings
from typing import Any

import numpy as np

POLICIES = ("fixed", "floating", "single")
METHODS = ("mva", "fixed-point", "node", "auto")
#: the methods of the tables
TABLE_METHODS = ("auto", "node", "mva", "fixed-point")
FIELDS = ("p", "nodes", "U", "o_req", "o_reply", "o_resp", "L", "O_int", "o_direct",
          "o_indirect", "t_transfer", "handler_cs2")


def _measures(m: str, r, seconds: float) -> dict:
    """The row fields of one method's result (prefixed with the method's name)."""
    return {f"{m}_s": seconds, f"{m}_R": float(r.cycle_time), f"{m}_T": float(r.execution_time),
            f"{m}_RT": float(r.round_trip), f"{m}_P_int": float(r.interrupt_probability),
            f"{m}_U_pp": float(r.pp_utilization), f"{m}_sat": bool(r.saturated)}


def run(points: int, cycles: int, seed: int, out: str | None,
        span: tuple[int, int] | None = None) -> list[dict]:
    from mva.params import design
    from models.policy import PolicyParams, solve
    from mva.errors import SaturationError
    from validation.compare import simulate_measures

    d = design(PolicyParams, points, seed=seed)
    rows = []
    lo, hi = span if span else (0, points)
    for i in range(lo, min(hi, points)):
        kw: dict[str, Any] = {k: (int(d[k][i]) if k in ("p", "nodes") else float(d[k][i]))
                              for k in FIELDS}
        prm = PolicyParams(**kw)
        for pol in POLICIES:
            if pol == "fixed" and kw["p"] < 2:
                continue
            row = {"i": i, "policy": pol, **kw}
            t0 = time.perf_counter()
            row["C"] = float(prm.compute_time)
            try:
                s = simulate_measures("policy", pol, cycles=cycles, seed=seed + i, **kw)
            except SaturationError as e:  # the simulated machine cannot reach steady state
                row["sim_error"] = f"{type(e).__name__}: {e}"[:200]
                s = None
            row["sim_s"] = time.perf_counter() - t0
            if s is not None:
                row.update({f"sim_{k}": v for k, v in s.items()})
            for m in METHODS:
                t0 = time.perf_counter()
                try:
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore")
                        r = solve(prm, pol, method=m)
                except ValueError as e:
                    row[f"{m}_error"] = str(e)[:120]
                    continue
                row.update(_measures(m, r, time.perf_counter() - t0))
            rows.append(row)
            print(f"point {i} {pol}: done", flush=True)
    if out:
        with open(out, "w") as fh:
            json.dump(rows, fh, indent=0)
    return rows


def simulate_design(points: int, seed: int, out: str) -> None:
    """Simulate the ``points`` design points of seed ``seed`` to the references' 1% half-width."""
    from validation.domain import design_points, simulate_point

    rows = []
    for k, pt in enumerate(design_points("policy", points, seed=seed)):
        d = simulate_point(family="policy", seed=seed * 1000 + k, **pt)
        rows.append({**pt, **{a: b for a, b in d.items()
                              if isinstance(b, (int, float, bool, str))}})
        print(f"simulated {k} {pt['variant']}", flush=True)
        with open(out, "w") as fh:
            json.dump({"seed": seed, "points": points, "rows": rows}, fh)


def solve_references(path: str, methods: tuple[str, ...], node_threads: int,
                     out: str | None, span: tuple[int, int] | None = None,
                     every: int = 1, min_threads: int = 0, min_nodes: int = 2) -> list[dict]:
    """Rows of :func:`run`'s format from stored simulations (no simulation here).

    Only the (point, policy) pairs with at least ``min_threads`` compute threads per
    node on at least ``min_nodes`` nodes.  ``node`` runs at most
    :data:`models.policy.AUTO_NODE_MAX_ITER` fixed-point iterations (as ``auto`` gives
    it) and records whether it converged (``node_conv``).
    """
    from models.policy import AUTO_NODE_MAX_ITER, PolicyParams, solve

    with open(path) as fh:
        refs = json.load(fh)["rows"]
    lo, hi = span if span else (0, len(refs))
    rows = []
    for ref in refs[lo:hi]:
        if ref.get("saturated") or ref.get("error") or ref["i"] % every:
            continue
        kw = {k: ref[k] for k in FIELDS}
        prm = PolicyParams(**kw)
        pol = ref["variant"]
        n_c = {"fixed": kw["p"] - 1, "floating": kw["p"], "single": 1}[pol]
        if n_c < min_threads or kw["nodes"] < min_nodes:
            continue
        row: dict[str, Any] = {"i": ref["i"], "policy": pol, **kw, "C": float(prm.compute_time)}
        row.update({f"sim_{k}": ref[k] for k in ("R", "T", "T_hw", "P_int", "U_pp")})
        for m in methods:
            if m == "node" and n_c > node_threads:
                continue
            t0 = time.perf_counter()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                opts = dict(max_iter=AUTO_NODE_MAX_ITER, on_fail="ignore") if m == "node" else {}
                r = solve(prm, pol, method=m, **opts)
            row.update(_measures(m, r, time.perf_counter() - t0))
            row[f"{m}_conv"] = bool(np.all(r.converged))
            row[f"{m}_method"] = r.method
        rows.append(row)
        if out and len(rows) % 20 == 0:
            with open(out, "w") as fh:
                json.dump(rows, fh, indent=0)
    if out:
        with open(out, "w") as fh:
            json.dump(rows, fh, indent=0)
    return rows


def tables(rows: list[dict], common: bool = False) -> None:
    if common:   # only the (point, policy) pairs every method solved
        present = [m for m in METHODS if any(f"{m}_T" in r for r in rows)]
        rows = [r for r in rows if all(f"{m}_T" in r for m in present)]
        print("\n-- restricted to the points every method solves (node: n_c <= 8) --")
    print(f"\n{'method':12s} {'policy':9s} {'n':>4s} {'T mean':>7s} {'T p95':>7s} {'T max':>7s} "
          f"{'RT mean':>7s} {'RT p95':>7s} {'RT max':>7s} {'Pint mae':>8s} {'Upp mae':>8s} "
          f"{'ms/solve':>8s}")
    for m in TABLE_METHODS:
        for pol in POLICIES:
            rs = [r for r in rows if r["policy"] == pol and f"{m}_T" in r and "sim_R" in r]
            if not rs:
                continue
            # the simulator's execution time per node and round trip (cycle time minus compute)
            T_sim = np.array([r["sim_T"] for r in rs])
            eT = np.abs(np.array([r[f"{m}_T"] for r in rs]) / T_sim - 1) * 100
            # round trip as "cycle time minus the computation C" (preemption included), the
            # same definition on both sides (validation.compare reports no simulated R_w)
            C = np.array([r["C"] for r in rs])
            rt_sim = np.array([r["sim_R"] for r in rs]) - C
            eR = np.abs((np.array([r[f"{m}_R"] for r in rs]) - C) / rt_sim - 1) * 100
            eP = np.abs(np.array([r[f"{m}_P_int"] - r["sim_P_int"] for r in rs]))
            eU = np.abs(np.array([r[f"{m}_U_pp"] - r["sim_U_pp"] for r in rs]))
            ms = np.mean([r[f"{m}_s"] for r in rs]) * 1e3
            print(f"{m:12s} {pol:9s} {len(rs):4d} {eT.mean():7.2f} {np.percentile(eT, 95):7.2f} "
                  f"{eT.max():7.2f} {eR.mean():7.2f} {np.percentile(eR, 95):7.2f} {eR.max():7.2f} "
                  f"{eP.mean():8.4f} {eU.mean():8.4f} {ms:8.1f}")
    print("\n(T, RT: relative |error| in %; RT = cycle time - C on both sides; "
          "Pint, Upp: mean absolute error)")
    # ranking
    by: dict[int, dict[str, dict]] = {}
    for r in rows:
        by.setdefault(r["i"], {})[r["policy"]] = r
    print(f"\n{'method':12s} {'pair':16s} {'separated':>9s} {'right':>6s}")
    for m in TABLE_METHODS:
        for a, b in (("fixed", "floating"), ("fixed", "single")):
            sep = right = 0
            for pts in by.values():
                if a not in pts or b not in pts or "sim_T" not in pts[a] or "sim_T" not in pts[b]:
                    continue
                if f"{m}_T" not in pts[a] or f"{m}_T" not in pts[b]:
                    continue
                ta, tb = pts[a]["sim_T"], pts[b]["sim_T"]
                ha, hb = pts[a]["sim_T_hw"], pts[b]["sim_T_hw"]
                if abs(ta - tb) <= ha + hb:
                    continue
                sep += 1
                right += (ta < tb) == (pts[a][f"{m}_T"] < pts[b][f"{m}_T"])
            print(f"{m:12s} {a + '/' + b:16s} {sep:9d} {right:6d}")
    nsat = sum(1 for r in rows if "sim_error" in r)
    print(f"\nsimulator failures (saturation): {nsat}")
    for m in TABLE_METHODS:
        rs = [r for r in rows if f"{m}_T" in r]
        flagged = sum(1 for r in rs if r.get(f"{m}_sat"))
        agree = sum(1 for r in rs if r.get(f"{m}_sat") == (r.get("sim_U_pp", 0.0) >= 0.95))
        print(f"{m:12s} flags saturated at {flagged} of {len(rs)}; agrees with the simulated "
              f"protocol processor being >= 95% busy at {agree}")
    for m in TABLE_METHODS:
        ms = np.array([r[f"{m}_s"] for r in rows if f"{m}_s" in r]) * 1e3
        if ms.size:
            print(f"{m:12s} ms per point: median {np.median(ms):.0f}, p95 "
                  f"{np.percentile(ms, 95):.0f}, max {ms.max():.0f}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--points", type=int, default=64)
    ap.add_argument("--cycles", type=int, default=20_000)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--out", default=None, help="write the raw rows as JSON")
    ap.add_argument("--range", default=None, help="only the design points lo:hi")
    ap.add_argument("--load", default=None, nargs="+",
                    help="print the tables of saved JSON runs (concatenated)")
    ap.add_argument("--simulate", type=int, default=None,
                    help="simulate this many design points to 1%% half-width (--out-sims)")
    ap.add_argument("--out-sims", default=None)
    ap.add_argument("--references", default=None,
                    help="solve the methods at the stored simulations of this JSON file")
    ap.add_argument("--methods", nargs="+", default=list(METHODS))
    ap.add_argument("--node-threads", type=int, default=8)
    ap.add_argument("--min-threads", type=int, default=0,
                    help="with --references: only pairs with this many compute threads or more")
    ap.add_argument("--min-nodes", type=int, default=2,
                    help="with --references: only points with this many nodes or more")
    ap.add_argument("--every", type=int, default=1,
                    help="with --references: only the design points i with i %% every == 0")
    a = ap.parse_args()
    if a.simulate:
        simulate_design(a.simulate, a.seed, a.out_sims or f"policy_sims_{a.seed}.json")
        return
    span = tuple(int(x) for x in a.range.split(":")) if a.range else None
    if a.references:
        rows = solve_references(a.references, tuple(a.methods), a.node_threads, a.out, span,
                                a.every, a.min_threads, a.min_nodes)
    elif a.load:
        rows = []
        for path in a.load:
            with open(path) as fh:
                rows += json.load(fh)
    else:
        rows = run(a.points, a.cycles, a.seed, a.out, span)
    tables(rows)
    tables(rows, common=True)


if __name__ == "__main__":
    main()
