"""The diagnosis benchmarks answer a bad argument with one ``error:`` line (no traceback)."""

from __future__ import annotations

import argparse

import pytest

from benchmarks._stored import parse


def _parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser()
    ap.add_argument("--points", type=int, default=8)
    ap.add_argument("--seed", type=int, default=7)
    return ap


def test_good_arguments_parse():
    a = parse(_parser(), ["--points", "3", "--seed", "0"])
    assert (a.points, a.seed) == (3, 0)


@pytest.mark.parametrize("argv, said", [
    (["--points", "abc"], "invalid int value: 'abc'"),
    (["--points", "0"], "--points must be a positive integer; got 0"),
    (["--seed", "-1"], "--seed must be a non-negative integer; got -1"),
    (["--bogus"], "unrecognized arguments: --bogus")])
def test_bad_argument_is_one_error_line(argv, said, capsys):
    with pytest.raises(SystemExit) as exc:
        parse(_parser(), argv)
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("error: ") and said in err


@pytest.mark.parametrize("argv, said", [
    (["--samples", "0"], "--samples must be a positive integer; got 0"),
    (["--points", "-2"], "--points must be a positive integer; got -2"),
    (["--seed", "x"], "invalid int value: 'x'")])
def test_blocked_drain_benchmark_refuses_bad_arguments(argv, said, capsys):
    from benchmarks.pdq_blocked_drain import main

    with pytest.raises(SystemExit) as exc:
        main(argv)
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("error: ") and said in err
