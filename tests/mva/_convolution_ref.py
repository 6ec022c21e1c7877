"""Independent reference for product-form closed networks: the convolution algorithm in mpmath.

The normalising constant ``G(n)`` of a closed product-form network is the
multi-dimensional convolution of the station factors (Buzen 1973; Reiser and
Kobayashi 1975; Bolch et al., *Queueing Networks and Markov Chains*, 2006,
section 8.1).  Every term is positive, so with 60 significant digits the
results below are exact to far beyond double precision: they are the
reference the double-precision MVA is checked against.

Chain level only: ``net.chain_demands`` (R, K), ``net.think_times`` (R,).
Returns chain throughputs ``X`` (R,) and chain queue lengths ``Q`` (R, K) as
floats, rounded once at the end.
"""

from __future__ import annotations

import itertools

import mpmath
import numpy as np

from mva.network import ClosedNetwork

__all__ = ["convolution_reference"]

DIGITS = 60


def _alpha(net: ClosedNetwork, k: int, j: int) -> mpmath.mpf:
    kind = net.kinds[k]
    if kind == "multi":
        return mpmath.mpf(min(j, int(net.servers[k])))
    if kind == "ld":
        a = net.rates[k]
        return mpmath.mpf(float(a[min(j, a.size) - 1]))
    return mpmath.mpf(1)


def convolution_reference(net: ClosedNetwork) -> tuple[np.ndarray, np.ndarray]:
    """Chain throughputs and chain-by-station queue lengths of ``net`` (60-digit convolution)."""
    with mpmath.workdps(DIGITS):
        return _solve(net)


def _solve(net: ClosedNetwork):
    Dr = [[mpmath.mpf(float(x)) for x in row] for row in net.chain_demands]
    R, K = len(Dr), len(Dr[0])
    N = [int(x) for x in net.populations]
    Z = [mpmath.mpf(float(z)) for z in net.think_times]
    radix = [n + 1 for n in N]
    points = list(itertools.product(*[range(x) for x in radix]))
    index = {p: i for i, p in enumerate(points)}
    fact = [mpmath.factorial(i) for i in range(sum(N) + 1)]

    def minus(p, r):
        q = list(p)
        q[r] -= 1
        return index[tuple(q)]

    def conv(g, f):
        """(g * f)(n) = sum_{m <= n} f(m) g(n - m) over the lattice."""
        out = [mpmath.mpf(0)] * len(points)
        for i, n in enumerate(points):
            s = mpmath.mpf(0)
            for m in itertools.product(*[range(x + 1) for x in n]):
                fm = f[index[m]]
                if fm:
                    s += fm * g[index[tuple(a - b for a, b in zip(n, m))]]
            out[i] = s
        return out

    def add_queue(g, k):
        """Convolution with a load-independent queue: G'(n) = G(n) + sum_r D_rk G'(n - e_r)."""
        out = list(g)
        for i, n in enumerate(points):
            for r in range(R):
                if n[r] > 0 and Dr[r][k]:
                    out[i] += Dr[r][k] * out[minus(n, r)]
        return out

    def delay_factor(rates):
        f = []
        for n in points:
            v = mpmath.mpf(1)
            for r in range(R):
                v *= rates[r] ** n[r] / fact[n[r]]
            f.append(v)
        return f

    def ld_factor(k):
        f = []
        for n in points:
            tot = sum(n)
            v = fact[tot]
            for r in range(R):
                v *= Dr[r][k] ** n[r] / fact[n[r]]
            for j in range(1, tot + 1):
                v /= _alpha(net, k, j)
            f.append(v)
        return f

    delay_rate = [Z[r] + sum(Dr[r][k] for k in range(K) if net.kinds[k] == "delay")
                  for r in range(R)]
    base = delay_factor(delay_rate)
    for k in range(K):
        if net.kinds[k] == "queue":
            base = add_queue(base, k)
    ldk = [k for k in range(K) if net.kinds[k] in ("multi", "ld")]
    factors = {k: ld_factor(k) for k in ldk}

    def without(skip):
        g = base
        for k in ldk:
            if k != skip:
                g = conv(g, factors[k])
        return g

    G = without(None)
    top = index[tuple(N)]
    GN = G[top]
    X = [G[minus(N, r)] / GN if N[r] > 0 else mpmath.mpf(0) for r in range(R)]
    Q = [[mpmath.mpf(0)] * K for _ in range(R)]
    for k in range(K):
        kind = net.kinds[k]
        if kind == "delay":
            for r in range(R):
                Q[r][k] = X[r] * Dr[r][k]
        elif kind == "queue":
            Gp = add_queue(G, k)
            for r in range(R):
                if N[r] > 0:
                    Q[r][k] = Dr[r][k] * Gp[minus(N, r)] / GN
        else:
            Gm = without(k)
            f = factors[k]
            for m in itertools.product(*[range(x + 1) for x in N]):
                w = f[index[m]] * Gm[index[tuple(a - b for a, b in zip(N, m))]] / GN
                for r in range(R):
                    Q[r][k] += m[r] * w
    Xf = np.array([float(x) for x in X])
    Qf = np.array([[float(q) for q in row] for row in Q])
    return Xf, Qf
