"""CTMC steady state, state-space builder, rewards and absorption (mva.markov).

Closed forms from Kleinrock (1975), Gross and Harris (Fundamentals of
Queueing Theory) and Bolch et al. (2006): M/M/1/K, M/M/c/K, Erlang B,
machine repairman, gambler's ruin; a product-form closed network solved as a
CTMC against exact MVA.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pytest
import scipy.sparse as sp
from hypothesis import given

import mva
from mva.errors import ConvergenceError, ConvergenceWarning
from mva.markov import (absorption, arrival_distribution, build_state_space, check_generator,
                        is_irreducible, reward_rate, steady_state)
from tests.strategies import generators, mmck_queues, product_form_networks

REL = 1e-10


def mmck_space(lam: float, mu: float, c: int, K: int):
    """M/M/c/K with FCFS; blocked arrivals are labelled self-loops."""

    def moves(s):
        (n,) = s
        yield ((min(n + 1, K),), lam, "arrival")
        if n:
            yield ((n - 1,), min(n, c) * mu, "departure")

    return build_state_space((0,), moves)


def mmck_closed_form(lam: float, mu: float, c: int, K: int) -> np.ndarray:
    a = lam / mu
    logp = np.array([n * math.log(a) - math.lgamma(n + 1) if n <= c else
                     c * math.log(a) - math.lgamma(c + 1) + (n - c) * math.log(a / c)
                     for n in range(K + 1)])
    p = np.exp(logp - logp.max())
    return p / p.sum()


def assert_rel(x, y, rel=REL):
    x = np.asarray(x, dtype=float)
    y = np.asarray(y, dtype=float)
    np.testing.assert_allclose(x, y, rtol=rel, atol=0.0)


# --------------------------------------------------------------------------
# closed forms
# --------------------------------------------------------------------------


@pytest.mark.parametrize("rho,K", [(0.5, 5), (0.9, 30), (1.0, 10), (1.7, 12), (0.2, 8)])
def test_mm1k_closed_form(rho, K):
    space = mmck_space(rho, 1.0, 1, K)
    res = space.solve()
    n = np.arange(K + 1)
    if rho == 1.0:
        expect = np.full(K + 1, 1.0 / (K + 1))
    else:
        expect = (1 - rho) * rho ** n / (1 - rho ** (K + 1))
    assert [s[0] for s in space.states] == list(n)
    assert_rel(res.pi, expect)
    assert res.converged and res.method == "direct" and res.residual < 1e-14
    # mean number in system (Gross and Harris, eq. 2.46)
    if rho != 1.0:
        L = rho / (1 - rho) - (K + 1) * rho ** (K + 1) / (1 - rho ** (K + 1))
        assert space.mean(res.pi, lambda s: s[0]) == pytest.approx(L, rel=REL)


@pytest.mark.parametrize("lam,mu,c,K", [(2.0, 1.0, 3, 10), (5.0, 0.7, 4, 20), (0.3, 1.0, 2, 2),
                                        (9.0, 1.0, 8, 40)])
def test_mmck_closed_form(lam, mu, c, K):
    space = mmck_space(lam, mu, c, K)
    res = space.solve()
    p = mmck_closed_form(lam, mu, c, K)
    assert_rel(res.pi, p)
    # throughput = lambda (1 - P_K) through transition rewards, utilisation = X / (c mu)
    X = space.throughput(res.pi, "departure")
    assert X == pytest.approx(lam * (1 - p[K]), rel=REL)
    busy = space.mean(res.pi, lambda s: min(s[0], c))
    assert busy == pytest.approx(X / mu, rel=REL)


@pytest.mark.parametrize("c,a", [(1, 0.5), (5, 3.0), (10, 12.0), (30, 20.0)])
def test_erlang_b_loss(c, a):
    space = mmck_space(a, 1.0, c, c)
    res = space.solve()
    B = 1.0
    for j in range(1, c + 1):
        B = a * B / (j + a * B)
    seen = space.arrival_distribution(res.pi, "arrival")
    assert seen[space.index[(c,)]] == pytest.approx(B, rel=REL)       # arrivals see all busy
    assert space.throughput(res.pi, "departure") == pytest.approx(a * (1 - B), rel=REL)
    assert space.mean(res.pi, lambda s: s[0]) == pytest.approx(a * (1 - B), rel=REL)


@pytest.mark.parametrize("N,lam,mu,r", [(5, 0.1, 1.0, 1), (12, 0.3, 1.0, 2), (20, 1.0, 3.0, 4)])
def test_machine_repairman(N, lam, mu, r):
    def moves(s):
        (n,) = s                                     # n broken machines
        if n < N:
            yield ((n + 1,), (N - n) * lam, "failure")
        if n:
            yield ((n - 1,), min(n, r) * mu, "repair")

    space = build_state_space((0,), moves)
    res = space.solve()
    ratio = lam / mu
    w = np.array([math.exp(math.lgamma(N + 1) - math.lgamma(N - n + 1)) * ratio ** n
                  / (math.factorial(n) if n <= r else math.factorial(r) * r ** (n - r))
                  for n in range(N + 1)])
    assert_rel(res.pi, w / w.sum())
    # Little's law on the repair facility: broken = failure rate x time to repair
    X = space.throughput(res.pi, "failure")
    assert X == pytest.approx(space.throughput(res.pi, "repair"), rel=REL)


def _closed_network_ctmc(net):
    """Build a closed multi-class network (PS queues, delays, think times) as a CTMC.

    Every class visits its stations cyclically once per chain cycle (per-visit
    service time = demand); the think time is one more (delay) stop.
    """
    D = net.demands
    C, K = D.shape
    Z = net.think_times
    routes = []
    for c in range(C):
        stops = [k for k in range(K) if D[c, k] > 0]
        if Z[c] > 0:
            stops.append(K)                          # think station
        routes.append(stops)
    kinds = list(net.kinds) + ["delay"]
    S = np.hstack([D, Z[:, None]])

    def moves(s):
        n = np.array(s).reshape(C, K + 1)
        tot = n.sum(axis=0)
        for c in range(C):
            for i, k in enumerate(routes[c]):
                if n[c, k] == 0:
                    continue
                if kinds[k] == "delay":
                    rate = n[c, k] / S[c, k]
                else:
                    rate = n[c, k] / tot[k] / S[c, k]
                nxt = routes[c][(i + 1) % len(routes[c])]
                if nxt == k:
                    yield (s, rate, ("cycle", c))
                    continue
                m = n.copy()
                m[c, k] -= 1
                m[c, nxt] += 1
                yield (tuple(m.ravel().tolist()), rate, ("cycle", c) if i == len(routes[c]) - 1
                       else ("move", c))

    start = np.zeros((C, K + 1), dtype=int)
    for c in range(C):
        start[c, routes[c][0]] = net.populations[c]
    return build_state_space(tuple(start.ravel().tolist()), moves), routes


@given(product_form_networks())
def test_product_form_network_equals_exact_mva(net):
    space, routes = _closed_network_ctmc(net)
    res = space.solve()
    ref = mva.exact_mva(net)
    C, K = net.demands.shape
    for c in range(C):
        if net.populations[c] == 0:
            continue
        X = space.throughput(res.pi, lambda lb, c=c: lb == ("cycle", c))
        assert X == pytest.approx(ref.throughput[c], rel=REL)
        for k in range(K):
            Q = space.mean(res.pi, lambda s, c=c, k=k: s[c * (K + 1) + k])
            assert Q == pytest.approx(ref.queue_length[c, k], rel=REL, abs=1e-13)


def test_three_station_two_class_network_equals_exact_mva():
    net = mva.ClosedNetwork(demands=[[1.0, 0.4, 2.0], [0.3, 1.5, 0.8]], populations=[3, 2],
                            think_times=[2.0, 0.0], kinds=("queue", "queue", "delay"))
    space, _ = _closed_network_ctmc(net)
    res = space.solve()
    ref = mva.exact_mva(net)
    for c in range(2):
        X = space.throughput(res.pi, ("cycle", c))
        assert X == pytest.approx(ref.throughput[c], rel=REL)
        for k in range(3):
            Q = space.mean(res.pi, lambda s, c=c, k=k: s[c * 4 + k])
            assert Q == pytest.approx(ref.queue_length[c, k], rel=REL)
            # utilisation of the PS queues: probability the station is busy with class c, summed
    busy0 = space.mean(res.pi, lambda s: float(s[0] + s[4] > 0))
    assert busy0 == pytest.approx(ref.utilization[:, 0].sum(), rel=REL)


# --------------------------------------------------------------------------
# properties
# --------------------------------------------------------------------------


@given(generators())
def test_probability_vectors(Q):
    res = steady_state(Q)
    assert res.pi.shape == (Q.shape[0],)
    assert np.all(res.pi >= 0.0)
    assert res.pi.sum() == pytest.approx(1.0, abs=1e-14)
    assert res.converged and res.residual <= 1e-12
    # the balance equations hold
    assert np.max(np.abs(res.pi @ Q)) <= 1e-11 * np.max(np.abs(np.diag(Q)))


@given(generators())
def test_methods_agree(Q):
    ref = steady_state(Q, method="direct").pi
    g = steady_state(Q, method="gmres", tol=1e-13)
    assert g.converged and g.method == "gmres"
    np.testing.assert_allclose(g.pi, ref, rtol=1e-8, atol=1e-14)
    p = steady_state(Q, method="power", tol=1e-13, max_iter=200_000, on_fail="ignore")
    if p.converged:
        np.testing.assert_allclose(p.pi, ref, atol=1e-10)


@given(mmck_queues())
def test_littles_law_mmck(q):
    """L = X W, with W from the distribution seen by (accepted) arrivals, FCFS."""
    lam, mu, c, K = q
    space = mmck_space(lam, mu, c, K)
    pi = space.solve().pi
    seen = space.arrival_distribution(pi, "arrival")
    n = np.array([s[0] for s in space.states])
    accepted = n < K
    p_acc = seen[accepted] / seen[accepted].sum()
    # sojourn of an arrival that finds n: wait (n - c + 1) / (c mu) if all busy, then 1/mu
    W = float(p_acc @ (np.maximum(n[accepted] - c + 1, 0) / (c * mu) + 1.0 / mu))
    X = space.throughput(pi, "departure")
    L = space.mean(pi, lambda s: s[0])
    assert L == pytest.approx(X * W, rel=1e-10)
    # accepted arrivals = departures; PASTA: Poisson arrivals see time averages
    assert X == pytest.approx(lam * (1 - seen[~accepted].sum()), rel=1e-10)
    np.testing.assert_allclose(seen, pi, rtol=1e-12, atol=1e-300)
    # 0 <= U <= 1
    U = space.mean(pi, lambda s: min(s[0], c)) / c
    assert 0.0 <= U <= 1.0


@given(mmck_queues())
def test_littles_law_by_absorption(q):
    """W of a tagged FCFS customer = mean time to absorption of its residual chain."""
    lam, mu, c, K = q
    space = mmck_space(lam, mu, c, K)
    pi = space.solve().pi
    seen = space.arrival_distribution(pi, "arrival")

    # tagged customer: state j = its place among the waiting (0: in service), -1 = done
    def moves(s):
        (j,) = s
        if j > 0:
            yield ((j - 1,), c * mu)
        elif j == 0:
            yield ((-1,), mu)

    tag = build_state_space((K - c,), moves)
    ab = tag.absorption()
    assert ab.absorbing.tolist() == [tag.index[(-1,)]]
    t = dict(zip((tag.states[i][0] for i in ab.transient), ab.times))
    W = sum(seen[space.index[(n,)]] * t[max(n - c + 1, 0)] for n in range(K)) / seen[:K].sum()
    L = space.mean(pi, lambda s: s[0])
    assert L == pytest.approx(space.throughput(pi, "departure") * W, rel=1e-10)


# --------------------------------------------------------------------------
# large chains, methods
# --------------------------------------------------------------------------


def _two_queues(K1: int, K2: int, r1: float, r2: float):
    """Two independent M/M/1/K queues: product of truncated geometrics."""

    def moves(s):
        a, b = s
        if a < K1:
            yield ((a + 1, b), r1)
        if a:
            yield ((a - 1, b), 1.0)
        if b < K2:
            yield ((a, b + 1), r2)
        if b:
            yield ((a, b - 1), 1.0)

    space = build_state_space((0, 0), moves)
    g1 = r1 ** np.arange(K1 + 1)
    g2 = r2 ** np.arange(K2 + 1)
    exact = np.array([g1[a] * g2[b] for a, b in space.states]) / (g1.sum() * g2.sum())
    return space, exact


def test_gmres_and_direct_on_a_grid():
    space, exact = _two_queues(70, 40, 0.8, 0.95)
    assert space.n == 71 * 41
    d = space.solve(method="direct")
    g = space.solve(method="gmres", tol=1e-13)
    assert d.converged and g.converged and g.iterations >= 1
    assert_rel(d.pi, exact, 1e-10)
    np.testing.assert_allclose(g.pi, exact, rtol=1e-7, atol=1e-15)
    assert space.solve(direct_limit=100).method == "gmres"


def test_power_method_and_nonconvergence_reporting():
    space, exact = _two_queues(4, 3, 0.5, 0.7)
    p = space.solve(method="power", tol=1e-13)
    assert p.converged and p.method == "power"
    np.testing.assert_allclose(p.pi, exact, atol=1e-12)
    with pytest.warns(ConvergenceWarning, match="residual"):
        r = space.solve(method="power", max_iter=3)
    assert not r.converged and r.iterations == 3
    with pytest.raises(ConvergenceError):
        space.solve(method="power", max_iter=3, on_fail="raise")


# --------------------------------------------------------------------------
# rewards, absorption
# --------------------------------------------------------------------------


def test_reward_rate_transition_rewards():
    space = mmck_space(1.5, 1.0, 2, 6)
    pi = space.solve().pi
    Q = space.generator
    down = sp.csr_array(np.tril(np.ones((7, 7)), -1))       # count departures (i -> i-1)
    assert reward_rate(pi, Q=Q, transition_rewards=down) == pytest.approx(
        space.throughput(pi, "departure"), rel=1e-14)
    assert reward_rate(pi, state_rewards=np.arange(7), Q=Q,
                       transition_rewards=down) == pytest.approx(
        space.mean(pi, lambda s: s[0]) + space.throughput(pi, "departure"), rel=1e-14)
    with pytest.raises(ValueError, match="Q is required"):
        reward_rate(pi, transition_rewards=down)
    with pytest.raises(ValueError, match="state_rewards must have shape"):
        reward_rate(pi, state_rewards=[1.0, 2.0])


def test_arrival_distribution_errors():
    with pytest.raises(ValueError, match="rate zero"):
        arrival_distribution([0.5, 0.5], [0.0, 0.0])
    with pytest.raises(ValueError, match="rates must have shape"):
        arrival_distribution([0.5, 0.5], [1.0])


@pytest.mark.parametrize("p,q,N", [(1.0, 2.0, 6), (3.0, 1.0, 10), (1.0, 1.0, 5)])
def test_gamblers_ruin_absorption(p, q, N):
    # birth-death on 0..N with absorbing ends; P(hit N | start i) = (1 - r^i) / (1 - r^N), r = q/p
    Q = np.zeros((N + 1, N + 1))
    for i in range(1, N):
        Q[i, i + 1] = p
        Q[i, i - 1] = q
        Q[i, i] = -(p + q)
    res = absorption(Q, initial=np.eye(N + 1)[2])
    i = np.arange(1, N)
    if p == q:
        win = i / N
        times = i * (N - i) / (2 * p)
    else:
        r = q / p
        win = (1 - r ** i) / (1 - r ** N)
        times = (i - N * win) / (q - p)           # E[T_i] = (i - N P_i) / (q - p) (embedded walk)
    assert res.transient.tolist() == i.tolist() and res.absorbing.tolist() == [0, N]
    assert_rel(res.probabilities[:, 1], win)
    assert_rel(res.probabilities.sum(axis=1), np.ones(N - 1), 1e-13)
    assert_rel(res.times, times)
    assert res.mean_time == pytest.approx(times[1], rel=REL)


def test_absorption_errors_and_explicit_states():
    with pytest.raises(ValueError, match="no absorbing state"):
        absorption([[-1.0, 1.0], [1.0, -1.0]])
    Q = [[-1.0, 1.0, 0.0, 0.0], [0.0, -1.0, 1.0, 0.0], [0.0, 1.0, -1.0, 0.0], [0, 0, 0, 0]]
    with pytest.raises(ValueError, match=r"never reach an absorbing state"):
        absorption(Q)
    # Erlang-3 as an absorbing chain, absorbing state given explicitly
    E = [[-3.0, 3.0, 0, 0], [0, -3.0, 3.0, 0], [0, 0, -3.0, 3.0], [1.0, 0, 0, -1.0]]
    res = absorption(E, absorbing=[3], initial=[1, 0, 0, 0])
    assert res.mean_time == pytest.approx(1.0, rel=1e-14)
    with pytest.raises(ValueError, match="initial must sum to 1"):
        absorption(E, absorbing=[3], initial=[0.5, 0, 0, 0])


# --------------------------------------------------------------------------
# bad input
# --------------------------------------------------------------------------


def test_generator_errors():
    with pytest.raises(ValueError, match=r"row 0 must sum to zero.*0.5"):
        check_generator([[-0.5, 1.0], [1.0, -1.0]])
    with pytest.raises(ValueError, match=r"off-diagonal rates must be >= 0; got Q\[0, 1\] = -1.0"):
        check_generator([[1.0, -1.0], [1.0, -1.0]])
    with pytest.raises(ValueError, match="square"):
        check_generator([[0.0, 0.0]])
    with pytest.raises(ValueError, match="finite"):
        check_generator([[np.nan, 0.0], [0.0, 0.0]])
    with pytest.raises(ValueError, match="square 2-D"):
        steady_state([0.0, 0.0])
    with pytest.raises(ValueError, match=r"irreducible.*2 strongly connected components"):
        steady_state(sp.csr_array(np.array([[-1.0, 1.0], [0.0, 0.0]])))
    # two closed classes
    Q = np.zeros((4, 4))
    Q[0, 1] = Q[1, 0] = Q[2, 3] = Q[3, 2] = 1.0
    np.fill_diagonal(Q, -Q.sum(axis=1))
    assert not is_irreducible(Q)
    with pytest.raises(ValueError, match="2 of them closed"):
        steady_state(Q)
    with pytest.raises(ValueError, match="method must be one of"):
        steady_state([[-1.0, 1.0], [1.0, -1.0]], method="magic")
    with pytest.raises(ValueError, match="tol must be > 0"):
        steady_state([[-1.0, 1.0], [1.0, -1.0]], tol=0.0)
    assert steady_state([[0.0]]).pi.tolist() == [1.0]


def test_builder_errors_and_limit():
    def grid(s):
        a, b = s
        yield ((a + 1, b), 1.0)
        yield ((a, b + 1), 1.0)

    with pytest.raises(ValueError,
                       match=r"more than max_states=100 reachable states \(101 found.*MiB"):
        build_state_space((0, 0), grid, max_states=100)
    with pytest.raises(ValueError, match=r"rate to \(1,\) must be finite and >= 0; got -1.0"):
        build_state_space((0,), lambda s: [((1,), -1.0)])
    with pytest.raises(ValueError, match="finite"):
        build_state_space((0,), lambda s: [((1,), float("inf"))])
    with pytest.raises(ValueError, match="must yield"):
        build_state_space((0,), lambda s: [((1,),)])
    with pytest.raises(ValueError, match="hashable"):
        build_state_space([0], lambda s: [])
    with pytest.raises(ValueError, match="max_states must be >= 1"):
        build_state_space((0,), lambda s: [], max_states=0)


def test_builder_structure():
    space = mmck_space(1.0, 2.0, 1, 3)
    assert space.labels == ("arrival", "departure") and len(space) == 4
    # the blocked arrival in the full state is a self-loop: listed, not in the generator
    full = space.index[(3,)]
    assert space.generator[full, full] == -2.0
    assert space.rates("arrival").tolist() == [1.0, 1.0, 1.0, 1.0]
    with pytest.raises(ValueError, match="matches none"):
        space.rates("nothing")
    # duplicated transitions are summed; zero rates ignored
    sp2 = build_state_space((0,), lambda s: [((1 - s[0],), 1.0), ((1 - s[0],), 2.0), ((5,), 0.0)])
    assert sp2.generator.toarray().tolist() == [[-3.0, 3.0], [3.0, -3.0]]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert sp2.solve().pi.tolist() == [0.5, 0.5]


def test_direct_solve_retries_with_pivoting_when_the_diagonal_pivots_fail(monkeypatch):
    """Without pivoting a Schur-complement pivot can cancel (a 119-state PDQ key chain gave a
    residual of 0.19); the direct solve then factors again with partial pivoting and keeps
    the better answer.  Simulated here by corrupting the pivot-free factorisation."""
    from mva import markov

    Q = np.array([[-3.0, 2.0, 1.0, 0.0], [1.0, -2.0, 0.5, 0.5],
                  [0.0, 4.0, -5.0, 1.0], [2.0, 0.0, 1.0, -3.0]])
    exact = steady_state(Q).pi
    real = markov._lu_removed
    calls = []

    def broken(A, r, options=markov._LU_OPTIONS):
        calls.append(options is markov._LU_OPTIONS)
        out = real(A, r, options)
        if options is markov._LU_OPTIONS:       # the pivot-free path loses the solution
            x, steps = out
            return x * np.array([1.0, 3.0, 0.2, 1.0]), steps
        return out

    monkeypatch.setattr(markov, "_lu_removed", broken)
    res = steady_state(Q)
    assert calls[-1] is False                   # the pivoting factorisation ran last
    assert res.converged and res.residual < 1e-14
    np.testing.assert_allclose(res.pi, exact, rtol=1e-13)
