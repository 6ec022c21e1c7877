"""Speed and memory of the bundled simulator.

1. The LoPC all-to-all workload (P=16, W=1000 exponential, o=100 exponential
   handlers, L=50 constant; 10,000 warm-up + 100,000 measured request cycles)
   in the same run:

   * :func:`validation.simulate` on its compiled engine (``engine="compiled"``)
     and on its pure-Python reference (``engine="python"``);
   * an **idiomatic SimPy model** -- the strongest baseline a competent SimPy
     user would write: one process per node's thread and one per node's
     protocol processing, messages carried by timeout callbacks into per-node
     ``Store`` inboxes (no process per message or per handler), and
     ``Process.interrupt()`` to preempt a computing thread;
   * the older SimPy model (a process per message and per handler, on a
     ``PreemptiveResource``), kept for comparison with earlier figures;
   * a minimal single-function heapq loop of the same machine (no traces,
     no statistics beyond the mean cycle time, no other hardware).

   Warm figures are the best of ``--repeat`` runs in this process, as wall
   time and as this process's CPU time (the machine may be shared: the CPU
   time is what each simulator costs, the wall time adds waiting for a
   core); the cold ones come from a fresh subprocess: importing
   :mod:`validation`, then the first call (which loads the loop's cached
   machine code -- or builds it when there is none -- without importing
   numba) and a second one, in ``--cold`` fresh processes one after the
   other: each process's first/second ratio is printed, then their median
   (the first process may also read the compiler's library from disk, which
   a later one finds in the page cache).  Targets: compiled >= 25x the
   idiomatic SimPy model, warm; the first call within 2x of a warm one.
2. Peak memory of streaming a 10^7-record trace (generated to a temporary
   file first): reading every record, and driving the simulator from it
   (target: < 200 MB), each in a fresh subprocess (``ru_maxrss``).

Run::

    python benchmarks/bench_sim.py            # full
    python benchmarks/bench_sim.py --quick    # smaller, for a smoke test
    python benchmarks/bench_sim.py --repeat 3 --no-memory   # best of 3, speed only
"""

from __future__ import annotations

import argparse
import math
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

P, W, O, L = 16, 1000.0, 100.0, 50.0


# --------------------------------------------------------------------------
# an idiomatic SimPy model: a process per thread and per node, interrupt() to preempt
# --------------------------------------------------------------------------

def simpy_idiomatic_lopc(cycles: int, warmup: int, seed: int) -> tuple[float, float]:
    """Return (mean cycle time, wall seconds) of the idiomatic SimPy model.

    Node ``i`` has two processes: its thread (compute a burst, send a request,
    wait for the reply) and its protocol processor (take the next message from
    the node's ``Store``, run its handler, pass it on).  A handler arriving
    while the thread computes interrupts it (preemptive resume: the thread
    keeps the rest of its burst and waits until the inbox is empty).  A
    message in flight is a ``timeout`` whose callback puts it into the
    destination's inbox: no process per message or per handler.
    """
    import simpy

    env = simpy.Environment()
    rng = random.Random(seed)
    ex = rng.expovariate
    inbox = [simpy.Store(env) for _ in range(P)]
    computing = [False] * P      # thread i is in a compute burst (interruptible)
    resume: list = [None] * P    # event that lets a preempted thread go on
    reply: list = [None] * P     # event the thread waits on for its reply
    threads: list = [None] * P
    stats = {"done": 0, "sum": 0.0}
    stop = env.event()

    def deliver(ev: simpy.events.Event) -> None:
        m = ev.value
        inbox[m[1]].put(m)

    def send(m: list) -> None:
        env.timeout(L, value=m).callbacks.append(deliver)

    def thread(i: int):
        start = env.now
        while True:
            left = ex(1.0 / W)
            while left > 0:                               # preemptive resume
                t0 = env.now
                computing[i] = True
                try:
                    yield env.timeout(left)
                    left = 0.0
                except simpy.Interrupt:
                    left -= env.now - t0
                    yield resume[i]
            computing[i] = False
            d = rng.randrange(P - 1)
            d += d >= i
            reply[i] = env.event()
            send([i, d, True])                           # [source, at node, is request]
            yield reply[i]
            stats["done"] += 1
            if stats["done"] > warmup:
                stats["sum"] += env.now - start
            start = env.now
            if stats["done"] >= warmup + cycles and not stop.triggered:
                stop.succeed()

    def protocol(i: int):
        q = inbox[i]
        while True:
            m = yield q.get()
            preempted = False
            if computing[i]:
                computing[i] = False
                resume[i] = env.event()
                threads[i].interrupt()
                preempted = True
            while True:                                  # serve the inbox until it is empty
                yield env.timeout(ex(1.0 / O))
                if m[2]:                                 # request handled: the reply goes back
                    m[1], m[2] = m[0], False
                    send(m)
                else:                                    # reply handled: wake the thread
                    reply[i].succeed()
                if not q.items:
                    break
                m = yield q.get()
            if preempted:
                resume[i].succeed()

    for i in range(P):
        threads[i] = env.process(thread(i))
        env.process(protocol(i))
    t0 = time.perf_counter()
    env.run(until=stop)
    return stats["sum"] / (stats["done"] - warmup), time.perf_counter() - t0


# --------------------------------------------------------------------------
# the older SimPy model (a process per message and per handler)
# --------------------------------------------------------------------------

def simpy_lopc(cycles: int, warmup: int, seed: int) -> tuple[float, float]:
    """Return (mean cycle time, wall seconds) of the SimPy model."""
    import simpy

    env = simpy.Environment()
    rng = random.Random(seed)
    cpus = [simpy.PreemptiveResource(env, capacity=1) for _ in range(P)]
    stats = {"done": 0, "sum": 0.0, "n": 0}
    stop = env.event()

    def handler(cpu: int, cost: float):
        # handlers: priority 0, preempt the thread (priority 1), FIFO among themselves
        with cpus[cpu].request(priority=0, preempt=True) as req:
            yield req
            yield env.timeout(cost)

    def message(src: int, dst: int, wake: simpy.Event):
        yield env.timeout(L)
        yield env.process(handler(dst, rng.expovariate(1.0 / O)))    # request handler
        yield env.timeout(L)
        yield env.process(handler(src, rng.expovariate(1.0 / O)))    # reply handler
        wake.succeed()

    def thread(i: int):
        start = env.now
        while True:
            left = rng.expovariate(1.0 / W)
            while left > 0:                                          # preemptive resume
                with cpus[i].request(priority=1, preempt=False) as req:
                    yield req
                    t0 = env.now
                    try:
                        yield env.timeout(left)
                        left = 0.0
                    except simpy.Interrupt:
                        left -= env.now - t0
            dst = rng.randrange(P - 1)
            dst += dst >= i
            wake = env.event()
            env.process(message(i, dst, wake))
            yield wake
            stats["done"] += 1
            if stats["done"] > warmup:
                stats["sum"] += env.now - start
                stats["n"] += 1
            start = env.now
            if stats["done"] >= warmup + cycles and not stop.triggered:
                stop.succeed()

    for i in range(P):
        env.process(thread(i))
    t0 = time.perf_counter()
    env.run(until=stop)
    return stats["sum"] / stats["n"], time.perf_counter() - t0


def minimal_lopc(cycles: int, warmup: int, seed: int) -> tuple[float, float]:
    """Return (mean cycle time, wall seconds) of a minimal heapq loop of the same machine.

    One processor per node; handlers FIFO, preempting the thread, whose burst
    end moves later by the handler's duration (the end event re-schedules
    itself when it fires early); the same ~5.5 events per cycle as
    :func:`validation.simulate`, and nothing else.
    """
    import heapq
    import itertools
    rng = random.Random(seed)
    ex = rng.expovariate
    heap: list = []
    nxt = itertools.count().__next__
    computing = [True] * P
    ready = [False] * P                           # reply handled, waiting for the processor
    acting = [False] * P
    end_at = [0.0] * P
    queue: list[list] = [[] for _ in range(P)]
    started = [0.0] * P
    done = 0
    total = 0.0

    def burst_end(now: float, x: int):
        if end_at[x] > now or acting[x]:
            return (end_at[x], nxt(), burst_end, x)
        d = rng.randrange(P - 1)
        d += d >= x
        computing[x] = False
        return (now + L, nxt(), arrive, [x, d, True, ex(1.0 / O)])

    def arrive(now: float, m: list):
        n = m[1]
        if acting[n]:
            queue[n].append(m)
            return None
        return begin_handler(now, n, m)

    def begin_handler(now: float, n: int, m: list):
        acting[n] = True
        if computing[n]:
            end_at[n] += m[3]
        return (now + m[3], nxt(), handler_end, m)

    def handler_end(now: float, m: list):
        nonlocal done, total
        n = m[1]
        new = None
        if m[2]:                                  # request: the reply goes back
            m[1], m[2], m[3] = m[0], False, ex(1.0 / O)
            new = (now + L, nxt(), arrive, m)
        else:                                     # reply (at its thread's node): cycle done
            done += 1
            if done > warmup:
                total += now - started[n]
            started[n] = now
            ready[n] = True
        acting[n] = False
        if queue[n]:
            e = begin_handler(now, n, queue[n].pop(0))
            if new is None:
                return e
            heapq.heappush(heap, e)
        elif ready[n]:                            # the thread's next burst
            ready[n] = False
            computing[n] = True
            end_at[n] = now + ex(1.0 / W)
            e = (end_at[n], nxt(), burst_end, n)
            if new is None:
                return e
            heapq.heappush(heap, e)
        return new

    for x in range(P):
        end_at[x] = ex(1.0 / W)
        heapq.heappush(heap, (end_at[x], nxt(), burst_end, x))
    t0 = time.perf_counter()
    while done < warmup + cycles:
        t, _, fn, arg = heap[0]
        e = fn(t, arg)
        if e is None:
            heapq.heappop(heap)
        else:
            heapq.heapreplace(heap, e)
    return total / (done - warmup), time.perf_counter() - t0


def ours_lopc(cycles: int, warmup: int, seed: int, engine: str) -> tuple[float, float, float, int]:
    """Return (R, half-width, wall seconds, events) of :func:`validation.simulate`."""
    from models.lopc import LoPCParams
    from validation import simulate
    t0 = time.perf_counter()
    r = simulate(LoPCParams(P=P, W=W, o=O, L=L), cycles=cycles, warmup=warmup, seed=seed,
                 progress=False, engine=engine)
    wall = time.perf_counter() - t0
    return r.cycle_time.mean, r.cycle_time.half_width, wall, r.events


def _timed(fn, *args):
    """``fn(*args)`` and the process CPU seconds it took."""
    c0 = time.process_time()
    out = fn(*args)
    return out, time.process_time() - c0


_COLD = r"""
import sys, time
sys.path.insert(0, {root!r})
w0, c0 = time.perf_counter(), time.process_time()
from models.lopc import LoPCParams
from validation import simulate
w1, c1 = time.perf_counter(), time.process_time()
p = LoPCParams(P={P}, W={W}, o={O}, L={L})
simulate(p, cycles={cycles}, warmup={warmup}, seed=1, progress=False, engine="compiled")
w2, c2 = time.perf_counter(), time.process_time()
simulate(p, cycles={cycles}, warmup={warmup}, seed=1, progress=False, engine="compiled")
w3, c3 = time.perf_counter(), time.process_time()
print(w1 - w0, w2 - w1, w3 - w2, c1 - c0, c2 - c1, c3 - c2, int("numba" in sys.modules))
"""


def cold_compiled(cycles: int, warmup: int) -> dict[str, float]:
    """Seconds (wall and CPU) of importing, the first and the second compiled call in a fresh
    process.

    Nothing is imported beforehand (numba included: a process that finds the
    loop's cached object never imports it; ``numba_imported`` tells).
    """
    root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
    code = _COLD.format(root=root, P=P, W=W, O=O, L=L, cycles=cycles, warmup=warmup)
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, cwd=root).stdout.split()
    keys = ("import", "first", "second", "import_cpu", "first_cpu", "second_cpu", "numba_imported")
    return dict(zip(keys, map(float, out)))


# --------------------------------------------------------------------------
# memory of streaming a large trace (run in a child process)
# --------------------------------------------------------------------------

_CHILD = r"""
import resource, sys, time
sys.path.insert(0, {root!r})
from validation import read_trace, simulate, Machine, NodeSpec
path, mode, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
t0 = time.perf_counter()
if mode == "read":
    k = 0
    for r in read_trace(path):
        k += 1
    what = f"read {{k:,}} records"
else:
    m = Machine.homogeneous({P}, NodeSpec(compute=1), latency={L})
    res = simulate(m, trace=path, cycles=n, warmup=0, batches=10, progress=False)
    what = f"simulated {{res.counts['completed']:,}} request cycles, R={{res.cycle_time.mean:.1f}}"
dt = time.perf_counter() - t0
print(f"{{what}} in {{dt:.1f}} s; peak RSS {{resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f}} MB")
"""


def memory(records: int, keep: bool) -> None:
    from models.lopc import LoPCParams
    from validation import generate, write_trace
    from validation.sim.builders import lopc_machine
    m, w = lopc_machine(LoPCParams(P=P, W=W, o=O, L=L))
    per_thread = records // (2 * P)
    fd, path = tempfile.mkstemp(suffix=".csv", prefix="bench_trace_", dir="/tmp")
    os.close(fd)
    try:
        t0 = time.perf_counter()
        n = write_trace(generate(w, m, requests=per_thread, seed=1), path)
        dt = time.perf_counter() - t0
        size = os.path.getsize(path) / 2**20
        print(f"trace: {n:,} records, {size:,.0f} MiB written in {dt:.1f} s "
              f"({n / dt:,.0f} records/s)")
        root = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")
        code = _CHILD.format(root=root, P=P, L=L)
        for mode in ("read", "simulate"):
            out = subprocess.run([sys.executable, "-c", code, path, mode, str(n // 2 - 100)],
                                 capture_output=True, text=True, check=True).stdout.strip()
            print(f"  streaming ({mode}): {out}")
    finally:
        if not keep:
            os.unlink(path)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--quick", action="store_true", help="10x smaller runs")
    ap.add_argument("--records", type=int, default=None, help="trace records (default 10^7)")
    ap.add_argument("--keep-trace", action="store_true")
    ap.add_argument("--repeat", type=int, default=2,
                    help="run both simulators this many times, alternately, and keep each "
                         "one's best time (the machine may be shared)")
    ap.add_argument("--cold", type=int, default=5,
                    help="fresh processes for the cold figures (default 5; their median is the "
                         "figure)")
    ap.add_argument("--no-memory", action="store_true", help="skip the trace-streaming part")
    args = ap.parse_args()
    cycles = 10_000 if args.quick else 100_000
    warmup = cycles // 10
    records = args.records or (10**6 if args.quick else 10**7)
    total = cycles + warmup

    print(f"LoPC all-to-all, P={P}, W={W:g} exp, o={O:g} exp, L={L:g} const; "
          f"{warmup:,} warm-up + {cycles:,} measured request cycles")
    try:
        import simpy  # noqa: F401
        have_simpy = True
    except ImportError:
        have_simpy = False
    from validation.sim.engine import numba_available
    have_numba = numba_available()

    # cold: fresh processes (imports, the first call, the second call)
    if have_numba:
        colds = [cold_compiled(cycles, warmup) for _ in range(args.cold)]
    # warm: best of --repeat runs of each, alternately, in this process
    best: dict[str, float] = {}
    best_cpu: dict[str, float] = {}
    first_in_run: dict[str, float] = {}
    result: dict[str, tuple[float, float]] = {}
    names = (["compiled"] if have_numba else []) + ["python"] + \
        (["simpy idiomatic", "simpy per-message"] if have_simpy else []) + ["minimal loop"]
    events = 0
    for _ in range(max(1, args.repeat)):
        for name in names:
            if name in ("compiled", "python"):
                (R, hw, wall, events), cpu = _timed(ours_lopc, cycles, warmup, 1, name)
            elif name == "simpy idiomatic":
                ((R, wall), cpu), hw = _timed(simpy_idiomatic_lopc, cycles, warmup, 1), float("nan")
            elif name == "simpy per-message":
                ((R, wall), cpu), hw = _timed(simpy_lopc, cycles, warmup, 1), float("nan")
            else:
                ((R, wall), cpu), hw = _timed(minimal_lopc, cycles, warmup, 1), float("nan")
            first_in_run.setdefault(name, wall)
            best[name] = min(best.get(name, float("inf")), wall)
            best_cpu[name] = min(best_cpu.get(name, float("inf")), cpu)
            result[name] = (R, hw)
    print(f"  Python {sys.version.split()[0]}; simpy "
          f"{__import__('simpy').__version__ if have_simpy else 'not installed'}; numba "
          f"{__import__('numba').__version__ if have_numba else 'not installed'}")
    print(f"  load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs (wall times grow "
          f"with it; the CPU times of this process much less)")
    print(f"  {'':24s} {'R':>8s} {'first (s)':>10s} {'best (s)':>9s} {'best CPU s':>10s} "
          f"{'cycles/s':>11s}")
    for name in names:
        R, hw = result[name]
        label = {"compiled": "simulate (compiled)", "python": "simulate (python)"}.get(name, name)
        ci = f" +- {hw:.1f}" if math.isfinite(hw) else ""
        print(f"  {label:24s} {R:8.1f} {first_in_run[name]:10.3f} {best[name]:9.3f} "
              f"{best_cpu[name]:10.3f} {total / best[name]:11,.0f}{ci}")
    print("  ratios (warm, best of each; wall and CPU):")
    ref = "compiled" if have_numba else "python"
    for name in names:
        if name != ref:
            print(f"    {ref} / {name:18s}: {best[name] / best[ref]:6.1f}x wall  "
                  f"{best_cpu[name] / best_cpu[ref]:6.1f}x CPU")
    if have_numba and have_simpy:
        r = best["simpy idiomatic"] / best["compiled"]
        rc = best_cpu["simpy idiomatic"] / best_cpu["compiled"]
        print(f"  target: compiled >= 25x the idiomatic SimPy model -> {r:.1f}x wall, "
              f"{rc:.1f}x CPU "
              f"({'met' if min(r, rc) >= 25 else 'NOT met'})")
    if have_numba:
        print(f"  cold: {len(colds)} fresh processes, one after the other (numba imported: "
              f"{'yes' if any(c['numba_imported'] for c in colds) else 'no'})")
        for i, c in enumerate(colds, 1):
            print(f"    process {i}: import {c['import']:.3f} s, first call {c['first']:.3f} s, "
                  f"second {c['second']:.3f} s (CPU {c['import_cpu']:.3f} / {c['first_cpu']:.3f} / "
                  f"{c['second_cpu']:.3f} s); first / second {c['first'] / c['second']:.2f} wall, "
                  f"{c['first_cpu'] / c['second_cpu']:.2f} CPU")
        rw = float(statistics.median([c["first"] / c["second"] for c in colds]))
        rc = float(statistics.median([c["first_cpu"] / c["second_cpu"] for c in colds]))
        ri = float(statistics.median([(c["import"] + c["first"]) / c["second"] for c in colds]))
        print(f"    median first / second = {rw:.2f} wall, {rc:.2f} CPU (target <= 2: "
              f"{'met' if rw <= 2 else 'NOT met'} in wall time, {'met' if rc <= 2 else 'NOT met'} "
              f"in CPU time); import + first = {ri:.2f}x the second")
    print(f"  events per run: {events:,}; reference R = 1406 (four simulators: 1404.7-1407.6)")
    if not args.no_memory:
        print()
        memory(records, args.keep_trace)


if __name__ == "__main__":
    main()
