"""What a sequential episode is made of under spin-locks.

Run ``python -m benchmarks.pdq_spinlock [arrivals] [seed] [points]``
(defaults 300000, 7, 8).

A stand-alone discrete-event simulation of one node of ``k`` dedicated
processors with spin-locks (written apart from :mod:`validation.sim`, with
the rules of :mod:`validation.sim.hardware`, ``dispatch="spin"``): handlers
start in arrival order on any free processor; a keyed handler holds its
key's lock for ``S + o_lock`` and, while another holds it, busy-waits on its
processor (the spinners of a key acquire in arrival order); a nosync handler
takes no lock; a sequential handler at the head of the queue waits until
nothing runs (nothing behind it starts meanwhile), then runs alone.  Handler
classes and keys are drawn as in :mod:`benchmarks.pdq_episodes`.

For the three worst spin-lock points of the map before this drain
(:data:`BEFORE_WORST`) and the ``points`` worst now with sequential
handlers of the shipped design (``validation/data/domain/pdq.json``) by
the default method's error it prints the stored reference (bundled simulator), this
simulation's ``R`` and its classes' (keyed, nosync, sequential), the
episode's mean ``E1``, its drain (from reaching the head to starting) and
load ``v`` measured, and the same in the spin-lock decomposition
(:func:`models.pdq.solve`, ``"spinlock"``).  Rows are written to
``benchmarks/results/pdq_spinlock.json``.

Finding (PDQ docs, "The drain, before and now"): where the lock cost dwarfs
the handler, the handlers a sequential one drains are a mixture of short
nosync and long keyed ones, and a two-moment fit of that mixture put the
longest of them far too late; the mixture itself and the busiest key's
lock as a lane give the episodes within a few percent at most points,
and a few keys with long lock costs remain short (the other keys serialize
too).
"""

from __future__ import annotations

import heapq
import random
import sys
from collections import deque
from typing import Any

FIELDS = ("k", "S", "cs2", "n_keys", "key_skew", "f_sequential", "f_nosync", "load", "o_lock")

#: the three worst spin-lock points of the map before the drain was the mixture with a
#: lane (commit 0101b9b: +64%, +54%, +47%), kept for the comparison
BEFORE_WORST = (191, 107, 299)


def simulate_spinlock(*, k: int, S: float, cs2: float, n_keys: int, key_skew: float,
                      f_sequential: float, f_nosync: float, rate: float, o_lock: float,
                      arrivals: int = 300_000, seed: int = 7) -> dict[str, float]:
    """Response per class, mean spin, and the sequential episodes of one spin-lock point.

    ``rate``: handler arrivals per cycle.  The first tenth of ``arrivals``
    is discarded.

    >>> r = simulate_spinlock(k=1, S=1.0, cs2=1.0, n_keys=4, key_skew=0.0, f_sequential=0.0,
    ...                       f_nosync=0.0, rate=0.5, o_lock=0.0, arrivals=100_000)
    >>> 1.85 < r["R"] < 2.15          # one processor, no lock cost: M/M/1 at 0.5, R = 2
    True
    """
    import numpy as np

    from benchmarks.pdq_episodes import draw_handler
    from models.pdq import key_probabilities

    from validation.sim.dists import Dist

    rng = random.Random(seed)
    draw = Dist.from_cs2(S, cs2).sampler(rng)
    cum = np.cumsum(key_probabilities(int(n_keys), key_skew)).tolist()
    ev: list[tuple[float, int, Any]] = []          # (time, seq, handler or None: an arrival)
    n_ev = 0

    def push(t: float, obj: Any) -> None:
        nonlocal n_ev
        n_ev += 1
        heapq.heappush(ev, (t, n_ev, obj))

    queue: deque[list[Any]] = deque()
    held: dict[int, deque[list[Any]]] = {}         # a held lock's spinners, in order
    busy, seq_running = 0, False
    warm = arrivals // 10
    sums = {c: [0.0, 0] for c in "kns"}            # sum of R, count
    spin_sum, eps, last_end = 0.0, [], 0.0

    def dispatch(now: float) -> None:
        # handler: [class, key, arrival, own time, number, start, lock acquired]
        nonlocal busy, seq_running
        while queue and not seq_running:
            m = queue[0]
            if m[0] == "s":
                if busy:
                    return                          # the drain: wait until nothing runs
                seq_running = True
            elif busy >= k:
                return
            queue.popleft()
            busy += 1
            m[5] = now
            if m[0] == "k" and m[1] in held:
                held[m[1]].append(m)                # spin on the held lock
                continue
            if m[0] == "k":
                held[m[1]] = deque()
                m[6] = now
                push(now + m[3] + o_lock, m)
            else:
                push(now + m[3], m)

    push(rng.expovariate(rate), None)
    n = 0
    while n < arrivals or busy or queue:
        now, _, m = heapq.heappop(ev)
        if m is None:
            n += 1
            cls, key = draw_handler(rng, cum, f_sequential, f_nosync)
            queue.append([cls, key, now, draw(), n, None, None])
            if n < arrivals:
                push(now + rng.expovariate(rate), None)
            dispatch(now)
            continue
        busy -= 1
        cls = m[0]
        if m[4] > warm:
            sums[cls][0] += now - m[2]
            sums[cls][1] += 1
            if cls == "k":
                spin_sum += m[6] - m[5]
        if cls == "s":
            seq_running = False
            if m[4] > warm:
                head = max(m[2], last_end)          # it reached the head of the queue
                eps.append((now - head, m[5] - head))
            last_end = now
        elif cls == "k":
            spinners = held[m[1]]
            if spinners:                            # the lock passes to the earliest spinner
                w = spinners.popleft()
                w[6] = now
                push(now + w[3] + o_lock, w)
            else:
                del held[m[1]]
        dispatch(now)
    cnt = sum(s[1] for s in sums.values())
    out = {"R": sum(s[0] for s in sums.values()) / cnt,
           "spin": spin_sum / max(sums["k"][1], 1)}
    for c, s in sums.items():
        if s[1]:
            out[f"R_{c}"] = s[0] / s[1]
    if eps:
        e = np.array(eps)
        out.update(E1=float(e[:, 0].mean()), drain=float(e[:, 1].mean()),
                   v=rate * f_sequential * float(e[:, 0].mean()))
    return out


def main(argv: list[str]) -> int:
    import numpy as np

    import models.pdq as pdq
    from benchmarks._stored import int_args, recorded, steps, worst_first, write_results

    arrivals, seed, n_pts = int_args(argv, (300_000, 7, 8), ("arrivals", "seed", "points"))

    def params(r: dict[str, Any]) -> Any:
        return pdq.PDQParams(**{f: r[f] for f in FIELDS})

    scored = worst_first("pdq", lambda r: r["variant"] == "spinlock" and r["f_sequential"] > 0,
                         lambda r: float(pdq.solve(params(r), "spinlock").response_time))
    by_i = {x[2]["i"]: x for x in scored}
    chosen = [("before", by_i[i]) for i in BEFORE_WORST if i in by_i]
    chosen += [("worst now", x) for x in scored
               if np.isfinite(x[0]) and x[2]["i"] not in BEFORE_WORST][:n_pts]
    out = []
    print(f"spin-lock PDQ: stored reference, stand-alone simulation ({arrivals} arrivals, "
          f"seed {seed}) and the spin-lock decomposition")
    print(f"{'':>9} {'i':>4} {'k':>3} {'keys':>5} {'f_seq':>6} {'o_lock':>6} {'ref R':>7} "
          f"{'sim R':>7} {'model R':>8} {'sim R_k/n/s':>17} {'sim E1':>7} {'mod E1':>7} "
          f"{'sim drn':>7} {'mod drn':>7} {'sim v':>6} {'mod v':>6}")
    with recorded(pdq, "_spin_point") as calls:
        for tag, (err, R, r) in steps(chosen, "pdq spin-lock: simulated points"):
            calls.clear()
            a = pdq._prepare(params(r))
            pdq.solve(params(r), "spinlock")
            ep = calls[-1].get("episode") or (float("nan"),) * 4
            s = simulate_spinlock(k=int(r["k"]), S=r["S"], cs2=r["cs2"],
                                  n_keys=int(r["n_keys"]), key_skew=r["key_skew"],
                                  f_sequential=r["f_sequential"], f_nosync=r["f_nosync"],
                                  rate=float(a["lam"]), o_lock=r["o_lock"],
                                  arrivals=arrivals, seed=seed)
            cls = "/".join(f"{s.get('R_' + c, float('nan')):.0f}" for c in "kns")
            print(f"{tag:>9} {r['i']:>4} {r['k']:>3} {r['n_keys']:>5} {r['f_sequential']:>6.3f} "
                  f"{r['o_lock']:>6.0f} {r['R']:>7.0f} {s['R']:>7.0f} {R:>8.0f} {cls:>17} "
                  f"{s['E1']:>7.0f} {ep[0]:>7.0f} {s['drain']:>7.0f} {ep[3]:>7.0f} "
                  f"{s['v']:>6.3f} {ep[2]:>6.3f}", flush=True)
            out.append({"i": r["i"], "chosen": tag, "point": {f: r[f] for f in FIELDS},
                        "ref_R": r["R"], "ref_R_hw": r["R_hw"], "sim": s, "model_R": R,
                        "model_E1": ep[0], "model_v": ep[2], "model_drain": ep[3]})
    write_results("pdq_spinlock.json", {"arrivals": arrivals, "seed": seed, "rows": out})
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
