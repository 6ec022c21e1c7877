"""The numba kernels of exact MVA agree with the NumPy references; fallback without numba."""

from __future__ import annotations

import os
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import mva
from mva import exact as E
from mva._model import compile_network
from mva.network import ClosedNetwork
from tests.strategies import closed_networks

from mva import _exact_numba as nb  # noqa: E402  (numba is a dependency)

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def _both(net: ClosedNetwork):
    cm = compile_network(net)
    pf = E._PF(cm)
    ref = E._pf_reference(pf, E._Lattice(cm.N.astype(np.int64)))
    fast = nb.pf_kernel(pf)
    return ref, fast


@settings(max_examples=30, deadline=None)
@given(closed_networks(kinds=("queue", "delay", "multi", "queue"), chains=True, max_population=6,
                       max_classes=3, max_servers=5))
def test_lattice_kernel_equals_reference(net):
    (Xr, phir), (Xf, phif) = _both(net)
    np.testing.assert_allclose(Xf, Xr, rtol=1e-12, atol=0)
    np.testing.assert_allclose(phif, phir, rtol=1e-12, atol=0)


@settings(max_examples=30, deadline=None)
@given(closed_networks(kinds=("queue", "delay"), chains=True, max_population=8, max_classes=3))
def test_load_independent_kernel_equals_reference(net):
    (Xr, phir), (Xf, phif) = _both(net)
    np.testing.assert_allclose(Xf, Xr, rtol=1e-12, atol=0)
    np.testing.assert_allclose(phif, phir, rtol=1e-12, atol=0)


@settings(max_examples=30, deadline=None)
@given(st.integers(1, 300), st.integers(1, 64), st.floats(0.3, 3.0), st.integers(1, 12),
       st.floats(0.5, 1.0))
def test_load_dependent_kernel_equals_reference(N, m, load, top, power):
    rates = np.minimum(np.arange(1, top + 1), float(m)) ** power
    net = ClosedNetwork.single_class([1.0, load * m, load * float(rates[-1]), 0.3],
                                     population=N, think_time=2.0,
                                     kinds=("queue", "multi", "ld", "delay"),
                                     servers=[1, m, 1, 1], rates=(None, None, rates, None))
    (Xr, phir), (Xf, phif) = _both(net)
    np.testing.assert_allclose(Xf, Xr, rtol=1e-12, atol=0)
    np.testing.assert_allclose(phif, phir, rtol=1e-12, atol=0)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.floats(0.01, 5.0), min_size=1, max_size=20), st.integers(1, 500),
       st.floats(0.0, 50.0), st.sampled_from([1.0, 0.0, 0.5, 3.0]))
def test_single_class_kernel_equals_python_loop(d, N, Z, cs2):
    net = ClosedNetwork.single_class(d, population=N, think_time=Z,
                                     cs2=[cs2] + [1.0] * (len(d) - 1))
    saved = E._COMPILE_WORK
    mod = sys.modules.pop("mva._exact_numba")
    try:
        E._COMPILE_WORK = float("inf")          # force the interpreted loops
        ref = mva.exact_mva(net)
    finally:
        E._COMPILE_WORK = saved
        sys.modules["mva._exact_numba"] = mod
    fast = mva.exact_mva(net)
    np.testing.assert_allclose(fast.throughput, ref.throughput, rtol=1e-12, atol=0)
    np.testing.assert_allclose(fast.residence_time, ref.residence_time, rtol=1e-12, atol=0)


@settings(max_examples=20, deadline=None)
@given(st.integers(1, 200), st.integers(1, 6), st.integers(0, 2**32 - 1))
def test_batch_kernel_equals_reference_and_single_solves(B, K, seed):
    rng = np.random.default_rng(seed)
    D = rng.uniform(0.0, 2.0, (B, K))
    D[:, 0] += 0.01
    N = rng.integers(0, 80, B)
    Z = rng.uniform(0.0, 10.0, B)
    X, R = nb.batch_kernel(D, Z, N)
    Xr, Rr = E._batch_reference(D, Z, N)
    np.testing.assert_allclose(X, Xr, rtol=1e-12, atol=0)
    np.testing.assert_allclose(R, Rr, rtol=1e-12, atol=0)
    res = mva.exact_mva_batch(D, N, Z)
    for b in range(0, B, max(1, B // 5)):
        if N[b] == 0:                            # ClosedNetwork needs a customer
            assert res.throughput[b] == 0.0 and not res.queue_length[b].any()
            continue
        one = mva.exact_mva(ClosedNetwork.single_class(D[b], population=int(N[b]), think_time=Z[b]))
        assert res.throughput[b] == pytest.approx(one.throughput[0], rel=1e-12, abs=0)
        np.testing.assert_allclose(res.queue_length[b], one.queue_length[0], rtol=1e-12,
                                   atol=1e-300)
        # Little's law over the cycle
        assert res.queue_length[b].sum() + res.throughput[b] * Z[b] == pytest.approx(N[b], rel=1e-9)


def test_batch_validation_names_the_parameter():
    with pytest.raises(ValueError, match="demands must be finite and >= 0"):
        mva.exact_mva_batch([[1.0, -1.0]], 3)
    with pytest.raises(ValueError, match="populations must be an integer"):
        mva.exact_mva_batch([[1.0, 1.0]], 2.5)
    with pytest.raises(ValueError, match="demands must be a 2-D array"):
        mva.exact_mva_batch([1.0, 1.0], 2)
    with pytest.raises(ValueError, match="one entry per network"):
        mva.exact_mva_batch(np.ones((3, 2)), [1, 2])
    with pytest.raises(ValueError, match="no demand and no think time"):
        mva.exact_mva_batch([[0.0, 0.0]], 1)


def _run(code: str, **env: str) -> subprocess.CompletedProcess:
    full = dict(os.environ, PYTHONPATH=ROOT, **env)
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT,
                          env=full, timeout=300)


def test_without_numba_the_reference_runs_with_one_note():
    code = (
        "import sys, warnings; sys.modules['numba'] = None\n"
        "import numpy as np, mva\n"
        "with warnings.catch_warnings(record=True) as w:\n"
        "    warnings.simplefilter('always')\n"
        "    a = mva.exact_mva_batch(np.ones((2000, 3)), 50)\n"
        "    net = mva.ClosedNetwork.single_class([1.0, 7.0], population=100, servers=[1, 8])\n"
        "    b = mva.exact_mva(net)\n"
        "    c = mva.exact_mva_batch(np.ones((2000, 3)), 50)\n"
        "notes = [x for x in w if 'numba is not installed' in str(x.message)]\n"
        "print(len(notes), 'mva._exact_numba' in sys.modules, repr(float(b.throughput[0])))\n")
    out = _run(code)
    assert out.returncode == 0, out.stderr
    n, loaded, x = out.stdout.split()
    assert (n, loaded) == ("1", "False")
    assert float(x) == pytest.approx(0.99999963, rel=1e-7)


def test_disabled_by_environment_gives_the_same_result():
    code = ("import sys, numpy as np, mva\n"
            "net = mva.ClosedNetwork(demands=[[1.0, 7.5, 0.2], [0.6, 9.0, 0.0]],"
            " populations=[24, 20],"
            " think_times=[1.0, 3.0], kinds=('queue', 'multi', 'delay'), servers=[1, 8, 1])\n"
            "X = mva.exact_mva(net).chain_throughput.tolist()\n"
            "print('mva._exact_numba' in sys.modules, *X)\n")
    off = _run(code, MVA_NO_NUMBA="1").stdout.split()
    assert off[0] == "False"
    ref = mva.exact_mva(ClosedNetwork(demands=[[1.0, 7.5, 0.2], [0.6, 9.0, 0.0]],
                                      populations=[24, 20], think_times=[1.0, 3.0],
                                      kinds=("queue", "multi", "delay"), servers=[1, 8, 1]))
    np.testing.assert_allclose([float(v) for v in off[1:]], ref.chain_throughput, rtol=1e-12)
