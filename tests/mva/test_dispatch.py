"""``mva.solve`` by name, results dataclass, and the lazy public namespace."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

import mva
from mva.network import ClosedNetwork

NET = ClosedNetwork(demands=[[1.0, 2.0, 0.5], [2.0, 1.0, 0.7]], populations=[3, 2],
                    think_times=[1.0, 0.0], station_names=("cpu", "d1", "d2"),
                    class_names=("a", "b"))


@pytest.mark.parametrize("method", sorted(mva.METHODS))
def test_every_method_solves(method):
    res = mva.solve(NET, method=method)
    assert isinstance(res, mva.MVAResult)
    assert res.throughput.shape == (2,) and res.queue_length.shape == (2, 3)
    assert res.converged


def test_methods_match_their_functions():
    assert mva.solve(NET).method == "exact"
    np.testing.assert_allclose(mva.solve(NET, method="schweitzer", tol=1e-12).throughput,
                               mva.schweitzer(NET, tol=1e-12).throughput)
    np.testing.assert_allclose(mva.solve(NET, method="linearizer", passes=3).throughput,
                               mva.linearizer(NET, passes=3).throughput)
    assert mva.solve(NET, method="auto").method == "exact"
    conv = mva.solve(NET, method="convolution")
    assert conv.method == "convolution"
    np.testing.assert_allclose(conv.queue_length, mva.solve(NET).queue_length, rtol=1e-12)
    assert mva.solve(NET, method="auto", auto_limit=2).method == "linearizer"


def test_unknown_method_and_keyword():
    with pytest.raises(ValueError, match=r"method must be one of 'exact', .*'rolia'.*; got 'mvaa'"):
        mva.solve(NET, method="mvaa")
    with pytest.raises(ValueError, match=r"unknown keyword argument\(s\) 'tolerance'; allowed: "
                                         r"max_iter, multiserver, on_fail, tol"):
        mva.solve(NET, method="schweitzer", tolerance=1e-3)
    with pytest.raises(ValueError, match="network must be a ClosedNetwork, OpenNetwork or "
                                         "MixedNetwork; got dict"):
        mva.solve({"demands": [1.0]})
    with pytest.raises(ValueError, match="network must be a ClosedNetwork; got list"):
        mva.exact_mva([1.0])
    with pytest.raises(ValueError,
                       match=r"base must be one of 'exact', 'schweitzer', 'linearizer'"):
        mva.seidmann(NET, base="magic")
    with pytest.raises(ValueError, match=r"unknown keyword argument\(s\) 'tol'"):
        mva.seidmann(NET, tol=1e-3)


def test_result_to_dict_and_frame():
    res = mva.solve(NET)
    d = res.to_dict()
    json.dumps(d)
    assert d["method"] == "exact" and d["station_names"] == ["cpu", "d1", "d2"]
    assert len(d["residence_time"]) == 2
    np.testing.assert_allclose(res.station_queue_length, res.queue_length.sum(axis=0))
    pytest.importorskip("pandas")
    df = res.to_frame()
    assert list(df.columns) == ["class", "station", "throughput", "response_time", "residence_time",
                                "queue_length", "utilization"]
    assert len(df) == 6 and set(df["station"]) == {"cpu", "d1", "d2"}
    np.testing.assert_allclose(df["queue_length"].to_numpy(), res.queue_length.ravel())
    assert "exact" in repr(res)


def test_public_names_are_exported_lazily():
    for name in ("ClosedNetwork", "MVAResult", "solve", "exact_mva", "schweitzer", "linearizer",
                 "seidmann", "rolia", "bkt_residence", "mm1", "mmc", "mg1", "visit_ratios",
                 "aba_bounds", "balanced_job_bounds", "Bounds", "OpenQueueResult", "OpenNetwork",
                 "solve_open", "erlang_c", "seidmann_transform", "lattice_size", "METHODS",
                 "convolution", "normalizing_constant", "marginal_probabilities", "mm1k", "mmck",
                 "mminf", "erlang_b", "engset", "FiniteQueueResult", "MixedNetwork", "MixedResult",
                 "solve_mixed"):
        assert name in mva.__all__ and getattr(mva, name) is not None
    # importing the package loads none of the solver modules
    code = ("import sys, mva; print(sorted(m for m in sys.modules if m.startswith('mva.')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    loaded = out.stdout
    for mod in ("mva.exact", "mva.approx", "mva.network", "mva.open"):
        assert mod not in loaded


def test_function_names_are_not_shadowed_by_submodules():
    # importing a submodule sets it as a package attribute: no export may share a module's name
    import importlib
    for name, module in mva._EXPORTS.items():
        importlib.import_module(f"mva.{module}")
        assert name != module, name
    assert callable(mva.convolution) and callable(mva.solve_mixed)
