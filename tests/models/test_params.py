"""Every public parameter dataclass of :mod:`models` is declared with :mod:`mva.params`."""

from __future__ import annotations

import dataclasses
import importlib

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import models
from mva.params import declarations, design
from mva.results import ResultMixin
from tests.strategies import (PARAMETER_CLASSES, invalid_values, parameter_class,
                              parameter_objects, valid_values)

#: public dataclasses that are rows of a paper's table, not parameters
DATA_ROWS = {"models.mechanisms:Machine", "models.mechanisms:MissPenalty"}

#: the validity domains the issues (#15, #16, #17) fix
ISSUE_DOMAINS = {
    "models.policy:PolicyParams": {"p": (1, 16), "nodes": (2, 64), "U": (0.02, 0.95),
                                   "O_int": (0, 20000), "o_req": (20, 2000),
                                   "o_reply": (20, 2000), "o_resp": (20, 2000),
                                   "o_direct": (0, 500), "o_indirect": (0, 500),
                                   "t_transfer": (0, 1000), "L": (10, 2000),
                                   "handler_cs2": (0, 4)},
    "models.pdq:PDQParams": {"k": (1, 16), "n_keys": (1, 4096), "key_skew": (0, 1.5),
                             "f_sequential": (0, 0.2), "f_nosync": (0, 0.5), "cs2": (0, 10)},
    "models.lopc:LoPCParams": {"P": (2, 1024), "W": (0, 1e5), "o": (1, 5000), "L": (0, 5000),
                               "cs2": (0, 10)},
    "models.ini:INIParams": {"N": (1, 32), "K": (1, 8), "clusters": (2, 64), "W": (0, 1e6),
                             "o": (1, 5000), "O": (1, 10000), "l": (0, 10000), "L": (0, 10000),
                             "cs2_o": (0, 10), "cs2_O": (0, 10)},
}


def _public_dataclasses():
    for m in models._SUBMODULES:
        mod = importlib.import_module(f"models.{m}")
        for name in mod.__all__:
            obj = getattr(mod, name)
            if isinstance(obj, type) and dataclasses.is_dataclass(obj) \
                    and not issubclass(obj, ResultMixin):
                yield f"models.{m}:{name}", obj


def test_every_public_parameter_dataclass_is_listed():
    found = {k for k, _ in _public_dataclasses()} - DATA_ROWS
    assert found == set(PARAMETER_CLASSES)


@pytest.mark.parametrize("spec", PARAMETER_CLASSES)
def test_every_field_is_declared_with_unit_meaning_and_domain(spec):
    cls = parameter_class(spec)
    decl = declarations(cls)
    assert [f.name for f in dataclasses.fields(cls)] == list(decl)
    for name, p in decl.items():
        assert p.meaning and p.symbol, name
        assert isinstance(p.unit, str), name
        assert p.allowed(), name
        if p.kind in ("real", "int"):
            # numeric: a legal lower bound, and a validity range inside the legal domain
            assert p.low is not None, name
            if p.valid is not None:
                lo, hi = p.valid
                p.check(lo)
                p.check(hi)
        if p.has_default and p.default is not None:
            p.check(p.default)
        if p.example is not None:
            p.check(p.example)


@pytest.mark.parametrize("spec", sorted(ISSUE_DOMAINS))
def test_validity_domains_are_those_of_the_issues(spec):
    decl = declarations(parameter_class(spec))
    for name, rng in ISSUE_DOMAINS[spec].items():
        assert decl[name].valid == rng, name


@pytest.mark.parametrize("spec", PARAMETER_CLASSES)
@pytest.mark.parametrize("method", ["sobol", "lhs"])
def test_designs_build_valid_parameter_objects(spec, method):
    cls = parameter_class(spec)
    fixed = {"load": None} if spec.endswith("PDQParams") else None
    d = design(cls, 32, seed=3, method=method, fixed=fixed)
    for name, values in d.items():
        p = declarations(cls)[name]
        if p.valid is None or values is None:
            continue
        lo, hi = p.valid
        assert np.all((values >= lo) & (values <= hi)), name
        if p.kind == "int" or p.integral:
            assert np.all(values == np.round(values)), name
    objs = design(cls, 8, seed=3, method=method, output="list")
    assert len(objs) == 8 and all(isinstance(o, cls) for o in objs)


def test_design_is_reproducible_and_seed_dependent():
    from models.lopc import LoPCParams
    a = design(LoPCParams, 16, seed=7)
    b = design(LoPCParams, 16, seed=7)
    c = design(LoPCParams, 16, seed=8)
    assert all(np.array_equal(a[k], b[k]) for k in a)
    assert not np.array_equal(a["W"], c["W"])


def test_log_scale_design_spreads_over_decades():
    from models.lopc import LoPCParams
    d = design(LoPCParams, 256, seed=0, vary=["P"])
    # P is log-scale over 2..1024: about half the points below sqrt(2 * 1024) = 45
    frac = float(np.mean(d["P"] <= 45))
    assert 0.35 < frac < 0.65
    assert d["P"].min() >= 2 and d["P"].max() <= 1024


_FIELDS = [(spec, name) for spec in PARAMETER_CLASSES
           for name, p in declarations(parameter_class(spec)).items()]


@pytest.mark.parametrize("spec,name", _FIELDS)
@settings(max_examples=15, deadline=None)
@given(data=st.data())
def test_invalid_values_are_rejected_naming_the_parameter(spec, name, data):
    cls = parameter_class(spec)
    p = declarations(cls)[name]
    bad = data.draw(invalid_values(p))
    with pytest.raises(ValueError, match=name):
        p.check(bad)


@pytest.mark.parametrize("spec,name", [(s, n) for s, n in _FIELDS
                                       if declarations(parameter_class(s))[n].valid is not None
                                       or declarations(parameter_class(s))[n].kind
                                       in ("bool", "choice")])
@settings(max_examples=15, deadline=None)
@given(data=st.data())
def test_valid_values_are_accepted(spec, name, data):
    p = declarations(parameter_class(spec))[name]
    value = data.draw(valid_values(p))
    out = p.check(value)
    if p.kind in ("real", "int"):
        assert np.all(np.asarray(out) == value)


@settings(max_examples=40, deadline=None)
@given(prm=parameter_objects(parameter_class("models.lopc:LoPCParams")))
def test_lopc_over_its_declared_domain_satisfies_the_invariants(prm):
    """Random points of the validity domain: R at least the contention-free round trip,
    utilizations in [0, 1], Little's law for the handler queues."""
    from models.lopc import solve
    r = solve(prm, method="lopc")
    assert r.R >= prm.contention_free * (1 - 1e-9)
    assert 0.0 <= r.U_q <= 1.0 and 0.0 <= r.U_y <= 1.0
    assert r.round_trip == pytest.approx(r.R - r.R_w)
    assert r.cycle_time == r.R
    # Little's law at a processor: requests queued there = arrival rate x residence
    assert r.Q_q == pytest.approx(r.lam * r.R_q, rel=1e-6, abs=1e-12)
