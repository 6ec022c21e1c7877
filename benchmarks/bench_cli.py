"""Wall time of what-if commands and of each model's first ``solve`` after import.

Run:  python benchmarks/bench_cli.py [--runs 5] [--root PATH] [--only NAME]

Prints, in one run:

* the whole-process wall time of ``python -m models lopc ...`` and
  ``python -m models ini ...`` (default method and the published-equation
  method) against ``python -c "import numpy"``, run in turn (A B A B ...) so
  the ratio is taken pair by pair; median over ``--runs``;
* for every model (lopc, ini, policy, pdq, layers, mechanisms, cost), in a
  fresh interpreter each time (cold): the import time of the model module,
  the first call (cold: lazy imports, generated code, caches) and a second
  identical call (warm); medians over ``--runs`` interpreters.

``--root`` runs another checkout (e.g. the previous commit) for a
before/after comparison.  Targets from issue #19: a what-if command
<= 0.3 s and <= 3x ``import numpy``; a first solve <= 50 ms.

Python's bytecode cache: an installed package (``pip install``) has its
``.pyc`` files, but a shell with ``PYTHONDONTWRITEBYTECODE=1`` running a
source checkout compiles every module of the package at every start (about
40 ms of CPU for a what-if command).  The whole commands are therefore timed
twice: with a bytecode cache (``PYTHONPYCACHEPREFIX`` set to a temporary
directory, filled by the untimed warm-up run; the installed condition, and
the one the targets are judged by) and without one (every module of this
checkout compiled at each start, numpy's own ``.pyc`` files still read).  The
probes of the first solve run with the cache.

Every figure is given as wall time and as CPU time (user + system, of the
child process for whole commands, ``time.process_time`` inside the probe):
on a shared machine the wall time of a 0.2 s command mostly measures the
other work (the load average is printed), the CPU time what the command
itself costs.  Ratios are taken pair by pair (A B A B ...) in the same run.

The first solve's CPU time is given twice: the whole process's
(``time.process_time``) and the calling thread's (``time.thread_time``,
"main").  They differ by the spin of OpenBLAS's worker threads: after a
threaded BLAS or LAPACK call they busy-wait for about 0.1 s before they
sleep, on another core, so the process is charged CPU time that does not
delay the result (policy_cost: 20-35 ms; none with
``OPENBLAS_THREAD_TIMEOUT=4`` or ``OPENBLAS_NUM_THREADS=1`` set).  The
target is judged by the process's CPU time where that meets it, else by the
calling thread's, and the table says which.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))

COMMANDS = {
    "lopc (auto)": ["-m", "models", "lopc", "--P", "16", "--W", "1000", "--o", "100",
                    "--L", "50"],
    "lopc --method lopc": ["-m", "models", "lopc", "--P", "16", "--W", "1000", "--o", "100",
                           "--L", "50", "--method", "lopc"],
    "ini (auto)": ["-m", "models", "ini", "--N", "4", "--W", "41789", "--o", "742",
                   "--O", "2336"],
    "ini --method thesis": ["-m", "models", "ini", "--N", "4", "--W", "41789", "--o", "742",
                            "--O", "2336", "--method", "thesis"],
}

#: (module, setup statement, the call timed cold then warm)
CALLS = {
    "lopc (auto)": ("models.lopc", "p = m.LoPCParams(P=16, W=1000.0, o=100.0, L=50.0)",
                    "m.solve(p)"),
    "lopc method=lopc": ("models.lopc", "p = m.LoPCParams(P=16, W=1000.0, o=100.0, L=50.0)",
                         "m.solve(p, method='lopc')"),
    "ini (auto)": ("models.ini", "p = m.INIParams(N=4, W=41789.0, o=742.0, O=2336.0)",
                   "m.solve(p)"),
    "ini method=thesis": ("models.ini", "p = m.INIParams(N=4, W=41789.0, o=742.0, O=2336.0)",
                          "m.solve(p, method='thesis')"),
    "policy fixed": ("models.policy", "p = m.PolicyParams(p=2, U=0.3)", "m.solve(p, 'fixed')"),
    "policy floating": ("models.policy", "p = m.PolicyParams(p=2, U=0.3)",
                        "m.solve(p, 'floating')"),
    "pdq shared": ("models.pdq", "p = m.PDQParams(k=4, load=0.6, S=100, n_keys=256)",
                   "m.solve(p, 'shared')"),
    "layers fetch_contention": ("models.layers", "p = None",
                                "m.fetch_contention('A', 'O', 5e-5, kind='block', "
                                "block_size=64)"),
    "mechanisms shared_memory": ("models.mechanisms", "p = None",
                                 "m.solve(mechanism='shared_memory')"),
    "cost policy_cost": ("models.cost", "from models.policy import preset; "
                         "p = preset('null-handler', U=0.3)", "m.policy_cost(p)"),
}

_PROBE = """
import time, json, importlib, sys, warnings
warnings.simplefilter("ignore")
c = time.process_time
tc = time.thread_time
t0, u0 = time.perf_counter(), c()
import numpy
t1, u1 = time.perf_counter(), c()
m = importlib.import_module({mod!r})
t2, u2 = time.perf_counter(), c()
{setup}
t3, u3, v3 = time.perf_counter(), c(), tc()
{call}
t4, u4, v4 = time.perf_counter(), c(), tc()
{call}
t5, u5 = time.perf_counter(), c()
heavy = [k for k in ("scipy.sparse", "scipy.optimize", "scipy.special", "scipy.stats", "sympy")
         if k in sys.modules]
print(json.dumps({{"numpy": t1 - t0, "import": t2 - t1, "cold": t4 - t3, "warm": t5 - t4,
                  "import_cpu": u2 - u1, "cold_cpu": u4 - u3, "warm_cpu": u5 - u4,
                  "cold_thread": v4 - v3,
                  "heavy": heavy}}))
"""


def child_env(cache: str | None) -> dict[str, str]:
    """Environment of a timed child: with the bytecode cache directory ``cache``, or none."""
    env = dict(os.environ)
    env.pop("PYTHONPYCACHEPREFIX", None)
    if cache is None:
        env["PYTHONDONTWRITEBYTECODE"] = "1"
    else:
        env.pop("PYTHONDONTWRITEBYTECODE", None)
        env["PYTHONPYCACHEPREFIX"] = cache
    return env


def wall(argv: list[str], cwd: str, env: dict[str, str] | None = None) -> tuple[float, float]:
    """Whole-process (wall, CPU) seconds of ``python argv`` (output discarded)."""
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t = time.perf_counter()
    subprocess.run([sys.executable, *argv], cwd=cwd, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL, check=True, env=env)
    w = time.perf_counter() - t
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    return w, (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--root", default=os.path.join(HERE, ".."),
                    help="checkout whose models/ and mva/ are timed")
    ap.add_argument("--only", default="",
                    help="time only the commands and calls whose name contains this text "
                         "(e.g. 'cost'); a section with none is skipped")
    ns = ap.parse_args()
    commands = {k: v for k, v in COMMANDS.items() if ns.only in k}
    calls = {k: v for k, v in CALLS.items() if ns.only in k}
    root = os.path.abspath(ns.root)
    med = statistics.median
    print(f"checkout: {root}; python {sys.version.split()[0]}; runs: {ns.runs} (medians); "
          f"{os.cpu_count()} CPUs, load average "
          f"{' '.join(f'{v:.1f}' for v in os.getloadavg())}\n")

    cache = tempfile.mkdtemp(prefix="bench_cli_pyc_")
    numpy_cmd = ["-c", "import numpy"]
    for label, env in (("with a bytecode cache (as installed)", child_env(cache)),
                       ("without a bytecode cache (this checkout compiled at each start)",
                        child_env(None))) if commands else ():
        print(f"whole command (A) against python -c 'import numpy' (B), run in turn, {label}; "
              "seconds")
        print(f"{'command':<22}{'A wall':>8}{'B wall':>8}{'A/B':>6}{'A cpu':>8}{'B cpu':>8}"
              f"{'A/B':>6}   target: A <= 0.3 s and A/B <= 3")
        wall(numpy_cmd, root, env)    # warm-up, not counted (fills the cache)
        for name, argv in commands.items():
            wall(argv, root, env)     # warm-up, not counted (file cache, bytecode cache)
            a, b = [], []
            for _ in range(ns.runs):
                a.append(wall(argv, root, env))
                b.append(wall(numpy_cmd, root, env))
            rw = med(x[0] / y[0] for x, y in zip(a, b))
            rc = med(x[1] / y[1] for x, y in zip(a, b))
            aw, bw, ac, bc = (med(v[i] for v in vs) for vs, i in ((a, 0), (b, 0), (a, 1), (b, 1)))
            verdict = ("met (CPU)" if ac <= 0.3 and rc <= 3 else "NOT met (CPU)") + \
                ("; met (wall)" if aw <= 0.3 and rw <= 3 else "; NOT met (wall)")
            print(f"{name:<22}{aw:8.3f}{bw:8.3f}{rw:6.2f}{ac:8.3f}{bc:8.3f}{rc:6.2f}   {verdict}")
        print()

    if not calls:
        shutil.rmtree(cache, ignore_errors=True)
        return
    print("first solve after import, a fresh interpreter each run (cold = first call, "
          "warm = the same call again); ms")
    print(f"{'model call':<26}{'import':>8}{'cold':>8}{'cold':>8}{'cold':>8}{'warm':>8}  "
          f"target cold <= 50 ms   heavy modules loaded")
    print(f"{'':<26}{'cpu':>8}{'wall':>8}{'cpu':>8}{'main':>8}{'cpu':>8}")
    for name, (mod, setup, call) in calls.items():
        code = _PROBE.format(mod=mod, setup=setup, call=call)
        rows = []
        subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True, check=True,
                       env=child_env(cache))      # warm-up, not counted (bytecode cache)
        for _ in range(ns.runs):
            out = subprocess.run([sys.executable, "-c", code], cwd=root, capture_output=True,
                                 text=True, check=True, env=child_env(cache))
            rows.append(json.loads(out.stdout.strip().splitlines()[-1]))
        m = {k: 1e3 * med(r[k] for r in rows)
             for k in ("import_cpu", "cold", "cold_cpu", "cold_thread", "warm_cpu")}
        verdict = ("met (CPU)" if m["cold_cpu"] <= 50 else
                   "met (main thread)" if m["cold_thread"] <= 50 else "NOT met")
        print(f"{name:<26}{m['import_cpu']:8.1f}{m['cold']:8.1f}{m['cold_cpu']:8.1f}"
              f"{m['cold_thread']:8.1f}{m['warm_cpu']:8.2f}  {verdict:<20} "
              f"{','.join(rows[-1]['heavy']) or '-'}")
    shutil.rmtree(cache, ignore_errors=True)


if __name__ == "__main__":
    main()
