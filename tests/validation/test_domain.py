"""Domain-wide references and the accuracy map (validation.domain, validate --domain)."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from mva.params import declarations
from validation import domain as D


@pytest.mark.parametrize("family", D.FAMILIES)
def test_design_is_reproducible_and_inside_the_declared_domain(family):
    from validation.compare import _params_class

    # PDQ's points each bisect four saturation loads (17 model solves apiece, some at the
    # model's fold): 6 points there keep this test off the suite's critical path
    n = 6 if family == "pdq" else 16
    a = D.design_points(family, n, seed=5)
    assert a == D.design_points(family, n, seed=5)      # (PDQ: saturation loads recalled)
    D._saturation_load.cache_clear()                     # ... and recomputed
    b = D.design_points(family, 2, seed=5)
    assert b == a[:len(b)]
    assert D.design_points(family, 2, seed=6) != b
    decl = declarations(_params_class(family))
    for p in a:
        for k, v in p.items():
            if k in decl and decl[k].valid is not None and not isinstance(v, str) and \
                    not (family == "pdq" and k == "load"):   # a fraction of the stable load
                lo, hi = decl[k].valid
                assert lo <= v <= hi * (1 + 1e-12), (k, v)
            if k.startswith("cs2"):   # snapped to what the simulator draws
                assert v == 0 or v >= 1 or abs(1 / v - round(1 / v)) < 1e-9
    variants = [p["variant"] for p in a]
    if family == "policy":
        assert all(p["p"] >= 2 for p in a if p["variant"] == "fixed")
        assert variants.count("floating") == variants.count("single") == n
    if family == "pdq":
        for p in a:
            if p["variant"] == "partitioned":
                assert p["key_skew"] == 0 and p["f_sequential"] == 0 and p["n_keys"] % p["k"] == 0
            assert 0 < p["load"] <= 0.95


@pytest.mark.parametrize("family", D.FAMILIES)
def test_stored_references_are_of_todays_design(family):
    """The shipped references describe the design drawn today (else ``update`` them).

    PDQ loads are fractions of the model's saturation load: a model change that moves it
    moves the design, and the map would then be measured on points the declared domain no
    longer has (``python -m validation.domain update`` re-simulates the moved ones).
    """
    refs = D.load_references(family)
    # (PDQ: the four variants of design point 1, four saturation bisections of a few
    # seconds; point 0's multiplexed one takes a minute)
    idx = [1] if family == "pdq" else range(16)
    pts = D.design_points(family, refs["points"], refs["seed"], indices=idx)
    rows = [r for r in refs["rows"] if r["i"] in set(idx)]
    assert len(rows) == len(pts) > 0
    for r, p in zip(rows, pts):
        assert (r.get("variant", ""), r["i"]) == (p["variant"], p["i"])
        fields = {k: v for k, v in p.items() if k not in ("variant", "i")}
        assert D._same_point(D._row_point(r), fields), (r["i"], r.get("variant"), {
            k: (D._row_point(r).get(k), v) for k, v in fields.items()
            if D._row_point(r).get(k) != v})


def test_indices_pick_points_of_the_design():
    full = D.design_points("policy", 8, seed=3)
    assert D.design_points("policy", 8, seed=3, indices=[5, 2, 5]) == \
        [p for p in full if p["i"] in (2, 5)]
    with pytest.raises(ValueError, match="indices"):
        D.design_points("lopc", 8, seed=3, indices=[8])


def test_prefix_of_a_design_is_the_smaller_design():
    """A 128-point design is the first 128 points of the 512-point one (resume, sub-samples)."""
    assert D.design_points("ini", 8, seed=3) == D.design_points("ini", 16, seed=3)[:8]


def test_simulate_point_reaches_its_half_width_or_the_cap():
    d = D.simulate_point(family="lopc", seed=3, P=8, W=200, o=100, L=10, cs2=1.0,
                         target=0.02, min_cycles=1000)
    assert d["rel_hw"] == pytest.approx(d["R_hw"] / d["R"])
    assert d["rel_hw"] <= 0.02 or d["cycles"] == D.MAX_CYCLES
    assert d["runs"] >= 1 and not d["saturated"]
    capped = D.simulate_point(family="lopc", seed=3, P=8, W=200, o=100, L=10, cs2=1.0,
                              target=1e-6, min_cycles=1000, max_cycles=3000)
    assert capped["cycles"] == 3000 and capped["rel_hw"] > 1e-6


@pytest.fixture(scope="module")
def tiny_refs(tmp_path_factory):
    d = tmp_path_factory.mktemp("refs")
    D.simulate_family("lopc", 8, 11, executor="serial", store=str(d / "lopc.sqlite"),
                      out=D.references_path("lopc", str(d)), progress=False, target=0.03,
                      min_cycles=3000)
    return d


def test_references_are_plain_json_and_resume(tiny_refs):
    refs = json.loads((tiny_refs / "lopc.json").read_text())
    assert refs["points"] == 8 and refs["seed"] == 11 and len(refs["rows"]) == 8
    assert all(r["rel_hw"] <= 0.03 or r["cycles"] == D.MAX_CYCLES for r in refs["rows"])
    # the store answers a re-run without simulating again (same rows)
    again = D.simulate_family("lopc", 8, 11, executor="serial",
                              store=str(tiny_refs / "lopc.sqlite"), write=False, progress=False,
                              target=0.03, min_cycles=3000)
    assert again["rows"] == refs["rows"]


def test_build_map_structure_and_errors(tiny_refs, tmp_path):
    from validation.compare import _model_values
    from models.lopc import LoPCParams

    out = tmp_path / "map.json"
    m = D.build_map(("lopc",), references=str(tiny_refs), out=str(out))
    assert json.loads(out.read_text())["families"]["lopc"]["points"] == 8
    fam = m["families"]["lopc"]
    node = fam["variants"][""]["methods"]["node"]["measures"]["R"]
    assert node["overall"]["n"] == 8
    assert sum(map(sum, node["bins"]["n"])) == 8          # every point in one bin
    # the map's error of one point is the model against the simulation
    refs = json.loads((tiny_refs / "lopc.json").read_text())
    w = node["worst"][0]
    mv = _model_values("lopc", LoPCParams(**{k: w["point"][k] for k in ("P", "W", "o", "L",
                                                                        "cs2")}), "node", {})
    row = next(r for r in refs["rows"] if r["R"] == w["sim"])
    assert w["error"] == pytest.approx((float(mv["R"]) - row["R"]) / row["R"], rel=1e-9)
    assert abs(w["error"]) == pytest.approx(node["overall"]["max"])
    assert node["overall"]["beyond"] == sum(map(sum, node["bins"]["beyond"]))


def test_validate_domain_report(tiny_refs, tmp_path, monkeypatch):
    """``validate --domain --family lopc`` on stored references writes the report and heat map."""
    import argparse

    from validation import validate_cli

    monkeypatch.setattr(D, "references_path",
                        lambda fam, directory=None: str(tiny_refs / f"{fam}.json")
                        if directory is None else f"{directory}/{fam}.json")
    p = argparse.ArgumentParser()
    validate_cli.register(p.add_subparsers(dest="command"))
    args = p.parse_args(["validate", "--domain", "--family", "lopc", "--seed", "11",
                         "--out", str(tmp_path)])
    text = args.func(args)
    assert "## lopc" in text and "| R | node | 8 |" in text and "Worst points of auto" in text
    assert (tmp_path / "domain.html").exists() and (tmp_path / "domain_lopc.png").exists()


# ---------------------------------------------------------------------------
# a fresh sample agrees with the shipped map (CI)
# ---------------------------------------------------------------------------

#: per family: fresh points simulated in CI (fixed seed, not the map's)
CI_POINTS = {"lopc": 12, "ini": 8, "policy": 6, "pdq": 6}


def _mapped_families():
    from models.accuracy import load_map
    return [f for f in D.FAMILIES if f in load_map()["families"]]


@pytest.mark.slow
@pytest.mark.parametrize("family", _mapped_families())
def test_fresh_sample_is_consistent_with_the_shipped_map(family, tmp_path):
    """The count of fresh points whose |e_R| (default method) exceeds the map's p95 of their
    bin is Binomial(n, <= 0.05) if the map is right; fail when P(X >= k) < 0.001.  Where the
    map says the default meets its issue target, the fresh points must not refute that (the
    same test on the target's p95 bound, no point beyond its max by more than the interval).
    Every family of the shipped map is checked (test_accuracy_map checks which are shipped)."""
    res = D.check_against_map(family, CI_POINTS[family], seed=7, store=str(tmp_path / "s.sqlite"))
    for variant, r in res.items():
        assert r["n"] >= CI_POINTS[family] // 2, (variant, r)
        assert r["consistent"], (variant, r)
        assert r["target_held"], (variant, r)
        assert 0 <= r["above"] <= r["n"] and 0 < r["p_value"] <= 1


def test_check_detects_a_falsely_claimed_target(tiny_refs):
    """A map claiming the LoPC target met is refuted by fresh points far outside it."""
    m = D.build_map(("lopc",), references=str(tiny_refs), out=None)
    refs = json.loads((tiny_refs / "lopc.json").read_text())
    for row in refs["rows"]:                  # simulated R 30% below what the model says
        if row.get("R"):
            row["R"], row["R_hw"] = 0.7 * row["R"], 0.001 * row["R"]
    ov = m["families"]["lopc"]["variants"][""]["methods"]["node"]["measures"]["R"]["overall"]
    ov.update(mean=0.001, p95=0.002, max=0.003)
    r = D.check_against_map("lopc", 8, 11, method="node", accuracy_map=m, refs=refs)[""]
    assert r["claims_target"] and not r["target_held"]
    assert r["above_target"] == r["n"] and r["target_p_value"] < D.CHECK_ALPHA
    ov.update(mean=0.5, p95=0.5, max=0.5)     # no claim: nothing to refute
    r = D.check_against_map("lopc", 8, 11, method="node", accuracy_map=m, refs=refs)[""]
    assert not r["claims_target"] and r["target_held"]


def test_check_detects_an_optimistic_map(tiny_refs):
    """A map claiming 0.01% errors everywhere is inconsistent with the simulations."""
    m = D.build_map(("lopc",), references=str(tiny_refs), out=None)
    fam = m["families"]["lopc"]["variants"][""]["methods"]["lopc"]["measures"]["R"]
    fam["overall"]["bound"] = 1e-4
    fam["bins"]["bound"] = [[1e-4] * len(r) for r in fam["bins"]["bound"]]
    fam["bins"]["bound_axis1"] = [1e-4] * len(fam["bins"]["bound"])
    refs = json.loads((tiny_refs / "lopc.json").read_text())
    r = D.check_against_map("lopc", 8, 11, method="lopc", accuracy_map=m, refs=refs)[""]
    assert not r["consistent"] and r["above"] >= 6 and r["p_value"] < D.CHECK_ALPHA
    assert math.isfinite(r["fresh"]["p95"])


@pytest.mark.parametrize("dist", ["lognormal", "exponential", "uniform"])
def test_prediction_bound_covers_a_new_point(dist):
    """The bin figure is exceeded by a new point of the same distribution at most 5% of the
    time on average, for every bin size (the sample 95th percentile of a small bin is not:
    about 15% at n = 8).  A sparse bin's bound pools with its parent and never drops below
    its own maximum."""
    rng = np.random.default_rng(20261124)
    draw = {"lognormal": lambda s: rng.lognormal(0.0, 1.0, s),
            "exponential": lambda s: rng.exponential(1.0, s),
            "uniform": lambda s: rng.uniform(0.0, 1.0, s)}[dist]
    trials = 4000
    for n in (3, 8, 18, 19, 40, 100):
        samples = draw((trials, n))
        new = draw(trials)
        parent = float(np.quantile(draw(200_000), 0.95))     # the parent's true p95
        b = np.array([D._bound(s, parent) for s in samples])
        assert np.all(b >= samples.max(axis=1)) if n < 19 else np.all(b <= samples.max(axis=1))
        rate = float((new > b).mean())
        assert rate <= 0.05 + 3 * math.sqrt(0.05 * 0.95 / trials), (n, rate)
        if n == 8:
            pct = np.percentile(samples, 95, axis=1)
            assert float((new > pct).mean()) > 0.10       # why the sample p95 is not used
    assert D._bound(np.array([]), 0.3) == 0.3 and D._bound(np.array([]), None) is None


def test_saturation_agreement_counts_both_sides():
    """The map compares the model's saturation flag with the simulator's at every point,
    the simulator's saturated points included (one key: a single server, stable below
    load 1/k)."""
    from models.pdq import PDQParams, solve

    base = dict(k=4, S=100.0, cs2=1.0, n_keys=1, key_skew=0.0, f_sequential=0.0,
                f_nosync=0.0)
    loads = (0.5, 0.1, 0.1)              # saturated (2x one key's capacity), stable, stable
    sim_sat = (True, False, True)        # the third: the simulator disagrees
    rows = []
    for i, (load, ss) in enumerate(zip(loads, sim_sat)):
        r = {**base, "load": load, "variant": "shared", "i": i}
        if ss:
            r.update(saturated=True, error="no steady state")
        else:
            m = solve(PDQParams(**{**base, "load": load}), "shared")
            r.update(saturated=False, R=float(m.response_time), R_hw=1.0,
                     U=float(m.utilization), U_hw=0.01, N=float(m.mean_in_system), N_hw=0.1)
        rows.append(r)
    fe = D.family_errors("pdq", {"rows": rows}, methods=("auto",))
    sat = fe["shared"]["auto"]["saturation"]
    assert sat == {"points": 3, "both": 1, "model_only": 0, "sim_only": 1, "agree": 2 / 3}
    assert fe["shared"]["auto"]["failed"] == 0     # the model's NaN at a saturated point
    # the error measure leaves the saturated points out; the stable one is exact here
    R = fe["shared"]["auto"]["measures"]["R"]
    assert R["ok"].tolist() == [False, True, False] and abs(R["e"][1]) < 1e-12


def test_winner_agreement_on_model_solves():
    """The faster-policy check counts a separated pair named wrongly, and leaves out the
    pairs whose simulated intervals overlap (references built around the model's own
    execution times, so the expected verdicts are known)."""
    refs = D.load_references("policy")
    by_i: dict[int, dict[str, dict]] = {}
    for r in refs["rows"]:
        by_i.setdefault(r["i"], {})[r["variant"]] = r
    # three design points of small machines with all three policies simulated
    chosen = [i for i, v in sorted(by_i.items())
              if len(v) == 3 and v["fixed"]["p"] <= 4 and v["fixed"]["nodes"] <= 8][:3]
    assert len(chosen) == 3
    rows = [dict(by_i[i][v]) for i in chosen for v in ("fixed", "floating", "single")]
    fe = D.family_errors("policy", {"rows": rows}, methods=("mva",))
    T = {v: dict(zip([r["i"] for r in fe[v]["mva"]["sims"]], fe[v]["mva"]["values"]["T"]))
         for v in ("fixed", "floating", "single")}
    # point 0: the simulator agrees with the model, intervals apart; point 1: it names
    # the other policy of each pair, intervals apart; point 2: the intervals overlap
    for r in rows:
        i, v = r["i"], r["variant"]
        fx = T["fixed"][i]
        if v == "fixed":
            r["T"], r["T_hw"] = fx, 1e-3 * fx
        else:
            faster_in_model = T[v][i] < fx
            sign = {chosen[0]: 1.0, chosen[1]: -1.0, chosen[2]: 1.0}[i]
            gap = 0.2 if i != chosen[2] else 1e-4
            r["T"] = fx * (1.0 - sign * gap if faster_in_model else 1.0 + sign * gap)
            r["T_hw"] = 1e-3 * fx
    fe = D.family_errors("policy", {"rows": rows}, methods=("mva",))
    w = D.winner_agreement(fe, "mva")
    for pair in ("fixed/floating", "fixed/single"):
        assert w[pair]["points"] == 3
        assert w[pair]["separated"] == 2 and w[pair]["correct"] == 1, w[pair]
        assert [x["i"] for x in w[pair]["wrong"]] == [chosen[1]]
        bad = w[pair]["wrong"][0]
        assert (bad["model_ratio"] < 1) != (bad["sim_ratio"] < 1)
        assert abs(w[pair]["agree_all"] - 2 / 3) < 1e-12
    assert D.winner_agreement(fe, "node") is None      # a method not solved


def test_refine_extends_only_the_runs_stopped_at_their_cap(tmp_path):
    """``refine`` re-runs the rows that hit the cap above the target, same seed, longer."""
    refs = D.simulate_family("lopc", 6, 11, executor="serial", store=str(tmp_path / "s.sqlite"),
                             out=D.references_path("lopc", str(tmp_path)), progress=False,
                             target=0.004, min_cycles=1500, max_cycles=2000)
    before = refs["rows"]
    capped = [r["rel_hw"] > 0.02 and r["cycles"] == 2000 for r in before]
    assert any(capped) and not all(capped)            # the test sees both kinds of row
    out = D.refine_family("lopc", target=0.02, max_cycles=40_000,
                          path=D.references_path("lopc", str(tmp_path)), progress=False)
    on_disk = json.loads((tmp_path / "lopc.json").read_text())
    assert on_disk["rows"] == out["rows"] and on_disk["refined"][0]["rows"] == sum(capped)
    for old, new, c in zip(before, out["rows"], capped):
        if not c:
            assert new == old
            continue
        assert sorted(new) == sorted(old)
        assert {k: new[k] for k in ("i", "seed", "P", "W", "o", "L", "cs2")} == \
            {k: old[k] for k in ("i", "seed", "P", "W", "o", "L", "cs2")}
        assert new["cycles"] > old["cycles"]
        assert new["rel_hw"] <= 0.02 or new["cycles"] == 40_000
        again = D.simulate_point(family="lopc", seed=old["seed"], min_cycles=new["cycles"],
                                 max_cycles=new["cycles"], **D._row_point(old))
        assert again["R"] == new["R"]                 # the same seed, the same run
    with pytest.raises(ValueError, match="max_cycles must exceed the references' own cap"):
        D.refine_family("lopc", target=0.02, max_cycles=2000,
                        path=D.references_path("lopc", str(tmp_path)), progress=False)


def test_update_simulates_only_the_points_that_moved(tmp_path):
    """``update`` re-runs the stored rows whose design point moved, refined as before."""
    path = D.references_path("lopc", str(tmp_path))
    D.simulate_family("lopc", 6, 11, executor="serial", store=str(tmp_path / "s.sqlite"),
                      out=path, progress=False, target=0.004, min_cycles=1500, max_cycles=2000)
    good = D.refine_family("lopc", target=0.02, max_cycles=40_000, path=path, progress=False)
    capped = [j for j, r in enumerate(good["rows"]) if r["cycles"] > 2000]
    assert capped and len(capped) < 6                 # refined rows and rows left as they were
    moved, ulp = capped[0], next(j for j in range(6) if j not in capped)
    stale = json.loads(json.dumps(good))
    stale["rows"][moved]["W"] *= 1.1                  # a point the design no longer has
    stale["rows"][moved]["R"] = -1.0
    stale["rows"][ulp]["o"] = float(np.nextafter(stale["rows"][ulp]["o"], math.inf))
    with open(path, "w") as f:
        json.dump(stale, f)
    out = D.update_family("lopc", path=path, progress=False)
    assert json.loads(open(path).read()) == out
    assert out["updated"][-1]["moved"] == 1 and out["updated"][-1]["kept"] == 5

    def run(row):                                     # the row without its wall time
        return {k: v for k, v in row.items() if k != "sim_wall_time"}

    # the moved row is simulated at today's point with its seed, and refined as the stored
    # runs were: exactly the row the references had; the one-ulp row is kept as it is
    assert run(out["rows"][moved]) == run(good["rows"][moved])
    assert out["rows"][ulp] == stale["rows"][ulp]
    assert [r for j, r in enumerate(out["rows"]) if j not in (moved, ulp)] == \
        [r for j, r in enumerate(good["rows"]) if j not in (moved, ulp)]
    again = D.update_family("lopc", path=path, progress=False, write=False)
    assert again["updated"][-1]["moved"] == 0


def test_design_saturation_loads_through_a_resumable_sweep(tmp_path, monkeypatch):
    """PDQ's saturation bisections give the same design serially and as a stored sweep."""
    calls = []

    def bound(fields, discipline):
        calls.append(discipline)
        return 0.5 + 0.01 * fields["k"] + (0.1 if fields.get("multiplexed") else 0.0)

    monkeypatch.setattr(D, "pdq_saturation_load", bound)
    serial = D.design_points("pdq", 3, seed=4)
    assert len(calls) == 12
    store = str(tmp_path / "sat.sqlite")
    assert D.design_points("pdq", 3, seed=4, store=store) == serial
    assert len(calls) == 24
    assert D.design_points("pdq", 3, seed=4, store=store) == serial   # resumed: no bisection
    assert len(calls) == 24
    assert [sorted(p) for p in D.design_points("pdq", 3, seed=4, store=store)] == \
        [sorted(p) for p in serial]


def test_check_refines_fresh_runs_as_the_stored_references_were(tmp_path, monkeypatch):
    """A fresh design is measured like the map's references: their refinements are repeated."""
    calls = []
    real = D._refine_rows

    def spy(family, refs, **kw):
        calls.append((family, kw["target"], kw["max_cycles"], len(refs["rows"])))
        return real(family, refs, **kw)

    monkeypatch.setattr(D, "_refine_rows", spy)
    monkeypatch.setattr(D, "_stored_refinements",
                        lambda fam: [{"target_rel_hw": 0.5, "max_cycles": 2 * D.MAX_CYCLES}])
    res = D.check_against_map("lopc", 3, seed=3, store=str(tmp_path / "c.sqlite"))
    assert calls == [("lopc", 0.5, 2 * D.MAX_CYCLES, 3)] and res[""]["n"] == 3
    monkeypatch.setattr(D, "_stored_refinements", lambda fam: [])
    calls.clear()
    D.check_against_map("lopc", 3, seed=3, store=str(tmp_path / "c.sqlite"))
    assert calls == []


@pytest.mark.parametrize("argv, message", [
    (["check", "--family", "lopc", "--points", "-3"], "--points: must be >= 1; got -3"),
    (["check", "--family", "lopc", "--points", "x"], "--points: not an integer: 'x'"),
    (["map", "--budget", "0"], "--budget: must be > 0; got 0"),
    (["simulate", "--workers", "0"], "--workers: must be >= 1; got 0"),
    (["refine", "--target", "0"], "--target: must be > 0; got 0"),
    (["refine", "--max-cycles", "x"], "--max-cycles: not an integer: 'x'"),
    (["update", "--workers", "x"], "--workers: not an integer: 'x'"),
])
def test_command_line_rejects_bad_options_in_one_line(argv, message, capsys):
    with pytest.raises(SystemExit) as exc:
        D.main(argv)
    assert exc.value.code == 2
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err


def test_command_line_failure_is_one_error_line(monkeypatch, capsys):
    def boom(*a, **k):
        raise OSError("cannot write /read-only/map.json")
    monkeypatch.setattr(D, "build_map", boom)
    assert D.main(["map", "--family", "lopc"]) == 2
    assert capsys.readouterr().err.strip() == "error: cannot write /read-only/map.json"
