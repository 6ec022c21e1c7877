"""Internal: a :class:`~mva.network.ClosedNetwork` compiled to the arrays the solvers use."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .network import ClosedNetwork
from .priority import level_structure
from .results import MVAResult

__all__ = ["Compiled", "compile_network", "make_result"]


@dataclass
class Compiled:
    net: ClosedNetwork
    C: int
    K: int
    R: int
    D: np.ndarray        # (C, K) demands
    V: np.ndarray        # (C, K) visits
    S: np.ndarray        # (C, K) per-visit service times
    ch: np.ndarray       # (C,) chain of each class
    N: np.ndarray        # (R,) populations (int)
    Z: np.ndarray        # (R,) think times
    E: np.ndarray        # (R, C) chain-class incidence
    queue: np.ndarray    # (K,) bool
    delay: np.ndarray
    multi: np.ndarray
    ld: np.ndarray
    m: np.ndarray        # (K,) servers
    fcfs: np.ndarray     # (K,) bool, FCFS queue stations
    cterm: np.ndarray    # (K,) (cs2 - 1)/2 at FCFS queue stations, else 0
    lev: np.ndarray      # (C,) priority level index
    L: int
    onehot: np.ndarray   # (C, L)
    simple: bool         # queue residence is D (1 + Q_k(seen))
    cap: np.ndarray      # (K,) utilization divisor


def compile_network(net: ClosedNetwork) -> Compiled:
    D = net.demands
    C, K = D.shape
    R = net.n_chains
    V = net.visit_matrix
    S = net.service_times
    kinds = np.array(net.kinds)
    queue = kinds == "queue"
    delay = kinds == "delay"
    multi = kinds == "multi"
    ld = kinds == "ld"
    fcfs = queue & (np.array(net.disciplines) == "fcfs")
    cterm = np.where(fcfs, (net.cs2 - 1.0) / 2.0, 0.0)
    lev, L, onehot = level_structure(net.priorities, C)
    simple = L == 1 and not np.any(cterm != 0.0)
    if simple and fcfs.any():
        # FCFS reduces to D (1 + Q) only when the visiting classes share a service time
        for k in np.nonzero(fcfs)[0]:
            s = S[V[:, k] > 0, k]
            if s.size and not np.allclose(s, s[0], rtol=1e-12, atol=0.0):
                simple = False
                break
    E = np.zeros((R, C))
    E[net.chains, np.arange(C)] = 1.0
    cap = np.ones(K)
    cap[multi] = net.servers[multi]
    for k in np.nonzero(ld)[0]:
        cap[k] = float(np.max(net.rates[k]))
    return Compiled(net=net, C=C, K=K, R=R, D=D, V=V, S=S, ch=net.chains, N=net.populations,
                    Z=net.think_times, E=E, queue=queue, delay=delay, multi=multi, ld=ld,
                    m=net.servers, fcfs=fcfs, cterm=cterm, lev=lev, L=L, onehot=onehot,
                    simple=bool(simple), cap=cap)


def make_result(cm: Compiled, X_chain: np.ndarray, Rck: np.ndarray, *, method: str,
                converged: bool = True, iterations: int = 0, residual: float = 0.0,
                Q: np.ndarray | None = None) -> MVAResult:
    """Assemble an :class:`MVAResult` from chain throughputs and residence times."""
    X_chain = np.asarray(X_chain, dtype=float)
    X = X_chain[cm.ch]
    Rck = np.asarray(Rck, dtype=float)
    if Q is None:
        Q = X[:, None] * Rck
    U = X[:, None] * cm.D / cm.cap
    return MVAResult(throughput=X, response_time=Rck.sum(axis=1), residence_time=Rck,
                     queue_length=Q, utilization=U, chain_throughput=X_chain, method=method,
                     converged=bool(converged), iterations=int(iterations),
                     residual=float(residual),
                     station_names=cm.net.station_names, class_names=cm.net.class_names)


def cap_utilization(Rck: np.ndarray, n: np.ndarray, Z: np.ndarray, E: np.ndarray,
                    chain_D: np.ndarray, qidx: np.ndarray) -> np.ndarray:
    """Stretch residence times so that no single-server station exceeds utilization 1.

    The FCFS residual-life correction (``cs2 < 1``) and the BKT approximation can
    overshoot at a saturated station -- e.g. when customers return to it at once,
    the job in service has just started rather than being half done.  For every
    population vector (``Rck`` (B, C, K), ``n`` (B, R)) and station ``k`` in
    ``qidx`` with ``U_k = sum_r X_r D_rk > 1``, the residence times of all classes
    at ``k`` are multiplied by the factor ``f >= 1`` that makes ``U_k = 1``
    (Newton on a convex decreasing function, started left of the root).
    Returns ``Rck`` (modified in place when needed).
    """
    if qidx.size == 0:
        return Rck
    for _ in range(4):  # a few sweeps settle interacting stations
        Bk = np.einsum("rc,bck->brk", E, Rck)                   # chain residence per station
        cyc = Z + Bk.sum(axis=2)                                # (B, R)
        with np.errstate(divide="ignore", invalid="ignore"):
            X = np.where(n > 0, n / np.where(cyc > 0, cyc, 1.0), 0.0)
        U = X @ chain_D[:, qidx]                                # (B, Kq)
        over = U > 1.0 + 1e-12
        if not over.any():
            break
        # Newton for every overloaded (state, station) pair at once; a pair stops
        # (keeps its f) when g <= 1e-15 or g' = 0, as a scalar loop per pair would
        b, i = np.nonzero(over)
        k = qidx[i]
        w = chain_D[:, k].T * n[b]                              # (P, R)
        c0, bb = cyc[b], Bk[b, :, k]                            # (P, R)
        use = w > 0
        if w.shape[1] < 8 and b.size <= _SCALAR_PAIRS:
            # few pairs, few chains: the same Newton in Python floats (bit for bit: the
            # same operations in the same order; NumPy sums fewer than 8 terms left to right)
            fs = [_newton_scalar(*x) for x in zip(w.tolist(), c0.tolist(), bb.tolist(),
                                                  use.tolist())]
            if None not in fs:
                Rck[b, :, k] *= np.array(fs)[:, None]
                continue
        f = np.ones(b.size)
        active = np.ones(b.size, dtype=bool)
        for _ in range(60):
            den = np.where(use, c0 + (f - 1.0)[:, None] * bb, 1.0)
            t = np.where(use, w / den, 0.0)
            g = t.sum(axis=1) - 1.0
            dg = -np.where(use, t * (bb / den), 0.0).sum(axis=1)
            active &= ~((g <= 1e-15) | (dg == 0.0))
            if not active.any():
                break
            f = np.where(active, f - g / np.where(active, dg, 1.0), f)
        Rck[b, :, k] *= f[:, None]
    return Rck


#: at most this many overloaded (state, station) pairs take :func:`_newton_scalar`
_SCALAR_PAIRS = 32


def _newton_scalar(w: list[float], c0: list[float], bb: list[float],
                   use: list[bool]) -> float | None:
    """The factor ``f`` of :func:`cap_utilization` for one overloaded pair, in floats.

    Newton on ``g(f) = sum_r w_r / (c0_r + (f - 1) bb_r) - 1`` from ``f = 1`` (chains
    with ``w_r = 0`` add 0), stopped at ``g <= 1e-15`` or ``g' = 0`` or after 60 steps:
    the vectorised loop's operations for one row (fewer than 8 chains, summed left to
    right as NumPy sums them); ``None`` at a zero denominator (left to the vectorised loop).
    """
    f = 1.0
    for _ in range(60):
        g = 0.0
        dg = 0.0
        for wr, cr, br, ur in zip(w, c0, bb, use):
            if ur:
                den = cr + (f - 1.0) * br
                if den == 0.0:
                    return None
                t = wr / den
                g += t
                dg += t * (br / den)
            else:
                g += 0.0
                dg += 0.0
        g = g - 1.0
        dg = -dg
        if g <= 1e-15 or dg == 0.0:
            break
        f = f - g / dg
    return f
