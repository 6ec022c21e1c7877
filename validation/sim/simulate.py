"""The public entry point :func:`simulate` and the trace sources it reads."""

from __future__ import annotations

import itertools
import os
from collections import deque
from typing import Any, Iterable, Iterator

import numpy as np

from mva._validate import check_integer, check_kwargs

from ..generators import Workload, stream_rng, thread_columns, thread_records
from ..traces import Record, read_trace
from .hardware import RawRun, Snapshot, run_machine
from .machine import Machine
from .result import SimResult, ResourceStats
from .stats import estimate

__all__ = ["simulate", "trace_sources"]


# --------------------------------------------------------------------------
# trace sources
# --------------------------------------------------------------------------

class _Demux:
    """Split one interleaved record stream into per-thread streams.

    Records of other threads met while looking for thread ``t``'s next one are
    buffered; with round-robin interleaving the buffers stay a few records
    long.
    """

    def __init__(self, records: Iterable[Record], n_threads: int, label: str) -> None:
        self._next = iter(records).__next__
        self._buf: list[deque[Record]] = [deque() for _ in range(n_threads)]
        self._n = n_threads
        self._label = label
        self._done = False

    def stream(self, t: int) -> Iterator[Record]:
        buf = self._buf
        mine = buf[t]
        n = self._n
        while True:
            if mine:
                yield mine.popleft()
                continue
            if self._done:
                return
            try:
                r = self._next()
            except StopIteration:
                self._done = True
                return
            th = r[0]
            if th == t:
                yield r
            elif 0 <= th < n:
                buf[th].append(r)
            else:
                raise ValueError(f"{self._label}: record for thread {th}, but the machine runs "
                                 f"{n} threads (0..{n - 1})")


def trace_sources(trace: Any, n_threads: int, *, format: str | None = None,
                  n_nodes: int | None = None) -> list[Iterator[Record]]:
    """Per-thread record iterators for a trace.

    Parameters
    ----------
    trace : path, sequence of paths, or iterable of Record
        One file holding all threads (interleaved), one file per thread (in
        thread order; each file's records must all belong to its thread), or
        records already in memory or from a generator.
    n_threads : int
        Threads of the machine.
    format : {"csv", "jsonl"}, optional
        File format (default: from the extension).
    n_nodes : int, optional
        Nodes of the machine: a file's request to a node beyond it is an
        error naming ``file:line``.

    Returns
    -------
    list of iterators
    """
    if isinstance(trace, (str, os.PathLike)):
        label = os.fspath(trace)
        demux = _Demux(read_trace(trace, format=format, threads=n_threads, nodes=n_nodes),
                       n_threads, label)
        return [demux.stream(t) for t in range(n_threads)]
    if isinstance(trace, (list, tuple)) and trace and all(isinstance(p, (str, os.PathLike))
                                                          for p in trace):
        if len(trace) != n_threads:
            raise ValueError(f"trace: {len(trace)} files for {n_threads} threads")
        return [_only_thread(read_trace(p, format=format, nodes=n_nodes), t, os.fspath(p))
                for t, p in enumerate(trace)]
    demux = _Demux(trace, n_threads, "trace")
    return [demux.stream(t) for t in range(n_threads)]


def _only_thread(records: Iterator[Record], t: int, label: str) -> Iterator[Record]:
    for r in records:
        if r[0] != t:
            raise ValueError(f"{label}: record for thread {r[0]} in the file of thread {t}")
        yield r


# --------------------------------------------------------------------------
# statistics over snapshots
# --------------------------------------------------------------------------

def _zero_snapshot(nr: int) -> Snapshot:
    return Snapshot(time=0.0, completed=0, response_sum=0.0, cycles=0, cycle_sum=0.0,
                    phase_n=[0, 0, 0], phase_sum=[0.0, 0.0, 0.0], interrupts=0,
                    area=[0.0] * nr, busy_area=[0.0] * nr, departures=[0] * nr,
                    arrivals=[0] * nr, residence=[0.0] * nr, departed_residence=[0.0] * nr,
                    spin_area=[0.0] * nr)


def _ratio(num: float, den: float) -> float:
    return num / den if den else float("nan")


def _measures(a: Snapshot, b: Snapshot, run: RawRun) -> dict[str | tuple[str, str], Any]:
    """Every reported mean over the window ``(a, b]`` (pool measures keyed ``(name, kind)``)."""
    dt = b.time - a.time
    out: dict[str | tuple[str, str], Any] = {
        "cycle_time": _ratio(b.cycle_sum - a.cycle_sum, b.cycles - a.cycles),
        "throughput": _ratio(b.completed - a.completed, dt),
        "round_trip": _ratio(b.response_sum - a.response_sum, b.completed - a.completed),
        "send_handler": _ratio(b.phase_sum[0] - a.phase_sum[0], b.phase_n[0] - a.phase_n[0]),
        "request_handler": _ratio(b.phase_sum[1] - a.phase_sum[1], b.phase_n[1] - a.phase_n[1]),
        "reply_handler": _ratio(b.phase_sum[2] - a.phase_sum[2], b.phase_n[2] - a.phase_n[2]),
    }
    for kind in ("ini", "compute"):
        idx = [i for i, r in enumerate(run.resources) if r.kind == kind]
        res = sum(b.departed_residence[i] - a.departed_residence[i] for i in idx)
        dep = sum(b.departures[i] - a.departures[i] for i in idx)
        out[kind] = _ratio(res, dep)
    util, qlen, spin = [], [], []
    for i, r in enumerate(run.resources):
        util.append(_ratio(b.busy_area[i] - a.busy_area[i], dt * r.servers))
        qlen.append(_ratio(b.area[i] - a.area[i], dt))
        spin.append(_ratio(b.spin_area[i] - a.spin_area[i], dt * r.servers))
    out["util"] = util
    out["qlen"] = qlen
    out["spin"] = spin
    out["interrupts_per_request"] = _ratio(b.interrupts - a.interrupts, b.completed - a.completed)
    for kind, idx in _pool_index(run).items():
        out["pool_util", kind] = _ratio(sum(b.busy_area[i] - a.busy_area[i] for i in idx),
                                        dt * sum(run.resources[i].servers for i in idx))
        out["pool_qlen", kind] = _ratio(sum(b.area[i] - a.area[i] for i in idx), dt * len(idx))
    return out


def _pool_index(run: RawRun) -> dict[str, list[int]]:
    """Resources pooled per kind (compute resources of nodes without compute processors left
    out)."""
    kinds: dict[str, list[int]] = {}
    for i, r in enumerate(run.resources):
        if r.kind == "compute" and not run.extra.get("compute", {}).get(r.node, 1):
            continue
        kinds.setdefault(r.kind, []).append(i)
    return kinds


def _collect(runs: list[tuple[RawRun, list[Snapshot]]], method: str, seed: int | None,
             machine: Machine) -> SimResult:
    """Turn runs (each with its snapshot list: window start, marks...) into a SimResult."""
    first_run = runs[0][0]
    if method == "batch_means":
        run, snaps = runs[0]
        windows = [(snaps[0], snaps[-1], run)]
        pieces = [_measures(a, b, run) for a, b in zip(snaps, snaps[1:])]
    else:
        windows = [(snaps[0], snaps[-1], run) for run, snaps in runs]
        pieces = [_measures(a, b, run) for a, b, run in windows]

    # point estimates: totals over all windows
    def tot(f: Any) -> float:
        return float(sum(f(a, b) for a, b, _ in windows))

    T = tot(lambda a, b: b.time - a.time)
    point: dict[str, float] = {
        "cycle_time": _ratio(tot(lambda a, b: b.cycle_sum - a.cycle_sum),
                             tot(lambda a, b: b.cycles - a.cycles)),
        "throughput": _ratio(tot(lambda a, b: b.completed - a.completed), T),
        "round_trip": _ratio(tot(lambda a, b: b.response_sum - a.response_sum),
                             tot(lambda a, b: b.completed - a.completed)),
    }
    for k, ph in (("send_handler", 0), ("request_handler", 1), ("reply_handler", 2)):
        point[k] = _ratio(tot(lambda a, b, p=ph: b.phase_sum[p] - a.phase_sum[p]),
                          tot(lambda a, b, p=ph: b.phase_n[p] - a.phase_n[p]))
    kinds = [r.kind for r in first_run.resources]
    for kind in ("ini", "compute"):
        idx = [i for i, k in enumerate(kinds) if k == kind]
        point[kind] = _ratio(tot(lambda a, b: sum(b.departed_residence[i] - a.departed_residence[i]
                                                  for i in idx)),
                             tot(lambda a, b: sum(b.departures[i] - a.departures[i] for i in idx)))

    def est(key: str) -> Any:
        return estimate(point[key], [p[key] for p in pieces])

    response = {}
    for k in ("round_trip", "request_handler", "reply_handler", "send_handler", "ini", "compute"):
        if np.isfinite(point[k]):
            response[k] = est(k)

    resources = []
    for i, info in enumerate(first_run.resources):
        area = tot(lambda a, b: b.area[i] - a.area[i])
        barea = tot(lambda a, b: b.busy_area[i] - a.busy_area[i])
        dep = int(tot(lambda a, b: b.departures[i] - a.departures[i]))
        dres = tot(lambda a, b: b.departed_residence[i] - a.departed_residence[i])
        res_all = tot(lambda a, b: b.residence[i] - a.residence[i])
        gap = (abs(area - res_all) / max(abs(area), abs(res_all), 1e-300) if (area or res_all)
               else 0.0)
        spinning = None
        if info.kind == "protocol" and info.node is not None and \
                machine.nodes[info.node].dispatch == "spin":
            sarea = tot(lambda a, b: b.spin_area[i] - a.spin_area[i])
            spinning = estimate(_ratio(sarea, T * info.servers), [p["spin"][i] for p in pieces])
        resources.append(ResourceStats(
            name=info.name, kind=info.kind, servers=info.servers,
            utilization=estimate(_ratio(barea, T * info.servers), [p["util"][i] for p in pieces]),
            queue_length=estimate(_ratio(area, T), [p["qlen"][i] for p in pieces]),
            throughput=_ratio(dep, T), residence=_ratio(dres, dep), departures=dep,
            little_error=gap, spinning=spinning))

    pooled: dict[str, dict[str, Any]] = {}
    for kind, idx in _pool_index(first_run).items():
        busy = tot(lambda a, b: sum(b.busy_area[i] - a.busy_area[i] for i in idx))
        area = tot(lambda a, b: sum(b.area[i] - a.area[i] for i in idx))
        cap = T * sum(first_run.resources[i].servers for i in idx)
        pooled[kind] = {
            "utilization": estimate(_ratio(busy, cap), [p["pool_util", kind] for p in pieces]),
            "queue_length": estimate(_ratio(area, T * len(idx)),
                                     [p["pool_qlen", kind] for p in pieces]),
        }
    ipr = estimate(_ratio(tot(lambda a, b: b.interrupts - a.interrupts),
                          tot(lambda a, b: b.completed - a.completed)),
                   [p["interrupts_per_request"] for p in pieces])
    completed = int(tot(lambda a, b: b.completed - a.completed))
    counts = {
        "completed": completed,
        "cycles": int(tot(lambda a, b: b.cycles - a.cycles)),
        "send_handlers": int(tot(lambda a, b: b.phase_n[0] - a.phase_n[0])),
        "request_handlers": int(tot(lambda a, b: b.phase_n[1] - a.phase_n[1])),
        "reply_handlers": int(tot(lambda a, b: b.phase_n[2] - a.phase_n[2])),
        "interrupts": int(tot(lambda a, b: b.interrupts - a.interrupts)),
        "ini_visits": sum(r.departures for r in resources if r.kind == "ini"),
        "compute_bursts": sum(r.departures for r in resources if r.kind == "compute"),
    }
    return SimResult(
        cycle_time=est("cycle_time"), machine_throughput=est("throughput"), response=response,
        resources=tuple(resources), counts=counts, simulated_time=T,
        warmup_time=float(sum(s[0].time for _, s in runs)),
        events=sum(r.events for r, _ in runs), wall_time=sum(r.wall_time for r, _ in runs),
        pooled=pooled, interrupts_per_request=ipr,
        method=method, n=len(pieces), seed=seed, machine=machine.describe(),
        exhausted=any(r.end == "empty" for r, _ in runs))


# --------------------------------------------------------------------------
# simulate
# --------------------------------------------------------------------------

def _check_growth(run: RawRun, a: Snapshot, b: Snapshot, threads: int) -> None:
    """Overload rule (2) of :func:`simulate`: a queue that kept growing over the window."""
    from mva.errors import SaturationError
    for i, info in enumerate(run.resources):
        if info.kind == "compute":
            continue
        grew = (b.arrivals[i] - b.departures[i]) - (a.arrivals[i] - a.departures[i])
        arrivals = b.arrivals[i] - a.arrivals[i]
        if grew > max(2 * threads + 100, 0.02 * arrivals):
            raise SaturationError(
                f"{info.name} gained {grew} jobs over the measured window ({arrivals} arrivals): "
                "open (one-way) arrivals exceed its capacity", bottleneck=info.name)


def _replication_seed(seed: int | None, r: int) -> int | None:
    if r == 0:
        return seed
    ss = np.random.SeedSequence(seed, spawn_key=(99, r))
    return int(ss.generate_state(1, dtype=np.uint64)[0])


def simulate(target: Any, workload: Workload | None = None, *, trace: Any = None,
             cycles: int = 100_000, warmup: int | None = None, batches: int = 20,
             replications: int | None = None, seed: int | None = 0,
             trace_format: str | None = None, progress: bool | None = None,
             max_queue: int | None = None, engine: str = "auto", **kwargs: Any) -> SimResult:
    """Simulate a machine, or the machine a model's parameters describe.

    Parameters
    ----------
    target : Machine or model parameters
        A :class:`~validation.sim.machine.Machine`, or a parameter object of
        :mod:`models` (``LoPCParams``, ``INIParams``, ``PolicyParams``,
        ``PDQParams``), turned into a machine and a workload by
        :func:`~validation.sim.builders.machine_from_params` (extra keywords
        are passed to it).
    workload : Workload or sequence of Workload, optional
        What the threads do (required for a Machine unless ``trace`` is given;
        overrides the workload derived from parameters); a sequence gives
        one workload per thread (e.g. compute-only threads with
        ``Workload(idle=...)`` beside request senders).
    trace : path, list of paths, or iterable of Record, optional
        Drive the threads from a trace instead of a workload (see
        :func:`trace_sources`).
    cycles : int
        Completed requests to measure after the warm-up (per replication).
    warmup : int, optional
        Completed requests discarded first (default ``cycles // 10``).
    batches : int
        Batches for batch means (one long run), ``>= 2``.
    replications : int, optional
        Use this many independent replications instead of batch means.
    seed : int or None
        Seed of every random stream: the same seed gives the same result bit
        for bit.
    trace_format : {"csv", "jsonl"}, optional
        Format of trace files (default: from the extension).
    progress : bool, optional
        Show a progress bar (default: only on a terminal; see
        :func:`mva.progress.progress`).
    max_queue : int, optional
        Most messages one protocol queue or INI may hold (default
        ``10_000 + T + (warmup + cycles) // 100`` for ``T`` threads); see
        the overload rule in the Notes.
    engine : {"auto", "compiled", "python"}
        ``"compiled"``: the numba port of the hardware
        (:mod:`validation.sim.engine`); ``"python"``: the readable pure-Python
        reference (:mod:`validation.sim.hardware`); ``"auto"`` (default): the
        compiled one when numba is installed, else the reference with a
        one-time note.  Both give the same results for the same seed (equal
        to about 1e-12 relative: only the order of a few sums differs).

    Returns
    -------
    SimResult

    Raises
    ------
    mva.errors.SaturationError
        When open (one-way) traffic exceeds the capacity of a resource;
        ``bottleneck`` names it.

    Notes
    -----
    Overload.  Closed traffic cannot overload the machine (a thread waits
    for its reply), but one-way requests are open arrivals: above a
    resource's capacity its queue grows without bound.  Two rules stop such
    a run with :class:`~mva.errors.SaturationError` naming the resource:
    (1) a protocol queue or INI holding more than ``max_queue`` messages
    (checked at every arrival, so time and memory stay bounded); (2) at the
    end of the measured window (of each replication), a resource whose
    number of jobs present grew over the window by more than
    :math:`\\max(2T + 100,\\ 0.02\\,A)`, where :math:`A` is the number of
    arrivals in the window: a stable queue returns to its typical length, an
    overloaded one gains a fixed fraction of its arrivals.

    Batch means: the measured window (after ``warmup`` completed requests) is
    cut into ``batches`` batches of ``cycles / batches`` completed requests;
    each batch gives one observation of every mean.  Replications: each run
    has its own warm-up and window, and its own seed derived from ``seed``.
    The 95% intervals are Student-t intervals over the observations (see
    :mod:`validation.sim.stats`).  Generator-driven thread ``t`` draws from
    ``stream_rng(seed, 0, t)``, the same stream
    :func:`validation.generators.generate` uses, so simulating a workload
    and simulating its generated trace give identical results.

    References
    ----------
    .. [1] Law, A. M., *Simulation Modeling and Analysis*, ch. 9 (batch means,
       replication/deletion).

    Examples
    --------
    The LoPC all-to-all workload on 4 processors:

    >>> from validation.sim.machine import Machine, NodeSpec
    >>> from validation.sim.dists import Dist
    >>> m = Machine.homogeneous(4, NodeSpec(compute=1), latency=50)
    >>> w = Workload(burst=Dist.exponential(1000), request_cost=Dist.exponential(100),
    ...              reply_cost=Dist.exponential(100))
    >>> r = simulate(m, w, cycles=4000, seed=1)
    >>> 1250 < r.cycle_time.mean < 1450, r.cycle_time.n
    (True, 20)
    >>> r.cycle_time == simulate(m, w, cycles=4000, seed=1).cycle_time
    True
    """
    from .engine import choose_engine
    eng = choose_engine(engine)
    if not isinstance(target, Machine):
        from .builders import machine_from_params
        machine, derived = machine_from_params(target, **kwargs)
        if workload is None:
            workload = derived
    else:
        check_kwargs("simulate", kwargs, ())
        machine = target
    cycles = int(check_integer("cycles", cycles, minimum=1))
    warmup = cycles // 10 if warmup is None else int(check_integer("warmup", warmup, minimum=0))
    if trace is None and workload is None:
        raise ValueError("simulate needs a workload or a trace for a Machine")
    works: list[Workload] = []
    if workload is not None:
        works = [workload] * machine.n_threads if isinstance(workload, Workload) else list(workload)
        if len(works) != machine.n_threads or not all(isinstance(x, Workload) for x in works):
            raise ValueError(f"workload must be a Workload or one Workload per thread "
                             f"({machine.n_threads}); got {workload!r}")
    if (trace is not None and not isinstance(trace, (str, os.PathLike, list, tuple))
            and replications):
        raise ValueError("replications need a re-readable trace (a path or a list of "
                         "records/paths)")
    if replications is not None:
        reps = int(check_integer("replications", replications, minimum=2))
        method, chunks = "replications", 10
    else:
        reps = 1
        method, chunks = "batch_means", int(check_integer("batches", batches, minimum=2))
    if cycles < chunks:
        raise ValueError(f"cycles must be >= the number of batches ({chunks}); got {cycles}")

    if max_queue is None:
        qcap = 10_000 + machine.n_threads + (warmup + cycles) // 100
    else:
        qcap = int(check_integer("max_queue", max_queue, minimum=1))
    marks = ([warmup] if warmup > 0 else []) + [warmup + (cycles * (i + 1)) // chunks
                                                for i in range(chunks)]
    total_marks = len(marks) * reps
    from mva.progress import progress as _progress
    bar = iter(_progress(itertools.repeat(None, total_marks), total=total_marks,
                         desc="simulate", enable=progress))

    def tick(_: int) -> None:
        next(bar, None)

    runs: list[tuple[RawRun, list[Snapshot]]] = []
    for r in range(reps):
        rseed = _replication_seed(seed, r)
        if eng == "compiled":
            from .engine import RecordFeeder, WorkloadFeeder, run_machine_compiled, trace_key_codes
            if trace is not None:
                keys = trace_key_codes()
                feeders: list[Any] = [RecordFeeder(s, keys) for s in
                                      trace_sources(trace, machine.n_threads, format=trace_format,
                                                    n_nodes=machine.n_nodes)]
                raw = run_machine_compiled(machine, feeders, seed=rseed, marks=marks,
                                           on_pause=tick, max_queue=qcap, keys=keys)
            else:
                feeders = [WorkloadFeeder(thread_columns(w, machine, t, stream_rng(rseed, 0, t)),
                                          one_way=w.one_way, idle=w.idle is not None)
                           for t, w in enumerate(works)]
                raw = run_machine_compiled(machine, feeders, seed=rseed, marks=marks,
                                           on_pause=tick, max_queue=qcap,
                                           n_keys=max(w.keys or 0 for w in works))
        else:
            if trace is not None:
                sources = trace_sources(trace, machine.n_threads, format=trace_format,
                                        n_nodes=machine.n_nodes)
            else:
                sources = [thread_records(w, machine, t, stream_rng(rseed, 0, t), plain=True)
                           for t, w in enumerate(works)]
            raw = run_machine(machine, sources, seed=rseed, marks=marks, on_pause=tick,
                              max_queue=qcap)
        tick(0)  # the final mark stops rather than pauses
        snaps = raw.snapshots
        if warmup == 0:
            snaps = [_zero_snapshot(len(raw.resources)), *snaps]
        if len(snaps) < 2 + (0 if method == "replications" else 1):
            raise ValueError(f"the trace ended after {snaps[-1].completed} completed requests, "
                             f"before the warm-up ({warmup}) and two batches")
        _check_growth(raw, snaps[0], snaps[-1], machine.n_threads)
        runs.append((raw, snaps))
    next(bar, None)
    out = _collect(runs, method, seed, machine)
    out.extra["engine"] = eng
    return out
