"""The progress wrapper is silent off a terminal and draws a bar on one."""

import io

import importlib

prog = importlib.import_module("mva.progress")


def test_passthrough_off_terminal(monkeypatch):
    monkeypatch.setattr(prog, "is_interactive", lambda: False)
    items = [1, 2, 3]
    assert prog.progress(items, enable=True) is items


def test_disabled_even_on_terminal(monkeypatch):
    monkeypatch.setattr(prog, "is_interactive", lambda: True)
    items = [1, 2]
    assert prog.progress(items, enable=False) is items


def test_builtin_bar_on_terminal(monkeypatch):
    err = io.StringIO()
    monkeypatch.setattr(prog.sys, "stderr", err)
    out = list(prog._builtin_bar(range(5), 5, "pts"))
    assert out == [0, 1, 2, 3, 4]
    text = err.getvalue()
    assert "pts" in text and "5/5" in text


def test_builtin_bar_delay_hides_short_work_and_shows_long_work(monkeypatch):
    import time as _time
    err = io.StringIO()
    monkeypatch.setattr(prog.sys, "stderr", err)
    assert list(prog._builtin_bar(range(5), 5, "quick", delay=2.0)) == [0, 1, 2, 3, 4]
    assert err.getvalue() == ""       # finished before the delay: nothing printed

    def slow():
        for i in range(3):
            _time.sleep(0.06)
            yield i
    assert list(prog._builtin_bar(slow(), 3, "slow", delay=0.1)) == [0, 1, 2]
    assert "slow" in err.getvalue() and "3/3" in err.getvalue()


def test_stage_labels_bars_on_a_terminal(monkeypatch):
    monkeypatch.setattr(prog, "is_interactive", lambda: True)
    err = io.StringIO()
    monkeypatch.setattr(prog.sys, "stderr", err)
    monkeypatch.setitem(__import__("sys").modules, "tqdm.auto", None)   # the built-in bar
    out = io.StringIO()
    with prog.stage("lopc [mva]", 2, 5, stream=out) as label:
        assert label == "[2/5] lopc [mva]" and prog.current_stage() == label
        items = list(prog.progress(range(4), desc="sweep"))
    assert items == [0, 1, 2, 3] and prog.current_stage() == ""
    assert "[2/5] lopc [mva] [" in err.getvalue() and "sweep" not in err.getvalue()
    assert out.getvalue() == ""          # on a terminal the bar is the report


def test_stage_line_off_a_terminal(monkeypatch):
    monkeypatch.setattr(prog, "is_interactive", lambda: False)
    out = io.StringIO()
    with prog.stage("pdq [shared]", 1, 2, stream=out):
        with prog.stage("inner", stream=out):
            assert prog.current_stage() == "inner"
        assert prog.current_stage() == "[1/2] pdq [shared]"
    lines = out.getvalue().splitlines()
    assert (lines[0].startswith("inner done in ")
            and lines[1].startswith("[1/2] pdq [shared] done in "))
    quiet = io.StringIO()
    with prog.stage("x", 1, 1, enable=False, stream=quiet):
        assert prog.current_stage() == ""
    assert quiet.getvalue() == ""


def test_stage_writes_nothing_when_the_work_fails(monkeypatch):
    monkeypatch.setattr(prog, "is_interactive", lambda: False)
    out = io.StringIO()
    try:
        with prog.stage("bad", stream=out):
            raise RuntimeError("boom")
    except RuntimeError:
        pass
    assert out.getvalue() == "" and prog.current_stage() == ""
