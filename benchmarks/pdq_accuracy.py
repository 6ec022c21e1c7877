"""Accuracy of the PDQ shared-queue methods against the simulator on a random design.

Run ``python -m benchmarks.pdq_accuracy [n] [cycles] [seed]`` (defaults 16, 40000, 7).
A scrambled Sobol design (:func:`mva.params.design`) over the declared domain of
:class:`models.pdq.PDQParams` (``k``, ``load``, ``n_keys``, ``key_skew``,
``f_sequential``, ``f_nosync``, ``cs2``; ``S = 100``, dedicated processors) is
solved by every method of :func:`models.pdq.solve` and simulated once per point
(:func:`validation.compare.simulate_measures`).  Printed per method: response-time
mean / p95 / max |error|, utilization mean |error|, saturation-flag agreement, and
the mean model cost per point.  Points the simulator cannot hold (its queue cap)
count as simulator-saturated.
"""

from __future__ import annotations

import sys
import time

import numpy as np


def main(n: int = 16, cycles: int = 40_000, seed: int = 7) -> dict[str, dict[str, float]]:
    from mva.errors import SaturationError
    from mva.params import design
    from models.pdq import PDQParams, solve
    from validation.compare import simulate_measures

    vary = ("k", "load", "n_keys", "key_skew", "f_sequential", "f_nosync", "cs2")
    pts = design(PDQParams, n, seed=seed, vary=vary, fixed={"S": 100.0}, output="list")
    sims = []
    for i, p in enumerate(pts):
        kw = {f: np.asarray(getattr(p, f)).item() for f in vary + ("S",)}
        try:
            d = simulate_measures("pdq", "shared", cycles=cycles, seed=seed + i, **kw)
            sims.append((kw, d))
        except SaturationError:
            sims.append((kw, None))
        print(f"point {i}: {kw} -> "
              f"{'saturated' if sims[-1][1] is None else round(sims[-1][1]['R'], 1)}",
              flush=True)
    table: dict[str, dict[str, float]] = {}
    for method in ("birth-death", "auto"):
        eR, eU, agree, cost, exact = [], [], 0, 0.0, 0
        for kw, d in sims:
            t0 = time.perf_counter()
            r = solve(PDQParams(**kw), "shared", method=method)
            cost += time.perf_counter() - t0
            exact += r.method == "ctmc"
            agree += bool(r.saturated) == (d is None)
            if d is None or bool(r.saturated):
                continue
            eR.append((r.response_time - d["R"]) / d["R"])
            eU.append(r.utilization - d["U"])
        aR = np.abs(eR)
        table[method] = dict(
            n=float(len(aR)), R_mean=float(aR.mean()), R_p95=float(np.percentile(aR, 95)),
            R_max=float(aR.max()), U_mean=float(np.mean(np.abs(eU))),
            sat_agree=agree / len(sims), cost_ms=1e3 * cost / len(sims), exact=float(exact))
    print(f"\n{'method':<12} {'n':>3} {'R mean':>8} {'R p95':>8} {'R max':>8} {'U mean':>8} "
          f"{'sat ok':>7} {'ms/pt':>8} {'exact':>6}")
    for m, t in table.items():
        print(f"{m:<12} {int(t['n']):>3} {t['R_mean']:>8.1%} {t['R_p95']:>8.1%} "
              f"{t['R_max']:>8.1%} {t['U_mean']:>8.3f} {t['sat_agree']:>7.0%} "
              f"{t['cost_ms']:>8.2f} {int(t['exact']):>6}")
    return table


if __name__ == "__main__":
    args = [int(x) for x in sys.argv[1:]]
    main(*args)
