"""Finite-capacity and loss queues against a CTMC built here with NumPy."""

from __future__ import annotations

import mpmath
import numpy as np
import pytest

from mva.loss import engset, erlang_b, mm1k, mmck, mminf


def _stationary(rates: dict, n: int) -> np.ndarray:
    """Stationary vector of a CTMC at 40 digits.

    ``rates[(i, j)]`` are the transition rates (floats, converted exactly);
    the diagonal is formed in mpmath, and ``pi Q = 0`` with one equation
    replaced by ``sum(pi) = 1`` is solved by mpmath LU, so that tiny
    probabilities keep their digits.
    """
    with mpmath.workdps(40):
        Q = mpmath.zeros(n, n)
        for (i, j), r in rates.items():
            Q[i, j] = mpmath.mpf(r)
        for i in range(n):
            Q[i, i] = -mpmath.fsum(Q[i, j] for j in range(n) if j != i)
        A = Q.T
        for j in range(n):
            A[n - 1, j] = 1
        x = mpmath.lu_solve(A, mpmath.matrix([0] * (n - 1) + [1]))
        return np.array([float(x[i]) for i in range(n)])


def _ctmc_mmck(lam, S, c, K):
    with mpmath.workdps(40):
        rates = {}
        for j in range(K + 1):
            if j < K:
                rates[(j, j + 1)] = mpmath.mpf(lam)
            if j > 0:
                rates[(j, j - 1)] = min(j, c) / mpmath.mpf(S)
        p = _stationary(rates, K + 1)
    L = float(np.arange(K + 1) @ p)
    X = lam * (1 - p[K])
    return p, L, X


def _ctmc_engset(c, N, beta):
    # j busy servers; each idle source requests at rate beta (holding time 1)
    n = min(c, N) + 1
    rates = {}
    for j in range(n):
        if j < n - 1:
            rates[(j, j + 1)] = (N - j) * mpmath.mpf(beta)
        if j > 0:
            rates[(j, j - 1)] = j
    p = _stationary(rates, n)
    attempts = np.array([(N - j) * beta for j in range(n)]) * p
    call = attempts[-1] / attempts.sum() if c < N else 0.0
    time = p[-1] if c <= N else 0.0
    return call, time


def _rel(a, b):
    return abs(a - b) / max(abs(b), 1e-300)


def test_mmck_matches_ctmc_on_random_instances():
    rng = np.random.default_rng(20261123)
    for _ in range(150):
        c = int(rng.integers(1, 6))
        K = c + int(rng.integers(0, 12))
        S = float(rng.uniform(0.05, 3.0))
        lam = float(rng.uniform(0.01, 3.0)) * c / S
        p, L, X = _ctmc_mmck(lam, S, c, K)
        r = mmck(lam, S, c, K) if c > 1 else mm1k(lam, S, K)
        assert _rel(r.blocking, p[K]) < 1e-9
        assert _rel(r.prob_empty, p[0]) < 1e-9
        assert _rel(r.queue_length, L) < 1e-9
        assert _rel(r.throughput, X) < 1e-9
        # Little's law and bounds
        assert r.queue_length == pytest.approx(r.throughput * r.response_time, rel=1e-12)
        assert 0 <= r.utilization <= 1 + 1e-12
        assert r.response_time >= S * (1 - 1e-12)


def test_erlang_b_and_engset_match_ctmc():
    rng = np.random.default_rng(7)
    for _ in range(120):
        c = int(rng.integers(1, 9))
        a = float(rng.uniform(0.01, 3.0 * c))
        p, _, _ = _ctmc_mmck(a, 1.0, c, c)
        assert _rel(erlang_b(c, a), p[c]) < 1e-9
        N = int(rng.integers(c + 1, c + 15))
        beta = float(rng.uniform(0.01, 2.0))
        call, time = _ctmc_engset(c, N, beta)
        assert _rel(engset(c, N, beta), call) < 1e-9
        assert _rel(engset(c, N, beta, congestion="time"), time) < 1e-9


def test_engset_tends_to_erlang_b_with_many_sources():
    a, c = 4.0, 6
    assert engset(c, 10**8, a / 10**8) == pytest.approx(erlang_b(c, a), rel=1e-6)


def test_mm1k_closed_form():
    lam, S, K = 0.7, 1.0, 6
    rho = lam * S
    p = (1 - rho) * rho ** np.arange(K + 1) / (1 - rho ** (K + 1))
    r = mm1k(lam, S, K)
    assert r.blocking == pytest.approx(p[K], rel=1e-13)
    assert r.queue_length == pytest.approx(np.arange(K + 1) @ p, rel=1e-13)


def test_large_capacity_is_stable_and_tends_to_mmc():
    from mva.open import mmc
    r = mmck(3.0, 1.0, 4, 5000)
    assert r.queue_length == pytest.approx(mmc(3.0, 1.0, 4).queue_length, rel=1e-12)
    big = mmck(500.0, 1.0, 400, 100000)   # overloaded, huge factorials
    assert np.isfinite(big.queue_length) and big.throughput == pytest.approx(400.0, rel=1e-9)


def test_mminf_poisson():
    r = mminf([0.0, 1.0, 4.0], 0.5)
    assert r.queue_length.tolist() == [0.0, 0.5, 2.0]
    assert np.allclose(r.prob_empty, np.exp(-np.array([0.0, 0.5, 2.0])))


def test_broadcasting_and_zero_load():
    r = mmck([0.0, 1.0], 1.0, 2, [2, 4])
    assert r.queue_length.shape == (2,)
    assert r.queue_length[0] == 0.0 and r.blocking[0] == 0.0
    assert erlang_b(0, 3.0) == 1.0
    assert erlang_b([1, 2], 1.0).round(6).tolist() == [0.5, 0.2]


@pytest.mark.parametrize("call, match", [
    (lambda: mmck(1.0, 1.0, 3, 2), "capacity must be >= servers"),
    (lambda: mm1k(1.0, 0.0, 2), "service_time must be finite and > 0"),
    (lambda: mm1k(-1.0, 1.0, 2), "arrival_rate must be finite and >= 0"),
    (lambda: mm1k(1.0, 1.0, 0), "capacity must be >= 1"),
    (lambda: engset(2, 3, 0.5, congestion="both"), "congestion must be one of"),
    (lambda: engset(0, 3, 0.5), "servers must be >= 1"),
])
def test_bad_input(call, match):
    with pytest.raises(ValueError, match=match):
        call()
