"""Cost of one solve of the policy model by each method, on a random design.

Draws ``--points`` points with :func:`mva.params.design` (scrambled Sobol, fixed
seed) over the declared domain of :class:`models.policy.PolicyParams` and times,
per policy, one-point solves by the node chain (``method="node"``, up to
``--node-threads`` compute threads per node: at 9-16 a point can take minutes),
closed-network MVA (``method="mva"``, the strongest baseline: exact MVA on
small lattices, else Bard-Schweitzer), the vectorised fixed point and the
default ``auto`` (the node chain at up to :data:`models.policy.AUTO_NODE_THREADS`
compute threads on >= 3 nodes and at one thread on two, MVA elsewhere).
Prints mean / median / max milliseconds per solve by compute threads per node,
the median / p95 / max of every method over the whole design, the cold first
call (a fresh interpreter: imports included) and the time of a 10^4-point grid
by the default method (the vectorised fixed point, with a warning, above
:data:`models.policy.AUTO_GRID_LIMIT` unique points).

Usage::

    python -m benchmarks.policy_node_speed --points 32 --seed 3 --node-threads 16
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
import warnings
from typing import Any

import numpy as np

FIELDS = ("p", "nodes", "U", "o_req", "o_reply", "o_resp", "L", "O_int", "o_direct",
          "o_indirect", "t_transfer", "handler_cs2")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--points", type=int, default=32)
    ap.add_argument("--seed", type=int, default=3)
    ap.add_argument("--node-threads", type=int, default=8,
                    help="most compute threads per node timed by method='node'")
    a = ap.parse_args()
    from models.policy import PolicyParams, preset, solve
    from mva.params import design

    cold = subprocess.run(
        [sys.executable, "-c", "import time; t=time.perf_counter(); "
         "from models.policy import preset, solve; "
         "solve(preset('stache', p=4, nodes=8), 'floating', method='node'); "
         "print(time.perf_counter()-t)"], capture_output=True, text=True, check=True)
    print(f"cold first node solve (fresh interpreter, imports included): "
          f"{float(cold.stdout.strip()) * 1e3:.0f} ms")
    d = design(PolicyParams, a.points, seed=a.seed)
    rows = []
    for i in range(a.points):
        kw = {k: (int(d[k][i]) if k in ("p", "nodes") else float(d[k][i])) for k in FIELDS}
        prm = PolicyParams(**kw)
        for pol in ("fixed", "floating", "single"):
            if pol == "fixed" and kw["p"] < 2:
                continue
            n_c = {"fixed": kw["p"] - 1, "floating": kw["p"], "single": 1}[pol]
            row: dict[str, Any] = {"policy": pol, "n_c": n_c}
            for m in ("node", "mva", "fixed-point", "auto"):
                if m == "node" and n_c > a.node_threads:
                    continue
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    t = time.perf_counter()
                    solve(prm, pol, method=m)
                    row[m] = time.perf_counter() - t
            rows.append(row)
    print(f"\nwarm one-point solves, ms (design of {a.points} points, seed {a.seed})")
    print(f"{'policy':9s} {'n_c':>6s} {'n':>3s} " + " ".join(
        f"{m + ' mean':>16s} {'med':>6s} {'max':>6s}" for m in ("node", "mva", "fixed-point",
                                                                "auto")))
    for pol in ("fixed", "floating", "single"):
        for lo, hi in ((1, 1), (2, 2), (3, 4), (5, 8), (9, 16)):
            rs = [r for r in rows if r["policy"] == pol and lo <= r["n_c"] <= hi]
            if not rs:
                continue
            cells = []
            for m in ("node", "mva", "fixed-point", "auto"):
                ms = np.array([r[m] for r in rs if m in r]) * 1e3
                cells.append(f"{ms.mean():16.1f} {np.median(ms):6.1f} {ms.max():6.1f}" if ms.size
                             else f"{'-':>16s} {'-':>6s} {'-':>6s}")
            print(f"{pol:9s} {f'{lo}-{hi}':>6s} {len(rs):3d} " + " ".join(cells))
    print("\nover the whole design, ms per point: median / p95 / max")
    for m in ("node", "mva", "fixed-point", "auto"):
        ms = np.array([r[m] for r in rows if m in r]) * 1e3
        print(f"  {m:12s} {np.median(ms):8.1f} {np.percentile(ms, 95):8.1f} {ms.max():8.1f}"
              f"  ({ms.size} solves)")
    U = np.linspace(0.02, 0.95, 100)[:, None]
    O = np.linspace(0.0, 20_000.0, 100)[None, :]
    prm = preset("stache", U=U, O_int=O, p=4, nodes=8)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t = time.perf_counter()
        r = solve(prm, "floating")
        dt = time.perf_counter() - t
    print(f"\n10^4-point grid (U x O_int, Floating, p=4, 8 nodes), default method "
          f"({r.method}): {dt:.2f} s")


if __name__ == "__main__":
    main()
