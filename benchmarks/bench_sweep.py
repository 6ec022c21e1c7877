"""Sweep throughput: a vectorised model through ``mva.sweep`` against calling it directly,
and per-point simulator sweeps serial against two worker processes.

Run::

    python benchmarks/bench_sweep.py [--quick] [--bulk-only]

Three parts:

* **bulk** (issue 19) -- the INI thesis model (``models.ini.solve``) over a
  large cartesian grid, once cheap per point (static dispatch) and once
  costlier (round-robin dispatch: a fixed point over the thesis solve): the baseline is
  what a competent user writes without
  ``mva.sweep``, one direct vectorised call over ``mva.table.grid_points`` of
  the grid; against it ``mva.sweep`` serially, on two worker processes, and
  serially with an SQLite store (first run computing, second run reading
  back; and computing with every chunk inside the SQLite file, as schema 4
  stored them, against the side files of schema 5).  Wall and CPU seconds are both
  printed (CPU: the process and its
  worker processes).  Each variant runs in a fresh Python process: *cold* is its first
  call there (imports, SymPy ``lambdify``, pool start-up included), *warm*
  the best of the following calls.  Ratios are sweep time / direct time
  (the target is <= 2).
* **sim** -- per-point, seeded replications of the bundled simulator
  (``validation.simulate``) on the LoPC all-to-all machine over a grid of
  processors and compute times, serial against a two-process pool;
* **model** -- the INI model in chunks on a smaller grid, with per-point
  evaluation for comparison.

The machine's load average is printed because the figures depend on other
work sharing the CPUs.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import tempfile
import time
from typing import Any, Callable

import numpy as np

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

from mva.sweeps import sweep  # noqa: E402


# ---------------------------------------------------------------------------
# workloads (module level: picklable for the process pool)
# ---------------------------------------------------------------------------
def lopc_sim(P: int, W: float, seed: int, cycles: int = 4000) -> dict[str, float]:
    """One seeded run of the bundled simulator on the LoPC machine (o=100, L=50)."""
    from models.lopc import LoPCParams
    from validation import simulate

    r = simulate(LoPCParams(P=int(P), W=float(W), o=100.0, L=50.0), cycles=cycles,
                 seed=int(seed), progress=False)
    return {"R": r.cycle_time.mean, "R_half_width": r.cycle_time.half_width,
            "events": float(r.events)}


# ---------------------------------------------------------------------------
# bulk: direct vectorised call against mva.sweep, each variant in a fresh process
# ---------------------------------------------------------------------------
#: bulk workloads: the INI thesis model (static dispatch, about 0.4 us of CPU per point),
#: and with round-robin dispatch over K = 2 INIs (a fixed point over the thesis solve,
#: about 9 us per point)
WORKLOADS: dict[str, dict[str, Any]] = {
    "ini": {"o": 742.0}, "ini-rr": {"o": 742.0, "K": 2, "dispatch": "round_robin"}}


def _bulk_grid(quick: bool, workload: str = "ini") -> dict[str, Any]:
    n_w, n_o = (25, 32) if quick else (100, 80)
    n_n = 128 if workload == "ini" else (4 if quick else 16)
    return {"N": np.arange(1, n_n + 1), "W": np.linspace(5000, 80000, n_w),
            "O": np.linspace(500, 4000, n_o)}


def _bulk_variant(variant: str, quick: bool, repeat: int, workload: str = "ini") -> None:
    """Time one variant in this (fresh) process; print a JSON line {cold, warm, points}."""
    import json
    import shutil

    from mva.table import grid_points
    grid = _bulk_grid(quick, workload)
    fixed = dict(WORKLOADS[workload])
    tmp = tempfile.mkdtemp()
    from models.ini import solve
    if variant == "direct":
        from dataclasses import fields

        def run(i: int) -> Any:
            r = solve(**grid_points(grid), **fixed)
            for f in fields(r):      # every output read, as the sweep's table holds them
                getattr(r, f.name)   # (the INI result derives most of them on first read)
            return r
    else:
        from mva.sweeps import sweep
        kw: dict[str, Any] = {"executor": "serial", "vectorized": True}
        if variant == "sweep-2":
            kw = {"executor": "process", "workers": 2, "vectorized": True}

        def run(i: int) -> Any:
            store = None
            if variant in ("store-compute", "store-inline"):
                store = os.path.join(tmp, f"s{i}.sqlite")
            elif variant == "store-read":
                store = os.path.join(tmp, "s.sqlite")
            return sweep(solve, grid, fixed=fixed, progress=False, store=store, **kw)
        if variant == "store-read":
            run(-1)  # fill the store once; every timed call reads it back
        if variant == "store-inline":    # no side files: every chunk inside the SQLite file
            from mva import _store
            _store.SIDE_FILE_BYTES = math.inf
    import resource

    def cpu(who: int) -> float:   # this process, or its finished workers
        a = resource.getrusage(who)
        return a.ru_utime + a.ru_stime

    def written() -> float:   # bytes this process passed to write() (Linux), else NaN
        try:
            with open("/proc/self/io") as fh:
                return float(dict(ln.split(": ") for ln in fh.read().splitlines())["wchar"])
        except (OSError, KeyError, ValueError):
            return math.nan

    times, cpus, own, wrote = [], [], [], []
    for i in range(1 + repeat):
        t0 = time.perf_counter()
        c0, w0 = cpu(resource.RUSAGE_SELF), cpu(resource.RUSAGE_CHILDREN)
        b0 = written()
        out = run(i)
        times.append(time.perf_counter() - t0)
        c1, w1 = cpu(resource.RUSAGE_SELF), cpu(resource.RUSAGE_CHILDREN)
        wrote.append(written() - b0)
        cpus.append(c1 - c0 + w1 - w0)
        own.append(c1 - c0)
    shutil.rmtree(tmp, ignore_errors=True)
    R = out.R if variant == "direct" else out["R"]
    best = int(np.argmin(times[1:])) + 1
    print(json.dumps({"cold": times[0], "warm": min(times[1:]), "cold_cpu": cpus[0],
                      "warm_cpu": min(cpus[1:]), "warm_own_cpu": own[best],
                      "warm_workers_cpu": cpus[best] - own[best], "points": int(np.size(R)),
                      "written_mb": wrote[best] / 1e6,
                      "checksum": float(np.nansum(R))}))


def bulk(quick: bool, workload: str = "ini") -> None:
    import json
    import subprocess
    repeat = 2 if quick else 3
    grid = _bulk_grid(quick, workload)
    n = int(np.prod([len(v) for v in grid.values()]))
    extra = ", ".join(f"{k}={v!r}" for k, v in WORKLOADS[workload].items())
    print(f"bulk path: models.ini.solve({extra}) over a "
          f"{' x '.join(str(len(v)) for v in grid.values())} "
          f"grid = {n} points; each variant in a fresh process, cold = first call there, "
          f"warm = best of {repeat}")
    res = {}
    variants = ("direct", "sweep-1", "sweep-2", "store-compute", "store-inline", "store-read") \
        if workload == "ini" else ("direct", "sweep-1", "sweep-2")
    for v in variants:
        out = subprocess.run([sys.executable, os.path.abspath(__file__), "--variant", v,
                              "--workload", workload]
                             + (["--quick"] if quick else []), capture_output=True, text=True,
                             check=True, cwd=os.path.dirname(os.path.abspath(__file__)))
        res[v] = json.loads(out.stdout.strip().splitlines()[-1])
    base = res["direct"]
    label = {"direct": "direct vectorised call (baseline)", "sweep-1": "mva.sweep, serial",
             "sweep-2": "mva.sweep, 2 worker processes",
             "store-compute": "mva.sweep, serial + store (computing)",
             "store-inline": "  the same, chunks inside SQLite (schema 4)",
             "store-read": "mva.sweep + store (reading back)"}
    print("  wall = elapsed seconds; cpu = CPU seconds of the process and its workers; ratio = "
          "variant / direct call (target <= 2)")
    print(f"  {'variant':40s} {'cold':>7s} {'warm':>7s} {'warm':>7s} {'warm Mpts':>10s} "
          f"{'cold':>6s} {'warm':>6s} {'warm':>6s}")
    print(f"  {'':40s} {'wall':>7s} {'wall':>7s} {'cpu':>7s} {'/wall-s':>10s} "
          f"{'ratio':>6s} {'ratio':>6s} {'cpu r':>6s}")
    for v, r in res.items():
        print(f"  {label[v]:40s} {r['cold']:7.3f} {r['warm']:7.3f} {r['warm_cpu']:7.3f} "
              f"{n / r['warm'] / 1e6:10.2f} {r['cold'] / base['cold']:6.2f} "
              f"{r['warm'] / base['warm']:6.2f} {r['warm_cpu'] / base['warm_cpu']:6.2f}")
    if "store-compute" in res:
        print(f"  the store written by a sweep: {res['store-compute']['written_mb']:.0f} MB "
              f"passed to write() (side files and SQLite pages; "
              f"{res['store-inline']['written_mb']:.0f} MB with every chunk inside SQLite, "
              f"written to its log and again into the file)")
    two, one = res["sweep-2"], res["sweep-1"]
    crit = two["warm_own_cpu"] + two["warm_workers_cpu"] / 2
    print(f"  2 workers: calling process {two['warm_own_cpu']:.3f} CPU s + workers "
          f"{two['warm_workers_cpu']:.3f} CPU s; with a free CPU per worker the wall time "
          f"would be about {crit:.3f} s = {crit / one['warm_cpu']:.2f} x the serial sweep's "
          f"{one['warm_cpu']:.3f} CPU s")
    print(f"  2 workers / serial, wall: {two['warm'] / one['warm']:.2f} (load average "
          f"{' '.join(f'{v:.1f}' for v in os.getloadavg())}: on a loaded 2-CPU machine the "
          f"workers share the CPUs with other work)")
    sums = [r["checksum"] for r in res.values()]
    rel = (max(sums) - min(sums)) / abs(base["checksum"])
    print(f"  sum of R over the grid, largest relative difference between variants: {rel:.1e}"
          + ("  (the round-robin fixed point iterates per chunk: last bits depend on the "
             "chunking)" if workload != "ini" else ""))
    print()


def _rate(n: int, f: Callable[[], Any], repeat: int) -> tuple[float, Any]:
    best = math.inf
    out = None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = f()
        best = min(best, time.perf_counter() - t0)
    return n / best, out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="smaller sweeps")
    ap.add_argument("--bulk-only", action="store_true", help="run the bulk part only")
    ap.add_argument("--variant", default=None, help=argparse.SUPPRESS)
    ap.add_argument("--workload", default="ini", choices=sorted(WORKLOADS),
                    help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.variant is not None:
        _bulk_variant(a.variant, a.quick, 2 if a.quick else 3, a.workload)
        return
    repeat = 1 if a.quick else 2
    print(f"mva.sweep throughput on {os.cpu_count()} CPUs, load average "
          f"{' '.join(f'{v:.1f}' for v in os.getloadavg())}")
    print()
    bulk(a.quick)
    bulk(a.quick, "ini-rr")
    if a.bulk_only:
        return

    # -- simulator sweep ---------------------------------------------------
    cycles = 1000 if a.quick else 4000
    grid = {"P": [4, 8, 16], "W": [250.0, 1000.0]}
    fixed = {"cycles": cycles}
    label = f"validation.simulate on LoPC (o=100, L=50), {cycles} request cycles/point"
    reps = 2 if a.quick else 6
    n_sim = reps * int(np.prod([len(v) for v in grid.values()]))
    sim = lopc_sim
    sim(P=4, W=250.0, seed=0, cycles=200)      # warm-up: imports, first-call costs

    def run_sim(**kw: Any) -> Any:
        return sweep(sim, grid, fixed=fixed, seed=1, replications=reps, progress=False, **kw)
    r1, t1 = _rate(n_sim, lambda: run_sim(executor="serial"), repeat)
    r2, t2 = _rate(n_sim, lambda: run_sim(executor="process", workers=2), repeat)
    with tempfile.TemporaryDirectory() as d:
        rs, ts = _rate(n_sim, lambda: run_sim(executor="serial",
                                              store=os.path.join(d, f"s{time.time_ns()}.db")), 1)
    same = all(t1[c].tolist() == t2[c].tolist() == ts[c].tolist() for c in t1.columns)
    print(f"simulator sweep: {label}; {n_sim} points (seeded replications)")
    print(f"  serial                  {r1:10.1f} points/s   (baseline)")
    print(f"  2 worker processes      {r2:10.1f} points/s   x{r2 / r1:.2f}")
    print(f"  serial + SQLite store   {rs:10.1f} points/s   x{rs / r1:.2f}")
    print(f"  identical results on every executor: {same}")
    print()

    # -- model sweep ---------------------------------------------------------
    from models.ini import solve as ini_solve
    model = ini_solve
    spec = {"grid": {"N": list(range(1, 33)), "W": np.linspace(5000, 80000, 40).tolist(),
                     "O": [500.0, 1000.0, 2336.0, 4000.0]}, "fixed": {"o": 742.0}}
    mlabel = "models.ini.solve (thesis method)"
    model(N=[1.0, 2.0], W=41789.0, o=742.0, O=2336.0)   # warm-up: symbolic reduction, lambdify
    n_model = int(np.prod([len(v) for v in spec["grid"].values()]))

    def run_model(**kw: Any) -> Any:
        return sweep(model, spec["grid"], fixed=spec["fixed"], progress=False,
                     vectorized=True, **kw)
    chunk = 1024
    m1, u1 = _rate(n_model, lambda: run_model(executor="serial", chunk=chunk), repeat)
    m2, u2 = _rate(n_model, lambda: run_model(executor="process", workers=2, chunk=chunk), repeat)
    mb, _ = _rate(n_model, lambda: run_model(executor="serial", chunk=n_model), repeat)
    small = {k: v[:3] for k, v in spec["grid"].items()}
    n_pp = int(np.prod([len(v) for v in small.values()]))
    mp, _ = _rate(n_pp, lambda: sweep(model, small, fixed=spec["fixed"], progress=False,
                                      vectorized=False, executor="serial"), 1)
    with tempfile.TemporaryDirectory() as d:
        ms, _ = _rate(n_model, lambda: run_model(executor="serial", chunk=chunk,
                                                 store=os.path.join(d, "m.db")), 1)
    same = all(np.array_equal(u1[c], u2[c]) for c in u1.columns if u1[c].dtype.kind in "biuf")
    print(f"model sweep: {mlabel}; {n_model} points, vectorised in chunks of {chunk}")
    print(f"  serial                  {m1:10.0f} points/s   (baseline)")
    print(f"  2 worker processes      {m2:10.0f} points/s   x{m2 / m1:.2f}")
    print(f"  serial, one chunk       {mb:10.0f} points/s   x{mb / m1:.2f}")
    print(f"  serial + SQLite store   {ms:10.0f} points/s   x{ms / m1:.2f}")
    print(f"  per point (no chunks)   {mp:10.0f} points/s   x{mp / m1:.3f}  ({n_pp} points)")
    print(f"  identical results serial vs 2 workers: {same}")


if __name__ == "__main__":
    main()
