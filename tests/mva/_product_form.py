"""Test helpers: random small product-form networks and a brute-force
enumeration of their stationary distribution in mpmath (40 digits).

The enumeration walks every placement of every chain's customers over the
stations and multiplies the BCMP station factors written out from their
definition, so it shares no code with :mod:`mva.convolution` or
:mod:`mva.exact`.
"""

from __future__ import annotations

import itertools
import math

import mpmath
import numpy as np

from mva.network import ClosedNetwork


def random_network(rng: np.random.Generator, *, max_chains: int = 2, max_stations: int = 3,
                   max_population: int = 3, kinds=("queue", "delay", "multi", "ld"),
                   classes_per_chain: int = 1) -> ClosedNetwork:
    """A random product-form network small enough to enumerate."""
    R = int(rng.integers(1, max_chains + 1))
    K = int(rng.integers(1, max_stations + 1))
    C = R * classes_per_chain
    D = rng.uniform(0.05, 3.0, size=(C, K)) * (rng.random((C, K)) < 0.8)
    for c in range(C):
        if D[c].max() == 0:
            D[c, rng.integers(0, K)] = rng.uniform(0.05, 3.0)
    kd = [str(rng.choice(kinds)) for _ in range(K)]
    servers = [int(rng.integers(2, 4)) if k == "multi" else 1 for k in kd]
    rates = [rng.uniform(0.3, 3.0, size=int(rng.integers(1, 5))).tolist() if k == "ld" else None
             for k in kd]
    pops = [int(rng.integers(0, max_population + 1)) for _ in range(R)]
    if max(pops) == 0:
        pops[0] = 1
    Z = [float(rng.uniform(0.0, 5.0)) if rng.random() < 0.5 else 0.0 for _ in range(R)]
    chains = np.repeat(np.arange(R), classes_per_chain)
    return ClosedNetwork(demands=D, populations=pops, think_times=Z, kinds=kd, servers=servers,
                         rates=rates, chains=chains)


def _compositions(n: int, k: int):
    """All ways to put n identical customers into k slots."""
    for cut in itertools.combinations(range(n + k - 1), k - 1):
        prev = -1
        out = []
        for c in cut + (n + k - 1,):
            out.append(c - prev - 1)
            prev = c
        yield tuple(out)


def _alpha(net: ClosedNetwork, k: int, j: int):
    kd = net.kinds[k]
    if kd == "multi":
        return mpmath.mpf(min(j, int(net.servers[k])))
    if kd == "ld":
        a = list(net.rates[k])
        return mpmath.mpf(float(a[min(j, len(a)) - 1]))
    return mpmath.mpf(1)


def _open_sums(U: float, top: int, terms: int = 400):
    """``A0[m] = sum_t binom(m+t, t) U^t`` and ``A1[m] = sum_t t binom(m+t, t) U^t``
    summed term by term (no closed form), for m = 0..top."""
    A0, A1 = [], []
    u = mpmath.mpf(U)
    for m in range(top + 1):
        s0 = s1 = mpmath.mpf(0)
        term = mpmath.mpf(1)                      # binom(m + t, t) U^t at t = 0
        for t in range(terms):
            s0 += term
            s1 += t * term
            term = term * (m + t + 1) / (t + 1) * u
        A0.append(s0)
        A1.append(s1)
    return A0, A1


def enumerate_network(net: ClosedNetwork, populations=None, open_load=None):
    """(G, mean chain queue lengths (R, K), marginals (K, |N|+1)) by brute force.

    With ``open_load`` (U^o_k per station), open customers are added to every
    ``"queue"`` station by summing the product form over their number there
    (term by term); the marginals are then replaced by the mean number of open
    customers per station, shape (K,).
    """
    N = list(net.populations) if populations is None else list(populations)
    R, K = len(N), net.n_stations
    Dch = np.zeros((R, K))
    for c in range(net.n_classes):
        Dch[net.chains[c]] += net.demands[c]
    Z = net.think_times
    with mpmath.workdps(40):
        D = [[mpmath.mpf(float(Dch[r, k])) for k in range(K)] for r in range(R)]
        Zm = [mpmath.mpf(float(z)) for z in Z]
        G = mpmath.mpf(0)
        Q = [[mpmath.mpf(0)] * K for _ in range(R)]
        top = int(sum(N))
        marg = [[mpmath.mpf(0)] * (top + 1) for _ in range(K)]
        per_chain = [list(_compositions(int(N[r]), K + 1)) for r in range(R)]  # slot K = think
        sums = None
        if open_load is not None:
            sums = [_open_sums(float(open_load[k]), top) if net.kinds[k] == "queue" else None
                    for k in range(K)]
            Eo = [mpmath.mpf(0)] * K
        for combo in itertools.product(*per_chain):
            w = mpmath.mpf(1)
            for k in range(K):
                nk = [combo[r][k] for r in range(R)]
                t = sum(nk)
                f = mpmath.mpf(1)
                for r in range(R):
                    if nk[r]:
                        f *= D[r][k] ** nk[r] / math.factorial(nk[r])
                if net.kinds[k] != "delay":
                    f *= math.factorial(t)
                    for j in range(1, t + 1):
                        f /= _alpha(net, k, j)
                if sums is not None and sums[k] is not None:
                    f *= sums[k][0][t]
                w *= f
            for r in range(R):
                nz = combo[r][K]
                if nz:
                    w *= Zm[r] ** nz / math.factorial(nz)
            G += w
            for k in range(K):
                t = 0
                for r in range(R):
                    Q[r][k] += combo[r][k] * w
                    t += combo[r][k]
                marg[k][t] += w
                if sums is not None and sums[k] is not None:
                    Eo[k] += w * sums[k][1][t] / sums[k][0][t]
        if sums is not None:
            Qf = np.array([[float(Q[r][k] / G) for k in range(K)] for r in range(R)])
            return G, Qf, np.array([float(e / G) for e in Eo])
        Qf = np.array([[float(Q[r][k] / G) for k in range(K)] for r in range(R)])
        Pf = np.array([[float(m / G) for m in row] for row in marg])
        return G, Qf, Pf


def throughputs(net: ClosedNetwork, open_load=None) -> np.ndarray:
    """Chain throughputs ``G(N - e_r) / G(N)`` by two enumerations."""
    G, _, _ = enumerate_network(net, open_load=open_load)
    X = np.zeros(net.n_chains)
    for r in range(net.n_chains):
        if net.populations[r] > 0:
            n = list(net.populations)
            n[r] -= 1
            Gm, _, _ = enumerate_network(net, n, open_load=open_load)
            with mpmath.workdps(40):
                X[r] = float(Gm / G)
    return X
