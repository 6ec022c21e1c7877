"""The node-level chains of models._node: fast paths against their references, invariants."""

import itertools
import math

import numpy as np
import pytest
import scipy.sparse as sps
from hypothesis import given, settings
from hypothesis import strategies as st

from models import _node
from tests.strategies import cs2s, latencies, times


def _dense(t):
    rows, cols, fixed, arr, nst, nvec, left, scale = t
    A = sps.coo_matrix((fixed, (rows, cols)), shape=(nst, nst)).toarray()
    B = sps.coo_matrix((arr, (rows, cols)), shape=(nst, nst)).toarray()
    return A, B, nvec, left, scale


@settings(max_examples=40, deadline=None)
@given(st.integers(1, 60), st.integers(1, 5), st.floats(0.0, 10.0), st.integers(1, 40))
def test_station_structure_matches_reference(M, K, cs2, cap):
    """The vectorised station chain equals the state-by-state reference (every rate)."""
    fast = _dense(_node._station_structure(M, K, 7.0, cs2, cap))
    ref = _dense(_node._station_structure_ref(M, K, 7.0, cs2, min(cap, M)))
    for a, b in zip(fast[:4], ref[:4]):
        np.testing.assert_allclose(a, b, rtol=1e-13, atol=0)
    assert fast[4] == ref[4]


def _dense_stationary(rows, cols, rates, n):
    Q = np.zeros((n, n))
    np.add.at(Q, (rows, cols), rates)
    Q -= np.diag(Q.sum(axis=1))
    A = np.vstack([Q.T, np.ones(n)])
    b = np.zeros(n + 1)
    b[-1] = 1.0
    return np.linalg.lstsq(A, b, rcond=None)[0]


@settings(max_examples=40, deadline=None)
@given(st.integers(2, 30), st.integers(0, 10_000), st.floats(-6, 6))
def test_pinned_solve_matches_dense(n, seed, spread):
    """The pinned sparse solve balances every state's flows to rounding, and gives the dense
    least-squares stationary vector where that one is accurate (rates within three orders
    of magnitude: with twelve the dense reference itself misbalances some state by up to
    10%, numpy 2.4)."""
    rng = np.random.default_rng(seed)
    # a ring keeps the chain irreducible; extra random transitions on top
    rows = np.concatenate([np.arange(n), rng.integers(0, n, 2 * n)])
    cols = np.concatenate([(np.arange(n) + 1) % n, rng.integers(0, n, 2 * n)])
    keep = rows != cols
    rows, cols = rows[keep], cols[keep]
    rates = 10.0 ** rng.uniform(-abs(spread), abs(spread), rows.size)
    pi = _node._stationary(rows, cols, rates, n)
    assert abs(pi.sum() - 1) < 1e-12 and np.all(pi >= 0)
    out = np.bincount(rows, weights=pi[rows] * rates, minlength=n)
    inn = np.bincount(cols, weights=pi[rows] * rates, minlength=n)
    # each state's balance to rounding: relative to its own flow, or to the chain's total
    # flow for a state whose flows are far below it
    assert np.all(np.abs(inn - out) <= 1e-9 * np.maximum(inn, out) + 1e-13 * out.sum())
    if abs(spread) <= 3:
        ref = _dense_stationary(rows, cols, rates, n)
        np.testing.assert_allclose(pi, ref, rtol=1e-6, atol=1e-12)


def test_pinned_solve_negligible_pinned_state():
    """A birth-death chain whose state 0 has probability ~1e-300: re-pinned, still exact."""
    n = 400
    up, down = 50.0, 1.0                     # pi_k ~ 50**k: state 0 is negligible
    rows = np.concatenate([np.arange(n - 1), np.arange(1, n)])
    cols = np.concatenate([np.arange(1, n), np.arange(n - 1)])
    rates = np.concatenate([np.full(n - 1, up), np.full(n - 1, down)])
    pi = _node._stationary(rows, cols, rates, n)
    assert np.all(np.isfinite(pi)) and abs(pi.sum() - 1) < 1e-12
    assert pi[-1] == pytest.approx(1 - down / up, rel=1e-9)


@settings(max_examples=15, deadline=None)
@given(st.integers(2, 3), times, times, st.sampled_from([0.0, 0.5, 1.0, 2.5, 9.0]), latencies,
       st.integers(1, 4))
def test_full_chain_matches_reference(P, W, o, cs2, L, k):
    """The cached-structure (lumped) whole-machine chain equals the chain without lumping."""
    if P == 3 and (k > 1 or cs2 < 0.5):
        k, cs2 = 1, max(cs2, 1.0)           # keep the reference's state space small
    a = _node.solve_full(P, W, o, cs2, L, latency_stages=k)
    b = _node._solve_full_chain(P, W, o, cs2, L, k, lumped=False)
    # the processors' symmetry lumped: at most P! fewer states, at least 1/P! of them
    assert b["size"] / math.factorial(P) <= a["size"] < b["size"]
    for key in ("R", "R_w", "R_p", "R_q", "R_y", "Q_q", "Q_y"):
        assert a[key] == pytest.approx(b[key], rel=1e-9, abs=1e-9 * b["R"])
    # the cycle is its parts: computing, pending, request and reply residences, 2L
    parts = a["R_w"] + a["R_p"] + a["R_q"] + a["R_y"] + 2 * L
    assert parts == pytest.approx(a["R"], rel=1e-8)


def _orbit(s, P):
    return {_node._relabel(s, lab) for lab in itertools.permutations(range(P))}


def _reachable(P, ph, m):
    """Every state of the unlumped whole-machine chain (breadth-first, with _full_moves)."""
    A_ = [3 + ph * ph + ph + j for j in range(ph)]
    Tf = [[3 + j * ph + jj if j == jj else -1 for jj in range(ph)] for j in range(ph)]
    E_ = [3 + ph * ph + j for j in range(ph)]
    start = (tuple(("C",) for _ in range(P)), tuple(() for _ in range(P)), (-1,) * P)
    seen, todo = {start}, [start]
    while todo:
        for _, ns in _node._full_moves(todo.pop(), P, ph, m, A_, Tf, E_):
            if ns not in seen:
                seen.add(ns)
                todo.append(ns)
    return seen


@pytest.mark.parametrize("P, ph, m", [(2, 1, 2), (2, 2, 1), (3, 1, 1), (3, 2, 0), (4, 1, 0)])
def test_lumped_structure_is_the_orbits(P, ph, m):
    """The lumped chain has one state per orbit of the unlumped chain under renaming
    the processors (the number of distinct canonical forms), fewer than the unlumped."""
    alpha, T = _node.handler_ph(1.0, 4.0 if ph == 2 else 1.0)
    key = (P, ph, m, tuple(bool(x) for x in alpha > 0), tuple(bool(x) for x in T.ravel() > 0),
           tuple(bool(x) for x in -T.sum(axis=1) > 0))
    states = _reachable(P, ph, m)
    assert len(states) == _node._full_structure(*key, lumped=False)[3].shape[0]
    n_lumped = _node._full_structure(*key, lumped=True)[3].shape[0]
    assert n_lumped == len({_node._canonical(s) for s in states}) < len(states)


@pytest.mark.parametrize("P, W, o, cs2, L", [(3, 30.0, 100.0, 4.0, 50.0), (3, 2.0, 700.0, 9.0, 0.0),
                                             (4, 30.0, 100.0, 1.0, 0.0), (2, 5.0, 80.0, 0.5, 20.0)])
def test_lumped_chain_equals_unlumped(P, W, o, cs2, L):
    """Lumping the processors' symmetry changes no measure (strong lumpability)."""
    k = 2 if P == 2 else 1
    a = _node._solve_full_chain(P, W, o, cs2, L, k, lumped=True)
    b = _node._solve_full_chain(P, W, o, cs2, L, k, lumped=False)
    assert a["size"] < b["size"]
    for key in ("R", "R_w", "R_p", "R_q", "R_y", "Q_q", "Q_y"):
        assert a[key] == pytest.approx(b[key], rel=1e-10, abs=1e-10 * b["R"])


@settings(max_examples=10, deadline=None)
@given(st.integers(0, 10_000))
def test_canonical_is_orbit_invariant(seed):
    """Every renaming of a reachable state has the same canonical form (the orbit's least
    candidate), and the canonical form is in the orbit."""
    alpha, T = _node.handler_ph(1.0, 4.0)
    rng = np.random.default_rng(seed)
    # walk the unlumped chain at random from the idle machine
    A_, Tf, E_ = [7, 8], [[3, -1], [-1, 6]], [5, 6]
    s = (tuple(("C",) for _ in range(4)), tuple(() for _ in range(4)), (-1,) * 4)
    for _ in range(int(rng.integers(1, 40))):
        moves = _node._full_moves(s, 4, 2, 1, A_, Tf, E_)
        s = moves[int(rng.integers(len(moves)))][1]
    c = _node._canonical(s)
    orbit = _orbit(s, 4)
    assert c in orbit
    assert {_node._canonical(x) for x in orbit} == {c}


@settings(max_examples=30, deadline=None)
@given(times, st.floats(1.0, 300.0), cs2s, st.integers(1, 4), st.floats(1.0, 4.0))
def test_station_effective_between_integers(S, M_real, cs2, servers, load):
    """The interpolated station lies between the integer populations around it, and R >= S."""
    lam = load / (4.0 * S) * servers
    r = _node.station_effective(lam, S, M_real, servers, S, cs2)
    assert r[0] >= S * (1 - 1e-12) and r[1] >= 0
    if M_real < 50:
        lo = _node.station_effective(lam, S, float(int(M_real)), servers, S, cs2)
        hi = _node.station_effective(lam, S, float(int(M_real) + 1), servers, S, cs2)
        assert min(lo[0], hi[0]) * (1 - 1e-9) <= r[0] <= max(lo[0], hi[0]) * (1 + 1e-9)


def _twin_mva(pop, Z, S):
    """Exact MVA of the twin stations with exponential service (a product-form network)."""
    Q = 0.0
    for n in range(1, pop + 1):
        Rv = S * (1.0 + Q)                  # residence per visit at one station
        X = n / (Z + Rv)                    # one station visit per cycle (either station)
        Q = 0.5 * X * Rv
    return Rv, Q


@settings(max_examples=25, deadline=None)
@given(st.integers(1, 16), st.floats(0.01, 100.0), st.floats(0.1, 10.0))
def test_twin_stations_exponential_equal_mva(pop, Z, S):
    """With exponential service the twin-station chain is product form: exact MVA."""
    Rv, Q, X = _node.pair_residence(Z, pop, S, 1.0)
    Rm, Qm = _twin_mva(pop, Z, S)
    assert Rv == pytest.approx(Rm, rel=1e-9)
    assert Q == pytest.approx(Qm, rel=1e-9)
    assert Q == pytest.approx(X * Rv, rel=1e-12) and X * S <= 1 + 1e-12


@settings(max_examples=20, deadline=None)
@given(st.integers(2, 16), st.floats(0.01, 10.0), st.sampled_from([0.5, 2.0, 9.0]))
def test_twin_stations_starve_each_other(pop, Z, cs2):
    """The twin of a variable station waits longer than a lone finite-source station of the
    same population (customers held at the other station do not arrive), and one customer
    never waits."""
    S = 1.0
    Rv, Q, X = _node.pair_residence(Z, pop, S, cs2)
    assert _node.pair_residence(Z, 1, S, cs2)[0] == pytest.approx(S, rel=1e-9)
    assert Rv >= S * (1 - 1e-12) and 0 < X * S <= 1 + 1e-12
    if cs2 > 1:
        # same throughput from a lone station: its customers' return time set to match
        from scipy.optimize import brentq

        g = brentq(lambda lg: _node.station_residence(np.exp(lg), pop, 1, S, cs2)[2] - X,
                   -30.0, 30.0, xtol=1e-12)
        assert Rv >= _node.station_residence(np.exp(g), pop, 1, S, cs2)[0] * (1 - 1e-9)


def test_full_chain_fifo_channels_keep_the_lockstep():
    """Two threads with short compute and a constant latency fall into a lockstep in which a
    reply always arrives just before the request sent with it; with Erlang latencies that
    may overtake each other the chain lost it and R *fell* as L grew (7000 -> 6577 at
    L = 150), while the simulator's R grows by about 2L.  FIFO channels keep it."""
    r = [_node.solve_full(2, 8.0, 1750.0, 1.0, L, latency_stages=8)["R"] for L in (0, 10, 150)]
    assert r[0] < r[1] < r[2]
    # ... and the mean latency stays L (the swap of labels): R = its parts + 2L
    f = _node.solve_full(2, 8.0, 1750.0, 1.0, 150.0, latency_stages=8)
    assert f["R_w"] + f["R_p"] + f["R_q"] + f["R_y"] + 300.0 == pytest.approx(f["R"], rel=1e-9)


def test_shared_clock_keeps_the_send_gap():
    """A message sent behind another on a FIFO channel rides on its clock: sent d stages
    behind, it has d stages left when the earlier one arrives (0: it arrives with it)."""
    m = 16
    for lead_stage in (0, 5, 15):
        th = [("N2", 1, lead_stage, 0), ("C",)]     # the reply to 0 in flight from 1
        flag = _node._behind(th, 0, "N2", 1, m)      # 1 sends its request to 0 behind it
        assert flag == 1 + lead_stage
        th2 = [("Y",), ("N1", 0, 0, flag)]
        now = _node._release(th2, 1, "N1", 0, m)
        if lead_stage == 0:
            assert now and th2[1] == ("N1", 0, 0, flag)      # the caller moves it at once
        else:
            assert not now and th2[1] == ("N1", 0, m - lead_stage, 0)
    # one stage: the lag is not resolved, the later message keeps a clock of its own
    th = [("N2", 1, 0, 0), ("C",)]
    assert _node._behind(th, 0, "N2", 1, 1) == 1
    th2 = [("Y",), ("N1", 0, 0, 1)]
    assert not _node._release(th2, 1, "N1", 0, 1) and th2[1] == ("N1", 0, 0, 0)


@pytest.mark.parametrize("k", [2, 8, 16])
def test_full_chain_convoy_at_short_compute(k):
    """W << o at P = 2 with L >> o: the reply and the next request leave a processor together
    and, through a constant delay, arrive together, so each request waits behind a reply
    handler and each thread behind a request handler: R -> 2L + 4o (the simulator: 596 at
    W = 0.5, o = 50, L = 200).  With independent Erlang clocks the pair separated every trip
    and R stayed near 2L + 2o (519 at 16 stages).  The mean latency is still L."""
    W, o, L = 0.05, 50.0, 2000.0
    a = _node.solve_full(2, W, o, 1.0, L, latency_stages=k)
    assert a["R"] == pytest.approx(2 * L + 4 * o, rel=0.01)
    assert a["R_q"] == pytest.approx(2 * o, rel=0.02)
    assert a["R_w"] + a["R_p"] + a["R_q"] + a["R_y"] + 2 * L == pytest.approx(a["R"], rel=1e-9)


def test_saturated_station_shortcut_is_the_same_fixed_point(monkeypatch):
    """A station near saturation holds its utilization between chain solves: same answer as
    solving its chain at every step (SAT_IDLE = 0 turns the shortcut off)."""
    from models.ini import _ini_station

    st_ = _ini_station(13, 8, 49, "shared", 33.6, 2.2)
    args = (int(13 * 8 * 48), 179.0, 1.0, 0.5, 2 * 14.1 + 2 * 175.0)
    calls = []
    solve_station = _node.station_effective

    def counted(*a, **k):
        calls.append(1)
        return solve_station(*a, **k)

    monkeypatch.setattr(_node, "station_effective", counted)
    a = _node.solve_node(*args, station=st_, tol=1e-9)
    n_short = len(calls)
    monkeypatch.setattr(_node, "SAT_IDLE", 0.0)
    b = _node.solve_node(*args, station=st_, tol=1e-9)
    assert a["converged"] and b["converged"]
    assert 1 <= n_short < (len(calls) - n_short) / 2          # far fewer station chains
    for k in ("R", "R_q", "R_y", "R_o", "Q_o"):
        assert a[k] == pytest.approx(b[k], rel=1e-6), k


@settings(max_examples=25, deadline=None)
@given(st.integers(1, 8), st.floats(0.01, 100.0), st.sampled_from([0.0, 0.5, 1.0, 2.0, 9.0]))
def test_twin_stations_lumped_equal_reference(pop, Z, cs2):
    """The twin-station chain with mirror states lumped equals the full state space."""
    a = _node.pair_residence(Z, pop, 1.0, cs2)
    b = _node._pair_residence_ref(Z, pop, 1.0, cs2)
    for x, y in zip(a, b):
        assert x == pytest.approx(y, rel=1e-9)


def _transitions(parts):
    """The transitions of a structure as a sorted multiset of tuples (order-free)."""
    cols = [p.tolist() if p.ndim == 1 else [tuple(r) for r in p.tolist()] for p in parts]
    return sorted(zip(*cols))


@pytest.mark.parametrize("pop", [1, 2, 3, 7, 16, 33])
@pytest.mark.parametrize("cs2", [0.5, 1.0, 8.0])
def test_twin_and_split_structures_equal_their_references(pop, cs2):
    """The array-built twin and split structures have the states, measures and
    transitions (as multisets) of the state-by-state references."""
    alpha, T = _node.handler_ph(1.0, cs2)
    ext = -T.sum(axis=1)
    key = (pop, len(alpha), tuple(bool(x) for x in alpha > 0),
           tuple(bool(x) for x in T.ravel() > 0), tuple(bool(x) for x in ext > 0))
    a, b = _node._pair_structure(*key), _node._pair_structure_ref(*key)
    assert np.array_equal(a[4], b[4]) and np.array_equal(a[5], b[5])
    assert _transitions(a[:4]) == _transitions(b[:4])
    c, d = _node._split_structure(pop, len(alpha)), _node._split_structure_ref(pop, len(alpha))
    assert all(np.array_equal(x, y) for x, y in zip(c[7:], d[7:]))
    assert _transitions(c[:7]) == _transitions(d[:7])


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_sparse_solve_orderings_agree(seed):
    """The minimum-degree ordering (compiled factorisation, duplicates summed) solves
    the system as SciPy's spsolve with that ordering and as the COLAMD path do."""
    import scipy.sparse as sps
    import scipy.sparse.linalg as spla

    rng = np.random.default_rng(seed)
    n = 800
    r = np.r_[rng.integers(0, n, 4 * n), np.arange(n)]
    c = np.r_[rng.integers(0, n, 4 * n), np.arange(n)]
    d = np.r_[rng.random(4 * n), np.full(n, 10.0)]
    b = rng.random(n)
    x = _node._sparse_solve(d, r, c, b, n, "MMD_AT_PLUS_A")
    ref = spla.spsolve(sps.csc_matrix((d, (r, c)), shape=(n, n)), b, permc_spec="MMD_AT_PLUS_A")
    assert np.allclose(x, ref, rtol=1e-12, atol=1e-14)
    assert np.allclose(x, _node._sparse_solve(d, r, c, b, n), rtol=1e-10, atol=1e-13)
    # an exactly singular matrix gives NaNs, as spsolve does (the pinned solve re-pins)
    bad = _node._sparse_solve(np.ones(2), np.array([0, 1]), np.array([0, 0]), np.ones(2), 2,
                              "MMD_AT_PLUS_A")
    assert np.isnan(bad).all()


def test_long_banded_system_solved_on_its_band(monkeypatch):
    """A long system within a few diagonals (a station chain of many customers, ordered
    by their number) goes to the banded solve, which agrees with SuperLU's; a singular
    banded system gives NaNs (as the sparse path)."""
    from mva._scipy_kernels import spsolve_coo

    rng = np.random.default_rng(3)
    m = 3000
    assert m >= _node.BANDED_MIN_STATES
    r = np.r_[np.arange(m), np.arange(1, m), np.arange(m - 5)]
    c = np.r_[np.arange(m), np.arange(m - 1), np.arange(5, m)]
    d = np.r_[np.full(m, 4.0), rng.random(m - 1), rng.random(m - 5)]
    b = rng.random(m)
    calls = []
    real = _node._banded_solve

    def counted(*a):
        calls.append(a[-2:])
        return real(*a)

    monkeypatch.setattr(_node, "_banded_solve", counted)
    x = _node._sparse_solve(d, r, c, b, m)
    assert calls == [(1, 5)]                          # one diagonal below, five above
    np.testing.assert_allclose(x, spsolve_coo(d, r, c, b, m), rtol=1e-12, atol=1e-15)
    d0 = d.copy()
    d0[[100, m + 99, 2 * m - 1 + 100]] = 0.0          # row 100 all zero
    assert np.isnan(_node._sparse_solve(d0, r, c, b, m)).all()


@pytest.mark.parametrize("W, o, L, cs2", [(66.0, 1968.0, 4.4, 0.1), (8.6, 20.8, 23.7, 0.2),
                                          (630.0, 1358.0, 84.0, 0.0)])
def test_full_chain_extrapolated_in_cs2(W, o, L, cs2):
    """P = 3 with an Erlang handler above FULL_MAX_ERLANG phases: the quadratic extrapolation
    from cs2 = 1, 1/2, 1/3 stays within 0.3% of the Erlang-k chain itself, and keeps the
    cycle's decomposition and Little's law."""
    k = len(_node.handler_ph(o, cs2)[0])
    assert k > _node.FULL_MAX_ERLANG[3]
    a = _node.solve_full(3, W, o, cs2, L, latency_stages=1)
    b = _node._solve_full_chain(3, W, o, cs2, L, 1)
    assert a["extrapolated"]
    for key in ("R", "R_q", "R_y"):
        assert a[key] == pytest.approx(b[key], rel=3e-3)
    assert a["R_w"] + a["R_p"] + a["R_q"] + a["R_y"] + 2 * L == pytest.approx(a["R"], rel=1e-9)
    assert (a["Q_q"] == pytest.approx(a["R_q"] / a["R"])
            and a["Q_y"] == pytest.approx(a["R_y"] / a["R"]))
    # a handler the chain represents phase by phase is solved as it is
    assert "extrapolated" not in _node.solve_full(3, W, o, 0.25, L, latency_stages=1)


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 10_000))
def test_anderson_step_solves_a_contraction(seed):
    """Anderson mixing finds the fixed point of an affine contraction faster than the damped
    iteration, and every iterate stays physical (R, R_q > 0, X R_q < sources)."""
    rng = np.random.default_rng(seed)
    A = rng.uniform(-0.3, 0.3, (3, 3))
    xs = np.array([10.0, 2.0, 1.0])
    b = xs - A @ xs                          # fixed point xs

    def run(anderson):
        x, hist = np.array([5.0, 1.0, 0.5]), []
        for it in range(1, 500):
            g = A @ x + b - x
            if np.max(np.abs(g) / x) < 1e-10:
                return it, x
            x = (_node._anderson_step(x, g, hist, 8.0) if anderson
                 else x + (1 - _node.DAMP) * g)
            assert x[0] > 0 and x[1] > 0 and x[1] < 8.0 * x[0]
        return it, x

    n_a, x_a = run(True)
    n_d, _ = run(False)
    assert np.allclose(x_a, xs, rtol=1e-8)
    assert n_a <= n_d


@settings(max_examples=12, deadline=None)
@given(st.sampled_from([4, 5]), times, times, st.sampled_from([1.0, 3.0, 9.0]), latencies)
def test_unordered_chain_power_matches_direct(P, W, o, cs2, L):
    """The unordered-channel (fifo=False) lumped chain: the power iteration of the jump chain
    gives the direct sparse solve's measures; Little's law and the cycle's parts hold."""
    if P == 5 and cs2 > 1:
        P = 4                                # keep the direct solve cheap
    alpha, T = _node.handler_ph(o, cs2)
    ext = -T.sum(axis=1)
    m = 1 if L > 0 else 0
    key = (P, len(alpha), m, tuple(bool(x) for x in alpha > 0),
           tuple(bool(x) for x in T.ravel() > 0), tuple(bool(x) for x in ext > 0))
    rows, cols, fac, kinds, nreq, heads = _node._full_structure(*key, lumped=True, fifo=m == 0)
    theta = np.concatenate([[1.0, 1.0 / max(W, 1e-9 * o) / (P - 1), m / L if L > 0 else 0.0],
                            T.ravel(), ext, alpha, [1.0 / (P - 1)]])
    rates = theta[fac].prod(axis=1)
    n = kinds.shape[0]
    direct = _node._stationary(rows, cols, rates, n)
    power, its, res = _node._stationary_power(rows, cols, rates, n)
    assert power is not None and res < _node.POWER_TOL
    np.testing.assert_allclose(power, direct, rtol=1e-6, atol=1e-11)
    r = _node.solve_full(P, W, o, cs2, L, latency_stages=1, fifo=False)
    parts = r["R_w"] + r["R_p"] + r["R_q"] + r["R_y"] + 2 * L
    assert parts == pytest.approx(r["R"], rel=1e-8)
    assert r["R"] >= W + 2 * L + 2 * o - 1e-9 * r["R"]
    # Little's law at a processor: requests present = request rate x residence
    assert r["Q_q"] == pytest.approx(r["R_q"] / r["R"], rel=1e-8)


def test_power_iteration_gives_up():
    """Too few iterations: the power iteration reports failure instead of a vector."""
    n = 50
    rows = np.concatenate([np.arange(n - 1), np.arange(1, n)])
    cols = np.concatenate([np.arange(1, n), np.arange(n - 1)])
    rates = np.ones(rows.size)
    pi, its, res = _node._stationary_power(rows, cols, rates, n, max_iter=20)
    assert pi is None and its == 20 and res > _node.POWER_TOL
    pi, its, res = _node._stationary_power(rows, cols, rates, n)
    np.testing.assert_allclose(pi, _node._stationary(rows, cols, rates, n), rtol=1e-8)


def test_shipped_full_structures_are_current():
    """models/_generated/full_chains.npz equals a fresh enumeration of every shipped chain
    (regenerate with models._node.write_full_structures after changing the chain)."""
    from pathlib import Path

    path = Path(_node.__file__).parent / "_generated" / _node._FULL_DATA
    fresh = _node.full_structure_arrays()
    with np.load(path, allow_pickle=False) as shipped:
        assert sorted(shipped.files) == sorted(fresh), \
            "full_chains.npz is stale: run models._node.write_full_structures()"
        for name, a in fresh.items():
            b = shipped[name]
            assert b.dtype == a.dtype and np.array_equal(b, a), f"{name} is stale"


def _shipped_cases():
    for P, stages, fifo, cs in _node.FULL_SHIPPED:
        for c in cs:
            for m in (stages, 0):
                yield P, m, fifo, c


@pytest.mark.parametrize("P,m,fifo,cs2", list(_shipped_cases()))
def test_shipped_structure_solves_like_the_enumeration(P, m, fifo, cs2, monkeypatch):
    """Every shipped chain: the shipped structure is used (nothing is enumerated), and the
    solve at random points is bit-identical to the one on the enumerated structure."""
    rng = np.random.default_rng(17 + P + m)
    pts = [(float(rng.uniform(10, 2000)), float(rng.uniform(5, 300)),
            float(rng.uniform(1, 200)) if m else 0.0) for _ in range(2)]
    _node._full_structure.cache_clear()

    def forbidden(*a, **k):
        raise AssertionError("a shipped chain was enumerated")

    with monkeypatch.context() as mp:
        mp.setattr(_node, "_full_structure_ref", forbidden)
        fast = [_node._solve_full_chain(P, W, o, cs2, L, max(m, 1), fifo=fifo)
                for W, o, L in pts]
    _node._full_structure.cache_clear()
    with monkeypatch.context() as mp:
        mp.setattr(_node, "_full_shipped", lambda: None)
        ref = [_node._solve_full_chain(P, W, o, cs2, L, max(m, 1), fifo=fifo)
               for W, o, L in pts]
    _node._full_structure.cache_clear()
    assert fast == ref


def test_unshipped_structure_is_enumerated():
    """A chain outside FULL_SHIPPED (P = 3 with a 2-stage latency) falls back to the
    enumeration and still satisfies the cycle's decomposition."""
    key = _node._full_key(3, 2.0, 2, True)
    assert _node._full_name(key) + "__rows" not in _node._full_shipped().files
    r = _node._solve_full_chain(3, 100.0, 30.0, 2.0, 20.0, 2)
    parts = r["R_w"] + r["R_p"] + r["R_q"] + r["R_y"] + 40.0
    assert parts == pytest.approx(r["R"], rel=1e-10)


def _split_mva(pop: int, Z: float, S: float, c: int) -> tuple[float, float, float]:
    """Exact MVA of the split-station network: station 1 (visit 1/c, mean S) and the others
    as one server of mean S/(c-1) (visit (c-1)/c), delay Z."""
    qa = qb = 0.0
    for n in range(1, pop + 1):
        ra, rb = S * (1.0 + qa), S / (c - 1) * (1.0 + qb)
        X = n / (Z + ra / c + (c - 1) / c * rb)
        qa, qb = X / c * ra, X * (c - 1) / c * rb
    return ra, qa, X / c


@settings(max_examples=25, deadline=None)
@given(st.integers(1, 14), st.floats(0.01, 100.0), st.floats(0.1, 10.0), st.integers(2, 6))
def test_split_stations_exponential_equal_mva(pop, Z, S, c):
    """With exponential service the split-station chain is product form: exact MVA of the
    network it describes; Little's law and 0 < U <= 1 at station 1."""
    Rv, Q, X = _node.split_residence(Z, pop, S, 1.0, c)
    Rm, Qm, Xm = _split_mva(pop, Z, S, c)
    assert Rv == pytest.approx(Rm, rel=1e-9)
    assert Q == pytest.approx(Qm, rel=1e-9) and X == pytest.approx(Xm, rel=1e-9)
    assert Q == pytest.approx(X * Rv, rel=1e-12) and 0 < X * S <= 1 + 1e-12


@settings(max_examples=20, deadline=None)
@given(st.integers(1, 12), st.floats(0.05, 50.0), st.sampled_from([0.5, 2.0, 9.0]))
def test_split_stations_of_two_are_the_twin_chain(pop, Z, cs2):
    """Two stations: the split chain (not lumped) is the twin chain (mirror states lumped);
    one customer never waits; more customers never shorten the residence."""
    a = _node.split_residence(Z, pop, 1.0, cs2, 2)
    b = _node.pair_residence(Z, pop, 1.0, cs2)
    assert a == pytest.approx(b, rel=1e-9)
    assert _node.split_residence(Z, 1, 1.0, cs2, 3)[0] == pytest.approx(1.0, rel=1e-9)
    assert (_node.split_residence(Z, pop + 1, 1.0, cs2, 3)[0]
            >= _node.split_residence(Z, pop, 1.0, cs2, 3)[0] * (1 - 1e-12))


@settings(max_examples=20, deadline=None)
@given(st.floats(0.05, 0.45), st.floats(0.1, 10.0))
def test_revisit_station_exponential_is_jackson(lam, S):
    """Poisson first visits (a huge remote population), half of them back at once for a
    second visit, exponential service: an M/M/1 queue with Bernoulli feedback, whose
    number present is that of M/M/1 at the visit rate 2 lam (Jackson)."""
    r = 1e8
    Rh, Rr, Qh, Qr, U = _node.revisit_station_residence(1e-15, 1.0, lam / S / r, 1, r, S, 1.0)
    rho = 2.0 * lam
    assert Qr == pytest.approx(rho / (1.0 - rho), rel=1e-4)
    assert Rr == pytest.approx(S / (1.0 - rho), rel=1e-4)
    assert U == pytest.approx(rho, rel=1e-4)


@settings(max_examples=20, deadline=None)
@given(st.floats(1e-3, 10.0), st.floats(0.01, 100.0), st.sampled_from([0.25, 0.5, 1.0, 4.0, 9.0]))
def test_revisit_station_lone_thread_never_waits(gamma, gap, cs2):
    """One home thread and no remote one: both its visits find the server idle."""
    Rh, Rr, Qh, Qr, U = _node.revisit_station_residence(gamma, gap, 0.0, 1, 10, 1.0, cs2)
    assert Rh == pytest.approx(1.0, rel=1e-9) and Qr == 0.0
    # utilization = visit rate x service: two visits per cycle 1/gamma + gap + 2
    assert U == pytest.approx(2.0 / (1.0 / gamma + gap + 2.0), rel=1e-9)


@settings(max_examples=25, deadline=None)
@given(st.floats(1e-4, 0.2), st.floats(0.01, 50.0), st.floats(1e-5, 0.02), st.integers(1, 60),
       st.sampled_from([0.25, 0.5, 1.0, 2.0, 9.0]))
def test_revisit_station_little_and_monotone(gamma_h, gap, gamma_r, r, cs2):
    """Little's law per population, U = (X_h + X_r) S within 0 < U < 1; more remote traffic
    never shortens the home thread's residence and never idles the server more (a remote
    thread's own residence need not grow: with one or two remote threads it meets the home
    thread's visits differently)."""
    S = 1.0
    Rh, Rr, Qh, Qr, U = _node.revisit_station_residence(gamma_h, gap, gamma_r, 1, r, S, cs2)
    Xh, Xr = Qh / Rh, Qr / Rr
    assert 0.0 < U < 1.0 and U == pytest.approx((Xh + Xr) * S, rel=1e-4)
    assert Rh >= S * (1 - 1e-9) and Rr >= S * (1 - 1e-9)
    Rh2, _, _, _, U2 = _node.revisit_station_residence(gamma_h, gap, 1.5 * gamma_r, 1, r, S, cs2)
    assert Rh2 >= Rh * (1 - 1e-6) and U2 > U
