"""LoPC: contention in request/reply message passing on one level.

``P`` processors each run one thread that computes for ``W`` cycles, sends a
request to another processor chosen uniformly at random and blocks until the
reply arrives.  Message handlers cost ``o`` cycles and preempt computation;
the network adds latency ``L`` each way.  LoPC (Frank, Agarwal and Vernon,
PPoPP 1997) predicts the round-trip time ``R`` and its contention cost
``C = R - (W + 2L + 2o)`` with mean-value equations; the same machine is a
closed multichain queueing network that the :mod:`mva` engine solves.

* :func:`solve` -- the homogeneous all-to-all model (``"lopc"``: the
  published equations, reduced with SymPy to one equation in ``R``;
  ``"mva"``/``"exact"``/``"linearizer"``/``"schweitzer"``: the queueing
  network with preemptive-priority handlers).
* :func:`solve_client_server` and :func:`optimal_servers` -- ``S`` of the
  ``P`` processors only serve requests; the other ``P - S`` compute and send.

References
----------
* M. I. Frank, A. Agarwal and M. K. Vernon, "LoPC: Modeling Contention in
  Parallel Algorithms", PPoPP 1997.
* X. Jiang, MS thesis, MIT 1997, chapter 6 (the same equations, one level).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass, fields, replace
from typing import Any, Mapping

import numpy as np

from mva._chunks import evaluate_chunked
from mva.params import param, validate_fields
from mva.results import ResultMixin, with_inputs

from .accuracy import attach as _attach_accuracy
from mva._validate import (check_choice, check_integer, check_kwargs, check_nonnegative,
                           scalar_or_array)

__all__ = [
    "LoPCParams",
    "LoPCResult",
    "solve",
    "METHODS",
    "EXACT_MAX_P",
    "ENGINE_MAX_P",
    "AUTO_METHOD",
    "WHOLE_MAX_P",
    "CORRECT_MAX_P",
    "CORRECT_BETA",
    "CORRECT_MIN_U",
    "ENGINE_TOL",
    "lopc_system",
    "reduced_equation",
    "ClientServerResult",
    "solve_client_server",
    "OptimalServers",
    "optimal_servers",
    "register_cli",
]

#: methods accepted by :func:`solve`
METHODS = ("auto", "node", "lopc", "mva", "exact", "linearizer", "schweitzer")

#: what ``method="auto"`` runs (the most accurate method measured against the
#: simulator, ``benchmarks/accuracy_lopc_ini.py``) on grids of at most
#: :data:`models._node.AUTO_GRID_LIMIT` points; larger grids get ``"lopc"``
AUTO_METHOD = "node"

#: Erlang stages of the constant latency in the whole-machine chain
#: (:func:`models._node.solve_full`), by machine size.  P = 2: k = 16 (648 to
#: 1,033 lumped states, direct sparse LU, 1-2 ms a solve warm; the structures
#: shipped, :data:`models._node.FULL_SHIPPED`).  A message sent behind another
#: on a channel rides on its clock (:data:`models._node.SHARED_MIN_STAGES`),
#: so two threads with ``W << o`` keep the simulator's convoy (a reply and a
#: request sent together arrive together); with that, max |error| of ``R`` on
#: fresh P = 2 designs (seeds 41 / 43 / 47, 201 points) falls steadily with k:
#: 4.9 / 6.0 / 4.9% at k = 2, 2.4 / 2.7 / 2.8% at 8, 1.8 / 1.7 / 1.7% at 16,
#: 1.3 / 1.2 / 1.3% at 32 (with independent clocks per message it was 12.7 /
#: 14.4 / 15.0% at 16 and barely moved with k).  P = 3: k = 2 had
#: 11,700 states (independent clocks) and took 12 s, so k = 1 (no shared clock: the convoy is not
#: represented there).
LATENCY_STAGES = {2: 16, 3: 1}

#: largest machine that ``method="node"`` solves as one whole-machine chain
#: (:func:`models._node.solve_full`, the processors' symmetry lumped, one
#: exponential latency stage, channels not ordered: ``fifo=False``) when
#: the handler is exponential or hyperexponential (``cs2 >= 1``, or a
#: ``cs2`` that the simulator rounds to exponential).  Lumped states at
#: ``P = 4``: 242 / 869 (exponential / two-phase handler, 1-10 ms a solve by
#: sparse LU; the structures shipped precomputed,
#: :data:`models._node.FULL_SHIPPED`); ``P = 5`` has 894 /
#: 4,669 (20-40 ms by the power iteration of
#: :func:`models._node._stationary_power`, but about 1 s to enumerate in
#: Python), and was no more accurate than the corrected node chain below
#: (16 simulated ``P = 5`` points: mean / max \|error\| of ``R`` 0.51 / 1.24%
#: whole, 0.53 / 1.33% corrected).  At ``P <= 3`` every handler gets the
#: whole-machine chain (:data:`models._node.FULL_MAX_P`, ordered channels).
#: With a variable handler the node chain alone is 4-11% low on
#: handler-bound points of ``P = 4, 5`` (the other threads' states are
#: correlated with the node's own).
WHOLE_MAX_P = 4

#: ``method="node"`` on ``4 <= P <= CORRECT_MAX_P`` where the whole machine
#: is not solved, with handlers busy at least :data:`CORRECT_MIN_U` of the
#: time (``2o/R`` of the node chain): the node chain's residences are
#: corrected by the node chain's error on the whole machine of
#: ``p = min(P, WHOLE_MAX_P)`` processors (with this handler if it is
#: exponential or hyperexponential, else with the exponential one), scaled
#: by ``w = ((p - 1)/(P - 1))**CORRECT_BETA``:
#: ``X(P) = X_node(P) + w (X_whole(p) - X_node(p))`` for ``X`` in ``R_w,
#: R_p, R_q, R_y`` (``R`` is their sum plus ``2L``).  The node chain's
#: error decays with the machine size like ``(P - 1)**-beta``; ``beta`` was
#: chosen on the seed-31 design (193 points with ``P`` 6-64, simulated; mean
#: / p95 / max \|error\| of ``R`` 0.98 / 4.0 / 6.8% uncorrected, 0.50 / 1.30 /
#: 1.76% corrected; 0.6-0.8 within 0.04 of the mean) and checked on the
#: held-out seed-2026 references and a fresh seed-41 design
#: (``docs/models/lopc.rst``).  Below ``CORRECT_MIN_U`` the correction was
#: under 0.1% on that design, and the two extra chains are skipped.
CORRECT_MAX_P = 64
CORRECT_BETA = 0.7
CORRECT_MIN_U = 0.1

#: ``method="linearizer"`` and ``"schweitzer"`` run the :mod:`mva` engine on the
#: full network of ``P`` chains; they are refused above this many processors
#: (their cost grows as ``P**3`` or faster; ``"exact"`` costs ``O(P)`` at any ``P``)
ENGINE_MAX_P = 64

#: kept for compatibility: ``"exact"`` (and ``"mva"``) no longer have a limit
#: on ``P``, the symmetric recursion being exact MVA of the same network
EXACT_MAX_P = 1024

#: default ``tol`` passed to the engine's iterative solvers (tighter than their
#: own ``1e-8`` so that the network methods agree with the closed-form methods
#: to many digits in the tests and tables)
ENGINE_TOL = 1e-11


def _engine(method: str) -> Any:
    """The :mod:`mva` solver function for a method name."""
    import mva

    return getattr(mva, {"exact": "exact_mva"}.get(method, method))


# ---------------------------------------------------------------------------
# parameters and results
# ---------------------------------------------------------------------------

@dataclass(frozen=True, kw_only=True)
class LoPCParams:
    """Parameters of the LoPC all-to-all model.

    Every numeric field may be a NumPy array; fields broadcast together.

    Parameters
    ----------
    P : int or array
        Number of processors (integer >= 2).
    W : float or array
        Mean compute time between blocking requests (cycles), >= 0.
    o : float or array
        Mean handler occupancy of a request or a reply (cycles), >= 0.
    L : float or array
        One-way network latency (cycles), >= 0.
    cs2 : float or array, default 1
        Squared coefficient of variation of the handler service time (1
        exponential, 0 deterministic), in [0, 100]: beyond an SCV of 100 the
        methods' service-time models part ways and the fixed points slow down.

    Examples
    --------
    >>> LoPCParams(P=16, W=1000, o=100, L=50).contention_free
    1300.0
    """

    P: Any = param(symbol="P", meaning="processors (one thread each)", unit="", kind="int",
                   low=2, valid=(2, 1024), scale="log", typical=16)
    W: Any = param(symbol="W", meaning="mean compute time between blocking requests",
                   unit="cycles", low=0, valid=(0, 1e5), scale="log", typical=1000.0)
    o: Any = param(symbol="o", meaning="mean handler occupancy of a request or a reply",
                   unit="cycles", low=0, valid=(1, 5000), scale="log", typical=100.0)
    L: Any = param(symbol="L", meaning="one-way network latency", unit="cycles", low=0,
                   valid=(0, 5000), scale="log", typical=50.0)
    cs2: Any = param(symbol="cs2", meaning="squared coefficient of variation (SCV) of the "
                     "handler time", unit="", low=0, high=10, valid=(0, 10), default=1.0)

    def __post_init__(self) -> None:
        v = validate_fields(self)
        P, W, o, L, c = v["P"], v["W"], v["o"], v["L"], v["cs2"]
        try:
            np.broadcast_shapes(P.shape, W.shape, o.shape, L.shape, c.shape)
        except ValueError:
            raise ValueError("LoPCParams: array parameters must broadcast together; got shapes "
                             f"P={P.shape}, W={W.shape}, o={o.shape}, L={L.shape}, "
                             f"cs2={c.shape}") from None
        with np.errstate(over="ignore"):
            r0 = W + 2 * L + 2 * o
        if np.any(r0 <= 0):
            raise ValueError("W + 2L + 2o (the contention-free round trip) must be > 0; got 0")
        if not np.all(np.isfinite(r0)):
            raise ValueError("W + 2L + 2o (the contention-free round trip) must be a finite "
                             f"number of cycles; got {float(np.max(r0))} (W, L and o too large)")
        object.__setattr__(self, "P", int(P) if P.ndim == 0 else P)

    @property
    def contention_free(self) -> Any:
        """``W + 2L + 2o``: the round trip with no contention (cycles)."""
        return scalar_or_array(np.asarray(self.W, float) + 2 * np.asarray(self.L, float)
                               + 2 * np.asarray(self.o, float))


@dataclass(frozen=True, kw_only=True)
class LoPCResult(ResultMixin):
    """Solution of the LoPC model.

    Attributes
    ----------
    R : float or array
        Mean round trip (compute + request + reply) of one thread (cycles).
    lam : float or array
        Request rate of one thread, ``1 / R`` (per cycle).
    R_w, R_q, R_y : float or array
        Residence of the compute phase (stretched by preempting handlers),
        of a request handler and of a reply handler (cycles).
    Q_q, Q_y : float or array
        Mean number of requests / replies at a processor.
    U_q, U_y : float or array
        Processor utilization by request / reply handlers.
    contention : float or array
        ``C = R - (W + 2L + 2o)`` (cycles).
    contention_free : float or array
        ``W + 2L + 2o`` (cycles).
    R_p : float or array
        Wait to resume after the reply handler, for the requests queued
        behind it (cycles).  Only ``method="node"`` separates it (the
        simulator's compute residence starts when the thread resumes); the
        mean-value methods count it in ``R_w`` and report 0.
        ``R = R_w + R_p + 2L + R_q + R_y``.
    saturated : bool
        Always ``False``: the system is closed (each thread has one request
        outstanding), so every configuration has a finite solution.
    method, converged, iterations, residual
        Solver diagnostics.
    """

    R: Any
    lam: Any
    R_w: Any
    R_q: Any
    R_y: Any
    Q_q: Any
    Q_y: Any
    U_q: Any
    U_y: Any
    contention: Any
    contention_free: Any
    R_p: Any = 0.0
    saturated: bool = False
    method: str = "lopc"
    converged: Any = True
    iterations: int = 0
    residual: float = 0.0

    # -- the shared result vocabulary (docs/guide/glossary.rst) -------------
    @property
    def cycle_time(self) -> Any:
        """Alias of ``R``: a thread's time from one reply to the next (compute included), cycles."""
        return self.R

    @property
    def round_trip(self) -> Any:
        """``R - R_w``: request issued to reply handled (compute excluded), cycles."""
        return scalar_or_array(np.asarray(self.R, float) - np.asarray(self.R_w, float))


# ---------------------------------------------------------------------------
# symbolic system (method "lopc")
# ---------------------------------------------------------------------------

def _symbols() -> dict[str, Any]:
    import sympy as sp

    names = "R lambda Q_q Q_y R_q R_y R_w U_q W o L c".split()
    return dict(zip(names, sp.symbols(names, positive=True)))


@functools.lru_cache(maxsize=None)
def lopc_system(general: bool = False) -> Any:
    """The LoPC equations as a :class:`mva.symbolic.EquationSystem`.

    Parameters
    ----------
    general : bool, default False
        ``True`` adds the residual-life correction for handler service with
        squared coefficient of variation ``c`` (``c = 1`` gives the
        published equations).

    Notes
    -----
    .. math::

        R &= R_w + 2L + R_q + R_y, \\quad \\lambda = 1/R, \\quad
        Q_q = \\lambda R_q, \\quad Q_y = \\lambda R_y, \\\\
        R_q &= o\\left(1 + Q_q + Q_y + (U_q + U_y)\\tfrac{c - 1}{2}\\right), \\quad
        R_y = o\\left(1 + Q_q + U_q\\tfrac{c - 1}{2}\\right), \\\\
        R_w &= \\frac{W + o Q_q + o U_q (c - 1)/2}{1 - U_q}, \\quad U_q = U_y = o/R.

    A request arriving at a processor waits for the requests and the reply
    there (handlers are served first-come first-served at the same,
    highest priority); a reply waits only for requests, because its own
    thread is blocked and no other reply can be present; the computation
    is preempted by requests (BKT).

    Examples
    --------
    >>> list(lopc_system().equations)
    ['R', 'lambda', 'Q_q', 'Q_y', 'R_q', 'R_y', 'R_w', 'U_q']
    """
    from mva.symbolic import equation_system

    y = _symbols()
    names = "R lambda Q_q Q_y R_q R_y R_w U_q W o L c".split()
    R, lam, Qq, Qy, Rq, Ry, Rw, Uq, W, o, L, c = (y[k] for k in names)
    if not general:
        c = 1
    half = (c - 1) / 2 if general else 0
    eqs = {
        "R": (R, Rw + 2 * L + Rq + Ry),
        "lambda": (lam, 1 / R),
        "Q_q": (Qq, lam * Rq),
        "Q_y": (Qy, lam * Ry),
        "R_q": (Rq, o * (1 + Qq + Qy + 2 * Uq * half)),
        "R_y": (Ry, o * (1 + Qq + Uq * half)),
        "R_w": (Rw, (W + o * Qq + o * Uq * half) / (1 - Uq)),
        "U_q": (Uq, o / R),
    }
    return equation_system(eqs, [R, lam, Qq, Qy, Rq, Ry, Rw, Uq])


@functools.lru_cache(maxsize=None)
def reduced_equation(general: bool = False) -> Any:
    """The LoPC system reduced to one equation in ``R`` (:func:`mva.symbolic.eliminate`).

    Every other unknown is eliminated through its own defining equation, so
    ``solutions`` evaluates the right-hand sides of the system at any ``R``
    and ``residual`` is ``R - (R_w + 2L + R_q + R_y)``.

    Examples
    --------
    >>> from mva.symbolic import clear_denominators
    >>> e = reduced_equation()
    >>> num, den, coeffs = clear_denominators(e.residual, e.keep)
    >>> len(coeffs) - 1   # a quartic in R
    4
    """
    from mva.symbolic import eliminate

    y = _symbols()
    names = ["lambda", "U_q", "Q_q", "Q_y", "R_q", "R_y", "R_w"]
    return eliminate(lopc_system(general), y["R"], order=[y[n] for n in names],
                     using={y[n]: n for n in names})


def _codegen_spec() -> dict[str, Any]:
    """What :mod:`models._codegen` compiles: ``{name: (args, exprs, horner_in)}`` and constants."""
    import sympy as sp

    from mva.symbolic import clear_denominators

    y = _symbols()
    R = y["R"]
    args = [y["W"], y["o"], y["L"], y["c"]]
    red = reduced_equation(general=True)
    num, den, coeffs = clear_denominators(red.residual, R)
    lead = sp.Poly(sp.expand(den), R).LC()      # sign of den for large R
    names = ["R_q", "R_y", "R_w"]
    return {"functions": {"coeffs": (args, coeffs, None), "den_sign": (args, lead, None),
                          "back": ([R, *args], [red.solutions[y[n]] for n in names], R)},
            "constants": {"names": names}}


def _compiled_sympy() -> dict[str, Any]:
    """The functions of :func:`_compiled` lambdified from SymPy now (the reference)."""
    from models._codegen import lambdified

    return lambdified("lopc")


@functools.lru_cache(maxsize=None)
def _compiled() -> dict[str, Any]:
    """Coefficient and back-substitution functions, shipped in :mod:`models._generated.lopc`."""
    from models._generated import lopc as gen

    return {"coeffs": gen.coeffs, "den_sign": gen.den_sign, "back": gen.back,
            "names": list(gen.NAMES)}


def _solve_lopc(W: np.ndarray, o: np.ndarray, L: np.ndarray, c: np.ndarray, *, tol: float,
                max_iter: int, on_fail: str) -> dict[str, Any]:
    """Vectorised root of the reduced LoPC equation in ``v = R / R0``."""
    from mva.symbolic import horner, polynomial_root

    comp = _compiled()
    args = (W, o, L, c)
    coeffs = [np.asarray(v, dtype=float) for v in comp["coeffs"](*args)]
    sign = np.sign(np.asarray(comp["den_sign"](*args), dtype=float))
    r0 = W + 2 * L + 2 * o
    deg = len(coeffs) - 1
    # residual R - RHS(R) = num/den, increasing in R on [R0, inf); den has the sign of
    # its leading coefficient there.  Scale R = v * R0.
    scaled = [sign * coeffs[k] * r0 ** (deg - k) for k in range(deg + 1)]
    scaled = [s / np.where(scaled[0] != 0, np.abs(scaled[0]), 1.0) for s in scaled] \
        if deg > 0 else scaled

    def f(v: np.ndarray) -> np.ndarray:
        return horner(scaled, v)

    # RHS(R) = R_w + 2L + R_q + R_y decreases in R, so from R0 <= R*:
    # R1 = RHS(R0) >= R*, R2 = RHS(R1) <= R*, R3 = RHS(R2) >= R*  (alternating bounds)
    def rhs(R: np.ndarray) -> np.ndarray:
        rq, ry, rw = (np.asarray(v, dtype=float) for v in comp["back"](R, *args))
        return rw + 2 * L + rq + ry

    R1 = np.maximum(rhs(r0), r0)
    R2 = np.maximum(rhs(R1), r0)
    R3 = np.minimum(np.maximum(rhs(R2), R2), R1)
    v_hi = R3 / r0 * (1.0 + 1e-12)
    shape = np.broadcast_shapes(np.shape(v_hi), *(np.shape(s) for s in scaled))
    v_lo = np.broadcast_to(R2 / r0 * (1.0 - 1e-12), shape)
    # without handlers (o = 0) the root is R0 itself; rounding may put f(v_lo) a hair
    # above zero, so step the lower end just below it (the poles lie below 0.81)
    v_lo = np.where(f(v_lo) > 0, np.minimum(v_lo, 1.0) - 1e-9, v_lo)
    root = polynomial_root(scaled, v_lo, np.broadcast_to(v_hi, shape), newton_steps=10,
                           tol=tol, max_iter=max_iter, on_fail=on_fail)
    R = np.asarray(root.x, dtype=float) * r0
    rq, ry, rw = (np.broadcast_to(np.asarray(v, dtype=float), shape)
                  for v in comp["back"](R, *args))
    lam = 1.0 / R
    return {"R": R, "lam": lam, "R_q": rq, "R_y": ry, "R_w": rw, "Q_q": lam * rq,
            "Q_y": lam * ry, "U_q": o * lam, "U_y": o * lam, "converged": root.converged,
            "iterations": root.iterations, "residual": root.residual}


# ---------------------------------------------------------------------------
# queueing-network methods
# ---------------------------------------------------------------------------

def _lopc_network(P: int, W: float, o: float, L: float, c: float) -> Any:
    """The all-to-all machine as an :class:`mva.ClosedNetwork` (one chain per thread)."""
    import mva

    C = 3 * P
    visits = np.zeros((C, P))
    service = np.zeros((C, P))
    for t in range(P):
        visits[3 * t, t] = 1.0                 # compute at home (low priority)
        service[3 * t, t] = W
        others = [j for j in range(P) if j != t]
        visits[3 * t + 1, others] = 1.0 / (P - 1)   # request handler elsewhere
        service[3 * t + 1, others] = o
        visits[3 * t + 2, t] = 1.0             # reply handler at home
        service[3 * t + 2, t] = o
    return mva.ClosedNetwork(
        demands=visits * service, populations=np.ones(P, dtype=int),
        think_times=np.full(P, 2.0 * L), kinds=("queue",) * P, servers=np.ones(P, dtype=int),
        cs2=np.full(P, float(c)), visits=visits, chains=np.repeat(np.arange(P), 3),
        priorities=np.tile([0, 1, 1], P), disciplines=("fcfs",) * P,
        station_names=tuple(f"proc{j}" for j in range(P)),
        class_names=tuple(f"{k}{t}" for t in range(P) for k in ("compute", "request", "reply")))


def _symmetric_exact(P: np.ndarray, W: np.ndarray, o: np.ndarray, L: np.ndarray,
                     c: np.ndarray) -> dict[str, np.ndarray]:
    """Exact MVA of the all-to-all network by symmetry, ``O(P)`` per point.

    The network is invariant under any permutation of (thread, processor)
    pairs, so every population of ``m`` threads (a subset of the ``P``) has
    the same solution up to relabelling.  A subset has two kinds of
    processors -- those whose thread is present and those whose thread is
    absent -- and the exact MVA recursion over the ``2**P`` population
    vectors collapses to one over ``m = 1 .. P`` with five scalars per level
    (``Q`` of requests at either kind, ``Q`` of the reply, throughput).  It
    reproduces :func:`mva.exact_mva` on the full network to rounding
    (tested), including BKT priorities and the residual-life ``cs2`` term.
    """
    P, W, o, L, c = (np.asarray(a, dtype=float).ravel() for a in np.broadcast_arrays(P, W, o, L, c))
    ct = (c - 1.0) / 2.0
    n = P.size
    keys = ("R", "R_w", "R_q", "R_y", "Q_q", "Q_y")
    # floats on the scalar fast path, arrays on the vector path
    Qp: Any
    Qa: Any
    Qy: Any
    X: Any
    Pm1: Any
    Ua: Any
    Up: Any
    if n == 1:                                  # scalar fast path (plain floats)
        Pf, Wf, of, Lf, cf = float(P[0]), float(W[0]), float(o[0]), float(L[0]), float(ct[0])
        Qp = Qa = Qy = X = 0.0
        Pm1 = Pf - 1.0
        vals = (0.0,) * 6
        for m in range(1, int(Pf) + 1):
            Ua = (m - 1) * X * of / Pm1
            Up = max(m - 2, 0) * X * of / Pm1
            Rw = (Wf + of * Qa + cf * of * Ua) / (1.0 - Ua)
            ry = of * (1.0 + Qa) + cf * of * Ua
            rqp = of * (1.0 + Qp + Qy) + cf * of * (Up + X * of)
            Rq = ((m - 1) * rqp + (Pf - m) * ry) / Pm1
            R = Rw + 2.0 * Lf + Rq + ry
            X = 1.0 / R
            Qp, Qa, Qy = (m - 1) * X * rqp / Pm1, m * X * ry / Pm1, X * ry
            vals = (R, Rw, Rq, ry, X * Rq, X * ry)
        return {k: np.array([v]) for k, v in zip(keys, vals)}
    Qp, Qa, Qy, X = (np.zeros(n) for _ in range(4))
    out = {k: np.empty(n) for k in keys}
    Pm1 = P - 1.0
    for m in range(1, int(P.max()) + 1):
        act = P >= m
        Ua = (m - 1) * X * o / Pm1
        Up = max(m - 2, 0) * X * o / Pm1
        Rw = (W + o * Qa + ct * o * Ua) / (1.0 - Ua)
        ry = o * (1.0 + Qa) + ct * o * Ua
        rqp = o * (1.0 + Qp + Qy) + ct * o * (Up + X * o)
        Rq = ((m - 1) * rqp + (P - m) * ry) / Pm1
        R = Rw + 2.0 * L + Rq + ry
        Xn = 1.0 / R
        Qp = np.where(act, (m - 1) * Xn * rqp / Pm1, Qp)
        Qa = np.where(act, m * Xn * ry / Pm1, Qa)
        Qy = np.where(act, Xn * ry, Qy)
        X = np.where(act, Xn, X)
        done = P == m
        if done.any():
            for k, v in zip(keys, (R, Rw, Rq, ry, Xn * Rq, Xn * ry)):
                out[k][done] = v[done]
    return out


def _corrected(v: dict[str, Any], ref_node: dict[str, Any], ref_whole: dict[str, Any], w: float,
               L: float) -> dict[str, Any]:
    """The node chain's residences ``v`` plus ``w`` times its error on a whole machine.

    ``X = X_v + w (X_whole - X_node)`` for the residences (see
    :data:`CORRECT_BETA`); ``R`` is the corrected parts' sum plus ``2L`` and
    the queue lengths follow by Little's law (one thread per processor).
    """
    out = dict(v)
    for k in ("R_w", "R_p", "R_q", "R_y"):
        out[k] = max(float(v[k]) + w * (float(ref_whole[k]) - float(ref_node[k])), 0.0)
    out["R"] = out["R_w"] + out["R_p"] + out["R_q"] + out["R_y"] + 2.0 * L
    out["Q_q"] = out["R_q"] / out["R"]
    out["Q_y"] = out["R_y"] / out["R"]
    out["converged"] = bool(v["converged"] and ref_node["converged"])
    out["iterations"] = max(int(v["iterations"]), int(ref_node["iterations"]))
    out["residual"] = max(float(v["residual"]), float(ref_node["residual"]))
    out["corrected"] = True
    return out


def _solve_node(p: LoPCParams, *, tol: float, max_iter: int, on_fail: str) -> dict[str, Any]:
    """The node-level Markov chain (:mod:`models._node`) at every point of the grid."""
    from models._node import FULL_MAX_P, handler_ph, solve_full, solve_node

    arrs = np.broadcast_arrays(*(np.asarray(getattr(p, n), dtype=float)
                                 for n in ("P", "W", "o", "L", "cs2")))
    shape = arrs[0].shape
    flat = [a.ravel() for a in arrs]
    keys = ("R", "R_w", "R_p", "R_q", "R_y", "Q_q", "Q_y")
    out = {k: np.empty(flat[0].size) for k in keys}
    conv = np.ones(flat[0].size, dtype=bool)
    iters, resid = 0, 0.0
    cache: dict[tuple[float, ...], dict[str, Any]] = {}
    from mva.progress import progress

    n = flat[0].size     # a bar on a terminal once the chains take more than two seconds
    for i in progress(range(n), total=n, desc="lopc node chains", delay=2.0):
        P, W, o, L, c = key = tuple(float(a[i]) for a in flat)
        if key not in cache:
            if o == 0.0:          # no handler time: no contention at all
                cache[key] = {"R": W + 2 * L, "R_w": W, "R_p": 0.0, "R_q": 0.0, "R_y": 0.0,
                              "Q_q": 0.0, "Q_y": 0.0, "converged": True, "iterations": 0,
                              "residual": 0.0}
            elif P <= FULL_MAX_P:
                # the whole machine as one chain; Erlang latency (LATENCY_STAGES)
                cache[key] = solve_full(int(P), W, o, c, L,
                                        latency_stages=LATENCY_STAGES.get(int(P), 1))
            elif P <= WHOLE_MAX_P and (c > 1.0 or len(handler_ph(o, c)[0]) == 1):
                # the whole machine, lumped; channels not ordered (WHOLE_MAX_P)
                cache[key] = solve_full(int(P), W, o, c, L, latency_stages=1, fifo=False)
            else:
                ntol = min(tol * 1e6, 1e-7)
                v = solve_node(int(P) - 1, W, o, c, 2.0 * L, tol=ntol, max_iter=max_iter)
                if P <= CORRECT_MAX_P and 2.0 * o >= CORRECT_MIN_U * v["R"]:
                    # the node chain's error where the whole machine is solved: at
                    # min(P, WHOLE_MAX_P), with this handler if it is variable, else
                    # with the exponential one (CORRECT_BETA)
                    pr = min(int(P), WHOLE_MAX_P)
                    cr = c if (c > 1.0 or len(handler_ph(o, c)[0]) == 1) else 1.0
                    v = _corrected(v, solve_node(pr - 1, W, o, cr, 2.0 * L, tol=ntol,
                                                 max_iter=max_iter),
                                   solve_full(pr, W, o, cr, L, latency_stages=1, fifo=False),
                                   ((pr - 1) / (P - 1)) ** CORRECT_BETA, L)
                cache[key] = v
        v = cache[key]
        for k in keys:
            out[k][i] = v[k]
        conv[i] = v["converged"]
        iters = max(iters, int(v["iterations"]))
        resid = max(resid, float(v["residual"]))
    if not conv.all():
        from mva.errors import report_nonconvergence
        report_nonconvergence(on_fail, f"LoPC node chain: the fixed point did not converge in "
                              f"{max_iter} iterations (residual {resid:.3g})",
                              iterations=iters, residual=resid)
    res: dict[str, Any] = {k: a.reshape(shape) for k, a in out.items()}
    lam = 1.0 / res["R"]
    o_arr = np.broadcast_to(np.asarray(p.o, dtype=float), shape)
    res.update(lam=lam, U_q=o_arr * lam, U_y=o_arr * lam, converged=conv.reshape(shape),
               iterations=iters, residual=resid)
    return res


def _solve_network(p: LoPCParams, method: str, opts: Mapping[str, Any],
                   on_fail: str) -> dict[str, Any]:
    arrs = np.broadcast_arrays(*(np.asarray(getattr(p, n), dtype=float)
                                 for n in ("P", "W", "o", "L", "cs2")))
    shape = arrs[0].shape
    flat = [a.ravel() for a in arrs]
    keys = ("R", "R_w", "R_q", "R_y", "Q_q", "Q_y")
    if method in ("exact", "mva"):
        if opts:
            raise ValueError(f"engine_options apply to 'linearizer' and 'schweitzer' only; got "
                             f"{sorted(opts)} with method={method!r}")
        v0 = _symmetric_exact(*flat)
        v: dict[str, Any] = {k: v0[k].reshape(shape) for k in keys}
        conv: np.ndarray = np.ones(shape, dtype=bool)
        iters, resid, used = int(np.max(flat[0])), 0.0, {"exact"}
    else:
        if np.any(flat[0] > ENGINE_MAX_P):
            raise ValueError(f"method={method!r} solves the full network of P chains with the "
                             f"mva engine; P must be <= {ENGINE_MAX_P} for it; got "
                             f"P={int(np.max(flat[0]))} (use 'exact', which costs O(P), or 'auto')")
        from mva._cost import check_time, network_seconds

        # per point one network of 3P classes, P stations and P chains
        check_time(f"lopc method={method!r} at P={int(np.max(flat[0]))} (the full network of P "
                   f"chains, {flat[0].size} point(s))",
                   sum(network_seconds(method, 3 * int(P), int(P), int(P)) for P in flat[0]),
                   instead="method='exact' (the same network, exactly, in O(P)) or 'auto'")
        out = {k: np.empty(flat[0].size) for k in keys}
        conv = np.ones(flat[0].size, dtype=bool)
        iters, resid, used = 0, 0.0, {method}
        for i in range(flat[0].size):
            P, W, o, L, c = (float(a[i]) for a in flat)
            kw = dict(opts)
            kw.setdefault("on_fail", on_fail)
            kw.setdefault("tol", ENGINE_TOL)
            res = _engine(method)(_lopc_network(int(P), W, o, L, c), **kw)
            Rk = np.asarray(res.residence_time, dtype=float)
            Qk = np.asarray(res.queue_length, dtype=float)
            X = np.asarray(res.chain_throughput, dtype=float)
            out["R"][i] = 1.0 / float(np.mean(X))
            out["R_w"][i] = float(np.mean(Rk[0::3].sum(axis=1)))
            out["R_q"][i] = float(np.mean(Rk[1::3].sum(axis=1)))
            out["R_y"][i] = float(np.mean(Rk[2::3].sum(axis=1)))
            out["Q_q"][i] = float(Qk[1::3].sum()) / P
            out["Q_y"][i] = float(Qk[2::3].sum()) / P
            conv[i] = bool(getattr(res, "converged", True))
            iters = max(iters, int(getattr(res, "iterations", 0) or 0))
            resid = max(resid, float(getattr(res, "residual", 0.0) or 0.0))
        v = {k: a.reshape(shape) for k, a in out.items()}
        conv = conv.reshape(shape)
    lam = 1.0 / v["R"]
    o_arr = np.broadcast_to(np.asarray(p.o, dtype=float), shape)
    v.update(lam=lam, U_q=o_arr * lam, U_y=o_arr * lam, converged=conv,
             iterations=iters, residual=resid, used="+".join(sorted(used)))
    return v


# ---------------------------------------------------------------------------
# public solve
# ---------------------------------------------------------------------------

#: a time (W, o or L) below this fraction of the point's largest one is taken as 0
#: (its effect on the result is below every method's precision)
TIME_EPS = 1e-12


def _time_units(p: LoPCParams) -> tuple[LoPCParams, np.ndarray]:
    """``(p in units of s, s)``, ``s`` the power of two with ``max(W, o, L) / s`` in [1, 2).

    Every method is homogeneous of degree one in the times, and scaling by a
    power of two is exact, so the results are unchanged -- except that times
    far apart in size (a denormal ``L`` beside ``o = 100``, ``W = 1e300``) no
    longer overflow a rate to ``inf`` (or underflow to ``0``) and return NaN:
    a time below :data:`TIME_EPS` of the largest is taken as 0.
    """
    W, o, L = (np.asarray(getattr(p, n), dtype=float) for n in ("W", "o", "L"))
    big = np.maximum(np.maximum(W, o), L)          # > 0 (W + 2L + 2o > 0 is checked)
    unit = np.ldexp(1.0, np.frexp(big)[1] - 1)

    def scaled(x: np.ndarray) -> np.ndarray:
        return np.where(x > TIME_EPS * big, x / unit, 0.0)

    return replace(p, W=scaled(W), o=scaled(o), L=scaled(L)), unit


#: largest ratio of the largest to the smallest non-zero time of a grid that the method
#: "lopc" solves in one time unit (2**39, about 5.5e11: below 1 / TIME_EPS, so no time of
#: such a grid would be taken as 0 at its own point either)
GRID_UNIT_RANGE = 2.0 ** 39


def _grid_time_units(p: LoPCParams) -> tuple[LoPCParams, np.ndarray]:
    """:func:`_time_units` with one scalar unit for the whole grid when the times allow it.

    When the grid's non-zero times lie within :data:`GRID_UNIT_RANGE` of each
    other, one power of two ``s`` (the largest time / ``s`` in [1, 2)) serves
    every point: no time is below :data:`TIME_EPS` of its point's largest,
    every scaled time stays far inside the normal doubles and the method
    ``"lopc"`` solves for ``R / R0`` (scale-free), so the results are
    bit-identical to per-point units -- and the scaled times keep their own
    (open-mesh) shapes instead of three grid-sized arrays and a grid-sized
    unit.  Otherwise the per-point units of :func:`_time_units`.
    """
    t = [np.asarray(getattr(p, n), dtype=float) for n in ("W", "o", "L")]
    if all(x.size for x in t):
        top = max(float(np.max(x)) for x in t)
        low = min(float(np.min(x, initial=np.inf, where=x > 0)) for x in t)
        if 0 < top < np.inf and low >= top / GRID_UNIT_RANGE:
            unit = np.ldexp(1.0, np.frexp(top)[1] - 1)
            W, o, L = (np.where(x > 0, x / unit, 0.0) for x in t)
            return replace(p, W=W, o=o, L=L), np.asarray(unit)
    return _time_units(p)


def solve(params: LoPCParams | None = None, method: str = "auto", *, tol: float = 1e-13,
          max_iter: int = 200, on_fail: str = "warn", **kwargs: Any) -> LoPCResult:
    """Solve the LoPC all-to-all request/reply model.

    Parameters
    ----------
    params : LoPCParams, optional
        Model parameters, or give the fields of :class:`LoPCParams` as
        keyword arguments.
    method : {"auto", "node", "lopc", "mva", "exact", "linearizer", "schweitzer"}, default "auto"
        ``"auto"``: :data:`AUTO_METHOD`, the most accurate method measured
        against the simulator on a random design over the declared domain
        (``python -m validation.model_accuracy``); it answers every point of
        the domain.  The result's ``method`` names the method that ran.
        ``"node"``: a node-level Markov chain (one processor, its thread and
        its FCFS handler queue, phase-type handler service fitted to
        ``cs2``; requests arrive from the ``P - 1`` other threads as a
        finite source) coupled to the rest of the machine by a symmetric
        fixed point (:mod:`models._node`); machines of at most
        ``models._node.FULL_MAX_P`` (3) processors, and of at most
        :data:`WHOLE_MAX_P` (4) with a variable handler, are solved as one
        chain of the whole machine instead (lumped by the processors'
        symmetry); on ``4 <= P <= CORRECT_MAX_P`` otherwise, with busy
        handlers, the node chain is corrected by its own error on the
        whole machine of ``min(P, 4)`` processors (:data:`CORRECT_BETA`).  ``"lopc"``: the published
        equations (see :func:`lopc_system`), reduced symbolically to a
        quartic in ``R`` and solved for the whole grid at once by
        :func:`mva.fixedpoint.bracketed_root`.  ``"exact"`` (alias
        ``"mva"``): exact MVA of the closed queueing network of the same
        machine (one chain of population 1 per thread; classes compute,
        request handler, reply handler; handlers preempt computation, BKT),
        computed by a recursion over the machine's symmetry in ``O(P)``
        (equal to :func:`mva.exact_mva` on the full network).
        ``"linearizer"``, ``"schweitzer"``: the engine's approximate MVA on
        the full network, up to :data:`ENGINE_MAX_P` processors.
    tol, max_iter, on_fail
        Root-finder settings for ``"lopc"`` (``on_fail`` also goes to the
        iterative engine methods).
    **kwargs
        Fields of :class:`LoPCParams`, and ``engine_options`` (a dict passed
        to the engine's solver function).

    Returns
    -------
    LoPCResult

    Notes
    -----
    Method ``"lopc"``: the right-hand side of :math:`R = R_w + 2L + R_q + R_y` decreases in
    :math:`R` (every contention term falls as the request rate
    :math:`1/R` falls), so the root is unique and lies in
    :math:`[R_0, \\mathrm{RHS}(R_0)]` with :math:`R_0 = W + 2L + 2o`.  The
    equations do not depend on ``P`` (each processor receives on average one
    request per cycle whatever ``P``); the network methods do, through the
    arrival theorem (a thread never finds its own request queued).

    References
    ----------
    M. I. Frank, A. Agarwal and M. K. Vernon, PPoPP 1997.

    Examples
    --------
    The workload on which four independent simulators agree on 1404.7-1407.6:

    >>> r = solve(LoPCParams(P=16, W=1000, o=100, L=50))
    >>> round(r.R, 1), round(r.contention, 1), r.method
    (1405.5, 105.5, 'node')
    >>> round(solve(LoPCParams(P=16, W=1000, o=100, L=50), method="lopc").R, 1)
    1409.4
    >>> import numpy as np
    >>> np.round(solve(P=16, W=[0, 1000, 10000], o=100, L=50, method="lopc").contention,
    ...          1).tolist()
    [151.9, 109.4, 101.0]
    >>> round(solve(P=1024, W=1000, o=100, L=50, method="exact").R, 1)
    1408.2
    """
    engine_options = kwargs.pop("engine_options", None) or {}
    if params is None:
        check_kwargs("solve", kwargs, [f.name for f in fields(LoPCParams)])
        params = LoPCParams(**kwargs)
    elif kwargs:
        check_kwargs("solve", kwargs, [])
    if not isinstance(params, LoPCParams):
        raise ValueError(f"params must be a LoPCParams; got {type(params).__name__}")
    check_choice("method", method, METHODS)
    check_choice("on_fail", on_fail, ("warn", "raise", "ignore"))
    W, o, L, c = (np.asarray(getattr(params, n), dtype=float) for n in ("W", "o", "L", "cs2"))
    shape = np.broadcast_shapes(np.shape(params.P), W.shape, o.shape, L.shape, c.shape)
    if method == "auto":
        from ._node import auto_method

        method = auto_method(int(np.prod(shape)), "lopc", "LoPC")
    user_params = params
    params, unit = _grid_time_units(params) if method == "lopc" else _time_units(params)
    W, o, L = (np.asarray(getattr(params, n), dtype=float) for n in ("W", "o", "L"))
    if method == "lopc":
        # element-wise closed form: chunked so memory stays bounded on large grids
        v = evaluate_chunked(lambda *a: _solve_lopc(*a, tol=tol, max_iter=max_iter,
                                                    on_fail=on_fail), [W, o, L, c])
        label = "lopc"
    elif method == "node":
        v = _solve_node(params, tol=tol, max_iter=max_iter, on_fail=on_fail)
        label = "node"
    else:
        v = _solve_network(params, method, dict(engine_options), on_fail)
        label = v["used"] if method == "mva" else method
    v = {**v, "lam": np.asarray(v["lam"]) / unit,
         **{k: np.asarray(v[k]) * unit for k in ("R", "R_w", "R_q", "R_y", "R_p") if k in v}}
    params = user_params
    r0 = np.broadcast_to(np.asarray(params.contention_free, dtype=float), shape)

    def out(x: Any) -> Any:
        return scalar_or_array(np.broadcast_to(np.asarray(x, dtype=float), shape))

    conv = np.broadcast_to(np.asarray(v["converged"]), shape)
    res = LoPCResult(
        R=out(v["R"]), lam=out(v["lam"]), R_w=out(v["R_w"]), R_q=out(v["R_q"]),
        R_y=out(v["R_y"]), Q_q=out(v["Q_q"]), Q_y=out(v["Q_y"]), U_q=out(v["U_q"]),
        U_y=out(v["U_y"]), contention=out(np.asarray(v["R"]) - r0), contention_free=out(r0),
        R_p=out(v.get("R_p", 0.0)), method=label,
        converged=bool(conv) if conv.ndim == 0 else conv.copy(),
        iterations=int(v["iterations"]), residual=float(v["residual"]))
    return _attach_accuracy(with_inputs(res, params), "lopc")


# ---------------------------------------------------------------------------
# client-server variant
# ---------------------------------------------------------------------------

@dataclass(frozen=True, kw_only=True)
class ClientServerResult(ResultMixin):
    """Solution of the client-server LoPC variant.

    Attributes
    ----------
    R : float or array
        Mean cycle of one client: compute, request, reply (cycles).
    lam : float or array
        Request rate of one client, ``1 / R``.
    R_q : float or array
        Residence of a request at its server (waiting + handler, cycles).
    R_y : float or array
        Reply handler at the client (``o``: nothing else runs there).
    Q_q : float or array
        Mean number of requests at one server.
    U_server : float or array
        Utilization of one server, ``(P - S) o / (S R)``.
    throughput : float or array
        Requests completed per cycle by the whole machine, ``(P - S) / R``.
    work_rate : float or array
        Useful computation per cycle per processor, ``(P - S) W / (P R)``.
    contention : float or array
        ``R - (W + 2L + 2o)``.
    clients, servers : int or array
    method : str
    iterations : int
    """

    R: Any
    lam: Any
    R_q: Any
    R_y: Any
    Q_q: Any
    U_server: Any
    throughput: Any
    work_rate: Any
    contention: Any
    clients: Any
    servers: Any
    method: str = "lopc"
    iterations: int = 0


def _cs_lopc(C: np.ndarray, S: np.ndarray, W: np.ndarray, o: np.ndarray, L: np.ndarray,
             c: np.ndarray) -> np.ndarray:
    """Closed-form cycle time of the arrival-instant client-server equations."""
    a = C / S
    Z = W + 2 * L + o
    B = Z + a * o + o
    C0 = a * o * (Z - o * (c - 1) / 2)
    return (B + np.sqrt(np.maximum(B * B - 4 * C0, 0.0))) / 2


def _cs_exact(C: int, S: int, W: float, o: float, L: float, c: float) -> tuple[float, int]:
    """Exact single-class MVA (C clients, S symmetric servers, delay W + 2L + o)."""
    import mva

    net = mva.ClosedNetwork(demands=np.full((1, S), o / S), populations=[C],
                            think_times=[W + 2 * L + o], kinds=("queue",) * S,
                            cs2=np.full(S, c), visits=np.full((1, S), 1.0 / S),
                            disciplines=("fcfs",) * S)
    res = mva.exact_mva(net)
    # chain throughput counts all C clients: one client's cycle is C / X
    return C / float(np.asarray(res.chain_throughput)[0]), int(getattr(res, "iterations", 0))


def solve_client_server(P: Any, S: Any, W: Any, o: Any, L: Any, cs2: Any = 1.0, *,
                        method: str = "lopc") -> ClientServerResult:
    """Client-server LoPC: ``S`` processors serve, ``P - S`` compute and request.

    Parameters
    ----------
    P : int or array
        Processors (>= 2).
    S : int or array
        Servers, ``1 <= S <= P - 1``.
    W, o, L : float or array
        Client compute time, handler occupancy, one-way latency (cycles).
    cs2 : float or array, default 1
        Handler service squared coefficient of variation.
    method : {"lopc", "mva"}
        ``"lopc"``: LoPC's arrival-instant equations (closed form);
        ``"mva"``: exact MVA of the same closed network (arrival theorem),
        through the :mod:`mva` engine.

    Returns
    -------
    ClientServerResult

    Notes
    -----
    A client's cycle is :math:`R = W + 2L + R_q + R_y`.  Servers run no
    threads, so a server's request handler waits only for other requests;
    clients receive no requests, so the reply handler runs alone:
    :math:`R_y = o`.  Each of the :math:`C = P - S` clients sends
    :math:`\\lambda = 1/R` requests per cycle, spread uniformly over the
    :math:`S` servers, so by Little's law a server holds
    :math:`Q_q = (C/S)\\lambda R_q` requests and

    .. math::

        R_q = o\\left(1 + Q_q + U\\tfrac{c - 1}{2}\\right), \\qquad U = \\frac{C o}{S R}.

    With :math:`a = C/S` and :math:`Z = W + 2L + o` this is the quadratic

    .. math::

        R^2 - (Z + a o + o) R + a o \\left(Z - o\\tfrac{c - 1}{2}\\right) = 0,

    whose larger root is the cycle time.  The exact MVA method solves the
    same network (``C`` customers, ``S`` identical FCFS queues with demand
    ``o/S`` each, a delay ``Z``) with the arrival theorem.

    Examples
    --------
    >>> r = solve_client_server(16, 4, 1000, 100, 50)
    >>> round(r.R, 1), round(r.U_server, 3)
    (1329.2, 0.226)
    """
    check_choice("method", method, ("lopc", "mva"))
    Pa = check_integer("P", P, minimum=2)
    Sa = check_integer("S", S, minimum=1)
    if np.any(Sa >= Pa):
        raise ValueError(f"S must be <= P - 1 (at least one client); got S={S!r}, P={P!r}")
    Wa, oa, La = (check_nonnegative(n, v) for n, v in (("W", W), ("o", o), ("L", L)))
    ca = check_nonnegative("cs2", cs2)
    if np.any(Wa + 2 * La + 2 * oa <= 0):
        raise ValueError("W + 2L + 2o must be > 0; got 0")
    Pa, Sa, Wa, oa, La, ca = np.broadcast_arrays(Pa, Sa, Wa, oa, La, ca)
    C = (Pa - Sa).astype(float)
    iters = 0
    if method == "lopc":
        R = _cs_lopc(C, Sa.astype(float), Wa, oa, La, ca)
    else:
        R = np.empty(Pa.shape)
        for idx in np.ndindex(Pa.shape):
            R[idx], it = _cs_exact(int(C[idx]), int(Sa[idx]), float(Wa[idx]), float(oa[idx]),
                                   float(La[idx]), float(ca[idx]))
            iters = max(iters, it)
    lam = 1.0 / R
    R_q = R - (Wa + 2 * La + oa)
    res = ClientServerResult(
        R=scalar_or_array(R), lam=scalar_or_array(lam), R_q=scalar_or_array(R_q),
        R_y=scalar_or_array(oa * 1.0), Q_q=scalar_or_array(C / Sa * lam * R_q),
        U_server=scalar_or_array(C * oa / (Sa * R)), throughput=scalar_or_array(C / R),
        work_rate=scalar_or_array(C * Wa / (Pa * R)),
        contention=scalar_or_array(R - (Wa + 2 * La + 2 * oa)),
        clients=int(C) if C.ndim == 0 else C.astype(np.int64),
        servers=int(Sa) if Sa.ndim == 0 else Sa.astype(np.int64),
        method=method, iterations=iters)
    return with_inputs(res, None, P=Pa, S=Sa, W=Wa, o=oa, L=La, cs2=ca)


@dataclass(frozen=True, kw_only=True)
class OptimalServers(ResultMixin):
    """Best split of ``P`` processors into servers and clients.

    Attributes
    ----------
    servers : int or array
        Number of servers maximising the machine's request throughput.
    throughput : float or array
        ``(P - S) / R`` at the optimum (requests per cycle).
    R : float or array
        Client cycle time at the optimum (cycles).
    all_to_all_throughput : float or array
        ``P / R`` of the all-to-all LoPC model on the same parameters, for
        comparison (every processor computes and serves), by the same kind of
        method (``"lopc"``: the published equations, ``"mva"``: exact MVA).
    """

    servers: Any
    throughput: Any
    R: Any
    all_to_all_throughput: Any


def optimal_servers(P: Any, W: Any, o: Any, L: Any, cs2: Any = 1.0, *,
                    method: str = "lopc") -> OptimalServers:
    """The number of servers ``S`` that maximises client-server throughput.

    Parameters
    ----------
    P : int or array
        Processors (>= 2).
    W, o, L, cs2 : float or array
        As in :func:`solve_client_server`.
    method : {"lopc", "mva"}

    Returns
    -------
    OptimalServers

    Notes
    -----
    Evaluates every split ``S = 1 .. P - 1`` (vectorised over the grid) and
    keeps the one with the largest request throughput ``(P - S)/R``; ties go
    to the fewer servers.  A useful guide: throughput is limited by the
    clients, ``(P - S)/(W + 2L + 2o)``, and by the servers, ``S/o``; the
    optimum lies near the balance point
    :math:`S \\approx P o / (W + 2L + 3o)`.

    Examples
    --------
    >>> best = optimal_servers(16, 1000, 100, 50)
    >>> best.servers, round(best.throughput, 5)
    (2, 0.01)
    """
    check_choice("method", method, ("lopc", "mva"))
    Pa = check_integer("P", P, minimum=2)
    Wa, oa, La = (check_nonnegative(n, v) for n, v in (("W", W), ("o", o), ("L", L)))
    ca = check_nonnegative("cs2", cs2)
    Pa, Wa, oa, La, ca = np.broadcast_arrays(Pa, Wa, oa, La, ca)
    best_S = np.ones(Pa.shape, dtype=np.int64)
    best_X = np.full(Pa.shape, -np.inf)
    best_R = np.full(Pa.shape, np.nan)
    for s in range(1, int(Pa.max())):
        ok = Pa > s
        if not np.any(ok):
            continue
        r = solve_client_server(np.where(ok, Pa, s + 1), s, Wa, oa, La, ca, method=method)
        X = np.where(ok, np.asarray(r.throughput, dtype=float), -np.inf)
        better = X > best_X * (1 + 1e-12)
        best_S = np.where(better, s, best_S)
        best_R = np.where(better, np.asarray(r.R, dtype=float), best_R)
        best_X = np.maximum(best_X, X)
    a2a = solve(LoPCParams(P=Pa, W=Wa, o=oa, L=La, cs2=ca),
                method="lopc" if method == "lopc" else "exact")
    res = OptimalServers(servers=int(best_S) if best_S.ndim == 0 else best_S,
                         throughput=scalar_or_array(best_X),
                         R=scalar_or_array(best_R),
                         all_to_all_throughput=scalar_or_array(Pa / np.asarray(a2a.R)))
    return with_inputs(res, None, P=Pa, W=Wa, o=oa, L=La, cs2=ca)


# ---------------------------------------------------------------------------
# command line
# ---------------------------------------------------------------------------

def register_cli(subparsers: Any) -> None:
    """Add the ``lopc`` subcommand (kept for compatibility: see :mod:`models.cli.lopc`)."""
    from models.cli.lopc import register

    register(subparsers)
