"""Tests of validation.report, validation.targets and the ``validate`` subcommand."""

from __future__ import annotations

import argparse
import os

import numpy as np
import pytest

from validation import report as rep
from validation.targets import TARGETS, evaluate, grids, policy_ratios, targets_table
from validation.validate_cli import register


@pytest.fixture(scope="module")
def small():
    # PDQ and the deterministic-handler policy grids with few requests: fast, every code path
    return rep.run_validation(quick=True, only=("pdq", "policy-det"), cycles_scale=0.05,
                              executor="serial", progress=False, seed=4)


def test_grids_cover_the_targets():
    g = grids(quick=True)
    assert {"lopc", "ini", "ini-dispatch", "ini-cs2", "policy", "policy-det", "pdq"} <= set(g)
    assert {p.dispatch for p in g["ini-dispatch"]["params"]} == {"static", "round_robin",
                                                                 "shared"}
    assert max(p.S for p in g["ini"]["params"]) == 16 and min(p.S for p in g["ini"]["params"]) == 1
    assert {float(p.cs2_O) for p in g["ini-cs2"]["params"]} == {0.0, 0.5}
    full = grids(quick=False)
    assert len(full["lopc"]["params"]) > len(g["lopc"]["params"])
    groups = {t.group.split("/")[0] for t in TARGETS}
    assert groups <= set(g)


def test_run_validation_results(small):
    assert sorted(small.grids) == ["pdq/partitioned", "pdq/shared", "policy-det/fixed",
                                   "policy-det/floating", "policy-det/single"]
    names = {t.target.name for t in small.targets}
    assert {"pdq.shared.max", "pdq.partitioned.max", "policy-det.winner"} <= names
    assert "lopc.best.mean" not in names          # grid not run: target skipped
    for t in small.targets:
        assert np.isfinite(t.achieved)
        assert t.met == (t.achieved <= t.target.threshold + 1e-12 if t.target.upper
                         else t.achieved >= t.target.threshold - 1e-12)
    with pytest.raises(KeyError):
        small.target("nope")
    with pytest.raises(ValueError, match="only"):
        rep.run_validation(only=("nope",))


def test_policy_ratios_by_hand(small):
    r = policy_ratios(small.grids, "policy-det")
    fx, fl = small.grids["policy-det/fixed"], small.grids["policy-det/floating"]
    assert r["model"]["floating/fixed"] == pytest.approx(fl.values("T", "model")
                                                         / fx.values("T", "model"))
    assert r["sim"]["floating/fixed"] == pytest.approx(fl.values("T", "sim")
                                                       / fx.values("T", "sim"))
    names = ("fixed", "floating", "single")
    assert set(r["winner_model"]) <= set(names) and len(r["winner_sim"]) == len(r["p"])


def test_evaluate_statistics(small):
    g = small.grids["pdq/shared"]
    ev = {t.target.name: t for t in evaluate(small.grids)}
    assert ev["pdq.shared.max"].achieved == pytest.approx(
        float(np.max(np.abs(g.values("R", "rel_error")))))
    t = targets_table(list(ev.values()))
    assert "target" in t.columns and len(t) == len(ev)


def test_write_report(small, tmp_path):
    out = rep.write_report(small, tmp_path / "rep")
    assert os.path.exists(out["md"]) and os.path.exists(out["html"])
    md = open(out["md"], encoding="utf-8").read()
    html = open(out["html"], encoding="utf-8").read()
    assert "## Accuracy targets" in md and "Execution-time ratios" in md
    assert "<table>" in html and "<img" in html
    pngs = sorted(f for f in os.listdir(tmp_path / "rep") if f.endswith(".png"))
    assert "pdq_R.png" in pngs and "policy-det_ratios.png" in pngs
    for f in pngs:
        with open(tmp_path / "rep" / f, "rb") as fh:
            assert fh.read(8) == b"\x89PNG\r\n\x1a\n"
    assert out["summary"].startswith("# Validation")


def test_md_to_html_tables_and_escaping():
    h = rep._md_to_html("# T\n\n| a | b |\n|---|---|\n| 1 | <x> |\n| NOT MET | 2 |\n")
    assert "<h1>T</h1>" in h and "&lt;x&gt;" in h and 'class="bad"' in h
    assert h.count("<tr") == 3


def test_best_method():
    from models.ini import INIParams
    from models.lopc import LoPCParams
    assert rep.best_method(LoPCParams(P=16, W=1, o=1, L=1)) == "mva"
    assert rep.best_method(INIParams(S=7, W=1, o=1, O=1)) == "exact"
    assert rep.best_method(INIParams(S=8, W=1, o=1, O=1)) == "linearizer"


def test_validate_subcommand(tmp_path, capsys):
    parser = argparse.ArgumentParser(prog="smp-contention")
    register(parser.add_subparsers(dest="command"))
    args = parser.parse_args(["validate", "--quick", "--only", "pdq", "--workers", "1",
                              "--scale", "0.02", "--out", str(tmp_path / "v"), "--no-plots"])
    text = args.func(args)
    assert "PDQ shared queue" in text and "Report:" in text
    # piped (not a terminal): one line per finished grid, named, with the overall count
    err = capsys.readouterr().err.splitlines()
    done = [line for line in err if " done in " in line]
    assert [line.split(" done in ")[0] for line in done] == [
        "[1/2] pdq [shared] (6 points)", "[2/2] pdq [partitioned] (6 points)"]
    assert os.path.exists(tmp_path / "v" / "report.html")
    assert not [f for f in os.listdir(tmp_path / "v") if f.endswith(".png")]
    bad = parser.parse_args(["validate", "--workers", "0"])
    with pytest.raises(ValueError, match="workers"):
        bad.func(bad)


def test_default_output_directory_is_ignored_by_git():
    from pathlib import Path

    parser = argparse.ArgumentParser(prog="smp-contention")
    register(parser.add_subparsers(dest="command"))
    out = parser.parse_args(["validate"]).out
    ignore = (Path(__file__).resolve().parents[2] / ".gitignore").read_text().splitlines()
    assert f"{out}/" in ignore or f"/{out}/" in ignore
