"""Protocol-processing policies on an SMP node: Fixed, Floating and Single.

Falsafi and Wood (HPCA 1997) ask when one processor of each SMP
node should be *dedicated* to protocol processing.  Three policies:

``"fixed"``
    One of the ``p`` processors only runs protocol handlers (it polls the
    network interface when idle); ``p - 1`` processors compute.  No
    interrupts and no role-switching overheads, but the compute processor
    pays a cache-to-cache transfer of the message data (``t_transfer``).
``"floating"``
    All ``p`` processors compute.  A processor that is idle (blocked on its
    own remote request) acts as protocol processor; when *no* processor is
    idle an arriving message interrupts a computing processor (``O_int``),
    whose computation is preempted while it runs the handler.  Every
    handler run on a non-dedicated processor pays the direct (role
    assumption/relinquishment) and indirect (cache interference, migration)
    overheads ``o_direct + o_indirect``.
``"single"``
    Floating with one processor per node (``params.p`` is ignored).

Tempest atomicity allows one *acting* protocol processor per node, so each
node's protocol processing is one FCFS server.  ``method="node"`` solves
one node as a continuous-time Markov chain (threads, queued handlers, who
runs the handler in service: dedicated, idle or interrupted processor, and
its phase; :mod:`models._policy_node`) coupled to the other nodes by a fixed
point on the message rates (at most 16 compute threads per node); on
two nodes with one thread each it solves both nodes as one chain.  The
default (``method="auto"``) takes that chain where a node has at most 8
compute threads on at least three nodes, or one thread on two nodes, and
``method="mva"`` elsewhere:
a closed queueing network (one chain of
threads and one protocol server per node) solved by MVA of the :mod:`mva`
engine, whose interrupt probability under Floating and Single -- an empty protocol
server and no blocked thread when a reply message arrives, from the arrival
theorem -- is the root of a scalar equation around it.
``method="fixed-point"`` keeps the earlier per-node Schweitzer fixed point
(:func:`mva.fixedpoint.fixed_point`).  The derivation is in the
documentation page *Protocol-processing policies*.

References
----------
B. Falsafi and D. A. Wood, "Scheduling Communication on an SMP Node Parallel
Machine", HPCA 1997.  P. Schweitzer, "Approximate analysis of
multiclass closed networks of queues", 1979 (the arrival-instant
approximation used here).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields, replace
from typing import Any, Mapping

import numpy as np

from mva.params import MAX_TIME, param, validate_fields
from mva.results import ResultMixin, with_inputs

from .accuracy import attach as _attach_accuracy
from mva._validate import check_choice, check_kwargs, scalar_or_array

__all__ = [
    "PolicyParams",
    "PolicyResult",
    "PolicyComparison",
    "POLICIES",
    "METHODS",
    "EXACT_LATTICE_LIMIT",
    "AUTO_GRID_LIMIT",
    "AUTO_NODE_SECONDS",
    "AUTO_NODE_MAX_ITER",
    "AUTO_NODE_THREADS",
    "AUTO_NODE_WORK",
    "SATURATION_THRESHOLD",
    "MAX_TIME",
    "NULL_HANDLER",
    "FETCH_BLOCK",
    "STACHE_MACRO",
    "PRESETS",
    "preset",
    "solve",
    "compare",
    "whatif_table",
    "equations",
    "register_cli",
]

#: policy names accepted by :func:`solve`
POLICIES = ("fixed", "floating", "single")

#: protocol-processor utilization at or above which a result is flagged ``saturated``
SATURATION_THRESHOLD = 0.95

_NUMERIC = ("p", "nodes", "C", "U", "o_req", "o_reply", "o_resp", "L", "O_int", "o_direct",
            "o_indirect", "t_transfer", "o_dispatch", "t_extra", "handler_cs2", "iterations",
            "clock_hz")


# ---------------------------------------------------------------------------
# presets (Falsafi and Wood 1997)
# ---------------------------------------------------------------------------

#: Null-handler microbenchmark of Falsafi and Wood 1997, section 5: ``L_min = 3 us = 600`` cycles at
#: 200 MHz.  The split of ``L_min`` is not in the paper; see the docs.
NULL_HANDLER: Mapping[str, float] = {
    "o_req": 100.0, "o_reply": 100.0, "o_resp": 100.0, "L": 100.0, "t_transfer": 100.0,
    "t_extra": 0.0, "o_direct": 40.0, "o_indirect": 60.0, "O_int": 200.0, "clock_hz": 200e6,
}

#: Fetch-block microbenchmark of Falsafi and Wood 1997, section 5 (128-byte block):
#: ``L_min = 8 us = 1600`` cycles at 200 MHz.  The handler split is ours; see the docs.
FETCH_BLOCK: Mapping[str, float] = {
    "o_req": 150.0, "o_reply": 500.0, "o_resp": 450.0, "L": 100.0, "t_transfer": 300.0,
    "t_extra": 0.0, "o_direct": 40.0, "o_indirect": 60.0, "O_int": 200.0, "clock_hz": 200e6,
}

#: Macrobenchmark Stache protocol of Falsafi and Wood 1997, section 6: request handler 125,
#: reply and response handlers 140 cycles, 900-cycle (4.5 us) round trip.  The 295 cycles
#: not spent in handlers or the network are ``t_extra``.
STACHE_MACRO: Mapping[str, float] = {
    "o_req": 125.0, "o_reply": 140.0, "o_resp": 140.0, "L": 100.0, "t_transfer": 0.0,
    "t_extra": 295.0, "o_direct": 40.0, "o_indirect": 60.0, "O_int": 200.0, "clock_hz": 200e6,
}

PRESETS: Mapping[str, Mapping[str, float]] = {
    "null-handler": NULL_HANDLER, "fetch-block": FETCH_BLOCK, "stache": STACHE_MACRO}


@dataclass(frozen=True, kw_only=True)
class PolicyParams:
    """Parameters of the Fixed / Floating / Single policy model (all times in processor cycles).

    Every numeric field may be a NumPy array; the fields broadcast against
    each other.  Give exactly one of ``C`` and ``U``.  The defaults are the
    null-handler microbenchmark of [1]_ (:data:`NULL_HANDLER`).

    Attributes
    ----------
    p : int or array of int, default 2
        Processors per SMP node, *including* Fixed's dedicated protocol
        processor (Fixed: ``p - 1`` compute processors, requires ``p >= 2``;
        Floating: ``p`` compute processors; Single: ``p`` is ignored, one
        processor).
    nodes : int or array of int, default 2
        Number of SMP nodes (>= 2).  Every request goes to a node other than
        the requester's, chosen uniformly (Falsafi and Wood's (1997) microbenchmarks: two nodes).
    C : float or array, optional
        Mean computation time between two requests of one thread, cycles.
        Computation times are exponentially distributed (as in Falsafi and Wood 1997).
    U : float or array, optional
        Thread compute-utilization in the absence of contention,
        ``U = C / (C + L_min)`` in ``[0, 1)``; then ``C = U L_min / (1 - U)``
        with ``L_min`` from these parameters (:attr:`L_min`).
    o_req : float or array, default 100
        Occupancy of the request handler on the requester's protocol
        processor (builds and sends the request message), cycles.
    o_reply : float or array, default 100
        Occupancy of the reply handler on the destination node's protocol
        processor (handles the request, sends the reply), cycles.
    o_resp : float or array, default 100
        Occupancy of the response handler on the requester's protocol
        processor (handles the reply, resumes the thread), cycles.
    L : float or array, default 100
        One-way network latency (constant, no network contention), cycles.
    O_int : float or array, default 200
        Interrupt overhead: delivering and returning from an interrupt, paid
        by a computing processor (and occupying the protocol-processor role)
        each time a message arrives when no processor of the node is idle.
        Floating and Single only.  Falsafi and Wood 1997 use 200 (1 us) and 2000 (10 us).
    o_direct : float or array, default 40
        Direct overhead of a floating protocol processor per handler:
        assuming and relinquishing the protocol-processor role (disabling and
        enabling interrupts, the node's protocol lock, checking when to
        relinquish), cycles.  Floating and Single only; occupies the
        protocol processor.
    o_indirect : float or array, default 60
        Indirect overhead of a floating protocol processor per handler:
        cache interference between computation and protocol code and
        migration of the protocol lock, code and data between processors,
        cycles.  Floating and Single only; occupies the protocol processor.
    t_transfer : float or array, default 100
        Fixed only: latency per round trip of the cache-to-cache transfers
        between the compute processor and the dedicated protocol processor
        (request descriptor and message data), cycles.  Adds to the thread's
        round trip, not to protocol-processor occupancy.
    o_dispatch : float or array, default 0
        Dispatch/polling cost per handler (detecting the message and
        dispatching the handler), all policies, cycles.  0 by default because
        the handler occupancies above already include it.
    t_extra : float or array, default 0
        Other round-trip latency that occupies neither a protocol processor
        nor the network (e.g. miss detection and reloading the data), all
        policies, cycles.
    handler_cs2 : float or array, default 0
        Squared coefficient of variation of the handler occupancies
        ``o_h + o_dispatch`` (0: deterministic handlers, 1: exponential), in
        [0, 100].
        The direct and indirect overheads and the interrupt overhead are
        constants added to them (as in the simulator).
    iterations : float or array, default 1000
        Total work per node, in request cycles (iterations of Single's
        loop).  They are divided among the compute processors, so the
        execution time is ``iterations / throughput``.
    clock_hz : float or array, default 200e6
        Processor clock, Hz (to express times in seconds).

    Notes
    -----
    Zero-load round trip under Fixed (the paper's ``L_min``):

    .. math::

        L_{min} = o_{req} + o_{reply} + o_{resp} + 3\\,o_{dispatch} + 2L
                  + t_{transfer} + t_{extra}.

    References
    ----------
    .. [1] B. Falsafi and D. A. Wood, HPCA 1997, sections 2, 5, 6.

    Examples
    --------
    >>> prm = PolicyParams(p=2, U=0.3)
    >>> prm.L_min, round(prm.compute_time, 3)
    (600.0, 257.143)
    """

    p: Any = param(symbol="p", meaning="processors per SMP node, Fixed's protocol processor "
                   "included", unit="", kind="int", low=1, valid=(1, 16), default=2)
    nodes: Any = param(symbol="nodes", meaning="number of SMP nodes", unit="", kind="int",
                       low=2, valid=(2, 64), scale="log", default=2)
    C: Any = param(symbol="C", meaning="mean compute time between two requests of a thread "
                   "(give C or U)", unit="cycles", low=0, optional=True, default=None)
    U: Any = param(symbol="U", meaning="thread compute-utilization without contention, "
                   "C / (C + L_min) (give C or U)", unit="", low=0, high=1, high_open=True,
                   optional=True, valid=(0.02, 0.95), default=None, typical=0.5)
    o_req: Any = param(
        symbol="o_req", meaning="request-handler occupancy on the requester's protocol processor",
        unit="cycles", low=0, high=MAX_TIME, valid=(20, 2000), scale="log", default=100.0)
    o_reply: Any = param(
        symbol="o_reply", meaning="reply-handler occupancy on the destination's protocol processor",
        unit="cycles", low=0, high=MAX_TIME, valid=(20, 2000), scale="log", default=100.0)
    o_resp: Any = param(
        symbol="o_resp", meaning="response-handler occupancy on the requester's protocol processor",
        unit="cycles", low=0, high=MAX_TIME, valid=(20, 2000), scale="log", default=100.0)
    L: Any = param(symbol="L", meaning="one-way network latency",
                   unit="cycles", low=0, high=MAX_TIME, valid=(10, 2000), scale="log",
                   default=100.0)
    O_int: Any = param(symbol="O_int", meaning="interrupt overhead (Floating and Single)",
                       unit="cycles", low=0, high=MAX_TIME, valid=(0, 20000), scale="log",
                       default=200.0)
    o_direct: Any = param(
        symbol="o_direct", meaning="direct overhead of a floating protocol processor per handler",
        unit="cycles", low=0, high=MAX_TIME, valid=(0, 500), default=40.0)
    o_indirect: Any = param(
        symbol="o_indirect",
        meaning="indirect overhead (cache interference, migration) per handler",
        unit="cycles", low=0, high=MAX_TIME, valid=(0, 500), default=60.0)
    t_transfer: Any = param(
        symbol="t_transfer",
        meaning="Fixed: compute/protocol-processor transfer latency per round trip",
        unit="cycles", low=0, high=MAX_TIME, valid=(0, 1000), default=100.0)
    o_dispatch: Any = param(symbol="o_dispatch", meaning="dispatch/polling cost per handler",
                            unit="cycles", low=0, high=MAX_TIME, default=0.0)
    t_extra: Any = param(
        symbol="t_extra", meaning="other round-trip latency (no protocol processor, no network)",
        unit="cycles", low=0, high=MAX_TIME, default=0.0)
    handler_cs2: Any = param(symbol="handler_cs2", meaning="SCV of the handler occupancies",
                             unit="", low=0, high=100, valid=(0, 4), default=0.0)
    iterations: Any = param(symbol="iterations", meaning="total work per node, in request "
                            "cycles", unit="requests", low=0, low_open=True, default=1000.0)
    clock_hz: Any = param(symbol="clock_hz", meaning="processor clock", unit="Hz", low=0,
                          low_open=True, default=200e6)

    def __post_init__(self) -> None:
        if (self.C is None) == (self.U is None):
            validate_fields(self, skip=("C", "U"))
            raise ValueError("PolicyParams needs exactly one of C (compute time, cycles) and "
                             f"U (compute-utilization in [0, 1)); got C={self.C!r}, U={self.U!r}")
        validate_fields(self)
        if np.any(self.handler_sum <= 0):
            raise ValueError("o_req + o_reply + o_resp + 3 o_dispatch must be > 0; got "
                             f"{self.handler_sum!r}")

    # -- derived quantities -------------------------------------------------
    @property
    def handler_sum(self) -> Any:
        """Protocol-processor occupancy per request under Fixed, cycles."""
        return scalar_or_array(np.asarray(self.o_req, float) + np.asarray(self.o_reply, float)
                               + np.asarray(self.o_resp, float)
                               + 3.0 * np.asarray(self.o_dispatch, float))

    @property
    def L_min(self) -> Any:
        """Zero-load round trip under Fixed (``L_min`` of Falsafi and Wood 1997), cycles."""
        return scalar_or_array(np.asarray(self.handler_sum, float) + 2.0 * np.asarray(self.L, float)
                               + np.asarray(self.t_transfer, float)
                               + np.asarray(self.t_extra, float))

    @property
    def compute_time(self) -> Any:
        """Mean computation time ``C`` (from ``C`` or from ``U``), cycles."""
        if self.C is not None:
            return scalar_or_array(np.asarray(self.C, float))
        U = np.asarray(self.U, float)
        return scalar_or_array(U * np.asarray(self.L_min, float) / (1.0 - U))

    @property
    def compute_utilization(self) -> Any:
        """``U = C / (C + L_min)``."""
        C = np.asarray(self.compute_time, float)
        return scalar_or_array(C / (C + np.asarray(self.L_min, float)))

    def replace(self, **changes: Any) -> "PolicyParams":
        """A copy with some fields changed (``C`` and ``U`` replace each other)."""
        if "U" in changes and "C" not in changes:
            changes["C"] = None
        if "C" in changes and "U" not in changes:
            changes["U"] = None
        return replace(self, **changes)

    def to_dict(self) -> dict[str, Any]:
        """Fields as plain Python values (lists for arrays)."""
        return {f.name: (np.asarray(v).tolist() if isinstance(v, np.ndarray) else v)
                for f in fields(self) for v in [getattr(self, f.name)]}


def preset(name: str, **overrides: Any) -> PolicyParams:
    """Parameters of a named workload of Falsafi and Wood 1997 with optional overrides.

    Parameters
    ----------
    name : {"null-handler", "fetch-block", "stache"}
        :data:`NULL_HANDLER`, :data:`FETCH_BLOCK` or :data:`STACHE_MACRO`.
    **overrides
        Any :class:`PolicyParams` field (e.g. ``U=0.3, p=4, O_int=2000``).

    Returns
    -------
    PolicyParams

    Examples
    --------
    >>> preset("fetch-block", U=0.7).L_min
    1600.0
    >>> preset("stache", U=0.5).L_min
    900.0
    """
    check_choice("name", name, PRESETS)
    kw: dict[str, Any] = dict(PRESETS[name])
    kw.update(overrides)
    if "C" not in kw and "U" not in kw:
        kw["U"] = 0.5
    return PolicyParams(**kw)


# ---------------------------------------------------------------------------
# results
# ---------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class PolicyResult(ResultMixin):
    """Mean performance of one protocol-processing policy (times in cycles).

    Attributes
    ----------
    policy : str
        ``"fixed"``, ``"floating"`` or ``"single"``.
    compute_processors : int or array
        Compute threads per node (``p - 1``, ``p`` or 1).
    cycle_time : float or array
        Mean time per request cycle of one thread (compute + round trip), ``R``.
    throughput : float or array
        Node throughput, request cycles completed per cycle per node,
        ``X = compute_processors / R``.
    round_trip : float or array
        Mean time from issuing a request to resuming computation, ``R - R_w``.
    compute_residence : float or array
        Mean time a thread spends in its compute phase, including preemption
        by interrupt handlers (``R_w``).
    R_request, R_reply, R_response : float or array
        Mean residence (waiting plus occupancy) of the three handlers at the
        protocol processor.
    pp_utilization : float or array
        Fraction of time the node's (acting) protocol processor is busy,
        interrupt overhead included.
    pp_demand : float or array
        Protocol-processor occupancy per request cycle (``1 / pp_demand`` is
        the node's saturation throughput).
    all_busy_probability : float or array
        Probability that no processor of the node is idle when a request
        message arrives (0 under Fixed).
    interrupt_probability : float or array
        Probability that an arriving request message causes an interrupt
        (no idle processor *and* no handler already in progress).
    interrupts_per_request : float or array
        Same as ``interrupt_probability`` (one request message per cycle).
    throughput_bound : float or array
        Asymptotic upper bound ``min(n_c / (C + R_0), 1 / pp_demand)``.
    execution_time : float or array
        Time to finish ``iterations`` request cycles per node, cycles.
    execution_time_s : float or array
        The same in seconds.
    saturated : bool or array
        ``pp_utilization >= SATURATION_THRESHOLD`` (0.95): the protocol
        processor is the bottleneck and the throughput is within a few
        percent of ``1 / pp_demand``.  The values are still valid means
        (a closed system never becomes infeasible).
    converged : bool or array
        Per grid point.
    method, iterations, residual
        Solver diagnostics: ``"exact-mva"``, ``"linearizer-mva"``,
        ``"schweitzer-mva"`` (iterations: the most of the MVA solver or of
        the root search on the interrupt probability over the grid) or the
        legacy fixed point's (:func:`mva.fixedpoint.fixed_point`).
    """

    policy: str
    compute_processors: Any
    cycle_time: Any
    throughput: Any
    round_trip: Any
    compute_residence: Any
    R_request: Any
    R_reply: Any
    R_response: Any
    pp_utilization: Any
    pp_demand: Any
    all_busy_probability: Any
    interrupt_probability: Any
    interrupts_per_request: Any
    throughput_bound: Any
    execution_time: Any
    execution_time_s: Any
    saturated: Any
    converged: Any
    method: str = "schweitzer-fixed-point"
    iterations: int = 0
    residual: float = 0.0

    # -- the shared result vocabulary (docs/guide/glossary.rst) -------------
    @property
    def R(self) -> Any:
        """Alias of ``cycle_time`` (the ``R`` of the LoPC and INI results and the simulator)."""
        return self.cycle_time


@dataclass(frozen=True, kw_only=True)
class PolicyComparison(ResultMixin):
    """Fixed, Floating and Single on the same parameters, and their ratios.

    Attributes
    ----------
    fixed, floating, single : PolicyResult
    floating_over_fixed : float or array
        Execution time of Floating divided by that of Fixed (> 1: Fixed is
        faster).
    single_over_fixed : float or array
        Execution time of Single divided by that of Fixed.
    single_over_floating : float or array
        Execution time of Single divided by that of Floating.
    """

    fixed: PolicyResult
    floating: PolicyResult
    single: PolicyResult
    floating_over_fixed: Any
    single_over_fixed: Any
    single_over_floating: Any

    _extra_columns = ("saturated",)

    @property
    def saturated(self) -> Any:
        """True where any of the three policies is saturated (protocol-processor bound)."""
        s = (np.asarray(self.fixed.saturated) | np.asarray(self.floating.saturated)
             | np.asarray(self.single.saturated))
        return bool(s) if s.ndim == 0 else s

    def table(self, columns: Any = None) -> Any:
        """The comparison at a glance: the inputs that vary, each policy's throughput
        (requests per cycle per node, as everywhere), the ratios and ``saturated``
        (plus any expected-error columns the results carry).  ``columns`` selects
        from :meth:`to_frame`'s columns instead.

        Examples
        --------
        >>> import numpy as np
        >>> c = compare(preset("null-handler", p=np.array([2, 4]), U=0.3))
        >>> c.table().columns
        ('p', 'X_fixed', 'X_floating', 'X_single', 'floating/fixed', 'single/fixed',
         'single/floating', 'saturated')
        """
        from mva.table import Table

        if columns is not None:
            return super().table(columns)
        cols = self._columns()
        varying = [k for k in self.inputs if k in cols and np.unique(cols[k]).size > 1]
        data: dict[str, Any] = {k: cols[k] for k in varying}
        for pol in ("fixed", "floating", "single"):
            data[f"X_{pol}"] = cols[f"{pol}.throughput"]
        data["floating/fixed"] = cols["floating_over_fixed"]
        data["single/fixed"] = cols["single_over_fixed"]
        data["single/floating"] = cols["single_over_floating"]
        data["saturated"] = cols["saturated"]
        data.update({k: v for k, v in cols.items() if k.endswith("expected_error")})
        fmts = {k: ".4g" for k in data if k not in varying and k != "saturated"}
        return Table(columns=tuple(data), data=data, formats=fmts,
                     title="Fixed, Floating and Single (X in requests per cycle per node)")


# ---------------------------------------------------------------------------
# the model
# ---------------------------------------------------------------------------

def _arrays(params: PolicyParams, policy: str) -> dict[str, np.ndarray]:
    names = ("p", "nodes", "o_req", "o_reply", "o_resp", "L", "O_int", "o_direct", "o_indirect",
             "t_transfer", "o_dispatch", "t_extra", "handler_cs2", "iterations", "clock_hz")
    vals = [np.asarray(getattr(params, n), dtype=float) for n in names]
    vals.append(np.asarray(params.compute_time, dtype=float))
    out = dict(zip(names + ("C",), np.broadcast_arrays(*vals)))
    if policy == "single":
        out["p"] = np.ones_like(out["p"])
    return {k: np.array(v, dtype=float) for k, v in out.items()}


def _policy_formulas(a: Mapping[str, np.ndarray], policy: str, *, damping: float, tol: float,
                     max_iter: int, fallback: bool, on_fail: str) -> dict[str, Any]:
    """Solve the per-node symmetric MVA fixed point; see the module docs for the equations."""
    from mva.fixedpoint import fixed_point

    fixed = policy == "fixed"
    p = a["p"]
    n_c = p - 1.0 if fixed else p                     # compute threads per node
    N = a["nodes"]
    extra = 0.0 if fixed else a["o_direct"] + a["o_indirect"]
    s_q = a["o_req"] + a["o_dispatch"] + extra
    s_y = a["o_reply"] + a["o_dispatch"] + extra
    s_r = a["o_resp"] + a["o_dispatch"] + extra
    O_int = np.zeros_like(p) if fixed else a["O_int"]
    h = (1.0 + a["handler_cs2"]) / 2.0                # residual factor of a handler in service
    T_x = a["t_extra"] + (a["t_transfer"] if fixed else 0.0) + 2.0 * a["L"]
    f_L = (n_c - 1.0) / n_c                           # other local threads seen by a local arrival
    m_Y = (N - 1.0) * n_c
    f_Y = (m_Y - 1.0) / m_Y                           # other remote threads seen by a reply arrival
    C = a["C"]

    def parts(x: np.ndarray) -> dict[str, np.ndarray]:
        R_q, R_y, R_r, R_w = x
        R = R_w + R_q + R_y + R_r + T_x
        X = n_c / R
        if fixed:
            P_all = np.zeros_like(R)
            b = np.zeros_like(R)
        else:
            # busy fraction seen by an arriving request: own computation plus the interrupt
            # work of *other* remote senders (the sender's own past interrupts excluded)
            q = np.clip((C + f_Y * (R_w - C)) / R, 0.0, 1.0)
            P_all = q ** p
            # b = f_Y X (s_y + P_all (1 - b) O_int), solved for b
            b = f_Y * X * (s_y + P_all * O_int) / (1.0 + f_Y * X * P_all * O_int)
            b = np.clip(b, 0.0, 1.0)
        P_int = P_all * (1.0 - b)
        s_ye = s_y + P_int * O_int
        U_q, U_y, U_r = X * s_q, X * s_ye, X * s_r
        Q_q, Q_y, Q_r = X * R_q, X * R_y, X * R_r
        # utilization seen by a local / a reply arrival; the residual correction
        # (1 + cs2)/2 fades out as the server saturates (arrivals then coincide with
        # service completions), which keeps X <= 1 / D
        Us_L = np.clip(f_L * (U_q + U_r) + U_y, 0.0, 1.0)
        Us_Y = np.clip(U_q + U_r + f_Y * U_y, 0.0, 1.0)
        hL = 1.0 - (1.0 - h) * (1.0 - Us_L)
        hY = 1.0 - (1.0 - h) * (1.0 - Us_Y)
        wl = s_q * (Q_q - U_q) + s_r * (Q_r - U_r)
        ul = s_q * U_q + s_r * U_r
        wr = s_ye * (Q_y - U_y)
        ur = s_ye * U_y
        return dict(R=R, X=X, P_all=P_all, P_int=P_int, s_ye=s_ye, U=U_q + U_y + U_r,
                    W_L=f_L * (wl + hL * ul) + wr + hL * ur,
                    W_Y=wl + hY * ul + f_Y * (wr + hY * ur))

    def g(x: np.ndarray) -> np.ndarray:
        d = parts(x)
        R_w = C + d["P_all"] * s_y + d["P_int"] * O_int if not fixed else C + 0.0 * d["R"]
        return np.stack([s_q + d["W_L"], d["s_ye"] + d["W_Y"], s_r + d["W_L"], R_w])

    x0 = np.stack([s_q, s_y, s_r, C + 0.0 * s_q])
    fp = fixed_point(g, x0, damping=damping, tol=tol, max_iter=max_iter, fallback=fallback,
                     on_fail=on_fail)
    x = fp.x
    d = parts(x)
    R_q, R_y, R_r, R_w = x
    D = s_q + d["s_ye"] + s_r
    R0 = C + s_q + s_y + s_r + T_x
    return dict(compute_processors=n_c, cycle_time=d["R"], throughput=d["X"],
                round_trip=d["R"] - R_w, compute_residence=R_w, R_request=R_q, R_reply=R_y,
                R_response=R_r, pp_utilization=d["U"], pp_demand=D,
                all_busy_probability=d["P_all"], interrupt_probability=d["P_int"],
                interrupts_per_request=d["P_int"],
                throughput_bound=np.minimum(n_c / R0, 1.0 / D),
                execution_time=a["iterations"] / d["X"],
                execution_time_s=a["iterations"] / d["X"] / a["clock_hz"],
                saturated=d["U"] >= SATURATION_THRESHOLD, converged=np.asarray(fp.converged),
                method=f"fixed-point ({fp.method})", iterations=fp.iterations, residual=fp.residual)


#: solution methods of :func:`solve` (``"auto"``: ``"mva"``, or ``"fixed-point"`` on large
#: grids; ``"mva"``: exact MVA when the lattice is small, else Schweitzer)
METHODS = ("auto", "mva", "exact", "linearizer", "schweitzer", "fixed-point", "node")

#: most unique grid points ``"auto"`` solves by closed-network MVA (0.05 to 1 s each);
#: larger grids take the vectorised fixed point, with a warning
AUTO_GRID_LIMIT = 1000

#: most compute threads per node for which ``"auto"`` takes the node chain on >= 3 nodes:
#: the declared domain's largest (16).  At 9-16 threads the chain has 2,700-12,500 states
#: and a point costs a median 0.4 s (CPU); on 415 held-out points there its mean error is
#: 2-4 times below MVA's (see the docs, "The default at 9-16 threads"); its worst case is
#: bounded by :data:`AUTO_NODE_WORK`
AUTO_NODE_THREADS = 16

#: most compute threads per node for which ``"auto"`` takes the node chain on two nodes, per
#: policy: one everywhere (the two-node chain, ``models._policy_node.PAIR_THREADS``) and two
#: for Fixed (the decomposition; ``benchmarks/policy_two_node_threads.py``).  Fixed with two
#: threads per node on two nodes, 40 fresh points (seed 4321): decomposition 2.84 / 9.37 /
#: 13.97%, closed-network MVA 3.59 / 11.69 / 18.93% (mean / p95 / max |error| of R; 40 held
#: out, seed 4324: 3.54 / 10.70 / 18.46% against 4.55 / 16.46 / 20.59%); with three threads
#: 5.33 / 21.0 / 30.4% against 5.04 / 20.1 / 28.5% (seed 4322), and Floating with two
#: 4.51 / 14.41 / 14.96% against 3.74 / 13.99 / 21.45% (seed 4323): MVA kept there
AUTO_TWO_NODE_THREADS = {"fixed": 2}

#: ... Fixed at two threads on two nodes only with handler cs2 at least this: with
#: near-deterministic handlers the two nodes' threads fall into step, which the
#: decomposition's independent arrivals miss (as with one thread, where the two-node chain
#: takes it): +6.8% against MVA's +0.6% at cs2 0.04 (seed 4321), +6.0% against +2.2% at the
#: fetch-block preset (cs2 0, U = 0.5, p = 3; simulated 3,554 +- 20 cycles)
AUTO_TWO_NODE_MIN_CS2 = 0.1

#: the node chain's budget under ``"auto"``, in non-zeros of its LU factors (each
#: factorisation counts its factors' non-zeros, each triangular solve a tenth of them:
#: ``max_work`` of :func:`models._policy_node.solve_point`; 20-60 ns of CPU each on the
#: development machine, so about 4-12 s); a point over it is solved by closed-network MVA
#: and ``result.method`` says so
AUTO_NODE_WORK = 2e8

#: most estimated CPU seconds (:func:`_node_seconds`) ``"auto"`` spends on the node chain
#: in one call; beyond, closed-network MVA at those points as well
AUTO_NODE_SECONDS = 60.0

#: most fixed-point iterations ``"auto"`` gives the node chain before solving the point by
#: MVA instead (converged points take a median 12 and at most about 40 with Anderson
#: acceleration; a point that had not converged after 500 cost 50 s)
AUTO_NODE_MAX_ITER = 60

#: largest population lattice (``(n_c + 1) ** nodes``) solved by exact MVA under ``"auto"``
EXACT_LATTICE_LIMIT = 4096


def _node_network(n: int, N: int, s_q: float, s_y: float, s_r: float, Z: float, cs2: float,
                  pops: Any = None) -> Any:
    """The closed network of ``N`` symmetric nodes: one FCFS protocol server per node.

    Chain ``k`` holds node ``k``'s ``n`` threads; its classes are the send
    (request) and response handlers at its own server and the reply handler at
    each other server (visit ratio ``1/(N-1)``); compute and network are the
    chain's think time ``Z``.
    """
    from mva.network import ClosedNetwork

    D = np.zeros((3 * N, N))
    V = np.zeros((3 * N, N))
    for k in range(N):
        D[3 * k, k], V[3 * k, k] = s_q, 1.0
        D[3 * k + 1, k], V[3 * k + 1, k] = s_r, 1.0
        for j in range(N):
            if j != k:
                D[3 * k + 2, j], V[3 * k + 2, j] = s_y / (N - 1), 1.0 / (N - 1)
    return ClosedNetwork(demands=D, visits=V, chains=np.repeat(np.arange(N), 3),
                         populations=[n] * N if pops is None else pops, think_times=[Z] * N,
                         cs2=[cs2] * N, disciplines=["fcfs"] * N)


def _network_point(v: Mapping[str, float], policy: str, method: str, tol: float,
                   max_iter: int, nets: dict[Any, Any] | None = None) -> dict[str, float]:
    """One parameter point by closed-network MVA (see :func:`solve`, Notes).

    ``nets``: the exact-MVA networks of earlier points of the same grid, by their
    parameters (threads aside), each with its thread count; a network built with at
    least this point's threads is reused (its lattice holds this point's populations,
    the same values bit for bit), else built and kept.
    """
    import mva
    from mva._scipy_kernels import brentq   # = scipy.optimize.brentq, without its import cost

    fixed = policy == "fixed"
    p = 1 if policy == "single" else int(round(v["p"]))
    n = p - 1 if fixed else p
    N = int(round(v["nodes"]))
    d = 0.0 if fixed else v["o_direct"] + v["o_indirect"]
    base = {h: v[o] + v["o_dispatch"] for h, o in (("q", "o_req"), ("y", "o_reply"),
                                                   ("r", "o_resp"))}
    s = {h: b + d for h, b in base.items()}
    O = 0.0 if fixed else v["O_int"]
    T_x = v["t_extra"] + (v["t_transfer"] if fixed else 0.0) + 2.0 * v["L"]
    C = v["C"]
    cs2 = v["handler_cs2"]
    var = sum(cs2 * b * b for b in base.values())          # handler variance per cycle

    def runs(P_int: float, pops: list[list[int]]) -> list[Any]:
        """The network at ``P_int`` with ``n`` threads per node and each population of
        ``pops`` (exact MVA: one network built and compiled, the smaller populations
        read from its lattice by :func:`mva.exact._exact_populations`)."""
        key = (P_int, tuple(map(tuple, pops)))
        if key not in seen:
            seen[key] = solve_pops(P_int, pops)
        return seen[key]

    seen: dict[Any, list[Any]] = {}      # the same network is not solved twice

    def solve_pops(P_int: float, pops: list[list[int]]) -> list[Any]:
        sy = s["y"] + P_int * O
        m2 = sum(x * x for x in s.values()) - s["y"] ** 2 + sy * sy
        scv = (var + P_int * (1.0 - P_int) * O * O) / m2   # overhead and O_int are constants
        Z = C + P_int * (O + s["y"]) + T_x
        if method == "exact":
            from mva.exact import _exact_populations

            k = (N, s["q"], sy, s["r"], Z, scv)
            built = nets.get(k) if nets is not None else None
            if built is None or built[0] < n:
                built = (n, _node_network(n, N, s["q"], sy, s["r"], Z, scv))
                if nets is not None:
                    nets[k] = built
            return _exact_populations(built[1], pops)
        opts = {"tol": min(tol, 1e-9), "max_iter": max_iter}
        return [mva.solve(_node_network(pp[0], N, s["q"], sy, s["r"], Z, scv, pp), method,
                          **opts) for pp in pops]

    full = [n] * N
    reduced = [n] * N                                      # a remote thread is arriving
    reduced[1] -= 1

    def interrupts(P_int: float) -> tuple[float, float, Any]:
        if fixed:
            return 0.0, 0.0, runs(P_int, [full])[0]
        r, r_red = runs(P_int, [full, reduced])
        Rk = r.residence_time
        R_y = float(Rk[2].sum())
        R_w = C + P_int * (O + s["y"])
        q = R_w / (R_w + T_x + R_y)                        # computing, given not at home server
        P_all = q ** p
        # arrival theorem: a remote thread arriving sees node 0 with itself removed
        busy = float(r_red.utilization[:, 0].sum())
        return P_all * (1.0 - min(busy, 1.0)), P_all, r

    it, ok = 0, True
    if fixed:
        P_int, P_all, r = 0.0, 0.0, runs(0.0, [full])[0]
    else:
        def f(x: float) -> float:
            return interrupts(x)[0] - x

        hi = interrupts(0.0)[0]
        if hi <= 0.0:
            P_int = 0.0
        elif f(hi) >= 0.0:
            # The implied probability does not decrease here.  It is not monotone
            # in general and can have several roots; [hi, 1] may hold a spurious
            # one (0.32 at U = 0.001 where the simulator sees no interrupts), so
            # the model keeps hi, which is not an exact fixed point in this case
            # (single, p = 2, U = 0.5: 5/12 against a root of 0.459; simulator
            # 0.49).  A known limitation, see docs/models/policy.rst.
            P_int = hi
        else:
            P_int, info = brentq(f, 0.0, hi, xtol=tol, rtol=4 * np.finfo(float).eps,
                                 maxiter=max_iter, full_output=True, disp=False)
            it, ok = int(info.iterations), bool(info.converged)
        _, P_all, r = interrupts(P_int)
    Rk = r.residence_time
    R_q, R_r, R_y = float(Rk[0].sum()), float(Rk[1].sum()), float(Rk[2].sum())
    R_w = C + P_int * (O + s["y"])
    sy = s["y"] + P_int * O
    if n > 1:
        # Throughput of a closed network never falls when a customer is added, but the
        # FCFS residual-life correction (cs2 != 1, or unequal handler times) can dip near
        # saturation: keep the largest node throughput reached at a smaller population,
        # the difference taken from the protocol-processor waiting in proportion.
        X_n = n / (R_w + R_q + R_y + R_r + T_x)
        X_best = X_n
        for rm in runs(P_int, [[m] * N for m in range(1, n)]):
            X_best = max(X_best, float(rm.chain_throughput[0]))
        if X_best > X_n:
            W = (R_q - s["q"]) + (R_y - sy) + (R_r - s["r"])
            k = 1.0 - min((n / X_n - n / X_best) / W, 1.0) if W > 0 else 1.0
            R_q, R_y, R_r = (s["q"] + k * (R_q - s["q"]), sy + k * (R_y - sy),
                             s["r"] + k * (R_r - s["r"]))
    R = R_w + R_q + R_y + R_r + T_x
    D = s["q"] + sy + s["r"]
    return dict(R=R, X=n / R, R_w=R_w, R_q=R_q, R_y=R_y, R_r=R_r, U=min(n / R * D, 1.0), D=D,
                P_all=P_all, P_int=P_int, conv=bool(r.converged) and ok,
                it=max(it, int(r.iterations)), res=float(r.residual))


def _network_fits(a: Mapping[str, np.ndarray]) -> bool:
    """Whether the largest node count's closed network fits :func:`mva._cost.memory_limit`."""
    from mva._cost import memory_limit, network_bytes

    if not a["nodes"].size:
        return True
    n = int(np.max(a["nodes"]))
    return network_bytes("schweitzer", 3 * n, n, n) <= memory_limit()


def _network_formulas(a: Mapping[str, np.ndarray], policy: str, *, method: str, tol: float,
                      max_iter: int, on_fail: str) -> dict[str, Any]:
    """Solve every unique parameter point by closed-network MVA and broadcast back."""
    names, uniq, inv = _unique_points(a)
    shape = a["p"].shape
    fixed = policy == "fixed"
    n_c = (a["p"] - 1.0) if fixed else a["p"]
    if method == "mva":
        with np.errstate(over="ignore"):  # an overflow is an infinite lattice: not exact
            lattice = np.max((n_c + 1.0) ** a["nodes"]) if n_c.size else 0.0
        method = "exact" if lattice <= EXACT_LATTICE_LIMIT else "schweitzer"
    if uniq.size:
        from mva._cost import check_network
        from mva.progress import progress
        N_max = int(np.max(a["nodes"]))
        # the network has 3 classes per node on one server per node: refuse before allocating
        check_network(f"policy model at nodes={N_max}", method, 3 * N_max, N_max, N_max,
                      instead="method='fixed-point' (the per-node fixed point, whose memory does "
                              "not grow with the number of nodes) or fewer nodes")
        from mva._cost import check_time
        nc_col = uniq[:, names.index("p")] - (1.0 if fixed else 0.0)
        check_time(f"policy method={method!r} at nodes={N_max} ({len(uniq)} point(s))",
                   sum(_network_seconds(method, int(n), float(c))
                       for n, c in zip(uniq[:, names.index("nodes")], nc_col)),
                   instead="method='auto' or 'fixed-point', or fewer points")
    # the most threads first: exact MVA keeps the population lattice of a network, from
    # which the same network with fewer threads is read, not solved again (Fixed's network
    # does not depend on p, nor Floating's before interrupts, P_int = 0)
    first = np.argsort(-uniq[:, names.index("p")], kind="stable") if uniq.size else \
        np.zeros(0, dtype=int)
    points = progress(first, total=len(uniq), desc=f"policy {method} MVA", delay=2.0) \
        if uniq.size else first
    rows: list[Any] = [None] * len(uniq)
    nets: dict[Any, Any] = {}         # exact MVA: a network serves the points with fewer threads
    for i in points:
        rows[i] = _network_point(dict(zip(names, uniq[i])), policy, method, tol, max_iter, nets)
    col = {k: np.array([r[k] for r in rows])[inv].reshape(shape) for k in rows[0]} if rows else {}
    conv = col["conv"]
    if not np.all(conv):
        from mva.errors import report_nonconvergence
        report_nonconvergence(on_fail, f"policy model ({method} MVA) did not converge at "
                              f"{int(np.sum(~conv))} of {conv.size} points")
    return _assemble(a, policy, col, saturated=col["U"] >= SATURATION_THRESHOLD,
                     method=f"{method}-mva")


def _network_seconds(method: str, nodes: int, n_c: float) -> float:
    """Estimated CPU seconds of one policy point by closed-network MVA ``method``.

    Calibrated on the policy network (3 classes and one chain per node; a
    point solves it several times, for the interrupt fixed point), Python
    3.11 on the 2-core development machine: Linearizer takes 0.9-3 s at
    2-8 nodes and 2 threads, up to 11 s with 5 (its inner Schweitzer solves
    each run the priority utilization cap), about :math:`0.45\\,\\mathrm{nodes}
    \\sqrt{n_c}` s; exact MVA about 130 us per population of its lattice
    :math:`(n_c + 1)^{\\mathrm{nodes}}` (211 s at 8 nodes of 5 threads);
    Schweitzer 20-70 ms.

    Examples
    --------
    >>> round(_network_seconds("linearizer", 2, 2.0), 2), round(_network_seconds("exact", 8, 5.0))
    (1.27, 218)
    """
    if method == "linearizer":
        return 0.45 * nodes * math.sqrt(max(n_c, 1.0))
    if method == "exact":
        return 1.3e-4 * (n_c + 1.0) ** nodes
    return 0.07


def _unique_points(a: Mapping[str, np.ndarray]) -> tuple[tuple[str, ...], np.ndarray, np.ndarray]:
    """The distinct parameter points of a grid (rows of ``uniq``) and the map back (``inv``)."""
    names = ("p", "nodes", "o_req", "o_reply", "o_resp", "L", "O_int", "o_direct", "o_indirect",
             "t_transfer", "o_dispatch", "t_extra", "handler_cs2", "C")
    M = np.stack([np.ravel(a[k]) for k in names], axis=1) if a["p"].size else np.zeros((0, 14))
    uniq, inv = np.unique(M, axis=0, return_inverse=True)
    return names, uniq, np.ravel(inv)


def _assemble(a: Mapping[str, np.ndarray], policy: str, col: Mapping[str, np.ndarray], *,
              saturated: np.ndarray, method: str) -> dict[str, Any]:
    """The result fields from per-point residences, utilization and interrupt probability."""
    fixed = policy == "fixed"
    n_c = (a["p"] - 1.0) if fixed else a["p"]
    R, X, D = col["R"], col["X"], col["D"]
    R0 = a["C"] + D - col["P_int"] * (0.0 if fixed else a["O_int"]) + (
        a["t_extra"] + (a["t_transfer"] if fixed else 0.0) + 2.0 * a["L"])
    return dict(compute_processors=n_c, cycle_time=R, throughput=X, round_trip=R - col["R_w"],
                compute_residence=col["R_w"], R_request=col["R_q"], R_reply=col["R_y"],
                R_response=col["R_r"], pp_utilization=col["U"], pp_demand=D,
                all_busy_probability=col["P_all"], interrupt_probability=col["P_int"],
                interrupts_per_request=col["P_int"],
                throughput_bound=np.minimum(n_c / R0, 1.0 / D),
                execution_time=a["iterations"] / X,
                execution_time_s=a["iterations"] / X / a["clock_hz"],
                saturated=saturated, converged=col["conv"], method=method,
                iterations=int(np.max(col["it"])), residual=float(np.max(col["res"])))


def _node_formulas(a: Mapping[str, np.ndarray], policy: str, *, tol: float, max_iter: int,
                   on_fail: str, max_work: float | None = None) -> dict[str, Any]:
    """Solve every unique point by the node-level Markov chain (:mod:`models._policy_node`).

    ``max_work``: the chain's budget per point (``solve_point``); the points over it
    are unconverged, and flagged in the extra field ``over_budget``.
    """
    from models._policy_node import solve_point

    names, uniq, inv = _unique_points(a)
    shape = a["p"].shape
    rows = [solve_point({k: float(x) for k, x in zip(names, u)}, policy,
                        tol=max(tol, 1e-9), max_iter=min(max_iter, 500), max_work=max_work)
            for u in uniq]
    if not rows:
        raise ValueError("policy model: empty parameter grid")
    col = {k: np.array([r[k] for r in rows])[inv].reshape(shape) for k in rows[0]}
    conv = col["conv"]
    if not np.all(conv):
        from mva.errors import report_nonconvergence
        report_nonconvergence(on_fail, f"policy model (node chain) did not converge at "
                              f"{int(np.sum(~conv))} of {conv.size} points")
    # saturated: the protocol processor is (nearly) always busy, as for the other methods
    # (the simulated machine is closed: it always has a steady state; its protocol
    # processor utilization is at least SATURATION_THRESHOLD at the same points)
    sat = col["U"] >= SATURATION_THRESHOLD
    out = _assemble(a, policy, col, saturated=sat, method="node-chain")
    if max_work is not None:
        out["over_budget"] = col["over_budget"]
    return out


def _node_seconds(n_c: Any) -> Any:
    """Estimated CPU seconds of one point by the node chain with ``n_c`` compute threads.

    Medians measured by ``benchmarks/policy_node_speed.py`` and on a fresh random
    design (2-core development machine, Python 3.11): 0.07 s at one thread, 0.3 s
    at 2-4 and 0.5 s at 5-8 (the 95th percentiles are 2-4 times larger); at 9-16
    the mean CPU, 1 s (median 0.4 s, the tail bounded by :data:`AUTO_NODE_WORK`).

    Examples
    --------
    >>> _node_seconds(np.array([1, 3, 8, 12]))
    array([0.07, 0.3 , 0.5 , 1.  ])
    """
    n_c = np.asarray(n_c, float)
    return np.where(n_c <= 1, 0.07, np.where(n_c <= 4, 0.3, np.where(n_c <= 8, 0.5, 1.0)))


def _auto_node_mask(a: Mapping[str, np.ndarray], policy: str) -> np.ndarray:
    """Grid points ``method="auto"`` solves by the node chain (where it is the more accurate).

    Measured on random designs (docs, section "Accuracy"): the decomposed chain on at
    least 3 nodes with at most :data:`AUTO_NODE_THREADS` (16) compute threads, and on
    two nodes at most :data:`AUTO_TWO_NODE_THREADS` threads per node (one: the two-node
    chain; Fixed with two and handler cs2 of at least :data:`AUTO_TWO_NODE_MIN_CS2`: the
    decomposition, which with three or more threads on two nodes misses by up to 30%, as
    closed-network MVA does, but more often);
    closed-network MVA elsewhere.  Nothing when
    those points' estimated cost (:func:`_node_seconds`) exceeds
    :data:`AUTO_NODE_SECONDS`.
    """
    from models._policy_node import PAIR_THREADS

    n_c = (a["p"] - 1.0) if policy == "fixed" else a["p"]
    two = np.where(a["handler_cs2"] >= AUTO_TWO_NODE_MIN_CS2,
                   AUTO_TWO_NODE_THREADS.get(policy, PAIR_THREADS), PAIR_THREADS)
    mask = ((a["nodes"] >= 3) & (n_c <= AUTO_NODE_THREADS)) | (
        (a["nodes"] == 2) & (n_c <= two))
    if not np.any(mask):
        return mask
    sub = {k: v[mask] for k, v in a.items()}
    names, uniq, _ = _unique_points(sub)
    nc_u = uniq[:, names.index("p")] - (1.0 if policy == "fixed" else 0.0)
    if float(np.sum(_node_seconds(nc_u))) > AUTO_NODE_SECONDS:
        return np.zeros_like(mask)
    return mask


def _auto_mixed(a: Mapping[str, np.ndarray], policy: str, mask: np.ndarray,
                opts: Mapping[str, Any]) -> dict[str, Any]:
    """``method="auto"``: the node chain on ``mask``, MVA (or the fixed point) elsewhere.

    Points where the chain's fixed point does not converge, or runs over its work
    budget :data:`AUTO_NODE_WORK`, are solved by the network method too: the
    chain's last iterate is not an answer (at a Floating point of 7 threads on 6
    nodes it gave 4% of the simulated cycle time, where MVA is within 3%).  The
    method then says how many, e.g. ``"node-chain + exact-mva (mva at 1 point
    over the node chain's work budget)"``.
    """
    parts = []
    note = ""
    if np.any(mask):
        o = _node_formulas({k: v[mask] for k, v in a.items()}, policy, tol=opts["tol"],
                           max_iter=min(opts["max_iter"], AUTO_NODE_MAX_ITER), on_fail="ignore",
                           max_work=AUTO_NODE_WORK)
        ok = np.asarray(o["converged"], dtype=bool)
        over = np.asarray(o.pop("over_budget"), dtype=bool)
        n_over, n_unconv = int(np.sum(over)), int(np.sum(~ok & ~over))
        if n_over or n_unconv:
            what = [f"{k} point{'s' if k > 1 else ''} {why}" for k, why in (
                (n_over, "over the node chain's work budget"),
                (n_unconv, "where the node chain did not converge")) if k]
            note = f" (mva at {' and '.join(what)})"
        if not ok.all():
            mask = np.array(mask, dtype=bool)     # a copy (0-d for a scalar grid)
            mask[mask] = ok           # the failed points join the network method's share
            o = {k: (np.asarray(v)[ok] if np.ndim(v) and np.shape(v) == ok.shape else v)
                 for k, v in o.items()}
        if ok.any():
            parts.append((mask, o))
    rest = ~mask
    if np.any(rest):
        sub = {k: v[rest] for k, v in a.items()}
        meth = _auto_method(sub)
        if meth == "mva" and not _network_fits(sub):
            meth = "fixed-point"
        parts.append((rest, _policy_formulas(sub, policy, **opts) if meth == "fixed-point" else
                      _network_formulas(sub, policy, method=meth, tol=opts["tol"],
                                        max_iter=opts["max_iter"], on_fail=opts["on_fail"])))
    out: dict[str, Any] = {}
    for k in parts[0][1]:
        if k in ("method", "iterations", "residual"):
            continue
        first = np.asarray(parts[0][1][k])
        full = np.empty(mask.shape, dtype=first.dtype)
        for m, o in parts:
            full[m] = np.broadcast_to(np.asarray(o[k]), (int(np.sum(m)),))
        out[k] = full
    out["method"] = " + ".join(o["method"] for _, o in parts) + note
    out["iterations"] = max(int(o["iterations"]) for _, o in parts)
    out["residual"] = max(float(o["residual"]) for _, o in parts)
    return out


def _auto_method(a: Mapping[str, np.ndarray]) -> str:
    """What ``method="auto"`` runs on the grid ``a``: ``"mva"`` or ``"fixed-point"``."""
    _, uniq, _ = _unique_points(a)
    if len(uniq) <= AUTO_GRID_LIMIT:
        return "mva"
    import warnings

    warnings.warn(f"policy model method='auto': a grid of {len(uniq)} unique points is above "
                  f"the limit of {AUTO_GRID_LIMIT} points for closed-network MVA (0.05 to 1 s "
                  "a point); solved by the vectorised per-node fixed point "
                  "method='fixed-point', which is less accurate (see the accuracy table of the "
                  "policy docs); pass method='mva' to insist, or method='fixed-point' to "
                  "silence this", UserWarning, stacklevel=4)
    return "fixed-point"


def solve(params: PolicyParams, policy: str = "fixed", **options: Any) -> PolicyResult:
    """Solve the policy model for ``policy`` at every point of the parameter grid.

    Parameters
    ----------
    params : PolicyParams
        Model parameters (arrays broadcast).
    policy : {"fixed", "floating", "single"}
        Protocol-processing policy.  ``"single"`` uses one processor per
        node whatever ``params.p``; ``"fixed"`` needs ``p >= 2``.
    **options
        ``method``: ``"auto"`` (default: ``"node"`` at the points with at
        most :data:`AUTO_NODE_THREADS` (16) compute threads per node on at least
        three nodes, or one thread on two nodes, when their estimated cost is
        at most :data:`AUTO_NODE_SECONDS`, each under the work budget
        :data:`AUTO_NODE_WORK` (a point over it, or unconverged, by ``"mva"``,
        which ``result.method`` says), and ``"mva"`` elsewhere
        on a grid of at most :data:`AUTO_GRID_LIMIT` unique points, else
        ``"fixed-point"`` with a warning; chosen by the accuracy measured on
        random designs, see the docs), ``"node"`` (the
        node-level Markov chain with phase-type handlers and a fixed point on
        the arrival rates -- on two nodes with one thread each, both nodes in
        one chain -- see the docs; at most 16 compute threads per node,
        0.02 s to a few seconds per point, without a budget),
        ``"mva"`` (closed-network MVA of
        :func:`mva.solve`: exact when the population lattice
        ``(n_c + 1) ** nodes`` of every grid point is at most
        :data:`EXACT_LATTICE_LIMIT`, else Bard-Schweitzer), ``"exact"``,
        ``"linearizer"``, ``"schweitzer"`` (one MVA method explicitly) or
        ``"fixed-point"`` (the legacy vectorised per-node Schweitzer fixed
        point, least accurate; a 10^4-point grid in under a second).  ``tol`` (1e-10) and
        ``max_iter`` (10000) bound the root search on the interrupt probability (and the
        iterative MVA methods); ``on_fail`` (``"warn"``, ``"raise"`` or
        ``"ignore"``) handles non-convergence.  ``damping`` (0.5) and
        ``fallback`` (True) apply to ``"fixed-point"`` only
        (:func:`mva.fixedpoint.fixed_point`).

    Returns
    -------
    PolicyResult
        Scalars for scalar parameters, arrays of the broadcast shape
        otherwise.  ``saturated`` flags protocol-processor-bound points.

    Raises
    ------
    ValueError
        Unknown policy, method or option, or ``p < 2`` with
        ``policy="fixed"``.

    Notes
    -----
    Chain ``k`` holds node ``k``'s ``n_c`` threads (``p - 1``, ``p`` or 1);
    each cycles through computation ``R_w``, its send handler at its own
    protocol server, the network, the reply handler at one of the other
    ``N - 1`` servers, the network and the response handler at home.  Each
    server is FCFS (Tempest atomicity: one acting protocol processor).
    Floating adds ``o_direct + o_indirect`` (constants) to every handler:

    .. math::

        R &= R_w + R_{req} + R_{reply} + R_{resp} + 2L + t_{extra}
             + [\\text{Fixed}]\\,t_{transfer},\\qquad X = n_c / R \\\\
        s_{reply}^{eff} &= s_{reply} + P_{int} O_{int},\\qquad
        R_w = C + P_{int} (O_{int} + s_{reply}) \\\\
        P_{int} &= (1 - U_0(\\mathbf n - \\mathbf e_1))\\, q^{p},\\qquad
        q = \\frac{R_w}{R_w + 2L + t_{extra} + R_{reply}}

    where ``U_0(n - e_1)`` is the utilization of a node's server with one
    remote thread removed (arrival theorem: the server must be empty for an
    interrupt) and ``q^p`` the probability that no local thread is blocked.
    Exact MVA (with the FCFS residual-life correction for ``cs2 != 1``)
    gives the residences; ``P_int`` is the root of a decreasing scalar
    equation (Brent).  Throughput is kept nondecreasing in the population.

    References
    ----------
    .. [1] B. Falsafi and D. A. Wood, HPCA 1997, sections 3 to 5.

    Examples
    --------
    Null-handler protocol, two processors per node, U = 0.7 (Falsafi and Wood 1997, Figure 3):

    >>> prm = preset("null-handler", p=2, U=0.7)
    >>> fx, fl = solve(prm, "fixed"), solve(prm, "floating")
    >>> round(fl.execution_time / fx.execution_time, 2) < 1   # Floating wins
    True
    >>> round(fx.pp_utilization, 3) <= 1.0
    True
    """
    check_choice("policy", policy, POLICIES)
    check_kwargs("solve", options, ("method", "damping", "tol", "max_iter", "fallback",
                                    "on_fail"))
    opts: dict[str, Any] = {"damping": 0.5, "tol": 1e-10, "max_iter": 10_000, "fallback": True,
                            "on_fail": "warn"}
    opts.update(options)
    method = opts.pop("method", "auto")
    check_choice("method", method, METHODS)
    if policy == "fixed" and np.any(np.asarray(params.p) < 2):
        raise ValueError(f"p must be >= 2 for policy 'fixed' (one dedicated protocol processor "
                         f"plus at least one compute processor); got p={params.p!r}")
    a = _arrays(params, policy)
    asked = method                   # the accuracy map's key (result.method says what ran)
    if method == "auto":
        node_mask = _auto_node_mask(a, policy)
        if np.any(node_mask):
            out = _auto_mixed(a, policy, node_mask, opts)
            vals0: dict[str, Any] = {
                k: (v if k in ("method", "iterations", "residual") else
                    (bool(v) if np.ndim(v) == 0 and np.asarray(v).dtype == bool else
                     scalar_or_array(v)))
                for k, v in out.items()}
            res0 = PolicyResult(policy=policy, **vals0)
            return _attach_accuracy(with_inputs(res0, params), "policy", variant=policy,
                                    method="auto")
        method = _auto_method(a)
    if method == "mva" and not _network_fits(a):
        method = "fixed-point"       # the per-node network would not fit in memory
    if method == "fixed-point":
        out = _policy_formulas(a, policy, **opts)
    elif method == "node":
        out = _node_formulas(a, policy, tol=opts["tol"], max_iter=opts["max_iter"],
                             on_fail=opts["on_fail"])
    else:
        out = _network_formulas(a, policy, method=method, tol=opts["tol"],
                                max_iter=opts["max_iter"], on_fail=opts["on_fail"])
    vals: dict[str, Any] = {
        k: (v if k in ("method", "iterations", "residual") else
            (bool(v) if np.ndim(v) == 0 and np.asarray(v).dtype == bool else scalar_or_array(v)))
        for k, v in out.items()}
    res = PolicyResult(policy=policy, **vals)
    return _attach_accuracy(with_inputs(res, params), "policy", variant=policy, method=asked)


def compare(params: PolicyParams, **options: Any) -> PolicyComparison:
    """Fixed, Floating and Single on the same parameters, with execution-time ratios.

    Parameters
    ----------
    params : PolicyParams
        Needs ``p >= 2`` (Fixed).  Single always has one processor per node.
    **options
        Solver options of :func:`solve`.

    Returns
    -------
    PolicyComparison

    Notes
    -----
    Execution time for ``iterations`` request cycles per node is
    ``T = iterations / X``, so the ratios are throughput ratios:

    .. math::

        \\frac{T_{floating}}{T_{fixed}} = \\frac{X_{fixed}}{X_{floating}},\\qquad
        \\frac{T_{single}}{T_{fixed}} = \\frac{X_{fixed}}{X_{single}}.

    References
    ----------
    .. [1] B. Falsafi and D. A. Wood, HPCA 1997, Figures 3 and 4.

    Examples
    --------
    >>> c = compare(preset("null-handler", p=2, U=0.1, O_int=2000))
    >>> c.single_over_fixed > 1
    True
    """
    fx = solve(params, "fixed", **options)
    fl = solve(params, "floating", **options)
    sg = solve(params, "single", **options)
    T = (np.asarray(fx.execution_time), np.asarray(fl.execution_time),
         np.asarray(sg.execution_time))
    res = PolicyComparison(fixed=fx, floating=fl, single=sg,
                           floating_over_fixed=scalar_or_array(T[1] / T[0]),
                           single_over_fixed=scalar_or_array(T[2] / T[0]),
                           single_over_floating=scalar_or_array(T[2] / T[1]))
    return with_inputs(res, params)


def whatif_table(p: Any = (2, 4), U: Any = (0.3, 0.7)) -> Any:
    """Floating/Fixed and Single/Fixed on Falsafi and Wood's (1997) null-handler and fetch-block
    presets.

    Used by the default ``smp-contention`` what-if report.

    Parameters
    ----------
    p : sequence of int, default (2, 4)
        Processors per node.
    U : sequence of float, default (0.3, 0.7)
        Compute-utilizations.

    Returns
    -------
    mva.table.Table
        Columns ``protocol``, ``p``, ``U``, ``floating/fixed``, ``single/fixed``.

    Examples
    --------
    >>> t = whatif_table(p=[2], U=[0.7])
    >>> [round(float(x), 2) for x in t["floating/fixed"]]
    [0.64, 0.57]
    """
    from mva.table import Table, grid_points

    pts = grid_points({"p": list(p), "U": list(U)})
    cols: dict[str, list[Any]] = {"protocol": [], "p": [], "U": [], "floating/fixed": [],
                                  "single/fixed": []}
    for name in ("null-handler", "fetch-block"):
        c = compare(preset(name, p=pts["p"], U=pts["U"]))
        cols["protocol"] += [name] * len(pts["p"])
        cols["p"] += [int(v) for v in pts["p"]]
        cols["U"] += [float(v) for v in pts["U"]]
        cols["floating/fixed"] += np.atleast_1d(c.floating_over_fixed).tolist()
        cols["single/fixed"] += np.atleast_1d(c.single_over_fixed).tolist()
    return Table.from_columns(cols, title="Execution time of Floating and Single over Fixed "
                              "(Falsafi & Wood 1997 presets, O_int=200)",
                              formats={"floating/fixed": ".3f", "single/fixed": ".3f"})


# ---------------------------------------------------------------------------
# command line
# ---------------------------------------------------------------------------

def equations() -> dict[str, Any]:
    """The closed-network cycle equations and the interrupt probability as SymPy equations.

    Returns
    -------
    dict of str to sympy.Eq
        ``"R_w"`` the computation residence (computation :math:`C` plus the
        interrupts it suffers, BKT-style: the interrupted processor runs the
        interrupt :math:`O_{int}` and the reply handler :math:`s_y` while
        its computation is suspended); ``"s_y_eff"`` the reply handler's
        effective service time; ``"Z"`` the chain's think time;
        ``"R"`` the cycle time and ``"X"`` the node throughput
        (:math:`n_c` threads per node; :math:`\\phi = 1` under Fixed,
        where :math:`P_{int} = 0`); ``"q"`` the probability that a local
        thread computes given the server is empty, ``"P_all"`` that all
        :math:`p` local threads compute, and ``"P_int"`` the interrupt
        probability (:math:`B` the utilization of the node's server seen by
        an arriving remote reply, arrival theorem).

    Notes
    -----
    The residences :math:`R_q`, :math:`R_y`, :math:`R_r` at the protocol
    servers come from the :mod:`mva` engine; :math:`P_{int}` is the root of
    ``"P_int"`` (Brent).  ``tests/models/test_policy.py`` lambdifies these
    equations and checks them against :func:`solve`.

    References
    ----------
    .. [1] B. Falsafi and D. A. Wood, HPCA 1997, sections 3 to 5.

    Examples
    --------
    >>> list(equations())
    ['R_w', 's_y_eff', 'Z', 'R', 'X', 'q', 'P_all', 'P_int']
    """
    import sympy as sp

    def S(n: str) -> Any:
        return sp.Symbol(n, nonnegative=True)

    C, P_int, O, s_y, L, t_x, t_tr, phi = (
        S(n) for n in ("C", "P_int", "O_int", "s_y", "L", "t_extra", "t_transfer", "phi"))
    R_q, R_y, R_r, n_c, p, B = (S(n) for n in ("R_q", "R_y", "R_r", "n_c", "p", "B"))
    R_w, Z, R, q, P_all = (S(n) for n in ("R_w", "Z", "R", "q", "P_all"))
    Eq = lambda a, b: sp.Eq(a, b, evaluate=False)  # noqa: E731
    return {
        "R_w": Eq(R_w, C + P_int * (O + s_y)),
        "s_y_eff": Eq(sp.Symbol("s_y^eff"), s_y + P_int * O),
        "Z": Eq(Z, R_w + 2 * L + t_x + phi * t_tr),
        "R": Eq(R, Z + R_q + R_y + R_r),
        "X": Eq(sp.Symbol("X"), n_c / R),
        "q": Eq(q, R_w / (R_w + 2 * L + t_x + R_y)),
        "P_all": Eq(P_all, q ** p),
        "P_int": Eq(P_int, (1 - sp.Min(B, 1)) * P_all),
    }


def register_cli(subparsers: Any) -> None:
    """Add the ``policy`` subcommand (kept for compatibility: see :mod:`models.cli.policy`)."""
    from models.cli.policy import register

    register(subparsers)
