"""Node-level Markov chain of one processor of a request/reply machine (private).

One processor runs one thread and serves FCFS, at priority over the thread,
the request handlers sent by other threads and its own thread's reply
handler.  Handler service is phase-type, fitted to the mean and squared
coefficient of variation the way the bundled simulator draws it
(deterministic ~ Erlang, Erlang-``round(1/cs2)`` below 1, exponential, a
balanced-means two-phase hyperexponential above 1).  The rest of the machine
enters through two parameters that a symmetric fixed point sets
(:func:`solve_node`):

* requests arrive from ``sources`` other threads, at rate ``(sources - n)
  gamma`` with ``n`` requests present (finite source), and
* the thread, once its request has left, is away for an exponential time of
  mean ``away`` (latencies plus the request's residence elsewhere), after
  which its reply joins the handler queue.

The thread's states: *pending* (its reply has been handled but handlers
queued behind the reply still run before it resumes), *computing*
(exponential ``W``, preempted whenever a handler is present), *away*, and
*reply queued* with ``a`` handlers ahead and ``b`` behind it.  The chain is
solved for its stationary distribution with a sparse LU factorization.

Also here: the finite-source station chains of the INI model
(:func:`station_residence`, :func:`station_effective`), the twin-station
chain of a two-cluster INI machine (:func:`pair_residence`), the revisit
station of an INI with one home thread (:func:`revisit_station_residence`), and the
whole-machine chain of a small machine (:func:`solve_full`: FIFO or
unordered channels, lumped by the processors' symmetry, :func:`_canonical`).
"""

from __future__ import annotations

import functools
import math
from typing import Any

import numpy as np

__all__ = ["handler_ph", "NodeChain", "solve_node", "station_residence", "station_effective",
           "pair_residence", "pair_effective", "split_residence", "revisit_station_residence",
           "revisit_station_effective", "solve_full", "FULL_MAX_P", "FULL_MAX_ERLANG"]

#: machines of at most this many processors are solved as one Markov chain
#: (:func:`solve_full`): the node chain's finite-source view of the other
#: threads is poorest there
FULL_MAX_P = 3

#: a station (:func:`solve_node`) whose servers are idle less than this fraction
#: of the time is near saturation: the fixed point then holds its utilization
#: ``U`` (the cycle is ``R = threads visits S / (servers U)``) instead of
#: solving its chain at every step, and solves the chain again only at the
#: fixed point, until ``U`` agrees to the tolerance (same answer, a few chain
#: solves instead of tens)
SAT_IDLE = 1e-2

#: most Erlang phases used for ``cs2 < 1`` (``cs2 = 0`` is Erlang-``MAX_ERLANG``)
MAX_ERLANG = 6
DAMP = 0.2

#: largest truncation of the request queue (the probability mass at it is reported)
NMAX_CAP = 32


def handler_ph(mean: float, cs2: float) -> tuple[np.ndarray, np.ndarray]:
    """``(alpha, T)``: initial vector and sub-generator of the fitted handler time."""
    if cs2 > 1.0 + 1e-12:
        p = 0.5 * (1.0 + math.sqrt((cs2 - 1.0) / (cs2 + 1.0)))
        mu = np.array([2.0 * p / mean, 2.0 * (1.0 - p) / mean])
        return np.array([p, 1.0 - p]), np.diag(-mu)
    k = MAX_ERLANG if cs2 <= 1.0 / MAX_ERLANG else max(1, round(1.0 / cs2))
    T = np.diag(np.full(k, -k / mean)) + np.diag(np.full(k - 1, k / mean), 1)
    a = np.zeros(k)
    a[0] = 1.0
    return a, T


class NodeChain:
    """Structure of the node chain for ``sources`` requesters, truncated at ``nmax`` requests.

    Transition rates are stored as ``fixed + gamma * arr + away_rate * away``
    so that one structure serves every iteration of the fixed point.
    """

    def __init__(self, sources: int, W: float, o: float, cs2: float, nmax: int) -> None:
        alpha, T = handler_ph(o, cs2)
        ph = len(alpha)
        ext = -T.sum(axis=1)
        nmax = int(max(1, min(sources, nmax)))
        idx: dict[tuple[str, int, int, int], int] = {}
        for th in ("P", "C", "A"):
            if th != "P":
                idx[(th, 0, 0, -1)] = len(idx)
            for n in range(1, nmax + 1):
                for j in range(ph):
                    idx[(th, n, 0, j)] = len(idx)
        for a in range(nmax + 1):
            for b in range(nmax + 1 - a):
                for j in range(ph):
                    idx[("Y", a, b, j)] = len(idx)
        rows: list[int] = []
        cols: list[int] = []
        vals: list[tuple[float, float, float]] = []

        def tr(s: tuple, t: tuple, f: float = 0.0, ar: float = 0.0, aw: float = 0.0) -> None:
            rows.append(idx[s])
            cols.append(idx[t])
            vals.append((f, ar, aw))

        def start(th: str, n: int, b: int = 0) -> list[tuple[tuple, float]]:
            """States (and probabilities) when a new handler starts with ``n`` present."""
            return [((th, n, b, jj), float(alpha[jj])) for jj in range(ph) if alpha[jj] > 0]

        wr = 1.0 / max(W, 1e-9 * o)
        for key in idx:
            th, n, b, j = key
            if th in ("P", "C", "A"):
                if n < nmax:
                    if n == 0:
                        for t, pr in start(th, 1):
                            tr(key, t, ar=(sources - n) * pr)
                    else:
                        tr(key, (th, n + 1, 0, j), ar=sources - n)
                if n > 0:
                    for jj in range(ph):
                        if jj != j and T[j, jj] > 0:
                            tr(key, (th, n, 0, jj), f=T[j, jj])
                    after = "C" if th == "P" else th        # the thread resumes when idle
                    if n == 1:
                        tr(key, (after, 0, 0, -1), f=ext[j])
                    else:
                        for t, pr in start(th, n - 1):
                            tr(key, t, f=ext[j] * pr)
                if th == "C" and n == 0:
                    tr(key, ("A", 0, 0, -1), f=wr)
                if th == "A":
                    if n == 0:
                        for (_, _, _, jj), pr in start("Y", 0):
                            tr(key, ("Y", 0, 0, jj), aw=pr)
                    else:
                        tr(key, ("Y", n, 0, j), aw=1.0)
            else:
                a, tot = n, n + b
                if tot < nmax:
                    tr(key, ("Y", a, b + 1, j), ar=sources - tot)
                for jj in range(ph):
                    if jj != j and T[j, jj] > 0:
                        tr(key, ("Y", a, b, jj), f=T[j, jj])
                if a == 0:                     # the reply handler completes
                    if b == 0:
                        tr(key, ("C", 0, 0, -1), f=ext[j])
                    else:
                        for (_, _, _, jj), pr in start("P", b):
                            tr(key, ("P", b, 0, jj), f=ext[j] * pr)
                else:
                    for (_, _, _, jj), pr in start("Y", a - 1, b):
                        tr(key, ("Y", a - 1, b, jj), f=ext[j] * pr)
        keys = list(idx)
        self.size = len(idx)
        self.nmax = nmax
        self.sources = sources
        self.rows = np.array(rows)
        self.cols = np.array(cols)
        v = np.array(vals, dtype=float).reshape(-1, 3)
        self.fixed, self.arr, self.away = v[:, 0], v[:, 1], v[:, 2]
        kind = np.array([k[0] for k in keys])
        self.is_P, self.is_C, self.is_A, self.is_Y = (kind == s for s in "PCAY")
        self.nreq = np.array([k[1] + (k[2] if k[0] == "Y" else 0) for k in keys], dtype=float)
        self.src_left = np.where(self.nreq < nmax, sources - self.nreq, 0.0)
        phase_exit = np.array([ext[k[3]] if k[3] >= 0 else 0.0 for k in keys])
        self.reply_exit = np.where(self.is_Y & np.array([k[1] == 0 for k in keys]), phase_exit, 0.0)
        self.top = self.nreq >= nmax
        # pattern of the balance equations pi Q = 0 (the transposed generator, with
        # the diagonal): solved with state 0 pinned (see _pinned_solve)
        n = self.size
        self._r = np.concatenate([self.cols, np.arange(n)])
        self._c = np.concatenate([self.rows, np.arange(n)])

    def stationary(self, gamma: float, away_rate: float) -> np.ndarray:
        """Stationary distribution for the given arrival and return rates."""
        data = self.fixed + gamma * self.arr + away_rate * self.away
        out = np.bincount(self.rows, weights=data, minlength=self.size)
        return _pinned_solve(self._r, self._c, np.concatenate([data, -out]), self.size)


def _pinned_solve(r: np.ndarray, c: np.ndarray, d: np.ndarray, n: int, pin: int = 0,
                  order: str = "COLAMD") -> np.ndarray:
    """Solve ``pi A = 0``, ``sum(pi) = 1`` for a generator given as triplets of ``A^T``.

    ``A^T[r, c] = d`` (duplicates summed).  One state is pinned to 1 and the
    remaining ``n - 1`` equations solved by a sparse LU (SuperLU, COLAMD
    column ordering: on these chains up to 25x faster than minimum degree on
    ``A^T + A``), then normalised.  The usual alternative,
    replacing one equation by the dense normalisation row, costs a fill-in
    that made a 7,000-state station chain a hundred times slower.  If the
    pinned state's probability is so small that the others overflow, the
    solve is repeated with the most probable state pinned.  ``order`` is
    SuperLU's column ordering.
    """
    import warnings

    if n == 1:
        return np.ones(1)
    for _ in range(2):
        at_pin = c == pin
        b = np.zeros(n)
        np.add.at(b, r[at_pin], -d[at_pin])
        m = (r != pin) & ~at_pin
        rr = r[m] - (r[m] > pin)
        cc = c[m] - (c[m] > pin)
        keep = np.arange(n) != pin
        with warnings.catch_warnings():
            # a singular pinned system (transient states: SciPy's MatrixRankWarning)
            # is caught below
            warnings.simplefilter("ignore")
            x = _sparse_solve(d[m], rr, cc, b[keep], n - 1, order)
        pi = np.empty(n)
        pi[keep] = x
        pi[pin] = 1.0
        tot = float(pi.sum())
        if np.all(np.isfinite(pi)) and math.isfinite(tot) and tot > 0 and pi.max() < 1e200:
            pi = np.maximum(pi / tot, 0.0)
            return pi / pi.sum()
        # pin the most probable state (an overflowed one counts as most probable)
        pin = int(np.argmax(np.where(np.isnan(pi), -1.0, np.abs(pi))))
    # both pinned states negligible: one equation replaced by the normalisation
    # row (robust, with more fill-in)
    keep_eq = r != 0
    b = np.zeros(n)
    b[0] = 1.0
    pi = _sparse_solve(np.concatenate([d[keep_eq], np.ones(n)]),
                       np.concatenate([r[keep_eq], np.zeros(n, dtype=np.int64)]),
                       np.concatenate([c[keep_eq], np.arange(n)]), b, n, order)
    if not np.all(np.isfinite(pi)):
        raise FloatingPointError(f"stationary distribution of a {n}-state chain: the linear "
                                 f"solve lost all precision")
    pi = np.maximum(pi, 0.0)
    return pi / pi.sum()


def _summed(d: np.ndarray, major: np.ndarray, minor: np.ndarray,
            n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(values, major, minor)`` of the entries ``(major, minor) = d``, duplicates summed
    in their order of appearance, sorted by ``major`` and then ``minor``."""
    key = major.astype(np.int64) * n + minor.astype(np.int64)
    srt = np.argsort(key, kind="stable")
    ks = key[srt]
    first = np.flatnonzero(np.r_[True, ks[1:] != ks[:-1]])
    u = ks[first]
    return np.add.reduceat(d[srt], first), u // n, u % n


def _sparse_solve(d: np.ndarray, r: np.ndarray, c: np.ndarray, b: np.ndarray, n: int,
                  order: str = "COLAMD") -> np.ndarray:
    """``x`` with ``A x = b``, ``A[r, c] = d`` (duplicates summed), by SuperLU.

    The compiled solver is called without importing ``scipy.sparse`` (the
    duplicates are summed here, in a fixed order, first): with SuperLU's default
    COLAMD ordering through :func:`mva._scipy_kernels.spsolve_coo` (as
    ``scipy.sparse.linalg.spsolve``) -- or, for a long system whose non-zeros lie
    within a few diagonals (:data:`BANDED_MIN_STATES`, :data:`BANDED_MAX_WIDTH`),
    by :func:`_banded_solve` --, with another ordering through the
    factorisation of :func:`mva._scipy_kernels.splu_csc` in SuperLU's symmetric
    mode, on the diagonal pivots: the pinned balance equations are column
    diagonally dominant (:func:`_pinned_solve`), for which Gaussian elimination
    needs no row exchanges, and row exchanges would undo the symmetric ordering (a
    two-station chain of 44 customers with Erlang-2 service: 3 ms and 87,000
    non-zeros in the factors, against 19-28 ms and 426,000 with partial
    pivoting).  A zero pivot (by cancellation) refactorises with partial
    pivoting; a singular matrix gives NaNs (as ``spsolve``; the caller tests for
    them).
    """
    if order == "COLAMD" and n >= BANDED_MIN_STATES:
        low, up = int(np.max(r - c)), int(np.max(c - r))
        if 2 < low + up <= BANDED_MAX_WIDTH:
            return _banded_solve(d, r, c, b, n, max(low, 0), max(up, 0))
    if order == "COLAMD":
        from mva._scipy_kernels import spsolve_coo

        data, rows, cols = _summed(d, r, c, n)
        return spsolve_coo(data, rows, cols, b, n)
    from mva._scipy_kernels import splu_csc

    data, cols, rows = _summed(d, c, r, n)                # by column, then row
    indptr = np.zeros(n + 1, dtype=np.intc)
    np.cumsum(np.bincount(cols, minlength=n), out=indptr[1:])
    rows = rows.astype(np.intc)
    try:
        lu = splu_csc(data, rows, indptr, n, permc_spec=order, diag_pivot_thresh=0.0,
                      options=dict(SymmetricMode=True))
    except RuntimeError:                 # a zero pivot: exchange rows after all
        try:
            lu = splu_csc(data, rows, indptr, n, permc_spec=order)
        except RuntimeError:             # exactly singular
            return np.full(n, np.nan)
    return np.asarray(lu.solve(np.asarray(b, dtype=float)), dtype=float)


#: a system of at least this many unknowns whose non-zeros all lie within
#: :data:`BANDED_MAX_WIDTH` diagonals (a station chain of many customers, ordered by
#: their number) is solved as a banded matrix (LAPACK's ``dgbsv``) instead of by
#: SuperLU: 6,500 states of an 8-server station, 17 diagonals, 1.2 ms instead of 4.9
BANDED_MIN_STATES = 1000

#: ... the most diagonals (lower plus upper) of such a system
BANDED_MAX_WIDTH = 48


def _banded_solve(d: np.ndarray, r: np.ndarray, c: np.ndarray, b: np.ndarray, n: int,
                  low: int, up: int) -> np.ndarray:
    """``x`` with ``A x = b``, ``A[r, c] = d`` (duplicates summed), ``A`` with ``low``
    diagonals below the main one and ``up`` above: Gaussian elimination with partial
    pivoting on the band (:func:`mva._scipy_kernels.solve_banded`).  A singular matrix
    gives NaNs, as :func:`_sparse_solve`."""
    from mva._scipy_kernels import solve_banded

    ab = np.zeros((low + up + 1, n))
    np.add.at(ab, (up + r - c, c), d)
    try:
        return solve_banded(low, up, ab, np.asarray(b, dtype=float))
    except np.linalg.LinAlgError:
        return np.full(n, np.nan)


def _stationary(rows: np.ndarray, cols: np.ndarray, rates: np.ndarray, n: int,
                order: str = "COLAMD") -> np.ndarray:
    """Stationary distribution of the chain with transitions ``rows -> cols`` at ``rates``."""
    out = np.bincount(rows, weights=rates, minlength=n)
    return _pinned_solve(np.concatenate([cols, np.arange(n)]), np.concatenate([rows, np.arange(n)]),
                         np.concatenate([rates, -out]), n, order=order)


#: first truncation of a station chain beyond its servers (doubled while the
#: probability of a full station exceeds :data:`STATION_TAIL`)
STATION_CAP0 = 48
STATION_TAIL = 1e-9
STATION_CAP_MAX = 4000
_CAP_HINT: dict[tuple[int, int, float, float], int] = {}


def _station_structure_ref(M: int, servers: int, S: float, cs2: float, cap: int) -> tuple[Any, ...]:
    """Pure-Python reference of :func:`_station_structure` (state by state; kept for the tests)."""
    scale = 1.0
    rows: list[int] = []
    cols: list[int] = []
    vals: list[float] = []
    isarr: list[bool] = []

    def tr(s: int, t: int, v: float, arrival: bool = False) -> None:
        rows.append(s)
        cols.append(t)
        vals.append(v)
        isarr.append(arrival)

    if servers > 1 and cs2 > 1.0 + 1e-12:
        alpha, T = handler_ph(S, cs2)
        p, mu1, mu2 = float(alpha[0]), -float(T[0, 0]), -float(T[1, 1])
        index: dict[tuple[int, int], int] = {}
        for n in range(cap + 1):
            for k1 in range(min(n, servers) + 1):
                index[(n, k1)] = len(index)
        for (n, k1), s in index.items():
            b = min(n, servers)
            if n < cap:
                if n < servers:
                    tr(s, index[(n + 1, k1 + 1)], (M - n) * p, True)
                    tr(s, index[(n + 1, k1)], (M - n) * (1 - p), True)
                else:
                    tr(s, index[(n + 1, k1)], (M - n), True)
            for rate, k_after in ((k1 * mu1, k1 - 1), ((b - k1) * mu2, k1)):
                if rate <= 0:
                    continue
                if n > servers:
                    tr(s, index[(n - 1, k_after + 1)], rate * p)
                    tr(s, index[(n - 1, k_after)], rate * (1 - p))
                else:
                    tr(s, index[(n - 1, k_after)], rate)
        nst = len(index)
        nvec = np.array([float(n) for (n, _) in index], dtype=float)
    else:
        if servers == 1:
            alpha, T = handler_ph(S, cs2)
        else:
            alpha, T = np.ones(1), np.array([[-1.0 / S]])
            scale = (1.0 + cs2) / 2.0
        ph = len(alpha)
        ext = -T.sum(axis=1)
        nst = 1 + cap * ph

        def sid(n: int, j: int) -> int:
            return 0 if n == 0 else 1 + (n - 1) * ph + j

        for n in range(cap + 1):
            for j in (range(ph) if n > 0 else [-1]):
                s = sid(n, j)
                if n < cap:
                    if n == 0:
                        for jj in range(ph):
                            tr(s, sid(1, jj), (M - n) * alpha[jj], True)
                    else:
                        tr(s, sid(n + 1, j), (M - n), True)
                if n > 0:
                    busy = min(n, servers)
                    for jj in range(ph):
                        if jj != j and T[j, jj] > 0:
                            tr(s, sid(n, jj), T[j, jj])
                    if n == 1:
                        tr(s, 0, busy * ext[j])
                    else:
                        for jj in range(ph):
                            tr(s, sid(n - 1, jj), busy * ext[j] * alpha[jj])
        nvec = np.array([0.0] + [float(n) for n in range(1, cap + 1) for _ in range(ph)])
    v = np.array(vals, dtype=float)
    ar = np.array(isarr, dtype=bool)
    return (np.array(rows), np.array(cols), np.where(ar, 0.0, v), np.where(ar, v, 0.0), nst,
            nvec, np.where(nvec < cap, M - nvec, 0.0), scale)


@functools.lru_cache(maxsize=256)
def _station_structure(M: int, servers: int, S: float, cs2: float, cap: int) -> tuple[Any, ...]:
    """Transitions of the finite-source station chain truncated at ``cap`` customers.

    Built with NumPy array operations (no per-state Python loop).  Returns
    ``(rows, cols, fixed, arr, n_states, n_present, sources_left, scale)``:
    the rate of transition ``i`` is ``fixed[i] + gamma * arr[i]``.
    """
    cap = int(min(M, cap))
    parts: list[tuple[np.ndarray, np.ndarray, np.ndarray, bool]] = []

    def add(src: np.ndarray, dst: np.ndarray, v: np.ndarray, arrival: bool = False) -> None:
        keep = v > 0
        parts.append((src[keep], dst[keep], v[keep], arrival))

    scale = 1.0
    if servers > 1 and cs2 > 1.0 + 1e-12:
        # K servers, hyperexponential: state (n, k1), k1 busy servers on a fast job
        alpha, T = handler_ph(S, cs2)
        p, mu1, mu2 = float(alpha[0]), -float(T[0, 0]), -float(T[1, 1])
        K = servers
        width = np.minimum(np.arange(cap + 1), K) + 1
        off = np.concatenate([[0], np.cumsum(width)])
        nst = int(off[-1])
        n = np.repeat(np.arange(cap + 1), width)
        k1 = np.arange(nst) - off[n]
        b = np.minimum(n, K)
        s = np.arange(nst)
        src_n = M - n.astype(float)

        def at(nn: np.ndarray, kk: np.ndarray) -> np.ndarray:
            return off[nn] + kk

        m = (n < cap) & (n < K)
        add(s[m], at(n[m] + 1, k1[m] + 1), src_n[m] * p, True)
        add(s[m], at(n[m] + 1, k1[m]), src_n[m] * (1 - p), True)
        m = (n < cap) & (n >= K)
        add(s[m], at(n[m] + 1, k1[m]), src_n[m], True)
        for rate, k_after in ((k1 * mu1, k1 - 1), ((b - k1) * mu2, k1)):
            m = (rate > 0) & (n > K)
            add(s[m], at(n[m] - 1, k_after[m] + 1), rate[m] * p)
            add(s[m], at(n[m] - 1, k_after[m]), rate[m] * (1 - p))
            m = (rate > 0) & (n <= K) & (n > 0)
            add(s[m], at(n[m] - 1, k_after[m]), rate[m])
        nvec = n.astype(float)
    else:
        if servers == 1:
            alpha, T = handler_ph(S, cs2)
        else:
            # K servers, cs2 <= 1: exponential service, the waiting time scaled by
            # (1 + cs2)/2 (Lee-Longton)
            alpha, T = np.ones(1), np.array([[-1.0 / S]])
            scale = (1.0 + cs2) / 2.0
        ph = len(alpha)
        ext = -T.sum(axis=1)
        nst = 1 + cap * ph
        s = np.arange(1, nst)
        n = (s - 1) // ph + 1
        j = (s - 1) % ph
        busy = np.minimum(n, servers).astype(float)
        zero = np.zeros(1, dtype=np.int64)
        add(np.repeat(zero, ph), 1 + np.arange(ph), M * alpha, True)
        m = n < cap
        add(s[m], s[m] + ph, (M - n[m]).astype(float), True)
        for jj in range(ph):
            tj = T[j, jj].copy()
            tj[j == jj] = 0.0
            add(s, s - j + jj, np.where(tj > 0, tj, 0.0))
        m = n == 1
        add(s[m], np.zeros(int(m.sum()), dtype=np.int64), busy[m] * ext[j[m]])
        m = n >= 2
        for jj in range(ph):
            add(s[m], 1 + (n[m] - 2) * ph + jj, busy[m] * ext[j[m]] * alpha[jj])
        nvec = np.concatenate([[0.0], n.astype(float)])
    rows = np.concatenate([q[0] for q in parts]).astype(np.int64)
    cols = np.concatenate([q[1] for q in parts]).astype(np.int64)
    v = np.concatenate([q[2] for q in parts]).astype(float)
    ar = np.concatenate([np.full(len(q[0]), q[3]) for q in parts])
    return (rows, cols, np.where(ar, 0.0, v), np.where(ar, v, 0.0), nst, nvec,
            np.where(nvec < cap, M - nvec, 0.0), scale)


def station_residence(gamma: float, sources: int, servers: int, S: float, cs2: float,
                      phi: float = 1.0) -> tuple[float, float, float]:
    """``(residence per visit, mean number present, throughput)`` of a finite-source FCFS station.

    ``sources`` customers each return to the station at rate ``gamma`` while
    away from it (arrival rate ``(sources - n) gamma``).  One server: the
    exact chain with the phase-type service of :func:`handler_ph`.
    ``servers > 1``: hyperexponential service (``cs2 > 1``) exactly, in a
    chain that counts the busy servers on a job of each kind; for ``cs2 <=
    1`` exponential service at rate ``min(n, servers)/S`` and the waiting
    time scaled by ``(1 + cs2)/2`` (the Lee-Longton two-moment
    approximation).  ``phi`` scales the waiting time for arrival streams
    more regular than finite-source Poisson (round-robin dispatch).  The
    chain is truncated at ``servers + STATION_CAP0`` customers, doubled
    while more than ``STATION_TAIL`` of the probability sits at the top.
    """
    if S <= 0 or gamma <= 0:
        return S, 0.0, 0.0
    M = int(sources)
    key = (M, int(servers), float(S), float(cs2))
    # start from the truncation the previous call with this station needed
    cap = _CAP_HINT.get(key, int(servers) + STATION_CAP0)
    while True:
        rows, cols, fixed, arr, nst, nvec, left, scale = _station_structure(
            M, int(servers), float(S), float(cs2), min(cap, M))
        pi = _stationary(rows, cols, fixed + gamma * arr, nst)
        if cap >= M or cap >= STATION_CAP_MAX or float(pi[nvec >= cap].sum()) <= STATION_TAIL:
            break
        cap *= 2
    if len(_CAP_HINT) > 4096:
        _CAP_HINT.clear()
    _CAP_HINT[key] = cap
    thr = gamma * float(pi @ left)
    Q = float(pi @ nvec)
    Rv = Q / thr
    wait = max(Rv - S, 0.0) * scale * phi
    return S + wait, thr * (S + wait), thr


def station_effective(lam: float, Ro: float, sources: float, servers: int, S: float,
                      cs2: float, phi: float = 1.0, busy: bool = False) -> tuple[float, ...]:
    """``(residence per visit, mean number present)`` of a station fed at rate ``lam``.

    A finite-source station (:func:`station_residence`) of ``sources``
    customers, a real number >= 1: the residence and queue length are
    interpolated linearly between the integers around it.  Each customer's
    time away is set so that the station's throughput is ``lam`` at the
    current residence ``Ro``: ``Z = sources / lam - Ro``.  With ``busy``
    the servers' utilization in that chain is returned third.
    """
    lo = max(1, int(math.floor(sources)))
    w = min(max(sources - lo, 0.0), 1.0)
    if sources >= 50.0:             # one more source changes nothing that matters there
        lo, w = int(round(sources)), 0.0
    out = np.zeros(3)
    for M, wt in ((lo, 1.0 - w), (lo + 1, w)):
        if wt <= 0.0:
            continue
        Z = max(M / lam - Ro, 1e-3 * S)
        Rv, Qv, thr = station_residence(1.0 / Z, M, servers, S, cs2, phi)
        out += wt * np.array([Rv, Qv, thr * S / servers])
    if busy:
        return float(out[0]), float(out[1]), float(out[2])
    return float(out[0]), float(out[1])


#: the revisit station (:func:`revisit_station_residence`) is used for at most this
#: many home threads per INI (:func:`models.ini._ini_station`): with two (N = 2) the
#: seed-2026 references went from R mean 0.85% to 0.90% and p95 3.18% to 3.59%; the
#: node method's finite-source view of the rest of the machine is then the larger
#: error (-3 to -5% against exact MVA with exponential times, which the two
#: populations do not repair)
REVISIT_MAX_HOME = 1

#: ... and up to this many phases of the INI's service (Erlang-4)
REVISIT_MAX_PHASES = 4

#: first truncation of the remote threads present in the revisit station (doubled
#: while more than :data:`REVISIT_TAIL` of the probability sits at it)
REVISIT_CAP0 = 24

#: largest probability left at the revisit station's truncation: at 1e-9 the chain
#: needed up to twice the levels and 5-10 times the time for the same residences to
#: four digits (the chain's own approximation is far coarser)
REVISIT_TAIL = 1e-6

_REVISIT_HINT: dict[tuple[Any, ...], int] = {}


@functools.lru_cache(maxsize=32)
def _revisit_structure(h: int, cap: int, ph: int) -> tuple[np.ndarray, ...]:
    """State space of :func:`revisit_station_residence`.

    Returns ``(rows, cols, kind, cnt, j, jj, w, q_h, q_r, away_h, n_r)``.
    States ``(home, n_r, t, j)``: ``home = (a, p1, g, p2)`` counts the home
    threads away, present for their first visit, in the gap between their
    visits, present for their second; ``n_r <= cap`` remote threads present;
    ``t`` the kind of the one in service (0 home first visit, 1 home second,
    2 remote) and ``j`` its phase (``-1, -1``: empty).  Per transition
    ``kind``: 0 a home arrival from away, 1 a home return from the gap, 2 a
    remote arrival, 3 a phase change ``j -> jj``, 4 a completion in phase
    ``j``; ``cnt`` the count whose rate it is (home away, home in the gap,
    remote present); ``jj`` the phase the next customer starts in (``-1``:
    none starts); ``w`` the probability of where the completion goes and of
    who is served next.  Per state: home and remote threads present, home
    threads away, remote threads present.
    """
    import itertools

    homes = [c for c in itertools.product(range(h + 1), repeat=4) if sum(c) == h]
    keys: list[tuple[Any, ...]] = []
    for hs in homes:
        for nr in range(cap + 1):
            if hs[1] + hs[3] + nr == 0:
                keys.append((hs, nr, -1, -1))
                continue
            for t, c in ((0, hs[1]), (1, hs[3]), (2, nr)):
                if c:
                    keys.extend((hs, nr, t, j) for j in range(ph))
    idx = {k: i for i, k in enumerate(keys)}
    out: list[tuple[int, int, int, float, int, int, float]] = []

    def serve_next(i: int, hs: tuple[int, ...], nr: int, j: int, w0: float) -> None:
        # a completion in phase j: the next one served is drawn among those present
        n = hs[1] + hs[3] + nr
        if n == 0:
            out.append((i, idx[(hs, nr, -1, -1)], 4, 0.0, j, -1, w0))
            return
        for t, c in ((0, hs[1]), (1, hs[3]), (2, nr)):
            if c:
                out.extend((i, idx[(hs, nr, t, jj)], 4, 0.0, j, jj, w0 * c / n)
                           for jj in range(ph))

    for i, (hs, nr, t, j) in enumerate(keys):
        a, p1, g, p2 = hs
        n = p1 + p2 + nr

        def arrive(hs2: tuple[int, ...], nr2: int, kind: int, cnt: float) -> None:
            if n == 0:                       # the one arriving starts its service
                tt = 0 if hs2[1] > p1 else (1 if hs2[3] > p2 else 2)
                out.extend((i, idx[(hs2, nr2, tt, jj)], kind, cnt, -1, jj, 1.0)
                           for jj in range(ph))
            else:
                out.append((i, idx[(hs2, nr2, t, j)], kind, cnt, j, -1, 1.0))

        if a:
            arrive((a - 1, p1 + 1, g, p2), nr, 0, float(a))
        if g:
            arrive((a, p1, g - 1, p2 + 1), nr, 1, float(g))
        if nr < cap:
            arrive(hs, nr + 1, 2, float(nr))
        if n == 0:
            continue
        out.extend((i, idx[(hs, nr, t, jj)], 3, 0.0, j, jj, 1.0) for jj in range(ph) if jj != j)
        if t == 0:                           # a home first visit: into the gap
            serve_next(i, (a, p1 - 1, g + 1, p2), nr, j, 1.0)
        elif t == 1:                         # a home second visit: away
            serve_next(i, (a + 1, p1, g, p2 - 1), nr, j, 1.0)
        else:                                # remote: away, or (a first visit) at once back
            serve_next(i, hs, nr - 1, j, 0.5)
            serve_next(i, hs, nr, j, 0.5)
    a_ = np.array([x[:3] + x[4:6] for x in out], dtype=np.int64)
    return (a_[:, 0], a_[:, 1], a_[:, 2], np.array([x[3] for x in out]), a_[:, 3], a_[:, 4],
            np.array([x[6] for x in out]),
            np.array([k[0][1] + k[0][3] for k in keys], dtype=float),
            np.array([k[1] for k in keys], dtype=float),
            np.array([k[0][0] for k in keys], dtype=float),
            np.array([k[1] for k in keys], dtype=np.int64))


def revisit_station_residence(gamma_h: float, gap_h: float, gamma_r: float, h: int, r: float,
                              S: float, cs2: float) -> tuple[float, float, float, float, float]:
    r"""A single-server FCFS station whose threads visit it twice, home and remote.

    The INI of a cluster sees each thread's request and reply as a pair of
    visits.  A remote thread's request enters (its first visit), is handled
    by a PE of the cluster and its reply leaves (the second) a short gap
    later; the home thread's reply enters and, after its computation, its
    next request leaves.  A thread coming back after a short gap finds the
    service that began when it left, not a stationary residual: with highly
    variable service it waits less than a random arrival, and with one home
    thread its own presence halves the station's arrivals.  A station of
    one population of independent arrivals (:func:`station_residence`)
    shows neither.

    ``h`` home threads, each away for an exponential time of rate
    ``gamma_h`` before its first visit and for an exponential gap of mean
    ``gap_h`` between its two visits; ``r`` remote threads, each arriving at
    rate ``gamma_r`` while away and, after its first visit, back at once
    (the gap short against the service: the model uses this station only
    there, :data:`models.ini.REVISIT_MAX_GAP`).  Returns ``(R_h, R_r, Q_h,
    Q_r, U)``: residence per visit and mean number present of each
    population, and the server's utilization.

    Notes
    -----
    States :math:`(a, p_1, g, p_2;\, n_r;\, t, j)`: home threads away,
    present for their first visit, in the gap, present for their second;
    remote threads present; the kind and phase of the one in service.
    Rates: :math:`a\gamma_h`, :math:`g/\text{gap}_h`, :math:`(r -
    n_r)\gamma_r` and the phase-type service (:func:`handler_ph`).  A remote
    completion leaves with probability 1/2 and otherwise rejoins the queue
    at once (a remote thread's two visits are not told apart; half the
    remote visits are first visits); the next one served is drawn among
    those present (random order: all have the same service).  The remote
    count is truncated at a level doubled until its probability is below
    :data:`REVISIT_TAIL`.  :math:`R_c = Q_c / X_c` (Little) with the visit
    rates :math:`X_h = 2\gamma_h E[a]`, :math:`X_r = 2\gamma_r E[r - n_r]`.

    Examples
    --------
    >>> Rh, Rr, Qh, Qr, U = revisit_station_residence(1e-3, 50.0, 1e-5, 1, 60, 100.0, 8.0)
    >>> Rh > 100.0 and Rr > 100.0, 0.0 < U < 1.0
    (True, True)
    """
    alpha, T = handler_ph(S, cs2)
    ph = len(alpha)
    ext = -T.sum(axis=1)
    h = int(h)
    # start from the truncation the previous call with this station needed
    key = (h, float(r), ph, float(S), float(cs2))
    cap = _REVISIT_HINT.get(key, int(min(REVISIT_CAP0, math.ceil(r))))
    while True:
        rows, cols, kind, cnt, j, jj, w, q_h, q_r, away_h, nr_s = _revisit_structure(h, cap, ph)
        a_jj = np.where(jj >= 0, alpha[np.maximum(jj, 0)], 1.0)
        jc = np.maximum(j, 0)
        rates = np.select([kind == 0, kind == 1, kind == 2, kind == 3],
                          [cnt * gamma_h * a_jj, cnt / gap_h * a_jj, (r - cnt) * gamma_r * a_jj,
                           T[jc, np.maximum(jj, 0)]],
                          ext[jc] * w * a_jj)
        pi = _stationary(rows, cols, rates, q_h.size)
        if (cap >= r or cap >= STATION_CAP_MAX
                or float(pi[nr_s >= cap].sum()) <= REVISIT_TAIL):
            break
        cap = int(min(2 * cap, math.ceil(r)))
    if len(_REVISIT_HINT) > 4096:
        _REVISIT_HINT.clear()
    _REVISIT_HINT[key] = cap
    Qh, Qr = float(pi @ q_h), float(pi @ q_r)
    Xh = 2.0 * gamma_h * float(pi @ away_h)
    Xr = 2.0 * gamma_r * float(pi[nr_s < cap] @ (r - q_r[nr_s < cap]))
    U = 1.0 - float(pi[(q_h + q_r) == 0].sum())
    return (Qh / Xh if Xh > 0 else S), (Qr / Xr if Xr > 0 else S), Qh, Qr, U


def revisit_station_effective(lam: float, Ro_h: float, Ro_r: float, h: int, r: float,
                              S: float, cs2: float, R: float,
                              trip: float) -> tuple[float, float, float, float, float]:
    """The revisit station (:func:`revisit_station_residence`) fed at ``lam / 2`` per population.

    Each population carries half of the station's visits.  The times away
    are set from the thread's cycle ``R`` and the current residences: a home
    thread is away ``trip + 2 Ro_r`` between its request and its reply
    (``trip``: latencies and the handler's residence at the remote cluster;
    its two visits to a remote INI, as a remote thread there, added here)
    and ``R - 2 Ro_h - (trip + 2 Ro_r)`` between its reply and its next
    request; a remote thread comes back after ``4 r / lam - 2 Ro_r`` (its
    pairs of visits come at ``lam / (4 r)``).

    Returns ``(R_o, R_h, R_r, Q, U)``: the mean residence per visit
    ``(R_h + R_r)/2``, each population's, the mean number present and the
    utilization.
    """
    away_h = max(trip + 2.0 * Ro_r, 1e-3 * S)
    gap_h = max(R - 2.0 * Ro_h - away_h, 1e-3 * S)
    Zr = max(4.0 * r / lam - 2.0 * Ro_r, 1e-3 * S)
    Rh, Rr, Qh, Qr, U = revisit_station_residence(1.0 / away_h, gap_h, 1.0 / Zr, h, r, S, cs2)
    return 0.5 * (Rh + Rr), Rh, Rr, Qh + Qr, U


#: the two-station chains (:func:`pair_residence`, :func:`split_residence`) of more states
#: than this are factorised on SuperLU's minimum-degree ordering of ``A + A^T``
#: (:func:`_grid_order`); fewer go through the compiled COLAMD path
GRID_ORDER_MIN = 600


def _grid_order(n: int) -> str:
    """SuperLU's column ordering for a two-station chain of ``n`` states.

    The states are a triangle of queue lengths ``(n1, n2)`` (times the phases in
    service), each coupled to its neighbours in both directions: the minimum-degree
    ordering of :math:`A + A^T`, factorised on the diagonal pivots
    (:func:`_sparse_solve`), fills in half as much as COLAMD with partial pivoting
    there (44 customers: 87,000-95,000 against 149,000-189,000 non-zeros in the
    factors, Erlang-2 or hyperexponential service) and solves about twice as fast
    from some 1,000 states on.
    """
    return "MMD_AT_PLUS_A" if n > GRID_ORDER_MIN else "COLAMD"


#: the two-station chain (:func:`pair_residence`) is used up to this many phases
#: of the station's service (exponential, Erlang-2 and two-phase hyperexponential)
PAIR_MAX_PHASES = 2

#: ... and up to this population (N <= 16 PEs per INI).  With the mirror states
#: lumped (:func:`_pair_structure`) 32 customers and two phases take 1,100 states
#: and about 3 ms a solve, and the INI model solves the chain two to four times a
#: point (:func:`models.ini._solve_pair_point`); 64 customers take 4,300 states,
#: 15-20 ms a solve, which puts a point above the 50 ms budget.  On the seed-2026
#: references, N = 11 (22 customers, static, U_o = 0.88) goes from -11% to -3.8%
#: of R with the twin chain
PAIR_MAX_POP = 32


def _two_station_states(pop: int, ph: int, lumped: bool) -> tuple[np.ndarray, ...]:
    """The states of a two-station chain by codes: ``(c1, c2, n_of, j_of, idx)``.

    A station's ``(n, j)`` (customers, phase in service) is the code ``0`` (empty)
    or ``1 + (n - 1) ph + j``, which orders the states as the tuples do.  The
    states ``(c1, c2)`` with at most ``pop`` customers, in the order of the
    state-by-state references (``n1, n2, j1, j2``); ``lumped``: only the
    canonical state ``c1 >= c2`` of each mirror orbit.  ``idx[c1, c2]`` is a
    state's index (-1: none).
    """
    C = 1 + pop * ph
    code = np.arange(C)
    n_of = np.where(code == 0, 0, (code - 1) // ph + 1)
    j_of = np.where(code == 0, -1, (code - 1) % ph)
    c1, c2 = (x.ravel() for x in np.meshgrid(code, code, indexing="ij"))
    keep = (n_of[c1] + n_of[c2] <= pop) & ((c1 >= c2) if lumped else True)
    c1, c2 = c1[keep], c2[keep]
    order = np.lexsort((j_of[c2], j_of[c1], n_of[c2], n_of[c1]))
    c1, c2 = c1[order], c2[order]
    idx = np.full((C, C), -1, dtype=np.int64)
    idx[c1, c2] = np.arange(c1.size)
    return c1, c2, n_of, j_of, idx


@functools.lru_cache(maxsize=32)
def _pair_structure(pop: int, ph: int, a_pos: tuple[bool, ...], t_pos: tuple[bool, ...],
                    e_pos: tuple[bool, ...]) -> tuple[np.ndarray, ...]:
    """State space of :func:`pair_residence`: ``(rows, cols, coef, factors, n1, busy1)``.

    The states, transitions and measures of :func:`_pair_structure_ref` (which
    builds them state by state; a test checks that both agree), built with array
    operations: a station's ``(n, j)`` is the code ``0`` (empty) or ``1 + (n - 1) ph
    + j``, which orders the states as the tuples do, so the canonical state of an
    orbit is the one whose first code is the larger.  48 customers and two phases:
    1 ms instead of 13.
    """
    o_T, o_e = 2, 2 + ph * ph
    o_a = o_e + ph
    c1, c2, n_of, j_of, idx = _two_station_states(pop, ph, lumped=True)
    size = c1.size
    free = (pop - n_of[c1] - n_of[c2]).astype(float)
    t_ok = np.asarray(t_pos, bool).reshape(ph, ph)
    parts: list[tuple[np.ndarray, ...]] = []

    def emit(sel: np.ndarray, other: np.ndarray, new: Any, coef: Any, f1: int, f2: Any) -> None:
        """Transitions of the states ``sel`` whose moving station takes the code ``new``."""
        s = np.flatnonzero(sel)
        if s.size:
            nc, oc = np.broadcast_to(new, (size,))[s], other[s]
            parts.append((s, idx[np.maximum(nc, oc), np.minimum(nc, oc)],
                          np.broadcast_to(coef, (size,))[s], np.full(s.size, f1),
                          np.broadcast_to(f2, (size,))[s]))

    for me, other in ((c1, c2), (c2, c1)):
        n, j = n_of[me], j_of[me]
        arrive = free > 0
        for jj in range(ph):                       # a customer returns, to this station
            if a_pos[jj]:
                emit(arrive & (n == 0), other, 1 + jj, 0.5 * free, 1, o_a + jj)
        emit(arrive & (n > 0), other, me + ph, 0.5 * free, 1, 0)
        for j0 in range(ph):
            at = (n > 0) & (j == j0)
            for jj in range(ph):                   # phase change
                if jj != j0 and t_ok[j0, jj]:
                    emit(at, other, me - j0 + jj, 1.0, o_T + j0 * ph + jj, 0)
            if e_pos[j0]:                          # completion
                emit(at & (n == 1), other, 0, 1.0, o_e + j0, 0)
                for jj in range(ph):
                    if a_pos[jj]:
                        emit(at & (n > 1), other, me - ph - j0 + jj, 1.0, o_e + j0, o_a + jj)
    rows, cols, coef, f1, f2 = (np.concatenate(x) for x in zip(*parts))
    facs = np.stack([f1, f2, np.zeros_like(f1)], axis=1).astype(np.int64)
    busy = np.zeros((size, ph))
    for cc in (c1, c2):
        m = n_of[cc] > 0
        np.add.at(busy, (np.flatnonzero(m), j_of[cc][m]), 0.5)
    return (rows.astype(np.int64), cols.astype(np.int64), coef.astype(float), facs,
            0.5 * (n_of[c1] + n_of[c2]).astype(float), busy)


def _pair_structure_ref(pop: int, ph: int, a_pos: tuple[bool, ...], t_pos: tuple[bool, ...],
                        e_pos: tuple[bool, ...]) -> tuple[np.ndarray, ...]:
    """State space of :func:`pair_residence`, state by state (the reference of
    :func:`_pair_structure`): ``(rows, cols, coef, factors, n1, busy1)``.

    States ``(n1, j1, n2, j2)``: customers at each station and the phase of
    the one in service (``-1`` when empty).  The chain is symmetric in the
    two stations, so a state and its mirror ``(n2, j2, n1, j1)`` are lumped
    into one (the orbits of the swap are a strong lumping: the lumped chain's
    stationary probability of an orbit is the sum over it), which halves the
    states (pop 56, two phases: 6,600 -> 3,300 states, about 2.5 times
    faster to solve).  Only the canonical state ``(n1, j1) >= (n2, j2)`` of
    each orbit is kept, and a transition's target is replaced by its
    canonical state.  A rate is ``coef`` times the product of three entries
    of ``theta = [1, 1/Z, T.ravel(), exit, alpha]``.  The measures are the
    station averages, equal to station 1's by symmetry: ``n1`` is ``(n1 +
    n2)/2`` and ``busy1[s, j]`` half the number of stations serving in
    phase ``j``.
    """
    o_T, o_e = 2, 2 + ph * ph
    o_a = o_e + ph
    keys = []
    for n1 in range(pop + 1):
        for n2 in range(pop + 1 - n1):
            for j1 in (range(ph) if n1 else (-1,)):
                for j2 in (range(ph) if n2 else (-1,)):
                    if (n1, j1) >= (n2, j2):
                        keys.append((n1, j1, n2, j2))
    idx = {k: i for i, k in enumerate(keys)}
    rows: list[int] = []
    cols: list[int] = []
    coef: list[float] = []
    facs: list[tuple[int, ...]] = []

    def add(i: int, st: list, c: float, f: tuple[int, ...]) -> None:
        a, b = (st[0], st[1]) if st[0] >= st[1] else (st[1], st[0])
        rows.append(i)
        cols.append(idx[(a[0], a[1], b[0], b[1])])
        coef.append(c)
        facs.append(f + (0,) * (3 - len(f)))

    for i, (n1, j1, n2, j2) in enumerate(keys):
        free = pop - n1 - n2
        st = [(n1, j1), (n2, j2)]
        for k in range(2):
            n, j = st[k]
            if free:                       # a customer returns, to either station
                if n == 0:
                    for jj in range(ph):
                        if a_pos[jj]:
                            s2 = list(st)
                            s2[k] = (1, jj)
                            add(i, s2, 0.5 * free, (1, o_a + jj))
                else:
                    s2 = list(st)
                    s2[k] = (n + 1, j)
                    add(i, s2, 0.5 * free, (1,))
            if not n:
                continue
            for jj in range(ph):
                if jj != j and t_pos[j * ph + jj]:
                    s2 = list(st)
                    s2[k] = (n, jj)
                    add(i, s2, 1.0, (o_T + j * ph + jj,))
            if not e_pos[j]:
                continue
            if n == 1:
                s2 = list(st)
                s2[k] = (0, -1)
                add(i, s2, 1.0, (o_e + j,))
            else:
                for jj in range(ph):
                    if a_pos[jj]:
                        s2 = list(st)
                        s2[k] = (n - 1, jj)
                        add(i, s2, 1.0, (o_e + j, o_a + jj))
    n1v = np.array([0.5 * (k[0] + k[2]) for k in keys], dtype=float)
    busy = np.zeros((len(keys), ph))
    for i, key in enumerate(keys):
        if key[0]:
            busy[i, key[1]] += 0.5
        if key[2]:
            busy[i, key[3]] += 0.5
    return (np.array(rows, dtype=np.int64), np.array(cols, dtype=np.int64), np.array(coef),
            np.array(facs, dtype=np.int64), n1v, busy)


def pair_residence(Z: float, pop: int, S: float, cs2: float) -> tuple[float, float, float]:
    """``(residence per visit, mean number present, throughput)`` of one of two twin stations.

    ``pop`` customers circulate between a delay (exponential, mean ``Z``)
    and two single-server FCFS stations, each chosen with probability 1/2
    on leaving the delay; service phase-type (:func:`handler_ph`).  Unlike
    one finite-source station (:func:`station_residence`), the customers
    held at the *other* station are missing from this one's arrivals: with
    highly variable service the two stations starve each other in turn (the
    INIs of a two-cluster machine).
    """
    alpha, T = handler_ph(S, cs2)
    ph = len(alpha)
    ext = -T.sum(axis=1)
    key = (int(pop), ph, tuple(bool(x) for x in alpha > 0),
           tuple(bool(x) for x in T.ravel() > 0), tuple(bool(x) for x in ext > 0))
    rows, cols, coef, fac, n1, busy = _pair_structure(*key)
    theta = np.concatenate([[1.0, 1.0 / Z], T.ravel(), ext, alpha])
    pi = _stationary(rows, cols, coef * theta[fac].prod(axis=1), n1.size,
                     order=_grid_order(n1.size))
    Q = float(pi @ n1)
    X = float(pi @ (busy @ ext))
    return Q / X, Q, X


def _pair_residence_ref(Z: float, pop: int, S: float, cs2: float) -> tuple[float, float, float]:
    """Reference of :func:`pair_residence` without the mirror lumping (state by state; tests)."""
    alpha, T = handler_ph(S, cs2)
    ph = len(alpha)
    ext = -T.sum(axis=1)
    keys = [(n1, j1, n2, j2) for n1 in range(pop + 1) for n2 in range(pop + 1 - n1)
            for j1 in (range(ph) if n1 else (-1,)) for j2 in (range(ph) if n2 else (-1,))]
    idx = {k: i for i, k in enumerate(keys)}
    rows: list[int] = []
    cols: list[int] = []
    rates: list[float] = []
    for i, (n1, j1, n2, j2) in enumerate(keys):
        st = [(n1, j1), (n2, j2)]
        free = pop - n1 - n2
        for k in range(2):
            n, j = st[k]
            moves: list[tuple[tuple[int, int], float]] = []
            if free:
                if n == 0:
                    moves += [((1, jj), 0.5 * free / Z * alpha[jj]) for jj in range(ph)]
                else:
                    moves.append(((n + 1, j), 0.5 * free / Z))
            if n:
                moves += [((n, jj), T[j, jj]) for jj in range(ph) if jj != j]
                if n == 1:
                    moves.append(((0, -1), ext[j]))
                else:
                    moves += [((n - 1, jj), ext[j] * alpha[jj]) for jj in range(ph)]
            for new, rate in moves:
                if rate > 0:
                    s2 = list(st)
                    s2[k] = new
                    rows.append(i)
                    cols.append(idx[(s2[0][0], s2[0][1], s2[1][0], s2[1][1])])
                    rates.append(float(rate))
    pi = _stationary(np.array(rows), np.array(cols), np.array(rates), len(keys))
    Q = float(sum(p * k[0] for p, k in zip(pi, keys)))
    X = float(sum(p * ext[k[1]] for p, k in zip(pi, keys) if k[0]))
    return Q / X, Q, X


def pair_effective(lam: float, Ro: float, pop: int, S: float, cs2: float) -> tuple[float, float]:
    """``(residence per visit, mean number present)`` of a twin station fed at rate ``lam``.

    The delay's mean ``Z = pop / (2 lam) - Ro`` makes each station's
    throughput ``lam`` at the current residence ``Ro`` (as in
    :func:`station_effective`).
    """
    Z = max(pop / (2.0 * lam) - Ro, 1e-3 * S)
    Rv, Qv, _ = pair_residence(Z, int(pop), S, cs2)
    return Rv, Qv


@functools.lru_cache(maxsize=32)
def _split_structure(pop: int, ph: int) -> tuple[np.ndarray, ...]:
    """State space of :func:`split_residence`: ``(rows, cols, kind, k, j, jj, free, n1, j1)``.

    The states, transitions and measures of :func:`_split_structure_ref` (state
    by state; a test checks that both agree), built with array operations on the
    stations' codes ``0`` (empty) and ``1 + (n - 1) ph + j``.
    """
    c1, c2, n_of, j_of, idx = _two_station_states(pop, ph, lumped=False)
    size = c1.size
    free = pop - n_of[c1] - n_of[c2]
    parts: list[tuple[np.ndarray, ...]] = []
    for k, (me, other) in enumerate(((c1, c2), (c2, c1))):
        n, j = n_of[me], j_of[me]

        def emit(sel: np.ndarray, new: Any, kind: int, jf: Any, jj: int) -> None:
            s = np.flatnonzero(sel)
            if s.size:
                nc = np.broadcast_to(new, (size,))[s]
                tgt = idx[nc, other[s]] if k == 0 else idx[other[s], nc]
                parts.append((s, tgt, np.full(s.size, kind), np.full(s.size, k),
                              np.broadcast_to(jf, (size,))[s], np.full(s.size, jj), free[s]))

        arrive = free > 0
        for jj in range(ph):
            emit(arrive & (n == 0), 1 + jj, 0, j, jj)
        emit(arrive & (n > 0), me + ph, 0, j, -1)
        for j0 in range(ph):
            at = (n > 0) & (j == j0)
            for jj in range(ph):
                if jj != j0:
                    emit(at, me - j0 + jj, 1, j0, jj)
            emit(at & (n == 1), 0, 2, j0, -1)
            for jj in range(ph):
                emit(at & (n > 1), me - ph - j0 + jj, 2, j0, jj)
    a = [np.concatenate(x).astype(np.int64) for x in zip(*parts)]
    return (a[0], a[1], a[2], a[3], a[4], a[5], a[6], n_of[c1].astype(float), j_of[c1])


def _split_structure_ref(pop: int, ph: int) -> tuple[np.ndarray, ...]:
    """State space of :func:`split_residence`, state by state (the reference of
    :func:`_split_structure`): ``(rows, cols, kind, k, j, jj, free, n1, j1)``.

    States ``(n1, j1, n2, j2)``: customers at station 1 (one of the
    symmetric stations) and at station 2 (the others aggregated), and the
    phase of the one in service (``-1`` when empty).  Per transition
    ``kind`` is 0 (arrival of one of ``free`` customers in the delay), 1
    (phase change ``j -> jj``), 2 (completion in phase ``j``); ``k`` the
    station, ``jj`` the phase the next customer starts in (``-1``: none); per
    state ``n1`` and ``j1`` of station 1.
    """
    keys = [(n1, j1, n2, j2) for n1 in range(pop + 1) for n2 in range(pop + 1 - n1)
            for j1 in (range(ph) if n1 else (-1,)) for j2 in (range(ph) if n2 else (-1,))]
    idx = {q: i for i, q in enumerate(keys)}
    out: list[tuple[int, int, int, int, int, int, int]] = []
    for i, (n1, j1, n2, j2) in enumerate(keys):
        st = [(n1, j1), (n2, j2)]
        free = pop - n1 - n2
        for k in range(2):
            n, j = st[k]
            moves: list[tuple[tuple[int, int], int, int, int]] = []
            if free:
                moves += ([((1, jj), 0, j, jj) for jj in range(ph)] if n == 0
                          else [((n + 1, j), 0, j, -1)])
            if n:
                moves += [((n, jj), 1, j, jj) for jj in range(ph) if jj != j]
                moves += ([((0, -1), 2, j, -1)] if n == 1
                          else [((n - 1, jj), 2, j, jj) for jj in range(ph)])
            for new, kind, jf, jj in moves:
                s2 = list(st)
                s2[k] = new
                out.append((i, idx[(s2[0][0], s2[0][1], s2[1][0], s2[1][1])], kind, k, jf, jj,
                            free))
    a = np.array(out, dtype=np.int64)
    n1_all = np.array([q[0] for q in keys], dtype=float)
    j1_all = np.array([q[1] for q in keys], dtype=np.int64)
    return (a[:, 0], a[:, 1], a[:, 2], a[:, 3], a[:, 4], a[:, 5], a[:, 6], n1_all, j1_all)


def split_residence(Z: float, pop: int, S: float, cs2: float,
                    stations: int) -> tuple[float, float, float]:
    r"""``(residence per visit, mean number present, throughput)`` of one of ``stations`` twins.

    ``pop`` customers circulate between a delay (exponential, mean ``Z``)
    and ``stations`` identical single-server FCFS stations (service
    :func:`handler_ph` of mean ``S``), one chosen uniformly on leaving the
    delay.  The chain keeps one station exactly and the ``stations - 1``
    others as one server ``stations - 1`` times as fast, chosen with
    probability ``(stations - 1)/stations``.  That aggregate keeps the
    first-order effect of a long service elsewhere: it holds the customers
    routed there at ``(stations - 1)/stations`` of the rate for ``1/(stations
    - 1)`` of the time, the same customer-time as one of the real stations
    at ``1/stations`` of the rate for the whole service.  With ``stations =
    2`` it is the twin chain (:func:`pair_residence`) without the mirror
    lumping.

    Notes
    -----
    States :math:`(n_1, j_1, n_2, j_2)` (customers at station 1 and at the
    aggregate, phase in service), :math:`f = pop - n_1 - n_2` in the delay.
    With :math:`c` = ``stations``, service :math:`(\alpha, T)`, exit rates
    :math:`t = -T\mathbf{1}`, the rates are

    .. math::

        f/Z \cdot \tfrac{1}{c} \;(\text{to 1}), \qquad
        f/Z \cdot \tfrac{c-1}{c} \;(\text{to 2}), \qquad
        s_k T_{j j'}, \qquad s_k t_j \;(\text{completion}),

    with speeds :math:`s_1 = 1`, :math:`s_2 = c - 1` and a new customer's
    phase drawn from :math:`\alpha`.  The residence per visit at station 1
    is Little's :math:`Q_1 / X_1`, :math:`X_1 = \sum_s \pi_s t_{j_1(s)}`.

    Examples
    --------
    >>> import math
    >>> R, Q, X = split_residence(5.0, 6, 1.0, 8.0, 3)
    >>> math.isclose(Q, X * R), R > 1.0
    (True, True)
    """
    alpha, T = handler_ph(S, cs2)
    ph = len(alpha)
    ext = -T.sum(axis=1)
    c = int(stations)
    rows, cols, kind, k, j, jj, free, n1, j1 = _split_structure(int(pop), ph)
    route = np.array([1.0 / c, (c - 1.0) / c])
    speed = np.array([1.0, c - 1.0])
    a_jj = np.where(jj >= 0, alpha[np.maximum(jj, 0)], 1.0)
    rates = np.where(kind == 0, free / Z * route[k] * a_jj,
                     np.where(kind == 1, speed[k] * T[np.maximum(j, 0), np.maximum(jj, 0)],
                              speed[k] * ext[np.maximum(j, 0)] * a_jj))
    pi = _stationary(rows, cols, rates, n1.size, order=_grid_order(n1.size))
    Q = float(pi @ n1)
    X = float(pi[j1 >= 0] @ ext[j1[j1 >= 0]])
    return Q / X, Q, X


#: iterates the fixed point of :func:`solve_node` remembers for Anderson mixing
#: (depth 1 took 25-35 iterations at the slowest points of the domain, depth 3
#: about half as many)
ANDERSON_DEPTH = 3


def _anderson_step(x: np.ndarray, g: np.ndarray, hist: list[tuple[np.ndarray, np.ndarray]],
                   sources: float) -> np.ndarray:
    """Next iterate of the fixed point ``x = f(x)`` from the residual ``g = f(x) - x``.

    Anderson mixing (type II) over the last :data:`ANDERSON_DEPTH` iterates,
    damped by :data:`DAMP`: with ``dX``, ``dG`` the differences of the stored
    iterates and residuals, ``c`` minimises ``|g - dG c|`` (least squares)
    and ``x' = x + b g - (dX + b dG) c``, ``b = 1 - DAMP``.  A candidate
    that leaves the physical region (a time <= 0, or ``X R_q >= sources``,
    more requests in service than there are sources) is replaced by the
    damped step ``x + b g`` and the history is restarted; so is a
    candidate step shorter than a tenth of the damped one (relative to
    ``x``: a degenerate history, which stalls the iteration).  ``hist`` is
    updated in place with ``(x, g)``.

    References
    ----------
    Walker, H. F. and Ni, P. (2011). Anderson acceleration for fixed-point
    iterations. SIAM J. Numer. Anal. 49(4), 1715-1735.
    """
    b = 1.0 - DAMP
    xn = x + b * g
    if hist:
        dX = np.array([x - h[0] for h in hist]).T
        dG = np.array([g - h[1] for h in hist]).T
        c, *_ = np.linalg.lstsq(dG, g, rcond=1e-10)
        cand = xn - (dX + b * dG) @ c
        # accept only a physical point: positive times (R_o is 0 without a
        # station), and fewer requests in service than there are sources
        # (X * R_q < sources)
        scale = np.maximum(np.abs(x), 1e-300)
        # a step far shorter than the damped one stalls the iteration (a degenerate
        # history: the residual did not respond to the last moves)
        stall = np.max(np.abs(cand - x) / scale) < 0.1 * np.max(np.abs(b * g) / scale)
        if (np.all(np.isfinite(cand)) and cand[0] > 0 and cand[1] > 0 and cand[2] >= 0
                and cand[1] < sources * cand[0] and not stall):
            xn = cand
        else:
            hist.clear()
    hist.insert(0, (x.copy(), g.copy()))
    del hist[ANDERSON_DEPTH:]
    # the step stays physical too (an overshoot of R_q would make the
    # finite-source arrival rate infinite)
    xn[1] = min(xn[1], 0.999 * sources * xn[0])
    return xn


@functools.lru_cache(maxsize=64)
def _chain(sources: int, W: float, o: float, cs2: float, nmax: int) -> NodeChain:
    return NodeChain(sources, W, o, cs2, nmax)


def solve_node(sources: int, W: float, o: float, cs2: float, delay: float, *,
               station: dict[str, Any] | None = None,
               tol: float = 1e-7, max_iter: int = 200, nmax: int = 6,
               tail: float = 1e-4, x0: tuple[float, float, float] | None = None
               ) -> dict[str, Any]:
    """Symmetric fixed point of the node chain.

    ``delay`` is the part of the away time that does not depend on the
    requests' residence elsewhere (``2L`` in LoPC); the away time is
    ``delay + R_q``.  The per-source rate ``gamma`` makes the request arrival
    rate at the node equal to the thread's own cycle rate (every processor
    receives, on average, as many requests as its thread sends).  The
    truncation ``nmax`` doubles until the probability of a full queue is
    below ``tail``.

    ``station`` (INI model): a dict with ``visits`` (per round trip),
    ``threads`` (per station), ``sources``, ``servers``, ``S``, ``cs2`` and
    ``phi`` (see :func:`station_residence`); the away time then also holds
    ``visits`` residences at such stations, each fed at rate
    ``threads * visits / R``.  With ``pair`` (a population) in ``station``
    the station is one of rv twins (:func:`pair_effective`); with
    ``wait_factor`` the single station's waiting time is multiplied by it; with
    ``revisit`` (``(h, r, l)``) the station is the revisit station of ``h`` home
    and ``r`` remote threads (:func:`revisit_station_effective`), and the fixed
    point also carries the difference of their residences.  ``x0``: a
    first guess of ``(R, R_q, R_o)`` (default: the contention-free values).

    Returns a dict with ``R`` (cycle), ``R_w`` (computing), ``R_p`` (pending:
    reply handled, handlers behind it still running), ``R_q``, ``R_y``,
    ``Q_q``, ``Q_y``, ``converged``, ``iterations``, ``residual`` and the
    chain ``size``.
    """
    Rq = o
    st = station
    Ro = st["S"] if st else 0.0
    R = W + delay + 2.0 * o + (st["visits"] * Ro if st else 0.0)
    if st and x0 is None:
        # a station past its capacity at the contention-free cycle starts near its
        # bottleneck bound R = threads visits S / servers, at 95% utilization (the
        # contention-free start is then far off: ~10 iterations more near
        # saturation; a start at the bound itself lands in the held-utilization
        # regime, SAT_IDLE, whose fixed point can be spurious)
        Rb = st["threads"] * st["visits"] * st["S"] / (0.95 * st["servers"])
        if Rb > R:
            Ro += (Rb - R) / st["visits"]
            R = Rb
    x = np.array([R, Rq, Ro]) if x0 is None else np.array(x0, dtype=float)[:3]
    rv = st.get("revisit") if st else None
    if rv:
        # the revisit station of home and remote threads (models.ini._ini_station): the
        # fixed point also carries the difference of their residences, R_o their mean
        x = np.append(x, 0.0)

    def revisit(lam_o: float, R: float, Rq: float, Ro: float, d: float) -> tuple[float, ...]:
        # rv[2]: the intra-cluster latency of the thread's trip (delay = 2 l + 2 L);
        # trip = 2 L + l + R_q, its time between its rv INIs without their residences
        assert st is not None and rv is not None
        return revisit_station_effective(lam_o, Ro + 0.5 * d, max(Ro - 0.5 * d, st["S"]), rv[0],
                                         rv[1], st["S"], st["cs2"], R,
                                         delay - rv[2] + Rq)
    it_total = 0
    first = True
    sat = 0.0           # utilization of a station near saturation (0: solve its chain)
    while True:
        ch = _chain(int(sources), float(W), float(o), float(cs2), int(min(sources, nmax)))
        want = 1e-3 if first and ch.nmax < sources else tol
        hist: list[tuple[np.ndarray, np.ndarray]] = []
        for it in range(1, max_iter + 1):
            sat_was = sat
            R, Rq, Ro = x[:3]
            X = 1.0 / R
            gamma = X / max(sources - X * Rq, 1e-12)
            away = delay + Rq + (st["visits"] * Ro if st else 0.0)
            pi = ch.stationary(gamma, 1.0 / max(away, 1e-12 * o))
            Xn = float(pi @ ch.reply_exit)
            lam_in = gamma * float(pi @ ch.src_left)
            Qq = float(pi @ ch.nreq)
            if st:
                # each source's time away from the station, consistent with the thread's
                # cycle: sources / Z+Ro = threads * visits / R at the fixed point
                lam_o = st["threads"] * st["visits"] / R
                phi = st["phi"]
                if callable(phi):
                    phi = phi(min(lam_o * st["S"] / st["servers"], 1.0))
                # the stations cannot carry more than their capacity: R >= threads *
                # visits * S / servers (the approximate waiting-time scalings could let
                # the fixed point pass it)
                floor = (st["threads"] * st["visits"] * st["S"] / st["servers"]
                         - (R - st["visits"] * Ro)) / st["visits"]
                if sat:
                    # a station near saturation, at the utilization U of its last solve:
                    # the cycle is R = threads visits S / (servers U), and the residence
                    # what that leaves (no chain solve)
                    Ron = max((st["threads"] * st["visits"] * st["S"] / (st["servers"] * sat)
                               - (R - st["visits"] * Ro)) / st["visits"], st["S"])
                    Qo = lam_o * Ron
                elif st.get("pair"):
                    Ron, Qo = pair_effective(lam_o, Ro, st["pair"], st["S"], st["cs2"])
                elif rv:
                    Ron, Rh, Rr, Qo, U = revisit(lam_o, R, Rq, Ro, x[3])
                    dn = Rh - Rr
                    sat = U if U >= 1.0 - SAT_IDLE else 0.0
                else:
                    Ron, Qo, U = station_effective(lam_o, Ro, st["sources"], st["servers"],
                                                   st["S"], st["cs2"], phi, busy=True)
                    fw = st.get("wait_factor", 1.0)
                    if fw != 1.0:
                        # the waiting time scaled (the twin-station correction of the INI
                        # model); the held-utilization regime would bypass the factor
                        Rs = Ron
                        Ron = st["S"] + fw * (Rs - st["S"])
                        Qo *= Ron / Rs
                    else:
                        sat = U if U >= 1.0 - SAT_IDLE else 0.0
                Ron = max(Ron, floor)
            else:
                Ron, Qo = 0.0, 0.0
            # the station's residence enters the thread's cycle with a steep gain near
            # saturation; a geometric mean of old and new keeps the iteration stable
            fx = np.array([1.0 / Xn, Qq / lam_in, math.sqrt(Ron * Ro) if st else 0.0])
            if rv:
                # held at saturation (the held-utilization regime solves no chain)
                fx = np.append(fx, x[3] if sat and sat_was else dn)
            g = fx - x
            scale = np.maximum(x, 1e-300)
            if rv:
                scale[3] = max(x[2], 1e-300)        # the difference, relative to R_o
            res = float(np.max(np.abs(g) / scale))
            if res < want and sat:
                # the station's chain at the fixed point: done if its utilization is the
                # one assumed, else iterate on with the new one
                assert st is not None               # sat is only set with a station
                if rv:
                    U = revisit(lam_o, R, Rq, Ro, x[3])[4]
                else:
                    U = station_effective(lam_o, Ro, st["sources"], st["servers"], st["S"],
                                          st["cs2"], phi, busy=True)[2]
                if abs(U - sat) <= want * U:
                    break
                sat = U if U >= 1.0 - SAT_IDLE else 0.0
            elif res < want:
                break
            if sat != sat_was:
                # the station's map changed (chain solve <-> held utilization): the
                # stored iterates belong to the other map
                hist.clear()
            xn = _anderson_step(x, g, hist, sources)
            x = xn
        it_total += it
        top = float(pi[ch.top].sum())
        if ch.nmax >= sources or nmax >= NMAX_CAP or (top <= tail and want == tol):
            break
        if top > tail:
            # geometric tail: the queue-length probabilities fall by `ratio` per request
            below = float(pi[ch.nreq == ch.nmax - 1].sum())
            ratio = min(max(top / below, 0.05), 0.995) if below > 0 else 0.5
            nmax = int(min(NMAX_CAP, max(nmax + 4, math.ceil(nmax + math.log(tail / top)
                                                             / math.log(ratio)) + 2)))
        first = False
    R = 1.0 / Xn
    if st:
        # a station at its capacity: the fixed point stops within its tolerance of the
        # bound R = threads visits S / servers, possibly just below it (a utilization of
        # 1 + 1e-7); the bound is exact, so the last step onto it is taken here
        Rb = st["threads"] * st["visits"] * st["S"] / st["servers"]
        if R < Rb <= R * (1.0 + 10.0 * tol):
            Ron += (Rb - R) / st["visits"]
            R = Rb
    return {"R": R, "R_w": float(pi[ch.is_C].sum()) * R, "R_p": float(pi[ch.is_P].sum()) * R,
            "R_q": Qq / lam_in, "R_y": float(pi[ch.is_Y].sum()) * R, "Q_q": Qq,
            "Q_y": float(pi[ch.is_Y].sum()), "R_o": Ron, "Q_o": Qo,
            "converged": res < tol, "iterations": it_total,
            "residual": res, "size": ch.size, "truncation": top}


#: fewest Erlang latency stages at which a message sent behind another on a
#: FIFO channel of the whole-machine chain shares the earlier message's clock
#: (:func:`_behind`); with one stage the lag cannot be resolved and the later
#: message keeps a clock of its own
SHARED_MIN_STAGES = 2


def _behind(th: list, other: int, kind: str, node: int, m: int = 1) -> int:
    """Nonzero if thread ``other`` has a message of ``kind`` in flight on the same channel.

    A channel ``u -> v`` carries at most two messages: ``u``'s request to
    ``v`` (thread ``u`` in ``N1`` towards ``v``) and the reply to ``v``'s
    request handled at ``u`` (thread ``v`` in ``N2`` from ``u``).  A message
    sent while the other is in flight is behind it: the simulator's constant
    latency never reorders a channel.

    With ``m >= SHARED_MIN_STAGES`` Erlang stages the later message rides
    on the earlier one's clock: it is sent ``d`` stages behind (``d`` = the
    stages the earlier one has completed), returned as ``1 + d``; it does
    not move while the earlier one is in flight, and when that one arrives
    it has ``d`` stages left (none: it arrives at once, behind it).  Its own
    latency is still Erlang-``m`` (the earlier one's remaining ``m - d``
    stages, then ``d``), but the two arrive as far apart as they were sent,
    up to ``d`` stages' jitter -- as through a constant delay, where two
    threads with short computations keep sending a reply and a request
    together (the gap at arrival equals the gap at sending).  With
    independent clocks the pair separated by about ``L sqrt(2/m)`` every
    trip, which broke that pattern (``P = 2``, ``W`` well below ``o``:
    ``R`` 10-15% low).  With one stage (``m < SHARED_MIN_STAGES``) the later
    message has a clock of its own and, when it ends first, the earlier
    message arrives and the later one takes over the earlier's clock (a
    swap of labels); returned as 1.
    """
    st = th[other]
    if not (st[0] == kind and st[1] == node):
        return 0
    return 1 + st[2] if m >= SHARED_MIN_STAGES else 1


def _release(th: list, other: int, kind: str, node: int, m: int = 1) -> bool:
    """A message arrived: the later message of its channel (thread ``other``) may arrive.

    Returns True if the later message arrives at once (sent ``0`` stages
    behind on a shared clock, :func:`_behind`); the caller moves it.
    """
    st = th[other]
    if st[0] == kind and st[1] == node and st[3]:
        if m >= SHARED_MIN_STAGES:
            lag = st[3] - 1
            if lag == 0:
                return True
            th[other] = (kind, node, m - lag, 0)
        else:
            th[other] = (kind, node, st[2], 0)
    return False


#: most Erlang phases of the handler in the whole-machine chain, by machine size;
#: a more regular handler (Erlang-``k``, ``k`` above this) is solved at ``cs2 = 1,
#: 1/2, 1/3`` and the results extrapolated quadratically in ``cs2`` (P = 3:
#: Erlang-5 and -6 have 6,290 and 8,741 states and take 70-250 ms a solve, the
#: three chains 4,935 states in all, fewer fill-in and 20-40 ms; Erlang-4 has
#: 4,295 states and is solved as it is).  On 24 random P = 3 points the
#: extrapolation differs from the Erlang-k chain by 0.007% of R on average,
#: 0.08% at most
FULL_MAX_ERLANG = {3: 4}

#: the fields of :func:`solve_full` that are extrapolated in ``cs2``
_FULL_TIMES = ("R", "R_w", "R_p", "R_q", "R_y")


def solve_full(P: int, W: float, o: float, cs2: float, L: float, *,
               latency_stages: int = 4, fifo: bool = True) -> dict[str, Any]:
    """The whole machine of ``P`` processors as one Markov chain (small ``P`` only).

    Every thread's state (computing, pending, request in the network with its
    destination, request queued, reply in the network, reply queued), every
    processor's FCFS handler queue in order and the phase of the handler in
    service.  The latency ``L`` is Erlang with ``latency_stages`` stages
    (the simulator's latency is constant), the handler service phase-type
    as in :func:`handler_ph`.  Used for ``P`` where the node chain's
    finite-source view of the other threads is poor (``P <= FULL_MAX_P``).

    The state space is enumerated once per structure (``P``, stages, the
    handler's phase pattern) by :func:`_full_structure`; each transition
    rate is stored as a product of at most three base rates, so a new point
    only evaluates the products and solves (the same results as the chain
    without the processors' symmetry lumped, ``_solve_full_chain(...,
    lumped=False)``, a test checks).

    A handler more regular than Erlang-:data:`FULL_MAX_ERLANG` (``P = 3``)
    is not represented phase by phase: the chain is solved for ``cs2 = 1,
    1/2, 1/3`` and the residences extrapolated by the quadratic through the
    three to the Erlang-``k`` handler of :func:`handler_ph`, ``cs2 = 1/k``
    (the mean waiting time of an M/G/1 queue is linear in ``cs2``; the
    quadratic term takes up the machine's coupling).  Extrapolating further,
    to the simulator's deterministic handler at ``cs2 = 0``, moved R by less
    than 1% and not closer to the simulator (the constant latency, Erlang in
    the chain, is the larger error at these points).  The queue
    lengths follow by Little's law (``Q_q = R_q / R``, ``Q_y = R_y / R``, one
    thread per processor).  The result then has ``extrapolated=True``.
    """
    kmax = FULL_MAX_ERLANG.get(int(P))
    if kmax is not None and cs2 < 1.0 and len(handler_ph(o, cs2)[0]) > kmax:
        cs = np.array([1.0, 0.5, 1.0 / 3.0])
        runs = [_solve_full_chain(P, W, o, float(c), L, latency_stages, fifo=fifo) for c in cs]
        # the handler of the other methods: Erlang-k of handler_ph (k <= MAX_ERLANG)
        target = 1.0 / len(handler_ph(o, cs2)[0])
        # Lagrange weights of the quadratic through the three cs2 values, at target
        wts = np.array([np.prod([(target - cs[m]) / (cs[k] - cs[m]) for m in range(3) if m != k])
                        for k in range(3)])
        out = dict(runs[0])
        for key in _FULL_TIMES:
            out[key] = float(sum(w * r[key] for w, r in zip(wts, runs)))
        out["Q_q"] = out["R_q"] / out["R"]
        out["Q_y"] = out["R_y"] / out["R"]
        out["size"] = sum(int(r["size"]) for r in runs)
        out["extrapolated"] = True
        return out
    return _solve_full_chain(P, W, o, cs2, L, latency_stages, fifo=fifo)


def _solve_full_chain(P: int, W: float, o: float, cs2: float, L: float,
                      latency_stages: int, lumped: bool = True,
                      fifo: bool = True) -> dict[str, Any]:
    """The chain of :func:`solve_full` with the handler's phases of :func:`handler_ph`."""
    alpha, T = handler_ph(o, cs2)
    ph = len(alpha)
    ext = -T.sum(axis=1)
    m = latency_stages if L > 0 else 0
    lrate = m / L if L > 0 else 0.0
    wr = 1.0 / max(W, 1e-9 * o)
    theta = np.concatenate([[1.0, wr / (P - 1), lrate], T.ravel(), ext, alpha, [1.0 / (P - 1)]])
    key = (int(P), ph, m, tuple(bool(x) for x in alpha > 0), tuple(bool(x) for x in T.ravel() > 0),
           tuple(bool(x) for x in ext > 0))
    rows, cols, fac, kinds, nreq, heads = _full_structure(*key, lumped=lumped,
                                                          fifo=fifo or m == 0)
    rates = theta[fac].prod(axis=1)
    n = kinds.shape[0]
    its, res = 1, 0.0
    if n >= POWER_MIN_STATES:
        pi, its, res = _stationary_power(rows, cols, rates, n)
        if pi is None:                # not converged: the direct solve
            pi, its = _stationary(rows, cols, rates, n), 1
    else:
        pi = _stationary(rows, cols, rates, n)
    f = (pi @ kinds) / P
    X = float(pi @ (heads @ ext)) / P
    R = 1.0 / X
    C, Pn, _, Q, _, Y = (float(x) for x in f)
    return {"R": R, "R_w": C * R, "R_p": Pn * R, "R_q": Q * R, "R_y": Y * R,
            "Q_q": float(pi @ nreq) / P, "Q_y": Y, "converged": True, "iterations": its,
            "residual": res, "size": n, "truncation": 0.0}


#: whole-machine chains of at least this many states are solved by
#: :func:`_stationary_power` (the sparse LU's fill-in grows fast with the
#: lumped chain: ``P = 5``, 4,669 states, 2.6 million entries, 0.4-0.6 s;
#: the power iteration 20-60 ms), smaller ones by the direct solve
POWER_MIN_STATES = 2000

#: stopping rule and iteration limit of :func:`_stationary_power`
POWER_TOL = 1e-13
POWER_MAX_ITER = 20_000


def _stationary_power(rows: np.ndarray, cols: np.ndarray, rates: np.ndarray, n: int, *,
                      tol: float = POWER_TOL, max_iter: int = POWER_MAX_ITER
                      ) -> tuple[np.ndarray | None, int, float]:
    r"""Stationary distribution by the lazy power iteration of the embedded jump chain.

    With exit rates :math:`d_i = \sum_j q_{ij}` and the jump chain
    :math:`P_{ij} = q_{ij}/d_i`, :math:`\nu \leftarrow (\nu + \nu P)/2`
    (lazy: aperiodic) converges to the jump chain's stationary vector and
    :math:`\pi_i \propto \nu_i / d_i`.  Stops when the stationarity
    residual :math:`\lVert \nu P - \nu \rVert_1 / \lVert \nu \rVert_1`
    falls below ``tol`` (checked every 20 steps); returns ``(pi,
    iterations, residual)``, or ``(None, iterations, residual)`` after
    ``max_iter`` steps (the caller then solves directly).  The jump chain
    removes the rates' scale, so the iteration count depends on the
    chain's mixing in jumps, not on how far apart ``W``, ``o`` and ``L`` are.
    """
    import scipy.sparse as sps

    d = np.bincount(rows, weights=rates, minlength=n)
    Pt = sps.csr_matrix((rates / d[rows], (cols, rows)), shape=(n, n))
    nu = np.full(n, 1.0 / n)
    res = math.inf
    it = 0
    while it < max_iter:
        for _ in range(19):
            nu = 0.5 * (nu + Pt @ nu)
        step = Pt @ nu
        res = float(np.abs(step - nu).sum() / nu.sum())
        nu = 0.5 * (nu + step)
        it += 20
        if res < tol:
            pi = nu / d
            return pi / pi.sum(), it, res
    return None, it, res


def _full_moves(s: tuple, P: int, ph: int, m: int, A_: list[int], Tf: list[list[int]],
                E_: list[int], fifo: bool = True, inv: int = -1) -> list[tuple[tuple, Any]]:
    """The transitions out of state ``s`` of the whole-machine chain (:func:`_full_structure`).

    Returns ``(factors, next_state)`` pairs: ``factors`` index the base rates
    ``theta`` of :func:`_solve_full_chain` (``A_``, ``Tf``, ``E_``: the
    indices of ``alpha``, ``T`` and the exit rates, -1 where zero).

    ``fifo=False``: messages in flight overtake each other freely, and a
    request's destination is drawn (uniformly, base rate ``inv`` =
    ``1/(P-1)``) when it leaves the network rather than when it is sent --
    the same process when nothing orders a channel, with far fewer states
    (a message in flight carries only its sender's name, ``("N1", t, stage,
    0)``, ``("N2", t, stage, 0)``).
    """
    W_, L_ = (1,), (2,)
    threads, queues, phases = s

    def arrive(th: list, qs: list, phs: list, node: int, entry: int) -> list[tuple[tuple, Any]]:
        was_empty = len(qs[node]) == 0
        qs[node] = qs[node] + (entry,)
        if not was_empty:
            return [((), (tuple(th), tuple(qs), tuple(phs)))]
        out = []
        for j in range(ph):
            if A_[j] >= 0:
                p2 = list(phs)
                p2[node] = j
                out.append(((A_[j],), (tuple(th), tuple(qs), tuple(p2))))
        return out

    def send(th: list, qs: list, phs: list, t: int, d: int) -> list[tuple[tuple, Any]]:
        if m:
            th[t] = ("N1", d, 0, _behind(th, d, "N2", t, m)) if fifo else ("N1", t, 0, 0)
            return [((), (tuple(th), tuple(qs), tuple(phs)))]
        th[t] = ("Q", d)
        return arrive(th, qs, phs, d, t)

    def reply(th: list, qs: list, phs: list, t: int, s: int) -> list[tuple[tuple, Any]]:
        if m:
            th[t] = ("N2", s, 0, _behind(th, s, "N1", t, m)) if fifo else ("N2", t, 0, 0)
            return [((), (tuple(th), tuple(qs), tuple(phs)))]
        th[t] = ("Y",)
        return arrive(th, qs, phs, t, -1)

    moves: list[tuple[tuple, Any]] = []
    for t, st in enumerate(threads):
        kind = st[0]
        if kind == "C" and not queues[t]:
            for d in range(P):
                if d != t:
                    for pr, ns in send(list(threads), list(queues), list(phases), t, d):
                        moves.append((W_ + pr, ns))
        elif kind == "N1":
            th = list(threads)
            if fifo and st[3] and m >= SHARED_MIN_STAGES:
                continue        # behind on a shared clock: moves with the leader
            if st[2] + 1 < m:
                th[t] = ("N1", st[1], st[2] + 1, st[3])
                moves.append((L_, (tuple(th), queues, phases)))
            elif not fifo:          # the destination is drawn on arrival
                for d in range(P):
                    if d != t:
                        th = list(threads)
                        th[t] = ("Q", d)
                        for pr, ns in arrive(th, list(queues), list(phases), d, t):
                            moves.append((L_ + (inv,) + pr, ns))
            elif not st[3]:
                th[t] = ("Q", st[1])
                d = st[1]
                now = _release(th, d, "N2", t, m)
                for pr, ns in arrive(th, list(queues), list(phases), d, t):
                    if now:     # the reply behind it, sent in the same stage
                        th2 = list(ns[0])
                        th2[d] = ("Y",)
                        for pr2, ns2 in arrive(th2, list(ns[1]), list(ns[2]), d, -1):
                            moves.append((L_ + pr + pr2, ns2))
                    else:
                        moves.append((L_ + pr, ns))
            else:             # FIFO channel: the earlier message arrives first (_swap)
                d = st[1]
                th[t] = ("N1", d, threads[d][2], 0)
                th[d] = ("Y",)
                for pr, ns in arrive(th, list(queues), list(phases), d, -1):
                    moves.append((L_ + pr, ns))
        elif kind == "N2":
            th = list(threads)
            if fifo and st[3] and m >= SHARED_MIN_STAGES:
                continue
            if st[2] + 1 < m:
                th[t] = ("N2", st[1], st[2] + 1, st[3])
                moves.append((L_, (tuple(th), queues, phases)))
            elif not st[3]:
                th[t] = ("Y",)
                s_ = st[1]
                now = _release(th, s_, "N1", t, m)
                for pr, ns in arrive(th, list(queues), list(phases), t, -1):
                    if now:     # the request behind it, sent in the same stage
                        th2 = list(ns[0])
                        th2[s_] = ("Q", t)
                        for pr2, ns2 in arrive(th2, list(ns[1]), list(ns[2]), t, s_):
                            moves.append((L_ + pr + pr2, ns2))
                    else:
                        moves.append((L_ + pr, ns))
            else:
                s_ = st[1]
                th[t] = ("N2", s_, threads[s_][2], 0)
                th[s_] = ("Q", t)
                for pr, ns in arrive(th, list(queues), list(phases), t, s_):
                    moves.append((L_ + pr, ns))
    for node in range(P):
        q = queues[node]
        if not q:
            continue
        j = phases[node]
        for jj in range(ph):
            if jj != j and Tf[j][jj] >= 0:
                p2 = list(phases)
                p2[node] = jj
                moves.append(((Tf[j][jj],), (threads, queues, tuple(p2))))
        if E_[j] < 0:
            continue
        head, rest = q[0], q[1:]
        th = list(threads)
        qs = list(queues)
        qs[node] = rest
        if head == -1:
            th[node] = ("P",) if rest else ("C",)
            outs: list[tuple[tuple, Any]] = [((), (th, qs, list(phases)))]
        else:
            outs = []
            for pr, ns in reply(th, qs, list(phases), head, node):
                outs.append((pr, (list(ns[0]), list(ns[1]), list(ns[2]))))
        for pr, (th2, qs2, ph2) in outs:
            if not qs2[node] and th2[node][0] == "P":
                th2[node] = ("C",)
            if qs2[node]:
                for jj in range(ph):
                    if A_[jj] >= 0:
                        p2 = list(ph2)
                        p2[node] = jj
                        moves.append(((E_[j],) + pr + (A_[jj],),
                                      (tuple(th2), tuple(qs2), tuple(p2))))
            else:
                p2 = list(ph2)
                p2[node] = -1
                moves.append(((E_[j],) + pr, (tuple(th2), tuple(qs2), tuple(p2))))
    return moves


def _relabel(s: tuple, lab: tuple[int, ...]) -> tuple:
    """State ``s`` of the whole-machine chain with processor ``i`` renamed ``lab[i]``."""
    threads, queues, phases = s
    P = len(threads)
    th: list[Any] = [None] * P
    qs: list[Any] = [None] * P
    phs = [0] * P
    for i in range(P):
        st = threads[i]
        j = lab[i]
        th[j] = (st[0], lab[st[1]]) + st[2:] if len(st) > 1 else st
        qs[j] = tuple(lab[e] if e >= 0 else -1 for e in queues[i])
        phs[j] = phases[i]
    return tuple(th), tuple(qs), tuple(phs)


def _canonical(s: tuple) -> tuple:
    """The representative of the orbit of ``s`` under renaming the processors.

    Processors (each with its thread, queue and handler phase) are
    interchangeable: every rate of the chain is the same at every processor
    and a request picks its destination uniformly.  Each processor gets a
    name-free signature (its thread's state without names, its queue's
    pattern of own reply and requests, its phase) refined once by the
    signatures of the processors its thread and its queue name; the
    representative is the smallest renaming among those that list the
    processors by signature (all orders of equal signatures tried).  The
    candidates' set depends only on the orbit, so the minimum does too.
    """
    threads, queues, phases = s
    P = len(threads)
    sig0 = [(st[0], st[2:], len(queues[i]), tuple(e < 0 for e in queues[i]), phases[i])
            for i, st in enumerate(threads)]
    sig = [(sig0[i], sig0[st[1]] if len(st) > 1 else (),
            tuple(sig0[e] for e in queues[i] if e >= 0)) for i, st in enumerate(threads)]
    order = sorted(range(P), key=sig.__getitem__)
    groups: list[list[int]] = []
    for i in order:
        if groups and sig[groups[-1][0]] == sig[i]:
            groups[-1].append(i)
        else:
            groups.append([i])
    if all(len(g) == 1 for g in groups):
        lab = [0] * P
        for pos, i in enumerate(order):
            lab[i] = pos
        return _relabel(s, tuple(lab))
    import itertools

    best = None
    for choice in itertools.product(*(itertools.permutations(g) for g in groups)):
        lab = [0] * P
        pos = 0
        for g in choice:
            for i in g:
                lab[i] = pos
                pos += 1
        cand = _relabel(s, tuple(lab))
        if best is None or cand < best:
            best = cand
    assert best is not None          # one group at least: itertools.product yields once
    return best


#: the whole-machine chains shipped precomputed in ``models/_generated/full_chains.npz``
#: (:func:`write_full_structures`): ``(P, latency stages, fifo, handler cs2
#: values)`` for what :mod:`models.lopc` (``method="node"``) and
#: :mod:`models.ini` reach -- ``P = 2`` (8 stages) with every Erlang handler of
#: :func:`handler_ph`, ``P = 3`` (1 stage) up to Erlang-:data:`FULL_MAX_ERLANG`,
#: ``P = 4`` (1 stage, unordered channels) with the exponential and the
#: two-phase handler; each also without latency (no stage, ``L = 0``)
FULL_SHIPPED = ((2, 16, True, (1.0, 2.0, 1 / 2, 1 / 3, 1 / 4, 1 / 5, 1 / 6)),
                (3, 1, True, (1.0, 2.0, 1 / 2, 1 / 3, 1 / 4)),
                (4, 1, False, (1.0, 2.0)))

_FULL_DATA = "full_chains.npz"


def _full_key(P: int, cs2: float, m: int, fifo: bool) -> tuple[Any, ...]:
    """The :func:`_full_structure` key of ``P`` processors, handler ``cs2``, ``m`` stages."""
    alpha, T = handler_ph(1.0, cs2)
    ext = -T.sum(axis=1)
    return (int(P), len(alpha), int(m), tuple(bool(x) for x in alpha > 0),
            tuple(bool(x) for x in T.ravel() > 0), tuple(bool(x) for x in ext > 0), True,
            bool(fifo or m == 0))


def _full_name(key: tuple[Any, ...]) -> str:
    """The array-name prefix of a structure key in the shipped file (lumped chains only)."""
    P, ph, m, a_pos, t_pos, e_pos, _, fifo = key

    def bits(x: tuple[bool, ...]) -> str:
        return "".join("1" if b else "0" for b in x)

    return f"P{P}_h{ph}_m{m}_a{bits(a_pos)}_t{bits(t_pos)}_e{bits(e_pos)}_f{int(fifo)}"


#: array fields of a structure, their stored dtype and their dtype at run time
_FULL_FIELDS = (("rows", np.int32, np.int64), ("cols", np.int32, np.int64),
                ("fac", np.int8, np.int64), ("kinds", np.int8, np.float64),
                ("nreq", np.int8, np.float64), ("heads", np.int8, np.float64))


def full_structure_arrays() -> dict[str, np.ndarray]:
    """The arrays of every shipped structure (:data:`FULL_SHIPPED`), enumerated now.

    Names ``<key>__<field>`` (:func:`_full_name`); the fields of
    :func:`_full_structure_ref` in compact dtypes (exact: indices and
    counts).  The reference for the test that the shipped file is current.

    Examples
    --------
    >>> arrs = full_structure_arrays()
    >>> arrs["P4_h1_m1_a1_t0_e1_f0__kinds"].shape
    (242, 6)
    """
    out: dict[str, np.ndarray] = {}
    for P, stages, fifo, cs in FULL_SHIPPED:
        for m in (stages, 0):
            for c in cs:
                key = _full_key(P, c, m, fifo)
                name = _full_name(key)
                if name + "__rows" in out:
                    continue
                for (field, small, _), a in zip(_FULL_FIELDS, _full_structure_ref(*key)):
                    out[f"{name}__{field}"] = _narrowed(a, small, f"{name}__{field}")
    return out


def _narrowed(a: np.ndarray, small: Any, label: str) -> np.ndarray:
    """``a`` cast to the shipped file's dtype ``small``; ``OverflowError`` if a value changes."""
    b = a.astype(small)
    if not np.array_equal(b, a):        # pragma: no cover - guard
        raise OverflowError(f"{label} does not fit {small.__name__}")
    return b


def write_full_structures(path: str | None = None) -> str:
    """Enumerate the shipped structures and write them (compressed ``.npz``).

    Run ``python -c "from models._node import write_full_structures as w; w()"``
    after changing the whole-machine chain (:func:`_full_moves`,
    :func:`_canonical`, :func:`handler_ph`'s phase patterns or
    :data:`FULL_SHIPPED`); ``tests/models/test_node.py`` checks that the
    shipped file equals a fresh enumeration.  Returns the path written.
    """
    from pathlib import Path

    target = Path(path) if path is not None else Path(__file__).parent / "_generated" / _FULL_DATA
    arrays: dict[str, Any] = full_structure_arrays()
    np.savez_compressed(target, **arrays)
    return str(target)


@functools.lru_cache(maxsize=1)
def _full_shipped() -> Any:
    """The shipped structures' file, opened once (plain arrays; never unpickled)."""
    from pathlib import Path

    path = Path(__file__).parent / "_generated" / _FULL_DATA
    if not path.exists():          # pragma: no cover - a checkout without the data
        return None
    return np.load(path, allow_pickle=False)


@functools.lru_cache(maxsize=32)
def _full_structure(P: int, ph: int, m: int, a_pos: tuple[bool, ...], t_pos: tuple[bool, ...],
                    e_pos: tuple[bool, ...], lumped: bool = False,
                    fifo: bool = True) -> tuple[np.ndarray, ...]:
    """State space of :func:`solve_full` for one structure: shipped, else enumerated.

    The lumped structures of :data:`FULL_SHIPPED` are read from
    ``models/_generated/full_chains.npz`` (written by
    :func:`write_full_structures`, equal to :func:`_full_structure_ref`'s
    arrays); any other structure is enumerated by
    :func:`_full_structure_ref`.  Same return value as the latter.
    """
    key = (int(P), int(ph), int(m), tuple(a_pos), tuple(t_pos), tuple(e_pos), bool(lumped),
           bool(fifo or m == 0))
    data = _full_shipped() if lumped else None
    name = _full_name(key) if lumped else ""
    if data is not None and name + "__rows" in data.files:
        return tuple(np.ascontiguousarray(data[f"{name}__{field}"], dtype=big)
                     for field, _, big in _FULL_FIELDS)
    return _full_structure_ref(P, ph, m, a_pos, t_pos, e_pos, lumped, fifo)


@functools.lru_cache(maxsize=32)
def _full_structure_ref(P: int, ph: int, m: int, a_pos: tuple[bool, ...],
                        t_pos: tuple[bool, ...], e_pos: tuple[bool, ...], lumped: bool = False,
                        fifo: bool = True) -> tuple[np.ndarray, ...]:
    """State space of :func:`solve_full` for one structure, by breadth-first search.

    Rates are products of base rates ``theta`` (index 0: 1, 1: ``1/(W (P-1))``,
    2: latency stage rate, then ``T`` row by row, the exit rates, ``alpha``);
    returns ``(rows, cols, factors, kinds, nreq, heads)``: ``factors`` the
    ``(transitions, 3)`` indices into ``theta``, ``kinds`` the number of
    threads per state in C, P, N1, Q, N2, Y, ``nreq`` the requests queued,
    ``heads[s, j]`` the processors whose own reply is in service in phase ``j``.
    """
    o_T, o_e = 3, 3 + ph * ph
    o_a = o_e + ph
    A_ = [o_a + j if a_pos[j] else -1 for j in range(ph)]
    Tf = [[o_T + j * ph + jj if t_pos[j * ph + jj] else -1 for jj in range(ph)] for j in range(ph)]
    E_ = [o_e + j if e_pos[j] else -1 for j in range(ph)]
    start: tuple[tuple[tuple[Any, ...], ...], tuple[tuple[int, ...], ...], tuple[int, ...]] = (
        tuple(("C",) for _ in range(P)), tuple(() for _ in range(P)), tuple(-1 for _ in range(P)))
    index = {start: 0}
    order = [start]
    rows: list[int] = []
    cols: list[int] = []
    facs: list[tuple[int, ...]] = []
    canon: dict[tuple, tuple] = {}

    k = 0
    while k < len(order):
        moves = _full_moves(order[k], P, ph, m, A_, Tf, E_, fifo, o_a + ph)
        for fac, ns in moves:
            if lumped:
                ns = canon.get(ns) or canon.setdefault(ns, _canonical(ns))
            if ns not in index:
                index[ns] = len(order)
                order.append(ns)
            rows.append(k)
            cols.append(index[ns])
            facs.append(fac + (0,) * (3 - len(fac)))
        k += 1
    n = len(order)
    names = ("C", "P", "N1", "Q", "N2", "Y")
    kinds = np.zeros((n, 6))
    nreq = np.zeros(n)
    heads = np.zeros((n, ph))
    for i, (threads, queues, phases) in enumerate(order):
        for st in threads:
            kinds[i, names.index(st[0])] += 1
        for node, q in enumerate(queues):
            nreq[i] += sum(1 for e in q if e != -1)
            if q and q[0] == -1:
                heads[i, phases[node]] += 1
    return (np.array(rows, dtype=np.int64), np.array(cols, dtype=np.int64),
            np.array(facs, dtype=np.int64).reshape(-1, 3), kinds, nreq, heads)


#: ``method="auto"`` runs the node-level chains on grids of at most this many
#: points (about 30 ms a point, so a few seconds to half a minute); larger grids
#: go to the vectorised closed form of the papers, with a warning, because the
#: chains are a per-point Python loop (tens of points per second)
AUTO_GRID_LIMIT = 512


def auto_method(n_points: int, closed_form: str, model: str) -> str:
    """The method ``"auto"`` runs on a grid of ``n_points`` points: ``"node"`` or ``closed_form``.

    Examples
    --------
    >>> auto_method(16, "lopc", "LoPC")
    'node'
    """
    if n_points <= AUTO_GRID_LIMIT:
        return "node"
    import warnings

    warnings.warn(f"{model} method='auto': a grid of {n_points} points is above the node "
                  f"chains' limit of {AUTO_GRID_LIMIT} points (about 30 ms a point); solved by "
                  f"the vectorised closed form method={closed_form!r}, which is less accurate "
                  f"(see the model's accuracy table); pass method='node' to insist, or "
                  f"method={closed_form!r} to silence this", UserWarning, stacklevel=3)
    return closed_form
