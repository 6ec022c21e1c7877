"""Cost of the LoPC and INI methods on large machines, against the engine on the full network.

Run:  python benchmarks/bench_lopc_ini_methods.py [--engine-max-p 32]

Prints, in one run, cold (first call, caches empty) and warm (best of three)
wall times of

* LoPC ``method="exact"`` (exact MVA by symmetry, O(P)) against the strongest
  baseline a user of :mod:`mva` would write: :func:`mva.linearizer` and
  :func:`mva.exact_mva` on the full network of ``P`` chains (the same
  equations; exact only where ``2**P`` population vectors fit);
* LoPC ``method="node"`` (the default) and ``"lopc"`` (published equations);
* INI ``method="node"`` (the default) and ``"thesis"`` up to 64 clusters,
  against :func:`mva.schweitzer` on the full network where it is feasible.
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


def timed(fn, repeat: int = 3) -> tuple[float, float]:
    """(cold, warm) wall times in ms: the first call, then the best of ``repeat``."""
    t = time.perf_counter()
    fn()
    cold = time.perf_counter() - t
    warm = math.inf
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        warm = min(warm, time.perf_counter() - t)
    return 1e3 * cold, 1e3 * warm


def main() -> None:
    import mva
    from models import ini, lopc, _node

    ap = argparse.ArgumentParser()
    ap.add_argument("--engine-max-p", type=int, default=32,
                    help="largest P for the engine baselines (Linearizer at P=64 takes ~30 s)")
    a = ap.parse_args()
    kw = dict(W=1000.0, o=100.0, L=50.0)
    print("LoPC, W=1000, o=100, L=50, cs2=1: ms (cold / warm)")
    print(f"{'P':>6} {'exact(sym)':>16} {'engine exact':>16} {'engine linearizer':>18} "
          f"{'node':>16} {'lopc eqs':>16}")
    for P in (8, 16, 32, 64, 256, 1024):
        row = [f"{P:6d}"]
        row.append("%7.2f / %6.2f" % timed(lambda: lopc.solve(P=P, method="exact", **kw)))
        if P <= 12:
            net = lopc._lopc_network(P, 1000.0, 100.0, 50.0, 1.0)
            row.append("%7.1f / %6.1f" % timed(lambda: mva.exact_mva(net), repeat=1))
        else:
            row.append(f"{'(2**P vectors)':>16}")
        if P <= a.engine_max_p:
            net = lopc._lopc_network(P, 1000.0, 100.0, 50.0, 1.0)
            row.append("%8.0f / %7.0f" % timed(lambda: mva.linearizer(net, tol=1e-11), repeat=1))
        else:
            row.append(f"{'(skipped)':>18}")

        def node() -> None:
            _node._chain.cache_clear()
            lopc.solve(P=P, method="node", **kw)
        row.append("%7.1f / %6.1f" % timed(node))
        row.append("%7.2f / %6.2f" % timed(lambda: lopc.solve(P=P, method="lopc", **kw)))
        print(" ".join(row))
    print()
    print("INI, Figure 6-3 workload, N=4 PEs per INI, K=1, static: ms (cold / warm)")
    print(f"{'clusters':>8} {'threads':>8} {'node':>16} {'thesis':>16} {'engine schweitzer':>18}")
    for C in (2, 4, 16, 64):
        p = ini.INIParams(N=4, clusters=C, **ini.FIGURE_6_3)

        def node_ini() -> None:
            _node._chain.cache_clear()
            _node._station_structure.cache_clear()
            ini.solve(p, method="node")
        row = [f"{C:8d}", f"{4 * C:8d}", "%7.1f / %6.1f" % timed(node_ini),
               "%7.2f / %6.2f" % timed(lambda: ini.solve(p, method="thesis"))]
        if 4 * C <= a.engine_max_p:
            row.append("%8.0f / %7.0f" % timed(lambda: ini.solve(p, method="schweitzer"),
                                               repeat=1))
        else:
            row.append(f"{'(skipped)':>18}")
        print(" ".join(row))


if __name__ == "__main__":
    main()
