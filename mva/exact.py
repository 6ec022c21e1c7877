r"""Exact mean value analysis of closed networks.

:func:`exact_mva` solves a :class:`~mva.network.ClosedNetwork` by the
Reiser-Lavenberg recursion over chain populations.  For a customer of
chain ``r`` arriving at station ``k`` when the network holds the population
vector ``n``, the arrival theorem says it sees the network in equilibrium
with population ``n - e_r``.  Hence, per chain cycle,

.. math::

    R_{ck}(n) = \begin{cases}
        D_{ck} & \text{delay}\\
        D_{ck}\,\bigl(1 + Q_k(n - e_r)\bigr) & \text{queue (PS, or FCFS with equal } S)\\
        \frac{D_{ck}}{m_k}\Bigl(1 + Q_k(n-e_r) + \sum_{j=0}^{m_k-2}(m_k-1-j)\,p_k(j\mid n-e_r)\Bigr)
            & \text{multi}\\
        D_{ck} \sum_{j=1}^{|n|} \frac{j}{\alpha_k(j)}\, p_k(j-1\mid n-e_r) & \text{load-dependent}
    \end{cases}

    X_r(n) = \frac{n_r}{Z_r + \sum_{c \in r}\sum_k R_{ck}(n)}, \qquad
    Q_{ck}(n) = X_r(n)\, R_{ck}(n),

and the marginal queue-length probabilities of multi-server and
load-dependent stations follow

.. math::

    p_k(j\mid n) = \frac{1}{\alpha_k(j)} \sum_r X_r(n)\, D_{rk}\, p_k(j-1\mid n-e_r),
    \quad j \ge 1,

with ``D_rk`` the chain's total demand at ``k``.  For ``"multi"`` stations
(``alpha(j) = min(j, m)``) only ``p(0..m-1)`` are kept; a general ``"ld"``
station keeps the whole distribution.

The idle probability is *not* taken as ``1 - sum_{j>=1} p_k(j|n)``, which
cancels catastrophically near saturation.  In a product-form network
``p_k(0|n) = G_{-k}(n) / G(n)`` with ``G_{-k}`` the normalising constant of the
network without station ``k``, and ``G(n) / G(n - e_r) = 1 / X_r(n)``, so

.. math::

    p_k(0\mid n) = p_k(0\mid n - e_r)\,\frac{X_r(n)}{X^{-k}_r(n)}
    \quad (n_r > 0)

(Reiser and Lavenberg 1980; Bolch et al. 2006, section 8.2): products of
positive numbers only.  The recursion runs on all ``2^L`` subnetworks without
subsets of the ``L`` multi-server / load-dependent stations at once.  Where
that does not apply (non-product-form networks, more than 12 such stations,
or ``2^L prod(N_r + 1) > max_states``) the subtraction is used and a
:class:`~mva.errors.PrecisionWarning` is issued if it gives ``p(0) < 1e-6``.

Priorities (``priorities``) and FCFS service-time variability (``cs2``) at
``"queue"`` stations replace the queue formula by the BKT form of
:mod:`mva.priority` with ``Q(n - e_r)`` and ``U(n - e_r) = X(n - e_r) D``;
with them the result is an approximation (the network is no longer product
form), still computed by the exact recursion.

Cost
----
The recursion visits every population vector ``0 <= n <= N``:
``prod_r (N_r + 1)`` of them.  Time is ``O(prod(N_r + 1) R K)`` (times ``m``
at multi-server and the population at load-dependent stations, times ``2^L``
for the complement subnetworks).  With numba, compiled kernels
(:mod:`mva._exact_numba`) visit the lattice in mixed-radix order with a ring
buffer of predecessors; the NumPy reference goes level by level (vectors of
equal total population at once).  A single class with only queue and delay
stations is a loop of ``N`` steps, ``O(N K)``; :func:`exact_mva_batch` runs
many such networks in one call.  More than ``max_states`` vectors (default
2,000,000) raise ``ValueError`` with the count instead of running for hours;
use :func:`mva.approx.schweitzer` or :func:`mva.approx.linearizer` for large
populations.

References
----------
M. Reiser and S. S. Lavenberg, "Mean-value analysis of closed multichain
queuing networks", J. ACM 27(2), 1980, pp. 313-322.
E. D. Lazowska, J. Zahorjan, G. S. Graham, K. C. Sevcik, *Quantitative System
Performance*, Prentice-Hall, 1984, chapters 6-8 (Algorithm 6.1, exact MVA;
chapter 8, load-dependent centers).
G. Bolch, S. Greiner, H. de Meer, K. S. Trivedi, *Queueing Networks and Markov
Chains*, 2nd ed., Wiley, 2006, section 8.2 (MVA with load-dependent stations).
"""

from __future__ import annotations

import math
import threading
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

import numpy as np

from ._model import Compiled, cap_utilization, compile_network, make_result
from .errors import SaturationError
from .network import ClosedNetwork
from .priority import aggregate, class_terms, queue_residence
from .results import MVAResult

__all__ = ["exact_mva", "exact_mva_batch", "ExactBatchResult", "DEFAULT_MAX_STATES",
           "lattice_size"]

#: default limit on the number of population vectors of the exact recursion
DEFAULT_MAX_STATES = 2_000_000

#: the general lattice recursion at one priority level computes the BKT residence without
#: the (zero) higher-level terms (bit for bit the same; False: through class_terms and
#: queue_residence, the reference the tests compare with)
_ONE_LEVEL_SHORTCUT = True
_STARVED = 1e-9  # free capacity below which a preempted class counts as starved
_QD = frozenset(("queue", "delay"))
_SMALL_K = 12  # below this many stations the single-class loop uses Python floats
_MAX_COMPLEMENT = 12  # most multi-server / LD stations solved with complement networks (2**L)
#: smallest p_k(0|n) the subtraction 1 - sum_j p_k(j|n) may give without a PrecisionWarning
P0_FLOOR = 1e-6


#: estimated interpreted work above which loading numba (~0.5-2 s once) pays: about 50 ms
#: of the NumPy references (units of ~0.25 us; see _work)
_COMPILE_WORK = 200_000
_LEVEL_COST = 400  # one level of the NumPy lattice reference per chain, in the same units


def _work(levels: int, chains: int, states: float, per_state: float) -> float:
    """Estimated cost of an interpreted recursion (Python overhead per level plus element work)."""
    return levels * max(chains, 1) * _LEVEL_COST + states * per_state


_numba_state: dict[str, Any] = {}


def _compiled_wanted(work: float) -> Any:
    """The numba kernels module when it should be used, else ``None``.

    Used when numba is installed (and ``MVA_NO_NUMBA`` is unset) and either the
    kernels are already loaded or the estimated interpreted work (``work``,
    see :func:`_work`) is large enough to pay for loading numba (0.5-2 s once
    per process from the cache, several seconds on the very first compile).  Without numba a
    one-time :class:`RuntimeWarning` says so and the NumPy references run.
    """
    import sys
    mod = sys.modules.get("mva._exact_numba")
    if mod is not None:
        return mod
    if work < _COMPILE_WORK:
        return None
    ok = _numba_state.get("ok")
    if ok is None:
        import importlib.util
        import os
        ok = False
        if os.environ.get("MVA_NO_NUMBA", "") in ("", "0"):
            try:
                ok = importlib.util.find_spec("numba") is not None
            except (ImportError, ValueError):
                ok = False
            if ok:
                try:
                    from . import _exact_numba  # noqa: F401
                except ImportError:
                    ok = False
            if not ok:
                import warnings
                warnings.warn("numba is not installed (or cannot be imported): exact MVA runs "
                              "its NumPy reference recursions, 20-60x slower on large problems "
                              "(pip install numba)", RuntimeWarning, stacklevel=4)
        _numba_state["ok"] = ok
    return sys.modules.get("mva._exact_numba") if ok else None


def lattice_size(populations: np.ndarray) -> int:
    """Number of population vectors ``prod(N_r + 1)`` the exact recursion visits."""
    return math.prod(int(n) + 1 for n in np.asarray(populations).ravel())


def exact_mva(network: ClosedNetwork, *, max_states: int = DEFAULT_MAX_STATES) -> MVAResult:
    """Exact MVA of a closed network (single or multiple chains).

    Parameters
    ----------
    network : ClosedNetwork
        The network; every station kind is supported exactly (``"ld"`` and
        ``"multi"`` through marginal probabilities).
    max_states : int
        Refuse networks whose population lattice ``prod(N_r + 1)`` is larger.

    Returns
    -------
    MVAResult
        ``method="exact"``, ``converged=True``, ``iterations`` = total
        population (recursion levels), ``residual=0``.

    Raises
    ------
    ValueError
        If the lattice exceeds ``max_states`` (the message gives the count).
    SaturationError
        If higher-priority classes leave no capacity to a lower one.

    Notes
    -----
    See the module docstring for the recursion and its cost.

    References
    ----------
    Reiser and Lavenberg (1980); Lazowska et al. (1984), Algorithm 6.1.

    Examples
    --------
    Three queueing stations and 50 customers (a balanced-job check: the
    bottleneck, demand 2, saturates):

    >>> from mva.network import ClosedNetwork
    >>> net = ClosedNetwork.single_class([1.0, 2.0, 0.5], population=50)
    >>> res = exact_mva(net)
    >>> round(float(res.throughput[0]), 6), res.queue_length.round(4).tolist()
    (0.5, [[1.0, 48.6667, 0.3333]])

    Two chains on three processor-sharing stations:

    >>> net = ClosedNetwork(demands=[[1.0, 2.0, 0.5], [2.0, 1.0, 0.7]], populations=[2, 3])
    >>> exact_mva(net).throughput.round(5).tolist()
    [0.23478, 0.32124]
    """
    if not isinstance(network, ClosedNetwork):
        raise ValueError(f"network must be a ClosedNetwork; got {type(network).__name__}")
    if _QD.issuperset(network.kinds):
        if network.demands.shape[0] == 1:
            return _exact_single(network)
        if _simple_product_form(network):
            return _exact_li(network, max_states)
    cm = compile_network(network)
    max_states = int(max_states)
    has_ld = bool(cm.multi.any() or cm.ld.any())
    if cm.simple and (not has_ld or _complement_fits(cm, max_states)):
        return _exact_pf(cm, max_states)
    return _exact_lattice(cm, max_states)


@dataclass(frozen=True, kw_only=True)
class ExactBatchResult:
    """Exact MVA of many single-class networks (see :func:`exact_mva_batch`).

    Attributes
    ----------
    throughput : ndarray, shape (B,)
        System throughput ``X`` of each network.
    residence_time : ndarray, shape (B, K)
        Residence time per station (time per cycle, ``D_k (1 + Q_k(N - 1))``).
    queue_length : ndarray, shape (B, K)
        Mean number of customers per station.
    utilization : ndarray, shape (B, K)
        ``X D_k``.
    response_time : ndarray, shape (B,)
        Sum of the residence times (excluding the think time).
    """

    throughput: np.ndarray
    residence_time: np.ndarray
    queue_length: np.ndarray
    utilization: np.ndarray
    response_time: np.ndarray


def exact_mva_batch(demands: Any, populations: Any, think_times: Any = 0.0) -> ExactBatchResult:
    r"""Exact MVA of ``B`` single-class networks of queueing stations in one call.

    Parameters
    ----------
    demands : array_like, shape (B, K)
        Service demand of each network (row) at each single-server
        load-independent queueing station (processor sharing, or FCFS with
        exponential service).  Zero demands are allowed (an unvisited
        station).
    populations : int or array_like of int, shape (B,)
        Number of customers ``N >= 0`` of each network (broadcast).
    think_times : float or array_like, shape (B,)
        Think time ``Z >= 0`` (a delay station) of each network (broadcast).

    Returns
    -------
    ExactBatchResult
        Arrays over the batch.

    Raises
    ------
    ValueError
        Naming the parameter, for a wrong shape, a negative or non-finite
        value, a non-integral population, or a network with customers but
        neither demand nor think time.

    Notes
    -----
    The recursion of :func:`exact_mva` for one class,

    .. math::

        R_k(n) = D_k\,(1 + Q_k(n-1)), \quad X(n) = \frac{n}{Z + \sum_k R_k(n)},
        \quad Q_k(n) = X(n)\,R_k(n),

    run for every row.  With numba installed a compiled loop does the whole
    batch (``O(sum_b N_b K)``); otherwise a NumPy recursion vectorised over
    the batch (``max_b N_b`` steps) is used.

    References
    ----------
    M. Reiser and S. S. Lavenberg, "Mean-value analysis of closed multichain
    queuing networks", J. ACM 27(2), 1980, pp. 313-322.

    Examples
    --------
    >>> res = exact_mva_batch([[1.0, 2.0, 0.5], [1.0, 1.0, 1.0]], [50, 5])
    >>> res.throughput.round(6).tolist()
    [0.5, 0.714286]
    """
    from ._validate import check_integer, check_nonnegative
    D = check_nonnegative("demands", demands)
    if D.ndim != 2:
        raise ValueError(f"demands must be a 2-D array (networks x stations); got shape {D.shape}")
    B = D.shape[0]
    N = check_integer("populations", populations, minimum=0)
    Z = check_nonnegative("think_times", think_times)
    try:
        N = np.ascontiguousarray(np.broadcast_to(N, (B,)), dtype=np.int64)
        Z = np.ascontiguousarray(np.broadcast_to(Z, (B,)), dtype=np.float64)
    except ValueError:
        raise ValueError(f"populations and think_times must be scalars or have one entry per "
                         f"network ({B}); got shapes {np.shape(populations)} and "
                         f"{np.shape(think_times)}") from None
    D = np.ascontiguousarray(D, dtype=np.float64)
    empty = (N > 0) & (Z == 0.0) & (D.sum(axis=1) == 0.0)
    if empty.any():
        b = int(np.argmax(empty))
        raise ValueError(f"network {b} has populations[{b}] = {int(N[b])} customers but no demand "
                         f"and no think time: its throughput would be infinite")
    nb = _compiled_wanted(_work(int(N.max(initial=0)), 1, float(N.sum()), D.shape[1]))
    if nb is not None:
        X, Rk = nb.batch_kernel(D, Z, N)
    else:
        X, Rk = _batch_reference(D, Z, N)
    Qk = X[:, None] * Rk
    return ExactBatchResult(throughput=X, residence_time=Rk, queue_length=Qk,
                            utilization=X[:, None] * D, response_time=Rk.sum(axis=1))


def _batch_reference(D: np.ndarray, Z: np.ndarray, N: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """NumPy reference of :func:`exact_mva_batch`: one vectorised step per population."""
    B, K = D.shape
    Q = np.zeros((B, K))
    X = np.zeros(B)
    Rk = D.copy()
    for n in range(1, int(N.max(initial=0)) + 1):
        act = N >= n
        Ra = D[act] * (1.0 + Q[act])
        Xa = n / (Z[act] + Ra.sum(axis=1))
        Rk[act] = Ra
        X[act] = Xa
        Q[act] = Xa[:, None] * Ra
    return X, Rk


def _simple_product_form(net: ClosedNetwork) -> bool:
    """Product form as ``compile_network`` decides it: no priorities, no FCFS variability,
    FCFS classes sharing a service time."""
    if net.has_priorities:
        return False
    fcfs = [k for k, (kd, dis) in enumerate(zip(net.kinds, net.disciplines))
            if kd == "queue" and dis == "fcfs"]
    if not fcfs:
        return True
    if (net.cs2[fcfs] != 1.0).any():
        return False
    V, S = net.visit_matrix, net.service_times
    for k in fcfs:
        s = S[V[:, k] > 0, k]
        if s.size and not np.allclose(s, s[0], rtol=1e-12, atol=0.0):
            return False
    return True


def _exact_li(net: ClosedNetwork, max_states: int) -> MVAResult:
    """Several chains, queue and delay stations, product form: no compile step."""
    N = net.populations.astype(np.int64)
    total = lattice_size(N)
    _refuse_lattice(N, total, max_states)
    D = net.demands
    C, K = D.shape
    R = N.size
    ch = net.chains
    Dr = D if R == C and (ch == np.arange(C)).all() else net.chain_demands
    Z = np.asarray(net.think_times, dtype=float)
    isq = np.fromiter((k == "queue" for k in net.kinds), dtype=float, count=K)
    nb = _compiled_wanted(_work(int(N.sum()), R, total, K * R))
    if nb is not None:
        X, phi = nb.li_kernel(Dr, Z, isq, N)
    else:
        pf = _PF.load_independent(Dr, Z, isq, N)
        X, phi = _pf_reference(pf, _Lattice(N))
    Rck = D * phi[ch]
    Rck[N[ch] == 0] = 0.0
    Xc = X[ch]
    return MVAResult(throughput=Xc, response_time=Rck.sum(axis=1), residence_time=Rck,
                     queue_length=Xc[:, None] * Rck, utilization=Xc[:, None] * D,
                     chain_throughput=X, method="exact", converged=True, iterations=int(N.sum()),
                     residual=0.0, station_names=net.station_names, class_names=net.class_names)


def _complement_fits(cm: Compiled, max_states: int) -> bool:
    L = int((cm.multi | cm.ld).sum())
    return L <= _MAX_COMPLEMENT and lattice_size(cm.N) << L <= max_states


# ----------------------------------------------------------------------
# single class, queue and delay stations: a tight loop
# ----------------------------------------------------------------------
def _exact_single(net: ClosedNetwork) -> MVAResult:
    """One class, queue and delay stations only (works on the network directly: no compile step)."""
    N = int(net.populations[0])
    d = net.demands[0]
    kinds = net.kinds
    queue = np.fromiter((k == "queue" for k in kinds), dtype=bool, count=len(kinds))
    qmask = queue & (d > 0)
    Dq = d[qmask]
    Zt = float(net.think_times[0]) + float(d[~queue].sum())
    # FCFS residual-life coefficient: R = D (1 + Q + cterm * X(n-1) * D)
    cs2 = net.cs2[qmask]
    corr = np.zeros(Dq.size)
    if (cs2 != 1.0).any():
        fcfs = np.array([s == "fcfs" for s in net.disciplines])[qmask]
        corr = np.where(fcfs, (cs2 - 1.0) / 2.0, 0.0) * Dq * Dq
    Kq = Dq.size
    X = 0.0
    if Kq == 0:
        X = N / Zt
        Rq = Dq
    elif (nb := _compiled_wanted(N * (Kq + 4))) is not None:
        X, Rq = nb.single_kernel(Dq, Zt, corr, N)
    elif not corr.any() and Kq <= _SMALL_K:
        dl = Dq.tolist()
        Ql = [0.0] * Kq
        Rl = dl
        for n in range(1, N + 1):
            Rl = [a + a * q for a, q in zip(dl, Ql)]
            X = n / (Zt + sum(Rl))
            Ql = [X * r for r in Rl]
        Rq = np.array(Rl)
    elif not corr.any():
        Q = np.zeros(Kq)
        Rq = np.empty(Kq)
        for n in range(1, N + 1):
            np.multiply(Dq, Q, out=Rq)
            Rq += Dq
            X = n / (Zt + Rq.sum())
            np.multiply(Rq, X, out=Q)
    else:
        Q = np.zeros(Kq)
        Rq = np.empty(Kq)
        kmax = int(np.argmax(Dq))
        for n in range(1, N + 1):
            np.multiply(Dq, Q, out=Rq)
            Rq += Dq
            Rq += corr * X
            X = n / (Zt + Rq.sum())
            if X * Dq[kmax] > 1.0:
                # the residual-life correction overshot at the bottleneck: cap U at 1
                X = 1.0 / Dq[kmax]
                Rq[kmax] = n / X - Zt - (Rq.sum() - Rq[kmax])
            np.multiply(Rq, X, out=Q)
    Rck = d.copy()[None, :]
    Rck[0, queue] = 0.0
    Rck[0, qmask] = Rq
    Xa = np.array([X])
    return MVAResult(throughput=Xa, response_time=Rck.sum(axis=1), residence_time=Rck,
                     queue_length=X * Rck, utilization=X * d[None, :], chain_throughput=Xa.copy(),
                     method="exact", converged=True, iterations=N, residual=0.0,
                     station_names=net.station_names, class_names=net.class_names)


# ----------------------------------------------------------------------
# the population lattice, level by level (shared by the NumPy and compiled paths)
# ----------------------------------------------------------------------
class _Lattice:
    """Population vectors ``0 <= n <= N`` grouped by level ``|n|``.

    ``nvec`` (T, R) are the vectors in mixed-radix order (last chain fastest),
    ``order[starts[l]:starts[l+1]]`` the indices of level ``l`` and ``pos`` the
    position of each vector inside its level; the vector ``n - e_r`` has
    index ``i - strides[r]``.
    """

    def __init__(self, N: np.ndarray) -> None:
        R = N.size
        self.total = lattice_size(N)
        radix = N + 1
        strides = np.ones(R, dtype=np.int64)
        for r in range(R - 2, -1, -1):
            strides[r] = strides[r + 1] * radix[r + 1]
        self.strides = strides
        self.nvec = np.indices(tuple(radix.tolist()), dtype=np.int64).reshape(R, -1).T.copy()
        level = self.nvec.sum(axis=1)
        self.Ntot = int(N.sum())
        self.order = np.argsort(level, kind="stable").astype(np.int64)
        counts = np.bincount(level, minlength=self.Ntot + 1)
        self.starts = np.concatenate([[0], np.cumsum(counts)]).astype(np.int64)
        self.pos = np.empty(self.total, dtype=np.int64)
        self.pos[self.order] = np.arange(self.total) - self.starts[level[self.order]]
        self.width = int(counts.max())


def _refuse_lattice(N: np.ndarray, total: int, max_states: int, factor: int = 1) -> None:
    if total * factor > max_states:
        extra = (f" times 2**{factor.bit_length() - 1} complement networks = {total * factor}"
                 if factor > 1 else "")
        raise ValueError(
            f"exact MVA would visit prod(N_r + 1) = {total} population vectors for populations "
            f"{N.tolist()}{extra}; max_states is {max_states} (raise it, or use "
            f"method='schweitzer' or 'linearizer')")


# ----------------------------------------------------------------------
# product form with multi-server / load-dependent stations: complement ratios
# ----------------------------------------------------------------------
class _PF:
    """Chain-level arrays of a product-form network for the stabilised recursion.

    ``L`` multi-server / load-dependent stations ``ldk``; subset ``a`` (a
    bitmask over them) is the network without those stations, ``Da[a]`` its
    chain demands.  ``sup[a, i] = a | 2**i``.  Per LD station ``i``:
    ``J[i]`` probabilities ``p(0..J-1)`` are kept (``m`` for multi, ``N+1``
    for ld), ``c1[i]`` multiplies ``1 + Q`` in the residence factor
    (``1/m`` for multi, 0 for ld), ``wres[i, j]`` multiplies ``p(j)``
    (``(m-1-j)/m`` for multi; ``(j+1)/alpha(j+1)`` for ld) and
    ``inv_alpha[i, j] = 1/alpha(j)``.  ``dead[a, r]``: chain ``r`` has neither
    think time nor a station left in subset ``a`` (``G_a(n) = 0`` when
    ``n_r > 0``).
    """

    @classmethod
    def load_independent(cls, Dr: np.ndarray, Z: np.ndarray, isq: np.ndarray,
                         N: np.ndarray) -> "_PF":
        """Queue (``isq`` 1) and delay (0) stations only: no complement networks."""
        pf = cls.__new__(cls)
        R, K = Dr.shape
        pf.N, pf.Dr, pf.Z = N, Dr, Z
        pf.kind = isq.astype(np.int64)
        pf.ldk = np.zeros(0, dtype=np.int64)
        pf.L, pf.A = 0, 1
        pf.Da = Dr[None].copy()
        pf.sup = np.zeros((1, 1), dtype=np.int64)
        pf.dead = (Z[None, :] == 0.0) & (Dr.sum(axis=1)[None, :] == 0.0)
        pf.J = np.ones(1, dtype=np.int64)
        pf.Jmax = 1
        pf.c1 = np.zeros(1)
        pf.wres = np.zeros((1, 1))
        pf.inv_alpha = np.zeros((1, 1))
        return pf

    def __init__(self, cm: Compiled) -> None:
        R, K = cm.R, cm.K
        self.N = cm.N.astype(np.int64)
        Ntot = int(self.N.sum())
        self.Dr = np.ascontiguousarray(cm.E @ cm.D)
        self.Z = np.asarray(cm.Z, dtype=float)
        self.kind = np.zeros(K, dtype=np.int64)            # 0 delay, 1 queue, 2 LD
        self.kind[cm.queue] = 1
        self.ldk = np.nonzero(cm.multi | cm.ld)[0].astype(np.int64)
        self.kind[self.ldk] = 2
        L = self.L = self.ldk.size
        A = self.A = 1 << L
        self.Da = np.broadcast_to(self.Dr, (A, R, K)).copy()
        self.sup = np.empty((A, max(L, 1)), dtype=np.int64)
        for a in range(A):
            for i in range(L):
                if a >> i & 1:
                    self.Da[a, :, self.ldk[i]] = 0.0
                self.sup[a, i] = a | (1 << i)
        self.dead = (self.Z[None, :] == 0.0) & (self.Da.sum(axis=2) == 0.0)
        J = np.ones(max(L, 1), dtype=np.int64)
        for i, k in enumerate(self.ldk):
            J[i] = int(cm.m[k]) if cm.multi[k] else Ntot + 1
        self.J = J
        Jmax = self.Jmax = int(J.max())
        self.c1 = np.zeros(max(L, 1))
        self.wres = np.zeros((max(L, 1), Jmax))
        self.inv_alpha = np.zeros((max(L, 1), Jmax))
        for i, k in enumerate(self.ldk):
            j = np.arange(Jmax)
            if cm.multi[k]:
                m = float(cm.m[k])
                self.c1[i] = 1.0 / m
                self.wres[i] = np.where(j <= m - 2, (m - 1 - j) / m, 0.0)
                self.inv_alpha[i] = np.where((j >= 1) & (j < m), 1.0 / np.maximum(j, 1), 0.0)
            else:
                rates = np.asarray(cm.net.rates[k], dtype=float)
                alpha = np.empty(Jmax)                      # alpha[j-1] = alpha(j)
                n = min(rates.size, Jmax)
                alpha[:n] = rates[:n]
                alpha[n:] = rates[-1]
                self.wres[i, :Jmax - 1] = np.arange(1, Jmax) / alpha[:Jmax - 1]
                self.inv_alpha[i, 1:] = 1.0 / alpha[:Jmax - 1]


def _exact_pf(cm: Compiled, max_states: int) -> MVAResult:
    """Product-form lattice recursion with ``p_k(0|n)`` from complement networks."""
    N = cm.N.astype(np.int64)
    total = lattice_size(N)
    L = int((cm.multi | cm.ld).sum())
    _refuse_lattice(N, total, max_states, 1 << L)
    pf = _PF(cm)
    nb = _compiled_wanted(_work(int(N.sum()), cm.R, total,
                                pf.A * cm.R * (cm.K + pf.L * min(pf.Jmax, int(N.sum()) + 1))))
    if nb is not None:
        X, phi = nb.pf_kernel(pf)
    else:
        X, phi = _pf_reference(pf, _Lattice(N))
    Rck = cm.D * phi[cm.ch]
    Rck[cm.N[cm.ch] == 0] = 0.0
    return make_result(cm, X, Rck, method="exact", iterations=int(N.sum()))


@np.errstate(divide="ignore", invalid="ignore", over="ignore")
def _pf_reference(pf: _PF, lat: _Lattice) -> tuple[np.ndarray, np.ndarray]:
    """NumPy reference of the stabilised product-form recursion.

    Returns chain throughputs ``X`` (R,) and residence factors ``phi`` (R, K)
    at the full population (``R_ck = D_ck phi_{r(c) k}``).
    """
    A, L, Jmax = pf.A, pf.L, pf.Jmax
    R, K = pf.Dr.shape
    qk = pf.kind == 1
    ldk = pf.ldk
    Q = np.zeros((A, 1, K))
    P = np.zeros((A, 1, max(L, 1), Jmax))
    P[..., 0] = 1.0
    X_final = np.zeros(R)
    phi_final = np.zeros((R, K))
    bits = ((np.arange(A)[:, None] >> np.arange(max(L, 1))[None, :]) & 1).astype(bool)
    bits[:, L:] = True
    for lv in range(1, lat.Ntot + 1):
        idx = lat.order[lat.starts[lv]:lat.starts[lv + 1]]
        nv = lat.nvec[idx]
        B = idx.size
        Qn = np.zeros((A, B, K))
        Pn = np.zeros((A, B, max(L, 1), Jmax))
        Xall = np.zeros((A, B, R))
        cyc = np.zeros((A, B, R))
        for r in range(R):
            sel = np.nonzero(nv[:, r] > 0)[0]
            if sel.size == 0:
                continue
            pp = lat.pos[idx[sel] - lat.strides[r]]
            Qs = Q[:, pp]
            phi = np.ones((A, sel.size, K))
            phi[..., qk] = 1.0 + Qs[..., qk]
            if L:
                Ps = P[:, pp]
                phi[..., ldk] = (pf.c1[:L] * (1.0 + Qs[..., ldk])
                                 + (Ps * pf.wres).sum(axis=-1)[..., :L])
            Rk = pf.Da[:, r][:, None, :] * phi
            c = pf.Z[r] + Rk.sum(axis=-1)
            Xr = nv[sel, r] / c
            cyc[:, sel, r] = c
            Xall[:, sel, r] = Xr
            Qn[:, sel] += Xr[..., None] * Rk
            if L:
                flow = Xr[..., None] * pf.Da[:, r][:, None, ldk]      # (A, Bs, L)
                Pn[:, sel, :L, 1:] += flow[..., None] * Ps[..., :L, :-1]
            if lv == lat.Ntot:
                X_final[r] = Xr[0, 0]
                phi_final[r] = phi[0, 0]
        if L:
            Pn[..., 1:] *= pf.inv_alpha[:, 1:]
            # p_k(0|n) = p_k(0|n - e_r) X_r(n) / X_r^{-k}(n), r the first chain with n_r > 0
            r0 = np.argmax(nv > 0, axis=1)
            pp0 = lat.pos[idx - lat.strides[r0]]
            b = np.arange(B)
            X0 = Xall[:, b, r0]                                      # (A, B)
            c0 = cyc[:, b, r0]                                       # (A, B)
            sup = pf.sup[:, :L]                                      # (A, L)
            dead_any = np.zeros((A, B), dtype=bool)
            for r in range(R):
                dead_any |= pf.dead[:, r][:, None] & (nv[:, r] > 0)[None, :]
            ratio = X0[:, None, :] * c0[sup] / nv[b, r0]             # (A, L, B)
            ratio = np.where(dead_any[sup], 0.0, ratio)
            p0 = P[:, pp0][:, :, :L, 0] * np.transpose(ratio, (0, 2, 1))   # (A, B, L)
            p0 = np.where(bits[:, None, :L], 1.0, p0)
            Pn[:, :, :L, 0] = p0
        Q, P = Qn, Pn
    return X_final, phi_final


# ----------------------------------------------------------------------
# general case: recursion over the population lattice, level by level
# ----------------------------------------------------------------------
#: lattices of the general recursion kept for reuse: parameter key -> (N, X (T, R), R (T, C, K))
_LATTICES: "OrderedDict[bytes, tuple[np.ndarray, np.ndarray, np.ndarray]]" = OrderedDict()
_LATTICES_KEEP = 32             # lattices kept (least recently used dropped first)
_LATTICE_BUDGET = 4_000_000     # floats kept over all lattices (32 MB)
_LATTICES_LOCK = threading.Lock()


def _keep_lattice(key: bytes, entry: tuple[np.ndarray, np.ndarray, np.ndarray]) -> None:
    with _LATTICES_LOCK:
        _LATTICES[key] = entry
        _LATTICES.move_to_end(key)
        while len(_LATTICES) > _LATTICES_KEEP or sum(
                x.size + r.size for _, x, r in _LATTICES.values()) > _LATTICE_BUDGET:
            _LATTICES.popitem(last=False)


def _lattice_key(cm: Compiled) -> bytes | None:
    """Everything but the populations that the general lattice recursion reads.

    ``None`` for networks with multi-server or load-dependent stations (their
    precision check looks at the whole lattice, so they are not reused).
    """
    if cm.multi.any() or cm.ld.any():
        return None
    parts = [np.asarray(x) for x in (cm.D, cm.V, cm.S, cm.ch, cm.Z, cm.queue, cm.delay,
                                     cm.fcfs, cm.cterm, cm.lev)]
    return b"|".join(f"{a.dtype.str}{a.shape}".encode() + np.ascontiguousarray(a).tobytes()
                     for a in parts)


def _lattice_lookup(cm: Compiled, key: bytes | None, N: np.ndarray | None = None
                    ) -> MVAResult | None:
    """The result for ``N`` (default ``cm.N``) read from a stored lattice that contains it,
    if any."""
    if key is None:
        return None
    with _LATTICES_LOCK:
        entry = _LATTICES.get(key)
        if entry is not None:
            _LATTICES.move_to_end(key)
    if entry is None:
        return None
    Nmax, Xs, Rs = entry
    N = (cm.N if N is None else N).astype(np.int64)
    if N.shape != Nmax.shape or np.any(N > Nmax):
        return None
    strides = np.ones(N.size, dtype=np.int64)
    for r in range(N.size - 2, -1, -1):
        strides[r] = strides[r + 1] * (Nmax[r + 1] + 1)
    at = int(N @ strides)
    return make_result(cm, Xs[at].copy(), Rs[at].copy(), method="exact",
                       iterations=int(N.sum()))


#: most population vectors the general lattice recursion visits in Python floats
#: (:func:`_lattice_scalar`) instead of NumPy levels; 0 turns that path off
_SCALAR_STATES = 1000
#: a utilization this close to the cap's threshold is left to the NumPy levels (the scalar
#: sum and NumPy's matrix product may round it differently)
_SCALAR_U_MARGIN = 1e-13


def _scalar_lattice_fits(cm: Compiled, total: int) -> bool:
    """Whether :func:`_lattice_scalar` gives :func:`_exact_lattice`'s levels bit for bit.

    Small lattices (at most :data:`_SCALAR_STATES` vectors) of the general route at one
    priority level, queue and delay stations only (FCFS variability), fewer than 8
    chains and fewer than 8 terms in each chain's cycle (``classes x stations``), and at
    most two classes of a chain at a station: NumPy sums fewer than 8 terms left to
    right, and a sum of two terms and exact zeros does not depend on its order (the
    einsum sums of :func:`mva._model.cap_utilization` and
    :func:`mva.priority.aggregate`).
    """
    if (total > _SCALAR_STATES or cm.simple or cm.L != 1 or not _ONE_LEVEL_SHORTCUT
            or cm.multi.any() or cm.ld.any() or not cm.queue.any() or cm.R >= 8):
        return False
    used = (cm.D != 0.0) | (cm.V != 0.0)
    for r in range(cm.R):
        cls = cm.ch == r
        if int(cls.sum()) * cm.K >= 8 or np.any(used[cls].sum(axis=0) > 2):
            return False
    return bool(np.all(np.isfinite(cm.D)) and np.all(np.isfinite(cm.V))
                and np.all(np.isfinite(cm.S)))


def _lattice_scalar(cm: Compiled, N: np.ndarray, strides: np.ndarray
                    ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray] | None:
    """The general lattice recursion at one priority level, in Python floats.

    The operations of :func:`_exact_lattice`'s NumPy levels (one-level BKT residence,
    the utilization cap of :func:`mva._model.cap_utilization` with its Newton steps in
    :func:`mva._model._newton_scalar`, the per-level sums of
    :func:`mva.priority.aggregate`) on one population vector at a time, in mixed-radix
    order, for the networks :func:`_scalar_lattice_fits` accepts: the same values bit
    for bit, without NumPy's overhead per call on lattices of a few hundred vectors.
    A class's residence at a station it neither visits nor has demand at is an exact
    0 and is left out of every sum (adding 0 changes no sum of these non-negative
    terms).

    Returns ``(X_final (R,), R_final (C, K), Xs (T, R), Rs (T, C, K))``, or ``None``
    when a case is left to the NumPy levels (a utilization within
    :data:`_SCALAR_U_MARGIN` of the cap's threshold, a zero Newton denominator).
    """
    import itertools

    from ._model import _newton_scalar

    R, C, K = cm.R, cm.C, cm.K
    st = [int(x) for x in strides]
    total = math.prod(int(x) + 1 for x in N)
    Z = [float(x) for x in cm.Z]
    chain_D = (cm.E @ cm.D).tolist()                 # as _exact_lattice computes it
    qidx = [int(k) for k in np.nonzero(cm.queue)[0]]
    thr = 1.0 + 1e-12
    used = ((cm.D != 0.0) | (cm.V != 0.0)).tolist()
    Dl, Vl, Sl = cm.D.tolist(), cm.V.tolist(), cm.S.tolist()
    # per chain: r, its residence terms (position in Rc, k, D, V, cterm, kind: 0 delay,
    # 1 FCFS queue, 2 other queue), the positions summed per station (Bk), in class and
    # station order (the cycle), and per station (position, D, S) for G's sums
    chains = []
    for r in range(R):
        cls = [int(c) for c in np.nonzero(cm.ch == r)[0]]
        terms = [(c * K + k, k, Dl[c][k], Vl[c][k], float(cm.cterm[k]),
                  0 if not cm.queue[k] else (1 if cm.fcfs[k] else 2))
                 for c in cls for k in range(K) if used[c][k]]
        at_k = [[c * K + k for c in cls if used[c][k]] for k in range(K)]
        flat = [t[0] for t in terms]
        per_k = [[(c * K + k, Dl[c][k], Sl[c][k]) for c in cls if used[c][k]]
                 for k in range(K)]
        chains.append((r, terms, at_k, flat, per_k))
    col = [[c * K + k for c in range(C) if used[c][k]] for k in range(K)]
    CK = C * K
    K2, K3 = 2 * K, 3 * K
    G: list[list[float]] = [[0.0] * (4 * K)] * total     # per vector: Q, SQ, U, SU
    Xs = [[0.0] * R for _ in range(total)]
    Rs: list[list[float]] = [[0.0] * CK] * total
    vectors = itertools.product(*(range(int(x) + 1) for x in N))
    next(vectors)
    for idx, n in enumerate(vectors, start=1):
        here = [chains[r] for r in range(R) if n[r]]
        Rc = [0.0] * CK
        for r, terms, _, _, _ in here:
            g = G[idx - st[r]]
            for at, k, d, v, ct, kind in terms:
                if kind == 0:                        # delay: D
                    Rc[at] = d
                elif kind == 1:
                    Rc[at] = d + v * (g[K + k] + (0.0 + ct * g[K3 + k]))
                else:
                    Rc[at] = d * (1.0 + g[k]) + v * (0.0 + ct * g[K3 + k])
        # the utilization cap (cap_utilization): at most 4 sweeps
        for _ in range(4):
            Bk = [[0.0] * K for _ in range(R)]
            cyc = list(Z)
            X = [0.0] * R
            for r, _, at_k, _, _ in here:
                row = Bk[r]
                s = 0.0
                for k in range(K):
                    b = 0.0
                    for at in at_k[k]:
                        b += Rc[at]
                    row[k] = b
                    s = b if k == 0 else s + b
                c = Z[r] + s
                cyc[r] = c
                X[r] = n[r] / (c if c > 0 else 1.0)
            fs = []
            for k in qidx:
                u = 0.0
                for r in range(R):
                    u += X[r] * chain_D[r][k]
                if abs(u - thr) <= _SCALAR_U_MARGIN:
                    return None
                if u > thr:
                    w = [chain_D[r][k] * float(n[r]) for r in range(R)]
                    f = _newton_scalar(w, cyc, [Bk[r][k] for r in range(R)],
                                       [x > 0 for x in w])
                    if f is None:
                        return None
                    fs.append((k, f))
            if not fs:
                break
            for k, f in fs:
                for at in col[k]:
                    Rc[at] *= f
        g_new = [0.0] * (4 * K)
        xrow = Xs[idx]
        for r, _, _, flat, per_k in here:
            s = Rc[flat[0]]                          # Rr.sum(axis=(1, 2)): left to right
            for j in flat[1:]:
                s += Rc[j]
            x = n[r] / (Z[r] + s)
            xrow[r] = x
            for k in range(K):
                q = sq = u = su = 0.0
                for at, d, sck in per_k[k]:
                    qc = x * Rc[at]
                    uc = x * d
                    q += qc
                    sq += sck * qc
                    u += uc
                    su += sck * uc
                g_new[k] += q
                g_new[K + k] += sq
                g_new[K2 + k] += u
                g_new[K3 + k] += su
        G[idx] = g_new
        Rs[idx] = Rc
    Xa = np.array(Xs)
    Ra = np.array(Rs).reshape(total, C, K)
    return Xa[-1].copy(), Ra[-1].copy(), Xa, Ra


def _exact_lattice(cm: Compiled, max_states: int) -> MVAResult:
    """Exact MVA over the population lattice (priorities, FCFS variability, multi, ld).

    A network solved with the same parameters and populations at least as
    large in every chain is answered from the lattice kept from that solve
    (every population vector below the top is a state of the recursion, with
    the same values): repeated and smaller solves of one network, as a model's
    fixed point or a sweep over the population makes, cost a lookup.
    """
    key = _lattice_key(cm)
    hit = _lattice_lookup(cm, key)
    if hit is not None:
        return hit
    N = cm.N.astype(np.int64)
    R, C, K = cm.R, cm.C, cm.K
    total = lattice_size(N)
    if total > max_states:
        raise ValueError(
            f"exact MVA would visit prod(N_r + 1) = {total} population vectors for populations "
            f"{N.tolist()}; max_states is {max_states} (raise it, or use method='schweitzer' or "
            f"'linearizer')")
    keep = key is not None and total * (R + C * K) <= _LATTICE_BUDGET
    radix = N + 1
    strides = np.ones(R, dtype=np.int64)
    for r in range(R - 2, -1, -1):
        strides[r] = strides[r + 1] * radix[r + 1]
    if _scalar_lattice_fits(cm, total):
        fast = _lattice_scalar(cm, N, strides)
        if fast is not None:
            if keep:
                _keep_lattice(key, (N, fast[2], fast[3]))      # type: ignore[arg-type]
            return make_result(cm, fast[0], fast[1], method="exact", iterations=int(N.sum()))
    if keep:
        Xs = np.zeros((total, R))
        Rs = np.zeros((total, C, K))
    dtype = np.int32 if int(N.max()) < 2**31 - 1 else np.int64
    nvec = np.indices(tuple(radix.tolist()), dtype=dtype).reshape(R, -1).T
    level = nvec.sum(axis=1, dtype=np.int64)
    Ntot = int(N.sum())
    order = np.argsort(level, kind="stable")
    counts = np.bincount(level, minlength=Ntot + 1)
    starts = np.concatenate([[0], np.cumsum(counts)])
    pos = np.empty(total, dtype=np.int64)
    pos[order] = np.arange(total) - starts[level[order]]

    D, V, S = cm.D, cm.V, cm.S
    qidx = np.nonzero(cm.queue)[0]
    midx = np.nonzero(cm.multi)[0]
    lidx = np.nonzero(cm.ld)[0]
    classes_of = [np.nonzero(cm.ch == r)[0] for r in range(R)]
    general = not cm.simple and qidx.size > 0
    one_level = cm.L == 1 and _ONE_LEVEL_SHORTCUT
    # each chain's demands, at the queue stations demands and visits, service times and
    # priority levels: gathered once, not at every level
    per_chain = [(D[cls], D[cls][:, qidx], V[cls][:, qidx], S[cls], cm.onehot[cls])
                 for cls in classes_of]
    fcfs_q, cterm_q = cm.fcfs[qidx], cm.cterm[qidx]

    # multi-server bookkeeping: p(0..m-1)
    Km = midx.size
    if Km:
        mk = cm.m[midx].astype(float)
        mmax = int(mk.max())
        j = np.arange(mmax)
        wres = np.maximum(mk[:, None] - 1 - j[None, :], 0.0)           # (Km, mmax)
        with np.errstate(divide="ignore"):
            inv_alpha = np.where((j[None, :] >= 1) & (j[None, :] < mk[:, None]),
                                 1.0 / np.maximum(j[None, :], 1), 0.0)  # (Km, mmax)
        jw = np.where(j[None, :] < mk[:, None], j[None, :], 0.0)         # j p(j) weights
        pm = np.zeros((1, Km, mmax))
        pm[:, :, 0] = 1.0
    # load-dependent bookkeeping: p(0..level)
    Kl = lidx.size
    if Kl:
        A = np.empty((Kl, max(Ntot, 1)))
        for i, k in enumerate(lidx):
            a = np.asarray(cm.net.rates[k], dtype=float)
            if a.size >= Ntot:
                A[i] = a[:Ntot]
            else:
                A[i, :a.size] = a
                A[i, a.size:] = a[-1]
        jj = np.arange(1, A.shape[1] + 1)
        wl = jj[None, :] / A                                              # j / alpha(j)
        pl = np.ones((1, Kl, 1))

    Qk = np.zeros((1, K))
    G: Any = np.zeros((1, 4, cm.L, K)) if general else None
    X_final = np.zeros(R)
    R_final = np.zeros((C, K))
    chain_D = cm.E @ D                                                    # (R, K)

    low = 1.0
    for lv in range(1, Ntot + 1):
        idx = order[starts[lv]:starts[lv + 1]]
        nv = nvec[idx]
        B = idx.size
        Qk_new = np.zeros((B, K))
        G_new: Any = np.zeros((B, 4, cm.L, K)) if general else None
        if Km:
            pm_acc = np.zeros((B, Km, mmax))
            Utot = np.zeros((B, Km))
        if Kl:
            pl_acc = np.zeros((B, Kl, lv + 1))
        last = lv == Ntot
        parts = []
        for r in range(R):
            if N[r] == 0:
                continue
            sel = np.nonzero(nv[:, r] > 0)[0]
            if sel.size == 0:
                continue
            pp = pos[idx[sel] - strides[r]]
            cls = classes_of[r]
            Dr, Dq, Vq = per_chain[r][:3]
            Rr = np.broadcast_to(Dr, (sel.size,) + Dr.shape).copy()     # delay stations: D
            Qs = Qk[pp]
            ps: Any = None
            ps_l: Any = None
            if qidx.size:
                if general and one_level:
                    # one priority level (no priorities: FCFS variability only): class_terms'
                    # higher-level terms are 0 and the free fraction 1, so the residence of
                    # queue_residence is computed with its own operations, without them
                    Gs = G[pp][:, :, 0, :][..., qidx]                      # (Bs, 4, Kq)
                    extra = 0.0 + cterm_q * Gs[:, None, 3, :]
                    Rr[:, :, qidx] = np.where(
                        fcfs_q, Dq + Vq * (Gs[:, None, 1, :] + extra),
                        Dq * (1.0 + Gs[:, None, 0, :]) + Vq * extra)
                elif general:
                    Gs = G[pp][..., qidx]
                    terms = class_terms(Gs, cm.lev[cls])
                    Rq, free = queue_residence(Dq, Vq, terms,
                                               cm.fcfs[qidx], cm.cterm[qidx])
                    _check_free(free, Dq, cm, cls, qidx)
                    Rr[:, :, qidx] = Rq
                else:
                    Rr[:, :, qidx] = Dq * (1.0 + Qs[:, None, qidx])
            if Km:
                ps = pm[pp]
                corr = (ps * wres).sum(axis=-1)
                Rr[:, :, midx] = (Dr[:, midx] / mk) * (1.0 + Qs[:, midx] + corr)[:, None, :]
            if Kl:
                ps_l = pl[pp]
                fac = (ps_l * wl[:, :lv]).sum(axis=-1)
                Rr[:, :, lidx] = Dr[:, lidx] * fac[:, None, :]
            parts.append((r, sel, cls, Rr, ps, ps_l))
        if general:
            # approximations (cs2 < 1, BKT) must not push a single server past U = 1
            Rall = np.zeros((B, C, K))
            for r, sel, cls, Rr, _, _ in parts:
                Rall[sel[:, None], cls[None, :]] = Rr
            Rall = cap_utilization(Rall, nv.astype(float), cm.Z, cm.E, chain_D, qidx)
            parts = [(r, sel, cls, Rall[sel[:, None], cls[None, :]], ps, ps_l)
                     for r, sel, cls, _, ps, ps_l in parts]
        for r, sel, cls, Rr, ps, ps_l in parts:
            Dr = per_chain[r][0]
            cyc = cm.Z[r] + Rr.sum(axis=(1, 2))
            Xr = nv[sel, r] / cyc
            Qr = Xr[:, None, None] * Rr
            Qk_new[sel] += Qr.sum(axis=1)
            if general:
                Ur = Xr[:, None, None] * Dr
                G_new[sel] += aggregate(Qr, Ur, per_chain[r][3], per_chain[r][4])
            if Km:
                flow = Xr[:, None] * chain_D[r, midx]                   # (Bs, Km)
                pm_acc[sel, :, 1:] += flow[:, :, None] * ps[:, :, :-1]
                Utot[sel] += flow
            if Kl:
                flow_l = Xr[:, None] * chain_D[r, lidx]
                pl_acc[sel, :, 1:] += flow_l[:, :, None] * ps_l
            if keep:
                Xs[idx[sel], r] = Xr
                Rs[idx[sel][:, None], cls[None, :]] = Rr
            if last:
                X_final[r] = Xr[0]
                R_final[cls] = Rr[0]
        Qk = Qk_new
        G = G_new
        if Km:
            pm = pm_acc * inv_alpha
            busy_all = (Utot - (pm * jw).sum(axis=-1)) / mk
            p0 = 1.0 - pm[:, :, 1:].sum(axis=-1) - busy_all
            low = min(low, float(p0.min()))
            pm[:, :, 0] = np.maximum(p0, 0.0)
        if Kl:
            pl = pl_acc
            pl[:, :, 1:] /= A[:, :lv]
            p0 = 1.0 - pl[:, :, 1:].sum(axis=-1)
            low = min(low, float(p0.min()))
            pl[:, :, 0] = np.maximum(p0, 0.0)
    if low < P0_FLOOR:
        _warn_precision(cm, low)
    if keep:
        _keep_lattice(key, (N, Xs, Rs))      # type: ignore[arg-type]
    return make_result(cm, X_final, R_final, method="exact", iterations=Ntot)


#: networks last given to :func:`_exact_populations`, by identity: ``id -> (network,
#: compiled network or None, lattice key or None)`` (a model passing the same network
#: object again skips its compilation)
_POP_NETS: "OrderedDict[int, tuple[ClosedNetwork, Compiled | None, bytes | None]]" = \
    OrderedDict()
_POP_NETS_KEEP = 16


def _population_route(network: ClosedNetwork) -> tuple[Compiled | None, bytes | None]:
    """The compiled ``network`` and its lattice key when :func:`exact_mva` takes the general
    lattice recursion for it, else ``(None, None)``; kept per network object."""
    with _LATTICES_LOCK:
        got = _POP_NETS.get(id(network))
        if got is not None and got[0] is network:
            _POP_NETS.move_to_end(id(network))
            return got[1], got[2]
    cm: Compiled | None = None
    key: bytes | None = None
    if not (_QD.issuperset(network.kinds) and (
            network.demands.shape[0] == 1 or _simple_product_form(network))):
        cm = compile_network(network)
        # exact_mva's route when the network is not product-form: the lattice recursion
        key = None if cm.simple else _lattice_key(cm)
        if key is None:
            cm = None
    with _LATTICES_LOCK:
        _POP_NETS[id(network)] = (network, cm, key)
        _POP_NETS.move_to_end(id(network))
        while len(_POP_NETS) > _POP_NETS_KEEP:
            _POP_NETS.popitem(last=False)
    return cm, key


def _exact_populations(network: ClosedNetwork, populations: Any, *,
                       max_states: int = DEFAULT_MAX_STATES) -> list[MVAResult]:
    """Exact MVA of ``network`` with each population vector of ``populations``.

    The results of :func:`exact_mva` on ``network`` with its populations replaced
    by each row, bit for bit, for fewer compilations: a row at most
    ``network.populations`` in every chain is read from the kept lattice of
    ``network`` (as :func:`exact_mva` would read it), ``network`` itself being solved
    (its lattice kept when :func:`_exact_lattice` takes it) when no kept lattice holds
    the row; any other row is solved by :func:`exact_mva`.  The compilation of a
    network object is kept for its next call (:func:`_population_route`).  A private
    helper for models that need a network at several populations (the policy
    model's monotone-throughput check, its arrival-theorem network).

    Examples
    --------
    >>> from mva.network import ClosedNetwork
    >>> net = ClosedNetwork(demands=[[1.0, 2.0], [2.0, 1.0]], populations=[3, 3],
    ...                     cs2=[0.5, 0.5], disciplines=["fcfs", "fcfs"])
    >>> a, b = _exact_populations(net, [[3, 3], [1, 2]])
    >>> from dataclasses import replace
    >>> bool(np.array_equal(b.throughput, exact_mva(replace(net, populations=[1, 2])).throughput))
    True
    """
    from dataclasses import replace

    if not isinstance(network, ClosedNetwork):
        raise ValueError(f"network must be a ClosedNetwork; got {type(network).__name__}")
    Ntop = np.asarray(network.populations, dtype=np.int64)
    cm, key = _population_route(network)
    top: MVAResult | None = None

    def solve_top() -> MVAResult:
        return _exact_lattice(cm, int(max_states)) if cm is not None else \
            exact_mva(network, max_states=max_states)

    out = []
    for pop in populations:
        N = np.asarray(pop, dtype=np.int64)
        if N.shape == Ntop.shape and np.array_equal(N, Ntop):
            if top is None:
                top = solve_top()
            out.append(top)
            continue
        hit = None
        if not np.any(N > 0):       # not a network: the error of ClosedNetwork
            replace(network, populations=N.tolist())
        if cm is not None and N.shape == Ntop.shape and np.all(N <= Ntop):
            hit = _lattice_lookup(cm, key, N)
            if hit is None and top is None:
                top = solve_top()               # keeps the lattice the row is read from
                hit = _lattice_lookup(cm, key, N)
        out.append(hit if hit is not None else
                   exact_mva(replace(network, populations=N.tolist()), max_states=max_states))
    return out


def _warn_precision(cm: Compiled, low: float) -> None:
    import warnings

    from .errors import PrecisionWarning
    why = ("priorities or FCFS variability make the network non-product-form"
           if not cm.simple else
           f"more than {_MAX_COMPLEMENT} multi-server / load-dependent stations, or the "
           f"complement networks exceed max_states")
    warnings.warn(
        f"exact MVA computed an idle probability p(0) = {low:.3g} < {P0_FLOOR:g} by subtraction "
        f"at a multi-server or load-dependent station ({why}, so the stable complement "
        f"recursion does not apply): the result may have lost precision", PrecisionWarning,
        stacklevel=4)


def _check_free(free: np.ndarray, Dq: np.ndarray, cm: Compiled, cls: np.ndarray,
                qidx: np.ndarray) -> None:
    bad = (free <= _STARVED) & (Dq > 0)
    if bad.any():
        b, c, k = np.argwhere(bad)[0]
        st = cm.net.station_names[qidx[k]]
        raise SaturationError(
            f"higher-priority classes use {1 - free[b, c, k]:.6g} >= 1 of station {st!r}; class "
            f"{cm.net.class_names[cls[c]]!r} would never be served", bottleneck=st,
            utilization=float(1 - free[b, c, k]))
