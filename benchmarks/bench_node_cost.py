"""Per-point cost of the default LoPC and INI method (``auto`` = node chains) on random designs.

Run:  python benchmarks/bench_node_cost.py [--points 100] [--seed 99]

For each model, ``--points`` scrambled-Sobol points of the declared domain
(:func:`validation.model_accuracy.design`, the same design the accuracy study
uses, another seed) are solved one point per call by

* ``method="auto"`` (the default: the node-level Markov chains of
  :mod:`models._node`), cold (chain-structure caches and the shipped
  structures' file cleared before every point) and warm (the same point again, structures
  cached), and
* the papers' vectorised closed form (``"lopc"``, ``"thesis"``), the baseline
  a user who only needs the published equations would call,

and the median, 95th percentile and maximum wall time per point are printed
(ms), with the slowest points.  The issue's goal is <= 50 ms for every point
by the default method.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
import warnings

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))


def _clear() -> None:
    from models import _node

    # (getattr: the script also times older versions of the module, with --label)
    for name in ("_chain", "_station_structure", "_full_structure", "_full_structure_ref",
                 "_full_shipped", "_pair_structure", "_split_structure", "_revisit_structure"):
        f = getattr(_node, name, None)
        if f is not None:
            f.cache_clear()
    getattr(_node, "_CAP_HINT", {}).clear()


def main() -> None:
    import numpy as np

    from models import ini, lopc
    from validation.model_accuracy import design

    ap = argparse.ArgumentParser()
    ap.add_argument("--points", type=int, default=100)
    ap.add_argument("--seed", type=int, default=99)
    ap.add_argument("--json", default=None,
                    help="store the rows under --label in this JSON file (other keys are kept)")
    ap.add_argument("--label", default="now",
                    help="key of the rows in --json, and suffix of the method names")
    a = ap.parse_args()
    records: list[dict[str, object]] = []
    warnings.simplefilter("ignore")
    for fam, mod, cls, closed in (("lopc", lopc, lopc.LoPCParams, "lopc"),
                                  ("ini", ini, ini.INIParams, "thesis")):
        pts = design(fam, a.points, a.seed)
        mod.solve(cls(**pts[0]), method="auto", on_fail="ignore")      # imports
        mod.solve(cls(**pts[0]), method=closed, on_fail="ignore")
        times: dict[str, list[float]] = {"auto cold": [], "auto warm": [], closed: []}
        for p in pts:
            par = cls(**p)
            _clear()
            t = time.perf_counter()
            mod.solve(par, method="auto", on_fail="ignore")
            times["auto cold"].append(time.perf_counter() - t)
            t = time.perf_counter()
            mod.solve(par, method="auto", on_fail="ignore")
            times["auto warm"].append(time.perf_counter() - t)
            t = time.perf_counter()
            mod.solve(par, method=closed, on_fail="ignore")
            times[closed].append(time.perf_counter() - t)
        print(f"{fam}: {len(pts)} points (seed {a.seed}), ms per point")
        print(f"  {'method':10s} {'median':>8s} {'p95':>8s} {'max':>8s} {'<=50ms':>7s}")
        for k, v in times.items():
            ms = np.array(v) * 1e3
            print(f"  {k:10s} {np.median(ms):8.1f} {np.percentile(ms, 95):8.1f} {ms.max():8.1f} "
                  f"{np.mean(ms <= 50):7.0%}")
            records.append({"model": fam, "method": k, "median_ms": round(float(np.median(ms)), 1),
                            "p95_ms": round(float(np.percentile(ms, 95)), 1),
                            "max_ms": round(float(ms.max()), 1),
                            "share_le_50ms": round(float(np.mean(ms <= 50)), 2)})
        cold = np.array(times["auto cold"])
        for i in np.argsort(cold)[::-1][:3]:
            print(f"    slowest: {1e3 * cold[i]:.0f} ms at {pts[i]}")

    if a.json:
        import json

        store: dict[str, object] = {}
        if os.path.exists(a.json):
            with open(a.json) as f:
                store = json.load(f)
        for r in records:
            r["method"] = f"{r['method']} ({a.label})"
        store[a.label] = {"command": f"python benchmarks/bench_node_cost.py --points {a.points} "
                                     f"--seed {a.seed} --label {a.label}", "rows": records}
        with open(a.json, "w") as f:
            json.dump(store, f, indent=1)


if __name__ == "__main__":
    main()
