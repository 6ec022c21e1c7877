"""Accuracy of the PDQ spin-lock and multiplexed models against the simulator on a random design.

Run ``python -m benchmarks.pdq_sim_disciplines {spinlock,multiplexed} [n] [cycles] [seed]``
(defaults 128, 100000, 11).

A scrambled Sobol design (:func:`mva.params.design`) over the declared domain of
:class:`models.pdq.PDQParams` -- ``k`` 1-16, ``n_keys`` 1-4096, ``key_skew`` 0-1.5,
``f_sequential`` 0-0.2, ``f_nosync`` 0-0.5, ``cs2`` 0-10, and ``o_lock`` 0-500
(``spinlock``) or ``compute_utilization`` 0-0.9, ``O_int`` 0-2000, ``o_sched``
0-1000 (``multiplexed``, shared queue); ``S = 100``.  The design's ``load`` value
``u`` (0.02-0.95) is read as a fraction of the saturation load of the model
(default method; found by bisection as ``benchmarks.pdq_accuracy`` does), so every
point is one the model calls stable.  Each point is simulated once
(:func:`validation.compare.pdq_machine`: spin-locks with busy-waiting and the lock
cost on ``k`` dedicated processors; or ``k`` multiplexed processors with compute
threads, interrupts and the scheduling overhead).  Printed: response-time and
utilization mean / p95 / max |relative error| over the points both call stable
(utilization: the fraction of time each of the ``k`` processors runs or spins on
handlers, as :func:`validation.compare.compare` compares it), the points the
simulator finds saturated, a split by ``cs2``, and a Markdown table of the worst
points (multiplexed: with the simulated fraction of time the processors compute).
"""

from __future__ import annotations

import sys
import time
from typing import Any

import numpy as np

BASE = ("k", "load", "n_keys", "key_skew", "f_sequential", "f_nosync", "cs2")
EXTRA = {"spinlock": ("o_lock",), "multiplexed": ("compute_utilization", "O_int", "o_sched")}


#: bisection steps of the design's saturation loads (to 2^-12 of a processor's load: the
#: steps beyond probe the model's fold, its slowest solves -- 20 steps took the docs'
#: spin-lock design 2.7 times as long, for loads within 2.4e-4)
SATURATION_STEPS = 12


def run(discipline: str, n: int = 128, cycles: int = 100_000, seed: int = 11) -> dict[str, Any]:
    """Model and simulator on ``n`` design points; returns the per-point rows and the errors."""
    from benchmarks.pdq_accuracy import saturation_load
    from models.pdq import PDQParams, solve
    from mva.errors import SaturationError
    from mva.params import design
    from validation.compare import _measures_from_sim, _model_values, pdq_machine
    from validation.sim.simulate import simulate

    vary = BASE + EXTRA[discipline]
    mult = discipline == "multiplexed"
    model_disc = "shared" if mult else discipline
    d = design(PDQParams, n, seed=seed, vary=vary, fixed={"S": 100.0}, output="dict")
    rows = []
    t0 = time.perf_counter()
    for i in range(n):
        kw: dict[str, Any] = {f: (int(d[f][i]) if f in ("k", "n_keys") else float(d[f][i]))
                              for f in vary}
        kw.update(S=100.0, multiplexed=mult)
        u = kw.pop("load")
        kw["load"] = u * saturation_load(kw, method="birth-death", discipline=model_disc,
                                         steps=SATURATION_STEPS)
        prm = PDQParams(**kw)
        r = solve(prm, model_disc)
        mv = {name: float(v) for name, v in _model_values("pdq", prm, model_disc, {}).items()}
        m, w = pdq_machine(prm, discipline=model_disc)
        try:
            res = simulate(m, w, cycles=cycles, seed=seed + i, progress=False)
        except SaturationError:
            rows.append((kw, u, r, mv, None, None))
            continue
        s = {name: v for name, v in _measures_from_sim("pdq", res, prm).items()}
        src = f"node{len(m.nodes) - 1}.compute"          # the last node holds the source thread
        comp = [x.utilization.mean for x in res.resources if x.kind == "compute" and x.name != src]
        rows.append((kw, u, r, mv, s, float(np.mean(comp)) if mult else None))
    wall = time.perf_counter() - t0
    ok = [row for row in rows if row[4] is not None and not bool(row[2].saturated)]
    eR = np.array([(mv["R"] - s["R"][0]) / s["R"][0] for _, _, _, mv, s, _ in ok])
    eU = np.array([(mv["U"] - s["U"][0]) / s["U"][0] for _, _, _, mv, s, _ in ok])
    return {"rows": rows, "ok": ok, "eR": eR, "eU": eU, "wall": wall,
            "sim_saturated": sum(row[4] is None for row in rows)}


_RUNS: dict[tuple[str, int, int, int], dict[str, Any]] = {}


def cached_run(discipline: str, n: int, cycles: int, seed: int) -> dict[str, Any]:
    """:func:`run`, computed once per process for the same arguments (the docs' tables share it)."""
    key = (discipline, n, cycles, seed)
    if key not in _RUNS:
        _RUNS[key] = run(discipline, n, cycles, seed)
    return _RUNS[key]


def error_table(discipline: str, n: int = 64, cycles: int = 30_000, seed: int = 11) -> Any:
    """|relative error| mean / p95 / max of R and U (all points, and split by cs2) as a Table."""
    from mva.table import Table

    out = cached_run(discipline, n, cycles, seed)
    cs2 = np.array([row[0]["cs2"] for row in out["ok"]])
    rows = []
    for label, sel in (("all", np.ones(cs2.size, bool)), ("cs2 <= 1", cs2 <= 1.0),
                       ("cs2 > 1", cs2 > 1.0)):
        for measure, e in (("R", out["eR"]), ("U", out["eU"])):
            if not sel.any():
                continue
            a = np.abs(e[sel]) * 100.0
            rows.append({"points": label, "n": int(sel.sum()), "measure": measure,
                         "mean %": float(a.mean()), "p95 %": float(np.percentile(a, 95)),
                         "max %": float(a.max())})
    return Table.from_records(rows, formats={"mean %": ".1f", "p95 %": ".1f", "max %": ".1f"})


def worst_table(discipline: str, n: int = 64, cycles: int = 30_000, seed: int = 11,
                rows: int = 5) -> Any:
    """The points with the largest response-time error, with their parameters, as a Table."""
    from mva.table import Table

    out = cached_run(discipline, n, cycles, seed)
    worst = sorted(zip(out["eR"], out["ok"]), key=lambda t: -abs(t[0]))[:rows]
    recs = []
    for e, (kw, u, r, mv, s, comp) in worst:
        rec: dict[str, Any] = {"k": kw["k"], "u": u, "keys": kw["n_keys"],
                               "skew": kw["key_skew"], "f_seq": kw["f_sequential"],
                               "f_nosync": kw["f_nosync"], "cs2": kw["cs2"]}
        rec.update({f: kw[f] for f in EXTRA[discipline]})
        rec.update({"model R": mv["R"], "sim R": s["R"][0], "sim R +-": s["R"][1],
                    "error %": 100.0 * e, "model U": mv["U"], "sim U": s["U"][0]})
        if comp is not None:
            rec["sim computing"] = comp
        recs.append(rec)
    fmt = {"u": ".2f", "skew": ".2f", "f_seq": ".3f", "f_nosync": ".2f", "cs2": ".1f",
           "o_lock": ".0f", "compute_utilization": ".2f", "O_int": ".0f", "o_sched": ".0f",
           "model R": ".0f", "sim R": ".0f", "sim R +-": ".0f", "error %": "+.0f",
           "model U": ".2f", "sim U": ".2f", "sim computing": ".2f"}
    return Table.from_records(recs, formats=fmt)


def _stats(e: np.ndarray) -> str:
    a = np.abs(e) * 100.0
    return f"{a.mean():.1f}% / {np.percentile(a, 95):.1f}% / {a.max():.1f}%"


def main(argv: list[str]) -> None:
    disc = argv[0] if argv else "spinlock"
    if disc not in EXTRA:
        raise ValueError(f"discipline must be one of {sorted(EXTRA)}; got {disc!r}")
    n = int(argv[1]) if len(argv) > 1 else 128
    cycles = int(argv[2]) if len(argv) > 2 else 100_000
    seed = int(argv[3]) if len(argv) > 3 else 11
    out = run(disc, n, cycles, seed)
    print(f"PDQ {disc}: model vs simulator, {n} Sobol points (seed {seed}), "
          f"{cycles} handlers per point, {out['wall']:.0f} s")
    print(f"stable in both: {len(out['ok'])}; simulator saturated: {out['sim_saturated']}")
    print(f"response time |error| mean / p95 / max: {_stats(out['eR'])}")
    print(f"utilization   |error| mean / p95 / max: {_stats(out['eU'])}")
    cs2 = np.array([row[0]["cs2"] for row in out["ok"]])
    for name, sel in (("cs2 <= 1", cs2 <= 1.0), ("cs2 > 1", cs2 > 1.0)):
        if sel.any():
            print(f"  {name} ({int(sel.sum())} points): response time {_stats(out['eR'][sel])}, "
                  f"utilization {_stats(out['eU'][sel])}")
    extra = EXTRA[disc]
    head = " | ".join(extra)
    print(f"\n| k | u | keys | skew | f_seq | f_nosync | cs2 | {head} | model R | sim R | error | "
          f"model U | sim U |" + (" sim computing |" if disc == "multiplexed" else ""))
    print("|---" * (13 + len(extra) - 1 + (disc == "multiplexed")) + "|")
    worst = sorted(zip(out["eR"], out["ok"]), key=lambda t: -abs(t[0]))[:8]
    for e, (kw, u, r, mv, s, comp) in worst:
        ex = " | ".join(f"{kw[f]:.2f}" if f == "compute_utilization" else f"{kw[f]:.0f}"
                        for f in extra)
        print(f"| {kw['k']} | {u:.2f} | {kw['n_keys']} | {kw['key_skew']:.2f} | "
              f"{kw['f_sequential']:.3f} | {kw['f_nosync']:.2f} | {kw['cs2']:.1f} | {ex} | "
              f"{mv['R']:.0f} | {s['R'][0]:.0f} +- {s['R'][1]:.0f} | {100 * e:+.0f}% | "
              f"{mv['U']:.2f} | {s['U'][0]:.2f} |" + (f" {comp:.2f} |" if comp is not None else ""))


if __name__ == "__main__":
    main(sys.argv[1:])
