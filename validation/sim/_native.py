"""The compiled event loop as cached machine code, loaded without numba.

:mod:`validation.sim._compiled` is the numba source of the loop.  Calling a
numba function from its on-disk cache still costs a new process about a
second (numba initialises its typing and lowering registries, importing
much of itself, SciPy's BLAS wrappers and more, before it looks the cache
up).  So the loop is compiled once to a native object file
(:func:`validation.sim._compiled.build_object`: a C entry
``int64 run(int64 *I, int64 nI, double *F, int64 nF)`` whose object needs
no outside symbol), stored beside numba's cache, and later processes load
that object with llvmlite's MCJIT linker (numba's own dependency, imported
in a few hundredths of a second) and call it through :mod:`ctypes`; numba is
imported only to build it.

The object is stored where numba would keep its own cache
(``NUMBA_CACHE_DIR``, else the package's ``__pycache__``, else a user-wide
cache directory).  The object's file name carries a key of everything its code depends on:
the source of :mod:`._compiled` and :mod:`._state`, the numba and llvmlite
versions, the host CPU (name and features: numba compiles for the host) and
numba's code-generation settings from the environment.  The file holds a
SHA-256 of its contents, checked before loading; a mismatch rebuilds it.
Without a writable cache directory the object is built in memory in every
process; if building it fails, numba's own dispatcher runs the loop (the
same machine code, reached through numba).
"""

from __future__ import annotations

import ctypes
import hashlib
import importlib.util
import os
import sys
import tempfile
from typing import Any, Callable

__all__ = ["runner", "object_path"]

_MAGIC = b"smp-contention compiled simulator v1\n"
_HERE = os.path.dirname(os.path.abspath(__file__))
_SOURCES = ("_compiled.py", "_state.py")
_ENV = ("NUMBA_OPT", "NUMBA_CPU_NAME", "NUMBA_CPU_FEATURES", "NUMBA_LOOP_VECTORIZE",
        "NUMBA_SLP_VECTORIZE", "NUMBA_ENABLE_AVX", "NUMBA_BOUNDSCHECK", "NUMBA_FASTMATH")
_run: Callable[[Any, Any], int] | None = None
_keep: list[Any] = []          # the execution engine owning the loaded code (must stay alive)


def _llvm() -> Any:
    import llvmlite.binding as ll
    ll.initialize_native_target()
    ll.initialize_native_asmprinter()
    return ll


def _key(ll: Any) -> str:
    h = hashlib.sha256(_MAGIC)
    for name in _SOURCES:
        with open(os.path.join(_HERE, name), "rb") as fh:
            h.update(fh.read())
    h.update(ll.llvm_version_info.__repr__().encode())
    for pkg, name in (("numba", "_version.py"), ("llvmlite", "_version.py")):
        h.update(_package_file(pkg, name))
    h.update(ll.get_process_triple().encode())
    h.update(ll.get_host_cpu_name().encode())
    h.update(ll.get_host_cpu_features().flatten().encode())
    h.update(sys.version.encode())
    for var in _ENV:
        h.update(f"{var}={os.environ.get(var, '')};".encode())
    return h.hexdigest()[:32]


def _package_file(pkg: str, name: str) -> bytes:
    """The bytes of file ``name`` of installed package ``pkg`` (its version), found without
    importing it."""
    spec = importlib.util.find_spec(pkg)
    if spec is None or not spec.submodule_search_locations:
        return b"?"
    for d in spec.submodule_search_locations:
        try:
            with open(os.path.join(d, name), "rb") as fh:
                return fh.read()
        except OSError:
            continue
    return b"?"


def _cache_dirs() -> list[str]:
    """Where the object may be: numba's choice of directory for its own cache, in its order.

    ``NUMBA_CACHE_DIR`` when set, else the package's ``__pycache__``, else a
    user-wide directory (``$XDG_CACHE_HOME`` or ``~/.cache``).
    """
    if os.environ.get("NUMBA_CACHE_DIR"):
        return [os.path.join(os.environ["NUMBA_CACHE_DIR"], "validation_sim")]
    user = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return [os.path.join(_HERE, "__pycache__"), os.path.join(user, "smp-contention")]


def object_path(key: str) -> list[str]:
    """Candidate paths of the cached object for ``key`` (first found wins)."""
    return [os.path.join(d, f"_compiled-{key}.simobj") for d in _cache_dirs()]


def _read(path: str) -> tuple[bytes, str] | None:
    """(object, symbol) from a cache file, or None when missing or damaged."""
    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except OSError:
        return None
    if not data.startswith(_MAGIC):
        return None
    rest = data[len(_MAGIC):]
    digest, _, rest = rest.partition(b"\n")
    symbol, _, obj = rest.partition(b"\n")
    if hashlib.sha256(symbol + b"\n" + obj).hexdigest().encode() != digest or not obj:
        return None
    return obj, symbol.decode()


def _write(paths: list[str], obj: bytes, symbol: str) -> None:
    body = symbol.encode() + b"\n" + obj
    data = _MAGIC + hashlib.sha256(body).hexdigest().encode() + b"\n" + body
    for path in paths:
        d = os.path.dirname(path)
        try:
            os.makedirs(d, exist_ok=True)
            fd, tmp = tempfile.mkstemp(dir=d, prefix=".simobj-")
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
            os.replace(tmp, path)           # atomic: concurrent builders each write a whole file
            return
        except OSError:
            continue


def _load(ll: Any, obj: bytes, symbol: str) -> Callable[[Any, Any], int]:
    tm = ll.Target.from_default_triple().create_target_machine()
    engine = ll.create_mcjit_compiler(ll.parse_assembly(""), tm)
    engine.add_object_file(ll.ObjectFileRef.from_data(obj))
    engine.finalize_object()
    addr = engine.get_function_address(symbol)
    if not addr:
        raise RuntimeError(f"symbol {symbol!r} not found in the compiled simulator's object")
    _keep.append(engine)
    i64 = ctypes.c_int64
    fn = ctypes.CFUNCTYPE(i64, ctypes.c_void_p, i64, ctypes.c_void_p, i64)(addr)
    _keep.append(fn)

    def run(I: Any, F: Any) -> int:
        return fn(I.ctypes.data, I.size, F.ctypes.data, F.size)

    return run


def runner() -> Callable[[Any, Any], int]:
    """The loop ``run(I, F) -> status`` (see :mod:`._compiled`), loaded or built once per
    process."""
    global _run
    if _run is not None:
        return _run
    ll = _llvm()
    paths = object_path(_key(ll))
    for path in paths:
        got = _read(path)
        if got is not None:
            _run = _load(ll, *got)
            return _run
    from . import _compiled
    try:
        obj, symbol = _compiled.build_object()
        run = _load(ll, obj, symbol)
    except Exception as exc:                # noqa: BLE001  numba's dispatcher still runs the loop
        import warnings
        warnings.warn(f"compiled simulator: could not build its native object ({exc}); "
                      "running the loop through numba", RuntimeWarning, stacklevel=2)
        _run = _compiled.run
        return _run
    _write(paths, obj, symbol)
    _run = run
    return _run
