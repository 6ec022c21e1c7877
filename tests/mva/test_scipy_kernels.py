"""SciPy's compiled kernels called directly give SciPy's public results, bit for bit."""

from __future__ import annotations

import subprocess
import sys
import warnings

import numpy as np
import pytest
import scipy.optimize
import scipy.sparse as sps
import scipy.sparse.linalg as spla
import scipy.special
from hypothesis import given
from hypothesis import strategies as st

import mva._scipy_kernels as k
from tests.strategies import sparse_systems


def _public_spsolve(data, rows, cols, b, n):
    return np.asarray(spla.spsolve(sps.csc_matrix((data, (rows, cols)), shape=(n, n)), b))


def test_extensions_load():
    # the fast path is what this install runs (a failure here means the fallback is in use)
    assert k._extension("scipy.sparse.linalg._dsolve._superlu", "gssv") is not None
    assert k._extension("scipy.optimize._zeros", "_brentq") is not None
    assert k._extension("scipy.special._special_ufuncs", "psi") is not None
    assert k._extension("scipy.no_such_module", "x") is None


@given(sparse_systems())
def test_spsolve_bit_identical(system):
    x = k.spsolve_coo(*system)
    np.testing.assert_array_equal(x, _public_spsolve(*system))
    data, rows, cols, b, n = system
    A = np.zeros((n, n))
    np.add.at(A, (rows, cols), data)
    np.testing.assert_allclose(A @ x, b, rtol=1e-9, atol=1e-9 * np.abs(b).max())


@given(sparse_systems(duplicates=True))
def test_spsolve_duplicates_summed_as_scipy(system):
    np.testing.assert_array_equal(k.spsolve_coo(*system), _public_spsolve(*system))


@pytest.mark.parametrize("sources,cs2", [(3, 1.0), (15, 0.0), (15, 4.0), (31, 0.5)])
def test_spsolve_node_chains(sources, cs2):
    # the LoPC node chain's balance equations (one replaced by the normalisation row), as
    # models._node solves them: duplicates summed there, then the compiled SuperLU call
    from models._node import NodeChain, _sparse_solve

    ch = NodeChain(sources, 1000.0, 100.0, cs2, 32)
    data = ch.fixed + 1e-4 * ch.arr + 1e-3 * ch.away
    out = np.bincount(ch.rows, weights=data, minlength=ch.size)
    d = np.concatenate([data, -out])
    keep = ch._r != 0
    n = ch.size
    d2 = np.concatenate([d[keep], np.ones(n)])
    r2 = np.concatenate([ch._r[keep], np.zeros(n, dtype=np.int64)])
    c2 = np.concatenate([ch._c[keep], np.arange(n)])
    b = np.zeros(n)
    b[0] = 1.0
    x = _sparse_solve(d2, r2, c2, b, n)
    np.testing.assert_allclose(x, _public_spsolve(d2, r2, c2, b, n), rtol=1e-12, atol=1e-300)
    assert abs(x.sum() - 1.0) < 1e-12 and x.min() > -1e-15
    pi = ch.stationary(1e-4, 1e-3)
    np.testing.assert_allclose(pi, x / x.sum(), rtol=1e-9, atol=1e-15)


def test_spsolve_singular_as_scipy():
    args = (np.array([1.0, 1.0]), np.array([0, 0]), np.array([0, 1]), np.array([1.0, 1.0]), 2)
    with pytest.warns(Warning, match="singular"):
        x = k.spsolve_coo(*args)
    assert np.isnan(x).all()


def test_fallback_without_extensions(monkeypatch):
    system = (np.array([2.0, 1.0, 4.0]), np.array([0, 1, 1]), np.array([0, 0, 1]),
              np.array([2.0, 9.0]), 2)
    fast = (k.spsolve_coo(*system), k.brentq(np.cos, 0.0, 3.0, full_output=True)[0],
            k.digamma(np.array([0.5, 3.0])))
    monkeypatch.setattr(k, "_extension", lambda *a: None)
    np.testing.assert_array_equal(k.spsolve_coo(*system), fast[0])
    assert k.brentq(np.cos, 0.0, 3.0, full_output=True)[0] == fast[1]
    np.testing.assert_array_equal(k.digamma(np.array([0.5, 3.0])), fast[2])


def test_spsolve_falls_back_on_another_calling_convention(monkeypatch):
    # an extension that loads but no longer takes SciPy's current gssv arguments
    class Changed:
        @staticmethod
        def gssv(*args, **kwargs):
            raise TypeError("gssv() got an unexpected keyword argument 'options'")

    system = (np.array([2.0, 1.0, 4.0]), np.array([0, 1, 1]), np.array([0, 0, 1]),
              np.array([2.0, 9.0]), 2)
    expected = k.spsolve_coo(*system)
    monkeypatch.setattr(k, "_extension", lambda *a: Changed)
    np.testing.assert_array_equal(k.spsolve_coo(*system), expected)


def _canonical(system):
    data, rows, cols, b, n = system
    A = sps.csc_array((data, (rows, cols)), shape=(n, n))
    A.sum_duplicates()
    return A, b, n


@pytest.mark.parametrize("kw", [{}, dict(permc_spec="MMD_AT_PLUS_A", diag_pivot_thresh=0.0,
                                         options=dict(SymmetricMode=True)),
                                dict(permc_spec="NATURAL")])
@given(sparse_systems())
def test_splu_bit_identical(kw, system):
    A, b, n = _canonical(system)
    lu = k.splu_csc(A.data, A.indices, A.indptr, n, **kw)
    ref = spla.splu(A, **kw)
    np.testing.assert_array_equal(lu.solve(b), ref.solve(b))
    np.testing.assert_array_equal(lu.perm_c, ref.perm_c)
    np.testing.assert_array_equal(lu.perm_r, ref.perm_r)
    assert (lu.L != ref.L).nnz == 0 and (lu.U != ref.U).nnz == 0
    x = lu.solve(b)
    np.testing.assert_allclose(A @ x, b, rtol=1e-9, atol=1e-9 * np.abs(b).max())


@given(sparse_systems())
def test_splu_non_canonical_goes_to_scipy(system):
    # rows decreasing within each column: the public function (which sorts them first)
    A, b, n = _canonical(system)
    col = np.repeat(np.arange(n), np.diff(A.indptr))
    order = np.lexsort((-A.indices, col))
    data, rows = A.data[order], A.indices[order]
    assert k._canonical_csc(data, rows, A.indptr, n) == bool(np.all(np.diff(A.indptr) <= 1))
    C = sps.csc_array((data, rows, A.indptr), shape=(n, n))
    np.testing.assert_array_equal(k.splu_csc(data, rows, A.indptr, n).solve(b),
                                  spla.splu(C).solve(b))


def test_splu_singular_raises_as_scipy():
    A = sps.csc_array(np.array([[1.0, 1.0], [1.0, 1.0]]))
    for fn in (lambda: k.splu_csc(A.data, A.indices, A.indptr, 2), lambda: spla.splu(A)):
        with pytest.raises(RuntimeError, match="singular"):
            fn()


@given(sparse_systems())
def test_csc_matvec_bit_identical(system):
    A, b, n = _canonical(system)
    np.testing.assert_array_equal(k.csc_matvec(A.data, A.indices, A.indptr, n, b), A @ b)


def test_splu_and_matvec_fall_back_without_extensions(monkeypatch):
    A = sps.csc_array(np.array([[2.0, 0.0], [1.0, 4.0]]))
    b = np.array([2.0, 9.0])
    fast = (k.splu_csc(A.data, A.indices, A.indptr, 2).solve(b),
            k.csc_matvec(A.data, A.indices, A.indptr, 2, b))
    monkeypatch.setattr(k, "_extension", lambda *a: None)
    np.testing.assert_array_equal(k.splu_csc(A.data, A.indices, A.indptr, 2).solve(b), fast[0])
    np.testing.assert_array_equal(k.csc_matvec(A.data, A.indices, A.indptr, 2, b), fast[1])


_coef = st.floats(-5.0, 5.0, allow_nan=False)


@given(_coef, _coef, _coef, st.floats(0.1, 10.0), st.sampled_from([2e-12, 1e-6, 1e-300]),
       st.integers(1, 100))
def test_brentq_bit_identical(c0, c1, c2, width, xtol, maxiter):
    def f(x, scale):
        return scale * (x ** 3 + c2 * x * x + c1 * x + c0)

    a, b = -width - 6.0, width + 6.0        # a cubic with |coefficients| <= 5 changes sign here
    kw = dict(args=(2.0,), xtol=xtol, maxiter=maxiter, full_output=True, disp=False)
    x, info = k.brentq(f, a, b, **kw)
    y, ref = scipy.optimize.brentq(f, a, b, **kw)
    assert x == y
    assert (info.iterations, info.function_calls, info.converged, info.flag) == (
        ref.iterations, ref.function_calls, ref.converged, ref.flag)
    assert k.brentq(f, a, b, args=2.0, xtol=xtol, maxiter=100) == scipy.optimize.brentq(
        f, a, b, args=2.0, xtol=xtol, maxiter=100)


def test_brentq_errors_as_scipy():
    for fn in (k.brentq, scipy.optimize.brentq):
        with pytest.raises(ValueError, match="sign"):
            fn(lambda x: x * x + 1.0, -1.0, 1.0)
        with pytest.raises(ValueError, match="xtol too small"):
            fn(np.sin, -1.0, 1.0, xtol=0.0)
        with pytest.raises(ValueError, match="rtol too small"):
            fn(np.sin, -1.0, 1.0, rtol=1e-17)
        with pytest.raises(ValueError, match="NaN"):
            fn(lambda x: np.nan, -1.0, 1.0)
        with pytest.raises(RuntimeError, match="converge"):
            fn(lambda x: x - 0.3, -1.0, 1.0, maxiter=1)
    assert not k.brentq(lambda x: x - 0.3, -1.0, 1.0, maxiter=1, full_output=True,
                        disp=False)[1].converged


@given(st.lists(st.floats(-50.0, 1e6, allow_nan=False), min_size=1, max_size=20))
def test_digamma_bit_identical(xs):
    x = np.array(xs + [0.0, -1.0, 1.0, 0.5])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        np.testing.assert_array_equal(k.digamma(x), scipy.special.digamma(x))
    assert k.digamma(2.0) == scipy.special.digamma(2.0)


_PROBE = """
import sys, warnings
warnings.simplefilter("ignore")
from models import lopc, ini, policy, pdq
lopc.solve(P=16, W=1000.0, o=100.0, L=50.0)
ini.solve(N=4, W=41789.0, o=742.0, O=2336.0)
policy.solve(policy.PolicyParams(p=2, U=0.3), "floating")
policy.solve(policy.preset("stache", p=3, nodes=4), "floating", method="node")
policy.solve(policy.preset("stache", p=2, nodes=2), "single", method="node")
pdq.solve(pdq.PDQParams(k=4, load=0.6, S=100, n_keys=256), "shared")
print(sorted(m for m in ("scipy.sparse", "scipy.optimize", "scipy.special", "scipy.linalg",
                         "sympy", "scipy.stats") if m in sys.modules))
"""


def test_first_solves_import_no_scipy_package():
    # the what-if paths (LoPC/INI node chains, policy root, PDQ harmonic numbers) use
    # the compiled kernels only: none of SciPy's slow-to-import packages is loaded
    out = subprocess.run([sys.executable, "-c", _PROBE], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip().splitlines()[-1] == "[]"


_THEN_SCIPY = """
import sys
import numpy as np
import mva._scipy_kernels as k
args = (np.array([2.0, 1.0, 4.0]), np.array([0, 1, 1]), np.array([0, 0, 1]), np.array([2.0, 9.0]))
x = k.spsolve_coo(*args, 2)
r = k.brentq(np.cos, 0.0, 3.0)
d = k.digamma(2.5)
lu = k.splu_csc(np.array([2.0, 1.0, 4.0]), np.array([0, 1, 1]), np.array([0, 2, 3]), 2)
y = k.csc_matvec(np.array([2.0, 1.0, 4.0]), np.array([0, 1, 1], dtype=np.intc),
                 np.array([0, 2, 3], dtype=np.intc), 2, np.array([1.0, 2.0]))
assert not [m for m in sys.modules if m.startswith("scipy.")], sys.modules
import scipy.optimize, scipy.special, scipy.sparse as sps, scipy.sparse.linalg as spla
import scipy.sparse.linalg._dsolve as dsolve
assert hasattr(dsolve, "_superlu")          # SciPy's own import is undisturbed
A = sps.csc_matrix((args[0], (args[1], args[2])), shape=(2, 2))
assert np.array_equal(spla.spsolve(A, args[3]), x)
assert np.array_equal(spla.splu(A.tocsc()).solve(args[3]), lu.solve(args[3]))
assert np.array_equal(A @ np.array([1.0, 2.0]), y) and (lu.L != spla.splu(A.tocsc()).L).nnz == 0
assert scipy.optimize.brentq(np.cos, 0.0, 3.0) == r and scipy.special.digamma(2.5) == d
print("ok")
"""


def test_kernels_first_then_scipy_packages():
    # loading the compiled modules first leaves no half-imported SciPy package behind
    out = subprocess.run([sys.executable, "-c", _THEN_SCIPY], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"


def test_blas_env_shortens_the_spin_only_while_loading(monkeypatch):
    """OPENBLAS_THREAD_TIMEOUT is set while an extension loads and removed after; a value
    the user set is left alone."""
    import os

    from mva import _scipy_kernels as K

    monkeypatch.delenv("OPENBLAS_THREAD_TIMEOUT", raising=False)
    monkeypatch.delenv("GOTO_THREAD_TIMEOUT", raising=False)
    with K._blas_env():
        assert os.environ["OPENBLAS_THREAD_TIMEOUT"] == K._BLAS_THREAD_TIMEOUT
    assert "OPENBLAS_THREAD_TIMEOUT" not in os.environ
    monkeypatch.setenv("OPENBLAS_THREAD_TIMEOUT", "20")
    with K._blas_env():
        assert os.environ["OPENBLAS_THREAD_TIMEOUT"] == "20"
    assert os.environ["OPENBLAS_THREAD_TIMEOUT"] == "20"


@pytest.mark.parametrize("n, low, up", [(2, 1, 2), (50, 3, 4), (1000, 8, 9), (7, 0, 3)])
def test_solve_banded_bit_identical(n, low, up):
    import scipy.linalg

    rng = np.random.default_rng(n + low)
    ab = rng.random((low + up + 1, n))
    ab[up] += low + up + 1.0                  # diagonally dominant
    b = rng.random(n)
    assert k._extension("scipy.linalg._flapack", "dgbsv") is not None
    np.testing.assert_array_equal(k.solve_banded(low, up, ab, b),
                                  scipy.linalg.solve_banded((low, up), ab, b))


@pytest.mark.parametrize("low, up", [(1, 1), (0, 0)])
def test_solve_banded_routines_scipy_keeps_go_public(low, up):
    """(1, 1) is SciPy's tridiagonal routine, one diagonal its division: the public path."""
    import scipy.linalg

    ab = np.ones((low + up + 1, 6)) + np.eye(low + up + 1, 6)[::-1]
    ab[up] += 3.0
    b = np.arange(6.0)
    np.testing.assert_array_equal(k.solve_banded(low, up, ab, b),
                                  scipy.linalg.solve_banded((low, up), ab, b))


def test_solve_banded_singular_raises_and_falls_back(monkeypatch):
    ab = np.zeros((4, 5))
    ab[1] = 1.0                                # the main diagonal all ones
    ab[1, 2] = 0.0                             # ... and a zero column
    with pytest.raises(np.linalg.LinAlgError):
        k.solve_banded(2, 1, ab, np.ones(5))
    good = np.ones((4, 5)) + np.array([[0.0], [4.0], [0.0], [0.0]])
    fast = k.solve_banded(2, 1, good, np.arange(5.0))
    monkeypatch.setattr(k, "_extension", lambda *a: None)
    np.testing.assert_array_equal(k.solve_banded(2, 1, good, np.arange(5.0)), fast)
