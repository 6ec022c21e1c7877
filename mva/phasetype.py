r"""Phase-type distributions: construction, moments, density and seeded sampling.

A phase-type (PH) distribution is the time to absorption of a CTMC with
``m`` transient phases, initial probabilities ``alpha`` (a row vector,
``alpha 1 <= 1``; the rest is an atom at zero) and sub-generator ``T``; the
exit rates are ``t = -T 1``.  PH distributions keep a model Markovian while
giving service or think times any squared coefficient of variation (SCV)
``cs2 = Var / mean^2``: Erlang chains for ``cs2 < 1``, hyperexponential or
Coxian mixtures for ``cs2 > 1``.

* :class:`PhaseType` ``(alpha=..., T=..., name=...)``: ``mean``,
  ``variance``, ``cs2``, ``moment(k)``, ``moments(k)``, ``pdf(x)``,
  ``cdf(x)``, ``sample(rng, size)`` (vectorised, seeded), ``exit_rates``,
  ``order``, and for state-space builders ``initial_phases()`` and
  ``phase_moves(i)``.
* Constructors: :func:`exponential`, :func:`erlang`,
  :func:`hyperexponential` (two phases, balanced means), :func:`coxian2`.
* :func:`fit` ``(mean, cs2, *, max_order=100, high="h2")``: a two-moment
  fit for every ``cs2 >= 0`` (see its Notes); :func:`reachable_cs2`.

The simulator can draw the very same distribution the analytic model uses:
``fit(mean, cs2).sample(rng, n)``.

References
----------
M. F. Neuts, *Matrix-Geometric Solutions in Stochastic Models*, Johns
Hopkins, 1981, chapter 2.  G. Latouche and V. Ramaswami, *Introduction to
Matrix Analytic Methods in Stochastic Modeling*, SIAM, 1999, chapter 2.
H. C. Tijms, *A First Course in Stochastic Models*, Wiley, 2003, appendix B
(mixed Erlang and balanced-means H2 fits).  R. Marie, "Calculating
equilibrium probabilities for lambda(n)/C_k/1/N queues", *ACM SIGMETRICS
Performance Evaluation Review* 9(2), 1980 (Coxian-2 fit).  T. Osogami and
M. Harchol-Balter, "Closed form solutions for mapping general distributions
to quasi-minimal PH distributions", *Performance Evaluation* 63(6), 2006
(reachable moments of PH distributions of a given order: ``cs2 >= 1/m``).
A. Horvath and M. Telek, "PhFit: a general phase-type fitting tool", TOOLS
2002.

Examples
--------
>>> ph = fit(2.0, 0.4)            # mean 2, cs2 0.4: a mixture of Erlang-2 and Erlang-3
>>> ph.name, ph.order, round(ph.mean, 12), round(ph.cs2, 12)
('Erlang(2,3)', 3, 2.0, 0.4)
>>> import numpy as np
>>> x = ph.sample(np.random.default_rng(1), 200_000)
>>> round(float(x.mean()), 2), round(float(x.var() / x.mean() ** 2), 2)
(2.0, 0.4)
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np

from ._validate import check_choice, check_integer, check_nonnegative, check_positive, fmt_value

__all__ = [
    "PhaseType",
    "PhaseTypeFitWarning",
    "DEFAULT_MAX_ORDER",
    "exponential",
    "erlang",
    "hyperexponential",
    "coxian2",
    "fit",
    "reachable_cs2",
]

#: default largest Erlang order used by :func:`fit` (smallest reachable cs2 = 1/100)
DEFAULT_MAX_ORDER = 100


class PhaseTypeFitWarning(UserWarning):
    """The requested cs2 is below what ``max_order`` phases can reach; the closest was used."""


def _scalar(name: str, value: Any, checker: Any = check_positive) -> float:
    arr = checker(name, value)
    if arr.ndim != 0:
        raise ValueError(f"{name} must be a scalar; got {fmt_value(arr)}")
    return float(arr)


@dataclass(frozen=True, kw_only=True, eq=False)
class PhaseType:
    r"""A phase-type distribution ``PH(alpha, T)``.

    Parameters
    ----------
    alpha : array_like, shape (m,)
        Initial phase probabilities, ``>= 0`` with ``sum(alpha) <= 1``
        (``1 - sum(alpha)`` is an atom at zero).
    T : array_like, shape (m, m)
        Sub-generator: negative diagonal, off-diagonal ``>= 0``, row sums
        ``<= 0`` and absorption certain (``T`` non-singular).
    name : str
        Label (e.g. ``"Erlang-3"``).

    Notes
    -----
    With ``t = -T 1``:

    * density ``f(x) = alpha exp(T x) t`` for ``x > 0``;
    * distribution ``F(x) = 1 - alpha exp(T x) 1``;
    * moments ``E[X^k] = k! alpha (-T)^{-k} 1``;
    * ``cs2 = E[X^2] / E[X]^2 - 1``.

    Sampling follows the embedded jump chain: draw the initial phase from
    ``alpha``, then repeatedly an exponential holding time of rate
    ``-T_ii`` and the next phase (or absorption) with probabilities
    ``T_ij / -T_ii`` and ``t_i / -T_ii``; all samples advance together, one
    vectorised step per jump.

    References
    ----------
    Neuts (1981), chapter 2; Latouche and Ramaswami (1999), section 2.4.

    Examples
    --------
    >>> ph = PhaseType(alpha=[1.0, 0.0], T=[[-2.0, 2.0], [0.0, -2.0]], name="Erlang-2")
    >>> ph.mean, ph.variance, ph.cs2
    (1.0, 0.5, 0.5)
    >>> round(float(ph.pdf(1.0)), 6), round(float(ph.cdf(1.0)), 6)   # 4 x e^-2, 1 - 3 e^-2
    (0.541341, 0.593994)
    """

    alpha: np.ndarray
    T: np.ndarray
    name: str = "PH"

    def __post_init__(self) -> None:
        a = check_nonnegative("alpha", self.alpha)
        T = np.asarray(self.T, dtype=float)
        if a.ndim != 1 or a.size == 0:
            raise ValueError(f"alpha must be a non-empty 1-D vector; got {fmt_value(self.alpha)}")
        if T.shape != (a.size, a.size):
            raise ValueError(f"T must have shape {(a.size, a.size)} to match alpha; got {T.shape}")
        if not np.all(np.isfinite(T)):
            raise ValueError("T must be finite")
        if a.sum() > 1.0 + 1e-12:
            raise ValueError(f"alpha must sum to at most 1; got {float(a.sum())!r}")
        d = np.diag(T)
        if not np.all(d < 0):
            raise ValueError(f"T must have a negative diagonal; got {fmt_value(d)}")
        off = T - np.diag(d)
        if (off < 0).any():
            raise ValueError("T: off-diagonal rates must be >= 0")
        t = -T.sum(axis=1)
        scale = np.abs(d)
        if (t < -1e-12 * scale).any():
            i = int(np.flatnonzero(t < -1e-12 * scale)[0])
            raise ValueError(f"T: row {i} sums to {float(-t[i])!r} > 0 (not a sub-generator)")
        t = np.maximum(t, 0.0)
        try:
            U = np.linalg.solve(-T, np.eye(a.size))
        except np.linalg.LinAlgError:
            raise ValueError("T is singular: absorption is not certain from every phase") from None
        if not np.all(np.isfinite(U)) or (U < -1e-9 * np.abs(U).max()).any():
            raise ValueError("T is not a transient sub-generator: absorption is not certain")
        a = a.copy()
        a.flags.writeable = False
        T = T.copy()
        T.flags.writeable = False
        t.flags.writeable = False
        object.__setattr__(self, "alpha", a)
        object.__setattr__(self, "T", T)
        object.__setattr__(self, "_t", t)
        object.__setattr__(self, "_U", U)

    def __repr__(self) -> str:
        return (f"PhaseType(name={self.name!r}, order={self.order}, mean={self.mean:.6g}, "
                f"cs2={self.cs2:.6g})")

    # -- structure ---------------------------------------------------------

    @property
    def order(self) -> int:
        """Number of phases ``m``."""
        return int(self.alpha.size)

    @property
    def exit_rates(self) -> np.ndarray:
        """``t = -T 1``: rate of absorption from each phase."""
        return self._t  # type: ignore[attr-defined]

    def initial_phases(self) -> tuple[tuple[int, float], ...]:
        """``(phase, probability)`` for every phase with ``alpha_i > 0``."""
        return tuple((i, float(p)) for i, p in enumerate(self.alpha) if p > 0)

    def phase_moves(self, i: int) -> tuple[tuple[int | None, float], ...]:
        """Transitions out of phase ``i``: ``(j, T_ij)`` and ``(None, t_i)`` for completion.

        Convenient in :func:`mva.markov.build_state_space` transition
        functions.
        """
        row = self.T[i]
        moves: list[tuple[int | None, float]] = [(j, float(r)) for j, r in enumerate(row)
                                                 if j != i and r > 0]
        if self._t[i] > 0:  # type: ignore[attr-defined]
            moves.append((None, float(self._t[i])))  # type: ignore[attr-defined]
        return tuple(moves)

    # -- moments -----------------------------------------------------------

    def moment(self, k: int) -> float:
        """``E[X^k] = k! alpha (-T)^{-k} 1``."""
        kk = int(check_integer("k", k, minimum=0))
        return 1.0 if kk == 0 else float(self.moments(kk)[-1])

    def moments(self, k: int) -> np.ndarray:
        """``[E[X], ..., E[X^k]]``."""
        kk = int(check_integer("k", k, minimum=1))
        out = np.empty(kk)
        v = np.ones(self.order)
        for j in range(1, kk + 1):
            v = self._U @ v  # type: ignore[attr-defined]
            out[j - 1] = math.factorial(j) * (self.alpha @ v)
        return out

    @property
    def mean(self) -> float:
        """``E[X] = alpha (-T)^{-1} 1``."""
        return float(self.moments(1)[0])

    @property
    def variance(self) -> float:
        """``E[X^2] - E[X]^2``."""
        m1, m2 = self.moments(2)
        return float(m2 - m1 * m1)

    @property
    def cs2(self) -> float:
        """Squared coefficient of variation ``Var / E[X]^2``."""
        m1, m2 = self.moments(2)
        return float(m2 / (m1 * m1) - 1.0)

    # -- density -----------------------------------------------------------

    def _expm_rows(self, x: np.ndarray) -> np.ndarray:
        """``alpha exp(T x)`` for each (non-negative) ``x``, shape ``x.shape + (m,)``.

        Uniformisation: ``alpha exp(T x) = sum_n Poisson(n; Lambda x) alpha P^n``
        with ``P = I + T / Lambda``, ``Lambda = max_i |T_ii|`` -- a sum of
        non-negative terms, truncated where the Poisson tail is below 1e-17;
        the vectors ``alpha P^n`` are computed once for all ``x``.  Points
        with ``Lambda x > 10^5`` use :func:`scipy.linalg.expm`.
        """
        from scipy.linalg import expm
        from scipy.stats import poisson
        flat = x.ravel()
        m = self.order
        out = np.empty((flat.size, m))
        lam = float(np.max(-np.diag(self.T)))
        lx = lam * flat
        big = lx > 1e5
        for i in np.flatnonzero(big):
            out[i] = self.alpha @ expm(self.T * flat[i])
        small = np.flatnonzero(~big)
        if small.size:
            order = small[np.argsort(lx[small])]
            top = float(lx[order[-1]])
            nmax = int(top + 12.0 * math.sqrt(top) + 40)
            P = np.eye(m) + self.T / lam
            V = np.empty((nmax + 1, m))
            V[0] = self.alpha
            for n in range(nmax):
                V[n + 1] = V[n] @ P
            for s in range(0, order.size, 1024):
                idx = order[s:s + 1024]
                lo_x, hi_x = float(lx[idx[0]]), float(lx[idx[-1]])
                lo = max(0, int(lo_x - 12.0 * math.sqrt(lo_x) - 40))
                hi = min(nmax, int(hi_x + 12.0 * math.sqrt(hi_x) + 40))
                terms = np.arange(lo, hi + 1)
                W = poisson.pmf(terms[None, :], lx[idx][:, None])
                out[idx] = W @ V[lo:hi + 1]
        return out.reshape(x.shape + (m,))

    def pdf(self, x: Any) -> Any:
        """Density ``alpha exp(T x) t`` of the continuous part (0 for ``x < 0``)."""
        xa = np.asarray(x, dtype=float)
        v = self._expm_rows(np.maximum(xa, 0.0)) @ self._t  # type: ignore[attr-defined]
        v = np.where(xa < 0, 0.0, v)
        return float(v) if v.ndim == 0 else v

    def cdf(self, x: Any) -> Any:
        """``P(X <= x) = 1 - alpha exp(T x) 1`` (0 for ``x < 0``)."""
        xa = np.asarray(x, dtype=float)
        v = 1.0 - self._expm_rows(np.maximum(xa, 0.0)).sum(axis=-1)
        v = np.where(xa < 0, 0.0, np.clip(v, 0.0, 1.0))
        return float(v) if v.ndim == 0 else v

    # -- sampling ----------------------------------------------------------

    def sample(self, rng: Any, size: Any = None) -> Any:
        """Draw independent samples with an explicitly seeded generator.

        Parameters
        ----------
        rng : numpy.random.Generator or int
            The random generator (an int is a seed for
            :func:`numpy.random.default_rng`); ``None`` is refused, so that
            every draw is reproducible.
        size : int or tuple of int, optional
            Output shape; ``None`` gives one float.

        Returns
        -------
        float or numpy.ndarray
        """
        if rng is None:
            raise ValueError("rng must be a numpy.random.Generator or an int seed; got None "
                             "(randomness is seeded explicitly)")
        if not isinstance(rng, np.random.Generator):
            rng = np.random.default_rng(int(check_integer("rng", rng, minimum=0)))
        if size is None:
            shape: tuple[int, ...] = ()
        elif np.ndim(size) == 0:
            shape = (int(size),)
        else:
            shape = tuple(int(s) for s in size)
        n = int(np.prod(shape)) if shape else 1
        m = self.order
        d = -np.diag(self.T)
        jump = np.zeros((m, m + 1))
        jump[:, :m] = self.T / d[:, None]
        np.fill_diagonal(jump[:, :m], 0.0)
        jump[:, m] = self._t / d  # type: ignore[attr-defined]
        cum = np.cumsum(jump, axis=1)
        cum[:, -1] = 1.0
        a0 = np.cumsum(np.append(self.alpha, max(0.0, 1.0 - self.alpha.sum())))
        a0[-1] = 1.0
        phase = np.searchsorted(a0, rng.random(n), side="right")
        x = np.zeros(n)
        idx = np.flatnonzero(phase < m)
        while idx.size:
            ph = phase[idx]
            x[idx] += rng.standard_exponential(idx.size) / d[ph]
            u = rng.random(idx.size)
            nxt = (u[:, None] >= cum[ph]).sum(axis=1)
            phase[idx] = nxt
            idx = idx[nxt < m]
        return float(x[0]) if not shape else x.reshape(shape)


# --------------------------------------------------------------------------
# constructors
# --------------------------------------------------------------------------


def exponential(mean: float) -> PhaseType:
    """Exponential distribution with the given mean (``cs2 = 1``).

    Examples
    --------
    >>> exponential(4.0).T.tolist(), exponential(4.0).cs2
    ([[-0.25]], 1.0)
    """
    m = _scalar("mean", mean)
    return PhaseType(alpha=np.ones(1), T=np.array([[-1.0 / m]]), name="exp")


def _erlang_chain(k: int, rate: float) -> np.ndarray:
    T = np.diag(np.full(k, -rate)) + np.diag(np.full(k - 1, rate), 1)
    return T


def erlang(k: int, mean: float) -> PhaseType:
    """Erlang-``k`` distribution with the given mean (``cs2 = 1/k``).

    ``k`` phases in series, each exponential with rate ``k / mean``.

    Examples
    --------
    >>> e = erlang(4, 2.0)
    >>> e.order, e.mean, e.cs2
    (4, 2.0, 0.25)
    """
    kk = int(check_integer("k", k, minimum=1))
    m = _scalar("mean", mean)
    a = np.zeros(kk)
    a[0] = 1.0
    return PhaseType(alpha=a, T=_erlang_chain(kk, kk / m), name=f"Erlang-{kk}")


def hyperexponential(mean: float, cs2: float) -> PhaseType:
    r"""Two-phase hyperexponential with balanced means, for ``cs2 >= 1``.

    Notes
    -----
    Phase ``i`` is chosen with probability ``p_i`` and is exponential with
    rate ``mu_i``; balanced means ``p_1 / mu_1 = p_2 / mu_2`` give

    .. math::

       p_1 = \tfrac12\Bigl(1 + \sqrt{\tfrac{c^2 - 1}{c^2 + 1}}\Bigr),\quad
       p_2 = 1 - p_1,\quad \mu_i = \frac{2 p_i}{m}.

    References
    ----------
    Tijms (2003), appendix B; Bolch et al. (2006), section 1.3.1.

    Examples
    --------
    >>> h = hyperexponential(1.0, 4.0)
    >>> round(h.mean, 12), round(h.cs2, 12)
    (1.0, 4.0)
    """
    m = _scalar("mean", mean)
    c = _scalar("cs2", cs2, check_nonnegative)
    if c < 1.0:
        raise ValueError(f"cs2 must be >= 1 for a hyperexponential distribution; got {c!r}")
    p1 = 0.5 * (1.0 + math.sqrt((c - 1.0) / (c + 1.0)))
    p2 = 1.0 - p1
    if p2 == 0.0:
        raise ValueError(f"cs2 is too large for a balanced-means H2 in double precision; got {c!r}")
    return PhaseType(alpha=np.array([p1, p2]), T=np.diag([-2.0 * p1 / m, -2.0 * p2 / m]), name="H2")


def coxian2(mu1: float, mu2: float, p: float) -> PhaseType:
    r"""Coxian-2: phase 1 (rate ``mu1``), then phase 2 (rate ``mu2``) with probability ``p``.

    Notes
    -----
    ``alpha = (1, 0)``, ``T = [[-mu1, p mu1], [0, -mu2]]``; mean
    ``1/mu1 + p/mu2``.

    Examples
    --------
    >>> c = coxian2(2.0, 0.5, 0.25)
    >>> c.mean, round(c.cs2, 12)
    (1.0, 2.0)
    """
    a = _scalar("mu1", mu1)
    b = _scalar("mu2", mu2)
    q = _scalar("p", p, check_nonnegative)
    if q > 1.0:
        raise ValueError(f"p must be a probability in [0, 1]; got {q!r}")
    return PhaseType(alpha=np.array([1.0, 0.0]), T=np.array([[-a, q * a], [0.0, -b]]),
                     name="Coxian-2")


def reachable_cs2(max_order: int) -> float:
    """Smallest cs2 of any PH distribution with at most ``max_order`` phases: ``1 / max_order``.

    Reached only by the Erlang distribution (Aldous and Shepp 1987).

    Examples
    --------
    >>> reachable_cs2(100)
    0.01
    """
    k = int(check_integer("max_order", max_order, minimum=1))
    return 1.0 / k


def fit(mean: float, cs2: float, *, max_order: int = DEFAULT_MAX_ORDER, high: str = "h2",
        on_unreachable: str = "warn") -> PhaseType:
    r"""Two-moment phase-type fit for any ``cs2 >= 0``.

    Parameters
    ----------
    mean : float
        Target mean ``> 0``.
    cs2 : float
        Target squared coefficient of variation ``>= 0`` (0: deterministic).
    max_order : int
        Largest number of phases allowed for ``cs2 < 1``.
    high : {"h2", "coxian2"}
        Family for ``cs2 > 1``: balanced-means hyperexponential
        (:func:`hyperexponential`) or Coxian-2 (Marie's fit).
    on_unreachable : {"warn", "raise", "ignore"}
        When ``cs2 < 1 / max_order`` (e.g. a deterministic time), the
        closest reachable distribution, Erlang-``max_order`` with
        ``cs2 = 1/max_order``, is returned; ``"warn"`` issues a
        :class:`PhaseTypeFitWarning` stating the cs2 reached, ``"raise"``
        raises ``ValueError`` instead.

    Returns
    -------
    PhaseType
        Mean and cs2 equal to the targets (to rounding), or the closest
        reachable cs2 as above (read it from ``.cs2``).

    Notes
    -----
    * ``cs2 = 1``: exponential.
    * ``1/k <= cs2 < 1/(k-1)``, ``k <= max_order``: mixed Erlang
      ``E_{k-1,k}`` -- with probability ``p`` an Erlang-``(k-1)``, else an
      Erlang-``k``, all phases of rate ``mu``:

      .. math::

         p = \frac{k c^2 - \sqrt{k (1 + c^2) - k^2 c^2}}{1 + c^2},\qquad
         \mu = \frac{k - p}{m}.

      As a PH: ``k`` phases in series, entered at phase 2 with probability
      ``p`` (so ``cs2 = 1/k`` gives a pure Erlang-``k``).
    * ``cs2 > 1``: balanced-means H2 (default), or Coxian-2 with
      ``mu_1 = 2/m``, ``p = 1/(2 c^2)``, ``mu_2 = 1/(m c^2)`` (Marie 1980).
    * No PH of order ``k`` has ``cs2 < 1/k`` (Aldous and Shepp 1987), hence
      the limit for near-deterministic targets.

    References
    ----------
    Tijms (2003), appendix B; Marie (1980); Osogami and Harchol-Balter
    (2006); D. Aldous and L. Shepp, "The least variable phase type
    distribution is Erlang", *Stochastic Models* 3(3), 1987.

    Examples
    --------
    >>> [fit(1.0, c).name for c in (0.3, 1.0, 3.0)]
    ['Erlang(3,4)', 'exp', 'H2']
    >>> d = fit(5.0, 0.0, max_order=20, on_unreachable="ignore")   # deterministic, approximated
    >>> d.name, round(d.mean, 12), round(d.cs2, 12)
    ('Erlang-20', 5.0, 0.05)
    """
    m = _scalar("mean", mean)
    c = _scalar("cs2", cs2, check_nonnegative)
    kmax = int(check_integer("max_order", max_order, minimum=1))
    check_choice("high", high, ("h2", "coxian2"))
    check_choice("on_unreachable", on_unreachable, ("warn", "raise", "ignore"))
    if c == 1.0:
        return exponential(m)
    if c > 1.0:
        if high == "h2":
            return hyperexponential(m, c)
        return coxian2(2.0 / m, 1.0 / (m * c), 1.0 / (2.0 * c))
    if c < 1.0 / kmax:
        msg = (f"fit: cs2={c!r} is below 1/max_order = {1.0 / kmax!r}, the smallest cs2 of a PH "
               f"distribution with at most {kmax} phases; using Erlang-{kmax} "
               f"(cs2 = {1.0 / kmax!r})")
        if on_unreachable == "raise":
            raise ValueError(msg + " -- raise max_order or accept the closest fit")
        if on_unreachable == "warn":
            warnings.warn(msg, PhaseTypeFitWarning, stacklevel=2)
        return erlang(kmax, m)
    k = max(2, math.ceil(1.0 / c))
    while k > 2 and 1.0 / (k - 1) <= c:
        k -= 1
    while 1.0 / k > c:
        k += 1
    if c == 1.0 / k:
        return erlang(k, m)
    disc = max(0.0, k * (1.0 + c) - k * k * c)
    p = min(1.0, max(0.0, (k * c - math.sqrt(disc)) / (1.0 + c)))
    mu = (k - p) / m
    a = np.zeros(k)
    a[0] = 1.0 - p
    a[1] = p
    return PhaseType(alpha=a, T=_erlang_chain(k, mu), name=f"Erlang({k - 1},{k})")
