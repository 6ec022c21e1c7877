"""Policy default on a fresh design: errors against the map and the faster policy of each pair.

Run:  python benchmarks/policy_fresh_winners.py [--points 128] [--seed 7] [--workers 2]

Simulates a fresh scrambled-Sobol design of the policy domain
(:func:`validation.domain.simulate_family`, resumable SQLite store beside the
shipped references), checks the default method's errors against the shipped
accuracy map (:func:`validation.domain.check_against_map`), and prints, for
Fixed / Floating and Fixed / Single, how many points the simulator separates
(95% intervals of the execution times apart) and how many of those the
default names correctly (:func:`validation.domain.winner_agreement`), with the
saturation-flag agreement.
"""

from __future__ import annotations

import argparse
import os
import sys
import warnings

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))


def main() -> None:
    from validation import domain as D
    from validation.domain import _fmt

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--points", type=int, default=128)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--workers", type=int, default=2)
    a = ap.parse_args()
    warnings.simplefilter("ignore")
    store = os.path.join(os.path.dirname(D.references_path("policy")),
                         f"policy.check-{a.points}-{a.seed}.store.sqlite")
    refs = D.simulate_family("policy", a.points, a.seed, store=store, write=False,
                             executor="serial" if a.workers <= 1 else None,
                             workers=a.workers, progress=False)
    fe = D.family_errors("policy", refs, methods=("auto",))     # solved once, used twice
    for variant, r in D.check_against_map("policy", a.points, a.seed, refs=refs,
                                          errors=fe).items():
        f, mp = r["fresh"], r["map"]
        print(f"{variant}: {r['above']} of {r['n']} points above the map's 95% bound "
              f"(p = {r['p_value']:.3g}, {'' if r['consistent'] else 'NOT '}consistent); "
              f"|e| fresh {_fmt(f['mean'])}/{_fmt(f['p95'])}/{_fmt(f['max'])}%, "
              f"map {_fmt(mp['mean'])}/{_fmt(mp['p95'])}/{_fmt(mp['max'])}%", flush=True)
    for pair, d in (D.winner_agreement(fe, "auto") or {}).items():
        print(f"{pair}: faster policy named correctly at {d['correct']} of {d['separated']} "
              f"separated points ({d['points']} points)")
        for x in d["wrong"]:
            print(f"   wrong at design point {x['i']}: model ratio {x['model_ratio']:.4f}, "
                  f"simulator {x['sim_ratio']:.4f} +- {x['sim_ratio_hw']:.4f}")
    for variant, d in fe.items():
        s = d["auto"]["saturation"]
        agree = s["points"] - s["model_only"] - s["sim_only"]
        print(f"{variant}: saturation flag agrees at {agree} of {s['points']} points "
              f"({s['sim_only']} simulator only, {s['model_only']} model only)")


if __name__ == "__main__":
    main()
