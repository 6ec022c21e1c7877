"""Why Fixed is slow on two and three nodes: the FIFO order of the protocol queue.

Run ``python -m benchmarks.policy_fifo_order [cycles] [seed]`` (defaults 60000, 7).

A stand-alone discrete-event simulation of the Fixed machine (written apart from
:mod:`validation.sim`): ``nodes`` nodes, ``p - 1`` threads per node, one protocol
processor per node; a thread computes (exponential, mean ``C``), its send handler
(``o_req``) runs on its node's protocol processor, the request travels
``t_transfer + L`` to a uniformly chosen other node, whose request handler
(``o_reply``) runs there, the reply travels ``L`` back and the thread's reply
handler (``o_resp``) runs at home.  Handlers are gamma with ``handler_cs2``
(constant at 0).  The protocol queue is served in arrival order (``fifo``, as
the bundled simulator) or in random order (``ros``): the same machine, only the
choice of the next queued handler differs.

Printed for the worst Fixed points of the shipped design
(``validation/data/domain/policy.json``, seed 2026) and for design point 446 at
``p`` = 2, 3, 4: the stored reference (bundled simulator), this simulation
under both orders, closed-network MVA and the node chain; and for 484 the
fraction of time exactly one of the two protocol processors is busy.  Rows are
written to ``benchmarks/results/policy_fifo_order.json``.

Finding (see the policy docs, "Fixed on two and three nodes: FIFO order"): the
FIFO machine reproduces the bundled simulator, and closed-network MVA is the
random-order machine (at point 484: MVA 18,336, random order 18,092, FIFO
24,955, simulator 25,157).
"""

from __future__ import annotations

import heapq
import json
import os
import random
import sys
from typing import Any

FIELDS = ("p", "nodes", "U", "o_req", "o_reply", "o_resp", "L", "O_int", "o_direct",
          "o_indirect", "t_transfer", "handler_cs2")


def simulate_fixed(nodes: int, n_c: int, C: float, o_req: float, o_reply: float, o_resp: float,
                   L: float, t_transfer: float, cs2: float, order: str = "fifo",
                   cycles: int = 60_000, seed: int = 7) -> dict[str, Any]:
    """Cycle time ``R``, protocol-processor utilization and (two nodes) busy overlap.

    ``order``: ``"fifo"`` or ``"ros"`` (random order of service).  The first tenth
    of ``cycles`` completed request cycles is discarded.

    >>> r = simulate_fixed(2, 1, 100.0, 10.0, 10.0, 10.0, 5.0, 0.0, 1.0, cycles=2000)
    >>> 130.0 < r["R"] < 200.0
    True
    """
    rng = random.Random(seed)
    costs = (o_req, o_reply, o_resp)

    def draw(m: float) -> float:
        if cs2 <= 0:
            return m
        k = 1.0 / cs2
        return rng.gammavariate(k, m / k)

    heap: list[Any] = []
    seq = 0

    def push(t: float, kind: int, a: Any) -> None:
        nonlocal seq
        seq += 1
        heapq.heappush(heap, (t, seq, kind, a))

    ISSUE, ARRIVE, END = 0, 1, 2
    queue: list[list[Any]] = [[] for _ in range(nodes)]
    busy = [False] * nodes
    busy_time = [0.0] * nodes
    started = [0.0] * nodes
    one_busy = 0.0
    warm = cycles // 10
    done = 0
    t0 = t_last = 0.0

    def serve(t: float, n: int, job: list[Any]) -> None:
        busy[n] = True
        started[n] = t
        push(t + draw(costs[job[1]]), END, (n, job))

    t = 0.0
    for n in range(nodes):
        for _ in range(n_c):
            push(rng.expovariate(1.0 / C) if C > 0 else 0.0, ISSUE, [n, 0, n])
    while done < cycles + warm:
        t, _, kind, a = heapq.heappop(heap)
        if done >= warm and nodes == 2:
            one_busy += (t - t_last) * (busy[0] != busy[1])
        t_last = t
        if kind == ISSUE:            # job = [home, phase, destination]
            job = a
            job[1] = 0
            job[2] = rng.choice([x for x in range(nodes) if x != job[0]])
            n = job[0]
        elif kind == ARRIVE:
            n, job = a
        else:
            n, job = a
            if done >= warm:
                busy_time[n] += t - max(started[n], t0)
            busy[n] = False
            if job[1] == 0:
                job[1] = 1
                push(t + t_transfer + L, ARRIVE, (job[2], job))
            elif job[1] == 1:
                job[1] = 2
                push(t + L, ARRIVE, (job[0], job))
            else:
                done += 1
                if done == warm:
                    t0 = t
                push(t + (rng.expovariate(1.0 / C) if C > 0 else 0.0), ISSUE, job)
            q = queue[n]
            if q:
                serve(t, n, q.pop(0) if order == "fifo" else q.pop(rng.randrange(len(q))))
            continue
        if busy[n]:
            queue[n].append(job)
        else:
            serve(t, n, job)
    T = t - t0
    return {"R": nodes * n_c * T / cycles, "U_pp": sum(busy_time) / nodes / T,
            "one_busy": one_busy / T if nodes == 2 else None}


def run(cycles: int = 60_000, seed: int = 7) -> list[dict[str, Any]]:
    """The rows printed by the command line (see the module notes)."""
    import warnings

    from models.policy import PolicyParams, solve

    here = os.path.dirname(os.path.abspath(__file__))
    with open(os.path.join(here, "..", "validation", "data", "domain", "policy.json")) as f:
        refs = {r["i"]: r for r in json.load(f)["rows"] if r["variant"] == "fixed"}
    cases = [(i, {}) for i in (484, 446, 280, 328, 242, 468)]
    cases += [(446, {"p": p}) for p in (2, 3)]
    rows = []
    for i, change in cases:
        ref = refs[i]
        v = {k: ref[k] for k in FIELDS}
        v.update(change)
        prm = PolicyParams(**v)
        row: dict[str, Any] = {"i": i, "p": v["p"], "nodes": v["nodes"],
                               "sim_R": ref["R"] if not change else None}
        for order in ("fifo", "ros"):
            s = simulate_fixed(int(v["nodes"]), int(v["p"]) - 1, float(prm.compute_time),
                               v["o_req"], v["o_reply"], v["o_resp"], v["L"],
                               v["t_transfer"], v["handler_cs2"], order, cycles, seed)
            row.update({f"{order}_R": s["R"], f"{order}_U_pp": s["U_pp"],
                        f"{order}_one_busy": s["one_busy"]})
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            for m in ("mva", "node"):
                try:
                    row[f"{m}_R"] = float(solve(prm, "fixed", method=m).cycle_time)
                except Exception:  # noqa: BLE001 - reported as missing
                    row[f"{m}_R"] = None
        rows.append(row)
    return rows


def main(argv: list[str]) -> None:
    cycles = int(argv[0]) if argv else 60_000
    seed = int(argv[1]) if len(argv) > 1 else 7
    rows = run(cycles, seed)

    def f(x: Any) -> str:
        return "-" if x is None else f"{x:,.0f}"

    def b(x: Any) -> str:
        return "-" if x is None else f"{x:.2f}"

    print("| point | p | nodes | simulator | FIFO | random order | MVA | node chain "
          "| FIFO U_pp | ROS U_pp | one PP busy, FIFO / ROS |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        print(f"| {r['i']} | {r['p']} | {r['nodes']} | {f(r['sim_R'])} | {f(r['fifo_R'])} "
              f"| {f(r['ros_R'])} | {f(r['mva_R'])} | {f(r['node_R'])} "
              f"| {r['fifo_U_pp']:.3f} | {r['ros_U_pp']:.3f} "
              f"| {b(r['fifo_one_busy'])} / {b(r['ros_one_busy'])} |")
    out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "results",
                       "policy_fifo_order.json")
    with open(out, "w") as fh:
        json.dump({"command": "python -m benchmarks.policy_fifo_order "
                   f"{cycles} {seed}", "rows": rows}, fh, indent=1)
    print(f"written {out}")


if __name__ == "__main__":
    main(sys.argv[1:])
