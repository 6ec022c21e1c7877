"""Tests for the table API and its renderers."""

import csv
import io
from types import SimpleNamespace

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from mva.table import FORMATS, Table, grid_points, tabulate


@pytest.fixture
def table():
    return Table.from_columns({"N": [1, 2, 4], "R_o": [2336.0, 2.5e3, 3141.59265],
                               "ok": [True, False, True]},
                              title="INI queue")


def test_markdown_shape(table):
    lines = table.to_markdown().splitlines()
    assert len(lines) == 2 + 3
    assert lines[0].split("|")[1].strip() == "N"
    assert set(lines[1]) <= set("|-:")
    assert "3141.59" in lines[4] and "yes" in lines[4]


def test_rst_is_simple_table(table):
    text = table.to_rst().splitlines()
    assert text[0] == text[2] == text[-1]
    assert set(text[0]) <= {"=", " "}


def test_latex_escapes_and_caption(table):
    tex = table.to_latex()
    assert r"R\_o" in tex and r"\caption{INI queue}" in tex and r"\toprule" in tex
    assert tex.count(r"\\") == 4


def test_html_escapes():
    t = Table.from_columns({"a<b": ["x&y"]})
    h = t.to_html()
    assert "a&lt;b" in h and "x&amp;y" in h


def test_csv_round_trips_full_precision(table):
    rows = list(csv.reader(io.StringIO(table.to_csv())))
    assert rows[0] == ["N", "R_o", "ok"]
    assert float(rows[3][1]) == 3141.59265


def test_render_dispatch_and_bad_format(table):
    for fmt in FORMATS:
        assert table.render(fmt)
    with pytest.raises(ValueError, match="format must be one of"):
        table.render("docx")


def test_select_and_unknown_column(table):
    assert table.select(["R_o"]).columns == ("R_o",)
    with pytest.raises(ValueError, match="unknown column 'Q'"):
        table.select(["Q"])


def test_unequal_columns_rejected():
    with pytest.raises(ValueError, match="equal lengths"):
        Table(columns=("a", "b"), data={"a": np.arange(2), "b": np.arange(3)})


@given(st.lists(st.integers(1, 5), min_size=1, max_size=4))
def test_grid_points_is_cartesian_product(sizes):
    grid = {f"p{i}": np.arange(n) for i, n in enumerate(sizes)}
    pts = grid_points(grid)
    total = int(np.prod(sizes))
    assert all(len(v) == total for v in pts.values())
    combos = set(zip(*(pts[k].tolist() for k in grid)))
    assert len(combos) == total


def test_tabulate_calls_once_vectorised():
    calls = []

    def f(x, y):
        calls.append(np.shape(x))
        return SimpleNamespace(s=x + y, c=3.0)
    t = tabulate(f, {"x": [1, 2], "y": [10, 20, 30]})
    assert calls == [(6,)]
    assert t.columns == ("x", "y", "s", "c")
    assert t["s"].tolist() == [11, 21, 31, 12, 22, 32]
    assert t["c"].tolist() == [3.0] * 6
