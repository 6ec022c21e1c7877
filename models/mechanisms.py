"""Communication mechanisms against bisection bandwidth and network latency (Chong et al. 1998).

A what-if model of Chong, Barua, Dahlgren, Kubiatowicz and Agarwal, "The
Sensitivity of Communication Mechanisms to Bandwidth and Latency": shared
memory (round trips, four messages per communicated value under an
invalidation protocol, optionally with prefetching) against message passing
(one one-way message per value, received by interrupt or by polling, or bulk
transfer with a gather/scatter cost per line), as the bisection bandwidth
(bytes per processor cycle) and the network latency (cycles) vary.

Each processor repeatedly computes for ``compute`` cycles and communicates
one value.  The traffic of all ``P`` processors crosses a bisection of
``channels`` links whose congestion is an M/G/1 queue per link (the
:mod:`mva` engine), and the time per value is the root of a one-unknown
equation (more time per value, less traffic, less waiting) found per grid
point by :func:`mva.bracketed_root`.  From it the module derives the three
regions of the paper's Figures 1 and 2 (latency hiding, latency dominated,
congestion dominated) and the crossover bandwidth and latency between two
mechanisms.  Presets: the fourteen machines of Table 1 and the Alewife
miss-penalty table of Figure 3.

References
----------
Chong et al. 1998: F. T. Chong, R. Barua, F. Dahlgren, J. D. Kubiatowicz and A. Agarwal,
"The Sensitivity of Communication Mechanisms to Bandwidth and Latency",
HPCA 1998, Sections 2, 3 and 5, Table 1 and Figure 3.
``../shared/papers/002_cf49ff90d24bd5e5.txt``.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields, replace
from typing import Any, Sequence

import numpy as np

from mva.open import mg1_wait
from mva.params import MAX_COUNT, MAX_TIME, MIN_BANDWIDTH, param, validate_fields
from mva.results import ResultMixin, with_inputs
from mva._validate import check_choice, check_nonnegative, check_positive, scalar_or_array

__all__ = [
    "MECHANISMS", "REGIONS", "MACHINES", "ALEWIFE_MISS_PENALTIES",
    "Machine", "MissPenalty", "MechanismParams", "MechanismResult", "CrossoverResult",
    "machine", "solve", "compare", "crossover_bandwidth", "crossover_latency",
    "machine_data", "machine_table", "miss_penalty_table", "sweep", "equations", "register_cli",
]

#: Mechanisms of Chong et al. 1998, Section 3.2.
MECHANISMS: tuple[str, ...] = ("shared_memory", "prefetch", "interrupt", "polling", "bulk")

#: Regions of Chong et al. 1998, Section 2 (Figures 1 and 2).
REGIONS: tuple[str, ...] = ("latency hiding", "latency dominated", "congestion dominated")

_ALIASES = {"sm": "shared_memory", "pf": "prefetch", "mp": "polling", "int": "interrupt",
            "poll": "polling"}


def _mech(name: str) -> str:
    name = _ALIASES.get(name, name)
    return check_choice("mechanism", name, MECHANISMS)


def _out(x: Any) -> Any:
    return scalar_or_array(np.asarray(x, dtype=float))


# ---------------------------------------------------------------------------
# Presets: Table 1 and the Alewife miss penalties
# ---------------------------------------------------------------------------

_NAN = float("nan")


@dataclass(frozen=True, kw_only=True)
class Machine:
    """One row of Table 1 of Chong et al. 1998 (32-processor machines).

    Missing entries stay missing: NaN, with the printed text in ``notes``.

    Attributes
    ----------
    name : str
    clock_mhz : float
        Processor clock (MHz).
    clock_note : str
        ``""`` measured, ``"projected"`` (``*`` in the table) or
        ``"simulated"`` (``#``).
    topology : str
        Network interconnect topology as printed.
    bisection_mb_s : float
        Bisection bandwidth in Mbytes/second (NaN when "N/A").
    bisection_bytes_per_cycle : float
        Bisection bandwidth in bytes per processor cycle (NaN when "N/A").
    latency : float
        One-way network transit time of a 24-byte packet in processor cycles
        (NaN when "?").
    remote_miss_low, remote_miss_high : float
        Remote miss penalty in cycles, an average of best- and worst-case
        write misses; equal unless a range is printed (Cray T3E: 300-600);
        NaN when "N/A" (no shared memory).
    local_miss_penalty : float
        Local miss penalty in cycles.
    notes : str
        Printed text of non-numeric entries.
    """

    name: str
    clock_mhz: float
    clock_note: str
    topology: str
    bisection_mb_s: float
    bisection_bytes_per_cycle: float
    latency: float
    remote_miss_low: float
    remote_miss_high: float
    local_miss_penalty: float
    notes: str = ""

    @property
    def remote_miss_penalty(self) -> float:
        """Midpoint of the printed remote miss penalty (NaN when missing)."""
        return 0.5 * (self.remote_miss_low + self.remote_miss_high)

    @property
    def has_shared_memory(self) -> bool:
        """True when Table 1 gives a remote miss penalty."""
        return not math.isnan(self.remote_miss_low)

    def params(self, **overrides: Any) -> "MechanismParams":
        """:class:`MechanismParams` at this machine's bisection bandwidth and latency.

        The shared-memory occupancy per round trip is
        ``max(0, remote_miss_penalty - 2 latency)`` (the penalty less two
        network traversals).  A value that Table 1 leaves missing must be
        given in ``overrides``; otherwise a ValueError names it.

        Examples
        --------
        >>> p = machine("MIT Alewife").params()
        >>> p.bisection_bandwidth, p.latency, p.sm_occupancy
        (18.0, 15.0, 20.0)
        >>> machine("KSR-2").params()
        Traceback (most recent call last):
        ...
        ValueError: KSR-2: latency is missing in Table 1 (printed '?'); pass latency=...
        """
        kw: dict[str, Any] = {}
        missing = []
        if "bisection_bandwidth" not in overrides:
            if math.isnan(self.bisection_bytes_per_cycle):
                missing.append(("bisection_bandwidth", "N/A"))
            kw["bisection_bandwidth"] = self.bisection_bytes_per_cycle
        if "latency" not in overrides:
            if math.isnan(self.latency):
                missing.append(("latency", "?"))
            kw["latency"] = self.latency
        if "sm_occupancy" not in overrides and self.has_shared_memory and not missing:
            L = overrides.get("latency", self.latency)
            kw["sm_occupancy"] = max(0.0, self.remote_miss_penalty - 2.0 * float(np.max(L)))
        if missing:
            what, printed = missing[0]
            raise ValueError(f"{self.name}: {what} is missing in Table 1 (printed {printed!r}); "
                             f"pass {what}=...")
        kw.update(overrides)
        return MechanismParams(**kw)


def _m(name: str, clock: float, note: str, topo: str, mb: float, bpc: float, lat: float,
       rlo: float, rhi: float, local: float, notes: str = "") -> Machine:
    return Machine(name=name, clock_mhz=clock, clock_note=note, topology=topo, bisection_mb_s=mb,
                   bisection_bytes_per_cycle=bpc, latency=lat, remote_miss_low=rlo,
                   remote_miss_high=rhi, local_miss_penalty=local, notes=notes)


#: Table 1 of Chong et al. 1998: parameter estimates for fourteen 32-processor machines,
#: transcribed as printed ("sWisconsin T1" in the source text is read as
#: "Wisconsin T1").  ``*`` projected, ``#`` simulated clocks.
MACHINES: tuple[Machine, ...] = (
    _m("MIT Alewife", 20.0, "", "4 x 8 Mesh", 360, 18.0, 15, 50, 50, 11),
    _m("TMC CM5", 33.0, "", "4-ary Fat-Tree", 640, 19.4, 50, _NAN, _NAN, 16,
       "remote miss penalty N/A"),
    _m("KSR-2", 20.0, "", "Ring", 1000, 50.0, _NAN, 126, 126, 18, "network latency ?"),
    _m("MIT J-Machine", 12.5, "", "4 x 4 x 2 Mesh", 3200, 256.0, 7, _NAN, _NAN, 7,
       "remote miss penalty N/A"),
    _m("MIT M-Machine", 100.0, "simulated", "4 x 4 x 2 Mesh", 12800, 128.0, 10, 154, 154, 21),
    _m("Intel Delta", 40.0, "", "4 x 8 Mesh", 216, 5.4, 15, _NAN, _NAN, 10,
       "remote miss penalty N/A"),
    _m("Intel Paragon", 50.0, "", "4 x 8 Mesh", 2800, 56.0, 12, _NAN, _NAN, 10,
       "remote miss penalty N/A"),
    _m("Stanford DASH", 33.0, "", "2 x 4 4-proc clusters", 480, 14.5, 31, 120, 120, 30),
    _m("Stanford FLASH", 200.0, "projected", "4 x 8 Mesh", 3200, 16.0, 62, 352, 352, 40),
    _m("Wisconsin T0", 200.0, "simulated", "none simulated", _NAN, _NAN, 200, 1461, 1461, 40,
       "bisection N/A"),
    _m("Wisconsin T1", 200.0, "simulated", "none simulated", _NAN, _NAN, 200, 401, 401, 40,
       "bisection N/A"),
    _m("Cray T3D", 150.0, "", "4 x 2 x 2 Torus 2-proc clusters", 4800, 32.0, 15, 100, 100, 23),
    _m("Cray T3E", 300.0, "", "4 x 4 x 2 Torus", 19200, 64.0, 110, 300, 600, 80,
       "remote miss penalty printed 300-600"),
    _m("SGI Origin", 200.0, "", "Hypercube 4-proc clusters", 10800, 54.0, 60, 150, 150, 61),
)


def machine(name: str) -> Machine:
    """The Table 1 machine called ``name`` (case-insensitive).

    Examples
    --------
    >>> machine("cray t3e").remote_miss_penalty
    450.0
    """
    for m in MACHINES:
        if m.name.lower() == str(name).lower():
            return m
    raise ValueError(f"machine must be one of {', '.join(repr(m.name) for m in MACHINES)}; "
                     f"got {name!r}")


@dataclass(frozen=True, kw_only=True)
class MissPenalty:
    """One row of the Alewife miss-penalty table (Figure 3 of Chong et al. 1998).

    Attributes
    ----------
    miss_type : str
        ``"load"`` or ``"store"``.
    home : str
        Home location as printed (``"local"``, ``"remote"``,
        ``"remote (2-party)"``, ``"remote (3-party)"``).
    invalidations : float
        Invalidation messages (NaN where the table prints a dash).
    handler : str
        ``"hw"`` (LimitLESS hardware) or ``"sw"`` (software-extended).
    cycles : float
        Miss penalty in processor cycles.
    microseconds : float
        Miss penalty in microseconds at 20 MHz.
    """

    miss_type: str
    home: str
    invalidations: float
    handler: str
    cycles: float
    microseconds: float


#: The Alewife shared-memory miss penalties of Figure 3 of Chong et al. 1998.  The
#: software load (425 cycles) is the throughput seen by one node invoking
#: LimitLESS handling at a software-limited rate.
ALEWIFE_MISS_PENALTIES: tuple[MissPenalty, ...] = tuple(
    MissPenalty(miss_type=t, home=h, invalidations=i, handler=hw, cycles=c, microseconds=us)
    for t, h, i, hw, c, us in (
        ("load", "local", 0, "hw", 11, 0.55),
        ("load", "remote", 0, "hw", 38, 1.90),
        ("load", "remote (2-party)", 1, "hw", 42, 2.10),
        ("load", "remote (3-party)", 1, "hw", 63, 3.15),
        ("load", "remote", _NAN, "sw", 425, 21.25),
        ("store", "local", 0, "hw", 12, 0.60),
        ("store", "local", 1, "hw", 40, 2.00),
        ("store", "remote", 0, "hw", 38, 1.90),
        ("store", "remote (2-party)", 1, "hw", 43, 2.15),
        ("store", "remote (3-party)", 1, "hw", 66, 3.30),
        ("store", "remote", 5, "hw", 84, 4.20),
        ("store", "remote", 6, "sw", 707, 35.35),
    ))


def machine_data(name: Any) -> dict[str, Any]:
    """Table 1 columns for one machine name or an array of names (NaN where missing).

    Examples
    --------
    >>> d = machine_data(["MIT Alewife", "KSR-2"])
    >>> d["bisection_bytes_per_cycle"].tolist(), d["latency"].tolist()
    ([18.0, 50.0], [15.0, nan])
    """
    names = np.asarray(name)
    rows = [machine(str(n)) for n in names.ravel()]
    out: dict[str, Any] = {"name": names}
    for f in fields(Machine):
        if f.name == "name":
            continue
        vals = [getattr(m, f.name) for m in rows]
        kind = float if isinstance(vals[0], float) or isinstance(vals[0], int) else object
        out[f.name] = np.array(vals, dtype=kind).reshape(names.shape)
    out["remote_miss_penalty"] = np.array([m.remote_miss_penalty
                                           for m in rows]).reshape(names.shape)
    return out


def machine_table(*, evaluate: bool = False, **overrides: Any) -> Any:
    """Table 1 of Chong et al. 1998 as a :class:`mva.table.Table` (missing values shown as ``-``).

    Parameters
    ----------
    evaluate : bool, default False
        Add the model's time per value for shared memory and polling message
        passing at each machine's bisection bandwidth and latency, and their
        regions (``-`` where Table 1 lacks a value, or the machine has no
        shared memory).
    **overrides
        Other :class:`MechanismParams` fields for the evaluation.

    Examples
    --------
    >>> t = machine_table()
    >>> len(t), float(t["bytes/cycle"][0])
    (14, 18.0)
    """
    from mva.table import Table

    cols: dict[str, list[Any]] = {k: [] for k in (
        "machine", "clock MHz", "topology", "bisection MB/s", "bytes/cycle", "latency",
        "remote miss", "local miss")}
    extra: dict[str, list[Any]] = {k: [] for k in ("T sm", "region sm", "T polling",
                                                   "region polling")} if evaluate else {}
    for m in MACHINES:
        mark = {"projected": "*", "simulated": "#"}.get(m.clock_note, "")
        cols["machine"].append(m.name)
        cols["clock MHz"].append(f"{mark}{m.clock_mhz:g}")
        cols["topology"].append(m.topology)
        cols["bisection MB/s"].append(m.bisection_mb_s)
        cols["bytes/cycle"].append(m.bisection_bytes_per_cycle)
        cols["latency"].append(m.latency)
        cols["remote miss"].append(
            "-" if not m.has_shared_memory else f"{m.remote_miss_low:g}"
            if m.remote_miss_low == m.remote_miss_high
            else f"{m.remote_miss_low:g}-{m.remote_miss_high:g}")
        cols["local miss"].append(m.local_miss_penalty)
        if evaluate:
            ok = not (math.isnan(m.bisection_bytes_per_cycle) or math.isnan(m.latency))
            pm = m.params(**overrides) if ok else None
            for mech, key in (("shared_memory", "sm"), ("polling", "polling")):
                if pm is None or (mech == "shared_memory" and not m.has_shared_memory):
                    extra[f"T {key}"].append(_NAN)
                    extra[f"region {key}"].append("-")
                else:
                    r = solve(pm, mech)
                    extra[f"T {key}"].append(r.time_per_value)
                    extra[f"region {key}"].append(r.region)
    cols.update(extra)
    data = {k: np.array(v, dtype=object if k in ("machine", "clock MHz", "topology", "remote miss")
                        or k.startswith("region") else float) for k, v in cols.items()}
    return Table(columns=tuple(data), data=data,
                 title="Table 1 of Chong et al. 1998: 32-processor machines (latency cycles, "
                       "24-byte packet)",
                 formats={"T sm": ".1f", "T polling": ".1f"})


def miss_penalty_table() -> Any:
    """The Alewife miss-penalty table of Chong et al. 1998, Figure 3 as a :class:`mva.table.Table`.

    Examples
    --------
    >>> miss_penalty_table()["cycles"].tolist()[:3]
    [11.0, 38.0, 42.0]
    """
    from mva.table import Table

    rows = [{"miss": r.miss_type, "home": r.home, "# inv msgs": r.invalidations,
             "hw/sw": r.handler, "cycles": r.cycles, "usec": r.microseconds}
            for r in ALEWIFE_MISS_PENALTIES]
    data = {k: np.array([row[k] for row in rows],
                        dtype=float if k in ("# inv msgs", "cycles", "usec") else object)
            for k in rows[0]}
    return Table(columns=tuple(data), data=data,
                 title="Alewife shared-memory miss penalties (Chong et al. 1998, Fig. 3)",
                 formats={"usec": ".2f"})


# ---------------------------------------------------------------------------
# Parameters
# ---------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class MechanismParams:
    """Machine and application parameters of the mechanisms model (defaults: Alewife, Table 1).

    Parameters
    ----------
    bisection_bandwidth : float or array, default 18
        Bisection bandwidth in bytes per processor cycle.
    latency : float or array, default 15
        Unloaded one-way network latency in cycles (Table 1: transit of a
        24-byte packet).
    processors : float or array, default 32
        Processors ``P``.
    channels : float or array, default 8
        Links across the bisection (a 4 x 8 mesh: 4 rows, both directions);
        each carries ``bisection_bandwidth / channels`` bytes per cycle.
    cross_fraction : float or array, default 0.5
        Fraction of messages that cross the bisection (uniform traffic).
    compute : float or array, default 200
        Computation per communicated value, cycles.
    values : float or array, default 1000
        Communicated values per processor (scales the run time).
    value_bytes, line_bytes, header_bytes : float or array, default 8, 16, 8
        Bytes of a value, a cache line (Alewife: 16) and a message header.
    ref_bytes : float or array, default 24
        Packet size at which ``latency`` is quoted; longer messages add
        ``(size - ref_bytes) * channels / bisection_bandwidth`` cycles of
        serialization.
    sm_messages : float or array, default 4
        Shared-memory messages per communicated value: request, reply (with
        the line), invalidation, acknowledgement (Chong et al. 1998, Section 5.1).
    sm_round_trips : float or array, default 2
        Round trips per value on the processors' critical paths (the
        writer's invalidation and the reader's miss).
    sm_occupancy : float or array, default 20
        Controller and memory time per round trip, cycles (Alewife: remote
        miss penalty 50 less two 15-cycle traversals).
    prefetch_coverage : float or array, default 0.8
        Fraction of values prefetched (mechanism ``"prefetch"``).
    prefetch_distance : float or array, default 2
        Values of computation between a prefetch and the use (Chong et al. 1998, Section
        4.1: two computations ahead).
    prefetch_overhead : float or array, default 2
        Cycles to issue a prefetch.
    interrupt_overhead : float or array, default 157
        Processor cycles per message (send and receive) when messages are
        received by interrupt: ``102 / 0.65``, since polling cuts the
        overhead by about 35 percent (Chong et al. 1998, Section 4.3).
    polling_overhead : float or array, default 102
        Processor cycles per message received by polling: the Alewife null
        active message, 102 cycles (Chong et al. 1998, Section 3.2; "overheads as low as
        100 cycles", Section 4).
    values_per_message : float or array, default 1
        Values carried by one fine-grained message.
    slack : float or array, optional
        Independent work in cycles that can overlap one message's one-way
        latency (parallel slackness); default ``compute``.
    bulk_values : float or array, default 16
        Values per bulk (DMA) transfer (small: irregular applications limit
        the transfer size, Chong et al. 1998, Section 6).
    gather_scatter : float or array, default 60
        Gather plus scatter copying cost per cache line of bulk data
        (Chong et al. 1998, Section 4: "as high as 60 cycles per 16-byte cache line").

    Examples
    --------
    >>> MechanismParams(bisection_bandwidth=[2.0, 18.0]).bisection_bandwidth
    array([ 2., 18.])
    >>> MechanismParams(cross_fraction=1.5)
    Traceback (most recent call last):
    ...
    ValueError: cross_fraction must lie in (0, 1]; got 1.5
    """

    bisection_bandwidth: Any = param(
        symbol="bisection_bandwidth", meaning="bisection bandwidth", unit="bytes/cycle",
        low=MIN_BANDWIDTH, allow_inf=True, valid=(0.5, 256), scale="log", default=18.0)
    latency: Any = param(
        symbol="latency", meaning="unloaded one-way network latency", unit="cycles", low=0,
        high=MAX_TIME,
        valid=(1, 1000), scale="log", default=15.0)
    processors: Any = param(
        symbol="processors", meaning="processors P", unit="", low=0, high=MAX_COUNT, low_open=True,
        valid=(2, 1024), scale="log", default=32.0)
    channels: Any = param(
        symbol="channels", meaning="links across the bisection", unit="", low=0, high=MAX_COUNT,
        low_open=True,
        valid=(1, 64), scale="log", default=8.0)
    cross_fraction: Any = param(
        symbol="cross_fraction", meaning="fraction of messages crossing the bisection", unit="",
        low=0, low_open=True, high=1, valid=(0.1, 1), default=0.5)
    compute: Any = param(
        symbol="compute", meaning="computation per communicated value", unit="cycles/value", low=0,
        high=MAX_TIME,
        valid=(10, 10000), scale="log", default=200.0)
    values: Any = param(
        symbol="values", meaning="communicated values per processor", unit="", low=0,
        high=MAX_COUNT,
        low_open=True, valid=(10, 100000.0), scale="log", default=1000.0)
    value_bytes: Any = param(
        symbol="value_bytes", meaning="bytes of a value", unit="bytes", low=0, high=MAX_COUNT,
        low_open=True,
        default=8.0)
    line_bytes: Any = param(
        symbol="line_bytes", meaning="bytes of a cache line", unit="bytes", low=0, high=MAX_COUNT,
        low_open=True,
        default=16.0)
    header_bytes: Any = param(
        symbol="header_bytes", meaning="bytes of a message header", unit="bytes", low=0,
        high=MAX_COUNT,
        default=8.0)
    ref_bytes: Any = param(
        symbol="ref_bytes", meaning="packet size at which latency is quoted", unit="bytes",
        low=0, high=MAX_COUNT, default=24.0)
    sm_messages: Any = param(
        symbol="sm_messages", meaning="shared-memory messages per value",
        unit="messages/value", low=0, high=MAX_COUNT,
        low_open=True, default=4.0)
    sm_round_trips: Any = param(
        symbol="sm_round_trips",
        meaning="shared-memory round trips per value on the critical path", unit="", low=0,
        high=MAX_COUNT,
        default=2.0)
    sm_occupancy: Any = param(
        symbol="sm_occupancy", meaning="controller and memory time per round trip",
        unit="cycles", low=0, high=MAX_TIME, valid=(0, 500), default=20.0)
    prefetch_coverage: Any = param(
        symbol="prefetch_coverage", meaning="fraction of values prefetched", unit="", low=0,
        high=1, valid=(0, 1), default=0.8)
    prefetch_distance: Any = param(
        symbol="prefetch_distance", meaning="values of computation between prefetch and use",
        unit="values", low=0, high=MAX_COUNT, default=2.0)
    prefetch_overhead: Any = param(
        symbol="prefetch_overhead", meaning="cycles to issue a prefetch", unit="cycles", low=0,
        high=MAX_TIME,
        default=2.0)
    interrupt_overhead: Any = param(
        symbol="interrupt_overhead",
        meaning="processor cycles per message received by interrupt", unit="cycles/message", low=0,
        high=MAX_TIME,
        valid=(10, 1000), scale="log", default=157.0)
    polling_overhead: Any = param(
        symbol="polling_overhead", meaning="processor cycles per message received by polling",
        unit="cycles/message", low=0, high=MAX_TIME, valid=(10, 1000), scale="log", default=102.0)
    values_per_message: Any = param(
        symbol="values_per_message", meaning="values carried by one fine-grained message",
        unit="", low=0, high=MAX_COUNT, low_open=True, default=1.0)
    slack: Any = param(
        symbol="slack",
        meaning="independent work overlapping one message latency (default compute)",
        unit="cycles", low=0, high=MAX_TIME, optional=True, default=None)
    bulk_values: Any = param(
        symbol="bulk_values", meaning="values per bulk (DMA) transfer", unit="", low=0,
        high=MAX_COUNT,
        low_open=True, valid=(1, 1024), scale="log", default=16.0)
    gather_scatter: Any = param(
        symbol="gather_scatter", meaning="gather plus scatter cost per cache line of bulk data",
        unit="cycles/line", low=0, high=MAX_TIME, valid=(0, 200), default=60.0)

    def __post_init__(self) -> None:
        if self.slack is None:
            object.__setattr__(self, "slack", self.compute)
        for name, arr in validate_fields(self).items():
            object.__setattr__(self, name, float(arr) if arr.ndim == 0 else arr)
        if np.any(np.asarray(self.sm_messages) < 2 * np.asarray(self.sm_round_trips)):
            raise ValueError("sm_messages must be >= 2 * sm_round_trips (each round trip is two "
                             f"messages); got sm_messages={self.sm_messages!r}, "
                             f"sm_round_trips={self.sm_round_trips!r}")

    def arrays(self) -> dict[str, np.ndarray]:
        """Every field as a float array (for the vectorised formulas)."""
        return {f.name: np.asarray(getattr(self, f.name), dtype=float) for f in fields(self)}


# ---------------------------------------------------------------------------
# Formulas
# ---------------------------------------------------------------------------


def _spec(p: dict[str, np.ndarray], mech: str) -> dict[str, Any]:
    """Traffic per value and processor base time of a mechanism."""
    h, vb = p["header_bytes"], p["value_bytes"]
    w = p["compute"]
    if mech in ("shared_memory", "prefetch"):
        # (sm_messages - 1) header-only messages and one reply carrying the line
        msgs = [(p["sm_messages"] - 1.0, h + 0 * vb), (np.ones_like(h), h + p["line_bytes"])]
        base = w + (p["prefetch_coverage"] * p["prefetch_overhead"] if mech == "prefetch" else 0.0)
    elif mech in ("interrupt", "polling"):
        k = p["values_per_message"]
        msgs = [(1.0 / k, h + k * vb)]
        over = p["interrupt_overhead"] if mech == "interrupt" else p["polling_overhead"]
        base = w + over / k
    else:  # bulk
        K = p["bulk_values"]
        msgs = [(1.0 / K, h + K * vb)]
        base = w + p["interrupt_overhead"] / K + p["gather_scatter"] * vb / p["line_bytes"]
    return {"msgs": msgs, "base": base + 0 * w}


def _traverse(p: dict[str, np.ndarray], size: Any, wait: Any) -> np.ndarray:
    """One-way time of a message of ``size`` bytes with mean bisection wait ``wait``."""
    ser = np.maximum(0.0, size - p["ref_bytes"]) * p["channels"] / p["bisection_bandwidth"]
    return p["latency"] + ser + p["cross_fraction"] * wait


def _stall(p: dict[str, np.ndarray], mech: str, wait: Any, *, ideal: bool = False) -> np.ndarray:
    """Exposed network time per value given the mean wait per crossing message."""
    h = p["header_bytes"]
    if ideal:  # zero latency, infinite bandwidth: only end-point occupancy remains
        t_small = t_line = t_msg = t_bulk = 0.0 * h
    else:
        t_small = _traverse(p, h, wait)
        t_line = _traverse(p, h + p["line_bytes"], wait)
        t_msg = _traverse(p, h + p["values_per_message"] * p["value_bytes"], wait)
        t_bulk = _traverse(p, h + p["bulk_values"] * p["value_bytes"], wait)
    if mech in ("shared_memory", "prefetch"):
        r = p["sm_round_trips"]
        D = t_line + (2.0 * r - 1.0) * t_small + r * p["sm_occupancy"]
        if mech == "shared_memory":
            return D
        f = p["prefetch_coverage"]
        return (1.0 - f) * D + f * np.maximum(0.0, D - p["prefetch_distance"] * p["compute"])
    if mech in ("interrupt", "polling"):
        return np.maximum(0.0, t_msg - p["slack"]) / p["values_per_message"]
    return np.maximum(0.0, t_bulk - p["slack"]) / p["bulk_values"]


def _wait(p: dict[str, np.ndarray], spec: dict[str, Any], T: np.ndarray
          ) -> tuple[np.ndarray, np.ndarray | float]:
    """Mean wait per crossing message at a bisection channel, and its utilization.

    The utilization is an array (a float 0.0 only if ``spec`` had no messages).
    """
    c, B = p["channels"], p["bisection_bandwidth"]
    rate_ch = p["processors"] * p["cross_fraction"] / (T * c)  # per value-time, per channel
    lam = 0.0
    m1: np.ndarray | float = 0.0
    m2 = 0.0
    for n, size in spec["msgs"]:
        s = size * c / B
        lam = lam + rate_ch * n
        m1 = m1 + rate_ch * n * s
        m2 = m2 + rate_ch * n * s * s
    with np.errstate(divide="ignore", invalid="ignore"):
        mean_s = np.where(lam > 0, m1 / np.where(lam > 0, lam, 1.0), 0.0)
        cs2 = np.where(mean_s > 0,
                       (m2 / np.where(lam > 0, lam, 1.0)) / np.where(mean_s > 0, mean_s, 1.0) ** 2
                       - 1.0, 0.0)
    W = mg1_wait(np.asarray(lam), mean_s, np.maximum(cs2, 0.0))
    return np.where(m1 <= 0, 0.0, W), m1


def _volume(p: dict[str, np.ndarray], spec: dict[str, Any]) -> tuple[np.ndarray, np.ndarray]:
    vol = sum(n * size for n, size in spec["msgs"])
    nmsg = sum(n for n, _ in spec["msgs"])
    return vol + 0 * p["compute"], nmsg + 0 * p["compute"]


def _solve_arrays(p: dict[str, np.ndarray], mech: str, *, tol: float = 1e-12,
                  on_fail: str = "warn") -> dict[str, Any]:
    """Time per value and its parts for broadcast parameter arrays."""
    from mva.fixedpoint import bracketed_root

    spec = _spec(p, mech)
    base = spec["base"]
    vol, nmsg = _volume(p, spec)
    # bisection busy time per value-time: T must exceed it for utilization < 1
    bound = p["processors"] * p["cross_fraction"] * vol / p["bisection_bandwidth"]
    shape = np.broadcast_shapes(*(np.shape(v) for v in p.values()), np.shape(base), np.shape(bound))
    base = np.broadcast_to(base, shape)
    bound = np.broadcast_to(bound, shape)
    t_nocong = base + _stall(p, mech, 0.0)

    def total(T: np.ndarray) -> np.ndarray:
        W, _ = _wait(p, spec, T)
        return base + _stall(p, mech, W)

    def f(T: np.ndarray) -> np.ndarray:
        v = T - total(T)
        return np.where(np.isfinite(v), v, -1.0)

    lo = np.maximum(t_nocong, bound * (1.0 + 1e-9))
    # a bisection far slower than everything else (bound above 1e9 times the other
    # times): the root lies within 1e-9 of the bound, where the wait at lo is still
    # short against T; the bracket then starts at the bound itself (utilization 1, f < 0)
    at_bound = (bound * (1.0 + 1e-9) > t_nocong) & (f(lo) > 0)
    lo = np.where(at_bound, np.broadcast_to(bound, shape), lo)
    T1 = np.maximum(t_nocong, 2.0 * bound)
    hi = np.maximum(T1, total(T1))
    hi = np.maximum(hi, lo)
    res = bracketed_root(f, lo, hi, tol=tol, on_fail=on_fail)
    T = np.broadcast_to(res.x, shape)
    W, rho = _wait(p, spec, T)
    stall = T - base
    t_ideal = base + _stall(p, mech, 0.0, ideal=True)
    return {"T": T, "base": base, "stall": stall, "nocong": t_nocong, "ideal": t_ideal,
            "wait": W, "rho": rho, "vol": vol, "nmsg": nmsg, "res": res}


def _region(T: np.ndarray, nocong: np.ndarray, ideal: np.ndarray, hide_tol: float) -> np.ndarray:
    hidden = (T - ideal) <= hide_tol * ideal
    congested = (T - nocong) > (nocong - ideal)
    return np.where(hidden, REGIONS[0], np.where(congested, REGIONS[2], REGIONS[1]))


@dataclass(frozen=True, kw_only=True)
class MechanismResult(ResultMixin):
    """Performance of one mechanism (see :func:`solve`).

    Attributes
    ----------
    mechanism : str
    time : float or array
        Run time in cycles, ``values * time_per_value``.
    time_per_value : float or array
        Cycles per communicated value (computation, overhead and exposed
        communication).
    compute : float or array
        Computation per value.
    overhead : float or array
        Processor overhead per value (message send/receive, gather/scatter,
        prefetch instructions).
    stall : float or array
        Exposed communication time per value (waiting for the network).
    congestion : float or array
        Part of the stall due to queueing at the bisection.
    ideal : float or array
        Time per value on an ideal network (zero latency, infinite bandwidth).
    wait : float or array
        Mean queueing delay of a message at a bisection channel.
    utilization : float or array
        Utilization of the bisection channels.
    volume : float or array
        Bytes injected into the network per value.
    messages : float or array
        Messages per value.
    region : str or array of str
        ``"latency hiding"``, ``"latency dominated"`` or ``"congestion dominated"``.
    iterations, residual, converged, method
        Root-finder diagnostics.
    """

    mechanism: str
    time: Any
    time_per_value: Any
    compute: Any
    overhead: Any
    stall: Any
    congestion: Any
    ideal: Any
    wait: Any
    utilization: Any
    volume: Any
    messages: Any
    region: Any
    iterations: int
    residual: float
    converged: Any
    method: str = "M/G/1 bisection + illinois"


def _with_overrides(fn: str, params: MechanismParams | None,
                    overrides: dict[str, Any]) -> MechanismParams:
    """``params`` (default: the defaults) with the keyword ``overrides`` of ``fn`` applied."""
    from mva._validate import check_kwargs

    params = params if params is not None else MechanismParams()
    if not isinstance(params, MechanismParams):
        raise ValueError(f"params must be MechanismParams; got {type(params).__name__}")
    check_kwargs(fn, overrides, [f.name for f in fields(MechanismParams)])
    return replace(params, **overrides) if overrides else params


def solve(params: MechanismParams | None = None, mechanism: str = "shared_memory", *,
          hide_tol: float = 0.01, tol: float = 1e-12, on_fail: str = "warn",
          **overrides: Any) -> MechanismResult:
    """Run time of a communication mechanism at a bisection bandwidth and latency.

    Parameters
    ----------
    params : MechanismParams, optional
        Machine and application (default: Alewife values).
    mechanism : str, default "shared_memory"
        One of :data:`MECHANISMS` (``"shared_memory"``, ``"prefetch"``,
        ``"interrupt"``, ``"polling"``, ``"bulk"``; aliases ``"sm"``,
        ``"mp"`` for polling).
    hide_tol : float, default 0.01
        A point is in the latency-hiding region when its time per value is
        within this fraction of the ideal-network time.
    tol : float, default 1e-12
        Root-finder tolerance.
    on_fail : {"warn", "raise", "ignore"}
        Non-convergence handling (:func:`mva.bracketed_root`).
    **overrides
        Fields of :class:`MechanismParams` replacing those of ``params``
        (arrays broadcast), e.g. ``bisection_bandwidth=np.linspace(1, 20)``.

    Returns
    -------
    MechanismResult

    Notes
    -----
    Per value a processor spends :math:`T = b + S(W)`, with base time
    :math:`b = w + o` (computation plus processor overhead) and exposed
    network time :math:`S`.  A message of :math:`s` bytes takes

    .. math:: t(s) = L + \\frac{c \\max(0, s - s_{ref})}{B} + f_x W

    where :math:`B` is the bisection bandwidth, :math:`c` the number of
    bisection channels, :math:`f_x` the fraction of messages crossing it and
    :math:`W` the mean wait at a channel.  Shared memory exposes
    :math:`r` round trips, one reply carrying a line:

    .. math:: S_{sm} = t(h + \\ell) + (2r - 1)\\, t(h) + r\\, o_{sm},

    prefetching hides :math:`d w` cycles of it for a fraction :math:`f` of
    values, :math:`S_{pf} = (1 - f) S_{sm} + f \\max(0, S_{sm} - d w)`, and
    message passing exposes only what the slack :math:`\\sigma` cannot hide,
    :math:`S_{mp} = \\max(0, t(h + k v) - \\sigma) / k`.  Each channel is an
    M/G/1 queue with arrival rate :math:`\\lambda = P f_x m / (c T)` for
    :math:`m` messages per value and service :math:`c s / B`, so
    utilization :math:`\\rho = P f_x V / (B T)` for :math:`V` bytes per value, and

    .. math:: W = \\frac{\\lambda E[S^2]}{2 (1 - \\rho)}.

    :math:`T` is the unique root of :math:`T - b - S(W(T)) = 0` on
    :math:`(\\max(b + S(0), P f_x V / B), \\infty)`.  Regions: latency hiding
    when :math:`T \\le (1 + \\epsilon) T_{ideal}` (zero latency, infinite
    bandwidth); otherwise congestion dominated when the queueing part
    :math:`T - T(W{=}0)` exceeds the rest of the degradation
    :math:`T(W{=}0) - T_{ideal}`, else latency dominated.

    References
    ----------
    .. [1] Chong et al. 1998, Sections 2, 3.2, 5.1 to 5.3; Figures 1, 2, 8, 9.

    Examples
    --------
    >>> r = solve(mechanism="shared_memory")        # Alewife: 18 bytes/cycle, 15 cycles
    >>> round(r.time_per_value, 1), r.region
    (301.2, 'latency dominated')
    >>> r = solve(mechanism="polling")
    >>> round(r.time_per_value, 1), r.region
    (302.0, 'latency hiding')
    >>> solve(mechanism="shared_memory", bisection_bandwidth=1.0).region
    'congestion dominated'
    """
    params = _with_overrides("solve", params, overrides)
    mech = _mech(mechanism)
    check_nonnegative("hide_tol", hide_tol)
    check_choice("on_fail", on_fail, ("warn", "raise", "ignore"))
    p = params.arrays()
    r = _solve_arrays(p, mech, tol=tol, on_fail=on_fail)
    T = r["T"]
    shape = np.shape(T)
    o = lambda v: _out(np.broadcast_to(v, shape))  # noqa: E731
    region = _region(T, r["nocong"], r["ideal"], hide_tol)
    res = MechanismResult(
        mechanism=mech, time=o(T * p["values"]), time_per_value=o(T), compute=o(p["compute"]),
        overhead=o(r["base"] - p["compute"]), stall=o(r["stall"]),
        congestion=o(np.maximum(0.0, T - r["nocong"])), ideal=o(r["ideal"]), wait=o(r["wait"]),
        utilization=o(r["rho"]), volume=o(r["vol"]), messages=o(r["nmsg"]),
        region=str(region) if shape == () else region,
        iterations=int(r["res"].iterations), residual=float(r["res"].residual),
        converged=(bool(np.all(r["res"].converged)) if shape == ()
                   else np.broadcast_to(r["res"].converged, shape)))
    return with_inputs(res, params)


def compare(params: MechanismParams | None = None, mechanisms: Sequence[str] = MECHANISMS,
            **overrides: Any) -> dict[str, MechanismResult]:
    """:func:`solve` for several mechanisms on the same parameters.

    Examples
    --------
    >>> r = compare(bisection_bandwidth=2.0)
    >>> r["shared_memory"].time_per_value > r["polling"].time_per_value
    True
    """
    return {(_mech(m)): solve(params, m, **overrides) for m in mechanisms}


# ---------------------------------------------------------------------------
# Crossovers
# ---------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class CrossoverResult(ResultMixin):
    """Crossover between two mechanisms (see :func:`crossover_bandwidth`,
    :func:`crossover_latency`).

    Attributes
    ----------
    variable : str
        ``"bisection_bandwidth"`` or ``"latency"``.
    first, second : str
        The two mechanisms.
    value : float or array
        Bandwidth (bytes/cycle) or latency (cycles) at which their times per
        value are equal; NaN where there is no crossover in the search range.
    found : bool or array
        False where the sign of the difference does not change in range.
    first_wins_above : bool or array
        True when ``first`` is the faster one above ``value``.
    time_per_value : float or array
        Common time per value at the crossover.
    iterations, residual, converged
        Root-finder diagnostics.
    """

    variable: str
    first: str
    second: str
    value: Any
    found: Any
    first_wins_above: Any
    time_per_value: Any
    iterations: int
    residual: float
    converged: Any


def _crossover(params: MechanismParams, a: str, b: str, variable: str, lo: float, hi: float,
               log: bool, tol: float, on_fail: str) -> CrossoverResult:
    from mva.fixedpoint import bracketed_root

    a = check_choice("first", _ALIASES.get(a, a), MECHANISMS)
    b = check_choice("second", _ALIASES.get(b, b), MECHANISMS)
    if a == b:
        raise ValueError(f"first and second must be two different mechanisms; got "
                         f"first={a!r} and second={b!r} (a mechanism never crosses itself)")
    p0 = params.arrays()
    shape = np.broadcast_shapes(*(np.shape(v) for v in p0.values()))
    p0 = {k: np.broadcast_to(v, shape) for k, v in p0.items()}
    tr = (np.log if log else (lambda x: x))
    inv = (np.exp if log else (lambda x: x))

    def diff(x: np.ndarray) -> np.ndarray:
        p = dict(p0)
        p[variable] = np.broadcast_to(inv(x), shape)
        ta = _solve_arrays(p, a, tol=1e-13, on_fail="ignore")["T"]
        tb = _solve_arrays(p, b, tol=1e-13, on_fail="ignore")["T"]
        return (ta - tb) / np.maximum(ta, tb)

    xlo = np.full(shape, tr(float(lo)))
    xhi = np.full(shape, tr(float(hi)))
    dlo, dhi = diff(xlo), diff(xhi)
    found = np.sign(dlo) * np.sign(dhi) <= 0
    mask = found

    def f(x: np.ndarray) -> np.ndarray:
        return np.where(mask, diff(x), 0.0)

    res = bracketed_root(f, xlo, xhi, tol=tol, on_fail=on_fail)
    val = np.where(found, inv(res.x), np.nan)
    # ``first`` wins above the crossover when it is the faster one at the top of the range
    a_wins_above = dhi < 0
    p = dict(p0)
    p[variable] = np.broadcast_to(np.where(found, inv(res.x), hi), shape)
    tt = _solve_arrays(p, a, on_fail="ignore")["T"]
    o = lambda v: _out(np.broadcast_to(v, shape))  # noqa: E731
    sc = (lambda v: bool(v)) if shape == () else (lambda v: np.broadcast_to(v, shape))
    result = CrossoverResult(variable=variable, first=a, second=b, value=o(val), found=sc(found),
                             first_wins_above=sc(a_wins_above),
                             time_per_value=o(np.where(found, tt, np.nan)),
                             iterations=int(res.iterations), residual=float(res.residual),
                             converged=sc(np.asarray(res.converged) | ~found))
    return with_inputs(result, params)


def crossover_bandwidth(params: MechanismParams | None = None, first: str = "shared_memory",
                        second: str = "polling", *, lo: float = 0.05, hi: float = 1000.0,
                        tol: float = 1e-10, on_fail: str = "warn",
                        **overrides: Any) -> CrossoverResult:
    """Bisection bandwidth at which two mechanisms take equal time.

    Parameters
    ----------
    params : MechanismParams, optional
        Every other parameter (arrays broadcast; ``bisection_bandwidth`` is
        the unknown and ignored).
    first, second : str
        Mechanisms (default shared memory against polling message passing).
    lo, hi : float
        Search range in bytes per cycle (searched on a log scale).
    tol, on_fail
        Root-finder settings (:func:`mva.bracketed_root`).
    **overrides
        :class:`MechanismParams` fields.

    Returns
    -------
    CrossoverResult
        ``value`` is NaN (and ``found`` False) where the faster mechanism is
        the same at both ends of the range.

    Notes
    -----
    Solves :math:`(T_a(B) - T_b(B)) / \\max(T_a, T_b) = 0` in :math:`\\ln B`
    with :func:`mva.bracketed_root`, each :math:`T` itself the root of
    :func:`solve`'s equation; vectorised over the other parameters.

    Examples
    --------
    >>> r = crossover_bandwidth()
    >>> round(r.value, 2), r.first_wins_above
    (14.09, True)
    """
    params = _with_overrides("crossover_bandwidth", params, overrides)
    check_positive("lo", lo)
    check_positive("hi", hi)
    if not lo < hi:
        raise ValueError(f"lo must be < hi; got lo={lo!r}, hi={hi!r}")
    return _crossover(params, first, second, "bisection_bandwidth", lo, hi, True, tol, on_fail)


def crossover_latency(params: MechanismParams | None = None, first: str = "shared_memory",
                      second: str = "polling", *, lo: float = 0.0, hi: float = 10000.0,
                      tol: float = 1e-10, on_fail: str = "warn",
                      **overrides: Any) -> CrossoverResult:
    """Network latency at which two mechanisms take equal time.

    Parameters
    ----------
    params : MechanismParams, optional
        Every other parameter (``latency`` is the unknown and ignored).
    first, second : str
        Mechanisms (default shared memory against polling message passing).
    lo, hi : float
        Search range in cycles (linear scale).
    tol, on_fail
        Root-finder settings.
    **overrides
        :class:`MechanismParams` fields.

    Returns
    -------
    CrossoverResult
        ``first_wins_above`` is True when ``first`` is faster at latencies
        above the crossover.

    Examples
    --------
    >>> r = crossover_latency()
    >>> round(r.value, 2), r.first_wins_above
    (15.21, False)
    """
    params = _with_overrides("crossover_latency", params, overrides)
    check_nonnegative("lo", lo)
    check_positive("hi", hi)
    if not lo < hi:
        raise ValueError(f"lo must be < hi; got lo={lo!r}, hi={hi!r}")
    return _crossover(params, first, second, "latency", lo, hi, False, tol, on_fail)


def sweep(params: MechanismParams | None = None, *, bandwidth: Any = (1, 2, 4, 8, 18, 50),
          latency: Any = (15,), mechanisms: Sequence[str] = MECHANISMS, **overrides: Any) -> Any:
    """Table of time per value and region for each mechanism over a bandwidth x latency grid.

    Examples
    --------
    >>> t = sweep(bandwidth=[2, 18], latency=[15], mechanisms=["sm", "polling"])
    >>> t.columns[:4]
    ('bisection_bandwidth', 'latency', 'T shared_memory', 'region shared_memory')
    """
    from mva.table import Table, grid_points

    params = params if params is not None else MechanismParams()
    names = _mech_names("mechanisms", mechanisms)
    pts = grid_points({"bisection_bandwidth": np.asarray(bandwidth, dtype=float),
                       "latency": np.asarray(latency, dtype=float)})
    data: dict[str, Any] = dict(pts)
    formats = {}
    for name in names:
        r = solve(params, name, **{**overrides, **pts})
        data[f"T {name}"] = np.atleast_1d(r.time_per_value)
        data[f"region {name}"] = np.atleast_1d(np.asarray(r.region, dtype=object))
        formats[f"T {name}"] = ".1f"
    return Table(columns=tuple(data), data=data, formats=formats,
                 title="Cycles per communicated value by mechanism")


# ---------------------------------------------------------------------------
# Command line
# ---------------------------------------------------------------------------


def equations() -> dict[str, Any]:
    """The mechanisms model's key formulas as SymPy equations.

    Returns
    -------
    dict of str to sympy.Eq
        ``"t_s"`` one-way time of a message of :math:`s` bytes with mean
        bisection wait :math:`W`; ``"T_sm"`` shared-memory time per value;
        ``"T_mp"`` message-passing time per value (interrupt or polling,
        handler overhead :math:`o_m`, :math:`k` values per message, slack
        :math:`\\sigma`); ``"lambda_sm"``/``"lambda_mp"`` message rate per
        bisection channel at time per value :math:`T`; ``"rho_sm"``,
        ``"rho_mp"`` channel utilization; ``"W_sm"``, ``"W_mp"`` the M/G/1
        (Pollaczek-Khinchine) wait per crossing message.  The time per value
        is the root of :math:`T = T_{sm}(W_{sm}(T))` (resp. ``mp``).

    Notes
    -----
    A channel carries :math:`B/c` bytes per cycle, so a message of
    :math:`s` bytes occupies it :math:`s c / B` cycles.  Shared memory
    sends :math:`M - 1` header-only messages and one carrying a line per
    value; message passing sends :math:`1/k` messages of :math:`h + k v`
    bytes.  These are the expressions :func:`solve` evaluates
    (``tests/models/test_mechanisms.py`` lambdifies them and compares).

    References
    ----------
    .. [1] Chong et al. 1998, Sections 2 and 3.

    Examples
    --------
    >>> list(equations())
    ['t_s', 'T_sm', 'T_mp', 'lambda_sm', 'rho_sm', 'W_sm', 'lambda_mp', 'rho_mp', 'W_mp']
    """
    import sympy as sp

    def S(n: str) -> Any:
        return sp.Symbol(n, nonnegative=True)

    l, s_ref, c, B, f, W, T = (S(n) for n in ("l", "s_ref", "c", "B", "f", "W", "T"))
    h, b, r, o_sm, w, P, M = (S(n) for n in ("h", "b", "r", "o_sm", "w", "P", "M"))
    k, v, o_m, sigma = (S(n) for n in ("k", "v", "o_m", "sigma"))
    s = S("s")

    def t(size: Any) -> Any:
        return l + sp.Max(0, size - s_ref) * c / B + f * W

    Eq = lambda a, e: sp.Eq(a, e, evaluate=False)  # noqa: E731

    def mg1(classes: list[tuple[Any, Any]]) -> tuple[Any, Any, Any]:
        rate = P * f / (T * c)
        lam = sum(rate * n for n, _ in classes)
        rho = sum(rate * n * size * c / B for n, size in classes)
        m2 = sum(rate * n * (size * c / B) ** 2 for n, size in classes)
        return sp.cancel(lam), sp.cancel(rho), sp.factor(sp.cancel(m2 / (2 * (1 - rho))))

    lam_sm, rho_sm, W_sm = mg1([(M - 1, h), (1, h + b)])
    lam_mp, rho_mp, W_mp = mg1([(1 / k, h + k * v)])
    return {
        "t_s": Eq(sp.Symbol("t_s"), t(s)),
        "T_sm": Eq(sp.Symbol("T_sm"), w + t(h + b) + (2 * r - 1) * t(h) + r * o_sm),
        "T_mp": Eq(sp.Symbol("T_mp"), w + o_m / k + sp.Max(0, t(h + k * v) - sigma) / k),
        "lambda_sm": Eq(sp.Symbol("lambda_sm"), lam_sm),
        "rho_sm": Eq(sp.Symbol("rho_sm"), rho_sm),
        "W_sm": Eq(sp.Symbol("W_sm"), W_sm),
        "lambda_mp": Eq(sp.Symbol("lambda_mp"), lam_mp),
        "rho_mp": Eq(sp.Symbol("rho_mp"), rho_mp),
        "W_mp": Eq(sp.Symbol("W_mp"), W_mp),
    }


def _mech_names(name: str, mechanisms: Any) -> list[str]:
    """Canonical names of a non-empty sequence of mechanisms (aliases resolved, no repeats)."""
    allowed = ", ".join(repr(m) for m in MECHANISMS)
    aliases = ", ".join(f"{k}={v}" for k, v in _ALIASES.items())
    if isinstance(mechanisms, str) or not isinstance(mechanisms, Sequence) or not mechanisms:
        raise ValueError(f"{name} must be a non-empty list of mechanisms from {allowed} "
                         f"(aliases {aliases}); got {mechanisms!r}")
    out: list[str] = []
    for m in mechanisms:
        canon = _ALIASES.get(m, m) if isinstance(m, str) else m
        if canon not in MECHANISMS:
            raise ValueError(f"{name + ': ' if name else ''}unknown mechanism {m!r}; "
                             f"allowed: {allowed} (aliases {aliases}, or 'all')")
        if canon in out:
            raise ValueError(f"{name + ': ' if name else ''}mechanism {canon!r} is listed twice")
        out.append(canon)
    return out


def register_cli(subparsers: Any) -> None:
    """Add the ``mechanisms`` subcommand (kept for compatibility: see
    :mod:`models.cli.mechanisms`)."""
    from models.cli.mechanisms import register

    register(subparsers)
