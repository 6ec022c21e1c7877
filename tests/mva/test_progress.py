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
