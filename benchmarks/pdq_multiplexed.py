"""What a sequential episode is made of on multiplexed processors.

Run ``python -m benchmarks.pdq_multiplexed [arrivals] [seed] [points]``
(defaults 300000, 7, 8).

A stand-alone discrete-event simulation of one shared PDQ on multiplexed
processors (Hurricane-1 Mult; written apart from :mod:`validation.sim`, with
the rules of :mod:`validation.sim.hardware`): each of the ``k`` processors
runs a compute thread of exponential bursts (mean ``10 S``, suspended while
the processor runs handlers) and idle periods (real time) so that it
computes a fraction ``u_c``; a handler that can start takes an idle
processor, else interrupts a computing one (round-robin) and pays
``O_int``; every handler pays ``o_sched``; a processor that ends a handler
takes the next one that can start (handing it to an idle processor if its
own thread wants to compute), else goes back to its thread.  The PDQ rules
are those of :mod:`benchmarks.pdq_episodes` (keys, nosync handlers,
sequential handlers that drain and run alone).

For the ``points`` worst multiplexed points of the shipped design
(``validation/data/domain/pdq.json``) by the default method's error it
prints the stored reference, this simulation's ``R``, the interrupts per
handler of each class (keyed, nosync, sequential), the episode's mean
``E1`` and load ``v`` measured and in the key-aware method, and the batch
an episode releases: the handlers held behind it (mean ``lambda_o E1``,
exactly) and those that start at once (the others wait behind the next
sequential handler, or for a processor).  Rows are written to
``benchmarks/results/pdq_multiplexed.json``.

Finding (PDQ docs, "Multiplexed processors"): a sequential handler pays
almost no interrupt -- it starts on the processor the drain's last handler
frees -- while the handlers it drains often paid one, so the episode is
long where the interrupt is costly; the released batch's members beyond
the idle processors interrupt.
"""

from __future__ import annotations

import heapq
import random
import sys
from collections import deque
from typing import Any

FIELDS = ("k", "S", "cs2", "n_keys", "key_skew", "f_sequential", "f_nosync", "load",
          "compute_utilization", "O_int", "o_sched")

_IDLE, _COMPUTING, _READY = 0, 1, 2      # a processor's thread


def simulate_multiplexed(*, k: int, S: float, cs2: float, n_keys: int, key_skew: float,
                         f_sequential: float, f_nosync: float, rate: float, uc: float,
                         O_int: float, o_sched: float, burst_over_S: float = 10.0,
                         arrivals: int = 300_000, seed: int = 7) -> dict[str, float]:
    """Response, interrupts per class, the episodes and the released batches of one point.

    ``rate``: handler arrivals per cycle.  The first tenth of ``arrivals``
    is discarded.

    >>> r = simulate_multiplexed(k=1, S=1.0, cs2=1.0, n_keys=1, key_skew=0.0, f_sequential=0.0,
    ...                          f_nosync=0.0, rate=0.5, uc=0.0, O_int=0.0, o_sched=0.0,
    ...                          arrivals=100_000)
    >>> 1.85 < r["R"] < 2.15          # never computing: M/M/1 at 0.5, R = 2
    True
    """
    import numpy as np

    from benchmarks.pdq_episodes import admit, draw_handler, leave
    from models.pdq import key_probabilities
    from validation.sim.dists import Dist

    rng = random.Random(seed)
    draw = Dist.from_cs2(S, cs2).sampler(rng)
    B = burst_over_S * S
    idle_mean = B * (1.0 - uc) / uc if uc > 0.0 else 0.0
    cum = np.cumsum(key_probabilities(int(n_keys), key_skew)).tolist()
    ev: list[tuple[float, int, int, Any]] = []   # (time, seq, kind, payload)
    n_ev = 0

    def push(t: float, kind: int, obj: Any) -> None:
        nonlocal n_ev
        n_ev += 1
        heapq.heappush(ev, (t, n_ev, kind, obj))

    thread = [_IDLE] * k
    acting = [False] * k
    left = [0.0] * k          # a suspended burst's remaining work
    ends = [0.0] * k          # a running burst's end
    version = [0] * k         # (a burst end event is stale when this moved on)
    idle: list[int] = []
    for i in range(k):
        if uc > 0.0 and rng.random() < uc:
            thread[i] = _COMPUTING
            ends[i] = rng.expovariate(1.0 / B)
            push(ends[i], 2, (i, 0))
        else:
            idle.append(i)
            if uc > 0.0:
                push(rng.expovariate(1.0 / idle_mean), 3, i)
    eligible: list[tuple[int, list[Any]]] = []
    behind: dict[int, deque[list[Any]]] = {}
    n_acting, seq_running, rr = 0, False, 0
    warm = arrivals // 10
    sums = {c: [0.0, 0, 0] for c in "kns"}     # response, count, interrupts
    e1 = e2 = 0.0
    n_ep = 0
    last_seq_end = 0.0
    held, started = [], []

    def pick() -> list[Any] | None:
        if n_acting >= k or not eligible or seq_running:
            return None
        m = eligible[0][1]
        if m[0] == "s" and n_acting:
            return None                           # drains: nothing behind it starts
        heapq.heappop(eligible)
        return m

    def resume(now: float, x: int) -> None:
        version[x] += 1
        ends[x] = now + left[x]
        push(ends[x], 2, (x, version[x]))

    def start(now: float, m: list[Any], x: int | None) -> None:
        nonlocal n_acting, seq_running, rr
        n_acting += 1
        seq_running = seq_running or m[0] == "s"
        dur = m[3] + o_sched
        if x is None:
            if idle:
                x = idle.pop()
            else:                                 # interrupt a computing one (round-robin)
                for _ in range(k):
                    rr = rr + 1 if rr + 1 < k else 0
                    if thread[rr] == _COMPUTING and not acting[rr]:
                        x = rr
                        break
                assert x is not None
                m[6] = 1
                dur += O_int
        if thread[x] == _COMPUTING and not acting[x]:
            left[x] = ends[x] - now               # suspend the burst
            version[x] += 1
        acting[x] = True
        m[5] = x
        push(now + dur, 1, m)

    def release(now: float, x: int) -> None:
        acting[x] = False
        if thread[x] == _READY:
            thread[x] = _COMPUTING
            left[x] = rng.expovariate(1.0 / B)
            resume(now, x)
        elif thread[x] == _COMPUTING:
            resume(now, x)
        else:
            idle.append(x)
            nm = pick()
            if nm is not None:
                start(now, nm, None)

    def dispatch(now: float) -> None:
        while True:
            m = pick()
            if m is None:
                return
            start(now, m, None)

    push(rng.expovariate(rate), 0, None)
    n = 0
    while n < arrivals or n_acting:
        now, _, kind, obj = heapq.heappop(ev)
        if kind == 0:                             # an arrival
            n += 1
            cls, key = draw_handler(rng, cum, f_sequential, f_nosync)
            admit([cls, key, now, draw(), n, None, 0], eligible, behind)   # +processor, interrupted
            if n < arrivals:
                push(now + rng.expovariate(rate), 0, None)
            dispatch(now)
            continue
        if kind == 2:                             # a burst ends
            x, ver = obj
            if ver != version[x] or acting[x] or thread[x] != _COMPUTING:
                continue
            thread[x] = _IDLE
            push(now + rng.expovariate(1.0 / idle_mean), 3, x)
            idle.append(x)
            nm = pick()
            if nm is not None:
                start(now, nm, None)
            continue
        if kind == 3:                             # an idle period ends
            x = obj
            if acting[x]:
                thread[x] = _READY
            else:
                idle.remove(x)
                thread[x] = _COMPUTING
                left[x] = rng.expovariate(1.0 / B)
                resume(now, x)
            continue
        m = obj                                   # a handler ends
        x = m[5]
        n_acting -= 1
        cls, t0 = m[0], m[2]
        if m[4] > warm:
            s = sums[cls]
            s[0] += now - t0
            s[1] += 1
            s[2] += m[6]
        if cls == "s":
            seq_running = False
            if m[4] > warm:
                e = now - max(t0, last_seq_end)
                e1 += e
                e2 += e * e
                n_ep += 1
                nxt = min((q[0] for q in eligible if q[1][0] == "s"), default=sys.maxsize)
                held.append(sum(1 for q in eligible if q[0] < nxt)
                            + sum(1 for d in behind.values() for q in d if q[4] < nxt))
            last_seq_end = now
        elif cls == "k":
            leave(m, eligible, behind)
        nm = pick()
        if nm is None:
            release(now, x)
        elif thread[x] != _IDLE and idle:
            start(now, nm, None)                  # an idle processor takes over
            release(now, x)
        else:
            start(now, nm, x)                     # x keeps the protocol role
        dispatch(now)
        if cls == "s" and m[4] > warm:
            started.append(n_acting)
    cnt = sum(s[1] for s in sums.values())
    out = {"R": sum(s[0] for s in sums.values()) / cnt}
    for c, s in sums.items():
        if s[1]:
            out[f"R_{c}"], out[f"int_{c}"] = s[0] / s[1], s[2] / s[1]
    if n_ep:
        out.update(E1=e1 / n_ep, E2=e2 / n_ep, v=rate * f_sequential * e1 / n_ep,
                   held=float(np.mean(held)), started=float(np.mean(started)))
    return out


def main(argv: list[str]) -> int:
    import numpy as np

    import models.pdq as pdq
    from benchmarks._stored import int_args, recorded, steps, worst_first, write_results

    arrivals, seed, n_pts = int_args(argv, (300_000, 7, 8), ("arrivals", "seed", "points"))

    def params(r: dict[str, Any]) -> Any:
        return pdq.PDQParams(**{f: r[f] for f in FIELDS}, multiplexed=True)

    scored = worst_first("pdq", lambda r: r["variant"] == "multiplexed" and r["f_sequential"] > 0,
                         lambda r: float(pdq.solve(params(r), "shared").response_time))
    scored = [x for x in scored if np.isfinite(x[0])][:n_pts]
    out = []
    print(f"shared PDQ on multiplexed processors: stored reference, stand-alone simulation "
          f"({arrivals} arrivals, seed {seed}) and the key-aware method")
    print(f"{'i':>4} {'k':>3} {'keys':>5} {'f_seq':>6} {'O_int':>6} {'ref R':>7} {'sim R':>7} "
          f"{'model R':>8} {'int k/n/s':>16} {'sim E1':>7} {'mod E1':>7} {'sim v':>6} "
          f"{'mod v':>6} {'held':>6} {'started':>7}")
    with recorded(pdq, "_keyed_point") as calls:
        for err, R, r in steps(scored, "pdq multiplexed: simulated points"):
            calls.clear()
            a = pdq._prepare(params(r))
            pdq.solve(params(r), "shared")
            ep = calls[-1].get("episode") or (float("nan"),) * 3
            s = simulate_multiplexed(k=int(r["k"]), S=r["S"], cs2=r["cs2"],
                                     n_keys=int(r["n_keys"]), key_skew=r["key_skew"],
                                     f_sequential=r["f_sequential"], f_nosync=r["f_nosync"],
                                     rate=float(a["lam"]), uc=r["compute_utilization"],
                                     O_int=r["O_int"], o_sched=r["o_sched"],
                                     arrivals=arrivals, seed=seed)
            ints = "/".join(f"{s.get('int_' + c, float('nan')):.2f}" for c in "kns")
            print(f"{r['i']:>4} {r['k']:>3} {r['n_keys']:>5} {r['f_sequential']:>6.3f} "
                  f"{r['O_int']:>6.0f} {r['R']:>7.0f} {s['R']:>7.0f} {R:>8.0f} {ints:>16} "
                  f"{s['E1']:>7.0f} {ep[0]:>7.0f} {s['v']:>6.3f} {ep[2]:>6.3f} "
                  f"{s['held']:>6.1f} {s['started']:>7.1f}", flush=True)
            out.append({"i": r["i"], "point": {f: r[f] for f in FIELDS}, "ref_R": r["R"],
                        "ref_R_hw": r["R_hw"], "sim": s, "model_R": R,
                        "model_E1": ep[0], "model_v": ep[2]})
    write_results("pdq_multiplexed.json", {"arrivals": arrivals, "seed": seed, "rows": out})
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
