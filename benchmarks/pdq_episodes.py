"""Why the shared PDQ is high with sequential handlers: the episodes' length.

Run ``python -m benchmarks.pdq_episodes [arrivals] [seed] [points]`` (defaults
1500000, 7, 6).

A stand-alone discrete-event simulation of one shared PDQ (written apart from
:mod:`validation.sim`, with the same dispatch rules): ``k`` processors,
Poisson arrivals of handlers of mean ``S`` and ``cs2``
(:meth:`validation.sim.dists.Dist.from_cs2`); a keyed handler is eligible when
no handler of its key runs or is eligible, a nosync one always; the earliest
eligible handler starts when a processor is free, and a sequential one only
when nothing runs (nothing behind it starts meanwhile).  So a sequential
handler starts once every earlier handler has finished, and every later one
starts after it: the sequential handlers form a single-server queue whose
service is the *episode*, from the moment the handler is at the head (its
arrival, or the end of the previous episode) to its end -- the *drain* of the
handlers ahead, then the handler itself.

For the six worst shared points with at least 2% sequential handlers of
the shipped design (``validation/data/domain/pdq.json``, seed 2026) of the
key-aware method before the busiest key's lane (:data:`BEFORE_WORST`) and
the ``points`` worst now by the default's error, it
prints the stored reference (bundled simulator), this simulation's ``R`` and
the sequential handlers' response, the episode's mean ``E1``, second moment
``E2`` and load ``v = lambda_s E1`` measured, and the same three in the
key-aware method (:func:`models.pdq.solve`, ``method="keyed"``), and the
M/G/1 response ``lambda_s E2 / (2 (1 - v)) + E1`` of the measured moments.
Rows are written to ``benchmarks/results/pdq_episodes.json``.

Finding (see the PDQ docs, "Sequential handlers: the episode's length"): the
model's episodes were 23-41% too long at one to five keys (the drain of the
handlers ahead was the parallel drain *plus* the serial backlog of the
busiest key, where the two overlap), which put their queue closer to
saturation than it is; with the busiest key's handlers as a lane
(:func:`models.pdq._lane_drain_moments`) they are within 10%.
"""

from __future__ import annotations

import heapq
from bisect import bisect_right
from collections import deque
import random
import sys
from typing import Any

FIELDS = ("k", "S", "cs2", "n_keys", "key_skew", "f_sequential", "f_nosync", "load")

#: the six worst points (at least 2% sequential handlers) of the key-aware method
#: before the busiest key's lane (commit 60d78be), kept for the comparison
BEFORE_WORST = (331, 239, 109, 31, 213, 181)


def draw_handler(rng: random.Random, cum: list[float], f_sequential: float,
                 f_nosync: float) -> tuple[str, int]:
    """A handler's class (``"s"`` sequential, ``"n"`` nosync, ``"k"`` keyed) and key (-1: none)."""
    u = rng.random()
    cls = "s" if u < f_sequential else ("n" if u < f_sequential + f_nosync else "k")
    return cls, (min(bisect_right(cum, rng.random()), len(cum) - 1) if cls == "k" else -1)


def admit(msg: list[Any], eligible: list[tuple[int, list[Any]]],
          behind: dict[int, deque[list[Any]]]) -> None:
    """``msg`` (class, key, ..., its number at 4) joins the PDQ: behind its key, or eligible."""
    cls, key = msg[0], msg[1]
    if cls == "k" and key in behind:
        behind[key].append(msg)
        return
    if cls == "k":
        behind[key] = deque()
    heapq.heappush(eligible, (msg[4], msg))


def leave(msg: list[Any], eligible: list[tuple[int, list[Any]]],
          behind: dict[int, deque[list[Any]]]) -> None:
    """A keyed ``msg`` ended: its key's next handler becomes eligible, or the key is free."""
    later = behind[msg[1]]
    if later:
        nxt = later.popleft()
        heapq.heappush(eligible, (nxt[4], nxt))
    else:
        del behind[msg[1]]


def simulate_pdq(*, k: int, S: float, cs2: float, n_keys: int, key_skew: float,
                 f_sequential: float, f_nosync: float, load: float,
                 arrivals: int = 1_500_000, seed: int = 7) -> dict[str, Any]:
    """Response per class and the sequential episodes of one shared PDQ.

    The arrival rate is ``load k / S``.  The first tenth of ``arrivals`` is
    discarded.

    Besides ``R``, ``R_k``, ``R_n``, ``R_s`` and the episodes' ``E1``,
    ``E2``, ``v`` and ``mg1``, ``waits[c]`` splits the wait of the ordinary
    handlers of class ``c`` (``"n"`` nosync, ``"k"`` keyed; see
    :mod:`benchmarks.pdq_components`): ``held``, the share that arrived
    while a sequential handler was in the system (held back behind it);
    ``to_release``, their mean time until that sequential handler ended;
    ``after_release``, their mean wait from then to their start, split for
    keyed ones into ``after_head`` (the first of its key in the batch) and
    ``after_chain`` (behind an earlier one of its key; ``chain`` is their
    share); ``free``, the mean wait of the others.  So ``R_c - S`` is about
    ``held (to_release + after_release) + (1 - held) free`` (each handler's
    own time is its own draw).  ``drain_free`` / ``drain_blocked``: the
    mean drain of a sequential handler that arrived with no other in the
    system / behind another (from reaching the head to its start), and
    ``blocked``, the share of the latter.

    >>> r = simulate_pdq(k=1, S=1.0, cs2=1.0, n_keys=1, key_skew=0.0, f_sequential=0.0,
    ...                  f_nosync=0.0, load=0.5, arrivals=100_000)
    >>> 1.85 < r["R"] < 2.15          # M/M/1 at 0.5: 2
    True
    """
    import numpy as np

    from models.pdq import key_probabilities
    from validation.sim.dists import Dist

    rng = random.Random(seed)
    draw = Dist.from_cs2(S, cs2).sampler(rng)
    lam = load * k / S
    cum = np.cumsum(key_probabilities(int(n_keys), key_skew)).tolist()
    ev: list[tuple[float, int, int, Any]] = []    # (time, seq, kind 0 arrival / 1 end, msg)
    n_ev = 0
    eligible: list[tuple[int, list[Any]]] = []    # (arrival number, msg)
    behind: dict[int, deque[list[Any]]] = {}      # key -> later handlers (key running/eligible)
    running = 0
    seq_running = False
    last_seq_end = 0.0
    warm = arrivals // 10
    sums = {"k": [0.0, 0], "n": [0.0, 0], "s": [0.0, 0]}
    e1 = e2 = 0.0
    n_ep = 0
    pending: list[int] = []        # numbers of the sequential handlers in the system
    waiting: list[list[Any]] = []  # handlers held back behind one, not yet released
    # per class: count, held, to release, after release, after (head / chain), free,
    # chain count
    acc = {c: [0, 0, 0.0, 0.0, 0.0, 0.0, 0.0, 0] for c in "kn"}
    drains = [[0.0, 0], [0.0, 0]]  # sequential handlers' drain: free, blocked

    def push(t: float, kind: int, msg: Any) -> None:
        nonlocal n_ev
        n_ev += 1
        heapq.heappush(ev, (t, n_ev, kind, msg))

    def dispatch(now: float) -> None:
        nonlocal running, seq_running
        while running < k and eligible and not seq_running:
            msg = eligible[0][1]
            if msg[0] == "s" and running:
                return                            # drains: nothing behind it starts
            heapq.heappop(eligible)
            running += 1
            seq_running = msg[0] == "s"
            msg[5] = now
            push(now + msg[3], 1, msg)

    push(rng.expovariate(lam), 0, None)
    n = 0
    while n < arrivals or running:
        now, _, kind, msg = heapq.heappop(ev)
        if kind == 0:
            n += 1
            cls, key = draw_handler(rng, cum, f_sequential, f_nosync)
            # class, key, arrival, service, number, start, release (held back: else
            # None), behind an earlier one of its key, reached the head (sequential)
            msg = [cls, key, now, draw(), n, None, None, cls == "k" and key in behind,
                   now if not pending else None]
            if cls == "s":
                pending.append(n)
            elif pending:
                msg[6] = -1.0
                waiting.append(msg)
            admit(msg, eligible, behind)
            if n < arrivals:
                push(now + rng.expovariate(lam), 0, None)
            dispatch(now)
            continue
        running -= 1
        cls, key, t0 = msg[0], msg[1], msg[2]
        if msg[4] > warm:
            sums[cls][0] += now - t0
            sums[cls][1] += 1
        if cls == "s":
            seq_running = False
            if msg[4] > warm:
                e = now - max(t0, last_seq_end)
                e1 += e
                e2 += e * e
                n_ep += 1
                blocked = msg[8] is None
                drains[blocked][0] += msg[5] - max(t0, last_seq_end)
                drains[blocked][1] += 1
            last_seq_end = now
            pending.remove(msg[4])
            # the handlers held back behind it (and ahead of the next one) are released
            nxt = pending[0] if pending else None
            keep = []
            for m in waiting:
                if m[4] > msg[4] and (nxt is None or m[4] < nxt):
                    m[6] = now
                else:
                    keep.append(m)
            waiting[:] = keep
        else:
            if msg[4] > warm:
                a = acc[cls]
                a[0] += 1
                if msg[6] is not None and msg[6] >= 0.0:
                    a[1] += 1
                    a[2] += msg[6] - t0
                    a[3] += msg[5] - msg[6]
                    a[5 if msg[7] else 4] += msg[5] - msg[6]
                    a[7] += msg[7]
                else:
                    a[6] += msg[5] - t0
            if cls == "k":
                leave(msg, eligible, behind)
        dispatch(now)
    tot = sum(s[0] for s in sums.values())
    cnt = sum(s[1] for s in sums.values())
    out = {"R": tot / cnt, **{f"R_{c}": (s[0] / s[1] if s[1] else float("nan"))
                              for c, s in sums.items()}}
    out["waits"] = {}
    for c, (cnt_c, held, to_rel, after, head, chain, free, n_chain) in acc.items():
        if cnt_c:
            h = max(held, 1)
            out["waits"][c] = {"held": held / cnt_c, "to_release": to_rel / h,
                               "after_release": after / h,
                               "after_head": head / max(held - n_chain, 1),
                               "after_chain": chain / max(n_chain, 1), "chain": n_chain / h,
                               "free": free / max(cnt_c - held, 1)}
    if drains[0][1] + drains[1][1]:
        out.update(drain_free=drains[0][0] / max(drains[0][1], 1),
                   drain_blocked=drains[1][0] / max(drains[1][1], 1),
                   blocked=drains[1][1] / (drains[0][1] + drains[1][1]))
    if n_ep:
        E1, E2 = e1 / n_ep, e2 / n_ep
        v = lam * f_sequential * E1
        out.update(E1=E1, E2=E2, v=v,
                   mg1=lam * f_sequential * E2 / (2.0 * (1.0 - v)) + E1 if v < 1 else float("inf"))
    return out


def main(argv: list[str]) -> int:
    from benchmarks._stored import int_args, steps, worst_first, write_results
    from models.pdq import PDQParams, _keyed_point, key_probabilities, solve

    arrivals, seed, n_pts = int_args(argv, (1_500_000, 7, 6), ("arrivals", "seed", "points"))
    scored = worst_first(
        "pdq", lambda r: (r["variant"] == "shared" and r["f_sequential"] >= 0.02 and r["k"] > 1),
        lambda r: float(solve(PDQParams(**{f: r[f] for f in FIELDS}), "shared").response_time))
    by_i = {r["i"]: (err, R, r) for err, R, r in scored}
    chosen = [("before", by_i[i]) for i in BEFORE_WORST if i in by_i]
    chosen += [("worst now", x) for x in scored if x[2]["i"] not in BEFORE_WORST][:n_pts]
    out = []
    print(f"shared PDQ with sequential handlers: stored reference, stand-alone simulation "
          f"({arrivals} arrivals, seed {seed}) and the key-aware method")
    print(f"{'set':>9} {'i':>4} {'k':>3} {'keys':>5} {'f_seq':>6} {'cs2':>5} {'ref R':>8} "
          f"{'sim R':>8} {'model R':>8} {'sim R_seq':>9} {'mod R_seq':>9} {'sim E1':>7} "
          f"{'mod E1':>7} {'sim v':>6} {'mod v':>6} {'M/G/1':>8}")
    for tag, (err, R, r) in steps(chosen, "pdq episodes: simulated points"):
        s = simulate_pdq(**{f: (int(r[f]) if f in ("k", "n_keys") else r[f]) for f in FIELDS},
                         arrivals=arrivals, seed=seed)
        lam = r["load"] * r["k"] / r["S"]
        m = _keyed_point(float(r["k"]), lam, r["S"], r["cs2"],
                         key_probabilities(int(r["n_keys"]), r["key_skew"]), r["f_sequential"],
                         r["f_nosync"])
        E1m, E2m, vm = m["episode"]
        print(f"{tag:>9} {r['i']:>4} {r['k']:>3} {r['n_keys']:>5} {r['f_sequential']:>6.3f} "
              f"{r['cs2']:>5.2f} {r['R']:>8.0f} {s['R']:>8.0f} {R:>8.0f} {s['R_s']:>9.0f} "
              f"{m['R_seq']:>9.0f} {s['E1']:>7.0f} {E1m:>7.0f} {s['v']:>6.3f} {vm:>6.3f} "
              f"{s['mg1']:>8.0f}", flush=True)
        out.append({"set": tag, "i": r["i"], "point": {f: r[f] for f in FIELDS}, "ref_R": r["R"],
                    "ref_R_hw": r["R_hw"], "sim": s, "model_R": R, "model_R_seq": m["R_seq"],
                    "model_E1": E1m, "model_E2": E2m, "model_v": vm})
    write_results("pdq_episodes.json", {"arrivals": arrivals, "seed": seed, "rows": out})
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
