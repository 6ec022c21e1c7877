"""Phase-type distributions (mva.phasetype): moments, density, fits, seeded sampling."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy import integrate, stats

from mva.markov import absorption
from mva.phasetype import (PhaseType, PhaseTypeFitWarning, coxian2, erlang, exponential, fit,
                           hyperexponential, reachable_cs2)
from tests.strategies import ph_targets


@given(ph_targets, st.integers(1, 200), st.sampled_from(["h2", "coxian2"]))
def test_fit_reproduces_mean_and_cs2(target, kmax, high):
    mean, cs2 = target
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PhaseTypeFitWarning)
        ph = fit(mean, cs2, max_order=kmax, high=high)
    assert ph.mean == pytest.approx(mean, rel=1e-12)
    if cs2 >= 1.0 / kmax:
        assert ph.cs2 == pytest.approx(cs2, rel=1e-12, abs=1e-15)
        assert ph.order <= max(kmax, 2)
    else:  # the closest reachable: Erlang-kmax
        assert ph.order == kmax and ph.cs2 == pytest.approx(1.0 / kmax, rel=1e-12)
    # a proper distribution: alpha sums to one, exit rates >= 0
    assert ph.alpha.sum() == pytest.approx(1.0, abs=1e-15) and np.all(ph.exit_rates >= 0)


def test_fit_families_and_reporting():
    assert fit(2.0, 1.0).name == "exp"
    assert fit(2.0, 0.25).name == "Erlang-4"
    assert fit(2.0, 0.3).name == "Erlang(3,4)"
    assert fit(2.0, 0.5).name == "Erlang-2"
    assert fit(2.0, 0.9).name == "Erlang(1,2)"
    assert fit(2.0, 3.0).name == "H2" and fit(2.0, 3.0, high="coxian2").name == "Coxian-2"
    with pytest.warns(PhaseTypeFitWarning, match=r"cs2=0.0 is below 1/max_order = 0.1.*Erlang-10"):
        d = fit(1.0, 0.0, max_order=10)
    assert d.name == "Erlang-10" and d.cs2 == pytest.approx(0.1, rel=1e-13)
    with pytest.raises(ValueError, match="raise max_order"):
        fit(1.0, 0.001, max_order=10, on_unreachable="raise")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert fit(1.0, 0.0, max_order=10, on_unreachable="ignore").order == 10
        assert fit(1.0, 0.1, max_order=10).name == "Erlang-10"     # exactly reachable: no warning
    assert reachable_cs2(50) == 0.02


def test_bad_input():
    with pytest.raises(ValueError, match="mean must be finite and > 0"):
        fit(0.0, 1.0)
    with pytest.raises(ValueError, match="cs2 must be finite and >= 0"):
        fit(1.0, -0.5)
    with pytest.raises(ValueError, match="high must be one of"):
        fit(1.0, 2.0, high="h3")
    with pytest.raises(ValueError, match="cs2 must be >= 1"):
        hyperexponential(1.0, 0.5)
    with pytest.raises(ValueError, match=r"p must be a probability"):
        coxian2(1.0, 1.0, 1.5)
    with pytest.raises(ValueError, match="negative diagonal"):
        PhaseType(alpha=[1.0], T=[[0.0]])
    with pytest.raises(ValueError, match="alpha must sum to at most 1"):
        PhaseType(alpha=[0.7, 0.7], T=[[-1.0, 0.0], [0.0, -1.0]])
    with pytest.raises(ValueError, match="shape"):
        PhaseType(alpha=[1.0], T=[[-1.0, 0.0], [0.0, -1.0]])
    with pytest.raises(ValueError, match="not a sub-generator"):
        PhaseType(alpha=[1.0, 0.0], T=[[-1.0, 2.0], [0.0, -1.0]])
    with pytest.raises(ValueError, match="singular|absorption is not certain"):
        PhaseType(alpha=[1.0, 0.0], T=[[-1.0, 1.0], [1.0, -1.0]])
    with pytest.raises(ValueError, match="seeded explicitly"):
        exponential(1.0).sample(None, 3)


@pytest.mark.parametrize("k,mean", [(1, 1.0), (3, 2.0), (10, 0.5)])
def test_erlang_against_scipy(k, mean):
    e = erlang(k, mean)
    ref = stats.gamma(a=k, scale=mean / k)
    x = np.linspace(0.0, 4 * mean, 41)
    np.testing.assert_allclose(e.pdf(x), ref.pdf(x), rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(e.cdf(x), ref.cdf(x), rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(e.moments(4), [ref.moment(j) for j in range(1, 5)], rtol=1e-12)
    assert e.variance == pytest.approx(mean ** 2 / k, rel=1e-12)
    assert e.pdf(-1.0) == 0.0 and e.cdf(-1.0) == 0.0 and e.moment(0) == 1.0


def test_hyperexponential_and_coxian_closed_forms():
    h = hyperexponential(3.0, 5.0)
    p1, p2 = h.alpha
    m1, m2 = -np.diag(h.T)
    assert p1 / m1 == pytest.approx(p2 / m2, rel=1e-14)                # balanced means
    x = np.array([0.0, 0.5, 3.0, 10.0])
    np.testing.assert_allclose(h.pdf(x), p1 * m1 * np.exp(-m1 * x) + p2 * m2 * np.exp(-m2 * x),
                               rtol=1e-10)
    # Coxian-2: mean 1/mu1 + p/mu2, E[X^2] = 2/mu1^2 + p (2/(mu1 mu2) + 2/mu2^2)
    c = coxian2(2.0, 0.5, 0.25)
    assert c.mean == pytest.approx(0.5 + 0.25 / 0.5, rel=1e-14)
    assert c.moment(2) == pytest.approx(2 / 4 + 0.25 * (2 / 1.0 + 2 / 0.25), rel=1e-14)
    # the density integrates to the cdf
    val, _ = integrate.quad(lambda t: float(c.pdf(t)), 0.0, 2.0)
    assert val == pytest.approx(c.cdf(2.0), rel=1e-9)


def test_mean_equals_absorption_time():
    ph = fit(1.7, 0.35)
    m = ph.order
    Q = np.zeros((m + 1, m + 1))
    Q[:m, :m] = ph.T
    Q[:m, m] = ph.exit_rates
    res = absorption(Q, initial=np.append(ph.alpha, 0.0))
    assert res.mean_time == pytest.approx(ph.mean, rel=1e-13)


def test_atom_at_zero():
    ph = PhaseType(alpha=[0.25], T=[[-2.0]])
    assert ph.mean == pytest.approx(0.125) and ph.cdf(0.0) == pytest.approx(0.75)
    x = ph.sample(np.random.default_rng(3), 40_000)
    assert abs((x == 0).mean() - 0.75) < 0.01


@pytest.mark.parametrize("mean,cs2", [(1.0, 0.0), (2.0, 0.3), (1.0, 1.0), (5.0, 4.0)])
def test_sampling_matches_distribution(mean, cs2):
    ph = fit(mean, cs2, max_order=20, on_unreachable="ignore")
    x = ph.sample(np.random.default_rng(12345), 20_000)
    assert x.shape == (20_000,) and np.all(x >= 0)
    # Kolmogorov-Smirnov against the PH cdf (fixed seed: deterministic)
    ks = stats.kstest(x, lambda t: ph.cdf(t))
    assert ks.pvalue > 1e-3
    se = math.sqrt(ph.variance / x.size)
    assert abs(x.mean() - ph.mean) < 5 * se


def test_sampling_is_reproducible_and_shaped():
    ph = fit(1.0, 2.0)
    a = ph.sample(np.random.default_rng(7), (3, 4))
    b = ph.sample(np.random.default_rng(7), (3, 4))
    assert a.shape == (3, 4) and np.array_equal(a, b)
    assert isinstance(ph.sample(7), float)
    assert np.array_equal(ph.sample(11, 5), ph.sample(np.random.default_rng(11), 5))


def test_builder_helpers():
    ph = fit(1.0, 0.4)              # Erlang(2,3): starts in phase 0 or 1
    assert [i for i, _ in ph.initial_phases()] == [0, 1]
    assert sum(p for _, p in ph.initial_phases()) == pytest.approx(1.0)
    assert ph.phase_moves(0) == ((1, -ph.T[0, 0]),)
    assert ph.phase_moves(2) == ((None, -ph.T[2, 2]),)
    assert "Erlang(2,3)" in repr(ph)
