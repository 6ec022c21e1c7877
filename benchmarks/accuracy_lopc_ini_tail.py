"""Tail accuracy and per-point cost of ``method="auto"`` for INI and LoPC (issue 17).

Run (the version to measure must be first on ``sys.path``)::

    python benchmarks/accuracy_lopc_ini_tail.py --label now \
        --json benchmarks/results/accuracy_lopc_ini_tail.json
    # the version before, from an export of its commit, in the same session:
    PYTHONPATH=/tmp/before python benchmarks/accuracy_lopc_ini_tail.py --label before ...

Prints, for the ``models`` package that is imported,

* \\|error\\| of ``R`` (and ``R_o`` for INI) in % -- mean / p95 / max (bias) --
  on the held-out stored references (``validation/data/domain/<family>.json``,
  seed 2026, :func:`validation.domain.family_errors`) and on the fresh
  simulations in ``benchmarks/results/tail_sims.json`` (design points of
  other seeds restricted to where the issue's tail is: INI at two to four
  clusters, LoPC at ``P = 2``; each simulated once by
  :func:`validation.domain.simulate_point`, seeds ``1000 + index``);
* the cost of ``method="auto"`` per point on the held-out design: *cold*
  (the first call of the point in this process; chain caches are kept, as a
  user's session would) and *warm* (best of two more calls), ms median /
  p95 / max and the number of points above 50 ms.

Nothing here fits anything: the fresh simulations were used to choose the
forms (``docs/models/ini.rst``), the held-out references only to check.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
import warnings

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

_HERE = os.path.dirname(os.path.abspath(__file__))
if "PYTHONPATH" not in os.environ:
    sys.path.insert(0, os.path.join(_HERE, ".."))

import numpy as np  # noqa: E402

_INI = ("N", "K", "clusters", "W", "o", "O", "l", "L", "cs2_o", "cs2_O", "dispatch")
_LOPC = ("P", "W", "o", "L", "cs2")


def _stats(e: np.ndarray) -> dict[str, float]:
    e = 100.0 * e[np.isfinite(e)]
    a = np.abs(e)
    return {"n": int(a.size), "mean": float(a.mean()), "p95": float(np.percentile(a, 95)),
            "max": float(a.max()), "bias": float(e.mean())}


def _fmt(s: dict[str, float]) -> str:
    return f"{s['mean']:5.2f} / {s['p95']:5.2f} / {s['max']:6.2f} ({s['bias']:+.2f}), n={s['n']}"


def _errors(family: str, rows: list[dict], measure: str) -> np.ndarray:
    """Relative errors of ``auto`` at ``rows`` (simulated; negligible residences left out)."""
    from models import ini, lopc

    mod, fields = (ini, _INI) if family == "ini" else (lopc, _LOPC)
    out = []
    for r in rows:
        if r.get("saturated") or r.get(measure) is None:
            continue
        if measure != "R" and r[measure] < 0.02 * r["R"]:
            continue
        v = mod.solve(on_fail="ignore", **{k: r[k] for k in fields})
        out.append((float(getattr(v, measure)) - r[measure]) / r[measure])
    return np.array(out)


def _cost(family: str) -> dict[str, float]:
    from models import ini, lopc
    from validation.domain import design_points

    mod, fields = (ini, _INI) if family == "ini" else (lopc, _LOPC)
    cold, warm = [], []
    for p in design_points(family, 512, 2026):
        q = {k: p[k] for k in fields}
        t = time.perf_counter()
        mod.solve(on_fail="ignore", **q)
        cold.append(time.perf_counter() - t)
        best = np.inf
        for _ in range(2):
            t = time.perf_counter()
            mod.solve(on_fail="ignore", **q)
            best = min(best, time.perf_counter() - t)
        warm.append(best)
    out = {}
    for name, ts in (("cold", cold), ("warm", warm)):
        a = 1e3 * np.array(ts)
        out.update({f"{name}_median": float(np.median(a)),
                    f"{name}_p95": float(np.percentile(a, 95)),
                    f"{name}_max": float(a.max()), f"{name}_over_50": int((a > 50.0).sum())})
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--label", default="now")
    ap.add_argument("--json", default=None, help="merge the figures into this file under --label")
    ap.add_argument("--sims", default=os.path.join(_HERE, "results", "tail_sims.json"))
    ap.add_argument("--no-cost", action="store_true")
    a = ap.parse_args()
    warnings.simplefilter("ignore")
    import models
    from validation.domain import family_errors, load_references

    print(f"models from {os.path.dirname(models.__file__)}; label {a.label}; "
          f"load average {os.getloadavg()[0]:.2f}")
    res: dict[str, dict] = {}
    sims = json.load(open(a.sims))
    for fam, measures in (("ini", ("R", "R_o")), ("lopc", ("R",))):
        held = family_errors(fam, load_references(fam), methods=("auto",))[""]["auto"]
        for m in measures:
            s = _stats(np.asarray(held["measures"][m]["e"], dtype=float))
            res[f"{fam} held-out {m}"] = s
            print(f"{fam:4s} held-out seed 2026       {m:4s} {_fmt(s)}")
        for st in sims["sets"]:
            if st["family"] != fam:
                continue
            for m in measures:
                s = _stats(_errors(fam, st["rows"], m))
                key = f"{fam} seed {st['seed']} {st['filter']} {m}"
                res[key] = s
                print(f"{fam:4s} seed {st['seed']} {st['filter']:18s} {m:4s} {_fmt(s)}")
        if not a.no_cost:
            c = _cost(fam)
            res[f"{fam} cost ms"] = c
            print(f"{fam:4s} auto ms per point (held-out design): cold {c['cold_median']:.1f} / "
                  f"{c['cold_p95']:.1f} / {c['cold_max']:.1f} ({c['cold_over_50']} > 50), warm "
                  f"{c['warm_median']:.1f} / {c['warm_p95']:.1f} / {c['warm_max']:.1f} "
                  f"({c['warm_over_50']} > 50)")
    if a.json:
        try:
            store = json.load(open(a.json))
        except FileNotFoundError:
            store = {}
        store[a.label] = dict(res, load_average=os.getloadavg()[0])
        with open(a.json, "w") as f:
            json.dump(store, f, indent=1, sort_keys=True)


if __name__ == "__main__":
    main()
