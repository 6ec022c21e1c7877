r"""Approximate MVA: Bard-Schweitzer, Linearizer, and multi-server approximations.

Exact MVA costs ``prod(N_r + 1)`` population vectors; the approximations
here solve one fixed point at the full population instead.

Bard-Schweitzer
---------------
The arrival theorem needs ``Q(N - e_r)``; Bard and Schweitzer estimate it
from ``Q(N)`` by removing one customer of the arriving chain in proportion:

.. math::

    \tilde Q^{(r)}_{sk} = \frac{N_{r(s)} - \delta_{r, r(s)}}{N_{r(s)}}\, Q_{sk}(N)

(and likewise for utilizations when priorities or ``cs2`` need them), then
iterate ``R -> X -> Q`` with the residence formulas of :mod:`mva.exact`
until the largest change of ``Q_ck / N_r(c)`` and the largest relative change
of a chain throughput are both below ``tol``.

Linearizer
----------
Chandy and Neuse write ``Q_sk(n - e_j) / (n - e_j)_{r(s)} = Q_sk(n)/n_{r(s)} +
F^{(j)}_{sk}`` and assume the corrections ``F`` do not depend on the
population.  Each outer pass solves the Schweitzer-like core (with
``F``) at ``N`` and at every ``N - e_j``, then updates
``F^{(j)} = Q(N - e_j)/(N - e_j) - Q(N)/N``; the passes stop when ``Q(N)``
changes by less than ``tol`` (Chandy and Neuse found three passes enough);
a last core solve at ``N`` gives the result.

Multi-server stations
---------------------
* **Seidmann** (:func:`seidmann`, and the default ``multiserver="seidmann"``
  of the iterative methods): an ``m``-server station of demand ``D`` becomes
  a single server of demand ``D/m`` in series with a delay of
  ``D (m - 1)/m``; exact at light load (response ``D``) and at saturation
  (throughput ``m/D``).  Results are folded back onto the original station.
* **Rolia** (:func:`rolia`, ``multiserver="rolia"``): the residence is
  ``R_ck = D_ck (1 + rho_k^{m_k} Q~_k / m_k)`` where
  ``rho_k = min(1, sum_s X_s D_sk / m_k)`` is the per-server utilization at
  the current iterate, ``rho^m`` approximates the probability that all
  servers are busy and ``Q~_k`` is the queue seen on arrival (Rolia and
  Sevcik's Method of Layers, as used in LQNS; the processor-sharing form).
  Also exact at light load and at saturation.

* **Conway** (:func:`linearizer_ms`, ``multiserver="conway"``): the exact
  multi-server residence of :mod:`mva.exact`,
  ``R_ck = D_ck/m (1 + Q~_k + sum_{j=0}^{m-2} (m-1-j) p_k(j | n-e_r))``,
  with the marginals at ``n - e_r`` estimated from those at ``n``:
  ``p_k(j|n-e_r) ~ p_k(j|n)`` (Bard-Schweitzer) or ``p_k(j|n) + G^{(r)}_{kj}``
  with Linearizer corrections ``G^{(r)} = p(.|N-e_r) - p(.|N)`` (Conway 1989;
  de Souza e Silva and Muntz 1990; as LINE's ``pfqn_linearizerms``).  At
  population ``n`` the marginals solve
  ``p_j = (A p_{j-1} + d_{j-1})/j`` (``j < m``),
  ``p_B = (A (p_B + p_{m-1}) + d_B)/m``, ``sum = 1``, in closed form, where
  ``A = sum_r X_r D_rk`` and ``d`` are the corrections weighted by ``X_r D_rk``.

Load-dependent stations
-----------------------
An ``"ld"`` station keeps its whole marginal distribution ``p_k(j|n)``,
``j = 0..|N|``.  The arrival theorem needs ``p_k(.|n - e_r)``; it is estimated
from ``p_k(.|n)`` by removing one chain-``r`` customer, which sits at station
``k`` with probability ``pi_{rj} = min(1, j f_rk)`` when ``j`` are there:

.. math::

    \tilde p^{(r)}_k(j) = p_k(j\mid n)\,(1 - \pi_{rj}) + p_k(j+1\mid n)\,\pi_{r,j+1},
    \qquad f_{rk} = 1 - \tilde Q^{(r)}_k / Q_k,

so that the mean of :math:`\tilde p^{(r)}_k` is the queue :math:`\tilde Q^{(r)}_k`
of the Bard-Schweitzer (or Linearizer) estimate (for one chain, ``pi_j = j/N``:
a customer chosen at random is removed).  Then, as in exact MVA,
``R_ck = D_ck sum_{j>=1} j/alpha_k(j) p~(j-1)`` and
``p_k(j|n) = (1/alpha_k(j)) sum_r X_r D_rk p~^{(r)}_k(j-1)``,
``p_k(0|n) = 1 - sum_{j>=1} p_k(j|n)`` (renormalized when that sum exceeds 1).
This is the marginal form of the Schweitzer assumption used by Akyildiz and
Bolch (1988) for multi-server networks (Bolch et al. 2006, section 9.1.2,
there with ``p(j|n - e_r) ~ p(j|n)``).

Non-convergence
---------------
``on_fail="warn"`` (default) emits :class:`~mva.errors.ConvergenceWarning`
and returns the last iterate with ``converged=False``; ``"raise"`` raises
:class:`~mva.errors.ConvergenceError`; ``"ignore"`` only flags the result.

References
----------
Y. Bard, "Some extensions to multiclass queueing network analysis", 1979;
P. Schweitzer, "Approximate analysis of multiclass closed networks of
queues", 1979.
K. M. Chandy and D. Neuse, "Linearizer: a heuristic algorithm for queueing
network models of computing systems", CACM 25(2), 1982, pp. 126-134.
A. Seidmann, P. J. Schweitzer, S. Shalev-Oren, "Computerized closed queueing
network models of flexible manufacturing systems", 1987.
J. A. Rolia and K. C. Sevcik, "The Method of Layers", IEEE TSE 21(8), 1995.
A. E. Conway, "Fast approximate solution of queueing networks with
multi-server chain-dependent FCFS queues", in *Modeling Techniques and Tools
for Computer Performance Evaluation*, Plenum, 1989, pp. 385-396.
E. de Souza e Silva and R. R. Muntz, "A note on the computational cost of the
Linearizer algorithm for queueing networks", IEEE Trans. Computers 39(6), 1990.
I. F. Akyildiz and G. Bolch, "Mean value analysis approximation for multiple
server queueing networks", Performance Evaluation 8(2), 1988, pp. 77-91.
G. Bolch, S. Greiner, H. de Meer, K. S. Trivedi, *Queueing Networks and Markov
Chains*, 2nd ed., Wiley, 2006, section 9.1.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import numpy as np

from ._model import Compiled, cap_utilization, compile_network, make_result
from ._validate import check_choice, check_integer, check_positive
from .errors import SaturationError, report_nonconvergence
from .network import ClosedNetwork
from .priority import aggregate, class_terms, queue_residence
from .results import MVAResult

__all__ = ["schweitzer", "linearizer", "linearizer_ms", "seidmann", "rolia", "seidmann_transform"]

_ON_FAIL = ("warn", "raise", "ignore")
_MULTISERVER = ("seidmann", "rolia", "conway")


# ----------------------------------------------------------------------
# Seidmann transformation
# ----------------------------------------------------------------------
def seidmann_transform(network: ClosedNetwork) -> tuple[ClosedNetwork, np.ndarray]:
    """Replace every ``"multi"`` station by a queue ``D/m`` plus a delay ``D(m-1)/m``.

    Returns
    -------
    (ClosedNetwork, numpy.ndarray)
        The transformed network (the delay parts appended after the
        original ``K`` stations) and, for each appended station, the index of
        the original station it belongs to.

    Examples
    --------
    >>> net = ClosedNetwork.single_class([2.0, 1.0], population=3, servers=[4, 1])
    >>> t, owner = seidmann_transform(net)
    >>> t.kinds, t.demands.tolist(), owner.tolist()
    (('queue', 'queue', 'delay'), [[0.5, 1.0, 1.5]], [0])
    """
    kinds = list(network.kinds)
    multi = [k for k, kd in enumerate(kinds) if kd == "multi"]
    if not multi:
        return network, np.zeros(0, dtype=np.int64)
    m = network.servers.astype(float)
    D = network.demands.copy()
    extra = D[:, multi] * (m[multi] - 1.0) / m[multi]
    D[:, multi] = D[:, multi] / m[multi]
    V = network.visits
    for k in multi:
        kinds[k] = "queue"
    servers = network.servers.copy()
    servers[multi] = 1
    net = replace(
        network,
        demands=np.concatenate([D, extra], axis=1),
        kinds=tuple(kinds) + ("delay",) * len(multi),
        servers=np.concatenate([servers, np.ones(len(multi), dtype=np.int64)]),
        rates=tuple(network.rates) + (None,) * len(multi),
        cs2=np.concatenate([network.cs2, np.ones(len(multi))]),
        visits=None if V is None else np.concatenate([V, V[:, multi]], axis=1),
        disciplines=tuple(network.disciplines) + ("ps",) * len(multi),
        station_names=tuple(network.station_names) + tuple(
            f"{network.station_names[k]}/seidmann-delay" for k in multi),
    )
    return net, np.asarray(multi, dtype=np.int64)


def _fold(cm: Compiled, res: MVAResult, owner: np.ndarray, method: str) -> MVAResult:
    K = cm.K
    Rck = res.residence_time[:, :K].copy()
    Q = res.queue_length[:, :K].copy()
    for i, k in enumerate(owner):
        Rck[:, k] += res.residence_time[:, K + i]
        Q[:, k] += res.queue_length[:, K + i]
    return make_result(cm, res.chain_throughput, Rck, Q=Q, method=method,
                       converged=res.converged, iterations=res.iterations, residual=res.residual)


# ----------------------------------------------------------------------
# the approximate-MVA core: one fixed point at population n
# ----------------------------------------------------------------------
class _Core:
    """Residence-time map of the approximate solvers for one compiled network."""

    def __init__(self, cm: Compiled, multiserver: str):
        self.cm = cm
        self.qidx = np.nonzero(cm.queue)[0]
        self.midx = np.nonzero(cm.multi)[0]
        self.didx = np.nonzero(cm.delay)[0]
        self.general = (not cm.simple) and self.qidx.size > 0
        self.rolia = multiserver == "rolia" and self.midx.size > 0
        self.Dq = cm.D[:, self.qidx]
        self.Vq = cm.V[:, self.qidx]
        self.chain_D = cm.E @ cm.D
        # load-dependent stations: marginals p_k(0..J), J = total population
        self.lidx = np.nonzero(cm.ld)[0]
        self.J = int(cm.N.sum())
        J = max(self.J, 1)
        self.ld_w = np.zeros((self.lidx.size, J))        # j / alpha(j), j = 1..J
        self.ld_inv = np.zeros((self.lidx.size, J))      # 1 / alpha(j)
        for i, k in enumerate(self.lidx):
            a = np.asarray(cm.net.rates[k], dtype=float)
            alpha = np.concatenate([a[:J], np.full(max(J - a.size, 0), a[-1])])
            self.ld_inv[i] = 1.0 / alpha
            self.ld_w[i] = np.arange(1, J + 1) / alpha
        # multi-server stations by Conway's marginal method: p_k(0..m-1) and P(>= m busy)
        self.conway = multiserver == "conway" and self.midx.size > 0
        self.mm = cm.m[self.midx].astype(np.int64)
        Mx = int(self.mm.max()) if self.midx.size else 1
        jj = np.arange(Mx)
        self.cw_res = np.where(jj[None, :] <= self.mm[:, None] - 2,
                               (self.mm[:, None] - 1 - jj[None, :]).astype(float), 0.0)
        self.cw_inv = np.where((jj[None, :] >= 1) & (jj[None, :] < self.mm[:, None]),
                               1.0 / np.maximum(jj[None, :], 1), 0.0)

    def initial_marginals(self) -> dict[str, np.ndarray]:
        """Empty stations: ``p(0) = 1`` at every LD and Conway station."""
        pl = np.zeros((self.lidx.size, max(self.J, 1) + 1))
        pl[:, 0] = 1.0
        pm = np.zeros((self.midx.size, self.cw_res.shape[1]))
        pm[:, 0] = 1.0
        return {"ld": pl, "multi": pm, "busy": np.zeros(self.midx.size)}

    def _ld_seen(self, P: np.ndarray, Q: np.ndarray, Qseen: np.ndarray, total: int) -> np.ndarray:
        """Marginals an arriving chain-``r`` customer sees at each LD station, (R, Kl, J+1).

        One customer of chain ``r`` is removed: it sits at station ``k`` with
        probability ``pi_j = min(1, j f_rk)`` when ``j`` are there, where
        ``f_rk = 1 - Qseen_rk / Q_k`` is the fraction of the queue the
        Schweitzer (or Linearizer) estimate removes, so that the mean of the
        result is ``Qseen_rk``.
        """
        lidx = self.lidx
        Qk = Q[:, lidx].sum(axis=0)
        with np.errstate(divide="ignore", invalid="ignore"):
            f = np.where(Qk[None, :] > 0,
                         1.0 - Qseen[:, lidx] / np.where(Qk > 0, Qk, 1.0)[None, :], 0.0)
        f = np.clip(f, 0.0, 1.0)
        j = np.arange(P.shape[1], dtype=float)
        pi = np.minimum(1.0, f[:, :, None] * j[None, None, :])
        pt = P[None] * (1.0 - pi)
        pt[..., :-1] += P[None, :, 1:] * pi[..., 1:]
        if total < P.shape[1]:
            pt[..., total:] = 0.0       # at n - e_r at most |n| - 1 customers
        return pt

    def solve(self, n: np.ndarray, Q: np.ndarray, F: np.ndarray | None, tol: float,
              max_iter: int, P: dict[str, np.ndarray] | None = None,
              G: dict[str, np.ndarray] | None = None
              ) -> tuple[np.ndarray, np.ndarray, np.ndarray, int, float, dict[str, np.ndarray]]:
        cm = self.cm
        ch = cm.ch
        R = cm.R
        n = np.asarray(n, dtype=float)
        nch = n[ch]
        delta = (np.arange(R)[:, None] == ch[None, :]).astype(float)       # (R, C)
        mult = np.maximum(nch[None, :] - delta, 0.0)                         # (R, C)
        with np.errstate(divide="ignore", invalid="ignore"):
            scale = np.where(nch[None, :] > 0, mult / np.where(nch > 0, nch, 1.0)[None, :], 0.0)
        Fsum = None if F is None else np.einsum("rc,rck->rk", mult, F)
        norm = np.maximum(nch, 1.0)[:, None]
        active = n > 0
        Rck = np.array(cm.D, dtype=float, copy=True)   # delay stations keep D
        X = np.zeros(R)
        resid = np.inf
        omega = 1.0
        it = 0
        qidx, midx, lidx = self.qidx, self.midx, self.lidx
        total = int(round(float(n.sum())))
        if P is None:
            P = self.initial_marginals()
        pt = None
        for it in range(1, max_iter + 1):
            if self.general:
                Qt = scale[:, :, None] * Q
                if F is not None:
                    Qt = np.maximum(Qt + mult[:, :, None] * F, 0.0)
                Ut = scale[:, :, None] * (X[ch][:, None] * cm.D)
                lev_sums = aggregate(Qt, Ut, cm.S, cm.onehot)[..., qidx]
                terms = class_terms(lev_sums, cm.lev, rows=ch)
                Rq, free = queue_residence(self.Dq, self.Vq, terms, cm.fcfs[qidx], cm.cterm[qidx])
                Rck[:, qidx] = Rq
                Qseen = None
            else:
                free = None
                Qseen = scale @ Q
                if Fsum is not None:
                    Qseen = np.maximum(Qseen + Fsum, 0.0)
                if qidx.size:
                    Rck[:, qidx] = self.Dq * (1.0 + Qseen[ch][:, qidx])
            if Qseen is None and (self.rolia or self.conway or lidx.size):
                Qseen = scale @ Q
                if Fsum is not None:
                    Qseen = np.maximum(Qseen + Fsum, 0.0)
            if lidx.size:
                assert Qseen is not None    # set just above whenever lidx.size
                pt = self._ld_seen(P["ld"], Q, Qseen, total)
                Rck[:, lidx] = cm.D[:, lidx] * np.einsum("rkj,kj->rk", pt[..., :-1], self.ld_w)[ch]
            if self.conway:
                assert Qseen is not None    # set just above whenever self.conway
                seen = P["multi"][None] + (0.0 if G is None else G["multi"])      # (R, Km, Mx)
                extra = np.broadcast_to((np.maximum(seen, 0.0) * self.cw_res[None]).sum(axis=2),
                                        (cm.R, midx.size))                         # (R, Km)
                Rck[:, midx] = cm.D[:, midx] / self.mm * (1.0 + Qseen[ch][:, midx] + extra[ch])
            if self.rolia:
                assert Qseen is not None    # set just above whenever self.rolia
                m = cm.m[midx].astype(float)
                rho = np.minimum(1.0, (X[ch][:, None] * cm.D[:, midx]).sum(axis=0) / m)
                Rck[:, midx] = cm.D[:, midx] * (1.0 + rho ** m * Qseen[ch][:, midx] / m)
            if self.general:
                cap_utilization(Rck[None], n[None], cm.Z, cm.E, self.chain_D, qidx)
            cyc = cm.Z + cm.E @ Rck.sum(axis=1)
            X_old = X
            X = np.where(active, n / np.where(cyc > 0, cyc, 1.0), 0.0)
            Qn = X[ch][:, None] * Rck
            dP = 0.0
            if lidx.size or self.conway:
                Pn = self._marginals(P, X, pt if lidx.size else None, total, G)
                dP = max(float(np.max(np.abs(Pn[key] - P[key]), initial=0.0)) for key in Pn)
            # Converged when the queue lengths *and* the throughputs have settled:
            # at light load Q is tiny, so a Q-only test would stop before the
            # utilization terms (BKT's 1/(1-U), Rolia's rho) have taken effect.
            dX = np.abs(X - X_old) / np.where(X > 0, X, 1.0)
            prev, resid = resid, float(max(np.max(np.abs(Qn - Q) / norm), np.max(dX), dP))
            if resid <= tol:
                Q = Qn
                if lidx.size or self.conway:
                    P = Pn
                break
            if resid > prev and omega > 1.0 / 64:
                omega *= 0.5    # oscillation: damp the substitution
            Q = Qn if omega == 1.0 else Q + omega * (Qn - Q)
            if lidx.size or self.conway:
                P = Pn if omega == 1.0 else {key: P[key] + omega * (Pn[key] - P[key]) for key in P}
        if free is not None:
            bad = (free <= 1e-9) & (self.Dq > 0) & active[ch][:, None]
            if bad.any():
                c, k = np.argwhere(bad)[0]
                st = cm.net.station_names[qidx[k]]
                raise SaturationError(
                    f"higher-priority classes use {1 - free[c, k]:.6g} >= 1 of station "
                    f"{st!r}; class {cm.net.class_names[c]!r} would never be served",
                    bottleneck=st,
                    utilization=float(1 - free[c, k]))
        return Q, Rck, X, it, resid, P

    def _marginals(self, P: dict[str, np.ndarray], X: np.ndarray, pt: np.ndarray | None,
                   total: int, G: dict[str, np.ndarray] | None) -> dict[str, np.ndarray]:
        """``p_k(j|n) = (1/alpha(j)) sum_r X_r D_rk p_k(j-1|n-e_r)`` at LD and Conway stations."""
        out = dict(P)
        if pt is not None:
            lam = X[:, None] * self.chain_D[:, self.lidx]                      # (R, Kl)
            pl = np.zeros_like(P["ld"])
            pl[:, 1:] = np.einsum("rk,rkj->kj", lam, pt[..., :-1]) * self.ld_inv
            pl[:, total + 1:] = 0.0
            s = pl[:, 1:].sum(axis=1)
            over = s > 1.0
            pl[over, 1:] /= s[over, None]
            pl[:, 0] = np.where(over, 0.0, 1.0 - s)
            out["ld"] = pl
        if self.conway:
            # Closed form of p_j = (A p_{j-1} + d_{j-1}) / j (j < m),
            # p_B = (A (p_B + p_{m-1}) + d_B) / m and sum = 1, with A = sum_r X_r D_rk the
            # mean number of busy servers and d the Linearizer corrections (as LINE's
            # pfqn_linearizerms; a Jacobi iteration of these relations diverges as A -> m).
            midx = self.midx
            a = X[:, None] * self.chain_D[:, midx]                              # (R, Km)
            A = np.minimum(a.sum(axis=0), self.mm * (1.0 - 1e-9))
            Mx = self.cw_res.shape[1]
            d = np.zeros((midx.size, Mx))
            dB = np.zeros(midx.size)
            if G is not None:
                d = np.einsum("rk,rkj->kj", a, G["multi"])
                dB = np.einsum("rk,rk->k", a, G["busy"])
            pm = np.zeros((midx.size, Mx))
            busy = np.zeros(midx.size)
            for i in range(midx.size):
                m = int(self.mm[i])
                al, be = np.zeros(m), np.zeros(m)
                al[0] = 1.0
                for j in range(1, m):
                    al[j] = A[i] * al[j - 1] / j
                    be[j] = (A[i] * be[j - 1] + d[i, j - 1]) / j
                alB = A[i] * al[m - 1] / (m - A[i])
                beB = (A[i] * be[m - 1] + dB[i] + d[i, m - 1]) / (m - A[i])
                p0 = (1.0 - be[1:].sum() - beB) / (1.0 + al[1:].sum() + alB)
                pm[i, :m] = np.maximum(al * p0 + be, 0.0)
                busy[i] = max(alB * p0 + beB, 0.0)
            out["multi"], out["busy"] = pm, busy
        return out


def _initial_q(cm: Compiled, n: np.ndarray) -> np.ndarray:
    n = np.asarray(n, dtype=float)
    work = cm.E @ cm.D.sum(axis=1) + cm.Z                 # (R,)
    share = cm.D / np.where(work > 0, work, 1.0)[cm.ch][:, None]
    return n[cm.ch][:, None] * share


def _check_common(network: Any, tol: Any, max_iter: Any, on_fail: Any, multiserver: Any,
                  who: str) -> tuple[float, int]:
    if not isinstance(network, ClosedNetwork):
        raise ValueError(f"network must be a ClosedNetwork; got {type(network).__name__}")
    tol_f = float(check_positive("tol", tol))
    mi = int(check_integer("max_iter", max_iter, minimum=1))
    check_choice("on_fail", on_fail, _ON_FAIL)
    check_choice("multiserver", multiserver, _MULTISERVER)
    return tol_f, mi


def _report(on_fail: str, who: str, iterations: int, residual: float, tol: float) -> None:
    report_nonconvergence(on_fail, f"{who} did not converge after {iterations} iterations "
                          f"(residual {residual:.3g} > tol {tol:.3g})",
                          iterations=iterations, residual=residual)


def _prepare(network: ClosedNetwork, multiserver: str) -> tuple[Compiled, Compiled, np.ndarray]:
    """Compiled original, compiled working network (Seidmann-transformed), owners."""
    cm0 = compile_network(network)
    if multiserver == "seidmann" and cm0.multi.any():
        net, owner = seidmann_transform(network)
        return cm0, compile_network(net), owner
    return cm0, cm0, np.zeros(0, dtype=np.int64)


def _finish(cm0: Compiled, cm: Compiled, owner: np.ndarray, X: np.ndarray, Rck: np.ndarray,
            Q: np.ndarray, method: str, converged: bool, iterations: int,
            residual: float) -> MVAResult:
    res = make_result(cm, X, Rck, Q=Q, method=method, converged=converged,
                      iterations=iterations, residual=residual)
    if cm is cm0:
        return res
    return _fold(cm0, res, owner, method)


# ----------------------------------------------------------------------
# public solvers
# ----------------------------------------------------------------------
def schweitzer(network: ClosedNetwork, *, tol: float = 1e-8, max_iter: int = 10_000,
               on_fail: str = "warn", multiserver: str = "seidmann") -> MVAResult:
    r"""Bard-Schweitzer approximate MVA.

    Parameters
    ----------
    network : ClosedNetwork
        Stations of kind ``"queue"``, ``"delay"``, ``"multi"`` or ``"ld"``
        (marginal estimate of the module docstring); chains, priorities and
        ``cs2`` (at ``"queue"`` stations) are supported.
    tol : float
        Stop when ``max |Q_new - Q| / N_r(c) <= tol`` and the chain
        throughputs change by at most ``tol`` relative (default ``1e-8``).
    max_iter : int
        Most substitution sweeps.
    on_fail : {"warn", "raise", "ignore"}
        What to do when ``max_iter`` is reached first.
    multiserver : {"seidmann", "rolia", "conway"}
        Treatment of ``"multi"`` stations (see the module docstring).

    Returns
    -------
    MVAResult
        ``method="schweitzer"`` with ``converged``, ``iterations``,
        ``residual``.

    Notes
    -----
    .. math::

        R_{ck} = D_{ck}\Bigl(1 + \sum_s \tfrac{N_{r(s)} - \delta_{r(c) r(s)}}{N_{r(s)}}
                 Q_{sk}\Bigr),\quad
        X_r = \frac{N_r}{Z_r + \sum_{c\in r,k} R_{ck}},\quad Q_{ck} = X_{r(c)} R_{ck}

    at processor-sharing queues (BKT form with priorities / ``cs2``).

    References
    ----------
    Bard (1979); Schweitzer (1979); Lazowska et al. (1984), section 7.4.2.

    Examples
    --------
    >>> net = ClosedNetwork(demands=[[1.0, 2.0, 0.5], [2.0, 1.0, 0.7]], populations=[5, 5])
    >>> res = schweitzer(net)           # exact: [0.3131, 0.3081]
    >>> res.converged, res.throughput.round(4).tolist()
    (True, [0.3048, 0.3007])
    """
    tol_f, mi = _check_common(network, tol, max_iter, on_fail, multiserver, "schweitzer")
    cm0, cm, owner = _prepare(network, multiserver)
    core = _Core(cm, multiserver)
    n = cm.N.astype(float)
    Q, Rck, X, it, resid, _ = core.solve(n, _initial_q(cm, n), None, tol_f, mi)
    ok = resid <= tol_f
    if not ok:
        _report(on_fail, "schweitzer", it, resid, tol_f)
    name = ("schweitzer" if multiserver == "seidmann" or not cm0.multi.any()
            else f"schweitzer+{multiserver}")
    return _finish(cm0, cm, owner, X, Rck, Q, name, ok, it, resid)


def linearizer(network: ClosedNetwork, *, tol: float = 1e-8, max_iter: int = 10_000,
               on_fail: str = "warn", multiserver: str = "seidmann",
               passes: int | None = None) -> MVAResult:
    r"""Linearizer approximate MVA (Chandy and Neuse).

    Parameters
    ----------
    network : ClosedNetwork
        As for :func:`schweitzer`.
    tol : float
        Tolerance of every core fixed point and of the outer passes.
    max_iter : int
        Most sweeps of any one core solve, and most outer passes.
    on_fail : {"warn", "raise", "ignore"}
        What to do when a limit is reached before ``tol``.
    multiserver : {"seidmann", "rolia", "conway"}
        Treatment of ``"multi"`` stations (``"conway"``: marginal
        probabilities with Linearizer corrections, see :func:`linearizer_ms`).
    passes : int, optional
        Fixed number of outer passes (Chandy and Neuse's rule is 3; the
        first pass, with ``F = 0``, is Bard-Schweitzer).  Default: repeat
        until ``Q(N)`` changes by less than ``tol`` between passes (at most
        ``max_iter`` passes).

    Returns
    -------
    MVAResult
        ``method="linearizer"``; ``iterations`` counts core sweeps over all
        solves; ``residual`` is the larger of the last outer change and the
        last core residual.

    Notes
    -----
    With :math:`F^{(j)}_{sk} = Q_{sk}(N-e_j)/(N-e_j)_{r(s)} - Q_{sk}(N)/N_{r(s)}`,
    the core estimates
    :math:`Q_{sk}(n - e_j) \approx (n-e_j)_{r(s)}\,\bigl(Q_{sk}(n)/n_{r(s)} + F^{(j)}_{sk}\bigr)`
    and is solved at ``N`` and at each ``N - e_j``; ``F`` is updated until
    ``Q(N)`` settles.  Cost per pass: ``R + 1`` core solves.

    References
    ----------
    Chandy and Neuse, CACM 25(2), 1982; Lazowska et al. (1984), section 7.4.3.

    Examples
    --------
    >>> net = ClosedNetwork(demands=[[1.0, 2.0, 0.5], [2.0, 1.0, 0.7]], populations=[5, 5])
    >>> res = linearizer(net)
    >>> res.converged, res.throughput.round(4).tolist()
    (True, [0.3133, 0.3082])
    """
    tol_f, mi = _check_common(network, tol, max_iter, on_fail, multiserver, "linearizer")
    if passes is not None:
        passes = int(check_integer("passes", passes, minimum=1))
    cm0, cm, owner = _prepare(network, multiserver)
    core = _Core(cm, multiserver)
    R = cm.R
    N = cm.N.astype(float)
    chains = [j for j in range(R) if N[j] > 0]
    F = np.zeros((R, cm.C, cm.K))
    nch = N[cm.ch]
    QN = _initial_q(cm, N)
    Qj = {j: _initial_q(cm, N - np.eye(R)[j]) for j in chains}
    PN = core.initial_marginals()
    G: dict[str, np.ndarray] | None = None
    Pj = {j: core.initial_marginals() for j in chains}
    total_it = 0
    core_ok = True
    outer_change = np.inf
    for _ in range(mi if passes is None else passes):
        QN_new, _, _, it, res_c, PN = core.solve(N, QN, F, tol_f, mi, PN, G)
        total_it += it
        core_ok &= res_c <= tol_f
        outer_change = float(np.max(np.abs(QN_new - QN) / np.maximum(nch, 1.0)[:, None]))
        QN = QN_new
        for j in chains:
            nj = N - np.eye(R)[j]
            Qj[j], _, _, it, res_c, Pj[j] = core.solve(nj, Qj[j], F, tol_f, mi, Pj[j], G)
            total_it += it
            core_ok &= res_c <= tol_f
        F_new = np.zeros_like(F)
        for j in chains:
            nj = (N - np.eye(R)[j])[cm.ch]
            with np.errstate(divide="ignore", invalid="ignore"):
                a = np.where(nj[:, None] > 0, Qj[j] / np.where(nj > 0, nj, 1.0)[:, None], 0.0)
                b = np.where(nch[:, None] > 0, QN / np.where(nch > 0, nch, 1.0)[:, None], 0.0)
            F_new[j] = np.where(nj[:, None] > 0, a - b, 0.0)
        F = F_new
        if core.conway:
            # marginal corrections are plain differences (probabilities do not scale with n)
            G = {"multi": np.zeros((R,) + PN["multi"].shape),
                 "busy": np.zeros((R,) + PN["busy"].shape)}
            for j in chains:
                G["multi"][j] = Pj[j]["multi"] - PN["multi"]
                G["busy"][j] = Pj[j]["busy"] - PN["busy"]
        if passes is None and outer_change <= tol_f:
            break
    Q, Rck, X, it, res_c, _ = core.solve(N, QN, F, tol_f, mi, PN, G)
    total_it += it
    core_ok &= res_c <= tol_f
    if passes is not None:
        outer_change = 0.0  # a fixed number of passes is the method, not a tolerance
    residual = max(outer_change, res_c)
    ok = bool(core_ok and outer_change <= tol_f)
    if not ok:
        _report(on_fail, "linearizer", total_it, residual, tol_f)
    name = ("linearizer" if multiserver == "seidmann" or not cm0.multi.any()
            else f"linearizer+{multiserver}")
    return _finish(cm0, cm, owner, X, Rck, Q, name, ok, total_it, residual)


def seidmann(network: ClosedNetwork, *, base: str = "exact", **options: Any) -> MVAResult:
    """Solve with every ``"multi"`` station replaced by Seidmann's queue + delay.

    Parameters
    ----------
    network : ClosedNetwork
        Any network without ``"ld"`` stations (those are left as they are
        when ``base="exact"``).
    base : {"exact", "schweitzer", "linearizer"}
        Solver for the transformed network.
    **options
        Passed to the base solver (e.g. ``tol``).

    Returns
    -------
    MVAResult
        ``method="seidmann+<base>"``; station results folded back onto the
        original stations (residence and queue length of both parts added;
        utilization ``X D / m`` per server).

    Notes
    -----
    An ``m``-server station of demand ``D`` becomes a single server of
    demand ``D/m`` followed by a pure delay ``D (m - 1)/m`` (Seidmann et al.
    1987).  It is exact with one customer and at saturation, and costs no
    more than a load-independent station (``O(N)`` instead of the ``O(N m)``
    marginal probabilities of the exact multi-server recursion).

    Examples
    --------
    >>> net = ClosedNetwork.single_class([2.0, 1.0], population=1, servers=[4, 1])
    >>> seidmann(net).response_time.tolist()   # one customer: no queueing
    [3.0]
    """
    check_choice("base", base, ("exact", "schweitzer", "linearizer"))
    if not isinstance(network, ClosedNetwork):
        raise ValueError(f"network must be a ClosedNetwork; got {type(network).__name__}")
    cm0 = compile_network(network)
    net, owner = seidmann_transform(network)
    if base == "exact":
        from ._validate import check_kwargs
        from .exact import exact_mva
        check_kwargs("seidmann(base='exact')", options, ("max_states",))
        res = exact_mva(net, **options)
    else:
        from ._validate import check_kwargs
        check_kwargs(f"seidmann(base={base!r})", options, ("tol", "max_iter", "on_fail"))
        res = (schweitzer if base == "schweitzer" else linearizer)(net, **options)
    if not owner.size:
        return replace(res, method=f"seidmann+{base}")
    return _fold(cm0, res, owner, f"seidmann+{base}")


def rolia(network: ClosedNetwork, *, base: str = "schweitzer", tol: float = 1e-8,
          max_iter: int = 10_000, on_fail: str = "warn") -> MVAResult:
    """Approximate MVA with Rolia's multi-server residence time.

    Parameters
    ----------
    network : ClosedNetwork
        Stations ``"queue"``, ``"delay"``, ``"multi"``.
    base : {"schweitzer", "linearizer"}
        The iterative method carrying the multi-server formula.
    tol, max_iter, on_fail
        As for :func:`schweitzer`.

    Returns
    -------
    MVAResult
        ``method="rolia"``.

    Notes
    -----
    At an ``m``-server station, per chain cycle,

    .. math::

        R_{ck} = D_{ck}\\Bigl(1 + \\rho_k^{m_k}\\,\\frac{\\tilde Q_k}{m_k}\\Bigr),
        \\qquad \\rho_k = \\min\\Bigl(1, \\sum_s X_s D_{sk} / m_k\\Bigr)

    where :math:`\\rho^m` stands for the probability that all ``m``
    servers are busy and :math:`\\tilde Q_k` is the queue an arrival sees
    (Bard-Schweitzer or Linearizer estimate).  This is the processor-sharing
    form of the approximation of Rolia and Sevcik (1995) implemented by LQNS.

    References
    ----------
    J. A. Rolia, K. C. Sevcik, "The Method of Layers", IEEE TSE 21(8), 1995.

    Examples
    --------
    >>> net = ClosedNetwork.single_class([2.0, 1.0], population=1, servers=[4, 1])
    >>> rolia(net).response_time.round(10).tolist()
    [3.0]
    """
    check_choice("base", base, ("schweitzer", "linearizer"))
    fn = schweitzer if base == "schweitzer" else linearizer
    res = fn(network, tol=tol, max_iter=max_iter, on_fail=on_fail, multiserver="rolia")
    return replace(res, method="rolia" if base == "schweitzer" else "rolia+linearizer")


def linearizer_ms(network: ClosedNetwork, *, tol: float = 1e-8, max_iter: int = 10_000,
                  on_fail: str = "warn", passes: int | None = None) -> MVAResult:
    r"""Multi-server Linearizer (Conway 1989; de Souza e Silva and Muntz 1990).

    Parameters
    ----------
    network : ClosedNetwork
        Stations ``"queue"``, ``"delay"``, ``"multi"``, ``"ld"``.
    tol, max_iter, on_fail, passes
        As for :func:`linearizer`.

    Returns
    -------
    MVAResult
        ``method="linearizer-ms"``.

    Notes
    -----
    At an ``m``-server station, for a chain-``r`` arrival at population ``n``,

    .. math::

        R_{ck} = \frac{D_{ck}}{m}\Bigl(1 + \tilde Q^{(r)}_k
                 + \sum_{j=0}^{m-2} (m-1-j)\,\bigl(p_k(j\mid n) + G^{(r)}_{kj}\bigr)\Bigr),

    with :math:`\tilde Q` the Linearizer estimate of :math:`Q_k(n - e_r)` and
    :math:`G^{(r)} = p_k(\cdot\mid N - e_r) - p_k(\cdot\mid N)` the marginal
    corrections, updated between outer passes like Linearizer's ``F``.  The
    marginals at ``n`` solve, in closed form,
    :math:`p_j = (A p_{j-1} + d_{j-1})/j` for ``1 <= j < m``,
    :math:`p_B = (A(p_B + p_{m-1}) + d_B)/m` and :math:`\sum_j p_j + p_B = 1`
    (``p_B``: all servers busy; :math:`A = \sum_r X_r D_{rk}`;
    :math:`d = \sum_r X_r D_{rk} G^{(r)}`).  Exact for one customer and for
    one server.  On 128 Sobol-random networks (1-2 chains, up to 8 customers
    each, 2-5 servers) the throughput error against :func:`mva.exact_mva` was
    mean 0.4%, p95 1.3%, max 2.4% (``benchmarks/accuracy_approx_ld_ms.py``),
    against 3.1% / 7.8% / 10.7% with Seidmann's transformation.

    References
    ----------
    A. E. Conway, "Fast approximate solution of queueing networks with
    multi-server chain-dependent FCFS queues", 1989; E. de Souza e Silva and
    R. R. Muntz, IEEE Trans. Computers 39(6), 1990; LINE ``pfqn_linearizerms``
    (G. Casale et al.).

    Examples
    --------
    >>> net = ClosedNetwork.single_class([3.0, 1.0, 0.5], population=8, servers=[3, 1, 1],
    ...                                  think_time=4.0)
    >>> round(float(linearizer_ms(net).throughput[0]), 4)   # exact 0.7310, LINE 0.7318
    0.7318
    >>> linearizer_ms(net).method
    'linearizer-ms'
    """
    res = linearizer(network, tol=tol, max_iter=max_iter, on_fail=on_fail, multiserver="conway",
                     passes=passes)
    return replace(res, method="linearizer-ms")
