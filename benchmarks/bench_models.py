"""Speed of the INI thesis model (and LoPC) on a 10^6-point grid.

Run:  python benchmarks/bench_models.py [--points 1000000] [--sample 5000]

Prints, in one run:

* the one-time cost of the symbolic reduction (SymPy elimination + lambdify),
* points/s of ``models.ini.solve(method="thesis")`` on a 10^6-point grid,
  both as an open mesh (parameters broadcast against each other) and as flat,
  fully materialised parameter arrays,
* points/s of a per-point ``scipy.optimize.brentq`` loop on the same ten
  equations (6.1-6.10), timed on a random subsample of the grid and
  extrapolated linearly to the whole grid (stated in the output),
* the largest relative difference between the two on the subsample,
* the same grid timing for the LoPC ``"lopc"`` method.

``--memory`` instead runs, each in a fresh process, ``ini.solve(method="thesis")``
and ``lopc.solve(method="lopc")`` on open-mesh grids of ``--memory-points``
points and prints the solve time, points/s and the peak RSS
(``resource.getrusage``); ``--root`` points it at another checkout for a
before/after comparison.  The closed forms are evaluated in chunks
(:mod:`mva._chunks`), so the peak is the outputs plus a few MB; the INI
thesis result stores five per-point arrays and derives the others when read
(:class:`mva.results.Derived`), and the accuracy warning is looked up in
chunks.  Issue #19 targets for 10^7 INI points: peak <= 1 GB, >= 10^6 points/s.

Everything runs on one core: NumPy's element-wise kernels are single-threaded,
and the BLAS thread pools are pinned to one thread below.
"""

from __future__ import annotations

import argparse
import math
import os
import sys
import time

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import numpy as np  # noqa: E402


def best_of(fn, repeat: int):
    """(best wall time over ``repeat`` calls of ``fn``, the last call's result)."""
    best, out = math.inf, None
    for _ in range(max(1, repeat)):
        t = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - t)
    return best, out


def brentq_point(N: float, W: float, o: float, l: float, O: float, L: float) -> float:
    """R from the ten published equations by scipy's brentq (one point)."""
    from scipy.optimize import brentq

    def f(R: float) -> float:
        lam = 1.0 / R                                   # 6.2
        U_q = o / R                                     # 6.10
        R_q = (o + o * lam * o) / (1.0 - o * lam - (o * lam) ** 2)   # 6.3, 6.4, 6.6, 6.7
        R_y = o * (1.0 + lam * R_q)
        Q_q = lam * R_q
        R_o = O / (1.0 - 4.0 * N * lam * O)             # 6.5, 6.8
        R_w = (W + o * Q_q) / (1.0 - U_q)               # 6.9
        return R_w + 2 * l + R_q + 2 * L + 4 * R_o + R_y - R   # 6.1

    lo = max(4.0 * N * O, o * (1 + math.sqrt(5)) / 2) * (1 + 1e-12) + 1e-9
    return brentq(f, lo, 1e13, xtol=1e-300, rtol=1e-13, maxiter=500)


_PEAK = """
import resource, sys, time
import numpy as np
from models import ini, lopc
n = {points}
a = max(1, round(n ** (1 / 3)))
W = np.linspace(1000.0, 50000.0, n // (a * a))[:, None, None]
o = np.linspace(10.0, 1000.0, a)[None, :, None]
O = np.linspace(100.0, 3000.0, a)
model = {model!r}
if model == "ini":    # warm: generated code loaded, caches filled (a 1-point solve)
    ini.solve(ini.INIParams(N=4, W=1000.0, o=10.0, O=100.0), method={method!r})
else:
    lopc.solve(lopc.LoPCParams(P=16, W=1000.0, o=10.0, L=10.0), method={method!r})
base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
t, c = time.perf_counter(), time.process_time()
if model == "ini":
    r = ini.solve(ini.INIParams(N=4, W=W, o=o, O=O), method={method!r})
else:
    r = lopc.solve(lopc.LoPCParams(P=16, W=W, o=o, L=O / 10), method={method!r})
dt, dc = time.perf_counter() - t, time.process_time() - c
assert np.all(r.converged)
size = np.size(r.R)
print(size, dt, dc, base / 1024, resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024)
"""


def peak_memory(model: str, method: str, points: int, root: str
                ) -> tuple[int, float, float, float, float]:
    """(grid points, solve wall s, solve CPU s, RSS before, peak RSS in MiB) of one solve
    in a fresh process."""
    import subprocess

    out = subprocess.run([sys.executable, "-c", _PEAK.format(points=points, model=model,
                                                             method=method)],
                         cwd=root, capture_output=True, text=True, check=True)
    n, dt, dc, base, peak = out.stdout.split()
    return int(n), float(dt), float(dc), float(base), float(peak)


def memory_main(args: argparse.Namespace) -> int:
    """Peak RSS and points/s of the vectorised closed forms on an open-mesh grid.

    Targets of issue #19 for the 10^7-point INI grid: peak <= 1 GB, >= 10^6
    points/s.  Points/s are given per wall second and per CPU second (the
    solve runs on one core; on a shared machine the wall figure also counts
    the time other work held the core -- see the load average).
    """
    root = os.path.abspath(args.root)
    print(f"peak memory (getrusage ru_maxrss, fresh process each), checkout {root}; "
          f"{os.cpu_count()} CPUs, load average "
          f"{' '.join(f'{v:.1f}' for v in os.getloadavg())}")
    print(f"{'model/method':<16}{'points':>12}{'wall s':>8}{'cpu s':>8}{'Mpts/wall-s':>12}"
          f"{'Mpts/cpu-s':>11}{'RSS0 MiB':>10}{'peak MiB':>10}")
    for model, method in (("ini", "thesis"), ("lopc", "lopc")):
        for points in args.memory_points:
            n, dt, dc, base, peak = peak_memory(model, method, points, root)
            print(f"{model + '/' + method:<16}{n:12,}{dt:8.2f}{dc:8.2f}{n / dt / 1e6:12.2f}"
                  f"{n / dc / 1e6:11.2f}{base:10.0f}{peak:10.0f}")
    return 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--memory", action="store_true",
                    help="only the peak-memory runs (issue #19): INI thesis and LoPC lopc "
                         "on open-mesh grids of --memory-points points")
    ap.add_argument("--memory-points", type=int, nargs="+", default=[1_000_000, 10_000_000])
    ap.add_argument("--root", default=os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                                   ".."),
                    help="checkout timed by --memory (e.g. an older commit, for before/after)")
    ap.add_argument("--points", type=int, default=1_000_000)
    ap.add_argument("--sample", type=int, default=5000,
                    help="points timed with the brentq loop (then extrapolated)")
    ap.add_argument("--repeat", type=int, default=3, help="grid timings: best of")
    args = ap.parse_args(argv)
    if args.memory:
        return memory_main(args)

    from models import ini, lopc

    n = args.points
    print(f"INI thesis model (equations 6.1-6.10), grid of {n:,} points, one core")

    t = time.perf_counter()
    ini.solve(N=2.0, W=1.0, o=1.0, O=1.0, method="thesis")   # SymPy reduction + lambdify (cached)
    setup = time.perf_counter() - t
    print(f"  one-time symbolic reduction + lambdify:       {setup:8.3f} s")

    # open mesh: 10 N x 100 W x 100 O x 10 o = 10^6 points (broadcast)
    N = np.linspace(1, 64, 10)[:, None, None, None]
    W = np.linspace(0, 1e5, 100)[None, :, None, None]
    O = np.linspace(100, 5000, 100)[None, None, :, None]
    o = np.linspace(0, 2000, max(1, n // 100_000))[None, None, None, :]
    mesh = dict(N=N, W=W, O=O, o=o, l=50.0, L=200.0)
    size = int(np.broadcast(N, W, O, o).size)
    best, r = best_of(lambda: ini.solve(**mesh, method="thesis"), args.repeat)
    assert np.all(r.converged) and np.shape(r.R) == np.broadcast(N, W, O, o).shape
    print(f"  open-mesh grid ({size:,} points):             {best:8.3f} s  "
          f"= {size / best:12,.0f} points/s")

    rng = np.random.default_rng(12345)
    flat = dict(N=rng.uniform(1, 64, n), W=rng.uniform(0, 1e5, n), o=rng.uniform(0, 2000, n),
                l=rng.uniform(0, 500, n), O=rng.uniform(100, 5000, n),
                L=rng.uniform(0, 2000, n))
    best_flat, rf = best_of(lambda: ini.solve(**flat, method="thesis"), args.repeat)
    assert np.all(rf.converged)
    print(f"  flat random grid ({n:,} points, 6 arrays):  {best_flat:8.3f} s  "
          f"= {n / best_flat:12,.0f} points/s")

    m = min(args.sample, n)
    idx = rng.choice(n, size=m, replace=False)
    t = time.perf_counter()
    ref = np.array([brentq_point(*(float(flat[p][i]) for p in ("N", "W", "o", "l", "O", "L")))
                    for i in idx])
    loop = time.perf_counter() - t
    rate = m / loop
    print(f"  per-point brentq loop: {m:,} points timed in {loop:.3f} s "
          f"= {rate:12,.0f} points/s")
    print(f"    -> extrapolated to the whole grid (linear in points): {n / rate:8.1f} s")
    rel = np.max(np.abs(np.asarray(rf.R)[idx] - ref) / ref)
    print(f"  largest relative difference grid vs brentq on the sample: {rel:.2e}")
    speedup = (n / best_flat) / rate
    print(f"  speed-up of the vectorised grid over the loop: {speedup:8.0f}x"
          f"  (target: whole grid <= 1 s -> {'met' if best_flat <= 1.0 else 'NOT met'} "
          f"for the flat grid, {'met' if best <= 1.0 else 'NOT met'} for the mesh)")

    # LoPC on the same number of points
    lp = dict(P=16, W=rng.uniform(0, 1e5, n), o=rng.uniform(0, 2000, n), L=rng.uniform(0, 2000, n))
    lopc.solve(P=16, W=1.0, o=1.0, L=1.0, method="lopc")
    best_l, rl = best_of(lambda: lopc.solve(**lp, method="lopc"), args.repeat)
    assert np.all(rl.converged)
    print(f"LoPC 'lopc' method, flat random grid ({n:,} points): {best_l:8.3f} s  "
          f"= {n / best_l:12,.0f} points/s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
