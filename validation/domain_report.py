"""The domain-wide accuracy report of ``smp-contention validate --domain``.

For each family (and policy / PDQ discipline), every method of the model is
solved at the simulator references of a Sobol design over the declared
domain (:mod:`validation.domain`): the stored references when the design
asked for is the stored one (no simulation), otherwise a fresh design
simulated into the output directory (resumable).  The report gives per
method and measure the mean / 95th percentile / maximum of the relative
error, its bias, how many errors exceed the simulation's 95% half-width and
the 95th percentile of the part beyond it, whether the issue target is met,
the worst points of the default method and heat maps (matplotlib, optional)
of the 95th-percentile error of ``R`` over the family's two axes.
"""

from __future__ import annotations

import math
import os
from typing import Any, Mapping, Sequence

import numpy as np

__all__ = ["domain_errors", "domain_markdown", "write_domain_report", "DEFAULT_METHOD"]

#: the method whose worst points and target the report states per family
DEFAULT_METHOD = {"lopc": "auto", "ini": "auto", "policy": "auto", "pdq": "auto"}


def _references(family: str, points: int | None, seed: int, out_dir: str, workers: int | None,
                progress: bool) -> dict[str, Any]:
    """Stored references when they are the design asked for, else a fresh simulation."""
    from .domain import load_references, references_path, simulate_family

    try:
        refs = load_references(family)
        if refs["seed"] == seed and (points is None or refs["points"] == points):
            return refs
    except ValueError:
        if points is None:
            raise
    n = int(points or 128)
    d = os.path.join(out_dir, "references")
    os.makedirs(d, exist_ok=True)
    return simulate_family(family, n, seed, executor="serial" if workers == 1 else None,
                           workers=workers, store=os.path.join(d, f"{family}.store.sqlite"),
                           out=references_path(family, d), progress=progress)


def domain_errors(families: Sequence[str], *, points: int | None = None, seed: int = 2026,
                  out_dir: str = "validation-report", workers: int | None = None,
                  progress: bool = True) -> dict[str, Any]:
    """References and per-method errors of every family (see
    :func:`validation.domain.family_errors`)."""
    from mva.progress import stage

    from .domain import family_errors

    res: dict[str, Any] = {}
    for k, fam in enumerate(families, 1):
        with stage(f"domain {fam}", k, len(families)):
            refs = _references(fam, points, seed, out_dir, workers, progress)
            res[fam] = {"refs": refs, "errors": family_errors(fam, refs)}
    return res


def _pct(x: Any, digits: int = 2) -> str:
    if x is None or (isinstance(x, float) and not math.isfinite(x)):
        return "-"
    return f"{100 * float(x):.{digits}f}"


def _stats(e: np.ndarray, x: np.ndarray) -> dict[str, Any]:
    from .domain import _stats as st
    return st(e, x)


def domain_markdown(res: Mapping[str, Any], plots: Mapping[str, list[str]] | None = None) -> str:
    """The Markdown report."""
    from models.accuracy import TARGETS, meets, target_text

    from .domain import AXES, MAP_MEASURES

    lines = ["# Accuracy over the declared domain", "",
             "Relative error e = (model - sim) / sim of every method at the simulator "
             "references of a scrambled Sobol design over each family's declared validity "
             "domain. 'beyond' counts errors larger than the simulation's 95% half-width; "
             "'p95 beyond' is the 95th percentile of max(|m - s| - h, 0) / s. Figures in %.", ""]
    for fam, d in res.items():
        refs = d["refs"]
        rows = refs["rows"]
        hw = np.array([r["rel_hw"] for r in rows if r.get("rel_hw") is not None], dtype=float)
        sat = sum(bool(r.get("saturated")) for r in rows)
        lines += [f"## {fam}", "",
                  f"Design: {refs['points']} points, seed {refs['seed']}, {len(rows)} runs "
                  f"({sat} without a steady state); relative half-width of R: median "
                  f"{_pct(np.median(hw) if hw.size else None)}%, max "
                  f"{_pct(hw.max() if hw.size else None)}%, "
                  f"{int((hw <= refs['target_rel_hw'] * (1 + 1e-9)).sum())} runs at the "
                  f"{_pct(refs['target_rel_hw'], 0)}% target. Axes: "
                  + "; ".join(f"{a[0]} ({a[1]})" for a in AXES[fam]) + ".", ""]
        for variant, per in d["errors"].items():
            if variant:
                lines += [f"### {fam} {variant}", ""]
            lines += ["| measure | method | n | mean | p95 | max | bias | beyond | p95 beyond "
                      "| target (mean/p95/max) | met | no answer |",
                      "|---|---|--:|--:|--:|--:|--:|--:|--:|---|---|--:|"]
            for meas in MAP_MEASURES[fam]:
                tg = TARGETS[fam][meas]
                for method, md in per.items():
                    m = md["measures"][meas]
                    ok = m["ok"]
                    s = _stats(m["e"][ok], m["x"][ok])
                    met = meets(s, tg)
                    lines.append(
                        f"| {meas} | {method} | {s['n']} | {_pct(s['mean'])} | {_pct(s['p95'])} "
                        f"| {_pct(s['max'])} | {_pct(s['bias'])} | {s['beyond']} "
                        f"| {_pct(s['p95_beyond'])} | {target_text(tg)} "
                        f"| {'yes' if met else 'no'} | {md['failed']} |")
            lines.append("")
            dm = DEFAULT_METHOD[fam]
            if dm in per:
                md = per[dm]
                e = md["measures"]["R"]["e"]
                order = np.argsort(-np.nan_to_num(np.abs(e), nan=-1.0))[:5]
                lines += [f"Worst points of {dm} (R):", ""]
                for j in order:
                    if not np.isfinite(e[j]):
                        continue
                    p = md["points"][j]
                    s = md["sims"][j]
                    txt = ", ".join(f"{k}={v:.4g}" if isinstance(v, float) else f"{k}={v}"
                                    for k, v in p.items())
                    lines.append(f"- {100 * e[j]:+.1f}% (sim {s['R']:.5g} +- {s['R_hw']:.2g}): "
                                 f"{txt}")
                lines.append("")
            for path in (plots or {}).get(f"{fam}/{variant}", []):
                lines += [f"![{fam} {variant} heat map]({os.path.basename(path)})", ""]
    return "\n".join(lines)


def _heatmaps(fam: str, variant: str, per: Mapping[str, Any], out_dir: str) -> list[str]:
    import matplotlib
    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    from .domain import AXES, MIN_BIN, _bin_index

    ax_spec = AXES[fam]
    e1, e2 = ax_spec[0][3], ax_spec[1][3]
    methods = list(per)
    ncol = min(4, len(methods))
    nrow = int(math.ceil(len(methods) / ncol))
    fig, axes = plt.subplots(nrow, ncol, figsize=(3.6 * ncol, 3.0 * nrow), squeeze=False)
    for k, method in enumerate(methods):
        ax = axes[k // ncol][k % ncol]
        md = per[method]
        m = md["measures"]["R"]
        ok = m["ok"]
        a1, a2 = md["axes"]
        b1, b2 = _bin_index(a1[ok], e1), _bin_index(a2[ok], e2)
        grid = np.full((len(e1) - 1, len(e2) - 1), np.nan)
        err = np.abs(m["e"][ok])
        for i in range(grid.shape[0]):
            for j in range(grid.shape[1]):
                sel = (b1 == i) & (b2 == j)
                if sel.sum() >= max(3, MIN_BIN // 2):
                    grid[i, j] = 100 * np.percentile(err[sel], 95)
        im = ax.imshow(grid.T, origin="lower", aspect="auto", cmap="viridis_r")
        for i in range(grid.shape[0]):
            for j in range(grid.shape[1]):
                if np.isfinite(grid[i, j]):
                    ax.text(i, j, f"{grid[i, j]:.1f}", ha="center", va="center", fontsize=7,
                            color="white" if grid[i, j] > np.nanmax(grid) / 2 else "black")
        ax.set_xticks(np.arange(len(e1)) - 0.5)
        ax.set_xticklabels([f"{v:g}" for v in e1], fontsize=7)
        ax.set_yticks(np.arange(len(e2)) - 0.5)
        ax.set_yticklabels([f"{v:g}" for v in e2], fontsize=7)
        ax.set_xlabel(ax_spec[0][0], fontsize=8)
        ax.set_ylabel(ax_spec[1][0], fontsize=8)
        ax.set_title(f"{method}: p95 |e_R| %", fontsize=9)
        fig.colorbar(im, ax=ax)
    for k in range(len(methods), nrow * ncol):
        axes[k // ncol][k % ncol].axis("off")
    fig.suptitle(f"{fam} {variant}".strip(), fontsize=10)
    fig.tight_layout()
    path = os.path.join(out_dir, f"domain_{fam}{'_' + variant if variant else ''}.png")
    fig.savefig(path, dpi=90)
    plt.close(fig)
    return [path]


def write_domain_report(res: Mapping[str, Any], out_dir: str = "validation-report", *,
                        plots: bool = True) -> dict[str, str]:
    """Write ``domain.md``, ``domain.html`` and the heat maps to ``out_dir``."""
    from .report import _write_md_html

    os.makedirs(out_dir, exist_ok=True)
    figs: dict[str, list[str]] = {}
    note = ""
    if plots:
        try:
            import matplotlib  # noqa: F401
        except ImportError:
            note = "\n*(heat maps skipped: matplotlib is not installed; pip install matplotlib)*\n"
        else:
            for fam, d in res.items():
                for variant, per in d["errors"].items():
                    figs[f"{fam}/{variant}"] = _heatmaps(fam, variant, per, out_dir)
    md = domain_markdown(res, figs) + note
    md_path, html_path = _write_md_html(md, out_dir, "domain")
    return {"md": md_path, "html": html_path, "summary": md}
