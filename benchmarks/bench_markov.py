"""Speed of the CTMC state-space builder and steady-state solvers (mva.markov).

Run::

    python benchmarks/bench_markov.py [--quick]

Chains: an open tandem of finite queues with blocking (2-D: two stations,
3-D: three stations), from 10^3 to 10^6 states.  For each size it prints

* the builder (:func:`mva.markov.build_state_space`, breadth first from a
  Python transition function) in states per second, next to the strongest
  baseline a user would write for this particular chain: the generator of
  the grid assembled directly with vectorised NumPy index arithmetic (no
  search; it only works because the state space is a known box);
* the solvers, in states per second: our direct method (sparse LU of the
  reduced system + refinement), our ILU-preconditioned GMRES, the naive
  sparse baseline ``scipy.sparse.linalg.spsolve`` of ``Q^T`` with one
  equation replaced by the normalisation (a dense row of ones), and the
  dense ``numpy.linalg.solve`` of the same system where it fits (<= 5000
  states);
* the largest absolute difference of every solution from ours (direct, or
  GMRES where the LU is not run) and each method's residual
  ``||pi Q||_inf / max |q_ii|``.

"cold" is the first call in the process (imports, caches), "warm" the best
of the following calls (small sizes only; large sizes run once, so cold =
warm).  Figures are wall-clock on the machine at hand.  The whole run stays
under about three minutes; ``--quick`` stops at 10^5 states.
"""

from __future__ import annotations

import os
import sys
import time
from typing import Any, Callable

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")  # threaded BLAS on a shared 2-core machine slows GMRES 100x

import numpy as np  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.dirname(HERE))

LAM, MU = 1.0, (1.25, 1.15, 1.1)
DENSE_LIMIT = 5000       # numpy.linalg.solve (dense, O(n^3))
SPSOLVE_LIMIT = 20_000   # the replaced-row spsolve fills in badly beyond this
DIRECT_LIMIT = 120_000   # our sparse LU (3-D chains fill in like n^(5/3): 2-D only beyond 2e4)


def tandem_moves(K: tuple[int, ...]) -> Callable[[tuple], list]:
    """Transitions of an open tandem with buffers K (blocking after service)."""
    d = len(K)

    def moves(s: tuple) -> list:
        out = []
        if s[0] < K[0]:
            out.append((s[:0] + (s[0] + 1,) + s[1:], LAM))
        for i in range(d):
            if s[i] == 0:
                continue
            if i == d - 1:
                out.append((s[:i] + (s[i] - 1,), MU[i]))
            elif s[i + 1] < K[i + 1]:
                out.append((s[:i] + (s[i] - 1, s[i + 1] + 1) + s[i + 2:], MU[i]))
        return out

    return moves


def tandem_numpy(K: tuple[int, ...]) -> Any:
    """Baseline: the same generator assembled with NumPy index arithmetic (row-major box)."""
    import scipy.sparse as sp
    shape = tuple(k + 1 for k in K)
    n = int(np.prod(shape))
    idx = np.arange(n)
    coords = np.unravel_index(idx, shape)
    strides = np.array([int(np.prod(shape[i + 1:])) for i in range(len(K))])
    rows, cols, vals = [], [], []
    m = coords[0] < K[0]
    rows.append(idx[m]); cols.append(idx[m] + strides[0]); vals.append(np.full(m.sum(), LAM))
    for i in range(len(K)):
        if i == len(K) - 1:
            m = coords[i] > 0
            rows.append(idx[m]); cols.append(idx[m] - strides[i]); vals.append(np.full(m.sum(), MU[i]))
        else:
            m = (coords[i] > 0) & (coords[i + 1] < K[i + 1])
            rows.append(idx[m]); cols.append(idx[m] - strides[i] + strides[i + 1])
            vals.append(np.full(m.sum(), MU[i]))
    r = np.concatenate(rows); c = np.concatenate(cols); v = np.concatenate(vals)
    Q = sp.csr_array((v, (r, c)), shape=(n, n))
    return (Q - sp.diags_array(np.asarray(Q.sum(axis=1)).ravel())).tocsr()


def spsolve_replaced(Q: Any) -> np.ndarray:
    """Naive sparse baseline: Q^T with its last equation replaced by sum(pi) = 1."""
    import scipy.sparse as sp
    from scipy.sparse.linalg import spsolve
    n = Q.shape[0]
    A = sp.lil_array(Q.T)
    A[n - 1, :] = np.ones(n)
    b = np.zeros(n); b[-1] = 1.0
    return spsolve(A.tocsc(), b)


def dense_solve(Q: Any) -> np.ndarray:
    """Dense baseline: numpy.linalg.solve of the same replaced system."""
    A = Q.T.toarray()
    A[-1, :] = 1.0
    b = np.zeros(A.shape[0]); b[-1] = 1.0
    return np.linalg.solve(A, b)


def timed(fn: Callable[[], Any], repeat: int) -> tuple[Any, float, float]:
    """(result, cold seconds, best warm seconds; = cold when repeat == 1)."""
    t0 = time.perf_counter()
    out = fn()
    cold = time.perf_counter() - t0
    warm = cold
    for _ in range(repeat - 1):
        t0 = time.perf_counter()
        fn()
        warm = min(warm, time.perf_counter() - t0)
    return out, cold, warm


def rate(n: int, t: float) -> str:
    return f"{n / t:10.3g}" if t > 0 else "       inf"


def main(argv: list[str]) -> None:
    quick = "--quick" in argv
    import scipy
    import mva
    from mva.markov import _residual, build_state_space, steady_state

    cases = [((31, 31), "2-D"), ((9, 9, 9), "3-D"), ((99, 99), "2-D"), ((21, 21, 21), "3-D"),
             ((316, 316), "2-D"), ((46, 46, 46), "3-D")]
    if not quick:
        cases += [((999, 999), "2-D")]
    print(f"mva {mva.__version__}, numpy {np.__version__}, scipy {scipy.__version__}; "
          f"rates: states per second (higher is better); cold / warm\n")
    head = (f"{'chain':>5} {'states':>9} {'nnz':>9} | {'builder':>21} {'numpy grid':>21} | "
            f"{'solver':<18} {'cold':>10} {'warm':>10} {'max|diff|':>10} {'residual':>9}")
    print(head)
    print("-" * len(head))
    t_all = time.perf_counter()
    for K, kind in cases:
        n_expect = int(np.prod([k + 1 for k in K]))
        rep = 3 if n_expect <= 20_000 else 1
        space, bc, bw = timed(lambda: build_state_space((0,) * len(K), tandem_moves(K),
                                                        max_states=2_000_000), rep)
        Qb, nc, nw = timed(lambda: tandem_numpy(K), rep)
        Q = space.generator
        n = space.n
        assert n == n_expect and Qb.nnz == Q.nnz
        rows = []
        ref = None  # our direct solution when it is run (else GMRES: no independent reference)
        if n <= DIRECT_LIMIT and (len(K) == 2 or n <= 20_000):
            res, c, w = timed(lambda: steady_state(Q, method="direct"), rep)
            ref = res.pi
            rows.append(("direct (LU+refine)", c, w, res.pi, res.residual))
        res, c, w = timed(lambda: steady_state(Q, method="gmres", tol=1e-12, on_fail="ignore"), rep)
        if ref is None:
            ref = res.pi
        rows.append((f"gmres+ilu ({res.iterations} it)", c, w, res.pi, res.residual))
        if n <= SPSOLVE_LIMIT:
            pi, c, w = timed(lambda: spsolve_replaced(Q), rep if n <= 5000 else 1)
            rows.append(("spsolve (replaced)", c, w, pi, _residual(Q, pi)))
        if n <= DENSE_LIMIT:
            pi, c, w = timed(lambda: dense_solve(Q), rep)
            rows.append(("numpy.linalg.solve", c, w, pi, _residual(Q, pi)))
        for i, (name, c, w, pi, r) in enumerate(rows):
            left = (f"{kind:>5} {n:9d} {Q.nnz:9d} | {rate(n, bc)} {rate(n, bw)} {rate(n, nc)} "
                    f"{rate(n, nw)} | ") if i == 0 else " " * 73 + "| "
            diff = f"{np.max(np.abs(pi - ref)):10.2e}" if (i > 0 or len(rows) > 1) and pi is not ref \
                else f"{'(ref)':>10}"
            print(f"{left}{name:<18} {rate(n, c)} {rate(n, w)} {diff} {r:9.1e}", flush=True)
    print(f"\ntotal {time.perf_counter() - t_all:.1f} s")


if __name__ == "__main__":
    main(sys.argv[1:])
