"""The drain ahead of a sequential handler at the sequential handlers' limit: model and Monte Carlo.

Run ``python -m benchmarks.pdq_blocked_drain [--points N] [--samples M] [--seed S]``
(defaults 16, 20000, 7: the stored results).

Near the limit of the sequential handlers every sequential handler finds the
previous one still running.  The ordinary handlers that arrived between the
two -- a geometric number of mean ``(1 - f_s) / f_s`` -- are released when the
previous one ends, and the next sequential handler starts when all of them
are done: its *drain*.  The key-aware method's drain there
(:func:`models.pdq._lane_drain_moments` with ``v = 1`` and the window
``1 / lambda_s``, as :func:`models.pdq._keyed_point` takes it) sets the
model's saturation bound -- and so the design's loads, drawn as fractions of
it (:func:`validation.domain.design_points`).

A Monte Carlo of that batch under the simulator's rules
(:mod:`validation.sim.hardware`; handler times of the simulator's family,
:meth:`validation.sim.dists.Dist.from_cs2`) measures it: the handlers start in
arrival order, a keyed one only after the earlier ones of its key (on the
processor they free), the others each on a processor; on dedicated
processors the ``k`` processors take them and the rest wait for the first
that frees.  On multiplexed processors the first one takes the processor the
sequential handler frees, the next ones the idle processors (each of the
``k - 1`` others idle with probability ``1 - u_c``), the next ones interrupt
computing processors (``+ O_int``), the rest wait.  With the *handover*
(``validation.sim.hardware``: a processor whose thread wants to compute
hands a handler to an idle processor) the first one takes an idle processor
instead when the freed processor's thread wants to compute (probability
``1 - exp(-(S + o_sched) / I)``, ``I`` the mean idle period), so one idle
processor fewer is left for the rest.

For the first ``N`` shared and multiplexed points of the stored design
(``validation/data/domain/pdq.json``, by index: not chosen by error) with at
least 5% sequential handlers and more than one processor (one is solved
exactly as an M/G/1 queue) it prints the model's mean drain and the Monte
Carlo's (multiplexed: without and with the handover), in cycles, and
(multiplexed) the model's drain of the same handlers taken on at most ``k``
processors as the dedicated processors' batch is (``on k``).  Rows are
written to ``benchmarks/results/pdq_blocked_drain.json``.

Finding (16 points each, 20,000 batches; PDQ docs, *The drain at the
sequential handlers' limit*): on dedicated processors the model's drain is
0.98-1.09 of the Monte Carlo's; on multiplexed ones 0.17-1.21 (with the
handover), far short where the batch outnumbers the processors (2
processors, 14 handlers: 0.17; 3 processors: 0.45): :func:`models.pdq._released_cdf`
starts the members beyond the ``k`` processors at once.  Taken on ``k``
processors the same handlers give 0.75-1.16, short where the interrupts of
computing processors dominate; the larger of the two, 0.89-1.21.
"""

from __future__ import annotations

import argparse
import heapq
import random
import sys
from typing import Any, Sequence

import numpy as np

FIELDS = ("k", "S", "cs2", "n_keys", "key_skew", "f_sequential", "f_nosync", "load")
MULT_FIELDS = ("compute_utilization", "O_int", "o_sched")


def batch_drain(*, k: int, nu: float, fk: float, fn: float, p: np.ndarray, S: float,
                cs2: float, o_sched: float = 0.0, O_int: float = 0.0,
                idle_p: float | None = None, handover_p: float = 0.0, samples: int = 20_000,
                seed: int = 7) -> np.ndarray:
    """Drains of ``samples`` batches (geometric of mean ``nu``) released on ``k`` processors.

    ``idle_p`` ``None``: dedicated processors (all ``k`` free); else each of
    the ``k - 1`` processors beside the freed one is idle with probability
    ``idle_p`` and computing otherwise (a handler started on it pays
    ``O_int``), and the freed one hands the first handler to an idle one
    with probability ``handover_p``.  Every handler takes ``S + o_sched``
    plus the simulator's variable part (mean ``S``, ``cs2``).

    >>> d = batch_drain(k=4, nu=1e-9, fk=1.0, fn=0.0, p=np.ones(1), S=1.0, cs2=1.0,
    ...                 samples=100)
    >>> float(d.max())                           # no batch: no drain
    0.0
    """
    from validation.sim.dists import Dist

    rng = random.Random(seed)
    draw = Dist.from_cs2(S, cs2).sampler(rng)
    cum = np.cumsum(p).tolist()
    q = nu / (1.0 + nu)
    out = np.zeros(samples)
    for s in range(samples):
        g = 0
        while rng.random() < q:
            g += 1
        if g == 0:
            continue
        # members in arrival order; a keyed one is eligible once the earlier one of its
        # key is done (follower), the others at once
        times = [draw() + o_sched for _ in range(g)]
        last: dict[int, int] = {}
        follower: dict[int, int] = {}
        eligible: list[int] = []
        for j in range(g):
            if rng.random() < fn / (fk + fn):
                eligible.append(j)
                continue
            key = min(int(np.searchsorted(cum, rng.random(), side="right")), len(cum) - 1)
            if key in last:
                follower[last[key]] = j
            else:
                eligible.append(j)
            last[key] = j
        # the processors free at the release: the extra cost of starting on each
        if idle_p is None:
            slots = [0.0] * k
        else:
            idle = sum(rng.random() < idle_p for _ in range(k - 1))
            computing = k - 1 - idle
            if idle and rng.random() < handover_p:
                idle, computing = idle - 1, computing + 1          # the freed one computes
            slots = [0.0] * (1 + idle) + [O_int] * computing
        slots.reverse()                           # (popped from the end: no interrupt first)
        running: list[tuple[float, int]] = []     # (end, member)
        now, done = 0.0, 0
        while done < g:
            while eligible and slots:             # the earliest eligible on a free processor
                j = heapq.heappop(eligible)
                heapq.heappush(running, (now + slots.pop() + times[j], j))
            now, j = heapq.heappop(running)
            done += 1
            slots.append(0.0)                     # freed while serving: no interrupt
            if j in follower:
                heapq.heappush(eligible, follower[j])
        out[s] = now
    return out


def model_drain(row: dict[str, Any], multiplexed: bool, *, on_k: bool = False) -> float:
    """The key-aware method's mean drain at the sequential handlers' limit (cycles).

    ``on_k`` (multiplexed): the same handlers (their interrupt mixture) taken as
    the dedicated processors' batch is, on at most ``k`` processors at a time
    -- what the multiplexed released batch would give with the processor count
    as its limit."""
    import models.pdq as pdq

    prm = pdq.PDQParams(**{f: row[f] for f in FIELDS},
                        **({f: row[f] for f in MULT_FIELDS} if multiplexed else {}),
                        multiplexed=multiplexed)
    g = {n: float(v) for n, v in pdq._prepare(prm).items()}
    p = pdq.key_probabilities(int(g["n_keys"]), g["key_skew"])
    fs, fn = g["f_sequential"], g["f_nosync"]
    fk = max(1.0 - fs - fn, 0.0)
    lam = g["lam"]
    lam_o, lam_s, lam_i = lam * (1.0 - fs), lam * fs, lam * fk * p
    tb = 1.0 / lam_s                  # the held window when every sequential one waits
    if multiplexed:
        S = g["S"] + g["o_sched"]
        cs2 = g["cs2_S"] * g["S"] ** 2 / S ** 2
        first, jump = g["p_int"] * g["O_int"], g["O_int"]
        P0, _, _ = pdq._key_queues(lam_i, S, cs2, 0.0, first, jump)
        arr = (lam * fn + lam * fk * float(np.sum(p * P0))) / (lam * (fk + fn))
        shs = pdq._interrupt_shape(float(cs2), S, float(f"{g['p_int'] * arr:.6g}"), jump)
        nall = lam_o * tb
        d = pdq._batch_dispatchable(nall, fk, fn, p) / nall
        rel: Any = (jump / S, int(g["k"]), g["theta"], d)
        top, kb = pdq._lanes(lam_i)[:1], None
        if on_k:
            rel, top, kb = None, pdq._lanes(lam_i), g["k"]
    else:
        S, cs2 = g["Sp"], g["cs2"]
        shs, rel = pdq._interrupt_shape(float(cs2), S, 0.0, 0.0), None
        top, kb = pdq._lanes(lam_i), g["k"]
    m1, _ = pdq._lane_drain_moments(float(cs2), top * S, (lam_o - float(top.sum())) * S,
                                    lam_s * S, tb / S, 1.0, shs, rel, kb)
    return float(m1 * S)


def main(argv: Sequence[str] | None = None) -> int:
    import warnings

    from benchmarks._stored import parse, steps, write_results
    from models.pdq import key_probabilities
    from validation.compare import MULT_BURST_OVER_S
    from validation.domain import load_references

    ap = argparse.ArgumentParser(prog="python -m benchmarks.pdq_blocked_drain",
                                 description=(__doc__ or "").split("\n")[0])
    ap.add_argument("--points", type=int, default=16, help="points per variant (default 16)")
    ap.add_argument("--samples", type=int, default=20_000,
                    help="Monte Carlo batches per point (default 20000)")
    ap.add_argument("--seed", type=int, default=7, help="Monte Carlo seed (default 7)")
    a = parse(ap, argv)
    if a.samples < 1:
        from benchmarks._stored import fail
        fail(f"--samples must be a positive integer; got {a.samples}")
    warnings.simplefilter("ignore")
    # (one processor is solved exactly as an M/G/1 queue: no drain to compare)
    rows_in = [r for r in load_references("pdq")["rows"]
               if r["f_sequential"] >= 0.05 and r["k"] > 1]
    out = []
    print("the drain ahead of a sequential handler at the sequential handlers' limit "
          f"(cycles; Monte Carlo of {a.samples} batches, seed {a.seed})")
    print(f"{'variant':>12} {'i':>4} {'k':>3} {'keys':>5} {'f_seq':>6} {'nu':>6} "
          f"{'model':>8} {'MC':>8} {'model/MC':>8} {'MC handover':>11} {'model/MC h.':>11} "
          f"{'on k/MC h.':>10}")
    for variant in ("shared", "multiplexed"):
        mine = [r for r in rows_in if r["variant"] == variant][:a.points]
        mult = variant == "multiplexed"
        for r in steps(mine, f"pdq {variant}: blocked drains"):
            fs, fn = r["f_sequential"], r["f_nosync"]
            kw: dict[str, Any] = dict(k=int(r["k"]), nu=(1.0 - fs) / fs, fk=max(1.0 - fs - fn, 0),
                                      fn=fn, p=key_probabilities(int(r["n_keys"]), r["key_skew"]),
                                      S=r["S"], cs2=r["cs2"], samples=a.samples, seed=a.seed)
            rec: dict[str, Any] = {"variant": variant, "i": r["i"],
                                   "point": {f: r[f] for f in FIELDS + (MULT_FIELDS if mult
                                                                        else ())},
                                   "nu": kw["nu"], "model": model_drain(r, mult)}
            if mult:
                uc = r["compute_utilization"]
                # the simulator's idle periods: bursts of MULT_BURST_OVER_S * S, computing uc
                idle_mean = (MULT_BURST_OVER_S * r["S"] * (1.0 - uc) / uc if uc > 0
                             else float("inf"))
                kw.update(o_sched=r["o_sched"], O_int=r["O_int"], idle_p=1.0 - uc)
                rec["mc"] = float(batch_drain(**kw).mean())
                rec["handover_p"] = float(1.0 - np.exp(-(r["S"] + r["o_sched"]) / idle_mean))
                rec["mc_handover"] = float(batch_drain(**kw, handover_p=rec["handover_p"]).mean())
                rec["model_on_k"] = model_drain(r, mult, on_k=True)
            else:
                rec["mc"] = float(batch_drain(**kw).mean())
                rec["mc_handover"] = rec["mc"]
                rec["model_on_k"] = rec["model"]
            print(f"{variant:>12} {r['i']:>4} {r['k']:>3} {r['n_keys']:>5} {fs:>6.3f} "
                  f"{kw['nu']:>6.1f} {rec['model']:>8.0f} {rec['mc']:>8.0f} "
                  f"{rec['model'] / rec['mc']:>8.3f} {rec['mc_handover']:>11.0f} "
                  f"{rec['model'] / rec['mc_handover']:>11.3f} "
                  f"{rec['model_on_k'] / rec['mc_handover']:>10.3f}", flush=True)
            out.append(rec)
    write_results("pdq_blocked_drain.json", {"samples": a.samples, "seed": a.seed, "rows": out})
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
