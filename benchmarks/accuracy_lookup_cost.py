"""Cost of the accuracy map on a model solve (lookup, lazy figures and the warning check).

Run ``python -m benchmarks.accuracy_lookup_cost``.  Prints, cold (first call, map
read from disk) and warm (best of 3 CPU-time repeats), the LoPC ``solve`` time
on one point and on a 10 000-point grid beside the time of
:func:`models.accuracy.attach` alone (what every ``solve`` adds: attaching the
lazy ``<measure>_expected_error`` and the vectorised warning check), and the
time to compute ``R_expected_error`` on the grid when asked for.  The baseline
is the same ``solve``: the question is what the map adds to it.
"""

from __future__ import annotations

import time
import warnings

import numpy as np


def _best(f, n: int) -> float:
    best = float("inf")
    for _ in range(3):
        t0 = time.process_time()
        for _ in range(n):
            f()
        best = min(best, (time.process_time() - t0) / n)
    return best


def main() -> None:
    warnings.simplefilter("ignore")
    from models import accuracy
    from models.lopc import LoPCParams, solve

    t0 = time.process_time()
    accuracy._lookup_map()
    t1 = time.process_time()
    accuracy.load_map()
    t2 = time.process_time()
    print(f"cold: reading the lookup tables {1e3 * (t1 - t0):.2f} ms (once per process; what "
          f"results read), the whole map {1e3 * (t2 - t1):.2f} ms (reports only)")
    p = LoPCParams(P=16, W=1000, o=100, L=50)
    g = LoPCParams(P=16, W=np.linspace(0, 1e4, 10_000), o=100, L=50)
    r, rg = solve(p), solve(g, method="lopc")
    rows = [("solve, 1 point (auto)", _best(lambda: solve(p), 200)),
            ("attach, 1 point", _best(lambda: accuracy.attach(r, "lopc"), 200)),
            ("solve, 10 000 points (lopc)", _best(lambda: solve(g, method="lopc"), 5)),
            ("attach, 10 000 points (all miss the target)",
             _best(lambda: accuracy.attach(rg, "lopc"), 5)),
            ("R_expected_error, 10 000 points", _best(lambda: rg.R_expected_error, 5))]
    for name, s in rows:
        print(f"warm: {name:45s} {1e3 * s:8.3f} ms")


if __name__ == "__main__":
    main()
