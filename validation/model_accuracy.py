"""Accuracy of the LoPC and INI methods against the simulator on random designs.

A scrambled Sobol design (:class:`scipy.stats.qmc.Sobol`, seed fixed by the
caller) over the declared domain of each model, scaled logarithmically where
natural (``P``, ``W``, ``o``, ``L``, ``O``, ``l``), is simulated once with
:func:`validation.compare.simulate_measures`; every method of the model is then
compared with the same simulations.  :func:`error_table` prints mean, 95th
percentile and maximum of the relative error per measure and method, and how
many errors exceed the simulation's 95% confidence half-width.

The handler and INI ``cs2`` of a design point is snapped to what the simulator
draws (:meth:`validation.sim.dists.Dist.from_cs2`: Erlang-``round(1/cs2)``
below 1, so ``cs2 = 0.7`` is simulated as exponential); the models get the
snapped value, so both describe the same machine.

Run ``python -m validation.model_accuracy --family lopc --points 256`` (see
``--help``).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import time
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from mva._validate import check_choice, check_integer

__all__ = ["DOMAIN", "design", "snap_cs2", "simulate_design", "model_errors", "error_table",
           "table_rows", "MEASURES"]

#: The declared validity domain of each model, read from the parameter
#: declarations (:mod:`mva.params`, the one place ranges live): ``(low, high,
#: scale)`` per numeric field, ``scale`` "log" (``log(1 + x)`` uniform for ranges
#: from 0), "lin" or "int-log" (integers, log-uniform); the INI dispatch
#: disciplines are cycled over the design.
DOMAIN: dict[str, dict[str, tuple[float, float, str]]] = {}


def _declared_domain(cls: Any, names: Sequence[str]) -> dict[str, tuple[float, float, str]]:
    from mva.params import declarations

    out: dict[str, tuple[float, float, str]] = {}
    for name in names:
        p = declarations(cls)[name]
        integer = p.kind == "int" or bool(getattr(p, "integral", False))
        if p.valid is None or (integer and p.scale != "log"):
            raise ValueError(f"{cls.__name__}.{name}: the design needs a validity range "
                             f"(and a log scale for an integer); got {p.valid}, {p.scale}")
        scale = "int-log" if integer else ("log" if p.scale == "log" else "lin")
        out[name] = (p.valid[0], p.valid[1], scale)
    return out


def _fill_domain() -> None:
    from models.ini import INIParams
    from models.lopc import LoPCParams

    DOMAIN["lopc"] = _declared_domain(LoPCParams, ("P", "W", "o", "L", "cs2"))
    DOMAIN["ini"] = _declared_domain(INIParams, ("N", "K", "clusters", "W", "o", "O", "l", "L",
                                                 "cs2_o", "cs2_O"))


_fill_domain()

#: INI dispatch disciplines cycled over the design points
DISPATCH = ("static", "round_robin", "shared")

#: measures compared per family (the simulator's names, see validation.compare)
MEASURES = {"lopc": ("R", "R_w", "R_q", "R_y", "Q_h", "U_h"),
            "ini": ("R", "R_w", "R_q", "R_y", "R_o", "Q_h", "Q_o", "U_h", "U_o")}


def snap_cs2(c: float) -> float:
    """The squared coefficient of variation the simulator realises for ``c``.

    >>> snap_cs2(0.7), snap_cs2(0.3), snap_cs2(0.0), snap_cs2(4.2)
    (1.0, 0.3333333333333333, 0.0, 4.2)
    """
    if c <= 0.0 or c >= 1.0:
        return float(c)
    return 1.0 / max(1, round(1.0 / c))


def _scale(u: np.ndarray, lo: float, hi: float, kind: str) -> np.ndarray:
    if kind == "lin":
        return lo + u * (hi - lo)
    if kind == "int-log":
        return np.floor(np.exp(np.log(lo) + u * (np.log(hi + 1) - np.log(lo)))).clip(lo, hi)
    if lo > 0:
        return np.exp(np.log(lo) + u * (np.log(hi) - np.log(lo)))
    return np.expm1(u * np.log1p(hi))


def design(family: str, n: int, seed: int) -> list[dict[str, Any]]:
    """``n`` random points of the declared domain of ``family`` (scrambled Sobol, ``seed``).

    >>> pts = design("lopc", 4, seed=1)
    >>> len(pts), sorted(pts[0])
    (4, ['L', 'P', 'W', 'cs2', 'o'])
    """
    from scipy.stats import qmc

    check_choice("family", family, tuple(DOMAIN))
    n = int(check_integer("n", n, minimum=1))
    dom = DOMAIN[family]
    u = qmc.Sobol(d=len(dom), scramble=True, seed=seed).random(n)
    cols = {k: _scale(u[:, i], *spec) for i, (k, spec) in enumerate(dom.items())}
    pts: list[dict[str, Any]] = []
    for i in range(n):
        p: dict[str, Any] = {}
        for k, (_, _, kind) in dom.items():
            v = float(cols[k][i])
            p[k] = int(v) if kind == "int-log" else (snap_cs2(v) if k.startswith("cs2") else v)
        if family == "ini":
            p["dispatch"] = DISPATCH[i % len(DISPATCH)]
        pts.append(p)
    return pts


def _params(family: str, p: Mapping[str, Any]) -> Any:
    if family == "lopc":
        from models.lopc import LoPCParams
        return LoPCParams(**p)
    from models.ini import INIParams
    return INIParams(**p)


def simulate_design(family: str, points: Sequence[Mapping[str, Any]], *, cycles: int,
                    seed: int = 0, per_thread: int = 40, cache: str | None = None,
                    progress: Callable[[int, int], None] | None = None) -> list[dict[str, Any]]:
    """Simulated measures (``<m>`` and ``<m>_hw``) of every point, cached in ``cache`` (JSON)."""
    from validation.compare import simulate_measures

    store: dict[str, Any] = {}
    if cache and os.path.exists(cache):
        with open(cache) as f:
            store = json.load(f)
    out = []
    for i, p in enumerate(points):
        # at least `per_thread` round trips per thread on large machines
        threads = p["P"] if family == "lopc" else p["N"] * p["K"] * p["clusters"]
        cyc = int(max(cycles, per_thread * threads))
        key = json.dumps({"family": family, "cycles": cyc, "seed": seed + i, **p},
                         sort_keys=True)
        if key not in store:
            store[key] = simulate_measures(family, cycles=cyc, seed=seed + i, **p)
            if cache:
                with open(cache, "w") as f:
                    json.dump(store, f)
        out.append(store[key])
        if progress:
            progress(i + 1, len(points))
    return out


def _model(family: str, p: Mapping[str, Any], method: str) -> tuple[dict[str, float], float, str]:
    from validation.compare import _model_values

    params = _params(family, p)
    t = time.perf_counter()
    v = _model_values(family, params, method, {"on_fail": "ignore"})
    dt = time.perf_counter() - t
    used = method
    if method == "auto":
        solve_auto: Callable[..., Any]
        if family == "lopc":
            from models.lopc import solve as lopc_solve
            solve_auto = lopc_solve
        else:
            from models.ini import solve as ini_solve
            solve_auto = ini_solve
        used = solve_auto(params, method="auto", on_fail="ignore").method
    return {k: float(np.asarray(x)) for k, x in v.items()}, dt, used


def model_errors(family: str, points: Sequence[Mapping[str, Any]],
                 sims: Sequence[Mapping[str, Any]], method: str,
                 negligible: float = 0.02) -> dict[str, Any]:
    """Relative errors of ``method`` per measure, and its solve times.

    A residence or queue length smaller than ``negligible`` of the round
    trip (resp. 0.02 customers) in the simulation is left out of its
    measure's statistics (its relative error is meaningless); the count
    left out is reported.
    """
    errs: dict[str, list[float]] = {m: [] for m in MEASURES[family]}
    beyond: dict[str, int] = {m: 0 for m in MEASURES[family]}
    skipped: dict[str, int] = {m: 0 for m in MEASURES[family]}
    times: list[float] = []
    used: set[str] = set()
    worst: dict[str, tuple[float, Mapping[str, Any]]] = {}
    for p, s in zip(points, sims):
        try:
            mv, dt, u = _model(family, p, method)
        except ValueError:
            for m in errs:
                skipped[m] += 1
            continue
        times.append(dt)
        used.add(u)
        for m in errs:
            sim, hw = float(s[m]), float(s[m + "_hw"])
            small = (sim < negligible * float(s["R"])) if m.startswith("R_") else \
                (sim < 0.02) if m.startswith("Q") else sim <= 0
            if small or not math.isfinite(sim):
                skipped[m] += 1
                continue
            e = (mv[m] - sim) / sim
            errs[m].append(e)
            beyond[m] += int(abs(mv[m] - sim) > hw)
            if abs(e) > abs(worst.get(m, (0.0, p))[0]):
                worst[m] = (e, p)
    return {"errors": {m: np.array(v) for m, v in errs.items()}, "beyond": beyond,
            "skipped": skipped, "times": np.array(times), "used": sorted(used), "worst": worst}


def error_table(family: str, method: str, res: Mapping[str, Any]) -> str:
    """Mean / p95 / max of |relative error| (%) per measure, plus counts and times."""
    lines = [f"{family} method={method} (used: {', '.join(res['used'])})",
             f"  {'measure':8s} {'n':>4s} {'mean%':>7s} {'p95%':>7s} {'max%':>7s} "
             f"{'bias%':>7s} {'>CI':>5s} {'left out':>8s}"]
    for m, e in res["errors"].items():
        if e.size == 0:
            lines.append(f"  {m:8s} {0:4d}")
            continue
        a = np.abs(e) * 100
        lines.append(f"  {m:8s} {e.size:4d} {a.mean():7.2f} {np.percentile(a, 95):7.2f} "
                     f"{a.max():7.2f} {100 * e.mean():7.2f} {res['beyond'][m]:5d} "
                     f"{res['skipped'][m]:8d}")
    t = res["times"] * 1e3
    if t.size:
        lines.append(f"  solve time per point (ms): median {np.median(t):.1f}, p95 "
                     f"{np.percentile(t, 95):.1f}, max {t.max():.1f}")
    return "\n".join(lines)


def table_rows(method: str, res: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The rows of :func:`error_table` as records (mean / p95 / max / bias in %, counts)."""
    rows: list[dict[str, Any]] = []
    for m, e in res["errors"].items():
        if e.size == 0:
            continue
        a = np.abs(e) * 100
        rows.append({"method": method, "measure": m, "n": int(e.size),
                     "mean_%": round(float(a.mean()), 2),
                     "p95_%": round(float(np.percentile(a, 95)), 2),
                     "max_%": round(float(a.max()), 2), "bias_%": round(float(100 * e.mean()), 2),
                     "beyond_ci": int(res["beyond"][m]), "left_out": int(res["skipped"][m])})
    return rows


def main(argv: Sequence[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--family", choices=("lopc", "ini"), default="lopc")
    ap.add_argument("--points", type=int, default=256)
    ap.add_argument("--cycles", type=int, default=150_000)
    ap.add_argument("--seed", type=int, default=2026)
    ap.add_argument("--per-thread", dest="per_thread", type=int, default=40,
                    help="at least this many round trips per thread")
    ap.add_argument("--methods", default=None, help="comma list (default: every method)")
    ap.add_argument("--cache", default=None, help="JSON file caching the simulations")
    ap.add_argument("--worst", action="store_true", help="print the worst point per measure")
    ap.add_argument("--json", default=None,
                    help="store the table rows under the family in this JSON file "
                         "(e.g. benchmarks/results/model_accuracy.json)")
    a = ap.parse_args(argv)
    pts = design(a.family, a.points, a.seed)
    t0 = time.time()
    sims = simulate_design(a.family, pts, cycles=a.cycles, seed=a.seed, cache=a.cache,
                           per_thread=a.per_thread)
    print(f"{a.family}: {len(pts)} points, {a.cycles} cycles each, seed {a.seed}, "
          f"simulated in {time.time() - t0:.0f} s")
    if a.methods:
        methods = a.methods.split(",")
    elif a.family == "lopc":
        from models.lopc import METHODS as LOPC_METHODS
        methods = [m for m in LOPC_METHODS if m not in ("mva", "linearizer", "schweitzer")]
    else:
        from models.ini import METHODS as INI_METHODS
        methods = [m for m in INI_METHODS if m not in ("linearizer",)]
    rows: list[dict[str, Any]] = []
    for m in methods:
        res = model_errors(a.family, pts, sims, m)
        print(error_table(a.family, m, res))
        rows.extend(table_rows(m, res))
        if a.worst:
            for meas, (e, p) in res["worst"].items():
                print(f"    worst {meas}: {100 * e:+.1f}% at {p}")

    if a.json:
        store: dict[str, Any] = {}
        if os.path.exists(a.json):
            with open(a.json) as f:
                store = json.load(f)
        store[a.family] = {
            "command": (f"python -m validation.model_accuracy --family {a.family} --points "
                        f"{a.points} --cycles {a.cycles} --per-thread {a.per_thread} --seed "
                        f"{a.seed} --methods {','.join(methods)}"),
            "rows": rows}
        with open(a.json, "w") as f:
            json.dump(store, f, indent=1)


if __name__ == "__main__":
    main()
