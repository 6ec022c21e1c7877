"""Accuracy of the approximate solvers on load-dependent and multi-server stations.

Random networks from a scrambled Sobol design (``scipy.stats.qmc``, seeded): 1-2 chains,
populations 1-8 per chain, three stations (a multi-server or load-dependent one, a queue,
and a queue or delay), demands in [0.1, 2], think time in [0, 5].  Each is solved by
:func:`mva.exact_mva` and by the approximations; relative errors of the chain
throughputs and of the per-class queue lengths (relative to the chain population) are
summarized as mean / p95 / max.  With ``--line`` the multi-server Linearizer is also
compared with line-solver's ``pfqn_linearizerms`` where it runs.

Run: ``python -m benchmarks.accuracy_approx_ld_ms [--n 128] [--line]``
"""

from __future__ import annotations

import argparse
import warnings

import numpy as np
from scipy.stats import qmc

import mva
from mva.network import ClosedNetwork


def design(n: int, kind: str, seed: int = 20261123) -> list[ClosedNetwork]:
    """``n`` random networks with one ``kind`` ("multi" or "ld") station."""
    u = qmc.Sobol(d=12, scramble=True, seed=seed).random(n)
    nets = []
    for x in u:
        R = 1 + int(x[0] * 2)
        N = 1 + np.floor(x[1:3] * 8).astype(int)[:R]
        D = 0.1 + 1.9 * np.array([[x[3], x[4], x[5]], [x[6], x[7], x[8]]])[:R]
        m = 2 + int(x[9] * 4)                     # 2..5 servers
        Z = 5.0 * x[10]
        third = "delay" if x[11] < 0.3 else "queue"
        D[:, 0] *= m                              # keep the multi-server station relevant
        if kind == "multi":
            nets.append(ClosedNetwork(demands=D, populations=N, kinds=["multi", "queue", third],
                                      servers=[m, 1, 1], think_times=np.full(R, Z)))
        else:
            # concave, saturating rate: alpha(j) = m j / (j + m - 1)
            j = np.arange(1, N.sum() + 1)
            rates = m * j / (j + m - 1.0)
            nets.append(ClosedNetwork(demands=D, populations=N, kinds=["ld", "queue", third],
                                      rates=[rates, None, None], think_times=np.full(R, Z)))
    return nets


def errors(res: mva.MVAResult, ex: mva.MVAResult, net: ClosedNetwork) -> tuple[float, float]:
    ex_x = ex.chain_throughput
    ex_q = ex.queue_length
    ex_x_err = float(np.max(np.abs(res.chain_throughput - ex_x) / ex_x))
    pop = net.populations[net.chains].astype(float)[:, None]
    q_err = float(np.max(np.abs(res.queue_length - ex_q) / pop))
    return ex_x_err, q_err


def summary(a: list[float]) -> str:
    v = np.asarray(a)
    return f"mean {v.mean():.4f}  p95 {np.quantile(v, 0.95):.4f}  max {v.max():.4f}"


SOLVERS = {
    "multi": {
        "schweitzer+conway": lambda n: mva.schweitzer(n, multiserver="conway"),
        "linearizer+conway": lambda n: mva.linearizer(n, multiserver="conway"),
        "schweitzer+seidmann": lambda n: mva.schweitzer(n),
        "linearizer+seidmann": lambda n: mva.linearizer(n),
        "schweitzer+rolia": lambda n: mva.schweitzer(n, multiserver="rolia"),
        "linearizer+rolia": lambda n: mva.linearizer(n, multiserver="rolia"),
    },
    "ld": {
        "schweitzer": lambda n: mva.schweitzer(n),
        "linearizer": lambda n: mva.linearizer(n),
    },
}


def line_linearizerms(net: ClosedNetwork) -> np.ndarray:
    from line_solver.api.pfqn import pfqn_linearizerms
    L = net.demands.T
    out = pfqn_linearizerms(L, net.populations.astype(float), net.think_times.astype(float),
                            net.servers.astype(float), tol=1e-10, maxiter=100_000)
    return np.asarray(out[4], dtype=float).ravel()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--n", type=int, default=128)
    ap.add_argument("--line", action="store_true")
    args = ap.parse_args()
    for kind in ("multi", "ld"):
        nets = design(args.n, kind)
        exact = [mva.exact_mva(n) for n in nets]
        print(f"== {kind}: {len(nets)} Sobol networks; relative error of X (chain), |dQ|/N_r")
        for name, fn in SOLVERS[kind].items():
            ex_, eq_, bad = [], [], 0
            for n, ex in zip(nets, exact):
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    r = fn(n)
                bad += not r.converged
                a, b = errors(r, ex, n)
                ex_.append(a)
                eq_.append(b)
            print(f"{name:22s} X: {summary(ex_)} | Q: {summary(eq_)} | not converged {bad}")
        if kind == "multi" and args.line:
            agree, vs_exact, fails = [], [], 0
            for n, ex in zip(nets, exact):
                try:
                    xl = line_linearizerms(n)
                except Exception:      # noqa: BLE001 - report LINE failures as a count
                    fails += 1
                    continue
                ours = mva.linearizer(n, multiserver="conway", tol=1e-10)
                agree.append(float(np.max(np.abs(ours.chain_throughput - xl) / xl)))
                vs_exact.append(float(np.max(np.abs(xl - ex.chain_throughput)
                                             / ex.chain_throughput)))
            print(f"line-solver pfqn_linearizerms vs ours (X): {summary(agree)}; LINE vs exact: "
                  f"{summary(vs_exact)}; LINE failed on {fails}")


if __name__ == "__main__":
    main()
