"""The validation report: every model against the simulator, with plots and the accuracy targets.

:func:`run_validation` simulates the grids of :func:`validation.targets.grids`
(LoPC; INI with one INI per cluster, with two INIs under each dispatch
discipline, and with deterministic / Erlang INI service; the Fixed, Floating
and Single policies; PDQ's shared and partitioned queues) through
:func:`validation.compare.compare_grid`, and sets every model method against
the same simulations.  :func:`write_report` writes ``report.md``,
``report.html`` and one PNG plot per grid (model curves, simulated points with
95% error bars; needs matplotlib) and returns the Markdown summary that the
``smp-contention validate`` command prints.

Examples
--------
>>> from validation.report import run_validation
>>> res = run_validation(quick=True, only=("pdq",), cycles_scale=0.1, executor="serial",
...                      progress=False)
>>> sorted(res.grids)
['pdq/partitioned', 'pdq/shared']
"""

from __future__ import annotations

import dataclasses
import html
import os
import time
from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np

from .compare import GridComparison, compare_grid
from .targets import TargetResult, evaluate, grids, policy_ratios, targets_table

__all__ = ["ValidationResults", "run_validation", "summary_markdown", "errors_table",
           "write_report", "best_method"]


@dataclass(frozen=True, kw_only=True)
class ValidationResults:
    """Everything one validation run measured.

    Attributes
    ----------
    grids : dict of str to GridComparison
        ``"<grid>/<method>"`` (e.g. ``"lopc/mva"``, ``"ini/best"``,
        ``"policy/floating"``, ``"pdq/shared"``).
    targets : list of TargetResult
    quick : bool
    seed : int
    wall_time : float
        Seconds for the whole run.
    specs : dict
        The grid definitions used (see :func:`validation.targets.grids`).
    """

    grids: dict[str, GridComparison]
    targets: list[TargetResult]
    quick: bool
    seed: int
    wall_time: float
    specs: dict[str, Any] = field(default_factory=dict)

    @property
    def all_met(self) -> bool:
        """True when every evaluated (non-informational) target is met."""
        return all(t.met for t in self.targets if not t.target.informational)

    def target(self, name: str) -> TargetResult:
        """The evaluated target called ``name``."""
        for t in self.targets:
            if t.target.name == name:
                return t
        raise KeyError(f"no target {name!r}")


def best_method(params: Any) -> str:
    """The most accurate model method for a LoPC or INI point.

    ``"mva"`` for LoPC (exact MVA up to ``P = 12``, Linearizer above);
    ``"exact"`` for INI up to 14 threads (``clusters * S``), Linearizer above.

    Examples
    --------
    >>> from models.ini import INIParams
    >>> best_method(INIParams(S=4, W=1000, o=10, O=100)), best_method(INIParams(S=8, W=1, o=1, O=1))
    ('exact', 'linearizer')
    """
    if type(params).__name__ == "LoPCParams":
        return "mva"
    from models.ini import EXACT_MAX_CHAINS
    return "exact" if params.clusters * params.S <= EXACT_MAX_CHAINS else "linearizer"


def _with_method(g: GridComparison, method: str) -> GridComparison:
    """``g`` against another model method; ``"best"`` picks :func:`best_method` per point."""
    if method != "best":
        return g.remodel(method)
    from mva._cost import time_budget

    from .compare import compare
    # the reference methods are slow on purpose (INI Linearizer at 32 threads is estimated
    # at ~90 CPU s); the validation asks for them knowingly
    with time_budget(900):
        comps = tuple(compare(c.params, method=best_method(c.params), simulated=c.simulated,
                              seed=c.seed, cycles=c.cycles) for c in g.comparisons)
    comps = tuple(dataclasses.replace(c, method="best") for c in comps)
    return dataclasses.replace(g, method="best", comparisons=comps)


def run_validation(quick: bool = True, *, seed: int = 0, executor: Any = None,
                   workers: int | None = None, progress: bool = True,
                   only: Sequence[str] | None = None, cycles_scale: float = 1.0,
                   store: str | os.PathLike[str] | None = None) -> ValidationResults:
    """Simulate the validation grids and compare every model method.

    Parameters
    ----------
    quick : bool
        The CI-sized grid (default) or the full one.
    seed : int
        Base seed (each point's seed derives from it and the point).
    executor, workers
        Passed to :func:`mva.sweep` (default: a local process pool).
    progress : bool
        On a terminal, one progress bar per simulated grid, labelled with its
        name and ``[k/n]`` over the whole run; otherwise one line per finished
        grid on standard error.  ``False``: silent.
    only : sequence of str, optional
        Grid names to run (``"lopc"``, ``"ini"``, ``"ini-dispatch"``,
        ``"ini-cs2"``, ``"policy"``, ``"pdq"``); default all.
    cycles_scale : float
        Multiplier of every grid's simulated requests.
    store : path, optional
        Directory for SQLite sweep stores (one per grid): an interrupted run
        resumes.

    Returns
    -------
    ValidationResults
    """
    from mva.progress import stage

    t0 = time.perf_counter()
    specs = grids(quick)
    names = list(specs) if only is None else list(only)
    unknown = [n for n in names if n not in specs]
    if unknown:
        raise ValueError(f"only: unknown grid(s) {unknown}; available: {', '.join(specs)}")
    out: dict[str, GridComparison] = {}
    # one simulated sweep per policy/PDQ method, one per other grid (its methods share it)
    n_stages = sum(len(specs[n]["methods"]) if n.startswith("policy") or n == "pdq" else 1
                   for n in names)
    k = 0

    def run(name: str, params: list[Any], method: str) -> GridComparison:
        spec = specs[name]
        st = None
        if store is not None:
            os.makedirs(store, exist_ok=True)
            st = os.path.join(os.fspath(store), f"{name}-{method}.sqlite")
        cyc = max(200, int(spec["cycles"] * cycles_scale))
        return compare_grid(params, method=method, cycles=cyc, seed=seed, executor=executor,
                            workers=workers, progress=progress, store=st,
                            title=f"{spec['title']} [{method}]")

    for name in names:
        spec = specs[name]
        methods = spec["methods"]
        if name.startswith("policy") or name == "pdq":
            for m in methods:
                params = spec["single"] if m == "single" else spec["params"]
                k += 1
                with stage(f"{name} [{m}] ({len(params)} points)", k, n_stages, enable=progress):
                    out[f"{name}/{m}"] = run(name, params, m)
            continue
        k += 1
        with stage(f"{name} ({len(spec['params'])} points, {len(methods)} model methods)", k,
                   n_stages, enable=progress):
            base = run(name, spec["params"], "mva" if name == "lopc" else "schweitzer")
            for m in methods:
                g = base if m == base.method else _with_method(base, m)
                out[f"{name}/{m}"] = dataclasses.replace(
                    g, title=f"{spec['title']} [{m}]")
            if name == "lopc":
                out["lopc/best"] = dataclasses.replace(out["lopc/mva"], method="best",
                                                       title=f"{spec['title']} [best = mva]")
    ev = evaluate(out)
    return ValidationResults(grids=out, targets=ev, quick=quick, seed=seed,
                             wall_time=time.perf_counter() - t0, specs=specs)


# ---------------------------------------------------------------------------
# text
# ---------------------------------------------------------------------------

def errors_table(res: ValidationResults) -> Any:
    """Per grid and method: mean and max absolute relative error of the main measures.

    Parameters
    ----------
    res : ValidationResults
        From :func:`run_validation`.

    Returns
    -------
    mva.table.Table
        One row per grid, method and measure (``R``; also ``Q_o`` for INI).
    """
    from mva.table import Table
    cols: dict[str, list[Any]] = {"grid": [], "method": [], "points": [], "measure": [],
                                  "mean_|rel|_%": [], "max_|rel|_%": [], "within_ci_%": []}
    for key, g in res.grids.items():
        if key == "lopc/best":
            continue
        name, method = key.split("/", 1)
        for m in (("R", "Q_o") if g.family == "ini" else ("R",)):
            rel = np.abs(g.values(m, "rel_error"))
            cols["grid"].append(name)
            cols["method"].append(method)
            cols["points"].append(len(g))
            cols["measure"].append(m)
            cols["mean_|rel|_%"].append(100 * float(np.nanmean(rel)))
            cols["max_|rel|_%"].append(100 * float(np.nanmax(rel)))
            cols["within_ci_%"].append(100 * float(np.mean(g.values(m, "within_ci"))))
    return Table.from_columns(cols, title="Errors against the simulator",
                              formats={"mean_|rel|_%": ".2f", "max_|rel|_%": ".2f",
                                       "within_ci_%": ".0f"})


def _policy_table(res: ValidationResults, group: str = "policy") -> Any | None:
    from mva.table import Table
    if not all(f"{group}/{k}" in res.grids for k in ("fixed", "floating", "single")):
        return None
    r = policy_ratios(res.grids, group)
    cols: dict[str, Any] = {"p": r["p"], "U": r["U"]}
    for k in r["model"]:
        cols[f"{k} model"] = r["model"][k]
        cols[f"{k} sim"] = r["sim"][k]
        cols[f"{k} ci95"] = r["sim_hw"][k]
        cols[f"{k} err_%"] = 100 * r["rel_error"][k]
    cols["winner model"] = r["winner_model"]
    cols["winner sim"] = r["winner_sim"]
    fm = {c: ".4f" for c in cols if c.endswith(("model", "sim", "ci95"))}
    fm.update({c: "+.2f" for c in cols if c.endswith("err_%")})
    return Table.from_columns(cols, title=f"Execution-time ratios ({group})", formats=fm)


def summary_markdown(res: ValidationResults) -> str:
    """The Markdown summary printed by ``smp-contention validate``."""
    tg = [t for t in res.targets if not t.target.informational]
    met = sum(t.met for t in tg)
    head = (f"# Validation: models against the simulator ({'quick' if res.quick else 'full'}, "
            f"seed {res.seed})\n\n{met} of {len(tg)} accuracy targets met "
            "(rows in parentheses are reported, not promised); "
            f"{sum(len(g) for k, g in res.grids.items() if k != 'lopc/best')} comparisons "
            f"in {res.wall_time:.0f} s.\n")
    parts = [head, "## Accuracy targets\n\n" + targets_table(res.targets).render("md"),
             "## Errors by grid and method\n\n" + errors_table(res).render("md")]
    return "\n\n".join(parts) + "\n"


# ---------------------------------------------------------------------------
# plots
# ---------------------------------------------------------------------------

_PLOT_MEASURE = {"lopc": "R", "ini": "R", "ini-dispatch": "R", "ini-cs2": "R", "pdq": "R"}


def _plot_grid(name: str, res: ValidationResults, out_dir: str) -> list[str]:
    """One PNG per grid: the main measure against the x parameter, one panel per series value."""
    import matplotlib
    matplotlib.use("Agg", force=False)
    import matplotlib.pyplot as plt

    spec = res.specs[name]
    keys = [k for k in res.grids if k.split("/")[0] == name and k != "lopc/best"]
    if not keys:
        return []
    files = []
    measures = ["R", "Q_o"] if name.startswith("ini") else ["R"]
    if name.startswith("policy"):
        measures = ["T"]
    for measure in measures:
        g0 = res.grids[keys[0]]
        series_name = spec["series"]
        xname = spec["x"]
        series = sorted({p[series_name] for p in g0.points}, key=str)
        fig, axes = plt.subplots(1, len(series), figsize=(4.2 * len(series), 3.4), squeeze=False)
        for ax, sv in zip(axes[0], series):
            sim_done = False
            for key in keys:
                g = res.grids[key]
                sel = [i for i, p in enumerate(g.points) if p[series_name] == sv]
                if not sel:
                    continue
                x = np.array([g.points[i][xname] for i in sel], dtype=float)
                order = np.argsort(x)
                mv = g.values(measure, "model")[sel][order]
                ax.plot(x[order], mv, marker=".", label=f"model: {key.split('/', 1)[1]}")
                per_variant = name.startswith("policy") or name == "pdq"
                if per_variant or not sim_done:
                    sv_ = g.values(measure, "sim")[sel][order]
                    hw = g.values(measure, "half_width")[sel][order]
                    lab = f"sim: {key.split('/', 1)[1]}" if per_variant else "simulation"
                    ax.errorbar(x[order], sv_, yerr=hw, fmt="o", ms=4, capsize=3,
                                mfc="none", label=lab)
                    sim_done = True
            ax.set_title(f"{series_name} = {sv}", fontsize=9)
            ax.set_xlabel(xname)
            ax.set_ylabel(measure + (" (cycles)" if measure in ("R", "T") else ""))
            ax.grid(alpha=0.3)
        axes[0][0].legend(fontsize=7)
        fig.suptitle(spec["title"], fontsize=10)
        fig.tight_layout()
        fn = f"{name}_{measure}.png"
        fig.savefig(os.path.join(out_dir, fn), dpi=90)
        plt.close(fig)
        files.append(fn)
    if name.startswith("policy") and all(f"{name}/{k}" in res.grids
                                         for k in ("fixed", "floating", "single")):
        r = policy_ratios(res.grids, name)
        ps = sorted(set(r["p"].tolist()))
        fig, axes = plt.subplots(1, len(ps), figsize=(4.2 * len(ps), 3.4), squeeze=False)
        for ax, p in zip(axes[0], ps):
            sel = r["p"] == p
            for k in r["model"]:
                line, = ax.plot(r["U"][sel], r["model"][k][sel], marker=".", label=f"model {k}")
                ax.errorbar(r["U"][sel], r["sim"][k][sel], yerr=r["sim_hw"][k][sel], fmt="o",
                            mfc="none", color=line.get_color(), capsize=3, label=f"sim {k}")
            ax.axhline(1.0, color="grey", lw=0.8)
            ax.set_title(f"p = {p}", fontsize=9)
            ax.set_xlabel("U (compute utilization)")
            ax.set_ylabel("execution-time ratio")
            ax.grid(alpha=0.3)
        axes[0][0].legend(fontsize=7)
        fig.suptitle("Execution-time ratios to Fixed", fontsize=10)
        fig.tight_layout()
        fig.savefig(os.path.join(out_dir, f"{name}_ratios.png"), dpi=90)
        plt.close(fig)
        files.append(f"{name}_ratios.png")
    return files


# ---------------------------------------------------------------------------
# report files
# ---------------------------------------------------------------------------

def _md_to_html(md: str) -> str:
    """Minimal Markdown (headings, pipe tables, images, paragraphs) to HTML."""
    out: list[str] = []
    lines = md.splitlines()
    i = 0
    while i < len(lines):
        ln = lines[i]
        if ln.startswith("#"):
            level = len(ln) - len(ln.lstrip("#"))
            out.append(f"<h{level}>{html.escape(ln[level:].strip())}</h{level}>")
        elif ln.startswith("|"):
            rows = []
            while i < len(lines) and lines[i].startswith("|"):
                rows.append([c.strip() for c in lines[i].strip().strip("|").split("|")])
                i += 1
            i -= 1
            body = [r for j, r in enumerate(rows) if j != 1]
            t = ["<table>", "<tr>" + "".join(f"<th>{html.escape(c)}</th>" for c in body[0])
                 + "</tr>"]
            for r in body[1:]:
                cls = ' class="bad"' if "NOT MET" in r else ""
                t.append(f"<tr{cls}>" + "".join(f"<td>{html.escape(c)}</td>" for c in r)
                         + "</tr>")
            t.append("</table>")
            out.append("\n".join(t))
        elif ln.startswith("!["):
            alt, src = ln[2:].split("](", 1)
            out.append(f'<p><img src="{html.escape(src.rstrip(")"))}" '
                       f'alt="{html.escape(alt)}"></p>')
        elif ln.strip():
            out.append(f"<p>{html.escape(ln)}</p>")
        i += 1
    style = ("body{font-family:sans-serif;max-width:1200px;margin:2em auto}"
             "table{border-collapse:collapse;margin:1em 0;font-size:90%}"
             "td,th{border:1px solid #ccc;padding:2px 6px;text-align:right}"
             "tr.bad td{background:#fdd}img{max-width:100%}")
    return ("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\">"
            f"<title>Validation report</title><style>{style}</style></head><body>\n"
            + "\n".join(out) + "\n</body></html>\n")


def write_report(res: ValidationResults, out_dir: str | os.PathLike[str] = "validation-report",
                 *, plots: bool = True, details: bool = True) -> dict[str, str]:
    """Write ``report.md``, ``report.html`` and PNG plots to ``out_dir``.

    Parameters
    ----------
    res : ValidationResults
    out_dir : path
        Created if missing.
    plots : bool
        Draw plots (needs matplotlib; skipped with a note when absent).
    details : bool
        Include the per-point tables.

    Returns
    -------
    dict
        ``"md"``, ``"html"`` paths and ``"summary"`` (the Markdown summary).
    """
    out_dir = os.fspath(out_dir)
    os.makedirs(out_dir, exist_ok=True)
    summary = summary_markdown(res)
    parts = [summary]
    names = list(dict.fromkeys(k.split("/")[0] for k in res.grids))
    have_mpl = True
    if plots:
        try:
            import matplotlib  # noqa: F401
        except ImportError:
            have_mpl = False
            parts.append("*(plots skipped: matplotlib is not installed; pip install matplotlib)*")
    for name in names:
        spec = res.specs[name]
        parts.append(f"## {spec['title']}")
        if plots and have_mpl:
            for fn in _plot_grid(name, res, out_dir):
                parts.append(f"![{name}]({fn})")
        pt = _policy_table(res, name) if name.startswith("policy") else None
        if pt is not None:
            parts.append(f"### {pt.title}\n\n" + pt.render("md"))
        if details:
            for key, g in res.grids.items():
                if key.split("/")[0] != name or key == "lopc/best":
                    continue
                ms = ["R", "Q_o", "U_o"] if g.family == "ini" else \
                    (["R", "T", "U_pp", "P_int"] if g.family == "policy" else None)
                parts.append(f"### {key}\n\n" + g.summary(ms).render("md"))
                parts.append(g.table(["R"] if g.family != "policy" else ["T"]).render("md"))
    md = "\n\n".join(parts) + "\n"
    md_path, html_path = _write_md_html(md, out_dir, "report")
    return {"md": md_path, "html": html_path, "summary": summary}


def _write_md_html(md: str, out_dir: str, stem: str) -> tuple[str, str]:
    """Write ``<stem>.md`` and its HTML rendering ``<stem>.html`` in ``out_dir``; their paths."""
    md_path = os.path.join(out_dir, f"{stem}.md")
    html_path = os.path.join(out_dir, f"{stem}.html")
    with open(md_path, "w", encoding="utf-8") as fh:
        fh.write(md)
    with open(html_path, "w", encoding="utf-8") as fh:
        fh.write(_md_to_html(md))
    return md_path, html_path
