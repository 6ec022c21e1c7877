"""Tests of models.layers: the communication and protocol layers of paper 003.

Hand-computed values use Table 2 (communication parameters) and Table 3
(protocol costs) of 003 (../shared/papers/003_424d737ba5176b9e.txt).
"""

from __future__ import annotations

import argparse
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from models import layers as ly
from models.layers import (AppProfile, CommParams, ProtocolParams, block_fetch, comm_preset,
                           fetch_contention, layer_settings, layered_whatif, message_cost,
                           page_fetch, protocol_preset, speedup)

sizes = st.floats(min_value=1.0, max_value=20000.0, allow_nan=False)
counts = st.floats(min_value=0.0, max_value=2e4, allow_nan=False)


# --------------------------------------------------------------------------
# presets: transcription of Tables 2 and 3
# --------------------------------------------------------------------------

def test_table2_transcribed_exactly():
    # 003, Table 2: Achievable, Best, Worse and the measured real-system column
    rows = {"host_overhead": (600, 0, 1200, (600, 800)), "io_bus_bandwidth": (0.5, 2, 0.25, 0.45),
            "ni_occupancy": (1000, 0, 2000, 1000), "message_handling": (200, 0, 400, None)}
    for name, (a, b, w, real) in rows.items():
        assert ly.TABLE2[name] == {"achievable": a, "best": b, "worse": w, "real": real}
        assert getattr(comm_preset("A"), name) == a
        assert getattr(comm_preset("B"), name) == b
        assert getattr(comm_preset("W"), name) == w


def test_table2_caption_units_at_200mhz():
    # caption: at 1 IPC, 200 MHz the achievable values are 3 us, 100 MB/s, 5 us and 1 us
    a = comm_preset("A")
    assert a.host_overhead / 200e6 == pytest.approx(3e-6)
    assert a.io_bus_bandwidth * 200e6 == pytest.approx(100e6)
    assert a.ni_occupancy / 200e6 == pytest.approx(5e-6)
    assert a.message_handling / 200e6 == pytest.approx(1e-6)


def test_halfway_and_better_than_best_sets():
    h = comm_preset("H")
    assert (h.host_overhead, h.ni_occupancy, h.message_handling) == (300, 500, 100)
    assert h.io_bus_bandwidth == 1.25
    bp = comm_preset("B+")  # 003 Section 3.4: link cycle time 0, I/O bus 4 bytes/cycle
    assert bp.link_latency == 0 and math.isinf(bp.link_bandwidth) and bp.io_bus_bandwidth == 4
    assert comm_preset("A").link_latency == 20  # Section 3.2: fixed at 20 cycles
    assert comm_preset("real").host_overhead == 700


def test_table3_transcribed_exactly():
    o, b, h = protocol_preset("O"), protocol_preset("B"), protocol_preset("H")
    assert (o.page_protection, o.diff_compare, o.diff_word, o.diff_apply, o.twin_creation,
            o.handler_base, o.write_notice) == (50, 10, 10, 10, 10000, 100, 20)
    assert (h.page_protection, h.diff_compare, h.diff_word, h.diff_apply, h.twin_creation,
            h.handler_base, h.write_notice) == (25, 5, 5, 5, 5000, 50, 10)
    assert all(getattr(b, f) == 0 for f in ("page_protection", "diff_compare", "diff_word",
                                            "diff_apply", "twin_creation", "handler_base",
                                            "write_notice"))
    assert ly.TABLE3["handler_cost"]["original"] == "100+x"
    assert ly.TABLE3["diff_creation"]["halfway"] == (5, 5)


def test_layer_settings_codes():
    c, p = layer_settings("AO")
    assert c == comm_preset("A") and p == protocol_preset("O")
    c, p = layer_settings("HB")
    assert c.ni_occupancy == 500 and p.handler_base == 0
    c, p = layer_settings("BB+")
    assert c.io_bus_bandwidth == 4 and p.handler_base == 0
    for bad in ("XO", "AX", "AOO", "AO+", 3):
        with pytest.raises(ValueError, match="layer combination"):
            layer_settings(bad)


# --------------------------------------------------------------------------
# one message: latency and occupancy against hand computation
# --------------------------------------------------------------------------

def test_message_hand_computed_achievable():
    # 64-byte request, Achievable: o_h + bus + NI + link(20 + 64/2) + NI + bus + handling
    m = message_cost("A", 64)
    assert m.latency == 600 + 128 + 1000 + (20 + 32) + 1000 + 128 + 200
    assert (m.host_send, m.ni_send, m.ni_recv, m.io_bus_send, m.io_bus_recv, m.host_recv) == \
        (600, 1000, 1000, 128, 128, 200)
    assert (m.host, m.ni, m.io_bus) == (800, 2000, 256)
    # a data reply invokes no handler
    assert message_cost("A", 64, handler=False).latency == m.latency - 200


def test_message_hand_computed_multi_packet():
    # 8 KB with Achievable: two 4 KB packets, pipelined; the bus (8192 cycles/packet) is slowest
    m = message_cost("A", 8192)
    stages = 8192 + 1000 + 2048 + 1000 + 8192
    assert m.packets == 2
    assert m.latency == 600 + stages + 8192 + 20 + 200
    assert m.ni == 4 * 1000 and m.io_bus == 2 * 8192 * 2


def test_message_best_and_worse():
    assert message_cost("B", 4096, handler=False).latency == 2048 + 20 + 2048 + 2048
    assert message_cost("W", 64).latency == 1200 + 256 + 2000 + 52 + 2000 + 256 + 400
    assert message_cost("B+", 4096, handler=False).latency == 1024 + 1024


@given(sizes, sizes)
def test_message_latency_increases_with_size(s1, s2):
    lo, hi = sorted((s1, s2))
    for pre in ("A", "H", "B", "W"):
        assert message_cost(pre, lo).latency <= message_cost(pre, hi).latency + 1e-9


def test_message_remainder_packet_hand_computed():
    # 4,097 bytes with Best (no overheads, 2 B/cycle bus and link): one full 4 KB packet and a
    # 1-byte remainder; the remainder leaves the last bus at max(4096.5, 6144) + 0.5
    m = message_cost("B", 4097, handler=False)
    assert m.packets == 2
    assert m.latency == 6144.5 + 20


def test_message_latency_no_drop_at_packet_boundary():
    # issue 20: 2,732 bytes took 4,118 cycles and 4,097 bytes 4,117 (equal-size re-split)
    for pre in ("A", "H", "B", "W"):
        c = comm_preset(pre)
        before = message_cost(pre, 2732).latency
        at, after = message_cost(pre, [c.max_packet, c.max_packet + 1]).latency
        assert before < at < after


@given(st.integers(0, 5), st.floats(-64.0, 64.0), st.floats(0.0, 64.0), st.sampled_from("AHBW"),
       st.booleans())
def test_message_latency_monotone_across_packet_boundaries(k, offset, step, pre, handler):
    c = comm_preset(pre)
    lo = max(0.0, k * c.max_packet + offset)
    lat = message_cost(pre, [lo, lo + step], handler=handler).latency
    assert lat[0] <= lat[1] + 1e-9


@given(sizes, st.booleans())
def test_best_set_gives_lowest_message_costs(s, handler):
    lat = [message_cost(p, s, handler=handler).latency for p in ("B+", "B", "H", "A", "W")]
    assert all(a <= b + 1e-9 for a, b in zip(lat, lat[1:]))
    occ = [message_cost(p, s).ni + message_cost(p, s).host for p in ("B", "H", "A", "W")]
    assert all(a <= b for a, b in zip(occ, occ[1:]))


def test_message_vectorised_and_preset_arrays():
    s = np.array([16.0, 64.0, 4096.0, 10000.0])
    m = message_cost("A", s)
    assert m.latency.shape == (4,)
    assert np.allclose(m.latency, [message_cost("A", x).latency for x in s])
    grid = message_cost(np.array([["A"], ["B"]]), s)  # presets x sizes
    assert grid.latency.shape == (2, 4)
    assert np.allclose(grid.latency[1], message_cost("B", s).latency)
    c = CommParams(host_overhead=np.array([0.0, 600.0]))
    assert message_cost(c, 64).latency.tolist() == [2508.0, 3108.0]


# --------------------------------------------------------------------------
# fetches
# --------------------------------------------------------------------------

def test_block_fetch_hand_computed():
    r = block_fetch("A", "O", 64)  # request 16 B + handler 100 + 64-B reply without handler
    req = 600 + 32 + 1000 + 28 + 1000 + 32 + 200
    rep = 600 + 128 + 1000 + 52 + 1000 + 128
    assert (r.request_latency, r.reply_latency) == (req, rep)
    assert r.round_trip == req + 100 + rep == 5900
    assert r.host == 600 + 200 + 100 + 600 and r.ni == 4000 and r.io_bus == 2 * 32 + 2 * 128


def test_page_fetch_hand_computed():
    r = page_fetch("A", "O")
    page_reply = 600 + 8192 + 1000 + (20 + 2048) + 1000 + 8192
    assert r.reply_latency == page_reply
    assert r.round_trip == 2892 + 100 + page_reply + 50  # + one page protection
    d = page_fetch("A", "O", diff_words=64)
    create = 1024 * 10 + 64 * 10          # Table 3: 10 per word compared, 10 per word in diff
    msg = message_cost("A", 64 * 4 + 16).latency
    apply = 100 + 64 * 10                 # handler 100 + x, x = 10 per diff word applied
    assert d.diff_latency == create + msg + apply
    assert d.round_trip == r.round_trip + d.diff_latency
    assert d.messages == 3 and r.messages == 2


@given(st.sampled_from([64, 128, 256, 512, 1024, 2048, 4096]), st.floats(0, 1024))
def test_best_set_gives_lowest_fetch_costs(b, d):
    rts = [block_fetch(c, p, b).round_trip
           for c, p in map(layer_settings, ("BB", "HH", "AO", "WO"))]
    assert all(x <= y for x, y in zip(rts, rts[1:]))
    pgs = [page_fetch(c, p, diff_words=d).round_trip
           for c, p in map(layer_settings, ("BB", "BH", "BO", "AO", "WO"))]
    assert all(x <= y for x, y in zip(pgs, pgs[1:]))


def test_block_fetch_grows_with_block_size_and_vectorises():
    b = np.array([64, 128, 256, 512, 1024, 2048, 4096.0])
    r = block_fetch("A", "O", b)
    assert np.all(np.diff(r.round_trip) > 0)
    assert r.round_trip[0] == block_fetch("A", "O", 64).round_trip


# --------------------------------------------------------------------------
# contention
# --------------------------------------------------------------------------

def test_contention_hand_computed_mg1():
    lam = 5e-5
    r = fetch_contention("A", "O", lam, kind="block", block_size=64)
    # NI: four deterministic 1000-cycle visits per fetch
    lam_ni = 4 * lam
    rho_ni = lam_ni * 1000
    W_ni = lam_ni * 1000**2 / (2 * (1 - rho_ni))
    # bus: 32, 32, 128, 128 cycles per fetch
    rho_b = lam * (32 + 32 + 128 + 128)
    W_b = lam * (2 * 32**2 + 2 * 128**2) / (2 * (1 - rho_b))
    # home host: handling 200 + handler 100 + reply send overhead 600
    rho_h = lam * 900
    W_h = lam * 900**2 / (2 * (1 - rho_h))
    assert r.utilization_ni == pytest.approx(rho_ni)
    assert r.utilization_io_bus == pytest.approx(rho_b)
    assert r.utilization_host == pytest.approx(rho_h)
    assert r.round_trip == pytest.approx(5900 + 4 * W_ni + 4 * W_b + W_h)
    assert not r.saturated and r.bottleneck == ""


def test_contention_saturation_is_flagged():
    r = fetch_contention("A", "O", [1e-5, 3e-4])
    assert r.saturated.tolist() == [False, True]
    assert r.bottleneck.tolist() == ["", "ni"]
    assert np.isnan(r.round_trip[1]) and np.isfinite(r.round_trip[0])
    # no utilization above one is reported: a saturated point has NaN utilizations (as pdq)
    assert np.isnan([r.utilization_ni[1], r.utilization_host[1], r.utilization_io_bus[1]]).all()
    assert r.utilization_ni[0] == pytest.approx(0.04)


@given(st.floats(0.0, 10.0), st.sampled_from(["block", "page"]), st.sampled_from("AHBW"))
def test_contention_utilizations_in_unit_interval_or_flagged(rate, kind, pre):
    # issue 20: `layers contention --rate 1` printed utilizations of 900 and 4000
    r = fetch_contention(pre, "O", rate, kind=kind, diff_words=16)
    u = np.array([r.utilization_host, r.utilization_ni, r.utilization_io_bus], dtype=float)
    if r.saturated:
        assert (np.isnan(u).all() and np.isnan(r.round_trip)
                and r.bottleneck in ("host", "ni", "io_bus"))
    else:
        assert ((u >= 0) & (u < 1)).all() and r.bottleneck == ""


@given(st.floats(0, 2e-4), st.floats(0, 2e-4))
def test_contention_monotone_in_rate(a, b):
    lo, hi = sorted((a, b))
    r = fetch_contention("A", "O", np.array([lo, hi]), kind="page", diff_words=32)
    if not r.saturated[1]:
        assert r.round_trip[0] <= r.round_trip[1] + 1e-9
        assert r.round_trip[0] >= r.uncontended[0] - 1e-9


def test_contention_zero_rate_is_uncontended():
    r = fetch_contention("H", "H", 0.0, kind="page", diff_words=10)
    assert r.round_trip == r.uncontended == page_fetch("H", "H", diff_words=10).round_trip


# --------------------------------------------------------------------------
# speedup
# --------------------------------------------------------------------------

app_profiles = st.builds(
    AppProfile, sequential_time=st.floats(1e7, 1e10), processors=st.sampled_from([2.0, 8.0, 16.0]),
    imbalance=st.floats(1.0, 1.5), block_fetches=counts, page_fetches=st.floats(0, 2e3),
    diffs=st.floats(0, 2e3), twins=st.floats(0, 500), locks=st.floats(0, 500),
    barriers=st.floats(0, 50), messages=st.floats(0, 1e3), write_notices=st.floats(0, 1e3))


def test_speedup_pram_and_no_communication():
    app = AppProfile(sequential_time=1.6e9, imbalance=1.25)
    for code in ("AO", "WO", "BB", "PRAM"):
        assert speedup(app, layers=code).speedup == pytest.approx(16 / 1.25)
    busy = AppProfile(sequential_time=1.6e9, block_fetches=1e4)
    assert speedup(busy, layers="PRAM").speedup == pytest.approx(16.0)


@given(app_profiles)
def test_speedup_components_and_bounds(app):
    r = speedup(app, layers="AO")
    P = app.processors / app.imbalance
    assert 0 < r.speedup <= P + 1e-9
    assert r.converged
    if not r.saturated:
        total = r.compute + r.data_wait + r.protocol + r.synchronization
        assert r.time == pytest.approx(total, rel=1e-8)
    for u in (r.utilization_host, r.utilization_ni, r.utilization_io_bus):
        assert 0 <= u <= 1


@given(app_profiles)
def test_best_layers_give_highest_speedup(app):
    s = {c: speedup(app, layers=c).speedup for c in ("WO", "AO", "AB", "HO", "BO", "BB", "PRAM")}
    tol = 1e-9
    assert s["WO"] <= s["AO"] + tol <= s["HO"] + 2 * tol <= s["BO"] + 3 * tol
    assert s["AO"] <= s["AB"] + tol and s["BO"] <= s["BB"] + tol <= s["PRAM"] + 2 * tol


def test_speedup_hand_computed_without_contention():
    # Only barriers with zero NI and bus costs and zero handling: queueing only at the host.
    comm = CommParams(host_overhead=0, ni_occupancy=0, io_bus_bandwidth=np.inf,
                      message_handling=0, link_latency=20, link_bandwidth=np.inf)
    app = AppProfile(sequential_time=1.6e6, processors=16, barriers=1)
    r = speedup(app, comm, protocol_preset("B"))
    # barrier: arrival (20) + 15 handlers of 0 + release (20); compute 1e5
    assert r.time == pytest.approx(1e5 + 40)


def test_speedup_vectorised_matches_scalar():
    n = np.array([0.0, 1e3, 1e4, 5e4])
    app = AppProfile(sequential_time=1.6e9, block_fetches=n, barriers=10)
    vec = speedup(app, layers="AO")
    for i, x in enumerate(n):
        one = speedup(AppProfile(sequential_time=1.6e9, block_fetches=x, barriers=10), layers="AO")
        assert vec.speedup[i] == pytest.approx(one.speedup, rel=1e-9)
    assert np.all(np.diff(vec.speedup) < 0)


def test_speedup_throttled_by_one_way_messages_is_flagged():
    app = AppProfile(sequential_time=1.6e7, messages=1e5)
    r = speedup(app, layers="AO")
    assert r.saturated and r.bottleneck == "ni"
    assert r.time == pytest.approx(1e5 * 2 * 1000, rel=1e-6)  # the NI busy time
    assert math.isnan(r.data_wait)


def test_layered_whatif_table_and_frame():
    app = AppProfile(sequential_time=1.6e9, page_fetches=2000, diffs=500, twins=500)
    t = layered_whatif(app, ["AO", "AB", "BO", "BB", "BB+"])
    s = [float(x) for x in t["speedup"]]
    assert s == sorted(s)
    assert "| AO" in t.to_markdown()
    f = speedup(app, layers="AO").to_frame()
    assert f.shape[0] == 1 and "speedup" in f.columns
    assert set(block_fetch().to_dict()) >= {"round_trip", "host", "ni", "io_bus"}


# --------------------------------------------------------------------------
# validation and CLI
# --------------------------------------------------------------------------

@pytest.mark.parametrize("kw, msg", [
    ({"host_overhead": -1}, "host_overhead"), ({"io_bus_bandwidth": 0}, "io_bus_bandwidth"),
    ({"max_packet": 0}, "max_packet"), ({"link_latency": float("nan")}, "link_latency")])
def test_comm_params_validation(kw, msg):
    with pytest.raises(ValueError, match=msg):
        CommParams(**kw)


def test_other_validation():
    with pytest.raises(ValueError, match="diff_apply"):
        ProtocolParams(diff_apply=-1)
    with pytest.raises(ValueError, match="imbalance"):
        AppProfile(sequential_time=1, imbalance=0.9)
    with pytest.raises(ValueError, match="communication preset"):
        comm_preset("Z")
    with pytest.raises(ValueError, match="kind"):
        fetch_contention(kind="word")
    with pytest.raises(ValueError, match="block_size"):
        block_fetch(block_size=0)


def _cli(argv):
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="command")
    ly.register_cli(sub)
    args = ap.parse_args(argv)
    return args.func(args)


def test_cli_tables():
    out = _cli(["layers", "message", "--preset", "A", "--size", "64"])
    assert "3108" in out
    out = _cli(["layers", "fetch", "--layers", "AO", "--block-size", "64", "--diff-words", "0"])
    assert "5900" in out and "24094" in out
    out = _cli(["layers", "speedup", "--layers", "AO,BB", "--format", "csv"])
    assert out.splitlines()[0].startswith("layers,speedup")
    out = _cli(["layers", "contention", "--rate", "3e-4"])
    assert "ni" in out
    assert "10000" in _cli(["layers", "presets"])


# ---------------------------------------------------------------------------
# equations(): the rendered SymPy formulas are the ones the code computes
# ---------------------------------------------------------------------------


def test_equations_match_numeric_implementation():
    import sympy as sp

    from mva.symbolic import lambdify

    eqs = ly.equations()
    sym = {s.name: s for e in eqs.values() for s in e.free_symbols}

    def f(name, names):
        return lambdify([sym[n] for n in names], eqs[name].rhs)

    comm_names = ["m", "P_max", "o_h", "B", "o_ns", "o_nr", "B_l", "L", "h", "eta"]
    n_p = f("n_p", ["m", "P_max"])
    T = lambdify([sym[n] for n in comm_names],
                 eqs["T"].rhs.subs(sym["n_p"], eqs["n_p"].rhs))
    occ = {k: f(k, sorted(s.name for s in eqs[k].rhs.free_symbols)) for k in ("host", "NI", "bus")}

    def t(c, m, handler):
        return float(T(m, c.max_packet, c.host_overhead, c.io_bus_bandwidth, c.ni_occupancy,
                       c.ni_recv_occupancy, c.link_bandwidth, c.link_latency,
                       c.message_handling, float(handler)))

    for code in ("A", "B", "real"):
        c = comm_preset(code)
        for m in (16.0, 64.0, 4096.0, 10000.0):
            for handler in (True, False):
                mc = ly.message_cost(c, m, handler=handler)
                assert t(c, m, handler) == pytest.approx(mc.latency, rel=1e-9)
                np_ = float(n_p(m, c.max_packet))
                vals = {"m": m, "o_h": c.host_overhead, "h": c.message_handling,
                        "eta": float(handler), "n_p": np_, "o_ns": c.ni_occupancy,
                        "o_nr": c.ni_recv_occupancy, "B": c.io_bus_bandwidth}
                d = ly._message(c, m, handler)
                for k, key in (("host", "host"), ("NI", "ni"), ("bus", "io_bus")):
                    names = sorted(s.name for s in eqs[k].rhs.free_symbols)
                    got = float(occ[k](*(vals[n] for n in names)))
                    assert got == pytest.approx(float(d[key]), rel=1e-9)

    rt_block = f("RT_block", ["T_req", "H_0", "T_b"])
    rt_page = f("RT_page", ["T_req", "H_0", "T_page", "c_prot", "delta", "c_cmp", "w", "c_dw",
                            "d", "T_diff", "c_app"])
    for cc, pc in (("A", "O"), ("B", "B"), ("real", "O")):
        c, p = comm_preset(cc), ly.protocol_preset(pc)
        for b in (64.0, 1024.0):
            got = rt_block(t(c, 16.0, True), p.handler_base, t(c, b, False))
            assert float(got) == pytest.approx(block_fetch(c, p, b).round_trip, rel=1e-9)
        for dw in (0.0, 64.0, 500.0):
            got = rt_page(t(c, 16.0, True), p.handler_base, t(c, p.page_bytes, False),
                          p.page_protection, float(dw > 0), p.diff_compare, p.page_words,
                          p.diff_word, dw, t(c, dw * p.word_bytes + 16.0, True), p.diff_apply)
            assert float(got) == pytest.approx(ly.page_fetch(c, p, diff_words=dw).round_trip,
                                               rel=1e-9)

    W = f("W", ["lambda", "E_S", "E_S2"])
    rt_c = f("RT_c", ["RT_0", "W_NI", "W_bus", "W_host"])
    for lam, s, s2 in ((1e-4, 1000.0, 2e6), (5e-4, 800.0, 1.5e6), (0.01, 10.0, 100.0)):
        got = float(W(lam, s, s2))
        want = float(ly._mg1_wait(np.asarray(lam), np.asarray(s), np.asarray(s2))[0])
        assert got == pytest.approx(want, rel=1e-9)
    for rate in (1e-5, 5e-5, 1e-4):
        r = ly.fetch_contention("A", "O", rate, kind="block", block_size=64)
        got = float(rt_c(r.uncontended, r.wait_ni, r.wait_io_bus, r.wait_host))
        assert got == pytest.approx(r.round_trip, rel=1e-9)
        assert r.round_trip > r.uncontended
    assert isinstance(eqs["T"], sp.Eq)


def test_whatif_names_bad_layer_code_first():
    # issue 20: whatif("ZZ") complained about sequential_time, not the layer code
    with pytest.raises(ValueError, match=r"layers: .*'AO'.*got 'ZZ'"):
        ly.whatif("ZZ")
    with pytest.raises(ValueError, match=r"layers: .*got 'Q'"):
        ly.whatif(["AO", "Q"], sequential_time=1e9)
    with pytest.raises(ValueError, match="sequential_time"):
        ly.whatif("AO")


# -- declared ends: no silent inf at extreme inputs -------------------------------

def _bounded(cls):
    from mva.params import declarations

    return [(cls, n, d) for n, d in declarations(cls).items()
            if d.high is not None or (d.low is not None and d.low > 0)]


def _layers_outputs(obj):
    if isinstance(obj, CommParams):
        return [message_cost(obj), block_fetch(obj), page_fetch(obj), fetch_contention(obj)]
    if isinstance(obj, ProtocolParams):
        return [block_fetch(None, obj), page_fetch(None, obj), fetch_contention(None, obj)]
    return [speedup(obj)]


def _finite(res):
    """Every number finite, unless the result says it is saturated (NaN there, flagged)."""
    import dataclasses

    if np.any(getattr(res, "saturated", False)):
        return
    for f in dataclasses.fields(res):
        v = getattr(res, f.name)
        if isinstance(v, (float, np.ndarray)) and not isinstance(v, bool):
            assert np.all(np.isfinite(np.asarray(v, dtype=float))), f.name


_APP = {"sequential_time": 1.6e9, "block_fetches": 1e4, "page_fetches": 1e3, "diffs": 100.0,
        "twins": 100.0, "messages": 1e3, "locks": 10.0, "barriers": 10.0}


@pytest.mark.parametrize("cls, name, decl", _bounded(CommParams) + _bounded(ProtocolParams)
                         + _bounded(AppProfile), ids=lambda x: getattr(x, "__name__", None)
                         if isinstance(x, type) else (x if isinstance(x, str) else ""))
def test_declared_ends_give_finite_results(cls, name, decl):
    """Every bounded parameter at its declared end (costs MAX_TIME, counts and sizes
    MAX_COUNT, bandwidths MIN_BANDWIDTH) gives finite results everywhere or a result flagged
    saturated, and a value past the end is refused naming the parameter (a cost of 1e308,
    a bandwidth of 5e-324 gave inf silently before)."""
    make = (lambda **kw: AppProfile(**dict(_APP, **kw))) if cls is AppProfile else cls
    ends = [e for e in (decl.low, decl.high) if e is not None and math.isfinite(e) and e != 0]
    for end in ends:
        for res in _layers_outputs(make(**{name: end})):
            _finite(res)
    past = 1e308 if decl.high is not None else 5e-324
    if decl.high is not None or decl.low > 5e-324:
        with pytest.raises(ValueError, match=name):
            make(**{name: past})
