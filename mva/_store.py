"""SQLite result store for :func:`mva.sweeps.sweep` (private; use :class:`mva.sweeps.SweepStore`).

One file holds one sweep: a ``meta`` table (what sweep wrote it, with which
library version) and a ``points`` table with one row per finished point.
Everything is plain SQL columns and JSON text -- nothing is ever pickled, so
opening a store cannot execute code.

Crash safety: the database runs in write-ahead-log mode and every batch of
finished points is written in one transaction, so a process killed at any
moment (``SIGKILL`` included) leaves every committed point intact and no
half-written row.  ``synchronous=NORMAL`` makes commits durable against a
crash of the *process*; an operating-system crash or power cut may lose the
last few commits (never corrupt the file).
"""

from __future__ import annotations

import json
import os
import sqlite3
import time
from typing import Any, Iterable, Mapping, Sequence

import numpy as np

__all__ = ["SweepStore", "StoreMismatchError", "FORMAT", "SCHEMA_VERSION"]

#: value of ``meta.format`` identifying a sweep store
FORMAT = "smp-contention-sweep"
#: layout version of the tables below
SCHEMA_VERSION = 1

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (
    name  TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS points (
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
);
"""


class StoreMismatchError(ValueError):
    """The store was written by a different sweep (grid, function or library version).

    Raised by :func:`mva.sweeps.sweep` with ``on_mismatch="raise"`` (the
    default).  The message says what differs and how to proceed.
    """


class SweepStore:
    """A sweep's SQLite result file (one row per finished point).

    Parameters
    ----------
    path : str or os.PathLike
        The SQLite file; created when absent.
    timeout : float
        Seconds to wait for a lock held by another connection.

    Notes
    -----
    The store never unpickles anything: parameters and results are JSON
    text, so a store received from someone else is safe to open.

    Examples
    --------
    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "demo.sqlite")
    >>> with SweepStore(path) as st:
    ...     st.count()
    0
    """

    def __init__(self, path: str | os.PathLike[str], *, timeout: float = 60.0) -> None:
        self.path = os.fspath(path)
        try:
            self._conn = sqlite3.connect(self.path, timeout=timeout, isolation_level=None)
            self._conn.execute("PRAGMA journal_mode=WAL")
            self._conn.execute("PRAGMA synchronous=NORMAL")
            self._conn.executescript(_SCHEMA)
        except sqlite3.DatabaseError as exc:
            raise ValueError(f"store: {self.path!r} is not a usable SQLite sweep store "
                             f"({exc})") from None
        fmt = self.meta().get("format")
        if fmt is not None and fmt != FORMAT:
            raise ValueError(f"store: {self.path!r} is not a sweep store (format {fmt!r})")

    # -- context management -------------------------------------------------
    def close(self) -> None:
        """Close the connection (the file stays)."""
        self._conn.close()

    def __enter__(self) -> "SweepStore":
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    # -- metadata -------------------------------------------------------------
    def meta(self) -> dict[str, Any]:
        """The sweep description recorded in the store (empty for a new store)."""
        rows = self._conn.execute("SELECT name, value FROM meta").fetchall()
        return {k: json.loads(v) for k, v in rows}

    def write_meta(self, meta: Mapping[str, Any]) -> None:
        """Replace the sweep description (one transaction)."""
        with _transaction(self._conn):
            self._conn.execute("DELETE FROM meta")
            self._conn.executemany(
                "INSERT INTO meta (name, value) VALUES (?, ?)",
                [(k, json.dumps(v, sort_keys=True)) for k, v in
                 {"format": FORMAT, "schema": SCHEMA_VERSION, **meta}.items()])

    def clear(self) -> None:
        """Delete every point and the description (one transaction)."""
        with _transaction(self._conn):
            self._conn.execute("DELETE FROM points")
            self._conn.execute("DELETE FROM meta")

    # -- points ---------------------------------------------------------------
    def count(self) -> int:
        """Number of finished points in the store."""
        return int(self._conn.execute("SELECT COUNT(*) FROM points").fetchone()[0])

    def finished(self, context: str | None = None) -> dict[str, dict[str, Any]]:
        """Finished points keyed by point key (optionally only those of ``context``).

        Each value has ``result`` (dict), ``error`` (str or None), ``seed``,
        ``version`` and ``context``.
        """
        sql = "SELECT key, result, error, seed, version, context FROM points"
        args: tuple[Any, ...] = ()
        if context is not None:
            sql += " WHERE context = ?"
            args = (context,)
        out = {}
        for key, res, err, seed, version, ctx in self._conn.execute(sql, args):
            out[key] = {"result": json.loads(res) if res is not None else {}, "error": err,
                        "seed": seed, "version": version, "context": ctx}
        return out

    def keys(self) -> set[str]:
        """Keys of all finished points."""
        return {k for (k,) in self._conn.execute("SELECT key FROM points")}

    def record(self, rows: Iterable[Mapping[str, Any]]) -> None:
        """Write finished points in one transaction (replacing rows with the same key).

        Each row has ``key``, ``idx``, ``params`` (dict), ``result`` (dict or
        None), ``error``, ``seed``, ``context``, ``version`` and ``elapsed``.
        """
        now = time.time()
        data = [(r["key"], int(r["idx"]), json.dumps(r["params"], sort_keys=True),
                 None if r.get("result") is None else json.dumps(r["result"]),
                 r.get("error"), r.get("seed"), r["context"], r["version"],
                 r.get("elapsed"), now) for r in rows]
        with _transaction(self._conn):
            self._conn.executemany(
                "INSERT OR REPLACE INTO points (key, idx, params, result, error, seed, context,"
                " version, elapsed, finished) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", data)

    def rows(self) -> list[dict[str, Any]]:
        """Every finished point as a dict (parameters and results parsed), in grid order."""
        out = []
        for idx, params, res, err, seed, version, elapsed in self._conn.execute(
                "SELECT idx, params, result, error, seed, version, elapsed FROM points "
                "ORDER BY idx, key"):
            out.append({"idx": idx, "params": json.loads(params),
                        "result": json.loads(res) if res is not None else None,
                        "error": err, "seed": seed, "version": version, "elapsed": elapsed})
        return out

    def to_table(self, *, title: str | None = None) -> Any:
        """The stored points as a :class:`mva.table.Table` (parameters, seed, results)."""
        from .table import Table
        rows = self.rows()
        records: list[dict[str, Any]] = []
        for r in rows:
            rec: dict[str, Any] = dict(r["params"])
            if r["seed"] is not None:
                rec["seed"] = r["seed"]
            rec.update(r["result"] or {})
            if r["error"] is not None:
                rec["error"] = r["error"]
            records.append(rec)
        return table_from_records(records, title=title, table_cls=Table)


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
