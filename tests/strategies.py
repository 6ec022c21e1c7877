"""Hypothesis strategies shared by the whole test suite.

Each area has its own section; append new strategies to the section of the
package they exercise.
"""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

__all__: list[str] = []

# --------------------------------------------------------------------------
# general
# --------------------------------------------------------------------------

#: a service time / demand in cycles, bounded away from zero and overflow
times = st.floats(min_value=1e-3, max_value=1e4, allow_nan=False, allow_infinity=False)

#: a non-negative latency / think time
latencies = st.floats(min_value=0.0, max_value=1e4, allow_nan=False, allow_infinity=False)

#: a squared coefficient of variation (0 deterministic, 1 exponential)
cs2s = st.floats(min_value=0.0, max_value=4.0, allow_nan=False, allow_infinity=False)

__all__ += ["times", "latencies", "cs2s"]

# --------------------------------------------------------------------------
# mva
# --------------------------------------------------------------------------

#: a positive service demand (time units per cycle)
demands = st.floats(min_value=0.05, max_value=10.0, allow_nan=False, allow_infinity=False)


@st.composite
def closed_networks(draw, *, max_classes: int = 3, max_stations: int = 4, max_population: int = 5,
                    kinds: tuple[str, ...] = ("queue", "delay"), max_servers: int = 4,
                    chains: bool = False, think: bool = True, priorities: bool = False,
                    cs2: bool = False, max_lattice: int = 400):
    """Random :class:`mva.ClosedNetwork` small enough for exact MVA.

    ``kinds`` are the station kinds to draw from (``"multi"`` draws 2..max_servers
    servers); ``chains`` groups classes into fewer chains; ``priorities`` and
    ``cs2`` add BKT priorities and FCFS variability.  The population lattice
    ``prod(N_r + 1)`` stays at most ``max_lattice``.
    """
    from mva.network import ClosedNetwork

    C = draw(st.integers(1, max_classes))
    K = draw(st.integers(1, max_stations))
    D = np.array([[draw(st.one_of(st.just(0.0), demands, demands)) for _ in range(K)]
                  for _ in range(C)])
    kd = tuple(draw(st.sampled_from(kinds)) for _ in range(K))
    servers = [draw(st.integers(2, max_servers)) if k == "multi" else 1 for k in kd]
    for c in range(C):
        if D[c].max() == 0.0:
            D[c, draw(st.integers(0, K - 1))] = draw(demands)
    if chains and C > 1:
        R = draw(st.integers(1, C))
        ch = np.array([c % R for c in range(C)])
    else:
        R = C
        ch = np.arange(C)
    pops = []
    lattice = 1
    for r in range(R):
        hi = max(0, min(max_population, max_lattice // lattice - 1))
        n = draw(st.integers(0, hi))
        pops.append(n)
        lattice *= n + 1
    if max(pops) == 0:
        pops[draw(st.integers(0, R - 1))] = 1
    if priorities:
        # a high-priority chain that never leaves a station would starve the others there
        Z = [draw(st.floats(0.5, 20.0)) for _ in range(R)]
    else:
        Z = [draw(st.one_of(st.just(0.0), latencies.filter(lambda z: z <= 20.0))) if think else 0.0
             for _ in range(R)]
    kw = {}
    if priorities:
        kw["priorities"] = [draw(st.integers(0, 2)) for _ in range(C)]
    if cs2:
        kw["cs2"] = [draw(cs2s) for _ in range(K)]
    return ClosedNetwork(demands=D, populations=pops, think_times=Z, kinds=kd, servers=servers,
                         chains=ch, **kw)


def single_class_networks(**kw):
    """Random one-class networks (see :func:`closed_networks`)."""
    return closed_networks(max_classes=1, **kw)


__all__ += ["demands", "closed_networks", "single_class_networks"]


# -- mva.markov / mva.phasetype / mva.qbd ----------------------------------

#: a transition rate of a Markov chain, spanning four orders of magnitude
rates = st.floats(min_value=1e-2, max_value=1e2, allow_nan=False, allow_infinity=False)


@st.composite
def generators(draw, *, max_states: int = 25):
    """A dense irreducible CTMC generator (rows sum to zero).

    Random sparse rates plus a random cycle through all states, so the chain
    is irreducible whatever else is drawn.
    """
    n = draw(st.integers(1, max_states))
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    density = draw(st.floats(0.0, 1.0))
    Q = np.where(rng.random((n, n)) < density, 10.0 ** rng.uniform(-2, 2, (n, n)), 0.0)
    perm = rng.permutation(n)
    for i in range(n):
        Q[perm[i], perm[(i + 1) % n]] += draw(rates)
    np.fill_diagonal(Q, 0.0)
    np.fill_diagonal(Q, -Q.sum(axis=1))
    return Q


@st.composite
def sparse_systems(draw, *, max_n: int = 30, duplicates: bool = False):
    """``(data, rows, cols, b, n)``: a non-singular sparse system as unordered triplets.

    Diagonally dominant (so non-singular) with off-diagonal entries over four
    orders of magnitude, some explicit zeros, the triplets shuffled; with
    ``duplicates`` some ``(row, col)`` pairs appear twice (to be summed).
    """
    n = draw(st.integers(1, max_n))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    density = draw(st.floats(0.0, 0.5))
    mask = rng.random((n, n)) < density
    np.fill_diagonal(mask, False)
    rows, cols = np.nonzero(mask)
    off = np.where(rng.random(len(rows)) < 0.1, 0.0, 10.0 ** rng.uniform(-2, 2, len(rows)))
    off *= rng.choice([-1.0, 1.0], len(rows))
    dominance = np.bincount(rows, weights=np.abs(off), minlength=n)
    diag = (dominance + 10.0 ** rng.uniform(-1, 1, n)) * rng.choice([-1.0, 1.0], n)
    data = np.concatenate([off, diag])
    r = np.concatenate([rows, np.arange(n)])
    c = np.concatenate([cols, np.arange(n)])
    if duplicates:
        k = draw(st.integers(1, n))
        pick = rng.integers(0, len(data), k)
        half = data[pick] / 2.0
        data[pick] -= half
        data, r, c = (np.concatenate([data, half]), np.concatenate([r, r[pick]]),
                      np.concatenate([c, c[pick]]))
    perm = rng.permutation(len(data))
    b = rng.uniform(-1.0, 1.0, n)
    return data[perm], r[perm].astype(np.int64), c[perm].astype(np.int64), b, n


@st.composite
def mmck_queues(draw, *, max_servers: int = 5, max_extra: int = 30):
    """``(lambda, mu, c, K)`` of an M/M/c/K queue (any load: K keeps it finite)."""
    lam = draw(st.floats(0.05, 5.0))
    mu = draw(st.floats(0.1, 5.0))
    c = draw(st.integers(1, max_servers))
    K = c + draw(st.integers(0, max_extra))
    return lam, mu, c, K


def product_form_networks(**kw):
    """Small multi-class closed networks of PS queues and delays (product form).

    Small enough to be solved as a CTMC in a test (population lattice <= 20).
    Think times below 1e-3 are set to zero (a CTMC needs finite rates).
    """
    from dataclasses import replace

    opts = dict(max_classes=2, max_stations=3, max_population=3, kinds=("queue", "delay"),
                think=True, max_lattice=20)
    opts.update(kw)
    return closed_networks(**opts).map(
        lambda net: replace(net, think_times=np.where(net.think_times < 1e-3, 0.0,
                                                      net.think_times)))


#: a (mean, cs2) target of a phase-type fit, cs2 from near-deterministic to very variable
ph_targets = st.tuples(st.floats(1e-3, 1e4),
                       st.one_of(st.floats(0.0, 1.0), st.floats(1.0, 50.0),
                                 st.sampled_from([0.0, 0.5, 1.0, 0.25, 1 / 3])))

__all__ += ["rates", "generators", "mmck_queues", "product_form_networks", "ph_targets",
            "sparse_systems"]

# --------------------------------------------------------------------------
# models
# --------------------------------------------------------------------------

#: the public parameter dataclasses of :mod:`models` (every field declared with
#: :func:`mva.params.param`), as the package lists them
from models import PARAMETER_CLASSES  # noqa: E402


def parameter_class(spec: str):
    """``"module:Class"`` -> the class."""
    import importlib

    module, _, name = spec.partition(":")
    return getattr(importlib.import_module(module), name)


def valid_values(spec):
    """Values inside the declared *validity* range of a :class:`mva.params.Param`."""
    if spec.kind == "bool":
        return st.booleans()
    if spec.kind == "choice":
        return st.sampled_from(spec.choices)
    lo, hi = spec.valid
    if spec.kind == "int":
        return st.integers(int(np.ceil(lo)), int(np.floor(hi)))
    return st.floats(min_value=lo, max_value=hi, allow_nan=False, allow_infinity=False)


def invalid_values(spec):
    """Values outside the declared *legal* domain (must be rejected with a ValueError)."""
    if spec.kind == "bool":
        return st.sampled_from([0, 1, "yes", None])
    if spec.kind == "choice":
        return st.text(min_size=1, max_size=8).filter(lambda t: t not in spec.choices)
    bad = [st.just(float("nan")), st.just("text")]
    if not spec.allow_inf:
        bad.append(st.just(float("inf")))
    if spec.low is not None:
        below = st.floats(max_value=spec.low, allow_nan=False, allow_infinity=False,
                          exclude_max=not spec.low_open)
        if spec.kind == "int":
            below = st.integers(max_value=int(np.ceil(spec.low)) - (0 if spec.low_open else 1))
        bad.append(below)
    if spec.high is not None:
        above = st.floats(min_value=spec.high, allow_nan=False, allow_infinity=False,
                          exclude_min=not spec.high_open)
        if spec.kind == "int":
            above = st.integers(min_value=int(np.floor(spec.high)) + (0 if spec.high_open else 1))
        bad.append(above)
    if spec.kind == "int":
        bad.append(st.floats(0.1, 0.9).map(lambda f: (spec.low or 0) + 1 + f))
    return st.one_of(*bad)


@st.composite
def parameter_objects(draw, cls, *, fixed=None):
    """A parameter object of ``cls`` with every field that has a validity range drawn in it.

    Other fields keep their defaults (or take ``fixed``).
    """
    from mva.params import declarations

    kw = dict(fixed or {})
    for name, spec in declarations(cls).items():
        if name in kw or spec.valid is None:
            continue
        kw[name] = draw(valid_values(spec))
    return cls(**kw)


__all__ += ["PARAMETER_CLASSES", "parameter_class", "valid_values", "invalid_values",
            "parameter_objects"]


@st.composite
def accuracy_maps(draw, family: str = "pdq", variant: str = "shared", method: str = "keyed",
                  measure: str = "R"):
    """A small accuracy map (:mod:`models.accuracy` schema): random increasing edges per axis
    (the last one possibly ``None`` = inf), a bound grid with some empty (``None``) bins and an
    overall bound."""
    def edges():
        n = draw(st.integers(1, 4))
        steps = draw(st.lists(st.floats(0.01, 10.0), min_size=n, max_size=n))
        e = list(np.cumsum([draw(st.floats(0.0, 1.0))] + steps))
        if draw(st.booleans()):
            e[-1] = None
        return [float(x) if x is not None else None for x in e]

    e1, e2 = edges(), edges()
    cell = st.one_of(st.none(), st.floats(0.0, 1.0))
    grid = [[draw(cell) for _ in range(len(e2) - 1)] for _ in range(len(e1) - 1)]
    overall = draw(st.floats(0.0, 1.0))
    axes = {"pdq": ("load", "keys_per_pp"), "policy": ("U", "O_int_ratio"),
            "lopc": ("U_h", "cs2"), "ini": ("U_o", "cs2_O")}[family]
    return {"version": 2, "families": {family: {
        "axes": [{"name": axes[0], "edges": e1}, {"name": axes[1], "edges": e2}],
        "variants": {variant: {"methods": {method: {"measures": {measure: {
            "overall": {"bound": overall}, "bins": {"bound": grid}}}}}}}}}}


__all__ += ["accuracy_maps"]

# --------------------------------------------------------------------------
# validation
# --------------------------------------------------------------------------


@st.composite
def sim_machines(draw, *, max_nodes: int = 4):
    """A small random simulator ``(Machine, Workload)``: any mix of multiplexed, dedicated,
    PDQ and spin-lock nodes, overheads, send handlers, delays, latency distributions and keys;
    the workload is sometimes a tuple with compute-only (idle) threads beside thread 0."""
    from validation.generators import Workload
    from validation.sim.dists import Dist
    from validation.sim.machine import Machine, NodeSpec

    def dist(mean_max: float, zero: bool = True):
        fam = draw(st.sampled_from(["deterministic", "exponential", "erlang", "hyperexponential"]))
        mean = draw(st.floats(0.0 if zero else 1.0, mean_max))
        if fam == "erlang":
            return Dist(family="erlang", mean=mean, k=draw(st.integers(2, 4)))
        if fam == "hyperexponential":
            return Dist(family="hyperexponential", mean=mean, cs2=draw(st.floats(1.5, 6.0)))
        return Dist(family=fam, mean=mean)

    n = draw(st.integers(2, max_nodes))
    nodes = []
    for i in range(n):
        protocol = draw(st.integers(0, 2))
        compute = draw(st.integers(1 if protocol == 0 or i == 0 else 0, 3))
        multiplexed = protocol == 0
        dispatch = draw(st.sampled_from(["fifo", "pdq"] if multiplexed
                                        else ["fifo", "pdq", "spin"]))
        nodes.append(NodeSpec(
            compute=compute, protocol=protocol, dispatch=dispatch,
            lock=dist(60.0) if dispatch == "spin" else 0.0,
            interrupt=dist(50.0) if multiplexed else 0.0,
            direct=dist(20.0) if multiplexed and draw(st.booleans()) else 0.0,
            indirect=dist(20.0) if multiplexed and draw(st.booleans()) else 0.0,
            send=dist(30.0) if draw(st.booleans()) else None,
            extra_delay=dist(40.0) if draw(st.booleans()) else 0.0))
    clustered = n % 2 == 0 and draw(st.booleans())
    kw = {}
    if clustered:
        kw = dict(cluster_size=n // 2, inis=draw(st.integers(1, 2)),
                  ini_dispatch=draw(st.sampled_from(["static", "round_robin", "shared"])),
                  ini_cost=dist(40.0), intra_latency=dist(10.0))
    m = Machine(nodes=tuple(nodes), latency=dist(60.0), **kw)
    keyed = draw(st.booleans())
    w = Workload(burst=dist(2000.0, zero=False), request_cost=dist(80.0),
                 reply_cost=dist(80.0),
                 keys=draw(st.integers(1, 4)) if keyed else None,
                 p_sequential=draw(st.floats(0.0, 0.2)) if keyed else 0.0,
                 p_nosync=draw(st.floats(0.0, 0.3)) if keyed else 0.0)
    if m.n_threads > 1 and draw(st.booleans()):
        # some compute-only threads (bursts and idle periods), the others send requests
        idle = Workload(burst=dist(500.0), request_cost=0.0, reply_cost=None,
                        idle=dist(500.0, zero=False))
        return m, tuple(idle if i > 0 and draw(st.booleans()) else w
                        for i in range(m.n_threads))
    return m, w


__all__ += ["sim_machines"]

# --------------------------------------------------------------------------
# command line (models.cli and the ``simulate`` / ``validate`` / ``sweep`` commands)
# --------------------------------------------------------------------------

#: values no numeric option may accept silently: non-finite, negative, empty,
#: huge, text and malformed lists / ranges
BAD_TOKENS = ("nan", "inf", "-inf", "-1", "0", "", " ", "1e308", "-1e308", "abc", "1,,2", ",",
              "3:1", "1:2:0", "1:nan", "1:2:3:4", "0x10", "1e-320", "2.5", "-0")


def cli_tokens(spec=None, *, max_int: int = 8):
    """One option value for the command line, as text.

    With a :class:`mva.params.Param` ``spec``: mostly values inside the
    declared validity range (integers capped at ``max_int`` above the lower
    end so that one command line costs milliseconds), sometimes a short comma
    list or range of them, sometimes a value outside the legal domain; always
    mixed with :data:`BAD_TOKENS`.
    """
    bad = st.sampled_from(BAD_TOKENS)
    if spec is None or spec.kind in ("bool", "text"):
        return st.one_of(bad, st.integers(-3, 20).map(str),
                         st.floats(-10, 1e4, allow_nan=False).map(repr))
    if spec.kind == "choice":
        return st.one_of(st.sampled_from([str(c) for c in spec.choices]), bad,
                         st.text("abcxyz-_", min_size=1, max_size=6))
    lo, hi = spec.valid if spec.valid is not None else (spec.low or 0, (spec.low or 0) + 10)
    if spec.kind == "int":
        lo_i = int(np.ceil(lo))
        one = st.integers(lo_i, max(lo_i, min(int(np.floor(hi)), lo_i + max_int))).map(str)
    else:
        one = st.floats(lo, hi, allow_nan=False, allow_infinity=False).map(lambda v: f"{v:.6g}")
    many = st.lists(one, min_size=1, max_size=3).map(",".join)
    outside = invalid_values(spec).map(lambda v: v if isinstance(v, str) else repr(v))
    return st.one_of(one, one, one, one, many, many, outside, bad)


__all__ += ["BAD_TOKENS", "cli_tokens"]
