"""Why Single is low at large interrupt costs: the nodes' arrivals are not independent of them.

Run ``python -m benchmarks.policy_single_coupling [requests] [seed] [points]``
(defaults 100000, 7, 4).

The Single policy's worst points on the stored design (``validation/data/domain/
policy.json``, seed 2026) all have a large interrupt cost (``O_int`` 8,000-17,000
cycles) on 3-6 nodes, and the default model (the node chain, a decomposition)
is 10-20% low there.  Two measurements at each of the ``points`` worst points
and at as many others drawn at random (control):

1. **The interrupt count as** ``O_int`` **grows.**  The bundled simulator
   (:func:`validation.compare.simulate_measures`, ``requests`` requests, seed
   ``seed``) and the default model at ``O_int`` times 0, 0.25, 1, 3 and 10
   (beyond the declared domain on purpose: the limit shows the mechanism).
2. **Arrivals conditional on the node's own thread.**  A stand-alone
   simulation of the Single machine (written apart from :mod:`validation.sim`,
   one thread and one processor per node, FIFO protocol queue, an arriving
   request interrupts the computing thread, the interrupted processor drains
   the queue; handlers of mean ``o + o_dispatch`` with ``handler_cs2``
   (:meth:`validation.sim.dists.Dist.from_cs2`) plus the constant ``o_direct +
   o_indirect``, and ``O_int`` on the interrupting one) counts the requests
   from other nodes arriving at a node while its own thread computes (or is
   preempted), runs a local handler (its send or response handler, or waits
   for one), or is away with its request in the network or held at the
   remote node; the node chain gives the same rates from its stationary
   vector at its converged fixed point (its remote trip does not split the
   network from the remote node: one "away" class).

Finding (see the policy docs, *Where the node chain is low: interrupts at
large* ``O_int``): in the simulator the interrupts per request level off as
``O_int`` grows (128: 0.151, 0.147, 0.147 at ``O_int`` 14,446, 10^5, 10^6),
in the model they fall towards 0 (0.112 at 14,446, 0.077 at 40,000).  A long
interrupt freezes the node it runs on and every thread whose request waits
there; when it ends, they are released together, and their next requests
find computing threads, so they interrupt again.  The decomposition's
arrival stream is a time average: while the node's thread computes, it
expects the others' long-run rate, which falls as ``1/O_int``; while its
request is held at a remote node, it expects the same rate, where the
simulated arrivals are half as frequent (the node holding it and the threads
stuck there send nothing).
"""

from __future__ import annotations

import heapq
import random
import sys
from collections import deque
from typing import Any

FIELDS = ("p", "nodes", "U", "o_req", "o_reply", "o_resp", "L", "O_int", "o_direct",
          "o_indirect", "t_transfer", "handler_cs2")
#: multiples of the point's ``O_int`` simulated and modelled
SCALES = (0.0, 0.25, 1.0, 3.0, 10.0)
#: the thread classes of the conditional arrival rates
CLASSES = ("computing", "local", "network", "held")

_COMP, _SEND, _NET, _HELD, _RESP, _WAIT = range(6)
_CLASS = {_COMP: "computing", _SEND: "local", _RESP: "local", _WAIT: "local",
          _NET: "network", _HELD: "held"}


def simulate_single(*, nodes: int, C: float, o_req: float, o_reply: float, o_resp: float,
                    L: float, O_int: float, extra: float, cs2: float,
                    requests: int = 100_000, seed: int = 7) -> dict[str, Any]:
    """The stand-alone Single machine: interrupts per request, cycle and conditional arrivals.

    ``C``: mean (exponential) compute burst; ``extra``: the constant overhead of
    every handler (``o_direct + o_indirect``); handler means include
    ``o_dispatch``.  The first tenth of the ``requests`` is discarded.
    Returns ``P_int`` (interrupts per request), ``cycle`` (time per request
    and thread) and ``rate[c]``, ``share[c]``: the rate of other nodes'
    requests arriving at a node while its thread is in class ``c``
    (:data:`CLASSES`) and the share of time it spends there.

    >>> r = simulate_single(nodes=3, C=500.0, o_req=50.0, o_reply=50.0, o_resp=50.0, L=50.0,
    ...                     O_int=100.0, extra=20.0, cs2=1.0, requests=3000)
    >>> 0.0 < r["P_int"] < 1.0 and abs(sum(r["share"].values()) - 1.0) < 1e-9
    True
    """
    from validation.sim.dists import Dist

    rng = random.Random(seed)
    draw = {kind: Dist.from_cs2(m, cs2).sampler(rng)
            for kind, m in (("send", o_req), ("req", o_reply), ("resp", o_resp))}
    ev: list[tuple[float, int, int, int, int]] = []   # (time, seq, event, node, arg)
    seq = 0
    state = [_COMP] * nodes
    since = [0.0] * nodes
    comp_end = [0.0] * nodes
    acting = [False] * nodes
    queue: list[deque[tuple[str, int]]] = [deque() for _ in range(nodes)]
    serving: list[tuple[str, int]] = [("", -1)] * nodes
    time_in = {c: 0.0 for c in CLASSES}
    arrivals = {c: 0 for c in CLASSES}
    done = interrupts = 0
    warm = requests // 10
    t_warm = 0.0
    counting = False

    def push(t: float, kind: int, node: int, arg: int = 0) -> None:
        nonlocal seq
        seq += 1
        heapq.heappush(ev, (t, seq, kind, node, arg))

    def move(i: int, s: int, now: float) -> None:
        if counting:
            time_in[_CLASS[state[i]]] += now - since[i]
        since[i] = now
        state[i] = s

    def compute(i: int, now: float) -> None:
        move(i, _COMP, now)
        comp_end[i] = now + rng.expovariate(1.0 / C)
        if not acting[i]:
            push(comp_end[i], 0, i)

    def run(i: int, now: float, item: tuple[str, int], interrupt: bool) -> None:
        acting[i] = True
        serving[i] = item
        d = draw[item[0]]() + extra + (O_int if interrupt else 0.0)
        if state[i] == _COMP:          # the thread is preempted: its burst ends later
            comp_end[i] += d
        push(now + d, 1, i)

    def arrive(i: int, now: float, item: tuple[str, int]) -> None:
        nonlocal interrupts
        if item[0] == "req":
            if counting:
                arrivals[_CLASS[state[i]]] += 1
            move(item[1], _HELD, now)
        if acting[i]:
            queue[i].append(item)
            if item[0] == "resp":
                move(i, _WAIT, now)
            return
        hit = item[0] == "req" and state[i] == _COMP
        interrupts += hit and counting
        if item[0] == "resp":
            move(i, _RESP, now)
        run(i, now, item, hit)

    for i in range(nodes):
        compute(i, 0.0)
    now = 0.0
    while done < requests:
        now, _, kind, i, arg = heapq.heappop(ev)
        if kind == 0:                                  # a burst may end
            if state[i] == _COMP and not acting[i] and now >= comp_end[i]:
                move(i, _SEND, now)
                run(i, now, ("send", i), False)
            continue
        if kind == 2:                                  # a message reaches node i
            arrive(i, now, ("req", arg) if arg >= 0 else ("resp", i))
            continue
        what, src = serving[i]                         # node i's handler ends
        if what == "send":
            move(i, _NET, now)
            dst = rng.randrange(nodes - 1)
            push(now + L, 2, dst + (dst >= i), i)
        elif what == "req":
            move(src, _NET, now)
            push(now + L, 2, src, -1)
        else:                                          # the thread computes again (its
            done += 1                                  # burst waits while the processor
            if done == warm:                           # drains the queue)
                counting, t_warm = True, now
                since[:] = [now] * nodes
            compute(i, now)                            # (acting: no end event yet)
        if queue[i]:
            nxt = queue[i].popleft()
            if nxt[0] == "req":
                move(nxt[1], _HELD, now)
            elif nxt[0] == "resp":
                move(i, _RESP, now)
            run(i, now, nxt, False)
        else:
            acting[i] = False
            if state[i] == _COMP:
                push(comp_end[i], 0, i)
    for i in range(nodes):
        move(i, state[i], now)
    span = (now - t_warm) * nodes
    counted = requests - warm
    return {"P_int": interrupts / counted, "cycle": span / counted,
            "rate": {c: arrivals[c] / time_in[c] if time_in[c] > 0 else float("nan")
                     for c in CLASSES},
            "share": {c: time_in[c] / span for c in CLASSES}}


def model_conditional(point: dict[str, Any]) -> dict[str, Any]:
    """The node chain's arrival rate by thread class at its converged fixed point (Single).

    The chain's last stationary vector and rates are read by wrapping
    :func:`models._policy_node._stationary` for one solve; classes "computing"
    (the thread is not blocked and no local handler runs or waits), "local"
    and "away" (the chain's remote trip).
    """
    import numpy as np

    import models._policy_node as pn
    from models.policy import PolicyParams

    p = PolicyParams(**point)
    v = {f: float(np.asarray(getattr(p, f))) for f in
         ("p", "nodes", "o_req", "o_reply", "o_resp", "L", "O_int", "o_direct", "o_indirect",
          "t_transfer", "o_dispatch", "t_extra", "handler_cs2")}
    v["C"] = float(np.asarray(p.compute_time))
    last: dict[str, Any] = {}
    inner = pn._stationary

    def spy(ch: Any, rate: Any, n: int, cache: dict, tol: float = 1e-11) -> Any:
        pi = inner(ch, rate, n, cache, tol)
        last.update(ch=ch, rate=rate, pi=pi)
        return pi

    pn._stationary = spy
    try:
        out = pn.solve_point(v, "single")
    finally:
        pn._stationary = inner
    ch, rate, pi = last["ch"], last["rate"], last["pi"]
    c, qs, qw, _, k = ch.S[:5]
    arr = np.bincount(ch.src[ch.mode == 1], weights=rate[ch.mode == 1], minlength=pi.size)
    local = (k == 1) | (k == 3) | (qs > 0) | (qw > 0)
    masks = {"computing": (c == 1) & ~local, "local": local & (ch.r == 0), "away": ch.r >= 1}
    return {"P_int": float(out["P_int"]), "cycle": float(out["R"]),
            "rate": {n: float(pi[m] @ arr[m] / pi[m].sum()) for n, m in masks.items()},
            "share": {n: float(pi[m].sum()) for n, m in masks.items()}}


def main(argv: list[str]) -> int:
    import numpy as np

    from benchmarks._stored import int_args, steps, worst_first, write_results
    from models.policy import PolicyParams, solve
    from validation.compare import simulate_measures

    requests, seed, n_pts = int_args(argv, (100_000, 7, 4), ("requests", "seed", "points"))

    def model(r: dict) -> float:
        return float(np.asarray(solve(PolicyParams(**{f: r[f] for f in FIELDS}),
                                      "single").R))

    scored = worst_first("policy", lambda r: r["variant"] == "single", model)
    worst = scored[:n_pts]
    others = random.Random(seed).sample(scored[n_pts:], n_pts)
    rows = []
    print(f"Single: interrupts per request as O_int grows (bundled simulator, {requests} "
          f"requests, seed {seed}) and arrivals by the node's own thread (stand-alone machine)")
    chosen = [("worst", x) for x in worst] + [("control", x) for x in others]
    for tag, (err, R, r) in steps(chosen, "policy single coupling: points"):
        point = {f: r[f] for f in FIELDS}
        p = PolicyParams(**point)
        sweep = []
        for s in SCALES:
            q = dict(point, O_int=s * r["O_int"])
            sim = simulate_measures("policy", "single", cycles=requests, seed=seed, **q)
            m = solve(PolicyParams(**q), "single")
            sweep.append({"O_int": q["O_int"], "sim_P_int": float(sim["P_int"]),
                          "sim_R": float(sim["R"]),
                          "model_P_int": float(np.asarray(m.interrupt_probability)),
                          "model_R": float(np.asarray(m.R))})
        alone = simulate_single(
            nodes=int(r["nodes"]), C=float(np.asarray(p.compute_time)),
            o_req=float(np.asarray(p.o_req + p.o_dispatch)),
            o_reply=float(np.asarray(p.o_reply + p.o_dispatch)),
            o_resp=float(np.asarray(p.o_resp + p.o_dispatch)), L=float(r["L"]),
            O_int=float(r["O_int"]), extra=float(r["o_direct"] + r["o_indirect"]),
            cs2=float(r["handler_cs2"]), requests=requests, seed=seed)
        chain = model_conditional(point)
        sign = 1.0 if R >= r["R"] else -1.0
        print(f"{tag:7} point {r['i']:>3}: nodes {r['nodes']}, O_int {r['O_int']:,.0f}, "
              f"R error {100 * sign * err:+.1f}%")
        print("    O_int        sim P_int  model P_int   R error")
        for w in sweep:
            print(f"    {w['O_int']:>10,.0f}   {w['sim_P_int']:.4f}     {w['model_P_int']:.4f}"
                  f"    {100 * (w['model_R'] / w['sim_R'] - 1):+6.1f}%")
        away = (alone["rate"]["network"] * alone["share"]["network"]
                + alone["rate"]["held"] * alone["share"]["held"]) / max(
            alone["share"]["network"] + alone["share"]["held"], 1e-300)
        print("    arrivals per 1,000 cycles while the thread is: computing / local / away "
              "(network, held)")
        print(f"      stand-alone machine {1e3 * alone['rate']['computing']:.3f} / "
              f"{1e3 * alone['rate']['local']:.3f} / {1e3 * away:.3f} "
              f"({1e3 * alone['rate']['network']:.3f}, {1e3 * alone['rate']['held']:.3f});"
              f" P_int {alone['P_int']:.4f}, cycle {alone['cycle']:,.0f}", flush=True)
        print(f"      node chain          {1e3 * chain['rate']['computing']:.3f} / "
              f"{1e3 * chain['rate']['local']:.3f} / {1e3 * chain['rate']['away']:.3f};"
              f" P_int {chain['P_int']:.4f}, cycle {chain['cycle']:,.0f}", flush=True)
        rows.append({"set": tag, "i": r["i"], "point": point, "R_err": sign * err,
                     "sim_R": r["R"], "sweep": sweep, "alone": alone,
                     "alone_away_rate": away, "chain": chain})
    write_results("policy_single_coupling.json",
                  {"requests": requests, "seed": seed, "rows": rows})
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
