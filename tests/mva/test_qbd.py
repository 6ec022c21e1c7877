"""Quasi-birth-death processes (mva.qbd) against Pollaczek-Khinchine and truncated CTMCs."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from mva.errors import SaturationError
from mva.markov import build_state_space
from mva.phasetype import PhaseTypeFitWarning, erlang, fit, hyperexponential
from mva.qbd import logarithmic_reduction, qbd_drift, solve_qbd
from tests.strategies import ph_targets

REL = 1e-10


def m_ph_1(lam, ph):
    """M/PH/1 as a QBD: level = number in system, phase = service phase."""
    beta, T, t = ph.alpha, ph.T, ph.exit_rates
    m = ph.order
    return solve_qbd(lam * np.eye(m), T - lam * np.eye(m), np.outer(t, beta),
                     B1=[[-lam]], B0=[lam * beta], B2=t[:, None])


def pk_mean(rho, cs2):
    """Pollaczek-Khinchine mean number in an M/G/1 system."""
    return rho + rho ** 2 * (1 + cs2) / (2 * (1 - rho))


@pytest.mark.parametrize("k", [1, 2, 3, 5, 10])
@pytest.mark.parametrize("rho", [0.3, 0.7, 0.95])
def test_m_ek_1(k, rho):
    res = m_ph_1(rho, erlang(k, 1.0))
    assert res.mean_level == pytest.approx(pk_mean(rho, 1.0 / k), rel=REL)
    assert res.level_probabilities(0)[0] == pytest.approx(1 - rho, rel=REL)
    assert res.converged and res.residual < 1e-13
    assert res.drift == pytest.approx(rho, rel=1e-12)


@pytest.mark.parametrize("cs2", [1.5, 4.0, 20.0])
@pytest.mark.parametrize("rho", [0.2, 0.6, 0.9])
def test_m_h2_1(cs2, rho):
    mean = 2.5
    res = m_ph_1(rho / mean, hyperexponential(mean, cs2))
    assert res.mean_level == pytest.approx(pk_mean(rho, cs2), rel=REL)
    assert res.level_probabilities(0)[0] == pytest.approx(1 - rho, rel=REL)


@given(ph_targets, st.floats(0.01, 0.95))
def test_m_ph_1_pollaczek_khinchine(target, rho):
    mean, cs2 = target
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PhaseTypeFitWarning)
        ph = fit(mean, cs2, max_order=30)
    res = m_ph_1(rho / ph.mean, ph)
    assert res.mean_level == pytest.approx(pk_mean(rho, ph.cs2), rel=1e-9)
    # level probabilities: >= 0, geometric tail, sum to one with the tail
    p = res.level_probabilities(20)
    assert np.all(p >= -1e-15)
    assert p.sum() + res.tail_probability(20) == pytest.approx(1.0, abs=1e-12)
    # server utilisation = lambda x mean service time (Little's law on the server)
    assert 1 - p[0] == pytest.approx(rho, rel=1e-9)
    # R solves its equation, G is stochastic
    assert res.residual < 1e-11 and np.allclose(res.G.sum(axis=1), 1.0, atol=1e-12)


def test_mmpp_m_1_against_truncated_ctmc():
    """MMPP(2)/M/1 with the default boundary, against a truncated CTMC."""
    r = np.array([[-0.3, 0.3], [0.5, -0.5]])       # modulating chain
    lam = np.array([0.4, 1.6])                      # arrival rates per mode
    mu = 1.5
    A0 = np.diag(lam)
    A2 = mu * np.eye(2)
    A1 = r - np.diag(lam) - A2
    res = solve_qbd(A0, A1, A2)
    N = 400

    def moves(s):
        n, j = s
        yield ((n, 1 - j), r[j, 1 - j])
        if n < N:
            yield ((n + 1, j), lam[j])
        if n:
            yield ((n - 1, j), mu)

    space = build_state_space((0, 0), moves)
    pi = space.solve().pi
    assert space.mean(pi, lambda s: s[0]) == pytest.approx(res.mean_level, rel=REL)
    for n in range(6):
        for j in range(2):
            assert pi[space.index[(n, j)]] == pytest.approx(res.level_vector(n)[j], rel=REL)
    assert res.drift == pytest.approx((0.4 * 5 / 8 + 1.6 * 3 / 8) / mu, rel=1e-12)


def test_saturation_is_reported_first():
    with pytest.raises(SaturationError, match=r"drift ratio \(up / down\) = 1.0") as exc:
        m_ph_1(1.0, erlang(3, 1.0))
    assert exc.value.utilization == pytest.approx(1.0)
    with pytest.raises(SaturationError) as exc:
        m_ph_1(1.3, erlang(2, 1.0))
    assert exc.value.utilization == pytest.approx(1.3, rel=1e-12)
    assert qbd_drift([[0.5]], [[-1.5]], [[1.0]]) == pytest.approx(0.5)
    assert qbd_drift([[0.5]], [[-0.5]], [[0.0]]) == float("inf")


def test_bad_blocks():
    with pytest.raises(ValueError, match="A1 must be a non-empty square"):
        solve_qbd([[1.0]], [1.0], [[1.0]])
    with pytest.raises(ValueError, match=r"A0 must have shape \(1, 1\)"):
        solve_qbd([[1.0, 0.0]], [[-2.0]], [[1.0]])
    with pytest.raises(ValueError, match=r"A2: entries must be >= 0"):
        solve_qbd([[1.0]], [[0.0]], [[-1.0]])
    with pytest.raises(ValueError, match=r"rows of A0 \+ A1 \+ A2 must sum to zero"):
        solve_qbd([[1.0]], [[-1.0]], [[1.0]])
    with pytest.raises(ValueError, match=r"rows of \[B1 B0\] must sum to zero"):
        solve_qbd([[0.5]], [[-1.5]], [[1.0]], B1=[[-1.0]])
    with pytest.raises(ValueError, match="irreducible"):
        solve_qbd(np.diag([0.5, 0.5]), -np.diag([1.5, 1.5]), np.eye(2))
    with pytest.raises(ValueError, match="on_fail must be one of"):
        solve_qbd([[0.5]], [[-1.5]], [[1.0]], on_fail="never")


def test_logarithmic_reduction_g_solves_its_equation():
    ph = fit(1.0, 0.3)
    lam = 0.8
    A0 = lam * np.eye(ph.order)
    A1 = ph.T - A0
    A2 = np.outer(ph.exit_rates, ph.alpha)
    G, it, gap = logarithmic_reduction(A0, A1, A2)
    assert gap <= 1e-14 and 1 <= it < 40
    assert np.max(np.abs(A2 + A1 @ G + A0 @ G @ G)) < 1e-13
    assert np.all(G >= -1e-15)
