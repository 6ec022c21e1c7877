"""Reuse of the general exact-MVA lattice, and the vectorised utilization cap.

``mva.exact`` keeps the lattice of a general (priority / FCFS-variability)
solve: a later solve of the same network at populations inside it is read
from that lattice.  It must equal a fresh recursion (to 1e-12; in practice bit
for bit).
"""

from __future__ import annotations

import itertools
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import mva.exact as E
from mva._model import cap_utilization
from mva.errors import SaturationError
from mva.network import ClosedNetwork
from tests.strategies import closed_networks


def _fresh(net):
    E._LATTICES.clear()
    return E.exact_mva(net)


def _same(a, b):
    for f in ("throughput", "response_time", "residence_time", "queue_length", "utilization",
              "chain_throughput"):
        np.testing.assert_allclose(getattr(a, f), getattr(b, f), rtol=1e-12, atol=1e-300,
                                   err_msg=f)
    assert (a.method, a.iterations, a.converged) == (b.method, b.iterations, b.converged)


def _with_pops(net, pops):
    return ClosedNetwork(demands=net.demands, populations=pops, think_times=net.think_times,
                         kinds=net.kinds, servers=net.servers, chains=net.chains,
                         priorities=net.priorities, cs2=net.cs2)


@settings(max_examples=30, deadline=None)
@given(closed_networks(max_classes=3, max_stations=3, max_population=4, chains=True,
                       priorities=True, cs2=True, max_lattice=60))
def test_sub_populations_read_from_the_kept_lattice_equal_a_fresh_solve(net):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            top = _fresh(net)
    except SaturationError:
        return
    assert len(E._LATTICES) <= 1       # kept only by the general lattice recursion
    N = np.asarray(net.populations)
    for sub in itertools.product(*(range(int(n) + 1) for n in N)):
        if sum(sub) == 0:
            continue
        small = _with_pops(net, list(sub))
        kept = E.exact_mva(small)                           # from the kept lattice
        assert len(E._LATTICES) <= 1
        _same(kept, _fresh(small))
        E.exact_mva(net)                                    # keep the top lattice again
    _same(E.exact_mva(net), top)
    # Little's law and U <= 1 at the single-server stations hold for the read result
    np.testing.assert_allclose(top.queue_length, top.throughput[:, None] * top.residence_time,
                               rtol=1e-12)


def test_other_parameters_miss_and_the_store_is_bounded():
    base = dict(demands=[[1.0, 2.0], [2.0, 0.5]], populations=[3, 2], priorities=[0, 1],
                think_times=[1.0, 1.0])
    E._LATTICES.clear()
    a = E.exact_mva(ClosedNetwork(**base))
    assert len(E._LATTICES) == 1
    sub = E.exact_mva(ClosedNetwork(**{**base, "populations": [2, 1]}))
    assert len(E._LATTICES) == 1 and sub.iterations == 3    # read, not solved again
    b = E.exact_mva(ClosedNetwork(**{**base, "cs2": [0.2, 1.0]}))     # a different network
    assert len(E._LATTICES) == 2
    assert not np.allclose(a.throughput, b.throughput)
    for i in range(E._LATTICES_KEEP + 5):
        E.exact_mva(ClosedNetwork(**{**base, "think_times": [1.0 + i, 1.0]}))
    assert len(E._LATTICES) == E._LATTICES_KEEP
    # a larger population than kept is solved, not read
    big = E.exact_mva(ClosedNetwork(**{**base, "populations": [4, 2]}))
    assert big.iterations == 6


def _cap_reference(Rck, n, Z, Em, chain_D, qidx):
    """The scalar Newton loop per (state, station) pair (the former implementation)."""
    for _ in range(4):
        Bk = np.einsum("rc,bck->brk", Em, Rck)
        cyc = Z + Bk.sum(axis=2)
        with np.errstate(divide="ignore", invalid="ignore"):
            X = np.where(n > 0, n / np.where(cyc > 0, cyc, 1.0), 0.0)
        over = X @ chain_D[:, qidx] > 1.0 + 1e-12
        if not over.any():
            break
        for b, i in zip(*np.nonzero(over)):
            k = qidx[i]
            w = chain_D[:, k] * n[b]
            c0, bb = cyc[b], Bk[b, :, k]
            f = 1.0
            for _ in range(60):
                den = c0 + (f - 1.0) * bb
                use = w > 0
                t = w[use] / den[use]
                g = np.sum(t) - 1.0
                dg = -np.sum(t * (bb[use] / den[use]))
                if g <= 1e-15 or dg == 0.0:
                    break
                f -= g / dg
            Rck[b, :, k] *= f
    return Rck


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 3), st.integers(1, 4), st.integers(1, 6), st.integers(0, 2**31 - 1))
def test_vectorised_cap_equals_the_scalar_newton_loop(R, K, B, seed):
    rng = np.random.default_rng(seed)
    C = R + 1
    ch = np.r_[np.arange(R), rng.integers(0, R, 1)]
    Em = np.zeros((R, C))
    Em[ch, np.arange(C)] = 1.0
    D = rng.uniform(0.1, 3.0, (C, K))
    chain_D = Em @ D
    n = rng.integers(0, 6, (B, R)).astype(float)
    Z = rng.uniform(0.0, 2.0, R)
    # residence times below the demands' floor: some stations overloaded
    Rck = D[None] * rng.uniform(0.2, 3.0, (B, C, K))
    qidx = np.flatnonzero(rng.random(K) < 0.8)
    got = cap_utilization(Rck.copy(), n, Z, Em, chain_D, qidx)
    ref = _cap_reference(Rck.copy(), n, Z, Em, chain_D, qidx)
    np.testing.assert_allclose(got, ref, rtol=1e-12, atol=0.0)
    assert np.all(got >= Rck - 1e-300)                   # stretched, never shrunk
    cyc = Z + np.einsum("rc,bck->brk", Em, got).sum(axis=2)
    X = np.where(n > 0, n / np.where(cyc > 0, cyc, 1.0), 0.0)
    if qidx.size:
        assert np.all(X @ chain_D[:, qidx] <= 1.0 + 1e-9)


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 7), st.integers(1, 4), st.integers(1, 8), st.integers(0, 2**31 - 1))
def test_scalar_cap_path_equals_the_vectorised_one_bit_for_bit(R, K, B, seed):
    """Few overloaded pairs and fewer than 8 chains: the Newton in Python floats
    (mva._model._newton_scalar) gives the vectorised loop's factors exactly."""
    import mva._model as M

    rng = np.random.default_rng(seed)
    C = R + int(rng.integers(0, 3))
    ch = np.r_[np.arange(R), rng.integers(0, R, C - R)]
    Em = np.zeros((R, C))
    Em[ch, np.arange(C)] = 1.0
    D = rng.uniform(0.1, 3.0, (C, K)) * 10.0 ** rng.uniform(-3, 3, (C, 1))
    chain_D = Em @ D
    n = rng.integers(0, 6, (B, R)).astype(float)
    Z = rng.uniform(0.0, 2.0, R)
    Rck = D[None] * rng.uniform(0.2, 3.0, (B, C, K))
    qidx = np.flatnonzero(rng.random(K) < 0.8)
    calls = []
    real = M._newton_scalar

    def counted(*a):
        calls.append(1)
        return real(*a)

    try:
        M._newton_scalar = counted
        got = cap_utilization(Rck.copy(), n, Z, Em, chain_D, qidx)
        M._newton_scalar = real
        scalar_calls = len(calls)
        old, M._SCALAR_PAIRS = M._SCALAR_PAIRS, -1          # the vectorised loop only
        try:
            ref = cap_utilization(Rck.copy(), n, Z, Em, chain_D, qidx)
        finally:
            M._SCALAR_PAIRS = old
    finally:
        M._newton_scalar = real
    assert np.array_equal(got, ref)
    # the scalar path ran wherever a station was overloaded
    cyc = Z + np.einsum("rc,bck->brk", Em, Rck).sum(axis=2)
    X = np.where(n > 0, n / np.where(cyc > 0, cyc, 1.0), 0.0)
    if qidx.size and np.any(X @ chain_D[:, qidx] > 1.0 + 1e-12):
        assert scalar_calls > 0 and not np.array_equal(got, Rck)


@pytest.fixture(autouse=True)
def _empty_store():
    E._LATTICES.clear()
    yield
    E._LATTICES.clear()
