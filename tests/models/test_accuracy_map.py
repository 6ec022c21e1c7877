"""The accuracy map (models.accuracy): lookup, shipped data and the figures results carry."""

from __future__ import annotations

import math
import pickle
import warnings

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from models import accuracy
from models.accuracy import (TARGETS, AccuracyWarning, best_method, expected_error, load_map,
                             map_path, target_met)
from tests.strategies import accuracy_maps

TINY = {"version": 2, "min_bin": 1, "families": {"pdq": {
    "axes": [{"name": "load", "edges": [0.0, 0.5, 1.0]},
             {"name": "keys_per_pp", "edges": [0.0, 4.0, None]}],
    "variants": {"shared": {"methods": {
        "keyed": {"measures": {"R": {"overall": {"bound": 0.2},
                                     "bins": {"bound": [[0.3, 0.01], [None, 0.05]]}}}},
        "birth-death": {"measures": {"R": {"overall": {"bound": 0.5},
                                           "bins": {"bound": [[0.02, 0.4], [0.1, 0.6]]}}}}}}}}}}


def test_lookup_by_hand():
    load = np.array([0.0, 0.2, 0.5, 0.7, 1.0, 1.0, -0.1, 1.5, np.nan])
    keys = np.array([1.0, 64.0, 1.0, 1.0, 4.0, 1e9, 1.0, 1.0, 1.0])
    e = expected_error("pdq", "keyed", "R", variant="shared", load=load, keys_per_pp=keys,
                       accuracy_map=TINY)
    # bins: [0, .5) x [0, 4) = .3; [0, .5) x [4, inf] = .01; [.5, 1] x [0, 4) = empty -> .2;
    # [.5, 1] x [4, inf] = .05 (the last edge closed); outside or NaN -> the overall .2
    assert e.tolist() == [0.3, 0.01, 0.2, 0.2, 0.05, 0.05, 0.2, 0.2, 0.2]


def test_sparse_bin_falls_back_on_its_axis1_slice():
    import copy
    m = copy.deepcopy(TINY)
    bins = m["families"]["pdq"]["variants"]["shared"]["methods"]["keyed"]["measures"]["R"]["bins"]
    bins["bound_axis1"] = [0.25, 0.07]
    e = expected_error("pdq", "keyed", variant="shared", load=[0.7, 0.7, 2.0],
                       keys_per_pp=[1, 64, 1], accuracy_map=m)
    assert e.tolist() == [0.07, 0.05, 0.2]     # empty bin -> its slice; own bin; outside


def test_lookup_broadcasts_and_accepts_raw_inputs():
    e = expected_error("pdq", "keyed", variant="shared", load=np.array([[0.2], [0.7]]),
                       n_keys=np.array([8, 64]), k=2, accuracy_map=TINY)
    assert e.shape == (2, 2)
    assert e.tolist() == [[0.01, 0.01], [0.05, 0.05]]


def test_target_met_and_best_method():
    ok = target_met("pdq", "keyed", variant="shared", load=[0.2, 0.2, 0.7],
                    keys_per_pp=[1, 64, 64], accuracy_map=TINY)
    assert ok.tolist() == [False, True, True]          # p95 target of PDQ R is 8%
    best, err = best_method("pdq", variant="shared", load=[0.2, 0.2], keys_per_pp=[1, 64],
                            accuracy_map=TINY)
    assert best.tolist() == ["birth-death", "keyed"]
    assert err.tolist() == [0.02, 0.01]


def test_unknown_names_are_clear_errors():
    with pytest.raises(ValueError, match="no method 'nope'"):
        expected_error("pdq", "nope", variant="shared", load=0.5, keys_per_pp=2,
                       accuracy_map=TINY)
    with pytest.raises(ValueError, match="family must be one of"):
        expected_error("mm1", "x", accuracy_map=TINY)
    with pytest.raises(ValueError, match="needs 'load'"):
        expected_error("pdq", "keyed", variant="shared", keys_per_pp=2, accuracy_map=TINY)


def _reference(m, a1, a2):
    """Scalar loop: the bin holding (a1, a2) by comparisons, else the overall p95."""
    fam = m["families"]["pdq"]
    e1 = [math.inf if v is None else v for v in fam["axes"][0]["edges"]]
    e2 = [math.inf if v is None else v for v in fam["axes"][1]["edges"]]
    d = fam["variants"]["shared"]["methods"]["keyed"]["measures"]["R"]

    def find(v, e):
        for i in range(len(e) - 1):
            last = i == len(e) - 2
            if e[i] <= v < e[i + 1] or (last and v == e[i + 1]):
                return i
        return None

    i, j = find(a1, e1), find(a2, e2)
    if i is None or j is None or d["bins"]["bound"][i][j] is None:
        return d["overall"]["bound"]
    return d["bins"]["bound"][i][j]


@settings(max_examples=60, deadline=None)
@given(m=accuracy_maps(), pts=st.lists(st.tuples(st.floats(-1, 60), st.floats(-1, 60)),
                                       min_size=1, max_size=20))
def test_vectorised_lookup_matches_scalar_loop(m, pts):
    a1 = np.array([p[0] for p in pts])
    a2 = np.array([p[1] for p in pts])
    e = expected_error("pdq", "keyed", variant="shared", load=a1, keys_per_pp=a2, accuracy_map=m)
    assert e.shape == a1.shape
    assert e.tolist() == [_reference(m, x, y) for x, y in pts]
    # every figure is a bin's or the overall one
    fam = m["families"]["pdq"]["variants"]["shared"]["methods"]["keyed"]["measures"]["R"]
    allowed = {v for row in fam["bins"]["bound"] for v in row if v is not None}
    allowed.add(fam["overall"]["bound"])
    assert set(e.tolist()) <= allowed


# ---------------------------------------------------------------------------
# the shipped map
# ---------------------------------------------------------------------------

def _family_methods(family):
    import importlib
    return importlib.import_module(f"models.{family}").METHODS


def test_shipped_map_loads_and_covers_its_families():
    m = load_map()
    assert m["version"] == 2
    variants = {"lopc": [""], "ini": [""], "policy": ["fixed", "floating", "single"],
                "pdq": ["shared", "partitioned", "spinlock", "multiplexed"]}
    assert set(m["families"]) == set(variants)                    # every family is mapped
    assert all(list(m["families"][f]["variants"]) == v for f, v in variants.items())
    for fam, fd in m["families"].items():
        assert fam in TARGETS
        assert fd["points"] >= 128
        assert list(fd["variants"]) == [v for v in variants[fam] if v in fd["variants"]]
        n1, n2 = (len(a["edges"]) - 1 for a in fd["axes"])
        for variant, vd in fd["variants"].items():
            assert set(vd["methods"]) == set(_family_methods(fam))
            for method, md in vd["methods"].items():
                assert set(md["measures"]) == set(TARGETS[fam])
                for meas, d in md["measures"].items():
                    ov = d["overall"]
                    assert np.shape(d["bins"]["p95"]) == np.shape(d["bins"]["bound"]) == (n1, n2)
                    assert sum(map(sum, d["bins"]["n"])) <= ov["n"]
                    if ov["n"]:
                        assert 0 <= ov["mean"] <= ov["p95"] <= ov["max"]
                        assert ov["p95"] <= ov["bound"] <= ov["max"]
                        # a bin's bound is never below its own maximum when the bin is
                        # too small to bound itself (fewer than 19 points)
                        for nr, br, mr in zip(d["bins"]["n"], d["bins"]["bound"],
                                              d["bins"]["max"]):
                            for nn, b, mx in zip(nr, br, mr):
                                assert (b is None) == (nn == 0)
                                if 0 < nn < 19:
                                    assert b >= mx
                        assert 0 <= ov["beyond"] <= ov["n"]
            # the default method answers nearly every point
            assert vd["methods"]["auto"]["measures"]["R"]["overall"]["n"] >= 0.9 * vd["points"] \
                - fd["saturated"]


def test_shipped_map_names_the_faster_policy():
    """Issue 15: the default names the faster of Fixed and Floating, and of Fixed and
    Single, at every design point where the simulator separates the pair (their 95%
    intervals apart); the counts are consistent for every method."""
    w = load_map()["families"]["policy"]["winners"]
    assert {"auto", "mva", "node"} <= set(w)
    for method, pairs in w.items():
        assert set(pairs) == {"fixed/floating", "fixed/single"}
        for d in pairs.values():
            assert 0 <= d["correct"] <= d["separated"] <= d["points"]
            assert len(d["wrong"]) == min(d["separated"] - d["correct"], 10)
    for pair in ("fixed/floating", "fixed/single"):
        d = w["auto"][pair]
        assert d["points"] >= 450          # of the 480 points simulated under Fixed
        assert d["correct"] == d["separated"], d["wrong"]


def test_map_is_package_data():
    import configparser
    import os
    cfg = configparser.ConfigParser()
    cfg.read(os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(__file__))),
                          "setup.cfg"))
    assert "data/*.json" in cfg["options.package_data"]["models"]
    assert os.path.exists(map_path()) and os.path.exists(accuracy.bounds_path())


def test_shipped_lookup_tables_are_the_maps_projection():
    """Results read the small lookup file; it must be the projection of the shipped map
    (both are written by one command), so every figure a result carries is the map's."""
    import json
    import os
    with open(accuracy.bounds_path()) as f:
        shipped = json.load(f)
    assert shipped == json.loads(json.dumps(accuracy.lookup_tables(load_map()), default=str))
    assert os.path.getsize(accuracy.bounds_path()) < 0.3 * os.path.getsize(map_path())


# ---------------------------------------------------------------------------
# results carry the figures; the warning names a better method
# ---------------------------------------------------------------------------

LOPC_TINY = {"version": 2, "families": {"lopc": {
    "axes": [{"name": "U_h", "edges": [0.0, 0.3, 1.0]}, {"name": "cs2", "edges": [0.0, 10.0]}],
    "variants": {"": {"methods": {
        "lopc": {"measures": {"R": {"overall": {"bound": 0.3},
                                    "bins": {"bound": [[0.01], [0.2]]}},
                              "R_q": {"overall": {"bound": 0.1},
                                      "bins": {"bound": [[0.02], [0.1]]}},
                              "R_y": {"overall": {"bound": 0.1},
                                      "bins": {"bound": [[None], [0.1]]}}}},
        "node": {"measures": {"R": {"overall": {"bound": 0.01},
                                    "bins": {"bound": [[0.01], [0.02]]}},
                              "R_q": {"overall": {"bound": 0.1},
                                      "bins": {"bound": [[0.02], [0.1]]}},
                              "R_y": {"overall": {"bound": 0.1},
                                      "bins": {"bound": [[None], [0.1]]}}}}}}}}}}


@pytest.fixture
def lopc_tiny(monkeypatch):
    tiny = dict(LOPC_TINY, _tables={})
    monkeypatch.setitem(accuracy._CACHE, accuracy.bounds_path(), tiny)
    return tiny


def test_result_carries_expected_error_lazily(lopc_tiny):
    from models.lopc import LoPCParams, solve

    W = np.array([0.0, 10.0, 1e4])
    r = solve(LoPCParams(P=8, W=W, o=100, L=10, cs2=1.0), method="node")
    U = np.asarray(r.U_q) + np.asarray(r.U_y)
    assert (U[:2] > 0.3).all() and U[2] < 0.3
    e = r.R_expected_error
    assert e.shape == W.shape
    assert e.tolist() == expected_error("lopc", "node", "R", U_h=U, cs2=1.0,
                                        accuracy_map=lopc_tiny).tolist() == [0.02, 0.02, 0.01]
    assert r.R_y_expected_error[2] == 0.1                 # empty bin: the overall p95
    assert r.expected_error_measures == ("R", "R_q", "R_y", "Q_h")   # TARGETS["lopc"]
    assert "R_expected_error" in r.table().columns
    with pytest.raises(AttributeError):
        r.X_expected_error
    r2 = pickle.loads(pickle.dumps(r))                    # process pools pickle results
    assert r2.R_expected_error.tolist() == e.tolist()


def test_warning_names_the_better_method(lopc_tiny):
    from models.lopc import LoPCParams, solve

    p = LoPCParams(P=8, W=np.array([0.0, 1e4]), o=100, L=10, cs2=1.0)
    with pytest.warns(AccuracyWarning, match=r"'lopc'.*20\.0% at 1 of 2 point.*'node'") as rec:
        solve(p, method="lopc")
    assert len([w for w in rec if issubclass(w.category, AccuracyWarning)]) == 1
    with warnings.catch_warnings():
        warnings.simplefilter("error", AccuracyWarning)
        solve(p, method="node")                           # within its target: no warning
        solve(LoPCParams(P=8, W=1e4, o=100, L=10), method="lopc")   # light load: 1% there


def test_no_map_for_a_method_gives_nan_and_no_warning(lopc_tiny):
    from models.lopc import LoPCParams, solve

    with warnings.catch_warnings():
        warnings.simplefilter("error", AccuracyWarning)
        r = solve(LoPCParams(P=8, W=10, o=100, L=10), method="schweitzer")
    assert math.isnan(r.R_expected_error)


@pytest.mark.parametrize("policy", ["fixed", "floating", "single"])
def test_policy_auto_results_carry_the_maps_figure(policy):
    """'auto' runs a mixture ('node-chain + exact-mva'); the lookup uses the method asked
    for, so the figure is the map's 'auto' row at the point (it was NaN before)."""
    from models.policy import PolicyParams, solve

    p = PolicyParams(p=np.array([2, 4]), nodes=4, U=np.array([0.5, 0.9]))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        r = solve(p, policy)
    e = np.asarray(r.R_expected_error)
    assert e.shape == (2,) and np.all(np.isfinite(e)) and np.all(e > 0)
    m = load_map()["families"]["policy"]["variants"][policy]["methods"]["auto"]
    assert np.all(e <= max(m["measures"]["R"]["overall"]["max"], *(
        v for row in m["measures"]["R"]["bins"]["bound"] for v in row if v is not None)))


def test_pdq_results_look_up_their_discipline_and_multiplexed_processors():
    """Spin-lock and multiplexed results carry their own variant's figure, looked up under
    the method asked for (result.method names the formula that ran, e.g. 'M/M/c');
    partitioned queues on multiplexed processors have no map entry (NaN, no warning)."""
    from models.pdq import PDQParams, solve

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        spin = solve(PDQParams(k=4, load=0.3), "spinlock")
        mult = solve(PDQParams(k=4, load=0.3, multiplexed=True, compute_utilization=0.5), "shared")
        shared = solve(PDQParams(k=4, load=0.3), "shared")
        part_mult = solve(PDQParams(k=4, load=0.3, multiplexed=True), "partitioned")
    for r, variant in ((spin, "spinlock"), (mult, "multiplexed"), (shared, "shared")):
        e = float(r.R_expected_error)
        assert np.isfinite(e)
        assert e == pytest.approx(float(expected_error("pdq", "auto", variant=variant,
                                                       load=0.3, keys_per_pp=64 / 4)))
    assert np.isnan(float(part_mult.R_expected_error))


def test_a_mean_only_target_has_no_region_test():
    """The issues bound only the mean of some measures (policy P_int, U_pp; PDQ U): those
    are summarised and met by their mean, and a point's bound has nothing to be held to."""
    assert accuracy.TARGETS["pdq"]["U"]["p95"] is None
    assert accuracy.meets({"n": 3, "mean": 0.01, "p95": 0.5, "max": 0.9},
                          accuracy.TARGETS["pdq"]["U"])
    assert not accuracy.meets({"n": 0, "mean": None, "p95": None, "max": None},
                              accuracy.TARGETS["pdq"]["U"])
    with pytest.raises(ValueError, match="bounds only the mean"):
        accuracy.target_met("pdq", "auto", "U", variant="shared", load=0.5, keys_per_pp=4)


def test_summary_marks_a_measure_without_points_neither_met_nor_missed():
    """Fixed takes no interrupts: its P_int row has no point, and ``met`` says ``-``, not
    ``no``; a measured row still says yes or no."""
    ov = {"n": 0, "mean": None, "p95": None, "max": None, "bias": None, "beyond": 0}
    hit = {"n": 5, "mean": 0.01, "p95": 0.02, "max": 0.03, "bias": 0.0, "beyond": 1}
    amap = {"version": 1, "families": {"policy": {"points": 5, "variants": {
        v: {"methods": {"auto": {"failed": 0, "measures": {"P_int": {"overall": o}}}}}
        for v, o in (("fixed", ov), ("single", hit))}}}}
    t = accuracy.summary("P_int", accuracy_map=amap)
    assert dict(zip(t["variant"], t["met"])) == {"fixed": "-", "single": "yes"}
