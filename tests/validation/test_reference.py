"""Tests of the published reference tables (validation/data) and their loader.

Spot values cite the line of the text extraction in ``shared/papers/`` they
come from (``004:323`` = line 323 of 004_92ad829e3571bce1.txt, and so on).
"""

from __future__ import annotations

import csv
import dataclasses
import io
import json
import math
from importlib import resources

import numpy as np
import pytest

from mva.table import Table
from validation import reference as ref
from validation.reference import list_tables, load_table, table_info

EXPECTED_ROWS = {
    "jiang97_table_5_1": 6, "jiang97_table_5_2": 6, "jiang97_table_5_3": 10,
    "jiang97_table_5_4": 10, "jiang97_table_5_5": 10, "jiang97_table_5_6": 6,
    "jiang97_table_5_7": 6, "jiang97_table_5_8": 4, "jiang97_table_5_9": 4,
    "pdq99_table_1": 13,            # 12 actions + the published Total row
    "pdq99_table_2": 7,
    "falsafi97_table_2": 10,
    "chong98_table_1": 14,          # "the fourteen machines"
    "chong98_figure_3_miss_penalties": 12,
    "layers_table_2": 4,
    "layers_table_3": 6,            # 5 published rows, Diff creation split in two
}

DATA = resources.files("validation").joinpath("data")


def _col(tid: str, name: str) -> np.ndarray:
    return load_table(tid)[name]


def _row(tid: str, **match: object) -> dict[str, object]:
    t = load_table(tid)
    hits = [i for i in range(len(t)) if all(t[k][i] == v for k, v in match.items())]
    assert len(hits) == 1, (tid, match, hits)
    return {c: t[c][hits[0]] for c in t.columns}


# ---------------------------------------------------------------------------
# catalog and loader
# ---------------------------------------------------------------------------

def test_catalog_lists_every_data_file_once() -> None:
    files = sorted(p.name for p in DATA.iterdir() if p.name.endswith(".csv"))
    catalog = json.loads(DATA.joinpath("catalog.json").read_text(encoding="utf-8"))
    assert sorted(t["file"] for t in catalog["tables"]) == files
    assert list_tables() == [t["id"] for t in catalog["tables"]]
    assert set(list_tables()) == set(EXPECTED_ROWS)


@pytest.mark.parametrize("tid", sorted(EXPECTED_ROWS))
def test_every_table_loads_with_declared_columns(tid: str) -> None:
    info = table_info(tid)
    t = load_table(tid)
    assert isinstance(t, Table)
    assert t.columns == info.column_names
    assert len(t) == info.row_count == EXPECTED_ROWS[tid]
    assert info.id == tid and info.file == f"{tid}.csv"
    assert info.source and info.caption and info.table and info.notes
    assert info.paper_lines[0] < info.paper_lines[1]
    for c in info.columns:
        assert c.kind in ("number", "text", "bool")
        assert isinstance(c.unit, str) and c.description
        a = t[c.name]
        if c.kind == "number":
            assert a.dtype == np.float64
            assert c.unit, f"{tid}.{c.name}: numeric column without a unit"
        elif c.kind == "bool":
            assert a.dtype == np.bool_
        else:
            assert a.dtype == object
            assert all(v is None or (isinstance(v, str) and v == v.strip() and v) for v in a)
    assert t.title is not None and info.caption in t.title


@pytest.mark.parametrize("tid", sorted(EXPECTED_ROWS))
def test_column_names_carry_units(tid: str) -> None:
    suffix_unit = {"_cycles": "cycles", "_bytes": "bytes", "_percent": "percent",
                   "_mhz": "MHz", "_us": "microseconds", "_mcycles": "millions of cycles"}
    for c in table_info(tid).columns:
        for suffix, unit in suffix_unit.items():
            if c.name.endswith(suffix):
                assert unit in c.unit, (tid, c.name, c.unit)


@pytest.mark.parametrize("tid", sorted(EXPECTED_ROWS))
def test_files_are_plain_csv(tid: str) -> None:
    text = DATA.joinpath(f"{tid}.csv").read_text(encoding="utf-8")
    rows = list(csv.reader(io.StringIO(text, newline="")))
    assert all(len(r) == len(rows[0]) for r in rows)
    assert rows[0] == [c.name for c in table_info(tid).columns]
    assert all(n == n.lower() and " " not in n for n in rows[0])  # snake_case header


def test_unknown_table_id_names_it_and_lists_valid_ids() -> None:
    with pytest.raises(ValueError, match="no_such_table") as exc:
        load_table("no_such_table")
    assert "jiang97_table_5_1" in str(exc.value) and "layers_table_3" in str(exc.value)
    with pytest.raises(ValueError, match="valid ids"):
        table_info("jiang97_table_5_10")
    with pytest.raises(ValueError, match="unknown paper key 'jiang'"):
        list_tables("jiang")


def test_table_info_is_frozen_and_filters_by_paper() -> None:
    info = table_info("chong98_table_1")
    with pytest.raises(dataclasses.FrozenInstanceError):
        info.row_count = 3  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        info.columns[0].unit = "x"  # type: ignore[misc]
    assert list_tables("jiang97") == [f"jiang97_table_5_{i}" for i in range(1, 10)]
    assert list_tables("chong98") == ["chong98_table_1", "chong98_figure_3_miss_penalties"]
    assert info.unit("bisection_bytes_per_cycle") == "bytes/processor cycle"
    with pytest.raises(ValueError, match="no column 'nope'"):
        info.unit("nope")


def test_load_returns_fresh_arrays() -> None:
    a = load_table("jiang97_table_5_1")
    a["total_cycles"][0] = -1.0
    assert load_table("jiang97_table_5_1")["total_cycles"][0] == 2318.0


def test_missing_values_are_nan_or_none() -> None:
    t52 = load_table("jiang97_table_5_2")           # 004:347-348, cells printed '–'
    assert np.isnan(t52["handler_cycles"][4:]).all() and np.isnan(t52["queue_cycles"][4:]).all()
    assert not np.isnan(t52["handler_cycles"][:4]).any()
    ksr = _row("chong98_table_1", machine="KSR-2")   # 002:265, latency printed '?'
    assert math.isnan(ksr["network_latency_cycles"])  # type: ignore[arg-type]
    cm5 = _row("chong98_table_1", machine="TMC CM5")  # N/A
    assert math.isnan(cm5["remote_miss_penalty_min_cycles"])  # type: ignore[arg-type]
    assert _row("chong98_table_1", machine="MIT Alewife")["status"] is None
    sw = _row("chong98_figure_3_miss_penalties", miss_type="Load", handled_by="sw")
    assert math.isnan(sw["invalidation_messages"])  # type: ignore[arg-type]
    mh = _row("layers_table_2", parameter="Message Handling Cost")  # 003:108, N/A
    assert (math.isnan(mh["real_system_min"])  # type: ignore[arg-type]
            and math.isnan(mh["real_system_max"]))  # type: ignore[arg-type]
    assert math.isnan(_col("pdq99_table_1", "step")[-1])


# ---------------------------------------------------------------------------
# spot values against the paper text
# ---------------------------------------------------------------------------

def test_spot_values_jiang97() -> None:
    # 004:323  "0	357	409	140	380	836	2318"
    r = _row("jiang97_table_5_1", message_bytes=0.0)
    assert (r["handler_cycles"], r["queue_cycles"], r["sliding_window_cycles"], r["udp_cycles"],
            r["ip_cycles"], r["total_cycles"]) == (357, 409, 140, 380, 836, 2318)
    # 004:348  "65000	–	–	543513	77666	421	688080"
    r = _row("jiang97_table_5_2", message_bytes=65000.0)
    assert (r["ip_cycles"], r["udp_cycles"], r["sliding_window_cycles"], r["total_cycles"]) == \
        (543513, 77666, 421, 688080)
    # 004:372  "8	1	204	17153	2.157	0.737"
    r = _row("jiang97_table_5_3", cluster_size_pes=8.0, inis_per_cluster=1.0)
    assert (r["message_bytes"], r["message_time_cycles"], r["queue_length_messages"],
            r["ini_utilization"]) == (204, 17153, 2.157, 0.737)
    # 004:390  "2	2	197	7574	0.358	0.275"
    r = _row("jiang97_table_5_4", cluster_size_pes=2.0, inis_per_cluster=2.0)
    assert (r["message_bytes"], r["message_time_cycles"]) == (197, 7574)
    # 004:404-407, first and last published columns of Table 5.5
    t = load_table("jiang97_table_5_5")
    assert (t["static_run_time_mcycles"][0], t["round_robin_run_time_mcycles"][0]) == (972, 962)
    assert (t["cluster_size_pes"][-1], t["inis_per_cluster"][-1],
            t["static_run_time_mcycles"][-1]) == (8, 1, 504)
    # 004:419  "2	2	10.3%	22.9%";  004:434  "8	8	2.4%	15.0%"
    assert _row("jiang97_table_5_6", cluster_size_pes=2.0)["misscheduled_time_rate_percent"] == 10.3
    r = _row("jiang97_table_5_7", cluster_size_pes=8.0, inis_per_cluster=8.0)
    assert (r["misscheduled_time_rate_percent"],
            r["misscheduled_count_rate_percent"]) == (2.4, 15.0)
    # 004:447 "clu ios 1 1.41 2 2.83";  004:451 "slowdown 1.921 1.868 1.707 1.463"
    t = load_table("jiang97_table_5_8")
    assert t["inis_per_cluster"].tolist() == [1, 1.41, 2, 2.83]
    assert t["slowdown"].tolist() == [1.921, 1.868, 1.707, 1.463]
    # 004:460 "slowdown 1.900 1.846 1.708 1.490"
    assert _col("jiang97_table_5_9", "slowdown").tolist() == [1.9, 1.846, 1.708, 1.49]


def test_spot_values_pdq99() -> None:
    t = load_table("pdq99_table_1")
    # 001:645  "detect miss, issue bus transaction 5 5 5"
    assert t["action"][0] == "detect miss, issue bus transaction"
    assert (t["scoma_cycles"][0], t["hurricane_cycles"][0], t["hurricane_1_cycles"][0]) == (5, 5, 5)
    # 001:669  "Total 440 584 1164"
    assert t["action"][-1] == "Total" and t["category"][-1] == "total"
    assert (t["scoma_cycles"][-1], t["hurricane_cycles"][-1], t["hurricane_1_cycles"][-1]) == \
        (440, 584, 1164)
    r = _row("pdq99_table_1", action="resume, reissue bus transaction")
    assert (r["scoma_cycles"], r["hurricane_cycles"], r["hurricane_1_cycles"]) == (6, 6, 178)
    # 001:787-789  cholesky ... tk29.O 5;  001:820-826 water-sp ... 61
    assert _row("pdq99_table_2", benchmark="cholesky")["input_set"] == "tk29.O"
    assert _row("pdq99_table_2", benchmark="cholesky")["speedup"] == 5
    assert _row("pdq99_table_2", benchmark="water-sp")["speedup"] == 61
    assert _row("pdq99_table_2", benchmark="em3d")["input_set"] == "76K nodes, 15% remote"
    # 001:801-803: the fft description is garbled; kept with an explicit marker
    assert "[?]" in _row("pdq99_table_2", benchmark="fft")["description"]  # type: ignore[operator]
    assert any("garbled" in n for n in table_info("pdq99_table_2").notes)


def test_spot_values_falsafi97() -> None:
    # 000:236  "<i>em3d</i>	1.63	2.32	8.76"  (Single/Fixed)
    r = _row("falsafi97_table_2", comparison="Single/Fixed", application="em3d")
    assert (r["time_ratio_int_1us"], r["time_ratio_int_10us"], r["time_ratio_int_100us"]) == \
        (1.63, 2.32, 8.76)
    # 000:244  "<i>tomcatv</i>	0.53	0.54	0.65"  (Floating/Fixed)
    r = _row("falsafi97_table_2", comparison="Floating/Fixed", application="tomcatv")
    assert (r["time_ratio_int_1us"], r["time_ratio_int_10us"], r["time_ratio_int_100us"]) == \
        (0.53, 0.54, 0.65)
    # 000:242  "<i>em3d</i>	<b>1.06</b>	<b>1.07</b>	<b>1.22</b>"
    r = _row("falsafi97_table_2", comparison="Floating/Fixed", application="em3d")
    assert r["bold_1us"] and r["bold_10us"] and r["bold_100us"]


def test_spot_values_chong98() -> None:
    # 002:263  "MIT Alewife	20.0	4 × 8 Mesh	360	18.0	15	50	11"
    r = _row("chong98_table_1", machine="MIT Alewife")
    assert (r["proc_clock_mhz"], r["topology"], r["bisection_mbytes_per_s"],
            r["bisection_bytes_per_cycle"], r["network_latency_cycles"],
            r["remote_miss_penalty_min_cycles"], r["local_miss_penalty_cycles"]) == \
        (20.0, "4 × 8 Mesh", 360, 18.0, 15, 50, 11)
    # 002:275  "Cray T3E	300.0	4 × 4 × 2 Torus	19200	64.0	110	300-600	80"
    r = _row("chong98_table_1", machine="Cray T3E")
    assert (r["remote_miss_penalty_min_cycles"], r["remote_miss_penalty_max_cycles"]) == (300, 600)
    # 002:273  "sWisconsin T1	#200.0	none simulated	N/A	N/A	200	401	40"
    r = _row("chong98_table_1", machine="Wisconsin T1")
    assert (r["status"], r["network_latency_cycles"], r["remote_miss_penalty_min_cycles"]) == \
        ("simulated", 200, 401)
    assert _row("chong98_table_1", machine="Stanford FLASH")["status"] == "projected"
    # 002:321  Figure 8: "Alewife bisection is 18 bytes/processor-cycle"
    # 002:330  Figure 9: "The Alewife machine is at 15 processor-cycles"
    # 002:111  "Load	local	0	hw	11	0.55";  002:122 "remote 6 sw 707 35.35"
    t = load_table("chong98_figure_3_miss_penalties")
    assert (t["miss_type"][0], t["home_location"][0], t["miss_penalty_cycles"][0],
            t["miss_penalty_us"][0]) == ("Load", "local", 11, 0.55)
    assert (t["miss_type"][-1], t["invalidation_messages"][-1], t["handled_by"][-1],
            t["miss_penalty_cycles"][-1]) == ("Store", 6, "sw", 707)
    assert t["miss_type"].tolist().count("Load") == 5  # filled down
    # 002:134 "A shared-memory read miss handled in hardware takes 42 or 63 processor cycles"
    loads = t["miss_penalty_cycles"][(t["miss_type"] == "Load") & (t["invalidation_messages"] == 1)]
    assert sorted(loads.tolist()) == [42, 63]


def test_spot_values_layers() -> None:
    # 003:105  "Host Overhead	600	0	1200	600-800"
    r = _row("layers_table_2", parameter="Host Overhead")
    assert (r["achievable"], r["best"], r["worse"], r["real_system_min"], r["real_system_max"]) == \
        (600, 0, 1200, 600, 800)
    # 003:106  "I/O Bus Bandwidth	0.5	2	0.25	0.45"
    r = _row("layers_table_2", parameter="I/O Bus Bandwidth")
    assert (r["unit"], r["achievable"], r["best"], r["worse"], r["real_system_min"]) == \
        ("bytes/cycle", 0.5, 2, 0.25, 0.45)
    # 003:122  "Diff creation	10,10	0,0	5,5	cycles/word";  003:124 twin 10000
    t = load_table("layers_table_3")
    dc = t["parameter"] == "Diff creation"
    assert t["original"][dc].tolist() == [10, 10] and t["halfway"][dc].tolist() == [5, 5]
    assert _row("layers_table_3", parameter="Twin Creation")["original"] == 10000
    assert _row("layers_table_3", parameter="Handler Cost")["original"] == 100  # "100+x", 003:125


# ---------------------------------------------------------------------------
# internal consistency the tables allow
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("tid", ["jiang97_table_5_1", "jiang97_table_5_2"])
def test_jiang_totals_exceed_sum_of_modules(tid: str) -> None:
    t = load_table(tid)
    parts = np.nansum([t[c] for c in ("handler_cycles", "queue_cycles", "sliding_window_cycles",
                                      "udp_cycles", "ip_cycles")], axis=0)
    assert (t["total_cycles"] > parts).all()
    if tid == "jiang97_table_5_1":  # the gaps quoted in the catalog notes
        assert (t["total_cycles"] - parts).tolist() == [196, 256, 336, 1402, 275, 1622]
    # the IP fragmentation jump across the 1500-byte MTU (004:332, 004:334)
    ip = t["ip_cycles"]
    assert ip[4] > 3 * ip[3] and t["message_bytes"][3] < 1500 < t["message_bytes"][4]


@pytest.mark.parametrize("tid", ["jiang97_table_5_3", "jiang97_table_5_4"])
def test_jiang_water_more_inis_less_contention(tid: str) -> None:
    t = load_table(tid)
    for s in (2, 4, 8):
        m = t["cluster_size_pes"] == s
        order = np.argsort(t["inis_per_cluster"][m])
        for c in ("message_time_cycles", "queue_length_messages", "ini_utilization"):
            assert (np.diff(t[c][m][order]) < 0).all(), (tid, s, c)
    assert ((t["ini_utilization"] > 0) & (t["ini_utilization"] < 1)).all()


def test_jiang_round_robin_a_little_better_than_static() -> None:
    # 004:379 "round-robin INI scheduling performs a little better than static"
    st, rr = load_table("jiang97_table_5_3"), load_table("jiang97_table_5_4")
    assert (st["cluster_size_pes"] == rr["cluster_size_pes"]).all()
    assert (rr["message_time_cycles"] < st["message_time_cycles"]).all()
    assert np.max(1 - rr["message_time_cycles"] / st["message_time_cycles"]) < 0.06
    # 004:438 "round-robin scheduling does better than static ... very limited"
    s6, r7 = load_table("jiang97_table_5_6"), load_table("jiang97_table_5_7")
    for c in ("misscheduled_time_rate_percent", "misscheduled_count_rate_percent"):
        assert (r7[c] < s6[c]).all()
    # Table 5.5: run time falls as INIs are added, for both disciplines
    t = load_table("jiang97_table_5_5")
    for c in ("static_run_time_mcycles", "round_robin_run_time_mcycles"):
        for s in (2, 4, 8):
            m = t["cluster_size_pes"] == s
            order = np.argsort(t["inis_per_cluster"][m])
            assert (np.diff(t[c][m][order]) < 0).all()


@pytest.mark.parametrize("scaled,measured", [("jiang97_table_5_8", "jiang97_table_5_3"),
                                             ("jiang97_table_5_9", "jiang97_table_5_4")])
def test_jiang_scaling_tables_are_measured_or_interpolated(scaled: str, measured: str) -> None:
    """Footnote 2 (004:444): part of Tables 5.8/5.9 is linear interpolation."""
    sc, me = load_table(scaled), load_table(measured)
    cols = ("message_time_cycles", "queue_length_messages", "ini_utilization")
    tol = {"message_time_cycles": 1.0, "queue_length_messages": 0.0011, "ini_utilization": 0.0011}

    def measured_row(s: float, k: float) -> dict[str, float]:
        m = (me["cluster_size_pes"] == s) & (me["inis_per_cluster"] == k)
        assert m.sum() == 1
        return {c: float(me[c][m][0]) for c in cols}

    for i, s in enumerate(sc["cluster_size_pes"]):
        k_pub = sc["inis_per_cluster"][i]
        k = math.sqrt(s)
        assert abs(k_pub - k) < 0.005  # INIs scale as sqrt(cluster size)
        if k.is_integer():  # measured points: identical
            row = measured_row(s, k)
            assert all(sc[c][i] == row[c] for c in cols)
        else:  # interpolated between the neighbouring measured INI counts
            lo, hi = 2 ** math.floor(math.log2(k)), 2 ** math.ceil(math.log2(k))
            a, b = measured_row(s, lo), measured_row(s, hi)
            w = (k - lo) / (hi - lo)
            for c in cols:
                assert abs(sc[c][i] - (a[c] + w * (b[c] - a[c]))) <= tol[c], (scaled, s, c)


def test_pdq_actions_sum_to_published_totals() -> None:
    t = load_table("pdq99_table_1")
    body = t["category"] != "total"
    for c in ("scoma_cycles", "hurricane_cycles", "hurricane_1_cycles"):
        assert t[c][body].sum() == t[c][~body][0]
    assert t["step"][body].tolist() == list(range(1, 13))
    # 001:629-631: Hurricane's round trip is 33% longer than S-COMA's;
    # 001:674-676: Hurricane-1's is 165% longer
    sc, h, h1 = (t[c][~body][0] for c in ("scoma_cycles", "hurricane_cycles", "hurricane_1_cycles"))
    assert round(100 * (h / sc - 1)) == 33
    assert round(100 * (h1 / sc - 1)) == 165
    # two network latencies of 100 cycles each (001:567 "constant latency of 100 cycles")
    net = t["category"] == "network"
    assert net.sum() == 2 and (t["scoma_cycles"][net] == 100).all()


def test_pdq_speedups_within_machine_size() -> None:
    sp = _col("pdq99_table_2", "speedup")
    assert ((sp >= 1) & (sp <= 64)).all()  # 8 8-way SMPs, vs a uniprocessor


def test_falsafi_boldface_marks_fixed_beating_floating() -> None:
    t = load_table("falsafi97_table_2")
    floating = t["comparison"] == "Floating/Fixed"
    for us in ("1us", "10us", "100us"):
        v, bold = t[f"time_ratio_int_{us}"], t[f"bold_{us}"]
        assert (bold == (floating & (v > 1))).all()
    # every ratio grows with the interrupt overhead
    a = np.stack([t["time_ratio_int_1us"], t["time_ratio_int_10us"], t["time_ratio_int_100us"]])
    assert (np.diff(a, axis=0) >= 0).all()
    assert (t["time_ratio_int_1us"][~floating] > 1).all()  # Single never beats Fixed here
    # 000:250 "a two orders of magnitude increase ... slows the program down by at most 160%"
    slow = t["time_ratio_int_100us"][floating] / t["time_ratio_int_1us"][floating]
    assert np.max(slow) <= 2.6 and round(100 * (np.max(slow) - 1)) == 157


def test_chong_bisection_per_cycle_is_mbytes_over_mhz() -> None:
    t = load_table("chong98_table_1")
    ok = ~np.isnan(t["bisection_mbytes_per_s"])
    ratio = t["bisection_mbytes_per_s"][ok] / t["proc_clock_mhz"][ok]
    assert np.allclose(ratio, t["bisection_bytes_per_cycle"][ok], atol=0.05)  # printed precision
    assert ok.sum() == 12  # only T0 and T1 lack a bisection figure
    assert (t["remote_miss_penalty_min_cycles"] <= t["remote_miss_penalty_max_cycles"]).sum() == 10
    assert (t["local_miss_penalty_cycles"] > 0).all()


def test_chong_alewife_tables_agree() -> None:
    f3 = load_table("chong98_figure_3_miss_penalties")
    assert np.array_equal(f3["miss_penalty_us"], f3["miss_penalty_cycles"] / 20.0)  # 20 MHz
    alewife = _row("chong98_table_1", machine="MIT Alewife")
    local_load = f3["miss_penalty_cycles"][(f3["miss_type"] == "Load")
                                           & (f3["home_location"] == "local")]
    assert local_load.tolist() == [alewife["local_miss_penalty_cycles"]]
    assert alewife["proc_clock_mhz"] == 20.0


def test_layers_sets_follow_their_definitions() -> None:
    t2 = load_table("layers_table_2")
    cost = t2["unit"] == "cycles"
    # 003:114 "W: all values double of the achievable set (i.e. worse, relative to processor speed)"
    assert np.array_equal(t2["worse"][cost], 2 * t2["achievable"][cost])
    assert np.array_equal(t2["worse"][~cost], t2["achievable"][~cost] / 2)  # bandwidth halves
    assert (t2["best"][cost] == 0).all()
    # 003:110 caption: at 1 IPC and 200 MHz the achievable values are 3 us, 100 MB/s, 5 us, 1 us
    us = t2["achievable"][cost] / 200.0
    assert us.tolist() == [3.0, 5.0, 1.0]
    assert (t2["achievable"][~cost] * 200.0).tolist() == [100.0]
    t3 = load_table("layers_table_3")
    # 003:129 "H: all costs are halfway between original and best"; "B: ... set to zero"
    assert np.array_equal(t3["halfway"], (t3["original"] + t3["best"]) / 2)
    assert (t3["best"] == 0).all()


# ---------------------------------------------------------------------------
# cross-checks against the model presets (independent transcriptions)
# ---------------------------------------------------------------------------

def _same(a: object, b: object) -> bool:
    fa, fb = float(a), float(b)  # type: ignore[arg-type]
    return (math.isnan(fa) and math.isnan(fb)) or fa == fb


@pytest.mark.parametrize("tid,preset,mapping", [
    ("jiang97_table_5_1", "TABLE_5_1",
     {"len": "message_bytes", "handler": "handler_cycles", "queue": "queue_cycles",
      "slid_win": "sliding_window_cycles", "UDP": "udp_cycles", "IP": "ip_cycles",
      "total": "total_cycles"}),
    ("jiang97_table_5_2", "TABLE_5_2",
     {"len": "message_bytes", "handler": "handler_cycles", "queue": "queue_cycles",
      "IP": "ip_cycles", "UDP": "udp_cycles", "slid_win": "sliding_window_cycles",
      "total": "total_cycles"}),
])
def test_crosscheck_models_ini_tables(tid: str, preset: str, mapping: dict[str, str]) -> None:
    from models import ini

    data = getattr(ini, preset)
    t = load_table(tid)
    assert set(data) == set(mapping)
    for key, col in mapping.items():
        assert len(data[key]) == len(t)
        bad = [(i, data[key][i], t[col][i]) for i in range(len(t))
               if not _same(data[key][i], t[col][i])]
        assert not bad, f"models.ini.{preset}[{key!r}] differs from {tid}.{col}: {bad}"


def test_crosscheck_models_ini_overhead_preset() -> None:
    for path in ("send", "receive"):
        c = ref.compare_ini_overhead(path)
        assert c["role"].tolist() == ["fitted"] * len(c)
        assert np.max(np.abs(c["abs_error"])) < 1e-9


def test_crosscheck_models_layers_table2() -> None:
    from models import layers

    assert len(load_table("layers_table_2")) == 4
    rows = {"host_overhead": "Host Overhead", "io_bus_bandwidth": "I/O Bus Bandwidth",
            "ni_occupancy": "NI Occupancy", "message_handling": "Message Handling Cost"}
    assert set(layers.TABLE2) == set(rows)
    for key, name in rows.items():
        r = _row("layers_table_2", parameter=name)
        p = layers.TABLE2[key]
        for col in ("achievable", "best", "worse"):
            assert float(p[col]) == r[col], (key, col)
        real = p["real"]
        if real is None:
            assert math.isnan(r["real_system_min"])  # type: ignore[arg-type]
        else:
            lo, hi = (real if isinstance(real, tuple) else (real, real))
            assert (lo, hi) == (r["real_system_min"], r["real_system_max"]), key


def test_crosscheck_models_layers_table3() -> None:
    from models import layers

    t = load_table("layers_table_3")
    p = layers.TABLE3
    for col in ("original", "best", "halfway"):
        assert float(p["page_protection"][col]) == _row("layers_table_3",
                                                        parameter="Page Protection")[col]
        assert float(p["diff_application"][col]) == _row("layers_table_3",
                                                         parameter="Diff Application")[col]
        assert float(p["twin_creation"][col]) == _row("layers_table_3",
                                                      parameter="Twin Creation")[col]
        dc = t[col][t["parameter"] == "Diff creation"]
        assert tuple(float(v) for v in p["diff_creation"][col]) == tuple(dc.tolist())
        base = float(str(p["handler_cost"][col]).split("+")[0])
        assert base == _row("layers_table_3", parameter="Handler Cost")[col]
    for key, name in (("page_protection", "Page Protection"), ("diff_creation", "Diff creation"),
                      ("diff_application", "Diff Application"), ("twin_creation", "Twin Creation"),
                      ("handler_cost", "Handler Cost")):
        units = t["unit"][t["parameter"] == name]
        assert set(units.tolist()) == {p[key]["units"]}, key


def test_crosscheck_models_mechanisms_machines() -> None:
    from models import mechanisms

    t = load_table("chong98_table_1")
    assert [m.name for m in mechanisms.MACHINES] == t["machine"].tolist()
    fields = {"clock_mhz": "proc_clock_mhz", "bisection_mb_s": "bisection_mbytes_per_s",
              "bisection_bytes_per_cycle": "bisection_bytes_per_cycle",
              "latency": "network_latency_cycles",
              "remote_miss_low": "remote_miss_penalty_min_cycles",
              "remote_miss_high": "remote_miss_penalty_max_cycles",
              "local_miss_penalty": "local_miss_penalty_cycles"}
    for i, m in enumerate(mechanisms.MACHINES):
        for attr, col in fields.items():
            assert _same(getattr(m, attr), t[col][i]), (m.name, attr, getattr(m, attr), t[col][i])
        assert m.clock_note == (t["status"][i] or "")
        # the preset writes the dimension sign as ASCII 'x'; the paper prints U+00D7
        assert m.topology == t["topology"][i].replace("\u00d7", "x"), m.name


def test_crosscheck_models_mechanisms_alewife_miss_penalties() -> None:
    from models import mechanisms

    t = load_table("chong98_figure_3_miss_penalties")
    rows = mechanisms.ALEWIFE_MISS_PENALTIES
    assert len(rows) == len(t)
    for i, r in enumerate(rows):
        assert r.miss_type == t["miss_type"][i].lower()
        assert r.home == t["home_location"][i] and r.handler == t["handled_by"][i]
        assert _same(r.invalidations, t["invalidation_messages"][i])
        assert (r.cycles, r.microseconds) == (t["miss_penalty_cycles"][i], t["miss_penalty_us"][i])


def test_crosscheck_models_pdq_table_1() -> None:
    from models import pdq

    t = load_table("pdq99_table_1")
    body = t["category"] != "total"
    assert len(pdq.TABLE_1) == int(body.sum()) == 12
    assert pdq.TABLE_1_SYSTEMS == ("S-COMA", "Hurricane", "Hurricane-1")
    for i, (action, category, sc, h, h1) in enumerate(pdq.TABLE_1):
        assert (action, category) == (t["action"][i], t["category"][i]), i
        assert (sc, h, h1) == (t["scoma_cycles"][i], t["hurricane_cycles"][i],
                               t["hurricane_1_cycles"][i]), action


# ---------------------------------------------------------------------------
# models against the published measurements
# ---------------------------------------------------------------------------

@pytest.mark.parametrize("tid", ["jiang97_table_5_3", "jiang97_table_5_4"])
def test_compare_ini_water_calibration_and_errors(tid: str) -> None:
    c = ref.compare_ini_water(tid)
    assert c.columns[-6:] == ref.COMPARISON_COLUMNS
    assert len(c) == 3 * EXPECTED_ROWS[tid]
    fitted = c["role"] == "fitted"
    # exactly the utilization of the four 1-INI rows is fitted, nothing else
    assert fitted.sum() == 4
    assert set(c["quantity"][fitted]) == {"ini_utilization"}
    assert (c["inis_per_cluster"][fitted] == 1).all()
    assert np.max(np.abs(c["rel_error"][fitted])) < 1e-9
    # one W per cluster size, and W grows with the cluster size (fewer
    # inter-cluster requests per PE as clusters grow)
    w = {s: set(c["fitted_W_cycles"][c["cluster_size_pes"] == s]) for s in (1, 2, 4, 8)}
    assert all(len(v) == 1 for v in w.values())
    assert np.all(np.diff([next(iter(w[s])) for s in (1, 2, 4, 8)]) > 0)
    # recorded accuracy of the thesis method on the predicted multi-INI rows
    # (see docs/validation/reference_data.rst); a regression makes this fail
    pred = ~c["calibration_row"].astype(bool)
    for q, bound in (("ini_utilization", 0.10), ("queue_length_messages", 0.12),
                     ("message_time_cycles", 0.10)):
        m = pred & (c["quantity"] == q)
        assert m.sum() == 6
        assert np.max(np.abs(c["rel_error"][m])) < bound, (tid, q)
    # signed errors are model - published
    assert np.allclose(c["abs_error"], c["model"] - c["published"])


def test_error_summary_groups() -> None:
    s = ref.error_summary(ref.compare_ini_water("jiang97_table_5_3"))
    rows = {(q, r): n for q, r, n in zip(s["quantity"], s["role"], s["rows"])}
    assert rows == {("ini_utilization", "fitted"): 4, ("ini_utilization", "predicted"): 6,
                    ("message_time_cycles", "predicted"): 10,
                    ("queue_length_messages", "predicted"): 10}
    assert (np.asarray(s["mean_abs_rel_error"], float)
            <= np.asarray(s["max_abs_rel_error"], float)).all()


def test_compare_functions_validate_arguments() -> None:
    with pytest.raises(ValueError, match="path"):
        ref.compare_ini_overhead("both")
    with pytest.raises(ValueError, match="table_id"):
        ref.compare_ini_water("jiang97_table_5_1")
    with pytest.raises(ValueError, match="method"):
        ref.compare_ini_water(method="magic")


def test_compare_policy_interrupts_calibration_and_errors() -> None:
    c = ref.compare_policy_interrupts()
    assert c.columns[-6:] == ref.COMPARISON_COLUMNS and len(c) == 30
    fitted = c["role"] == "fitted"
    # U fitted on Single/Fixed at 1 us, one per application
    assert (set(c["comparison"][fitted]) == {"Single/Fixed"}
            and (c["interrupt_us"][fitted] == 1).all())
    assert np.max(np.abs(c["rel_error"][fitted])) < 1e-9
    # em3d's 1 us Single/Fixed ratio (1.63) is beyond the model's reach: reported, not fitted
    nf = c["role"] == "not_fitted"
    assert set(c["application"][nf]) == {"em3d"} and np.isnan(c["model"][nf].astype(float)).all()
    # 000:217 "Compute-utilizations in appbt and barnes are at moderate levels (~70%)"
    for app in ("appbt", "barnes"):
        u = c["fitted_U"][c["application"] == app][0]
        assert 0.6 < u < 0.85, (app, u)
    pred = c["role"] == "predicted"
    short = pred & (c["interrupt_us"] < 100)     # 1 and 10 us interrupts
    long_ = pred & (c["interrupt_us"] == 100)    # 100 us (O_int = 20000 cycles)
    assert short.sum() == 12 and long_.sum() == 8

    def winner_agrees(m: np.ndarray) -> np.ndarray:
        fl = m & (c["comparison"] == "Floating/Fixed")
        return (c["model"][fl].astype(float) > 1) == (c["published"][fl] > 1)
    # Recorded accuracy (docs/validation/reference_data.rst).  1 and 10 us:
    # mean 10%, max 19%, the Fixed/Floating winner right in all 8 cells.
    rel = np.abs(c["rel_error"][short].astype(float))
    assert rel.mean() < 0.11 and rel.max() < 0.20
    assert winner_agrees(short).all()
    # 100 us: the model charges one interrupt per message, while an interrupted
    # processor drains the queue that built up during the 20000-cycle interrupt,
    # so the model overstates the interrupt penalty: mean 71%, max 152%, winner
    # right in 2 of 4 cells.  A known limitation, guarded at the achieved level.
    rel = np.abs(c["rel_error"][long_].astype(float))
    assert rel.mean() < 0.72 and rel.max() < 1.53
    assert winner_agrees(long_).sum() >= 2


def test_docs_page_lists_every_table() -> None:
    """The reference-data page renders every catalogued table (with its rows,
    source and columns) from the data files at build time."""
    import sys
    from pathlib import Path

    docs = Path(__file__).resolve().parents[2] / "docs"
    page = (docs / "validation" / "reference_data.rst").read_text(encoding="utf-8")
    sys.path.insert(0, str(docs / "_ext"))
    try:
        from doc_tables import reference_table_rst
    finally:
        sys.path.pop(0)
    for tid in list_tables():
        info = table_info(tid)
        assert f".. reference-table:: {tid}\n" in page, tid
        section = reference_table_rst(tid)
        assert f"**Rows:** {info.row_count}" in section, tid
        assert f"**Table:** {info.table} --" in section, tid
        for c in info.columns:
            assert f"``{c.name}``" in section, (tid, c.name)


def test_compare_pdq_table_1() -> None:
    c = ref.compare_pdq_table_1()
    assert len(c) == 15 and set(c["role"]) == {"preset"}
    assert set(c["system"]) == {"S-COMA", "Hurricane", "Hurricane-1"}
    assert np.max(np.abs(c["rel_error"].astype(float))) < 1e-6

    # 001:629-630 / pdq.occupancies: request + response occupancy 27 -> 112 cycles (+315%)
    def occ(system: str, h: str) -> float:
        m = (c["system"] == system) & (c["quantity"] == f"{h}_occupancy_cycles")
        return float(c["published"][m][0])
    rr = {s: occ(s, "request") + occ(s, "response") for s in ("S-COMA", "Hurricane")}
    assert rr == {"S-COMA": 27.0, "Hurricane": 112.0}
    assert round(100 * (rr["Hurricane"] / rr["S-COMA"] - 1)) == 315
