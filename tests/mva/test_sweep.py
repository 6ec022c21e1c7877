"""Tests of mva.sweep: executors, dask, store/resume after SIGKILL, seeds, mismatch."""

from __future__ import annotations

import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import textwrap
import threading
import time
from collections import Counter
from concurrent.futures import ProcessPoolExecutor, ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import mva
from mva import _version
from mva.sweeps import StoreMismatchError, SweepStore, point_key, point_seed, sweep
from tests.mva import _sweep_funcs as F

ROOT = Path(__file__).resolve().parents[2]

GRID = {"N": [1, 2, 3, 5, 8], "Z": [0.0, 4.0]}


def _expected_repairman(N, Z, D=1.0):
    """Hand recursion of exact MVA for one queue + delay (Lazowska et al. 1984, ch. 7)."""
    q = 0.0
    for n in range(1, N + 1):
        r = D * (1 + q)
        x = n / (r + Z)
        q = x * r
    return x, r


# ---------------------------------------------------------------------------
# results and executors
# ---------------------------------------------------------------------------
def test_vectorised_values_and_columns():
    t = sweep(F.repairman, GRID, executor="serial")
    assert t.columns == ("N", "Z", "X", "R", "U", "Q", "method")
    assert len(t) == 10
    assert t["N"].tolist() == [1, 1, 2, 2, 3, 3, 5, 5, 8, 8]  # first name slowest
    for N, Z, X, R, Q in zip(t["N"], t["Z"], t["X"], t["R"], t["Q"]):
        x, r = _expected_repairman(int(N), float(Z))
        assert X == pytest.approx(x, rel=1e-12) and R == pytest.approx(r, rel=1e-12)
        # Little's law on the queue and on the whole loop
        assert Q == pytest.approx(X * R, rel=1e-12)
        assert N == pytest.approx(X * (R + Z), rel=1e-12)
    assert set(t["method"]) == {"exact-mva"}
    assert np.all((t["U"] >= 0) & (t["U"] <= 1))


def test_vectorised_is_called_in_chunks(monkeypatch):
    calls = []

    def spy(N, Z):
        calls.append(np.shape(N))
        return F.repairman(N, Z=Z)
    t = sweep(spy, GRID, executor="serial", chunk=3)
    ref = sweep(F.repairman, GRID, executor="serial")
    assert t["X"].tolist() == ref["X"].tolist()
    # the probe: one array call of 2 points + one scalar call; then chunks of 3 for the 8 left
    assert calls == [(2,), (), (3,), (3,), (2,)]


def test_vectorized_false_calls_per_point():
    seen = []

    def spy(N, Z):
        seen.append(np.ndim(N))
        return F.repairman(N, Z=Z)
    sweep(spy, GRID, executor="serial", vectorized=False)
    assert seen == [0] * 10


def test_per_point_detected_for_scalar_only_function(tmp_path):
    log = tmp_path / "log"
    t = sweep(F.logged_point, {"x": [1.0, 4.0, 9.0]}, fixed={"log": str(log)}, executor="serial")
    assert t["y"].tolist() == [2.0, 3.0, 4.0]
    assert len(log.read_text().splitlines()) == 3  # the failed array probe logs nothing


def test_bare_scalar_and_array_results():
    t = sweep(F.fails_on_three, {"x": [1, 2]}, executor="serial")
    assert t.columns == ("x", "result") and t["result"].tolist() == [2.0, 4.0]
    t = sweep(F.square, {"x": [1, 2, 3]}, executor="serial")
    assert t["result"].tolist() == [1, 4, 9]


def test_explicit_point_list_and_fixed():
    pts = [{"N": 4, "Z": 1.0}, {"N": 2, "Z": 0.0}]
    t = sweep(F.repairman, pts, fixed={"D": 2.0}, executor="serial")
    assert t["N"].tolist() == [4, 2]
    x, _ = _expected_repairman(4, 1.0, D=2.0)
    assert t["X"][0] == pytest.approx(x)
    with pytest.raises(ValueError, match="duplicate point"):
        sweep(F.repairman, pts + [pts[0]], executor="serial")
    with pytest.raises(ValueError, match="same names"):
        sweep(F.repairman, [{"N": 1}, {"N": 2, "Z": 1.0}], executor="serial")


def test_same_results_serial_process_pool_thread_pool():
    serial = sweep(F.repairman, GRID, executor="serial", vectorized=False)
    with ProcessPoolExecutor(max_workers=2) as pool:
        proc = sweep(F.repairman, GRID, executor=pool, vectorized=False)
    with ThreadPoolExecutor(max_workers=2) as pool:
        thr = sweep(F.repairman, GRID, executor=pool, chunk=4)
    default = sweep(F.repairman, GRID, vectorized=False, workers=2)  # own process pool
    for t in (proc, thr, default):
        assert t.columns == serial.columns
        for c in serial.columns:
            assert t[c].tolist() == serial[c].tolist()


def test_same_results_on_dask_local_cluster():
    import distributed
    serial = sweep(F.mm1_sim, {"lam": [0.5, 0.8], "mu": [1.0]}, seed=11, replications=3,
                   executor="serial")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=":0") as cluster, \
            distributed.Client(cluster) as client:
        via_client = sweep(F.mm1_sim, {"lam": [0.5, 0.8], "mu": [1.0]}, seed=11,
                           replications=3, executor=client)
        via_executor = sweep(F.repairman, GRID, executor=client.get_executor(), chunk=4)
        pids = sweep(F.pid_point, {"x": list(range(6))}, executor=client)["pid"].tolist()
        worker_pids = set(client.run(os.getpid).values())
    # the work really ran in the cluster's two worker processes
    assert set(pids) <= worker_pids and os.getpid() not in pids and len(worker_pids) == 2
    for c in serial.columns:
        assert via_client[c].tolist() == serial[c].tolist()
    ref = sweep(F.repairman, GRID, executor="serial")
    assert via_executor["X"].tolist() == ref["X"].tolist()


def test_unpicklable_function_gives_clear_error():
    with pytest.raises(TypeError, match="cannot be pickled.*executor='serial'"):
        sweep(lambda x: float(x), {"x": [1, 2]}, executor="process", vectorized=False)
    # the same function is fine serially
    assert sweep(lambda x: float(x), {"x": [1, 2]}, executor="serial",
                 vectorized=False)["result"].tolist() == [1.0, 2.0]


def test_errors_raise_with_note_or_are_recorded(tmp_path):
    with pytest.raises(ZeroDivisionError) as info:
        sweep(F.fails_on_three, {"x": [1, 2, 3, 4]}, executor="serial", vectorized=False)
    assert any("'x': 3" in n for n in getattr(info.value, "__notes__", ["'x': 3"]))
    t = sweep(F.fails_on_three, {"x": [1, 2, 3, 4]}, executor="serial", on_error="record",
              store=tmp_path / "s.sqlite")
    assert t.columns[-1] == "error"
    assert t["error"].tolist() == [None, None, "ZeroDivisionError: three is bad", None]
    assert np.isnan(t["result"][2]) and t["result"][3] == 8.0


# ---------------------------------------------------------------------------
# seeds
# ---------------------------------------------------------------------------
def test_seeded_replications_identical_across_executors_and_chunking():
    grid = {"lam": [0.3, 0.6, 0.9], "mu": [1.0]}
    a = sweep(F.mm1_sim, grid, seed=2024, replications=4, executor="serial")
    with ProcessPoolExecutor(max_workers=2) as pool:
        b = sweep(F.mm1_sim, grid, seed=2024, replications=4, executor=pool, chunk=5)
    assert a.columns == ("lam", "mu", "replication", "seed", "W", "R", "n")
    assert a["replication"].tolist() == [0, 1, 2, 3] * 3
    for c in a.columns:
        assert a[c].tolist() == b[c].tolist()
    # every replication is a different stream; a different base seed changes them
    assert len(set(a["seed"].tolist())) == 12
    c = sweep(F.mm1_sim, grid, seed=2025, replications=4, executor="serial")
    assert not np.array_equal(a["R"], c["R"])
    # the seed passed is point_seed(base, point) and reproduces the row
    row = {"lam": 0.6, "mu": 1.0, "replication": 2}
    s = point_seed(2024, row)
    i = 4 + 2
    assert a["seed"][i] == s
    assert F.mm1_sim(0.6, 1.0, seed=s)["R"] == a["R"][i]


def test_seed_independent_of_grid_order_and_extent():
    a = sweep(F.mm1_sim, {"lam": [0.3, 0.6], "mu": [1.0]}, seed=5, executor="serial")
    b = sweep(F.mm1_sim, {"lam": [0.9, 0.6], "mu": [1.0]}, seed=5, executor="serial")
    assert a["seed"][1] == b["seed"][1] and a["R"][1] == b["R"][1]


@given(st.integers(0, 2**63), st.dictionaries(st.sampled_from("abc"),
                                              st.integers(-10**6, 10**6), min_size=1))
def test_point_seed_deterministic_in_range(base, point):
    s = point_seed(base, point)
    assert s == point_seed(base, dict(reversed(list(point.items()))))
    assert 0 <= s < 2**63


# ---------------------------------------------------------------------------
# the store
# ---------------------------------------------------------------------------
def test_store_resumes_and_skips_finished(tmp_path):
    store = tmp_path / "s.sqlite"
    log = tmp_path / "log"
    fixed = {"log": str(log)}
    t1 = sweep(F.logged_point, [{"x": 1.0}, {"x": 4.0}], fixed=fixed, store=store,
               executor="serial", vectorized=False)
    assert len(log.read_text().splitlines()) == 2
    t2 = sweep(F.logged_point, [{"x": 1.0}, {"x": 4.0}], fixed=fixed, store=store,
               executor="serial", vectorized=False)
    assert len(log.read_text().splitlines()) == 2  # nothing recomputed
    assert t1["y"].tolist() == t2["y"].tolist() == [2.0, 3.0]
    with SweepStore(store) as st_:
        rows = st_.rows()
        meta = st_.meta()
    assert [r["params"] for r in rows] == [{"x": 1.0}, {"x": 4.0}]
    assert all(r["version"] == _version.__version__ for r in rows)
    assert meta["version"] == _version.__version__ and meta["n_points"] == 2
    # plain SQL, JSON text: readable without this library and without unpickling
    con = sqlite3.connect(store)
    assert con.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    res = [json.loads(r) for (r,) in con.execute("SELECT result FROM points ORDER BY idx")]
    con.close()
    assert res == [{"y": 2.0}, {"y": 3.0}]


def test_store_table_roundtrip_matches_fresh(tmp_path):
    store = tmp_path / "s.sqlite"
    fresh = sweep(F.repairman, GRID, store=store, executor="serial", chunk=3)
    again = sweep(F.repairman, GRID, store=store, executor="serial")
    for c in fresh.columns:
        assert again[c].tolist() == fresh[c].tolist()
    with SweepStore(store) as s:
        t = s.to_table()
    assert t["X"].tolist() == fresh["X"].tolist()


def test_changed_grid_function_and_version_detected(tmp_path, monkeypatch):
    store = tmp_path / "s.sqlite"
    log = tmp_path / "log"
    fixed = {"log": str(log)}
    sweep(F.logged_point, {"x": [1.0, 4.0]}, fixed=fixed, store=store, executor="serial",
          vectorized=False)
    with pytest.raises(StoreMismatchError, match=r"grid changed.*1 point\(s\) of the new grid"):
        sweep(F.logged_point, {"x": [1.0, 4.0, 9.0]}, fixed=fixed, store=store,
              executor="serial", vectorized=False)
    with pytest.raises(StoreMismatchError, match="function changed"):
        sweep(F.fails_on_three, {"x": [1.0, 4.0]}, store=store, executor="serial")
    with pytest.raises(StoreMismatchError, match="fixed arguments or seed changed"):
        sweep(F.logged_point, {"x": [1.0, 4.0]}, fixed={"log": str(log), "delay": 0.001},
              store=store, executor="serial", vectorized=False)
    # reuse: only the new point is computed
    n0 = len(log.read_text().splitlines())
    t = sweep(F.logged_point, {"x": [1.0, 4.0, 9.0]}, fixed=fixed, store=store,
              executor="serial", vectorized=False, on_mismatch="reuse")
    assert t["y"].tolist() == [2.0, 3.0, 4.0]
    assert log.read_text().splitlines()[n0:] == ["9.0 ?"]
    # a new library version is detected
    monkeypatch.setattr("mva.sweeps.__version__", "99.0")
    with pytest.raises(StoreMismatchError, match="library version: store 0"):
        sweep(F.logged_point, {"x": [1.0, 4.0, 9.0]}, fixed=fixed, store=store,
              executor="serial", vectorized=False)
    # restart: everything recomputed, recorded with the new version
    n1 = len(log.read_text().splitlines())
    sweep(F.logged_point, {"x": [1.0, 4.0, 9.0]}, fixed=fixed, store=store,
          executor="serial", vectorized=False, on_mismatch="restart")
    assert len(log.read_text().splitlines()) == n1 + 3
    with SweepStore(store) as s:
        assert {r["version"] for r in s.rows()} == {"99.0"}


def test_store_rejects_foreign_files(tmp_path):
    bad = tmp_path / "not.sqlite"
    bad.write_text("hello, this is not a database" * 100)
    with pytest.raises(ValueError, match="not a usable SQLite"):
        sweep(F.square, {"x": [1, 2]}, store=bad, executor="serial")


_RUNNER = textwrap.dedent("""
    import sys
    sys.path.insert(0, {root!r})
    from mva.sweeps import sweep
    from tests.mva import _sweep_funcs as F
    sweep(F.logged_point, {{"x": [float(i) for i in range({n})]}},
          fixed={{"log": {log!r}, "delay": {delay!r}}}, store={store!r},
          executor={executor!r}, workers=2, vectorized=False, progress=False)
    print("done")
""")


def _kill_once_committed(proc, store, count_sql: str, at_least: int) -> None:
    """SIGKILL the job (its whole process group) once ``count_sql`` on the store reads at
    least ``at_least`` (or after 60 s), and check that the kill ended it."""
    deadline, committed = time.monotonic() + 60, 0
    while time.monotonic() < deadline and proc.poll() is None:
        if store.exists():
            try:
                con = sqlite3.connect(f"file:{store}?mode=ro", uri=True, timeout=5)
                committed = con.execute(count_sql).fetchone()[0]
                con.close()
            except sqlite3.OperationalError:
                committed = 0
        if committed >= at_least:
            break
        time.sleep(0.005)
    os.killpg(proc.pid, signal.SIGKILL)
    _, err = proc.communicate()  # waits and closes the pipes
    assert proc.returncode == -signal.SIGKILL, err.decode()


@pytest.mark.parametrize("executor", ["serial", "process"])
def test_sigkill_mid_run_resumes_without_loss_or_recomputation(tmp_path, executor):
    n, delay = 40, 0.02
    store, log = tmp_path / "s.sqlite", tmp_path / "log"
    script = _RUNNER.format(root=str(ROOT), n=n, log=str(log), delay=delay, store=str(store),
                            executor=executor)
    env = {**os.environ, "SWEEP_TEST_RUN": "1"}
    proc = subprocess.Popen([sys.executable, "-c", script], env=env, start_new_session=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    # wait until some (not all) points are committed, then SIGKILL the whole job
    _kill_once_committed(proc, store, "SELECT COUNT(*) FROM points", 8)
    time.sleep(0.1)  # let orphaned pool workers (same process group, also killed) vanish

    with SweepStore(store) as s:
        before = {json.loads(k)["x"] for k in s.keys()}
    assert 8 <= len(before) < n
    run1 = Counter(float(line.split()[0]) for line in log.read_text().splitlines())
    assert before <= set(run1)  # every committed point was computed in the killed run
    assert all(c == 1 for c in run1.values())

    env["SWEEP_TEST_RUN"] = "2"
    out = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                         text=True, timeout=120)
    assert out.returncode == 0 and "done" in out.stdout, out.stderr
    lines = [line.split() for line in log.read_text().splitlines()]
    run2 = Counter(float(x) for x, run in lines if run == "2")
    everything = {float(i) for i in range(n)}
    # the resumed run computed exactly the points not committed before the kill, each once
    assert set(run2) == everything - before
    assert all(c == 1 for c in run2.values())
    # only points in flight at the kill were computed in both runs
    in_flight = set(run1) - before
    assert set(run1) & set(run2) == in_flight
    assert len(in_flight) <= (1 if executor == "serial" else 2 * 4 + 2)
    with SweepStore(store) as s:
        rows = s.rows()
    assert len(rows) == n  # one row per point (primary key), none lost
    assert sorted(r["params"]["x"] for r in rows) == sorted(everything)
    assert all(r["result"]["y"] == pytest.approx(np.sqrt(r["params"]["x"]) + 1) for r in rows)


# ---------------------------------------------------------------------------
# validation and misc
# ---------------------------------------------------------------------------
def test_argument_validation():
    with pytest.raises(ValueError, match="on_mismatch must be one of"):
        sweep(F.square, {"x": [1]}, on_mismatch="ignore")
    with pytest.raises(ValueError, match="chunk must be an integer >= 1; got 0"):
        sweep(F.square, {"x": [1]}, chunk=0)
    with pytest.raises(ValueError, match="replications needs a seed"):
        sweep(F.square, {"x": [1]}, replications=2)
    with pytest.raises(ValueError, match="finite number"):
        sweep(F.square, {"x": [np.nan]})
    with pytest.raises(ValueError, match="executor must be"):
        sweep(F.square, {"x": [1, 2]}, executor=42, vectorized=False)
    with pytest.raises(ValueError, match="grid must be a mapping"):
        sweep(F.square, 5)


def test_point_key_canonical():
    assert point_key({"b": np.int64(2), "a": np.float64(0.5)}) == '{"a":0.5,"b":2}'


def test_lazy_export_and_frame():
    # ``mva.sweep`` is the function (the module is ``mva.sweeps``) whatever was imported first
    code = ("import mva{first}; import mva.sweeps; from tests.mva._sweep_funcs import square; "
            "print(mva.sweep(square, {{'x': [1, 2]}}, executor='serial')['result'].tolist())")
    for first in ("", "; mva.sweep"):
        out = subprocess.run([sys.executable, "-c", code.format(first=first)], cwd=ROOT,
                             capture_output=True, text=True, check=True)
        assert out.stdout.strip() == "[1, 4]"
    assert mva.SweepStore is SweepStore and mva.point_seed is point_seed
    import pandas as pd
    df = sweep(F.repairman, {"N": [1, 2]}, executor="serial").to_frame()
    assert isinstance(df, pd.DataFrame) and list(df["N"]) == [1, 2]


def test_import_mva_stays_light():
    code = ("import sys, mva; bad = [m for m in ('sqlite3', 'concurrent.futures', 'dask', "
            "'distributed', 'scipy') if m in sys.modules]; print(bad)")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         cwd=ROOT, check=True)
    assert out.stdout.strip() == "[]"


# ---------------------------------------------------------------------------
# the command line (models/sweep_cli.py)
# ---------------------------------------------------------------------------
def _cli(argv):
    import argparse

    from models import sweep_cli
    parser = argparse.ArgumentParser(prog="smp-contention")
    sub = parser.add_subparsers(dest="command")
    sweep_cli.register_cli(sub)
    args = parser.parse_args(argv)
    return args.func(args)


def test_cli_registered():
    from models import cli
    assert "sweep_cli" in cli.MODEL_COMMANDS


def test_cli_parse_param():
    from models.sweep_cli import parse_param
    assert parse_param("N=1:4:2") == ("N", [1, 3])
    assert parse_param("W=0:1:0.25") == ("W", [0.0, 0.25, 0.5, 0.75, 1.0])
    assert parse_param("mode=fixed, floating") == ("mode", ["fixed", "floating"])
    import argparse
    for bad in ("N", "=1,2", "N=", "N=1:5:0"):
        with pytest.raises(argparse.ArgumentTypeError):
            parse_param(bad)


def test_cli_model_sweep_with_store_resumes(tmp_path):
    from models.ini import solve
    store = tmp_path / "ini.sqlite"
    argv = ["sweep", "ini", "--param", "N=1,2,4,8", "--param", "W=41789", "--param", "o=742",
            "--param", "O=2336", "--store", str(store), "--format", "csv",
            "--columns", "N,R,Q_o", "--no-progress"]
    out = _cli(argv)
    lines = out.strip().splitlines()
    assert lines[0] == "N,R,Q_o" and len(lines) == 5
    for line in lines[1:]:
        N, R, Qo = line.split(",")
        ref = solve(N=int(N), W=41789, o=742, O=2336)
        assert float(R) == pytest.approx(ref.R, rel=1e-12)
        assert float(Qo) == pytest.approx(ref.Q_o, rel=1e-12)
    with SweepStore(store) as s:
        assert s.count() == 4 and s.meta()["fn"] == "models.ini:solve"
    assert _cli(argv) == out  # resumed entirely from the store, same table
    with pytest.raises(StoreMismatchError, match="grid changed"):
        _cli([a if a != "N=1,2,4,8" else "N=1,2" for a in argv])


def test_cli_function_with_seeds_and_workers(tmp_path):
    argv = ["sweep", "tests.mva._sweep_funcs:mm1_sim", "--param", "lam=0.5,0.7",
            "--param", "mu=1", "--seed", "3", "--replications", "2", "--format", "csv",
            "--no-progress"]
    serial = _cli(argv + ["--workers", "1"])
    pooled = _cli(argv + ["--workers", "2", "--store", str(tmp_path / "m.sqlite")])
    assert serial == pooled
    assert serial.splitlines()[0] == "lam,mu,replication,seed,W,R,n"
    ref = sweep(F.mm1_sim, {"lam": [0.5, 0.7], "mu": [1]}, seed=3, replications=2,
                executor="serial")
    assert [float(r.split(",")[5]) for r in serial.splitlines()[1:]] == ref["R"].tolist()


def test_cli_unknown_model_is_a_clear_error():
    with pytest.raises(ValueError, match="unknown model 'nope'"):
        _cli(["sweep", "nope", "--param", "x=1"])
    with pytest.raises(ValueError, match="cannot import module"):
        _cli(["sweep", "no_such_module_xyz:f", "--param", "x=1"])
    with pytest.raises(ValueError, match="at least one --param"):
        _cli(["sweep", "tests.mva._sweep_funcs:square"])


def test_progress_flag_and_total(monkeypatch):
    import mva.progress as mp
    seen = []
    real = mp.progress

    def spy(iterable, *, total=None, desc="", enable=None):
        seen.append((total, desc, enable))
        return real(iterable, total=total, desc=desc, enable=enable)
    monkeypatch.setattr(mp, "progress", spy)
    sweep(F.mm1_sim, {"lam": [0.5], "mu": [1.0]}, seed=1, replications=5, executor="serial")
    sweep(F.mm1_sim, {"lam": [0.5], "mu": [1.0]}, seed=1, replications=5, executor="serial",
          chunk=2, progress=False)
    assert seen == [(5, "sweep", None), (3, "sweep", False)]


def test_columns_selection_and_one_point_chunks():
    t = sweep(F.repairman, GRID, executor="serial", columns=["X"], chunk=1)
    assert t.columns == ("N", "Z", "X")
    ref = sweep(F.repairman, GRID, executor="serial")
    assert t["X"].tolist() == ref["X"].tolist()
    with pytest.raises(ValueError, match="unknown result field 'nope'"):
        sweep(F.repairman, GRID, executor="serial", columns=["nope"])


def test_failing_vectorised_chunk_is_isolated_point_by_point():
    t = sweep(F.vec_fails_on_three, {"x": [1, 2, 3, 4, 5]}, executor="serial", chunk=5,
              vectorized=True, on_error="record")
    assert t["error"].tolist() == [None, None, "ValueError: a three in the chunk", None, None]
    assert t["y"][[0, 1, 3, 4]].tolist() == [2.0, 4.0, 8.0, 10.0]
    with pytest.raises(ValueError, match="a three"):
        sweep(F.vec_fails_on_three, {"x": [1, 2, 3]}, executor="serial", vectorized=True)


def test_unpicklable_on_user_process_pool():
    with ProcessPoolExecutor(max_workers=1) as pool:
        with pytest.raises(TypeError, match="cannot run on a process pool"):
            sweep(F.logged_point, {"x": [1.0, 2.0]}, fixed={"log": threading.Lock()},
                  executor=pool, vectorized=False)


def test_cli_main_lopc_and_policy_match_direct_calls(capsys):
    from models.cli import main
    from models.lopc import solve as lopc_solve
    from models.policy import PolicyParams
    from models.policy import solve as policy_solve
    assert main(["sweep", "lopc", "--param", "P=4,16", "--param", "W=1000,2000",
                 "--param", "o=100", "--param", "L=50", "--format", "csv",
                 "--columns", "P,W,R", "--no-progress"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert lines[0] == "P,W,R" and len(lines) == 5
    for line in lines[1:]:
        P, W, R = line.split(",")
        assert float(R) == pytest.approx(lopc_solve(P=int(P), W=int(W), o=100, L=50).R,
                                         rel=1e-12)
    # a model taking a parameter object: fields build PolicyParams, `policy` goes to solve
    assert main(["sweep", "policy", "--param", "policy=fixed,floating", "--param", "p=2,4",
                 "--param", "C=1000", "--format", "csv", "--columns", "policy,p,round_trip",
                 "--no-progress"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert lines[0] == "policy,p,round_trip" and len(lines) == 5
    for line in lines[1:]:
        pol, p, rt = line.split(",")
        ref = policy_solve(PolicyParams(p=int(p), C=1000), policy=pol).round_trip
        assert float(rt) == pytest.approx(float(ref), rel=1e-12)


# ---------------------------------------------------------------------------
# issue 20: restart without loss, grid extension, read-only stores, messages
# issue 19: the bulk path (vectorised functions, chunks stored as arrays)
# ---------------------------------------------------------------------------
def _logged(log):
    return [float(v) for line in log.read_text().splitlines() for v in line.split()] \
        if log.exists() else []


@pytest.mark.parametrize("vectorized", [True, False])
def test_restart_replaces_the_store_only_after_the_new_sweep_succeeds(tmp_path, vectorized):
    store, log, flag = tmp_path / "s.sqlite", tmp_path / "log", tmp_path / "flag"
    grid = {"x": [float(i) for i in range(10)]}
    old = sweep(F.logged_vec, grid, fixed={"log": str(log)}, store=store, executor="serial",
                vectorized=vectorized, chunk=2)
    with SweepStore(store) as s:
        old_meta, old_rows = s.meta(), s.rows()
    # a new sweep (other fixed arguments) restarted over the store fails part way ...
    flag.write_text("")
    new_fixed = {"log": str(log), "flag": str(flag)}
    with pytest.raises(RuntimeError, match="flag set"):
        sweep(F.logged_vec, grid, fixed=new_fixed, store=store, executor="serial",
              vectorized=vectorized, chunk=2, on_mismatch="restart")
    # ... and the store still holds every old point and the old description
    with SweepStore(store) as s:
        assert s.meta() == old_meta and s.rows() == old_rows and s.count() == 10
    n0 = len(_logged(log))
    again = sweep(F.logged_vec, grid, fixed={"log": str(log)}, store=store, executor="serial",
                  vectorized=vectorized)
    assert len(_logged(log)) == n0 and again["y"].tolist() == old["y"].tolist()
    # the same restart, once it can finish, resumes its staged points and only then swaps in
    flag.unlink()
    n1 = len(_logged(log))
    new = sweep(F.logged_vec, grid, fixed=new_fixed, store=store, executor="serial",
                vectorized=vectorized, chunk=2, on_mismatch="restart")
    assert sorted(_logged(log)[n1:]) == [6.0, 7.0, 8.0, 9.0]
    assert new["y"].tolist() == old["y"].tolist()
    with SweepStore(store) as s:
        assert s.count() == 10 and s.meta()["context"] != old_meta["context"]
        assert s.staged_meta() == {}
    # and the new sweep now resumes from the store without computing anything
    n2 = len(_logged(log))
    sweep(F.logged_vec, grid, fixed=new_fixed, store=store, executor="serial",
          vectorized=vectorized)
    assert len(_logged(log)) == n2


def test_extending_a_vectorised_grid_reuses_the_stored_overlap(tmp_path):
    store, log = tmp_path / "s.sqlite", tmp_path / "log"
    fixed = {"log": str(log)}
    small = sweep(F.logged_vec, {"x": [1.0, 2.0, 3.0], "z": [0, 1]}, fixed=fixed, store=store,
                  executor="serial", vectorized=True)
    assert len(_logged(log)) == 6
    with pytest.raises(StoreMismatchError, match=r"grid changed.*0 finished point\(s\) not in "
                                                 r"the new grid, 9 point\(s\) of the new grid"):
        sweep(F.logged_vec, {"x": [0.5, 1.0, 2.0, 3.0, 4.0], "z": [0, 1, 2]}, fixed=fixed,
              store=store, executor="serial", vectorized=True)
    big = sweep(F.logged_vec, {"x": [0.5, 1.0, 2.0, 3.0, 4.0], "z": [0, 1, 2]}, fixed=fixed,
                store=store, executor="serial", vectorized=True, on_mismatch="reuse")
    computed = _logged(log)[6:]
    assert len(computed) == 15 - 6 and 0.5 in computed and 4.0 in computed
    assert big["y"].tolist() == pytest.approx((np.sqrt(big["x"]) + 1).tolist(), rel=0, abs=0)
    keep = np.isin(big["x"], [1.0, 2.0, 3.0]) & (big["z"] <= 1)
    assert sorted(big["y"][keep].tolist()) == sorted(small["y"].tolist())


def test_bulk_store_holds_chunks_as_arrays_readable_without_pickle(tmp_path):
    import io
    store = tmp_path / "s.sqlite"
    t = sweep(F.repairman, {"N": list(range(1, 21)), "Z": [0.0, 4.0]}, store=store,
              executor="serial", chunk=16)
    con = sqlite3.connect(store)
    assert con.execute("SELECT COUNT(*) FROM points").fetchone()[0] == 0
    rows = con.execute("SELECT n, params, result, extra FROM chunks ORDER BY id").fetchall()
    con.close()
    assert sum(n for n, _, _, _ in rows) == 40 and len(rows) == 4  # probe (2), then 16, 16, 6
    # parameters: the grid's axes as .npy arrays, the chunk as a run of grid positions
    pos = []
    for n, p, _, extra in rows:
        spec = json.loads(extra)["__grid__"]
        assert spec["names"] == ["N", "Z"] and spec["stop"] - spec["start"] == n
        f = io.BytesIO(p)
        axes = [np.lib.format.read_array(f, allow_pickle=False) for _ in range(2)]
        assert axes[0].tolist() == list(range(1, 21)) and axes[1].tolist() == [0.0, 4.0]
        assert f.read() == b""           # nothing else: no per-point parameter rows
        pos.extend(range(spec["start"], spec["stop"]))
    assert pos == list(range(40))        # grid order, first parameter slowest
    # columns that vary within a chunk are .npy fields (constant ones are JSON, tested below)
    X = np.concatenate([np.load(io.BytesIO(r), allow_pickle=False)["X"] for _, _, r, _ in rows])
    assert X.tolist() == t["X"].tolist()
    with SweepStore(store) as s:
        back = s.to_table()
        assert s.count() == 40 and len(s.rows()) == 40
    assert sorted(back["X"].tolist()) == sorted(t["X"].tolist())


@given(st.lists(st.integers(1, 12), min_size=1, max_size=6, unique=True),
       st.lists(st.sampled_from([0.0, 0.5, 4.0]), min_size=1, max_size=3, unique=True),
       st.integers(1, 7))
def test_bulk_path_matches_per_point_path(ns, zs, chunk):
    grid = {"N": ns, "Z": zs}
    bulk = sweep(F.repairman, grid, executor="serial", chunk=chunk, progress=False)
    ref = sweep(F.repairman, grid, executor="serial", vectorized=False, progress=False)
    assert bulk.columns == ref.columns
    for c in ref.columns:
        assert bulk[c].tolist() == ref[c].tolist()
        assert bulk[c].dtype == ref[c].dtype


def test_bulk_on_two_worker_processes_matches_serial():
    grid = {"N": list(range(1, 30)), "Z": [0.0, 1.0, 4.0]}
    serial = sweep(F.repairman, grid, executor="serial", chunk=8)
    pooled = sweep(F.repairman, grid, executor="process", workers=2, chunk=8, vectorized=True)
    for c in serial.columns:
        assert pooled[c].tolist() == serial[c].tolist()


def test_read_only_store_reads_back_and_refuses_writes_by_name(tmp_path, monkeypatch):
    log = tmp_path / "log"
    fixed = {"log": str(log)}
    grid = {"x": [1.0, 4.0, 9.0]}
    for vec in (True, False):
        path = tmp_path / f"s{vec}.sqlite"
        done = sweep(F.logged_vec, grid, fixed=fixed, store=path, executor="serial",
                     vectorized=vec, chunk=2)
        shutil.copy(path, tmp_path / "partial.sqlite")
        con = sqlite3.connect(tmp_path / "partial.sqlite")  # as if killed before x=9 was stored
        con.execute("DELETE FROM chunks WHERE n = 1" if vec else
                    "DELETE FROM points WHERE key LIKE '%9.0%'")
        con.commit()
        con.close()
        partial = tmp_path / f"partial{vec}.sqlite"
        os.replace(tmp_path / "partial.sqlite", partial)
        os.chmod(path, 0o444)
        os.chmod(partial, 0o444)
        # this test may run as root, who may write anything: report the file as unwritable
        real = os.access
        monkeypatch.setattr("mva._store.os.access", lambda p, mode: False if os.fspath(p) in (
            str(path), str(partial)) else real(p, mode))
        with SweepStore(path) as s:
            assert s.readonly and s.count() == 3
            with pytest.raises(ValueError, match=rf"store '{path}' is read-only"):
                s.record_chunk({"x": np.array([2.0])}, {"y": np.array([1.0])}, context="c",
                               version="v")
        n0 = len(_logged(log))
        back = sweep(F.logged_vec, grid, fixed=fixed, store=path, executor="serial",
                     vectorized=vec)
        assert back["y"].tolist() == done["y"].tolist() and len(_logged(log)) == n0
        with pytest.raises(ValueError, match=rf"store '{partial}' is read-only .*2 finished "
                                             rf"point\(s\) were read.*1 point\(s\) still need"):
            sweep(F.logged_vec, grid, fixed=fixed, store=partial, executor="serial",
                  vectorized=vec)
        with pytest.raises(ValueError, match=rf"store '{path}' is read-only .*on_mismatch="
                                             rf"'reuse' cannot update it"):
            sweep(F.logged_vec, {"x": [1.0, 4.0, 9.0, 16.0]}, fixed=fixed, store=path,
                  executor="serial", vectorized=vec, on_mismatch="reuse")
        monkeypatch.undo()
    # read-only opening of a finished WAL store works on its own (mode=ro / immutable)
    with SweepStore(tmp_path / "sTrue.sqlite", readonly=True) as s:
        assert s.count() == 3 and s.to_table()["y"].tolist() == done["y"].tolist()


def test_mismatch_message_gives_command_line_and_python_spellings(tmp_path):
    store = tmp_path / "s.sqlite"
    sweep(F.square, {"x": [1, 2]}, store=store, executor="serial")
    with pytest.raises(StoreMismatchError) as info:
        sweep(F.square, {"x": [1, 2, 3]}, store=store, executor="serial")
    msg = str(info.value)
    assert "--on-mismatch reuse" in msg and "on_mismatch='reuse'" in msg
    assert "--on-mismatch restart" in msg and "on_mismatch='restart'" in msg


def test_bulk_store_constant_columns_round_trip_bit_for_bit(tmp_path):
    # a column whose every value in a chunk is the same is stored once; reading back
    # gives the same dtype, bits (-0.0, NaN) and column order as the computing run
    def fn(x):
        x = np.asarray(x, dtype=float)
        k = x.shape
        return {"y": 2.0 * x, "zero": np.full(k, -0.0), "nan": np.full(k, np.nan),
                "label": np.full(k, "thesis"), "n": np.full(k, 7, dtype=np.int32),
                "flag": np.ones(k, dtype=bool), "last": x + 1.0}

    store = tmp_path / "c.sqlite"
    grid = {"x": np.arange(10.0)}
    first = sweep(fn, grid, store=store, executor="serial", chunk=4, vectorized=True,
                  progress=False)
    again = sweep(fn, grid, store=store, executor="serial", chunk=4, vectorized=True,
                  progress=False)
    assert first.columns == again.columns == ("x", "y", "zero", "nan", "label", "n", "flag",
                                              "last")
    for c in first.columns:
        a, b = np.asarray(first[c]), np.asarray(again[c])
        assert a.dtype == b.dtype
        if a.dtype.kind == "f":
            assert a.tobytes() == b.tobytes()
        else:
            assert a.tolist() == b.tolist()
    assert np.signbit(again["zero"]).all() and np.isnan(again["nan"]).all()
    with SweepStore(store) as s:
        chunks = s.chunk_arrays()
    assert [list(c["result"]) for c in chunks] == [list(first.columns[1:])] * len(chunks)
    con = sqlite3.connect(store)
    extra = [json.loads(e) for (e,) in con.execute("SELECT extra FROM chunks")]
    con.close()
    assert all(set(e["__constant__"]) == {"zero", "nan", "label", "n", "flag"} for e in extra)


def test_store_page_size(tmp_path):
    with SweepStore(tmp_path / "a.sqlite", page_size=65536) as s:
        assert s._q("PRAGMA page_size").fetchone()[0] == 65536
    with SweepStore(tmp_path / "a.sqlite", page_size=1024) as s:   # existing: kept
        assert s._q("PRAGMA page_size").fetchone()[0] == 65536
    for bad in (1000, 256, 131072, True, 4096.0):
        with pytest.raises(ValueError, match="page_size"):
            SweepStore(tmp_path / "b.sqlite", page_size=bad)


_BULK_RUNNER = textwrap.dedent("""
    import sys, time
    sys.path.insert(0, {root!r})
    import numpy as np
    from mva.sweeps import sweep
    from tests.mva import _sweep_funcs as F

    def slow(x, log):
        time.sleep(0.02)
        return F.logged_vec(x, log)

    import mva._store
    mva._store.SIDE_FILE_BYTES = {side}
    sweep(slow, {{"x": [float(i) for i in range({n})]}}, fixed={{"log": {log!r}}},
          store={store!r}, executor="serial", chunk=4, vectorized=True, progress=False)
    print("done")
""")


@pytest.mark.parametrize("side", [1 << 20, 0])
def test_bulk_store_sigkill_keeps_committed_chunks(tmp_path, side):
    """A vectorised sweep killed mid-run: every committed chunk is intact, the file passes
    SQLite's integrity check, and the re-run computes only the rest (chunks in the SQLite
    file, or with ``side=0`` each in a side file)."""
    n = 200
    store, log = tmp_path / "s.sqlite", tmp_path / "log"
    script = _BULK_RUNNER.format(root=str(ROOT), n=n, log=str(log), store=str(store),
                                 side=side)
    proc = subprocess.Popen([sys.executable, "-c", script], start_new_session=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    _kill_once_committed(proc, store, "SELECT COALESCE(SUM(n), 0) FROM chunks", 40)
    con = sqlite3.connect(store)
    assert con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    con.close()
    with SweepStore(store) as s:
        before = {row["params"]["x"] for row in s.rows()}
    assert 40 <= len(before) < n
    first = [float(v) for line in log.read_text().splitlines() for v in line.split()]
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0 and "done" in out.stdout, out.stderr
    every = [float(v) for line in log.read_text().splitlines() for v in line.split()]
    again = Counter(every[len(first):])
    assert set(again) == {float(i) for i in range(n)} - before   # only the missing points
    with SweepStore(store) as s:
        rows = s.rows()
    assert sorted(r["params"]["x"] for r in rows) == [float(i) for i in range(n)]
    assert all(r["result"]["y"] == pytest.approx(r["params"]["x"] ** 0.5 + 1, abs=0)
               for r in rows)
    folder = str(store) + "-chunks"
    files = set(os.listdir(folder)) if os.path.isdir(folder) else set()
    with SweepStore(store) as s:
        assert files == s._side_names() and (len(files) == n // 4 if side == 0 else not files)


@given(st.lists(st.sampled_from(["", "PE", "INI", "thesis", "é"]), max_size=40),
       st.integers(1, 6))
def test_text_columns_as_shared_python_strings(values, most):
    from mva.sweeps import _text_objects
    v = np.array(values, dtype=str)
    out = _text_objects(v, most=most)
    assert out.dtype == object and out.shape == v.shape
    assert out.tolist() == v.astype(object).tolist()
    assert all(type(x) is str for x in out.tolist())


def _same_tables(a, b):
    assert a.columns == b.columns
    for c in a.columns:
        assert a[c].dtype == b[c].dtype, c
        if a[c].dtype.kind == "f":                   # bit for bit, NaN of failed points too
            assert a[c].tobytes() == b[c].tobytes(), c
        else:
            assert a[c].tolist() == b[c].tolist(), c


@pytest.mark.parametrize("chunk", [None, 5, 64])
@pytest.mark.parametrize("bad", [None, 3.0])
def test_bulk_forked_workers_write_results_in_place_like_serial(chunk, bad):
    # two forked workers write their chunks' numeric columns into shared memory; the
    # table is the serial one bit for bit (dtypes included), also when a chunk's
    # errors are recorded (its columns then come back pickled, with other dtypes)
    import mva.sweeps as S

    grid = {"x": np.arange(0.0, 60.0), "z": [0.0, 0.5]}
    kw = dict(fixed={"bad": bad}, vectorized=True, progress=False, on_error="record")
    serial = sweep(F.mixed_vec, grid, executor="serial", chunk=chunk, **kw)
    pooled = sweep(F.mixed_vec, grid, executor="process", workers=2, chunk=chunk, **kw)
    _same_tables(pooled, serial)
    assert S._FORKED == {}                       # nothing left behind
    if bad is not None:
        assert any(e is not None for e in pooled["error"].tolist())


def test_bulk_forked_workers_with_store_and_resume(tmp_path):
    # a store filled by forked workers reads back as the serial table; a resume whose
    # missing points are not one contiguous run (index-array chunks) gives it too
    grid = {"x": np.arange(1.0, 41.0), "z": [0.0, 1.0, 2.0]}
    serial = sweep(F.mixed_vec, grid, executor="serial", chunk=7, progress=False)
    store = tmp_path / "s.sqlite"
    pooled = sweep(F.mixed_vec, grid, executor="process", workers=2, chunk=7, store=store,
                   progress=False)
    _same_tables(pooled, serial)
    _same_tables(sweep(F.mixed_vec, grid, executor="serial", store=store, progress=False),
                 serial)
    con = sqlite3.connect(store)
    ids = [r[0] for r in con.execute("SELECT id FROM chunks ORDER BY id").fetchall()]
    con.executemany("DELETE FROM chunks WHERE id = ?", [(i,) for i in ids[1::3]])
    con.commit()
    con.close()
    resumed = sweep(F.mixed_vec, grid, executor="process", workers=2, chunk=4, store=store,
                    progress=False)
    _same_tables(resumed, serial)
