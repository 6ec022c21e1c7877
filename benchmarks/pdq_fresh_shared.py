"""The shared PDQ's default method on the stored and on fresh designs of the declared domain.

Run ``python -m benchmarks.pdq_fresh_shared [--label LABEL] [seed:points ...]``
(default label ``now``, designs ``11:96 12:160``).

For each ``seed:points`` the shared-queue points of
:func:`validation.domain.design_points` (scrambled Sobol over the declared
domain, ``points`` design points, seed ``seed``) are simulated by the bundled
simulator (:func:`validation.domain.simulate_point`, simulation seed ``1000 +
index``, to the domain's 1% half-width target or its cycle limit) unless
``benchmarks/results/pdq_shared_fresh_<seed>_<points>.json`` already holds
them.  The default method (``models.pdq.solve``, ``method="auto"``) is
compared with them and with the stored references of the shipped map
(``validation/data/domain/pdq.json``, seed 2026: the shared and multiplexed
disciplines): |relative error| of ``R`` in %, mean / p95 / max, the signed
mean (bias), and the points the model calls saturated that the simulator
carries.  The figures go to ``benchmarks/results/pdq_fresh_shared.json``
under ``LABEL`` (run it from an export of an older commit with
``--label "before (<commit>)"`` to compare).  Seeds 11 and 12 were drawn
after the change they first measured (the busiest key's lane; see the PDQ
docs) and were not used to develop it; their aggregates were looked at
when the next one (the released batch) was adopted.
"""

from __future__ import annotations

import json
import os
import sys
import time
import warnings
from typing import Any


def references(seed: int, points: int, path: str) -> list[dict[str, Any]]:
    """The stored simulations of the design's shared points, simulating the missing ones."""
    from benchmarks._stored import steps
    from mva.progress import is_interactive
    from validation.domain import design_points, simulate_point

    rows: list[dict[str, Any]] = []
    if os.path.exists(path):
        with open(path) as fh:
            rows = json.load(fh)["rows"]
    done = {r["i"] for r in rows}
    if len(done) >= points:          # every shared point is there: the design is not needed
        return rows                  # (drawing it solves every discipline's saturation load)
    pts = [p for p in design_points("pdq", points, seed)
           if p["variant"] == "shared" and p["i"] not in done]
    t0 = time.time()
    for j, p in enumerate(steps(pts, f"pdq shared, seed {seed}: simulated points")):
        f = {k: v for k, v in p.items() if k not in ("variant", "i")}
        d = simulate_point(family="pdq", variant="shared", seed=1000 + p["i"], i=p["i"], **f)
        rows.append(dict(p, **d))
        if not is_interactive():                  # a line per point off a terminal
            print(f"simulated {j + 1}/{len(pts)} (point {p['i']}, {time.time() - t0:.0f} s)",
                  flush=True)
        with open(path, "w") as fh:
            json.dump({"family": "pdq", "variant": "shared", "seed": seed, "points": points,
                       "rows": rows}, fh, default=float)
    return rows


def errors(per_variant: dict[str, Any], variant: str = "shared") -> dict[str, float]:
    """Mean / p95 / max |error| and bias of ``R`` (%), and the points the model calls saturated.

    ``per_variant``: :func:`validation.domain.family_errors` of the references
    (method ``auto``).
    """
    import numpy as np

    d = per_variant[variant]["auto"]
    m = d["measures"]["R"]
    e = 100.0 * np.asarray(m["e"], float)[np.asarray(m["ok"], bool)]
    a = np.abs(e)
    return {"n": int(a.size), "mean": float(a.mean()), "p95": float(np.percentile(a, 95)),
            "max": float(a.max()), "bias": float(e.mean()), "false_saturated": int(d["failed"])}


def main(argv: list[str]) -> int:
    from benchmarks._stored import fail
    from validation.domain import family_errors, load_references

    here = os.path.dirname(os.path.abspath(__file__))
    warnings.simplefilter("ignore")
    label = "now"
    if argv[:1] == ["--label"]:
        if len(argv) < 2 or not argv[1].strip():
            fail("--label needs a name (e.g. --label now)")
        label, argv = argv[1], argv[2:]
    specs = []
    for spec in argv or ["11:96", "12:160"]:
        try:
            seed, points = (int(x) for x in spec.split(":"))
        except ValueError:
            fail(f"a design is seed:points, two integers (e.g. 11:96); got {spec!r}")
        if seed < 0 or points <= 0:
            fail(f"a design needs seed >= 0 and points > 0; got {spec!r}")
        specs.append((seed, points))
    out: dict[str, dict[str, float]] = {}
    stored = family_errors("pdq", load_references("pdq"), methods=("auto",))
    for variant in ("shared", "multiplexed"):
        out[f"stored {variant}"] = errors(stored, variant)
    for seed, points in specs:
        path = os.path.join(here, "results", f"pdq_shared_fresh_{seed}_{points}.json")
        rows = references(seed, points, path)
        out[f"fresh shared, seed {seed}"] = errors(
            family_errors("pdq", {"rows": rows}, methods=("auto",)))
    for name, e in out.items():
        print(f"{label}, {name}: R |error| {e['mean']:.2f} / {e['p95']:.2f} / {e['max']:.2f}% "
              f"(bias {e['bias']:+.2f}%) on {e['n']} points; {e['false_saturated']} called "
              f"saturated that the simulator carries", flush=True)
    path = os.path.join(here, "results", "pdq_fresh_shared.json")
    saved = json.load(open(path)) if os.path.exists(path) else {}
    saved[label] = out
    with open(path, "w") as fh:
        json.dump(saved, fh, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
