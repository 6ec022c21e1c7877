"""Where the shared PDQ's error with sequential handlers lives: its waits, one by one.

Run ``python -m benchmarks.pdq_components [arrivals] [seed] [points] [control]``
(defaults 1000000, 7, 8, 6).

The stand-alone simulation of :func:`benchmarks.pdq_episodes.simulate_pdq`
splits a nosync handler's wait as the key-aware method does
(:func:`models.pdq._keyed_point`, ``out["waits"]``):

* *the episodes' queue*: an arrival held back behind a sequential handler
  (the simulation's share ``held``, the method's ``v``) waits until that
  handler ends -- simulated ``held x to_release``, the method's
  :math:`\\lambda_s E_2 / (2 (1 - v))`;
* *as a member of the released batch*: from then until it starts --
  simulated ``held x after_release``, the method's first term of
  :func:`models.pdq._batch_backlog_wait`;
* *in a free period*: the wait of the others -- simulated ``(1 - held) x
  free``, the method's pool wait ``W_p`` plus the wait behind what is left of
  the batch (the second term).

and the sequential handlers' drain (from reaching the head to their start)
in its two cases, arriving with no other sequential handler in the system
(*free*) or behind one (*blocked*, the method's probability ``v``),
against :func:`models.pdq._lane_drain_moments` at ``v = 0`` and ``v = 1``
(the method's clearing time ``C`` can exceed the drain where the processors
bind).

Points: the ``points`` worst shared points with sequential handlers of the
shipped design (``validation/data/domain/pdq.json``, seed 2026) by the
default's error, and ``control`` others drawn at random (seeded) from the
same points.  Rows are written to ``benchmarks/results/pdq_components.json``.

Finding (PDQ docs, "Where the shared queue's error lives", 1,000,000
arrivals, seed 7): at the worst points the episodes' queue carries the error
-- its wait is off by 20-42% in the direction of ``R`` (not at point 499),
the episodes' load ``v`` by 0.03-0.08, amplified by :math:`1/(1 - v)`; the
drain in a free period is long where ``R`` is high (handler ``cs2`` 4-10, few or hot keys:
the busiest keys' lanes), both drains short where it is low.  The released
batch's own terms are too high nearly everywhere, but small beside the
episodes' queue except at point 499.
"""

from __future__ import annotations

import random
import sys
from typing import Any

from benchmarks.pdq_episodes import FIELDS, simulate_pdq


def model_components(r: dict[str, Any]) -> dict[str, Any]:
    """The key-aware method's waits of a nosync handler and its drain's two cases at ``r``.

    >>> m = model_components({"k": 4, "S": 10.0, "cs2": 1.0, "n_keys": 8, "key_skew": 0.0,
    ...                       "f_sequential": 0.05, "f_nosync": 0.2, "load": 0.3})
    >>> m["v"] > 0 and m["drain_blocked"] > 0 and m["episodes"] > 0
    True
    """
    from models.pdq import (_keyed_point, _lane_drain_moments, _lanes, key_probabilities)

    k, S, cs2, fs, fn = float(r["k"]), r["S"], r["cs2"], r["f_sequential"], r["f_nosync"]
    lam = r["load"] * k / S
    p = key_probabilities(int(r["n_keys"]), r["key_skew"])
    m = _keyed_point(k, lam, S, cs2, p, fs, fn)
    Wp, Wres, member, behind = m["waits"]
    E1, E2, v = m["episode"]
    C, drain = m["state"][1], m["state"][4]
    lam_o = lam * (1.0 - fs)
    held = m["nu"] / lam_o
    top = _lanes(lam * max(1.0 - fs - fn, 0.0) * p)
    cases = [S * _lane_drain_moments(float(cs2), top * S, (lam_o - float(top.sum())) * S,
                                     lam * fs * S, held / S, vv)[0] for vv in (0.0, 1.0)]
    return {"R_n": Wp + Wres + member + behind + S, "episodes": Wres, "member": member,
            "free": Wp + behind, "v": v, "E1": E1, "C": C, "drain": drain,
            "drain_free": cases[0], "drain_blocked": cases[1]}


def sim_components(s: dict[str, Any]) -> dict[str, Any]:
    """The simulation's counterparts of :func:`model_components` (nosync handlers)."""
    w = s["waits"]["n"]
    return {"R_n": s["R_n"], "episodes": w["held"] * w["to_release"],
            "member": w["held"] * w["after_release"], "free": (1.0 - w["held"]) * w["free"],
            "v": s["v"], "held": w["held"], "E1": s["E1"], "drain_free": s["drain_free"],
            "drain_blocked": s["drain_blocked"], "blocked": s["blocked"]}


def main(argv: list[str]) -> int:
    from benchmarks._stored import int_args, steps, worst_first, write_results
    from models.pdq import PDQParams, solve

    arrivals, seed, n_pts, n_ctl = int_args(argv, (1_000_000, 7, 8, 6),
                                            ("arrivals", "seed", "points", "control"))
    scored = worst_first(
        "pdq", lambda r: (r["variant"] == "shared" and r["f_sequential"] > 0
                          and r["f_nosync"] > 0 and r["k"] > 1),
        lambda r: float(solve(PDQParams(**{f: r[f] for f in FIELDS}), "shared").response_time))
    rest = scored[n_pts:]
    chosen = [("worst", x) for x in scored[:n_pts]]
    chosen += [("control", x) for x in random.Random(seed).sample(rest, min(n_ctl, len(rest)))]
    print(f"shared PDQ, a nosync handler's waits and the sequential handlers' drain: "
          f"stand-alone simulation ({arrivals} arrivals, seed {seed}) / key-aware method")
    print(f"{'set':>7} {'i':>4} {'R err':>6} {'R_n':>15} {'episodes':>15} {'member':>13} "
          f"{'free':>13} {'v':>11} {'drain free':>13} {'drain blk':>13}")
    out = []
    for tag, (err, R, r) in steps(chosen, "pdq components: simulated points"):
        s = sim_components(simulate_pdq(
            **{f: (int(r[f]) if f in ("k", "n_keys") else r[f]) for f in FIELDS},
            arrivals=arrivals, seed=seed))
        m = model_components(r)

        def pair(key: str, f: str = ".0f") -> str:
            return f"{s[key]:{f}}/{m[key]:{f}}"

        print(f"{tag:>7} {r['i']:>4} {100 * (R / r['R'] - 1):>+5.0f}% {pair('R_n'):>15} "
              f"{pair('episodes'):>15} {pair('member'):>13} {pair('free'):>13} "
              f"{pair('v', '.3f'):>11} {pair('drain_free'):>13} {pair('drain_blocked'):>13}",
              flush=True)
        out.append({"set": tag, "i": r["i"], "point": {f: r[f] for f in FIELDS},
                    "ref_R": r["R"], "ref_R_hw": r["R_hw"], "model_R": R, "sim": s, "model": m})
    write_results("pdq_components.json", {"arrivals": arrivals, "seed": seed, "rows": out})
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
