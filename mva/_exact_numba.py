"""Internal: numba-compiled kernels of the exact MVA recursions (see :mod:`mva.exact`).

Each kernel is a line-by-line transcription of a NumPy reference in
:mod:`mva.exact` (``_exact_single`` and ``_pf_reference``); the tests check
that both agree to 1e-12 on random networks.  Kernels are compiled with
``cache=True``: the first call in a fresh environment compiles (seconds),
later processes load the cached machine code.  Importing this module imports
numba (about 0.2-0.4 s); :mod:`mva.exact` does so only when a problem is
large enough to pay for it or numba is already loaded.
"""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["single_kernel", "batch_kernel", "li_kernel", "pf_kernel"]


@njit(cache=True, nogil=True, error_model="numpy")
def _li(D, Z, isq, N):  # pragma: no cover - compiled
    """Multi-chain lattice, queue and delay stations only (``isq[k]``: 1 queue, 0 delay).

    Population vectors are visited in mixed-radix order (last chain fastest);
    ``n - e_r`` lies ``strides[r]`` vectors back, so a ring buffer of
    ``strides[0] + 1`` rows holds every predecessor.
    """
    R, K = D.shape
    strides = np.ones(R, dtype=np.int64)
    for r in range(R - 2, -1, -1):
        strides[r] = strides[r + 1] * (N[r + 1] + 1)
    T = strides[0] * (N[0] + 1)
    W = strides[0] + 1
    Q = np.zeros((W, K))
    n = np.zeros(R, dtype=np.int64)
    Xf = np.zeros(R)
    phif = np.zeros((R, K))
    cur = 0
    for idx in range(1, T):
        # advance the mixed-radix counter
        r = R - 1
        while n[r] == N[r]:
            n[r] = 0
            r -= 1
        n[r] += 1
        cur += 1
        if cur == W:
            cur = 0
        for k in range(K):
            Q[cur, k] = 0.0
        for r in range(R):
            if n[r] == 0:
                continue
            prev = cur - strides[r]
            if prev < 0:
                prev += W
            c = Z[r]
            for k in range(K):
                c += D[r, k] * (1.0 + isq[k] * Q[prev, k])
            x = n[r] / c
            for k in range(K):
                Q[cur, k] += x * D[r, k] * (1.0 + isq[k] * Q[prev, k])
            if idx == T - 1:
                Xf[r] = x
                for k in range(K):
                    phif[r, k] = 1.0 + isq[k] * Q[prev, k]
    return Xf, phif


@njit(cache=True, nogil=True, error_model="numpy", fastmath={"reassoc", "contract"})
def _single_plain(Dq, Zt, N):  # pragma: no cover - compiled
    """One class, queue stations ``Dq`` (no residual-life term), total delay ``Zt``.

    ``reassoc`` lets the compiler vectorise the sum over the stations (the
    result then differs from the interpreted loop in the last bits only).
    """
    K = Dq.shape[0]
    Q = np.zeros(K)
    Rq = Dq.copy()
    X = 0.0
    for n in range(1, N + 1):
        s = 0.0
        for k in range(K):
            r = Dq[k] + Dq[k] * Q[k]
            Rq[k] = r
            s += r
        X = n / (Zt + s)
        for k in range(K):
            Q[k] = X * Rq[k]
    return X, Rq


@njit(cache=True, nogil=True, error_model="numpy")
def _single(Dq, Zt, corr, N):  # pragma: no cover - compiled
    """One class, queue stations ``Dq``, total delay ``Zt``; see ``mva.exact._exact_single``."""
    K = Dq.shape[0]
    Q = np.zeros(K)
    Rq = Dq.copy()
    X = 0.0
    kmax = 0
    for k in range(K):
        if Dq[k] > Dq[kmax]:
            kmax = k
    for n in range(1, N + 1):
        s = 0.0
        for k in range(K):
            r = Dq[k] * (1.0 + Q[k]) + corr[k] * X
            Rq[k] = r
            s += r
        X = n / (Zt + s)
        if X * Dq[kmax] > 1.0:
            X = 1.0 / Dq[kmax]
            Rq[kmax] = n / X - Zt - (s - Rq[kmax])
        for k in range(K):
            Q[k] = X * Rq[k]
    return X, Rq


def single_kernel(Dq: np.ndarray, Zt: float, corr: np.ndarray, N: int) -> tuple[float, np.ndarray]:
    Dq = np.ascontiguousarray(Dq, dtype=np.float64)
    if not corr.any():
        X, Rq = _single_plain(Dq, float(Zt), int(N))
    else:
        X, Rq = _single(Dq, float(Zt), np.ascontiguousarray(corr, dtype=np.float64), int(N))
    return float(X), Rq


@njit(cache=True, nogil=True, error_model="numpy")
def _batch(DT, Z, N, X, RT):  # pragma: no cover - compiled
    """Many single-class networks of queue stations: column ``b`` of ``DT`` (K, B) is one network.

    The population loop is outermost and the networks innermost, so that the
    independent recursions of neighbouring networks overlap in the CPU
    instead of each waiting on its own division.
    """
    K, B = DT.shape
    Q = np.zeros((K, B))
    Nmax = 0
    for b in range(B):
        X[b] = 0.0
        if N[b] > Nmax:
            Nmax = N[b]
    for n in range(1, Nmax + 1):
        for b in range(B):
            if N[b] >= n:
                s = Z[b]
                for k in range(K):
                    s += DT[k, b] * (1.0 + Q[k, b])
                x = n / s
                X[b] = x
                for k in range(K):
                    Q[k, b] = x * DT[k, b] * (1.0 + Q[k, b])
    for b in range(B):
        for k in range(K):
            RT[k, b] = Q[k, b] / X[b] if N[b] > 0 else DT[k, b]


def batch_kernel(D: np.ndarray, Z: np.ndarray, N: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    X = np.empty(D.shape[0])
    RT = np.empty((D.shape[1], D.shape[0]))
    _batch(np.ascontiguousarray(D.T), Z, N, X, RT)
    return X, RT.T


@njit(cache=True, nogil=True, error_model="numpy")
def _pf(Da, Z, kind, ldk, sup, dead, J, c1, wres, inv_alpha, N):  # pragma: no cover
    """Product-form lattice recursion with complement ratios; see ``mva.exact._pf_reference``.

    Same ring buffer over the mixed-radix order as :func:`_li`, with a
    leading axis over the ``A`` complement subsets.
    """
    A, R, K = Da.shape
    L = ldk.shape[0]
    Jmax = wres.shape[1]
    strides = np.ones(R, dtype=np.int64)
    for r in range(R - 2, -1, -1):
        strides[r] = strides[r + 1] * (N[r + 1] + 1)
    T = strides[0] * (N[0] + 1)
    W = strides[0] + 1
    Q = np.zeros((W, A, K))
    P = np.zeros((W, A, L, Jmax))
    for a in range(A):
        for i in range(L):
            P[0, a, i, 0] = 1.0
    Xs = np.zeros((A, R))
    cyc = np.zeros((A, R))
    phi = np.empty(K)
    Xf = np.zeros(R)
    phif = np.zeros((R, K))
    dead_any = np.zeros(A, dtype=np.bool_)
    n = np.zeros(R, dtype=np.int64)
    cur = 0
    lv = 0
    for idx in range(1, T):
        r = R - 1
        while n[r] == N[r]:
            lv -= n[r]
            n[r] = 0
            r -= 1
        n[r] += 1
        lv += 1
        cur += 1
        if cur == W:
            cur = 0
        jtop = min(Jmax, lv + 1)            # p(j | n) is zero for j > |n|
        for a in range(A):
            for k in range(K):
                Q[cur, a, k] = 0.0
            for i in range(L):
                for j in range(Jmax):
                    P[cur, a, i, j] = 0.0
            for r in range(R):
                if n[r] == 0:
                    continue
                prev = cur - strides[r]
                if prev < 0:
                    prev += W
                for k in range(K):
                    kd = kind[k]
                    if kd == 0:
                        phi[k] = 1.0
                    elif kd == 1:
                        phi[k] = 1.0 + Q[prev, a, k]
                for i in range(L):
                    k = ldk[i]
                    f = c1[i] * (1.0 + Q[prev, a, k])
                    for j in range(min(J[i], lv)):
                        f += wres[i, j] * P[prev, a, i, j]
                    phi[k] = f
                c = Z[r]
                for k in range(K):
                    c += Da[a, r, k] * phi[k]
                x = n[r] / c
                Xs[a, r] = x
                cyc[a, r] = c
                for k in range(K):
                    Q[cur, a, k] += x * Da[a, r, k] * phi[k]
                for i in range(L):
                    fl = x * Da[a, r, ldk[i]]
                    if fl != 0.0:
                        for j in range(1, min(J[i], jtop)):
                            P[cur, a, i, j] += fl * P[prev, a, i, j - 1]
                if idx == T - 1 and a == 0:
                    Xf[r] = x
                    for k in range(K):
                        phif[r, k] = phi[k]
        if L == 0:
            continue
        # p_k(0|n) = p_k(0|n - e_r0) X_r0(n) / X_r0^{-k}(n), r0 the first chain with n_r0 > 0
        r0 = 0
        while n[r0] == 0:
            r0 += 1
        prev0 = cur - strides[r0]
        if prev0 < 0:
            prev0 += W
        for a in range(A):
            d = False
            for r in range(R):
                if dead[a, r] and n[r] > 0:
                    d = True
            dead_any[a] = d
        for a in range(A):
            for i in range(L):
                for j in range(1, min(J[i], jtop)):
                    P[cur, a, i, j] *= inv_alpha[i, j]
                if (a >> i) & 1:
                    P[cur, a, i, 0] = 1.0
                else:
                    s = sup[a, i]
                    if dead_any[s]:
                        P[cur, a, i, 0] = 0.0
                    else:
                        P[cur, a, i, 0] = P[prev0, a, i, 0] * Xs[a, r0] * cyc[s, r0] / n[r0]
    return Xf, phif


def li_kernel(Dr: np.ndarray, Z: np.ndarray, isq: np.ndarray,
              N: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Multi-chain queue/delay recursion; chains reordered by decreasing population."""
    if N.size > 1 and N[0] < N.max():
        perm = np.argsort(-N, kind="stable")
        Xp, phip = _li(np.ascontiguousarray(Dr[perm], dtype=np.float64),
                       np.ascontiguousarray(Z[perm], dtype=np.float64), isq,
                       np.ascontiguousarray(N[perm]))
        X = np.empty_like(Xp)
        phi = np.empty_like(phip)
        X[perm] = Xp
        phi[perm] = phip
        return X, phi
    return _li(np.ascontiguousarray(Dr, dtype=np.float64),
               np.ascontiguousarray(Z, dtype=np.float64),
               isq, np.ascontiguousarray(N, dtype=np.int64))


def pf_kernel(pf) -> tuple[np.ndarray, np.ndarray]:
    """Run the compiled product-form recursion on the arrays of an ``mva.exact._PF``.

    Chains are reordered by decreasing population so that the ring buffer
    (``prod_{r >= 1} (N_r + 1) + 1`` rows) is as small as possible.
    """
    perm = np.argsort(-pf.N, kind="stable")
    N = np.ascontiguousarray(pf.N[perm])
    if pf.L == 0:
        return li_kernel(pf.Dr, pf.Z, (pf.kind == 1).astype(np.float64), pf.N)
    else:
        Xp, phip = _pf(np.ascontiguousarray(pf.Da[:, perm]), np.ascontiguousarray(pf.Z[perm]),
                       pf.kind, pf.ldk, pf.sup, np.ascontiguousarray(pf.dead[:, perm]), pf.J,
                       pf.c1, pf.wres, pf.inv_alpha, N)
    X = np.empty_like(Xp)
    phi = np.empty_like(phip)
    X[perm] = Xp
    phi[perm] = phip
    return X, phi
