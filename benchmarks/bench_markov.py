"""Speed of the CTMC state-space builder and steady-state solvers (mva.markov).

Run::

    python benchmarks/bench_markov.py [--quick | --accuracy]

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

After the speed table, an accuracy table over random designs (Sobol points,
:mod:`scipy.stats.qmc`, seeded): the relative error of every stationary
probability of M/M/c/K queues against the closed form, of the M/PH/1 mean
queue length from the QBD against Pollaczek-Khinchine, and of the mean and
cs2 of fitted PH distributions -- mean, 95th percentile and maximum.

"cold" is the first call in the process (imports, caches), "warm" the best
of the following calls (small sizes only; large sizes run once, so cold =
warm).  Figures are wall-clock on the machine at hand.  The whole run stays
under about three minutes; ``--quick`` stops at 10^5 states, ``--accuracy``
prints the accuracy table only.
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
    rows.append(idx[m])
    cols.append(idx[m] + strides[0])
    vals.append(np.full(m.sum(), LAM))
    for i in range(len(K)):
        if i == len(K) - 1:
            m = coords[i] > 0
            rows.append(idx[m])
            cols.append(idx[m] - strides[i])
            vals.append(np.full(m.sum(), MU[i]))
        else:
            m = (coords[i] > 0) & (coords[i + 1] < K[i + 1])
            rows.append(idx[m])
            cols.append(idx[m] - strides[i] + strides[i + 1])
            vals.append(np.full(m.sum(), MU[i]))
    r = np.concatenate(rows)
    c = np.concatenate(cols)
    v = np.concatenate(vals)
    Q = sp.csr_array((v, (r, c)), shape=(n, n))
    return (Q - sp.diags_array(np.asarray(Q.sum(axis=1)).ravel())).tocsr()


def spsolve_replaced(Q: Any) -> np.ndarray:
    """Naive sparse baseline: Q^T with its last equation replaced by sum(pi) = 1."""
    import scipy.sparse as sp
    from scipy.sparse.linalg import spsolve
    n = Q.shape[0]
    A = sp.lil_array(Q.T)
    A[n - 1, :] = np.ones(n)
    b = np.zeros(n)
    b[-1] = 1.0
    return spsolve(A.tocsc(), b)


def dense_solve(Q: Any) -> np.ndarray:
    """Dense baseline: numpy.linalg.solve of the same replaced system."""
    A = Q.T.toarray()
    A[-1, :] = 1.0
    b = np.zeros(A.shape[0])
    b[-1] = 1.0
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
    if "--accuracy" in argv:
        accuracy()
        return
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
            diff = (f"{np.max(np.abs(pi - ref)):10.2e}"
                    if (i > 0 or len(rows) > 1) and pi is not ref
                    else f"{'(ref)':>10}")
            print(f"{left}{name:<18} {rate(n, c)} {rate(n, w)} {diff} {r:9.1e}", flush=True)
    accuracy()
    print(f"\ntotal {time.perf_counter() - t_all:.1f} s")


def accuracy(n_points: int = 256) -> None:
    """Relative errors against closed forms over Sobol designs (mean / p95 / max)."""
    import math
    import warnings

    from scipy.stats import qmc

    from mva.markov import build_state_space
    from mva.phasetype import PhaseTypeFitWarning, fit
    from mva.qbd import solve_qbd

    def sobol(d: int, seed: int) -> np.ndarray:
        return qmc.Sobol(d, scramble=True, seed=seed).random(n_points)

    rows = []
    # M/M/c/K: lambda in [0.05, 5], mu in [0.1, 5], c in 1..8, K - c in 0..60
    errs = []
    for u in sobol(4, 1):
        lam, mu = 0.05 + 4.95 * u[0], 0.1 + 4.9 * u[1]
        c = 1 + int(u[2] * 8)
        K = c + int(u[3] * 61)

        def moves(s: tuple, lam=lam, mu=mu, c=c, K=K) -> list:
            out = [((min(s[0] + 1, K),), lam)]
            if s[0]:
                out.append(((s[0] - 1,), min(s[0], c) * mu))
            return out

        pi = build_state_space((0,), moves).solve().pi
        a = lam / mu
        logp = np.array([n * math.log(a) - math.lgamma(n + 1) if n <= c else
                         c * math.log(a) - math.lgamma(c + 1) + (n - c) * math.log(a / c)
                         for n in range(K + 1)])
        p = np.exp(logp - logp.max())
        p /= p.sum()
        keep = p > 1e-300
        errs.append(np.max(np.abs(pi[keep] / p[keep] - 1)))
    rows.append(("M/M/c/K, every pi_n (CTMC)", np.array(errs)))
    # M/PH/1 via QBD: rho in [0.01, 0.95], cs2 in [0.05, 20] (log), mean in [0.01, 100] (log)
    errs = []
    for u in sobol(3, 2):
        rho = 0.01 + 0.94 * u[0]
        cs2 = 10 ** (math.log10(0.05) + u[1] * (math.log10(20) - math.log10(0.05)))
        mean = 10 ** (-2 + 4 * u[2])
        ph = fit(mean, cs2, max_order=30)
        lam = rho / ph.mean
        I = np.eye(ph.order)
        q = solve_qbd(lam * I, ph.T - lam * I, np.outer(ph.exit_rates, ph.alpha), B1=[[-lam]],
                      B0=[lam * ph.alpha], B2=ph.exit_rates[:, None])
        L = rho + rho ** 2 * (1 + ph.cs2) / (2 * (1 - rho))
        errs.append(abs(q.mean_level / L - 1))
    rows.append(("M/PH/1 mean level (QBD vs P-K)", np.array(errs)))
    # PH fit: mean in [1e-3, 1e4] (log), cs2 in [0.01, 100] (log), max_order 100
    em, ec = [], []
    for u in sobol(2, 3):
        mean = 10 ** (-3 + 7 * u[0])
        cs2 = 10 ** (-2 + 4 * u[1])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", PhaseTypeFitWarning)
            ph = fit(mean, cs2)
        em.append(abs(ph.mean / mean - 1))
        ec.append(abs(ph.cs2 / max(cs2, 0.01) - 1))
    rows.append(("PH fit: mean", np.array(em)))
    rows.append(("PH fit: cs2", np.array(ec)))
    print(f"\naccuracy over {n_points} Sobol points each (relative error)")
    print(f"{'quantity':<32} {'mean':>9} {'p95':>9} {'max':>9}")
    for name, e in rows:
        print(f"{name:<32} {e.mean():9.2e} {np.quantile(e, 0.95):9.2e} {e.max():9.2e}")


if __name__ == "__main__":
    main(sys.argv[1:])
