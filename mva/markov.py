r"""Continuous-time Markov chains: state spaces, steady state, rewards, absorption.

Generic numerical tools for small exact models of a node (or of a set of
resources) whose state matters more than its averages.  The module knows
nothing of any application: states are tuples, transitions are rates.

API summary
-----------
Building a chain

* :func:`build_state_space` ``(initial, transitions, *, max_states=...)``
  -> :class:`StateSpace`.  ``transitions(state)`` yields ``(next_state,
  rate)`` or ``(next_state, rate, label)``; reachable states are enumerated
  breadth first (``initial`` gets index 0) and the sparse CSR generator is
  assembled.  Labels name *transition classes* (``"arrival"``,
  ``"service"``, ...) for throughputs and arrival-instant distributions;
  self-loops (``next_state == state``, e.g. a blocked arrival) are kept as
  labelled events although they do not enter the generator.
* :class:`StateSpace`: ``states``, ``index``, ``generator`` (CSR),
  ``solve(**kw)`` (= :func:`steady_state`), ``values(f)`` (a state reward
  vector), ``mean(pi, f)``, ``rates(label)``, ``throughput(pi, label)``,
  ``arrival_distribution(pi, label)``, ``absorption(...)``.

Solving

* :func:`steady_state` ``(Q, *, method="auto", tol=1e-12, ...)`` ->
  :class:`SteadyStateResult` (``pi``, ``method``, ``converged``,
  ``residual``, ``iterations``).  ``method`` is ``"direct"`` (sparse LU),
  ``"gmres"`` (ILU-preconditioned GMRES) or ``"power"`` (uniformised power
  iteration); ``"auto"`` picks direct up to ``direct_limit`` states.
* :func:`check_generator` ``(Q)``: validated CSR generator (rows sum to
  zero, off-diagonal rates ``>= 0``, finite); :func:`is_irreducible`.

Rewards and absorption

* :func:`reward_rate` ``(pi, state_rewards=None, Q=None, transition_rewards=None)``:
  ``sum_i pi_i r_i + sum_{i != j} pi_i q_ij R_ij``.
* :func:`arrival_distribution` ``(pi, rates)``: ``pi_i a_i / sum_j pi_j a_j``,
  the state seen by events that occur at rate ``a_i`` in state ``i``.
* :func:`absorption` ``(Q, *, initial=None, absorbing=None)`` ->
  :class:`AbsorptionResult` (mean time to absorption from every transient
  state and from ``initial``, absorption probabilities).

Phase-type distributions are in :mod:`mva.phasetype`, quasi-birth-death
processes in :mod:`mva.qbd`.

Notes
-----
A CTMC with generator ``Q`` (``q_ij >= 0`` for ``i != j``,
``q_ii = -sum_{j != i} q_ij``) that is irreducible on ``n`` states has the
unique stationary distribution ``pi Q = 0``, ``pi 1 = 1``.  The direct and
GMRES methods remove the balance equation of one state ``r`` and fix
``pi_r = 1``: the remaining ``(n-1) x (n-1)`` block of ``Q^T`` is a
non-singular M-matrix when the chain is irreducible (Stewart 1994, section
2.3), so the system keeps the sparsity of ``Q`` (no dense normalisation row
that would ruin an incomplete factorisation); ``pi`` is normalised
afterwards.  ``r`` is first the state with the smallest exit rate; when the
solution shows ``pi_r`` to be small (below 1% of the largest probability),
the direct method solves again with the most probable state fixed, so that
every ratio ``pi_j / pi_r <= 1`` (no overflow, no singular factor), and
then applies up to three steps of iterative refinement
``x <- x + LU^{-1} (b - M x)``: together they give nearly full relative
accuracy even to probabilities many orders of magnitude below the largest
(a plain LU loses it, Stewart 1994, section 2.7).  The reported ``residual`` is the scale-free
``||pi Q||_inf / max_i |q_ii|``.

References
----------
W. J. Stewart, *Introduction to the Numerical Solution of Markov Chains*,
Princeton University Press, 1994 (chapters 2-4).  G. Bolch, S. Greiner,
H. de Meer and K. S. Trivedi, *Queueing Networks and Markov Chains*, 2nd ed.,
Wiley, 2006 (chapters 2-3).

Examples
--------
An M/M/1/3 queue, arrivals at rate 1 (blocked when full), service at rate 2:

>>> def moves(s):
...     (n,) = s
...     yield (min(n + 1, 3),), 1.0, "arrival"
...     if n:
...         yield (n - 1,), 2.0, "service"
>>> space = build_state_space((0,), moves)
>>> res = space.solve()
>>> res.pi.round(4).tolist()
[0.5333, 0.2667, 0.1333, 0.0667]
>>> round(space.mean(res.pi, lambda s: s[0]), 4)         # mean number in system
0.7333
>>> round(space.throughput(res.pi, "service"), 4)         # = 1 x (1 - P(full))
0.9333
>>> space.arrival_distribution(res.pi, "arrival").round(4).tolist()   # PASTA
[0.5333, 0.2667, 0.1333, 0.0667]
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from typing import Any, Callable, Hashable, Iterable, Mapping

import numpy as np

from ._validate import check_choice, check_integer, check_nonnegative, fmt_value
from .errors import report_nonconvergence

__all__ = [
    "SteadyStateResult",
    "StateSpace",
    "AbsorptionResult",
    "DEFAULT_MAX_STATES",
    "build_state_space",
    "check_generator",
    "is_irreducible",
    "steady_state",
    "reward_rate",
    "arrival_distribution",
    "absorption",
]

#: default limit on the number of states enumerated by :func:`build_state_space`
DEFAULT_MAX_STATES = 2_000_000

#: default number of states up to which ``method="auto"`` uses the sparse LU
DIRECT_LIMIT = 20_000

_METHODS = ("auto", "direct", "gmres", "power")


# --------------------------------------------------------------------------
# results
# --------------------------------------------------------------------------


@dataclass(frozen=True, kw_only=True)
class SteadyStateResult:
    """Stationary distribution of a CTMC and how it was obtained.

    Attributes
    ----------
    pi : numpy.ndarray, shape (n,)
        Stationary probabilities, ``>= 0`` and summing to one.
    method : str
        ``"direct"``, ``"gmres"`` or ``"power"``.
    converged : bool
        True when ``residual <= tol`` (direct solves are always reported
        with their residual; ``converged`` is False if it exceeds ``tol``,
        i.e. precision was lost).
    residual : float
        ``||pi Q||_inf / max_i |q_ii|`` (scale-free).
    iterations : int
        Iterations of the iterative method; for a direct solve 1 plus the
        number of iterative-refinement steps taken.
    """

    pi: np.ndarray
    method: str
    converged: bool
    residual: float
    iterations: int


@dataclass(frozen=True, kw_only=True)
class AbsorptionResult:
    """Mean times to absorption and absorption probabilities of a CTMC.

    Attributes
    ----------
    transient : numpy.ndarray of int, shape (m,)
        Indices of the transient states, in increasing order.
    absorbing : numpy.ndarray of int, shape (a,)
        Indices of the absorbing states, in increasing order.
    times : numpy.ndarray, shape (m,)
        Mean time to absorption from each transient state
        (``times[k]`` starts in state ``transient[k]``).
    probabilities : numpy.ndarray, shape (m, a)
        ``probabilities[k, j]``: probability that the chain started in
        ``transient[k]`` is absorbed in ``absorbing[j]``.
    mean_time : float
        Mean time to absorption from the initial distribution (NaN when no
        ``initial`` was given).
    """

    transient: np.ndarray
    absorbing: np.ndarray
    times: np.ndarray
    probabilities: np.ndarray
    mean_time: float


# --------------------------------------------------------------------------
# generator checks
# --------------------------------------------------------------------------


def _sparse():
    import scipy.sparse as sp
    return sp


def check_generator(Q: Any, *, name: str = "Q", rtol: float = 1e-9) -> Any:
    """Validate an infinitesimal generator and return it as a CSR array.

    Parameters
    ----------
    Q : array_like or scipy.sparse matrix, shape (n, n)
        Candidate generator.
    name : str
        Parameter name used in error messages.
    rtol : float
        Row ``i`` must satisfy ``|sum_j q_ij| <= rtol * max(1, |q_ii|)``.

    Returns
    -------
    scipy.sparse.csr_array
        ``Q`` as float64 CSR with explicit zeros removed.

    Raises
    ------
    ValueError
        Non-square, empty, non-finite, a negative off-diagonal rate, or a row
        that does not sum to zero (the first offending row and its sum are
        named).

    Examples
    --------
    >>> check_generator([[-1.0, 1.0], [2.0, -2.0]]).toarray().tolist()
    [[-1.0, 1.0], [2.0, -2.0]]
    >>> check_generator([[-1.0, 1.0], [2.0, -1.0]])
    Traceback (most recent call last):
    ...
    ValueError: Q: row 1 must sum to zero (a generator); got row sum 1.0
    """
    sp = _sparse()
    if sp.issparse(Q):
        A = sp.csr_array(Q, dtype=float)
    else:
        arr = np.asarray(Q, dtype=float)
        if arr.ndim != 2:
            raise ValueError(f"{name} must be a square 2-D matrix; got shape {arr.shape}")
        A = sp.csr_array(arr)
    n, m = A.shape
    if n != m or n == 0:
        raise ValueError(f"{name} must be a non-empty square matrix; got shape {A.shape}")
    A.sum_duplicates()
    A.eliminate_zeros()
    if not np.all(np.isfinite(A.data)):
        bad = A.data[~np.isfinite(A.data)][:3]
        raise ValueError(f"{name} must have finite entries; found {fmt_value(bad)}")
    coo = A.tocoo()
    off = coo.row != coo.col
    neg = off & (coo.data < 0)
    if neg.any():
        k = int(np.flatnonzero(neg)[0])
        raise ValueError(f"{name}: off-diagonal rates must be >= 0; got {name}[{int(coo.row[k])}, "
                         f"{int(coo.col[k])}] = {float(coo.data[k])!r}")
    rows = np.asarray(A.sum(axis=1)).ravel()
    diag = np.abs(A.diagonal())
    bad = np.abs(rows) > rtol * np.maximum(1.0, diag)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(f"{name}: row {i} must sum to zero (a generator); "
                         f"got row sum {float(rows[i])!r}")
    return A


def _components(Q: Any) -> tuple[int, np.ndarray]:
    from scipy.sparse.csgraph import connected_components
    return connected_components(Q, directed=True, connection="strong")


def is_irreducible(Q: Any) -> bool:
    """True when the directed graph of the off-diagonal rates is strongly connected.

    Examples
    --------
    >>> is_irreducible([[-1.0, 1.0], [1.0, -1.0]]), is_irreducible([[-1.0, 1.0], [0.0, 0.0]])
    (True, False)
    """
    A = check_generator(Q)
    return _components(A)[0] == 1


def _require_irreducible(A: Any, name: str) -> None:
    ncomp, labels = _components(A)
    if ncomp > 1:
        sizes = np.bincount(labels)
        # a closed class: no rate leaves it
        coo = A.tocoo()
        leaving = np.zeros(ncomp, dtype=bool)
        cross = labels[coo.row] != labels[coo.col]
        leaving[labels[coo.row[cross]]] = True
        closed = np.flatnonzero(~leaving)
        example = [int(np.flatnonzero(labels == c)[0]) for c in closed[:3]]
        raise ValueError(
            f"{name} must be irreducible (one communicating class); it has {ncomp} strongly "
            f"connected components (sizes {fmt_value(np.sort(sizes)[::-1])}), {closed.size} of "
            f"them closed (e.g. containing states {example}); the stationary distribution is not "
            f"unique -- remove unreachable states or use absorption() for absorbing chains")


def _residual(A: Any, pi: np.ndarray) -> float:
    scale = float(np.max(np.abs(A.diagonal()))) or 1.0
    return float(np.max(np.abs(A.T @ pi))) / scale


# --------------------------------------------------------------------------
# steady state
# --------------------------------------------------------------------------


def _reduced_system(A: Any, r: int) -> tuple[Any, np.ndarray, np.ndarray]:
    """``Q^T`` without the equation and unknown of state ``r``; right-hand side for ``pi_r = 1``."""
    n = A.shape[0]
    keep = np.concatenate((np.arange(r), np.arange(r + 1, n)))
    At = A.T.tocsr()
    M = At[keep][:, keep].tocsc()
    b = -At[keep][:, [r]].toarray().ravel()
    return M, b, keep


def _assemble(x: np.ndarray, r: int, keep: np.ndarray) -> np.ndarray:
    pi = np.empty(keep.size + 1)
    pi[keep] = x
    pi[r] = 1.0
    return pi


def _normalise(pi: np.ndarray) -> np.ndarray:
    neg = pi < 0
    if neg.any():
        pi = np.where(neg, 0.0, pi)
    s = pi.sum()
    return pi / s


#: SuperLU options for the reduced system: a minimum-degree ordering of ``M + M^T`` applied
#: symmetrically and no row pivoting -- ``M`` is a column diagonally dominant M-matrix, so
#: the diagonal pivots are safe (Stewart 1994, section 2.3) and the fill is much smaller
#: than with the default COLAMD ordering on grid-like chains
_LU_OPTIONS = dict(permc_spec="MMD_AT_PLUS_A", diag_pivot_thresh=0.0,
                   options=dict(SymmetricMode=True))

#: SuperLU's defaults (COLAMD ordering, threshold partial pivoting): the fallback when the
#: diagonal pivots lost the solution -- in floating point a Schur-complement pivot of the
#: M-matrix is a difference that can cancel when some states have probabilities near the
#: unit round-off (a 119-state PDQ key chain gave a residual of 0.19 without pivoting,
#: 2e-17 with it)
_LU_PIVOTING: dict[str, Any] = {}

#: scale-free residual above which a direct solve is repeated with pivoting
_DIRECT_RETRY = 1e-10


def _guess_state(A: Any) -> int:
    """A state likely to have a large probability: the one with the smallest exit rate."""
    return int(np.argmin(np.abs(A.diagonal())))


def _lu_removed(A: Any, r: int, options: Mapping[str, Any] = _LU_OPTIONS
                ) -> tuple[np.ndarray, int] | None:
    """Sparse LU with state ``r`` fixed, plus iterative refinement; None if singular."""
    from scipy.sparse.linalg import splu
    M, b, keep = _reduced_system(A, r)
    try:
        lu = splu(M, **options)
    except RuntimeError:  # "Factor is exactly singular"
        return None
    x = lu.solve(b)
    if not np.all(np.isfinite(x)):
        return None
    best = np.max(np.abs(b - M @ x))
    steps = 0
    for _ in range(3):  # refinement: fixes the relative accuracy of small components
        dx = lu.solve(b - M @ x)
        y = x + dx
        res = np.max(np.abs(b - M @ y))
        if not res < best:
            break
        x, best = y, res
        steps += 1
    return _assemble(x, r, keep), steps


def _solve_direct(A: Any) -> tuple[np.ndarray, int]:
    n = A.shape[0]
    if n == 1:
        return np.ones(1), 1
    r = _guess_state(A)
    out = _lu_removed(A, r)
    if out is None or out[0][r] < 1e-2 * np.max(out[0]):
        # fix the most probable state instead (all ratios pi_j / pi_r <= 1: no overflow,
        # full relative accuracy after refinement)
        candidates = [int(np.argmax(out[0]))] if out is not None else []
        candidates += [c for c in (0, n - 1) if c != r and c not in candidates]
        for c in candidates:
            nxt = _lu_removed(A, c)
            if nxt is not None:
                out = nxt
                break
    if out is None:
        from .errors import ConvergenceError
        raise ConvergenceError("steady_state (direct): the sparse LU found the balance equations "
                               "singular -- the chain is numerically reducible (rates spanning too "
                               "many orders of magnitude); rescale the model or try method='gmres'")
    pi, steps = out
    pi = _normalise(pi)
    res = _residual(A, pi)
    if not res <= _DIRECT_RETRY:
        # the diagonal pivots cancelled: factor again with partial pivoting, keep the better
        r2 = int(np.argmax(pi)) if np.all(np.isfinite(pi)) else r
        again = _lu_removed(A, r2, _LU_PIVOTING)
        if again is not None:
            pi2 = _normalise(again[0])
            if _residual(A, pi2) < res:
                return pi2, 2 + steps + again[1]
    return pi, 1 + steps


def _solve_gmres(A: Any, tol: float, max_iter: int, restart: int, drop_tol: float,
                 fill_factor: float) -> tuple[np.ndarray, int]:
    from scipy.sparse.linalg import LinearOperator, gmres, spilu
    n = A.shape[0]
    if n == 1:
        return np.ones(1), 0
    r = _guess_state(A)
    M, b, keep = _reduced_system(A, r)
    ilu = spilu(M, drop_tol=drop_tol, fill_factor=fill_factor, **_LU_OPTIONS)
    P = LinearOperator(M.shape, ilu.solve)
    count = [0]

    def cb(_: Any) -> None:
        count[0] += 1

    x, _info = gmres(M, b, M=P, rtol=tol, atol=0.0, restart=restart, maxiter=max_iter,
                     callback=cb, callback_type="pr_norm")
    return _normalise(_assemble(x, r, keep)), count[0]


def _solve_power(A: Any, tol: float, max_iter: int,
                 x0: np.ndarray | None) -> tuple[np.ndarray, int]:
    sp = _sparse()
    n = A.shape[0]
    lam = float(np.max(np.abs(A.diagonal()))) * 1.02 or 1.0
    PT = (sp.eye_array(n, format="csr") + A / lam).T.tocsr()
    pi = np.full(n, 1.0 / n) if x0 is None else _normalise(np.asarray(x0, dtype=float))
    it = 0
    for it in range(1, max_iter + 1):
        new = PT @ pi
        new /= new.sum()
        if it % 10 == 0 and _residual(A, new) <= tol:
            pi = new
            break
        pi = new
    return pi, it


def steady_state(Q: Any, *, method: str = "auto", tol: float = 1e-12, max_iter: int | None = None,
                 direct_limit: int = DIRECT_LIMIT, restart: int = 50, drop_tol: float = 1e-4,
                 fill_factor: float = 10.0, x0: Any = None, check: bool = True,
                 on_fail: str = "warn") -> SteadyStateResult:
    r"""Stationary distribution ``pi Q = 0``, ``pi 1 = 1`` of an irreducible CTMC.

    Parameters
    ----------
    Q : array_like or scipy.sparse matrix, shape (n, n)
        Generator (see :func:`check_generator`).
    method : {"auto", "direct", "gmres", "power"}
        ``"direct"``: sparse LU (SuperLU, COLAMD ordering) of the reduced
        system; ``"gmres"``: restarted GMRES preconditioned by an incomplete
        LU of the same system; ``"power"``: power iteration on the
        uniformised chain ``P = I + Q / Lambda``.  ``"auto"``: direct when
        ``n <= direct_limit``, else GMRES.
    tol : float
        Target scale-free residual ``||pi Q||_inf / max_i |q_ii|``; also the
        relative tolerance of GMRES.
    max_iter : int, optional
        Iteration limit (GMRES restarts cycles: default 200; power: default
        ``100 n``, at least 10^5).
    direct_limit : int
        Largest chain that ``"auto"`` solves directly.
    restart, drop_tol, fill_factor : optional
        GMRES restart length and ILU parameters (:func:`scipy.sparse.linalg.spilu`).
    x0 : array_like, optional
        Starting vector of the power iteration.
    check : bool
        Validate the generator and its irreducibility first (default).
    on_fail : {"warn", "raise", "ignore"}
        What to do when the residual stays above ``tol`` (see
        :func:`mva.errors.report_nonconvergence`); the result is returned
        with ``converged=False`` unless ``"raise"``.

    Returns
    -------
    SteadyStateResult

    Raises
    ------
    ValueError
        For an invalid generator or a reducible chain (the number of
        strongly connected components and some closed ones are named).
    mva.errors.ConvergenceError
        With ``on_fail="raise"`` when the residual exceeds ``tol``.

    Notes
    -----
    The direct and GMRES methods solve the reduced system
    ``(Q^T)_{-r,-r} x = -(Q^T)_{-r,r}`` (``pi_r = 1``, row and column ``r``
    removed) and normalise; the choice of ``r`` and the refinement of the
    direct method are described in the module Notes; tiny negative round-off entries of an
    iterative solution are set to zero before normalising.  Power iteration
    converges at the rate of the subdominant eigenvalue of ``P`` and is
    only for well-mixed chains.  A sparse LU of a chain on a ``d``-dimensional
    grid fills in like ``n^{2 - 1/d}`` (nested dissection bounds), which is why
    large multi-dimensional chains are handed to GMRES.

    References
    ----------
    Stewart (1994), sections 2.3 (direct methods, replacing an equation),
    3.1 (power method) and 4.4 (preconditioned projection methods, GMRES
    with ILU).

    Examples
    --------
    >>> res = steady_state([[-2.0, 2.0], [1.0, -1.0]])
    >>> res.pi.round(6).tolist(), res.method, res.converged
    ([0.333333, 0.666667], 'direct', True)
    >>> steady_state([[-1.0, 1.0, 0.0], [1.0, -1.0, 0.0], [0.0, 1.0, -1.0]])
    Traceback (most recent call last):
    ...
    ValueError: Q must be irreducible (one communicating class); it has 2 strongly connected ...
    """
    check_choice("method", method, _METHODS)
    check_choice("on_fail", on_fail, ("warn", "raise", "ignore"))
    tol_v = float(check_nonnegative("tol", tol))
    if not tol_v > 0:
        raise ValueError(f"tol must be > 0; got {tol!r}")
    dl = int(check_integer("direct_limit", direct_limit, minimum=1))
    A = check_generator(Q) if check else _sparse().csr_array(Q, dtype=float)
    if check:
        _require_irreducible(A, "Q")
    n = A.shape[0]
    chosen = ("direct" if n <= dl else "gmres") if method == "auto" else method
    if chosen == "direct":
        pi, it = _solve_direct(A)
    elif chosen == "gmres":
        mi = 200 if max_iter is None else int(check_integer("max_iter", max_iter, minimum=1))
        pi, it = _solve_gmres(A, tol_v, mi, int(restart), float(drop_tol), float(fill_factor))
    else:
        mi = (max(100 * n, 100_000) if max_iter is None
              else int(check_integer("max_iter", max_iter, minimum=1)))
        pi, it = _solve_power(A, tol_v, mi, None if x0 is None else np.asarray(x0, dtype=float))
    res = _residual(A, pi)
    converged = bool(np.isfinite(res) and res <= tol_v and np.all(np.isfinite(pi)))
    if not converged:
        report_nonconvergence(on_fail, f"steady_state ({chosen}, {n} states): residual "
                              f"{res:.3g} > tol={tol_v:.3g} after {it} iterations",
                              iterations=it, residual=res)
    return SteadyStateResult(pi=pi, method=chosen, converged=converged, residual=res, iterations=it)


# --------------------------------------------------------------------------
# rewards
# --------------------------------------------------------------------------


def _prob_vector(pi: Any) -> np.ndarray:
    if isinstance(pi, SteadyStateResult):
        return pi.pi
    p = check_nonnegative("pi", pi)
    if p.ndim != 1:
        raise ValueError(f"pi must be a 1-D probability vector; got shape {p.shape}")
    return p


def reward_rate(pi: Any, state_rewards: Any = None, Q: Any = None,
                transition_rewards: Any = None) -> float:
    r"""Long-run reward rate of a CTMC.

    Parameters
    ----------
    pi : array_like or SteadyStateResult, shape (n,)
        Stationary distribution.
    state_rewards : array_like, shape (n,), optional
        Reward earned per unit time in each state (queue length,
        utilisation indicator, ...).
    Q : sparse or array_like, shape (n, n), optional
        Generator, needed with ``transition_rewards``.
    transition_rewards : sparse or array_like, shape (n, n), optional
        Reward ``R_ij`` earned at each ``i -> j`` transition (1 for the
        transitions that count as completions gives a throughput).

    Returns
    -------
    float
        ``sum_i pi_i r_i + sum_{i != j} pi_i q_ij R_ij``.

    References
    ----------
    Bolch et al. (2006), section 2.2 (Markov reward models).

    Examples
    --------
    >>> Q = [[-1.0, 1.0], [2.0, -2.0]]         # M/M/1/1: arrival 1, service 2
    >>> pi = steady_state(Q).pi
    >>> reward_rate(pi, state_rewards=[0, 1])   # utilisation
    0.3333333333333333
    >>> reward_rate(pi, Q=Q, transition_rewards=[[0, 0], [1, 0]])  # completions per time
    0.6666666666666666
    """
    p = _prob_vector(pi)
    total = 0.0
    if state_rewards is not None:
        r = np.asarray(state_rewards, dtype=float)
        if r.shape != p.shape:
            raise ValueError(f"state_rewards must have shape {p.shape}; got {r.shape}")
        total += float(p @ r)
    if transition_rewards is not None:
        if Q is None:
            raise ValueError("Q is required with transition_rewards")
        sp = _sparse()
        A = sp.csr_array(Q, dtype=float)
        Rw = sp.csr_array(transition_rewards, dtype=float)
        if A.shape != (p.size, p.size) or Rw.shape != A.shape:
            raise ValueError(f"Q and transition_rewards must have shape {(p.size, p.size)}; "
                             f"got {A.shape} and {Rw.shape}")
        W = A.multiply(Rw).tocsr()
        W.setdiag(0.0)
        total += float(p @ np.asarray(W.sum(axis=1)).ravel())
    return total


def arrival_distribution(pi: Any, rates: Any) -> np.ndarray:
    r"""State distribution seen by events of one class (embedded at their instants).

    Parameters
    ----------
    pi : array_like or SteadyStateResult, shape (n,)
        Stationary distribution.
    rates : array_like, shape (n,)
        ``a_i``: rate at which the events occur in state ``i`` (e.g. the
        arrival rate, zero where arrivals are impossible).

    Returns
    -------
    numpy.ndarray, shape (n,)
        ``pi_i a_i / sum_j pi_j a_j``: the probability that an event finds
        the chain in state ``i`` (just before it happens).

    Raises
    ------
    ValueError
        If the events never occur (``sum_j pi_j a_j = 0``).

    Notes
    -----
    The events form a Markov-modulated point process; conditioning on an
    event in ``(t, t + dt)`` gives the formula.  With state-independent
    rates it reduces to ``pi`` (PASTA).

    References
    ----------
    Bolch et al. (2006), section 6.2 (arrival theorem); Stewart (1994),
    section 1.4.

    Examples
    --------
    >>> arrival_distribution([0.5, 0.5], [1.0, 3.0]).tolist()
    [0.25, 0.75]
    """
    p = _prob_vector(pi)
    a = check_nonnegative("rates", rates)
    if a.shape != p.shape:
        raise ValueError(f"rates must have shape {p.shape}; got {a.shape}")
    w = p * a
    s = w.sum()
    if not s > 0:
        raise ValueError("arrival_distribution: the events have rate zero in every state of "
                         "positive probability (sum_i pi_i rates_i = 0)")
    return w / s


# --------------------------------------------------------------------------
# absorption
# --------------------------------------------------------------------------


def absorption(Q: Any, *, initial: Any = None, absorbing: Any = None) -> AbsorptionResult:
    r"""Mean time to absorption and absorption probabilities.

    Parameters
    ----------
    Q : array_like or sparse, shape (n, n)
        Generator (rows sum to zero).
    initial : array_like, shape (n,), optional
        Initial distribution (mass on absorbing states is absorbed at time
        zero).  Gives :attr:`AbsorptionResult.mean_time`.
    absorbing : array_like of int or bool mask, optional
        States to treat as absorbing (their outgoing rates are ignored).
        Default: the states with no outgoing rate.

    Returns
    -------
    AbsorptionResult

    Raises
    ------
    ValueError
        If there is no absorbing state, or absorption is not certain from
        some transient state (a closed class of transient states).

    Notes
    -----
    With ``T`` the transient block of ``Q`` and ``R`` the transient-to-
    absorbing block, the mean times ``t`` solve ``-T t = 1`` and the
    absorption probabilities ``B = (-T)^{-1} R`` (one sparse LU for both).

    References
    ----------
    Stewart (1994), section 1.4; Bolch et al. (2006), section 2.1.2;
    Latouche and Ramaswami (1999), section 2.2.

    Examples
    --------
    Two exponential phases of rates 1 and 2 in series (mean 1.5):

    >>> res = absorption([[-1, 1, 0], [0, -2, 2], [0, 0, 0]], initial=[1, 0, 0])
    >>> res.mean_time, res.times.tolist()
    (1.5, [1.5, 0.5])
    """
    from scipy.sparse.linalg import splu
    A = check_generator(Q)
    n = A.shape[0]
    if absorbing is None:
        out = np.asarray((A != 0).sum(axis=1)).ravel()
        mask = out == 0
    else:
        ab = np.asarray(absorbing)
        if ab.dtype == bool:
            if ab.shape != (n,):
                raise ValueError(f"absorbing mask must have shape {(n,)}; got {ab.shape}")
            mask = ab.copy()
        else:
            idx = check_integer("absorbing", ab, minimum=0, maximum=n - 1)
            mask = np.zeros(n, dtype=bool)
            mask[np.atleast_1d(idx)] = True
    if not mask.any():
        raise ValueError("absorption: Q has no absorbing state (a row of zeros); pass absorbing=")
    tr = np.flatnonzero(~mask)
    ab_idx = np.flatnonzero(mask)
    if tr.size == 0:
        times = np.zeros(0)
        probs = np.zeros((0, ab_idx.size))
    else:
        T = A[tr][:, tr].tocsc()
        Rb = A[tr][:, ab_idx].toarray()
        # every transient state must reach an absorbing one
        sp = _sparse()
        from scipy.sparse.csgraph import breadth_first_order
        GT = sp.csr_array(A.T)
        hub = sp.csr_array((np.ones(ab_idx.size), (np.zeros(ab_idx.size, dtype=np.int64), ab_idx)),
                           shape=(1, n))
        GT = sp.hstack([sp.vstack([GT, hub]), sp.csr_array((n + 1, 1))]).tocsr()
        reach = np.zeros(n + 1, dtype=bool)
        reach[breadth_first_order(GT, n, directed=True, return_predecessors=False)] = True
        stuck = tr[~reach[tr]]
        if stuck.size:
            raise ValueError(f"absorption: states {fmt_value(stuck[:6])} never reach an absorbing "
                             f"state (a closed class of transient states); absorption is not "
                             f"certain")
        lu = splu(-T)
        times = lu.solve(np.ones(tr.size))
        probs = lu.solve(Rb) if ab_idx.size else np.zeros((tr.size, 0))
        probs = probs.reshape(tr.size, ab_idx.size)
    mean_time = float("nan")
    if initial is not None:
        a = check_nonnegative("initial", initial)
        if a.shape != (n,):
            raise ValueError(f"initial must have shape {(n,)}; got {a.shape}")
        if abs(a.sum() - 1.0) > 1e-9:
            raise ValueError(f"initial must sum to 1; got {float(a.sum())!r}")
        mean_time = float(a[tr] @ times)
    return AbsorptionResult(transient=tr, absorbing=ab_idx, times=times, probabilities=probs,
                            mean_time=mean_time)


# --------------------------------------------------------------------------
# state-space builder
# --------------------------------------------------------------------------


def _selector(label: Any) -> Callable[[Any], bool]:
    if callable(label):
        return label
    return lambda x: x == label


@dataclass(frozen=True, kw_only=True, eq=False)
class StateSpace:
    """Reachable states of a CTMC, its generator and its labelled transitions.

    Built by :func:`build_state_space`.

    Attributes
    ----------
    states : tuple of tuple
        The states, ``states[0]`` the initial one, in breadth-first order.
    index : dict
        ``state -> position``.
    generator : scipy.sparse.csr_array, shape (n, n)
        The generator ``Q`` (self-loops excluded, duplicates summed).
    source, target : numpy.ndarray of int, shape (t,)
        Every listed transition (self-loops included), as state indices.
    rate : numpy.ndarray, shape (t,)
        Their rates.
    label : numpy.ndarray of int, shape (t,)
        Position of each transition's label in :attr:`labels` (-1: none).
    labels : tuple
        The distinct labels, in order of first appearance.
    """

    states: tuple
    index: dict
    generator: Any
    source: np.ndarray
    target: np.ndarray
    rate: np.ndarray
    label: np.ndarray
    labels: tuple = field(default=())

    @property
    def n(self) -> int:
        """Number of states."""
        return len(self.states)

    def __len__(self) -> int:
        return len(self.states)

    def solve(self, **kwargs: Any) -> SteadyStateResult:
        """:func:`steady_state` of :attr:`generator` (keywords passed on)."""
        return steady_state(self.generator, **kwargs)

    def values(self, f: Callable[[Any], float]) -> np.ndarray:
        """State reward vector ``[f(s) for s in states]``."""
        return np.fromiter((f(s) for s in self.states), dtype=float, count=len(self.states))

    def mean(self, pi: Any, f: Callable[[Any], float]) -> float:
        """Expected state reward ``sum_i pi_i f(s_i)`` (e.g. a mean queue length)."""
        return reward_rate(pi, self.values(f))

    def _mask(self, label: Any) -> np.ndarray:
        sel = _selector(label)
        chosen = np.array([bool(sel(lb)) for lb in self.labels], dtype=bool)
        if not chosen.any():
            shown = list(self.labels[:6])
            raise ValueError(f"label {label!r} matches none of the transition labels {shown!r}"
                             f"{' ...' if len(self.labels) > 6 else ''}")
        return (self.label >= 0) & chosen[np.maximum(self.label, 0)]

    def rates(self, label: Any) -> np.ndarray:
        """Total rate of the transitions labelled ``label`` out of each state.

        ``label`` is a label or a predicate on labels; self-loops count.
        """
        m = self._mask(label)
        return np.bincount(self.source[m], weights=self.rate[m], minlength=self.n)

    def throughput(self, pi: Any, label: Any) -> float:
        """Long-run rate of the transitions labelled ``label`` (``sum_i pi_i a_i``)."""
        return reward_rate(pi, self.rates(label))

    def arrival_distribution(self, pi: Any, label: Any) -> np.ndarray:
        """Distribution seen by the transitions labelled ``label``.

        See :func:`arrival_distribution`.
        """
        return arrival_distribution(pi, self.rates(label))

    def absorption(self, *, initial: Any = None, absorbing: Any = None) -> AbsorptionResult:
        """:func:`absorption` of :attr:`generator`; ``initial`` may be a state (a tuple)."""
        if initial is not None and isinstance(initial, tuple) and initial in self.index:
            a = np.zeros(self.n)
            a[self.index[initial]] = 1.0
            initial = a
        return absorption(self.generator, initial=initial, absorbing=absorbing)


def _bytes_estimate(n_states: int, n_trans: int, sample_state: Any) -> int:
    per_state = sys.getsizeof(sample_state) + 8 * len(sample_state) + 100  # tuple + dict entry
    return int(n_states * per_state + n_trans * (8 + 8 + 8 + 8) + n_trans * 12 + n_states * 8)


def build_state_space(initial: Hashable, transitions: Callable[[Any], Iterable[tuple]], *,
                      max_states: int = DEFAULT_MAX_STATES) -> StateSpace:
    r"""Enumerate the states reachable from ``initial`` and build the generator.

    Parameters
    ----------
    initial : tuple
        Starting state (any hashable; tuples of integers are customary).
    transitions : callable
        ``transitions(state)`` returns an iterable of ``(next_state, rate)``
        or ``(next_state, rate, label)``; rates must be finite and ``>= 0``
        (zero rates are ignored).  ``next_state == state`` is a self-loop:
        it does not enter the generator but is kept as a labelled event.
    max_states : int
        Refuse to enumerate more states.

    Returns
    -------
    StateSpace

    Raises
    ------
    ValueError
        On a negative or non-finite rate (naming the state), a malformed
        transition, or when more than ``max_states`` states are reachable
        (the message gives the count reached and a memory estimate).

    Notes
    -----
    Breadth-first search: the list of discovered states is the queue, a
    dictionary maps states to indices; transitions are collected as
    coordinate triplets and converted once to CSR, ``O(n + t)`` time and
    memory for ``n`` states and ``t`` transitions.  The diagonal is
    ``q_ii = -sum_{j != i} q_ij``.

    References
    ----------
    Stewart (1994), section 1.3; Bolch et al. (2006), section 2.1.

    Examples
    --------
    A machine-repairman model with 2 machines (failure rate 1 each) and one
    repairman (rate 4):

    >>> def moves(s):
    ...     (n,) = s
    ...     if n < 2:
    ...         yield (n + 1,), (2 - n) * 1.0, "fail"
    ...     if n > 0:
    ...         yield (n - 1,), 4.0, "repair"
    >>> sp = build_state_space((0,), moves)
    >>> sp.states, sp.generator.toarray().tolist()
    (((0,), (1,), (2,)), [[-2.0, 2.0, 0.0], [4.0, -5.0, 1.0], [0.0, 4.0, -4.0]])
    """
    limit = int(check_integer("max_states", max_states, minimum=1))
    try:
        hash(initial)
    except TypeError:
        raise ValueError(f"initial must be hashable (a tuple); got {initial!r}") from None
    states: list = [initial]
    index: dict = {initial: 0}
    src: list[int] = []
    dst: list[int] = []
    rts: list[float] = []
    lbl: list[int] = []
    label_index: dict = {}
    head = 0
    while head < len(states):
        s = states[head]
        for tr in transitions(s):
            if len(tr) == 2:
                t, r = tr
                lab = -1
            elif len(tr) == 3:
                t, r, lb = tr
                found = label_index.get(lb)
                if found is None:
                    found = label_index[lb] = len(label_index)
                lab = found
            else:
                raise ValueError(f"transitions({s!r}) must yield (next_state, rate) or "
                                 f"(next_state, rate, label); got {tr!r}")
            r = float(r)
            if not r > 0.0:
                if r == 0.0:
                    continue
                raise ValueError(f"transitions({s!r}): rate to {t!r} must be finite and >= 0; "
                                 f"got {r!r}")
            if r == float("inf"):
                raise ValueError(f"transitions({s!r}): rate to {t!r} must be finite and >= 0; "
                                 f"got {r!r}")
            j = index.get(t)
            if j is None:
                j = len(states)
                if j >= limit:
                    nt = len(src) + 1
                    est = _bytes_estimate(j + 1, int(nt * (j + 1) / max(head + 1, 1)), initial)
                    raise ValueError(
                        f"build_state_space: more than max_states={limit} reachable states "
                        f"({j + 1} found so far, {head} fully expanded, {nt} transitions); the "
                        f"explored part alone would need about {est / 2**20:.0f} MiB -- raise "
                        f"max_states or reduce the model")
                try:
                    index[t] = j
                except TypeError:
                    raise ValueError(f"transitions({s!r}) produced an unhashable state "
                                     f"{t!r}") from None
                states.append(t)
            src.append(head)
            dst.append(j)
            rts.append(r)
            lbl.append(lab)
        head += 1
    sp = _sparse()
    n = len(states)
    source = np.asarray(src, dtype=np.int64)
    target = np.asarray(dst, dtype=np.int64)
    rate = np.asarray(rts, dtype=float)
    off = source != target
    Q = sp.csr_array((rate[off], (source[off], target[off])), shape=(n, n))
    Q.sum_duplicates()
    out = np.asarray(Q.sum(axis=1)).ravel()
    Q = (Q - sp.diags_array(out, format="csr")).tocsr()
    Q.sort_indices()
    labels = tuple(sorted(label_index, key=label_index.__getitem__))
    return StateSpace(states=tuple(states), index=index, generator=Q, source=source, target=target,
                      rate=rate, label=np.asarray(lbl, dtype=np.int64), labels=labels)
