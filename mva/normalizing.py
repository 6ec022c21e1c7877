r"""Normalizing constants and marginal queue-length probabilities (convolution).

A closed product-form (BCMP) network with chain populations ``N`` has the
stationary distribution

.. math::

    P(n_1, \dots, n_K) = \frac{1}{G(N)} \prod_{k} F_k(n_k), \qquad
    \sum_k n_k = N,

where ``n_k`` is the vector of chain populations at station ``k`` and, with
the chain demands ``D_rk`` (summed over the classes of chain ``r``) and
``|n| = sum_r n_r``,

.. math::

    F_k(n) = |n|!\, \prod_r \frac{D_{rk}^{n_r}}{n_r!}\;
             \prod_{j=1}^{|n|} \frac{1}{\alpha_k(j)},

with ``alpha_k(j) = 1`` at a ``"queue"`` station, ``min(j, m_k)`` at a
``"multi"`` station, the ``rates`` at an ``"ld"`` station; a ``"delay"``
station (and each chain's think time, a delay visited by that chain only)
has ``F_k(n) = prod_r D_rk^{n_r} / n_r!``.  The normalizing constant
``G(n)`` over every ``n <= N`` is the convolution of the ``F_k`` over the
population lattice; for a load-independent queue it is Buzen's recursion

.. math::

    G_k(n) = G_{k-1}(n) + \sum_r D_{rk}\, G_k(n - e_r).

From it (Buzen 1973; Reiser and Kobayashi 1975):

.. math::

    X_r = \frac{G(N - e_r)}{G(N)}, \qquad
    P(n_k = j) = \frac{F_k(j)\, G^{(-k)}(N - j)}{G(N)}, \qquad
    Q_{rk} = \sum_{j \le N} j_r\, P(n_k = j),

with ``G^{(-k)}`` the constant of the network without station ``k``.
Within a chain, a station's customers split over the chain's classes in
proportion to their demands.

Scaling and cost
----------------
Demands are divided by their largest value before the convolution
(``G`` then scales by ``s^{|n|}``), which keeps ``G`` representable for
populations in the hundreds; if it still overflows a ``ValueError`` says so.
The lattice has ``L = prod_r (N_r + 1)`` points.  Buzen's step costs
``O(L R)`` per queue station (vectorised over each level of equal total
population), a delay station ``O(L sum_r N_r)`` (its factor is separable:
one 1-D convolution per chain), a multi-server or load-dependent station a
general lattice convolution, ``O(L^2)`` at worst
(``prod_r (N_r+1)(N_r+2)/2`` products).  The marginals need the constant
without each station: ``O(K^2)`` station additions, the general ones
first.  Two chains of 60 customers on three stations and two think times
take about 0.1 s.

Only product-form networks are accepted: no priorities, and FCFS ``"queue"``
stations must have exponential service (``cs2 = 1``) with the same
per-visit service time for every visiting class.  Processor-sharing
stations may have class-dependent service times; so may ``"multi"``
stations, which are the processor-sharing multi-server station of the BCMP
theorem (as in :func:`mva.exact.exact_mva` and LINE's PS stations).

References
----------
J. P. Buzen, "Computational algorithms for closed queueing networks with
exponential servers", CACM 16(9), 1973, pp. 527-531.
M. Reiser and H. Kobayashi, "Queuing networks with multiple closed chains:
theory and computational algorithms", IBM J. Res. Dev. 19(3), 1975.
Lazowska et al., *Quantitative System Performance*, 1984, chapter 8
(load-dependent centers); G. Bolch et al., *Queueing Networks and Markov
Chains*, 2nd ed., 2006, section 8.1 (convolution algorithm).
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from ._model import compile_network, make_result
from .network import ClosedNetwork
from .results import MVAResult

__all__ = ["normalizing_constant", "marginal_probabilities", "convolution"]

#: largest population lattice the convolution accepts by default (the marginals
#: cost O(K L^2) at delay, multi-server and load-dependent stations)
DEFAULT_MAX_STATES = 20_000


def _check(network: Any, who: str, max_states: int) -> None:
    if not isinstance(network, ClosedNetwork):
        raise ValueError(f"network must be a ClosedNetwork; got {type(network).__name__}")
    if network.has_priorities:
        raise ValueError(f"{who} needs a product-form network; got priorities "
                         f"{np.asarray(network.priorities).tolist()}")
    S = network.service_times
    V = network.visit_matrix
    for k, (kd, disc) in enumerate(zip(network.kinds, network.disciplines)):
        if kd == "queue" and disc == "fcfs":
            name = network.station_names[k]
            if network.cs2[k] != 1.0:
                raise ValueError(f"{who} needs exponential service at FCFS station {name!r}; "
                                 f"got cs2 {float(network.cs2[k])!r} (no product form)")
            s = S[V[:, k] > 0, k]
            if s.size and not np.allclose(s, s[0], rtol=1e-12, atol=0.0):
                raise ValueError(f"{who}: FCFS station {name!r} has class-dependent service times "
                                 f"{s.tolist()}; that network has no product form (use "
                                 f"disciplines='ps', or an approximate MVA)")
    size = math.prod(int(n) + 1 for n in network.populations)
    if size > max_states:
        raise ValueError(f"{who} would use a population lattice of prod(N_r + 1) = {size} "
                         f"points for populations {network.populations.tolist()}; max_states is "
                         f"{max_states}")


def _station_factor(kind: str, d: np.ndarray, alpha: np.ndarray | None,
                    N: np.ndarray) -> np.ndarray:
    """``F_k(n)`` over the lattice ``0 <= n <= N`` (chain demands ``d``, scaled)."""
    from scipy.special import gammaln
    grids = np.indices(tuple((N + 1).tolist()), dtype=float)        # (R, *shape)
    tot = grids.sum(axis=0)
    logd = np.log(np.where(d > 0, d, 1.0))
    logF = np.zeros(tot.shape)
    for r in range(N.size):
        nr = grids[r]
        logF += np.where(nr > 0, nr * logd[r] if d[r] > 0 else -np.inf, 0.0) - gammaln(nr + 1.0)
    if kind != "delay":
        logF += gammaln(tot + 1.0)
        if alpha is not None:
            cum = np.concatenate([[0.0], np.cumsum(np.log(alpha))])  # log prod_{j<=t} alpha(j)
            logF -= cum[tot.astype(np.int64)]
    return np.exp(logF)


def _alpha(cm: Any, k: int, top: int) -> np.ndarray | None:
    kd = cm.net.kinds[k]
    if kd in ("queue", "delay"):
        return None
    j = np.arange(1, top + 1, dtype=float)
    if kd == "multi":
        return np.minimum(j, float(cm.m[k]))
    a = np.asarray(cm.net.rates[k], dtype=float)
    out = np.empty(top)
    n = min(a.size, top)
    out[:n] = a[:n]
    out[n:] = a[-1]
    return out


def _convolve(A: np.ndarray, B: np.ndarray) -> np.ndarray:
    """``H(n) = sum_{j <= n} A(j) B(n - j)`` on the lattice (same shapes)."""
    shape = A.shape
    H = np.zeros(shape)
    for j in np.ndindex(shape):
        a = A[j]
        if a == 0.0:
            continue
        dst = tuple(slice(jr, None) for jr in j)
        src = tuple(slice(0, n - jr) for n, jr in zip(shape, j))
        H[dst] += a * B[src]
    return H


def _delay(G: np.ndarray, d: np.ndarray) -> np.ndarray:
    """Convolve with a delay station: its factor ``prod_r d_r^{n_r} / n_r!`` is
    separable, so the lattice convolution is one 1-D convolution per chain axis."""
    H = G
    for r, dr in enumerate(d):
        if dr <= 0 or H.shape[r] == 1:
            continue
        n = H.shape[r]
        f = np.empty(n)
        f[0] = 1.0
        for j in range(1, n):
            f[j] = f[j - 1] * dr / j
        out = np.zeros_like(H)
        for j in range(n):
            dst = [slice(None)] * H.ndim
            src = [slice(None)] * H.ndim
            dst[r] = slice(j, None)
            src[r] = slice(0, n - j)
            out[tuple(dst)] += f[j] * H[tuple(src)]
        H = out
    return H


def _buzen(G: np.ndarray, d: np.ndarray) -> np.ndarray:
    """Add one load-independent queue station of chain demands ``d``.

    ``G_k(n) = G_{k-1}(n) + sum_r d_r G_k(n - e_r)``, evaluated level by
    level (all ``n`` of equal total population at once).
    """
    shape = G.shape
    flat = G.ravel().copy()
    strides = np.array([int(np.prod(shape[r + 1:])) for r in range(len(shape))], dtype=np.int64)
    grid = np.indices(shape).reshape(len(shape), -1)
    level = grid.sum(axis=0)
    order = np.argsort(level, kind="stable")
    bounds = np.searchsorted(level[order], np.arange(int(level.max()) + 2))
    for lv in range(1, int(level.max()) + 1):
        idx = order[bounds[lv]:bounds[lv + 1]]
        acc = flat[idx]
        for r, dr in enumerate(d):
            if dr > 0:
                ok = grid[r, idx] > 0
                acc[ok] += dr * flat[idx[ok] - strides[r]]
        flat[idx] = acc
    return flat.reshape(shape)


def _factors(network: ClosedNetwork) -> tuple[Any, list[tuple[str, np.ndarray, Any]],
                                              np.ndarray, float]:
    """Compiled network, per-station (kind, scaled chain demands, alpha), N, scale."""
    cm = compile_network(network)
    N = cm.N.astype(np.int64)
    Dch = cm.E @ cm.D                                   # (R, K) chain demands
    top = int(N.sum())
    stations: list[tuple[str, np.ndarray, Any]] = []
    for k in range(cm.K):
        stations.append((cm.net.kinds[k], Dch[:, k], _alpha(cm, k, top)))
    for r in range(cm.R):
        if cm.Z[r] > 0:
            d = np.zeros(cm.R)
            d[r] = cm.Z[r]
            stations.append(("delay", d, None))
    scale = max([float(s[1].max()) for s in stations] + [1e-300])
    stations = [(kd, d / scale, a) for kd, d, a in stations]
    return cm, stations, N, scale


def _lattice_G(stations: list[tuple[str, np.ndarray, Any]], N: np.ndarray) -> np.ndarray:
    G = np.zeros(tuple((N + 1).tolist()))
    G[(0,) * N.size] = 1.0
    for st in stations:
        G = _add(G, st, N)
    if not np.isfinite(G).all():
        raise ValueError("the normalizing constant overflows even after scaling the demands; "
                         "the populations are too large for convolution (use exact_mva)")
    return G


def normalizing_constant(network: ClosedNetwork, *,
                         max_states: int = DEFAULT_MAX_STATES) -> np.ndarray:
    r"""Normalizing constant ``G(n)`` for every population ``0 <= n <= N``.

    Parameters
    ----------
    network : ClosedNetwork
        A product-form network (queue, delay, multi and ``"ld"`` stations).
    max_states : int
        Refuse lattices ``prod(N_r + 1)`` larger than this.

    Returns
    -------
    numpy.ndarray, shape ``tuple(N_r + 1)``
        ``G[n]`` in the network's time unit (``G(n)`` scales as
        ``time^{|n|}``); ``G[0] = 1``.  Octave's ``qncsconv`` returns the
        single-chain vector ``G(0..N)``.

    Raises
    ------
    ValueError
        For a network without product form, a too large lattice, or a
        constant that overflows.

    Notes
    -----
    See the module docstring: ``G`` is the lattice convolution of the
    station factors ``F_k``, by Buzen's recursion at load-independent queue
    stations.

    References
    ----------
    Buzen (1973); Reiser and Kobayashi (1975); Bolch et al. (2006),
    section 8.1.

    Examples
    --------
    Buzen's example: two stations of demands 1 and 2, so
    ``G(n) = sum_{i=0}^{n} 1^i 2^{n-i} = 2^{n+1} - 1``.

    >>> net = ClosedNetwork.single_class([1.0, 2.0], population=3)
    >>> normalizing_constant(net).tolist()
    [1.0, 3.0, 7.0, 15.0]
    """
    _check(network, "normalizing_constant", max_states)
    _, stations, N, scale = _factors(network)
    G = _lattice_G(stations, N)
    tot = np.indices(G.shape).sum(axis=0)
    with np.errstate(over="raise"):
        try:
            return G * np.power(scale, tot)
        except FloatingPointError:
            raise ValueError("G(n) overflows a float in the network's time unit; use a larger "
                             "time unit, or marginal_probabilities/convolution (which stay "
                             "scaled)") from None


def _without(stations: list, N: np.ndarray) -> tuple[np.ndarray, list[np.ndarray]]:
    """G of all stations, and G of the network without each station.

    ``G^{(-i)}`` is the prefix up to ``i`` with the stations after ``i``
    added one by one.  Stations are ordered general (multi-server,
    load-dependent: an ``O(L^2)`` convolution each) first, so that the many
    additions are mostly the ``O(L R)`` Buzen and delay steps.
    """
    n = len(stations)
    order = sorted(range(n), key=lambda i: stations[i][0] in ("queue", "delay"))
    one = np.zeros(tuple((N + 1).tolist()))
    one[(0,) * N.size] = 1.0
    pre = [one]
    for i in order:
        pre.append(_add(pre[-1], stations[i], N))
    minus: list[Any] = [None] * n
    for pos, i in enumerate(order):
        H = pre[pos]
        for j in order[pos + 1:]:
            H = _add(H, stations[j], N)
        minus[i] = H
    return pre[n], minus


def _add(G: np.ndarray, st: tuple[str, np.ndarray, Any], N: np.ndarray) -> np.ndarray:
    kd, d, a = st
    if kd == "queue":
        return _buzen(G, d)
    if kd == "delay":
        return _delay(G, d)
    return _convolve(_station_factor(kd, d, a, N), G)


def _marginals(network: ClosedNetwork) -> tuple[Any, np.ndarray, list[np.ndarray], float,
                                                np.ndarray, list]:
    cm, stations, N, scale = _factors(network)
    G, minus = _without(stations, N)
    if not np.isfinite(G).all():
        raise ValueError("the normalizing constant overflows even after scaling the demands; "
                         "the populations are too large for convolution (use exact_mva)")
    GN = G[tuple(N.tolist())]
    joint = []
    for k in range(cm.K):
        F = _station_factor(stations[k][0], stations[k][1], stations[k][2], N)
        rev = minus[k][tuple(slice(None, None, -1) for _ in range(N.size))]   # G^{(-k)}(N - j)
        joint.append(F * rev / GN)
    return cm, G, joint, scale, N, stations


def marginal_probabilities(network: ClosedNetwork, *,
                           max_states: int = DEFAULT_MAX_STATES) -> np.ndarray:
    r"""Marginal distribution of the number of customers at each station.

    Parameters
    ----------
    network : ClosedNetwork
        A product-form network (see :func:`normalizing_constant`).
    max_states : int
        Refuse lattices ``prod(N_r + 1)`` larger than this.

    Returns
    -------
    numpy.ndarray, shape (K, sum(N) + 1)
        ``p[k, t]``: probability that ``t`` customers (all chains) are at
        station ``k``; each row sums to 1.

    Notes
    -----
    .. math::

        P(|n_k| = t) = \sum_{|j| = t,\ j \le N}
            \frac{F_k(j)\, G^{(-k)}(N - j)}{G(N)},

    with ``G^{(-k)}`` the convolution of all stations but ``k`` (from
    prefix and suffix products, so all ``K`` marginals cost ``O(K L^2)``).
    For one chain and a load-independent station this is the formula
    ``P(n_k = j) = D_k^j (G(N-j) - D_k G(N-j-1)) / G(N)`` of Bolch et al.
    (2006), section 8.1, which Octave's ``qncsconv`` documentation uses.

    References
    ----------
    Buzen (1973); Bolch et al. (2006), section 8.1.2.

    Examples
    --------
    Two stations of demands 1 and 2, three customers: ``P(n_1 = i)`` is
    proportional to ``1^i 2^{3-i}``.

    >>> net = ClosedNetwork.single_class([1.0, 2.0], population=3)
    >>> (marginal_probabilities(net) * 15).round(12).tolist()
    [[8.0, 4.0, 2.0, 1.0], [1.0, 2.0, 4.0, 8.0]]
    """
    _check(network, "marginal_probabilities", max_states)
    _, _, joint, _, N, _ = _marginals(network)
    top = int(N.sum())
    tot = np.indices(tuple((N + 1).tolist())).sum(axis=0).ravel()
    out = np.zeros((len(joint), top + 1))
    for k, P in enumerate(joint):
        out[k] = np.bincount(tot, weights=P.ravel(), minlength=top + 1)
    return out


def convolution(network: ClosedNetwork, *, max_states: int = DEFAULT_MAX_STATES) -> MVAResult:
    r"""Mean measures of a closed product-form network by convolution.

    Parameters
    ----------
    network : ClosedNetwork
        A product-form network (see :func:`normalizing_constant`).
    max_states : int
        Refuse lattices ``prod(N_r + 1)`` larger than this.

    Returns
    -------
    MVAResult
        ``method="convolution"``; same measures and conventions as
        :func:`mva.exact.exact_mva` (utilization of an ``"ld"`` station is
        ``X D / max alpha``).

    Notes
    -----
    ``X_r = G(N - e_r) / G(N)`` and ``Q_rk = sum_j j_r P(n_k = j)`` (module
    docstring); class ``c`` of chain ``r`` gets ``Q_ck = Q_rk D_ck / D_rk``
    and ``R_ck = Q_ck / X_r``.  An independent route to the numbers of
    exact MVA: both are exact for product-form networks.

    References
    ----------
    Buzen (1973); Reiser and Kobayashi (1975); Lazowska et al. (1984),
    chapter 8.

    Examples
    --------
    >>> net = ClosedNetwork.single_class([1.0, 2.0], population=3)
    >>> res = convolution(net)
    >>> round(float(res.throughput[0]), 12)       # G(2) / G(3) = 7 / 15
    0.466666666667
    >>> res.queue_length.round(6).tolist()        # (4 + 4 + 3) / 15 and 34 / 15
    [[0.733333, 2.266667]]
    """
    _check(network, "convolution", max_states)
    cm, G, joint, scale, N, _ = _marginals(network)
    R, K = cm.R, cm.K
    idx = tuple(N.tolist())
    GN = G[idx]
    X = np.zeros(R)
    for r in range(R):
        if N[r] > 0:
            m = list(idx)
            m[r] -= 1
            X[r] = G[tuple(m)] / GN / scale
    grids = np.indices(tuple((N + 1).tolist()), dtype=float)
    Qch = np.zeros((R, K))
    for k in range(K):
        for r in range(R):
            Qch[r, k] = float((grids[r] * joint[k]).sum())
    Dch = cm.E @ cm.D
    with np.errstate(divide="ignore", invalid="ignore"):
        share = np.where(Dch[cm.ch] > 0, cm.D / np.where(Dch[cm.ch] > 0, Dch[cm.ch], 1.0), 0.0)
        Q = Qch[cm.ch] * share
        Xc = X[cm.ch]
        Rck = np.where(Xc[:, None] > 0, Q / np.where(Xc[:, None] > 0, Xc[:, None], 1.0), 0.0)
    return make_result(cm, X, Rck, method="convolution", iterations=int(N.sum()), Q=Q)
