"""Two-level contention model of clusters served by intelligent network interfaces (INIs).

Jiang's thesis (Jiang 1997, chapter 6) extends LoPC to a clustered multiprocessor:
every processing element (PE) runs one thread that computes for ``W``, sends
an inter-cluster request and blocks for the reply.  The request crosses the
intra-cluster network (latency ``l``), is processed by an INI of the sending
cluster (overhead ``O``), crosses the inter-cluster network (``L``), is
processed by an INI of the destination cluster (``O``), crosses the
destination's intra-cluster network (``l``) and interrupts the destination PE,
whose request handler costs ``o``; the reply takes the mirror path back and is
handled on the requesting PE (``o``).  ``N`` PEs share one INI.

Methods
-------
``"thesis"``
    Equations 6.1--6.10 of the thesis exactly as published, reduced with SymPy
    (:mod:`mva.symbolic`) to one polynomial equation in ``lambda`` and solved
    on the whole grid at once by :func:`mva.fixedpoint.bracketed_root`.
``"exact"``, ``"linearizer"``, ``"schweitzer"``
    The same machine as a closed multichain queueing network (one chain per
    PE thread, preemptive-priority handlers by BKT, FCFS INIs) solved by the
    :mod:`mva` engine, so that the arrival theorem replaces the thesis's
    arrival-instant approximation.

Cluster configurations (``S`` PEs and ``K`` INIs per cluster) and three
dispatch disciplines -- ``"static"``, ``"round_robin"`` and ``"shared"`` --
are described in :class:`INIParams`.  Presets: :data:`FIGURE_6_3`,
:data:`TABLE_5_1`, :data:`TABLE_5_2` and :func:`ini_overhead`.

References
----------
* X. Jiang, "A Scalable Parallel Inter-Cluster Communication System for
  Clustered Multiprocessors", MS thesis, MIT, 1997, chapters 5 and 6.
* M. I. Frank, A. Agarwal and M. K. Vernon, "LoPC: Modeling Contention in
  Parallel Algorithms", PPoPP 1997.
"""

from __future__ import annotations

import copy
import functools
import math
from dataclasses import dataclass, fields
from typing import Any, Mapping, TypedDict

import numpy as np

from mva._chunks import evaluate_chunked
from mva.params import declarations, param, validate_fields
from mva.results import Derived, DerivedFields, ResultMixin, with_inputs

from .accuracy import attach as _attach_accuracy
from mva._validate import check_choice, check_kwargs, check_nonnegative, scalar_or_array

__all__ = [
    "INIParams",
    "INIResult",
    "solve",
    "METHODS",
    "AUTO_METHOD",
    "DISPATCH",
    "FIGURE_6_3",
    "TABLE_5_1",
    "TABLE_5_2",
    "MTU_BYTES",
    "ini_overhead",
    "thesis_system",
    "reduced_equation",
    "q_o_bound",
    "round_robin_arrival_scv",
    "register_cli",
]

#: solution methods accepted by :func:`solve`
METHODS = ("auto", "node", "thesis", "exact", "linearizer", "schweitzer")

#: what ``method="auto"`` runs (the most accurate method measured against the
#: simulator, ``python -m validation.model_accuracy --family ini``) on grids of
#: at most :data:`models._node.AUTO_GRID_LIMIT` points; larger grids get ``"thesis"``
AUTO_METHOD = "node"

#: INI dispatch disciplines of :class:`INIParams`
DISPATCH = ("static", "round_robin", "shared")

_NUMERIC = ("N", "W", "o", "l", "O", "L", "cs2_o", "cs2_O")


# ---------------------------------------------------------------------------
# parameters and result
# ---------------------------------------------------------------------------

@dataclass(frozen=True, kw_only=True)
class INIParams:
    """Parameters of the two-level INI model (thesis Table 6.1, plus clusters).

    Every numeric field may be a NumPy array; fields broadcast together.

    Parameters
    ----------
    N : float or array, optional
        PEs per INI node (the thesis's only configuration parameter), > 0
        (the node and network methods need a PE per cluster, ``N * K >= 1``).
        Give either ``N`` or ``S``; with ``S``, ``N = S / K``.
    W : float or array
        Mean compute time between blocking requests (cycles), >= 0.
    o : float or array
        Mean message-handler overhead at a PE (cycles), >= 0.
    l : float or array, default 0
        Intra-cluster network latency (cycles), >= 0.
    O : float or array
        Mean message-processing overhead at an INI (cycles), >= 0.
    L : float or array, default 0
        Inter-cluster network latency (cycles), >= 0.
    cs2_o : float or array, default 1
        Squared coefficient of variation of the PE handler time (1 exponential,
        0 deterministic), in [0, 100].
    cs2_O : float or array, default 1
        Squared coefficient of variation of the INI service time, in [0, 100].
    S : int or array, optional
        PEs per cluster (integer >= 1).  Default ``N * K`` when ``N * K`` is
        an integer.
    K : int or array, default 1
        INI nodes per cluster (integer >= 1).
    clusters : int, default 2
        Number of clusters (integer >= 2).  The thesis equations do not depend
        on it; the queueing-network methods build this many clusters.
    dispatch : {"static", "round_robin", "shared"}, default "static"
        How a cluster's messages are spread over its ``K`` INIs:

        * ``"static"`` -- each PE is bound to one INI (``N = S / K`` PEs per
          INI); its outgoing requests and incoming replies use that INI, and
          messages to a PE arrive through the destination PE's INI.  When
          ``K`` does not divide ``S`` the network methods bind PE ``j`` to
          INI ``j mod K`` (unequal INIs, results averaged over INIs) while
          the thesis method uses the mean ``N = S / K``;
        * ``"round_robin"`` -- each PE sends its successive messages to the
          ``K`` INIs in turn.  The mean load per INI is that of static or
          random splitting, but the arrival stream is more regular (see
          :func:`round_robin_arrival_scv`);
        * ``"shared"`` -- one queue per cluster served by whichever of the
          ``K`` INIs is idle: a ``K``-server station.

    Notes
    -----
    Validation raises :class:`ValueError` naming the parameter.  A
    contention-free round trip ``W + 2l + 2L + 2o + 4O`` of zero is rejected
    (the cycle rate would be infinite).

    Examples
    --------
    >>> p = INIParams(N=4, W=41789, o=742, O=2336)
    >>> p.S, p.K
    (4, 1)
    >>> INIParams(S=8, K=2, W=1000, o=10, O=100).N
    4.0
    """

    N: Any = param(symbol="N", meaning="PEs per INI node (give N or S)", unit="", low=0,
                   low_open=True, optional=True, valid=(1, 32), scale="log", integral=True,
                   default=None, typical=4)
    W: Any = param(symbol="W", meaning="mean compute time between blocking requests",
                   unit="cycles", low=0, valid=(0, 1e6), scale="log", typical=41789.0)
    o: Any = param(symbol="o", meaning="mean message-handler overhead at a PE", unit="cycles",
                   low=0, valid=(1, 5000), scale="log", typical=742.0)
    l: Any = param(symbol="l", meaning="intra-cluster network latency",  # noqa: E741
                   unit="cycles", low=0, valid=(0, 10000), scale="log", default=0.0)
    O: Any = param(symbol="O", meaning="mean message-processing overhead at an INI",  # noqa: E741
                   unit="cycles", low=0, valid=(1, 10000), scale="log", typical=2336.0)
    L: Any = param(symbol="L", meaning="inter-cluster network latency", unit="cycles", low=0,
                   valid=(0, 10000), scale="log", default=0.0)
    cs2_o: Any = param(symbol="cs2_o", meaning="SCV of the PE handler time", unit="", low=0,
                       high=10, valid=(0, 10), default=1.0)
    cs2_O: Any = param(symbol="cs2_O", meaning="SCV of the INI service time", unit="", low=0,
                       high=10, valid=(0, 10), default=1.0)
    S: Any = param(symbol="S", meaning="PEs per cluster (default N K)", unit="", kind="int",
                   low=1, optional=True, default=None, cli=False)
    K: Any = param(symbol="K", meaning="INI nodes per cluster", unit="", kind="int", low=1,
                   valid=(1, 8), scale="log", default=1)
    clusters: int = param(symbol="clusters", meaning="number of clusters", unit="", kind="int",
                          low=2, valid=(2, 64), scale="log", default=2)
    dispatch: str = param(symbol="dispatch", meaning="how a cluster's messages are spread "
                          "over its K INIs", unit="", kind="choice", choices=DISPATCH,
                          default="static")

    def __post_init__(self) -> None:
        v = validate_fields(self, skip=("N", "S"))
        K, clusters = v["K"], int(v["clusters"])
        decl = declarations(self)
        if self.N is None and self.S is None:
            raise ValueError("give N (PEs per INI) or S (PEs per cluster); got neither")
        if self.S is not None:
            S = decl["S"].check(self.S)
            N = S / K
            if self.N is not None:
                Ngiven = decl["N"].check(self.N)
                if not np.allclose(Ngiven * K, S):
                    raise ValueError(f"N must equal S / K when both are given; got N={self.N!r}, "
                                     f"S={self.S!r}, K={self.K!r}")
        else:
            N = decl["N"].check(self.N)
            S_float = N * K
            if np.all(np.isclose(S_float, np.round(S_float))) and np.all(S_float >= 0.5):
                S = np.round(S_float).astype(np.int64)
            else:               # fractional PEs per cluster (the thesis's continuous N)
                S = None
        W, o, l_, O, L = v["W"], v["o"], v["l"], v["O"], v["L"]
        r0 = W + 2 * l_ + 2 * L + 2 * o + 4 * O
        if np.any(r0 <= 0):
            raise ValueError("W + 2l + 2L + 2o + 4O (the contention-free round trip) must be > 0; "
                             "got 0")
        try:
            np.broadcast_shapes(*(np.shape(getattr(self, n)) for n in
                                  ("W", "o", "l", "O", "L", "cs2_o", "cs2_O")),
                                np.shape(N), np.shape(K))
        except ValueError:
            raise ValueError("INIParams: array parameters must broadcast together; got shapes "
                             + ", ".join(f"{n}={np.shape(getattr(self, n))}" for n in
                                         ("N", "W", "o", "l", "O", "L", "S", "K"))) from None
        object.__setattr__(self, "N", scalar_or_array(N))
        object.__setattr__(self, "S", None if S is None else
                           (int(S) if np.ndim(S) == 0 else np.asarray(S)))
        object.__setattr__(self, "K", int(K) if np.ndim(K) == 0 else np.asarray(K))
        object.__setattr__(self, "clusters", clusters)

    @property
    def contention_free(self) -> Any:
        """``W + 2l + 2L + 2o + 4O``: the round trip with no queueing (cycles)."""
        return scalar_or_array(np.asarray(self.W, float) + 2 * np.asarray(self.l, float)
                               + 2 * np.asarray(self.L, float) + 2 * np.asarray(self.o, float)
                               + 4 * np.asarray(self.O, float))

    def replace(self, **changes: Any) -> "INIParams":
        """A copy with some fields changed (re-validated)."""
        d = {f.name: getattr(self, f.name) for f in fields(self)}
        if "S" in changes or "K" in changes:
            d["N"] = None if "N" not in changes else changes["N"]
        if "N" in changes and "S" not in changes:
            d["S"] = None
        d.update(changes)
        return INIParams(**d)


@dataclass(frozen=True, kw_only=True)
class INIResult(DerivedFields, ResultMixin):
    """Solution of the INI model (thesis Table 6.2 notation).

    Attributes
    ----------
    R : float or array
        Mean compute/request cycle time (cycles).
    lam : float or array
        Cycle rate of one PE, ``1 / R`` (per cycle).
    R_w, R_q, R_y, R_o : float or array
        Residence of the compute thread, of a request handler, of a reply
        handler, and of one message at one INI visit (cycles).
    Q_q, Q_y : float or array
        Mean number of requests / replies at a PE.
    Q_o : float or array
        Mean number of messages at one INI (for ``"shared"``, the cluster's
        INI population divided by ``K``).
    U_q, U_y : float or array
        PE utilization by request / reply handlers.
    U_o : float or array
        Utilization of one INI.
    contention : float or array
        ``R - (W + 2l + 2L + 2o + 4O)``: what contention adds (cycles).
    contention_free : float or array
        ``W + 2l + 2L + 2o + 4O`` (cycles).
    R_p : float or array
        Wait to resume after the reply handler, for the requests queued
        behind it (cycles); only ``method="node"`` separates it from ``R_w``
        (the other methods report 0).
    bottleneck : str or array of str
        ``"INI"`` or ``"PE"``: the resource with the larger utilization
        (``U_o`` against ``U_q + U_y + W/R``).
    saturated : bool
        Always ``False``: the system is closed (one outstanding request per
        PE), so queues are bounded (``Q_o <= N``) and every configuration has
        a finite solution; heavy load shows as ``U_o`` near 1.
    method : str
    converged : bool or array of bool
    iterations : int
    residual : float

    Notes
    -----
    With ``method="thesis"`` the result stores the primary per-point arrays
    ``lam``, ``R_w``, ``R_q``, ``R_y`` and ``R_o`` and derives the others
    when first read (:class:`mva.results.Derived`): :math:`R = 1/\\lambda`,
    :math:`Q_q = \\lambda R_q`, :math:`Q_y = \\lambda R_y`,
    :math:`Q_o = 4 N \\lambda R_o`, :math:`U_q = U_y = o \\lambda`,
    :math:`U_o = 4 N \\lambda O`, ``contention``, ``contention_free`` and
    ``bottleneck``; the value is then kept.  The values are those of an eager
    evaluation bit for bit; a :math:`10^7`-point grid then peaks below 600 MiB
    instead of 1.6 GiB (``benchmarks/bench_models.py --memory``).
    """

    R: Any
    lam: Any
    R_w: Any
    R_q: Any
    R_y: Any
    R_o: Any
    Q_q: Any
    Q_y: Any
    Q_o: Any
    U_q: Any
    U_y: Any
    U_o: Any
    contention: Any
    contention_free: Any
    bottleneck: Any
    R_p: Any = 0.0
    saturated: bool = False
    method: str = "thesis"
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


# -- outputs derived on access (Derived fields of INIResult) -----------------
#: outputs every method returns as arrays
_THESIS_PRIMARY = ("lam", "R_w", "R_q", "R_y", "R_o")
#: outputs the thesis method derives from the primary ones on access
_THESIS_DERIVED = ("R", "Q_q", "Q_y", "Q_o", "U_q", "U_y", "U_o")


def _reciprocal(x: Any) -> Any:
    return scalar_or_array(1.0 / np.asarray(x, dtype=float))


def _product(a: Any, b: Any) -> Any:
    return scalar_or_array(np.asarray(a, dtype=float) * np.asarray(b, dtype=float))


def _four_n_lam(N: Any, lam: Any, x: Any) -> Any:
    return scalar_or_array(4.0 * np.asarray(N, dtype=float) * np.asarray(lam, dtype=float)
                           * np.asarray(x, dtype=float))


def _contention(R: Any, params: "INIParams") -> Any:
    return scalar_or_array(np.asarray(R, dtype=float)
                           - np.asarray(params.contention_free, dtype=float))


def _contention_free(params: "INIParams", shape: tuple[int, ...]) -> Any:
    return scalar_or_array(np.broadcast_to(np.asarray(params.contention_free, dtype=float),
                                           shape))


def _bottleneck(U_o: Any, U_q: Any, U_y: Any, params: "INIParams", R: Any) -> Any:
    # in chunks: no grid-sized temporaries beside the label array (large grids)
    b = evaluate_chunked(lambda U_o, U_q, U_y, W, R: {
        "b": np.where(U_o >= U_q + U_y + W / R, "INI", "PE")},
        [U_o, U_q, U_y, np.asarray(params.W, float), np.asarray(R, dtype=float)])["b"]
    return str(b) if b.ndim == 0 else b


def _thesis_derived(params: "INIParams", out: Mapping[str, Any]) -> dict[str, Any]:
    """The thesis method's derived outputs as :class:`~mva.results.Derived` fields.

    The same formulas, in the same order of operations, as an eager
    evaluation (``R = 1/lam``, ``Q_q = lam R_q``, ``Q_y = lam R_y``,
    ``Q_o = 4 N lam R_o``, ``U_q = U_y = o lam``, ``U_o = 4 N lam O``), so the
    values are the same bit for bit.
    """
    lam = out["lam"]
    N = np.asarray(params.N, dtype=float)
    U_q = Derived(_product, np.asarray(params.o, dtype=float), lam)
    return {"R": Derived(_reciprocal, lam), "Q_q": Derived(_product, lam, out["R_q"]),
            "Q_y": Derived(_product, lam, out["R_y"]),
            "Q_o": Derived(_four_n_lam, N, lam, out["R_o"]), "U_q": U_q, "U_y": U_q,
            "U_o": Derived(_four_n_lam, N, lam, np.asarray(params.O, dtype=float))}


# ---------------------------------------------------------------------------
# symbolic system
# ---------------------------------------------------------------------------

def _symbols() -> dict[str, Any]:
    import sympy as sp

    names = "R lambda Q_q Q_y Q_o R_q R_y R_o R_w U_q W o l O L N".split()
    return dict(zip(names, sp.symbols(names, positive=True)))


@functools.lru_cache(maxsize=None)
def thesis_system(general: bool = False) -> Any:
    """Equations 6.1--6.10 of the thesis as a :class:`mva.symbolic.EquationSystem`.

    Parameters
    ----------
    general : bool, default False
        ``False`` gives the ten equations exactly as published.  ``True``
        gives the generalised system used for computation, with extra
        symbols: INI queueing service ``s`` and pure delay ``d`` (``s = O``,
        ``d = 0`` except for the shared multi-server INI), the population
        ``m`` feeding an INI queue (``N``), the handler and INI service
        ``c_h = cs2_o``, ``c_O = cs2_O`` and the arrival-variability factor
        ``phi`` (1 except for round-robin dispatch).  With ``s = O``,
        ``d = 0``, ``m = N`` and ``c_h = c_O = phi = 1`` it reduces to the
        published system.

    Returns
    -------
    mva.symbolic.EquationSystem

    Notes
    -----
    Published (thesis section 6.3):

    .. math::

        R &= R_w + 2l + R_q + 2L + 4R_o + R_y, \\quad
        \\lambda = 1/R, \\quad Q_q = \\lambda R_q, \\quad Q_y = \\lambda R_y,
        \\quad Q_o = 4N\\lambda R_o, \\\\
        R_q &= o(1 + Q_q + Q_y), \\quad R_y = o(1 + Q_q), \\quad
        R_o = O(1 + Q_o), \\quad R_w = \\frac{W + oQ_q}{1 - U_q}, \\quad U_q = o/R.

    Generalised (residual-life correction for non-exponential service,
    :math:`U_y = U_q`, :math:`U_o = 4m\\lambda s`).  With ``c_O = 1`` and
    ``phi = 1`` the INI equation is the published pair 6.5 + 6.8 solved for
    :math:`R_o` (:math:`R_o = O/(1 - U_o)`); in general it is the
    Pollaczek-Khinchine residence with the waiting time scaled by ``phi``
    (Kingman's :math:`(c_a^2 + c_O^2)/(1 + c_O^2)`), which keeps the pole at
    :math:`U_o = 1`:

    .. math::

        R_q &= o\\left(1 + Q_q + Q_y + (U_q + U_y)\\tfrac{c_h - 1}{2}\\right), \\quad
        R_y = o\\left(1 + Q_q + U_q\\tfrac{c_h - 1}{2}\\right), \\\\
        R_o &= s + \\phi\\, s\\, \\frac{U_o (1 + c_O)}{2 (1 - U_o)}, \\quad
        R_w = \\frac{W + o Q_q + o U_q (c_h - 1)/2}{1 - U_q}, \\quad
        R = R_w + 2l + R_q + 2L + 4(R_o + d) + R_y.

    Examples
    --------
    >>> sys_ = thesis_system()
    >>> list(sys_.equations)[:3], len(sys_.unknowns)
    (['6.1', '6.2', '6.3'], 10)
    """
    import sympy as sp

    from mva.symbolic import equation_system

    y = _symbols()
    R, lam, Qq, Qy, Qo, Rq, Ry, Ro, Rw, Uq = (
        y[k] for k in "R lambda Q_q Q_y Q_o R_q R_y R_o R_w U_q".split())
    W, o, l_, O, L, N = (y[k] for k in "W o l O L N".split())
    unknowns = [R, lam, Qq, Qy, Qo, Rq, Ry, Ro, Rw, Uq]
    if not general:
        eqs = {
            "6.1": (R, Rw + 2 * l_ + Rq + 2 * L + 4 * Ro + Ry),
            "6.2": (lam, 1 / R),
            "6.3": (Qq, lam * Rq),
            "6.4": (Qy, lam * Ry),
            "6.5": (Qo, 4 * N * lam * Ro),
            "6.6": (Rq, o * (1 + Qq + Qy)),
            "6.7": (Ry, o * (1 + Qq)),
            "6.8": (Ro, O * (1 + Qo)),
            "6.9": (Rw, (W + o * Qq) / (1 - Uq)),
            "6.10": (Uq, o / R),
        }
        return equation_system(eqs, unknowns)
    s, d, m, ch, cO, phi = sp.symbols("s d m c_h c_O phi", positive=True)
    Uo = 4 * m * lam * s
    half = sp.Rational(1, 2)
    eqs = {
        "6.1": (R, Rw + 2 * l_ + Rq + 2 * L + 4 * (Ro + d) + Ry),
        "6.2": (lam, 1 / R),
        "6.3": (Qq, lam * Rq),
        "6.4": (Qy, lam * Ry),
        "6.5": (Qo, 4 * m * lam * Ro),
        "6.6": (Rq, o * (1 + Qq + Qy + 2 * Uq * (ch - 1) * half)),
        "6.7": (Ry, o * (1 + Qq + Uq * (ch - 1) * half)),
        "6.8": (Ro, s + phi * s * Uo * (1 + cO) * half / (1 - Uo)),
        "6.9": (Rw, (W + o * Qq + o * Uq * (ch - 1) * half) / (1 - Uq)),
        "6.10": (Uq, o / R),
    }
    return equation_system(eqs, unknowns)


@functools.lru_cache(maxsize=None)
def reduced_equation(general: bool = False) -> Any:
    """The thesis system reduced to one equation in ``lambda``.

    Returns
    -------
    mva.symbolic.Elimination
        ``residual`` is zero at the solution; ``solutions`` gives every other
        unknown as a function of ``lambda``.

    Notes
    -----
    Solving 6.2--6.10 for the nine other unknowns and substituting into 6.1
    leaves a rational equation whose numerator is a quintic in
    :math:`\\lambda` (printed in the documentation, ``docs/models/ini.rst``).

    Examples
    --------
    >>> import sympy as sp
    >>> from mva.symbolic import clear_denominators
    >>> e = reduced_equation()
    >>> num, den, coeffs = clear_denominators(e.residual, e.keep)
    >>> len(coeffs) - 1   # degree in lambda
    5
    """
    from mva.symbolic import eliminate

    y = _symbols()
    sys_ = thesis_system(general)
    # each unknown through its defining equation (6.2-6.10); 6.1 is what remains
    using = {"R": "6.2", "U_q": "6.10", "Q_q": "6.3", "Q_y": "6.4", "R_q": "6.6",
             "R_y": "6.7", "Q_o": "6.5", "R_o": "6.8", "R_w": "6.9"}
    return eliminate(sys_, y["lambda"], order=[y[k] for k in using],
                     using={y[k]: v for k, v in using.items()})


def q_o_bound() -> dict[str, Any]:
    """Symbolic proof of the thesis bound :math:`Q_o \\le N` (equation 6.11).

    Returns
    -------
    dict
        ``"slack"``: :math:`N - Q_o` after substituting 6.5, 6.2 and 6.1, a
        ratio of sums of non-negative terms; ``"limit"``: :math:`Q_o` solved
        from the reduced equation with ``W = o = l = L = 0`` (equals ``N``).

    Notes
    -----
    From (6.5) and (6.2), :math:`Q_o = 4N R_o / R`, and by (6.1)

    .. math::

        N - Q_o = N\\,\\frac{R_w + 2l + R_q + 2L + R_y}
                          {R_w + 2l + R_q + 2L + 4R_o + R_y} \\ge 0,

    since every residence time and latency is non-negative.  Equality holds
    when ``W = o = l = L = 0``: then ``R = 4 R_o`` and ``Q_o = N``.

    Examples
    --------
    >>> import sympy as sp
    >>> b = q_o_bound()
    >>> y = _symbols()
    >>> sp.simplify(b["limit"] - y["N"])
    0
    """
    import sympy as sp

    y = _symbols()
    sys_ = thesis_system()
    eq = sys_.equations
    rhs61 = eq["6.1"].rhs
    qo = eq["6.5"].rhs.subs(y["lambda"], 1 / y["R"]).subs(y["R"], rhs61)
    slack = sp.factor(sp.simplify(y["N"] - qo))
    # the limit W = o = l = L = 0: solve the reduced equation and evaluate Q_o
    zero = {y["W"]: 0, y["o"]: 0, y["l"]: 0, y["L"]: 0}
    red = reduced_equation()
    res0 = sp.cancel(red.residual.subs(zero))
    lam_sols = [s for s in sp.solve(sp.numer(sp.together(res0)), y["lambda"]) if s != 0]
    qo_expr = red.solutions[y["Q_o"]].subs(zero)
    limits = {sp.simplify(qo_expr.subs(y["lambda"], s)) for s in lam_sols}
    limit = limits.pop() if len(limits) == 1 else sp.Max(*limits)
    return {"slack": slack, "limit": limit}


def _codegen_spec() -> dict[str, Any]:
    """What :mod:`models._codegen` compiles: ``{name: (args, exprs, horner_in)}`` and constants."""
    import sympy as sp

    from mva.symbolic import clear_denominators

    y = _symbols()
    lam = y["lambda"]
    s, d, m, ch, cO, phi = sp.symbols("s d m c_h c_O phi", positive=True)
    args = [y["W"], y["o"], y["l"], y["L"], s, d, m, ch, cO, phi]
    red = reduced_equation(general=True)
    num, den, coeffs = clear_denominators(red.residual, lam)
    dpoly = sp.Poly(sp.expand(den), lam)
    low = [c for c in reversed(dpoly.all_coeffs()) if c != 0][0]  # sign of den near 0+
    names = ["R_q", "R_y", "R_o", "R_w"]
    return {"functions": {"coeffs": (args, coeffs, None), "den_sign": (args, low, None),
                          "back": ([lam, *args], [red.solutions[y[n]] for n in names], lam)},
            "constants": {"names": names, "degree": len(coeffs) - 1}}


def _compiled_sympy() -> dict[str, Any]:
    """The functions of :func:`_compiled` lambdified from SymPy now (the reference)."""
    from models._codegen import lambdified

    return lambdified("ini")


@functools.lru_cache(maxsize=None)
def _compiled() -> dict[str, Any]:
    """Coefficient and back-substitution functions, shipped in :mod:`models._generated.ini`."""
    from models._generated import ini as gen

    return {"coeffs": gen.coeffs, "den_sign": gen.den_sign, "back": gen.back,
            "names": list(gen.NAMES), "degree": gen.DEGREE}


# ---------------------------------------------------------------------------
# round-robin arrival variability
# ---------------------------------------------------------------------------

def round_robin_arrival_scv(K: Any, flows: Any, utilization: Any) -> Any:
    """Squared coefficient of variation of arrivals at an INI under round-robin dispatch.

    Parameters
    ----------
    K : int or array
        INIs per cluster (each flow sends every ``K``-th message to a given INI).
    flows : float or array
        Number of independent message flows merged at one INI (``2 S``: the
        cluster's threads as senders and as request servers).
    utilization : float or array
        INI utilization, in [0, 1).

    Returns
    -------
    float or array
        :math:`c_a^2`, between ``1/K`` and 1.

    Notes
    -----
    Random (Bernoulli) splitting of a Poisson-like flow over ``K`` INIs keeps
    its inter-arrival SCV at 1; sending every ``K``-th message to the same
    INI makes an inter-arrival time the sum of ``K`` exponential gaps, an
    Erlang-``K`` time with SCV ``1/K``.  The ``\\nu`` such flows are merged by
    Whitt's QNA superposition rule (Whitt 1983):

    .. math::

        c_a^2 = w\\,\\frac{1}{K} + (1 - w), \\qquad
        w = \\frac{1}{1 + 4(1 - \\rho)^2(\\nu - 1)}.

    The model then scales the INI's queueing term by
    :math:`\\phi = (c_a^2 + c_O^2)/(1 + c_O^2)`, Kingman's ratio of G/G/1 to
    M/G/1 waiting.  With ``K = 1`` it is the static model.  This is an
    approximation; it is the only place the model departs from mean-value
    reasoning.

    References
    ----------
    W. Whitt, "The Queueing Network Analyzer", Bell System Technical
    Journal 62(9), 1983.

    Examples
    --------
    >>> round(float(round_robin_arrival_scv(2, 1, 0.5)), 3)
    0.5
    >>> float(round_robin_arrival_scv(1, 16, 0.9))
    1.0
    """
    K = np.asarray(K, dtype=float)
    nu = np.asarray(flows, dtype=float)
    rho = np.clip(np.asarray(utilization, dtype=float), 0.0, 1.0)
    w = 1.0 / (1.0 + 4.0 * (1.0 - rho) ** 2 * (nu - 1.0))
    return scalar_or_array(w / K + (1.0 - w))


# ---------------------------------------------------------------------------
# thesis method: vectorised core
# ---------------------------------------------------------------------------

def _thesis_core(W: np.ndarray, o: np.ndarray, l_: np.ndarray, L: np.ndarray, s: np.ndarray,
                 d: np.ndarray, m: np.ndarray, ch: np.ndarray, cO: np.ndarray,
                 phi: np.ndarray, *, tol: float, max_iter: int,
                 on_fail: str, newton_steps: int = 6) -> dict[str, Any]:
    """Solve the generalised thesis system at every grid point (arrays already broadcast)."""
    from mva.symbolic import horner, polynomial_root

    c = _compiled()
    args = (W, o, l_, L, s, d, m, ch, cO, phi)
    coeffs = [np.asarray(v, dtype=float) for v in c["coeffs"](*args)]
    sign = np.sign(np.asarray(c["den_sign"](*args), dtype=float))
    r0 = W + 2 * l_ + 2 * L + 2 * o + 4 * (s + d)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        pole_o = np.where(o > 0, r0 * (math.sqrt(5.0) - 1.0) / 2.0 / np.where(o > 0, o, 1.0),
                          np.inf)
        qs = 4.0 * m * s
        pole_ini = np.where(qs > 0, r0 / np.where(qs > 0, qs, 1.0), np.inf)
    u_hi = np.minimum(1.0, np.minimum(pole_o, pole_ini))
    # scaled unknown u = lambda * r0 in (0, u_hi]; coefficients rescaled once.  The
    # residual is 1/lambda - RHS(6.1) = num/den; f = -sign(den) num is increasing in u.
    deg = len(coeffs) - 1
    scaled = [-sign * coeffs[k] / r0 ** (deg - k) for k in range(deg + 1)]

    def f(u: np.ndarray) -> np.ndarray:
        return horner(scaled, u)

    shape = np.broadcast_shapes(np.shape(u_hi), *(np.shape(x) for x in scaled))
    b = np.broadcast_to(u_hi, shape).copy()
    # with no contention at all (o = 0 and O = 0) the root is u = 1 itself; rounding
    # may leave f(1) a hair below zero, so step just past it there
    b = np.where((f(b) < 0) & (b == 1.0), 1.0 + 1e-9, b)
    root = polynomial_root(scaled, np.zeros(shape), b, newton_steps=newton_steps, tol=tol,
                           max_iter=max_iter, on_fail=on_fail)
    lam = np.asarray(root.x, dtype=float) / r0
    vals = dict(zip(c["names"], (np.asarray(v, dtype=float) for v in c["back"](lam, *args))))
    vals["Q_q"] = lam * vals["R_q"]
    vals["Q_y"] = lam * vals["R_y"]
    vals["lam"] = lam
    vals["R"] = 1.0 / lam
    vals["converged"] = root.converged
    vals["iterations"] = root.iterations
    vals["residual"] = root.residual
    return vals


def _dispatch_terms(dispatch: str, N: np.ndarray, K: np.ndarray, O: np.ndarray
                    ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(m, s, d) of the INI station for a dispatch discipline."""
    if dispatch == "shared":
        return N * K, O / K, O * (K - 1) / K
    return N, O, np.zeros_like(O)


def _solve_thesis(p: INIParams, *, tol: float, max_iter: int, on_fail: str,
                  rr_tol: float = 1e-10, rr_max_iter: int = 200) -> dict[str, Any]:
    names = ("W", "o", "l", "L", "O", "cs2_o", "cs2_O")
    arrs = [np.asarray(getattr(p, n), dtype=float) for n in names]
    N = np.asarray(p.N, dtype=float)
    K = np.asarray(p.K, dtype=float)
    W, o, l_, L, O, ch, cO = arrs
    shape = np.broadcast_shapes(*(a.shape for a in arrs), N.shape, K.shape)
    m, s, d = _dispatch_terms(p.dispatch, N, K, O)
    phi = np.ones(())
    extra_iter = 0
    if p.dispatch == "round_robin" and np.any(K > 1):
        from mva.fixedpoint import fixed_point

        flows = 2.0 * N * K

        def rho_of(phi_: np.ndarray) -> np.ndarray:
            v = _thesis_core(W, o, l_, L, s, d, m, ch, cO, phi_, tol=tol, max_iter=max_iter,
                             on_fail=on_fail)
            return np.clip(4.0 * N * v["lam"] * O, 0.0, 1.0)

        def g(x: np.ndarray) -> np.ndarray:
            ca2 = np.asarray(round_robin_arrival_scv(K, flows, x[0]), dtype=float)
            return rho_of((ca2 + cO) / (1.0 + cO))[None]

        fp = fixed_point(g, np.zeros((1, *shape)), damping=1.0, tol=rr_tol,
                         max_iter=rr_max_iter, fallback=False, on_fail=on_fail)
        ca2 = np.asarray(round_robin_arrival_scv(K, flows, fp.x[0]), dtype=float)
        phi = (ca2 + cO) / (1.0 + cO)
        extra_iter = fp.iterations

    def point(W: np.ndarray, o: np.ndarray, l_: np.ndarray, L: np.ndarray, s: np.ndarray,
              d: np.ndarray, m: np.ndarray, ch: np.ndarray, cO: np.ndarray, phi: np.ndarray,
              N: np.ndarray, O: np.ndarray) -> dict[str, Any]:
        v = _thesis_core(W, o, l_, L, s, d, m, ch, cO, phi, tol=tol, max_iter=max_iter,
                         on_fail=on_fail)
        sh = np.broadcast_shapes(*(np.shape(a) for a in (W, o, l_, L, s, d, m, ch, cO, phi, N,
                                                         O)))
        # only the primary arrays: R = 1/lam, Q_q = lam R_q, Q_y = lam R_y, Q_o = 4 N lam R_o,
        # U_q = U_y = o lam and U_o = 4 N lam O are derived on access (_THESIS_DERIVED:
        # the same formulas, so the same values; memory of large grids)
        return {
            "lam": np.broadcast_to(v["lam"], sh), "R_w": v["R_w"], "R_q": v["R_q"],
            "R_y": v["R_y"], "R_o": v["R_o"] + d,
            "converged": v["converged"], "iterations": v["iterations"],
            "residual": v["residual"],
        }

    # bounded memory on large grids: mva._chunks evaluates the element-wise
    # closed form chunk by chunk into preallocated outputs
    out = evaluate_chunked(point, [W, o, l_, L, s, d, m, ch, cO, phi, N, O])
    out["iterations"] = out["iterations"] + extra_iter
    return out


# ---------------------------------------------------------------------------
# queueing-network methods (mva engine)
# ---------------------------------------------------------------------------

def _ini_network(W: float, o: float, l_: float, O: float, L: float, ch: float, cO: float,
                 S: int, K: int, clusters: int, dispatch: str) -> tuple[Any, dict[str, Any]]:
    """The INI machine as an :class:`mva.ClosedNetwork` (one chain per PE thread)."""
    import mva

    T = clusters * S                      # threads = chains
    n_ini = clusters if dispatch == "shared" else clusters * K
    n_st = T + n_ini                      # PE stations, then INI stations
    classes = ("compute", "request", "reply", "ini")
    C = 4 * T
    visits = np.zeros((C, n_st))
    service = np.zeros((C, n_st))
    chains = np.repeat(np.arange(T), 4)
    prio = np.tile([0, 1, 1, 0], T)

    def ini_of(pe: int) -> int:            # static binding of PE -> INI station index
        cl, j = divmod(pe, S)
        return T + (cl if dispatch == "shared" else cl * K + (j % K))

    def inis_of_cluster(cl: int) -> list[int]:
        return [T + cl] if dispatch == "shared" else [T + cl * K + k for k in range(K)]

    n_remote = S * (clusters - 1)
    for t in range(T):
        cl = t // S
        base = 4 * t
        visits[base + 0, t] = 1.0
        service[base + 0, t] = W
        for j in range(T):
            if j // S != cl:
                visits[base + 1, j] = 1.0 / n_remote
                service[base + 1, j] = o
        visits[base + 2, t] = 1.0
        service[base + 2, t] = o
        row = base + 3
        if dispatch == "static":
            visits[row, ini_of(t)] += 2.0            # request out, reply in
            for j in range(T):
                if j // S != cl:
                    visits[row, ini_of(j)] += 2.0 / n_remote   # request in, reply out
        else:
            home = inis_of_cluster(cl)
            for k in home:
                visits[row, k] += 2.0 / len(home)
            for rc in range(clusters):
                if rc != cl:
                    rem = inis_of_cluster(rc)
                    for k in rem:
                        visits[row, k] += 2.0 / (len(rem) * (clusters - 1))
        service[row, T:] = O
    demands = visits * service
    kinds = tuple(["queue"] * T + (["multi"] * n_ini if dispatch == "shared" and K > 1
                                   else ["queue"] * n_ini))
    servers = np.array([1] * T + [K if dispatch == "shared" else 1] * n_ini)
    cs2 = np.array([ch] * T + [cO] * n_ini, dtype=float)
    net = mva.ClosedNetwork(
        demands=demands, populations=np.ones(T, dtype=int),
        think_times=np.full(T, 2.0 * l_ + 2.0 * L), kinds=kinds, servers=servers,
        rates=tuple([None] * n_st), cs2=cs2, visits=visits, chains=chains, priorities=prio,
        station_names=tuple([f"PE{i}" for i in range(T)] + [f"INI{k}" for k in range(n_ini)]),
        class_names=tuple(f"{c}{t}" for t in range(T) for c in classes))
    return net, {"T": T, "n_ini": n_ini}


#: largest number of chains (threads) "exact" accepts (2**chains population vectors)
EXACT_MAX_CHAINS = 14

#: default ``tol`` for the engine's iterative solvers (see :data:`models.lopc.ENGINE_TOL`)
ENGINE_TOL = 1e-11


def _engine(method: str) -> Any:
    """The :mod:`mva` solver function for a method name."""
    import mva

    return getattr(mva, {"exact": "exact_mva"}.get(method, method))


def _solve_network_point(W: float, o: float, l_: float, O: float, L: float, ch: float,
                         cO: float, S: int, K: int, clusters: int, dispatch: str, method: str,
                         opts: Mapping[str, Any]) -> dict[str, Any]:
    T = clusters * S
    if method == "exact" and T > EXACT_MAX_CHAINS:
        raise ValueError(f"method='exact' builds one chain per PE thread (clusters * S = {T}) "
                         f"and needs 2**{T} population vectors; allowed clusters * S <= "
                         f"{EXACT_MAX_CHAINS}; use method='auto' (any size), 'linearizer' or "
                         f"'schweitzer'")
    from mva._cost import check_network

    n_st = T + (clusters if dispatch == "shared" else clusters * K)
    # one chain per PE thread, four classes each: refuse before allocating the arrays
    check_network(f"ini at clusters * S = {T} PE threads", method, 4 * T, n_st, T,
                  instead="method='auto' (node-level chains, whose size does not grow with "
                          "the machine) or method='thesis'")
    net, info = _ini_network(W, o, l_, O, L, ch, cO, S, K, clusters, dispatch)
    T, n_ini = info["T"], info["n_ini"]
    res = _engine(method)(net, **opts)
    X = np.asarray(res.chain_throughput, dtype=float)
    lam = float(np.mean(X))
    Rres = np.asarray(res.residence_time, dtype=float)   # (C, K) per cycle
    Q = np.asarray(res.queue_length, dtype=float)
    comp, req, rep, ini = (slice(i, 4 * T, 4) for i in range(4))
    R_w = float(np.mean(Rres[comp].sum(axis=1)))
    R_q = float(np.mean(Rres[req].sum(axis=1)))
    R_y = float(np.mean(Rres[rep].sum(axis=1)))
    R_o = float(np.mean(Rres[ini].sum(axis=1))) / 4.0
    Q_q = float(Q[req, :T].sum()) / T
    Q_y = float(Q[rep, :T].sum()) / T
    per_ini = K if dispatch == "shared" else 1
    Q_o = float(Q[ini, T:].sum()) / (n_ini * per_ini)     # messages per INI node
    return {"R": 1.0 / lam, "lam": lam, "R_w": R_w, "R_q": R_q, "R_y": R_y, "R_o": R_o,
            "Q_q": Q_q, "Q_y": Q_y, "Q_o": Q_o, "U_q": o * lam, "U_y": o * lam,
            "U_o": 4.0 * (S / K) * lam * O,
            "converged": bool(getattr(res, "converged", True)),
            "iterations": int(getattr(res, "iterations", 0) or 0),
            "residual": float(getattr(res, "residual", 0.0) or 0.0)}


def _solve_network(p: INIParams, method: str, opts: Mapping[str, Any]) -> dict[str, Any]:
    if p.S is None:
        raise ValueError(f"method={method!r} needs a whole number of PEs per cluster, at least "
                         f"1; got N={p.N!r}, K={p.K!r} (give S or an N with N*K integral; "
                         "method='thesis' takes any N > 0)")

    def point(W: float, o: float, l_: float, O: float, L: float, ch: float, cO: float,
              S: float, K: float) -> dict[str, Any]:
        return _solve_network_point(W, o, l_, O, L, ch, cO, int(S), int(K), p.clusters,
                                    p.dispatch, method, opts)

    names = ("W", "o", "l", "O", "L", "cs2_o", "cs2_O", "S", "K")
    from mva._cost import check_network, check_time, network_seconds

    grid = {tuple(map(float, v)) for v in zip(*(a.ravel() for a in np.broadcast_arrays(
        *(np.asarray(getattr(p, n), dtype=float) for n in names))))}
    T = [p.clusters * int(v[7]) for v in grid]
    n_st = [t + (p.clusters if p.dispatch == "shared" else p.clusters * int(v[8]))
            for t, v in zip(T, grid)]
    big = int(np.argmax(T))             # memory first (as each point checks it), then time
    check_network(f"ini at clusters * S = {T[big]} PE threads", method, 4 * T[big], n_st[big],
                  T[big], instead="method='auto' (node-level chains, whose size does not grow "
                                  "with the machine) or method='thesis'")
    check_time(f"ini method={method!r} at clusters * S = {max(T)} PE threads ({len(grid)} "
               f"point(s))", sum(network_seconds(method, 4 * t, n, t) for t, n in zip(T, n_st)),
               instead="method='auto' (node-level chains, whose size does not grow with the "
                       "machine) or method='thesis'")
    return _per_point(p, names, point, ("R", "lam", "R_w", "R_q", "R_y", "R_o", "Q_q", "Q_y",
                                        "Q_o", "U_q", "U_y", "U_o"))


def _per_point(p: INIParams, names: tuple[str, ...], point: Any,
               keys: tuple[str, ...]) -> dict[str, Any]:
    """Evaluate ``point(*values)`` once per distinct grid point and broadcast back.

    Returns the ``keys`` as arrays of the grid's shape plus ``converged`` and
    the largest ``iterations`` and ``residual``.
    """
    arrs = np.broadcast_arrays(*(np.asarray(getattr(p, n), dtype=float) for n in names))
    shape = arrs[0].shape
    flat = [a.ravel() for a in arrs]
    out = {k: np.empty(flat[0].size) for k in keys}
    conv = np.ones(flat[0].size, dtype=bool)
    iters, resid = 0, 0.0
    cache: dict[tuple[float, ...], dict[str, Any]] = {}
    from mva.progress import progress

    n = flat[0].size     # a bar on a terminal once the points take more than two seconds
    for i in progress(range(n), total=n, desc="ini points", delay=2.0):
        key = tuple(float(a[i]) for a in flat)
        if key not in cache:
            cache[key] = point(*key)
        v = cache[key]
        for k in keys:
            out[k][i] = v[k]
        conv[i] = v["converged"]
        iters = max(iters, v["iterations"])
        resid = max(resid, v["residual"])
    res: dict[str, Any] = {k: a.reshape(shape) for k, a in out.items()}
    res.update(converged=conv.reshape(shape), iterations=iters, residual=resid)
    return res


#: the twin correction of a shared queue is applied up to this many INIs per cluster (the
#: declared domain's largest K) where its chain holds the whole population
#: (:data:`PAIR_FULL_POP`, :data:`SPLIT_MAX_POP`); each of its rounds solves the node chain
#: with a K-server hyperexponential station.  On the fresh seed-31 design the 19 such
#: points with K = 5-8 went from 1.13 / 5.16 / 9.83% (mean / p95 / max of R) uncorrected
#: to 0.86 / 2.86 / 5.06%
PAIR_MAX_SERVERS = 8

#: ... and up to this many where the chain's population is reduced (:data:`PAIR_CAP_POP`):
#: there, at K = 5-8, the reduced chain's factor made the 17 points of the same design
#: worse (0.63 / 1.98 / 2.88% -> 0.70 / 3.18 / 4.40%) and a point cost up to 110 ms
PAIR_CAP_SERVERS = 4

#: the split-station correction of three or more clusters is applied up to this many
#: customers (:func:`models._node.split_residence`, not lumped: 21 customers and two
#: phases take 1,000 states, 3-4 ms a solve; at 24 customers a three-cluster point
#: of the seed-2026 design took 54-60 ms warm, above the 50 ms budget)
SPLIT_MAX_POP = 30

#: ... and up to this many clusters: at 5-21 clusters (seed-11 design, 200 points
#: within SPLIT_MAX_POP) it changed nothing that matters (``R`` mean 1.07% -> 1.09%,
#: max 7.4% -> 7.8%; one INI starving among many is a small effect), at 3-4
#: clusters it took ``R`` from 2.74% to 2.24% (one INI per cluster, seed 7)
SPLIT_MAX_CLUSTERS = 4


#: at two clusters, beyond :data:`models._node.PAIR_MAX_POP` customers (where the twin
#: chain is the station itself, solved at every step of the node fixed point) and up to
#: this many, the waiting factor comes from the twin chain of the full population (two
#: to five solves a point)
PAIR_FULL_POP = 48


#: beyond :data:`PAIR_FULL_POP` customers at two clusters (beyond
#: :data:`SPLIT_MAX_POP` at three or four) the waiting factor comes from the twin
#: (split) chain of this many customers, the waiting part of ``R_o`` scaled by the
#: population ratio (:func:`_twin_factor`).  Chosen on fresh seed-41/43 designs (289
#: points at two to four clusters, 96 beyond the limits): caps 32/21, 24/16, 16/12,
#: 12/9 gave those points a mean |error| of ``R`` of 1.39, 1.44, 1.53, 1.64% (2.30%
#: without the correction); 16/12 keeps each round's chain at about 1 ms, so the
#: points cost about what they did uncorrected
PAIR_CAP_POP = 32

#: the split chain's reduced population (three or four clusters), see :data:`PAIR_CAP_POP`
SPLIT_CAP_POP = 21


def _ini_station(N: float, K: int, clusters: int, dispatch: str, O: float,
                 cO: float, l_: float = 0.0) -> dict[str, Any]:
    """The INI station seen by the node method (see :func:`models._node.solve_node`).

    The station is fed by two populations, each carrying half of its
    ``4 n`` visits per round trip (``n`` threads per station: ``N``, or
    ``S`` for a shared queue): ``h`` home threads (its own PEs' requests out
    and replies in; ``N`` static, all ``S`` of the cluster otherwise), each
    at ``2 n / (h R)`` visits per unit time, and the ``r = S (clusters - 1)``
    threads of the other clusters (requests in, replies out), each at
    ``2 n / (r R)``.  A customer present removes its own rate from the
    arrival stream; one class of ``M`` finite sources with the same total
    rate and the same mean decrement (half the customers present are of
    each population) has

    .. math:: M = \\frac{4 n}{n/h + n/r} = \\frac{4 h r}{h + r}

    sources, between ``2 n`` (two clusters, static) and ``4 n``.  Round-robin
    dispatch enters only through the populations (every PE of the cluster
    is a home thread of every INI, at ``1/K`` of its rate); the Kingman-style
    regularity factor of the closed form (:func:`round_robin_arrival_scv`)
    is not applied: on the seed-2026 design it made round-robin points
    worse (``R`` mean 1.19% against 1.07%).

    With service of at most two phases (``cs2_O >= 0.5``) the station also
    carries the INIs' mutual starvation (``"pair"``: :func:`_twin_factor`,
    :func:`_solve_pair_point`): ``pop = clusters x S`` customers (``clusters
    x N`` for round robin with ``K > 1``: ``K`` sets of single INIs), a
    cluster's ``K`` shared servers as one server of mean ``O/K``.  Two
    clusters of one INI: the twin chain itself (exact, ``pop <=``
    :data:`models._node.PAIR_MAX_POP`); two clusters otherwise: its waiting
    ratio (shared queues up to :data:`PAIR_MAX_SERVERS` INIs); three or four
    clusters (:data:`SPLIT_MAX_CLUSTERS`): the split chain's waiting ratio
    (:func:`models._node.split_residence`).  Beyond ``pop =``
    :data:`models._node.PAIR_MAX_POP` (two clusters) or :data:`SPLIT_MAX_POP`
    (three, four) the ratio's chain has :data:`PAIR_CAP_POP` or
    :data:`SPLIT_CAP_POP` customers (``"pair"``) and ``"pair_scale"`` is
    that population over ``pop`` (else 1).
    Not for static dispatch with ``K > 1``: a PE's home INI is fixed, and
    its errors there were small (seed-7 design, ``R`` mean 1.2%).
    """
    from models._node import (PAIR_MAX_PHASES, PAIR_MAX_POP, REVISIT_MAX_HOME,
                              REVISIT_MAX_PHASES, handler_ph)

    S = N * K
    r = S * (clusters - 1)
    if dispatch == "shared":
        n, h, servers = S, S, int(K)
    elif dispatch == "round_robin":
        n, h, servers = N, S, 1
    else:
        n, h, servers = N, N, 1
    sources = max(1.0, 4.0 * h * r / (h + r))
    out: dict[str, Any] = {"visits": 4.0, "threads": n, "sources": sources, "servers": servers,
                           "S": O, "cs2": cO, "phi": 1.0}
    rr = dispatch == "round_robin" and K > 1
    pop = int(round(clusters * (N if rr else S)))
    big = pop > (PAIR_FULL_POP if clusters == 2 else SPLIT_MAX_POP)
    if (O > 0 and (K == 1 or dispatch != "static")
            and not (dispatch == "shared" and K > (PAIR_CAP_SERVERS if big else PAIR_MAX_SERVERS))
            and clusters <= SPLIT_MAX_CLUSTERS
            and len(handler_ph(O, cO)[0]) <= PAIR_MAX_PHASES):
        cap = PAIR_CAP_POP if clusters == 2 else SPLIT_CAP_POP
        out["pair"] = cap if big else pop
        out["pair_scale"] = cap / pop if big else 1.0
        out["pair_S"] = O / K if dispatch == "shared" else O
        out["pair_rate"] = 1.0
        out["pair_exact"] = K == 1 and clusters == 2 and pop <= PAIR_MAX_POP
        out["pair_stations"] = int(clusters)
    elif (O > 0 and servers == 1 and not rr and float(h).is_integer() and h <= REVISIT_MAX_HOME
          and len(handler_ph(O, cO)[0]) <= REVISIT_MAX_PHASES):
        # a thread's request and reply pass the same INI (one INI per cluster, or a PE's
        # own under static dispatch): its two visits there are a gap ``l`` (plus the
        # handler) apart; round robin over K > 1 INIs sends them to different ones
        out["revisit"] = (int(h), float(r), float(l_))
    return out


def _twin_factor(station: dict[str, Any], lam_o: float, Ro: float) -> float:
    r"""The twin-station waiting factor ``f`` of :func:`_solve_pair_point` at ``(lam_o, R_o)``.

    Ratio of the waiting time in the twin chain (two clusters,
    :func:`models._node.pair_effective`) or the split chain (more clusters,
    :func:`models._node.split_residence`) to the waiting time in one
    finite-source station of the same customers, service and arrival rate
    (:func:`models._node.station_effective`).

    Notes
    -----
    With ``pop`` customers, ``c`` clusters, service mean :math:`S_1`
    (``O``, or ``O/K`` for a shared queue) and the station's visit rate
    :math:`\lambda`, the chain's delay is set so that station 1 is fed at
    :math:`\lambda` when the station's residence is :math:`R_o` and the
    aggregate's (``c - 1`` times as fast, fed ``c - 1`` times as often) is
    :math:`R_o/(c-1)`:

    .. math::

        Z = \frac{pop}{c \lambda} - \frac{2 R_o}{c}, \qquad
        f = \frac{R^{chain}_1(Z) - S_1}{R^{single}(\lambda, R_o) - S_1}

    (:math:`c = 2`: :math:`Z = pop/(2\lambda) - R_o`, the twin chain's own
    setting).  Taking the aggregate's residence as :math:`R_o` instead made
    the delay too short: the chain ran at up to twice the station's rate
    and overstated ``R`` by up to 57% at four clusters (seed-7 design).
    Where the twin chain is the station itself (``pair_exact``) the single
    station is the one of :func:`_ini_station`, so that the fixed point is
    the twin chain's.

    With a reduced population (``pair_scale`` :math:`s = cap/pop < 1`) both
    chains are evaluated at :math:`R_o' = S_1 + s (R_o - S_1)`, the waiting
    part scaled with the customers: a chain of ``cap`` customers cannot hold
    the real queue, and with :math:`R_o` itself its delay collapsed and the
    factor fell below 1 (0.56-0.58 at two clusters where the full chain gives
    1.12-1.19); scaled, it is within 0.1-2.6% of the full chain's factor.
    """
    from models._node import pair_effective, split_residence, station_effective

    pop, S1, cO = station["pair"], station["pair_S"], station["cs2"]
    lam = lam_o * station["pair_rate"]
    scale = station.get("pair_scale", 1.0)
    if scale != 1.0:     # a reduced population: the waiting part of R_o scaled with it
        Ro = S1 + (Ro - S1) * scale
    c = station.get("pair_stations", 2)
    if c == 2:
        Rp = pair_effective(lam, Ro, pop, S1, cO)[0]
    else:
        Rp = split_residence(max(pop / (c * lam) - 2.0 * Ro / c, 1e-3 * S1), pop, S1, cO, c)[0]
    if station["pair_exact"]:
        Rs = station_effective(lam, Ro, station["sources"], station["servers"], S1, cO,
                               station["phi"])[0]
    else:
        Rs = station_effective(lam, Ro, pop, 1, S1, cO)[0]
    return (Rp - S1) / (Rs - S1) if Rs - S1 > 1e-12 * S1 else 1.0


def _station_effective(station: dict[str, Any], lam_o: float, Ro: float) -> tuple[float, float]:
    """``(R_o, Q_o)`` of the INI station of :func:`_ini_station` fed at ``lam_o``."""
    from models._node import pair_effective, station_effective

    if station.get("pair") and station["pair_exact"]:
        return pair_effective(lam_o, Ro, station["pair"], station["S"], station["cs2"])
    R_o, Q_o = station_effective(lam_o, Ro, station["sources"], station["servers"],
                                 station["S"], station["cs2"], station["phi"])[:2]
    if station.get("pair"):
        R_o = station["S"] + _twin_factor(station, lam_o, Ro) * (R_o - station["S"])
        Q_o = lam_o * R_o
    return R_o, Q_o


#: one PE per cluster on at most this many clusters (and more than
#: :data:`models._node.FULL_MAX_P`), with a variable or exponential handler, is solved
#: as LoPC solves its machine there (:data:`models.lopc.WHOLE_MAX_P`): the whole machine
#: as one lumped chain of unordered channels.  The node chain alone was up to 8.7% low at
#: handler-bound points of four clusters (a fresh seed-7 design: the 30 such points went
#: from 1.39 / 8.11 / 8.67% to 0.51 / 1.82 / 2.05%, mean / p95 / max of R)
WHOLE_MAX_CLUSTERS = 4


def _whole_lumped(N: float, K: int, clusters: int, o: float, ch: float) -> bool:
    """One PE per cluster on at most :data:`WHOLE_MAX_CLUSTERS` clusters with a variable or
    exponential handler: the whole-machine chain of :func:`_solve_small_point`."""
    from models._node import handler_ph

    return (N == 1 and K == 1 and clusters <= WHOLE_MAX_CLUSTERS and o > 0
            and (ch > 1.0 or len(handler_ph(o, ch)[0]) == 1))


def _solve_small_point(W: float, o: float, l_: float, O: float, L: float, ch: float, cO: float,
                       P: int, station: dict[str, Any], tol: float,
                       max_iter: int) -> dict[str, Any]:
    """One PE per cluster on at most three clusters, or four (:data:`WHOLE_MAX_CLUSTERS`):
    the whole-machine chain.

    With one PE per cluster every request goes to a uniformly chosen other
    PE, as in LoPC, so the PEs, their threads and their FCFS handler queues
    are LoPC's whole-machine chain (:func:`models._node.solve_full`: FIFO
    channels and Erlang latency up to three PEs, LoPC's lumped chain of
    unordered channels at four) with the one-way latency ``l + L + 2 R_o``
    (the two intra-cluster hops of ``l/2``, the inter-cluster hop and two
    INI residences).  ``R_o`` comes from the INI station chain
    (:func:`models._node.station_effective`) fed at the chain's cycle rate;
    the scalar fixed point in ``R_o`` is solved by safeguarded secant steps.
    The node chain's finite-source view of the other threads is poorest in
    such machines (two PEs in lockstep: -26% of ``R`` on the seed-7 design).
    """
    from models._node import FULL_MAX_P, solve_full
    from models.lopc import LATENCY_STAGES

    k = LATENCY_STAGES.get(P, 1)
    fifo = P <= FULL_MAX_P      # beyond: LoPC's lumped chain of unordered channels
    if O == 0.0:             # no INI time: the whole-machine chain alone
        f = solve_full(P, W, o, ch, l_ + L, latency_stages=k, fifo=fifo)
        return dict(f, R_o=0.0, Q_o=0.0)

    def g(Ro: float) -> tuple[float, dict[str, Any], float]:
        f = solve_full(P, W, o, ch, l_ + L + 2.0 * Ro, latency_stages=k, fifo=fifo)
        lam_o = station["threads"] * station["visits"] / f["R"]
        Ron, Qo = _station_effective(station, lam_o, Ro)
        return Ron - Ro, f, Qo

    a = O
    ga, f, Qo = g(a)
    b = a + ga
    it, res = 1, abs(ga) / a
    while res > tol and it < max_iter:
        gb, f, Qo = g(b)
        it += 1
        res = abs(gb) / b
        if res <= tol:
            break
        # secant step, kept within [O, b + 2 gb] (g decreases in R_o) and damped otherwise
        c = b - gb * (b - a) / (gb - ga) if gb != ga else b + 0.5 * gb
        if not (c >= O and math.isfinite(c)):
            c = max(O, b + 0.5 * gb)
        a, ga, b = b, gb, c
    Ro = b
    return dict(f, R_o=Ro, Q_o=Qo, converged=res <= tol, iterations=it, residual=res)


#: most rounds of the twin-station correction (:func:`_solve_pair_point`)
PAIR_ROUNDS = 12

#: relative tolerance on the twin-station waiting factor (:func:`_solve_pair_point`):
#: the factor moves the INI waiting time, so 1e-6 of it is far below the model's
#: error, and it saves one or two rounds (each a node fixed point and a twin-chain
#: solve, up to 13 ms) against the node method's 1e-7
PAIR_FACTOR_TOL = 1e-6

#: relative tolerance on the waiting factor where it comes from a chain that only
#: approximates the station (several INIs per cluster, three or four clusters, or a
#: population reduced to :data:`models._node.PAIR_MAX_POP` / :data:`SPLIT_MAX_POP`):
#: the factor's own approximation is of the order of 1% (a reduced population against
#: the full one: 0.3-0.9% of ``f``), so converging it further buys nothing, and it
#: saves one or two rounds (each a node fixed point, 10-25 ms at the slowest points)
PAIR_APPROX_TOL = 1e-3


def _solve_pair_point(W: float, o: float, l_: float, O: float, L: float, ch: float, cO: float,
                      sources: int, station: dict[str, Any], tol: float,
                      max_iter: int) -> dict[str, Any]:
    """The node method with the INIs' mutual starvation (``station["pair"]``, :func:`_twin_factor`).

    The twin-station chain (:func:`models._node.pair_residence`, up to
    :data:`models._node.PAIR_MAX_POP` customers, thousands of states) costs
    far more than the single finite-source station, so it is not solved at
    every step of the node fixed point.  Instead the fixed point runs with
    the single station whose waiting time is multiplied by a factor
    ``f`` (``station["wait_factor"]``), and ``f`` is the ratio of the twin
    station's waiting time to the single one's, both at the current fixed
    point:

    .. math:: f = \\frac{R_o^{pair}(\\lambda_o, R_o) - O}{R_o^{single}(\\lambda_o, R_o) - O}

    iterated by secant steps on ``F(f) - f`` until ``|F(f) - f| <= tol F(f)``
    (``tol`` at least :data:`PAIR_FACTOR_TOL`, or :data:`PAIR_APPROX_TOL` where the
    chain only approximates the station; two to five chain solves).
    With one INI per cluster at two clusters the residence used at that
    point is the twin station's, so the fixed point is the one of the twin
    chain solved at every step; otherwise the twin (split) chain of
    :func:`_twin_factor` only gives the factor.
    """
    from models._node import solve_node

    single = {k: v for k, v in station.items() if k != "pair"}
    delay = 2.0 * l_ + 2.0 * L

    def run(f: float, x0: Any) -> tuple[dict[str, Any], float]:
        st = dict(single, wait_factor=f) if f != 1.0 else single
        v = solve_node(sources, W, o, ch, delay, station=st, tol=tol, max_iter=max_iter, x0=x0)
        lam_o = station["threads"] * station["visits"] / v["R"]
        return v, _twin_factor(station, lam_o, v["R_o"])

    ftol = max(tol, PAIR_FACTOR_TOL if station["pair_exact"] else PAIR_APPROX_TOL)
    f0 = 1.0
    v, F0 = run(f0, None)
    its = int(v["iterations"])
    conv = abs(F0 - f0) <= ftol * F0
    f1 = F0
    for _ in range(PAIR_ROUNDS):
        if conv:
            break
        v, F1 = run(f1, (v["R"], v["R_q"], v["R_o"]))
        its += int(v["iterations"])
        conv = abs(F1 - f1) <= ftol * F1
        # secant step on h(f) = F(f) - f (F varies slowly with f: two or three rounds)
        h0, h1 = F0 - f0, F1 - f1
        nxt = f1 - h1 * (f1 - f0) / (h1 - h0) if h1 != h0 else F1
        if not (math.isfinite(nxt) and nxt > 0):
            nxt = F1
        f0, F0, f1 = f1, F1, nxt
    out = dict(v)
    out["converged"] = bool(v["converged"]) and conv
    out["iterations"] = its
    return out


#: the revisit station (:func:`models._node.revisit_station_residence`) is used where
#: at most this many remote threads are, on average, between their two visits to an
#: INI (the gap short against the time between remote visits: the returns come while
#: the service that started at the departure may still run); with more, the one-population
#: station is kept
REVISIT_MAX_POOL = 1.0

#: ... and where that gap is at most this many mean INI services
REVISIT_MAX_GAP = 1.0


def _solve_revisit_point(W: float, o: float, l_: float, O: float, L: float, ch: float,
                         sources: int, station: dict[str, Any], tol: float,
                         max_iter: int) -> dict[str, Any]:
    """The node method with the INI seen as home and remote threads visiting it in pairs.

    The fixed point with the one-population station (:func:`_ini_station`'s
    ``sources``) runs first; where a thread's two visits to an INI are close
    (at most :data:`REVISIT_MAX_POOL` remote threads in the gap between
    them, on average), it is continued from there with the two-population
    station of paired visits (``station["revisit"]``,
    :func:`models._node.revisit_station_residence`).
    """
    from models._node import solve_node

    single = {k: v for k, v in station.items() if k != "revisit"}
    delay = 2.0 * l_ + 2.0 * L
    v = solve_node(sources, W, o, ch, delay, station=single, tol=tol, max_iter=max_iter)
    gap = l_ + v["R_q"]
    pool = station["threads"] * gap / v["R"]
    if pool > REVISIT_MAX_POOL or gap > REVISIT_MAX_GAP * O:
        return v
    w = solve_node(sources, W, o, ch, delay, station=station, tol=tol, max_iter=max_iter,
                   x0=(v["R"], v["R_q"], v["R_o"]))
    w["iterations"] = int(w["iterations"]) + int(v["iterations"])
    return w


def _solve_node_point(W: float, o: float, l_: float, O: float, L: float, ch: float, cO: float,
                      N: float, K: int, clusters: int, dispatch: str, tol: float,
                      max_iter: int) -> dict[str, Any]:
    """One point of the node method: a PE chain coupled to an INI station chain."""
    from models._node import FULL_MAX_P, solve_node

    S = N * K
    sources = max(1, int(round(S * (clusters - 1))))
    station = _ini_station(N, K, clusters, dispatch, O, cO, l_)
    if o == 0.0:
        # no handler time: the PE chain is empty; iterate the INI station alone
        R = W + 2 * l_ + 2 * L + 4 * O
        Ro = O
        for it in range(1, max_iter + 1):
            lam_o = station["threads"] * 4.0 / R
            Ro, Qo = _station_effective(station, lam_o, Ro)
            Rn = W + 2 * l_ + 2 * L + 4 * Ro
            if abs(Rn - R) <= tol * R:
                break
            R = 0.5 * R + 0.5 * Rn
        v = {"R": Rn, "R_w": W, "R_p": 0.0, "R_q": 0.0, "R_y": 0.0, "Q_q": 0.0, "Q_y": 0.0,
             "R_o": Ro, "Q_o": Qo, "converged": abs(Rn - R) <= tol * R, "iterations": it,
             "residual": abs(Rn - R) / R}
    elif (S * clusters <= FULL_MAX_P and K == 1) or _whole_lumped(N, K, clusters, o, ch):
        v = _solve_small_point(W, o, l_, O, L, ch, cO, int(round(S * clusters)), station, tol,
                               max_iter)
    else:
        if station.get("pair"):
            v = _solve_pair_point(W, o, l_, O, L, ch, cO, sources, station, tol, max_iter)
        elif station.get("revisit"):
            v = _solve_revisit_point(W, o, l_, O, L, ch, sources, station, tol, max_iter)
        else:
            v = solve_node(sources, W, o, ch, 2.0 * l_ + 2.0 * L, station=station, tol=tol,
                           max_iter=max_iter)
    lam = 1.0 / v["R"]
    # Q_o per INI node by Little's law (N threads' worth of 4 visits per node)
    return {"R": v["R"], "lam": lam, "R_w": v["R_w"], "R_p": v["R_p"], "R_q": v["R_q"],
            "R_y": v["R_y"], "R_o": v["R_o"], "Q_q": v["Q_q"], "Q_y": v["Q_y"],
            "Q_o": 4.0 * N * lam * v["R_o"], "U_q": o * lam, "U_y": o * lam,
            "U_o": 4.0 * N * lam * O,
            "converged": bool(v["converged"]), "iterations": int(v["iterations"]),
            "residual": float(v["residual"])}


def _solve_node(p: INIParams, *, tol: float, max_iter: int, on_fail: str) -> dict[str, Any]:
    N_, K_ = np.broadcast_arrays(np.asarray(p.N, float), np.asarray(p.K, float))
    if np.any(N_ * K_ < 1.0):
        j = int(np.argmin(N_ * K_))
        n, k = float(N_.ravel()[j]), int(K_.ravel()[j])
        raise ValueError(f"method 'node' (the default, method='auto') needs at least one PE per "
                         f"cluster, N * K >= 1; got N={n:g}, K={k} (N * K = {n * k:g}); "
                         "method='thesis' takes any N > 0")
    def point(W: float, o: float, l_: float, O: float, L: float, ch: float, cO: float,
              N: float, K: float) -> dict[str, Any]:
        return _solve_node_point(W, o, l_, O, L, ch, cO, N, int(K), p.clusters, p.dispatch,
                                 min(tol * 1e6, 1e-7), max_iter)

    res = _per_point(p, ("W", "o", "l", "O", "L", "cs2_o", "cs2_O", "N", "K"), point,
                     ("R", "lam", "R_w", "R_p", "R_q", "R_y", "R_o", "Q_q", "Q_y", "Q_o",
                      "U_q", "U_y", "U_o"))
    conv, iters, resid = res["converged"], res["iterations"], res["residual"]
    if not conv.all():
        from mva.errors import report_nonconvergence
        report_nonconvergence(on_fail, f"INI node method: the fixed point did not converge in "
                              f"{max_iter} iterations (residual {resid:.3g})",
                              iterations=iters, residual=resid)
    return res


# ---------------------------------------------------------------------------
# public solve
# ---------------------------------------------------------------------------

#: a time (W, o, l, O or L) below this fraction of the point's largest one is
#: taken as 0: its effect on the result is below double precision (1e-18 rather
#: than LoPC's 1e-12, so that the thesis method's residences stay exact to
#: 1e-12 in absolute terms for times up to 1e5)
TIME_EPS = 1e-18

_TIMES = ("W", "o", "l", "O", "L")


def _time_units(p: INIParams, *, grid_unit: bool = False) -> tuple[INIParams, np.ndarray]:
    """``(p in units of s, s)``, ``s`` the power of two with the largest time / ``s`` in [1, 2).

    Every method is homogeneous of degree one in the times and scaling by a
    power of two is exact, so the results are unchanged -- except that times
    far apart in size (a denormal ``l`` beside ``O = 100``, ``W = 1e300``) no
    longer overflow a rate to ``inf`` (or underflow to ``0``): a time below
    :data:`TIME_EPS` of the largest is taken as 0 (as in :mod:`models.lopc`).

    With ``grid_unit`` (the vectorised thesis method) one scalar ``s`` serves
    the whole grid when its non-zero times lie within :data:`GRID_UNIT_RANGE`
    of each other: then no time is below :data:`TIME_EPS` of its point's
    largest, every scaled time stays far inside the normal doubles, so the
    results are bit-identical to per-point units, and the scaled times keep
    their own (open-mesh) shapes instead of six grid-sized arrays.
    """
    t = {n: np.asarray(getattr(p, n), dtype=float) for n in _TIMES}
    if grid_unit:
        top = max(float(np.max(x)) for x in t.values())
        low = min((float(np.min(x, initial=np.inf, where=x > 0)) for x in t.values()),
                  default=np.inf)
        if 0 < top < np.inf and low >= top / GRID_UNIT_RANGE:
            unit = np.ldexp(1.0, np.frexp(top)[1] - 1)
            q = copy.copy(p)
            for n, x in t.items():
                object.__setattr__(q, n, np.where(x > 0, x / unit, 0.0))
            return q, np.asarray(unit)
    big = np.maximum.reduce(np.broadcast_arrays(*t.values()))   # > 0 (R0 > 0 is checked)
    unit = np.ldexp(1.0, np.frexp(big)[1] - 1)
    # a copy with only the times changed: INIParams.replace would re-derive N from S
    # (N = 1.00001 with S = 1 passes its tolerance check and became 1.0)
    q = copy.copy(p)
    for n, x in t.items():
        object.__setattr__(q, n, np.where(x > TIME_EPS * big, x / unit, 0.0))
    return q, unit


#: largest ratio of the largest to the smallest non-zero time of a grid solved in
#: one time unit (2**59, about 5.8e17: below 1 / TIME_EPS, so no time of such a grid is
#: taken as 0, and the thesis polynomial's terms stay normal doubles)
GRID_UNIT_RANGE = 2.0 ** 59


def solve(params: INIParams | None = None, method: str = "auto", *, tol: float = 1e-13,
          max_iter: int = 200, on_fail: str = "warn", **kwargs: Any) -> INIResult:
    """Solve the INI model.

    Parameters
    ----------
    params : INIParams, optional
        Model parameters.  Alternatively pass the fields of
        :class:`INIParams` as keyword arguments.
    method : {"auto", "node", "thesis", "exact", "linearizer", "schweitzer"}, default "auto"
        ``"auto"``: :data:`AUTO_METHOD`, the most accurate method measured
        against the simulator on a random design over the declared domain
        (``python -m validation.model_accuracy --family ini``); it answers
        every point of the domain, and the result's ``method`` names the
        method that ran.  ``"node"``: a node-level Markov chain of one PE
        (its thread and FCFS handler queue, phase-type handler service,
        requests from the ``S (clusters - 1)`` remote threads as a finite
        source) coupled by a symmetric fixed point to a finite-source chain
        of one INI station (phase-type service; ``K`` servers for
        ``"shared"``) whose finite-source population stands for the home
        and remote threads that feed it (``_ini_station``: ``4hr/(h+r)``
        sources for ``h`` home and ``r`` remote threads).  Machines of one
        PE per cluster and at most three PEs are solved as LoPC's
        whole-machine chain with the INI residences in the latency
        (``_solve_small_point``); two clusters of one INI and at most
        :data:`models._node.PAIR_MAX_POP` PEs in all get a chain of the two
        INIs together (:func:`models._node.pair_residence`).  Every method
        runs in power-of-two time units (a time below :data:`TIME_EPS` of
        the largest counts as 0).  ``"thesis"``: equations
        6.1--6.10 as published (generalised only by ``cs2`` and the dispatch
        discipline), reduced to one polynomial in ``lambda`` and solved for
        the whole grid at once.  The other methods build the closed queueing
        network (one chain per PE thread, ``clusters * S`` threads) and
        solve it with the engine (:func:`mva.exact_mva` up to
        :data:`EXACT_MAX_CHAINS` threads, :func:`mva.linearizer`,
        :func:`mva.schweitzer`).
    tol, max_iter : float, int
        Root-finder tolerance (relative, on ``lambda * R0``) and iteration
        cap for ``"thesis"``; for the network methods they are passed to the
        engine when given explicitly via ``engine_options``.
    on_fail : {"warn", "raise", "ignore"}
        Non-convergence handling (see :mod:`mva.fixedpoint`).
    **kwargs
        Fields of :class:`INIParams` (when ``params`` is omitted), and
        ``engine_options`` (dict passed to the engine's solver function).

    Returns
    -------
    INIResult

    Notes
    -----
    Method ``"thesis"``: the thesis system (see :func:`thesis_system`) reduces to one equation
    :math:`F(\\lambda) = 0` whose numerator is a quintic polynomial; on the
    feasible interval

    .. math::

        0 < \\lambda \\le \\min\\left(\\frac{1}{R_0},\\ \\frac{1}{4N O},\\
        \\frac{\\sqrt5 - 1}{2o}\\right), \\qquad R_0 = W + 2l + 2L + 2o + 4O,

    the right-hand side of 6.1 increases with :math:`\\lambda` while
    :math:`1/\\lambda` decreases, so the root is unique and bracketed; the
    last two bounds are the poles of :math:`R_o` and :math:`R_q`.
    Cluster configurations: ``static`` and ``round_robin`` use ``N = S/K``
    PEs per INI (round-robin with :func:`round_robin_arrival_scv`);
    ``shared`` uses Seidmann's approximation of a ``K``-server station, a
    queue with service ``O/K`` fed by all ``S`` PEs plus a delay
    ``O (K-1)/K``.

    References
    ----------
    X. Jiang, MS thesis, MIT 1997, section 6.3, equations 6.1--6.11.

    Examples
    --------
    Figure 6-3's workload, 4 PEs per INI:

    >>> r = solve(INIParams(N=4, W=41789, o=742, O=2336), method="thesis")
    >>> round(r.R, 1), round(r.Q_o, 4), r.Q_o <= 4
    (65533.2, 1.3274, True)
    >>> r = solve(INIParams(N=4, W=41789, o=742, O=2336))
    >>> round(r.R, 1), r.method       # the simulator: 62,143 +- 358 (95%)
    (62074.9, 'node')

    A grid in one call (scalars in, scalars out; arrays in, arrays out):

    >>> import numpy as np
    >>> r = solve(N=np.array([1, 2, 4, 8]), W=41789, o=742, O=2336, method="thesis")
    >>> np.round(r.Q_o, 3).tolist()
    [0.204, 0.479, 1.327, 4.224]
    """
    engine_options = kwargs.pop("engine_options", None) or {}
    if params is None:
        check_kwargs("solve", kwargs, [f.name for f in fields(INIParams)])
        params = INIParams(**kwargs)
    elif kwargs:
        check_kwargs("solve", kwargs, [])
    if not isinstance(params, INIParams):
        raise ValueError(f"params must be an INIParams; got {type(params).__name__}")
    check_choice("method", method, METHODS)
    check_choice("on_fail", on_fail, ("warn", "raise", "ignore"))
    if method == "auto":
        from ._node import auto_method

        n_points = int(np.prod(np.broadcast_shapes(
            *(np.shape(getattr(params, k)) for k in _NUMERIC + ("K", "clusters")))))
        method = auto_method(n_points, "thesis", "INI")
    user_params = params
    params, unit = _time_units(params, grid_unit=method == "thesis")
    if method == "thesis":
        v = _solve_thesis(params, tol=tol, max_iter=max_iter, on_fail=on_fail)
    elif method == "node":
        v = _solve_node(params, tol=tol, max_iter=max_iter, on_fail=on_fail)
    else:
        opts = dict(engine_options)
        if method != "exact":
            opts.setdefault("on_fail", on_fail)
            opts.setdefault("tol", ENGINE_TOL)
        v = _solve_network(params, method, opts)
    # back to the user's time unit (a power of two: exact), in place where the
    # solver's arrays are its own (no grid-sized copies on large grids)
    v, scaled = dict(v), set()
    u = np.asarray(unit, dtype=float)
    for k, f in (("lam", 1.0 / u),) + tuple(
            (k, u) for k in ("R", "R_w", "R_q", "R_y", "R_o", "R_p")):
        if k in v and np.any(f != 1.0):
            a = np.asarray(v[k])
            if id(a) in scaled:             # the same array under two names: done once
                continue
            if a.ndim and a.flags.writeable and a.flags.owndata and a.dtype == float \
                    and np.broadcast_shapes(a.shape, f.shape) == a.shape:
                a *= f
                scaled.add(id(a))
            else:
                a = a * f
            v[k] = a
    params = user_params
    out = {k: scalar_or_array(v[k]) for k in _THESIS_PRIMARY + _THESIS_DERIVED if k in v}
    if "R" not in v:                        # the thesis solver: derived outputs on access
        out.update(_thesis_derived(params, out))
    with np.errstate(divide="ignore", over="ignore"):     # R = 1 / lam (the thesis: lazily)
        overflow = np.isposinf(1.0 / np.asarray(out["lam"], dtype=float))
    if np.any(overflow):
        big = max(_TIMES, key=lambda n: float(np.max(np.asarray(getattr(params, n), float))))
        raise ValueError(f"the round trip R overflows double precision (above about 1.8e308 "
                         f"cycles) at {big}={float(np.max(getattr(params, big))):g}: give the "
                         "times in a coarser unit")
    shape = np.shape(v["lam"])
    conv = np.asarray(v["converged"])
    res = INIResult(
        **out,
        contention=Derived(_contention, out["R"], params),
        R_p=scalar_or_array(np.broadcast_to(np.asarray(v.get("R_p", 0.0), dtype=float), shape)),
        contention_free=Derived(_contention_free, params, shape),
        bottleneck=Derived(_bottleneck, out["U_o"], out["U_q"], out["U_y"], params, out["R"]),
        saturated=False, method=method,
        converged=bool(conv) if conv.ndim == 0 else conv,
        iterations=int(v["iterations"]), residual=float(v["residual"]))
    return _attach_accuracy(with_inputs(res, params), "ini")


# ---------------------------------------------------------------------------
# presets (thesis chapters 5 and 6)
# ---------------------------------------------------------------------------

# the keys of FIGURE_6_3, typed so that ``INIParams(N=..., **FIGURE_6_3)`` type-checks
_Figure63 = TypedDict("_Figure63", {"W": float, "o": float, "O": float, "l": float, "L": float})

#: Figure 6-3 of the thesis: W = 41789, o = 742, O = 2336, l = L = 0 (cycles of
#: the 20 MHz Alewife); N varies.  Use ``INIParams(N=..., **FIGURE_6_3)``.
FIGURE_6_3: _Figure63 = {"W": 41789.0, "o": 742.0, "O": 2336.0, "l": 0.0, "L": 0.0}

#: Thesis Table 5.1 (send path, unloaded INI, machine cycles at 20 MHz):
#: message length (bytes) -> handler, queue, slid_win, UDP, IP, total.
TABLE_5_1: dict[str, tuple[float, ...]] = {
    "len": (0, 100, 200, 1400, 1600, 65000),
    "handler": (357, 391, 425, 900, 994, 32460),
    "queue": (409, 391, 460, 328, 404, 858),
    "slid_win": (140, 144, 140, 153, 153, 323),
    "UDP": (380, 375, 380, 380, 380, 540),
    "IP": (836, 1000, 1134, 2702, 10796, 385930),
    "total": (2318, 2557, 2875, 5865, 13002, 421733),
}

#: Thesis Table 5.2 (receive path): message length -> handler, queue, IP, UDP,
#: slid_win, total (the thesis leaves handler and queue blank above the MTU;
#: stored as NaN).
TABLE_5_2: dict[str, tuple[float, ...]] = {
    "len": (0, 100, 200, 1400, 1600, 65000),
    "handler": (286, 331, 347, 845, math.nan, math.nan),
    "queue": (340, 340, 339, 337, math.nan, math.nan),
    "IP": (816, 816, 816, 816, 10475, 543513),
    "UDP": (330, 496, 623, 2199, 1893, 77666),
    "slid_win": (145, 145, 145, 145, 154, 421),
    "total": (2513, 2794, 3005, 6125, 16153, 688080),
}

#: Maximum transfer unit of the thesis's implementation (bytes); longer
#: messages are fragmented by IP (Table 5.1 discussion).
MTU_BYTES = 1500

#: largest UDP payload (bytes)
_MAX_MESSAGE = 65507


def ini_overhead(message_bytes: Any, path: str = "send") -> Any:
    """INI processing time of one message as a function of its length (thesis Tables 5.1, 5.2).

    Parameters
    ----------
    message_bytes : float or array
        Message length in bytes, in ``[0, 65507]``.
    path : {"send", "receive", "mean"}
        Send path (Table 5.1), receive path (Table 5.2), or their mean (an
        INI of the model handles two sends and two receives per round trip).

    Returns
    -------
    float or array
        Cycles (20 MHz Alewife) spent in the INI, the tables' ``total``
        column.

    Notes
    -----
    Two regimes, split at the MTU of 1500 bytes: up to the MTU, piecewise
    linear interpolation of the measured totals at 0, 100, 200 and 1400
    bytes (extrapolated linearly from 1400 to 1500); above it, IP
    fragmentation (and re-assembly on receive) adds a step, and the total is
    the straight line through the measurements at 1600 and 65000 bytes.  The
    function reproduces both tables exactly at their measured lengths.

    Examples
    --------
    >>> ini_overhead(0), ini_overhead(1600, path="receive")
    (2318.0, 16153.0)
    >>> float(ini_overhead(1500)) < float(ini_overhead(1501))   # fragmentation step
    True
    """
    check_choice("path", path, ("send", "receive", "mean"))
    b = check_nonnegative("message_bytes", message_bytes)
    if np.any(b > _MAX_MESSAGE):
        raise ValueError(f"message_bytes must be <= {_MAX_MESSAGE} (largest UDP payload); "
                         f"got {float(np.max(b))!r}")
    if path == "mean":
        return scalar_or_array((np.asarray(ini_overhead(b, "send"))
                                + np.asarray(ini_overhead(b, "receive"))) / 2.0)
    tab = TABLE_5_1 if path == "send" else TABLE_5_2
    x = np.asarray(tab["len"], dtype=float)
    y = np.asarray(tab["total"], dtype=float)
    small_x, small_y = x[:4], y[:4]
    low = np.interp(b, small_x, small_y)
    slope_end = (small_y[3] - small_y[2]) / (small_x[3] - small_x[2])
    low = np.where(b > small_x[3], small_y[3] + slope_end * (b - small_x[3]), low)
    slope_big = (y[5] - y[4]) / (x[5] - x[4])
    high = y[4] + slope_big * (b - x[4])
    return scalar_or_array(np.where(b <= MTU_BYTES, low, high))


# ---------------------------------------------------------------------------
# command line
# ---------------------------------------------------------------------------

def register_cli(subparsers: Any) -> None:
    """Add the ``ini`` subcommand (kept for compatibility: see :mod:`models.cli.ini`)."""
    from models.cli.ini import register

    register(subparsers)
