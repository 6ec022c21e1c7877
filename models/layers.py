"""Communication and protocol layers of software shared memory (the layered-approach paper).

A what-if model of the *layered* study "Limits to the Performance of Software
Shared Memory: A Layered Approach": the communication layer (host overhead,
NI occupancy per packet, I/O bus bandwidth, message-handling cost, link
latency) and the protocol layer (page protection, diffs, twins, handlers,
write notices) are described by two parameter dataclasses whose presets are
the paper's Tables 2 and 3.  From them the module derives

* the one-way latency and per-resource occupancy (host, NI send, NI receive,
  I/O bus) of a message of any size (:func:`message_cost`);
* the round trip of a fine-grained block fetch under SC (:func:`block_fetch`)
  and of a page fetch with diffs under HLRC (:func:`page_fetch`);
* the contention at the host, NI and I/O bus for a given fetch rate, each an
  M/G/1 queue of the :mod:`mva` engine (:func:`fetch_contention`);
* a speedup estimate for an application characterised by its compute time,
  message counts and sizes, protocol operations and synchronization, for any
  combination of layer settings such as ``"AO"``, ``"AB"``, ``"BO"``,
  ``"BB"``, ``"HO"``, ``"WB"`` or ``"BB+"`` (:func:`speedup`,
  :func:`layered_whatif`).

All times are processor cycles of a 1-IPC processor (the paper's 200 MHz
P6-like node: 1 cycle = 5 ns); sizes are bytes; bandwidths bytes per cycle.
Every numeric parameter may be a NumPy array; inputs broadcast, and scalars in
give Python floats out.

References
----------
The layered-approach paper: "Limits to the Performance of Software Shared Memory: A Layered
Approach" (authors omitted for blind review), Sections 3 and 4, Tables 2
and 3.  ``../shared/papers/003_424d737ba5176b9e.txt``.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any, Mapping, Sequence

import numpy as np

from mva.open import mg1_wait
from mva.params import MAX_COUNT, MAX_TIME, MIN_BANDWIDTH, param, validate_fields
from mva.results import ResultMixin, with_inputs
from mva._validate import (as_float_array, check_choice, check_nonnegative, check_positive,
                           scalar_or_array)

__all__ = [
    "TABLE2", "TABLE3", "COMM_PRESETS", "PROTOCOL_PRESETS", "LAYER_COMBINATIONS",
    "CommParams", "ProtocolParams", "AppProfile",
    "MessageCost", "FetchCost", "ContentionResult", "SpeedupResult",
    "comm_preset", "protocol_preset", "layer_settings",
    "message_cost", "block_fetch", "page_fetch", "fetch_contention", "speedup", "whatif",
    "layered_whatif", "equations", "register_cli",
]

# ---------------------------------------------------------------------------
# Paper tables, transcribed exactly
# ---------------------------------------------------------------------------

#: Table 2 of the layered-approach paper as printed: communication parameter values in processor
#: cycles (I/O bus bandwidth in bytes/cycle).  ``"real"`` is the column
#: measured with VMMC on Pentium nodes with Myrinet; its host overhead is the
#: printed range ``600-800`` and its message-handling cost is "N/A" (``None``).
TABLE2: dict[str, dict[str, Any]] = {
    "host_overhead": {"achievable": 600, "best": 0, "worse": 1200, "real": (600, 800)},
    "io_bus_bandwidth": {"achievable": 0.5, "best": 2, "worse": 0.25, "real": 0.45},
    "ni_occupancy": {"achievable": 1000, "best": 0, "worse": 2000, "real": 1000},
    "message_handling": {"achievable": 200, "best": 0, "worse": 400, "real": None},
}

#: Table 3 of the layered-approach paper as printed: protocol cost parameter values.  Diff creation
#: is (cycles per word compared, cycles per word put in the diff); the handler
#: cost is ``base + x`` with ``x`` the cost of the operations it executes.
#: The write-notice traversal cost (20 cycles per list element) is given in
#: the text of Section 3.3, not in the table; Best and Halfway follow the
#: rule "all costs zero" / "all costs halfway".  Twin creation is printed as
#: "10000 cycles/word"; the model charges it per twin (per page), see
#: :class:`ProtocolParams`.
TABLE3: dict[str, dict[str, Any]] = {
    "page_protection": {"original": 50, "best": 0, "halfway": 25, "units": "cycles/page"},
    "diff_creation": {"original": (10, 10), "best": (0, 0), "halfway": (5, 5),
                      "units": "cycles/word"},
    "diff_application": {"original": 10, "best": 0, "halfway": 5, "units": "cycles/word"},
    "twin_creation": {"original": 10000, "best": 0, "halfway": 5000, "units": "cycles/word"},
    "handler_cost": {"original": "100+x", "best": "0+x", "halfway": "50+x", "units": "cycles"},
    "write_notice": {"original": 20, "best": 0, "halfway": 10,
                     "units": "cycles/list element (Section 3.3 text)"},
}

# ---------------------------------------------------------------------------
# Small shared helpers
# ---------------------------------------------------------------------------


def _positive_or_inf(name: str, value: Any) -> np.ndarray:
    arr = as_float_array(name, value)
    bad = ~(arr > 0)  # NaN fails too; +inf allowed
    if bad.any():
        raise ValueError(f"{name} must be > 0 (inf allowed); got "
                         f"{arr[bad].flat[0] if arr.ndim else arr.item()!r}")
    return arr


def _out(x: Any) -> Any:
    return scalar_or_array(np.asarray(x, dtype=float))


def _mg1_wait(lam: np.ndarray, mean_s: np.ndarray,
              second: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Mean M/G/1 waiting time and utilization from the engine.

    ``lam`` arrival rate, ``mean_s`` mean service time, ``second`` the second
    moment ``E[S^2]``.  Returns ``(W, rho)``; ``W`` is NaN where ``rho >= 1``.
    """
    rho = lam * mean_s
    with np.errstate(divide="ignore", invalid="ignore"):
        cs2 = np.where(mean_s > 0, second / np.where(mean_s > 0, mean_s, 1.0) ** 2 - 1.0, 0.0)
    cs2 = np.maximum(cs2, 0.0)
    W = mg1_wait(lam, mean_s, cs2)
    W = np.where(lam * mean_s <= 0, 0.0, W)
    W = np.where(rho >= 1.0, np.nan, W)
    return W, rho


# ---------------------------------------------------------------------------
# Parameters
# ---------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class CommParams:
    """Communication-layer parameters of the layered-approach paper, Section 3.2 (Table 2).

    Parameters
    ----------
    host_overhead : float or array, default 600
        Cycles the host processor is busy sending one message (placing it in
        a buffer for the NI; sends are asynchronous).
    ni_occupancy : float or array, default 1000
        Cycles the sending NI processor spends preparing each packet.
    ni_recv_occupancy : float or array, optional
        Cycles the receiving NI spends per packet; ``None`` (default) means
        the same as ``ni_occupancy`` (one NI processor type at both ends).
    io_bus_bandwidth : float or array, default 0.5
        Host-to-network (I/O bus) bandwidth in bytes per cycle, crossed once
        at the sender and once at the receiver.  ``inf`` allowed.
    message_handling : float or array, default 200
        Cycles from a message reaching the head of the incoming NI queue to
        its handler starting (polling cost).  Charged only to messages that
        invoke a handler; data replies are deposited in memory by the NI.
    link_latency : float or array, default 20
        Hardware link latency in cycles (fixed at 20 in the paper; 0 in BB+).
    link_bandwidth : float or array, default 2
        Link bandwidth in bytes per cycle (16-bit links at processor speed);
        ``inf`` for the zero link cycle time of BB+.
    max_packet : float or array, default 4096
        Largest packet in bytes; a message is split into
        ``ceil(size / max_packet)`` packets.

    Examples
    --------
    >>> CommParams.preset("A").host_overhead
    600.0
    >>> CommParams(io_bus_bandwidth=0)
    Traceback (most recent call last):
    ...
    ValueError: io_bus_bandwidth must be >= 1e-09; got 0.0
    """

    host_overhead: Any = param(symbol="o_host", meaning="host cycles busy sending one message",
                               unit="cycles/message", low=0, high=MAX_TIME, valid=(0, 5000),
                               default=600.0)
    ni_occupancy: Any = param(symbol="o_ni", meaning="sending NI cycles per packet",
                              unit="cycles/packet", low=0, high=MAX_TIME, valid=(0, 5000),
                              default=1000.0)
    ni_recv_occupancy: Any = param(symbol="o_ni_recv", meaning="receiving NI cycles per packet "
                                   "(default ni_occupancy)", unit="cycles/packet", low=0,
                                   high=MAX_TIME,
                                   optional=True, default=None)
    io_bus_bandwidth: Any = param(symbol="B_io", meaning="I/O bus bandwidth", unit="bytes/cycle",
                                  low=MIN_BANDWIDTH, allow_inf=True, valid=(0.1, 4),
                                  scale="log", default=0.5)
    message_handling: Any = param(symbol="o_msg", meaning="polling cost from queue head to "
                                  "handler start", unit="cycles/message", low=0, high=MAX_TIME,
                                  valid=(0, 1000),
                                  default=200.0)
    link_latency: Any = param(symbol="l_link", meaning="hardware link latency", unit="cycles",
                              low=0, high=MAX_TIME, valid=(0, 100), default=20.0)
    link_bandwidth: Any = param(symbol="B_link", meaning="link bandwidth", unit="bytes/cycle",
                                low=MIN_BANDWIDTH, allow_inf=True, valid=(0.5, 8),
                                scale="log", default=2.0)
    max_packet: Any = param(symbol="MTU", meaning="largest packet", unit="bytes", low=1,
                            high=MAX_COUNT, valid=(256, 8192), scale="log", default=4096.0)

    def __post_init__(self) -> None:
        s = object.__setattr__
        if self.ni_recv_occupancy is None:
            s(self, "ni_recv_occupancy", self.ni_occupancy)
        v = validate_fields(self)
        for name, arr in v.items():
            s(self, name, float(arr) if arr.ndim == 0 else arr)

    @classmethod
    def preset(cls, name: str) -> "CommParams":
        """The communication preset ``name`` (see :data:`COMM_PRESETS`)."""
        return comm_preset(name)


@dataclass(frozen=True, kw_only=True)
class ProtocolParams:
    """Protocol-layer costs of the layered-approach paper, Section 3.3 (Table 3), in cycles.

    Parameters
    ----------
    page_protection : float or array, default 50
        Cycles per page of an ``mprotect`` call.
    diff_compare : float or array, default 10
        Diff creation: cycles per word compared with the twin.
    diff_word : float or array, default 10
        Diff creation: additional cycles per word put in the diff.
    diff_apply : float or array, default 10
        Cycles per diff word applied at the home.
    twin_creation : float or array, default 10000
        Cycles per twin.  Table 3 prints "10000 cycles/word"; a twin is a
        copy of one 4 KB page (1024 words), so the model charges the value
        once per twin (about 10 cycles per word copied, in line with the other
        per-word costs).
    handler_base : float or array, default 100
        Basic cost of a protocol handler; operations it executes are added.
    write_notice : float or array, default 20
        Cycles per element of a write-notice list traversed.
    page_bytes : float or array, default 4096
        Page size in bytes (the coherence unit of HLRC).
    word_bytes : float or array, default 4
        Word size in bytes (x86).

    Examples
    --------
    >>> p = ProtocolParams.preset("H")
    >>> p.handler_base, p.twin_creation
    (50.0, 5000.0)
    """

    page_protection: Any = param(symbol="c_prot", meaning="mprotect cost per page",
                                 unit="cycles/page", low=0, high=MAX_TIME, valid=(0, 500),
                                 default=50.0)
    diff_compare: Any = param(symbol="c_cmp", meaning="diff creation: per word compared with "
                              "the twin", unit="cycles/word", low=0, high=MAX_TIME, valid=(0, 50),
                              default=10.0)
    diff_word: Any = param(symbol="c_dw", meaning="diff creation: per word put in the diff",
                           unit="cycles/word", low=0, high=MAX_TIME, valid=(0, 50), default=10.0)
    diff_apply: Any = param(symbol="c_app", meaning="per diff word applied at the home",
                            unit="cycles/word", low=0, high=MAX_TIME, valid=(0, 50), default=10.0)
    twin_creation: Any = param(symbol="c_twin", meaning="cost of one twin (page copy)",
                               unit="cycles/twin", low=0, high=MAX_TIME, valid=(0, 20000),
                               default=10000.0)
    handler_base: Any = param(symbol="H_0", meaning="basic cost of a protocol handler",
                              unit="cycles", low=0, high=MAX_TIME, valid=(0, 500), default=100.0)
    write_notice: Any = param(symbol="c_wn", meaning="per write-notice element traversed",
                              unit="cycles/element", low=0, high=MAX_TIME, valid=(0, 100),
                              default=20.0)
    page_bytes: Any = param(symbol="page", meaning="page size (coherence unit of HLRC)",
                            unit="bytes", low=0, high=MAX_COUNT, low_open=True, default=4096.0)
    word_bytes: Any = param(symbol="word", meaning="word size", unit="bytes", low=0, high=MAX_COUNT,
                            low_open=True, default=4.0)

    def __post_init__(self) -> None:
        for name, v in validate_fields(self).items():
            object.__setattr__(self, name, float(v) if v.ndim == 0 else v)

    @property
    def page_words(self) -> Any:
        """Words per page, ``page_bytes / word_bytes``."""
        return _out(np.asarray(self.page_bytes) / np.asarray(self.word_bytes))

    @classmethod
    def preset(cls, name: str) -> "ProtocolParams":
        """The protocol preset ``name`` (see :data:`PROTOCOL_PRESETS`)."""
        return protocol_preset(name)


def _t2(row: str, col: str) -> float:
    return float(TABLE2[row][col])


#: Communication presets of the layered-approach paper, Section 3.2: ``"A"`` achievable, ``"B"``
#: best, ``"H"`` halfway (arithmetic midpoint of A and B for every value,
#: including the bandwidth: 1.25 bytes/cycle), ``"W"`` worse (the Table 2
#: column: costs doubled, bandwidth halved), ``"B+"`` better than best (B
#: with zero link cycle time, i.e. zero link latency and infinite link
#: bandwidth, and a 4 bytes/cycle I/O bus), ``"real"`` the measured VMMC /
#: Myrinet column (host overhead: midpoint 700 of the printed 600-800;
#: message handling printed N/A, so the Achievable 200 cycles, which the
#: caption says come from the polling systems Blizzard-S and Shasta).
COMM_PRESETS: dict[str, dict[str, float]] = {
    "A": {"host_overhead": _t2("host_overhead", "achievable"),
          "io_bus_bandwidth": _t2("io_bus_bandwidth", "achievable"),
          "ni_occupancy": _t2("ni_occupancy", "achievable"),
          "message_handling": _t2("message_handling", "achievable")},
    "B": {"host_overhead": _t2("host_overhead", "best"),
          "io_bus_bandwidth": _t2("io_bus_bandwidth", "best"),
          "ni_occupancy": _t2("ni_occupancy", "best"),
          "message_handling": _t2("message_handling", "best")},
    "W": {"host_overhead": _t2("host_overhead", "worse"),
          "io_bus_bandwidth": _t2("io_bus_bandwidth", "worse"),
          "ni_occupancy": _t2("ni_occupancy", "worse"),
          "message_handling": _t2("message_handling", "worse")},
    "real": {"host_overhead": float(np.mean(TABLE2["host_overhead"]["real"])),
             "io_bus_bandwidth": _t2("io_bus_bandwidth", "real"),
             "ni_occupancy": _t2("ni_occupancy", "real"),
             "message_handling": _t2("message_handling", "achievable")},
}
COMM_PRESETS["H"] = {k: 0.5 * (COMM_PRESETS["A"][k] + COMM_PRESETS["B"][k])
                     for k in COMM_PRESETS["A"]}
COMM_PRESETS["B+"] = {**COMM_PRESETS["B"], "io_bus_bandwidth": 4.0, "link_latency": 0.0,
                      "link_bandwidth": float("inf")}


def _t3(row: str, col: str, i: int | None = None) -> float:
    v = TABLE3[row][col]
    return float(v[i] if i is not None else v)


#: Protocol presets of the layered-approach paper, Section 3.3 (Table 3): ``"O"`` original, ``"B"``
#: best (all zero), ``"H"`` halfway.
PROTOCOL_PRESETS: dict[str, dict[str, float]] = {
    code: {"page_protection": _t3("page_protection", col),
           "diff_compare": _t3("diff_creation", col, 0),
           "diff_word": _t3("diff_creation", col, 1),
           "diff_apply": _t3("diff_application", col),
           "twin_creation": _t3("twin_creation", col),
           "handler_base": float(str(TABLE3["handler_cost"][col]).split("+")[0]),
           "write_notice": _t3("write_notice", col)}
    for code, col in (("O", "original"), ("B", "best"), ("H", "halfway"))
}

#: The layer combinations of Figure 3 of the layered-approach paper (communication letter first,
#: then protocol letter) plus the halfway combinations discussed in the text.
LAYER_COMBINATIONS: tuple[str, ...] = ("WO", "WB", "AO", "AH", "AB", "HO", "HH", "HB",
                                       "BO", "BH", "BB", "BB+", "PRAM")


def comm_preset(name: Any) -> CommParams:
    """Communication preset by code: ``"A"``, ``"B"``, ``"H"``, ``"W"``, ``"B+"`` or ``"real"``.

    An array of codes gives one :class:`CommParams` with array fields.

    Examples
    --------
    >>> comm_preset("W").io_bus_bandwidth
    0.25
    >>> comm_preset("H").ni_occupancy
    500.0
    """
    if not isinstance(name, str):
        return _as_comm(np.asarray(name))
    check_choice("communication preset", name, COMM_PRESETS)
    return CommParams(**COMM_PRESETS[name])


def protocol_preset(name: Any) -> ProtocolParams:
    """Protocol preset by code: ``"O"`` (original), ``"B"`` (best) or ``"H"`` (halfway).

    An array of codes gives one :class:`ProtocolParams` with array fields.

    Examples
    --------
    >>> protocol_preset("O").diff_compare
    10.0
    """
    if not isinstance(name, str):
        return _as_proto(np.asarray(name))
    check_choice("protocol preset", name, PROTOCOL_PRESETS)
    return ProtocolParams(**PROTOCOL_PRESETS[name])


def layer_settings(code: str) -> tuple[CommParams, ProtocolParams]:
    """Parameters of a layer combination such as ``"AO"``, ``"HB"`` or ``"BB+"``.

    The first letter is the communication set (A, B, H, W), the second the
    protocol set (O, B, H); a trailing ``+`` makes the communication set
    ``"B+"`` ("better than best", as in the paper's BB+).  ``"PRAM"`` is the
    ideal machine: every communication and protocol cost zero and infinite
    bandwidths.

    Examples
    --------
    >>> c, p = layer_settings("BB+")
    >>> c.io_bus_bandwidth, c.link_latency, p.handler_base
    (4.0, 0.0, 0.0)
    """
    if not isinstance(code, str):
        raise ValueError(f"layer combination must be a string like 'AO'; got {code!r}")
    if code == "PRAM":
        comm = CommParams(host_overhead=0, ni_occupancy=0, io_bus_bandwidth=np.inf,
                          message_handling=0, link_latency=0, link_bandwidth=np.inf)
        return comm, protocol_preset("B")
    plus = code.endswith("+")
    core = code[:-1] if plus else code
    if len(core) != 2 or core[0] not in "ABHW" or core[1] not in "OBH" or (plus and core[0] != "B"):
        raise ValueError("layer combination must be <comm><protocol> with comm in A, B, H, W "
                         "(or B followed by '+') and protocol in O, B, H, e.g. 'AO', 'BB+', "
                         f"or 'PRAM'; got {code!r}")
    return comm_preset(core[0] + ("+" if plus else "")), protocol_preset(core[1])


def _as_params(value: Any, cls: type, preset: Any, name: str) -> Any:
    """``value`` as a ``cls``: None (defaults), a ``cls``, a preset code, or an array of codes.

    An array of codes gives one ``cls`` whose fields are arrays of that shape.
    """
    if value is None:
        return cls()
    if isinstance(value, cls):
        return value
    if isinstance(value, str):
        return preset(value)
    names = np.asarray(value)
    if names.dtype.kind in "US":  # an array of preset codes -> vectorised parameters
        flat = [preset(str(n)) for n in names.ravel()]
        return cls(**{f.name: np.array([getattr(c, f.name) for c in flat]).reshape(names.shape)
                      for f in fields(cls)})
    raise ValueError(f"{name} must be {cls.__name__}, a preset code or an array of codes; "
                     f"got {value!r}")


def _as_comm(comm: Any) -> CommParams:
    return _as_params(comm, CommParams, comm_preset, "comm")


def _as_proto(proto: Any) -> ProtocolParams:
    return _as_params(proto, ProtocolParams, protocol_preset, "proto")


# ---------------------------------------------------------------------------
# One message
# ---------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class MessageCost(ResultMixin):
    """Uncontended cost of one message (see :func:`message_cost`).

    Attributes
    ----------
    size : float or array
        Message size in bytes.
    packets : float or array
        Number of packets, ``max(1, ceil(size / max_packet))``.
    latency : float or array
        One-way latency in cycles, from the send call to the handler starting
        (or the data being in the receiver's memory).
    host_send, ni_send, io_bus_send, wire, ni_recv, io_bus_recv, host_recv : float or array
        Occupancy of each resource in cycles (``wire`` is link latency plus
        serialization; ``host_recv`` the message-handling cost, zero for a
        data message).
    host, ni, io_bus : float or array
        Occupancy summed over both ends: ``host_send + host_recv``,
        ``ni_send + ni_recv``, ``io_bus_send + io_bus_recv``.
    """

    size: Any
    packets: Any
    latency: Any
    host_send: Any
    ni_send: Any
    io_bus_send: Any
    wire: Any
    ni_recv: Any
    io_bus_recv: Any
    host_recv: Any
    host: Any
    ni: Any
    io_bus: Any


def _pipeline(full: Sequence[np.ndarray], last: Sequence[np.ndarray], k: np.ndarray) -> np.ndarray:
    """Flow-shop makespan of ``k`` identical packets (stage times ``full``) then one more
    (``last``).

    Store-and-forward through the stages in order with unlimited queues
    between them.  The ``j``-th of the identical packets leaves stage ``i``
    at :math:`S_i + (j - 1) M_i` (:math:`S_i`, :math:`M_i` the sum and the
    maximum of ``full[:i+1]``); the last packet leaves stage ``i`` at
    :math:`\\max(C(i-1), S_i + (k-1) M_i) + t^{last}_i`.
    """
    prev = np.zeros(())
    S = np.zeros(())
    M = np.zeros(())
    has = np.minimum(k, 1.0)
    for f, g in zip(full, last):
        S = S + f
        M = np.maximum(M, f)
        with np.errstate(invalid="ignore"):
            ahead = np.where(has > 0, S + (k - 1.0) * M, 0.0)
        prev = np.maximum(prev, ahead) + g
    return prev


def _message(comm: CommParams, size: Any, handler: Any) -> dict[str, np.ndarray]:
    """Vectorised message cost (private formula, no validation)."""
    size = np.asarray(size, dtype=float)
    P = np.asarray(comm.max_packet, dtype=float)
    npk = np.maximum(1.0, np.ceil(size / P))
    k = npk - 1.0               # full packets of max_packet bytes ...
    rem = np.where(k > 0, size - k * P, size)  # ... and the rest: 0 < rem <= max_packet
    B = np.asarray(comm.io_bus_bandwidth)
    Bl = np.asarray(comm.link_bandwidth)
    ni_s1 = np.asarray(comm.ni_occupancy)
    ni_r1 = np.asarray(comm.ni_recv_occupancy)
    full = (P / B, ni_s1, P / Bl, ni_r1, P / B)
    last = (rem / B, ni_s1, rem / Bl, ni_r1, rem / B)
    host_recv = np.where(np.asarray(handler, dtype=bool), np.asarray(comm.message_handling), 0.0)
    host_send = np.asarray(comm.host_overhead)
    latency = host_send + _pipeline(full, last, k) + np.asarray(comm.link_latency) + host_recv
    d = {"size": size, "packets": npk, "latency": latency, "host_send": host_send + 0 * latency,
         "ni_send": npk * ni_s1, "io_bus_send": size / B,
         "wire": np.asarray(comm.link_latency) + size / Bl,
         "ni_recv": npk * ni_r1, "io_bus_recv": size / B, "host_recv": host_recv + 0 * latency}
    d["host"] = d["host_send"] + d["host_recv"]
    d["ni"] = d["ni_send"] + d["ni_recv"]
    d["io_bus"] = d["io_bus_send"] + d["io_bus_recv"]
    shape = np.broadcast_shapes(*(np.shape(v) for v in d.values()))
    return {k: np.broadcast_to(v, shape) for k, v in d.items()}


def message_cost(comm: Any = None, size: Any = 64, *, handler: Any = True) -> MessageCost:
    """One-way latency and per-resource occupancy of one message.

    Parameters
    ----------
    comm : CommParams, str or array of str, optional
        Communication parameters, a preset code (``"A"``, ``"B"``, ``"H"``,
        ``"W"``, ``"B+"``, ``"real"``) or an array of codes (vectorised).
        Default: the Achievable set.
    size : float or array, default 64
        Message size in bytes (everything put on the wire).
    handler : bool or array of bool, default True
        Whether the message invokes a handler at the receiver (requests do;
        data replies are deposited by the NI and do not).

    Returns
    -------
    MessageCost

    Notes
    -----
    The message is cut into :math:`n_p = \\max(1, \\lceil s / s_{max} \\rceil)`
    packets: :math:`k = n_p - 1` full packets of :math:`s_{max}` bytes and a
    last one with the remaining :math:`r = s - k s_{max}` bytes
    (:math:`0 < r \\le s_{max}`) -- the layered-approach paper, Section 3.2: packets "are of
    variable size, depending on how much of the message data is available to
    the NI at the time, and are up to 4 KBytes long".  They pass,
    store-and-forward per packet and pipelined across packets, through five
    stages: the sender's I/O bus, the sending NI, the link, the receiving NI
    and the receiver's I/O bus, with per-packet times for a packet of
    :math:`p` bytes

    .. math:: t(p) = \\left(\\frac{p}{B_{io}},\\; o_{NI},\\; \\frac{p}{B_{link}},\\;
              o_{NI}^{r},\\; \\frac{p}{B_{io}}\\right).

    The pipeline's exit time is the flow-shop recursion: the :math:`j`-th
    full packet leaves stage :math:`i` at
    :math:`S_i + (j - 1) M_i` (:math:`S_i = \\sum_{l \\le i} t_l(s_{max})`,
    :math:`M_i = \\max_{l \\le i} t_l(s_{max})`) and the last packet at

    .. math:: C_i = \\max\\bigl(C_{i-1},\\; [k \\ge 1]\\,(S_i + (k - 1) M_i)\\bigr) + t_i(r),
              \\qquad C_0 = 0.

    The one-way latency is

    .. math:: T(s) = o_h + C_5 + L_{link} + h\\,[\\text{handler}]

    with host overhead :math:`o_h`, link latency :math:`L_{link}` and message
    handling cost :math:`h`.  Occupancies: host :math:`o_h` (sender) and
    :math:`h` (receiver), NI :math:`n_p o_{NI}` at each end, I/O bus
    :math:`s / B_{io}` at each end.

    References
    ----------
    .. [1] The layered-approach paper, Section 3.2 and Table 2.

    Examples
    --------
    A 64-byte request with the Achievable set: 600 + 128 + 1000 + 32 + 1000
    + 128 + 20 + 200 cycles.

    >>> m = message_cost("A", 64)
    >>> m.latency, m.ni, m.io_bus
    (3108.0, 2000.0, 256.0)
    >>> message_cost("B", 4096, handler=False).latency
    6164.0
    """
    c = _as_comm(comm)
    size = check_nonnegative("size", size)
    d = _message(c, size, handler)
    res = MessageCost(**{k: _out(v) for k, v in d.items()})
    return with_inputs(res, {"comm": c}, size=size, handler=handler)


# ---------------------------------------------------------------------------
# Fetches
# ---------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class FetchCost(ResultMixin):
    """Uncontended cost of a remote fetch (see :func:`block_fetch`, :func:`page_fetch`).

    Attributes
    ----------
    kind : str
        ``"block"`` (SC) or ``"page"`` (HLRC).
    size : float or array
        Bytes of data fetched (block size or page size).
    round_trip : float or array
        Cycles from the request to the data being usable, including (for a
        page) pending diffs and page protection.
    request_latency, reply_latency : float or array
        One-way latencies of the request and of the data reply.
    handler : float or array
        Protocol handler cost at the home (base plus operations).
    diff_latency : float or array
        Diff creation at the writer, diff message and diff application at the
        home (0 for blocks or when ``diff_words`` is 0).
    host, ni, io_bus : float or array
        Occupancy of each resource type summed over all nodes and messages.
    messages : float or array
        Messages exchanged (2, or 3 with a diff).
    """

    kind: str
    size: Any
    round_trip: Any
    request_latency: Any
    reply_latency: Any
    handler: Any
    diff_latency: Any
    host: Any
    ni: Any
    io_bus: Any
    messages: Any


def block_fetch(comm: Any = None, proto: Any = None, block_size: Any = 64, *,
                request_size: Any = 16) -> FetchCost:
    """Round trip of a fine-grained block fetch in the SC protocol.

    Parameters
    ----------
    comm : CommParams or preset code, optional
        Communication layer (default Achievable).
    proto : ProtocolParams or preset code, optional
        Protocol layer (default Original); only the handler base cost enters.
    block_size : float or array, default 64
        Coherence block in bytes (the paper uses 64 B to 4 KB).
    request_size : float or array, default 16
        Request message size in bytes (an assumption; the paper gives none).

    Returns
    -------
    FetchCost

    Notes
    -----
    A request (with handler) to the home, the handler, and a data reply
    deposited directly in the requester's memory:

    .. math:: RT_{block}(b) = T(s_{req}, \\text{handler}) + H_0 + T(b, \\text{no handler}).

    References
    ----------
    .. [1] The layered-approach paper, Sections 2, 3.2 and 3.3.

    Examples
    --------
    >>> r = block_fetch("A", "O", 64)
    >>> r.request_latency, r.reply_latency, r.round_trip
    (2892.0, 2908.0, 5900.0)
    >>> block_fetch("B", "B", 64).round_trip < r.round_trip
    True
    """
    c, p = _as_comm(comm), _as_proto(proto)
    b = check_positive("block_size", block_size)
    r = check_nonnegative("request_size", request_size)
    req = _message(c, r, True)
    rep = _message(c, b, False)
    H = np.asarray(p.handler_base)
    rt = req["latency"] + H + rep["latency"]
    res = FetchCost(kind="block", size=_out(b + 0 * rt), round_trip=_out(rt),
                    request_latency=_out(req["latency"] + 0 * rt),
                    reply_latency=_out(rep["latency"] + 0 * rt), handler=_out(H + 0 * rt),
                    diff_latency=_out(0 * rt), host=_out(req["host"] + H + rep["host"]),
                    ni=_out(req["ni"] + rep["ni"]), io_bus=_out(req["io_bus"] + rep["io_bus"]),
                    messages=_out(2.0 + 0 * rt))
    return with_inputs(res, {"comm": c, "proto": p}, request_size=request_size)


def _diff_parts(c: CommParams, p: ProtocolParams, diff_words: np.ndarray, compared: np.ndarray,
                request_size: np.ndarray) -> dict[str, Any]:
    create = compared * p.diff_compare + diff_words * p.diff_word
    msg = _message(c, diff_words * np.asarray(p.word_bytes) + request_size, True)
    apply = np.asarray(p.handler_base) + diff_words * p.diff_apply
    has = diff_words > 0
    return {"create": np.where(has, create, 0.0), "msg": msg, "apply": np.where(has, apply, 0.0),
            "latency": np.where(has, create + msg["latency"] + apply, 0.0), "has": has}


def page_fetch(comm: Any = None, proto: Any = None, *, diff_words: Any = 0,
               compared_words: Any = None, request_size: Any = 16) -> FetchCost:
    """Round trip of a page fetch with diffs in the home-based LRC protocol.

    Parameters
    ----------
    comm : CommParams or preset code, optional
        Communication layer (default Achievable).
    proto : ProtocolParams or preset code, optional
        Protocol layer (default Original).
    diff_words : float or array, default 0
        Words in a diff that must reach the home, and be applied there, before
        the page can be served (0: no pending diff).
    compared_words : float or array, optional
        Words compared with the twin to create the diff (default: the whole
        page, ``page_bytes / word_bytes``).
    request_size : float or array, default 16
        Request size in bytes; the diff message carries
        ``diff_words * word_bytes`` bytes plus this header.

    Returns
    -------
    FetchCost

    Notes
    -----
    On a fault the requester asks the home for the page, the home's handler
    returns the whole page, and the requester maps it (one page protection):

    .. math:: RT_{page} = T(s_{req}, \\text{h}) + H_0 + T(s_{page}, \\text{no h}) + c_{prot}
              + [d > 0]\\,\\big(c_{cmp} w_{cmp} + c_{dw} d + T(4d + s_{req}, \\text{h})
              + H_0 + c_{app} d\\big)

    where the bracket is the diff path (creation at the writer, the diff
    message, its application at the home by a handler of cost
    :math:`H_0 + x`).

    References
    ----------
    .. [1] The layered-approach paper, Sections 2 (HLRC), 3.2 and 3.3, Tables 2 and 3.

    Examples
    --------
    >>> r = page_fetch("A", "O")
    >>> r.request_latency, r.reply_latency, r.round_trip
    (2892.0, 21052.0, 24094.0)
    >>> page_fetch("A", "O", diff_words=64).diff_latency
    15664.0
    """
    c, p = _as_comm(comm), _as_proto(proto)
    d = check_nonnegative("diff_words", diff_words)
    w = check_nonnegative("compared_words",
                          p.page_words if compared_words is None else compared_words)
    r = check_nonnegative("request_size", request_size)
    req = _message(c, r, True)
    rep = _message(c, np.asarray(p.page_bytes), False)
    H = np.asarray(p.handler_base)
    diff = _diff_parts(c, p, d, w, r)
    rt = req["latency"] + H + rep["latency"] + np.asarray(p.page_protection) + diff["latency"]
    has = diff["has"]
    host = req["host"] + H + rep["host"] + p.page_protection + np.where(
        has, diff["create"] + diff["msg"]["host"] + diff["apply"], 0.0)
    res = FetchCost(kind="page", size=_out(np.asarray(p.page_bytes) + 0 * rt), round_trip=_out(rt),
                    request_latency=_out(req["latency"] + 0 * rt),
                    reply_latency=_out(rep["latency"] + 0 * rt), handler=_out(H + 0 * rt),
                    diff_latency=_out(diff["latency"] + 0 * rt), host=_out(host),
                    ni=_out(req["ni"] + rep["ni"] + np.where(has, diff["msg"]["ni"], 0.0)),
                    io_bus=_out(req["io_bus"] + rep["io_bus"]
                                + np.where(has, diff["msg"]["io_bus"], 0.0)),
                    messages=_out(2.0 + has))
    return with_inputs(res, {"comm": c, "proto": p}, diff_words=diff_words,
                       request_size=request_size)


# ---------------------------------------------------------------------------
# Contention at the host, NI and I/O bus
# ---------------------------------------------------------------------------

_RESOURCES = ("host", "ni", "io_bus")


def _class(c: CommParams, count: Any, size: Any, handler: bool, extra: Any = 0.0,
           reply_send: bool = False) -> dict[str, Any]:
    """A message class: per-message occupancies and its count (per node)."""
    m = _message(c, size, handler)
    host = np.where(handler, m["host_recv"] + extra
                    + (np.asarray(c.host_overhead) if reply_send else 0.0),
                    0.0)
    return {"n": np.asarray(count, dtype=float), "msg": m,
            "visits": {"host": [host], "ni": [m["ni_send"], m["ni_recv"]],
                       "io_bus": [m["io_bus_send"], m["io_bus_recv"]]}}


def _queues(classes: Sequence[dict[str, Any]],
            T: np.ndarray) -> dict[str, tuple[np.ndarray, np.ndarray]]:
    """Per-resource M/G/1 wait and utilization at a node, for counts spread over time ``T``."""
    out = {}
    for r in _RESOURCES:
        lam: np.ndarray | float = 0.0
        first: np.ndarray | float = 0.0
        second: np.ndarray | float = 0.0
        for k in classes:
            rate = k["n"] / T
            for s in k["visits"][r]:
                active = (s > 0) & (rate > 0)
                lam = lam + np.where(active, rate, 0.0)
                first = first + np.where(active, rate * s, 0.0)
                second = second + np.where(active, rate * s * s, 0.0)
        lam = np.asarray(lam, dtype=float)
        with np.errstate(divide="ignore", invalid="ignore"):
            mean_s = np.where(lam > 0, first / np.where(lam > 0, lam, 1.0), 0.0)
            m2 = np.where(lam > 0, second / np.where(lam > 0, lam, 1.0), 0.0)
        out[r] = _mg1_wait(lam, mean_s, m2)
    return out


def _demand(classes: Sequence[dict[str, Any]]) -> dict[str, np.ndarray]:
    """Total busy time per resource at one node (sum of count times occupancy)."""
    return {r: sum((k["n"] * s for k in classes for s in k["visits"][r]), np.asarray(0.0))
            for r in _RESOURCES}


def _bottleneck(rhos: Mapping[str, np.ndarray]) -> np.ndarray:
    names = np.array(_RESOURCES)
    stack = np.stack(np.broadcast_arrays(*(np.nan_to_num(rhos[r], nan=np.inf) for r in _RESOURCES)))
    worst = names[np.argmax(stack, axis=0)]
    sat = stack.max(axis=0) >= 1.0
    return np.where(sat, worst, "")


@dataclass(frozen=True, kw_only=True)
class ContentionResult(ResultMixin):
    """Contended fetch round trip at a given fetch rate (see :func:`fetch_contention`).

    Attributes
    ----------
    rate : float or array
        Fetches issued (and, by symmetry, served) per node per cycle.
    uncontended : float or array
        Round trip without queueing, cycles.
    round_trip : float or array
        Round trip with M/G/1 queueing at every host, NI and I/O bus visit;
        NaN where saturated.
    wait_host, wait_ni, wait_io_bus : float or array
        Mean wait per visit at each resource (NaN where saturated).
    utilization_host, utilization_ni, utilization_io_bus : float or array
        Utilization of each resource at a node, in [0, 1); NaN where saturated.
    saturated : bool or array
        True where some resource has utilization >= 1.
    bottleneck : str or array
        The saturated resource (``"host"``, ``"ni"``, ``"io_bus"``) or ``""``.
    method : str
        ``"M/G/1"``.
    """

    rate: Any
    uncontended: Any
    round_trip: Any
    wait_host: Any
    wait_ni: Any
    wait_io_bus: Any
    utilization_host: Any
    utilization_ni: Any
    utilization_io_bus: Any
    saturated: Any
    bottleneck: Any
    method: str = "M/G/1"


def _fetch_classes(c: CommParams, p: ProtocolParams, kind: str, n: Any, size: np.ndarray,
                   diff_words: np.ndarray, r: np.ndarray) -> list[dict[str, Any]]:
    ks = [_class(c, n, r, True, p.handler_base, reply_send=True),
          _class(c, n, size, False)]
    if kind == "page":
        ks.append(_class(c, n * (diff_words > 0), diff_words * np.asarray(p.word_bytes) + r, True,
                         np.asarray(p.handler_base) + diff_words * p.diff_apply))
    return ks


def fetch_contention(comm: Any = None, proto: Any = None, rate: Any = 1e-5, *,
                     kind: str = "block", block_size: Any = 64, diff_words: Any = 0,
                     request_size: Any = 16) -> ContentionResult:
    """Round trip of a fetch with contention at the host, NI and I/O bus.

    Every node issues fetches at ``rate`` per cycle to uniformly chosen homes,
    so by symmetry every node also serves ``rate`` fetches per cycle.  Each
    node's host (handler execution), NI (one processor for both directions)
    and I/O bus is an M/G/1 queue of the :mod:`mva` engine whose service
    time is the mixture of the occupancies of the messages visiting it.

    Parameters
    ----------
    comm, proto : parameters or preset codes, optional
        Communication (default Achievable) and protocol (default Original) layers.
    rate : float or array, default 1e-5
        Fetches per node per cycle (1e-5 is 2000 fetches/s at 200 MHz).
    kind : {"block", "page"}
        SC block fetch or HLRC page fetch.
    block_size : float or array, default 64
        Block size in bytes for ``kind="block"``.
    diff_words : float or array, default 0
        Pending diff words per page fetch for ``kind="page"``.
    request_size : float or array, default 16
        Request size in bytes.

    Returns
    -------
    ContentionResult
        Saturation is *flagged* (as in :func:`models.pdq.solve`): where a
        resource's offered utilization :math:`\\rho_k` reaches one,
        ``saturated`` is True, ``bottleneck`` names the resource and the round
        trip, waits and utilizations are NaN (there is no steady state, and a
        utilization above one is never reported).

    Notes
    -----
    For resource :math:`k` visited by message classes :math:`j` with
    occupancy :math:`s_{jk}` at rate :math:`\\lambda_j`:

    .. math:: \\rho_k = \\sum_j \\lambda_j s_{jk}, \\qquad
              W_k = \\frac{\\sum_j \\lambda_j s_{jk}^2}{2 (1 - \\rho_k)}

    (Pollaczek-Khinchine).  A fetch visits the NI and the I/O bus four times
    (send and receive of request and reply) and the home's host once:

    .. math:: RT = RT_0 + 4 W_{NI} + 4 W_{bus} + W_{host}
              \\;(+\\,W_{host} + 2 W_{NI} + 2 W_{bus} \\text{ for a pending diff}).

    References
    ----------
    .. [1] The layered-approach paper, Sections 3.1 and 3.2 (contention modelled at the network
       end points).

    Examples
    --------
    >>> r = fetch_contention("A", "O", 5e-5, kind="block", block_size=64)
    >>> round(r.uncontended), round(r.round_trip), round(r.utilization_ni, 3)
    (5900, 6425, 0.2)
    >>> bool(fetch_contention("A", "O", 2.6e-4).saturated)
    True
    """
    check_choice("kind", kind, ("block", "page"))
    c, p = _as_comm(comm), _as_proto(proto)
    lam = check_nonnegative("rate", rate)
    r = check_nonnegative("request_size", request_size)
    if kind == "block":
        size = check_positive("block_size", block_size)
        dw = np.asarray(0.0)
        base = block_fetch(c, p, size, request_size=r)
    else:
        size = np.asarray(p.page_bytes, dtype=float)
        dw = check_nonnegative("diff_words", diff_words)
        base = page_fetch(c, p, diff_words=dw, request_size=r)
    with np.errstate(divide="ignore", over="ignore"):
        T = np.where(lam > 0, 1.0 / np.where(lam > 0, lam, 1.0), np.inf)
    classes = _fetch_classes(c, p, kind, 1.0, size, dw, r)
    q = _queues(classes, T)
    rt0 = np.asarray(base.round_trip)
    has = (dw > 0) & (kind == "page")
    rt = (rt0 + (4 + 2 * has) * q["ni"][0] + (4 + 2 * has) * q["io_bus"][0]
          + (1 + has) * q["host"][0])
    bott = _bottleneck({k: v[1] for k, v in q.items()})
    sat = bott != ""
    shape = np.broadcast_shapes(np.shape(rt), np.shape(lam))
    b = lambda v: _out(np.broadcast_to(v, shape))  # noqa: E731
    nan = np.where(sat, np.nan, 1.0)  # a saturated point has no steady state: NaN, flagged
    res = ContentionResult(rate=b(lam), uncontended=b(rt0), round_trip=b(rt * nan),
                           wait_host=b(q["host"][0] * nan), wait_ni=b(q["ni"][0] * nan),
                           wait_io_bus=b(q["io_bus"][0] * nan),
                           utilization_host=b(q["host"][1] * nan),
                           utilization_ni=b(q["ni"][1] * nan),
                           utilization_io_bus=b(q["io_bus"][1] * nan),
                           saturated=bool(sat) if np.ndim(sat) == 0 and shape == () else
                           np.broadcast_to(sat, shape),
                           bottleneck=str(bott) if shape == () else np.broadcast_to(bott, shape))
    return with_inputs(res, {"comm": c, "proto": p}, diff_words=dw, request_size=r)


# ---------------------------------------------------------------------------
# Applications and speedup
# ---------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class AppProfile:
    """An application as seen by the layers: work, messages, protocol actions, synchronization.

    All counts are *per processor* over the whole run; every field may be an array.

    Parameters
    ----------
    sequential_time : float
        Cycles of the best sequential version (the speedup baseline).
    processors : float, default 16
        Processors (one per node, as in the paper).
    imbalance : float, default 1
        Load imbalance, >= 1: the busiest processor computes
        ``imbalance * sequential_time / processors`` cycles.
    block_fetches : float, default 0
        Fine-grained (SC) remote block fetches.
    block_size : float, default 64
        SC coherence block in bytes.
    page_fetches : float, default 0
        HLRC page faults that fetch a page from its home.
    diffs : float, default 0
        Diffs created (at releases) and sent to homes.
    diff_words : float, default 16
        Mean words per diff.
    twins : float, default 0
        Twins created.
    protections : float, default 0
        Pages ``mprotect``-ed beyond the one per page fetch.
    write_notices : float, default 0
        Write-notice list elements traversed.
    messages : float, default 0
        Other one-way messages that invoke a handler (not waited for).
    message_size : float, default 64
        Their size in bytes.
    locks : float, default 0
        Remote lock acquires (request to the manager, grant back).
    barriers : float, default 0
        Barriers (arrival messages to a master, release messages back).
    request_size : float, default 16
        Size of requests, grants and synchronization messages in bytes.

    Examples
    --------
    >>> AppProfile(sequential_time=1e9, block_fetches=2e4).processors
    16.0
    >>> AppProfile(sequential_time=1e9, imbalance=0.5)
    Traceback (most recent call last):
    ...
    ValueError: imbalance must lie in [1, 1e+15]; got 0.5
    """

    sequential_time: Any = param(
        symbol="sequential_time", meaning="cycles of the best sequential version",
        unit="cycles", low=0, high=MAX_TIME, low_open=True, valid=(1e8, 1e10), scale="log",
        typical=1.6e9)
    processors: Any = param(
        symbol="processors", meaning="processors (one per node)",
        unit="", low=1, high=MAX_COUNT, valid=(2, 64), scale="log", default=16.0)
    imbalance: Any = param(
        symbol="imbalance", meaning="load imbalance (busiest / mean work)",
        unit="", low=1, high=MAX_COUNT, valid=(1, 2), default=1.0)
    block_fetches: Any = param(
        symbol="block_fetches", meaning="fine-grained (SC) remote block fetches per processor",
        unit="", low=0, high=MAX_COUNT, valid=(0, 1e6), default=0.0)
    block_size: Any = param(
        symbol="block_size", meaning="SC coherence block",
        unit="bytes", low=0, high=MAX_COUNT, low_open=True, valid=(32, 4096), scale="log",
        default=64.0)
    page_fetches: Any = param(
        symbol="page_fetches", meaning="HLRC page faults fetching from the home per processor",
        unit="", low=0, high=MAX_COUNT, valid=(0, 1e5), default=0.0)
    diffs: Any = param(
        symbol="diffs", meaning="diffs created and sent to homes per processor",
        unit="", low=0, high=MAX_COUNT, valid=(0, 1e5), default=0.0)
    diff_words: Any = param(
        symbol="diff_words", meaning="mean words per diff",
        unit="words", low=0, high=MAX_COUNT, valid=(0, 1024), default=16.0)
    twins: Any = param(
        symbol="twins", meaning="twins created per processor",
        unit="", low=0, high=MAX_COUNT, valid=(0, 1e5), default=0.0)
    protections: Any = param(
        symbol="protections", meaning="extra pages mprotect-ed per processor",
        unit="", low=0, high=MAX_COUNT, valid=(0, 1e5), default=0.0)
    write_notices: Any = param(
        symbol="write_notices", meaning="write-notice elements traversed per processor",
        unit="", low=0, high=MAX_COUNT, valid=(0, 1e6), default=0.0)
    messages: Any = param(
        symbol="messages", meaning="other one-way handler messages per processor",
        unit="", low=0, high=MAX_COUNT, valid=(0, 1e6), default=0.0)
    message_size: Any = param(
        symbol="message_size", meaning="size of those messages",
        unit="bytes", low=0, high=MAX_COUNT, low_open=True, valid=(16, 4096), scale="log",
        default=64.0)
    locks: Any = param(
        symbol="locks", meaning="remote lock acquires per processor",
        unit="", low=0, high=MAX_COUNT, valid=(0, 1e5), default=0.0)
    barriers: Any = param(
        symbol="barriers", meaning="barriers per processor",
        unit="", low=0, high=MAX_COUNT, valid=(0, 1e4), default=0.0)
    request_size: Any = param(
        symbol="request_size", meaning="size of requests, grants and synchronization messages",
        unit="bytes", low=0, high=MAX_COUNT, low_open=True, valid=(8, 256), scale="log",
        default=16.0)

    def __post_init__(self) -> None:
        for name, v in validate_fields(self).items():
            object.__setattr__(self, name, float(v) if v.ndim == 0 else v)


@dataclass(frozen=True, kw_only=True)
class SpeedupResult(ResultMixin):
    """Speedup estimate of an application on given layers (see :func:`speedup`).

    Attributes
    ----------
    speedup : float or array
        ``sequential_time / time``.
    time : float or array
        Parallel execution time in cycles (per processor).
    compute : float or array
        Computation, ``imbalance * sequential_time / processors``.
    data_wait : float or array
        Stall on block and page fetches, including contention (NaN where
        ``saturated``).
    protocol : float or array
        Protocol work: diffs, twins, protection, write notices, handlers run
        for other nodes and send overheads of one-way messages.
    synchronization : float or array
        Lock acquire and barrier latency, including contention (NaN where
        ``saturated``).
    utilization_host, utilization_ni, utilization_io_bus : float or array
        Per-node utilization of handler execution, NI and I/O bus.
    message_rate : float or array
        Messages sent per node per cycle.
    saturated : bool or array
        True where the one-way messages alone saturate a resource, so the
        run is throttled to that resource's busy time (``time`` is then that
        bound, an optimistic estimate).
    bottleneck : str or array
        The saturated resource or ``""``.
    iterations, residual, converged, method
        Diagnostics of the root finder (:func:`mva.bracketed_root`).
    """

    speedup: Any
    time: Any
    compute: Any
    data_wait: Any
    protocol: Any
    synchronization: Any
    utilization_host: Any
    utilization_ni: Any
    utilization_io_bus: Any
    message_rate: Any
    saturated: Any
    bottleneck: Any
    iterations: int
    residual: float
    converged: Any
    method: str


def _app_classes(c: CommParams, p: ProtocolParams, a: AppProfile) -> dict[str, dict[str, Any]]:
    P = np.asarray(a.processors)
    r = np.asarray(a.request_size)
    H = np.asarray(p.handler_base)
    share = (P - 1.0) / P
    return {
        "block_req": _class(c, a.block_fetches, r, True, H, reply_send=True),
        "block_rep": _class(c, a.block_fetches, a.block_size, False),
        "page_req": _class(c, a.page_fetches, r, True, H, reply_send=True),
        "page_rep": _class(c, a.page_fetches, np.asarray(p.page_bytes), False),
        "diff": _class(c, a.diffs, np.asarray(a.diff_words) * p.word_bytes + r, True,
                       H + np.asarray(a.diff_words) * p.diff_apply),
        "msg": _class(c, a.messages, a.message_size, True, H),
        "lock_req": _class(c, a.locks, r, True, H, reply_send=True),
        "lock_grant": _class(c, a.locks, r, False),
        "bar_arr": _class(c, np.asarray(a.barriers) * share, r, True, H),
        "bar_rel": _class(c, np.asarray(a.barriers) * share, r, False),
    }


def _app_time(c: CommParams, p: ProtocolParams, a: AppProfile, ks: dict[str, dict[str, Any]],
              T: np.ndarray) -> dict[str, np.ndarray]:
    """Execution-time components at a trial time ``T`` (rates are counts / T)."""
    q = _queues(list(ks.values()), T)
    Wn, Wb, Wh = q["ni"][0], q["io_bus"][0], q["host"][0]
    path = 2 * Wn + 2 * Wb  # queueing of one message: NI and bus at both ends
    lat = {k: v["msg"]["latency"] for k, v in ks.items()}
    H = np.asarray(p.handler_base)
    P = np.asarray(a.processors)
    compute = np.asarray(a.imbalance) * a.sequential_time / P
    rt_block = lat["block_req"] + H + lat["block_rep"] + 2 * path + Wh
    rt_page = lat["page_req"] + H + lat["page_rep"] + p.page_protection + 2 * path + Wh
    data_wait = a.block_fetches * rt_block + a.page_fetches * rt_page
    rt_lock = lat["lock_req"] + H + lat["lock_grant"] + 2 * path + Wh
    handler_arr = ks["bar_arr"]["visits"]["host"][0]
    t_bar = (lat["bar_arr"] + path + Wh + (P - 1.0) * (handler_arr + c.host_overhead)
             + lat["bar_rel"] + path)
    t_bar = np.where(P > 1, t_bar, 0.0)
    sync = a.locks * rt_lock + a.barriers * t_bar
    own = (a.diffs * (np.asarray(p.page_words) * p.diff_compare
                      + np.asarray(a.diff_words) * p.diff_word
                      + c.host_overhead)
           + a.twins * p.twin_creation + a.protections * p.page_protection
           + a.write_notices * p.write_notice + a.messages * c.host_overhead)
    serve = sum(k["n"] * k["visits"]["host"][0] for k in ks.values())
    protocol = own + serve
    total = compute + data_wait + sync + protocol
    return {"compute": compute + 0 * total, "data_wait": data_wait + 0 * total,
            "sync": sync + 0 * total, "protocol": protocol + 0 * total, "total": total,
            "rho_host": q["host"][1], "rho_ni": q["ni"][1], "rho_bus": q["io_bus"][1]}


def speedup(app: AppProfile, comm: Any = None, proto: Any = None, *, layers: str | None = None,
            tol: float = 1e-10, on_fail: str = "warn") -> SpeedupResult:
    """Speedup of an application for a combination of layer settings.

    Parameters
    ----------
    app : AppProfile
        The application (counts per processor).
    comm, proto : parameters or preset codes, optional
        Communication (default Achievable) and protocol (default Original)
        layers; ignored when ``layers`` is given.
    layers : str, optional
        A combination code such as ``"AO"``, ``"BH"``, ``"BB+"`` or
        ``"PRAM"`` (see :func:`layer_settings`).
    tol : float, default 1e-10
        Relative tolerance of the root finder.
    on_fail : {"warn", "raise", "ignore"}
        Non-convergence handling (see :func:`mva.bracketed_root`).

    Returns
    -------
    SpeedupResult

    Notes
    -----
    The parallel time :math:`T` of a processor is the root of

    .. math:: T = C + n_b RT_{block}(T) + n_p RT_{page}(T) + n_l RT_{lock}(T)
              + n_{bar} T_{bar}(T) + \\Pi

    with :math:`C = \\iota\\, T_{seq} / P`, the round trips of
    :func:`block_fetch` and :func:`page_fetch` plus the M/G/1 waits of
    :func:`fetch_contention` at the message rates :math:`n_j / T`, and the
    protocol work

    .. math:: \\Pi = n_d (c_{cmp} w_{page} + c_{dw} d + o_h) + n_t c_{twin}
              + n_{pr} c_{prot} + n_{wn} c_{wn} + n_m o_h + \\sum_j n_j H_j

    where :math:`H_j = h + H_0 + x_j\\,(+\\,o_h` if the handler replies) is the
    handler run at the receiver for message class :math:`j` (by symmetry
    every node receives what it sends).  A barrier costs an arrival message,
    :math:`P-1` arrival handlers and reply sends serialized at the master,
    and a release message; a lock acquire is a request and a grant.  The
    right-hand side falls as :math:`T` grows (utilizations fall), so the
    root is unique; it is found per grid point by :func:`mva.bracketed_root`.
    Speedup is :math:`T_{seq} / T`.

    Not modelled: critical-section dilation and lock serialization (a major
    effect in HLRC in the paper), cache effects, access-control cost.

    References
    ----------
    .. [1] The layered-approach paper, Sections 3 and 4, Figure 3.

    Examples
    --------
    >>> app = AppProfile(sequential_time=1.6e9, block_fetches=5000, barriers=10)
    >>> round(speedup(app, layers="AO").speedup, 2)
    11.76
    >>> round(speedup(app, layers="BO").speedup, 2)
    15.71
    >>> speedup(app, layers="PRAM").speedup
    16.0
    """
    from mva.fixedpoint import bracketed_root

    if not isinstance(app, AppProfile):
        raise ValueError(f"app must be an AppProfile; got {type(app).__name__}")
    if layers is not None:
        c, p = layer_settings(layers)
    else:
        c, p = _as_comm(comm), _as_proto(proto)
    ks = _app_classes(c, p, app)
    zero_T = _app_time(c, p, app, ks, np.asarray(np.inf))
    base = zero_T["total"]  # no queueing (rates -> 0)
    demand = _demand(list(ks.values()))
    dmax = np.maximum(np.maximum(demand["host"], demand["ni"]), demand["io_bus"])
    lo = np.maximum(base, dmax * (1.0 + 1e-9))
    lo = np.maximum(lo, np.finfo(float).tiny)

    def h(T: np.ndarray) -> np.ndarray:
        t = _app_time(c, p, app, ks, T)["total"]
        return np.where(np.isfinite(t), T - t, -np.inf)

    h_lo = h(lo)
    throttled = h_lo > 0  # one-way traffic alone saturates a resource: throttled to its busy time
    T1 = np.maximum(base, 2.0 * dmax)  # utilizations <= 1/2 here, so the time is finite
    hi = np.maximum(T1, _app_time(c, p, app, ks, T1)["total"])
    hi = np.maximum(hi, lo)

    def f(T: np.ndarray) -> np.ndarray:
        v = h(T)
        return np.where(throttled, 0.0, np.where(np.isfinite(v), v, -1.0))

    res = bracketed_root(f, lo, hi, tol=tol, on_fail=on_fail)
    T = np.where(throttled, lo, res.x)
    it, resid, conv, method = res.iterations, res.residual, res.converged, "M/G/1 + illinois"
    comp = _app_time(c, p, app, ks, T)
    bott = np.where(throttled, np.array(_RESOURCES)[np.argmax(np.stack(np.broadcast_arrays(
        demand["host"], demand["ni"], demand["io_bus"])), axis=0)], "")
    shape = np.shape(T)
    nmsg = sum(k["n"] for k in ks.values())
    out = lambda v: _out(np.broadcast_to(v, shape))  # noqa: E731
    rho = {k: np.minimum(np.nan_to_num(comp[k], nan=1.0), 1.0)
           for k in ("rho_host", "rho_ni", "rho_bus")}
    result = SpeedupResult(
        speedup=out(app.sequential_time / T), time=out(T), compute=out(comp["compute"]),
        data_wait=out(np.where(throttled, np.nan, comp["data_wait"])),
        protocol=out(comp["protocol"]),
        synchronization=out(np.where(throttled, np.nan, comp["sync"])),
        utilization_host=out(rho["rho_host"]), utilization_ni=out(rho["rho_ni"]),
        utilization_io_bus=out(rho["rho_bus"]), message_rate=out(nmsg / T),
        saturated=bool(throttled) if shape == () else np.broadcast_to(throttled, shape),
        bottleneck=str(bott) if shape == () else np.broadcast_to(bott, shape),
        iterations=int(it), residual=float(resid),
        converged=bool(np.all(conv)) if shape == () else np.broadcast_to(conv, shape),
        method=method)
    return with_inputs(result, {"app": app, "comm": c, "proto": p})


def whatif(layers: Any = "AO", **app: Any) -> SpeedupResult:
    """Speedup for layer combinations and application fields given as keywords, vectorised.

    A one-call form of :func:`speedup`: ``layers`` may be an array of
    combination codes, broadcast against array-valued :class:`AppProfile`
    fields.

    Parameters
    ----------
    layers : str or array of str, default "AO"
        Combination codes (see :func:`layer_settings`).
    **app
        :class:`AppProfile` fields (``sequential_time`` is required).

    Returns
    -------
    SpeedupResult

    Examples
    --------
    >>> r = whatif(["AO", "BO", "BB"], sequential_time=1.6e9, page_fetches=2000,
    ...            diffs=500, twins=500)
    >>> [round(float(s), 1) for s in r.speedup]
    [9.5, 12.9, 14.2]
    """
    codes = np.asarray(layers)
    if codes.dtype.kind not in "UO" or codes.size == 0:
        raise ValueError(f"layers must be a combination code or an array of codes such as "
                         f"'AO', 'BB+' or 'PRAM'; got {layers!r}")
    pairs = []
    for c in codes.ravel():  # the codes first: a bad code is named before the profile is checked
        try:
            pairs.append(layer_settings(str(c)))
        except ValueError as exc:
            raise ValueError(f"layers: {exc}") from None
    known = [f.name for f in fields(AppProfile)]
    unknown = sorted(set(app) - set(known))
    if unknown:
        raise ValueError(f"whatif: unknown application field(s) {', '.join(unknown)}; "
                         f"allowed: {', '.join(known)}")
    if "sequential_time" not in app:
        raise ValueError("sequential_time is required (cycles of the best sequential version)")
    profile = AppProfile(**app)
    if codes.ndim == 0:
        return speedup(profile, layers=str(codes))
    comm = CommParams(**{f.name: np.array([getattr(c, f.name) for c, _ in pairs])
                         .reshape(codes.shape)
                         for f in fields(CommParams)})
    proto = ProtocolParams(**{f.name: np.array([getattr(p, f.name) for _, p in pairs])
                              .reshape(codes.shape)
                              for f in fields(ProtocolParams)})
    return speedup(profile, comm, proto)


def layered_whatif(app: AppProfile, combinations: Sequence[str] = LAYER_COMBINATIONS, *,
                   title: str | None = None) -> Any:
    """Table of speedups of ``app`` over layer combinations (the paper's Figure 3 bars).

    Parameters
    ----------
    app : AppProfile
        Scalar application profile.
    combinations : sequence of str
        Codes such as ``"AO"``, ``"AB"``, ``"BO"``, ``"BB"``, ``"BB+"``, ``"PRAM"``.
    title : str, optional
        Table caption.

    Returns
    -------
    mva.table.Table
        Columns: layers, speedup, time, compute, data_wait, protocol,
        synchronization, utilization_ni, utilization_io_bus, saturated.

    Examples
    --------
    >>> app = AppProfile(sequential_time=1.6e9, page_fetches=2000, diffs=500, twins=500)
    >>> t = layered_whatif(app, ["AO", "AB", "BO", "BB"])
    >>> [round(float(s), 1) for s in t["speedup"]]
    [9.5, 10.1, 12.9, 14.2]
    """
    from mva.table import Table

    rows = []
    for code in combinations:
        r = speedup(app, layers=code)
        rows.append({"layers": code, "speedup": r.speedup, "time": r.time, "compute": r.compute,
                     "data_wait": r.data_wait, "protocol": r.protocol,
                     "synchronization": r.synchronization, "utilization_ni": r.utilization_ni,
                     "utilization_io_bus": r.utilization_io_bus, "saturated": r.saturated})
    cols = list(rows[0]) if rows else ["layers"]
    data = {k: np.array([row[k] for row in rows],
                        dtype=object if k in ("layers", "saturated") else float)
            for k in cols}
    return Table(columns=tuple(cols), data=data, title=title,
                 formats={"speedup": ".2f", "time": ".4g", "compute": ".4g", "data_wait": ".4g",
                          "protocol": ".4g", "synchronization": ".4g", "utilization_ni": ".3f",
                          "utilization_io_bus": ".3f"})


# ---------------------------------------------------------------------------
# Command line
# ---------------------------------------------------------------------------


def equations() -> dict[str, Any]:
    """The layered model's key formulas as SymPy equations.

    Returns
    -------
    dict of str to sympy.Eq
        ``"n_p"`` packets of a message of size :math:`m` bytes;
        ``"T"`` its one-way latency (pipelined over the five stages host
        bus, sending NI, link, receiving NI, host bus; :math:`\\eta = 1` when
        a handler runs at the receiver); ``"host"``, ``"NI"`` and
        ``"bus"`` the per-resource occupancies of one message;
        ``"RT_block"`` and ``"RT_page"`` the block-fetch and page-fetch
        round trips in terms of the message latencies
        (:math:`T_{req}`, :math:`T_{b}`, :math:`T_{page}`,
        :math:`T_{diff}`; :math:`\\delta = [d > 0]`); ``"W"`` the M/G/1
        (Pollaczek-Khinchine) wait of a resource with arrival rate
        :math:`\\lambda` and service moments :math:`E[S]`, :math:`E[S^2]`;
        ``"RT_c"`` the contended block-fetch round trip.

    Notes
    -----
    These are exactly the expressions :func:`message_cost`,
    :func:`block_fetch`, :func:`page_fetch` and :func:`fetch_contention`
    evaluate (``tests/models/test_layers.py`` lambdifies them and compares).

    References
    ----------
    .. [1] The layered-approach paper, Sections 3.1--3.3.

    Examples
    --------
    >>> eqs = equations()
    >>> list(eqs)
    ['n_p', 'T', 'host', 'NI', 'bus', 'RT_block', 'RT_page', 'W', 'RT_c']
    >>> sorted(map(str, eqs["W"].rhs.free_symbols))
    ['E_S', 'E_S2', 'lambda']
    """
    import sympy as sp

    S = sp.Symbol
    pos = {"nonnegative": True}
    m, Pmax, o_h, B, o_ns, o_nr, B_l, L, h, eta = (
        S(n, **pos) for n in ("m", "P_max", "o_h", "B", "o_ns", "o_nr", "B_l", "L", "h", "eta"))
    n_p, T = S("n_p", positive=True), S("T")
    k = n_p - 1                      # full packets of P_max bytes, then the remainder r
    r = m - k * Pmax
    C = sp.Integer(0)                # the last packet's exit time from the stage so far
    S_i, M_i = sp.Integer(0), sp.Integer(0)
    for f, g in zip((Pmax / B, o_ns, Pmax / B_l, o_nr, Pmax / B),
                    (r / B, o_ns, r / B_l, o_nr, r / B)):
        S_i, M_i = S_i + f, sp.Max(M_i, f)
        C = sp.Max(C, sp.Min(1, k) * (S_i + (k - 1) * M_i)) + g
    H0, c_prot, c_cmp, c_dw, c_app, w, d, delta = (
        S(n, **pos) for n in ("H_0", "c_prot", "c_cmp", "c_dw", "c_app", "w", "d", "delta"))
    T_req, T_b, T_page, T_diff = (S(n) for n in ("T_req", "T_b", "T_page", "T_diff"))
    lam, ES, ES2 = S("lambda", **pos), S("E_S", **pos), S("E_S2", **pos)
    W_ni, W_bus, W_host, RT0 = (S(n) for n in ("W_NI", "W_bus", "W_host", "RT_0"))
    Eq = lambda a, b: sp.Eq(a, b, evaluate=False)  # noqa: E731
    return {
        "n_p": Eq(n_p, sp.Max(1, sp.ceiling(m / Pmax))),
        "T": Eq(T, o_h + C + L + eta * h),
        "host": Eq(S("s_host"), o_h + eta * h),
        "NI": Eq(S("s_NI"), n_p * (o_ns + o_nr)),
        "bus": Eq(S("s_bus"), 2 * m / B),
        "RT_block": Eq(S("RT_block"), T_req + H0 + T_b),
        "RT_page": Eq(S("RT_page"), T_req + H0 + T_page + c_prot
                      + delta * (c_cmp * w + c_dw * d + T_diff + H0 + c_app * d)),
        "W": Eq(S("W"), lam * ES2 / (2 * (1 - lam * ES))),
        "RT_c": Eq(S("RT_c"), RT0 + 4 * W_ni + 4 * W_bus + W_host),
    }


def register_cli(subparsers: Any) -> None:
    """Add the ``layers`` subcommand (kept for compatibility: see :mod:`models.cli.layers`)."""
    from models.cli.layers import register

    register(subparsers)
