"""Sweep throughput: points per second, serial against two worker processes.

Run::

    python benchmarks/bench_sweep.py [--quick]

Two workloads:

* a **simulator sweep** -- per-point, seeded replications of a CPU-bound
  pure-Python closed queueing simulation defined below (labelled as such in
  the output; the bundled simulator in ``validation`` had no single-run entry
  point when this was written);
* a **model sweep** -- a vectorised model evaluated in chunks: ``models.ini``
  when present, else the machine-repairman MVA below.

Each is run serially and on a two-process pool (``mva.sweep`` with
``executor="process", workers=2``), plus serially with an SQLite store to show
the cost of recording.  The baseline is the serial run of the same sweep in
the same process.  The machine's load average is printed because the
figures depend on other work sharing the CPUs.
"""

from __future__ import annotations

import argparse
import heapq
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
# fallback workloads (module level: picklable)
# ---------------------------------------------------------------------------
def closed_queue_sim(N: int, Z: float, S: float, seed: int,
                     events: int = 20000) -> dict[str, float]:
    """Pure-Python event simulation of a closed network: N customers, think Z, FIFO server S.

    Exponential think and service times; a heap of (time, seq, kind) events.
    Returns throughput X, mean response R and utilisation U.
    """
    rng = np.random.default_rng(seed)
    think = rng.exponential(Z, events + N).tolist()
    serve = rng.exponential(S, events + N).tolist()
    ti = si = 0
    heap: list[tuple[float, int, int]] = []
    seq = 0
    for _ in range(N):
        heapq.heappush(heap, (think[ti], seq, 0))
        ti += 1
        seq += 1
    queue: list[float] = []
    busy = False
    busy_time = 0.0
    now = 0.0
    done = 0
    total_r = 0.0
    last = 0.0
    for _ in range(events):
        now, _, kind = heapq.heappop(heap)
        if busy:
            busy_time += now - last
        last = now
        if kind == 0:  # arrival at the server
            queue.append(now)
            if not busy:
                busy = True
                heapq.heappush(heap, (now + serve[si], seq, 1))
                si += 1
                seq += 1
        else:  # departure
            arrived = queue.pop(0)
            total_r += now - arrived
            done += 1
            heapq.heappush(heap, (now + think[ti], seq, 0))
            ti += 1
            seq += 1
            if queue:
                heapq.heappush(heap, (now + serve[si], seq, 1))
                si += 1
                seq += 1
            else:
                busy = False
    return {"X": done / now, "R": total_r / max(done, 1), "U": busy_time / now}


def repairman(N: Any, D: Any = 1.0, Z: Any = 4.0) -> dict[str, Any]:
    """Exact MVA of the machine-repairman model, vectorised over the grid."""
    N = np.asarray(N)
    D = np.broadcast_to(np.asarray(D, dtype=float), N.shape)
    Z = np.broadcast_to(np.asarray(Z, dtype=float), N.shape)
    q = np.zeros(N.shape)
    r = np.zeros(N.shape)
    x = np.zeros(N.shape)
    for n in range(1, int(np.max(N)) + 1):
        act = N >= n
        rn = D * (1.0 + q)
        xn = n / (rn + Z)
        r, x, q = np.where(act, rn, r), np.where(act, xn, x), np.where(act, xn * rn, q)
    return {"X": x, "R": r, "Q": q}


# ---------------------------------------------------------------------------
def _simulator_status() -> str:
    """Whether the bundled simulator offers a public single-run entry point yet."""
    try:
        import validation.sim as vs
    except ImportError:
        return "the bundled simulator (validation.sim) is not importable"
    public = [n for n in getattr(vs, "__all__", []) if "simul" in n.lower() or "run" in n.lower()]
    if not public:
        return "the bundled simulator (validation.sim) has no public single-run entry point yet"
    return f"validation.sim offers {', '.join(public)}, not yet driven by this benchmark"


def _model() -> tuple[Callable[..., Any], dict[str, Any], str]:
    try:
        from models.ini import solve
        solve(N=4, W=41789.0, o=742.0, O=2336.0)
        grid = {"N": list(range(1, 33)), "W": np.linspace(5000, 80000, 40).tolist(),
                "O": [500.0, 1000.0, 2336.0, 4000.0]}
        return solve, {"grid": grid, "fixed": {"o": 742.0}}, "models.ini.solve (thesis method)"
    except Exception:
        grid = {"N": list(range(1, 65)), "Z": np.linspace(0, 20, 40).tolist(),
                "D": [0.5, 1.0, 2.0, 4.0]}
        return repairman, {"grid": grid, "fixed": {}}, "machine-repairman MVA (fallback)"


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
    print(f"simulator: {_simulator_status()};")
    print("           benchmarking a CPU-bound pure-Python closed-queue event simulation "
          "(closed_queue_sim, this script) instead")
    sim = closed_queue_sim
    events = 5000 if a.quick else 20000
    grid = {"N": [2, 4, 8, 16], "Z": [5.0, 10.0], "S": [1.0]}
    fixed = {"events": events}
    label = f"pure-Python closed-queue simulation, {events} events/point"
    reps = 2 if a.quick else 8
    n_sim = reps * int(np.prod([len(v) for v in grid.values()]))

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
    model, spec, mlabel = _model()
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
