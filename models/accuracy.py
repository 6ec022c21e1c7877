"""How far to trust a model answer: the shipped accuracy map over the declared domain.

The map (``models/data/accuracy_map.json``, written by
``python -m validation.domain map``) holds, per family (``lopc``, ``ini``,
``policy``, ``pdq``), variant (the policy, the PDQ discipline; ``""`` for
LoPC and INI), method and measure, the distribution of the relative error
:math:`e = (m - s)/s` of the model against the simulator over a scrambled
Sobol design of the family's declared validity domain: overall and binned
over the two axes that drive the error (:func:`axis_values`).

:func:`expected_error` gives, per point, a 95% prediction bound of
:math:`|e|` in the point's bin: an error the method exceeds at no more than
5% of points drawn like the bin's design points (the method's overall bound
for a point outside every bin; a bin too sparse to bound itself pools with
its axis-1 slice, see :func:`validation.domain._bound`);
:func:`target_met` compares it with the issue target of the measure
(:data:`TARGETS`, the ``p95`` bound).  Every result of
:func:`models.lopc.solve`, :func:`models.ini.solve`,
:func:`models.policy.solve` and :func:`models.pdq.solve` carries these
figures lazily as ``<measure>_expected_error`` (for instance
``R_expected_error``) and warns (:class:`AccuracyWarning`, once per call)
when a point lies where the method misses its target, naming the method
the map says is more accurate there.

The lookups read ``models/data/accuracy_bounds.json`` (:func:`bounds_path`),
the map restricted to what they need (:func:`lookup_tables`), written beside
the map by the same command: a what-if command parses a few tens of kilobytes,
not the whole map.

Measures use the simulator's names (:data:`validation.compare.MEASURES`):
``R`` is the LoPC / INI round trip, the policy ``cycle_time`` and the PDQ
``response_time``; ``R_req`` the policy ``R_request``; ``N`` the PDQ
``mean_in_system``.

Map schema (version 2)::

    {"version": 2, "generated": ISO time, "git_commit": str, "seed": int,
     "min_bin": int, "commands": {"simulate": str, "map": str},
     "families": {family: {
        "points": int, "seed": int, "runs": int, "saturated": int, "sim_failed": int,
        "rel_hw": {"median", "max", "at_target", "target"},
        "axes": [{"name", "description", "scale", "edges": [float | null(=inf)]}] * 2,
        "measures": [str], "targets": {measure: {"mean", "p95", "max"}},
        "variants": {variant: {"points": int, "methods": {method: {
            "failed": int,
            "saturation": {"points", "both", "model_only", "sim_only", "agree"},
                          (policy and PDQ only)
            "measures": {measure: {
                "overall": {"n", "mean", "p50", "p95", "max", "bias", "beyond",
                            "mean_beyond", "p95_beyond", "bound"},
                "bins": {"n" | "mean" | "p95" | "max" | "beyond" | "bound":
                         [[...] per axis-2 bin] per axis-1 bin,
                         "bound_axis1": [...] per axis-1 bin},
                "worst": [{"error", "model", "sim", "half_width", "point"}],
                "left_out": int}}}}}}},
        "winners": {method: {"fixed/floating" | "fixed/single": {
            "points", "separated", "correct", "agree_all", "wrong": [...]}}}
                   (policy only; see validation.domain.winner_agreement)
        }}}

``p95`` is the sample 95th percentile (reported; ``null`` in bins of fewer
than ``min_bin`` points), ``bound`` the prediction bound the lookups use.
``saturation`` compares the model's saturation flag with the simulator's
(PDQ: no steady state; policy: protocol processor at least 95% busy) at
every design point, the simulator's saturated points included.
``beyond`` counts errors larger than the simulation's 95% half-width and
``*_beyond`` summarise :math:`\\max(|m - s| - h, 0)/s`, the part of the
error the simulation interval cannot explain.

Examples
--------
>>> import numpy as np
>>> tiny = {"version": 2, "min_bin": 1, "families": {"pdq": {
...     "axes": [{"name": "load", "edges": [0, 0.5, 1]},
...              {"name": "keys_per_pp", "edges": [0, 4, None]}],
...     "targets": {"R": {"mean": 0.03, "p95": 0.08, "max": 0.15}},
...     "variants": {"shared": {"methods": {"keyed": {"measures": {"R": {
...         "overall": {"bound": 0.2},
...         "bins": {"bound": [[0.3, 0.01], [None, 0.05]]}}}}}}}}}}
>>> expected_error("pdq", "keyed", "R", variant="shared", load=[0.2, 0.2, 0.7, 0.7, 2.0],
...                keys_per_pp=[1, 64, 1, 64, 1], accuracy_map=tiny)
array([0.3 , 0.01, 0.2 , 0.05, 0.2 ])
"""

from __future__ import annotations

import json
import os
import threading
import warnings
from typing import Any, Mapping

import numpy as np

__all__ = ["TARGETS", "meets", "target_text", "AccuracyWarning", "load_map", "expected_error",
           "target_met",
           "axis_values", "best_method", "attach", "map_path", "bounds_path", "lookup_tables",
           "summary", "winners"]

#: the issue targets per family and measure (fractions of |relative error|; ``None``
#: where the issue bounds only the mean): LoPC and INI (issue 17) the round trip ``R``
#: and the component residences and queue lengths (mean 3%, maximum 10%; the p95 taken
#: as the maximum), the policies (issue 15) the cycle time ``R`` (the execution time
#: for a fixed work is proportional to it) and, by the mean only, the interrupts per
#: request ``P_int`` and the protocol-processor utilization ``U_pp`` (``R_req``: the
#: request handler's residence, a component), PDQ (issue 16) the response time ``R`` and
#: ``N`` and, by the mean only, the utilization ``U``.  The region target of
#: :func:`target_met` is the ``p95`` bound.
_COMPONENT = {"mean": 0.03, "p95": 0.10, "max": 0.10}
TARGETS: dict[str, dict[str, dict[str, float | None]]] = {
    "lopc": {"R": {"mean": 0.01, "p95": 0.03, "max": 0.05},
             "R_q": dict(_COMPONENT), "R_y": dict(_COMPONENT), "Q_h": dict(_COMPONENT)},
    "ini": {"R": {"mean": 0.01, "p95": 0.03, "max": 0.05},
            "R_o": dict(_COMPONENT), "R_q": dict(_COMPONENT), "R_y": dict(_COMPONENT),
            "Q_o": dict(_COMPONENT), "Q_h": dict(_COMPONENT)},
    "policy": {"R": {"mean": 0.02, "p95": 0.05, "max": 0.10},
               "R_req": {"mean": 0.05, "p95": 0.10, "max": 0.20},
               "P_int": {"mean": 0.05, "p95": None, "max": None},
               "U_pp": {"mean": 0.05, "p95": None, "max": None}},
    "pdq": {"R": {"mean": 0.03, "p95": 0.08, "max": 0.15},
            "N": {"mean": 0.03, "p95": 0.08, "max": 0.15},
            "U": {"mean": 0.03, "p95": None, "max": None}},
}


def meets(stats: Mapping[str, Any], target: Mapping[str, Any] | None) -> bool:
    """Whether summary ``stats`` (``n``, ``mean``, ``p95``, ``max``) meet ``target``.

    A bound of ``None`` is not set by the issue and always holds; no points
    never meet a target.

    >>> meets({"n": 9, "mean": 0.02, "p95": 0.2, "max": 0.5}, {"mean": 0.03, "p95": None,
    ...                                                       "max": None})
    True
    >>> meets({"n": 9, "mean": 0.02, "p95": 0.2, "max": 0.5}, TARGETS["pdq"]["R"])
    False
    """
    if target is None or not stats.get("n"):
        return False
    return all(target[s] is None or (stats.get(s) is not None and stats[s] <= target[s])
               for s in ("mean", "p95", "max"))


def target_text(target: Mapping[str, Any] | None) -> str:
    """``"3/8/15"``: a target's mean / p95 / max in percent (``-`` where not set).

    >>> target_text(TARGETS["pdq"]["U"]), target_text(None)
    ('3/-/-', '-')
    """
    if target is None:
        return "-"
    return "/".join("-" if target[s] is None else f"{100 * target[s]:g}"
                    for s in ("mean", "p95", "max"))


_FAMILIES = tuple(TARGETS)

#: the map schema this module reads (``validation.domain`` writes it)
MAP_VERSION = 2

#: fewest design points a method must have answered to be named as more accurate
MIN_SUGGEST = 30


class AccuracyWarning(UserWarning):
    """A point lies where the accuracy map says the method misses its target."""


def map_path() -> str:
    """The path of the shipped map, ``models/data/accuracy_map.json``."""
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), "data", "accuracy_map.json")


def bounds_path() -> str:
    """The path of the shipped lookup tables, ``models/data/accuracy_bounds.json``.

    Written beside the map by the same command (:func:`lookup_tables` of the
    map): what :func:`expected_error` and the results read, about a tenth of
    the map, so that a one-point what-if command parses only that.
    """
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), "data",
                        "accuracy_bounds.json")


_LOCK = threading.Lock()
_CACHE: dict[str, Any] = {}


def _read(p: str) -> dict[str, Any]:
    with _LOCK:
        m = _CACHE.get(p)
        if m is None:
            if os.path.exists(p):
                with open(p) as f:
                    m = json.load(f)
                if int(m.get("version", 0)) != MAP_VERSION:
                    raise ValueError(f"{p}: accuracy map version {m.get('version')!r} is not "
                                     f"supported (expected {MAP_VERSION}; rebuild it with "
                                     "python -m validation.domain map)")
            else:
                m = {"version": MAP_VERSION, "families": {}}
            m["_tables"] = {}
            _CACHE[p] = m
    return m


def load_map(path: str | None = None) -> dict[str, Any]:
    """The accuracy map (read once and cached per path; ``{}`` families when none is shipped)."""
    return _read(path or map_path())


def _lookup_map() -> dict[str, Any]:
    """The shipped lookup tables (cached); the map's projection if they are missing."""
    p = bounds_path()
    with _LOCK:
        m = _CACHE.get(p)
    if m is not None:
        return m
    if os.path.exists(p):
        return _read(p)
    m = dict(lookup_tables(load_map()), _tables={})
    with _LOCK:
        return _CACHE.setdefault(p, m)


def lookup_tables(m: Mapping[str, Any]) -> dict[str, Any]:
    """The part of a map the lookups read: per family its axes, per entry the bounds.

    Same schema as the map, restricted to ``axes`` and, per variant, method
    and measure, ``overall: {"n", "bound"}`` and ``bins: {"bound",
    "bound_axis1"}``.

    >>> tiny = {"version": 2, "generated": "now", "families": {"pdq": {"points": 4,
    ...     "axes": [{"name": "load", "edges": [0, 1]}], "variants": {"shared": {
    ...     "points": 4, "methods": {"keyed": {"failed": 0, "measures": {"R": {
    ...     "overall": {"n": 4, "p95": 0.1, "bound": 0.2},
    ...     "bins": {"p95": [[0.1]], "bound": [[0.2]], "bound_axis1": [0.2]}}}}}}}}}}
    >>> lookup_tables(tiny)["families"]["pdq"]["variants"]["shared"]["methods"]["keyed"]
    {'measures': {'R': {'overall': {'n': 4, 'bound': 0.2}, 'bins': {'bound': [[0.2]], 'bound_axis1': [0.2]}}}}
    """
    fams = {}
    for fam, fd in m.get("families", {}).items():
        variants = {}
        for variant, vd in fd["variants"].items():
            methods = {}
            for method, md in vd["methods"].items():
                methods[method] = {"measures": {
                    meas: {"overall": {k: d["overall"][k] for k in ("n", "bound")},
                           "bins": {k: d["bins"][k] for k in ("bound", "bound_axis1")}}
                    for meas, d in md["measures"].items()}}
            variants[variant] = {"methods": methods}
        fams[fam] = {"axes": fd["axes"], "variants": variants}
    return {"version": m.get("version", MAP_VERSION), "generated": m.get("generated"),
            "families": fams}


def axis_values(family: str, values: Mapping[str, Any]) -> tuple[np.ndarray, np.ndarray]:
    """The two binning axes of ``family`` from inputs (and model outputs).

    ======== ================================ =======================================
    family   axis 1                           axis 2
    ======== ================================ =======================================
    lopc     ``U_h`` = ``U_q + U_y`` (model)  ``cs2`` (handler)
    ini      ``U_o`` INI utilization (model)  ``cs2_O`` (INI occupancy)
    policy   ``U`` compute fraction           ``O_int / mean(o_req, o_reply, o_resp)``
    pdq      ``load`` per processor           ``n_keys / k``
    ======== ================================ =======================================

    Values already holding the axis names (``U_h``, ``O_int_ratio``,
    ``keys_per_pp`` ...) are used as given.

    Examples
    --------
    >>> [float(a) for a in axis_values("pdq", {"load": 0.5, "n_keys": 64, "k": 4})]
    [0.5, 16.0]
    """
    def a(name: str) -> np.ndarray:
        if name not in values:
            raise ValueError(f"accuracy lookup for {family}: needs {name!r}; got "
                             f"{', '.join(sorted(values)) or 'nothing'}")
        return np.asarray(values[name], dtype=float)

    if family == "lopc":
        u = a("U_h") if "U_h" in values else a("U_q") + a("U_y")
        return u, a("cs2")
    if family == "ini":
        return a("U_o"), a("cs2_O")
    if family == "policy":
        if "O_int_ratio" in values:
            return a("U"), a("O_int_ratio")
        return a("U"), a("O_int") / ((a("o_req") + a("o_reply") + a("o_resp")) / 3.0)
    if family == "pdq":
        if "keys_per_pp" in values:
            return a("load"), a("keys_per_pp")
        return a("load"), a("n_keys") / a("k")
    raise ValueError(f"family must be one of {', '.join(_FAMILIES)}; got {family!r}")


def _entry(m: Mapping[str, Any], family: str, variant: str, method: str,
           measure: str) -> dict[str, Any]:
    fams = m.get("families", {})
    if family not in fams:
        raise ValueError(f"the accuracy map has no family {family!r}; it has "
                         f"{', '.join(fams) or 'none'}")
    vs = fams[family]["variants"]
    if variant not in vs:
        raise ValueError(f"the accuracy map of {family} has no variant {variant!r}; it has "
                         f"{', '.join(map(repr, vs))}")
    ms = vs[variant]["methods"]
    if method not in ms:
        raise ValueError(f"the accuracy map of {family} {variant} has no method {method!r}; "
                         f"it has {', '.join(ms)}")
    meas = ms[method]["measures"]
    if measure not in meas:
        raise ValueError(f"the accuracy map of {family} has no measure {measure!r}; it has "
                         f"{', '.join(meas)}")
    return meas[measure]


def _table(m: dict[str, Any], family: str, variant: str, method: str,
           measure: str) -> tuple[np.ndarray, np.ndarray, np.ndarray, float]:
    """Edges of both axes, the bound grid (NaN: use the overall) and the overall bound (cached)."""
    key = (family, variant, method, measure)
    tabs = m.setdefault("_tables", {})
    t = tabs.get(key)
    if t is None:
        e = _entry(m, family, variant, method, measure)
        axes = m["families"][family]["axes"]
        edges = [np.array([np.inf if v is None else v for v in ax["edges"]], dtype=float)
                 for ax in axes]
        grid = np.array([[np.nan if v is None else v for v in row]
                         for row in e["bins"]["bound"]], dtype=float)
        overall = e["overall"]["bound"]
        overall = np.nan if overall is None else float(overall)
        marginal = e["bins"].get("bound_axis1")
        if marginal is not None:  # an empty bin falls back on its axis-1 slice, then the overall
            col = np.array([np.nan if v is None else v for v in marginal], dtype=float)
            grid = np.where(np.isnan(grid), col[:, None], grid)
        t = (edges[0], edges[1], grid, overall)
        tabs[key] = t
    return t


def _bins(v: np.ndarray, edges: np.ndarray) -> np.ndarray:
    k = np.searchsorted(edges, v, side="right") - 1
    k = np.where(v == edges[-1], len(edges) - 2, k)
    return np.where((v < edges[0]) | (v > edges[-1]) | np.isnan(v), -1, k)


def expected_error(family: str, method: str, measure: str = "R", *, variant: str = "",
                   accuracy_map: Mapping[str, Any] | None = None, **values: Any) -> np.ndarray:
    r"""The map's 95% prediction bound of |relative error| of ``method`` at each point.

    Parameters
    ----------
    family : {"lopc", "ini", "policy", "pdq"}
    method : str
        A method of the family's ``solve`` present in the map.
    measure : str
        A measure of the map (default ``"R"``).
    variant : str
        The policy (``"fixed"``, ``"floating"``, ``"single"``) or the PDQ
        discipline; ``""`` for LoPC and INI.
    accuracy_map : mapping, optional
        A map to use instead of the shipped one.
    **values
        The axis quantities (see :func:`axis_values`): arrays broadcast together.

    Returns
    -------
    numpy.ndarray
        One figure per point (fractions: 0.03 is 3%); NaN when the method has
        no figure at all.

    Notes
    -----
    With bin edges :math:`a_0 < \dots < a_n` per axis the bin of a value
    :math:`v` is found by :func:`numpy.searchsorted` (right-open bins, the
    last one closed); a point outside every bin gets the method's overall
    bound; an empty bin falls back on its axis-1 slice (``bound_axis1``),
    then on the overall figure.  A bin of :math:`n` design points with
    sorted errors :math:`X_{(1)} \le \dots \le X_{(n)}` has the bound
    :math:`X_{(r)}`, :math:`r = \lceil 0.95 (n + 1) \rceil`, exceeded by a
    new point of the bin with probability at most 0.05; with fewer than 19
    points (:math:`r > n`) it is :math:`\max(X_{(n)}, b_{slice})`.
    """
    m = dict(accuracy_map) if accuracy_map is not None else _lookup_map()
    if accuracy_map is not None:
        m.setdefault("_tables", {})
    if family not in _FAMILIES:
        raise ValueError(f"family must be one of {', '.join(_FAMILIES)}; got {family!r}")
    e1, e2, grid, overall = _table(m, family, variant, method, measure)
    a1, a2 = axis_values(family, values)
    a1, a2 = np.broadcast_arrays(a1, a2)
    i, j = _bins(a1, e1), _bins(a2, e2)
    inside = (i >= 0) & (j >= 0)
    out = np.full(a1.shape, overall)
    if inside.any():
        g = grid[i[inside], j[inside]]
        out[inside] = np.where(np.isnan(g), overall, g)
    return out


def target_met(family: str, method: str, measure: str = "R", *, variant: str = "",
               accuracy_map: Mapping[str, Any] | None = None, **values: Any) -> np.ndarray:
    """Whether the map's expected error at each point is within the measure's p95 target.

    Examples
    --------
    >>> tiny = {"version": 2, "families": {"pdq": {
    ...     "axes": [{"name": "load", "edges": [0, 1]}, {"name": "k", "edges": [0, None]}],
    ...     "variants": {"shared": {"methods": {"keyed": {"measures": {"R": {
    ...         "overall": {"bound": 0.05}, "bins": {"bound": [[0.2]]}}}}}}}}}}
    >>> target_met("pdq", "keyed", variant="shared", load=[0.5, 3.0], keys_per_pp=8,
    ...            accuracy_map=tiny)
    array([False,  True])
    """
    bound = TARGETS[family][measure]["p95"]
    if bound is None:
        raise ValueError(f"the {family} target of {measure!r} bounds only the mean error: "
                         "there is no region target to compare a point's bound with")
    e = expected_error(family, method, measure, variant=variant, accuracy_map=accuracy_map,
                       **values)
    return e <= bound


def best_method(family: str, measure: str = "R", *, variant: str = "",
                accuracy_map: Mapping[str, Any] | None = None, min_points: int = 0,
                **values: Any) -> tuple[np.ndarray, np.ndarray]:
    """Per point, the method of the map with the smallest expected error, and that error.

    Methods that answered fewer than ``min_points`` design points (a figure
    resting on a handful of points) are not considered.
    """
    m = dict(accuracy_map) if accuracy_map is not None else _lookup_map()
    ms = m["families"][family]["variants"][variant]["methods"]
    methods = [k for k, v in ms.items()
               if int(v["measures"][measure]["overall"].get("n", min_points)) >= min_points]
    errs = np.stack([expected_error(family, me, measure, variant=variant, accuracy_map=m,
                                    **values) for me in methods])
    errs = np.where(np.isnan(errs), np.inf, errs)
    k = np.argmin(errs, axis=0)
    return np.asarray(methods, dtype=object)[k], np.take_along_axis(errs, k[None], 0)[0]


def summary(measure: str = "R", *, families: Any = None, methods: Any = None,
            accuracy_map: Mapping[str, Any] | None = None) -> Any:
    """The map's overall figures as a :class:`mva.table.Table` (percent).

    One row per family, variant and method: points answered, mean / p95 /
    max of :math:`|e|`, bias, errors beyond the simulation interval, the
    issue target (mean / p95 / max) and whether all three are met (``-``
    where the map has no point of the measure: Fixed takes no interrupts), and
    (policy, PDQ) how often the model's saturation flag agrees with the
    simulator's, with the counts flagged by the simulator only and by the
    model only.

    Examples
    --------
    >>> t = summary(accuracy_map={"version": 1, "families": {"pdq": {"points": 4, "variants": {
    ...     "shared": {"methods": {"keyed": {"failed": 0, "measures": {"R": {"overall": {
    ...         "n": 4, "mean": 0.02, "p95": 0.05, "max": 0.1, "bias": -0.01,
    ...         "beyond": 3}}}}}}}}}})
    >>> t.columns[:4], t["met"][0]
    (('family', 'variant', 'method', 'n'), 'yes')
    """
    m = accuracy_map if accuracy_map is not None else load_map()
    from mva.table import Table

    rows = []
    for fam, fd in m.get("families", {}).items():
        if families is not None and fam not in families:
            continue
        tg = TARGETS[fam].get(measure)
        for variant, vd in fd["variants"].items():
            for method, md in vd["methods"].items():
                if methods is not None and method not in methods:
                    continue
                ov = md["measures"].get(measure, {}).get("overall")
                if ov is None:
                    continue

                def pct(x: Any) -> float:
                    return float("nan") if x is None else 100.0 * float(x)

                met = meets(ov, tg)
                rows.append({"family": fam, "variant": variant or "-", "method": method,
                             "n": int(ov["n"]), "mean_%": pct(ov["mean"]),
                             "p95_%": pct(ov["p95"]), "max_%": pct(ov["max"]),
                             "bias_%": pct(ov["bias"]), "beyond_ci": int(ov["beyond"]),
                             "target_%": target_text(tg),
                             "met": ("-" if not ov["n"] else "yes" if met else "no"),
                             "saturation": _saturation_text(md.get("saturation"))})
    cols = ["family", "variant", "method", "n", "mean_%", "p95_%", "max_%", "bias_%",
            "beyond_ci", "target_%", "met", "saturation"]
    return Table.from_records(rows, columns=cols,
                              formats={k: ".2f" for k in ("mean_%", "p95_%", "max_%", "bias_%")},
                              title=f"Accuracy map: |relative error| of {measure} over the "
                                    "declared domain")


def _saturation_text(sat: Mapping[str, Any] | None) -> str:
    """``"99.6% (2 sim, 0 model)"``: agreement and the points flagged by one side only.

    >>> _saturation_text({"points": 512, "both": 3, "model_only": 0, "sim_only": 2,
    ...                   "agree": 510 / 512}), _saturation_text(None)
    ('99.6% (2 sim, 0 model)', '-')
    """
    if not sat or not sat.get("points"):
        return "-"
    return f"{100 * sat['agree']:.1f}% ({sat['sim_only']} sim, {sat['model_only']} model)"


def winners(*, methods: Any = None, accuracy_map: Mapping[str, Any] | None = None) -> Any:
    """Which policy is faster, model against simulator, over the map's policy design.

    One row per method and policy pair (Fixed / Floating, Fixed / Single):
    the design points both policies answer, those where the simulator
    separates the pair (the 95% intervals of the execution times do not
    overlap), how many of those the model names correctly, and the share
    of all points where model and simulator name the same policy.  Built
    by :func:`validation.domain.winner_agreement` with the map.

    Examples
    --------
    >>> t = winners(accuracy_map={"families": {"policy": {"winners": {"auto": {
    ...     "fixed/floating": {"points": 10, "separated": 8, "correct": 7, "wrong": [],
    ...                        "agree_all": 0.8}}}}}})
    >>> t["separated"][0], t["correct"][0], t["wrong"][0]
    (8, 7, 1)
    """
    m = accuracy_map if accuracy_map is not None else load_map()
    from mva.table import Table

    rows = []
    for method, pairs in m.get("families", {}).get("policy", {}).get("winners", {}).items():
        if methods is not None and method not in methods:
            continue
        for pair, w in pairs.items():
            rows.append({"method": method, "pair": pair, "points": int(w["points"]),
                         "separated": int(w["separated"]), "correct": int(w["correct"]),
                         "wrong": int(w["separated"]) - int(w["correct"]),
                         "agree_all_%": float("nan") if w["agree_all"] is None
                         else 100.0 * float(w["agree_all"])})
    return Table.from_records(rows, columns=["method", "pair", "points", "separated", "correct",
                                             "wrong", "agree_all_%"],
                              formats={"agree_all_%": ".1f"},
                              title="Faster policy named by the model where the simulator "
                                    "separates the pair")


# ---------------------------------------------------------------------------
# results
# ---------------------------------------------------------------------------

_RESULT_VALUES = {"lopc": ("U_q", "U_y"), "ini": ("U_o",), "policy": (), "pdq": ()}


def _values_of(result: Any, family: str) -> dict[str, Any]:
    vals = dict(result.inputs)
    for name in _RESULT_VALUES[family]:
        vals[name] = getattr(result, name)
    return vals


def _provider(result: Any, measure: str, family: str, variant: str, method: str) -> Any:
    """``<measure>_expected_error`` of a model result (NaN where the map has no figure)."""
    shape = np.shape(np.asarray(getattr(result, "R", None) if family in ("lopc", "ini") else
                                result.cycle_time if family == "policy" else
                                result.response_time))
    try:
        e = expected_error(family, method, measure, variant=variant, **_values_of(result, family))
        e = np.broadcast_to(e, shape) if e.shape != shape else e
    except ValueError:
        e = np.full(shape, np.nan)
    return e.item() if e.ndim == 0 else np.array(e)


def _measures(family: str) -> tuple[str, ...]:
    return tuple(TARGETS[family])


def attach(result: Any, family: str, *, variant: str = "", warn: bool = True,
           method: str | None = None) -> Any:
    """Give a model result its ``<measure>_expected_error`` and warn where the target is missed.

    Called by the public ``solve`` of each family on the result it returns.
    The figures are computed only when asked for; the warning (one per call)
    costs one vectorised lookup of the main measure ``R``.  ``method`` is the
    map's method to look up: by default the one the result names, which a
    family whose ``result.method`` describes a mixture (the policies'
    ``"node-chain + exact-mva"``) overrides with the method asked for.
    """
    from functools import partial

    from mva.results import with_accuracy

    method = str(result.method) if method is None else method
    with_accuracy(result, partial(_provider, family=family, variant=variant, method=method),
                  _measures(family))
    if warn:
        try:
            _warn(result, family, variant, method)
        except (ValueError, KeyError):
            pass  # no map for this family / method: nothing to say
    return result


def _warn(result: Any, family: str, variant: str, method: str) -> None:
    m = _lookup_map()
    fam = m.get("families", {}).get(family)
    if fam is None or variant not in fam["variants"] or \
            method not in fam["variants"][variant]["methods"]:
        return
    from mva._chunks import evaluate_chunked

    vals = _values_of(result, family)
    target = TARGETS[family]["R"]["p95"]
    assert target is not None                  # (every family bounds R's p95)
    names = [a["name"] for a in fam["axes"]]
    e1, e2, _, _ = _table(m, family, variant, method, "R")
    count = {"points": 0, "missed": 0}
    # one representative point per (bin, bin) cell among the misses (the first in C
    # order): the comparison of methods costs a few lookups however large the grid
    reps: dict[int, tuple[Any, Any, float]] = {}

    def block(a1: np.ndarray, a2: np.ndarray) -> dict[str, Any]:
        # one chunk of the grid (bounded memory on large grids)
        a1, a2 = np.broadcast_arrays(a1, a2)
        point: dict[str, Any] = {names[0]: a1, names[1]: a2}
        e = np.asarray(expected_error(family, method, "R", variant=variant, **point))
        miss = e > target
        count["points"] += miss.size
        if miss.any():
            count["missed"] += int(miss.sum())
            m1, m2, me = a1[miss], a2[miss], e[miss]
            cell = _bins(m1, e1) * (len(e2) + 1) + _bins(m2, e2)
            for c, f in zip(*(x.tolist() for x in np.unique(cell, return_index=True))):
                reps.setdefault(c, (m1[f], m2[f], float(me[f])))
        return {}

    evaluate_chunked(block, axis_values(family, vals))
    if not reps:
        return
    first = [reps[c] for c in sorted(reps)]
    cells: dict[str, Any] = {names[0]: np.array([r[0] for r in first]),
                             names[1]: np.array([r[1] for r in first])}
    best, be = best_method(family, "R", variant=variant, min_points=MIN_SUGGEST, **cells)
    own = [r[2] for r in first]
    others = [(b, x) for b, x, o in zip(best, be, own) if b != method and x < o]
    where = (f"{count['missed']} of {count['points']} point(s)" if count["points"] > 1
             else "this point")
    what = (f"{family}{' ' + variant if variant else ''} method {method!r}: the accuracy map "
            f"puts the 95% bound on |error| of R at {100 * max(r[2] for r in first):.1f}% "
            f"at {where}, above the {100 * target:g}% target")
    if others:
        names = sorted({str(b) for b, _ in others})
        bx = min(float(x) for _, x in others)
        what += f"; more accurate there: {', '.join(repr(n) for n in names)} " \
                f"(down to {100 * bx:.1f}%)"
    else:
        what += "; no method of the map does better there"
    warnings.warn(what + " (see models.accuracy)", AccuracyWarning, stacklevel=4)
