"""Sweep throughput: points per second, serial against two worker processes.

Run::

    python benchmarks/bench_sweep.py [--quick]

Two workloads:

* a **simulator sweep** -- per-point, seeded replications of the bundled
  simulator (``validation.simulate``) on the LoPC all-to-all machine over a
  grid of processors and compute times;
* a **model sweep** -- the INI thesis model (``models.ini.solve``), vectorised
  and evaluated in chunks.

Each is run serially and on a two-process pool (``mva.sweep`` with
``executor="process", workers=2``), plus serially with an SQLite store to show
the cost of recording.  The baseline is the serial run of the same sweep in
the same process.  The machine's load average is printed because the
figures depend on other work sharing the CPUs.
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
    a = ap.parse_args()
    repeat = 1 if a.quick else 2
    print(f"mva.sweep throughput on {os.cpu_count()} CPUs, load average "
          f"{' '.join(f'{v:.1f}' for v in os.getloadavg())}")
    print()

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
