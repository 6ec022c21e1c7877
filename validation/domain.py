"""Accuracy over the declared domain: simulator references and the shipped accuracy map.

Two steps, so that a model change needs no new simulation:

1. ``simulate``: a scrambled Sobol design (:func:`mva.params.design`, seed
   given) over the declared validity domain of a family's parameters is
   simulated point by point through :func:`mva.sweep` (any executor,
   resumable from its SQLite store).  Each point runs until the 95%
   half-width of the main measure (the cycle / response time ``R``) is at
   most :data:`TARGET_HW` of its mean, or :data:`MAX_CYCLES` requests; the
   half-width achieved is recorded.  The references are written as plain
   JSON to ``validation/data/domain/<family>.json`` (never pickled).
2. ``map``: every method of the model is solved at the stored points; per
   family, variant (policy / PDQ discipline), method and measure the relative
   error distribution is summarised overall and binned over the two axes that
   drive the error (:data:`AXES`), raw and "beyond the simulation interval",
   and written to ``models/data/accuracy_map.json`` (package data), read by
   :mod:`models.accuracy`.

Command line::

    python -m validation.domain simulate --family lopc --points 512 --seed 2026 --workers 2
    python -m validation.domain update --family pdq --workers 2   # only the points that moved
    python -m validation.domain map                     # every family with references

Designs
-------
* ``lopc``: every declared field (``P, W, o, L, cs2``).
* ``ini``: every declared numeric field; ``dispatch`` cycles over the three
  disciplines.
* ``policy``: every declared field; each point is simulated under the three
  policies (Fixed only when ``p >= 2``).
* ``pdq``: ``k, load, S, cs2, n_keys, key_skew, f_sequential, f_nosync``
  under four variants: the ``shared`` queue, ``partitioned`` queues, the
  ``spinlock`` discipline (plus ``o_lock``) and ``multiplexed`` processors
  (the shared queue on SMP processors that also compute, plus
  ``compute_utilization``, ``O_int`` and ``o_sched``).  The variants' own
  fields come from a second Sobol design with a seed derived from the
  design's, so the shared and partitioned points do not depend on them.
  The design's ``load`` is read as a fraction of the largest load the model
  calls stable (bisection; the key-aware model for the shared queue, on
  dedicated or multiplexed processors, the birth-death one otherwise),
  since with few keys the nominal load can exceed what the serialised keys
  allow.  ``partitioned`` points have
  uniform keys, no sequential handlers and ``n_keys`` a multiple of ``k``
  (what the simulator routes exactly).

The handler and INI ``cs2`` is snapped to what the simulator draws
(:func:`validation.model_accuracy.snap_cs2`), so model and simulator
describe the same machine.
"""

from __future__ import annotations

import argparse
import functools
import json
import math
import os
import subprocess
import sys
import time
import warnings
from typing import Any, Mapping, Sequence

import numpy as np

from models.accuracy import TARGETS, meets
from mva._validate import check_choice, check_integer

__all__ = ["FAMILIES", "pdq_saturation_load", "pdq_discipline", "PDQ_VARIANT_FIELDS", "VARIANTS",
           "MAP_MEASURES", "AXES", "TARGET_HW", "MAX_CYCLES",
           "MAP_VERSION", "design_points", "simulate_point", "simulate_family",
           "load_references", "model_values", "axis_values", "errors_of", "build_map",
           "references_path", "MAP_PATH", "TARGETS", "family_errors", "check_against_map",
           "refine_family", "update_family",
           "CHECK_ALPHA",
           "saturation_agreement", "SATURATION_FAMILIES", "WINNER_PAIRS",
           "winner_agreement", "main"]

#: families of the map
FAMILIES = ("lopc", "ini", "policy", "pdq")
#: simulated variants per family (policy; PDQ discipline); ``""`` for none
VARIANTS: dict[str, tuple[str, ...]] = {"lopc": ("",), "ini": ("",),
                                        "policy": ("fixed", "floating", "single"),
                                        "pdq": ("shared", "partitioned", "spinlock",
                                                "multiplexed")}
#: PDQ variants' own fields, drawn from a second design (seed derived from the
#: design's seed) so that adding them leaves the other variants' points unchanged
PDQ_VARIANT_FIELDS: dict[str, tuple[str, ...]] = {
    "spinlock": ("o_lock",),
    "multiplexed": ("compute_utilization", "O_int", "o_sched")}
#: measures summarised in the map (the simulator's names, validation.compare.MEASURES):
#: every measure an issue target names (:data:`models.accuracy.TARGETS`)
MAP_MEASURES: dict[str, tuple[str, ...]] = {fam: tuple(t) for fam, t in TARGETS.items()}
#: the two axes of each family's bins: (name, description, scale, edges)
AXES: dict[str, tuple[tuple[str, str, str, tuple[float, ...]], ...]] = {
    "lopc": (("U_h", "handler utilization of a processor (model)", "linear",
              (0.0, 0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 1.0)),
             ("cs2", "handler cs2", "linear", (0.0, 1.01, 3.0, 10.0))),
    "ini": (("U_o", "INI utilization (model)", "linear",
             (0.0, 0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.7, 1.0)),
            ("cs2_O", "INI occupancy cs2", "linear", (0.0, 1.01, 3.0, 10.0))),
    "policy": (("U", "compute fraction U", "linear", (0.0, 0.25, 0.5, 0.75, 1.0)),
               ("O_int_ratio", "interrupt cost / mean handler cost", "log",
                (0.0, 0.1, 0.5, 2.0, 10.0, math.inf))),
    "pdq": (("load", "offered load per processor", "linear", (0.0, 0.25, 0.5, 0.75, 1.0)),
            ("keys_per_pp", "keys per protocol processor n_keys / k", "log",
             (0.0, 1.0, 4.0, 16.0, 128.0, math.inf))),
}
#: the 95% half-width sought on the main measure, relative to its mean
TARGET_HW = 0.01
#: first run length (requests) and the cap of the adaptive extension
MIN_CYCLES = 20_000
MAX_CYCLES = 1_000_000
#: ``refine``: the relative half-width sought for the runs that stopped at MAX_CYCLES above it,
#: and their new cap (PDQ with highly variable handlers: 3-20% at 10^6 requests)
REFINE_TARGET = 0.02
REFINE_MAX_CYCLES = 10_000_000
#: round trips per thread at least (large machines)
PER_THREAD = 40
#: map format version (bump when the schema changes)
MAP_VERSION = 2
#: a residence or queue length below this fraction of R (resp. 0.02) is left out
NEGLIGIBLE = 0.02

_HERE = os.path.dirname(os.path.abspath(__file__))
_ROOT = os.path.dirname(_HERE)
#: where ``map`` writes the shipped map
MAP_PATH = os.path.join(_ROOT, "models", "data", "accuracy_map.json")


def references_path(family: str, directory: str | None = None) -> str:
    """``validation/data/domain/<family>.json`` (or under ``directory``)."""
    return os.path.join(directory or os.path.join(_HERE, "data", "domain"), f"{family}.json")


# ---------------------------------------------------------------------------
# designs
# ---------------------------------------------------------------------------

def pdq_saturation_load(fields: Mapping[str, Any], discipline: str = "shared", *,
                        method: str | None = None, steps: int = 16) -> float:
    """Largest per-processor load the PDQ model calls stable (bisection to ``2**-steps``).

    ``method`` defaults to the key-aware model for the shared queue and the
    birth-death one (the only one) otherwise.  The designs draw PDQ loads as
    fractions of it, here and in ``benchmarks/pdq_accuracy.py``.  Each
    bisection takes ``steps + 1`` solves, some near the model's fold (the
    slowest it has), so the result is kept per ``(fields, discipline,
    method, steps)`` for the process (:func:`_saturation_load`): a design
    drawn again, or its prefix, costs nothing.
    """
    if method is None:
        method = "keyed" if discipline == "shared" else "birth-death"
    key = tuple(sorted((k, v) for k, v in fields.items() if k != "load"))
    return _saturation_load(key, discipline, method, int(steps))


@functools.lru_cache(maxsize=8192)
def _saturation_load(fields: tuple[tuple[str, Any], ...], discipline: str, method: str,
                     steps: int) -> float:
    """:func:`pdq_saturation_load`'s bisection (``fields`` as sorted pairs, no load)."""
    from models.pdq import PDQParams, _saturated

    kw = dict(fields)
    # (the flags of solve(), without the values they do not need: models.pdq._saturated)
    if not _saturated(PDQParams(**kw, load=1.0), discipline, method):
        return 1.0
    lo, hi = 0.0, 1.0
    for _ in range(steps):
        mid = 0.5 * (lo + hi)
        sat = _saturated(PDQParams(**kw, load=mid), discipline, method)
        lo, hi = (lo, mid) if sat else (mid, hi)
    return lo


def pdq_discipline(variant: str) -> str:
    """The :func:`models.pdq.solve` discipline of a PDQ map variant.

    ``"multiplexed"`` is the shared queue on multiplexed processors
    (``PDQParams(multiplexed=True)``); the other variants are disciplines.

    >>> pdq_discipline("multiplexed"), pdq_discipline("spinlock")
    ('shared', 'spinlock')
    """
    return "shared" if variant == "multiplexed" else (variant or "shared")


def design_points(family: str, n: int, seed: int, *, workers: int | None = None,
                  store: str | None = None, progress: bool = False,
                  indices: Sequence[int] | None = None) -> list[dict[str, Any]]:
    """The ``n`` design points of ``family`` (scrambled Sobol, ``seed``), one dict each.

    Every point carries its ``variant`` (``""``, the policy or the PDQ
    discipline) and its index ``i`` in the design; policy points appear once
    per policy, PDQ points once per discipline.  ``indices``: only the
    design's points of those indices (``0 <= i < n``), in index order.

    PDQ loads are fractions of each point's saturation load
    (:func:`pdq_saturation_load`, a bisection of 17 model solves, up to a
    minute a point near the model's fold).  With ``workers`` above 1 or a
    ``store`` those bisections run as one :func:`mva.sweep` on ``workers``
    processes, recorded in the SQLite ``store`` so that an interrupted design
    resumes; the points are the same either way.

    Examples
    --------
    >>> pts = design_points("lopc", 4, seed=1)
    >>> len(pts), sorted(pts[0])
    (4, ['L', 'P', 'W', 'cs2', 'i', 'o', 'variant'])
    >>> len(design_points("pdq", 2, seed=1))
    8
    """
    from mva.params import design

    from .model_accuracy import snap_cs2

    check_choice("family", family, FAMILIES)
    n = int(check_integer("n", n, minimum=1))
    picked = range(n) if indices is None else sorted({int(check_integer(
        "indices", i, minimum=0, maximum=n - 1)) for i in indices})
    out: list[dict[str, Any]] = []

    def py(v: Any) -> Any:
        return v.item() if isinstance(v, np.generic) else v

    if family == "lopc":
        from models.lopc import LoPCParams
        d = design(LoPCParams, n, seed=seed)
        for i in range(n):
            p = {k: py(d[k][i]) for k in ("P", "W", "o", "L", "cs2")}
            p["cs2"] = snap_cs2(p["cs2"])
            out.append({**p, "variant": "", "i": i})
    elif family == "ini":
        from models.ini import INIParams
        names: tuple[str, ...] = ("N", "K", "clusters", "W", "o", "O", "l", "L", "cs2_o", "cs2_O")
        d = design(INIParams, n, seed=seed, vary=names)
        disp = ("static", "round_robin", "shared")
        for i in range(n):
            p = {k: py(d[k][i]) for k in names}
            p["N"] = int(round(p["N"]))
            p["K"], p["clusters"] = int(p["K"]), int(p["clusters"])
            p["cs2_o"], p["cs2_O"] = snap_cs2(p["cs2_o"]), snap_cs2(p["cs2_O"])
            out.append({**p, "dispatch": disp[i % 3], "variant": "", "i": i})
    elif family == "policy":
        from models.policy import PolicyParams
        names = ("p", "nodes", "U", "o_req", "o_reply", "o_resp", "L", "O_int", "o_direct",
                 "o_indirect", "t_transfer", "handler_cs2")
        d = design(PolicyParams, n, seed=seed, vary=names)
        for i in range(n):
            p = {k: py(d[k][i]) for k in names}
            p["p"], p["nodes"] = int(p["p"]), int(p["nodes"])
            p["handler_cs2"] = snap_cs2(p["handler_cs2"])
            for pol in VARIANTS["policy"]:
                if pol == "fixed" and p["p"] < 2:
                    continue  # Fixed dedicates one of the p processors to protocol
                out.append({**p, "variant": pol, "i": i})
    else:
        from models.pdq import PDQParams
        names = ("k", "load", "S", "cs2", "n_keys", "key_skew", "f_sequential", "f_nosync")
        d = design(PDQParams, n, seed=seed, vary=names)
        extra = tuple(f for fs in PDQ_VARIANT_FIELDS.values() for f in fs)
        dx = design(PDQParams, n, vary=extra,
                    seed=int(np.random.SeedSequence([seed, 1]).generate_state(1)[0]))
        fractions: list[float] = []
        for i in picked:
            base = {k: py(d[k][i]) for k in names}
            base["k"], base["n_keys"] = int(base["k"]), int(base["n_keys"])
            base["cs2"] = snap_cs2(base["cs2"])
            for variant in VARIANTS["pdq"]:
                p = dict(base)
                p.update({f: float(dx[f][i]) for f in PDQ_VARIANT_FIELDS.get(variant, ())})
                if variant == "multiplexed":
                    p["multiplexed"] = True
                if variant == "partitioned":
                    p["key_skew"] = 0.0
                    p["f_sequential"] = 0.0
                    p["n_keys"] = int(max(1, round(p["n_keys"] / p["k"])) * p["k"])
                fractions.append(p.pop("load"))
                out.append({**p, "variant": variant, "i": i})
        bounds = _saturation_loads(out, workers=workers, store=store, progress=progress)
        for p, u, b in zip(out, fractions, bounds):
            p["load"] = float(u * b)
        out = [{**{k: v for k, v in p.items() if k not in ("variant", "i")},
                "variant": p["variant"], "i": p["i"]} for p in out]
    if indices is not None and family != "pdq":      # (PDQ drew only the points asked)
        keep = set(picked)
        out = [p for p in out if p["i"] in keep]
    return out


def _saturation_point(discipline: str, **fields: Any) -> float:
    """:func:`pdq_saturation_load` as a :func:`mva.sweep` function (fields as keywords)."""
    return pdq_saturation_load(fields, discipline)


def _saturation_loads(pts: Sequence[Mapping[str, Any]], *, workers: int | None,
                      store: str | None, progress: bool) -> list[float]:
    """The saturation load of each PDQ design point (``variant`` and ``i`` ignored).

    Serial and through the process cache (:func:`pdq_saturation_load`) unless
    ``workers > 1`` or ``store`` is given: then one :func:`mva.sweep` over the
    distinct points, resumable from ``store``.
    """
    items = [({k: v for k, v in p.items() if k not in ("variant", "i")},
              pdq_discipline(str(p["variant"]))) for p in pts]
    if (workers is None or workers <= 1) and store is None:
        return [pdq_saturation_load(f, disc) for f, disc in items]
    from mva.progress import stage
    from mva.sweeps import sweep

    keys: dict[str, int] = {}
    grid: list[dict[str, Any]] = []
    for f, disc in items:
        key = json.dumps({"discipline": disc, **f}, sort_keys=True)
        if key not in keys:
            keys[key] = len(grid)
            grid.append({"discipline": disc, **f})
    # one sweep per set of parameter names (the multiplexed and spin-lock points add theirs)
    groups: dict[tuple[str, ...], list[int]] = {}
    for j, g in enumerate(grid):
        groups.setdefault(tuple(sorted(g)), []).append(j)
    loads = [math.nan] * len(grid)
    for gi, idx in enumerate(groups.values()):
        gstore = None if store is None else (
            store if gi == 0 else "%s.%d%s" % (os.path.splitext(store)[0], gi,
                                               os.path.splitext(store)[1]))
        with stage(f"PDQ saturation loads ({len(idx)} bisections)", gi + 1, len(groups)):
            t = sweep(_saturation_point, [grid[j] for j in idx], store=gstore,
                      executor="serial" if (workers or 1) <= 1 else None, workers=workers,
                      progress=progress, vectorized=False, on_mismatch="reuse",
                      title="PDQ saturation loads")
        for r, j in enumerate(idx):
            loads[j] = float(t["result"][r])
    return [loads[keys[json.dumps({"discipline": disc, **f}, sort_keys=True)]]
            for f, disc in items]


def _threads(family: str, p: Mapping[str, Any]) -> int:
    if family == "lopc":
        return int(p["P"])
    if family == "ini":
        return int(p["N"] * p["K"] * p["clusters"])
    if family == "policy":
        return int(p["p"] * p["nodes"])
    return 1


# ---------------------------------------------------------------------------
# simulation (one point; mva.sweep runs the design)
# ---------------------------------------------------------------------------

def simulate_point(*, family: str, variant: str = "", seed: int, target: float = TARGET_HW,
                   min_cycles: int = MIN_CYCLES, max_cycles: int = MAX_CYCLES,
                   i: int = -1, **fields: Any) -> dict[str, Any]:
    """Simulate one design point until the main measure's 95% half-width reaches ``target``.

    The first run has ``max(min_cycles, 40 x threads)`` requests; while the
    relative half-width :math:`h/\\bar R` exceeds ``target`` the run is
    repeated (same seed) with :math:`n \\leftarrow 1.3\\, n (h / (\\bar R\\,
    \\mathrm{target}))^2` requests (batch means: :math:`h \\propto n^{-1/2}`),
    at most ``max_cycles``.

    Returns
    -------
    dict
        The measures of :func:`validation.compare.simulate_measures` with
        their half-widths, plus ``cycles`` (the final run length), ``rel_hw``
        (the relative half-width achieved on ``R``) and ``runs``; or
        ``saturated=True`` when the simulated machine has no steady state.

    Examples
    --------
    >>> d = simulate_point(family="lopc", seed=1, P=4, W=1000, o=50, L=20, cs2=1.0,
    ...                    target=0.05, min_cycles=2000)
    >>> d["rel_hw"] <= 0.05 or d["cycles"] == MAX_CYCLES
    True
    """
    from mva.errors import SaturationError

    from .compare import simulate_measures

    cycles = int(max(min_cycles, PER_THREAD * _threads(family, fields)))
    cycles = min(cycles, max_cycles)
    runs = 0
    while True:
        runs += 1
        try:
            d = simulate_measures(family, (pdq_discipline(variant) if family == "pdq"
                                           else variant) or None,
                                  cycles=cycles, seed=seed, **fields)
        except SaturationError as e:
            return {"saturated": True, "cycles": cycles, "runs": runs,
                    "error": f"SaturationError: {e}"[:200]}
        rel = float(d["R_hw"] / d["R"]) if d["R"] > 0 else math.inf
        if rel <= target or cycles >= max_cycles or not math.isfinite(rel):
            break
        cycles = int(min(max_cycles, math.ceil(1.3 * cycles * (rel / target) ** 2)))
    d.update(cycles=cycles, rel_hw=rel, runs=runs, saturated=False)
    return d


def _store_path(family: str, directory: str | None) -> str:
    base = directory or os.path.join(_HERE, "data", "domain")
    return os.path.join(base, f"{family}.store.sqlite")


def simulate_family(family: str, n: int, seed: int, *, executor: Any = None,
                    workers: int | None = None, store: str | None = None,
                    out: str | None = None, progress: bool = True,
                    target: float = TARGET_HW, max_cycles: int = MAX_CYCLES,
                    min_cycles: int = MIN_CYCLES, write: bool = True) -> dict[str, Any]:
    """Simulate the ``n``-point design of ``family`` and write its references as JSON.

    The sweep runs on ``executor`` / ``workers`` (see :func:`mva.sweep`) and
    records every finished point in ``store`` (SQLite; default
    ``validation/data/domain/<family>.store.sqlite``; points with other
    parameter names -- the PDQ spin-lock and multiplexed variants -- in
    ``<family>.store.<variant>.sqlite`` beside it), so an interrupted run
    resumes where it stopped.  The references (design points, simulated
    measures and half-widths, run lengths) are returned and, with ``write``,
    written to ``out`` (default :func:`references_path`).
    """
    store = store or _store_path(family, None)
    os.makedirs(os.path.dirname(os.path.abspath(store)), exist_ok=True)
    pts = design_points(family, n, seed, workers=workers, progress=progress,
                        store=os.path.splitext(store)[0] + ".saturation.sqlite")
    t0 = time.time()
    rows = _simulate_grouped(pts, family=family, verb="simulate", note="",
                             title="domain references", store=store, executor=executor,
                             workers=workers, progress=progress, seed=seed,
                             fixed={"family": family, "target": target,
                                    "max_cycles": max_cycles, "min_cycles": min_cycles})
    refs = {"family": family, "points": n, "seed": seed, "design": "sobol",
            "target_rel_hw": target, "max_cycles": max_cycles, "min_cycles": min_cycles,
            "git_commit": _git_commit(), "wall_time_s": round(time.time() - t0, 1),
            "command": f"python -m validation.domain simulate --family {family} "
                       f"--points {n} --seed {seed}",
            "rows": rows}
    if write:
        path = out or references_path(family)
        os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
        with open(path, "w") as f:
            json.dump(refs, f, indent=0, allow_nan=True)
    return refs


def _simulate_grouped(pts: Sequence[Mapping[str, Any]], *, family: str, verb: str, note: str,
                      title: str, store: str, fixed: Mapping[str, Any], executor: Any,
                      workers: int | None, progress: bool,
                      seed: int | None = None) -> list[dict[str, Any]]:
    """Each point of ``pts`` by :func:`simulate_point` through :func:`mva.sweep`: its row.

    One sweep per set of parameter names (the PDQ variants add their own
    fields); the first set keeps ``store``, the others get
    ``<store>.<variants><ext>`` beside it.  Rows are plain values
    (:func:`_plain`), in the order of ``pts``.
    """
    from mva.progress import stage
    from mva.sweeps import sweep

    groups: dict[tuple[str, ...], list[int]] = {}
    for j, p in enumerate(pts):
        groups.setdefault(tuple(sorted(p)), []).append(j)
    rows: list[dict[str, Any]] = [{} for _ in pts]
    for g, idx in enumerate(groups.values()):
        variants = sorted({str(pts[j].get("variant", "")) for j in idx})
        gstore = store if g == 0 else "%s.%s%s" % (os.path.splitext(store)[0],
                                                   "+".join(variants),
                                                   os.path.splitext(store)[1])
        label = f"{family}{' ' + '+'.join(variants) if g else ''}"
        with stage(f"{verb} {label} ({len(idx)} runs{note})"):
            t = sweep(simulate_point, [pts[j] for j in idx], executor=executor,
                      workers=workers, store=gstore, progress=progress, vectorized=False,
                      seed=seed, on_error="record", fixed=dict(fixed),
                      on_mismatch="reuse", title=f"{label} {title}")
        cols = list(t.columns)
        for r, j in enumerate(idx):
            rows[j] = {c: _plain(t[c][r]) for c in cols}
    return rows


#: keys of a reference row that are results or bookkeeping, not design-point fields
_RESULT_KEYS = frozenset({"i", "seed", "variant", "error", "saturated", "cycles", "rel_hw",
                          "runs", "sim_events", "sim_wall_time", "sim_completed"})


def _row_point(row: Mapping[str, Any]) -> dict[str, Any]:
    """The design-point fields of a stored reference row (measures and half-widths left out).

    A measure ``m`` is recognised by its half-width ``m_hw`` beside it.
    """
    measures = {k[:-3] for k in row if k.endswith("_hw")}
    return {k: v for k, v in row.items() if k not in _RESULT_KEYS and k not in measures
            and not k.endswith("_hw")}


def refine_family(family: str, *, target: float, max_cycles: int, path: str | None = None,
                  workers: int | None = None, store: str | None = None,
                  progress: bool = True, write: bool = True) -> dict[str, Any]:
    """Extend the stored references that stopped at their run-length cap above ``target``.

    A reference run stops at ``target_rel_hw`` or at ``max_cycles`` requests
    (:func:`simulate_point`); with highly variable handlers many PDQ runs
    stop at the cap with a half-width of 3-20% of ``R``, which then counts
    as model error in the map.  Every row whose run reached its file's cap
    with a relative half-width above ``target`` is simulated again, with the
    same seed (the first requests of the longer run are those of the
    stored one), starting at the length the batch-means rule asks for and
    extended up to ``max_cycles`` (:func:`_refine_rows`).  The rule depends
    on the reference's precision only, never on a model's error.  The rows
    are replaced in the returned references, which record what was done
    under ``"refined"``; with ``write`` the file is replaced only once the
    new one is written in full.  Resumable through ``store`` (default
    ``<family>.refine.sqlite`` beside the references).
    """
    p = path or references_path(family)
    refs = load_references(family, p)
    t0 = time.time()
    out, n = _refine_rows(family, refs, target=target, max_cycles=max_cycles,
                          store=store or os.path.splitext(p)[0] + ".refine.sqlite",
                          workers=workers, progress=progress)
    out.setdefault("refined", []).append({
        "target_rel_hw": target, "max_cycles": max_cycles, "rows": n,
        "git_commit": _git_commit(), "wall_time_s": round(time.time() - t0, 1),
        "command": f"python -m validation.domain refine --family {family} --target {target:g} "
                   f"--max-cycles {max_cycles}"})
    if write:
        _write_json(p, out, 0, allow_nan=True)
    return out


def update_family(family: str, *, path: str | None = None, workers: int | None = None,
                  store: str | None = None, progress: bool = True,
                  write: bool = True) -> dict[str, Any]:
    """Bring the stored references up to today's design: simulate only the points that moved.

    A design can move without a new seed: PDQ loads are fractions of the
    model's own saturation load (:func:`design_points`), so a model change
    that moves that bound moves the points.  The design of the stored
    references (their ``points`` and ``seed``) is drawn again; a stored row
    whose point is unchanged is kept (same fields, so the same per-point
    seed and run length: simulating it again would repeat it bit for bit,
    refinements included; "unchanged" is equal to :data:`SAME_POINT_RTOL`,
    since the last bits of the design's floats move with NumPy and SciPy
    releases, and the row keeps its own point), every other point is
    simulated as
    :func:`simulate_family` would, and the new runs are then refined as the
    stored ones were (each ``"refined"`` record, :func:`_refine_rows`).
    What was done is recorded under ``"updated"``; with ``write`` the file is
    replaced only once the new one is written in full.  Resumable through
    ``store`` (default ``<family>.update.sqlite`` beside the references, and
    ``.saturation`` / ``.refine`` stores beside it).
    """
    p = path or references_path(family)
    refs = load_references(family, p)
    t0 = time.time()
    base = os.path.splitext(store or os.path.splitext(p)[0] + ".update.sqlite")[0]
    pts = design_points(family, int(refs["points"]), int(refs["seed"]), workers=workers,
                        store=base + ".saturation.sqlite", progress=progress)
    rows = [dict(r) for r in refs["rows"]]
    if len(rows) != len(pts):
        raise ValueError(f"the stored {family} references have {len(rows)} rows where their "
                         f"design ({refs['points']} points, seed {refs['seed']}) has {len(pts)}")
    moved = [j for j, (r, q) in enumerate(zip(rows, pts))
             if (r.get("variant", ""), r["i"]) != (q["variant"], q["i"])
             or not _same_point(_row_point(r),
                                {k: v for k, v in q.items() if k not in ("variant", "i")})]
    new = _simulate_grouped([pts[j] for j in moved], family=family, verb="update",
                            note=", points moved", title="references updated",
                            store=base + ".sqlite", executor=None if (workers or 1) > 1
                            else "serial", workers=workers, progress=progress,
                            seed=int(refs["seed"]),
                            fixed={"family": family, "target": refs["target_rel_hw"],
                                   "max_cycles": refs["max_cycles"],
                                   "min_cycles": refs["min_cycles"]})
    sub = {**refs, "rows": new}
    for step in refs.get("refined", []):
        sub = _refine_rows(family, sub, target=step["target_rel_hw"],
                           max_cycles=step["max_cycles"], store=base + ".refine.sqlite",
                           workers=workers, progress=progress)[0]
    for j, r in zip(moved, sub["rows"]):
        rows[j] = r
    counts: dict[str, int] = {}
    for j in moved:
        v = str(pts[j]["variant"])
        counts[v] = counts.get(v, 0) + 1
    out = {**refs, "rows": rows,
           "updated": list(refs.get("updated", [])) + [{
               "moved": len(moved), "moved_by_variant": counts, "kept": len(rows) - len(moved),
               "git_commit": _git_commit(), "wall_time_s": round(time.time() - t0, 1),
               "command": f"python -m validation.domain update --family {family}"}]}
    if write:
        _write_json(p, out, 0, allow_nan=True)
    return out


#: relative difference below which a stored point is today's (the last bits of the design's
#: floats move with NumPy / SciPy releases; a moved PDQ saturation bound moves a load by at
#: least 2**-16 of it)
SAME_POINT_RTOL = 1e-9


def _same_point(a: Mapping[str, Any], b: Mapping[str, Any]) -> bool:
    """Whether two design points are the same: equal names, values equal or within
    :data:`SAME_POINT_RTOL` (numbers).

    >>> _same_point({"W": 10.607788683253366}, {"W": 10.607788683253364})
    True
    >>> _same_point({"load": 0.15}, {"load": 0.32}), _same_point({"k": 2}, {"k": 2, "S": 1.0})
    (False, False)
    """
    if set(a) != set(b):
        return False
    for k, x in a.items():
        y = b[k]
        if isinstance(x, bool) or isinstance(y, bool) or not isinstance(x, (int, float)) \
                or not isinstance(y, (int, float)):
            if x != y:
                return False
        elif abs(x - y) > SAME_POINT_RTOL * max(abs(x), abs(y)):
            return False
    return True


def _refine_rows(family: str, refs: Mapping[str, Any], *, target: float, max_cycles: int,
                 store: str, workers: int | None = None,
                 progress: bool = True) -> tuple[dict[str, Any], int]:
    """References ``refs`` with their capped rows run again (see :func:`refine_family`).

    A row is run again when its relative half-width exceeds ``target`` and its
    run reached the file's cap (``refs["max_cycles"]``) without reaching
    ``max_cycles``.  Returns the new references (a copy) and the count of rows
    run again.
    """
    if not 0.0 < target < 1.0:
        raise ValueError(f"target must be in (0, 1) (a relative half-width); got {target}")
    max_cycles = int(check_integer("max_cycles", max_cycles, minimum=1))
    cap = int(refs.get("max_cycles", MAX_CYCLES))
    if max_cycles <= cap:
        raise ValueError(f"max_cycles must exceed the references' own cap of {cap:,} requests "
                         f"to refine them; got {max_cycles:,}")
    todo = [j for j, r in enumerate(refs["rows"]) if _steady(r)
            and r["rel_hw"] > target and cap <= int(r.get("cycles") or 0) < max_cycles]
    pts = []
    for j in todo:
        r = refs["rows"][j]
        first = math.ceil(1.3 * r["cycles"] * (r["rel_hw"] / target) ** 2)
        pts.append({**_row_point(r), **({"variant": r["variant"]} if "variant" in r else {}),
                    "i": r["i"], "seed": int(r["seed"]), "min_cycles": int(min(max_cycles, first))})
    rows = [dict(r) for r in refs["rows"]]
    new_rows = _simulate_grouped(pts, family=family, verb="refine", note=f" above {target:g}",
                                 title="references refined", store=store,
                                 executor="serial" if (workers or 1) <= 1 else None,
                                 workers=workers, progress=progress,
                                 fixed={"family": family, "target": target,
                                        "max_cycles": max_cycles})
    for j, vals in zip(todo, new_rows):
        vals.pop("min_cycles", None)
        if vals.get("error") and not vals.get("saturated"):
            continue                          # a failed run keeps the stored row
        old = rows[j]                         # the stored row's keys, in its order
        rows[j] = {**{c: vals.get(c) for c in old},
                   **{c: v for c, v in vals.items() if c not in old}}
    return {**refs, "rows": rows, "refined": list(refs.get("refined", []))}, len(todo)


def _steady(row: Mapping[str, Any]) -> bool:
    """Whether a reference row is a run that reached a steady state (with a half-width)."""
    return not row.get("saturated") and not row.get("error") and row.get("rel_hw") is not None


def _steady_hw(rows: Sequence[Mapping[str, Any]]) -> np.ndarray:
    """Relative half-widths of ``R`` of the steady-state rows."""
    return np.array([r["rel_hw"] for r in rows if _steady(r)], dtype=float)


def _stored_refinements(family: str) -> list[dict[str, Any]]:
    """The refinements recorded in the stored references of ``family`` (none without them)."""
    try:
        return list(load_references(family).get("refined", []))
    except ValueError:
        return []


def _plain(v: Any) -> Any:
    if isinstance(v, np.generic):
        v = v.item()
    if isinstance(v, float) and not math.isfinite(v):
        return None
    return v


def _git_commit() -> str:
    try:
        return subprocess.run(["git", "rev-parse", "HEAD"], cwd=_ROOT, capture_output=True,
                              text=True, timeout=10).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return ""


def load_references(family: str, path: str | None = None) -> dict[str, Any]:
    """The stored references of ``family`` (JSON written by :func:`simulate_family`)."""
    check_choice("family", family, FAMILIES)
    p = path or references_path(family)
    if not os.path.exists(p):
        raise ValueError(f"no simulator references for family {family!r} at {p}; run "
                         f"python -m validation.domain simulate --family {family}")
    with open(p) as f:
        return json.load(f)


# ---------------------------------------------------------------------------
# the map
# ---------------------------------------------------------------------------

#: fewest points a bin needs for its own reported p95 (the heat maps; lookups use the bound)
MIN_BIN = 8

#: coverage of the prediction bound a point's lookup returns
BOUND_COVERAGE = 0.95


def _bound(a: np.ndarray, parent: float | None) -> float | None:
    r"""Distribution-free 95% prediction bound of ``|e|`` at one more point like ``a``'s.

    For :math:`n` exchangeable values and one more drawn the same way,
    :math:`P(X_{new} > X_{(r)}) = (n + 1 - r)/(n + 1)` (the new value's rank
    is uniform), so the order statistic :math:`r = \lceil 0.95 (n + 1)\rceil`
    is exceeded with probability at most 5%.  A bin of fewer than 19 points
    has no such order statistic and cannot bound itself: it gets
    :math:`\max(X_{(n)}, b_{parent})`, its own maximum or the bound of the
    region it lies in, whichever is larger.  (The sample 95th percentile of
    a small bin is exceeded far more often: about 15% of the time at
    :math:`n = 8`.)

    >>> a = np.arange(1.0, 41.0)
    >>> float(_bound(a, None)), float(_bound(a[:10], 30.0)), float(_bound(a[:10], 3.0))
    (39.0, 30.0, 10.0)
    """
    a = np.sort(np.asarray(a, dtype=float))
    n = a.size
    if n == 0:
        return parent
    r = math.ceil(BOUND_COVERAGE * (n + 1) - 1e-9)
    if r <= n:
        return float(a[r - 1])
    return float(a[-1]) if parent is None else max(float(a[-1]), parent)


def _methods(family: str) -> tuple[str, ...]:
    import importlib

    return tuple(importlib.import_module(f"models.{family}").METHODS)


_NON_FIELDS = ("variant", "i", "seed")


def _fields_of_row(family: str, row: Mapping[str, Any]) -> dict[str, Any]:
    from .compare import _params_class
    from mva.params import declarations

    names = set(declarations(_params_class(family)))
    return {k: v for k, v in row.items() if k in names and k not in _NON_FIELDS}


def model_values(family: str, variant: str, method: str,
                 points: Sequence[Mapping[str, Any]]) -> dict[str, np.ndarray]:
    """Model values of every compared measure at ``points`` (NaN where the method fails).

    Points sharing their non-numeric fields are solved in vectorised calls of
    at most :data:`MAP_GROUP` points; a group the vectorised call rejects is
    solved point by point.
    """
    from .compare import MEASURES, _model_values, _stack

    n = len(points)
    out = {m: np.full(n, np.nan) for m in MEASURES[family]}
    if family in SATURATION_FAMILIES:
        out["saturated"] = np.full(n, np.nan)       # 1.0 / 0.0: the model's own flag
    if family in ("lopc", "ini"):
        opts: dict[str, Any] = {"on_fail": "ignore"}
        call_method = method
    else:
        opts = {"method": method}
        call_method = pdq_discipline(variant) if family == "pdq" else variant
    by_key: dict[str, list[int]] = {}
    for j, p in enumerate(points):
        key = json.dumps({k: v for k, v in p.items() if isinstance(v, (str, bool)) or v is None},
                         sort_keys=True)
        by_key.setdefault(key, []).append(j)
    # groups of at most MAP_GROUP points: "auto" switches to its grid methods on large
    # grids, and the map measures what it gives on the points users ask about
    size = MAP_GROUP.get(family, MAP_GROUP["*"])
    groups = {f"{k}/{c}": idx[c:c + size] for k, idx in by_key.items()
              for c in range(0, len(idx), size)}
    # the default method answers every point (its own cost is bounded by its work
    # budget): it gets AUTO_SECONDS a group and a point and no method budget
    default = method == "auto"
    group_s, point_s = (AUTO_SECONDS, AUTO_SECONDS) if default else (GROUP_SECONDS, POINT_SECONDS)

    def put(idx: Sequence[int], vals: Mapping[str, Any]) -> None:
        for m in out:
            if m in vals:
                out[m][list(idx)] = np.broadcast_to(np.asarray(vals[m], dtype=float),
                                                    (len(idx),))

    from .compare import _params_class
    cls = _params_class(family)
    timeouts = 0
    t0 = time.process_time()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for idx in groups.values():
            try:
                if len(idx) < 2:
                    raise ValueError("single point")
                with _time_limit(group_s):
                    vals = _model_values(family, _stack(family, [points[j] for j in idx]),
                                         call_method, opts)
                if any(np.size(v) not in (1, len(idx)) for v in vals.values()):
                    raise ValueError("shape")
                put(idx, vals)
            except Exception:  # noqa: BLE001 - any failure: solve point by point
                for j in idx:
                    if not default and (timeouts >= MAX_TIMEOUTS
                                        or time.process_time() - t0 > METHOD_SECONDS):
                        break  # the method is too slow on this domain: the rest stay NaN
                    try:
                        with _time_limit(point_s):
                            put([j], _model_values(family, cls(**points[j]), call_method, opts))
                    except _Timeout:
                        timeouts += 1
                    except Exception:  # noqa: BLE001 - the method does not answer here
                        continue
    return out


#: most points solved in one vectorised call by the map, per family (``"*"``: the
#: others), below every family's ``auto`` grid thresholds so that the map measures
#: what a call of one or a few points gets: policy AUTO_NODE_SECONDS (40 points of at
#: most 1 estimated s each stay under its 60 s), LoPC/INI AUTO_GRID_LIMIT
MAP_GROUP = {"policy": 40, "*": 100}
#: CPU-time limits of the map's solves (seconds): a vectorised group, one point; after
#: MAX_TIMEOUTS points over the limit a method's remaining points are left unanswered
GROUP_SECONDS = 60.0
POINT_SECONDS = 5.0
MAX_TIMEOUTS = 5
#: CPU-time budget of one method over one family's design (points in design order);
#: not applied to ``auto``, which must answer every point
METHOD_SECONDS = 240.0
#: CPU-time limit of a group and of a point solved by ``auto`` (a safety net: its work
#: budget bounds a point at a few seconds)
AUTO_SECONDS = 600.0


class _Timeout(Exception):
    pass


class _time_limit:
    """Raise :class:`_Timeout` in the main thread after ``seconds`` of CPU time
    (``SIGVTALRM``; no-op in other threads and where there is no ``setitimer``)."""

    def __init__(self, seconds: float) -> None:
        self.seconds = seconds
        self.active = False

    def __enter__(self) -> None:
        import signal
        import threading
        if not hasattr(signal, "setitimer") or threading.current_thread() is not \
                threading.main_thread():
            return

        def handler(signum: int, frame: Any) -> None:
            raise _Timeout()
        self.old = signal.signal(signal.SIGVTALRM, handler)
        signal.setitimer(signal.ITIMER_VIRTUAL, self.seconds)   # CPU time: load-independent
        self.active = True

    def __exit__(self, *exc: Any) -> None:
        if self.active:
            import signal
            signal.setitimer(signal.ITIMER_VIRTUAL, 0)
            signal.signal(signal.SIGVTALRM, self.old)


def axis_values(family: str, values: Mapping[str, Any]) -> tuple[np.ndarray, np.ndarray]:
    """The two binning axes of ``family`` (:func:`models.accuracy.axis_values`)."""
    from models.accuracy import axis_values as _axes

    return _axes(family, values)


def errors_of(family: str, measure: str, model: np.ndarray, sims: Sequence[Mapping[str, Any]]
              ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Relative error, relative excess beyond the 95% interval and the usable mask.

    ``e = (m - s)/s``; ``x = max(|m - s| - h, 0)/s``.  A point is unusable
    when the simulation has no steady state, the model gives no finite
    value, or the simulated value is negligible (a residence below
    :data:`NEGLIGIBLE` of ``R``, a queue or the interrupts per request below
    0.02).
    """
    n = len(sims)
    s = np.array([np.nan if r.get("saturated") or r.get(measure) is None else r[measure]
                  for r in sims], dtype=float)
    h = np.array([np.nan if r.get(measure + "_hw") is None else r[measure + "_hw"]
                  for r in sims], dtype=float)
    R = np.array([np.nan if r.get("R") is None else r["R"] for r in sims], dtype=float)
    ok = np.isfinite(s) & np.isfinite(model) & (s > 0)
    if measure.startswith("R_"):
        ok &= s >= NEGLIGIBLE * R
    elif measure.startswith("Q") or measure in ("N", "P_int"):
        ok &= s >= 0.02
    with np.errstate(invalid="ignore", divide="ignore"):
        e = np.where(ok, (model - s) / s, np.nan)
        x = np.where(ok, np.maximum(np.abs(model - s) - np.nan_to_num(h), 0.0) / s, np.nan)
    assert e.shape == (n,)
    return e, x, ok


def _stats(e: np.ndarray, x: np.ndarray) -> dict[str, Any]:
    a = np.abs(e)
    if a.size == 0:
        return {"n": 0, "mean": None, "p50": None, "p95": None, "max": None, "bias": None,
                "beyond": 0, "mean_beyond": None, "p95_beyond": None}
    return {"n": int(a.size), "mean": float(a.mean()), "p50": float(np.percentile(a, 50)),
            "p95": float(np.percentile(a, 95)), "max": float(a.max()), "bias": float(e.mean()),
            "beyond": int((x > 0).sum()), "mean_beyond": float(x.mean()),
            "p95_beyond": float(np.percentile(x, 95))}


def _bin_index(v: np.ndarray, edges: Sequence[float]) -> np.ndarray:
    """Bin of each value (``-1`` outside ``[edges[0], edges[-1]]``); the last bin is closed."""
    ed = np.asarray(edges, dtype=float)
    k = np.searchsorted(ed, v, side="right") - 1
    k = np.where(v == ed[-1], len(ed) - 2, k)
    return np.where((v < ed[0]) | (v > ed[-1]) | ~np.isfinite(v), -1, k)


def _binned(e: np.ndarray, x: np.ndarray, a1: np.ndarray, a2: np.ndarray,
            edges: tuple[Sequence[float], Sequence[float]], overall: float | None
            ) -> dict[str, Any]:
    """Per-bin statistics, the reported p95 grid and the lookup's prediction bounds.

    ``bound`` (per bin) and ``bound_axis1`` (per axis-1 slice) are
    :func:`_bound` figures; a sparse bin pools with its slice, a sparse slice
    with the method's ``overall`` bound.
    """
    n1, n2 = len(edges[0]) - 1, len(edges[1]) - 1
    b1, b2 = _bin_index(a1, edges[0]), _bin_index(a2, edges[1])
    grid: dict[str, Any] = {k: [[None] * n2 for _ in range(n1)]
                            for k in ("n", "mean", "p95", "max", "beyond", "bound")}
    a = np.abs(e)
    marginal = [_bound(a[b1 == i], overall) for i in range(n1)]
    grid["bound_axis1"] = marginal
    for i in range(n1):
        for j in range(n2):
            sel = (b1 == i) & (b2 == j)
            st = _stats(e[sel], x[sel])
            grid["n"][i][j] = st["n"]
            grid["beyond"][i][j] = st["beyond"]
            if st["n"]:
                grid["mean"][i][j] = st["mean"]
                grid["max"][i][j] = st["max"]
                grid["bound"][i][j] = _bound(a[sel], marginal[i])
            if st["n"] >= MIN_BIN:
                grid["p95"][i][j] = st["p95"]
    return grid


def _worst(e: np.ndarray, points: Sequence[Mapping[str, Any]], sims: Sequence[Mapping[str, Any]],
           measure: str, model: np.ndarray, k: int = 5) -> list[dict[str, Any]]:
    order = np.argsort(-np.nan_to_num(np.abs(e), nan=-1.0))[:k]
    out = []
    for j in order:
        if not np.isfinite(e[j]):
            continue
        out.append({"error": float(e[j]), "model": float(model[j]), "sim": float(sims[j][measure]),
                    "half_width": float(sims[j][measure + "_hw"]), "point": dict(points[j])})
    return out


def _pick(rows: Sequence[Mapping[str, Any]], variant: str) -> list[Mapping[str, Any]]:
    return [r for r in rows if (r.get("variant") or "") == variant]


def family_errors(family: str, refs: Mapping[str, Any], methods: Sequence[str] | None = None
                  ) -> dict[str, dict[str, dict[str, Any]]]:
    """Per variant and method: points, simulations, model values, errors and axes.

    The raw material of :func:`build_map` and of the ``validate --domain``
    report.
    """
    out: dict[str, dict[str, dict[str, Any]]] = {}
    for variant in VARIANTS[family]:
        # the simulator's saturated points stay in (no error is measured there, but the
        # model's saturation flag is compared there: :func:`saturation_agreement`)
        rows = [r for r in _pick(refs["rows"], variant)
                if not r.get("error") or r.get("saturated")]
        if not rows:
            continue
        points = [_fields_of_row(family, r) for r in rows]
        out[variant] = {}
        for method in methods or _methods(family):
            mv = model_values(family, variant, method, points)
            cols = {k: np.array([p.get(k, np.nan) if not isinstance(p.get(k), str) else np.nan
                                 for p in points], dtype=float) for k in points[0]}
            cols.update(mv)
            a1, a2 = axis_values(family, cols)
            per = {}
            for meas in MAP_MEASURES[family]:
                e, x, ok = errors_of(family, meas, mv[meas], rows)
                per[meas] = {"e": e, "x": x, "ok": ok, "model": mv[meas]}
            sim_sat = np.array([bool(r.get("saturated")) for r in rows])
            failed = int(np.sum(~np.isfinite(mv["R"]) & ~sim_sat))
            out[variant][method] = {"points": points, "sims": rows, "axes": (a1, a2),
                                    "measures": per, "failed": failed, "values": mv,
                                    "saturation": saturation_agreement(family, mv, rows)}
    return out


#: the policy pairs whose faster member the map checks (:func:`winner_agreement`)
WINNER_PAIRS = (("fixed", "floating"), ("fixed", "single"))


def winner_agreement(per_variant: Mapping[str, Mapping[str, Mapping[str, Any]]], method: str,
                     measure: str = "T", worst: int = 10) -> dict[str, Any] | None:
    """Which policy of a pair is faster, by the model and by the simulator, point by point.

    ``per_variant`` is the policy part of :func:`family_errors` (variant ->
    method -> points, simulations and model values).  The design gives every
    point under each policy (the row field ``i``); for each pair of
    :data:`WINNER_PAIRS` and each point both policies answer, the simulator
    *separates* the pair when the 95% intervals of the two execution times
    do not overlap, ``|T_a - T_b| > h_a + h_b``, and the model names the
    winner correctly when its difference has the simulator's sign.  Issue
    15 asks for the right winner at every separated point.

    Returns
    -------
    dict or None
        Per pair ``"a/b"``: ``points`` (both answered by the model and the
        simulator), ``separated``, ``correct`` (of the separated ones),
        ``wrong`` (the separated points named wrongly, at most ``worst``, each
        with the point, the model's and the simulator's ratio ``T_b / T_a``
        and the simulator's half-width of that ratio), and ``agree_all`` (the
        share of all points where the two name the same winner, unseparated
        ones included).  ``None`` when a variant or the method is missing.

    Examples
    --------
    >>> import numpy as np
    >>> def part(T, Ts, h):
    ...     return {"m": {"sims": [{"i": i, "T": t, "T_hw": h} for i, t in enumerate(Ts)],
    ...                   "points": [{"p": 2}] * len(T), "values": {"T": np.array(T)}}}
    >>> pv = {"fixed": part([10.0, 10.0], [10.0, 10.0], 0.1),
    ...       "floating": part([9.0, 11.0], [9.0, 9.0], 0.1),
    ...       "single": part([12.0, 12.0], [12.0, 9.95], 0.1)}
    >>> w = winner_agreement(pv, "m")
    >>> w["fixed/floating"]["separated"], w["fixed/floating"]["correct"]
    (2, 1)
    >>> w["fixed/single"]["separated"], w["fixed/single"]["correct"], w["fixed/single"]["agree_all"]
    (1, 1, 0.5)
    """
    if any(v not in per_variant or method not in per_variant[v] for pair in WINNER_PAIRS
           for v in pair):
        return None

    def table(variant: str) -> dict[int, tuple[float, float, float, Mapping[str, Any]]]:
        d = per_variant[variant][method]
        T = np.asarray(d["values"][measure], dtype=float)
        out = {}
        for j, (row, point) in enumerate(zip(d["sims"], d["points"])):
            ts, hw = row.get(measure), row.get(measure + "_hw")
            if ts is None or hw is None or not np.isfinite(T[j]) or row.get("error"):
                continue
            out[int(row["i"])] = (float(T[j]), float(ts), float(hw), point)
        return out

    res: dict[str, Any] = {}
    for a, b in WINNER_PAIRS:
        ta, tb = table(a), table(b)
        both = sorted(set(ta) & set(tb))
        sep = correct = same = 0
        wrong: list[dict[str, Any]] = []
        for i in both:
            (ma, sa, ha, pa), (mb, sb, hb, _) = ta[i], tb[i]
            agree = (mb < ma) == (sb < sa)
            same += int(agree)
            if abs(sb - sa) <= ha + hb:
                continue
            sep += 1
            if agree:
                correct += 1
            elif len(wrong) < worst:
                ratio = sb / sa
                wrong.append({"i": i, "point": dict(pa), "model_ratio": mb / ma,
                              "sim_ratio": ratio,
                              "sim_ratio_hw": ratio * math.hypot(ha / sa, hb / sb)})
        res[f"{a}/{b}"] = {"points": len(both), "separated": sep, "correct": correct,
                           "wrong": wrong, "agree_all": same / len(both) if both else None}
    return res


#: families whose models flag saturation (compared with the simulator by
#: :func:`saturation_agreement`)
SATURATION_FAMILIES = ("policy", "pdq")


def saturation_agreement(family: str, model: Mapping[str, np.ndarray],
                         sims: Sequence[Mapping[str, Any]]) -> dict[str, Any] | None:
    """Where the model flags saturation against where the simulator does.

    PDQ: the simulator flags a point whose queue has no steady state (its
    run-length test, :func:`validation.compare.simulate_measures`).  Policy
    (a closed machine, always in steady state): the simulated
    protocol-processor utilization is at or above
    :data:`models.policy.SATURATION_THRESHOLD`, the model's own criterion.
    Points the model does not answer are left out.

    Returns
    -------
    dict or None
        ``points`` compared, ``both``, ``model_only``, ``sim_only`` and
        ``agree`` (the share of points where the two flags are equal);
        ``None`` for a family without a saturation flag.

    >>> saturation_agreement("pdq", {"saturated": np.array([1.0, 0.0, 0.0, np.nan])},
    ...                      [{"saturated": True}, {"saturated": True}, {}, {}])
    {'points': 3, 'both': 1, 'model_only': 0, 'sim_only': 1, 'agree': 0.6666666666666666}
    """
    if family not in SATURATION_FAMILIES or "saturated" not in model:
        return None
    m = np.asarray(model["saturated"], dtype=float)
    if family == "policy":
        from models.policy import SATURATION_THRESHOLD
        s = np.array([r.get("U_pp") is not None and r["U_pp"] >= SATURATION_THRESHOLD
                      for r in sims])
    else:
        s = np.array([bool(r.get("saturated")) for r in sims])
    ok = np.isfinite(m)
    mb, sb = m[ok] > 0.5, s[ok]
    n = int(ok.sum())
    return {"points": n, "both": int((mb & sb).sum()), "model_only": int((mb & ~sb).sum()),
            "sim_only": int((~mb & sb).sum()), "agree": float((mb == sb).mean()) if n else None}


def build_map(families: Sequence[str] = FAMILIES, *, references: str | None = None,
              out: str | None = MAP_PATH, merge: bool = True) -> dict[str, Any]:
    """Solve every method at the stored references and write the accuracy map.

    Families without references are left out (and named on standard error);
    with ``merge`` the other families of an existing map at ``out`` are kept.
    See the module :mod:`models.accuracy` for the schema.
    """
    import datetime

    from mva.progress import stage

    fams: dict[str, Any] = {}
    seeds = set()
    for fam in families:
        try:
            refs = load_references(fam, references_path(fam, references))
        except ValueError as exc:
            print(f"map: {exc}", file=sys.stderr)
            continue
        seeds.add(refs["seed"])
        with stage(f"map {fam}"):
            fe = family_errors(fam, refs)
        rows = refs["rows"]
        hw = np.array([r["rel_hw"] for r in rows if r.get("rel_hw") is not None], dtype=float)
        axes = [{"name": a[0], "description": a[1], "scale": a[2],
                 "edges": [None if not math.isfinite(v) else v for v in a[3]]}
                for a in AXES[fam]]
        edges = (AXES[fam][0][3], AXES[fam][1][3])
        variants: dict[str, Any] = {}
        for variant, per_method in fe.items():
            vm: dict[str, Any] = {}
            for method, d in per_method.items():
                a1, a2 = d["axes"]
                meas_out = {}
                for meas, md in d["measures"].items():
                    ok = md["ok"]
                    e, x = md["e"][ok], md["x"][ok]
                    overall = {**_stats(e, x), "bound": _bound(np.abs(e), None)}
                    meas_out[meas] = {
                        "overall": overall,
                        "bins": _binned(e, x, a1[ok], a2[ok], edges, overall["bound"]),
                        "worst": _worst(md["e"], d["points"], d["sims"], meas, md["model"]),
                        "left_out": int((~ok).sum()),
                    }
                vm[method] = {"failed": d["failed"], "measures": meas_out}
                if d.get("saturation") is not None:
                    vm[method]["saturation"] = d["saturation"]
            variants[variant] = {"points": len(next(iter(per_method.values()))["points"]),
                                 "methods": vm}
        winners = ({m: w for m in _methods(fam)
                    if (w := winner_agreement(fe, m)) is not None}
                   if fam == "policy" else {})
        fams[fam] = {
            "points": refs["points"], "seed": refs["seed"], "runs": len(rows),
            "saturated": int(sum(bool(r.get("saturated")) for r in rows)),
            "sim_failed": int(sum(bool(r.get("error")) and not r.get("saturated") for r in rows)),
            "rel_hw": {"median": float(np.median(hw)) if hw.size else None,
                       "max": float(hw.max()) if hw.size else None,
                       "at_target": int((hw <= refs["target_rel_hw"] * (1 + 1e-9)).sum()),
                       "target": refs["target_rel_hw"]},
            "references_commit": refs.get("git_commit", ""),
            "axes": axes, "measures": list(MAP_MEASURES[fam]), "targets": TARGETS[fam],
            "variants": variants,
            **({"winners": winners} if winners else {}),
        }
    if merge and out and os.path.exists(out):
        # keep the families not rebuilt now (``map --family F`` after one family's change)
        with open(out) as f:
            old = json.load(f)
        if old.get("version") == MAP_VERSION:
            for fam, fd in old.get("families", {}).items():
                if fam not in fams:
                    fams[fam] = fd
                    seeds.add(fd["seed"])
        fams = {f: fams[f] for f in FAMILIES if f in fams}
    m = {"version": MAP_VERSION,
         "generated": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
         "git_commit": _git_commit(),
         "seed": sorted(seeds)[0] if len(seeds) == 1 else sorted(seeds),
         "min_bin": MIN_BIN,
         "commands": {"simulate": "python -m validation.domain simulate --family F "
                                  "--points 512 --seed 2026 --workers 2",
                      "map": "python -m validation.domain map"},
         "families": fams}
    if out:
        # the map, then its lookup tables beside it (what results read; see
        # models.accuracy.bounds_path)
        from models.accuracy import lookup_tables

        os.makedirs(os.path.dirname(os.path.abspath(out)), exist_ok=True)
        _write_json(out, m, indent=1)
        _write_json(os.path.join(os.path.dirname(os.path.abspath(out)), BOUNDS_NAME),
                    lookup_tables(m), indent=None)
    return m


#: file name of the lookup tables written beside the map
BOUNDS_NAME = "accuracy_bounds.json"


def _write_json(path: str, obj: Any, indent: int | None, allow_nan: bool = False) -> None:
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(obj, f, indent=indent, allow_nan=allow_nan, default=_plain)
        f.write("\n")
    os.replace(tmp, path)  # readers never see a half-written file


# ---------------------------------------------------------------------------
# a fresh sample against the map
# ---------------------------------------------------------------------------

#: significance of the consistency check (one-sided binomial test)
CHECK_ALPHA = 0.001


def check_against_map(family: str, points: int, seed: int, *, method: str = "auto",
                      measure: str = "R", accuracy_map: Mapping[str, Any] | None = None,
                      refs: Mapping[str, Any] | None = None, executor: Any = "serial",
                      workers: int | None = None, store: str | None = None,
                      target: float = TARGET_HW, progress: bool = False,
                      errors: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """Do a fresh design's errors agree with the map's figures?

    A fresh design (``points``, ``seed``; a seed other than the map's) is
    simulated (or ``refs`` given) and ``method`` solved at each point (or
    ``errors`` given: :func:`family_errors` of ``refs`` by ``method``).  If
    the map's figure :math:`q_i` (the 95% prediction bound of its bin) is right,
    each point's :math:`|e_i|` exceeds it with probability at most 0.05, so
    the count :math:`k` of exceedances out of :math:`n` is at most
    Binomial(:math:`n`, 0.05); the check fails when the one-sided p-value
    :math:`P(X \\ge k)` is below :data:`CHECK_ALPHA`.  The fresh mean, p95 and
    max of :math:`|e|` are returned beside the map's overall figures.

    The fresh runs are refined as the stored references were (their
    ``"refined"`` record, :func:`_refine_rows`), so that both are measured
    to the same precision.

    Where the map claims the method meets its issue target (:data:`TARGETS`:
    mean, p95 and max all within bounds), the fresh sample must not refute
    it: the count of points above the target's p95 bound is tested the same
    way, and no point may exceed the target's max bound by more than the
    simulator's 95% interval.  ``target_held`` is False when either fails.

    Returns
    -------
    dict
        Per variant: ``n``, ``above`` (k), ``p_value``, ``consistent``,
        ``fresh`` / ``map`` statistics, ``claims_target``, ``above_target``,
        ``target_p_value`` and ``target_held``.
    """
    from scipy.stats import binomtest

    from models.accuracy import expected_error, load_map

    m = dict(accuracy_map) if accuracy_map is not None else load_map()
    if refs is None:
        store = store or os.path.join(os.path.dirname(_store_path(family, None)),
                                      f"{family}.check-{points}-{seed}.store.sqlite")
        refs = simulate_family(family, points, seed, executor=executor, workers=workers,
                               store=store, progress=progress, target=target, write=False)
        # the fresh runs as precise as the map's references: refined as they were
        for step in _stored_refinements(family):
            refs = _refine_rows(family, refs, target=step["target_rel_hw"],
                                max_cycles=step["max_cycles"],
                                store=os.path.splitext(store)[0] + ".refine.sqlite",
                                workers=workers, progress=progress)[0]
    out: dict[str, Any] = {}
    if errors is None:
        errors = family_errors(family, refs, methods=(method,))
    for variant, per in errors.items():
        md = per[method]
        mm = md["measures"][measure]
        ok = mm["ok"]
        a1, a2 = md["axes"]
        q = expected_error(family, method, measure, variant=variant, accuracy_map=m,
                           **dict(zip([a["name"] for a in m["families"][family]["axes"]],
                                      (a1[ok], a2[ok]))))
        e = np.abs(mm["e"][ok])
        n = int(e.size)
        k = int((e > q).sum())
        p = float(binomtest(k, n, 0.05, alternative="greater").pvalue) if n else 1.0
        ov = m["families"][family]["variants"][variant]["methods"][method]["measures"][measure]
        tg = TARGETS.get(family, {}).get(measure)
        claims = meets(ov["overall"], tg)
        # a claimed target: at most 5% of points above its p95 bound (binomial, as
        # above), and no point beyond its max bound by more than the simulator's interval
        # (a bound the issue leaves unset is not tested)
        p95_t = None if tg is None else tg["p95"]
        max_t = None if tg is None else tg["max"]
        kt = int((e > p95_t).sum()) if p95_t is not None else 0
        pt = float(binomtest(kt, n, 0.05, alternative="greater").pvalue) \
            if n and p95_t is not None else 1.0
        xs = mm["x"][ok]
        worst_beyond = float(xs.max()) if xs.size else 0.0
        target_ok = not claims or (pt >= CHECK_ALPHA
                                   and (max_t is None or worst_beyond <= max_t))
        out[variant] = {"n": n, "above": k, "p_value": p, "consistent": p >= CHECK_ALPHA,
                        "fresh": _stats(mm["e"][ok], xs), "map": ov["overall"],
                        "claims_target": claims, "above_target": kt, "target_p_value": pt,
                        "target_held": target_ok}
    return out


# ---------------------------------------------------------------------------
# command line
# ---------------------------------------------------------------------------

def _at_least(cast: Any, low: float, strict: bool = False) -> Any:
    """An argparse type: ``cast(text)`` that is ``>= low`` (``> low`` with ``strict``)."""
    def parse(text: str) -> Any:
        try:
            v = cast(text)
        except ValueError:
            kind = "an integer" if cast is int else "a number"
            raise argparse.ArgumentTypeError(f"not {kind}: {text!r}") from None
        if not (v > low if strict else v >= low) or v != v:
            raise argparse.ArgumentTypeError(
                f"must be {'>' if strict else '>='} {low:g}; got {text}")
        return v
    return parse


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m validation.domain simulate|map --family F --points N --seed S [--workers W]``.

    Bad options are argparse errors; a failure while running (a missing or
    unreadable references file, an unwritable output) is one ``error:`` line on
    standard error and exit status 2.
    """
    ap = argparse.ArgumentParser(prog="python -m validation.domain",
                                 description=(__doc__ or "").split("\n")[0])
    ap.add_argument("step", choices=("simulate", "update", "refine", "map", "check"),
                    help="simulate: references; update: simulate only the stored design's "
                         "points that moved (PDQ loads follow the model's saturation bound), "
                         "refined as the stored runs were; refine: extend the references that "
                         "stopped at their run-length cap above --target; map: the accuracy "
                         "map; check: a fresh design against the map (exit 1 when "
                         "inconsistent)")
    ap.add_argument("--family", choices=FAMILIES + ("all",), default="all")
    ap.add_argument("--points", type=_at_least(int, 1), default=512)
    ap.add_argument("--seed", type=_at_least(int, 0), default=2026)
    ap.add_argument("--workers", type=_at_least(int, 1), default=1)
    ap.add_argument("--store", default=None, help="SQLite store of the sweep (resume)")
    ap.add_argument("--references", default=None,
                    help="directory of the <family>.json references (default "
                         "validation/data/domain)")
    ap.add_argument("--out", default=None, help="map file (default models/data/accuracy_map.json)")
    ap.add_argument("--budget", type=_at_least(float, 0.0, strict=True), default=None,
                    help="map: CPU seconds per method and variant (default %g; points beyond "
                         "it count as unanswered)" % METHOD_SECONDS)
    ap.add_argument("--target", type=_at_least(float, 0.0, strict=True), default=REFINE_TARGET,
                    help="refine: relative half-width of R sought (default %g)" % REFINE_TARGET)
    ap.add_argument("--max-cycles", type=_at_least(int, 1), default=REFINE_MAX_CYCLES,
                    help="refine: longest run in requests (default %d)" % REFINE_MAX_CYCLES)
    a = ap.parse_args(argv)
    try:
        return _run(a)
    except (ValueError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


def _run(a: argparse.Namespace) -> int:
    """The step of :func:`main` with its parsed options."""
    fams = FAMILIES if a.family == "all" else (a.family,)
    if a.step == "simulate":
        for fam in fams:
            refs = simulate_family(fam, a.points, a.seed,
                                   executor="serial" if a.workers <= 1 else None,
                                   workers=a.workers, store=a.store if len(fams) == 1 else None,
                                   out=references_path(fam, a.references))
            hw = _steady_hw(refs["rows"])
            print(f"{fam}: {len(refs['rows'])} runs, {hw.size} with a steady state; relative "
                  f"half-width of R: median {np.median(hw):.4f}, max {hw.max():.4f}; "
                  f"{int((hw <= refs['target_rel_hw']).sum())} at target", flush=True)
        return 0
    if a.step == "update":
        for fam in fams:
            refs = update_family(fam, path=references_path(fam, a.references),
                                 workers=a.workers, store=a.store if len(fams) == 1 else None)
            u = refs["updated"][-1]
            print(f"{fam}: {u['moved']} of {len(refs['rows'])} points moved and were simulated "
                  f"again {u['moved_by_variant']}, {u['kept']} kept", flush=True)
        return 0
    if a.step == "refine":
        for fam in fams:
            before = load_references(fam, references_path(fam, a.references))
            refs = refine_family(fam, target=a.target, max_cycles=a.max_cycles,
                                 path=references_path(fam, a.references), workers=a.workers,
                                 store=a.store if len(fams) == 1 else None)
            for name, rr in (("before", before), ("after", refs)):
                hw = _steady_hw(rr["rows"])
                print(f"{fam} {name}: relative half-width of R: median {np.median(hw):.4f}, "
                      f"p95 {np.percentile(hw, 95):.4f}, max {hw.max():.4f}; "
                      f"{int((hw > a.target).sum())} above {a.target:g}", flush=True)
        return 0
    if a.step == "check":
        bad = 0
        for fam in fams:
            res = check_against_map(fam, a.points, a.seed,
                                    executor="serial" if a.workers <= 1 else None,
                                    workers=a.workers, progress=True)
            for variant, r in res.items():
                f, mp = r["fresh"], r["map"]
                print(f"{fam} {variant}: {r['above']} of {r['n']} points above the map's 95% bound "
                      f"(p = {r['p_value']:.3g}, {'' if r['consistent'] else 'NOT '}"
                      f"consistent); |e_R| fresh mean/p95/max "
                      f"{_fmt(f['mean'])}/{_fmt(f['p95'])}/{_fmt(f['max'])}%, map "
                      f"{_fmt(mp['mean'])}/{_fmt(mp['p95'])}/{_fmt(mp['max'])}%", flush=True)
                if r["claims_target"]:
                    print(f"{fam} {variant}: the map says the target is met; fresh points above "
                          f"its p95 bound: {r['above_target']} of {r['n']} (p = "
                          f"{r['target_p_value']:.3g}): {'held' if r['target_held'] else 'MISSED'}",
                          flush=True)
                bad += not r["consistent"] or not r["target_held"]
        return 1 if bad else 0
    if a.budget is not None:
        globals()["METHOD_SECONDS"] = float(a.budget)
    m = build_map(fams, references=a.references, out=a.out or MAP_PATH)
    for fam, fd in m["families"].items():
        print(f"{fam}: {fd['points']} points")
    return 0


def _fmt(x: Any) -> str:
    return "-" if x is None else f"{100 * x:.2f}"


if __name__ == "__main__":
    sys.exit(main())
