r"""SciPy's compiled kernels without the import cost of its Python packages (private).

Importing ``scipy.sparse.linalg``, ``scipy.optimize`` or ``scipy.special``
costs 0.15-0.45 s of CPU on a first call, most of it in SciPy's Python
layer (``scipy._lib._array_api`` clones NumPy's namespace, which imports
``numpy.f2py``, ``numpy.testing`` and ``numpy.ma``; ``scipy.optimize``
parses the docstrings of a few hundred functions).  The compiled extension
modules that do the numerical work load on their own in about a millisecond.
A what-if command that solves one small chain or one root should not pay the
former to run the latter.

This module loads those extension modules by file (:func:`_extension`,
without running their packages' ``__init__``) and calls them exactly as
SciPy's public wrappers do, so the results are bit-identical to the public
functions (the tests compare with ``np.array_equal``/``==``).  When an
extension cannot be loaded (another SciPy layout), or a case falls outside
what is replicated here, each function calls the public SciPy function
instead; the answer is the same, only slower to import.

* :func:`spsolve_coo` -- ``scipy.sparse.linalg.spsolve(csc_matrix((data, (rows,
  cols)), shape=(n, n)), b)`` through SuperLU's ``gssv``;
* :func:`splu_csc` -- ``scipy.sparse.linalg.splu(csc_array((data, indices,
  indptr), shape=(n, n)), ...)`` (the same ``SuperLU`` factor object) through
  SuperLU's ``gstrf``;
* :func:`csc_matvec` -- ``csc_array((data, indices, indptr), shape=(n, n)) @ x``
  through ``_sparsetools.csc_matvec``;
* :func:`solve_banded` -- ``scipy.linalg.solve_banded((l, u), ab, b)`` for
  ``l + u > 2`` and ``n > 1`` through LAPACK's ``dgbsv`` (``_flapack``: its first
  load costs tens of milliseconds, a tenth of importing ``scipy.linalg``);
* :func:`brentq` -- ``scipy.optimize.brentq`` (same signature) through the
  ``_zeros`` extension;
* :func:`digamma` -- the ``scipy.special.digamma`` ufunc itself.

Notes
-----
:func:`spsolve_coo` builds the compressed-column arrays as ``csc_matrix``
does: entries of a column stay in their order of appearance (``coo_tocsr``)
and are then sorted by row (``sum_duplicates``).  Without duplicate
``(row, col)`` pairs that sort has a unique result, so a stable sort gives
the same arrays; explicit zeros are kept as SciPy keeps them (they enter
SuperLU's column ordering).  Duplicates are summed by SciPy in an order its
unstable C++ sort decides, so a matrix with duplicates goes to the public
function.
"""

from __future__ import annotations

import contextlib
import functools
import importlib.machinery
import importlib.util
import os
import sys
from types import ModuleType
from typing import Any, Callable, Iterator

import numpy as np

__all__ = ["spsolve_coo", "splu_csc", "csc_matvec", "solve_banded", "brentq", "digamma",
           "RootResults"]

#: ``scipy.optimize`` defaults (``_zeros_py._xtol``, ``_rtol``, ``_iter``)
_XTOL = 2e-12
_RTOL = 4 * np.finfo(float).eps
_ITER = 100


#: OpenBLAS's spin-wait of an idle worker thread before it sleeps, as the exponent of a
#: cycle count (its ``OPENBLAS_THREAD_TIMEOUT``, 4 to 30; OpenBLAS's default 28 is about
#: 0.1 s): the value set while :func:`_extension` loads a module (see :func:`_blas_env`)
_BLAS_THREAD_TIMEOUT = "4"


@contextlib.contextmanager
def _blas_env() -> Iterator[None]:
    """``OPENBLAS_THREAD_TIMEOUT`` set to :data:`_BLAS_THREAD_TIMEOUT` for the duration,
    unless the user set it (or ``GOTO_THREAD_TIMEOUT``).

    SuperLU's extension links SciPy's own OpenBLAS, which starts its worker threads
    when it is loaded; each spins (``sched_yield``) for its timeout before it sleeps,
    47-52 ms of CPU on the 2-core development machine -- as much as a what-if solve,
    for nothing when the solve is a small chain (OpenBLAS reads the variable once, when
    loaded; its threads then sleep at once when idle and are woken by the next parallel
    call, so large BLAS calls of SciPy later in the process keep their threads).
    NumPy's OpenBLAS, loaded with NumPy, is not affected.
    """
    if "OPENBLAS_THREAD_TIMEOUT" in os.environ or "GOTO_THREAD_TIMEOUT" in os.environ:
        yield
        return
    os.environ["OPENBLAS_THREAD_TIMEOUT"] = _BLAS_THREAD_TIMEOUT
    try:
        yield
    finally:
        os.environ.pop("OPENBLAS_THREAD_TIMEOUT", None)


@functools.lru_cache(maxsize=None)
def _extension(dotted: str, attr: str) -> ModuleType | None:
    """The compiled module ``dotted`` (e.g. ``"scipy.optimize._zeros"``), or ``None``.

    Loaded from its file inside the installed SciPy without importing the
    packages between ``scipy`` and it.  ``None`` when the file is not there,
    does not load, or has no attribute ``attr``.
    """
    try:
        spec = importlib.util.find_spec("scipy")        # locates SciPy, does not import it
        if spec is None or not spec.submodule_search_locations:
            return None
        parts = dotted.split(".")
        folder = os.path.join(list(spec.submodule_search_locations)[0], *parts[1:-1])
        for suffix in importlib.machinery.EXTENSION_SUFFIXES:
            path = os.path.join(folder, parts[-1] + suffix)
            if os.path.exists(path):
                spec = importlib.util.spec_from_file_location(dotted, path)
                if spec is None or spec.loader is None:
                    return None
                known = dotted in sys.modules
                with _blas_env():       # SciPy's OpenBLAS, if this loads it: no long spin
                    module = importlib.util.module_from_spec(spec)
                    spec.loader.exec_module(module)
                if not known:
                    # not left in sys.modules: a later ``import scipy...`` then loads it
                    # itself, as an attribute of its package, as without this module
                    sys.modules.pop(dotted, None)
                return module if hasattr(module, attr) else None
    except Exception:   # any failure: the caller uses the public SciPy function
        return None
    return None


def spsolve_coo(data: np.ndarray, rows: np.ndarray, cols: np.ndarray, b: np.ndarray,
                n: int) -> np.ndarray:
    """``x`` with ``A x = b`` for ``A = csc_matrix((data, (rows, cols)), shape=(n, n))``.

    Bit-identical to ``scipy.sparse.linalg.spsolve(A, b)`` (SuperLU, COLAMD
    column ordering); a singular matrix gives SciPy's warning and NaNs.

    Examples
    --------
    >>> import numpy as np
    >>> spsolve_coo(np.array([2.0, 1.0, 4.0]), np.array([0, 1, 1]), np.array([0, 0, 1]),
    ...             np.array([2.0, 9.0]), 2).tolist()
    [1.0, 2.0]
    """
    data = np.asarray(data, dtype=float)
    rows = np.asarray(rows)
    cols = np.asarray(cols)
    b = np.asarray(b, dtype=float)
    ext = _extension("scipy.sparse.linalg._dsolve._superlu", "gssv")
    if ext is not None and n > 0 and data.ndim == 1 and b.shape == (n,) and len(data) > 0:
        order = np.lexsort((rows, cols))             # by column, then row; stable
        r, c = rows[order], cols[order]
        if (r.min() >= 0 and r.max() < n and c.min() >= 0 and c.max() < n
                and not np.any((r[1:] == r[:-1]) & (c[1:] == c[:-1]))):
            indptr = np.zeros(n + 1, dtype=np.intc)
            np.cumsum(np.bincount(c, minlength=n), out=indptr[1:])
            try:
                x, info = ext.gssv(n, len(data), np.ascontiguousarray(data[order]),
                                   r.astype(np.intc), indptr, b, 1, options={"ColPerm": None})
            except (TypeError, ValueError):   # another SciPy's calling convention: public path
                info = -1
            if info == 0:
                return np.asarray(x, dtype=float).ravel()
    import scipy.sparse as sps
    import scipy.sparse.linalg as spla

    A = sps.csc_matrix((data, (rows, cols)), shape=(n, n))
    return np.asarray(spla.spsolve(A, b), dtype=float)


def _canonical_csc(data: np.ndarray, indices: np.ndarray, indptr: np.ndarray, n: int) -> bool:
    """Whether ``(data, indices, indptr)`` is a canonical ``n x n`` CSC matrix of floats.

    Canonical: rows strictly increasing within each column (sorted, no duplicates),
    ``indptr`` non-decreasing from 0 to ``nnz``; ``csc_array`` and SciPy's solvers
    then use the arrays as they are.
    """
    if (n <= 0 or data.dtype != np.float64 or data.ndim != 1 or indices.shape != data.shape
            or indptr.shape != (n + 1,) or indptr[0] != 0 or indptr[-1] != data.size):
        return False
    if np.any(np.diff(indptr) < 0):
        return False
    if data.size == 0:
        return True
    if indices.min() < 0 or indices.max() >= n:
        return False
    col = np.repeat(np.arange(n), np.diff(indptr))
    return not np.any((col[1:] == col[:-1]) & (indices[1:] <= indices[:-1]))


def _csc_array(*args: Any, **kwargs: Any) -> Any:
    """``scipy.sparse.csc_array``, imported when first called (the factor's ``L`` and ``U``)."""
    from scipy.sparse import csc_array

    return csc_array(*args, **kwargs)


def splu_csc(data: np.ndarray, indices: np.ndarray, indptr: np.ndarray, n: int, *,
             permc_spec: str | None = None, diag_pivot_thresh: float | None = None,
             options: dict[str, Any] | None = None) -> Any:
    """``scipy.sparse.linalg.splu(csc_array((data, indices, indptr), shape=(n, n)), ...)``.

    The same ``SuperLU`` object (``solve``, ``perm_r``, ``perm_c``, ``L``, ``U``;
    the last two import ``scipy.sparse`` when first read) from SuperLU's ``gstrf``
    called with SciPy's arguments, for a canonical matrix (:func:`_canonical_csc`,
    float64); anything else, or another SciPy layout, goes to ``splu``.  A singular
    matrix raises SciPy's ``RuntimeError``.

    Examples
    --------
    >>> import numpy as np
    >>> lu = splu_csc(np.array([2.0, 1.0, 4.0]), np.array([0, 1, 1], dtype=np.intc),
    ...               np.array([0, 2, 3], dtype=np.intc), 2)
    >>> lu.solve(np.array([2.0, 9.0])).tolist()
    [1.0, 2.0]
    """
    data = np.asarray(data)
    indices = np.asarray(indices)
    indptr = np.asarray(indptr)
    ext = _extension("scipy.sparse.linalg._dsolve._superlu", "gstrf")
    if ext is not None and _canonical_csc(data, indices, indptr, n):
        opts = dict(DiagPivotThresh=diag_pivot_thresh, ColPerm=permc_spec, PanelSize=None,
                    Relax=None)
        if options is not None:
            opts.update(options)
        if opts["ColPerm"] == "NATURAL":
            opts["SymmetricMode"] = True
        try:
            return ext.gstrf(n, data.size, data, indices.astype(np.intc, copy=False),
                             indptr.astype(np.intc, copy=False), csc_construct_func=_csc_array,
                             ilu=False, options=opts)
        except TypeError:                      # another SciPy's calling convention
            pass
    from scipy.sparse import csc_array
    from scipy.sparse.linalg import splu

    return splu(csc_array((data, indices, indptr), shape=(n, n)), permc_spec=permc_spec,
                diag_pivot_thresh=diag_pivot_thresh, options=options)


def solve_banded(nlower: int, nupper: int, ab: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``scipy.linalg.solve_banded((nlower, nupper), ab, b)`` for float64 ``ab`` and ``b``.

    ``ab[nupper + i - j, j] = A[i, j]`` (SciPy's diagonal ordered form).  Through
    LAPACK's ``dgbsv`` (partial pivoting) as SciPy calls it, for ``nlower +
    nupper > 2`` and more than one unknown (SciPy takes other routines below);
    elsewhere, or without the extension, the public function.  A singular
    matrix raises ``numpy.linalg.LinAlgError``.

    Examples
    --------
    >>> import numpy as np
    >>> ab = np.array([[0, 0, -1, -1, -1], [0, 2, 2, 2, 2], [5, 4, 3, 2, 1],
    ...                [1, 1, 1, 1, 0]], dtype=float)
    >>> solve_banded(1, 2, ab, np.array([0.0, 1, 2, 2, 3])).round(8).tolist()
    [-2.37288136, 3.93220339, -4.0, 4.3559322, -1.3559322]
    """
    ab = np.asarray(ab, dtype=float)
    b = np.asarray(b, dtype=float)
    n = ab.shape[-1]
    ext = (_extension("scipy.linalg._flapack", "dgbsv")
           if nlower + nupper > 2 and n > 1 and ab.shape == (nlower + nupper + 1, n)
           and b.shape == (n,) else None)
    if ext is not None:
        a2 = np.zeros((2 * nlower + nupper + 1, n))
        a2[nlower:, :] = ab
        _, _, x, info = ext.dgbsv(nlower, nupper, a2, b, overwrite_ab=1, overwrite_b=0)
        if info > 0:
            raise np.linalg.LinAlgError("singular matrix")
        if info == 0:
            return np.asarray(x, dtype=float)
    from scipy.linalg import solve_banded as public

    return np.asarray(public((nlower, nupper), ab, b), dtype=float)


def csc_matvec(data: np.ndarray, indices: np.ndarray, indptr: np.ndarray, n: int,
               x: np.ndarray) -> np.ndarray:
    """``csc_array((data, indices, indptr), shape=(n, n)) @ x`` for float64 ``data`` and ``x``.

    SciPy's own compiled product (``_sparsetools.csc_matvec``) on a canonical
    matrix (:func:`_canonical_csc` is not re-checked here: the caller builds the
    arrays; the public product is used when the extension is missing).

    Examples
    --------
    >>> import numpy as np
    >>> csc_matvec(np.array([2.0, 1.0, 4.0]), np.array([0, 1, 1], dtype=np.intc),
    ...            np.array([0, 2, 3], dtype=np.intc), 2, np.array([1.0, 2.0])).tolist()
    [2.0, 9.0]
    """
    x = np.asarray(x, dtype=float)
    ext = _extension("scipy.sparse._sparsetools", "csc_matvec")
    if ext is not None and x.shape == (n,):
        y = np.zeros(n)
        ext.csc_matvec(n, n, indptr, indices, data, x, y)
        return y
    from scipy.sparse import csc_array

    return np.asarray(csc_array((data, indices, indptr), shape=(n, n)) @ x, dtype=float)


class RootResults:
    """What ``scipy.optimize.brentq(..., full_output=True)`` returns beside the root.

    ``root``, ``iterations``, ``function_calls``, ``converged`` and ``flag``
    (``"converged"``, ``"sign error"``, ``"convergence error"``, ...) as in
    SciPy's ``RootResults``; ``method`` is ``"brentq"``.
    """

    _FLAGS = {0: "converged", -1: "sign error", -2: "convergence error",
              -3: "value error", 1: "No error"}

    def __init__(self, root: float, iterations: int, function_calls: int, flag: int) -> None:
        self.root = root
        self.iterations = iterations
        self.function_calls = function_calls
        self.converged = flag == 0
        self.flag = self._FLAGS.get(flag, flag)
        self.method = "brentq"

    def __repr__(self) -> str:
        return (f"RootResults(root={self.root!r}, iterations={self.iterations}, "
                f"function_calls={self.function_calls}, converged={self.converged}, "
                f"flag={self.flag!r})")


def brentq(f: Callable[..., float], a: float, b: float, args: Any = (), xtol: float = _XTOL,
           rtol: float = _RTOL, maxiter: int = _ITER, full_output: bool = False,
           disp: bool = True) -> Any:
    """``scipy.optimize.brentq`` (same arguments, same result, same errors).

    The root from SciPy's compiled Brent routine; with ``full_output`` the
    pair ``(root, RootResults)``.  A NaN function value raises
    ``ValueError``; ``disp=True`` raises ``RuntimeError`` when ``maxiter``
    is reached, as SciPy does.

    Examples
    --------
    >>> round(brentq(lambda x: x * x - 2.0, 0.0, 2.0), 12)
    1.414213562373
    """
    ext = _extension("scipy.optimize._zeros", "_brentq")
    if ext is None:
        from scipy.optimize import brentq as public

        return public(f, a, b, args=args, xtol=xtol, rtol=rtol, maxiter=maxiter,
                      full_output=full_output, disp=disp)
    import operator

    if not isinstance(args, tuple):
        args = (args,)
    maxiter = operator.index(maxiter)
    if xtol <= 0:
        raise ValueError(f"xtol too small ({xtol:g} <= 0)")
    if rtol < _RTOL:
        raise ValueError(f"rtol too small ({rtol:g} < {_RTOL:g})")

    def f_raise(x: float, *fargs: Any) -> Any:
        fx = f(x, *fargs)
        if np.isnan(fx):
            raise ValueError(f"The function value at x={x} is NaN; solver cannot continue.")
        return fx

    r = ext._brentq(f_raise, a, b, xtol, rtol, maxiter, args, full_output, disp)
    if full_output:
        x, calls, iterations, flag = r
        return x, RootResults(x, iterations, calls, flag)
    return r


def digamma(x: Any) -> Any:
    """``scipy.special.digamma(x)`` (the same ufunc).

    Examples
    --------
    >>> round(float(digamma(1.0)), 12)      # -Euler's constant
    -0.577215664902
    """
    ext = _extension("scipy.special._special_ufuncs", "psi")
    if ext is None:
        from scipy.special import digamma as public

        return public(x)
    return ext.psi(x)
