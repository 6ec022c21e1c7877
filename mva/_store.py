"""SQLite result store for :func:`mva.sweeps.sweep` (private; use :class:`mva.sweeps.SweepStore`).

One file holds one sweep: a ``meta`` table (what sweep wrote it, with which
library version), a ``points`` table with one row per finished point of a
per-point sweep, and a ``chunks`` table with one row per finished chunk of a
vectorised sweep, its parameters and results stored as arrays (``.npy``
format read back with ``allow_pickle=False``) rather than one record per
point.  Writing those bytes is what a store costs a vectorised sweep, so a
chunk keeps few of them (schema 4, :meth:`SweepStore.record_chunk`): grid
positions instead of parameter columns, constant, repeated and derived
(``a * b``, ``a + b``, ``a - b``) result columns as a few words of JSON, text
as integer codes -- each checked to give the column back bit for bit.  Everything
is plain SQL columns, JSON text and NumPy's ``.npy`` format
-- nothing is ever pickled, so opening a store cannot execute code.

Large chunks (schema 5): a chunk whose stored result columns take at least
:data:`SIDE_FILE_BYTES` keeps them as ``.npy`` arrays back to back in a file
of its own in the folder ``<store>-chunks`` (:data:`SIDE_SUFFIX`), and its
row (``extra.__file__``) names the file, its columns and its size.  The file
is written and flushed to disk under the store's write lock before the row is
committed; files of deleted or replaced rows are removed after the deleting
transaction commits, and files no row names (a writer killed between the
file and its row) by the next writer under the lock.  A store is then the
SQLite file and that folder.

Crash safety: the database runs in write-ahead-log mode and every batch of
finished points is written in one transaction, so a process killed at any
moment (``SIGKILL`` included) leaves every committed point intact and no
half-written row.  ``synchronous=NORMAL`` makes commits durable against a
crash of the *process*; an operating-system crash or power cut may lose the
last few commits (never corrupt the file).

Restart without loss: a sweep that replaces a store's contents
(``on_mismatch="restart"``) writes into *staged* tables; only when it has
finished are they swapped in, in one transaction.  Until then the old
points are untouched, and a failed restart resumes its staged points.

Read-only stores (file mode, directory or medium) are opened read-only
(``mode=ro``, or ``immutable=1`` when SQLite cannot even create its
shared-memory file) and can be read back; writing to one raises a
:class:`ValueError` naming the path.
"""

from __future__ import annotations

import io
import json
import os
import secrets
import sqlite3
import time
from typing import Any, Iterable, Mapping, Sequence
from urllib.parse import quote

import numpy as np

__all__ = ["SweepStore", "StoreMismatchError", "FORMAT", "SCHEMA_VERSION"]

#: value of ``meta.format`` identifying a sweep store
FORMAT = "smp-contention-sweep"
#: layout version of the tables below (2 adds ``chunks`` and the staged tables; 3 stores a
#: chunk's constant result columns once, in ``extra``; 4 stores a chunk's parameters as its
#: positions in the grid's axes, text result columns as integer codes, a result column
#: identical to an earlier one once and one equal to a * b, a + b or a - b of two others as
#: that formula; 5 keeps a large chunk's stored result columns in a side file, see
#: :data:`SIDE_FILE_BYTES`).  Stores of 2 to 4 are read as before (a chunk's
#: ``extra`` says how it is encoded); a store of a newer schema is refused with a message.
SCHEMA_VERSION = 5

#: a chunk whose stored (numeric, boolean, code) result columns take at least this many bytes
#: keeps them in a file of its own in the folder ``<store>-chunks`` next to the SQLite file
#: (schema 5), written and flushed to disk before the row naming it is committed: SQLite
#: would copy a chunk's megabytes about five times (into its pages, its write-ahead log and,
#: at a checkpoint, into the file), a side file takes one write
SIDE_FILE_BYTES = 1 << 20
#: suffix of the side-file folder's name (appended to the store's path)
SIDE_SUFFIX = "-chunks"

_POINTS = """(
    key      TEXT PRIMARY KEY,   -- canonical JSON of the point's parameters
    idx      INTEGER NOT NULL,   -- position in the grid that computed it
    params   TEXT NOT NULL,      -- JSON object: parameter name -> value
    result   TEXT,               -- JSON object: result field -> scalar (NULL on error)
    error    TEXT,               -- "ExceptionType: message" when on_error='record'
    seed     INTEGER,            -- per-point seed passed to the function (NULL if unseeded)
    context  TEXT NOT NULL,      -- hash of function, fixed arguments and base seed
    version  TEXT NOT NULL,      -- library version (mva._version.__version__)
    elapsed  REAL,               -- seconds spent computing the task holding this point
    finished REAL NOT NULL       -- UNIX time of the commit
)"""
_CHUNKS = """(
    id       INTEGER PRIMARY KEY,
    n        INTEGER NOT NULL,   -- points in the chunk
    params   BLOB NOT NULL,      -- .npy structured array: one field per parameter; or (schema 4,
                                 -- extra.__grid__) the grid's axes as .npy arrays back to back
                                 -- (+ the chunk's positions when they are not one run)
    result   BLOB NOT NULL,      -- .npy structured array: one field per numeric/bool/text result
                                 -- (schema 4: text as integer codes, see extra.__codes__;
                                 -- schema 5: empty when extra.__file__ names a side file)
    extra    TEXT,               -- JSON object: field -> list of n JSON scalars (other fields),
                                 -- and the encoding keys __constant__, __order__, __grid__,
                                 -- __codes__, __same__, __derived__, __file__
    context  TEXT NOT NULL,
    version  TEXT NOT NULL,
    elapsed  REAL,
    finished REAL NOT NULL
)"""
_META = """(
    name  TEXT PRIMARY KEY,
    value TEXT NOT NULL
)"""
_TABLES = {"meta": _META, "points": _POINTS, "chunks": _CHUNKS}
_STAGED = "staged_"


class StoreMismatchError(ValueError):
    """The store was written by a different sweep (grid, function or library version).

    Raised by :func:`mva.sweeps.sweep` with ``on_mismatch="raise"`` (the
    default).  The message says what differs and how to proceed.
    """


def _npz(arrays: Mapping[str, np.ndarray]) -> bytearray:
    """Columns of one length as the bytes of one ``.npy`` structured array (no pickling).

    The columns are packed straight into the buffer after the ``.npy``
    header (what ``np.save`` writes, without its two further copies of a
    chunk's megabytes); ``np.load`` reads it back.
    """
    from numpy.lib import format as npy

    n = len(next(iter(arrays.values()))) if arrays else 0
    dtype = np.dtype([(k, v.dtype) for k, v in arrays.items()])
    head = io.BytesIO()
    npy.write_array_header_1_0(head, {"descr": npy.dtype_to_descr(dtype),
                                      "fortran_order": False, "shape": (n,)})
    header = head.getvalue()
    buf = bytearray(len(header) + n * dtype.itemsize)
    buf[:len(header)] = header
    rec = np.ndarray((n,), dtype=dtype, buffer=buf, offset=len(header))
    for k, v in arrays.items():
        rec[k] = v
    return buf


#: key of a chunk's ``extra`` JSON listing its constant columns (schema 3)
_CONSTANT = "__constant__"
#: key of a chunk's ``extra`` JSON giving the result columns' order (schema 3)
_ORDER = "__order__"


def _constant(v: np.ndarray) -> list[str] | None:
    """``[dtype, value]`` when every element of ``v`` is the same, bit for bit; else None.

    Numbers are kept as the hex of their bytes (so ``-0.0`` and NaN payloads
    survive), text as itself.
    """
    if v.ndim != 1 or v.size < 2 or v.dtype.kind not in "biufU":
        return None
    if v.dtype.kind == "U":
        if v[-1] != v[0] or v[v.size // 2] != v[0]:
            return None
        return [v.dtype.str, str(v[0])] if bool(np.all(v == v[0])) else None
    if v.dtype.itemsize not in (1, 2, 4, 8):
        return None
    bits = v.view(f"u{v.dtype.itemsize}")
    if bits[-1] != bits[0] or bits[v.size // 2] != bits[0]:     # most columns: no full pass
        return None
    return [v.dtype.str, v[:1].tobytes().hex()] if bool(np.all(bits == bits[0])) else None


def _from_constant(spec: Sequence[str], n: int) -> np.ndarray:
    dtype = np.dtype(spec[0])
    if dtype.kind == "U":
        return np.full(n, spec[1], dtype=dtype)
    return np.full(n, np.frombuffer(bytes.fromhex(spec[1]), dtype=dtype)[0], dtype=dtype)


#: key of a chunk's ``extra`` JSON: its parameters are grid positions (schema 4)
_GRID = "__grid__"
#: key of a chunk's ``extra`` JSON: text columns stored as integer codes (schema 4)
_CODES = "__codes__"
#: key of a chunk's ``extra`` JSON: columns identical to an earlier column (schema 4)
_SAME = "__same__"
#: key of a chunk's ``extra`` JSON: float columns equal to ``a op b`` of two stored ones (schema 4)
_DERIVED = "__derived__"
#: key of a chunk's ``extra`` JSON: its stored result columns are in a side file (schema 5):
#: ``{"name": file name in the side folder, "columns": [names], "bytes": file size}``
_FILE = "__file__"
#: the operations a derived column may be recomputed by (IEEE 754: correctly rounded,
#: the same bits on every platform for finite normal operands)
_OPS = {"*": np.multiply, "+": np.add, "-": np.subtract}


def _derived(plain: Mapping[str, np.ndarray], samples: int = 8) -> dict[str, list[str]]:
    """Float64 columns equal, bit for bit, to ``a * b``, ``a + b`` or ``a - b`` of two others.

    Returns name -> ``[op, a, b]`` (``a`` and ``b`` stay stored; a derived
    column is never an operand).  Candidates are found on a few sampled rows
    for every pair at once, then checked on the whole column.  Columns with a
    NaN or a subnormal value (operands or result) are left alone: their bits
    could depend on the platform's NaN payloads or flush-to-zero mode.
    """
    names = [k for k, v in plain.items() if v.dtype == np.float64 and v.ndim == 1]
    n = len(plain[names[0]]) if names else 0
    if len(names) < 3 or n < samples:
        return {}
    tiny = np.finfo(np.float64).tiny
    ok = []
    for k in names:
        a = np.abs(plain[k])
        if not (np.isnan(a).any() or ((a < tiny) & (a != 0)).any()):
            ok.append(k)
    if len(ok) < 3:
        return {}
    at = np.linspace(0, n - 1, samples).astype(np.intp)
    S = np.stack([plain[k][at] for k in ok])                    # (m, samples)
    bits = S.view(np.uint64)
    cands: dict[int, list[tuple[str, int, int]]] = {}
    with np.errstate(all="ignore"):
        for op, f in _OPS.items():
            T = f(S[:, None, :], S[None, :, :]).view(np.uint64)  # (m, m, samples)
            hit = (T[None] == bits[:, None, None, :]).all(-1)    # (c, a, b)
            for c, a, b in zip(*np.nonzero(hit)):
                if c != a and c != b:
                    cands.setdefault(int(c), []).append((op, int(a), int(b)))
    out: dict[str, list[str]] = {}
    used: set[int] = set()
    for c in sorted(cands):
        if c in used:
            continue
        for op, a, b in cands[c]:
            if ok[a] in out or ok[b] in out:
                continue
            with np.errstate(all="ignore"):
                full = _OPS[op](plain[ok[a]], plain[ok[b]])
            if np.array_equal(full.view(np.uint64), np.ascontiguousarray(plain[ok[c]]).view(
                    np.uint64)):
                out[ok[c]] = [op, ok[a], ok[b]]
                used.update((a, b))
                break
    return out


def _pack(arrays: Sequence[np.ndarray]) -> bytes:
    """Arrays of any lengths as ``.npy`` files back to back (no pickling)."""
    from numpy.lib import format as npy
    buf = io.BytesIO()
    for a in arrays:
        npy.write_array(buf, np.ascontiguousarray(a), allow_pickle=False)
    return buf.getvalue()


def _unpack(blob: bytes, k: int) -> list[np.ndarray]:
    from numpy.lib import format as npy
    f = io.BytesIO(blob)
    return [npy.read_array(f, allow_pickle=False) for _ in range(k)]


def _side_write(folder: str, arrays: Mapping[str, np.ndarray]) -> tuple[str, int]:
    """Write ``arrays`` as ``.npy`` arrays back to back into a new file of ``folder``.

    Each array goes from its own memory to the file (``ndarray.tofile``, no
    packing copy); the file is flushed to disk (``fsync``, and its folder's
    entry) before this returns, so a row committed afterwards never names a
    file an operating-system crash could leave short.  Returns (file name,
    bytes).
    """
    from numpy.lib import format as npy
    name = f"chunk-{secrets.token_hex(8)}.npy"
    path = os.path.join(folder, name)
    try:
        with open(path, "xb") as f:
            for a in arrays.values():
                npy.write_array(f, np.ascontiguousarray(a), allow_pickle=False)
            f.flush()
            os.fsync(f.fileno())
            size = f.tell()
        _fsync_folder(folder)
    except BaseException:
        try:
            os.unlink(path)
        except OSError:
            pass
        raise
    return name, size


def _fsync_folder(folder: str) -> None:
    """Flush a folder's entries to disk (POSIX; a no-op where folders cannot be opened)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _side_read(folder: str, spec: Mapping[str, Any], store: str) -> dict[str, np.ndarray]:
    """The result columns a chunk keeps in its side file (schema 5)."""
    from numpy.lib import format as npy
    path = os.path.join(folder, str(spec["name"]))
    names = list(spec["columns"])
    try:
        with open(path, "rb") as f:
            if os.fstat(f.fileno()).st_size != int(spec["bytes"]):
                raise ValueError(f"store {store!r}: chunk file {path!r} has "
                                 f"{os.fstat(f.fileno()).st_size} bytes, its row says "
                                 f"{spec['bytes']} (was it modified?)")
            return {k: npy.read_array(f, allow_pickle=False) for k in names}
    except FileNotFoundError:
        raise ValueError(
            f"store {store!r}: chunk file {path!r} is missing. A store of a vectorised sweep "
            f"keeps its large chunks in the folder {os.path.basename(folder)!r} next to the "
            f"SQLite file: copy or move the two together.") from None


def _uint(top: int) -> type:
    """The smallest unsigned integer type holding ``0 .. top``."""
    for t in (np.uint8, np.uint16, np.uint32):
        if top <= np.iinfo(t).max:
            return t
    return np.uint64


def _bits(v: np.ndarray) -> np.ndarray:
    """``v``'s elements as unsigned integers of their size (NaN payloads, -0.0 kept apart)."""
    v = np.ascontiguousarray(v)
    return v.view(f"u{v.dtype.itemsize}") if v.dtype.itemsize in (1, 2, 4, 8) else v


def _identical(a: np.ndarray, b: np.ndarray) -> bool:
    """``a`` and ``b`` equal bit for bit (same dtype and shape)."""
    if a.dtype != b.dtype or a.shape != b.shape or a.dtype.kind not in "biuf":
        return False
    x, y = _bits(a), _bits(b)
    n = x.size
    if n and (x[0] != y[0] or x[n // 2] != y[n // 2] or x[-1] != y[-1]):  # most pairs: no pass
        return False
    return bool(np.array_equal(x, y))


def _text_codes(v: np.ndarray, most: int = 16) -> tuple[list[str], np.ndarray]:
    """A text column as (distinct values, integer code per element): ``values[codes] == v``.

    Labels take few values: each is found with one vectorised comparison;
    past ``most`` distinct values the rest goes through :func:`numpy.unique`.
    """
    codes = np.zeros(v.size, dtype=np.uint8)
    todo = np.ones(v.size, dtype=bool)
    values: list[str] = []
    for j in range(most):
        first = int(np.argmax(todo))
        if not todo[first]:
            return values, codes
        hit = todo & (v == v[first])
        codes[hit] = j
        values.append(str(v[first]))
        todo &= ~hit
    if not todo.any():
        return values, codes
    uniq, inv = np.unique(v, return_inverse=True)
    return [str(x) for x in uniq], inv.reshape(-1).astype(_uint(uniq.size - 1))


def _grid_params(params: Mapping[str, np.ndarray], axes: Mapping[str, np.ndarray],
                 positions: slice | np.ndarray) -> tuple[bytes, dict[str, Any]] | None:
    """Parameters as the grid's axes and positions, when that gives them back bit for bit.

    Returns (blob, ``extra[__grid__]``) or None (store the columns themselves).
    """
    names = list(params)
    if names != list(axes) or not names:
        return None
    ax = [np.asarray(axes[k]) for k in names]
    if any(a.ndim != 1 or a.dtype.kind not in "biufU" for a in ax):
        return None
    shape = tuple(a.size for a in ax)
    total = int(np.prod(shape))
    if isinstance(positions, slice):
        start, stop = int(positions.start), int(positions.stop)
        pos = np.arange(start, stop)
        spec: dict[str, Any] = {"names": names, "start": start, "stop": stop}
        arrays = ax
    else:
        pos = np.asarray(positions)
        spec = {"names": names, "positions": True}
        arrays = ax + [pos.astype(_uint(max(total - 1, 0)))]
    if pos.size and (pos.min() < 0 or pos.max() >= total):
        return None
    where = np.unravel_index(pos, shape)
    for a, i, k in zip(ax, where, names):
        got = a[i]
        v = np.asarray(params[k])
        if got.dtype != v.dtype or got.shape != v.shape or not (
                np.array_equal(_bits(got), _bits(v)) if got.dtype.kind != "U"
                else np.array_equal(got, v)):
            return None
    return _pack(arrays), spec


def _decode_params(n: int, blob: bytes, spec: Mapping[str, Any] | None) -> dict[str, np.ndarray]:
    if spec is None:
        return _unnpz(blob)
    names = list(spec["names"])
    arrays = _unpack(blob, len(names) + (1 if spec.get("positions") else 0))
    ax = arrays[:len(names)]
    pos = arrays[-1].astype(np.int64) if spec.get("positions") else \
        np.arange(int(spec["start"]), int(spec["stop"]))
    where = np.unravel_index(pos, tuple(a.size for a in ax))
    return {k: a[i] for k, a, i in zip(names, ax, where)}


def _decode_chunk(n: int, pblob: bytes, rblob: bytes, extra: str | None,
                  side: tuple[str, str] | None = None
                  ) -> tuple[dict[str, np.ndarray], dict[str, Any]]:
    """A stored chunk's (parameter columns, result columns), in any schema (2 to 5).

    Result columns: the ``.npy`` array (or the side file, read from the
    folder ``side[0]`` of the store ``side[1]``), text codes, repeated and
    constant columns and JSON columns, in their order; JSON columns come back
    as lists (the caller makes arrays of them).
    """
    ex = json.loads(extra) if extra else {}
    params = _decode_params(n, pblob, ex.pop(_GRID, None))
    file = ex.pop(_FILE, None)
    res: dict[str, Any]
    if file is not None:
        if side is None:
            raise ValueError("a chunk kept in a side file needs its store's folder")
        res = _side_read(side[0], file, side[1])
    else:
        res = dict(_unnpz(rblob))
    order = ex.pop(_ORDER, None)
    for k, (dtype, values) in ex.pop(_CODES, {}).items():
        res[k] = np.array(values, dtype=np.dtype(dtype))[res[k]]
    # derived columns first: their operands are stored columns, and a column identical to a
    # derived one is stored as that one's name (f_twin -> f with f = g - h)
    for k, (op, a, b) in ex.pop(_DERIVED, {}).items():
        with np.errstate(all="ignore"):
            res[k] = _OPS[op](res[a], res[b])
    for k, other in ex.pop(_SAME, {}).items():
        res[k] = res[other].copy()
    for k, spec in ex.pop(_CONSTANT, {}).items():
        res[k] = _from_constant(spec, n)
    res.update(ex)
    if order is not None:
        res = {k: res[k] for k in order if k in res}
    return params, res


def _unnpz(blob: bytes) -> dict[str, np.ndarray]:
    rec = np.load(io.BytesIO(blob), allow_pickle=False)
    names = rec.dtype.names or ()
    return {k: rec[k] for k in names}


class SweepStore:
    """A sweep's SQLite result file (per-point rows and per-chunk arrays).

    Parameters
    ----------
    path : str or os.PathLike
        The SQLite file; created when absent.
    timeout : float
        Seconds to wait for a lock held by another connection.
    readonly : bool, optional
        Open without writing.  Default: read-only exactly when the file
        exists and this process cannot write it or its directory (a file of
        mode 0444, a read-only medium).
    page_size : int, optional
        SQLite page size in bytes (a power of two, 512 to 65536) of a file
        created now; an existing file keeps its own.  Default: SQLite's
        (4096).  Vectorised sweeps create their stores with 65536: a chunk's
        arrays (megabytes) then take 16 times fewer overflow pages, which
        halves the CPU and wall time of writing them; small pages suit
        per-point stores, whose every commit rewrites a few pages.

    Attributes
    ----------
    readonly : bool
        Whether the store was opened read-only; writing raises a
        :class:`ValueError` naming the path.

    Notes
    -----
    The store never unpickles anything: parameters and results are JSON
    text or ``.npy`` structured arrays loaded with ``allow_pickle=False``, so a store
    received from someone else is safe to open.

    Examples
    --------
    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "demo.sqlite")
    >>> with SweepStore(path) as st:
    ...     st.count()
    0
    """

    def __init__(self, path: str | os.PathLike[str], *, timeout: float = 60.0,
                 readonly: bool | None = None, page_size: int | None = None) -> None:
        self.path = os.fspath(path)
        exists = os.path.exists(self.path)
        if page_size is not None and (isinstance(page_size, bool) or not isinstance(
                page_size, int) or page_size < 512 or page_size > 65536
                or page_size & (page_size - 1)):
            raise ValueError(f"page_size={page_size!r}: must be a power of two from 512 to "
                             f"65536 bytes")
        if readonly is None:
            folder = os.path.dirname(os.path.abspath(self.path))
            readonly = exists and not (os.access(self.path, os.W_OK)
                                       and os.access(folder, os.W_OK | os.X_OK))
        self.readonly = bool(readonly)
        self._prefix = ""
        self._side = self.path + SIDE_SUFFIX      # the folder of large chunks' side files
        self._swept = False                       # orphaned side files removed this session
        self._conn: sqlite3.Connection | None = None
        if self.readonly and not exists:
            raise ValueError(f"store: {self.path!r} does not exist (read-only stores are only "
                             f"read)")
        try:
            if self.readonly:
                self._conn = self._open_readonly(timeout)
            else:
                # one thread at a time, but not always the creating one: a vectorised sweep
                # records its chunks from a writer thread (mva.sweeps._ChunkWriter)
                self._conn = sqlite3.connect(self.path, timeout=timeout, isolation_level=None,
                                             check_same_thread=False)
                if page_size is not None and not exists:
                    self._conn.execute(f"PRAGMA page_size={page_size}")   # before WAL mode
                self._conn.execute("PRAGMA journal_mode=WAL")
                self._conn.execute("PRAGMA synchronous=NORMAL")
                for prefix in ("", _STAGED):
                    for name, cols in _TABLES.items():
                        self._conn.execute(f"CREATE TABLE IF NOT EXISTS {prefix}{name} {cols}")
            self._tables = {n for (n,) in self._conn.execute(
                "SELECT name FROM sqlite_master WHERE type='table'")}
        except sqlite3.DatabaseError as exc:
            if self._conn is not None:
                self._conn.close()
            if isinstance(exc, sqlite3.OperationalError) and not exists:
                raise ValueError(f"store: cannot create {self.path!r} ({exc}); is its directory "
                                 f"writable?") from None
            if "readonly" in str(exc) or "read-only" in str(exc):
                raise ValueError(f"store: {self.path!r} is read-only ({exc})") from None
            raise ValueError(f"store: {self.path!r} is not a usable SQLite sweep store "
                             f"({exc})") from None
        fmt = self.meta().get("format")
        if fmt is not None and fmt != FORMAT:
            self.close()
            raise ValueError(f"store: {self.path!r} is not a sweep store (format {fmt!r})")
        schema = self.meta().get("schema")
        if isinstance(schema, int) and schema > SCHEMA_VERSION:
            self.close()
            raise ValueError(f"store: {self.path!r} has layout schema {schema}, written by a "
                             f"newer version of this library; this one reads schemas up to "
                             f"{SCHEMA_VERSION}. Read it with that version, or use another "
                             f"store file (the store was left untouched).")

    def _open_readonly(self, timeout: float) -> sqlite3.Connection:
        uri = "file:" + quote(os.path.abspath(self.path))
        last: Exception | None = None
        # mode=ro reads a store whose directory is writable; immutable=1 also one on a
        # read-only medium (SQLite then needs no lock and no shared-memory file)
        for opts in ("?mode=ro", "?mode=ro&immutable=1"):
            try:
                conn = sqlite3.connect(uri + opts, uri=True, timeout=timeout,
                                       isolation_level=None)
                conn.execute("SELECT COUNT(*) FROM sqlite_master").fetchone()
                return conn
            except sqlite3.DatabaseError as exc:
                last = exc
        assert last is not None
        raise last

    def _writable(self) -> None:
        if self.readonly:
            raise ValueError(f"store {self.path!r} is read-only (its file, directory or medium "
                             f"cannot be written): it can be read back, but nothing can be "
                             f"recorded in it. Copy it to a writable place or use another store "
                             f"file.")

    def _has(self, table: str) -> bool:
        return self._prefix + table in self._tables

    def _t(self, table: str) -> str:
        return self._prefix + table

    # -- context management -------------------------------------------------
    def close(self) -> None:
        """Close the connection (the file stays)."""
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def __enter__(self) -> "SweepStore":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    def _q(self, sql: str, args: Sequence[Any] = ()) -> Any:
        assert self._conn is not None, "store is closed"
        return self._conn.execute(sql, args)

    # -- metadata -------------------------------------------------------------
    def meta(self) -> dict[str, Any]:
        """The sweep description recorded in the store (empty for a new store)."""
        if not self._has("meta"):
            return {}
        rows = self._q(f"SELECT name, value FROM {self._t('meta')}").fetchall()
        return {k: json.loads(v) for k, v in rows}

    def write_meta(self, meta: Mapping[str, Any]) -> None:
        """Replace the sweep description (one transaction)."""
        self._writable()
        assert self._conn is not None
        with _transaction(self._conn):
            self._q(f"DELETE FROM {self._t('meta')}")
            self._conn.executemany(
                f"INSERT INTO {self._t('meta')} (name, value) VALUES (?, ?)",
                [(k, json.dumps(v, sort_keys=True)) for k, v in
                 {"format": FORMAT, "schema": SCHEMA_VERSION, **meta}.items()])

    def clear(self) -> None:
        """Delete every point and the description (one transaction).

        The side files of the deleted chunks are removed once that is committed.
        """
        self._writable()
        assert self._conn is not None
        with _transaction(self._conn):
            for name in _TABLES:
                self._q(f"DELETE FROM {self._t(name)}")
        self._drop_orphans()

    # -- side files of large chunks (schema 5) ---------------------------------
    def _side_names(self) -> set[str]:
        """Names of the side files the chunk rows of both tables (current, staged) refer to."""
        out: set[str] = set()
        for prefix in ("", _STAGED):
            if prefix + "chunks" not in self._tables:
                continue
            for (extra,) in self._q(f"SELECT extra FROM {prefix}chunks WHERE extra LIKE ?",
                                    (f'%"{_FILE}"%',)):
                spec = json.loads(extra).get(_FILE)
                if spec is not None:
                    out.add(str(spec["name"]))
        return out

    def _drop_orphans_locked(self) -> None:
        """Remove side files no row refers to (inside a write transaction).

        A side file is written while its writer holds the write lock
        (:meth:`record_chunk`), so under that lock a file no committed row
        names is one whose row was never committed (a killed process) or
        whose row was deleted: nothing a reader could still need.
        """
        if not os.path.isdir(self._side):
            return
        keep = self._side_names()
        for entry in os.scandir(self._side):
            if entry.name.startswith("chunk-") and entry.name.endswith(".npy") \
                    and entry.name not in keep:
                try:
                    os.unlink(entry.path)
                except FileNotFoundError:
                    pass

    def _drop_orphans(self) -> None:
        if self.readonly or not os.path.isdir(self._side):
            return
        assert self._conn is not None
        with _transaction(self._conn):
            self._drop_orphans_locked()

    # -- restart: staged tables swapped in when the new sweep has finished ---
    def staged_meta(self) -> dict[str, Any]:
        """Description of an unfinished restart (empty when there is none)."""
        if _STAGED + "meta" not in self._tables:
            return {}
        rows = self._q(f"SELECT name, value FROM {_STAGED}meta").fetchall()
        return {k: json.loads(v) for k, v in rows}

    def stage(self, meta: Mapping[str, Any] | None) -> None:
        """Direct reads and writes to the staged tables.

        With ``meta`` the staged tables are emptied first and ``meta``
        written there (a new restart); with ``None`` an unfinished restart
        is resumed.  The current points stay untouched until :meth:`promote`.
        """
        self._writable()
        self._prefix = _STAGED
        if meta is not None:
            self.clear()
            self.write_meta(meta)

    def promote(self) -> None:
        """Replace the current points and description by the staged ones (one transaction)."""
        self._writable()
        if self._prefix != _STAGED:
            return
        assert self._conn is not None
        with _transaction(self._conn):
            for name in _TABLES:
                self._q(f"DELETE FROM {name}")
                self._q(f"INSERT INTO {name} SELECT * FROM {_STAGED}{name}")
                self._q(f"DELETE FROM {_STAGED}{name}")
        self._prefix = ""
        self._drop_orphans()      # the replaced chunks' side files, now that nothing names them

    # -- points ---------------------------------------------------------------
    def count(self) -> int:
        """Number of finished points in the store."""
        n = int(self._q(f"SELECT COUNT(*) FROM {self._t('points')}").fetchone()[0]) \
            if self._has("points") else 0
        if self._has("chunks"):
            n += int(self._q(f"SELECT COALESCE(SUM(n), 0) FROM {self._t('chunks')}").fetchone()[0])
        return n

    def _chunk_rows(self, context: str | None = None) -> Iterable[tuple[Any, ...]]:
        if not self._has("chunks"):
            return []
        sql = f"SELECT n, params, result, extra, context, version, elapsed FROM {self._t('chunks')}"
        args: tuple[Any, ...] = ()
        if context is not None:
            sql += " WHERE context = ?"
            args = (context,)
        return self._q(sql + " ORDER BY id", args)

    def _chunk_points(self, context: str | None = None) -> Iterable[dict[str, Any]]:
        """The chunks' points one by one: params, result, context, version, elapsed."""
        from .sweeps import point_key
        for n, pb, rb, extra, ctx, version, elapsed in self._chunk_rows(context):
            params, result = _decode_chunk(n, pb, rb, extra, (self._side, self.path))
            pcols = {k: v.tolist() for k, v in params.items()}
            rcols = {k: v if isinstance(v, list) else v.tolist() for k, v in result.items()}
            err = rcols.pop("error", [None] * n)
            for i in range(n):
                p = {k: v[i] for k, v in pcols.items()}
                r = {k: v[i] for k, v in rcols.items()}
                yield {"key": point_key(p), "params": p, "result": None if err[i] else r,
                       "error": err[i], "context": ctx, "version": version, "elapsed": elapsed}

    def chunk_arrays(self, context: str | None = None) -> list[dict[str, Any]]:
        """The finished chunks as arrays: ``n``, ``params``, ``result`` (name -> array)."""
        out = []
        for n, pb, rb, extra, ctx, version, elapsed in self._chunk_rows(context):
            params, res = _decode_chunk(n, pb, rb, extra, (self._side, self.path))
            for k, vals in res.items():
                if isinstance(vals, list):
                    arr = np.empty(n, dtype=object)
                    arr[:] = vals
                    res[k] = arr
            out.append({"n": int(n), "params": params, "result": res, "version": version})
        return out

    def finished(self, context: str | None = None) -> dict[str, dict[str, Any]]:
        """Finished points keyed by point key (optionally only those of ``context``).

        Each value has ``result`` (dict), ``error`` (str or None), ``seed``,
        ``version`` and ``context``.
        """
        out = {}
        if self._has("points"):
            sql = f"SELECT key, result, error, seed, version, context FROM {self._t('points')}"
            args: tuple[Any, ...] = ()
            if context is not None:
                sql += " WHERE context = ?"
                args = (context,)
            for key, res, err, seed, version, ctx in self._q(sql, args):
                out[key] = {"result": json.loads(res) if res is not None else {}, "error": err,
                            "seed": seed, "version": version, "context": ctx}
        for r in self._chunk_points(context):
            out[r["key"]] = {"result": r["result"] or {}, "error": r["error"], "seed": None,
                             "version": r["version"], "context": r["context"]}
        return out

    def keys(self) -> set[str]:
        """Keys of all finished points."""
        keys = {k for (k,) in self._q(f"SELECT key FROM {self._t('points')}")} \
            if self._has("points") else set()
        keys.update(r["key"] for r in self._chunk_points())
        return keys

    def record(self, rows: Iterable[Mapping[str, Any]]) -> None:
        """Write finished points in one transaction (replacing rows with the same key).

        Each row has ``key``, ``idx``, ``params`` (dict), ``result`` (dict or
        None), ``error``, ``seed``, ``context``, ``version`` and ``elapsed``.
        """
        self._writable()
        assert self._conn is not None
        now = time.time()
        data = [(r["key"], int(r["idx"]), json.dumps(r["params"], sort_keys=True),
                 None if r.get("result") is None else json.dumps(r["result"]),
                 r.get("error"), r.get("seed"), r["context"], r["version"],
                 r.get("elapsed"), now) for r in rows]
        with _transaction(self._conn):
            self._conn.executemany(
                f"INSERT OR REPLACE INTO {self._t('points')} (key, idx, params, result, error, "
                f"seed, context, version, elapsed, finished) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                data)

    def record_chunk(self, params: Mapping[str, np.ndarray], result: Mapping[str, np.ndarray], *,
                     context: str, version: str, elapsed: float | None = None,
                     axes: Mapping[str, np.ndarray] | None = None,
                     positions: slice | np.ndarray | None = None) -> None:
        """Write one finished chunk as arrays (one transaction).

        ``params`` and ``result`` map names to arrays of one common length.
        Given the grid's ``axes`` (name -> 1-D array, the grid being their
        cartesian product, first axis slowest) and the chunk's ``positions``
        in it (a slice or an index array), the parameters are stored as the
        axes and the positions (two numbers for a contiguous chunk) when that
        gives them back bit for bit; otherwise as their columns.  Numeric,
        boolean and text result columns are stored as one ``.npy``
        structured array, except: a column whose every value is the same (a
        solver's ``method``, ``iterations``) is stored once; a column
        identical, bit for bit, to an earlier one is stored as its name; a
        float column equal, bit for bit, to the product, sum or difference of
        two others (``Q = lam * R``) is stored as that formula; text is stored
        as integer codes into its distinct values.  Object arrays
        (JSON scalars, e.g. an ``error`` column) are stored as JSON lists.
        Reading back gives every column with its dtype and bits.
        """
        self._writable()
        assert self._conn is not None
        n = len(next(iter(params.values())))
        extra: dict[str, Any] = {}
        grid = None
        if axes is not None and positions is not None:
            grid = _grid_params(params, axes, positions)
        if grid is not None:
            pblob: bytes | bytearray = grid[0]
            extra[_GRID] = grid[1]
        else:
            pblob = _npz(params)
        constant = {k: c for k, v in result.items() if (c := _constant(v)) is not None}
        plain: dict[str, np.ndarray] = {}
        codes: dict[str, list[Any]] = {}
        same: dict[str, str] = {}
        for k, v in result.items():
            if k in constant or v.dtype.kind not in "biufU":
                continue
            if v.dtype.kind == "U":
                values, code = _text_codes(v)
                codes[k] = [v.dtype.str, values]
                plain[k] = code
                continue
            twin = next((j for j, w in plain.items() if j not in codes and _identical(v, w)),
                        None)
            if twin is not None:
                same[k] = twin
            else:
                plain[k] = v
        derived = _derived({k: v for k, v in plain.items() if k not in codes})
        for k in derived:
            del plain[k]
        extra.update({k: [None if x is None else x for x in v.tolist()]
                      for k, v in result.items() if v.dtype.kind not in "biufU"})
        if constant:
            extra[_CONSTANT] = constant
        if codes:
            extra[_CODES] = codes
        if same:
            extra[_SAME] = same
        if derived:
            extra[_DERIVED] = derived
        if constant or codes or same or derived:
            extra[_ORDER] = list(result)
        sql = (f"INSERT INTO {self._t('chunks')} (n, params, result, extra, context, version,"
               f" elapsed, finished) VALUES (?, ?, ?, ?, ?, ?, ?, ?)")
        if sum(v.nbytes for v in plain.values()) < SIDE_FILE_BYTES \
                or self.path in ("", ":memory:"):      # an in-memory store: no folder
            with _transaction(self._conn):
                self._q(sql, (n, pblob, _npz(plain), json.dumps(extra) if extra else None,
                              context, version, elapsed, time.time()))
            return
        # a large chunk: its columns in a side file, written (and flushed to disk) under the
        # write lock, then the row naming it; a file whose row is not committed is an orphan
        # that the next writer removes under the lock (_drop_orphans_locked)
        with _transaction(self._conn):
            if not self._swept:
                self._drop_orphans_locked()
                self._swept = True
            if not os.path.isdir(self._side):
                os.makedirs(self._side, exist_ok=True)
                _fsync_folder(os.path.dirname(os.path.abspath(self._side)))
            name, size = _side_write(self._side, plain)
            try:
                extra[_FILE] = {"name": name, "columns": list(plain), "bytes": size}
                self._q(sql, (n, pblob, b"", json.dumps(extra), context, version, elapsed,
                              time.time()))
            except BaseException:
                os.unlink(os.path.join(self._side, name))
                raise

    def rows(self) -> list[dict[str, Any]]:
        """Every finished point as a dict (parameters and results parsed), in grid order.

        Points stored in chunks follow the per-point rows, in chunk order.
        """
        out = self._point_rows()
        for r in self._chunk_points():
            out.append({"idx": None, "params": r["params"], "result": r["result"],
                        "error": r["error"], "seed": None, "version": r["version"],
                        "elapsed": r["elapsed"]})
        return out

    def _point_rows(self, context: str | None = None) -> list[dict[str, Any]]:
        out = []
        if self._has("points"):
            where, args = ("", ()) if context is None else (" WHERE context = ?", (context,))
            for idx, params, res, err, seed, version, elapsed in self._q(
                    f"SELECT idx, params, result, error, seed, version, elapsed FROM "
                    f"{self._t('points')}{where} ORDER BY idx, key", args):
                out.append({"idx": idx, "params": json.loads(params),
                            "result": json.loads(res) if res is not None else None,
                            "error": err, "seed": seed, "version": version, "elapsed": elapsed})
        return out

    def to_table(self, *, title: str | None = None) -> Any:
        """The stored points as a :class:`mva.table.Table` (parameters, seed, results)."""
        from .table import Table
        records: list[dict[str, Any]] = []
        for r in self._point_rows():
            rec: dict[str, Any] = dict(r["params"])
            if r["seed"] is not None:
                rec["seed"] = r["seed"]
            rec.update(r["result"] or {})
            if r["error"] is not None:
                rec["error"] = r["error"]
            records.append(rec)
        chunks = self.chunk_arrays()
        if not chunks:
            return table_from_records(records, title=title, table_cls=Table)
        pieces = [{**c["params"], **{k: v for k, v in c["result"].items()
                                     if k not in c["params"]}} for c in chunks]
        if records:
            names = list(dict.fromkeys(k for rec in records for k in rec))
            pieces.insert(0, {k: column_array([rec.get(k) for rec in records]) for k in names})
        return table_from_pieces(pieces, title=title)


class _transaction:
    """``BEGIN IMMEDIATE`` ... ``COMMIT`` (``ROLLBACK`` on error) on an autocommit connection."""

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn

    def __enter__(self) -> None:
        self.conn.execute("BEGIN IMMEDIATE")

    def __exit__(self, exc_type: Any, *rest: Any) -> None:
        if exc_type is None:
            self.conn.execute("COMMIT")
        else:
            self.conn.execute("ROLLBACK")


def column_array(values: list[Any]) -> np.ndarray:
    """One table column from per-point JSON scalars (NaN for a missing number)."""
    present = [v for v in values if v is not None]
    if present and all(isinstance(v, bool) for v in present) and len(present) == len(values):
        return np.asarray(values, dtype=bool)
    if present and all(isinstance(v, int) and not isinstance(v, bool) for v in present) \
            and len(present) == len(values) and all(abs(v) < 2**63 for v in present):
        return np.asarray(values, dtype=np.int64)
    if present and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in present):
        return np.asarray([np.nan if v is None else float(v) for v in values], dtype=float)
    arr = np.empty(len(values), dtype=object)
    arr[:] = values
    return arr


def table_from_records(records: Sequence[Mapping[str, Any]], *, title: str | None = None,
                       table_cls: Any = None, columns: list[str] | None = None) -> Any:
    """A Table whose columns are the union of the records' keys (first-seen order)."""
    if table_cls is None:
        from .table import Table as table_cls
    if columns is None:
        columns = []
        seen: set[str] = set()
        for rec in records:
            for k in rec:
                if k not in seen:
                    seen.add(k)
                    columns.append(k)
    data = {c: column_array([rec.get(c) for rec in records]) for c in columns}
    return table_cls(columns=tuple(columns), data=data, title=title, formats={})


def table_from_pieces(pieces: Sequence[Mapping[str, np.ndarray]], *, title: str | None = None,
                      columns: Sequence[str] | None = None) -> Any:
    """A Table stacking column pieces (name -> equal-length arrays) in order.

    A column missing from a piece is NaN there when numeric, None otherwise.
    """
    from .table import Table
    if columns is None:
        columns = list(dict.fromkeys(k for p in pieces for k in p))
    lengths = [len(next(iter(p.values()))) if p else 0 for p in pieces]
    data = {}
    for c in columns:
        parts = [p.get(c) for p in pieces]
        data[c] = _stack(parts, lengths)
    return Table(columns=tuple(columns), data=data, title=title, formats={})


def _stack(parts: Sequence[np.ndarray | None], lengths: Sequence[int]) -> np.ndarray:
    present = [p for p in parts if p is not None]
    if len(present) == len(parts):
        kinds = {p.dtype.kind for p in present}
        if len(kinds) == 1 or kinds <= set("iuf"):
            return np.concatenate(present) if len(present) > 1 else present[0]
    elif all(p.dtype.kind in "iuf" for p in present):
        return np.concatenate([p.astype(float) if p is not None else np.full(n, np.nan)
                               for p, n in zip(parts, lengths)])
    out: list[Any] = []
    for p, n in zip(parts, lengths):
        out.extend(p.tolist() if p is not None else [None] * n)
    return column_array(out)
