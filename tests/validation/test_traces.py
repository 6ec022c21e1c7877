"""The trace format: round trips, streaming, and the documented error on malformed input."""

from __future__ import annotations

import io
import itertools
import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from validation.generators import Workload, generate
from validation.sim.dists import Dist
from validation.sim.machine import Machine, NodeSpec
from validation.traces import (CSV_HEADER, Record, TraceFormatError, read_trace, request,
                               write_trace)

HEADER = CSV_HEADER + "\n"


def _records() -> list[Record]:
    m = Machine.homogeneous(3, NodeSpec(compute=2), latency=5)
    w = Workload(burst=Dist.exponential(123.4), request_cost=Dist(family="erlang", mean=10, k=2),
                 reply_cost=Dist.from_cs2(7, 3.0), size=Dist(family="uniform", mean=64, width=32),
                 keys=4, p_nosync=0.1, p_sequential=0.05)
    return list(generate(w, m, requests=40, seed=3)) + [request(0, 1, 0, 5.0, None)]


@pytest.mark.parametrize("ext", ["csv", "jsonl", "csv.gz", "jsonl.gz"])
def test_round_trip_is_exact(tmp_path, ext) -> None:
    recs = _records()
    path = tmp_path / f"trace.{ext}"
    assert write_trace(recs, path) == len(recs)
    back = list(read_trace(path))
    assert back == recs
    assert all(type(r) is Record for r in back)


def test_reader_streams() -> None:
    # an endless stream: the reader yields records without reading it all
    def endless():
        yield "# comment\n"
        yield HEADER
        for i in itertools.count():
            yield f"{i % 7},compute,{i},,,,,\n"
    got = list(itertools.islice(read_trace(endless(), name="endless"), 5))  # type: ignore[arg-type]
    assert [r.cycles for r in got] == [0.0, 1.0, 2.0, 3.0, 4.0]


@pytest.mark.parametrize("line, reason", [
    ("0,compute,,,,,,", "compute record needs cycles"),
    ("0,compute,-3,,,,,", "cycles must be finite and >= 0"),
    ("0,compute,nan,,,,,", "cycles must be finite"),
    ("0,compute,1,2,,,,", "compute record must not have dest"),
    ("x,compute,1,,,,,", "thread must be an integer"),
    ("-1,compute,1,,,,,", "thread must be >= 0"),
    ("0,request,,1,8,,1,", "request record needs req_cost"),
    ("0,request,,,8,1,1,", "request record needs dest"),
    ("0,request,,1.5,8,1,1,", "dest must be an integer"),
    ("0,request,3,1,8,1,1,", "request record must not have cycles"),
    ("0,send,,1,8,1,1,", "kind must be 'compute' or 'request'"),
    ("0,compute,1", "expected 8 comma-separated fields; got 3"),
])
def test_csv_errors_name_file_line_and_problem(line, reason) -> None:
    text = HEADER + "0,compute,5,,,,,\n" + line + "\n"
    with pytest.raises(TraceFormatError) as exc:
        list(read_trace(io.StringIO(text), name="bad.csv"))
    e = exc.value
    assert (e.path, e.line) == ("bad.csv", 3)
    assert reason in e.reason
    assert str(e).startswith("bad.csv:3: ")


def test_missing_header_and_truncation(tmp_path) -> None:
    p = tmp_path / "t.csv"
    p.write_text("0,compute,5,,,,,\n")
    with pytest.raises(TraceFormatError, match=r"t\.csv:1: expected the header"):
        list(read_trace(p))
    p.write_text(HEADER + "0,request,,1,8,1,1,0x1")   # cut before the end of line
    with pytest.raises(TraceFormatError, match=r"t\.csv:2: truncated record"):
        list(read_trace(p))
    p.write_text("")
    with pytest.raises(TraceFormatError, match="missing the header"):
        list(read_trace(p))
    q = tmp_path / "t.jsonl"
    q.write_text('{"thread": 0, "kind": "compute", "cycles": 1}\n{"thread": 0, "ki')
    with pytest.raises(TraceFormatError, match=r"t\.jsonl:2: truncated record"):
        list(read_trace(q))


@pytest.mark.parametrize("line, reason", [
    ("[1, 2]", "must be a JSON object"),
    ("{bad json", "invalid JSON"),
    ('{"thread": 0, "kind": "compute", "cycles": 1, "colour": 2}', "unknown field"),
    ('{"thread": true, "kind": "compute", "cycles": 1}', "thread must be an integer"),
    ('{"thread": 0, "kind": "request", "dest": 1, "req_cost": "x"}', "req_cost must be a number"),
    ('{"thread": 0, "kind": "request", "dest": 1, "req_cost": 1, "key": [1]}',
     "key must be a string"),
])
def test_jsonl_errors(line, reason) -> None:
    with pytest.raises(TraceFormatError) as exc:
        list(read_trace(io.StringIO(line + "\n"), format="jsonl", name="b.jsonl"))
    assert exc.value.line == 1 and reason in exc.value.reason


def test_not_utf8(tmp_path) -> None:
    p = tmp_path / "t.csv"
    p.write_bytes(HEADER.encode() + b"0,compute,\xff\xfe,,,,,\n")
    with pytest.raises(TraceFormatError, match="t.csv:2: not UTF-8"):
        list(read_trace(p))


# --------------------------------------------------------------------------
# Hypothesis: arbitrary and truncated records never crash or get skipped silently
# --------------------------------------------------------------------------

line_text = st.text(alphabet=st.characters(blacklist_categories=("Cs",),
                                           blacklist_characters="\r\n"),
                    max_size=60)
cells = st.sampled_from(["", "0", "1", "-1", "2.5", "1e400", "nan", "inf", "x", " 3 ", "compute",
                         "request", "sequential", "0x1f", '"q"', "1,2"])


def _valid_or_error(text: str, fmt: str) -> None:
    try:
        out = list(read_trace(io.StringIO(text), format=fmt, name="h"))
    except TraceFormatError as e:
        assert e.path == "h" and e.line >= 1 and e.reason
        return
    # accepted: every data line became exactly one valid record
    data_lines = [ln for ln in text.splitlines()
                  if ln.strip() and not ln.lstrip().startswith("#")]
    expected = len(data_lines) - (1 if fmt == "csv" else 0)
    assert len(out) == expected
    for r in out:
        assert r.kind in ("compute", "request") and r.thread >= 0


@given(st.lists(st.lists(cells, min_size=0, max_size=10).map(",".join), max_size=5))
def test_random_csv_rows(rows) -> None:
    _valid_or_error(HEADER + "".join(r + "\n" for r in rows), "csv")


@given(st.lists(line_text, max_size=5), st.booleans())
def test_random_text_lines(lines, csv) -> None:
    body = "".join(ln + "\n" for ln in lines)
    _valid_or_error((HEADER if csv else "") + body, "csv" if csv else "jsonl")


@given(st.lists(st.dictionaries(st.sampled_from(["thread", "kind", "cycles", "dest", "size",
                                                 "req_cost", "reply_cost", "key", "other"]),
                                st.none() | st.integers(-2, 5) | st.floats(allow_nan=True)
                                | st.sampled_from(["compute", "request", "k", ""]) | st.booleans(),
                                max_size=8), max_size=4))
def test_random_json_objects(objs) -> None:
    text = "".join(json.dumps(o) + "\n" for o in objs)
    _valid_or_error(text, "jsonl")


@given(st.integers(0, 10_000), st.sampled_from(["csv", "jsonl"]))
def test_truncated_files_raise_or_keep_whole_records(cut, fmt) -> None:
    buf = io.StringIO()
    recs = _records()[:30]
    write_trace(recs, buf, format=fmt)
    text = buf.getvalue()
    cut = cut % (len(text) + 1)
    part = text[:cut]
    try:
        got = list(read_trace(io.StringIO(part), format=fmt, name="cut"))
    except TraceFormatError as e:
        assert e.path == "cut"
        return
    # no error: the cut fell on a line boundary and every record read is intact
    assert part == "" or part.endswith("\n")
    assert got == recs[:len(got)]


def test_truncated_gzip(tmp_path) -> None:
    p = tmp_path / "t.csv.gz"
    write_trace(_records(), p)
    data = p.read_bytes()
    p.write_bytes(data[: len(data) // 2])
    with pytest.raises(TraceFormatError, match="t.csv.gz:"):
        list(read_trace(p))


# --------------------------------------------------------------------------
# files that cannot be read, and traces that do not fit the machine (issue 20)
# --------------------------------------------------------------------------

def test_missing_file_is_a_one_line_error_naming_it(tmp_path) -> None:
    from validation.traces import TraceFileError, TraceFileNotFoundError

    path = tmp_path / "missing.csv"
    with pytest.raises(TraceFileNotFoundError) as info:
        read_trace(path)          # at once, before iterating
    exc = info.value
    assert isinstance(exc, ValueError) and isinstance(exc, FileNotFoundError)
    assert str(exc) == f"{path}: no such trace file" and "\n" not in str(exc)
    with pytest.raises(TraceFileError, match="is a directory"):
        read_trace(tmp_path)


def test_machine_limits_name_file_line_and_the_size_needed(tmp_path) -> None:
    from validation.traces import trace_extent

    path = tmp_path / "t.csv"
    path.write_text(HEADER + "0,compute,10,,,,,\n0,request,,7,64,100,100,\n3,compute,5,,,,,\n")
    assert trace_extent(path) == (4, 8)
    assert len(list(read_trace(path, threads=4, nodes=8))) == 3
    with pytest.raises(TraceFormatError, match=rf"^{path}:3: thread 0: request to node 7, but the "
                                               r"machine has nodes 0 to 1: .*--nodes 8"):
        list(read_trace(path, threads=4, nodes=2))
    with pytest.raises(TraceFormatError, match=rf"^{path}:4: record for thread 3, but the machine "
                                               r"runs 2 thread\(s\).*at least 4.*--nodes"):
        list(read_trace(path, threads=2, nodes=8))
    jl = tmp_path / "t.jsonl"
    jl.write_text('{"thread": 1, "kind": "request", "dest": 4, "req_cost": 1}\n')
    with pytest.raises(TraceFormatError, match=rf"^{jl}:1: .*node 4"):
        list(read_trace(jl, nodes=3))
    with pytest.raises(ValueError, match="nodes must be an integer >= 1"):
        read_trace(jl, nodes=0)


def test_simulate_trace_errors_name_file_and_line(tmp_path) -> None:
    from validation import simulate

    path = tmp_path / "four.csv"
    path.write_text(HEADER + "".join(f"{t},request,,{(t + 1) % 4},64,10,10,\n" for t in range(4)))
    m = Machine.homogeneous(2, NodeSpec(compute=1), latency=5)
    with pytest.raises(TraceFormatError,
                       match=rf"{path}:3: thread 1: request to node 2.*--nodes 3"):
        simulate(m, trace=path, cycles=100)
    with pytest.raises(FileNotFoundError, match="nope.csv: no such trace file"):
        simulate(m, trace=tmp_path / "nope.csv", cycles=100)
