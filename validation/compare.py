"""Models against the simulator: one point (:func:`compare`) or a grid (:func:`compare_grid`).

Both run a model of :mod:`models` -- any solution method -- and the
discrete-event simulator of :mod:`validation.sim` on the *same* parameter
object, and set the model's values beside the simulated means with their 95%
confidence intervals:

.. math::

    \\text{abs error} = m - \\bar s, \\qquad
    \\text{rel error} = \\frac{m - \\bar s}{\\bar s}, \\qquad
    \\text{within CI} \\iff |m - \\bar s| \\le h

where :math:`m` is the model value, :math:`\\bar s` the simulated mean and
:math:`h` the half-width of its 95% interval.

Families and the measures compared (cycles unless stated):

==========  ==========================================================================
family      measures
==========  ==========================================================================
``lopc``    ``R`` cycle time, ``R_w`` compute residence, ``R_q`` / ``R_y`` request /
            reply handler residence, ``U_h`` handler utilization of a processor
            (``U_q + U_y``), ``Q_h`` handlers at a processor (``Q_q + Q_y``)
``ini``     the LoPC measures plus ``R_o`` residence per INI visit, ``U_o`` INI
            utilization, ``Q_o`` messages at one INI
``policy``  ``R`` cycle time, ``X`` node throughput (requests per cycle), ``T``
            execution time of ``iterations`` requests per node, ``U_pp`` acting
            protocol-processor utilization, ``R_req`` / ``R_reply`` / ``R_resp`` the
            three handlers' residence, ``P_int`` interrupts per request
``pdq``     ``R`` handler response time, ``U`` processor utilization (fraction of
            the time each of the ``k`` processors runs or spins on handlers), ``N``
            handlers in the system
==========  ==========================================================================

The simulated machine comes from
:func:`validation.sim.builders.machine_from_params` (LoPC, INI, policies).
For PDQ, whose model is *open* (Poisson arrivals of handlers at one node),
:func:`pdq_machine` builds the machine here: a source thread with exponential
think times sends one-way requests (a Poisson stream of rate
``params.rate``) to a node with ``k`` protocol processors and a parallel
dispatch queue (``"shared"``), to ``k`` one-processor nodes chosen
uniformly (``"partitioned"``, exact for uniform key popularity), or to a node
with ``k`` protocol processors that dispatch in arrival order and busy-wait
on per-key spin-locks (``"spinlock"``).

Reproducibility: :func:`compare` seeds the simulator with ``seed``;
:func:`compare_grid` gives every point the seed
:func:`mva.sweeps.point_seed` ``(seed, point)``, so results are identical
whatever the executor, the order or the other points of the grid.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

import numpy as np

from mva._validate import check_choice, check_integer

__all__ = [
    "FAMILIES",
    "MEASURES",
    "DEFAULT_METHOD",
    "ComparisonRow",
    "Comparison",
    "GridComparison",
    "compare",
    "compare_grid",
    "simulate_measures",
    "pdq_machine",
    "MULT_BURST_OVER_S",
    "family_of",
]

#: parameter families understood by :func:`compare`
FAMILIES = ("lopc", "ini", "policy", "pdq")

#: measures compared, per family, with a description
MEASURES: dict[str, dict[str, str]] = {
    "lopc": {"R": "cycle time", "R_w": "compute residence", "R_q": "request handler residence",
             "R_y": "reply handler residence", "U_h": "handler utilization per processor",
             "Q_h": "handlers at a processor"},
    "ini": {"R": "cycle time", "R_w": "compute residence", "R_q": "request handler residence",
            "R_y": "reply handler residence", "R_o": "residence per INI visit",
            "U_o": "INI utilization", "Q_o": "messages at one INI",
            "U_h": "handler utilization per PE", "Q_h": "handlers at a PE"},
    "policy": {"R": "cycle time", "X": "node throughput (requests/cycle)",
               "T": "execution time", "U_pp": "protocol-processor utilization",
               "R_req": "request handler residence", "R_reply": "reply handler residence",
               "R_resp": "response handler residence", "P_int": "interrupts per request"},
    "pdq": {"R": "handler response time", "U": "processor utilization",
            "N": "handlers in the system"},
}

#: default model method per family (:func:`compare` with ``method=None``)
DEFAULT_METHOD = {"lopc": "auto", "ini": "auto", "policy": "fixed", "pdq": "shared"}

_VARIANT_ARG = {"policy": "policy", "pdq": "discipline"}


def family_of(params: Any) -> str:
    """The family (``"lopc"``, ``"ini"``, ``"policy"``, ``"pdq"``) of a parameter object.

    Examples
    --------
    >>> from models.lopc import LoPCParams
    >>> family_of(LoPCParams(P=4, W=100, o=10, L=5))
    'lopc'
    """
    name = type(params).__name__
    fam = {"LoPCParams": "lopc", "INIParams": "ini", "PolicyParams": "policy",
           "PDQParams": "pdq"}.get(name)
    if fam is None:
        raise ValueError(f"params must be LoPCParams, INIParams, PolicyParams or PDQParams; "
                         f"got {type(params).__module__}.{name}")
    return fam


def _params_class(family: str) -> Any:
    if family == "lopc":
        from models.lopc import LoPCParams
        return LoPCParams
    if family == "ini":
        from models.ini import INIParams
        return INIParams
    if family == "policy":
        from models.policy import PolicyParams
        return PolicyParams
    from models.pdq import PDQParams
    return PDQParams


def _fields_of(params: Any) -> dict[str, Any]:
    """Scalar fields of a parameter object as JSON-able Python values."""
    out: dict[str, Any] = {}
    for f in dataclasses.fields(params):
        v = getattr(params, f.name)
        if v is None or isinstance(v, (bool, str)):
            out[f.name] = v
            continue
        a = np.asarray(v)
        if a.ndim != 0:
            raise ValueError(f"{type(params).__name__}.{f.name} must be a scalar to compare one "
                             f"point; got an array of shape {a.shape} (use compare_grid)")
        x = a.item()
        out[f.name] = x
    if family_of(params) == "ini" and out.get("S") is not None:
        out["N"] = None  # N = S / K is derived
    return out


# ---------------------------------------------------------------------------
# the PDQ machine (open arrivals)
# ---------------------------------------------------------------------------

def pdq_machine(params: Any, *, discipline: str = "shared") -> tuple[Any, Any]:
    """Simulator machine and workload for an open PDQ model point.

    Parameters
    ----------
    params : models.pdq.PDQParams
        Scalar parameters (``multiplexed`` with the shared and partitioned disciplines only).
    discipline : {"shared", "partitioned", "spinlock"}
        ``"shared"``: one node with ``k`` protocol processors and a parallel
        dispatch queue (handlers with equal keys serialized, ``sequential``
        drains, ``nosync`` runs any time).  ``"partitioned"``: ``k`` nodes of
        one protocol processor, each handler sent to one uniformly (key
        ``i`` to queue ``i mod k`` with uniform keys; needs ``key_skew == 0``
        and ``f_sequential == 0``).  ``"spinlock"``: one node with ``k``
        protocol processors and ``dispatch="spin"`` -- handlers start in
        arrival order on any idle processor; a keyed handler pays ``o_lock``
        (constant) to acquire and release its key's lock and busy-waits on
        its processor while another holds it; ``sequential`` drains and runs
        alone, ``nosync`` takes no lock.

    Returns
    -------
    (Machine, Workload or tuple of Workload)

    Notes
    -----
    One source thread on an extra node computes exponential bursts of mean
    :math:`1/\\lambda` and sends a *one-way* request after each, so handler
    arrivals form a Poisson stream of rate :math:`\\lambda` = ``params.rate``;
    handler occupancy has mean ``S`` and squared coefficient of variation
    ``cs2``.

    Multiplexed processors (``multiplexed=True``, Hurricane-1 Mult; shared
    and partitioned): the ``k`` protocol processors become compute
    processors, each running a compute thread that alternates exponential
    bursts (mean :data:`MULT_BURST_OVER_S` ``* S``) and idle periods so that
    it computes a fraction ``compute_utilization`` of the time; an idle
    processor takes handlers, and when every processor (of the node) is
    computing an arriving handler interrupts one (round-robin) and pays
    ``O_int``; every handler pays ``o_sched``; an interrupted burst resumes
    afterwards (preemptive resume).  The workload is then a tuple: one
    compute workload per processor, then the source's.

    Examples
    --------
    >>> from models.pdq import PDQParams
    >>> m, w = pdq_machine(PDQParams(k=2, load=0.5, S=100, n_keys=8))
    >>> m.n_nodes, m.nodes[0].protocol, m.nodes[0].dispatch, w.one_way
    (2, 2, 'pdq', True)
    """
    from .generators import Workload
    from .sim.dists import Dist
    from .sim.machine import Machine, NodeSpec

    check_choice("discipline", discipline, ("shared", "partitioned", "spinlock"))
    mult = bool(params.multiplexed)
    if mult and discipline == "spinlock":
        raise ValueError("pdq_machine: the spin-lock discipline is simulated on dedicated "
                         "processors only; got multiplexed=True with discipline='spinlock'")
    k = int(np.asarray(params.k))
    rate = float(np.asarray(params.rate))
    if rate <= 0:
        raise ValueError(f"pdq_machine: the arrival rate must be > 0; got {rate}")
    S = float(np.asarray(params.S))
    cs2 = float(np.asarray(params.cs2))
    skew = float(np.asarray(params.key_skew))
    fs = float(np.asarray(params.f_sequential))
    fn = float(np.asarray(params.f_nosync))
    n_keys = int(np.asarray(params.n_keys))
    # multiplexed (Hurricane-1 Mult): the k processors run compute threads and take
    # handlers when idle, or by an interrupt when all compute
    mx: dict[str, Any] = {}
    if mult:
        mx = dict(protocol=0, interrupt=float(np.asarray(params.O_int)),
                  indirect=float(np.asarray(params.o_sched)))
    if discipline != "partitioned":
        spin = discipline == "spinlock"
        if mult:
            server = NodeSpec(compute=k, dispatch="pdq", max_acting=k, **mx)
        else:
            server = NodeSpec(compute=0, protocol=k, dispatch="spin" if spin else "pdq",
                              lock=float(np.asarray(params.o_lock)) if spin else 0.0)
        servers: tuple[Any, ...] = (server,)
        keys: dict[str, Any] = dict(keys=n_keys, key_zipf=skew, p_sequential=fs, p_nosync=fn)
    else:
        if skew != 0.0 or fs != 0.0:
            raise ValueError("pdq_machine: 'partitioned' is simulated for uniform keys without "
                             f"sequential handlers; got key_skew={skew}, f_sequential={fs}")
        servers = (NodeSpec(compute=1, **mx) if mult else NodeSpec(compute=0, protocol=1),) * k
        keys = {}
    nodes = servers + (NodeSpec(compute=1),)
    m = Machine(nodes=nodes, latency=0.0,
                name=f"PDQ {discipline}{' multiplexed' if mult else ''} k={k}")
    w = Workload(burst=Dist.exponential(1.0 / rate), request_cost=Dist.from_cs2(S, cs2),
                 reply_cost=None, targets=tuple(range(len(servers))), dest="uniform", **keys)
    if not mult:
        return m, w
    return m, (_compute_thread(params, S),) * k + (w,)


#: multiplexed processors: mean compute burst of a compute thread, in handler times ``S``
#: (the model declares only the computing fraction ``compute_utilization``, not a time scale)
MULT_BURST_OVER_S = 10.0


def _compute_thread(params: Any, S: float) -> Any:
    """Workload of one multiplexed processor's compute thread: exponential bursts and idle times.

    Bursts have mean ``B = MULT_BURST_OVER_S * S`` and idle periods mean
    ``B (1 - u_c) / u_c``, so that without protocol work the processor
    computes a fraction ``u_c`` of the time (``u_c = 0``: always idle).
    """
    from .generators import Workload
    from .sim.dists import Dist

    uc = float(np.asarray(params.compute_utilization))
    B = MULT_BURST_OVER_S * S
    if uc == 0.0:
        return Workload(burst=0.0, request_cost=0.0, reply_cost=None, idle=Dist.exponential(B))
    return Workload(burst=Dist.exponential(B), request_cost=0.0, reply_cost=None,
                    idle=Dist.exponential(B * (1.0 - uc) / uc))


# ---------------------------------------------------------------------------
# simulator side
# ---------------------------------------------------------------------------

def _avg(ests: Sequence[Any], scale: Sequence[float] | None = None) -> tuple[float, float]:
    """Mean of per-resource estimates and a conservative half-width (mean of half-widths)."""
    if not ests:
        return math.nan, math.nan
    sc = [1.0] * len(ests) if scale is None else list(scale)
    m = float(np.mean([e.mean * s for e, s in zip(ests, sc)]))
    h = float(np.mean([e.half_width * s for e, s in zip(ests, sc)]))
    return m, h


def _est(e: Any) -> tuple[float, float]:
    if e is None:
        return math.nan, math.nan
    return float(e.mean), float(e.half_width)


def _per_resource(res: Any, kind: str, measure: str, per_server: bool = False,
                  times_servers: bool = False) -> tuple[float, float]:
    """Mean over the resources of ``kind`` of one measure, with its interval.

    When every resource of the kind has the same number of servers ``c``, the
    simulator's pooled estimate (one observation per batch) is exactly the
    mean over the resources -- of the utilization, and of the queue length
    (divided by ``c`` with ``per_server``; the utilization times ``c`` with
    ``times_servers``) -- and its half-width is the proper one.  Otherwise
    the mean of the per-resource estimates, with the mean of their
    half-widths (conservative).
    """
    rs = res.resources_of(kind)            # (protocol and INI resources are pooled whole)
    servers = {r.servers for r in rs}
    pooled = (res.pooled or {}).get(kind)
    if pooled is not None and len(servers) == 1:
        c = float(servers.pop())
        scale = 1.0 / c if per_server else c if times_servers else 1.0
        e = pooled[measure]
        return float(e.mean) * scale, float(e.half_width) * scale
    scales = [1.0 / r.servers if per_server else float(r.servers) if times_servers else 1.0
              for r in rs]
    return _avg([getattr(r, measure) for r in rs], scales)


def _measures_from_sim(family: str, res: Any, params: Any) -> dict[str, tuple[float, float]]:
    """Simulated (mean, half-width) per measure of ``family``."""
    resp = res.response
    out: dict[str, tuple[float, float]] = {}
    if family in ("lopc", "ini"):
        out["R"] = _est(res.cycle_time)
        out["R_w"] = _est(resp.get("compute"))
        out["R_q"] = _est(resp.get("request_handler"))
        out["R_y"] = _est(resp.get("reply_handler"))
        out["U_h"] = _per_resource(res, "protocol", "utilization")
        out["Q_h"] = _per_resource(res, "protocol", "queue_length")
        if family == "ini":
            out["R_o"] = _est(resp.get("ini"))
            out["U_o"] = _per_resource(res, "ini", "utilization")
            out["Q_o"] = _per_resource(res, "ini", "queue_length", per_server=True)
    elif family == "policy":
        nodes = float(np.asarray(params.nodes))
        iters = float(np.asarray(params.iterations))
        xm, xh = _est(res.machine_throughput)  # whole machine; X is per node
        out["R"] = _est(res.cycle_time)
        out["X"] = (xm / nodes, xh / nodes)
        T = iters * nodes / xm
        out["T"] = (T, T * xh / xm)
        out["U_pp"] = _per_resource(res, "protocol", "utilization", times_servers=True)
        out["R_req"] = _est(resp.get("send_handler"))
        out["R_reply"] = _est(resp.get("request_handler"))
        out["R_resp"] = _est(resp.get("reply_handler"))
        out["P_int"] = _est(res.interrupts_per_request)
    else:  # pdq
        prot = [r for r in res.resources_of("protocol") if r.servers > 0 and r.departures > 0]
        out["R"] = _est(resp.get("request_handler"))
        out["U"] = _avg([r.utilization for r in prot])
        n = [r.queue_length for r in prot]
        out["N"] = (float(sum(e.mean for e in n)), float(sum(e.half_width for e in n)))
    return out


def _make_params(family: str, fields_: Mapping[str, Any]) -> Any:
    return _params_class(family)(**{k: v for k, v in fields_.items()})


def simulate_measures(family: str, variant: str | None = None, *, cycles: int = 50_000,
                      warmup: int | None = None, batches: int = 20, seed: int | None = 0,
                      progress: bool | None = False, **fields_: Any) -> dict[str, Any]:
    """Simulate one parameter point and return the compared measures as flat scalars.

    This is the per-point function :func:`compare_grid` hands to
    :func:`mva.sweep` (module level, so a process pool can pickle it).

    Parameters
    ----------
    family : {"lopc", "ini", "policy", "pdq"}
    variant : str, optional
        The policy (``"fixed"``, ``"floating"``, ``"single"``) or the PDQ
        discipline (``"shared"``, ``"partitioned"``, ``"spinlock"``); ignored otherwise.
    cycles, warmup, batches, seed, progress
        Passed to :func:`validation.simulate`.
    **fields_
        The fields of the family's parameter class (scalars).

    Returns
    -------
    dict
        ``<measure>`` and ``<measure>_hw`` (95% half-width) for every measure
        of :data:`MEASURES` ``[family]``, plus ``sim_events``,
        ``sim_wall_time`` and ``sim_completed``.

    Examples
    --------
    >>> d = simulate_measures("lopc", P=4, W=1000, o=50, L=20, cycles=2000, seed=3)
    >>> sorted(k for k in d if not k.endswith("_hw"))[:3]
    ['Q_h', 'R', 'R_q']
    >>> d["R"] > 1000 + 2 * 20 + 2 * 50
    True
    """
    from .sim.simulate import simulate

    check_choice("family", family, FAMILIES)
    params = _make_params(family, fields_)
    kw: dict[str, Any] = {}
    if family == "pdq":
        m, w = pdq_machine(params, discipline=variant or "shared")
        res = simulate(m, w, cycles=cycles, warmup=warmup, batches=batches, seed=seed,
                       progress=progress)
    else:
        if family == "policy":
            kw["policy"] = variant or "fixed"
        res = simulate(params, cycles=cycles, warmup=warmup, batches=batches, seed=seed,
                       progress=progress, **kw)
    out: dict[str, Any] = {}
    for name, (mean, hw) in _measures_from_sim(family, res, params).items():
        out[name] = float(mean)
        out[name + "_hw"] = float(hw)
    out["sim_events"] = int(res.events)
    out["sim_wall_time"] = float(res.wall_time)
    out["sim_completed"] = int(res.counts.get("completed", 0))
    return out


# ---------------------------------------------------------------------------
# model side
# ---------------------------------------------------------------------------

def _model_values(family: str, params: Any, method: str,
                  options: Mapping[str, Any]) -> dict[str, np.ndarray]:
    """Model values of every measure of ``family`` (arrays broadcast over the grid)."""
    def a(x: Any) -> np.ndarray:
        return np.asarray(x, dtype=float)

    if family == "lopc":
        from models.lopc import solve as solve_lopc
        lo = solve_lopc(params, method=method, **options)
        return {"R": a(lo.R), "R_w": a(lo.R_w), "R_q": a(lo.R_q), "R_y": a(lo.R_y),
                "U_h": a(lo.U_q) + a(lo.U_y), "Q_h": a(lo.Q_q) + a(lo.Q_y)}
    if family == "ini":
        from models.ini import solve as solve_ini
        r = solve_ini(params, method=method, **options)
        return {"R": a(r.R), "R_w": a(r.R_w), "R_q": a(r.R_q), "R_y": a(r.R_y),
                "R_o": a(r.R_o), "U_o": a(r.U_o), "Q_o": a(r.Q_o),
                "U_h": a(r.U_q) + a(r.U_y), "Q_h": a(r.Q_q) + a(r.Q_y)}
    if family == "policy":
        from models.policy import solve as solve_policy
        po = solve_policy(params, method, **options)
        return {"R": a(po.cycle_time), "X": a(po.throughput), "T": a(po.execution_time),
                "U_pp": a(po.pp_utilization), "R_req": a(po.R_request), "R_reply": a(po.R_reply),
                "R_resp": a(po.R_response), "P_int": a(po.interrupt_probability),
                "saturated": a(po.saturated)}
    from models.pdq import solve as solve_pdq
    pq = solve_pdq(params, method, **options)
    # U per processor of the k (the simulator's protocol utilization): the model's
    # utilization is per *available* processor (a = k; kept general)
    U = a(pq.utilization) * a(pq.available_processors) / a(params.k)
    return {"R": a(pq.response_time), "U": U, "N": a(pq.mean_in_system),
            "saturated": a(pq.saturated)}


def _check_method(family: str, method: str | None) -> str:
    if method is None:
        return DEFAULT_METHOD[family]
    METHODS: tuple[str, ...]
    if family == "lopc":
        from models.lopc import METHODS
    elif family == "ini":
        from models.ini import METHODS
    elif family == "policy":
        METHODS = ("fixed", "floating", "single")
    else:
        METHODS = ("shared", "partitioned", "spinlock")
    check_choice("method", method, METHODS)
    return method


# ---------------------------------------------------------------------------
# results
# ---------------------------------------------------------------------------

@dataclass(frozen=True, kw_only=True)
class ComparisonRow:
    """One measure: model value against the simulated mean.

    Attributes
    ----------
    measure : str
        Name from :data:`MEASURES`.
    model : float
        Model value.
    sim : float
        Simulated mean.
    half_width : float
        Half-width of the simulated mean's 95% confidence interval (NaN when
        the simulator gives no interval, e.g. ``P_int``).
    abs_error : float
        ``model - sim``.
    rel_error : float
        ``(model - sim) / sim`` (NaN when ``sim == 0``).
    within_ci : bool
        ``|model - sim| <= half_width``.
    """

    measure: str
    model: float
    sim: float
    half_width: float
    abs_error: float
    rel_error: float
    within_ci: bool

    @classmethod
    def make(cls, measure: str, model: float, sim: float, half_width: float) -> "ComparisonRow":
        """Build a row, computing the errors."""
        model, sim, hw = float(model), float(sim), float(half_width)
        err = model - sim
        rel = err / sim if sim != 0 and math.isfinite(sim) else math.nan
        within = bool(math.isfinite(hw) and abs(err) <= hw)
        return cls(measure=measure, model=model, sim=sim, half_width=hw, abs_error=err,
                   rel_error=rel, within_ci=within)

    def to_dict(self) -> dict[str, Any]:
        """Fields as a plain dict."""
        return dataclasses.asdict(self)


_ROW_COLUMNS = ("measure", "model", "sim", "ci95", "abs_error", "rel_error_%", "within_ci")


def _row_table(rows: Sequence[ComparisonRow], title: str | None,
               extra: Mapping[str, Sequence[Any]] | None = None) -> Any:
    from mva.table import Table
    cols: dict[str, Any] = dict(extra or {})
    cols.update({
        "measure": [r.measure for r in rows], "model": [r.model for r in rows],
        "sim": [r.sim for r in rows], "ci95": [r.half_width for r in rows],
        "abs_error": [r.abs_error for r in rows],
        "rel_error_%": [100.0 * r.rel_error for r in rows],
        "within_ci": ["yes" if r.within_ci else "no" for r in rows]})
    fm = {"model": ".5g", "sim": ".5g", "ci95": ".3g", "abs_error": ".3g", "rel_error_%": "+.2f"}
    return Table.from_columns(cols, title=title, formats=fm)


@dataclass(frozen=True, kw_only=True)
class Comparison:
    """A model and the simulator on one parameter point.

    Attributes
    ----------
    family : str
        ``"lopc"``, ``"ini"``, ``"policy"`` or ``"pdq"``.
    method : str
        The model's method (LoPC/INI), policy or discipline.
    params : object
        The parameter object.
    rows : tuple of ComparisonRow
        One per measure of :data:`MEASURES` ``[family]``.
    simulated : dict
        The flat output of :func:`simulate_measures` (reuse it with
        ``compare(..., simulated=...)`` to compare another method on the
        same simulation).
    seed : int or None
        The simulator's seed.
    cycles : int
        Measured requests.
    """

    family: str
    method: str
    params: Any
    rows: tuple[ComparisonRow, ...]
    simulated: Mapping[str, Any]
    seed: int | None
    cycles: int

    def __getitem__(self, measure: str) -> ComparisonRow:
        for r in self.rows:
            if r.measure == measure:
                return r
        raise KeyError(f"no measure {measure!r}; have {', '.join(r.measure for r in self.rows)}")

    @property
    def measures(self) -> tuple[str, ...]:
        """Names of the compared measures."""
        return tuple(r.measure for r in self.rows)

    def table(self) -> Any:
        """The comparison as an :class:`mva.table.Table`."""
        return _row_table(self.rows, f"{self.family} ({self.method}) vs simulation, "
                                     f"{self.cycles} requests, seed {self.seed}")

    def to_dict(self) -> dict[str, Any]:
        """Plain dictionary (rows as dicts)."""
        return {"family": self.family, "method": self.method, "seed": self.seed,
                "cycles": self.cycles, "params": _fields_of(self.params),
                "rows": [r.to_dict() for r in self.rows], "simulated": dict(self.simulated)}

    def to_frame(self) -> Any:
        """The rows as a :class:`pandas.DataFrame` (needs pandas)."""
        return self.table().to_frame()

    def __str__(self) -> str:
        return self.table().render("md")


def _rows(family: str, model: Mapping[str, Any], sim: Mapping[str, Any], i: int | None
          ) -> tuple[ComparisonRow, ...]:
    out = []
    for name in MEASURES[family]:
        mv = model[name]
        mv = float(mv if i is None or np.ndim(mv) == 0 else np.ravel(mv)[i])
        out.append(ComparisonRow.make(name, mv, sim[name], sim[name + "_hw"]))
    return tuple(out)


def compare(params: Any, *, method: str | None = None, cycles: int = 50_000,
            warmup: int | None = None, batches: int = 20, seed: int | None = 0,
            simulated: Mapping[str, Any] | None = None, progress: bool | None = None,
            model_options: Mapping[str, Any] | None = None) -> Comparison:
    """Run a model and the simulator on one parameter object and compare them.

    Parameters
    ----------
    params : LoPCParams, INIParams, PolicyParams or PDQParams
        Scalar parameters of one configuration (INI: the dispatch discipline
        is ``params.dispatch``).
    method : str, optional
        LoPC: a method of :data:`models.lopc.METHODS`; INI: of
        :data:`models.ini.METHODS` (default ``"auto"`` for both: the most
        accurate method, which answers every point of the declared domain,
        however many threads); policies:
        the policy ``"fixed"`` (default), ``"floating"`` or ``"single"``; PDQ:
        the discipline ``"shared"`` (default), ``"partitioned"`` or ``"spinlock"``.
    cycles : int
        Requests measured by the simulator (after ``warmup``).
    warmup : int, optional
        Requests discarded first (default ``cycles // 10``).
    batches : int
        Batches for the batch-means confidence intervals.
    seed : int or None
        Simulator seed.
    simulated : mapping, optional
        A previous simulation of the same point (``Comparison.simulated``):
        compare another model method without simulating again.  The policy
        and PDQ ``method`` selects the simulated machine, so it must match.
    progress : bool, optional
        Progress bar (default: on a terminal only).
    model_options : mapping, optional
        Extra keyword arguments of the model's ``solve``.

    Returns
    -------
    Comparison

    Notes
    -----
    Relative error is :math:`(m - \\bar s)/\\bar s`; ``within_ci`` tests
    :math:`|m - \\bar s| \\le h` with :math:`h` the 95% half-width.  Averages
    over several resources of the same kind (processors, INIs) carry the
    interval of the simulator's batch-pooled estimate of that mean (the mean of
    the per-resource half-widths, a conservative interval, when the resources'
    server counts differ).

    References
    ----------
    A. M. Law, *Simulation Modeling and Analysis*, ch. 9 (batch means).

    Examples
    --------
    >>> from models.lopc import LoPCParams
    >>> c = compare(LoPCParams(P=4, W=1000, o=50, L=20), cycles=4000, seed=1)
    >>> c.measures[:3]
    ('R', 'R_w', 'R_q')
    >>> abs(c["R"].rel_error) < 0.05
    True
    >>> c2 = compare(c.params, method="lopc", simulated=c.simulated)
    >>> c2["R"].sim == c["R"].sim
    True
    """
    family = family_of(params)
    method = _check_method(family, method)
    cycles = int(check_integer("cycles", cycles, minimum=1))
    fields_ = _fields_of(params)
    if simulated is None:
        variant = method if family in _VARIANT_ARG else None
        simulated = simulate_measures(family, variant, cycles=cycles, warmup=warmup,
                                      batches=batches, seed=seed, progress=progress, **fields_)
    model = _model_values(family, params, method, dict(model_options or {}))
    return Comparison(family=family, method=method, params=params,
                      rows=_rows(family, model, simulated, None), simulated=dict(simulated),
                      seed=seed, cycles=cycles)


# ---------------------------------------------------------------------------
# grids
# ---------------------------------------------------------------------------

@dataclass(frozen=True, kw_only=True)
class GridComparison:
    """A model and the simulator over a grid of parameter points.

    Attributes
    ----------
    family : str
    method : str
        Model method, policy or discipline.
    varying : tuple of str
        Names of the parameters that vary over the grid (shown in tables).
    points : tuple of dict
        Scalar fields of every point's parameter object.
    comparisons : tuple of Comparison
        One per point, in grid order.
    seed : int or None
        Base seed (point ``i`` used ``point_seed(seed, point)``).
    cycles : int
    """

    family: str
    method: str
    varying: tuple[str, ...]
    points: tuple[dict[str, Any], ...]
    comparisons: tuple[Comparison, ...]
    seed: int | None
    cycles: int
    title: str = ""
    extra: dict[str, Any] = field(default_factory=dict)

    def __len__(self) -> int:
        return len(self.comparisons)

    def values(self, measure: str, what: str = "rel_error") -> np.ndarray:
        """One column over the grid: ``"model"``, ``"sim"``, ``"half_width"``,
        ``"abs_error"``, ``"rel_error"`` or ``"within_ci"``."""
        return np.array([getattr(c[measure], what) for c in self.comparisons])

    def param(self, name: str) -> np.ndarray:
        """Values of parameter ``name`` over the grid."""
        return np.array([p[name] for p in self.points])

    def table(self, measures: Sequence[str] | None = None) -> Any:
        """Long table: one row per point and measure (the varying parameters first)."""
        measures = list(measures or MEASURES[self.family])
        rows: list[ComparisonRow] = []
        extra: dict[str, list[Any]] = {k: [] for k in self.varying}
        for p, c in zip(self.points, self.comparisons):
            for m in measures:
                rows.append(c[m])
                for k in self.varying:
                    extra[k].append(p[k])
        return _row_table(rows, self.title or f"{self.family} ({self.method}) vs simulation",
                          extra)

    def summary(self, measures: Sequence[str] | None = None) -> Any:
        """Per measure: mean and max absolute relative error (%), max absolute error, share within
        the CI."""
        from mva.table import Table
        measures = list(measures or MEASURES[self.family])
        cols: dict[str, list[Any]] = {"measure": [], "points": [], "mean_|rel|_%": [],
                                      "max_|rel|_%": [], "max_|abs|": [], "within_ci_%": []}
        for m in measures:
            rel = np.abs(self.values(m, "rel_error"))
            ab = np.abs(self.values(m, "abs_error"))
            ok = np.isfinite(rel)
            cols["measure"].append(m)
            cols["points"].append(int(ok.sum()))
            cols["mean_|rel|_%"].append(100 * float(np.mean(rel[ok])) if ok.any() else math.nan)
            cols["max_|rel|_%"].append(100 * float(np.max(rel[ok])) if ok.any() else math.nan)
            cols["max_|abs|"].append(float(np.nanmax(ab)) if np.isfinite(ab).any() else math.nan)
            cols["within_ci_%"].append(100 * float(np.mean(self.values(m, "within_ci"))))
        return Table.from_columns(cols, title=f"{self.title or self.family} ({self.method}): "
                                              "errors over the grid",
                                  formats={"mean_|rel|_%": ".3f", "max_|rel|_%": ".3f",
                                           "max_|abs|": ".4g", "within_ci_%": ".0f"})

    def remodel(self, method: str, model_options: Mapping[str, Any] | None = None
                ) -> "GridComparison":
        """The same simulations against another model method (LoPC and INI only)."""
        if self.family in _VARIANT_ARG:
            raise ValueError(f"remodel: the {self.family} method selects the simulated machine; "
                             "run compare_grid again with the other "
                             f"{_VARIANT_ARG[self.family]}")
        method = _check_method(self.family, method)
        sims = [c.simulated for c in self.comparisons]
        comps = _grid_comparisons(self.family, method, self.points, sims,
                                  [c.seed for c in self.comparisons], self.cycles,
                                  dict(model_options or {}))
        return dataclasses.replace(self, method=method, comparisons=comps)

    def to_frame(self) -> Any:
        """The long table as a :class:`pandas.DataFrame` (needs pandas)."""
        return self.table().to_frame()


def _grid_comparisons(family: str, method: str, points: Sequence[Mapping[str, Any]],
                      sims: Sequence[Mapping[str, Any]], seeds: Sequence[Any], cycles: int,
                      options: Mapping[str, Any]) -> tuple[Comparison, ...]:
    """Solve the model on every point (one vectorised call where possible) and pair it up."""
    cls = _params_class(family)
    plist = [cls(**p) for p in points]
    model: dict[str, np.ndarray] | None = None
    try:
        model = _model_values(family, _stack(family, points), method, options)
        if any(np.size(v) not in (1, len(points)) for v in model.values()):
            model = None
    except (ValueError, TypeError):
        model = None
    out = []
    for i, (p, s, sd) in enumerate(zip(plist, sims, seeds)):
        if model is None:
            mv = _model_values(family, p, method, options)
            rows = _rows(family, mv, s, None)
        else:
            rows = _rows(family, model, s, i)
        out.append(Comparison(family=family, method=method, params=p, rows=rows,
                              simulated=dict(s), seed=sd, cycles=cycles))
    return tuple(out)


def _stack(family: str, points: Sequence[Mapping[str, Any]]) -> Any:
    """One parameter object with array fields holding every point (for vectorised models)."""
    cls = _params_class(family)
    names = list(points[0])
    kw: dict[str, Any] = {}
    for n in names:
        vals = [p[n] for p in points]
        if all(v == vals[0] for v in vals) or any(v is None or isinstance(v, (str, bool))
                                                  for v in vals):
            if not all(v == vals[0] for v in vals):
                raise ValueError(f"cannot stack differing non-numeric field {n!r}")
            kw[n] = vals[0]
        else:
            kw[n] = np.asarray(vals)
    return cls(**kw)


def _expand(params: Any, grid: Mapping[str, Any] | None) -> list[Any]:
    if isinstance(params, (list, tuple)):
        if grid is not None:
            raise ValueError("give either a list of parameter objects or base params and a grid")
        if not params:
            raise ValueError("params: the list of points is empty")
        return list(params)
    if grid is None:
        raise ValueError("compare_grid needs a grid (name -> values) with base params, "
                         "or a list of parameter objects")
    from mva.table import grid_points
    pts = grid_points(grid)
    names = list(pts)
    n = len(pts[names[0]])
    out = []
    for i in range(n):
        ch = {k: pts[k][i].item() if hasattr(pts[k][i], "item") else pts[k][i] for k in names}
        if hasattr(params, "replace"):
            out.append(params.replace(**ch))
        else:
            out.append(dataclasses.replace(params, **ch))
    return out


def compare_grid(params: Any, grid: Mapping[str, Any] | None = None, *,
                 method: str | None = None, cycles: int = 50_000, warmup: int | None = None,
                 batches: int = 20, seed: int = 0, executor: Any = None,
                 workers: int | None = None, store: Any = None, progress: bool = True,
                 model_options: Mapping[str, Any] | None = None,
                 title: str = "") -> GridComparison:
    """Run a model and the simulator over a grid of parameter points.

    Parameters
    ----------
    params : parameter object or list of parameter objects
        Base parameters (with ``grid``) or an explicit list of points (all
        of one family).
    grid : mapping, optional
        Parameter name -> values; the cartesian product (first name slowest)
        of changes to ``params``.
    method : str, optional
        As for :func:`compare`.
    cycles, warmup, batches
        Simulator settings per point.
    seed : int
        Base seed; point ``p`` is simulated with
        :func:`mva.sweeps.point_seed` ``(seed, p)`` (``p`` includes the
        variant), so results do not depend on the executor.
    executor, workers, store, progress
        Passed to :func:`mva.sweep` (``executor=None``: a local process pool
        when more than one point is pending; ``"serial"`` runs in this
        process; a ``store`` file makes the simulations resumable).
    model_options : mapping, optional
        Extra keyword arguments of the model's ``solve``.
    title : str
        Caption of the tables.

    Returns
    -------
    GridComparison

    Examples
    --------
    >>> from models.lopc import LoPCParams
    >>> g = compare_grid(LoPCParams(P=2, W=500, o=50, L=10), {"P": [2, 4]}, cycles=2000,
    ...                  executor="serial", progress=False)
    >>> len(g), g.varying
    (2, ('P',))
    >>> g.summary().columns[:3]
    ('measure', 'points', 'mean_|rel|_%')
    """
    from mva.sweeps import sweep

    plist = _expand(params, grid)
    fams = {family_of(p) for p in plist}
    if len(fams) != 1:
        raise ValueError(f"params: every point must be of one family; got {sorted(fams)}")
    family = fams.pop()
    method = _check_method(family, method)
    cycles = int(check_integer("cycles", cycles, minimum=1))
    points = [_fields_of(p) for p in plist]
    variant = method if family in _VARIANT_ARG else None
    sweep_points = [dict(p, variant=variant) for p in points]
    varying = tuple(k for k in points[0] if len({repr(p[k]) for p in points}) > 1)
    if grid is not None:
        varying = tuple(dict.fromkeys([*grid, *varying]))
        if family == "ini":
            varying = tuple(k for k in varying if k != "N" or "N" in grid)
    t = sweep(simulate_measures, sweep_points, executor=executor, workers=workers, store=store,
              progress=progress, vectorized=False, seed=seed,
              fixed={"family": family, "cycles": cycles, "warmup": warmup, "batches": batches},
              title=title or None)
    sim_cols = [c for c in t.columns if c not in sweep_points[0] and c != "seed"]
    sims = [{c: t[c][i] for c in sim_cols} for i in range(len(t))]
    seeds = [int(s) for s in t["seed"]]
    comps = _grid_comparisons(family, method, points, sims, seeds, cycles,
                              dict(model_options or {}))
    return GridComparison(family=family, method=method, varying=varying, points=tuple(points),
                          comparisons=comps, seed=seed, cycles=cycles, title=title)
