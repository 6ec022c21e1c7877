"""Invariants of the documentation that are cheap to check without Sphinx.

The docs' numbers must come from the code.  Sphinx (``sphinx-build -W``)
checks that the pages build; these tests check, under the README's test
command, that

* every piece of generated content of the guide -- ``.. model-table::``,
  ``.. computed-table::``, ``.. cli-output::``, ``.. cli-help::`` and
  ``.. plot::`` -- evaluates with the current code, through the same
  Sphinx-free functions the directives call (``docs/_ext/doc_tables.py``);
  on the other pages the targets resolve and the code compiles;
* every tutorial (``docs/guide/tutorial_*.rst``) shows at least one table or
  figure generated from the code and runs at least one doctest (the ``>>>``
  examples themselves run because setup.cfg collects ``docs/**/*.rst`` with
  ``--doctest-glob``);
* the guide pages written for this site contain no hand-typed numeric
  table (heuristic below);
* the figures page redraws the seed figures from the models, and the
  command-line reference covers every subcommand.

Heuristic for "hand-typed numeric table": outside directive bodies, a reST
simple table (a border line of two or more ``=`` runs separated by spaces),
a grid table (a ``+---+`` border) or a ``list-table`` / ``csv-table``
directive whose text contains a digit.  Tables of names and units without
digits are allowed; numbers in running text and doctest outputs are not
tables (doctest outputs are checked by the doctests).
"""

from __future__ import annotations

import configparser
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
GUIDE = DOCS / "guide"
sys.path.insert(0, str(DOCS / "_ext"))

import doc_tables  # noqa: E402  (docs/_ext, no Sphinx needed)

TUTORIALS = sorted(GUIDE.glob("tutorial_*.rst"))
#: pages of the guide written for this site, held to the no-hand-typed-table rule
GENERATED_PAGES = [*TUTORIALS, GUIDE / "figures.rst", GUIDE / "00_getting_started.rst",
                   GUIDE / "cli.rst", GUIDE / "sweeps.rst",
                   # reference and validation pages whose result tables are generated
                   DOCS / "validation" / "reference_data.rst", DOCS / "validation" / "accuracy.rst",
                   DOCS / "models" / "cost.rst", DOCS / "models" / "pdq.rst",
                   DOCS / "models" / "policy.rst", DOCS / "models" / "layers.rst",
                   DOCS / "models" / "mechanisms.rst", DOCS / "models" / "lopc.rst",
                   DOCS / "engine" / "01_overview.rst"]
#: hand-written tables that legitimately remain, by page and the first word of their
#: header row: INPUT tables (parameters with units and defaults, method descriptions), not
#: results -- plus one labelled measurement record.
ALLOWED_TABLES = {
    # parameter tables: the model classes' tables come from ``.. param-table::``
    # (mva.params declarations); cost's ``f`` is a function argument
    ("models/cost.rst", "name"),
    # engine: the solver methods and when to use them (descriptive text with a few limits)
    ("engine/01_overview.rst", "method"),
    # validation grids (inputs of the simulation runs)
    ("validation/accuracy.rst", "grid"),
}
GENERATORS = ("model-table", "computed-table", "plot", "cli-output")
ALL_PAGES = sorted(p for p in DOCS.rglob("*.rst")
                   if "_build" not in p.parts and "generated" not in p.parts)


def _blocks(names: tuple[str, ...], pages: list[Path] = ALL_PAGES) -> list[tuple[Path, dict]]:
    return [(p, b) for p in pages for b in doc_tables.directive_blocks(p.read_text(), names)]


def _id(item: tuple[Path, dict]) -> str:
    p, b = item
    return f"{p.relative_to(DOCS)}:{b['line']}"


# ---------------------------------------------------------------------------
# the test command collects the reST doctests
# ---------------------------------------------------------------------------

def test_pytest_collects_rst_doctests():
    cfg = configparser.ConfigParser()
    cfg.read(ROOT / "setup.cfg")
    section = cfg["tool:pytest"]
    assert "docs" in section["testpaths"].split()
    assert "--doctest-glob=*.rst" in section["addopts"].split()
    conftest = (DOCS / "conftest.py").read_text()
    for ignored in ("conf.py", "_ext/*", "_build/*"):
        assert ignored in conftest


# ---------------------------------------------------------------------------
# tutorials
# ---------------------------------------------------------------------------

QUESTIONS = {  # model module each tutorial must exercise
    "lopc": "models.lopc", "ini": "models.ini", "policy": "models.policy",
    "cost": "models.cost", "pdq": "models.pdq", "layers": "models.layers",
    "mechanisms": "models.mechanisms",
}


def test_one_tutorial_per_question():
    stems = {p.stem.split("_", 2)[-1] for p in TUTORIALS}
    assert set(QUESTIONS) <= stems


@pytest.mark.parametrize("page", TUTORIALS, ids=lambda p: p.name)
def test_tutorial_generates_its_numbers(page):
    text = page.read_text()
    names = [b["name"] for b in doc_tables.directive_blocks(text, GENERATORS)]
    assert names, f"{page.name}: no model-table, computed-table, plot or cli-output"
    assert any(n in ("model-table", "computed-table") for n in names), \
        f"{page.name}: no generated table"
    assert "plot" in names or "cli-output" in names
    assert re.search(r"^>>> ", text, re.M), f"{page.name}: no doctest example"
    module = QUESTIONS[page.stem.split("_", 2)[-1]]
    assert module.split(".")[1] in text


_SIMPLE_BORDER = re.compile(r"^\s*=+(?: +=+)+\s*$")
_GRID_BORDER = re.compile(r"^\s*\+[-=]+(?:\+[-=]+)*\+\s*$")
_TABLE_DIRECTIVE = re.compile(r"^\s*\.\.\s+(list-table|csv-table|table)::")


def hand_typed_tables(text: str) -> list[int]:
    """Line numbers of hand-typed tables containing digits (see module docstring)."""
    lines = text.splitlines()
    skip: set[int] = set()  # bodies of directives and literal blocks
    for b in doc_tables.directive_blocks(text):
        if b["name"] in ("list-table", "csv-table", "table"):
            continue
        start = b["line"]
        end = start
        indent = len(lines[start - 1]) - len(lines[start - 1].lstrip())
        while end < len(lines) and (not lines[end].strip()
                                    or len(lines[end]) - len(lines[end].lstrip()) > indent):
            end += 1
        skip.update(range(start, end + 1))
    for i, ln in enumerate(lines, 1):  # "::" literal blocks
        if ln.rstrip().endswith("::") and not ln.lstrip().startswith(".."):
            j = i
            while j < len(lines) and (not lines[j].strip() or lines[j].startswith((" ", "\t"))):
                j += 1
                skip.add(j)
    bad: list[int] = []
    i = 0
    while i < len(lines):
        n = i + 1
        ln = lines[i]
        if n not in skip and (_SIMPLE_BORDER.match(ln) or _GRID_BORDER.match(ln)):
            j = i + 1
            while j < len(lines) and lines[j].strip():
                j += 1
            if any(re.search(r"\d", x) for x in lines[i:j]):
                bad.append(n)
            i = j
            continue
        m = _TABLE_DIRECTIVE.match(ln)
        if m:
            j = i + 1
            while j < len(lines) and (not lines[j].strip() or lines[j].startswith((" ", "\t"))):
                j += 1
            if any(re.search(r"\d", x) for x in lines[i + 1:j]):
                bad.append(n)
            i = j
            continue
        i += 1
    return bad


def test_hand_typed_table_heuristic():
    typed = "Text\n\n=== ===\nN   R\n=== ===\n1   2.5\n=== ===\n"
    names = "Text\n\n=== ======\nname unit\n=== ======\nW   cycles\n=== ======\n"
    listed = ".. list-table::\n\n   * - N\n     - 4\n"
    generated = ".. model-table:: models.lopc.solve\n   :grid: W=1,2\n"
    grid = "+---+---+\n| 1 | 2 |\n+---+---+\n"
    assert hand_typed_tables(typed) == [3]
    assert hand_typed_tables(names) == []
    assert hand_typed_tables(listed) == [1]
    assert hand_typed_tables(generated) == []
    assert hand_typed_tables(grid) == [1]
    assert hand_typed_tables("Title\n=====\n\n42 is a number.\n") == []


def _table_header(lines: list[str], n: int) -> str:
    """First word of the header row of the table starting at line ``n`` (1-based)."""
    for ln in lines[n:n + 6]:
        words = re.sub(r"[*|+=:`-]", " ", ln).split()
        if words and not ln.lstrip().startswith(":"):
            return words[0].strip('"')
    return ""


@pytest.mark.parametrize("page", GENERATED_PAGES, ids=lambda p: str(p.relative_to(DOCS)))
def test_no_hand_typed_numeric_tables(page):
    text = page.read_text()
    lines = text.splitlines()
    rel = page.relative_to(DOCS).as_posix()
    bad = [n for n in hand_typed_tables(text)
           if (rel, _table_header(lines, n)) not in ALLOWED_TABLES]
    assert bad == [], \
        (f"{rel}: numeric table typed by hand at lines {bad}; generate it (model-table, "
         "computed-table)")


def test_allow_list_is_used():
    """Every allow-list entry still names a hand-written table (no stale exemptions)."""
    found = set()
    for page in GENERATED_PAGES:
        lines = page.read_text().splitlines()
        rel = page.relative_to(DOCS).as_posix()
        found |= {(rel, _table_header(lines, n)) for n in hand_typed_tables("\n".join(lines))}
    assert ALLOWED_TABLES <= found, sorted(ALLOWED_TABLES - found)


# ---------------------------------------------------------------------------
# figures page and CLI reference
# ---------------------------------------------------------------------------

def test_figures_page_redraws_the_seed_figures():
    text = (GUIDE / "figures.rst").read_text()
    plots = [b["content"] for b in doc_tables.directive_blocks(text, ("plot",))]
    assert len(plots) >= 4
    for title in ("Figure 3", "Figure 4", "Figure 5", "Figure 6-3"):
        assert title in text
    code = "\n".join(plots)
    for call in ("policy.compare", "cost.policy_cost", "ini.solve", "FIGURE_6_3"):
        assert call in code
    assert not re.search(r"\[\s*\d+\.\d+\s*,", code), "figure data typed by hand"


def _documented_cli() -> set[tuple[str, ...]]:
    text = (GUIDE / "cli.rst").read_text()
    return {tuple(b["argument"].split()) for b in doc_tables.directive_blocks(text, ("cli-help",))}


def test_cli_reference_covers_every_subcommand():
    documented = _documented_cli()
    assert () in documented
    for cmd in doc_tables.cli_subcommands():
        assert (cmd,) in documented, f"docs/guide/cli.rst: no '.. cli-help:: {cmd}'"
        for sub in doc_tables.cli_subcommands([cmd]):
            assert (cmd, sub) in documented, f"docs/guide/cli.rst: no '.. cli-help:: {cmd} {sub}'"


def test_guide_order():
    """Getting started sorts first in the globbed toctree, the bibliography last."""
    pages = sorted(p.name for p in GUIDE.glob("*.rst"))
    assert pages[0] == "00_getting_started.rst" and pages[-1] == "zz_bibliography.rst"


def test_getting_started_links_the_trace_format():
    text = (GUIDE / "00_getting_started.rst").read_text()
    assert ":doc:`../validation/traces`" in text
    assert (DOCS / "validation" / "traces.rst").exists()


# ---------------------------------------------------------------------------
# generated items evaluate with the current code
# ---------------------------------------------------------------------------
# The guide's items are evaluated in full (they are cheap).  Items on the
# other pages (model reference, engine, validation) are evaluated by the
# Sphinx build; here they are only checked statically -- the target and
# parameter class import, the options parse -- so that a renamed function
# fails under pytest too without repeating their computations.

GUIDE_PAGES = sorted(GUIDE.glob("*.rst"))
OTHER_PAGES = [p for p in ALL_PAGES if p not in GUIDE_PAGES]


@pytest.mark.parametrize("item", _blocks(("model-table",), OTHER_PAGES), ids=_id)
def test_other_model_tables_resolve(item):
    _, b = item
    assert callable(doc_tables.resolve(b["argument"]))
    if b["options"].get("params"):
        assert callable(doc_tables.resolve(b["options"]["params"]))
    for key in ("grid", "zip", "fixed", "options"):
        doc_tables.split_assignments(b["options"].get(key, ""))
    doc_tables.split_formats(b["options"].get("formats", ""))


@pytest.mark.parametrize("item", _blocks(("computed-table", "plot"), OTHER_PAGES), ids=_id)
def test_other_code_blocks_compile(item):
    _, b = item
    compile(b["content"], _id(item), "exec")


@pytest.mark.parametrize("item", _blocks(("model-table",), GUIDE_PAGES), ids=_id)
def test_model_tables_evaluate(item):
    _, b = item
    table = doc_tables.model_table(b["argument"], b["options"])
    assert len(table) >= 1
    rst = doc_tables.rst_safe(table).to_rst()
    assert rst.count("\n") >= 4


@pytest.mark.parametrize("item", _blocks(("computed-table",), GUIDE_PAGES), ids=_id)
def test_computed_tables_evaluate(item):
    _, b = item
    tables = doc_tables.computed_tables(b["content"])
    assert tables and all(len(t) >= 1 for t in tables)


@pytest.mark.parametrize("item", _blocks(("cli-output",)), ids=_id)
def test_cli_outputs_run(item):
    _, b = item
    out = doc_tables.cli_output(b["argument"])
    assert "|" in out or "," in out  # a table was printed


@pytest.mark.parametrize("item", _blocks(("cli-help",)), ids=_id)
def test_cli_helps_exist(item):
    _, b = item
    text = doc_tables.cli_help(b["argument"].split(), b["options"].get("register"))
    assert text.startswith("usage: smp-contention")


@pytest.mark.parametrize("item", _blocks(("plot",), GUIDE_PAGES), ids=_id)
def test_plot_code_runs(item):
    import matplotlib  # in the test extra

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    _, b = item
    ns: dict = {"__name__": "__plot__"}
    exec("import numpy as np\nfrom matplotlib import pyplot as plt\n", ns)  # plot_pre_code
    try:
        exec(compile(b["content"], _id(item), "exec"), ns)  # noqa: S102 - our docs
        assert plt.get_fignums(), "the plot code drew no figure"
    finally:
        plt.close("all")


# ---------------------------------------------------------------------------
# the directive helpers
# ---------------------------------------------------------------------------

def test_split_assignments_and_formats():
    assert doc_tables.split_assignments('N=1,2, name="a,b", t=(1, 2)') == \
        {"N": [1, 2], "name": "a,b", "t": (1, 2)}
    assert doc_tables.split_formats('R=.1f, Q=".3f"') == {"R": ".1f", "Q": ".3f"}
    with pytest.raises(ValueError, match="literals"):
        doc_tables.split_assignments("N=os.system")
    with pytest.raises(ValueError):
        doc_tables.split_formats("R=.1q")


def test_derived_expressions_are_arithmetic_only():
    import numpy as np

    d = doc_tables.parse_derived("K = int(sqrt(S)); W = 2 * K ** 2", {"S": np.array([4, 9])})
    assert d["K"].tolist() == [2, 3] and d["W"].tolist() == [8, 18]
    for bad in ("x = __import__('os')", "x = S.__class__", "x = open('f')", "x = [1][0]"):
        with pytest.raises(ValueError):
            doc_tables.parse_derived(bad, {"S": 1})


def test_model_table_zip_derived_and_hidden_names():
    t = doc_tables.model_table("models.lopc.solve", {
        "params": "models.lopc.LoPCParams", "zip": "W=0,1000, _label=1,2",
        "grid": "o=50,100", "derived": "L = 10 * _label", "fixed": "P=16",
        "columns": "W, o, L, R", "headers": "W, o, L, round trip"})
    assert t.columns == ("W", "o", "L", "round trip")
    assert t["W"].tolist() == [0, 0, 1000, 1000] and t["o"].tolist() == [50, 100, 50, 100]
    assert t["L"].tolist() == [10, 10, 20, 20]
    with pytest.raises(ValueError, match="equal lengths"):
        doc_tables.model_table("models.lopc.solve", {"zip": "W=0,1, o=1,2,3"})


def test_cli_output_reports_bad_arguments():
    with pytest.raises(ValueError, match="unrecognized"):
        doc_tables.cli_output("lopc --no-such-option 1")


@pytest.mark.parametrize("item", _blocks(("param-table", "param-glossary")), ids=_id)
def test_parameter_tables_render(item):
    _, b = item
    if b["name"] == "param-table":
        t = doc_tables.param_table(b["argument"], b["options"].get("fields"))
    else:
        t = doc_tables.parameter_glossary(b["argument"].split() or None)
        assert "MechanismParams" in t.to_rst() and "LoPCParams" in t.to_rst()
    assert "cycles" in t.to_rst() and len(t.to_rst().splitlines()) > 5


def test_figures_mark_saturated_points():
    # issue 20: the Figure 4 redraw showed saturated points (p = 8, null handler) unmarked
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import numpy as np

    from models import policy
    text = (GUIDE / "figures.rst").read_text()
    fig4 = next(b["content"] for b in doc_tables.directive_blocks(text, ("plot",))
                if "fl.execution_time / fx.execution_time" in b["content"])
    ns: dict = {"__name__": "__plot__"}
    exec("import numpy as np\nfrom matplotlib import pyplot as plt\n", ns)
    try:
        exec(compile(fig4, "figures.rst:Figure 4", "exec"), ns)  # noqa: S102 - our docs
        ax = plt.gcf().axes[0]                                    # null-handler
        hollow = sum(len(line.get_xdata()) for line in ax.get_lines()
                     if line.get_marker() == "o" and line.get_markerfacecolor() == "white")
        labels = [t.get_text() for t in ax.get_legend().get_texts()]
    finally:
        plt.close("all")
    U = np.linspace(0.05, 0.95, 19)
    want = 0
    for p in (2, 3, 4, 8):
        prm = policy.preset("null-handler", p=p, U=U, O_int=200)
        want += int(np.sum(policy.solve(prm, "fixed").saturated
                           | policy.solve(prm, "floating").saturated))
    assert want > 0 and hollow == want            # every saturated point (the legend key is empty)
    assert doc_tables.SATURATED_LABEL in labels


# ---------------------------------------------------------------------------
# the built pages: equations render offline, no raw LaTeX leaks into the text
# ---------------------------------------------------------------------------

from html.parser import HTMLParser  # noqa: E402
import os  # noqa: E402
import subprocess  # noqa: E402

#: LaTeX that must never reach a reader as text (outside code and math containers)
RAW_TEX = re.compile(r"\\\[|\\\]|\\\(|\\begin\{|\\end\{|\\frac\{|\\lambda\b")


class _PageText(HTMLParser):
    """Text of a page outside code, scripts and the containers MathJax typesets.

    ``sphinx.ext.mathjax`` writes each equation as ``\\[...\\]`` / ``\\(...\\)`` inside
    ``<div class="math">`` / ``<span class="math">``; the bundled MathJax replaces those
    containers when the page loads.  TeX anywhere else is shown to the reader as-is.
    """

    SKIP_TAGS = {"pre", "code", "script", "style", "title", "textarea"}

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.stack: list[bool] = []          # per open element: does it hide its text?
        self.text: list[str] = []
        self.math = 0                        # number of math containers
        self.scripts: list[str] = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "script" and a.get("src"):
            self.scripts.append(a["src"])
        if tag in ("br", "img", "meta", "link", "input", "hr"):
            return
        classes = (a.get("class") or "").split()
        hide = tag in self.SKIP_TAGS or "math" in classes or "highlight" in classes
        self.math += "math" in classes and tag in ("div", "span")
        self.stack.append(hide)

    def handle_endtag(self, tag):
        if tag in ("br", "img", "meta", "link", "input", "hr"):
            return
        if self.stack:
            self.stack.pop()

    def handle_data(self, data):
        if not any(self.stack):
            self.text.append(data)


def _parse_page(path: Path) -> _PageText:
    p = _PageText()
    p.feed(path.read_text(encoding="utf-8"))
    return p


@pytest.fixture(scope="session")
def built_html(tmp_path_factory) -> Path:
    """HTML of the documentation, built once per session.

    ``SMP_DOCS_HTML=<dir>`` reuses an existing HTML build (e.g. the CI's full
    ``sphinx -W`` build).  Otherwise the pages are built with the directives that run the
    models replaced by a note (``SMP_DOCS_SKIP_GENERATED=1``, see ``docs/conf.py``): the
    equations, docstrings and prose are all there, in ~20 s of CPU instead of minutes.
    """
    reuse = os.environ.get("SMP_DOCS_HTML")
    if reuse:
        out = Path(reuse)
        assert (out / "index.html").exists(), f"SMP_DOCS_HTML={reuse!r} holds no HTML build"
        return out
    out = tmp_path_factory.mktemp("docs_html")
    env = {**os.environ, "SMP_DOCS_SKIP_GENERATED": "1"}
    proc = subprocess.run(
        [sys.executable, "-m", "sphinx", "-b", "html", "-q", "-d", str(out / ".doctrees"),
         str(DOCS), str(out)], env=env, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return out


def _html_pages(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*.html")
                  if "_static" not in p.parts and "_modules" not in p.parts
                  and "_sources" not in p.parts)


def test_raw_tex_detector_sees_leaks():
    p = _PageText()
    p.feed('<p>see \\[R = R_w\\] and <code>\\begin{x}</code></p>'
           '<div class="math notranslate">\\[\\begin{aligned} a \\end{aligned}\\]</div>')
    text = "".join(p.text)
    assert RAW_TEX.search(text) and "\\begin" not in text and p.math == 1


def test_no_page_shows_raw_latex(built_html):
    leaks = {}
    for page in _html_pages(built_html):
        text = "".join(_parse_page(page).text)
        found = sorted({m.group(0) for m in RAW_TEX.finditer(text)})
        if found:
            leaks[str(page.relative_to(built_html))] = found
    assert not leaks, f"raw LaTeX in the text of: {leaks}"


def test_equations_render_offline(built_html):
    """Every page with equations loads MathJax from the build itself, never from a network."""
    mathjax_pages = 0
    for page in _html_pages(built_html):
        parsed = _parse_page(page)
        remote = [s for s in parsed.scripts if "://" in s or s.startswith("//")]
        assert not remote, f"{page.name} loads scripts from the network: {remote}"
        if parsed.math:
            mathjax_pages += 1
            local = [s for s in parsed.scripts if "mathjax" in s.lower()]
            assert local, f"{page.relative_to(built_html)} has equations but loads no MathJax"
            for src in local:
                assert (page.parent / src.split("?")[0]).resolve().is_file(), src
    assert mathjax_pages >= 7          # the model pages, the engine pages, the API reference
    assert (built_html / "models" / "lopc.html").exists()
    assert _parse_page(built_html / "models" / "lopc.html").math >= 5


def test_long_code_lines_scroll(built_html):
    css = (built_html / "_static" / "custom-layout.css").read_text()
    assert re.search(r"div\.highlight pre[^{]*\{[^}]*overflow-x:\s*auto", css, re.S)
    page = (built_html / "models" / "lopc.html").read_text()
    assert "custom-layout.css" in page


# ---------------------------------------------------------------------------
# papers by author and year; jargon explained where it appears
# ---------------------------------------------------------------------------

#: a paper cited by its file number ("000" ... "004", "paper 003", "[002]"), not a number
#: such as 1000, 0.001 or "60 000"
PAPER_NUMBER = re.compile(r"(?<![\w.,\-+/])(?<!\d )(000|001|002|003|004)"
                          r"(?![\w%/\-])(?![.,]\d)(?! \d)")


def test_paper_number_pattern():
    assert PAPER_NUMBER.search("as 000 reports") and PAPER_NUMBER.search("(paper 003)")
    assert PAPER_NUMBER.search("Table 1 of 002, generated") and PAPER_NUMBER.search("in 000.")
    for ok in ("1000 cycles", "U = 0.001", "60 000 requests", "2,000,000", "0.002 handlers"):
        assert not PAPER_NUMBER.search(ok), ok


@pytest.mark.parametrize("page", ALL_PAGES, ids=lambda p: str(p.relative_to(DOCS)))
def test_papers_named_by_author_and_year(page):
    hits = [(i + 1, line.strip()) for i, line in enumerate(page.read_text().splitlines())
            if PAPER_NUMBER.search(line)]
    assert not hits, f"papers cited by file number: {hits}"


def test_glossary_defines_the_jargon():
    text = (GUIDE / "glossary.rst").read_text()
    for term in ("SCV", "costup", "``AO``", "``BB+``", "``*200``", "``#100``", "``W`` Worse",
                 "``O`` Original", "saturated", "Falsafi and Wood 1997", "Chong et al. 1998"):
        assert term in text, term


@pytest.mark.parametrize("page, jargon", [
    ("models/ini.rst", "SCV"), ("models/cost.rst", "costup"), ("models/layers.rst", "``AO``"),
    ("models/mechanisms.rst", "``#``"), ("guide/tutorial_7_mechanisms.rst", "``#``")])
def test_jargon_links_to_the_glossary(page, jargon):
    text = (DOCS / page).read_text()
    first = text.index(jargon)
    link = re.search(r":doc:`(\.\./guide/)?glossary`", text[first:first + 600])
    assert link, f"{page}: {jargon} is not explained with a glossary link where it first appears"


def _docstrings():
    """(where, text) of every module docstring and public docstring of mva, models, validation."""
    import importlib
    import inspect
    import pkgutil

    for pkg_name in ("mva", "models", "validation"):
        pkg = importlib.import_module(pkg_name)
        for info in [None, *pkgutil.walk_packages(pkg.__path__, pkg_name + ".")]:
            if info is not None and info.name.endswith("__main__"):
                continue
            mod = pkg if info is None else importlib.import_module(info.name)
            yield mod.__name__, inspect.getdoc(mod) or ""
            for name in getattr(mod, "__all__", ()):
                obj = getattr(mod, name, None)
                if getattr(obj, "__module__", None) != mod.__name__:
                    continue
                yield f"{mod.__name__}.{name}", inspect.getdoc(obj) or ""
                if inspect.isclass(obj):
                    for attr, member in vars(obj).items():
                        if not attr.startswith("_") and callable(member) and member.__doc__:
                            yield f"{mod.__name__}.{name}.{attr}", inspect.getdoc(member)


def test_docstrings_name_papers_by_author_and_year():
    hits = [(where, line.strip()) for where, doc in _docstrings()
            for line in doc.splitlines() if PAPER_NUMBER.search(line)]
    assert not hits, f"papers cited by file number in docstrings: {hits}"


def test_help_texts_name_papers_by_author_and_year():
    import argparse

    from models.cli import build_parser

    def walk(p, path=()):
        yield path, p
        for a in p._actions:
            if isinstance(a, argparse._SubParsersAction):
                for name, sp in a.choices.items():
                    yield from walk(sp, path + (name,))

    hits = [(" ".join(path), line.strip()) for path, p in walk(build_parser())
            for line in p.format_help().splitlines() if PAPER_NUMBER.search(line)]
    assert not hits, f"papers cited by file number in --help: {hits}"


def _readme_table(marker: str) -> list[list[str]]:
    """The cells of the first Markdown table after ``<!-- marker -->`` in README.md."""
    lines = (ROOT / "README.md").read_text().splitlines()
    start = lines.index(f"<!-- {marker} -->") + 1
    rows = []
    for line in lines[start:]:
        if not line.startswith("|"):
            if rows:
                break
            continue
        rows.append([c.strip() for c in line.strip().strip("|").split("|")])
    return [r for r in rows if not all(set(c) <= set("-:") for c in r)]


def test_readme_accuracy_table_is_the_shipped_map():
    """The README's accuracy table is the shipped map's default-method summary, cell for cell
    (regenerate it with ``models.accuracy.summary(methods=("auto",)).to_markdown()``)."""
    from models.accuracy import summary

    md = summary(methods=("auto",)).to_markdown().splitlines()
    want = [[c.strip() for c in line.strip().strip("|").split("|")] for line in md
            if line.startswith("|")]
    want = [r for r in want if not all(set(c) <= set("-:") for c in r)]
    assert _readme_table("accuracy-summary") == want
