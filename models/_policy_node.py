"""Node-level Markov chain of the Fixed / Floating / Single policies (``method="node"``).

Private helper of :mod:`models.policy`: one SMP node as a continuous-time
Markov chain (:func:`mva.markov.build_state_space`) with phase-type handler
times (:func:`mva.phasetype.fit`), coupled to the other (symmetric) nodes by
a fixed point on the rate of remote request messages and on the remote part
of the round trip.  The derivation is on the documentation page
*Protocol-processing policies* (section "The node-level chain").

State ``(c, qs, qw, qy, kind, who, first, phase, a)``:

* ``c`` threads not blocked (computing, preempted by a handler, or ready);
* ``r`` threads whose request is away (network, the remote reply handler),
  split over the Erlang stages of the remote trip (``a``: the index of that
  split among all splits of at most ``n_c`` threads, :func:`_compositions`);
* ``qs``, ``qw`` queued send (``o_req``) and response (``o_resp``) handlers
  of local threads; ``qy`` queued reply handlers (``o_reply``) of requests
  from the other nodes;
* the handler in service: ``kind`` 0 none, 1 send, 2 reply, 3 response;
  ``who`` 0 the dedicated processor, 1 an idle processor (its thread is
  blocked), 2 a processor whose thread is not blocked (interrupted, or
  whose thread became ready while it kept the role); ``first`` 1 when this
  handler carries the interrupt overhead ``O_int``; ``phase`` its PH phase.

Queued handlers are served in random order of type (counts, not sequences:
an approximation of FCFS that keeps the chain small; the means per type are
close, the total is exact for equal handler means).

On two nodes with one compute thread each, :func:`_pair_solve` solves both
nodes as one chain instead (each node's local state as above, and each
thread's position on the outbound and return network legs), which keeps the
correlation between the nodes that the decomposition's independent arrival
stream loses.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

import numpy as np

__all__ = ["solve_point"]

#: most reply handlers queued at one node in the chain (arrivals beyond are blocked; the
#: blocked fraction is reported and drives the saturation flag)
Y_CAP = 16
#: reply-queue cap of the chain's first build; the chain is rebuilt at ``Y_CAP`` when the
#: probability of a full queue there exceeds :data:`Y_TAIL` (most points never fill it)
Y_CAP_FIRST = 6
#: largest probability of a full reply queue accepted at the first (smaller) cap
Y_TAIL = 1e-6
#: most PH phases per handler for near-deterministic handlers (state count grows with it)
MAX_ORDER = 3
#: most compute threads per node with separate queues of send and response handlers (beyond,
#: one queue of local handlers whose kind is drawn when one starts: the state count grows as
#: n_c^2 instead of n_c^3)
SPLIT_THREADS = 4
#: most compute threads per node the chain accepts: the declared domain's largest p (its state
#: count grows as n_c^2 Y_CAP: 2,700-12,500 states at 9-16 threads, a median 0.5 s a point)
MAX_THREADS = 16
#: most Erlang stages of the remote trip per compute-thread count (the trip is deterministic
#: network latency plus the remote reply's residence; an exponential trip adds queueing a
#: near-deterministic machine does not have)
MAX_STAGES = {1: 8, 2: 6, 3: 2, 4: 2}


def _order(n_c: int, merged: bool, fixed: bool) -> int:
    """PH order of the handler fits: fewer phases as the thread part of the chain grows."""
    if n_c <= 2:
        return MAX_ORDER
    if n_c <= 4:
        return 2
    return 2 if n_c <= 8 else 1


def _max_stages(n_c: int) -> int:
    """Most Erlang stages of the remote trip (the chain grows as C(n_c + k, k))."""
    return MAX_STAGES.get(n_c, 1)


def _stages(T_x: float, R_y: float, s_y: float, h_y: float, cs2: float, kmax: int) -> int:
    r"""Erlang stages of the remote trip ``T_x + R_y`` from its squared coefficient of variation.

    The network part :math:`T_x` is deterministic; the remote reply handler's residence
    :math:`R_y` is its service (:math:`h_y` with ``cs2``, the floating overhead
    deterministic) plus a wait :math:`W = R_y - s_y` taken as exponential:
    :math:`c^2 = (cs2\,h_y^2 + W^2) / (T_x + R_y)^2`, ``k = min(kmax, floor(1 / c^2))``.
    """
    W = max(R_y - s_y, 0.0)
    D = T_x + R_y
    if D <= 0:
        return 1
    c2 = (cs2 * h_y * h_y + W * W) / (D * D)
    if c2 <= 0:
        return kmax
    return int(max(1, min(kmax, np.floor(1.0 / c2))))


def _scaled_cs2(cs2: float, h: float, add: float) -> float:
    """cs2 of a handler of mean ``h`` and ``cs2`` plus a deterministic overhead ``add``."""
    m = h + add
    return cs2 * (h / m) ** 2 if m > 0 else 1.0     # (h/m)^2: no underflow of m^2


def _ph(mean: float, cs2: float, order: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(alpha, rates of moving on, exit probabilities) of a two-moment PH fit, as arrays."""
    from mva.phasetype import fit

    mean = max(mean, 1e-9)
    d = fit(mean, cs2, max_order=order, on_unreachable="ignore")
    T = np.asarray(d.T, float)
    alpha = np.asarray(d.alpha, float)
    return alpha, T, -T.sum(axis=1)


@dataclass(frozen=True, kw_only=True)
class _Chain:
    """One node's chain: reachable states (columns of ``S``) and rate-coefficient transitions.

    Transition ``e`` goes from state ``src[e]`` to ``dst[e]`` at rate ``base[e]`` times
    ``1`` (``mode`` 0), the arrival factor ``lambda'`` (1) or ``1/D`` (2).
    """

    S: np.ndarray            # (8, n): c, qs, qw, qy, kind, who, first, phase
    r: np.ndarray            # requests away per state
    src: np.ndarray
    dst: np.ndarray
    base: np.ndarray
    mode: np.ndarray
    arr_unit: np.ndarray     # rate of request arrivals per unit lambda'
    int_unit: np.ndarray     # ... of those that interrupt a computing processor
    blk_unit: np.ndarray     # ... of those refused at the reply-queue cap
    merged: bool
    init: int                # the state "all threads computing, server idle"


def _compositions(n: int, k: int) -> np.ndarray:
    """All ``(a_1, ..., a_k)`` of non-negative integers with sum at most ``n``, one per row."""
    if k == 1:
        return np.arange(n + 1)[:, None]
    rows = [np.concatenate([np.full((len(t), 1), a), t], axis=1)
            for a in range(n + 1) for t in [_compositions(n - a, k - 1)]]
    return np.concatenate(rows)


def _build(n_c: int, M: int, fixed: bool, ph: dict[tuple[int, int], Any], ycap: int,
           C: float, merged: bool, stages: int = 1) -> _Chain:
    """Enumerate one node's chain by vectorised index arithmetic (no per-state Python loop).

    ``stages`` Erlang stages of the remote trip: the away threads are counted per stage
    (a composition, indexed by the last state component).
    """
    comp = _compositions(n_c, stages)                     # (n_comp, stages)
    ncomp = comp.shape[0]
    tot = comp.sum(axis=1)
    code = {tuple(x): i for i, x in enumerate(comp.tolist())}

    def _move(i_from: int | None, i_to: int | None) -> np.ndarray:
        out = np.full(ncomp, -1, dtype=np.int64)
        for a, x in enumerate(comp.tolist()):
            y = list(x)
            if i_from is not None:
                if y[i_from] == 0:
                    continue
                y[i_from] -= 1
            if i_to is not None:
                y[i_to] += 1
            out[a] = code.get(tuple(y), -1)
        return out

    add_a = _move(None, 0)                                # a thread leaves: stage 1
    rm_a = _move(stages - 1, None)                        # a thread returns from the last
    mv_a = [_move(i, i + 1) for i in range(stages - 1)]

    maxord = max(v[1].shape[0] for v in ph.values())
    ordtab = np.ones((4, 2), dtype=np.int64)
    exittab = np.zeros((4, 2, maxord))
    for (kk, ff), (_, T, ex) in ph.items():
        ordtab[kk, ff] = T.shape[0]
        exittab[kk, ff, :T.shape[0]] = ex
    dims = (n_c + 1, n_c + 1, 1 if merged else n_c + 1, ycap + 1, 4, 3, 2, maxord, ncomp)
    G = np.indices(dims[:8]).reshape(8, -1)
    c, qs, qw, qy, k, w, f, j = G
    loc = (k == 1) | (k == 3)
    r = n_c - c - qs - qw - loc
    ok = r >= 0
    ok &= (k != 0) | ((qs == 0) & (qw == 0) & (qy == 0) & (w == 0) & (f == 0) & (j == 0))
    ok &= ((w == 0) & (f == 0)) if fixed else ((k == 0) | (w >= 1))
    ok &= (f == 0) | ((k == 2) & (w == 2))
    ok &= j < ordtab[k, f]
    ok &= qy + (k == 2) <= ycap
    ok &= (w != 1) | (n_c - c >= 1)
    ok &= (w != 2) | (c >= 1)
    G = G[:, ok]
    # each state with r requests away, once per split of them over the stages
    r = r[ok]
    by_tot = np.argsort(tot, kind="stable")
    first = np.searchsorted(tot[by_tot], np.arange(n_c + 1))
    cnt = np.bincount(tot, minlength=n_c + 1)
    rep = np.repeat(np.arange(G.shape[1]), cnt[r])
    pos = np.arange(rep.size) - np.repeat(np.cumsum(cnt[r]) - cnt[r], cnt[r])
    G = np.vstack([G[:, rep], by_tot[first[r[rep]] + pos][None, :]])
    r = r[rep]
    lut = np.full(int(np.prod(dims)), -1, dtype=np.int64)
    lut[np.ravel_multi_index(tuple(G), dims)] = np.arange(G.shape[1])
    n0 = G.shape[1]
    c, qs, qw, qy, k, w, f, j, a = G
    busy = k != 0
    running = c - (busy & (w == 2))
    w0 = 0 if fixed else 1
    out: dict[str, list[np.ndarray]] = {x: [] for x in ("src", "dst", "base", "mode")}
    bad: list[np.ndarray] = []

    def emit(m: np.ndarray, tgt: list, rate: Any, mode: int) -> None:
        idx = np.flatnonzero(m)
        if idx.size == 0:
            return
        comp = [np.broadcast_to(np.asarray(t), m.shape)[idx] if np.ndim(t) else
                np.full(idx.size, int(t)) for t in tgt]
        inb = np.ones(idx.size, bool)
        for x, d in zip(comp, dims):
            inb &= (x >= 0) & (x < d)
        lin = np.ravel_multi_index([np.where(inb, x, 0) for x in comp], dims)
        tgt_i = np.where(inb, lut[lin], -1)
        bad.append(idx[tgt_i < 0])
        g = tgt_i >= 0
        rt = np.broadcast_to(np.asarray(rate, float), m.shape)[idx] if np.ndim(rate) else \
            np.full(idx.size, float(rate))
        out["src"].append(idx[g])
        out["dst"].append(tgt_i[g])
        out["base"].append(rt[g])
        out["mode"].append(np.full(int(g.sum()), mode, dtype=np.int8))

    def start(m: np.ndarray, c2: Any, qs2: Any, qw2: Any, qy2: Any, kk: int, w2: Any, ff: int,
              rate: Any, mode: int, a2: Any = None) -> None:
        alpha = ph[(kk, ff)][0]
        a2 = a if a2 is None else a2
        for jj, al in enumerate(alpha):
            if al > 0:
                emit(m, [c2, qs2, qw2, qy2, kk, w2, ff, jj, a2], np.asarray(rate) * al, mode)
    # a thread ends its computation and issues its request (its send handler)
    m = running > 0
    emit(m & busy, [c - 1, qs + 1, qw, qy, k, w, f, j, a], running / C, 0)
    start(m & ~busy, c - 1, 0, 0, 0, 1, w0, 0, running / C, 0)
    # a request comes back (from the last stage of the remote trip): its response handler
    last = comp[a, stages - 1]
    m = last > 0
    ra = rm_a[a]
    emit(m & busy, [c, qs + 1, qw, qy, k, w, f, j, ra] if merged else
         [c, qs, qw + 1, qy, k, w, f, j, ra], stages * last, 2)
    start(m & ~busy, c, 0, 0, 0, 3, w0, 0, stages * last, 2, ra)
    # the remote trip moves on a stage
    for i in range(stages - 1):
        ni = comp[a, i]
        emit(ni > 0, [c, qs, qw, qy, k, w, f, j, mv_a[i][a]], stages * ni, 2)
    # a request from another node (finite source: M - y senders left)
    y = qy + (k == 2)
    can = y < ycap
    src_n = (M - y).astype(float)
    emit(can & busy, [c, qs, qw, qy + 1, k, w, f, j, a], src_n, 1)
    B = n_c - c
    if fixed:
        start(can & ~busy, c, 0, 0, 0, 2, 0, 0, src_n, 1)
        intr = np.zeros_like(can)
    else:
        start(can & ~busy & (B > 0), c, 0, 0, 0, 2, 1, 0, src_n, 1)
        intr = can & ~busy & (B == 0)
        start(intr, c, 0, 0, 0, 2, 2, 1, src_n, 1)
    arr_unit = np.where(can, src_n, 0.0)
    int_unit = np.where(intr, src_n, 0.0)
    blk_unit = np.where((y >= ycap) & (y < M), (M - y).astype(float), 0.0)
    # PH phase moves
    for (kk, ff), (_, T, _) in ph.items():
        for j1 in range(T.shape[0]):
            for j2 in range(T.shape[0]):
                if j1 != j2 and T[j1, j2] > 0:
                    emit((k == kk) & (f == ff) & (j == j1), [c, qs, qw, qy, k, w, f, j2, a],
                         T[j1, j2], 0)
    # the handler ends
    ex = exittab[k, f, np.minimum(j, maxord - 1)]
    done = busy & (ex > 0)
    # a send's thread leaves for the remote trip (stage 1); a reply's changes nothing local
    aa = add_a[a]
    outcomes: list[tuple[Any, Any, Any, Any, Any]] = [
        (done & (k == 1), c, w, 1.0, aa), (done & (k == 2), c, w, 1.0, a),
        (done & (k == 3) & (w != 1), c + 1, w, 1.0, a)]
    Bs = np.maximum(B, 1)
    outcomes.append((done & (k == 3) & (w == 1), c + 1, 2, 1.0 / Bs, a))
    outcomes.append((done & (k == 3) & (w == 1) & (B > 1), c + 1, 1, 1.0 - 1.0 / Bs, a))
    q = qs + qw + qy
    qd = np.maximum(q, 1)
    for mo, c2, w2, pr, a2 in outcomes:
        rate = ex * pr
        emit(mo & (q == 0), [c2, 0, 0, 0, 0, 0, 0, 0, a2], rate, 0)
        mq = mo & (q > 0)
        w2 = np.where((np.asarray(w2) == 2) & (n_c - np.asarray(c2) > 0), 1, w2)
        start(mq & (qy > 0), c2, qs, qw, qy - 1, 2, w2, 0, rate * qy / qd, 0, a2)
        if merged:
            # one queue of local handlers: the one that starts is a send or a response
            # with probability 1/2 (each request cycle has one of each)
            start(mq & (qs > 0), c2, qs - 1, qw, qy, 1, w2, 0, 0.5 * rate * qs / qd, 0, a2)
            start(mq & (qs > 0), c2, qs - 1, qw, qy, 3, w2, 0, 0.5 * rate * qs / qd, 0, a2)
        else:
            start(mq & (qs > 0), c2, qs - 1, qw, qy, 1, w2, 0, rate * qs / qd, 0, a2)
            start(mq & (qw > 0), c2, qs, qw - 1, qy, 3, w2, 0, rate * qw / qd, 0, a2)
    cat = {x: np.concatenate(v) if v else np.zeros(0) for x, v in out.items()}
    src, dst = cat["src"].astype(np.int64), cat["dst"].astype(np.int64)
    # keep the states reachable from "all threads computing, server idle"
    init = int(lut[np.ravel_multi_index((n_c, 0, 0, 0, 0, 0, 0, 0, 0), dims)])
    keep = _reachable(src, dst, n0, init)
    reach = np.flatnonzero(keep)
    badsrc = np.concatenate(bad) if bad else np.zeros(0, np.int64)
    if np.any(keep[badsrc]):
        raise RuntimeError("policy node chain: a reachable state leads outside the state space")
    newi = np.full(n0, -1, dtype=np.int64)
    newi[reach] = np.arange(reach.size)
    e = keep[src] & (src != dst)
    return _Chain(S=G[:, reach], r=r[reach], src=newi[src[e]], dst=newi[dst[e]],
                  base=cat["base"][e], mode=cat["mode"][e].astype(np.int8),
                  arr_unit=arr_unit[reach],
                  int_unit=int_unit[reach], blk_unit=blk_unit[reach], merged=merged,
                  init=int(newi[init]))


def _reachable(src: np.ndarray, dst: np.ndarray, n: int, start: int) -> np.ndarray:
    """Which of ``n`` states the edges ``src -> dst`` reach from ``start`` (boolean mask).

    Breadth-first search by whole frontiers over the edges sorted by source (the set
    ``scipy.sparse.csgraph.breadth_first_order`` visits, without importing it).
    """
    order = np.argsort(src, kind="stable")
    tgt = dst[order]
    ptr = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(np.bincount(src, minlength=n), out=ptr[1:])
    seen = np.zeros(n, bool)
    seen[start] = True
    stamp = np.zeros(n, dtype=np.int64)
    front = np.array([start])
    while front.size:
        lo, hi = ptr[front], ptr[front + 1]
        cnt = hi - lo
        idx = np.repeat(lo - np.cumsum(cnt) + cnt, cnt) + np.arange(int(cnt.sum()))
        nxt = tgt[idx]
        nxt = nxt[~seen[nxt]]
        # each new state once (its last occurrence), without sorting
        stamp[nxt] = np.arange(nxt.size)
        front = nxt[stamp[nxt] == np.arange(nxt.size)]
        seen[front] = True
    return seen


def _pattern(ch: _Chain, n: int, ref: int) -> dict[str, Any]:
    """Sparsity pattern of the balance system with ``pi_ref = 1`` (built once per chain).

    The system's values are then refilled from the transition rates by one
    :func:`numpy.bincount` per solve (:func:`_system`): only the rates change
    between the iterations of the fixed point (the arrival factor and the
    remote trip), never the pattern.
    """
    m = n - 1
    new = np.arange(n) - (np.arange(n) > ref)
    keep = (ch.dst != ref) & (ch.src != ref)
    ar = np.delete(np.arange(n), ref)
    rows = new[np.concatenate([ch.dst[keep], ar])]
    cols = new[np.concatenate([ch.src[keep], ar])]
    uk, inv = np.unique(cols * m + rows, return_inverse=True)   # CSC order: by column, row
    indptr = np.concatenate([[0], np.cumsum(np.bincount(uk // m, minlength=m))])
    e0 = (ch.src == ref) & (ch.dst != ref)
    return dict(ref=ref, keep=keep, ar=ar, inv=np.ravel(inv), nnz=uk.size,
                indices=(uk % m).astype(np.int32), indptr=indptr.astype(np.int32),
                e0=e0, bidx=new[ch.dst[e0]])


@dataclass(frozen=True)
class _Csc:
    """A square sparse matrix in canonical compressed-column form (SciPy's CSC arrays).

    The balance systems are kept as these arrays and handed to SciPy's compiled
    SuperLU and matrix-vector product (:mod:`mva._scipy_kernels`), which gives
    what ``scipy.sparse.csc_array`` and ``splu`` give without importing them.
    """

    data: np.ndarray
    indices: np.ndarray      # int32 row of each entry, increasing within a column
    indptr: np.ndarray       # int32 start of each column in ``data``
    m: int

    def __matmul__(self, x: np.ndarray) -> np.ndarray:
        from mva._scipy_kernels import csc_matvec

        return csc_matvec(self.data, self.indices, self.indptr, self.m, x)

    def __abs__(self) -> _Csc:
        return _Csc(np.abs(self.data), self.indices, self.indptr, self.m)


def _system(ch: _Chain, rate: np.ndarray, n: int,
            pat: Mapping[str, Any]) -> tuple[_Csc, np.ndarray]:
    """Balance equations of every state but ``ref``, with ``pi_ref = 1``: (matrix, rhs).

    Fixing one component instead of replacing an equation by the normalisation keeps
    the system free of a dense row, so the sparse LU fills in little.  The matrix is
    the transpose of the generator without the reference state's row and column:
    each column sums to the rate into ``ref`` (column diagonally dominant).
    """
    out = np.bincount(ch.src, weights=rate, minlength=n)
    vals = np.concatenate([rate[pat["keep"]], -out[pat["ar"]]])
    data = np.bincount(pat["inv"], weights=vals, minlength=pat["nnz"])
    A = _Csc(data, pat["indices"], pat["indptr"], n - 1)
    b = -np.bincount(pat["bidx"], weights=rate[pat["e0"]], minlength=n - 1)
    return A, b


def _backward_ok(A: _Csc, x: np.ndarray, b: np.ndarray, tol: float) -> bool:
    """Whether ``x`` solves ``A x = b`` to the normwise backward error ``tol``."""
    if not np.all(np.isfinite(x)):
        return False
    scale = float(np.max(abs(A) @ np.abs(x) + np.abs(b)))
    return scale > 0 and float(np.max(np.abs(A @ x - b))) <= tol * scale


def _factor(A: _Csc, pivot: bool = False) -> Any:
    """Sparse LU of a balance system: symmetric-pattern ordering without pivoting.

    The matrix is column diagonally dominant (:func:`_system`), for which Gaussian
    elimination needs no pivoting (it would not pivot anyway); the minimum-degree
    ordering of :math:`A + A^T` then fills in about half as much as the default
    column ordering with partial pivoting and factors 2 to 3 times faster.
    ``pivot``: SciPy's default (COLAMD, partial pivoting) instead.  The factor is
    ``scipy.sparse.linalg.splu``'s, through :func:`mva._scipy_kernels.splu_csc`.

    The dominance is only weak in the columns of states with no transition into the
    reference state, and the factorisation on the symmetric-mode ordering can fail
    with "Factor is exactly singular" (a Fixed point of the declared domain, ``p=9``
    on 3 nodes: ``tests/models/test_policy_node.py``); it is then redone with
    SciPy's default ordering and partial pivoting.
    """
    from mva._scipy_kernels import splu_csc

    if not pivot:
        try:
            return splu_csc(A.data, A.indices, A.indptr, A.m, permc_spec="MMD_AT_PLUS_A",
                            diag_pivot_thresh=0.0, options=dict(SymmetricMode=True))
        except RuntimeError:            # a zero pivot by cancellation: pivot after all
            pass
    return splu_csc(A.data, A.indices, A.indptr, A.m)


def _dot(x: np.ndarray, y: np.ndarray) -> float:
    """``x @ y`` of two vectors without BLAS (:func:`numpy.einsum`'s own loop).

    OpenBLAS splits a dot product of more than 10,000 elements over its threads;
    on a machine whose cores are busy, each such call then waits milliseconds for
    them (the chains of 11-16 threads have 10,000-12,500 states: GMRES's
    Gram-Schmidt loop took 80% of a solve there).  Single-threaded, the product
    costs microseconds.
    """
    return float(np.einsum("i,i->", x, y))


def _norm(x: np.ndarray) -> float:
    """Euclidean norm of a vector by :func:`_dot` (``numpy.linalg.norm`` calls BLAS)."""
    return float(np.sqrt(_dot(x, x)))


def _gmres(A: _Csc, M: Any, b: np.ndarray, x: np.ndarray, tol: float, restart: int,
           cycles: int) -> tuple[np.ndarray, bool, int]:
    r"""Restarted GMRES, right-preconditioned by ``M`` (a function: :math:`M^{-1} v`).

    Stops when :math:`\|b - A x\|_2 \le` ``tol`` :math:`\|b\|_2` (the true
    residual at each restart, the Givens estimate within a cycle), or after
    ``cycles`` cycles of at most ``restart`` steps; returns ``(x, converged,
    steps)`` (``steps``: preconditioner applications).
    Modified Gram-Schmidt Arnoldi with Givens rotations (Saad and Schultz 1986).
    """
    atol = tol * _norm(b)
    if atol == 0.0:
        return np.zeros_like(b), True, 0
    n = b.size
    steps = 0
    for _ in range(cycles):
        r = b - A @ x
        beta = _norm(r)
        if beta <= atol:
            return x, True, steps
        V = np.empty((restart + 1, n))
        Z = np.empty((restart, n))
        H = np.zeros((restart + 1, restart))
        cs, sn = np.zeros(restart), np.zeros(restart)
        g = np.zeros(restart + 1)
        g[0] = beta
        V[0] = r / beta
        k = 0
        for j in range(restart):
            Z[j] = M(V[j])
            steps += 1
            w = A @ Z[j]
            for i in range(j + 1):
                H[i, j] = _dot(V[i], w)
                w -= H[i, j] * V[i]
            h = _norm(w)
            for i in range(j):                 # the earlier rotations on the new column
                t = cs[i] * H[i, j] + sn[i] * H[i + 1, j]
                H[i + 1, j] = -sn[i] * H[i, j] + cs[i] * H[i + 1, j]
                H[i, j] = t
            d = float(np.hypot(H[j, j], h))
            cs[j], sn[j] = (H[j, j] / d, h / d) if d > 0 else (1.0, 0.0)
            H[j, j] = d
            g[j + 1] = -sn[j] * g[j]
            g[j] *= cs[j]
            k = j + 1
            if h == 0.0 or abs(g[j + 1]) <= atol:
                break
            V[j + 1] = w / h
        if H[k - 1, k - 1] == 0.0:
            break
        y = np.linalg.solve(np.triu(H[:k, :k]), g[:k])
        x = x + np.einsum("i,ij->j", y, Z[:k])
    return x, _norm(b - A @ x) <= atol, steps


#: GMRES steps of a solve beyond which the next solve refactorises at its rates instead
#: (the factorisation has drifted too far from the rates; a factorisation of the chains
#: of 2-8 threads costs about as much as 40-80 of its triangular solves)
GMRES_REFACTOR_STEPS = 20

#: work of one triangular solve (forward and back substitution) relative to a
#: factorisation, per non-zero of the factors (for the work budget: measured on the
#: chains of 9-16 threads, a solve costs 1/10 to 1/30 of their factorisation)
SOLVE_WORK = 0.1


def _stationary(ch: _Chain, rate: np.ndarray, n: int, cache: dict[str, Any],
                tol: float = 1e-11) -> np.ndarray:
    """Stationary vector of the chain at transition rates ``rate``.

    The first call factorises the system (:func:`_factor`) with the reference
    state (the one whose probability is fixed) at ``cache["ref0"]`` (the previous
    chain's reference state when the chain is rebuilt) or "all threads computing", and
    again at the most probable state if that one is more than 1000 times
    likelier; later calls of the same fixed point, whose rates differ only by
    the arrival factor and the remote delay, solve by GMRES (:func:`_gmres`)
    preconditioned with that factorisation and started from the previous
    solution, to the backward error ``tol`` (the fixed point asks for less
    while it is far from converged), and refactorise at the current rates
    when 40 GMRES steps do not reach it.

    ``cache["work"]`` accumulates the solve's work in non-zeros of the LU factors:
    each factorisation adds the factors' non-zeros (``SuperLU.nnz``), each
    triangular solve (a direct solve or a GMRES step) :data:`SOLVE_WORK` times
    that (a deterministic measure of cost for the budget of :func:`solve_point`).
    """
    if n == 1:
        return np.ones(1)
    if "pat" not in cache:
        cache["pat"] = _pattern(ch, n, cache.get("ref0", ch.init))
    A, b = _system(ch, rate, n, cache["pat"])
    x = None
    if "lu" in cache and cache.get("steps", 0) <= GMRES_REFACTOR_STEPS:
        x, _, cache["steps"] = _gmres(A, cache["lu"].solve, b, cache["x"], tol, restart=20,
                                      cycles=2)
        cache["work"] = cache.get("work", 0.0) + SOLVE_WORK * cache["steps"] * cache["lu"].nnz
        if not _backward_ok(A, x, b, max(tol, 1e-13)):
            x = None
    else:
        cache["steps"] = 0
    if x is None:
        lu = _factor(A)
        x = lu.solve(b)
        cache["work"] = cache.get("work", 0.0) + (1.0 + SOLVE_WORK) * lu.nnz
        top = int(np.argmax(x))
        if x[top] > 1e3:                       # re-anchor at the most probable state
            ref = cache["pat"]["ref"]
            cache["pat"] = _pattern(ch, n, top + (top >= ref))
            A, b = _system(ch, rate, n, cache["pat"])
            lu = _factor(A)
            x = lu.solve(b)
            cache["work"] += (1.0 + SOLVE_WORK) * lu.nnz
        if not _backward_ok(A, x, b, 1e-10):   # no pivoting went wrong: pivot after all
            lu = _factor(A, pivot=True)
            x = lu.solve(b)
            cache["work"] += (1.0 + SOLVE_WORK) * lu.nnz
        cache["lu"] = lu
    cache["x"] = x
    pi = np.insert(x, cache["pat"]["ref"], 1.0)
    pi = np.maximum(pi, 0.0)
    return pi / pi.sum()


#: past iterates kept by the Anderson acceleration of the node chain's fixed point
ANDERSON_MEMORY = 3
#: mixing (damping) of the fixed point's plain step
DAMPING = 0.7


class _Anderson:
    r"""Anderson acceleration (type II) of a fixed point :math:`z = G(z)` in few unknowns.

    With :math:`f_k = G(z_k) - z_k` and the differences :math:`\Delta Z, \Delta F` of
    the last ``memory`` iterates, :math:`\gamma = \arg\min \|f_k - \Delta F
    \gamma\|` and :math:`z_{k+1} = z_k + \beta f_k - (\Delta Z + \beta \Delta F)
    \gamma`; the history restarts when the residual more than doubles, and a step
    is at most 1 (a factor :math:`e` on the rate and the delay, which are iterated
    as logarithms).  When the residual has not halved for ``memory + 2`` steps (a
    cycle of large steps, seen on saturated nodes) the acceleration is dropped and
    the mixing halved at each further stall (at least 0.02).
    Without history it is the damped step :math:`z + \beta f` (Walker and Ni 2011).
    """

    def __init__(self, memory: int, beta: float) -> None:
        self.memory, self.beta = memory, beta
        self.Z: list[np.ndarray] = []
        self.F: list[np.ndarray] = []
        self.best, self.stall = np.inf, 0

    def step(self, z: np.ndarray, g: np.ndarray) -> np.ndarray:
        f = g - z
        r = float(np.max(np.abs(f)))
        if r < 0.5 * self.best:
            self.best, self.stall = r, 0
        else:
            self.stall += 1
        if self.stall > self.memory + 2:
            # no progress (a cycle of large steps): plain steps, mixing halved
            self.Z, self.F = [], []
            self.beta, self.stall, self.best = max(self.beta / 2, 0.02), 0, r
            self.memory = 0
        if self.F and r > 2.0 * np.max(np.abs(self.F[-1])):
            self.Z, self.F = [], []
        self.Z.append(z.copy())
        self.F.append(f.copy())
        self.Z, self.F = self.Z[-self.memory - 1:], self.F[-self.memory - 1:]
        dz = self.beta * f
        if len(self.F) > 1:
            dF = np.diff(np.array(self.F), axis=0).T
            dZ = np.diff(np.array(self.Z), axis=0).T
            gamma = np.linalg.lstsq(dF, f, rcond=1e-10)[0]
            dz = dz - (dZ + self.beta * dF) @ gamma
        if not np.all(np.isfinite(dz)):
            self.Z, self.F = [], []
            dz = self.beta * f
        return z + np.clip(dz, -1.0, 1.0)


def solve_point(v: dict[str, float], policy: str, *, tol: float = 1e-7,
                max_iter: int = 200, max_work: float | None = None) -> dict[str, Any]:
    r"""Solve the node chain of one parameter point (floats in ``v``) by the fixed point.

    Parameters
    ----------
    v : dict of str to float
        ``p, nodes, o_req, o_reply, o_resp, L, O_int, o_direct, o_indirect,
        t_transfer, o_dispatch, t_extra, handler_cs2, C`` of one point.
    policy : {"fixed", "floating", "single"}
    tol, max_iter : float, int
        Relative tolerance and most iterations of the fixed point.
    max_work : float, optional
        Budget of the linear solves in non-zeros of the LU factors (see
        :func:`_stationary`; 20-60 ns of CPU each on the development machine):
        past it the fixed point stops unconverged (``conv`` False, ``over_budget``
        True).  None: no budget.

    Returns
    -------
    dict
        ``R, X, R_w, R_q, R_y, R_r, U, D, P_all, P_int, P_blk`` (blocked
        arrivals per request), ``conv, it, res``, ``states`` and ``asym``
        (two-node chain: relative difference of the two nodes' throughputs,
        0 by symmetry up to rounding; 0 for the decomposition), ``work``
        (the linear solves' work, as ``max_work``; 0 for the two-node chain) and
        ``over_budget``.

    Notes
    -----
    With two nodes and at most :data:`PAIR_THREADS` compute threads per node,
    both nodes are solved as one chain (:func:`_pair_solve`, no fixed point).
    Otherwise the fixed point: :math:`\lambda' \leftarrow \lambda' X / \Lambda_{in}`,
    :math:`D \leftarrow 2L + t_{extra} + [\text{Fixed}] t_{transfer} + E[y] /
    \Lambda_{in}`, on :math:`(\log \lambda', \log D)` with Anderson acceleration
    (:class:`_Anderson`), until both change by less than ``tol`` relatively;
    the remote trip has :func:`_stages` Erlang stages, chosen at the
    contention-free :math:`E[y]/\Lambda_{in}` and once more at the converged
    one (the chain is rebuilt if that changes them).  The reply queue is
    first capped at :data:`Y_CAP_FIRST` and the chain rebuilt at
    :data:`Y_CAP` (warm-started) when a full queue has probability above
    :data:`Y_TAIL` or the fixed point fails there.

    Examples
    --------
    >>> v = dict(p=2, nodes=2, o_req=100, o_reply=100, o_resp=100, L=100, O_int=200,
    ...          o_direct=40, o_indirect=60, t_transfer=100, o_dispatch=0, t_extra=0,
    ...          handler_cs2=1.0, C=600.0)
    >>> r = solve_point(v, "single")
    >>> r["conv"], round(r["X"] * r["R"], 12), 0 < r["P_int"] < 1
    (True, 1.0, True)
    """
    fixed = policy == "fixed"
    p = int(round(v["p"]))
    n_c = p - 1 if fixed else (1 if policy == "single" else p)
    N = int(round(v["nodes"]))
    M = (N - 1) * n_c
    ycap = min(M, Y_CAP)
    extra = 0.0 if fixed else v["o_direct"] + v["o_indirect"]
    disp = v["o_dispatch"]
    cs2 = v["handler_cs2"]
    O = 0.0 if fixed else v["O_int"]
    means = {1: v["o_req"] + disp, 2: v["o_reply"] + disp, 3: v["o_resp"] + disp}
    T_x = 2.0 * v["L"] + v["t_extra"] + (v["t_transfer"] if fixed else 0.0)
    # no computation (U = 0): a compute phase 1e-6 of the cycle's other times (the chain
    # needs a finite rate; the throughput changes by that relative amount at most)
    floor = 1e-6 * (T_x + sum(means.values()) + 3 * extra + O + 1.0)
    C = max(v["C"], floor)
    if n_c > MAX_THREADS:
        raise ValueError(f"method='node' handles at most {MAX_THREADS} compute threads per node "
                         f"(a solve costs seconds beyond); got {n_c} (p={p}, policy={policy!r}): "
                         "use method='exact', 'schweitzer' or 'fixed-point' there")
    merged = n_c > SPLIT_THREADS
    order = _order(n_c, merged, fixed)
    handlers = [(kk, first) for kk in means for first in ((0,) if fixed else (0, 1))]
    if N == 2 and n_c <= PAIR_THREADS:
        # two nodes, one thread each: both nodes in one chain (their correlation kept)
        php = {key: _ph(means[key[0]] + extra + (O if key[1] else 0.0),
                        _scaled_cs2(cs2, means[key[0]], extra + (O if key[1] else 0.0)),
                        PAIR_ORDER) for key in handlers}
        out = _pair_solve(v, policy, n_c, php, means, extra, O, T_x, C, PAIR_LEGS)
        if out is not None:
            return {**out, "work": 0.0, "over_budget": False}
    # the decomposition's handler fits (not needed by the two-node chain)
    ph: dict[tuple[int, int], Any] = {}
    for kk, first in handlers:
        h = means[kk]
        add = extra + (O if first else 0.0)
        m = h + add
        ph[(kk, first)] = _ph(m, _scaled_cs2(cs2, h, add), order)
    X = n_c / (C + T_x + sum(means.values()) + 3 * extra)      # contention-free start
    lam = X / max(M, 1)
    D = T_x + means[2] + extra
    s_y = means[2] + extra
    kmax = _max_stages(n_c)
    stages = _stages(T_x, s_y, s_y, means[2], cs2, kmax)
    lam0, D0 = lam, D
    it_all, built, restaged = 0, 0, False
    work, over = 0.0, False
    # the reply queue is first truncated at Y_CAP_FIRST, and at ycap if that loses mass
    cap = min(ycap, Y_CAP_FIRST)
    anchor: np.ndarray | None = None
    while True:
        ch = _build(n_c, M, fixed, ph, cap, C, merged, stages)
        built += 1
        n = ch.S.shape[1]
        c_, qs_, qw_, qy_, kind_, who_ = (ch.S[i] for i in range(6))
        y_ = qy_ + (kind_ == 2)
        running = c_ - ((kind_ != 0) & (who_ == 2))
        it, conv, res = 0, False, np.inf
        pi: np.ndarray | None = None
        cache: dict[str, Any] = {}
        if anchor is not None:
            # the previous chain's reference state, if this chain has it: one factorisation
            # at the right reference instead of two (see _stationary)
            hit = np.flatnonzero(np.all(ch.S == anchor[:, None], axis=0))
            if hit.size:
                cache["ref0"] = int(hit[0])
        R_y = s_y
        acc = _Anderson(ANDERSON_MEMORY, DAMPING)
        z = np.log([lam, D])
        abandoned = False
        for it in range(1, max_iter + 1):
            lam, D = np.exp(z)
            rate = ch.base * np.array([1.0, lam, 1.0 / D])[ch.mode]
            # the linear solves need only be a little more accurate than the fixed point
            pi = _stationary(ch, rate, n, cache, tol=float(np.clip(1e-3 * res, 1e-12, 1e-6)))
            if max_work is not None and work + cache.get("work", 0.0) > max_work:
                over = True                    # out of budget: unconverged
                break
            X_new = _dot(pi, running) / C
            arr = lam * _dot(pi, ch.arr_unit)
            R_y = _dot(pi, y_) / arr if arr > 0 else means[2]
            D_new = max(T_x + R_y, floor)      # floor: no network time and no reply queue
            lam_new = max(lam * X_new / arr if arr > 0 else lam, 1e-300)
            res = max(abs(lam_new / lam - 1.0), abs(D_new / D - 1.0))
            if res < tol:
                conv = True
                break
            if cap < ycap and it >= 2 and _dot(pi, (y_ >= cap)) > 100 * Y_TAIL:
                abandoned = True               # the small cap will not do: rebuild now
                break
            z = acc.step(z, np.log([lam_new, D_new]))
        it_all += it
        work += cache.get("work", 0.0)
        if over:
            break
        assert pi is not None              # the loop above solved the chain at least once
        # the state compositions keep their meaning while the stage count does
        anchor = ch.S[:, cache["pat"]["ref"]].copy() if "pat" in cache else None
        anchor_stages = stages
        # the truncation: the probability of a full reply queue bounds what it loses
        if cap < ycap and (not conv or _dot(pi, (y_ >= cap)) > Y_TAIL):
            cap = ycap
            if not conv and not abandoned:     # failed: again from the contention-free point
                lam, D = lam0, D0
            continue
        if not conv:
            break
        # the remote trip's stage count from its converged mean and variance (once more)
        k2 = _stages(T_x, R_y, s_y, means[2], cs2, kmax)
        if k2 == stages or restaged:
            break
        stages, restaged = k2, True
        if anchor_stages != stages:
            anchor = None
    it = it_all
    assert pi is not None
    X = _dot(pi, running) / C
    busy = _dot(pi, (kind_ != 0))
    P_int = lam * _dot(pi, ch.int_unit) / X
    P_blk = lam * _dot(pi, ch.blk_unit) / X
    if merged:   # queued local handlers: half sends, half responses
        q_send = q_resp = 0.5 * qs_
    else:
        q_send, q_resp = qs_, qw_
    R_q = _dot(pi, (q_send + (kind_ == 1))) / X
    R_r = _dot(pi, (q_resp + (kind_ == 3))) / X
    R_yv = _dot(pi, y_) / X
    R_w = _dot(pi, c_) / X
    R = n_c / X
    D_pp = sum(means.values()) + 3 * extra
    P_all = _dot(pi, ((n_c - c_) == 0))
    return dict(R=R, X=X, R_w=R_w, R_q=R_q, R_y=R_yv, R_r=R_r, U=busy, D=D_pp + P_int * O,
                P_all=P_all, P_int=P_int, P_blk=P_blk, conv=conv, it=it, res=float(res),
                asym=0.0, states=n, work=work, over_budget=over)


#: most joint states of the two-node chain (``nodes == 2``) built by :func:`_pair_chain`
PAIR_MAX_STATES = 20_000
#: most PH phases per handler in the two-node chain (fewer where the handler's cs2 allows)
PAIR_ORDER = 12
#: Erlang stages of each (deterministic) network leg in the two-node chain
PAIR_LEGS = 6
#: most compute threads per node for the two-node chain (its state count grows as the
#: square of one node's)
PAIR_THREADS = 1


def _completion(k: int, w: int, c: int, n_c: int) -> tuple[int, list[tuple[int, int, float]]]:
    """The end of the handler in service (kind ``k``) at one node of the two-node chain.

    Returns its ``tag`` as in :func:`_pair_local` (1 a send ended, 2 a reply ended,
    0 nothing leaves) and the successors' ``(c, w, probability)``; ``k == 3``
    adds a computing thread, split ``1 / B`` and ``1 - 1 / B`` over ``w`` when
    ``w == 1`` (``B = n_c - c``).  Shared by the numeric reference
    (:func:`_pair_local`) and the structure enumeration (:func:`_pair_local_sym`).
    """
    tag = 1 if k == 1 else (2 if k == 2 else 0)
    B = n_c - c
    if k != 3:
        return tag, [(c, w, 1.0)]
    if w != 1:
        return tag, [(c + 1, w, 1.0)]
    return tag, [(c + 1, 2, 1.0 / B)] + ([(c + 1, 1, 1.0 - 1.0 / B)] if B > 1 else [])


def _pair_local(n_c: int, fixed: bool, ph: dict[tuple[int, int], Any], C: float):
    """Transition functions of one node of the two-node chain (local state as in ``_build``).

    Returns ``(internal, arrive_reply, arrive_response)``: ``internal(s)`` lists
    ``(s', rate, tag)`` with ``tag`` 0 (nothing leaves), 1 (a send ended: the thread
    leaves on the network) or 2 (a reply ended: the other node's thread goes back);
    ``arrive_reply(s)`` and ``arrive_response(s)`` list ``(s', probability, interrupt)``.
    """
    w0 = 0 if fixed else 1

    def start(c: int, qs: int, qw: int, qy: int, kk: int, w: int, ff: int, p: float):
        return [((c, qs, qw, qy, kk, w, ff, jj), p * float(al), ff == 1)
                for jj, al in enumerate(ph[(kk, ff)][0]) if al > 0]

    def internal(s):
        c, qs, qw, qy, k, w, f, j = s
        busy = k != 0
        out = []
        running = c - (1 if (busy and w == 2) else 0)
        if running > 0:
            if busy:
                out.append(((c - 1, qs + 1, qw, qy, k, w, f, j), running / C, 0))
            else:
                out += [(t, running / C * p, 0) for t, p, _ in start(c - 1, 0, 0, 0, 1, w0, 0, 1.0)]
        if busy:
            _, T, ex = ph[(k, f)]
            for j2 in range(T.shape[0]):
                if j2 != j and T[j, j2] > 0:
                    out.append(((c, qs, qw, qy, k, w, f, j2), float(T[j, j2]), 0))
            e = float(ex[j])
            if e > 0:
                tag, outs = _completion(k, w, c, n_c)
                q = qs + qw + qy
                for c2, w2, pr in outs:
                    if q == 0:
                        out.append(((c2, 0, 0, 0, 0, 0, 0, 0), e * pr, tag))
                        continue
                    if w2 == 2 and n_c - c2 > 0:
                        w2 = 1
                    for cond, args, pp in ((qy > 0, (c2, qs, qw, qy - 1, 2), qy / q),
                                           (qs > 0, (c2, qs - 1, qw, qy, 1), qs / q),
                                           (qw > 0, (c2, qs, qw - 1, qy, 3), qw / q)):
                        if cond:
                            out += [(t, e * pr * p2, tag)
                                    for t, p2, _ in start(*args, w2, 0, pp)]
        return out

    def arrive_reply(s):
        c, qs, qw, qy, k, w, f, j = s
        if k != 0:
            return [((c, qs, qw, qy + 1, k, w, f, j), 1.0, False)]
        if fixed:
            return start(c, 0, 0, 0, 2, 0, 0, 1.0)
        if n_c - c > 0:
            return start(c, 0, 0, 0, 2, 1, 0, 1.0)
        return start(c, 0, 0, 0, 2, 2, 1, 1.0)

    def arrive_response(s):
        c, qs, qw, qy, k, w, f, j = s
        if k != 0:
            return [((c, qs, qw + 1, qy, k, w, f, j), 1.0, False)]
        return start(c, 0, 0, 0, 3, w0, 0, 1.0)

    return internal, arrive_reply, arrive_response


def _memo(f: Any) -> Any:
    """``f`` with its results kept per argument (the lists are shared: read only)."""
    seen: dict[Any, Any] = {}

    def g(s: Any) -> Any:
        r = seen.get(s)
        if r is None:
            r = seen[s] = f(s)
        return r
    return g


def _bump(t: tuple, i: int, d: int) -> tuple:
    """``t`` with ``d`` added to its entry ``i`` (a two-node chain state's counts)."""
    x = list(t)
    x[i] += d
    return tuple(x)


def _pair_view(st: tuple, who: int) -> tuple:
    """A two-node state seen from node ``who``: its own three parts first."""
    return (st[0], st[1], st[2], st[3], st[4], st[5]) if who == 0 else \
           (st[3], st[4], st[5], st[0], st[1], st[2])


def _pair_join(mine: tuple, other: tuple, who: int) -> tuple:
    """The two-node state whose node ``who`` holds ``mine`` (inverse of :func:`_pair_view`)."""
    return mine + other if who == 0 else other + mine


def _pair_solve_ref(v: dict[str, float], policy: str, n_c: int, ph: dict[tuple[int, int], Any],
                    means: dict[int, float], extra: float, O: float, T_x: float, C: float,
                    legs: int) -> dict[str, Any] | None:
    """Both nodes of a two-node machine as one chain, enumerated here: ``None`` if too big.

    The reference of :func:`_pair_solve` (which reads the same chain's structure from
    :func:`_pair_structure`, shipped or cached, and gives bit-identical results).

    A joint state is ``(local A, out A, back A, local B, out B, back B)``: each node's
    local state as in ``_build`` (its reply queue holds the other node's threads) and
    its own away threads counted per Erlang stage of the outbound and return network
    legs (``legs`` stages of mean ``T_x / 2`` each); a thread's request reaches the
    other node's reply queue at the end of the outbound leg, and its reply handler's
    end starts the return leg.  This keeps the correlation between the two nodes that
    the decomposition's independent arrival stream loses.
    """
    fixed = policy == "fixed"
    # a node's local transitions depend only on its local state, which recurs in many
    # joint states: each is computed once
    internal, arr_y, arr_r = (_memo(f) for f in _pair_local(n_c, fixed, ph, C))
    rate_leg = legs / (T_x / 2.0) if T_x > 0 else None
    init_local = (n_c, 0, 0, 0, 0, 0, 0, 0)
    zero = (0,) * legs
    init = (init_local, zero, zero, init_local, zero, zero)
    index = {init: 0}
    states = [init]
    src: list[int] = []
    dst: list[int] = []
    rates: list[float] = []
    intr: list[float] = []          # rate of interrupting arrivals at node A, per state

    bump, nodes_, join = _bump, _pair_view, _pair_join

    k = 0
    while k < len(states):
        st = states[k]
        succ: dict[tuple, float] = {}
        ia = 0.0
        for who in (0, 1):
            s = nodes_(st, who)
            la, oa, ba, lb, ob, bb = s
            for t, rt, tag in internal(la):
                if tag == 1:      # the send ended: the thread starts the outbound leg
                    mine = (t, bump(oa, 0, 1), ba) if rate_leg else None
                    if mine is None:      # no network time: straight into the other queue
                        for tb, p, it_ in arr_y(lb):
                            nxt = join((t, oa, ba), (tb, ob, bb), who)
                            succ[nxt] = succ.get(nxt, 0.0) + rt * p
                            if it_ and who == 1:      # it interrupts node A
                                ia += rt * p
                        continue
                    nxt = join(mine, (lb, ob, bb), who)
                elif tag == 2:    # a reply ended: the other node's thread starts back
                    if rate_leg:
                        nxt = join((t, oa, ba), (lb, ob, bump(bb, 0, 1)), who)
                    else:
                        for tb, p, _ in arr_r(lb):
                            nxt = join((t, oa, ba), (tb, ob, bb), who)
                            succ[nxt] = succ.get(nxt, 0.0) + rt * p
                        continue
                else:
                    nxt = join((t, oa, ba), (lb, ob, bb), who)
                succ[nxt] = succ.get(nxt, 0.0) + rt
            if not rate_leg:
                continue
            for i in range(legs):
                for leg, cnt in ((0, oa[i]), (1, ba[i])):
                    if cnt == 0:
                        continue
                    r = rate_leg * cnt
                    vec = oa if leg == 0 else ba
                    if i + 1 < legs:
                        v2 = bump(bump(vec, i, -1), i + 1, 1)
                        mine = (la, v2, ba) if leg == 0 else (la, oa, v2)
                        nxt = join(mine, (lb, ob, bb), who)
                        succ[nxt] = succ.get(nxt, 0.0) + r
                    elif leg == 0:      # the request reaches the other node
                        for tb, p, it_ in arr_y(lb):
                            nxt = join((la, bump(oa, i, -1), ba), (tb, ob, bb), who)
                            succ[nxt] = succ.get(nxt, 0.0) + r * p
                            if it_ and who == 1:
                                ia += r * p
                    else:               # the reply comes home: the response handler
                        for ta, p, _ in arr_r(la):
                            nxt = join((ta, oa, bump(ba, i, -1)), (lb, ob, bb), who)
                            succ[nxt] = succ.get(nxt, 0.0) + r * p
        intr.append(ia)
        for nxt, rt in succ.items():
            j = index.get(nxt)
            if j is None:
                j = index[nxt] = len(states)
                states.append(nxt)
                if len(states) > PAIR_MAX_STATES:
                    return None
            if j != k:
                src.append(k)
                dst.append(j)
                rates.append(rt)
        k += 1
    n = len(states)
    return _pair_finish(n, np.array(src), np.array(dst), np.array(rates), np.array(intr),
                        np.array([s[0] for s in states]), np.array([s[3] for s in states]),
                        n_c, means, extra, O, C)


def _pair_finish(n: int, src_a: np.ndarray, dst_a: np.ndarray, rt_a: np.ndarray,
                 intr: np.ndarray, LA: np.ndarray, LB: np.ndarray, n_c: int,
                 means: dict[int, float], extra: float, O: float, C: float) -> dict[str, Any]:
    """Stationary solution and measures of the two-node chain from its transitions.

    ``src_a, dst_a, rt_a`` the transitions (no self-loops, no duplicates), ``intr``
    the rate of interrupting arrivals at node A per state, ``LA``, ``LB`` the
    ``(n, 8)`` local states of nodes A and B; the rest as in :func:`_pair_solve`.
    """
    from mva._scipy_kernels import spsolve_coo

    out = np.bincount(src_a, weights=rt_a, minlength=n)
    # pi Q = 0 with pi_0 = 1: drop the first equation and unknown (Q's transpose is the
    # system: rates dst <- src, the diagonal -out), SuperLU through the compiled kernel
    e = dst_a != 0
    off = e & (src_a != 0)
    b = -np.bincount(dst_a[e & (src_a == 0)] - 1, weights=rt_a[e & (src_a == 0)], minlength=n - 1)
    x = spsolve_coo(np.concatenate([rt_a[off], -out[1:]]),
                    np.concatenate([dst_a[off], np.arange(1, n)]) - 1,
                    np.concatenate([src_a[off], np.arange(1, n)]) - 1, b, n - 1)
    pi = np.maximum(np.concatenate([[1.0], x]), 0.0)
    pi /= pi.sum()
    c_, qs_, qw_, qy_, kind_, who_ = (LA[:, i] for i in range(6))
    running = c_ - ((kind_ != 0) & (who_ == 2))
    X = float(pi @ running) / C
    X_B = float(pi @ (LB[:, 0] - ((LB[:, 4] != 0) & (LB[:, 5] == 2)))) / C
    P_int = float(pi @ intr) / X
    R = n_c / X
    D_pp = sum(means.values()) + 3 * extra
    return dict(R=R, X=X, R_w=float(pi @ c_) / X, R_q=float(pi @ (qs_ + (kind_ == 1))) / X,
                R_y=float(pi @ (qy_ + (kind_ == 2))) / X,
                R_r=float(pi @ (qw_ + (kind_ == 3))) / X, U=float(pi @ (kind_ != 0)),
                D=D_pp + P_int * O, P_all=float(pi @ ((n_c - c_) == 0)), P_int=P_int,
                P_blk=0.0, conv=True, it=1, res=0.0, states=n, asym=abs(X_B / X - 1.0))


# ---------------------------------------------------------------------------
# the two-node chain's structure, enumerated once per structure (and shipped)
# ---------------------------------------------------------------------------

#: the generated structures of the two-node chain (:func:`write_pair_structures`): one
#: ``.npy`` record of plain arrays (read without :mod:`zipfile`, whose import and
#: decompression took 5-10 ms of a first call with the earlier ``.npz``)
_PAIR_DATA = "policy_pair_chains.npy"

#: the two-node structures shipped in ``models/_generated/policy_pair_chains.npy``:
#: ``(fixed, handler cs2)`` with one compute thread per node, :data:`PAIR_LEGS` network
#: stages, every handler (with its overheads) of that cs2 -- 0 (deterministic handlers, as
#: the presets: Erlang-:data:`PAIR_ORDER`) or 1 (exponential: Fixed, or no overheads);
#: ``fixed=False`` serves Single and Floating with one processor
PAIR_SHIPPED = ((True, 0.0), (False, 0.0), (True, 1.0), (False, 1.0))

#: structures read or enumerated in this process (at most :data:`_PAIR_CACHE_SIZE`, under
#: 1 MB each), and the shipped file (key ``("file",)``)
_PAIR_CACHE: dict[tuple[Any, ...], Any] = {}
_PAIR_CACHE_SIZE = 8

#: array fields of a structure: stored dtype, dtype at run time
_PAIR_FIELDS = (("fac", np.int16, np.intp), ("tsrc", np.int32, np.intp),
                ("edge", np.int32, np.intp), ("iflag", np.bool_, np.bool_),
                ("esrc", np.int32, np.int64), ("edst", np.int32, np.int64),
                ("LA", np.int8, np.int64), ("LB", np.int8, np.int64),
                ("consts", np.float64, np.float64))


def _pair_key(fixed: bool, n_c: int, legs: int, has_leg: bool,
              ph: Mapping[tuple[int, int], Any]) -> tuple[Any, ...]:
    """What the two-node chain's structure depends on: the policy's kind, the thread count,
    the network stages and, per handler ``(kind, first)``, its PH order and the patterns
    of positive initial probabilities, moving-on rates and exit rates."""
    phs = tuple((int(k), int(f), int(a.size), tuple(bool(x) for x in a > 0),
                 tuple(bool(x) for x in np.ravel(T) > 0), tuple(bool(x) for x in e > 0))
                for (k, f), (a, T, e) in sorted(ph.items()))
    return (bool(fixed), int(n_c), int(legs), bool(has_leg), phs)


def _pair_name(key: tuple[Any, ...]) -> str:
    """The array-name prefix of a structure key in the shipped file (a digest of the key;
    the key itself is stored and compared when read).  CRC-32 and Adler-32 of its
    ``repr`` (:mod:`zlib`, a compiled module; :mod:`hashlib` costs 4 ms to import)."""
    import zlib

    b = repr(key).encode()
    return f"pair_{zlib.crc32(b):08x}{zlib.adler32(b):08x}"


def _pair_offsets(phs: tuple[Any, ...]) -> tuple[dict[tuple[int, int], tuple[Any, ...]], int]:
    """Where each handler's ``alpha``, ``T`` (row by row) and exit rates sit in ``theta``
    (after ``1, C, rate_leg``), and the index of the first constant."""
    off: dict[tuple[int, int], tuple[Any, ...]] = {}
    pos = 3
    for k, f, m, a_pos, t_pos, e_pos in phs:
        off[(k, f)] = (pos, m, a_pos, t_pos, e_pos)
        pos += m + m * m + m
    return off, pos


def _pair_local_sym(n_c: int, fixed: bool, off: Mapping[tuple[int, int], tuple[Any, ...]],
                    const: Any):
    """:func:`_pair_local` with each rate as indices into ``theta`` instead of a value.

    A rate of :func:`_pair_local` is ``((v0 / v1) * v2) * (v3 * v4)`` (in that order of
    operations) for the ``theta`` entries of the 5 indices returned; an arrival's
    probability ``v0 * v1`` of its 2 indices.  ``const(x)`` is the index of the
    constant ``x`` (0 for ``1.0``).
    """
    ONE, IC = 0, 1
    w0 = 0 if fixed else 1

    def start(c: int, qs: int, qw: int, qy: int, kk: int, w: int, ff: int, p: int):
        o, m, a_pos, _, _ = off[(kk, ff)]
        return [((c, qs, qw, qy, kk, w, ff, jj), (p, o + jj), ff == 1)
                for jj in range(m) if a_pos[jj]]

    def internal(s):
        c, qs, qw, qy, k, w, f, j = s
        busy = k != 0
        out = []
        running = c - (1 if (busy and w == 2) else 0)
        if running > 0:
            ru = const(float(running))
            if busy:
                out.append(((c - 1, qs + 1, qw, qy, k, w, f, j), (ru, IC, ONE, ONE, ONE), 0))
            else:
                out += [(t, (ru, IC, ONE, p, a), 0)
                        for t, (p, a), _ in start(c - 1, 0, 0, 0, 1, w0, 0, ONE)]
        if busy:
            o, m, _, t_pos, e_pos = off[(k, f)]
            for j2 in range(m):
                if j2 != j and t_pos[j * m + j2]:
                    out.append(((c, qs, qw, qy, k, w, f, j2),
                                (o + m + j * m + j2, ONE, ONE, ONE, ONE), 0))
            if e_pos[j]:
                e = o + m + m * m + j
                tag, outs = _completion(k, w, c, n_c)
                q = qs + qw + qy
                for c2, w2, pr in outs:
                    if q == 0:
                        out.append(((c2, 0, 0, 0, 0, 0, 0, 0), (e, ONE, const(pr), ONE, ONE),
                                    tag))
                        continue
                    if w2 == 2 and n_c - c2 > 0:
                        w2 = 1
                    for cond, args, pp in ((qy > 0, (c2, qs, qw, qy - 1, 2), qy / q),
                                           (qs > 0, (c2, qs - 1, qw, qy, 1), qs / q),
                                           (qw > 0, (c2, qs, qw - 1, qy, 3), qw / q)):
                        if cond:
                            out += [(t, (e, ONE, const(pr), p2, a), tag)
                                    for t, (p2, a), _ in start(*args, w2, 0, const(pp))]
        return out

    def arrive_reply(s):
        c, qs, qw, qy, k, w, f, j = s
        if k != 0:
            return [((c, qs, qw, qy + 1, k, w, f, j), (ONE, ONE), False)]
        if fixed:
            return start(c, 0, 0, 0, 2, 0, 0, ONE)
        if n_c - c > 0:
            return start(c, 0, 0, 0, 2, 1, 0, ONE)
        return start(c, 0, 0, 0, 2, 2, 1, ONE)

    def arrive_response(s):
        c, qs, qw, qy, k, w, f, j = s
        if k != 0:
            return [((c, qs, qw + 1, qy, k, w, f, j), (ONE, ONE), False)]
        return start(c, 0, 0, 0, 3, w0, 0, ONE)

    return internal, arrive_reply, arrive_response


def _pair_structure_ref(key: tuple[Any, ...]) -> dict[str, np.ndarray] | None:
    """The two-node chain of structure ``key`` (:func:`_pair_key`) by breadth-first search.

    The same states, in the same order, and the same transitions as
    :func:`_pair_solve_ref`, with every rate term as 6 indices into ``theta``
    (``1, C, rate_leg``, each handler's ``alpha``, ``T`` and exit rates, then the
    constants ``consts``): the term's value is ``((v0 / v1) * v2) * (v3 * v4) * v5``,
    the operations of :func:`_pair_solve_ref` in its order.  Returns the arrays
    ``fac`` (terms x 6), ``tsrc`` (each term's state), ``edge`` (its transition, -1
    for a self-loop), ``iflag`` (an interrupting arrival at node A), ``esrc``,
    ``edst`` (the transitions), ``LA``, ``LB`` (each state's local states) and
    ``consts``; ``None`` above :data:`PAIR_MAX_STATES` states.
    """
    fixed, n_c, legs, has_leg, phs = key
    off, base = _pair_offsets(phs)
    consts: dict[float, int] = {1.0: 0}

    def const(x: float) -> int:
        i = consts.get(x)
        if i is None:
            i = consts[x] = base + len(consts) - 1
        return i if x != 1.0 else 0

    ONE, IR = 0, 2
    internal, arr_y, arr_r = (_memo(f) for f in _pair_local_sym(n_c, fixed, off, const))
    init_local = (n_c, 0, 0, 0, 0, 0, 0, 0)
    zero = (0,) * legs
    init = (init_local, zero, zero, init_local, zero, zero)
    index = {init: 0}
    states = [init]
    fac: list[tuple[int, ...]] = []
    tsrc: list[int] = []
    tnxt: list[int] = []          # position of the term's successor in its state's list
    iflag: list[bool] = []
    edge: list[int] = []
    esrc: list[int] = []
    edst: list[int] = []

    bump, nodes_, join = _bump, _pair_view, _pair_join

    k = 0
    while k < len(states):
        st = states[k]
        succ: dict[tuple, int] = {}

        def add(nxt: tuple, f: tuple[int, ...], intr: bool = False) -> None:
            fac.append(f)
            tsrc.append(k)
            tnxt.append(succ.setdefault(nxt, len(succ)))
            iflag.append(intr)

        for who in (0, 1):
            s = nodes_(st, who)
            la, oa, ba, lb, ob, bb = s
            for t, f5, tag in internal(la):
                if tag == 1:      # the send ended: the thread starts the outbound leg
                    if not has_leg:      # no network time: straight into the other queue
                        for tb, (p1, p2), it_ in arr_y(lb):
                            assert p1 == ONE
                            add(join((t, oa, ba), (tb, ob, bb), who), f5 + (p2,),
                                bool(it_ and who == 1))      # it interrupts node A
                        continue
                    nxt = join((t, bump(oa, 0, 1), ba), (lb, ob, bb), who)
                elif tag == 2:    # a reply ended: the other node's thread starts back
                    if has_leg:
                        nxt = join((t, oa, ba), (lb, ob, bump(bb, 0, 1)), who)
                    else:
                        for tb, (p1, p2), _ in arr_r(lb):
                            assert p1 == ONE
                            add(join((t, oa, ba), (tb, ob, bb), who), f5 + (p2,))
                        continue
                else:
                    nxt = join((t, oa, ba), (lb, ob, bb), who)
                add(nxt, f5 + (ONE,))
            if not has_leg:
                continue
            for i in range(legs):
                for leg, cnt in ((0, oa[i]), (1, ba[i])):
                    if cnt == 0:
                        continue
                    r = (IR, ONE, const(float(cnt)))
                    vec = oa if leg == 0 else ba
                    if i + 1 < legs:
                        v2 = bump(bump(vec, i, -1), i + 1, 1)
                        mine = (la, v2, ba) if leg == 0 else (la, oa, v2)
                        add(join(mine, (lb, ob, bb), who), r + (ONE, ONE, ONE))
                    elif leg == 0:      # the request reaches the other node
                        for tb, (p1, p2), it_ in arr_y(lb):
                            add(join((la, bump(oa, i, -1), ba), (tb, ob, bb), who),
                                r + (p1, p2, ONE), bool(it_ and who == 1))
                    else:               # the reply comes home: the response handler
                        for ta, (p1, p2), _ in arr_r(la):
                            add(join((ta, oa, bump(ba, i, -1)), (lb, ob, bb), who),
                                r + (p1, p2, ONE))
        ids = []
        for nxt in succ:
            j = index.get(nxt)
            if j is None:
                j = index[nxt] = len(states)
                states.append(nxt)
                if len(states) > PAIR_MAX_STATES:
                    return None
            if j != k:
                ids.append(len(esrc))
                esrc.append(k)
                edst.append(j)
            else:
                ids.append(-1)
        edge += [ids[x] for x in tnxt[len(edge):]]
        k += 1
    cv = np.zeros(len(consts) - 1)
    for x, i in consts.items():
        if x != 1.0:
            cv[i - base] = x
    return dict(fac=np.array(fac, dtype=np.intp), tsrc=np.array(tsrc, dtype=np.intp),
                edge=np.array(edge, dtype=np.intp), iflag=np.array(iflag, dtype=np.bool_),
                esrc=np.array(esrc, dtype=np.int64), edst=np.array(edst, dtype=np.int64),
                LA=np.array([s[0] for s in states], dtype=np.int64),
                LB=np.array([s[3] for s in states], dtype=np.int64), consts=cv)


def _read_pair_file(path: Any) -> dict[str, np.ndarray]:
    """The arrays of a structures file written by :func:`write_pair_structures`, by name.

    The file holds one record (a NumPy structured scalar, read with
    ``allow_pickle=False``) whose fields are the arrays of
    :func:`pair_structure_arrays`, the keys stored as bytes and returned as ``str``
    arrays again.
    """
    rec = np.load(path, allow_pickle=False)
    return {name: (np.array(rec[name].item().decode()) if rec.dtype[name].kind == "S"
                   else rec[name]) for name in rec.dtype.names}


def _pair_shipped() -> Any:
    """The shipped structures' arrays, read once (plain arrays; never unpickled); ``{}``
    in a checkout without the file."""
    got = _PAIR_CACHE.get(("file",))
    if got is None:
        from pathlib import Path

        path = Path(__file__).parent / "_generated" / _PAIR_DATA
        got = _read_pair_file(path) if path.exists() else {}
        _PAIR_CACHE[("file",)] = got
    return got


def _pair_structure(key: tuple[Any, ...]) -> dict[str, np.ndarray] | None:
    """The structure of :func:`_pair_structure_ref` for ``key``: read from the shipped file
    (:data:`PAIR_SHIPPED`), else enumerated; kept for the next call either way (the
    oldest of more than :data:`_PAIR_CACHE_SIZE` dropped; safe across threads: a
    structure two threads build at once is built twice, never half)."""
    st = _PAIR_CACHE.get(key, False)
    if st is not False:
        return st
    data = _pair_shipped()
    name = _pair_name(key)
    if name + "__key" in data and str(data[name + "__key"]) == repr(key):
        st = {f: np.ascontiguousarray(data[f"{name}__{f}"], dtype=big)
              for f, _, big in _PAIR_FIELDS}
    else:
        st = _pair_structure_ref(key)
    if len(_PAIR_CACHE) > _PAIR_CACHE_SIZE:
        for old in [k for k in list(_PAIR_CACHE) if k != ("file",)][:1]:
            _PAIR_CACHE.pop(old, None)
    _PAIR_CACHE[key] = st
    return st


def _pair_solve(v: dict[str, float], policy: str, n_c: int, ph: dict[tuple[int, int], Any],
                means: dict[int, float], extra: float, O: float, T_x: float, C: float,
                legs: int) -> dict[str, Any] | None:
    """Both nodes of a two-node machine as one chain (no decomposition): ``None`` if too big.

    The chain of :func:`_pair_solve_ref` (its states, transitions and results bit for
    bit), its structure read from :func:`_pair_structure` (shipped for
    :data:`PAIR_SHIPPED`, otherwise enumerated once per structure and process) and
    its rates evaluated as arrays: ``theta = (1, C, rate_leg, alpha, T, exit rates of
    each handler, constants)``, a term's rate ``((v0 / v1) * v2) * (v3 * v4) * v5``
    of its 6 ``theta`` entries, the terms of a transition summed in their order of
    enumeration (``bincount``).
    """
    fixed = policy == "fixed"
    has_leg = T_x > 0
    key = _pair_key(fixed, n_c, legs, has_leg, ph)
    st = _pair_structure(key)
    if st is None:
        return None
    parts = [np.array([1.0, C, legs / (T_x / 2.0) if has_leg else 1.0])]
    for (kk, ff) in sorted(ph):
        a, T, e = ph[(kk, ff)]
        parts += [np.asarray(a, dtype=float), np.ravel(np.asarray(T, dtype=float)),
                  np.asarray(e, dtype=float)]
    parts.append(st["consts"])
    theta = np.concatenate(parts)
    F = theta[st["fac"]]
    t = ((F[:, 0] / F[:, 1]) * F[:, 2]) * (F[:, 3] * F[:, 4]) * F[:, 5]
    ed = st["edge"]
    keep = ed >= 0
    rates = np.bincount(ed[keep], weights=t[keep], minlength=st["esrc"].size)
    n = st["LA"].shape[0]
    fl = st["iflag"]
    intr = np.bincount(st["tsrc"][fl], weights=t[fl], minlength=n)
    return _pair_finish(n, st["esrc"], st["edst"], rates, intr, st["LA"], st["LB"], n_c,
                        means, extra, O, C)


def _pair_shipped_keys() -> list[tuple[Any, ...]]:
    """The structure keys of :data:`PAIR_SHIPPED` (handler PH fits of that cs2)."""
    keys = []
    for fixed, cs2 in PAIR_SHIPPED:
        ph = {(kk, ff): _ph(1.0, cs2, PAIR_ORDER)
              for kk in (1, 2, 3) for ff in ((0,) if fixed else (0, 1))}
        keys.append(_pair_key(fixed, 1, PAIR_LEGS, True, ph))
    return keys


def pair_structure_arrays() -> dict[str, np.ndarray]:
    """The arrays of every shipped two-node structure (:data:`PAIR_SHIPPED`), enumerated now.

    Names ``<name>__<field>`` (:func:`_pair_name`; the field ``key`` holds the
    key's ``repr``, checked when read); the fields of :func:`_pair_structure_ref`
    in compact dtypes (exact: indices, counts, the constants as float64).  The
    reference for the test that the shipped file is current.

    Examples
    --------
    >>> arrs = pair_structure_arrays()
    >>> sorted({k.split("__")[1] for k in arrs})
    ['LA', 'LB', 'consts', 'edge', 'edst', 'esrc', 'fac', 'iflag', 'key', 'tsrc']
    """
    from ._node import _narrowed

    out: dict[str, np.ndarray] = {}
    for key in _pair_shipped_keys():
        name = _pair_name(key)
        st = _pair_structure_ref(key)
        assert st is not None
        out[f"{name}__key"] = np.array(repr(key))
        for field, small, _ in _PAIR_FIELDS:
            out[f"{name}__{field}"] = _narrowed(st[field], small, f"{name}__{field}")
    return out


def write_pair_structures(path: str | None = None) -> str:
    """Enumerate the shipped two-node structures and write them (one ``.npy`` record).

    Run ``python -c "from models._policy_node import write_pair_structures as w; w()"``
    after changing the two-node chain (:func:`_pair_local_sym`,
    :func:`_pair_structure_ref`, the PH fits' patterns or :data:`PAIR_SHIPPED`);
    ``tests/models/test_cost_speed.py`` checks that the shipped file equals a fresh
    enumeration.  The arrays of :func:`pair_structure_arrays` are the fields of one
    structured scalar (the keys as bytes), read by :func:`_read_pair_file`.  Returns
    the path written.
    """
    from pathlib import Path

    target = Path(path) if path is not None else Path(__file__).parent / "_generated" / _PAIR_DATA
    arrays = {name: (np.array(str(a).encode()) if a.dtype.kind == "U" else a)
              for name, a in pair_structure_arrays().items()}
    rec = np.zeros((), dtype=np.dtype([(name, a.dtype, a.shape) for name, a in arrays.items()]))
    for name, a in arrays.items():
        rec[name] = a
    np.save(target, rec, allow_pickle=False)
    return str(target)
