"""Why INI is low at two to four clusters: fixed latencies carry the INIs' bursts.

Run ``python -m benchmarks.ini_latency_bursts [visits] [seed] [points]`` (defaults
150000, 7, 12).

A stand-alone discrete-event simulation of the INIs of a clustered machine
(written apart from :mod:`validation.sim`).  Each of the ``clusters x N x K``
threads goes round its four INI visits: out of its home cluster's INI, across
the inter-cluster network (``L``) into an INI of a uniformly chosen other
cluster, through that cluster's intra-cluster network and request handler back
out of an INI of that cluster, across the network again and into an INI of its
home cluster, then through its reply handler and its next compute burst.
INIs serve FCFS with the model's distribution of mean ``O`` and ``cs2_O``
(:meth:`validation.sim.dists.Dist.from_cs2`); a cluster's ``K`` INIs share one
queue (``shared``), or a thread uses fixed INIs (``static``: its own at home,
its destination PE's abroad), or the INIs take turns per cluster and direction
(``round_robin``; the bundled simulator keeps one rotation per PE and
direction: no difference at one INI per cluster, where the worst round-robin
points are; at control point 277, six INIs per cluster, this machine's
``R_o`` is 12% low, probably for that reason, not checked).  The PE side is
not simulated: the time from arriving at the destination PE to leaving it
(``l + R_q``) and from the reply's arrival at home to the next request
(``l + R_y + W``) are the constant (or exponential) ``l`` and exponential
delays whose means are the bundled simulator's stored ``R_q``, ``R_y`` and
``R_w`` for the point.

Three machines, the same INIs:

``fixed``
    latencies ``L`` and ``l / 2`` constant, as in the bundled simulator, and the
    route above;
``exp``
    every latency exponential of the same mean, the same route;
``random``
    every latency exponential, and each visit goes to an INI chosen uniformly
    among all INIs after a delay of the mean between two visits -- the
    abstraction of the node method's station chains (one finite-source
    station, the twin chain of two clusters).

Printed, and written to ``benchmarks/results/ini_latency_bursts.json``: for the
worst INI points of the shipped design (``validation/data/domain/ini.json``,
seed 2026) by the default method's ``R`` error, and for as many other points of
that design (a seeded random sample, as a control), the INI residence ``R_o``
of the bundled simulator, of the default model and of the three machines.

Finding (see the INI docs, "Where the node method is low"): the ``fixed``
machine reproduces the bundled simulator's ``R_o``; the ``random`` one is the
model's.  With constant latencies the burst of departures an INI sends after
a long service reaches the next INI as a burst, ``L`` later; exponential
latencies spread it out, and a Markov chain of the INIs (which must take its
delays exponential or of a few phases) cannot hold it.
"""

from __future__ import annotations

import heapq
import random
import sys
from collections import deque

FIELDS = ("N", "K", "clusters", "W", "o", "O", "l", "L", "cs2_o", "cs2_O", "dispatch")
MACHINES = ("fixed", "exp", "random")


def simulate_inis(*, N: int, K: int, clusters: int, O_ini: float, cs2_O: float, l_intra: float,
                  L: float,
                  remote: float, home: float, dispatch: str, machine: str = "fixed",
                  visits: int = 150_000, seed: int = 7) -> dict[str, float]:
    """INI residence ``R_o`` and utilization ``U_o`` of the stand-alone INI machine.

    ``remote``: mean of the exponential delay from arriving at the destination
    PE to leaving it (after the intra-cluster hop); ``home``: from the reply's
    arrival at the home PE to the next request.  The first tenth of ``visits``
    INI services is discarded.

    >>> r = simulate_inis(N=1, K=1, clusters=2, O_ini=10.0, cs2_O=1.0, l_intra=0.0, L=100.0,
    ...                   remote=10.0, home=10.0, dispatch="static", visits=4000)
    >>> 10.0 < r["R_o"] < 20.0
    True
    """
    from validation.sim.dists import Dist

    rng = random.Random(seed)
    draw_O = Dist.from_cs2(O_ini, cs2_O).sampler(rng)
    S = N * K
    threads = clusters * S
    n_ini = clusters * K
    shared = dispatch == "shared"
    # a station per INI, or per cluster (shared): FCFS queue, servers, busy count
    n_st = clusters if shared else n_ini
    servers = K if shared else 1
    queue: list[deque[int]] = [deque() for _ in range(n_st)]
    busy = [0] * n_st
    rr = [0] * (2 * clusters)                     # round robin: per cluster and direction

    if machine == "fixed":
        def lat(m: float) -> float:
            return m
    else:
        def lat(m: float) -> float:
            return rng.expovariate(1.0 / m) if m > 0 else 0.0

    def exp_(m: float) -> float:
        return rng.expovariate(1.0 / m) if m > 0 else 0.0

    def station(cluster: int, pe_ini: int, direction: int) -> int:
        if shared:
            return cluster
        if dispatch == "static":
            return cluster * K + pe_ini
        j = 2 * cluster + direction
        rr[j] = (rr[j] + 1) % K
        return cluster * K + rr[j]

    # per thread: home cluster, its INI (static), stage 0..3, destination cluster and INI
    home_c = [t // S for t in range(threads)]
    home_i = [(t % S) // N for t in range(threads)]
    stage = [0] * threads
    dest = [(0, 0)] * threads
    mean_gap = (2 * L + 2 * l_intra + remote + home) / 4.0
    ev: list[tuple[float, int, int, int]] = []   # (time, seq, kind 0 arrive / 1 done, who)
    seq = 0
    done = 0
    warm = visits // 10
    area = 0.0
    t_warm = -1.0
    resid_sum = 0.0
    resid_n = 0
    arrived: dict[int, float] = {}

    def push(t: float, kind: int, who: int) -> None:
        nonlocal seq
        seq += 1
        heapq.heappush(ev, (t, seq, kind, who))

    def next_station(t: int) -> int:
        if machine == "random":
            return rng.randrange(n_st)
        s = stage[t]
        if s in (0, 3):
            return station(home_c[t], home_i[t], 0 if s == 0 else 1)
        return station(dest[t][0], dest[t][1], 1 if s == 1 else 0)

    at: list[int] = [0] * threads                 # station of the thread's current visit
    for t in range(threads):
        push(rng.random() * 4.0 * mean_gap, 0, t)
    now = 0.0
    last = 0.0
    while done < visits:
        now, _, kind, who = heapq.heappop(ev)
        if t_warm >= 0.0:
            area += (now - last) * sum(busy)
        last = now
        if kind == 0:                             # thread ``who`` arrives at its next INI
            st = next_station(who)
            at[who] = st
            arrived[who] = now
            if busy[st] < servers:
                busy[st] += 1
                push(now + draw_O(), 1, who)
            else:
                queue[st].append(who)
            continue
        st = at[who]                              # thread ``who`` leaves INI ``st``
        done += 1
        if done == warm:
            t_warm = now
        elif done > warm:
            resid_sum += now - arrived[who]
            resid_n += 1
        if queue[st]:
            nxt = queue[st].popleft()
            push(now + draw_O(), 1, nxt)
        else:
            busy[st] -= 1
        if machine == "random":
            push(now + exp_(mean_gap), 0, who)
            continue
        s = stage[who]
        if s == 0:                                # out of home: across to a random other cluster
            c = rng.randrange(clusters - 1)
            c += c >= home_c[who]
            dest[who] = (c, rng.randrange(K))
            gap = lat(L)
        elif s == 1:                              # into the destination: its PE and back out
            gap = lat(l_intra / 2.0) + exp_(remote) + lat(l_intra / 2.0)
        elif s == 2:                              # out of the destination: across, home
            gap = lat(L)
        else:                                     # into home: reply handler, next burst
            gap = lat(l_intra / 2.0) + exp_(home) + lat(l_intra / 2.0)
        stage[who] = (s + 1) % 4
        push(now + gap, 0, who)
    span = now - t_warm
    return {"R_o": resid_sum / resid_n, "U_o": area / span / n_ini if span > 0 else 0.0}


def main(argv: list[str]) -> int:
    from benchmarks._stored import int_args, steps, worst_first, write_results
    from models.ini import INIParams, solve

    visits, seed, n_pts = int_args(argv, (150_000, 7, 12), ("visits", "seed", "points"))

    def model(r: dict) -> tuple[float, float]:
        m = solve(INIParams(**{f: r[f] for f in FIELDS}))
        return float(m.R), float(m.R_o)

    scored = [(e, m[0], m[1], r) for e, m, r in worst_first("ini", lambda r: True, model)]
    worst = scored[:n_pts]
    others = random.Random(seed).sample(scored[n_pts:], n_pts)
    out = []
    print(f"INI residence R_o: bundled simulator, default model, stand-alone INI machines "
          f"({visits} visits, seed {seed})")
    print(f"{'set':7} {'i':>4} {'clusters':>8} {'N':>3} {'K':>2} {'dispatch':>11} {'cs2_O':>6} "
          f"{'R err':>7} {'sim R_o':>9} {'model':>9} " + " ".join(f"{m:>9}" for m in MACHINES))
    chosen = [("worst", x) for x in worst] + [("control", x) for x in others]
    for tag, (err, R, Ro, r) in steps(chosen, "ini stand-alone machines: points"):
        got = {}
        for mach in MACHINES:
            got[mach] = simulate_inis(
                N=int(r["N"]), K=int(r["K"]), clusters=int(r["clusters"]), O_ini=r["O"],
                cs2_O=r["cs2_O"], l_intra=r["l"], L=r["L"], remote=r["R_q"],
                home=r["R_y"] + r["R_w"], dispatch=r["dispatch"], machine=mach,
                visits=visits, seed=seed)["R_o"]
        sign = 1.0 if R >= r["R"] else -1.0
        print(f"{tag:7} {r['i']:>4} {r['clusters']:>8} {r['N']:>3} {r['K']:>2} "
              f"{r['dispatch']:>11} {r['cs2_O']:>6.2f} {100 * sign * err:>+6.1f}% "
              f"{r['R_o']:>9.0f} {Ro:>9.0f} " + " ".join(f"{got[m]:>9.0f}" for m in MACHINES),
              flush=True)
        out.append({"set": tag, "i": r["i"], "point": {f: r[f] for f in FIELDS},
                    "R_err": sign * err, "sim_R_o": r["R_o"], "sim_R_o_hw": r["R_o_hw"],
                    "model_R_o": Ro, **{f"{m}_R_o": got[m] for m in MACHINES}})

    def mean_abs(key: str, tag: str) -> float:
        v = [abs(o[key] / o["sim_R_o"] - 1.0) for o in out if o["set"] == tag]
        return 100.0 * sum(v) / len(v)

    for tag in ("worst", "control"):
        print(f"{tag}: mean |R_o error| against the bundled simulator: model "
              f"{mean_abs('model_R_o', tag):.1f}%, "
              + ", ".join(f"{m} {mean_abs(m + '_R_o', tag):.1f}%" for m in MACHINES))
    write_results("ini_latency_bursts.json", {"visits": visits, "seed": seed, "rows": out})
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
