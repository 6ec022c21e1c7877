"""Speed of the MVA engine, and agreement with LINE (``line-solver``) when installed.

Run::

    python benchmarks/bench_mva.py

For each case it prints our time per solve and, when ``line-solver`` can be
imported, LINE's time per solve of the same algorithm (its ``pfqn_mva`` /
``pfqn_bs`` functions, i.e. the algorithm without LINE's model compilation)
and the largest relative difference between the two results over
throughputs, queue lengths and residence times.  It also times
``python -c "import mva"``.  Targets from the project's issue 2 are shown
next to each figure.  Figures are wall-clock on the machine at hand: best of
several repeats, each long enough to be timed reliably.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from typing import Any, Callable

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

import mva  # noqa: E402
from mva.network import ClosedNetwork  # noqa: E402

TOL = 1e-12  # Schweitzer tolerance for both libraries (results compared at 1e-8)


def per_call(fn: Callable[[], Any], *, min_time: float = 0.2, repeat: int = 5) -> float:
    """Best time per call in seconds (each repeat runs at least ``min_time``)."""
    fn()
    n = 1
    while True:
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        dt = time.perf_counter() - t0
        if dt >= min_time / 4 or n >= 1 << 20:
            break
        n *= 4
    n = max(1, int(n * (min_time / 4) / max(dt, 1e-9)))
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        best = min(best, (time.perf_counter() - t0) / n)
    return best


def fmt_time(t: float) -> str:
    if t < 1e-3:
        return f"{t * 1e6:8.1f} us"
    return f"{t * 1e3:8.3f} ms"


def rel_diff(ours: mva.MVAResult, X: np.ndarray, Q: np.ndarray, R: np.ndarray) -> float:
    """Largest relative difference over X (C,), Q (C, K) and residence R (C, K)."""
    worst = 0.0
    for a, b in ((ours.throughput, X), (ours.queue_length, Q), (ours.residence_time, R)):
        a = np.asarray(a, dtype=float).ravel()
        b = np.asarray(b, dtype=float).ravel()
        scale = np.maximum(np.abs(b), 1e-300)
        mask = (np.abs(a) > 0) | (np.abs(b) > 0)
        if mask.any():
            worst = max(worst, float(np.max(np.abs(a - b)[mask] / scale[mask])))
    return worst


def load_line() -> tuple[Any, str]:
    try:
        from line_solver.api.pfqn.mva import pfqn_bs, pfqn_mva
    except Exception as exc:  # pragma: no cover - depends on the environment
        return None, f"line-solver not usable here ({type(exc).__name__}: {exc})"
    try:
        pfqn_mva(np.array([[1.0]]), np.array([1]), np.array([0.0]))
    except Exception as exc:  # pragma: no cover
        return None, f"line-solver installed but cannot run ({type(exc).__name__}: {exc})"
    import importlib.metadata as md
    try:
        version = md.version("line-solver")
    except md.PackageNotFoundError:  # pragma: no cover
        version = "?"
    return (pfqn_mva, pfqn_bs), f"line-solver {version} (pfqn_mva / pfqn_bs, native Python engine)"


def line_exact(pfqn_mva: Any, net: ClosedNetwork) -> Callable[[], tuple]:
    L = np.ascontiguousarray(net.demands.T)
    N = net.populations.copy()
    Z = net.think_times.copy()

    def run() -> tuple:
        XN, _, QN, _, RN, _, _ = pfqn_mva(L, N, Z)
        return np.asarray(XN).ravel(), np.asarray(QN).T, np.asarray(RN).T
    return run


def line_bs(pfqn_bs: Any, net: ClosedNetwork) -> Callable[[], tuple]:
    L = np.ascontiguousarray(net.demands.T)
    N = net.populations.astype(float)
    Z = net.think_times.copy()

    def run() -> tuple:
        out = pfqn_bs(L, N, Z, tol=TOL, maxiter=1_000_000)
        XN, QN, RN = out[0], out[1], out[3]
        return np.asarray(XN).ravel(), np.asarray(QN).T, np.asarray(RN).T
    return run


def main() -> int:
    rng = np.random.default_rng(20240601)
    cases = [
        ("single class, 3 stations, N=50, exact",
         ClosedNetwork.single_class([1.0, 2.0, 0.5], population=50, think_time=5.0),
         lambda n: mva.exact_mva(n), "exact", 0.2e-3),
        ("single class, 100 stations, N=1000, exact",
         ClosedNetwork.single_class(rng.uniform(0.1, 1.0, 100), population=1000, think_time=20.0),
         lambda n: mva.exact_mva(n), "exact", 20e-3),
        ("two classes 50+50, 3 PS stations, exact",
         ClosedNetwork(demands=[[1.0, 2.0, 0.5], [2.0, 1.0, 0.7]], populations=[50, 50],
                       think_times=[3.0, 1.0]),
         lambda n: mva.exact_mva(n), "exact", 50e-3),
        ("two classes 50+50, 3 PS stations, Schweitzer",
         ClosedNetwork(demands=[[1.0, 2.0, 0.5], [2.0, 1.0, 0.7]], populations=[50, 50],
                       think_times=[3.0, 1.0]),
         lambda n: mva.schweitzer(n, tol=TOL), "bs", 5e-3),
    ]
    line, line_info = load_line()
    print("MVA engine benchmark")
    print(f"python {sys.version.split()[0]}, numpy {np.__version__}, {os.cpu_count()} cpu(s)")
    print(f"reference: {line_info}")
    print()
    hdr = f"{'case':<46} {'ours/solve':>12} {'target':>10} {'ok':>4} {'LINE/solve':>12} {'max rel diff':>13}"
    print(hdr)
    print("-" * len(hdr))
    all_ok = True
    for name, net, ours, kind, target in cases:
        t = per_call(lambda ours=ours, net=net: ours(net))
        ok = t <= target
        all_ok &= ok
        line_t = diff = "-"
        if line is not None:
            runner = line_exact(line[0], net) if kind == "exact" else line_bs(line[1], net)
            try:
                lt = per_call(runner, min_time=0.2, repeat=3)
                X, Q, R = runner()
                d = rel_diff(ours(net), X, Q, R)
                line_t, diff = fmt_time(lt), f"{d:.2e}"
                all_ok &= d <= 1e-8
            except Exception as exc:  # pragma: no cover - depends on LINE
                line_t, diff = "failed", f"{type(exc).__name__}"
        print(f"{name:<46} {fmt_time(t):>12} {fmt_time(target):>10} {'yes' if ok else 'NO':>4} "
              f"{line_t:>12} {diff:>13}")

    # import time of the package (fresh interpreter each time; includes interpreter start-up)
    times = []
    for _ in range(5):
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-c", "import mva"], check=True, cwd=os.path.dirname(HERE))
        times.append(time.perf_counter() - t0)
    t_imp = min(times)
    t_bare = min(_bare_python() for _ in range(3))
    ok = t_imp <= 0.3
    all_ok &= ok
    label = 'python -c "import mva" (wall, incl. start-up)'
    print(f"{label:<46} {fmt_time(t_imp):>12} "
          f"{fmt_time(0.3):>10} {'yes' if ok else 'NO':>4}   (bare interpreter {fmt_time(t_bare).strip()})")
    print()
    print("all targets met" if all_ok else "SOME TARGETS MISSED")
    return 0


def _bare_python() -> float:
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-c", "pass"], check=True)
    return time.perf_counter() - t0


if __name__ == "__main__":
    sys.exit(main())
