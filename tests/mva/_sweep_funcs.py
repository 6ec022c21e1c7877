"""Small picklable functions for the sweep tests (importable by pool and dask workers)."""

from __future__ import annotations

import math
import os
import time
from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class RepairmanResult:
    """Machine-repairman result (per point: scalars; vectorised: arrays)."""

    X: object
    R: object
    U: object
    Q: object
    method: str = "exact-mva"


def repairman(N, D=1.0, Z=4.0):
    """Exact MVA of the machine-repairman model (one queue D, think time Z), vectorised.

    Recursion (Reiser and Lavenberg 1980): R(n) = D (1 + Q(n-1)),
    X(n) = n / (R(n) + Z), Q(n) = X(n) R(n).
    """
    N = np.asarray(N)
    D = np.broadcast_to(np.asarray(D, dtype=float), N.shape)
    Z = np.broadcast_to(np.asarray(Z, dtype=float), N.shape)
    q = np.zeros(N.shape)
    r = np.zeros(N.shape)
    x = np.zeros(N.shape)
    for n in range(1, int(np.max(N)) + 1):
        active = N >= n
        r_n = D * (1.0 + q)
        x_n = n / (r_n + Z)
        r = np.where(active, r_n, r)
        x = np.where(active, x_n, x)
        q = np.where(active, x_n * r_n, q)
    res = RepairmanResult(X=x, R=r, U=x * D, Q=q)
    if res.X.ndim == 0:
        return RepairmanResult(X=float(x), R=float(r), U=float(x * D), Q=float(q))
    return res


def mm1_sim(lam, mu, seed, n=200):
    """Pure-Python M/M/1 FIFO simulation (Lindley recursion) of ``n`` customers."""
    rng = np.random.default_rng(seed)
    inter = rng.exponential(1.0 / lam, n).tolist()
    service = rng.exponential(1.0 / mu, n).tolist()
    wait = 0.0
    total_w = 0.0
    total_r = 0.0
    for i in range(n):
        if i:
            wait = max(0.0, wait + service[i - 1] - inter[i])
        total_w += wait
        total_r += wait + service[i]
    return {"W": total_w / n, "R": total_r / n, "n": n}


def logged_point(x, log, delay=0.0):
    """Per-point only (``math`` rejects arrays); appends one line per computation to ``log``.

    The line is ``"<x> <run>"`` where run is the environment variable
    ``SWEEP_TEST_RUN`` (so a test can tell computations of two runs apart).
    """
    if delay:
        time.sleep(delay)
    y = math.sqrt(x) + 1.0
    with open(log, "a") as fh:
        fh.write(f"{x!r} {os.environ.get('SWEEP_TEST_RUN', '?')}\n")
        fh.flush()
    return {"y": y}


def fails_on_three(x):
    """Per point: raises for x == 3."""
    if float(x) == 3.0:
        raise ZeroDivisionError("three is bad")
    return float(x) * 2


def square(x):
    """Vectorised bare-array result."""
    return np.asarray(x) ** 2


def pid_point(x):
    """Per point: the id of the process that computed it."""
    return {"pid": os.getpid(), "x2": int(x) * 2}


def vec_fails_on_three(x):
    """Vectorised: raises if any element is 3."""
    x = np.asarray(x, dtype=float)
    if np.any(x == 3.0):
        raise ValueError("a three in the chunk")
    return {"y": x * 2}


def logged_vec(x, log, flag=None, z=0):
    """Vectorised sqrt(x) + 1 (``z`` is ignored); logs the x of every evaluation (one line per
    call) to ``log``.

    Raises while the file ``flag`` exists and some x > 5 (a sweep that fails part way).
    """
    x = np.asarray(x, dtype=float)
    if flag is not None and os.path.exists(flag) and np.any(x > 5):
        raise RuntimeError("flag set: failing on x > 5")
    with open(log, "a") as fh:
        fh.write(" ".join(repr(float(v)) for v in np.atleast_1d(x)) + "\n")
    return {"y": np.sqrt(x) + 1.0}


def mixed_vec(x, z=0.0, bad=None):
    """Vectorised, with result columns of several dtypes (float, int, int32, bool, text, a
    per-call constant); raises for a chunk holding ``bad``."""
    x = np.asarray(x, dtype=float)
    if bad is not None and np.any(x == bad):
        raise ValueError(f"a {bad} in the chunk")
    return {"y": np.sqrt(x) + z, "k": (x * 3).astype(np.int64), "k32": x.astype(np.int32),
            "big": x > 10, "label": np.where(x > 5, "big", "small"), "method": "m",
            "iterations": 7}
