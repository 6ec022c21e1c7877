r"""Level-independent quasi-birth-death processes: matrix-geometric solution.

A QBD is a CTMC on pairs (level ``n >= 0``, phase ``j``) that moves at most
one level at a time.  Its generator is block tridiagonal,

.. math::

   Q = \begin{pmatrix}
   B_1 & B_0 &        &        \\
   B_2 & A_1 & A_0    &        \\
       & A_2 & A_1    & A_0    \\
       &     & \ddots & \ddots & \ddots
   \end{pmatrix},

with ``A_0`` the transitions one level up, ``A_1`` those within a level and
``A_2`` those one level down (``m`` phases per level ``n >= 1``), and the
boundary level 0 (``m_0`` phases) described by ``B_1`` (within),
``B_0`` (to level 1) and ``B_2`` (level 1 to level 0).  Open queues with
phase-type service or Markov-modulated arrivals (M/PH/1, MMPP/M/1, ...)
are QBDs with the level the number of customers.

* :func:`solve_qbd` ``(A0, A1, A2, *, B0=None, B1=None, B2=None)`` ->
  :class:`QBDResult` (``R``, ``G``, ``pi0``, ``pi1``, ``mean_level``,
  ``level_probabilities(n)``, ``level_vector(n)``, diagnostics).
* :func:`qbd_drift` ``(A0, A1, A2)``: the ratio of the mean up- and
  down-drift, ``< 1`` iff the QBD is positive recurrent.
* :func:`logarithmic_reduction` ``(A0, A1, A2)``: the matrix ``G``.

References
----------
G. Latouche and V. Ramaswami, *Introduction to Matrix Analytic Methods in
Stochastic Modeling*, SIAM, 1999, chapters 6 (QBDs, ``R`` and ``G``), 7
(stability) and 8 (logarithmic reduction).  G. Latouche and V. Ramaswami,
"A logarithmic reduction algorithm for quasi-birth-death processes",
*Journal of Applied Probability* 30(3), 1993.  M. F. Neuts,
*Matrix-Geometric Solutions in Stochastic Models*, 1981.

Examples
--------
M/E_2/1 with arrival rate 0.5 and mean service time 1 (phases of rate 2):
level = number in system, phase = service phase.

>>> import numpy as np
>>> lam, T = 0.5, np.array([[-2.0, 2.0], [0.0, -2.0]])
>>> t, beta = np.array([0.0, 2.0]), np.array([1.0, 0.0])
>>> res = solve_qbd(lam * np.eye(2), T - lam * np.eye(2), np.outer(t, beta),
...                 B1=[[-lam]], B0=[lam * beta], B2=t[:, None])
>>> round(res.mean_level, 10)          # Pollaczek-Khinchine: rho + rho^2 (1 + 1/2) / (2 (1 - rho))
0.875
>>> res.level_probabilities(3).round(4).tolist()
[0.5, 0.2812, 0.127, 0.0538]
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ._validate import check_choice, check_integer, fmt_value
from .errors import SaturationError, report_nonconvergence

__all__ = ["QBDResult", "solve_qbd", "qbd_drift", "logarithmic_reduction"]


def _block(name: str, value: Any, shape: tuple[int, int]) -> np.ndarray:
    arr = np.asarray(value, dtype=float)
    if arr.shape != shape:
        raise ValueError(f"{name} must have shape {shape}; got {arr.shape}")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must be finite")
    return arr


def _nonneg(name: str, arr: np.ndarray, *, off_diagonal: bool = False) -> None:
    a = arr - np.diag(np.diag(arr)) if off_diagonal else arr
    if (a < 0).any():
        i, j = np.argwhere(a < 0)[0]
        what = "off-diagonal entries" if off_diagonal else "entries"
        raise ValueError(f"{name}: {what} must be >= 0 (rates); got {name}[{i}, {j}] = "
                         f"{float(a[i, j])!r}")


def _rows_zero(names: str, total: np.ndarray, scale: float) -> None:
    bad = np.abs(total) > 1e-9 * max(1.0, scale)
    if bad.any():
        i = int(np.flatnonzero(bad)[0])
        raise ValueError(f"the rows of {names} must sum to zero (a generator); row {i} sums to "
                         f"{float(total[i])!r}")


def _blocks(A0: Any, A1: Any, A2: Any) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    a1 = np.asarray(A1, dtype=float)
    if a1.ndim != 2 or a1.shape[0] != a1.shape[1] or a1.shape[0] == 0:
        raise ValueError(f"A1 must be a non-empty square matrix; got shape {a1.shape}")
    m = a1.shape[0]
    a0 = _block("A0", A0, (m, m))
    a1 = _block("A1", a1, (m, m))
    a2 = _block("A2", A2, (m, m))
    _nonneg("A0", a0)
    _nonneg("A2", a2)
    _nonneg("A1", a1, off_diagonal=True)
    _rows_zero("A0 + A1 + A2", (a0 + a1 + a2).sum(axis=1), float(np.max(np.abs(np.diag(a1)))))
    return a0, a1, a2


def _drift(a0: np.ndarray, a1: np.ndarray, a2: np.ndarray) -> tuple[float, float, np.ndarray]:
    from .markov import steady_state
    A = a0 + a1 + a2
    A = A - np.diag(A.sum(axis=1))  # exact zero row sums
    try:
        a = steady_state(A, on_fail="raise").pi
    except ValueError as exc:
        raise ValueError(f"the phase process A0 + A1 + A2 must be an irreducible generator: "
                         f"{exc}") from None
    up = float(a @ a0.sum(axis=1))
    down = float(a @ a2.sum(axis=1))
    return up, down, a


def qbd_drift(A0: Any, A1: Any, A2: Any) -> float:
    r"""Ratio of the mean upward to the mean downward drift of a QBD.

    Parameters
    ----------
    A0, A1, A2 : array_like, shape (m, m)
        Up, local and down blocks of the repeating levels.

    Returns
    -------
    float
        ``a A_0 1 / a A_2 1`` with ``a`` the stationary vector of the phase
        generator ``A = A_0 + A_1 + A_2`` (``inf`` if ``a A_2 1 = 0``).  The
        QBD is positive recurrent iff the ratio is ``< 1``; for a queue it is
        the utilisation.

    References
    ----------
    Latouche and Ramaswami (1999), theorem 7.2.3; Neuts (1981), theorem 3.1.1.

    Examples
    --------
    >>> qbd_drift([[0.8]], [[-1.8]], [[1.0]])      # M/M/1 at rho = 0.8
    0.8
    """
    up, down, _ = _drift(*_blocks(A0, A1, A2))
    return up / down if down > 0 else float("inf")


def logarithmic_reduction(A0: Any, A1: Any, A2: Any, *, tol: float = 1e-14,
                          max_iter: int = 60) -> tuple[np.ndarray, int, float]:
    r"""Minimal non-negative solution ``G`` of ``A_2 + A_1 G + A_0 G^2 = 0``.

    Parameters
    ----------
    A0, A1, A2 : array_like, shape (m, m)
        Up, local and down blocks.
    tol : float
        Stop when ``||1 - G 1||_inf <= tol`` (``G`` is stochastic for a
        recurrent QBD).
    max_iter : int
        Iteration limit (convergence is quadratic; each iteration doubles
        the number of levels accounted for).

    Returns
    -------
    G : numpy.ndarray, shape (m, m)
    iterations : int
    gap : float
        Final ``||1 - G 1||_inf``.

    Notes
    -----
    With ``H = (-A_1)^{-1} A_0`` and ``L = (-A_1)^{-1} A_2`` (the embedded
    up and down probabilities), set ``G = L``, ``T = H`` and repeat

    .. math::

       U = H L + L H,\quad H \leftarrow (I - U)^{-1} H^2,\quad
       L \leftarrow (I - U)^{-1} L^2,\quad G \leftarrow G + T L,\quad
       T \leftarrow T H.

    References
    ----------
    Latouche and Ramaswami (1993); Latouche and Ramaswami (1999),
    algorithm 8.4.1 and section 8.5 (continuous time).

    Examples
    --------
    >>> G, it, gap = logarithmic_reduction([[0.5]], [[-1.5]], [[1.0]])
    >>> float(G[0, 0]), gap < 1e-14
    (1.0, True)
    """
    a0, a1, a2 = (np.asarray(a, dtype=float) for a in (A0, A1, A2))
    m = a1.shape[0]
    inv = np.linalg.inv(-a1)
    H = inv @ a0
    L = inv @ a2
    G = L.copy()
    T = H.copy()
    eye = np.eye(m)
    gap = float(np.max(np.abs(1.0 - G.sum(axis=1))))
    it = 0
    while gap > tol and it < max_iter:
        it += 1
        U = H @ L + L @ H
        W = np.linalg.inv(eye - U)
        H = W @ (H @ H)
        L = W @ (L @ L)
        G = G + T @ L
        T = T @ H
        gap = float(np.max(np.abs(1.0 - G.sum(axis=1))))
    return G, it, gap


@dataclass(frozen=True, kw_only=True, eq=False)
class QBDResult:
    r"""Stationary solution of a positive-recurrent level-independent QBD.

    The level vectors are ``pi_0`` (boundary), ``pi_1`` and
    ``pi_{n} = pi_1 R^{n-1}`` for ``n >= 1``.

    Attributes
    ----------
    R : numpy.ndarray, shape (m, m)
        Minimal non-negative solution of ``A_0 + R A_1 + R^2 A_2 = 0``.
    G : numpy.ndarray, shape (m, m)
        Minimal non-negative solution of ``A_2 + A_1 G + A_0 G^2 = 0``.
    pi0 : numpy.ndarray, shape (m0,)
        Stationary probabilities of the boundary level's phases.
    pi1 : numpy.ndarray, shape (m,)
        Stationary probabilities of level 1's phases.
    drift : float
        ``a A_0 1 / a A_2 1 < 1`` (see :func:`qbd_drift`).
    mean_level : float
        ``sum_n n P(level = n) = pi_1 (I - R)^{-2} 1``.
    residual : float
        ``||A_0 + R A_1 + R^2 A_2||_inf / max_i |(A_1)_{ii}|``.
    iterations : int
        Logarithmic-reduction iterations.
    converged : bool
        ``residual <= tol`` and ``G`` stochastic to ``tol``.
    method : str
        ``"logarithmic-reduction"``.
    """

    R: np.ndarray
    G: np.ndarray
    pi0: np.ndarray
    pi1: np.ndarray
    drift: float
    mean_level: float
    residual: float
    iterations: int
    converged: bool
    method: str = "logarithmic-reduction"

    def level_vector(self, n: int) -> np.ndarray:
        """Phase probabilities of level ``n`` (``pi_0`` for ``n = 0``)."""
        k = int(check_integer("n", n, minimum=0))
        if k == 0:
            return self.pi0
        return self.pi1 @ np.linalg.matrix_power(self.R, k - 1)

    def level_probabilities(self, n_max: int) -> np.ndarray:
        """``[P(level = 0), ..., P(level = n_max)]``."""
        k = int(check_integer("n_max", n_max, minimum=0))
        out = np.empty(k + 1)
        out[0] = self.pi0.sum()
        v = self.pi1
        for j in range(1, k + 1):
            out[j] = v.sum()
            v = v @ self.R
        return out

    def tail_probability(self, n: int) -> float:
        """``P(level > n) = pi_{n+1} (I - R)^{-1} 1``."""
        k = int(check_integer("n", n, minimum=0))
        m = self.R.shape[0]
        return float(self.level_vector(k + 1) @ np.linalg.solve(np.eye(m) - self.R, np.ones(m)))


def solve_qbd(A0: Any, A1: Any, A2: Any, *, B0: Any = None, B1: Any = None, B2: Any = None,
              tol: float = 1e-13, max_iter: int = 60, on_fail: str = "warn") -> QBDResult:
    r"""Stationary distribution of a level-independent QBD (matrix-geometric).

    Parameters
    ----------
    A0, A1, A2 : array_like, shape (m, m)
        Up, local and down blocks of the levels ``n >= 1``; ``A_0 + A_1 +
        A_2`` must be an irreducible generator.
    B0 : array_like, shape (m0, m), optional
        Level 0 -> level 1.  Default ``A0``.
    B1 : array_like, shape (m0, m0), optional
        Within level 0.  Default ``A1 + diag(A2 1)`` (``m0 = m``: the down
        transitions are suppressed at level 0).
    B2 : array_like, shape (m, m0), optional
        Level 1 -> level 0.  Default ``A2``.
    tol : float
        Tolerance of the logarithmic reduction and of the reported residual.
    max_iter : int
        Iteration limit of the logarithmic reduction.
    on_fail : {"warn", "raise", "ignore"}
        Non-convergence handling (:func:`mva.errors.report_nonconvergence`).

    Returns
    -------
    QBDResult

    Raises
    ------
    SaturationError
        When the drift ratio ``a A_0 1 / a A_2 1 >= 1`` (null-recurrent or
        transient: no stationary distribution); checked before anything is
        solved, ``utilization`` carries the ratio.
    ValueError
        Bad shapes, negative rates, rows of ``[B_1 B_0]``, ``[B_2 A_1 A_0]``
        or ``[A_2 A_1 A_0]`` not summing to zero, a reducible phase process.

    Notes
    -----
    ``G`` by logarithmic reduction (:func:`logarithmic_reduction`), then
    ``R = A_0 (-(A_1 + A_0 G))^{-1}``.  The boundary vectors solve the
    censored chain on levels 0 and 1,

    .. math::

       (\pi_0, \pi_1) \begin{pmatrix} B_1 & B_0 \\ B_2 & A_1 + R A_2 \end{pmatrix} = 0,
       \qquad \pi_0 1 + \pi_1 (I - R)^{-1} 1 = 1,

    solved with :func:`mva.markov.steady_state` and rescaled.  Level
    probabilities decay geometrically at the rate of the spectral radius
    of ``R``; a drift ratio close to one makes ``R`` ill-conditioned
    (``(I - R)^{-1}`` large) and the reported residual is the check.

    References
    ----------
    Latouche and Ramaswami (1999), theorems 6.2.1 and 6.4.1 (``R`` from
    ``G``), section 6.4 (boundary); Neuts (1981), chapter 3.

    Examples
    --------
    M/M/1 at utilisation 0.8 (one phase):

    >>> res = solve_qbd([[0.8]], [[-1.8]], [[1.0]])
    >>> round(res.mean_level, 12), float(res.R[0, 0]), res.method
    (4.0, 0.8, 'logarithmic-reduction')
    >>> solve_qbd([[1.2]], [[-2.2]], [[1.0]])
    Traceback (most recent call last):
    ...
    mva.errors.SaturationError: QBD is not positive recurrent: drift ratio (up / down) = 1.2 ...
    """
    from .markov import steady_state
    check_choice("on_fail", on_fail, ("warn", "raise", "ignore"))
    mi = int(check_integer("max_iter", max_iter, minimum=1))
    a0, a1, a2 = _blocks(A0, A1, A2)
    m = a1.shape[0]
    b1 = np.asarray(a1 + np.diag(a2.sum(axis=1)) if B1 is None else B1, dtype=float)
    if b1.ndim != 2 or b1.shape[0] != b1.shape[1] or b1.shape[0] == 0:
        raise ValueError(f"B1 must be a non-empty square matrix; got shape {b1.shape}")
    m0 = b1.shape[0]
    b0 = _block("B0", a0 if B0 is None else B0, (m0, m))
    b2 = _block("B2", a2 if B2 is None else B2, (m, m0))
    _nonneg("B0", b0)
    _nonneg("B2", b2)
    _nonneg("B1", b1, off_diagonal=True)
    scale = float(np.max(np.abs(np.diag(a1))))
    _rows_zero("[B1 B0]", b1.sum(axis=1) + b0.sum(axis=1), scale)
    _rows_zero("[B2 A1 A0]", b2.sum(axis=1) + a1.sum(axis=1) + a0.sum(axis=1), scale)

    up, down, _ = _drift(a0, a1, a2)
    ratio = up / down if down > 0 else float("inf")
    if not ratio < 1.0:
        raise SaturationError(
            f"QBD is not positive recurrent: drift ratio (up / down) = {ratio!r} >= 1 (mean rate "
            f"up {up!r}, down {down!r} in the phase equilibrium); reduce the up rates A0",
            bottleneck="QBD", utilization=ratio)

    G, it, gap = logarithmic_reduction(a0, a1, a2, tol=tol, max_iter=mi)
    R = a0 @ np.linalg.inv(-(a1 + a0 @ G))
    res = float(np.max(np.abs(a0 + R @ a1 + R @ R @ a2))) / max(scale, 1e-300)

    # censored chain on levels 0 and 1
    C = np.block([[b1, b0], [b2, a1 + R @ a2]])
    np.fill_diagonal(C, 0.0)
    C = C - np.diag(C.sum(axis=1))
    z = steady_state(C, on_fail="raise").pi
    eye = np.eye(m)
    inv_1r = np.linalg.solve(eye - R, np.ones(m))
    norm = z[:m0].sum() + z[m0:] @ inv_1r
    pi0 = z[:m0] / norm
    pi1 = z[m0:] / norm
    mean_level = float(pi1 @ np.linalg.solve(eye - R, inv_1r))
    converged = bool(res <= tol and gap <= tol and np.isfinite(mean_level))
    if not converged:
        report_nonconvergence(on_fail, f"solve_qbd: logarithmic reduction stopped after {it} "
                              f"iterations with ||1 - G1|| = {gap:.3g} and residual {res:.3g} "
                              f"(tol={tol:.3g}; drift ratio {ratio:.6g})", iterations=it,
                              residual=res)
    spectral = float(np.max(np.abs(np.linalg.eigvals(R))))
    if (R < -1e-12 * max(1.0, float(np.abs(R).max()))).any() or spectral >= 1:
        raise ValueError(f"solve_qbd: R lost precision (spectral radius {fmt_value(spectral)}; "
                         f"drift ratio {ratio!r})")
    return QBDResult(R=R, G=G, pi0=pi0, pi1=pi1, drift=ratio, mean_level=mean_level, residual=res,
                     iterations=it, converged=converged)
