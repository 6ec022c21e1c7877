"""The INI revisit station (one home thread per INI): accuracy and cost, before and after.

Run ``python -m benchmarks.ini_revisit [--points 1024] [--seed 7]``.

The node method (``method="auto"``) gives an INI with one home thread (one PE
per INI: ``N = 1`` with static dispatch, or ``N = K = 1``) the revisit
station (:func:`models._node.revisit_station_residence`) where a thread's two
visits are close (:data:`models.ini.REVISIT_MAX_GAP`,
:data:`models.ini.REVISIT_MAX_POOL`); before, the one-population
finite-source station.  "Before" here is the same code with
:data:`models._node.REVISIT_MAX_HOME` set to 0, which restores the old
station exactly.

Two sets of simulator references:

``stored``
    the stored seed-2026 domain references (:mod:`validation.domain`, 512
    points; the revisit station was developed on them);
``fresh``
    a fresh scrambled-Sobol design of ``--points`` points of the declared
    domain (:func:`validation.domain.design_points`, ``--seed``), of which
    only the points with one home thread per INI (and more than three PEs:
    smaller machines are the whole-machine chain's) are simulated
    (:func:`validation.domain.simulate_point`, seed ``seed * 100003 + i``).
    Held out: not looked at while developing.

Printed, and written to ``benchmarks/results/ini_revisit.json``: per set the
mean / p95 / max / bias of the error of ``R`` (%), before and after, over all
points and over those whose answer changed; the points that moved most; and
the cost per point (ms, median / p95 / max, cold: every chain cache cleared
first, and warm) of the changed points before and after.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import sys
import time
import warnings
from typing import Any, Iterator

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results", "ini_revisit.json")


def _one_home_thread(f: dict[str, Any]) -> bool:
    from models.ini import _ini_station

    st = _ini_station(f["N"], f["K"], f["clusters"], f["dispatch"], f["O"], f["cs2_O"], f["l"])
    return bool(st.get("revisit")) and f["N"] * f["K"] * f["clusters"] > 3


def _fresh(points: int, seed: int) -> list[dict[str, Any]]:
    return fresh_rows(points, seed, _one_home_thread)


def fresh_rows(points: int, seed: int, select: Any) -> list[dict[str, Any]]:
    """The points of the fresh INI design (``points``, ``seed``) whose fields ``select``
    accepts, each simulated (seed ``seed * 100003 + i``): ``i, fields, R, saturated``."""
    from validation.domain import design_points, simulate_point

    from benchmarks._stored import steps
    from mva.progress import is_interactive

    pts = [p for p in design_points("ini", points, seed)
           if select({k: v for k, v in p.items() if k not in ("variant", "i")})]
    rows = []
    for k, p in enumerate(steps(pts, f"simulating fresh seed {seed}"), 1):
        f = {key: v for key, v in p.items() if key not in ("variant", "i")}
        d = simulate_point(family="ini", seed=seed * 100003 + p["i"], **f)
        rows.append({"i": p["i"], "fields": f, "R": d.get("R"),
                     "saturated": bool(d.get("saturated"))})
        if not is_interactive():       # (a terminal shows the bar instead)
            print(f"fresh: simulated {k} / {len(pts)} (point {p['i']})", flush=True)
    return rows


def _stored() -> list[dict[str, Any]]:
    from validation.domain import _fields_of_row, load_references

    return [{"i": int(r["i"]), "fields": _fields_of_row("ini", r), "R": r.get("R"),
             "saturated": bool(r.get("saturated"))}
            for r in load_references("ini")["rows"] if not r.get("error")]


def _clear() -> None:
    from models import _node

    for name in ("_chain", "_station_structure", "_pair_structure", "_split_structure",
                 "_revisit_structure", "_full_structure"):
        getattr(_node, name).cache_clear()
    _node._CAP_HINT.clear()
    _node._REVISIT_HINT.clear()


def _solve(rows: list[dict[str, Any]]) -> tuple[Any, Any, Any]:
    import numpy as np

    from models.ini import INIParams, solve

    R, cold, warm = [], [], []
    for r in rows:
        p = INIParams(**r["fields"])
        _clear()
        t = time.perf_counter()
        R.append(float(solve(p).R))
        cold.append(1e3 * (time.perf_counter() - t))
        t = time.perf_counter()
        solve(p)
        warm.append(1e3 * (time.perf_counter() - t))
    return np.array(R), np.array(cold), np.array(warm)


def _stats(e: Any) -> dict[str, float]:
    import numpy as np

    a = np.abs(e)
    return {"n": int(a.size), "mean": round(float(a.mean()), 3),
            "p95": round(float(np.percentile(a, 95)), 3), "max": round(float(a.max()), 3),
            "bias": round(float(e.mean()), 3)}


def _ms(t: Any) -> dict[str, float]:
    import numpy as np

    return {"median": round(float(np.median(t)), 1), "p95": round(float(np.percentile(t, 95)), 1),
            "max": round(float(t.max()), 1)}


def before_after(rows: list[dict[str, Any]], module: Any, knob: str,
                 old: Any) -> tuple[Any, ...]:
    """``R`` error (%) and cost of ``rows`` now and with ``module.knob = old`` (before):
    ``(before, after, errors before, errors after, cold before, warm before, cold after,
    warm after)``."""
    return before_after_knobs(rows, [(module, knob, old)])


@contextlib.contextmanager
def knobs_set(olds: list[tuple[Any, str, Any]]) -> Iterator[None]:
    """Within the block, ``module.knob = old`` for each ``(module, knob, old)``."""
    keep = [(m, k, getattr(m, k)) for m, k, _ in olds]
    try:
        for m, k, v in olds:
            setattr(m, k, v)
        yield
    finally:
        for m, k, v in keep:
            setattr(m, k, v)


def before_after_knobs(rows: list[dict[str, Any]],
                       olds: list[tuple[Any, str, Any]]) -> tuple[Any, ...]:
    """As :func:`before_after`, "before" with every ``(module, knob, old)`` of ``olds`` set."""
    import numpy as np

    sim = np.array([r["R"] for r in rows], dtype=float)
    after, cold_a, warm_a = _solve(rows)
    with knobs_set(olds):
        before, cold_b, warm_b = _solve(rows)
    return (before, after, 100 * (before / sim - 1), 100 * (after / sim - 1), cold_b, warm_b,
            cold_a, warm_a)


def compare(name: str, rows: list[dict[str, Any]],
            olds: list[tuple[Any, str, Any]] | None = None, *, moved: int = 8,
            rel: float = 1e-12) -> dict[str, Any]:
    """Errors of ``R`` (all points, the changed ones), cost of the changed ones and the
    ``moved`` points that moved most, before (``olds``, :func:`before_after_knobs`;
    default the one-population station, ``REVISIT_MAX_HOME = 0``) and after; a point
    changed where its ``R`` moved by more than ``rel``."""
    import numpy as np

    from models import _node

    rows = [r for r in rows if not r["saturated"] and r["R"]]
    before, after, eb, ea, cold_b, warm_b, cold_a, warm_a = before_after_knobs(
        rows, olds if olds is not None else [(_node, "REVISIT_MAX_HOME", 0)])
    used = np.abs(after - before) > rel * np.abs(before)
    out: dict[str, Any] = {"set": name, "points": len(rows), "changed": int(used.sum()),
                           "before_all": _stats(eb), "after_all": _stats(ea)}
    if used.any():
        out.update(before_changed=_stats(eb[used]), after_changed=_stats(ea[used]),
                   cost_before={"cold": _ms(cold_b[used]), "warm": _ms(warm_b[used])},
                   cost_after={"cold": _ms(cold_a[used]), "warm": _ms(warm_a[used])})
    out["moved"] = [{"i": rows[k]["i"], "before": round(float(eb[k]), 2),
                     "after": round(float(ea[k]), 2),
                     "point": {key: (round(v, 3) if isinstance(v, float) else v)
                               for key, v in rows[k]["fields"].items()}}
                    for k in np.argsort(-np.abs(ea - eb))[:moved] if used[k]]
    for lab in ("all", "changed"):
        if f"after_{lab}" not in out:
            continue
        b, a = out[f"before_{lab}"], out[f"after_{lab}"]
        print(f"{name} ({lab}, n={a['n']}): R |error| mean/p95/max/bias "
              f"{b['mean']:.2f}/{b['p95']:.2f}/{b['max']:.2f}/{b['bias']:+.2f}% -> "
              f"{a['mean']:.2f}/{a['p95']:.2f}/{a['max']:.2f}/{a['bias']:+.2f}%", flush=True)
    if "cost_after" in out:
        print(f"{name}: cost of the changed points, cold median/p95/max ms "
              f"{out['cost_before']['cold']} -> {out['cost_after']['cold']}; warm "
              f"{out['cost_before']['warm']} -> {out['cost_after']['warm']}", flush=True)
    return out


def main(argv: list[str] | None = None) -> None:
    from benchmarks._stored import parse

    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n")[0])
    ap.add_argument("--points", type=int, default=1024)
    ap.add_argument("--seed", type=int, default=7)
    a = parse(ap, argv)
    warnings.simplefilter("ignore")
    res = {"command": "python -m benchmarks.ini_revisit --points %d --seed %d" % (a.points, a.seed),
           "sets": [compare("stored", _stored()),
                    compare(f"fresh seed {a.seed}", _fresh(a.points, a.seed))]}
    with open(OUT, "w") as fh:
        json.dump(res, fh, indent=1)
    print(f"written {OUT}")


if __name__ == "__main__":
    main()
