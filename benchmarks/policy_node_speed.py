"""Cost of one solve of the policy model by each method, on a random design.

Draws ``--points`` points with :func:`mva.params.design` (scrambled Sobol, fixed
seed) over the declared domain of :class:`models.policy.PolicyParams` and times,
per policy, one-point solves by the node chain (``method="node"``, up to
``--node-threads`` compute threads per node: at 9-16 a point takes seconds),
closed-network MVA (``method="mva"``, the strongest baseline: exact MVA on
small lattices, else Bard-Schweitzer), the vectorised fixed point and the
default ``auto`` (the node chain at up to :data:`models.policy.AUTO_NODE_THREADS`
compute threads (16) on >= 3 nodes under the work budget
:data:`models.policy.AUTO_NODE_WORK`, and at one thread on two, MVA elsewhere).
Prints the CPU of a first and a second solve in fresh interpreters (the
compiled SciPy kernels of :mod:`mva._scipy_kernels` against SciPy's public
functions, :func:`first_solves`), mean / median / max milliseconds per solve by
compute threads per node,
the median / p95 / max of every method over the whole design, the cold first
call (a fresh interpreter: imports included) and the time of a 10^4-point grid
by the default method (the vectorised fixed point, with a warning, above
:data:`models.policy.AUTO_GRID_LIMIT` unique points).

``--against REV`` also times the node chain of git revision ``REV``
(``models/_policy_node.py`` as it was there, loaded from ``git show``) on the
same points (at most ``--against-threads`` compute threads, 8 by default, the
decomposition only) and prints both solvers' CPU per band of compute threads,
fixed-point iterations and their largest throughput difference.

Usage::

    python -m benchmarks.policy_node_speed --points 32 --seed 3 --node-threads 16
    python -m benchmarks.policy_node_speed --points 24 --seed 11 --against 039183f
    python -m benchmarks.policy_node_speed --points 64 --seed 5 --against 3d0c838 \
        --against-threads 16 --against-only
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


#: the points of the first-solve table: (label, solve call)
FIRST_SOLVES = (
    ("node Fixed p=3, 4 nodes", "preset('stache', p=3, nodes=4), 'fixed', method='node'"),
    ("node Single, 2 nodes (pair)", "preset('stache', p=2, nodes=2), 'single', method='node'"),
    ("auto Floating p=4, 8 nodes", "preset('stache', p=4, nodes=8), 'floating'"),
    ("auto Fixed p=8, 16 nodes", "preset('null-handler', p=8, nodes=16, U=0.5), 'fixed'"),
)

_FIRST = """
import sys, time, warnings
warnings.simplefilter("ignore")
t0 = time.process_time()
if {public}:
    import mva._scipy_kernels as k
    k._extension = lambda *a: None          # SciPy's public functions (the baseline)
from models.policy import PolicyParams, preset, solve
t1 = time.process_time()
solve({call})
t2 = time.process_time()
solve({call})
t3 = time.process_time()
print((t1 - t0) * 1e3, (t2 - t1) * 1e3, (t3 - t2) * 1e3,
      sum(m.startswith("scipy.sparse") for m in sys.modules))
"""


def first_solves(repeats: int = 3) -> None:
    """CPU of the first and second solve in fresh interpreters: kernels against public SciPy.

    Each case runs ``repeats`` times in a new interpreter with bytecode caching on
    (``PYTHONDONTWRITEBYTECODE`` removed from the environment, as a user's shell has
    it); the medians are printed.  ``public``: the same code with
    :mod:`mva._scipy_kernels` forced onto SciPy's public functions (which import
    ``scipy.sparse``, ``scipy.sparse.linalg``), the baseline a user of SciPy gets.
    """
    import os

    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    print(f"\nfirst solve in a fresh interpreter, CPU ms (median of {repeats} runs): "
          "import of models.policy / first solve / second solve / first - second; "
          "scipy.sparse modules loaded")
    for label, call in FIRST_SOLVES:
        for public in (False, True):
            runs = []
            for _ in range(repeats):
                out = subprocess.run([sys.executable, "-c", _FIRST.format(public=public,
                                                                          call=call)],
                                     capture_output=True, text=True, check=True, env=env)
                runs.append([float(x) for x in out.stdout.split()])
            imp, first, second, mods = np.median(np.array(runs), axis=0)
            tag = "public SciPy" if public else "kernels"
            print(f"  {label:30s} {tag:12s} {imp:6.0f} {first:7.0f} {second:7.0f} "
                  f"{first - second:7.0f}   {int(mods)}")


#: compute-thread bands of the ``--against`` table
BANDS = ((1, 1), (2, 4), (5, 8), (9, 16))


def against(rev: str, d: Any, points: int, max_threads: int = 8) -> None:
    """Time the node chain of git revision ``rev`` and the current one on the same points.

    CPU seconds (``time.process_time``; the wall time on the next line) of
    :func:`models._policy_node.solve_point` at
    most :data:`models.policy.AUTO_NODE_MAX_ITER` iterations (as ``auto`` runs it), the
    current one also under ``auto``'s work budget :data:`models.policy.AUTO_NODE_WORK`;
    median / p95 / max per band of compute threads (at most ``max_threads``), the
    fixed-point iterations, and the largest throughput difference at the points both
    converged (at most 8 threads, where the results must not drift, and at 9-16).
    """
    import importlib.util
    import inspect
    import os
    import tempfile

    import models._policy_node as new
    from models.policy import (AUTO_NODE_MAX_ITER, AUTO_NODE_WORK, PolicyParams, _arrays,
                               _unique_points)

    src = subprocess.run(["git", "show", f"{rev}:models/_policy_node.py"], capture_output=True,
                         text=True, check=True).stdout
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "old_policy_node.py")
        with open(path, "w") as fh:
            fh.write(src)
        spec = importlib.util.spec_from_file_location("old_policy_node", path)
        assert spec is not None and spec.loader is not None
        old = importlib.util.module_from_spec(spec)
        sys.modules["old_policy_node"] = old       # dataclasses look their module up
        spec.loader.exec_module(old)
    budget = {"old": {}, "new": {}}
    if "max_work" in inspect.signature(old.solve_point).parameters:
        budget["old"] = {"max_work": AUTO_NODE_WORK}
    budget["new"] = {"max_work": AUTO_NODE_WORK}
    rows: list[dict[str, Any]] = []
    for i in range(points):
        kw = {k: (int(d[k][i]) if k in ("p", "nodes") else float(d[k][i])) for k in FIELDS}
        for pol in ("fixed", "floating", "single"):
            n_c = {"fixed": kw["p"] - 1, "floating": kw["p"], "single": 1}[pol]
            if (pol == "fixed" and kw["p"] < 2) or n_c > max_threads or kw["nodes"] == 2:
                continue
            names, uniq, _ = _unique_points(_arrays(PolicyParams(**kw), pol))
            v = {k: float(x) for k, x in zip(names, uniq[0])}
            row: dict[str, Any] = {"n_c": n_c}
            for lab, mod in (("old", old), ("new", new)):
                t, w = time.process_time(), time.perf_counter()
                r = mod.solve_point(v, pol, tol=1e-9, max_iter=AUTO_NODE_MAX_ITER, **budget[lab])
                row[lab] = time.process_time() - t
                row[lab + "_wall"] = time.perf_counter() - w
                row[lab + "_it"], row[lab + "_conv"] = int(r["it"]), bool(r["conv"])
                row[lab + "_X"] = r["X"]
                row[lab + "_over"] = bool(r.get("over_budget", False))
            rows.append(row)
    print(f"\nnode chain of {rev} against the current one, same points (decomposition, at most "
          f"{AUTO_NODE_MAX_ITER} iterations; current under the work budget {AUTO_NODE_WORK:.0e}"
          f"{'; ' + rev + ' too' if budget['old'] else ''}): CPU ms per point, median / p95 / max")
    print(f"  {'n_c':>6s} {'n':>4s} {rev[:10]:>26s} {'current':>26s}  iterations old/new (median, "
          "max)  unconverged old/new  over budget  max |dX/X| (both converged)")
    for lo, hi in BANDS + ((1, 16),):
        rs = [r for r in rows if lo <= r["n_c"] <= hi]
        if not rs:
            continue
        cells = []
        for lab in ("old", "new"):
            ms = np.array([r[lab] for r in rs]) * 1e3
            cells.append(f"{np.median(ms):8.0f} {np.percentile(ms, 95):8.0f} {ms.max():8.0f}")
        it = {lab: [r[lab + "_it"] for r in rs] for lab in ("old", "new")}
        both = [r for r in rs if r["old_conv"] and r["new_conv"]]
        dX = max((abs(r["new_X"] / r["old_X"] - 1.0) for r in both), default=0.0)
        wall = [np.array([r[lab + "_wall"] for r in rs]) * 1e3 for lab in ("old", "new")]
        print(f"  {f'{lo}-{hi}':>6s} {len(rs):4d} {cells[0]} {cells[1]}  "
              f"{np.median(it['old']):4.0f} {max(it['old']):4d} / {np.median(it['new']):4.0f} "
              f"{max(it['new']):4d}  {sum(not r['old_conv'] for r in rs):6d} / "
              f"{sum(not r['new_conv'] for r in rs):3d}  {sum(r['new_over'] for r in rs):6d}  "
              f"{dX:9.1e}")
        print(f"  {'':>6s} {'wall':>4s} " + " ".join(
            f"{np.median(x):8.0f} {np.percentile(x, 95):8.0f} {x.max():8.0f}" for x in wall))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--points", type=int, default=32)
    ap.add_argument("--seed", type=int, default=3)
    ap.add_argument("--against", default=None, help="git revision of an earlier node chain")
    ap.add_argument("--node-threads", type=int, default=8,
                    help="most compute threads per node timed by method='node'")
    ap.add_argument("--against-threads", type=int, default=8,
                    help="most compute threads per node of the --against comparison")
    ap.add_argument("--against-only", action="store_true",
                    help="only the --against comparison (no first-solve, method and grid tables)")
    a = ap.parse_args()
    from models.policy import PolicyParams, preset, solve
    from mva.params import design

    if a.against_only:
        against(a.against, design(PolicyParams, a.points, seed=a.seed), a.points,
                a.against_threads)
        return
    first_solves()
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
    if a.against:
        against(a.against, d, a.points, a.against_threads)
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
