"""Tests of the sweep store's chunk encoding (schema 4): bit-identical round trips, grid
positions for parameters, text codes, identical columns stored once, old and newer schemas;
large chunks' columns in side files (schema 5): round trips, replacement without loss,
orphaned files, a missing file."""

from __future__ import annotations

import json
import os
import sqlite3
from unittest import mock

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mva import _store
from mva.sweeps import SweepStore, sweep
from tests.mva import _sweep_funcs as F

FLOATS = st.floats(allow_nan=True, allow_infinity=True, width=64)
TEXT = st.text(alphabet="ab\u00e9\u4e2d ", max_size=4)


def _bits_equal(a: np.ndarray, b: np.ndarray) -> bool:
    """Same dtype, shape and bits (NaN payloads and -0.0 included); text and objects by value."""
    if a.dtype != b.dtype or a.shape != b.shape:
        return False
    if a.dtype.kind in "biuf":
        return np.ascontiguousarray(a).tobytes() == np.ascontiguousarray(b).tobytes()
    return a.tolist() == b.tolist()


@st.composite
def chunks(draw):
    """(axes, positions, params, result) of one chunk over a small cartesian grid."""
    na = draw(st.integers(1, 5))
    nb = draw(st.integers(1, 4))
    axes = {"N": np.arange(1, na + 1, dtype=np.int64),
            "Z": np.array(draw(st.lists(st.floats(-1e3, 1e3), min_size=nb, max_size=nb,
                                        unique_by=lambda v: v + 0.0))),
            "S": np.array(["x", "yy"])}
    total = na * nb * 2
    if draw(st.booleans()):
        start = draw(st.integers(0, total - 1))
        stop = draw(st.integers(start + 1, total))
        positions = slice(start, stop)
        pos = np.arange(start, stop)
    else:
        pos = np.array(sorted(draw(st.sets(st.integers(0, total - 1), min_size=1))))
        positions = pos
    where = np.unravel_index(pos, (na, nb, 2))
    params = {k: a[i] for (k, a), i in zip(axes.items(), where)}
    n = pos.size
    f = np.array(draw(st.lists(FLOATS, min_size=n, max_size=n)))
    g = np.array(draw(st.lists(st.floats(-1e6, 1e6), min_size=n, max_size=n)))
    with np.errstate(all="ignore"):
        result = {"f": f, "g": g, "fg": f * g, "g_minus_f": g - f}
    result.update({
        "f_twin": f.copy(),                                       # identical: stored once
        "f_neg0": np.where(f == 0.0, -0.0, f) if n else f.copy(),  # equal but not bit-identical
        "nan": np.full(n, np.nan),
        "i": np.array(draw(st.lists(st.integers(-2**63, 2**63 - 1), min_size=n, max_size=n)),
                      dtype=np.int64),
        "i32": np.array(draw(st.lists(st.integers(-5, 5), min_size=n, max_size=n)),
                        dtype=np.int32),
        "b": np.array(draw(st.lists(st.booleans(), min_size=n, max_size=n)), dtype=bool),
        "t": np.array(draw(st.lists(TEXT, min_size=n, max_size=n)), dtype="<U4"),
        "label": np.array(["same"] * n),
        "many": np.array([f"v{i}" for i in range(n)]),          # past the few-labels search
        "obj": np.array([None if j % 2 else j for j in range(n)] + [None], dtype=object)[:n],
    })
    return axes, positions, params, result


@settings(max_examples=60, deadline=None)
@given(chunks())
def test_chunk_round_trip_is_bit_identical(tmp_path_factory, chunk):
    axes, positions, params, result = chunk
    path = tmp_path_factory.mktemp("rt") / "s.sqlite"
    with SweepStore(path) as s:
        s.record_chunk(params, result, context="c", version="v", axes=axes, positions=positions)
        s.record_chunk(params, result, context="c", version="v")   # without the grid
        back = s.chunk_arrays()
        extras = [json.loads(e) for (e,) in s._q("SELECT extra FROM chunks ORDER BY id")]
    assert len(back) == 2
    assert "__grid__" in extras[0] and "__grid__" not in extras[1]
    from mva._store import _constant
    if _constant(result["f"]) is not None:      # a constant column (n >= 2, one value) is
        assert {"f", "f_twin"} <= set(extras[0]["__constant__"])   # stored as a constant
    else:
        same = extras[0]["__same__"]
        assert same["f_twin"] == "f"
        # f_neg0 differs from f by the sign of its zeros: stored as a twin only of a
        # column it equals bit for bit (f where f has no zero, or another column, e.g.
        # g when both are -0.0 at one point)
        if "f_neg0" in same:
            assert _bits_equal(result["f_neg0"], result[same["f_neg0"]])
        else:
            assert not _bits_equal(result["f_neg0"], result["f"])
    for c in back:
        assert list(c["params"]) == list(params)
        for k, v in params.items():
            assert _bits_equal(c["params"][k], v), k
        assert list(c["result"]) == list(result)                   # column order kept
        for k, v in result.items():
            assert _bits_equal(c["result"][k], v), k


def test_chunk_encoding_is_compact(tmp_path):
    # parameters: the axes once and two positions; text: codes; a twin column: its name
    n = 6000
    axes = {"N": np.arange(1, 61), "W": np.linspace(1.0, 2.0, 100)}
    where = np.unravel_index(np.arange(n), (60, 100))
    params = {k: a[i] for (k, a), i in zip(axes.items(), where)}
    u = np.sqrt(params["W"] * params["N"])
    lam = 1.0 / (1.0 + params["W"])
    bad = u.copy()
    bad[7] = np.nan                     # a NaN: not recomputed (platform NaN payloads)
    result = {"U_q": u, "U_y": u.copy(), "U_z": -u, "bottleneck": np.where(u > 3, "q", "yyy"),
              "method": np.array(["thesis"] * n), "lam": lam, "Q_q": lam * u,
              "S": u + lam, "bad": bad, "Q_bad": bad * lam}
    with SweepStore(tmp_path / "s.sqlite") as s:
        s.record_chunk(params, result, context="c", version="v", axes=axes,
                       positions=slice(0, n))
    con = sqlite3.connect(tmp_path / "s.sqlite")
    pb, rb, extra = con.execute("SELECT params, result, extra FROM chunks").fetchone()
    con.close()
    extra = json.loads(extra)
    assert extra["__same__"] == {"U_y": "U_q"}
    assert extra["__grid__"] == {"names": ["N", "W"], "start": 0, "stop": n}
    assert extra["__codes__"] == {"bottleneck": ["<U3", ["yyy", "q"]]}
    assert set(extra["__constant__"]) == {"method"}
    assert extra["__derived__"] == {"Q_q": ["*", "U_q", "lam"], "S": ["+", "U_q", "lam"]}
    assert len(pb) < 2000                           # axes (160 numbers), not 6000 rows
    # U_q, U_z, lam, bad, Q_bad as float64, bottleneck as one byte a point, the .npy header
    assert n * 41 <= len(rb) < n * 41 + 512
    with SweepStore(tmp_path / "s.sqlite") as s:
        (c,) = s.chunk_arrays()
    for k, v in result.items():
        assert _bits_equal(c["result"][k], v), k


def test_params_not_reproduced_by_the_axes_are_stored_as_columns(tmp_path):
    axes = {"x": np.array([1.0, 2.0, 3.0])}
    params = {"x": np.array([1.0, 2.5])}                 # 2.5 is not on the axis
    result = {"y": np.array([0.0, -0.0])}
    with SweepStore(tmp_path / "s.sqlite") as s:
        s.record_chunk(params, result, context="c", version="v", axes=axes,
                       positions=slice(0, 2))
        (c,) = s.chunk_arrays()
        extra = json.loads(s._q("SELECT extra FROM chunks").fetchone()[0] or "{}")
    assert "__grid__" not in extra
    assert _bits_equal(c["params"]["x"], params["x"])
    assert _bits_equal(c["result"]["y"], result["y"])        # -0.0 not folded into 0.0


def test_sweep_store_reads_back_bit_identical_table(tmp_path):
    grid = {"x": np.arange(1.0, 41.0), "z": [0.0, 1.0, 2.0]}
    ref = sweep(F.mixed_vec, grid, executor="serial", chunk=7, progress=False)
    store = tmp_path / "s.sqlite"
    first = sweep(F.mixed_vec, grid, executor="serial", chunk=7, store=store, progress=False)
    again = sweep(F.mixed_vec, grid, executor="serial", chunk=7, store=store, progress=False)
    for t in (first, again):
        assert t.columns == ref.columns
        for c in ref.columns:
            assert _bits_equal(t[c], ref[c]), c


def test_resume_after_interruption(tmp_path):
    # a vectorised sweep failing part way keeps its finished chunks (stored as grid
    # positions); the resumed sweep computes only the rest and gives the full table
    log, flag = tmp_path / "log.txt", tmp_path / "flag"
    flag.write_text("")
    grid = {"x": np.arange(1.0, 11.0), "z": [0, 1]}
    store = tmp_path / "s.sqlite"
    fixed = {"log": str(log), "flag": str(flag)}
    with pytest.raises(RuntimeError, match="flag set"):
        sweep(F.logged_vec, grid, fixed=fixed, executor="serial", chunk=4, vectorized=True,
              store=store, progress=False)
    with SweepStore(store) as s:
        done = s.count()
    assert 0 < done < 20
    first = [float(v) for v in log.read_text().split()]
    flag.unlink()
    t = sweep(F.logged_vec, grid, fixed=fixed, executor="serial", chunk=4, vectorized=True,
              store=store, progress=False)
    second = [float(v) for v in log.read_text().split()][len(first):]
    assert len(first) + len(second) == 20 and len(second) == 20 - done   # nothing twice
    assert np.array_equal(t["y"], np.sqrt(t["x"]) + 1.0)
    assert t["x"].tolist() == np.repeat(np.arange(1.0, 11.0), 2).tolist()


def _legacy_schema3(path) -> None:
    """Rewrite every chunk of a store as schema 3 wrote it (parameters and non-constant
    result columns as one .npy structured array each, constants in ``extra``)."""
    con = sqlite3.connect(path)
    rows = con.execute("SELECT id, n, params, result, extra FROM chunks").fetchall()
    for i, n, pb, rb, extra in rows:
        params, res = _store._decode_chunk(n, pb, rb, extra)
        constant = {k: c for k, v in res.items() if (c := _store._constant(v)) is not None}
        plain = {k: v for k, v in res.items() if v.dtype.kind in "biufU" and k not in constant}
        ex = {k: v.tolist() for k, v in res.items() if v.dtype.kind not in "biufU"}
        if constant:
            ex["__constant__"] = constant
            ex["__order__"] = list(res)
        con.execute("UPDATE chunks SET params = ?, result = ?, extra = ? WHERE id = ?",
                    (bytes(_store._npz(params)), bytes(_store._npz(plain)),
                     json.dumps(ex) if ex else None, i))
    con.execute("UPDATE meta SET value = '3' WHERE name = 'schema'")
    con.commit()
    con.close()


def test_store_of_schema_3_is_read(tmp_path):
    grid = {"x": np.arange(1.0, 41.0), "z": [0.0, 1.0, 2.0]}
    store = tmp_path / "s.sqlite"
    ref = sweep(F.mixed_vec, grid, executor="serial", chunk=7, store=store, progress=False)
    _legacy_schema3(store)
    con = sqlite3.connect(store)
    n_chunks = con.execute("SELECT COUNT(*) FROM chunks").fetchone()[0]
    assert "__grid__" not in (con.execute("SELECT extra FROM chunks").fetchone()[0] or "")
    con.close()
    with SweepStore(store) as s:
        assert s.meta()["schema"] == 3 and s.count() == 120
        table = s.to_table()
    assert sorted(table["y"].tolist()) == sorted(ref["y"].tolist())
    back = sweep(F.mixed_vec, grid, executor="serial", chunk=7, store=store, progress=False)
    for c in ref.columns:
        assert _bits_equal(back[c], ref[c]), c
    con = sqlite3.connect(store)
    assert con.execute("SELECT COUNT(*) FROM chunks").fetchone()[0] == n_chunks  # no recompute
    con.close()


def test_store_of_a_newer_schema_is_refused_and_left_alone(tmp_path):
    store = tmp_path / "s.sqlite"
    sweep(F.mixed_vec, {"x": [1.0, 2.0, 3.0]}, executor="serial", store=store, progress=False)
    con = sqlite3.connect(store)
    con.execute("UPDATE meta SET value = '99' WHERE name = 'schema'")
    con.commit()
    con.close()
    before = store.read_bytes()
    with pytest.raises(ValueError, match=r"schema 99.*reads schemas up to 5"):
        SweepStore(store)
    with pytest.raises(ValueError, match="schema 99"):
        sweep(F.mixed_vec, {"x": [1.0, 2.0, 3.0]}, executor="serial", store=store,
              progress=False)
    assert store.read_bytes() == before


def test_writer_thread_error_is_raised(tmp_path):
    from mva.sweeps import _ChunkWriter
    path = tmp_path / "s.sqlite"
    SweepStore(path).close()
    with SweepStore(path, readonly=True) as s:
        w = _ChunkWriter(s)
        w.put({"x": np.array([1.0, 2.0])}, {"y": np.array([3.0, 4.0])}, context="c",
              version="v")
        with pytest.raises(ValueError, match="read-only"):
            w.close()


# ---------------------------------------------------------------------------
# schema 5: a large chunk's stored columns in a side file (SIDE_FILE_BYTES = 0: every chunk)
# ---------------------------------------------------------------------------
def _side_files(store) -> set[str]:
    folder = str(store) + _store.SIDE_SUFFIX
    return set(os.listdir(folder)) if os.path.isdir(folder) else set()


def _named_files(store) -> set[str]:
    with SweepStore(store) as s:
        return s._side_names()


@settings(max_examples=30, deadline=None)
@given(chunks())
def test_side_file_round_trip_is_bit_identical(tmp_path_factory, chunk):
    axes, positions, params, result = chunk
    path = tmp_path_factory.mktemp("side") / "s.sqlite"
    with mock.patch.object(_store, "SIDE_FILE_BYTES", 0), SweepStore(path) as s:
        s.record_chunk(params, result, context="c", version="v", axes=axes, positions=positions)
        (c,) = s.chunk_arrays()
        rb, extra = s._q("SELECT result, extra FROM chunks").fetchone()
    spec = json.loads(extra)["__file__"]
    assert rb == b"" and _side_files(path) == {spec["name"]}
    assert os.path.getsize(str(path) + _store.SIDE_SUFFIX + "/" + spec["name"]) == spec["bytes"]
    assert list(c["result"]) == list(result)
    for k, v in params.items():
        assert _bits_equal(c["params"][k], v), k
    for k, v in result.items():
        assert _bits_equal(c["result"][k], v), k


def test_only_large_chunks_go_to_side_files(tmp_path):
    x = np.arange(1.0, 40001.0)          # y: 320 kB, below SIDE_FILE_BYTES; then above
    for n, expect in ((40000, False), (200000, True)):
        store = tmp_path / f"s{n}.sqlite"
        grid = {"x": np.arange(1.0, n + 1.0)}
        t = sweep(F.logged_vec, grid, fixed={"log": str(tmp_path / "log")}, store=store,
                  executor="serial", vectorized=True, chunk=n, progress=False)
        assert bool(_side_files(store)) == expect
        assert np.array_equal(t["y"], np.sqrt(grid["x"]) + 1.0)
    assert x.nbytes * 5 >= _store.SIDE_FILE_BYTES > x.nbytes


def test_side_files_are_replaced_only_after_a_restart_succeeds(tmp_path, monkeypatch):
    monkeypatch.setattr(_store, "SIDE_FILE_BYTES", 0)
    store, log, flag = tmp_path / "s.sqlite", tmp_path / "log", tmp_path / "flag"
    grid = {"x": [float(i) for i in range(10)]}
    old = sweep(F.logged_vec, grid, fixed={"log": str(log)}, store=store, executor="serial",
                vectorized=True, chunk=2, progress=False)
    old_files = _side_files(store)
    assert len(old_files) == 5 and _named_files(store) == old_files
    flag.write_text("")
    new_fixed = {"log": str(log), "flag": str(flag)}
    with pytest.raises(RuntimeError, match="flag set"):       # a restart failing part way
        sweep(F.logged_vec, grid, fixed=new_fixed, store=store, executor="serial",
              vectorized=True, chunk=2, on_mismatch="restart", progress=False)
    staged = _side_files(store) - old_files
    assert old_files <= _side_files(store) and len(staged) == 3      # x = 0..5 staged
    with SweepStore(store) as s:
        assert s.to_table()["y"].tolist() == old["y"].tolist()      # old points all readable
    flag.unlink()
    new = sweep(F.logged_vec, grid, fixed=new_fixed, store=store, executor="serial",
                vectorized=True, chunk=2, on_mismatch="restart", progress=False)
    assert new["y"].tolist() == old["y"].tolist()
    # the old chunks' files are gone once the new ones replaced them; nothing else is left
    assert not (_side_files(store) & old_files) and staged <= _side_files(store)
    assert _side_files(store) == _named_files(store) and len(_side_files(store)) == 5
    with SweepStore(store) as s:
        s.clear()
    assert _side_files(store) == set()


def test_orphaned_side_files_are_removed_by_the_next_writer(tmp_path, monkeypatch):
    monkeypatch.setattr(_store, "SIDE_FILE_BYTES", 0)
    store = tmp_path / "s.sqlite"
    with SweepStore(store) as s:
        s.record_chunk({"x": np.arange(3.0)}, {"y": np.arange(3.0)}, context="c", version="v")
    kept = _side_files(store)
    # a file whose row was never committed (a writer killed between the two)
    orphan = os.path.join(str(store) + _store.SIDE_SUFFIX, "chunk-0123456789abcdef.npy")
    with open(orphan, "wb") as f:
        f.write(b"partial")
    other = os.path.join(str(store) + _store.SIDE_SUFFIX, "notes.txt")   # not ours: kept
    with open(other, "w") as f:
        f.write("x")
    with SweepStore(store) as s:
        assert len(s.chunk_arrays()) == 1              # reading removes nothing
        assert os.path.exists(orphan)
        s.record_chunk({"x": np.arange(3.0)}, {"y": np.arange(3.0)}, context="c", version="v")
        assert len(s.chunk_arrays()) == 2
    assert not os.path.exists(orphan) and os.path.exists(other)
    assert kept < _side_files(store) and len(_side_files(store) - {"notes.txt"}) == 2


def test_missing_or_modified_side_file_is_reported(tmp_path, monkeypatch):
    monkeypatch.setattr(_store, "SIDE_FILE_BYTES", 0)
    store = tmp_path / "s.sqlite"
    with SweepStore(store) as s:
        s.record_chunk({"x": np.arange(3.0)}, {"y": np.arange(3.0)}, context="c", version="v")
    (name,) = _side_files(store)
    path = os.path.join(str(store) + _store.SIDE_SUFFIX, name)
    with open(path, "ab") as f:
        f.write(b"\0")
    with SweepStore(store) as s, pytest.raises(ValueError, match="has 153 bytes, its row says"):
        s.chunk_arrays()
    os.unlink(path)
    with SweepStore(store) as s, pytest.raises(ValueError, match=r"chunk file .* is missing.*"
                                               r"copy or move the two together"):
        s.to_table()


def test_in_memory_store_keeps_large_chunks_inside(monkeypatch, tmp_path):
    monkeypatch.setattr(_store, "SIDE_FILE_BYTES", 0)
    monkeypatch.chdir(tmp_path)
    with SweepStore(":memory:") as s:
        s.record_chunk({"x": np.arange(3.0)}, {"y": np.arange(3.0)}, context="c", version="v")
        (c,) = s.chunk_arrays()
    assert c["result"]["y"].tolist() == [0.0, 1.0, 2.0] and os.listdir(tmp_path) == []


def test_twin_of_a_derived_column_reads_back(tmp_path):
    """Found by Hypothesis: ``f`` equals ``h * h`` bit for bit (stored as that formula) and
    ``f_twin`` is identical to ``f`` (stored as its name): reading back must compute ``f``
    before copying it (a KeyError before)."""
    f = np.array([0.0] * 7 + [1.0])
    result = {"f": f, "h": -f, "k": np.arange(8.0) * 0.5 + 3.0, "f_twin": f.copy()}
    with SweepStore(tmp_path / "s.sqlite") as s:
        s.record_chunk({"x": np.arange(8.0)}, result, context="c", version="v")
        extra = json.loads(s._q("SELECT extra FROM chunks").fetchone()[0])
        (c,) = s.chunk_arrays()
    assert extra["__derived__"] == {"f": ["*", "h", "h"]} and extra["__same__"] == {"f_twin": "f"}
    for k, v in result.items():
        assert _bits_equal(c["result"][k], v), k
