"""The trace format: one record per thread event, as CSV or JSON Lines.

A trace is a sequence of :class:`Record` tuples.  Each belongs to one thread
(numbered from 0; thread *t* runs on the *t*-th compute processor of the
machine, counting node by node) and is either

* a **compute** burst: ``cycles`` of local work, or
* a **request**: a message to node ``dest`` of ``size`` bytes whose request
  handler costs ``req_cost`` cycles at the destination and whose reply handler
  costs ``reply_cost`` cycles back at the source; the thread blocks until the
  reply handler has run.  An empty ``reply_cost`` makes the request *one-way*
  (no reply, the thread does not block).  ``key`` is an optional
  synchronization key for PDQ dispatch (``sequential`` and ``nosync`` are
  reserved).

The records of one thread are in program order; the records of different
threads may be interleaved in any way (the simulator demultiplexes a single
file; round-robin interleaving, as :func:`write_trace` of a generator produces,
keeps its buffers small).  Files are read in a streaming fashion: memory does
not grow with the length of the trace.  The full reference is
``docs/validation/traces.rst``.

CSV::

    # smp-contention trace v1
    thread,kind,cycles,dest,size,req_cost,reply_cost,key
    0,compute,1000,,,,,
    0,request,,5,64,100,100,
    0,request,,5,64,100,,0x100

JSON Lines (keys may be omitted where the CSV cell would be empty)::

    {"thread": 0, "kind": "compute", "cycles": 1000}
    {"thread": 0, "kind": "request", "dest": 5, "size": 64, "req_cost": 100, "reply_cost": 100}

Malformed input raises :class:`TraceFormatError`, whose message names the file,
the line number and what is wrong.
"""

from __future__ import annotations

import json
import math
import os
from typing import IO, Any, Callable, Iterable, Iterator, NamedTuple

__all__ = ["Record", "TraceFormatError", "TraceFileError", "TraceFileNotFoundError", "read_trace",
           "trace_extent", "write_trace", "compute", "request",
           "detect_format", "CSV_HEADER", "FORMATS", "SEQUENTIAL", "NOSYNC"]

#: the exact CSV header line (after optional ``#`` comment lines)
CSV_HEADER = "thread,kind,cycles,dest,size,req_cost,reply_cost,key"
#: trace file formats
FORMATS = ("csv", "jsonl")
#: reserved synchronization key: the handler runs alone (PDQ drains first)
SEQUENTIAL = "sequential"
#: reserved synchronization key: the handler needs no synchronization
NOSYNC = "nosync"

_FIELDS = CSV_HEADER.split(",")
_KINDS = ("compute", "request")


class Record(NamedTuple):
    """One thread event of a trace.

    Attributes
    ----------
    thread : int
        Thread number (>= 0).
    kind : str
        ``"compute"`` or ``"request"``.
    cycles : float or None
        Compute burst length in processor cycles (compute records only).
    dest : int or None
        Destination node of a request.
    size : int or None
        Message size in bytes of a request.
    req_cost : float or None
        Request-handler cost at the destination, in cycles.
    reply_cost : float or None
        Reply-handler cost back at the source, in cycles; ``None`` for a
        one-way request.
    key : str or None
        Synchronization key of a request (PDQ); ``None`` for none.
    """

    thread: int
    kind: str
    cycles: float | None = None
    dest: int | None = None
    size: int | None = None
    req_cost: float | None = None
    reply_cost: float | None = None
    key: str | None = None


_new = tuple.__new__


def compute(thread: int, cycles: float) -> Record:
    """A compute record (fast constructor, no validation).

    Examples
    --------
    >>> compute(0, 1000.0)
    Record(thread=0, kind='compute', cycles=1000.0, dest=None, size=None, req_cost=None, reply_cost=None, key=None)
    """
    return _new(Record, (thread, "compute", cycles, None, None, None, None, None))


def request(thread: int, dest: int, size: int, req_cost: float, reply_cost: float | None,
            key: str | None = None) -> Record:
    """A request record (fast constructor, no validation)."""
    return _new(Record, (thread, "request", None, dest, size, req_cost, reply_cost, key))


class TraceFormatError(ValueError):
    """A malformed trace record.

    The message reads ``"<file>:<line>: <what is wrong>"``; the parts are also
    available as attributes.

    Attributes
    ----------
    path : str
        File name (``"<stream>"`` for an unnamed stream).
    line : int
        1-based line number.
    reason : str
        What is wrong.
    """

    def __init__(self, path: str, line: int, reason: str) -> None:
        super().__init__(f"{path}:{line}: {reason}")
        self.path = path
        self.line = line
        self.reason = reason


# --------------------------------------------------------------------------
# field parsing (shared by both formats)
# --------------------------------------------------------------------------

class TraceFileError(ValueError, OSError):
    """A trace file that cannot be opened (an :class:`OSError` and a :class:`ValueError`).

    The message is one line, ``"<path>: <reason>"``; ``filename``,
    ``errno`` and ``strerror`` are set as for an :class:`OSError`.
    """

    def __init__(self, path: str, reason: str, code: int | None = None) -> None:
        super().__init__(f"{path}: {reason}")
        self.filename = path
        self.errno = code
        self.strerror = reason

    def __str__(self) -> str:
        return str(self.args[0])


class TraceFileNotFoundError(TraceFileError, FileNotFoundError):
    """The trace file does not exist."""


class _Bad(Exception):
    pass


def _int(name: str, v: Any, *, minimum: int = 0) -> int:
    if isinstance(v, bool):
        raise _Bad(f"{name} must be an integer; got {v!r}")
    if isinstance(v, int):
        i = v
    elif isinstance(v, float):
        if not v.is_integer():
            raise _Bad(f"{name} must be an integer; got {v!r}")
        i = int(v)
    elif isinstance(v, str):
        try:
            i = int(v)
        except ValueError:
            raise _Bad(f"{name} must be an integer; got {v!r}") from None
    else:
        raise _Bad(f"{name} must be an integer; got {v!r}")
    if i < minimum:
        raise _Bad(f"{name} must be >= {minimum}; got {i}")
    return i


def _num(name: str, v: Any) -> float:
    if isinstance(v, bool):
        raise _Bad(f"{name} must be a number of cycles; got {v!r}")
    if isinstance(v, (int, float)):
        x = float(v)
    elif isinstance(v, str):
        try:
            x = float(v)
        except ValueError:
            raise _Bad(f"{name} must be a number of cycles; got {v!r}") from None
    else:
        raise _Bad(f"{name} must be a number of cycles; got {v!r}")
    if not math.isfinite(x) or x < 0:
        raise _Bad(f"{name} must be finite and >= 0; got {v!r}")
    return x


def _build(thread: Any, kind: Any, cycles: Any, dest: Any, size: Any, req: Any, reply: Any,
           key: Any) -> Record:
    """Validate the raw fields of one record (``None`` = empty) and build it."""
    if thread is None:
        raise _Bad("missing thread")
    t = _int("thread", thread)
    if kind == "compute":
        if cycles is None:
            raise _Bad("compute record needs cycles")
        for name, v in (("dest", dest), ("size", size), ("req_cost", req),
                        ("reply_cost", reply), ("key", key)):
            if v is not None:
                raise _Bad(f"compute record must not have {name}; got {v!r}")
        return _new(Record, (t, "compute", _num("cycles", cycles), None, None, None, None, None))
    if kind == "request":
        if cycles is not None:
            raise _Bad(f"request record must not have cycles; got {cycles!r}")
        if dest is None:
            raise _Bad("request record needs dest")
        if req is None:
            raise _Bad("request record needs req_cost")
        d = _int("dest", dest)
        s = 0 if size is None else _int("size", size)
        rq = _num("req_cost", req)
        ry = None if reply is None else _num("reply_cost", reply)
        if key is not None:
            if not isinstance(key, (str, int)) or isinstance(key, bool):
                raise _Bad(f"key must be a string; got {key!r}")
            key = str(key)
            if not key or key != key.strip() or any(c in key for c in ",\"\n\r#"):
                raise _Bad("key must be non-empty, without surrounding spaces, commas, quotes, "
                           f"'#' or newlines; got {key!r}")
        return _new(Record, (t, "request", None, d, s, rq, ry, key))
    if kind is None:
        raise _Bad("missing kind")
    raise _Bad(f"kind must be 'compute' or 'request'; got {kind!r}")


# --------------------------------------------------------------------------
# readers
# --------------------------------------------------------------------------

def detect_format(path: str | os.PathLike[str]) -> str:
    """``"jsonl"`` for ``*.jsonl`` / ``*.json`` / ``*.ndjson`` (optionally ``.gz``), else
    ``"csv"``."""
    name = os.fspath(path).lower()
    if name.endswith(".gz"):
        name = name[:-3]
    return "jsonl" if name.endswith((".jsonl", ".json", ".ndjson")) else "csv"


def _open_text(path: str, mode: str) -> IO[str]:
    if path.lower().endswith(".gz"):
        import gzip
        return gzip.open(path, mode + "t", encoding="utf-8",  # type: ignore[return-value]
                         newline="")
    return open(path, mode, encoding="utf-8", newline="")


def _csv_records(lines: Iterable[str], name: str,
                 limits: tuple[int | None, int | None] | None = None) -> Iterator[Record]:
    header_seen = False
    build = _build
    new = _new
    inf = math.inf
    lineno = 0
    for lineno, raw in enumerate(lines, 1):
        if not raw.endswith("\n"):
            if raw.strip():
                raise TraceFormatError(name, lineno, "truncated record (no end of line)")
        line = raw.rstrip("\r\n")
        if not line.strip() or line.startswith("#"):
            continue
        if not header_seen:
            if line.strip() != CSV_HEADER:
                raise TraceFormatError(name, lineno,
                                       f"expected the header {CSV_HEADER!r}; got {line[:80]!r}")
            header_seen = True
            continue
        parts = line.split(",")
        if len(parts) != 8:
            raise TraceFormatError(name, lineno,
                                   f"expected 8 comma-separated fields; got {len(parts)}")
        # fast path for well-formed records; anything unusual goes through _build,
        # which produces the precise error message
        th, kind, cyc, dest, size, rq, ry, key = parts
        try:
            if kind == "compute" and not (dest or size or rq or ry or key):
                t = int(th)
                c = float(cyc)
                if t >= 0 and 0.0 <= c < inf:
                    rec = new(Record, (t, "compute", c, None, None, None, None, None))
                    if limits is not None:
                        _check_limits(rec, limits, name, lineno)
                    yield rec
                    continue
            elif kind == "request" and not cyc and not key:
                t = int(th)
                d = int(dest)
                sz = int(size) if size else 0
                q = float(rq)
                y = float(ry) if ry else None
                if (t >= 0 and d >= 0 and sz >= 0 and 0.0 <= q < inf
                        and (y is None or 0.0 <= y < inf)):
                    rec = new(Record, (t, "request", None, d, sz, q, y, None))
                    if limits is not None:
                        _check_limits(rec, limits, name, lineno)
                    yield rec
                    continue
        except ValueError:
            pass
        try:
            rec = build(*[p.strip() or None for p in parts])
        except _Bad as exc:
            raise TraceFormatError(name, lineno, str(exc)) from None
        if limits is not None:
            _check_limits(rec, limits, name, lineno)
        yield rec
    if not header_seen:
        raise TraceFormatError(name, max(lineno, 1), f"missing the header {CSV_HEADER!r}")


def _jsonl_records(lines: Iterable[str], name: str,
                   limits: tuple[int | None, int | None] | None = None) -> Iterator[Record]:
    loads = json.loads
    build = _build
    allowed = frozenset(_FIELDS)
    for lineno, raw in enumerate(lines, 1):
        if not raw.endswith("\n") and raw.strip():
            raise TraceFormatError(name, lineno, "truncated record (no end of line)")
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        try:
            obj = loads(line)
        except (ValueError, RecursionError) as exc:
            raise TraceFormatError(name, lineno, f"invalid JSON: {exc}") from None
        if not isinstance(obj, dict):
            raise TraceFormatError(name, lineno,
                                   f"a record must be a JSON object; got {type(obj).__name__}")
        extra = set(obj) - allowed
        if extra:
            raise TraceFormatError(name, lineno, f"unknown field(s) {sorted(extra)}")
        g = obj.get
        try:
            rec = build(g("thread"), g("kind"), g("cycles"), g("dest"), g("size"),
                        g("req_cost"), g("reply_cost"), g("key"))
        except _Bad as exc:
            raise TraceFormatError(name, lineno, str(exc)) from None
        if limits is not None:
            _check_limits(rec, limits, name, lineno)
        yield rec


def _check_limits(rec: Record, limits: tuple[int | None, int | None], name: str,
                  lineno: int) -> None:
    """Raise a :class:`TraceFormatError` at ``name:lineno`` if ``rec`` does not fit the machine."""
    threads, nodes = limits
    if threads is not None and rec[0] >= threads:
        raise TraceFormatError(name, lineno, f"record for thread {rec[0]}, but the machine runs "
                               f"{threads} thread(s) (0..{threads - 1}), one per compute "
                               f"processor: the trace needs at least {rec[0] + 1} (simulate "
                               f"trace: pass a larger --nodes or --procs; trace_extent() gives "
                               f"the size a trace needs)")
    if nodes is not None and rec[3] is not None and rec[3] >= nodes:
        raise TraceFormatError(name, lineno, f"thread {rec[0]}: request to node {rec[3]}, but the "
                               f"machine has nodes 0 to {nodes - 1}: the trace needs at least "
                               f"{rec[3] + 1} nodes (simulate trace: pass --nodes {rec[3] + 1} "
                               f"or more; trace_extent() gives the size a trace needs)")


def read_trace(source: str | os.PathLike[str] | IO[str], *, format: str | None = None,
               name: str | None = None, threads: int | None = None,
               nodes: int | None = None) -> Iterator[Record]:
    """Stream the records of a trace file (a generator; constant memory).

    Parameters
    ----------
    source : path or text stream
        A file name (``.gz`` is decompressed on the fly) or an open text
        stream.
    format : {"csv", "jsonl"}, optional
        Defaults to the file extension (see :func:`detect_format`); ``"csv"``
        for streams.
    name : str, optional
        Name used in error messages (defaults to the path).
    threads, nodes : int, optional
        The machine the trace will drive: a record of thread ``>= threads``
        or a request to node ``>= nodes`` is an error naming ``file:line``
        and the size the trace needs (see :func:`trace_extent`).

    Yields
    ------
    Record
        One record per line, in file order.

    Raises
    ------
    TraceFileError
        At once (before anything is yielded) when the file cannot be read
        (:class:`TraceFileNotFoundError`, also a :class:`FileNotFoundError`,
        when it does not exist); an :class:`OSError` and a
        :class:`ValueError` whose one-line message names the file.
    TraceFormatError
        On the first malformed line, naming file, line number and problem.
        Records before it have already been yielded.

    Examples
    --------
    >>> import io
    >>> text = "thread,kind,cycles,dest,size,req_cost,reply_cost,key\\n0,compute,10,,,,,\\n"
    >>> list(read_trace(io.StringIO(text)))[0].cycles
    10.0
    >>> list(read_trace(io.StringIO(text + "0,compute,-1,,,,,\\n"), name="t.csv"))
    Traceback (most recent call last):
    ...
    validation.traces.TraceFormatError: t.csv:3: cycles must be finite and >= 0; got '-1'
    """
    limits = None
    for arg, v in (("threads", threads), ("nodes", nodes)):
        if v is not None and (isinstance(v, bool) or not isinstance(v, int) or v < 1):
            raise ValueError(f"{arg} must be an integer >= 1; got {v!r}")
    if threads is not None or nodes is not None:
        limits = (threads, nodes)
    if isinstance(source, (str, os.PathLike)):
        path = os.fspath(source)
        fmt = format or detect_format(path)
        _parser(fmt)
        label = name or path
        _check_readable(path, label)
        return _read_path(path, fmt, label, limits)
    fmt = format or "csv"
    label = name or getattr(source, "name", None) or "<stream>"
    if not isinstance(label, str):
        label = "<stream>"
    return _read_stream(source, fmt, label, limits)


def trace_extent(source: str | os.PathLike[str] | IO[str], *,
                 format: str | None = None, procs: int = 1) -> tuple[int, int]:
    """Threads and nodes a trace needs:
    ``(max thread + 1, max(max dest + 1, ceil(threads / procs)))``.

    One streaming pass over the file (constant memory), validating every
    record as :func:`read_trace` does.  A machine with ``procs`` compute
    processors per node needs ``nodes`` nodes to run the trace.

    Parameters
    ----------
    source : path or text stream
    format : {"csv", "jsonl"}, optional
    procs : int, default 1
        Compute processors (threads) per node.

    Returns
    -------
    (int, int)
        Threads and nodes.

    Examples
    --------
    >>> import io
    >>> text = ("thread,kind,cycles,dest,size,req_cost,reply_cost,key\\n"
    ...         "0,request,,5,64,100,100,\\n3,compute,10,,,,,\\n")
    >>> trace_extent(io.StringIO(text))
    (4, 6)
    """
    threads, nodes = 0, 0
    for r in read_trace(source, format=format):
        if r[0] >= threads:
            threads = r[0] + 1
        if r[3] is not None and r[3] >= nodes:
            nodes = r[3] + 1
    return threads, max(-(-threads // max(int(procs), 1)), nodes)


def _check_readable(path: str, label: str) -> None:
    import errno
    if os.path.isdir(path):
        raise TraceFileError(label, "is a directory, not a trace file", errno.EISDIR)
    try:
        with open(path, "rb"):
            pass
    except FileNotFoundError:
        raise TraceFileNotFoundError(label, "no such trace file", errno.ENOENT) from None
    except OSError as exc:
        raise TraceFileError(label, f"cannot be read ({exc.strerror or exc})", exc.errno) from None


def _parser(fmt: str) -> Callable[[Iterable[str], str, tuple[int | None, int | None] | None],
                                  Iterator[Record]]:
    if fmt == "csv":
        return _csv_records
    if fmt == "jsonl":
        return _jsonl_records
    raise ValueError(f"format must be one of 'csv', 'jsonl'; got {fmt!r}")


def _read_path(path: str, fmt: str, label: str,
               limits: tuple[int | None, int | None] | None = None) -> Iterator[Record]:
    parse = _parser(fmt)
    if path.lower().endswith(".gz"):
        import gzip
        fh: IO[bytes] | gzip.GzipFile = gzip.open(path, "rb")
    else:
        fh = open(path, "rb")
    with fh:
        yield from parse(_decoded_bytes(fh, label), label, limits)


def _decoded_bytes(fh: Iterable[bytes], label: str) -> Iterator[str]:
    it = iter(fh)
    lineno = 0
    while True:
        try:
            raw = next(it)
        except StopIteration:
            return
        except (EOFError, OSError) as exc:  # a truncated or corrupt .gz
            raise TraceFormatError(label, lineno + 1, f"unreadable (truncated or corrupt "
                                   f"compressed file?): {exc}") from None
        lineno += 1
        try:
            line = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise TraceFormatError(label, lineno, f"not UTF-8 text: {exc.reason}") from None
        if "\x00" in line:
            raise TraceFormatError(label, lineno, "NUL byte in line")
        yield line


def _read_stream(stream: IO[str], fmt: str, label: str,
                 limits: tuple[int | None, int | None] | None = None) -> Iterator[Record]:
    yield from _parser(fmt)(_decoded(stream, label), label, limits)


def _decoded(fh: IO[str], label: str) -> Iterator[str]:
    lineno = 0
    it = iter(fh)
    while True:
        try:
            line = next(it)
        except StopIteration:
            return
        except UnicodeDecodeError as exc:
            raise TraceFormatError(label, lineno + 1, f"not UTF-8 text: {exc.reason}") from None
        lineno += 1
        if "\x00" in line:
            raise TraceFormatError(label, lineno, "NUL byte in line")
        yield line


# --------------------------------------------------------------------------
# writer
# --------------------------------------------------------------------------

def _cell(v: Any) -> str:
    if v is None:
        return ""
    if isinstance(v, float):
        return repr(v) if not v.is_integer() else str(int(v)) if abs(v) < 1e15 else repr(v)
    return str(v)


def write_trace(records: Iterable[Record], target: str | os.PathLike[str] | IO[str], *,
                format: str | None = None, comment: str | None = None) -> int:
    """Write records to a trace file (streaming) and return how many were written.

    Parameters
    ----------
    records : iterable of Record
        For example a generator from :func:`validation.generators.generate`.
    target : path or text stream
        Destination (``.gz`` paths are compressed).
    format : {"csv", "jsonl"}, optional
        Defaults to the extension of ``target`` (``"csv"`` for streams).
    comment : str, optional
        A ``#`` comment line written first (CSV only; JSON Lines gets it as a
        ``#`` line too, which the reader skips).

    Notes
    -----
    Floats are written with :func:`repr`, so reading a written trace gives back
    exactly the same numbers (a round trip is bit-for-bit).

    Examples
    --------
    >>> import io
    >>> buf = io.StringIO()
    >>> write_trace([compute(0, 12.5), request(0, 1, 64, 100.0, 100.0)], buf)
    2
    >>> print(buf.getvalue(), end="")
    # smp-contention trace v1
    thread,kind,cycles,dest,size,req_cost,reply_cost,key
    0,compute,12.5,,,,,
    0,request,,1,64,100,100,
    >>> [r.kind for r in read_trace(io.StringIO(buf.getvalue()))]
    ['compute', 'request']
    """
    if isinstance(target, (str, os.PathLike)):
        path = os.fspath(target)
        fmt = format or detect_format(path)
        with _open_text(path, "w") as fh:
            return _write(records, fh, fmt, comment)
    return _write(records, target, format or "csv", comment)


def _write(records: Iterable[Record], fh: IO[str], fmt: str, comment: str | None) -> int:
    if fmt not in FORMATS:
        raise ValueError(f"format must be one of 'csv', 'jsonl'; got {fmt!r}")
    write = fh.write
    n = 0
    write(f"# {comment or 'smp-contention trace v1'}\n")
    buf: list[str] = []
    cell = _cell
    if fmt == "csv":
        write(CSV_HEADER + "\n")
        for r in records:
            buf.append(",".join(map(cell, r)))
            n += 1
            if len(buf) >= 4096:
                write("\n".join(buf) + "\n")
                buf.clear()
    else:
        dumps = json.dumps
        for r in records:
            buf.append(dumps({k: v for k, v in zip(_FIELDS, r) if v is not None}))
            n += 1
            if len(buf) >= 4096:
                write("\n".join(buf) + "\n")
                buf.clear()
    if buf:
        write("\n".join(buf) + "\n")
    return n
