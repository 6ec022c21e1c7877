"""INI: the twin and split chains at their full population, and shared queues of up to 8 INIs.

Run ``python -m benchmarks.ini_twin_population [--points 2048] [--seed 31]``.

On two to four clusters with INI service of at most two phases the node method
corrects the INI station's wait by the waiting factor of a chain of the INIs
that starve each other (:func:`models.ini._twin_factor`).  "Before" is the
previous landing's reach of that chain: the factor's chain had at most 32
customers at two clusters and 21 at three or four (beyond, a reduced chain of
16 or 12 customers with its wait scaled), and shared queues of more than four
INIs got no correction.  "After" is the current setting:
:data:`models.ini.PAIR_FULL_POP`, :data:`models.ini.SPLIT_MAX_POP`,
:data:`models.ini.PAIR_CAP_POP`, :data:`models.ini.SPLIT_CAP_POP` and
:data:`models.ini.PAIR_MAX_SERVERS` (the chains of more than
:data:`models._node.GRID_ORDER_MIN` states factorised on a minimum-degree
ordering, which pays for the larger populations).

Two sets of simulator references:

``stored``
    the stored seed-2026 domain references (:mod:`validation.domain`, 512
    points; the limits were chosen on them);
``fresh``
    the points of a fresh scrambled-Sobol design of ``--points`` points
    (:func:`validation.domain.design_points`, ``--seed``) whose INI station the
    change alters, each simulated by :func:`validation.domain.simulate_point`
    (seed ``seed * 100003 + i``).  Held out: not looked at while developing.

Printed, and written to ``benchmarks/results/ini_twin_population_<seed>.json``: per set
the mean / p95 / max / bias of the error of ``R`` (%) before and after, over all
points and over those whose answer changed, the points that moved most, and the
cost per point (ms, median / p95 / max, cold: every chain cache cleared first,
and warm) of the changed points before and after; and the fresh simulations
(``--reuse`` takes them from there instead of simulating again).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import warnings
from typing import Any

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results",
                   "ini_twin_population_{seed}.json")


def previous() -> list[tuple[Any, str, Any]]:
    """The previous landing's limits: ``(module, name, value)``."""
    from models import ini

    return [(ini, "PAIR_FULL_POP", 32), (ini, "SPLIT_MAX_POP", 21), (ini, "PAIR_CAP_POP", 16),
            (ini, "SPLIT_CAP_POP", 12), (ini, "PAIR_MAX_SERVERS", 4)]


def _station(f: dict[str, Any]) -> dict[str, Any]:
    from models.ini import _ini_station

    return _ini_station(f["N"], f["K"], f["clusters"], f["dispatch"], f["O"], f["cs2_O"], f["l"])


def changed_station(f: dict[str, Any]) -> bool:
    """Whether the INI station of the point ``f`` differs between before and after."""
    from benchmarks.ini_revisit import knobs_set

    after = _station(f)
    with knobs_set(previous()):
        before = _station(f)
    return before != after


def _fresh(points: int, seed: int) -> list[dict[str, Any]]:
    from benchmarks.ini_revisit import fresh_rows

    return fresh_rows(points, seed, changed_station)


def compare(name: str, rows: list[dict[str, Any]]) -> dict[str, Any]:
    from benchmarks.ini_revisit import compare as before_after_table

    return before_after_table(name, rows, previous(), moved=10, rel=1e-9)


def main(argv: list[str] | None = None) -> None:
    from benchmarks._stored import parse
    from benchmarks.ini_revisit import _stored

    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    ap.add_argument("--points", type=int, default=2048)
    ap.add_argument("--seed", type=int, default=31)
    ap.add_argument("--reuse", action="store_true",
                    help="take the fresh simulations from the results file of an earlier run "
                         "with the same design (the same seeds give the same values)")
    a = parse(ap, argv)
    warnings.simplefilter("ignore")
    fresh = None
    out = OUT.format(seed=a.seed)
    if a.reuse and os.path.exists(out):
        with open(out) as fh:
            old = json.load(fh)
        if old.get("design") == [a.points, a.seed]:
            fresh = old["fresh_rows"]
    if fresh is None:
        fresh = _fresh(a.points, a.seed)
    res = {"command": "python -m benchmarks.ini_twin_population --points %d --seed %d"
                      % (a.points, a.seed),
           "design": [a.points, a.seed],
           "sets": [compare("stored", _stored()), compare(f"fresh seed {a.seed}", fresh)],
           "fresh_rows": fresh}
    with open(out, "w") as fh:
        json.dump(res, fh, indent=1)
    print(f"written {out}")


if __name__ == "__main__":
    main()
