"""Accuracy of the PDQ shared-queue methods against the simulator on a random design.

Run ``python -m benchmarks.pdq_accuracy [--n N] [--cycles C] [--seed S]
[--cache FILE] [--methods m1,m2]`` (defaults 208, 100000, 8, no cache), or
``python -m benchmarks.pdq_accuracy --domain multiplexed[,shared,...] --n N --seed S
[--held-out-only]`` for the map's measure per variant (R, ``auto``) on a fresh
design of the map's domain (:func:`validation.domain.design_points`, simulated
to the map's precision) and on the stored references as a held-out check.

A scrambled Sobol design (:func:`mva.params.design`) over the declared domain of
:class:`models.pdq.PDQParams` (``k`` 1-16, ``n_keys`` 1-4096, ``key_skew`` 0-1.5,
``f_sequential`` 0-0.2, ``f_nosync`` 0-0.5, ``cs2`` 0-10; ``S = 100``, dedicated
processors).  The design's ``load`` value ``u`` (0.02-0.95) is read as a fraction
of the saturation load of the key-aware model (``method="keyed"``, found by
bisection), so that every point is one the model calls stable.  Each point is
simulated once (:func:`validation.compare.simulate_measures`, shared queue) and
solved by every method.  Printed per method: response-time mean / p95 / max
|relative error|, utilization mean |error|, agreement of the saturation flags
(the simulator "saturates" when its queue cap is exceeded), the mean model
cost per point, and the response-time errors broken down by ``f_sequential``,
``n_keys / k``, ``key_skew``, ``cs2`` and load.  Partitioning is checked on a
second design with uniform keys and no sequential handlers (what the simulator
supports for it), with ``n_keys`` rounded to a multiple of ``k`` (the simulator
routes handlers to uniformly chosen queues, which is the model's
``key i -> queue i mod k`` only then).  On the shared design the simulated shared
queue is also compared with the partitioned *model* (the simulator has no
partitioned queue with sequential handlers).

``--cache FILE`` keeps the simulated measures in a JSON file keyed by the point's
parameters, simulation length and seed, so that a re-run after a model change
re-simulates nothing (the file is parsed with :mod:`json`, never evaluated).
"""

from __future__ import annotations

import argparse
import json
import os
import time
import warnings
from typing import Any

import numpy as np

VARY = ("k", "load", "n_keys", "key_skew", "f_sequential", "f_nosync", "cs2")

#: breakdown bins: (label, function of the point's parameters, bin edges)
BREAKDOWN: tuple[tuple[str, Any, tuple[float, ...]], ...] = (
    ("f_sequential", lambda kw: kw["f_sequential"], (0.0, 0.02, 0.05, 0.1, 0.2)),
    ("n_keys/k", lambda kw: kw["n_keys"] / kw["k"], (0.0, 1.0, 4.0, 32.0, 1e9)),
    ("key_skew", lambda kw: kw["key_skew"], (0.0, 0.5, 1.0, 1.5)),
    ("cs2", lambda kw: kw["cs2"], (0.0, 1.0, 4.0, 10.0)),
    ("load/bound", lambda kw: kw["_u"], (0.0, 0.5, 0.8, 0.95)),
)


def saturation_load(fields: dict[str, Any], method: str = "keyed",
                    discipline: str = "shared", steps: int = 20) -> float:
    """Largest per-processor load the model calls stable (bisection, ``2^-steps`` absolute)."""
    from validation.domain import pdq_saturation_load

    return pdq_saturation_load(fields, discipline, method=method, steps=steps)


def _model_kw(kw: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in kw.items() if not k.startswith("_")}


def evaluate(rows: list[tuple[dict[str, Any], Any]], discipline: str, method: str
             ) -> dict[str, Any]:
    """Model values and relative errors of one method on simulated rows."""
    from models.pdq import PDQParams, solve

    out: dict[str, Any] = {"eR": [], "eU": [], "agree": 0, "cost": 0.0, "pts": [],
                           "used": []}
    kwm = {} if method == "-" else {"method": method}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for kw, d in rows:
            prm = PDQParams(**_model_kw(kw))
            t0 = time.perf_counter()
            r = solve(prm, discipline, **kwm)
            out["cost"] += time.perf_counter() - t0
            out["used"].append(r.method)
            out["agree"] += bool(r.saturated) == (d is None)
            if d is None or bool(r.saturated):
                continue
            out["eR"].append((float(r.response_time) - d["R"]) / d["R"])
            out["eU"].append(float(r.utilization) - d["U"])
            out["pts"].append(kw)
    return out


def summary(ev: dict[str, Any], n_rows: int) -> dict[str, float]:
    eR = np.asarray(ev["eR"], float)
    aR = np.abs(eR) if eR.size else np.array([np.nan])
    return dict(n=float(eR.size), R_mean=float(aR.mean()), R_p95=float(np.percentile(aR, 95)),
                R_max=float(aR.max()), R_bias=float(eR.mean()) if eR.size else np.nan,
                U_mean=float(np.mean(np.abs(ev["eU"]))) if ev["eU"] else np.nan,
                sat_agree=ev["agree"] / max(n_rows, 1), cost_ms=1e3 * ev["cost"] / max(n_rows, 1))


def _table(rows: list[tuple[dict[str, Any], Any]], discipline: str,
           methods: tuple[str, ...], breakdown: bool = True) -> dict[str, dict[str, float]]:
    table: dict[str, dict[str, float]] = {}
    evs = {m: evaluate(rows, discipline, m) for m in methods}
    n_sat = sum(d is None for _, d in rows)
    print(f"\n{discipline}: {len(rows)} points ({n_sat} saturated in the simulator)")
    print(f"{'method':<12} {'n':>3} {'R mean':>8} {'R p95':>8} {'R max':>8} {'R bias':>8} "
          f"{'U mean':>8} {'sat ok':>7} {'ms/pt':>8}")
    for m, ev in evs.items():
        t = table[m] = summary(ev, len(rows))
        print(f"{m:<12} {int(t['n']):>3} {t['R_mean']:>8.1%} {t['R_p95']:>8.1%} "
              f"{t['R_max']:>8.1%} {t['R_bias']:>+8.1%} {t['U_mean']:>8.3f} "
              f"{t['sat_agree']:>7.1%} {t['cost_ms']:>8.2f}")
        used: dict[str, int] = {}
        for u in ev["used"]:
            used[u] = used.get(u, 0) + 1
        if len(used) > 1 or m == "auto":
            print(f"{'':<12} methods used: {used}")
    if breakdown:
        for name, f, edges in BREAKDOWN:
            print(f"\n  |R error| mean / max by {name}")
            for lo, hi in zip(edges[:-1], edges[1:]):
                cells = []
                for m, ev in evs.items():
                    sel = [abs(e) for e, kw in zip(ev["eR"], ev["pts"]) if lo <= f(kw) < hi
                           or (hi == edges[-1] and f(kw) == hi)]
                    cells.append(f"{m}: n={len(sel):>3} {np.mean(sel) if sel else np.nan:>6.1%}"
                                 f" / {np.max(sel) if sel else np.nan:>6.1%}")
                print(f"  [{lo:g}, {hi:g})".ljust(16) + "   ".join(cells))
    return table


def _cache_key(kw: dict[str, Any], discipline: str, cycles: int, seed: int) -> str:
    items = sorted((k, round(float(v), 12)) for k, v in _model_kw(kw).items())
    return json.dumps([discipline, cycles, seed, items])


def simulate_design(n: int, cycles: int, seed: int, discipline: str = "shared",
                    verbose: bool = True, cache: dict[str, Any] | None = None,
                    bound_method: str = "keyed") -> list[tuple[dict[str, Any], Any]]:
    """Design points (load scaled to the model's bound) and their simulated measures."""
    from mva.errors import SaturationError
    from mva.params import design
    from models.pdq import PDQParams
    from validation.compare import simulate_measures

    fixed: dict[str, Any] = {"S": 100.0}
    vary = VARY
    if discipline == "partitioned":
        fixed.update(key_skew=0.0, f_sequential=0.0)
        vary = tuple(v for v in VARY if v not in fixed)
    pts = design(PDQParams, n, seed=seed, vary=vary, fixed=fixed, output="list")
    rows: list[tuple[dict[str, Any], Any]] = []
    for i, p in enumerate(pts):
        kw = {f: np.asarray(getattr(p, f)).item() for f in VARY + ("S",)}
        if discipline == "partitioned":
            # the simulator routes each handler to a uniformly chosen queue, which is
            # the model's key i -> queue i mod k only when k divides n_keys
            kw["n_keys"] = int(max(1, round(kw["n_keys"] / kw["k"])) * kw["k"])
        u = kw.pop("load")
        kw["load"] = u * saturation_load(kw, bound_method if discipline == "shared"
                                         else "birth-death", discipline)
        kw["_u"] = u
        key = _cache_key(kw, discipline, cycles, seed + i)
        if cache is not None and key in cache:
            d = cache[key]
        else:
            try:
                d = simulate_measures("pdq", discipline, cycles=cycles, seed=seed + i,
                                      **_model_kw(kw))
            except SaturationError:
                d = None
            if cache is not None:
                cache[key] = d
        rows.append((kw, d))
        if verbose:
            print(f"{discipline} {i}: " + ", ".join(f"{k}={v:.4g}" for k, v in kw.items())
                  + f" -> sim R={'saturated' if d is None else format(d['R'], '.1f')}",
                  flush=True)
    return rows


def partitioned_reference(kw: dict[str, Any], n: int, seed: int) -> float:
    """Mean response time of statically partitioned queues with sequential barriers.

    A sample-path recursion (exact for the discipline, Lindley style): handlers
    arrive in a Poisson stream; keyed handler ``i`` (Zipf key) goes to queue
    ``i mod k``, a nosync one to a uniformly chosen queue, and each queue serves
    FCFS; a sequential handler starts when every earlier handler has completed
    and every later handler starts after it completes (the PDQ sequential key,
    001 section 3.1, applied to the partitioned organisation).  Handler times
    are drawn from the simulator's own distribution
    (:meth:`validation.sim.dists.Dist.from_cs2`).  The first 10% of the handlers
    are a warm-up.  ``validation/sim`` has no partitioned queue with sequential
    handlers; with ``f_sequential = 0`` this agrees with it (printed by
    :func:`main`).
    """
    import random

    from models.pdq import key_probabilities
    from validation.sim.dists import Dist

    rng = np.random.default_rng(seed)
    k = int(kw["k"])
    lam = float(kw["load"]) * k / float(kw["S"])
    A = np.cumsum(rng.exponential(1.0 / lam, n))
    Sv = np.asarray(Dist.from_cs2(float(kw["S"]), float(kw["cs2"])).arrays(
        random.Random(seed), chunk=n)(), float)
    u = rng.random(n)
    fs, fn = float(kw["f_sequential"]), float(kw["f_nosync"])
    p = key_probabilities(int(kw["n_keys"]), float(kw["key_skew"]))
    keys = np.minimum(np.searchsorted(np.cumsum(p), rng.random(n) * p.sum()), p.size - 1)
    q = np.where(u < fs, -1, np.where(u < fs + fn, rng.integers(0, k, n), keys % k))
    free = [0.0] * k
    barrier = 0.0
    R = np.empty(n)
    for i in range(n):
        a, s, j = float(A[i]), float(Sv[i]), int(q[i])
        if j < 0:
            start = max(a, barrier, max(free))
            barrier = start + s
            R[i] = barrier - a
        else:
            end = max(a, barrier, free[j]) + s
            free[j] = end
            R[i] = end - a
    tenth = max(n // 10, 1)
    if R[-tenth:].mean() > 5.0 * R[tenth:2 * tenth].mean() + 10.0 * float(kw["S"]):
        return float("inf")                     # the backlog grows: not stable
    return float(R[tenth:].mean())


def shared_vs_partitioned(rows: list[tuple[dict[str, Any], Any]], cycles: int, seed: int,
                          methods: tuple[str, ...] = ()) -> dict[str, Any]:
    """Simulated shared queue against partitioning (reference recursion) on the same points.

    Also the partitioned model's error against the reference, and whether each
    shared-queue method keeps "shared never worse than partitioned" where the
    simulator does.
    """
    from models.pdq import PDQParams, solve

    ratio, worse, errp, pts = [], [], [], []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for i, (kw, d) in enumerate(rows):
            ref = partitioned_reference(_model_kw(kw), cycles, seed + i)
            pt = solve(PDQParams(**_model_kw(kw)), "partitioned")
            if np.isfinite(ref) and not pt.saturated:
                errp.append(float(pt.response_time) / ref - 1.0)
            if d is None or not np.isfinite(ref):
                continue
            ratio.append(d["R"] / ref)
            pts.append((kw, d["R"], ref))
            if d["R"] - d["R_hw"] > ref:
                worse.append((kw, d["R"], ref))
    r = np.asarray(ratio)
    print(f"\nsimulated shared / partitioned reference on the shared design: {r.size} points "
          f"(both stable), median {np.median(r):.3f}, max {r.max():.3f}; shared worse "
          f"beyond its 95% half-width at {len(worse)} point(s)")
    for kw, s, p in worse[:10]:
        print("   " + ", ".join(f"{k}={v:.4g}" for k, v in _model_kw(kw).items())
              + f": sim shared {s:.1f} > partitioned {p:.1f}")
    e = np.abs(errp)
    print(f"partitioned model vs reference (sequential handlers included): {e.size} points, "
          f"|error| mean {e.mean():.1%}, p95 {np.percentile(e, 95):.1%}, max {e.max():.1%}")
    viol: dict[str, int] = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for m in methods:
            viol[m] = 0
            for kw, _s, _p in pts:
                prm = PDQParams(**_model_kw(kw))
                sh = solve(prm, "shared", method=m)
                pt = solve(prm, "partitioned")
                if not pt.saturated and (sh.saturated
                                         or sh.response_time > pt.response_time * (1 + 1e-9)):
                    viol[m] += 1
        if viol:
            print("model shared worse than model partitioned at: "
                  + ", ".join(f"{m} {v}" for m, v in viol.items()) + f" of {len(pts)} points")
    return dict(ratio=r, worse=len(worse), violations=viol)


def _stats(fe: dict[str, Any]) -> dict[str, tuple[int, float, float, float]]:
    """Per variant: points, mean / p95 / max |relative error| of R (percent), ``auto``."""
    out = {}
    for variant, d in fe.items():
        m = d["auto"]["measures"]["R"]
        e = np.abs(np.asarray(m["e"], float)[np.asarray(m["ok"], bool)]) * 100.0
        out[variant] = ((int(e.size), float(e.mean()), float(np.percentile(e, 95)),
                         float(e.max())) if e.size else (0, np.nan, np.nan, np.nan))
    return out


def domain_check(n: int, seed: int, variants: tuple[str, ...], fresh: bool = True
                 ) -> dict[str, Any]:
    """The map's measure (R, ``auto``) per PDQ variant: a fresh design and the stored points.

    Fresh: the ``n``-point design of :func:`validation.domain.design_points`
    with ``seed`` (use a seed other than the stored references' 2026), each
    point simulated by :func:`validation.domain.simulate_point` (seeded);
    held out: the stored references (:func:`validation.domain.load_references`),
    which the model was not fitted to.  Prints points, mean / p95 / max
    |error| per variant.
    """
    from validation import domain

    out: dict[str, Any] = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if fresh:
            t0 = time.perf_counter()
            pts = [p for p in domain.design_points("pdq", n, seed) if p["variant"] in variants]
            rows = []
            for p in pts:
                d = domain.simulate_point(family="pdq", seed=seed * 100_003 + p["i"], **p)
                rows.append({**p, **d})
            out["fresh"] = _stats(domain.family_errors("pdq", {"rows": rows},
                                                       methods=("auto",)))
            print(f"fresh design (n={n}, seed {seed}, {time.perf_counter() - t0:.0f} s):")
            for v, (m, a, b, c) in out["fresh"].items():
                print(f"  {v:12s} {m:4d} points  R |error| mean {a:.2f}%  p95 {b:.2f}%  "
                      f"max {c:.2f}%")
        refs = domain.load_references("pdq")
        refs = {**refs, "rows": [r for r in refs["rows"] if r.get("variant") in variants]}
        out["held_out"] = _stats(domain.family_errors("pdq", refs, methods=("auto",)))
        print("stored references (held out, seed 2026):")
        for v, (m, a, b, c) in out["held_out"].items():
            print(f"  {v:12s} {m:4d} points  R |error| mean {a:.2f}%  p95 {b:.2f}%  max {c:.2f}%")
    return out


def main(argv: list[str] | None = None) -> dict[str, Any]:
    ap = argparse.ArgumentParser(prog="python -m benchmarks.pdq_accuracy")
    ap.add_argument("--n", type=int, default=208)
    ap.add_argument("--cycles", type=int, default=100_000)
    ap.add_argument("--seed", type=int, default=8)
    ap.add_argument("--cache", default=None)
    ap.add_argument("--methods", default="birth-death,keyed,auto")
    ap.add_argument("--no-partitioned", action="store_true")
    ap.add_argument("--no-property", action="store_true",
                    help="skip the shared-vs-partitioned reference recursion (slow)")
    ap.add_argument("--quiet", action="store_true")
    ap.add_argument("--domain", default=None, metavar="VARIANTS",
                    help="instead: the map's check per variant (comma-separated, e.g. "
                    "multiplexed,shared) on a fresh design of --n points with --seed and on "
                    "the stored references")
    ap.add_argument("--held-out-only", action="store_true",
                    help="with --domain: the stored references only")
    args = ap.parse_args(argv)
    if args.domain:
        return domain_check(args.n, args.seed, tuple(args.domain.split(",")),
                            fresh=not args.held_out_only)
    cache: dict[str, Any] | None = None
    if args.cache:
        cache = {}
        if os.path.exists(args.cache):
            with open(args.cache) as fh:
                cache = json.load(fh)
    methods = tuple(args.methods.split(","))
    try:
        sh = simulate_design(args.n, args.cycles, args.seed, "shared", not args.quiet, cache)
        out = {"shared": _table(sh, "shared", methods)}
        if not args.no_property:
            out["property"] = shared_vs_partitioned(sh, args.cycles, args.seed, methods)
        if not args.no_partitioned:
            pt = simulate_design(args.n, args.cycles, args.seed + 1000, "partitioned",
                                 not args.quiet, cache)
            out["partitioned"] = _table(pt, "partitioned", ("-",), breakdown=False)
            e = [partitioned_reference(_model_kw(kw), args.cycles, args.seed + 1000 + i)
                 / d["R"] - 1.0 for i, (kw, d) in enumerate(pt) if d is not None]
            e = np.abs(np.asarray(e)[np.isfinite(e)])
            print(f"partitioned reference recursion vs simulator: {e.size} points, |difference|"
                  f" mean {e.mean():.1%}, p95 {np.percentile(e, 95):.1%}, max {e.max():.1%}")
    finally:
        if cache is not None and args.cache:
            with open(args.cache, "w") as fh:
                json.dump(cache, fh)
    return out


if __name__ == "__main__":
    main()
