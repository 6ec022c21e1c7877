"""Parameter sweeps and simulation replications on any executor, with resume.

:func:`sweep` evaluates a function -- a vectorised model ``solve`` or a
per-point simulator call -- over a parameter grid, on the current process, a
local process pool, any :class:`concurrent.futures.Executor` or a
``dask.distributed`` cluster, shows a progress bar on a terminal, and records
every finished point in an SQLite file (:class:`SweepStore`) so that an
interrupted sweep resumes where it stopped.

Examples
--------
A vectorised function is evaluated in chunks (one call per chunk, with
array arguments):

>>> import numpy as np
>>> def response(N, Z=0.0):
...     return {"R": N * 1.5, "X": N / (N * 1.5 + Z)}
>>> t = sweep(response, {"N": [1, 2, 4]}, fixed={"Z": 1.0}, executor="serial")
>>> t.columns
('N', 'R', 'X')
>>> t["X"].round(4).tolist()
[0.4, 0.5, 0.5714]
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import math
import os
import pickle
import sys
import threading
import time
from typing import Any, Callable, Iterator, Mapping, NamedTuple, Sequence, cast

import numpy as np

from ._store import StoreMismatchError, SweepStore, table_from_records
from ._validate import check_choice
from ._version import __version__
from .table import Table, grid_points

__all__ = ["sweep", "SweepStore", "StoreMismatchError", "point_key", "point_seed",
           "ON_MISMATCH", "ON_ERROR", "DEFAULT_VECTOR_CHUNK", "BULK_PAGE_SIZE"]

#: accepted values of ``on_mismatch``
ON_MISMATCH = ("raise", "reuse", "restart")
#: accepted values of ``on_error``
ON_ERROR = ("raise", "record")
#: points per call for vectorised functions when ``chunk`` is not given: large enough
#: that a model's per-call cost (validation, result assembly) is small against the
#: points' (benchmarks/bench_sweep.py: 4096 points per call cost twice the direct call's
#: CPU on a 10^6-point INI grid, 65536 about 1.1x), small enough to bound memory
#: (tens of MB a chunk) and to keep a progress bar and a store's commits moving
DEFAULT_VECTOR_CHUNK = 65536

#: SQLite page size of a store created by a vectorised sweep (see :class:`SweepStore`)
BULK_PAGE_SIZE = 65536

_RESULT = "result"  # column name for a function returning a bare scalar


# ---------------------------------------------------------------------------
# points, keys and seeds
# ---------------------------------------------------------------------------
def _json_scalar(value: Any) -> tuple[bool, Any]:
    """(ok, value) with numpy scalars and 0-d arrays turned into Python scalars."""
    if value is None or isinstance(value, (bool, str)):
        return True, value
    if isinstance(value, (int, float)):
        return True, value
    if isinstance(value, np.generic):
        value = value.item()
        return (isinstance(value, (bool, int, float, str)), value)
    if isinstance(value, np.ndarray) and value.ndim == 0:
        return _json_scalar(value.item())
    return False, None


def point_key(point: Mapping[str, Any]) -> str:
    """Canonical JSON text identifying a point (sorted names, exact values).

    Parameters
    ----------
    point : mapping
        Parameter name to value (numbers, strings, booleans or None).

    Returns
    -------
    str
        The key under which the point is stored.

    Examples
    --------
    >>> point_key({"b": 2, "a": 0.5})
    '{"a":0.5,"b":2}'
    """
    clean = {}
    for name, value in point.items():
        ok, v = _json_scalar(value)
        if not ok or (isinstance(v, float) and not math.isfinite(v)):
            raise ValueError(f"grid: parameter {name!r} must be a finite number, string, bool or "
                             f"None per point; got {value!r}")
        clean[str(name)] = v
    return json.dumps(clean, sort_keys=True, separators=(",", ":"))


def _base_entropy(seed: Any) -> int | None:
    if seed is None:
        return None
    if isinstance(seed, np.random.SeedSequence):
        ent = seed.entropy
        if not isinstance(ent, int):
            ent = int.from_bytes(hashlib.sha256(repr(ent).encode()).digest()[:16], "little")
        return int(ent)
    if isinstance(seed, (bool, np.bool_)) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"seed must be a non-negative integer or numpy.random.SeedSequence; "
                         f"got {seed!r}")
    return int(seed)


def _seed_from_key(entropy: int, key: str) -> int:
    digest = hashlib.sha256(key.encode()).digest()
    words = tuple(int.from_bytes(digest[i:i + 4], "little") for i in range(0, 16, 4))
    ss = np.random.SeedSequence(entropy=entropy, spawn_key=words)
    return int(ss.generate_state(1, np.uint64)[0]) >> 1  # fits a signed 64-bit SQL integer


def point_seed(seed: int | np.random.SeedSequence, point: Mapping[str, Any]) -> int:
    """The seed :func:`sweep` passes to the function for ``point``.

    Parameters
    ----------
    seed : int or numpy.random.SeedSequence
        The sweep's base seed.
    point : mapping
        The point's parameters (including ``replication`` when the sweep
        has ``replications``).

    Returns
    -------
    int
        A 63-bit seed, a deterministic function of the base seed and the
        point's parameters only.

    Notes
    -----
    The seed is drawn from ``numpy.random.SeedSequence(entropy=seed,
    spawn_key=h)`` where ``h`` is four 32-bit words of the SHA-256 of
    :func:`point_key`.  It therefore does not depend on the executor, on the
    order of the grid or on which other points the grid holds: a point
    computed in an extended grid, or resumed from a store, gets the same seed
    as in the original sweep.

    Examples
    --------
    >>> point_seed(7, {"N": 2}) == point_seed(7, {"N": 2})
    True
    >>> point_seed(7, {"N": 2}) != point_seed(7, {"N": 3})
    True
    """
    ent = _base_entropy(seed)
    if ent is None:
        raise ValueError("seed must be given")
    return _seed_from_key(ent, point_key(point))


def _points_of(grid: Any, replications: int | None) -> tuple[list[str], list[dict[str, Any]]]:
    """Parameter names and the list of point dicts (without replication)."""
    if isinstance(grid, Mapping):
        if not grid:
            raise ValueError("grid: needs at least one parameter")
        for name, values in grid.items():
            if np.size(values) == 0:
                raise ValueError(f"grid: parameter {name!r} has no values")
        pts = grid_points(grid)
        names = list(pts)
        n = len(pts[names[0]])
        cols = [pts[k].tolist() for k in names]
        points = [{k: cols[j][i] for j, k in enumerate(names)} for i in range(n)]
    elif isinstance(grid, Sequence) and not isinstance(grid, (str, bytes)):
        points = [dict(p) for p in grid]
        if not points:
            raise ValueError("grid: the list of points is empty")
        names = list(points[0])
        for i, p in enumerate(points):
            if set(p) != set(names):
                raise ValueError(f"grid: point {i} has parameters {sorted(p)}; "
                                 f"point 0 has {sorted(names)} (all points need the same names)")
    else:
        raise ValueError(f"grid must be a mapping name -> values or a list of point dicts; "
                         f"got {type(grid).__name__}")
    if replications is not None:
        if "replication" in names:
            raise ValueError("grid: 'replication' is reserved when replications= is given")
        names = names + ["replication"]
    return names, points


# ---------------------------------------------------------------------------
# turning results into per-point rows of JSON scalars
# ---------------------------------------------------------------------------
def _fields(result: Any) -> dict[str, Any] | None:
    """Named fields of a result object, or None for a bare value."""
    if isinstance(result, Mapping):
        return {str(k): v for k, v in result.items()}
    if dataclasses.is_dataclass(result) and not isinstance(result, type):
        return {f.name: getattr(result, f.name) for f in dataclasses.fields(result)}
    if hasattr(result, "_asdict"):
        return dict(result._asdict())
    if isinstance(result, (str, bytes, int, float, bool, np.generic, np.ndarray)) or result is None:
        return None
    if hasattr(result, "to_dict") and callable(result.to_dict):
        return dict(result.to_dict())
    if hasattr(result, "__dict__"):
        return {k: v for k, v in vars(result).items() if not k.startswith("_")}
    return None


def _flatten_point(result: Any) -> dict[str, Any]:
    """One point's result as a dict of JSON scalars (non-scalar fields dropped)."""
    fields = _fields(result)
    if fields is None:
        fields = {_RESULT: result}
    out = {}
    for name, value in fields.items():
        ok, v = _json_scalar(value)
        if ok:
            out[name] = v
    return out


def _flatten_chunk(result: Any, k: int) -> list[dict[str, Any]] | None:
    """A vectorised result for ``k`` points as ``k`` row dicts (None if not vectorised)."""
    fields = _fields(result)
    if fields is None:
        fields = {_RESULT: result}
    per_point: dict[str, list[Any]] = {}
    vector = False
    for name, value in fields.items():
        if isinstance(value, (list, tuple)):
            value = np.asarray(value)
        ok, v = _json_scalar(value)
        if ok:
            per_point[name] = [v] * k
            continue
        if isinstance(value, np.ndarray) and value.shape == (k,):
            vals = value.tolist()
            if value.dtype.kind in "biufU":  # tolist() gives Python scalars already
                per_point[name] = vals
                vector = True
            elif all(_json_scalar(x)[0] for x in vals):
                per_point[name] = [_json_scalar(x)[1] for x in vals]
                vector = True
    if not vector and k != 1:  # a one-point chunk may come back as scalars
        return None
    return [{name: vals[i] for name, vals in per_point.items()} for i in range(k)]


#: solver diagnostics that may legitimately differ between a vector and a scalar solve
_DIAGNOSTICS = frozenset({"iterations", "residual", "nfev", "niter", "elapsed"})


def _same_row(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    """Do a chunk's first row and the same point computed alone agree?"""
    if set(a) != set(b):
        return False
    for name in a:
        if name in _DIAGNOSTICS:
            continue
        x, y = a[name], b[name]
        if isinstance(x, float) or isinstance(y, float):
            if isinstance(x, bool) or isinstance(y, bool) or x is None or y is None \
                    or isinstance(x, str) or isinstance(y, str):
                return False
            x, y = float(x), float(y)
            if not (x == y or (math.isnan(x) and math.isnan(y))
                    or math.isclose(x, y, rel_tol=1e-7, abs_tol=1e-12)):
                return False
        elif x != y:
            return False
    return True


# ---------------------------------------------------------------------------
# the work unit executed on a worker (module level: picklable)
# ---------------------------------------------------------------------------
def _error_text(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"


def _run_task(fn: Callable[..., Any], calls: list[dict[str, Any]], fixed: Mapping[str, Any],
              vectorized: bool, record_errors: bool
              ) -> tuple[list[tuple[dict | None, str | None]], float]:
    """Evaluate one task; returns ([(row, error) per point], seconds)."""
    start = time.perf_counter()
    if vectorized:
        k = len(calls)
        arrays = {name: np.asarray([c[name] for c in calls]) for name in calls[0]}
        try:
            rows = _flatten_chunk(fn(**arrays, **fixed), k)
            if rows is None:
                raise ValueError(f"vectorized=True but {_name(fn)} returned no per-point field "
                                 f"of length {k} for a chunk of {k} points")
            return [(r, None) for r in rows], time.perf_counter() - start
        except Exception:
            if not record_errors:
                raise
            # isolate the failing points: evaluate this chunk point by point
    out: list[tuple[dict | None, str | None]] = []
    for call in calls:
        try:
            out.append((_flatten_point(fn(**call, **fixed)), None))
        except Exception as exc:
            if not record_errors:
                raise
            out.append((None, _error_text(exc)))
    return out, time.perf_counter() - start


# ---------------------------------------------------------------------------
# executors
# ---------------------------------------------------------------------------
def _name(fn: Any) -> str:
    """A stable, address-free name of a callable (used in the store's fingerprint)."""
    explicit = getattr(fn, "__sweep_name__", None)
    if explicit:
        return str(explicit)
    if isinstance(fn, functools.partial):
        return (f"partial({_name(fn.func)}, {_canonical(list(fn.args))}, "
                f"{_canonical(dict(fn.keywords))})")
    qual = getattr(fn, "__qualname__", None)
    mod = getattr(fn, "__module__", None)
    if qual and mod:
        return f"{mod}:{qual}"
    t = type(fn)
    text = repr(fn)
    return f"{t.__module__}:{t.__qualname__}" + ("" if " at 0x" in text else f"={text}")


def _canonical(value: Any) -> str:
    def default(o: Any) -> Any:
        if isinstance(o, np.ndarray):
            return o.tolist()
        if isinstance(o, np.generic):
            return o.item()
        if dataclasses.is_dataclass(o) and not isinstance(o, type):
            return {"__type__": type(o).__qualname__, **dataclasses.asdict(o)}
        text = repr(o)
        return text if " at 0x" not in text else f"{type(o).__module__}:{type(o).__qualname__}"
    return json.dumps(value, sort_keys=True, default=default, separators=(",", ":"))


def _is_dask_client(obj: Any) -> bool:
    return type(obj).__module__.split(".")[0] == "distributed" and hasattr(obj, "get_executor") \
        and hasattr(obj, "submit")


def _is_dask_executor(obj: Any) -> bool:
    return type(obj).__module__.split(".")[0] == "distributed"


def _check_picklable(what: Any, fn: Any, where: str, dask: bool) -> None:
    dumps = pickle.dumps
    if dask:
        try:
            import cloudpickle
            dumps = cloudpickle.dumps
        except ImportError:  # pragma: no cover - dask always brings cloudpickle
            pass
    try:
        dumps(what)
    except Exception as exc:
        raise TypeError(
            f"sweep: {_name(fn)} (or its fixed arguments) cannot be pickled, so it cannot run on "
            f"{where}. Define the function at module top level in an importable module (not a "
            f"lambda, a nested function or a bound method of an unpicklable object), or use "
            f"executor='serial'. ({type(exc).__name__}: {exc})") from None


def _executor_workers(ex: Any) -> int:
    for attr in ("_max_workers",):
        n = getattr(ex, attr, None)
        if isinstance(n, int) and n > 0:
            return n
    client = getattr(ex, "_client", None)
    if client is not None:
        try:
            return max(1, sum(client.nthreads().values()))
        except Exception:  # pragma: no cover - defensive
            return 4
    return 4


# ---------------------------------------------------------------------------
# the sweep
# ---------------------------------------------------------------------------
def sweep(fn: Callable[..., Any], grid: Mapping[str, Any] | Sequence[Mapping[str, Any]], *,
          executor: Any = None, store: str | os.PathLike[str] | None = None,
          progress: bool = True, chunk: int | None = None, vectorized: bool | None = None,
          fixed: Mapping[str, Any] | None = None, seed: int | np.random.SeedSequence | None = None,
          seed_arg: str = "seed", replications: int | None = None,
          columns: Sequence[str] | None = None, workers: int | None = None,
          on_mismatch: str = "raise", on_error: str = "raise",
          title: str | None = None) -> Table:
    """Evaluate ``fn`` over a parameter grid on an executor, with progress and resume.

    Parameters
    ----------
    fn : callable
        Called with each point's parameters as keyword arguments (plus
        ``fixed`` and, when ``seed`` is given, ``seed_arg=<per-point seed>``).
        It may return a dataclass, a mapping, an object with attributes, or a
        bare scalar (column ``result``); every field whose value is a scalar
        for a point (number, bool, string, None) becomes a column, other
        fields (arrays, nested objects) are dropped.
    grid : mapping or sequence of mappings
        Either parameter name -> values (the cartesian product, first name
        varying slowest, as :func:`mva.table.grid_points`), or an explicit
        list of point dicts with the same names.  Values must be finite
        numbers, strings, booleans or None.
    executor : None, "serial", "process", "thread", Executor or dask Client
        Where to compute.  ``None`` (default) runs a *vectorised* ``fn`` in
        this process and a *per-point* ``fn`` on a local
        :class:`~concurrent.futures.ProcessPoolExecutor` (``workers``
        processes; serial when only one task is pending).  Any
        :class:`concurrent.futures.Executor` is used as given (and not shut
        down); a ``distributed.Client`` runs the sweep on its cluster through
        ``client.get_executor()``; a ``distributed`` ``ClientExecutor`` works
        too.  Process pools and dask need ``fn`` and ``fixed`` picklable (a
        clear :class:`TypeError` says so otherwise).
    store : path, optional
        SQLite file recording each finished point (parameters, result fields,
        seed, library version) in a transaction as tasks finish -- one row
        per point, or for a vectorised function over a mapping grid one row
        per chunk holding arrays.  Re-running the same sweep with the same
        store computes only the missing points.  A store that cannot be
        written is read back; needing to record in it raises a
        :class:`ValueError` naming it.
    progress : bool
        Show a progress bar (tqdm when installed) on a terminal; ``False``
        never shows one.  Off a terminal nothing is printed either way.
    chunk : int, optional
        Points per task.  Default: :data:`DEFAULT_VECTOR_CHUNK` for a
        vectorised ``fn`` (one call per chunk with array arguments) and 1 for
        a per-point ``fn`` (raise it for cheap functions on a process pool).
    vectorized : bool, optional
        Whether ``fn`` accepts arrays of parameters (one call per chunk).
        ``None`` (default): unseeded functions are probed -- called once with
        the first two pending points as arrays and checked against a scalar
        call of the first point; seeded functions are taken as per-point.
        Pass ``False`` for an expensive simulator to skip the probe.
    fixed : mapping, optional
        Keyword arguments passed unchanged to every call.
    seed : int or numpy.random.SeedSequence, optional
        Base seed.  Each point receives ``seed_arg=point_seed(seed, point)``:
        a deterministic 63-bit integer, identical whatever the executor, the
        chunking or the order of completion (see :func:`point_seed`).
    seed_arg : str
        Keyword under which the per-point seed is passed (default ``"seed"``).
    replications : int, optional
        Independent replications per grid point (needs ``seed``): adds a
        ``replication`` column 0..R-1 (varying fastest) that is part of the
        point's identity and seed but is *not* passed to ``fn``.
    columns : sequence of str, optional
        Result fields to keep (default: every scalar field).
    workers : int, optional
        Size of the pool created for ``executor=None``/``"process"``/
        ``"thread"`` (default ``os.cpu_count()``).
    on_mismatch : {"raise", "reuse", "restart"}
        What to do when ``store`` was written by a different sweep (other
        grid, function, fixed arguments or seed) or another library version:
        ``"raise"`` (default) raises :class:`StoreMismatchError` saying what
        differs; ``"reuse"`` keeps the stored points whose parameters are in
        the new grid *and* whose function, fixed arguments and base seed are
        unchanged, and computes the rest (rows keep the library version that
        computed them); ``"restart"`` computes the sweep anew into staged
        tables and replaces the stored points by them only once it has
        finished (a failed restart leaves the store as it was, and re-running
        it resumes the staged points).
    on_error : {"raise", "record"}
        ``"raise"`` (default): an exception in ``fn`` stops the sweep (points
        already finished stay in the store) and is re-raised with a note
        naming the point.  ``"record"``: the point gets an ``error`` column
        ("ExceptionType: message") and counts as finished.
    title : str, optional
        Title of the returned table.

    Returns
    -------
    mva.table.Table
        One row per point in grid order: the parameters, ``replication`` and
        ``seed`` (when used), the result fields and, if any point failed with
        ``on_error="record"``, ``error``.  ``Table.to_frame()`` gives a
        pandas DataFrame.

    Raises
    ------
    StoreMismatchError
        ``store`` belongs to another sweep or library version and
        ``on_mismatch="raise"``.
    TypeError
        ``fn`` cannot be pickled for a process pool or dask.

    Notes
    -----
    A point's identity is its key :func:`point_key` (canonical JSON of its
    parameters); duplicate points are rejected.  The store fingerprints the
    sweep as

    .. math::

        h_\\text{context} = \\operatorname{SHA256}(\\text{fn}, \\text{fixed},
        \\text{seed}), \\qquad
        h_\\text{grid} = \\operatorname{SHA256}(k_1, \\dots, k_n)

    and a re-run with a different :math:`h_\\text{context}`,
    :math:`h_\\text{grid}` or library version is a mismatch.  Only this
    process writes the store (workers return results), one transaction per
    finished task, in WAL mode: a kill at any moment loses at most the
    tasks in flight, and a committed point is never computed again.

    A vectorised function over a mapping grid (unseeded) takes the bulk
    path: the grid, the calls, the results and the store all stay NumPy
    arrays, with no per-point Python work.  A stored point is matched to
    the new grid by looking its values up in the grid's axes (binary
    search), so resuming and extending a grid cost
    :math:`O(n \\log a)` for :math:`n` stored points and axes of length
    :math:`a`.

    Why serial for vectorised work by default: one NumPy call over a chunk
    of thousands of points costs microseconds per point, about what sending
    it to another process and back costs; a pool pays off for per-point
    functions (simulators) that spend milliseconds or more per point.

    Examples
    --------
    Replications of a seeded simulation, identical on any executor:

    >>> def sim(rate, seed):
    ...     rng = np.random.default_rng(seed)
    ...     return {"mean": float(rng.exponential(1 / rate, 100).mean())}
    >>> a = sweep(sim, {"rate": [1.0, 2.0]}, seed=1, replications=2, executor="serial")
    >>> b = sweep(sim, {"rate": [1.0, 2.0]}, seed=1, replications=2, executor="thread")
    >>> a.columns
    ('rate', 'replication', 'seed', 'mean')
    >>> a["mean"].tolist() == b["mean"].tolist()
    True
    """
    check_choice("on_mismatch", on_mismatch, ON_MISMATCH)
    check_choice("on_error", on_error, ON_ERROR)
    if not callable(fn):
        raise ValueError(f"fn must be callable; got {fn!r}")
    if chunk is not None and (isinstance(chunk, bool) or not isinstance(chunk, (int, np.integer))
                              or chunk < 1):
        raise ValueError(f"chunk must be an integer >= 1; got {chunk!r}")
    if workers is not None and (isinstance(workers, bool)
                                or not isinstance(workers, (int, np.integer)) or workers < 1):
        raise ValueError(f"workers must be an integer >= 1; got {workers!r}")
    if replications is not None:
        if isinstance(replications, bool) or not isinstance(replications, (int, np.integer)) \
                or replications < 1:
            raise ValueError(f"replications must be an integer >= 1; got {replications!r}")
        if seed is None:
            raise ValueError("replications needs a seed (each replication gets its own "
                             "per-point seed)")
    entropy = _base_entropy(seed)
    fixed = dict(fixed or {})
    if seed is None and vectorized is not False and isinstance(grid, Mapping):
        axes = _bulk_axes(grid)
        if axes is not None:
            table = _bulk_sweep(fn, axes, executor=executor, store=store, progress=progress,
                                chunk=chunk, vectorized=vectorized, fixed=fixed,
                                seed_arg=seed_arg, columns=columns, workers=workers,
                                on_mismatch=on_mismatch, on_error=on_error, title=title)
            if table is not None:
                return table
            vectorized = False  # the probe found a per-point function
    names, base_points = _points_of(grid, replications)
    if seed is not None and (seed_arg in names or seed_arg in fixed):
        raise ValueError(f"seed_arg {seed_arg!r} clashes with a parameter of the grid or fixed")

    # -- rows: (key, params for the table, call kwargs) ----------------------
    reps = range(replications) if replications is not None else [None]
    keys: list[str] = []
    params: list[dict[str, Any]] = []
    calls: list[dict[str, Any]] = []
    seeds: list[int | None] = []
    for p in base_points:
        for r in reps:
            row = dict(p) if r is None else {**p, "replication": r}
            key = point_key(row)
            row = json.loads(key)  # JSON scalars only
            s = None if entropy is None else _seed_from_key(entropy, key)
            call = {k: row[k] for k in p}
            if s is not None:
                call[seed_arg] = s
            keys.append(key)
            params.append({k: row[k] for k in names})
            calls.append(call)
            seeds.append(s)
    n = len(keys)
    if len(set(keys)) != n:
        seen: set[str] = set()
        dup = next(k for k in keys if k in seen or seen.add(k))  # type: ignore[func-returns-value]
        raise ValueError(f"grid: duplicate point {dup} (each point must be unique; use "
                         f"replications= for repeated simulation runs)")

    fn_name = _name(fn)
    context = hashlib.sha256(_canonical(
        {"fn": fn_name, "fixed": fixed, "seed": entropy, "seed_arg": seed_arg}).encode()
    ).hexdigest()
    grid_hash = _grid_hash(grid, replications, keys)

    # -- the store: what is already done -----------------------------------
    done: dict[str, dict[str, Any]] = {}
    st: SweepStore | None = None
    if store is not None:
        st = SweepStore(store)
        try:
            def overlap() -> tuple[int, int]:
                stored, now = st.keys(), set(keys)
                return len(stored - now), len(now - stored)
            _open_sweep(st, on_mismatch, fn_name, context, grid_hash, len(keys), names, entropy,
                        overlap)
            done = st.finished(context)
        except BaseException:
            st.close()
            raise
    results: dict[int, tuple[dict[str, Any] | None, str | None]] = {}
    pending = []
    for i, key in enumerate(keys):
        got = done.get(key)
        if got is not None:
            results[i] = (got["result"], got["error"])
        else:
            pending.append(i)

    try:
        if pending:
            if st is not None:
                _check_writable(st, n - len(pending), len(pending))
            _compute(fn, pending, keys, params, calls, seeds, results, fixed=fixed,
                     executor=executor, st=st, progress=progress, chunk=chunk,
                     vectorized=vectorized, seeded=seed is not None, workers=workers,
                     record_errors=on_error == "record", context=context)
        if st is not None and not st.readonly:
            st.promote()  # a restart's staged points replace the old ones only now
    finally:
        if st is not None:
            st.close()

    # -- the table -------------------------------------------------------------
    records = []
    for i in range(n):
        rec: dict[str, Any] = dict(params[i])
        if seeds[i] is not None:
            rec["seed"] = seeds[i]
        res, err = results[i]
        res = res or {}
        if columns is not None:
            res = {c: res.get(c) for c in columns}
        rec.update({k: v for k, v in res.items() if k not in rec})
        if err is not None:
            rec["error"] = err
        records.append(rec)
    if columns is not None:
        for c in columns:
            if all(results[i][0] is not None and c not in (results[i][0] or {}) for i in range(n)):
                raise ValueError(f"columns: unknown result field {c!r}")
    cols: list[str] | None = None
    if any("error" in r for r in records):
        cols = []
        for rec in records:
            cols.extend(c for c in rec if c not in cols and c != "error")
        cols.append("error")
    return table_from_records(records, title=title, table_cls=Table, columns=cols)


def _grid_hash(grid: Any, replications: int | None, keys: Sequence[str] | None = None) -> str:
    """Fingerprint of the grid: its axes for a mapping (cheap), else the point keys in order."""
    if isinstance(grid, Mapping):
        axes = [[str(name), np.atleast_1d(np.asarray(v)).tolist()] for name, v in grid.items()]
        text = _canonical({"axes": axes, "replications": replications})
    else:
        assert keys is not None
        text = "\n".join(keys)
    return hashlib.sha256(text.encode()).hexdigest()


def _check_writable(st: SweepStore, have: int, missing: int) -> None:
    if st.readonly:
        raise ValueError(
            f"store {st.path!r} is read-only (its file, directory or medium cannot be written): "
            f"{have} finished point(s) were read from it, but {missing} point(s) still need "
            f"computing and cannot be recorded. Copy the store to a writable place, or use "
            f"another store file (or none).")


def _open_sweep(st: SweepStore, on_mismatch: str, fn_name: str, context: str, grid_hash: str,
                n_points: int, names: list[str], entropy: int | None,
                overlap: Callable[[], tuple[int, int]]) -> None:
    """Check the store against this sweep and prepare it (description, staged restart).

    ``overlap()`` gives (finished points not in the new grid, new points not
    finished) for the mismatch message.
    """
    meta = st.meta()
    now = time.strftime("%Y-%m-%dT%H:%M:%S")
    new_meta = {"fn": fn_name, "context": context, "grid": grid_hash, "n_points": n_points,
                "params": names, "seed": entropy, "version": __version__,
                "created": meta.get("created", now)}
    if not meta:
        if st.count():
            raise StoreMismatchError(f"store {st.path!r} holds points but no sweep description")
        st.write_meta(new_meta)
        return
    problems = []
    if meta.get("version") != __version__:
        problems.append(f"library version: store {meta.get('version')}, now {__version__}")
    if meta.get("context") != context:
        what = "function" if meta.get("fn") != fn_name else "fixed arguments or seed"
        detail = f" ({meta.get('fn')} -> {fn_name})" if meta.get("fn") != fn_name else ""
        problems.append(f"{what} changed{detail}")
    if meta.get("grid") != grid_hash:
        gone, todo = overlap()
        problems.append(f"grid changed: store has {meta.get('n_points')} points over "
                        f"{meta.get('params')}, now {n_points} over {names}; "
                        f"{gone} finished point(s) not in the new grid, "
                        f"{todo} point(s) of the new grid not finished")
    if not problems:
        return
    if on_mismatch == "raise":
        raise StoreMismatchError(
            f"store {st.path!r} was written by a different sweep: " + "; ".join(problems)
            + ". To keep its matching finished points and compute the rest, pass "
              "--on-mismatch reuse (command line) or on_mismatch='reuse' (Python); to replace "
              "them once the new sweep has finished, --on-mismatch restart or "
              "on_mismatch='restart'; or use another store file.")
    if st.readonly:
        raise ValueError(f"store {st.path!r} is read-only (its file, directory or medium cannot "
                         f"be written), so on_mismatch={on_mismatch!r} cannot update it: "
                         + "; ".join(problems) + ". Copy it to a writable place or use another "
                         "store file.")
    if on_mismatch == "restart":
        # compute into the staged tables; the old points stay until the new sweep succeeds.
        # An unfinished restart of this very sweep is resumed.
        staged = st.staged_meta()
        same = bool(staged) and all(staged.get(k) == new_meta[k]
                                    for k in ("fn", "context", "grid", "version"))
        st.stage(None if same else {**new_meta, "created": now})
        return
    st.write_meta(new_meta)  # reuse


def _compute(fn: Callable[..., Any], pending: list[int], keys: list[str],
             params: list[dict[str, Any]], calls: list[dict[str, Any]], seeds: list[int | None],
             results: dict[int, tuple[dict[str, Any] | None, str | None]], *,
             fixed: dict[str, Any], executor: Any, st: SweepStore | None, progress: bool,
             chunk: int | None, vectorized: bool | None, seeded: bool, workers: int | None,
             record_errors: bool, context: str) -> None:
    def commit(idx: list[int], out: list[tuple[dict | None, str | None]], elapsed: float) -> None:
        for i, (row, err) in zip(idx, out):
            results[i] = (row, err)
        if st is not None:
            st.record({"key": keys[i], "idx": i, "params": params[i], "result": row, "error": err,
                       "seed": seeds[i], "context": context, "version": __version__,
                       "elapsed": elapsed} for i, (row, err) in zip(idx, out))

    # -- vectorised or per point? -------------------------------------------
    todo = list(pending)
    if vectorized is None:
        vectorized = False
        if not seeded and len(todo) >= 2:
            vectorized, used = _probe(fn, todo[:2], calls, fixed, commit)
            todo = todo[used:]
    if not todo:
        return
    size = chunk if chunk is not None else (DEFAULT_VECTOR_CHUNK if vectorized else 1)
    tasks = [todo[j:j + size] for j in range(0, len(todo), size)]

    ex, owned = _pick_executor(executor, workers, len(tasks), not vectorized, fn, fixed)

    def note(exc: BaseException, task: list[int]) -> None:
        where_ = params[task[0]] if len(task) == 1 else f"{len(task)} points from {params[task[0]]}"
        if hasattr(exc, "add_note"):
            exc.add_note(f"sweep: while evaluating {_name(fn)} at {where_}")

    # -- run -------------------------------------------------------------------
    def serial() -> Iterator[None]:
        for task in tasks:
            try:
                out, elapsed = _run_task(fn, [calls[i] for i in task], fixed, vectorized,
                                         record_errors)
            except Exception as exc:
                note(exc, task)
                raise
            commit(task, out, elapsed)
            yield None

    def parallel() -> Iterator[None]:
        for task, (out, elapsed) in _parallel(ex, tasks, lambda task: ex.submit(
                _run_task, fn, [calls[i] for i in task], fixed, vectorized, record_errors), note):
            commit(task, out, elapsed)
            yield None

    _drive(serial() if ex is None else parallel(), len(tasks), progress, owned)


def _pick_executor(executor: Any, workers: int | None, ntasks: int, pool_by_default: bool,
                   fn: Any, fixed: Mapping[str, Any], *, fork: bool = False
                   ) -> tuple[Any, Any]:
    """(executor to submit to or None for serial, the pool this sweep owns or None).

    ``fork``: the pool of ``executor="process"`` forks its workers (the bulk
    path shares memory with them).
    """
    owned: Any = None
    ex: Any = None
    where = None
    dask = False
    nworkers = workers or os.cpu_count() or 1
    if executor is None:
        executor = "process" if pool_by_default and ntasks > 1 and nworkers > 1 else "serial"
    if isinstance(executor, str):
        check_choice("executor", executor, ("serial", "process", "thread"))
        if executor == "process":
            where = "a process pool"
        elif executor == "thread":
            from concurrent.futures import ThreadPoolExecutor
            owned = ex = ThreadPoolExecutor(max_workers=nworkers)
    elif _is_dask_client(executor):
        ex = executor.get_executor(pure=False)
        where, dask = "a dask.distributed cluster", True
    else:
        from concurrent.futures import Executor, ProcessPoolExecutor
        if not isinstance(executor, Executor):
            raise ValueError(f"executor must be None, 'serial', 'process', 'thread', a "
                             f"concurrent.futures.Executor or a distributed.Client; "
                             f"got {executor!r}")
        ex = executor
        if _is_dask_executor(executor):
            where, dask = "a dask.distributed cluster", True
        elif isinstance(executor, ProcessPoolExecutor):
            where = "a process pool"
    if where is not None:
        try:
            _check_picklable((fn, fixed), fn, where, dask)
        except BaseException:
            if owned is not None:
                owned.shutdown(wait=False)
            raise
    if executor == "process":
        from concurrent.futures import ProcessPoolExecutor
        if fork:
            import multiprocessing
            owned = ex = ProcessPoolExecutor(max_workers=min(nworkers, ntasks),
                                             mp_context=multiprocessing.get_context("fork"))
        else:
            owned = ex = ProcessPoolExecutor(max_workers=min(nworkers, ntasks))
    return ex, owned


def _parallel(ex: Any, tasks: Sequence[Any], submit: Callable[[Any], Any],
              note: Callable[[BaseException, Any], None]) -> Iterator[tuple[Any, Any]]:
    """(task, result) as tasks finish, at most 4 per worker in flight."""
    from concurrent.futures import FIRST_COMPLETED, wait
    limit = max(2, 4 * _executor_workers(ex))
    queue = iter(tasks)
    inflight: dict[Any, Any] = {}
    try:
        while True:
            while len(inflight) < limit:
                task = next(queue, None)
                if task is None:
                    break
                inflight[submit(task)] = task
            if not inflight:
                return
            finished, _ = wait(list(inflight), return_when=FIRST_COMPLETED)
            for fut in finished:
                task = inflight.pop(fut)
                try:
                    out = fut.result()
                except Exception as exc:
                    note(exc, task)
                    raise
                yield task, out
    finally:
        for fut in inflight:
            fut.cancel()


def _drive(runner: Iterator[None], total: int, progress: bool, owned: Any) -> None:
    """Run ``runner`` to the end under a progress bar; shut down the owned pool."""
    from .progress import progress as progress_bar
    try:
        for _ in progress_bar(runner, total=total, desc="sweep",
                              enable=None if progress else False):
            pass
    except BaseException:
        if owned is not None:  # do not wait for running tasks on an error or Ctrl-C
            owned.shutdown(wait=False, cancel_futures=True)
            owned = None
        raise
    finally:
        if owned is not None:
            owned.shutdown(wait=True)


def _probe(fn: Callable[..., Any], idx: list[int], calls: list[dict[str, Any]],
           fixed: Mapping[str, Any], commit: Callable[..., None]) -> tuple[bool, int]:
    """Is ``fn`` vectorised?  Returns (answer, number of points of ``idx`` committed).

    ``fn`` is called with the points ``idx`` as arrays; if that works, the
    first point is also computed alone and must agree.  The points computed
    on the way are committed, so the probe wastes no work.
    """
    start = time.perf_counter()
    try:
        out, _ = _run_task(fn, [calls[i] for i in idx], fixed, True, False)
    except Exception:
        return False, 0
    start1 = time.perf_counter()
    try:
        first = _flatten_point(fn(**calls[idx[0]], **fixed))
    except Exception:
        return False, 0
    if not _same_row(out[0][0] or {}, first):
        commit(idx[:1], [(first, None)], time.perf_counter() - start1)
        return False, 1
    commit(idx, out, start1 - start)
    return True, len(idx)


# ---------------------------------------------------------------------------
# the bulk path: vectorised functions over a cartesian grid, chunks as arrays
# ---------------------------------------------------------------------------
def _bulk_axes(grid: Mapping[str, Any]) -> dict[str, np.ndarray] | None:
    """The grid's axes as 1-D numeric, boolean or text arrays (None: use the per-point path).

    Raises for an empty grid, an empty axis, a non-finite number or a value
    listed twice (which would make a point appear twice).
    """
    if not grid:
        raise ValueError("grid: needs at least one parameter")
    axes = {}
    for name, values in grid.items():
        if np.size(values) == 0:
            raise ValueError(f"grid: parameter {name!r} has no values")
        arr = np.atleast_1d(np.asarray(values))
        if arr.ndim != 1 or arr.dtype.kind not in "biufU":
            return None
        if arr.dtype.kind in "iu" and np.any(np.abs(arr.astype(float)) >= 2.0 ** 53):
            return None  # not exactly representable as a float: keep exact per-point keys
        if arr.dtype.kind == "f":
            bad = ~np.isfinite(arr)
            if bad.any():
                raise ValueError(f"grid: parameter {name!r} must be a finite number, string, "
                                 f"bool or None per point; got {arr[bad][0]!r}")
        uniq = np.unique(_canon(arr))
        if uniq.size != arr.size:
            srt = np.sort(_canon(arr))
            dup = srt[:-1][srt[1:] == srt[:-1]][0]
            raise ValueError(f"grid: duplicate point: parameter {name!r} lists {dup!r} more than "
                             f"once (each point must be unique; use replications= for repeated "
                             f"simulation runs)")
        axes[str(name)] = arr
    return axes


def _canon(arr: np.ndarray) -> np.ndarray:
    """Values compared by identity of points: numbers as float64 (-0.0 as 0.0), text, bools."""
    if arr.dtype.kind in "iuf":
        return arr.astype(np.float64) + 0.0
    return arr


def _category(arr: np.ndarray) -> str:
    k = arr.dtype.kind
    return "n" if k in "iuf" else k


def _match(axes: Mapping[str, np.ndarray], stored: Mapping[str, np.ndarray]) -> np.ndarray:
    """For each stored point, its index in the cartesian grid of ``axes`` (-1 where absent).

    Each stored value is looked up in its axis (binary search on the sorted
    axis); the grid index is then the row-major index of the axis indices
    (first axis slowest, as :func:`mva.table.grid_points`).
    """
    m = len(next(iter(stored.values()))) if stored else 0
    if set(axes) != set(stored) or m == 0:
        return np.full(m, -1, dtype=np.int64)
    found = np.ones(m, dtype=bool)
    index = []
    for name, axis in axes.items():
        a, b = _canon(axis), stored[name]
        if _category(axis) != _category(b) or b.dtype.kind == "O":
            return np.full(m, -1, dtype=np.int64)
        b = _canon(b)
        order = np.argsort(a, kind="stable")
        srt = a[order]
        at = np.minimum(np.searchsorted(srt, b), srt.size - 1)
        found &= srt[at] == b
        index.append(order[at])
    pos = np.ravel_multi_index(tuple(index), tuple(a.size for a in axes.values()))
    return np.where(found, pos, -1)


def _chunk_columns(result: Any, k: int) -> dict[str, np.ndarray] | None:
    """A vectorised result for ``k`` points as name -> array of length ``k`` (None: not per point).

    Per-point fields (arrays of shape ``(k,)``) keep their dtype; scalars are
    repeated; other fields are dropped, as in :func:`sweep`.
    """
    fields = _fields(result)
    if fields is None:
        fields = {_RESULT: result}
    out: dict[str, np.ndarray] = {}
    vector = False
    for name, value in fields.items():
        if isinstance(value, (list, tuple)):
            value = np.asarray(value)
        ok, v = _json_scalar(value)
        if ok:
            if v is None:
                col = np.empty(k, dtype=object)
                col[:] = None
            else:
                col = np.full(k, v)
            out[name] = col
            continue
        if isinstance(value, np.ndarray) and value.shape == (k,):
            if value.dtype.kind in "biufU":
                out[name] = value
                vector = True
            elif all(_json_scalar(x)[0] for x in value.tolist()):
                col = np.empty(k, dtype=object)
                col[:] = [_json_scalar(x)[1] for x in value.tolist()]
                out[name] = col
                vector = True
    if not vector and k != 1:
        return None
    return out


def _run_bulk_task(fn: Callable[..., Any], arrays: Mapping[str, np.ndarray],
                   fixed: Mapping[str, Any], record_errors: bool
                   ) -> tuple[dict[str, np.ndarray], float]:
    """One chunk of a vectorised sweep: (result columns, seconds)."""
    start = time.perf_counter()
    k = len(next(iter(arrays.values())))
    try:
        cols = _chunk_columns(fn(**arrays, **fixed), k)
        if cols is None:
            raise ValueError(f"vectorized=True but {_name(fn)} returned no per-point field of "
                             f"length {k} for a chunk of {k} points")
        return cols, time.perf_counter() - start
    except Exception:
        if not record_errors:
            raise
    # isolate the failing points: evaluate this chunk point by point
    calls = [{n: a[i].item() for n, a in arrays.items()} for i in range(k)]
    out, _ = _run_task(fn, calls, fixed, False, True)
    names = list(dict.fromkeys(name for row, _ in out for name in (row or {})))
    cols = {name: _column([(row or {}).get(name) for row, _ in out]) for name in names}
    err = np.empty(k, dtype=object)
    err[:] = [e for _, e in out]
    cols["error"] = err
    return cols, time.perf_counter() - start


#: token -> {"cols": grid input columns, "out": result columns} of a bulk sweep running on
#: a forked pool: the workers inherit this (the result columns in shared memory) at fork
_FORKED: dict[str, dict[str, Any]] = {}


def _part(idx: np.ndarray) -> slice | np.ndarray:
    """Grid positions ``idx`` as a slice when they are one contiguous run."""
    if idx.size and idx[-1] - idx[0] == idx.size - 1:
        return slice(int(idx[0]), int(idx[-1]) + 1)
    return idx


class _GridColumns:
    """The numeric result columns of a whole grid, filled chunk by chunk in place.

    Allocated once the first chunk shows the columns' dtypes; each chunk's
    values are written at their grid positions, so the sweep's table takes
    these arrays as they are instead of concatenating one piece per chunk.
    With ``shared=True`` the arrays live in an anonymous shared memory map
    (:class:`mmap.mmap`) created before a forked pool starts: its workers
    write their chunks in place (:func:`_run_bulk_task_forked`) instead of
    pickling result arrays back through a pipe, which cost the workers and
    the calling process about as much CPU as a fast vectorised model takes
    to compute them.
    """

    def __init__(self, n: int, template: Mapping[str, np.ndarray], *, shared: bool) -> None:
        import mmap

        self.n = n
        self.shared = shared
        self.arrays: dict[str, np.ndarray] = {}
        self.count: dict[str, int] = {}
        for name, col in template.items():
            if col.ndim != 1 or col.dtype.kind not in "biuf":
                continue
            if shared:       # MAP_SHARED | MAP_ANONYMOUS: the same memory in forked children
                buf = mmap.mmap(-1, max(1, n * col.dtype.itemsize))
                arr = np.frombuffer(buf, dtype=col.dtype, count=n)
            else:
                arr = np.empty(n, dtype=col.dtype)
            self.arrays[name] = arr
            self.count[name] = 0

    def put(self, idx: np.ndarray, res: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
        """Write a chunk computed here; its columns become views of the grid arrays."""
        out = dict(res)
        part = _part(idx)
        for name, arr in self.arrays.items():
            col = res.get(name)
            if col is None or col.dtype != arr.dtype or col.shape != (idx.size,):
                continue
            arr[part] = col
            self.count[name] += idx.size
            if isinstance(part, slice):
                out[name] = arr[part]
        return out

    def take(self, idx: np.ndarray, res: Mapping[str, np.ndarray | _Coded | None]
             ) -> dict[str, np.ndarray]:
        """A chunk a worker wrote in place (columns it returned as None; text as codes)."""
        part = _part(idx)
        out: dict[str, np.ndarray] = {}
        for name, col in res.items():
            if col is None:
                self.count[name] += idx.size
                out[name] = self.arrays[name][part]
            elif isinstance(col, _Coded):
                out[name] = col.array()
            else:
                out[name] = col
        return out

    def whole(self) -> dict[str, np.ndarray]:
        """The columns written at every grid position."""
        return {k: a for k, a in self.arrays.items() if self.count[k] == self.n}


class _Coded(NamedTuple):
    """A text column sent from a worker as its distinct values and a small integer code per
    point (labels such as ``bottleneck`` take few values: a byte a point instead of four
    per character through the pipe)."""

    dtype: str
    values: list[str]
    codes: np.ndarray

    def array(self) -> np.ndarray:
        return np.array(self.values, dtype=np.dtype(self.dtype))[self.codes]


def _run_bulk_task_forked(fn: Callable[..., Any], fixed: Mapping[str, Any], record_errors: bool,
                          token: str, at: tuple[int, int] | np.ndarray
                          ) -> tuple[dict[str, np.ndarray | _Coded | None], float]:
    """:func:`_run_bulk_task` in a forked worker: inputs and outputs in inherited memory.

    ``at`` is the chunk's grid positions (``(start, stop)`` of a contiguous
    run, or an index array).  The inputs are sliced from the grid columns the
    worker inherited; the numeric result columns are written into the shared
    grid arrays and returned as ``None``.  A column of another dtype than the
    grid array's (e.g. a chunk whose errors were recorded) is returned as usual, a
    text column as codes (:class:`_Coded`).
    """
    from ._store import _text_codes
    reg = _FORKED.get(token)
    if reg is None:
        raise RuntimeError("sweep: a bulk task reached a worker that was not forked from the "
                           "sweeping process")
    part = slice(*at) if isinstance(at, tuple) else at
    arrays = {k: v[part] for k, v in reg["cols"].items()}
    cols, elapsed = _run_bulk_task(fn, arrays, fixed, record_errors)
    out: dict[str, np.ndarray | _Coded | None] = dict(cols)
    k = len(next(iter(arrays.values())))
    for name, arr in reg["out"].items():
        col = cols.get(name)
        if col is None or col.dtype != arr.dtype or col.shape != (k,):
            continue
        arr[part] = col
        out[name] = None
    for name, col in cols.items():
        if out[name] is not None and col.dtype.kind == "U" and col.shape == (k,):
            values, codes = _text_codes(col)
            if len(values) <= 256:      # labels; other text travels as it is
                out[name] = _Coded(col.dtype.str, values, codes)
    return out, elapsed


def _column(values: list[Any]) -> np.ndarray:
    from ._store import column_array
    return column_array(values)


class _ChunkWriter:
    """Records a vectorised sweep's finished chunks in its store from a background thread.

    SQLite spends most of a chunk's recording in the kernel (copying its
    megabytes into the write-ahead log and, at checkpoints, into the file,
    and waiting for ``fsync``), with the GIL released: done in this thread
    while the sweep computes the next chunk, that time overlaps the
    computation instead of adding to it.  At most ``depth`` chunks wait in
    the queue.  Each chunk is still one transaction, so a killed sweep keeps
    every committed chunk (a chunk still queued is computed again on
    resume).  An error of the writer is raised by the next :meth:`put` or by
    :meth:`close`, which waits until every queued chunk is committed.  The
    sweeping thread does not use the store between the first :meth:`put`
    and :meth:`close`.
    """

    def __init__(self, st: SweepStore, depth: int = 1) -> None:
        import queue
        self.st = st
        self.queue: Any = queue.Queue(maxsize=depth)
        self.error: BaseException | None = None
        self.thread = threading.Thread(target=self._run, name="mva-sweep-store", daemon=True)
        self.thread.start()

    def _run(self) -> None:
        while True:
            item = self.queue.get()
            if item is None:
                return
            if self.error is None:
                try:
                    self.st.record_chunk(*item[0], **item[1])
                except BaseException as exc:   # reported to the sweeping thread
                    self.error = exc

    def put(self, *args: Any, **kw: Any) -> None:
        """Queue one :meth:`SweepStore.record_chunk` call (waits while the queue is full)."""
        if self.error is not None:
            raise self.error
        self.queue.put((args, kw))

    def close(self) -> None:
        """Wait until every queued chunk is committed; raise the writer's error if any."""
        if self.thread.is_alive():
            self.queue.put(None)
            self.thread.join()
        if self.error is not None:
            raise self.error


def _bulk_sweep(fn: Callable[..., Any], axes: dict[str, np.ndarray], *, executor: Any,
                store: Any, progress: bool, chunk: int | None, vectorized: bool | None,
                fixed: dict[str, Any], seed_arg: str, columns: Sequence[str] | None,
                workers: int | None, on_mismatch: str, on_error: str,
                title: str | None) -> Table | None:
    """:func:`sweep` of a vectorised ``fn`` over a cartesian grid without per-point records.

    Returns None when the probe finds ``fn`` is not vectorised (nothing is
    recorded then, and the caller continues point by point).
    """
    names = list(axes)
    cols = grid_points(axes)
    n = len(cols[names[0]])
    fn_name = _name(fn)
    context = hashlib.sha256(_canonical(
        {"fn": fn_name, "fixed": fixed, "seed": None, "seed_arg": seed_arg}).encode()).hexdigest()
    grid_hash = _grid_hash(axes, None)
    record_errors = on_error == "record"

    # -- the store: what is already done -----------------------------------
    pieces: list[tuple[np.ndarray, dict[str, np.ndarray]]] = []  # (grid positions, results)
    done = np.zeros(n, dtype=bool)
    st: SweepStore | None = None
    if store is not None:
        st = SweepStore(store, page_size=BULK_PAGE_SIZE)
        try:
            def overlap() -> tuple[int, int]:
                hit = np.zeros(n, dtype=bool)
                gone = 0
                for params, _ in _stored_pieces(st, None):  # type: ignore[arg-type]
                    pos = _match(axes, params)
                    gone += int(np.count_nonzero(pos < 0))
                    hit[pos[pos >= 0]] = True
                return gone, int(n - np.count_nonzero(hit))
            _open_sweep(st, on_mismatch, fn_name, context, grid_hash, n, names, None, overlap)
            res: dict[str, np.ndarray] | None
            for params, res in _stored_pieces(st, context):
                pos = _match(axes, params)
                keep = pos >= 0
                if keep.any():
                    pieces.append((pos[keep], {k: v[keep] for k, v in res.items()}))
                    done[pos[keep]] = True
        except BaseException:
            st.close()
            raise

    grid_out: _GridColumns | None = None
    writer: _ChunkWriter | None = None
    # a pool of this sweep is forked (where fork exists): the workers then read their inputs
    # from, and write their numeric results into, memory they share with this process
    fork = executor == "process" and sys.platform.startswith("linux")
    token = f"{os.getpid()}-{id(cols)}-{time.perf_counter_ns()}"
    try:
        pending = np.flatnonzero(~done)
        if pending.size and st is not None:
            _check_writable(st, n - int(pending.size), int(pending.size))

        def record(*args: Any, **kw: Any) -> None:
            nonlocal writer
            assert st is not None
            if writer is None:
                writer = _ChunkWriter(st)
            writer.put(*args, **kw)

        def commit(idx: np.ndarray, res: dict[str, np.ndarray], elapsed: float) -> None:
            nonlocal grid_out
            if grid_out is None:         # the first chunk: the columns' dtypes are known
                grid_out = _GridColumns(n, res, shared=fork)
                pieces[:] = [(i, grid_out.put(i, r)) for i, r in pieces]
            res = grid_out.put(idx, res)
            pieces.append((idx, res))
            if st is not None:
                part = _part(idx)        # a contiguous chunk: views of the grid, no copies
                record({k: cols[k][part] for k in names}, res, context=context,
                       version=__version__, elapsed=elapsed, axes=axes, positions=part)

        # -- vectorised? (unless told) ---------------------------------------
        if vectorized is None and pending.size:
            if pending.size < 2:
                if st is not None:
                    st.close()
                    st = None
                return None
            idx = pending[:2]
            arrays = {k: cols[k][idx] for k in names}
            start = time.perf_counter()
            try:
                res, _ = _run_bulk_task(fn, arrays, fixed, False)
                first = _flatten_point(fn(**{k: a[0].item() for k, a in arrays.items()}, **fixed))
            except Exception:
                res = None
            if res is None or not _same_row({k: _json_scalar(v[0])[1] for k, v in res.items()},
                                            first):
                if st is not None:
                    st.close()
                    st = None
                return None
            commit(idx, res, time.perf_counter() - start)
            pending = pending[2:]

        # -- compute the rest in chunks ------------------------------------
        if pending.size:
            size = chunk if chunk is not None else DEFAULT_VECTOR_CHUNK
            head = np.empty(0, dtype=pending.dtype)
            if chunk is None and executor == "process":
                # a pool gets about four chunks per worker (they finish together), and
                # the chunk this process computes first to warm its caches before the
                # workers fork is small, so that they start soon
                nw = workers or os.cpu_count() or 1
                size = max(1024, min(size, -(-pending.size // (4 * nw))))
                head, pending = pending[:min(size, 1024)], pending[min(size, 1024):]
            tasks = [pending[j:j + size] for j in range(0, pending.size, size)]
            if head.size:
                tasks.insert(0, head)

            def task_arrays(idx: np.ndarray) -> dict[str, np.ndarray]:
                if idx[-1] - idx[0] == idx.size - 1:  # contiguous: views, no copy
                    return {k: cols[k][idx[0]:idx[-1] + 1] for k in names}
                return {k: cols[k][idx] for k in names}

            def note(exc: BaseException, idx: np.ndarray) -> None:
                first = {k: cols[k][idx[0]].item() for k in names}
                where = first if idx.size == 1 else f"{idx.size} points from {first}"
                if hasattr(exc, "add_note"):
                    exc.add_note(f"sweep: while evaluating {fn_name} at {where}")

            def serial() -> Iterator[None]:
                for idx in tasks:
                    try:
                        res, elapsed = _run_bulk_task(fn, task_arrays(idx), fixed, record_errors)
                    except Exception as exc:
                        note(exc, idx)
                        raise
                    commit(idx, res, elapsed)
                    yield None

            def at(idx: np.ndarray) -> tuple[int, int] | np.ndarray:
                part = _part(idx)
                return (part.start, part.stop) if isinstance(part, slice) else idx

            def parallel() -> Iterator[None]:
                if not fork:
                    for idx, (res, elapsed) in _parallel(ex, tasks, lambda idx: ex.submit(
                            _run_bulk_task, fn, task_arrays(idx), fixed, record_errors), note):
                        commit(idx, res, elapsed)
                        yield None
                    return
                for idx, (out, elapsed) in _parallel(ex, tasks, lambda idx: ex.submit(
                        _run_bulk_task_forked, fn, fixed, record_errors, token, at(idx)),
                        note):
                    commit_taken(idx, out, elapsed)
                    yield None

            def commit_taken(idx: np.ndarray, out: dict[str, np.ndarray | None],
                             elapsed: float) -> None:
                assert grid_out is not None
                res = grid_out.take(idx, out)
                pieces.append((idx, res))
                if st is not None:
                    part = _part(idx)
                    record({k: cols[k][part] for k in names}, res, context=context,
                           version=__version__, elapsed=elapsed, axes=axes, positions=part)

            if executor == "process" and len(tasks) > 1:
                # the first chunk here: imports and first-call caches (SymPy lambdify, numba)
                # are then warm in this process, and the forked workers inherit them
                idx = tasks.pop(0)
                try:
                    res, elapsed = _run_bulk_task(fn, task_arrays(idx), fixed, record_errors)
                except Exception as exc:
                    note(exc, idx)
                    raise
                commit(idx, res, elapsed)
            else:
                fork = False
            if fork:
                assert grid_out is not None
                _FORKED[token] = {"cols": {k: cols[k] for k in names}, "out": grid_out.arrays}
            if fork and writer is not None:
                # no thread of ours while the pool forks (a thread holding a lock at fork
                # time would leave it held in the children); the next chunk starts another
                w, writer = writer, None
                w.close()
            ex, owned = _pick_executor(executor, workers, len(tasks), False, fn, fixed,
                                       fork=fork)
            _drive(serial() if ex is None else parallel(), len(tasks), progress, owned)
        if writer is not None:
            w, writer = writer, None
            w.close()     # every chunk committed (or the writer's error raised)
        if st is not None and not st.readonly:
            st.promote()  # a restart's staged points replace the old ones only now
        return _assemble(names, cols, n, pieces, columns, title,
                         whole={} if grid_out is None else grid_out.whole())
    finally:
        _FORKED.pop(token, None)
        try:
            if writer is not None:   # an error in the sweep: commit what was computed
                writer.close()
        finally:
            if st is not None:
                st.close()


def _stored_pieces(st: SweepStore, context: str | None
                   ) -> Iterator[tuple[dict[str, np.ndarray], dict[str, np.ndarray]]]:
    """(parameter columns, result columns) of the stored chunks and per-point rows."""
    for c in st.chunk_arrays(context):
        yield c["params"], c["result"]
    recs = st._point_rows(context)
    if recs:
        pnames = list(dict.fromkeys(k for r in recs for k in r["params"]))
        rnames = list(dict.fromkeys(k for r in recs for k in (r["result"] or {})))
        params = {k: _column([r["params"].get(k) for r in recs]) for k in pnames}
        res = {k: _column([(r["result"] or {}).get(k) for r in recs]) for k in rnames}
        if any(r["error"] is not None for r in recs):
            err = np.empty(len(recs), dtype=object)
            err[:] = [r["error"] for r in recs]
            res["error"] = err
        yield params, res


def _assemble(names: list[str], cols: dict[str, np.ndarray], n: int,
              pieces: list[tuple[np.ndarray, dict[str, np.ndarray]]],
              columns: Sequence[str] | None, title: str | None,
              whole: Mapping[str, np.ndarray] | None = None) -> Table:
    """The sweep's table: the grid columns, then every result field scattered into grid order.

    ``whole`` holds result columns already in grid order, written at every
    position by the pieces (:class:`_GridColumns`): taken as they are.
    """
    fields = list(dict.fromkeys(k for _, res in pieces for k in res if k not in names))
    has_error = "error" in fields and any(
        any(x is not None for x in res["error"].tolist()) for _, res in pieces if "error" in res)
    fields = [f for f in fields if f != "error"]
    if columns is not None:
        for c in columns:
            if c not in fields and c not in names and not has_error:
                raise ValueError(f"columns: unknown result field {c!r}")
        fields = [c for c in columns if c not in names]
    data: dict[str, np.ndarray] = {k: cols[k] for k in names}
    pieces = sorted(pieces, key=lambda p: int(p[0][0]) if len(p[0]) else -1)
    # the usual case (no store or a store filled in grid order): contiguous pieces in order
    in_order = sum(len(p[0]) for p in pieces) == n and all(
        len(idx) == 0 or (idx[0] == at and idx[-1] == at + len(idx) - 1)
        for idx, at in zip((p[0] for p in pieces), np.cumsum([0] + [len(p[0]) for p in pieces])))
    for f in fields + (["error"] if has_error else []):
        if whole and f in whole:
            data[f] = whole[f]
            continue
        parts = [(idx, res.get(f)) for idx, res in pieces]
        if in_order and all(a is not None for _, a in parts) and \
                len({cast(np.ndarray, a).dtype.kind for _, a in parts}) == 1 and \
                cast(np.ndarray, parts[0][1]).dtype.kind != "O":
            data[f] = (np.concatenate([cast(np.ndarray, a) for _, a in parts]) if len(parts) > 1
                       else cast(np.ndarray, parts[0][1]))
        else:
            data[f] = _scatter(n, parts)
    for k, v in data.items():  # text as Python strings, as the per-point path gives
        if v.dtype.kind == "U":
            data[k] = _text_objects(v)
    return Table(columns=tuple(data), data=data, title=title, formats={})


def _text_objects(v: np.ndarray, most: int = 64) -> np.ndarray:
    """``v.astype(object)`` for a text column, each distinct value one shared ``str``.

    Labels (``method``, ``bottleneck``) take few values: each is found with one
    vectorised comparison and written by a mask, instead of one new Python
    string per point (a second per 10^6 points); past ``most`` distinct
    values the rest is converted element by element.
    """
    out = np.empty(v.shape, dtype=object)
    todo = np.ones(v.shape, dtype=bool)
    for _ in range(most if v.size else 0):
        first = int(np.argmax(todo))
        if not todo.flat[first]:
            return out
        value = v.flat[first]
        hit = todo & (v == value)
        out[hit] = str(value)
        todo &= ~hit
    left = np.flatnonzero(todo)
    out.flat[left] = v.flat[left].astype(object)
    return out


def _scatter(n: int, parts: list[tuple[np.ndarray, np.ndarray | None]]) -> np.ndarray:
    present = [a for _, a in parts if a is not None]
    covered = sum(len(idx) for idx, a in parts if a is not None)
    kinds = {a.dtype.kind for a in present}
    if present and "O" not in kinds and (len(kinds) == 1 or kinds <= set("iuf")):
        dtype = np.result_type(*present)
        if covered == n or dtype.kind in "iuf":
            if covered < n:
                dtype = np.result_type(dtype, np.float64)
            out = np.empty(n, dtype=dtype) if covered == n else np.full(n, np.nan, dtype=dtype)
            for idx, a in parts:
                if a is not None:
                    out[idx] = a
            return out
    vals: list[Any] = [None] * n
    for idx, a in parts:
        if a is not None:
            for i, v in zip(idx.tolist(), a.tolist()):
                vals[i] = v
    return _column(vals)
