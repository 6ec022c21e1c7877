"""The fast paths behind ``models.cost.policy_cost``'s first call (issue 19).

* The two-node policy chain (``models._policy_node._pair_solve``) reads its structure
  from ``models/_generated/policy_pair_chains.npy`` or enumerates it once per
  structure: it must equal the enumerating reference ``_pair_solve_ref`` bit for bit,
  and the shipped file must equal a fresh enumeration.
* Closed-network MVA points (``models.policy._network_point``) are solved most
  threads first and read smaller populations from the kept lattice: a grid must give
  what each point solved alone (fresh lattice cache) gives, bit for bit.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from models import _policy_node as pn
from models import policy
from models.cost import policy_cost
from models.policy import preset

FIELDS = ("R", "X", "R_w", "R_q", "R_y", "R_r", "U", "D", "P_all", "P_int", "P_blk", "conv",
          "it", "res", "states", "asym")


def _point(pol, **kw):
    prm = preset("null-handler", **kw)
    names, uniq, _ = policy._unique_points(policy._arrays(prm, pol))
    return {k: float(x) for k, x in zip(names, uniq[0])}


def _pair_against_reference(v, pol):
    """Solve ``v`` by the two-node chain (shipped or cached structure) and assert it equals,
    bit for bit, the enumerating reference's solve; returns the result."""
    got = pn.solve_point(v, pol)
    assert got["it"] == 1            # the two-node chain
    real = pn._pair_solve
    try:
        pn._pair_solve = pn._pair_solve_ref
        ref = pn.solve_point(v, pol)
    finally:
        pn._pair_solve = real
    _same(got, ref)
    return got


def _same(a, b):
    assert a.keys() == b.keys()
    for k in a:
        assert np.array_equal(a[k], b[k]), k


def test_shipped_pair_structures_are_current():
    """policy_pair_chains.npy equals a fresh enumeration of every shipped structure
    (regenerate with models._policy_node.write_pair_structures after changing the chain)."""
    path = Path(pn.__file__).parent / "_generated" / pn._PAIR_DATA
    fresh = pn.pair_structure_arrays()
    shipped = pn._read_pair_file(path)
    assert sorted(shipped) == sorted(fresh), \
        "policy_pair_chains.npy is stale: run models._policy_node.write_pair_structures()"
    for name, a in fresh.items():
        b = shipped[name]
        assert b.dtype == a.dtype and np.array_equal(b, a), f"{name} is stale"


def test_pair_structures_file_round_trip(tmp_path):
    """write_pair_structures writes what _read_pair_file reads back, array for array."""
    path = pn.write_pair_structures(str(tmp_path / "pairs.npy"))
    got = pn._read_pair_file(path)
    fresh = pn.pair_structure_arrays()
    assert sorted(got) == sorted(fresh)
    for name, a in fresh.items():
        assert got[name].dtype == a.dtype and got[name].shape == a.shape
        assert np.array_equal(got[name], a), name


@pytest.mark.parametrize("fixed,cs2", pn.PAIR_SHIPPED)
def test_shipped_pair_structure_is_used_and_solves_like_the_enumeration(fixed, cs2,
                                                                        monkeypatch):
    """A shipped structure is read, not enumerated, and gives the reference's results."""
    pol = "fixed" if fixed else "single"
    rng = np.random.default_rng(int(fixed) + int(10 * cs2))
    pts = [_point(pol, p=2, U=float(rng.uniform(0.05, 0.9)), L=float(rng.uniform(5, 500)),
                  o_reply=float(rng.uniform(20, 2000)), handler_cs2=cs2,
                  # exponential handlers need no fixed overheads on top (Single's direct
                  # and indirect costs, the interrupt)
                  **({} if cs2 == 0.0 or fixed else dict(o_direct=0.0, o_indirect=0.0,
                                                         O_int=0.0)))
           for _ in range(2)]
    ref = [pn.solve_point(v, pol) for v in pts]
    monkeypatch.setattr(pn, "_PAIR_CACHE", {})

    def refuse(key):
        raise AssertionError(f"shipped structure enumerated: {key[:4]}")

    monkeypatch.setattr(pn, "_pair_structure_ref", refuse)
    got = [pn.solve_point(v, pol) for v in pts]
    for a, b in zip(ref, got):
        _same(a, b)
        assert a["it"] == 1 and a["asym"] < 1e-9       # the two-node chain was solved


@settings(max_examples=30, deadline=None)
@given(st.fixed_dictionaries({
    "U": st.floats(0.02, 0.95), "O_int": st.floats(0.0, 5000.0),
    "o_reply": st.floats(20.0, 2000.0), "o_dispatch": st.floats(0.0, 100.0),
    "L": st.one_of(st.just(0.0), st.floats(1.0, 2000.0)),
    "handler_cs2": st.sampled_from([0.0, 0.05, 0.3, 1.0, 4.0])}),
    st.sampled_from(["fixed", "single", "floating"]))
def test_pair_chain_equals_the_enumerating_reference(kw, pol):
    """Any structure (shipped, enumerated now, or cached from an earlier call; with and
    without network time): bit for bit the enumerating reference's results."""
    if kw["L"] == 0.0:
        kw = dict(kw, t_transfer=0.0)
    v = _point(pol, p=2 if pol == "fixed" else 1, **kw)
    got = _pair_against_reference(v, pol)
    # Little's law, and the utilization law at node A (with and without network time)
    assert got["X"] * got["R"] == pytest.approx(1.0, rel=1e-12)
    assert got["U"] == pytest.approx(got["X"] * got["D"], rel=1e-7, abs=1e-12)


@settings(max_examples=20, deadline=None)
@given(U=st.floats(0.05, 0.95), O_int=st.floats(1.0, 5000.0),
       o_reply=st.floats(20.0, 2000.0), handler_cs2=st.sampled_from([0.0, 0.3, 1.0]),
       pol=st.sampled_from(["single", "floating"]))
def test_pair_chain_counts_interrupts_without_network_time(U, O_int, o_reply, handler_cs2,
                                                           pol):
    """With no network time (L = t_extra = t_transfer = 0) a request goes straight into
    the other node's queue; one that finds the compute thread running interrupts it:
    P_int > 0, the interrupt cost is in the demand, and utilization = throughput x
    demand at node A (both the shipped/cached path and the enumerating reference)."""
    v = _point(pol, p=1, U=U, O_int=O_int, o_reply=o_reply, handler_cs2=handler_cs2,
               L=0.0, t_transfer=0.0, t_extra=0.0)
    got = _pair_against_reference(v, pol)
    assert 0.0 < got["P_int"] <= 1.0
    assert got["U"] == pytest.approx(got["X"] * got["D"], rel=1e-7)
    # the interrupt's cost is part of the demand: less demand with O_int = 0
    cheap = pn.solve_point(dict(v, O_int=0.0), pol)
    assert cheap["U"] == pytest.approx(cheap["X"] * cheap["D"], rel=1e-7)
    assert got["D"] > cheap["D"]


def test_pair_structure_cache_is_bounded(monkeypatch):
    monkeypatch.setattr(pn, "_PAIR_CACHE", {})
    for cs2 in (0.02, 0.05, 0.08, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.7, 1.5):
        pn.solve_point(_point("fixed", p=2, handler_cs2=cs2, L=50.0), "fixed")
    assert len(pn._PAIR_CACHE) <= pn._PAIR_CACHE_SIZE + 2


@pytest.mark.parametrize("pol", ["fixed", "floating"])
def test_network_grid_equals_points_solved_alone(pol):
    """Most threads first, smaller populations read from the kept lattice: the grid's
    values are those of each point solved alone with an empty lattice cache."""
    import mva.exact as E

    prm = preset("null-handler", U=0.3, p=np.arange(2, 9))
    E._LATTICES.clear()
    grid = policy.solve(prm, pol, method="exact")
    for i, p in enumerate(range(2, 9)):
        E._LATTICES.clear()
        one = policy.solve(preset("null-handler", U=0.3, p=p), pol, method="exact")
        for f in ("cycle_time", "throughput", "interrupt_probability", "R_reply",
                  "pp_utilization"):
            assert np.array_equal(np.asarray(getattr(grid, f))[i], getattr(one, f)), (p, f)


def test_policy_cost_default_is_unchanged_and_cost_effective():
    """The benchmarked call: Fixed wins at the null-handler preset (000, Figure 5) and
    speedups never exceed the processor count."""
    r = policy_cost(preset("null-handler", U=0.3))
    assert r.most_cost_effective_policy == "fixed"
    for name, c in r.policies.items():
        assert np.all(np.asarray(c.speedup) <= np.asarray(c.p) + 1e-12), name
        assert np.all(np.asarray(c.throughput) > 0), name
