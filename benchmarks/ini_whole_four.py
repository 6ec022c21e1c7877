"""INI with one PE per cluster on four clusters: the whole-machine chain against the node chain.

Run ``python -m benchmarks.ini_whole_four [--points 4096] [--seed 7]``.

The default method solves one PE per cluster (``N = K = 1``) on up to
:data:`models.ini.WHOLE_MAX_CLUSTERS` = 4 clusters, with a variable or
exponential handler, as LoPC solves its machine there: the whole machine as one
lumped chain of unordered channels (:func:`models.ini._solve_small_point`).
"Before" is the same code with ``WHOLE_MAX_CLUSTERS = 3`` (the node chain at
four clusters, as before).

The points: of a fresh scrambled-Sobol design of ``--points`` points of the
declared domain (:func:`validation.domain.design_points`, ``--seed``), those
with one PE per cluster on four clusters that the whole-machine chain takes,
each simulated by :func:`validation.domain.simulate_point` (seed ``seed *
100003 + i``).  Held out: not looked at while developing.

Printed, and written to ``benchmarks/results/ini_whole_four.json``: mean /
p95 / max / bias of the error of ``R`` (%) before and after, every point's
errors with its handler utilization, and the cost per point (ms, cold: chain
caches cleared first, and warm) before and after.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import warnings

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results", "ini_whole_four.json")


def main(argv: list[str] | None = None) -> None:
    from benchmarks.ini_revisit import _ms, _stats, before_after
    from models import ini
    from validation.domain import design_points, simulate_point

    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    ap.add_argument("--points", type=int, default=4096)
    ap.add_argument("--seed", type=int, default=7)
    a = ap.parse_args(argv)
    warnings.simplefilter("ignore")
    rows = []
    pts = [p for p in design_points("ini", a.points, a.seed)
           if p["N"] == 1 and p["K"] == 1 and p["clusters"] == 4
           and ini._whole_lumped(1, 1, 4, p["o"], p["cs2_o"])]
    for k, p in enumerate(pts, 1):
        f = {key: v for key, v in p.items() if key not in ("variant", "i")}
        d = simulate_point(family="ini", seed=a.seed * 100003 + p["i"], **f)
        print(f"simulated {k} / {len(pts)} (point {p['i']})", flush=True)
        if not d.get("saturated") and d.get("R"):
            rows.append({"i": p["i"], "fields": f, "R": d["R"], "U_h": d.get("U_h")})
    _, _, eb, ea, cold_b, warm_b, cold_a, warm_a = before_after(rows, ini,
                                                                "WHOLE_MAX_CLUSTERS", 3)
    res = {"command": f"python -m benchmarks.ini_whole_four --points {a.points} --seed {a.seed}",
           "points": len(rows), "before": _stats(eb), "after": _stats(ea),
           "cost_before": {"cold": _ms(cold_b), "warm": _ms(warm_b)},
           "cost_after": {"cold": _ms(cold_a), "warm": _ms(warm_a)},
           "rows": [{"i": r["i"], "U_h": round(float(r["U_h"] or 0.0), 3),
                     "cs2_o": round(r["fields"]["cs2_o"], 2),
                     "cs2_O": round(r["fields"]["cs2_O"], 2),
                     "dispatch": r["fields"]["dispatch"], "before": round(float(x), 2),
                     "after": round(float(y), 2)} for r, x, y in zip(rows, eb, ea)]}
    b, f = res["before"], res["after"]
    print(f"{len(rows)} points: R |error| mean/p95/max/bias {b['mean']:.2f}/{b['p95']:.2f}/"
          f"{b['max']:.2f}/{b['bias']:+.2f}% -> {f['mean']:.2f}/{f['p95']:.2f}/{f['max']:.2f}/"
          f"{f['bias']:+.2f}%")
    print(f"cost ms cold {res['cost_before']['cold']} -> {res['cost_after']['cold']}; warm "
          f"{res['cost_before']['warm']} -> {res['cost_after']['warm']}")
    with open(OUT, "w") as fh:
        json.dump(res, fh, indent=1)
    print(f"written {OUT}")


if __name__ == "__main__":
    main()
