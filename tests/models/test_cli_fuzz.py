"""Fuzz the command line: generated argv for every subcommand, in process.

Every generated command line must end with exit status 0 and output, or
exit status 2 and exactly one ``error:`` line on stderr (the last line) --
never a traceback, never a hang (each line runs under a CPU-time alarm).
Options come from the argparse parsers themselves and their values from the
parameter declarations (:func:`tests.strategies.cli_tokens`), so a new option
is fuzzed as soon as it exists.  Costly runs are kept small: ``simulate``
always gets a short ``--cycles``, ``sweep`` runs serially, and ``validate``
is only fuzzed with an argument error (its full run takes over a minute).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import signal

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from models.cli import build_parser, main
from mva.params import declarations
from tests.strategies import BAD_TOKENS, cli_tokens, parameter_class

#: seconds one command line may take before it counts as a hang
BOUND = 10  # CPU seconds (ITIMER_PROF: immune to the load of a shared machine)
#: a simulation's work grows with the --replications x --cycles the user asks for
#: (600 x 300 legitimately takes ~11 CPU s); a hang still runs past this
SIMULATE_BOUND = 30

#: parameter class whose declarations type the options of each command
CLASSES = {
    "lopc": "models.lopc:LoPCParams", "ini": "models.ini:INIParams",
    "policy": "models.policy:PolicyParams", "cost": "models.policy:PolicyParams",
    "pdq": "models.pdq:PDQParams", "layers": "models.layers:AppProfile",
    "mechanisms": "models.mechanisms:MechanismParams",
    "simulate lopc": "models.lopc:LoPCParams", "simulate ini": "models.ini:INIParams",
    "simulate policy": "models.policy:PolicyParams", "whatif": "models.lopc:LoPCParams",
}


class Hang(BaseException):
    """Raised by the alarm: the command line ran past :data:`BOUND` seconds."""


def _subparsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    for a in parser._actions:
        if isinstance(a, argparse._SubParsersAction):
            return dict(a.choices)
    return {}


def _commands() -> dict[tuple[str, ...], argparse.ArgumentParser]:
    """(command words) -> the parser of that (sub)command, two levels deep."""
    out = {}
    for name, p in _subparsers(build_parser()).items():
        subs = _subparsers(p)
        if subs:
            out[(name,)] = p  # without its required WHAT
            out.update({(name, s): q for s, q in subs.items()})
        else:
            out[(name,)] = p
    return out


COMMANDS = _commands()


def _options(parser: argparse.ArgumentParser) -> list[argparse.Action]:
    return [a for a in parser._actions if a.option_strings
            and not isinstance(a, (argparse._HelpAction, argparse._VersionAction))]


@st.composite
def command_lines(draw, words: tuple[str, ...]):
    """argv for the command ``words``: a few of its options with generated values."""
    parser = COMMANDS[words]
    cls = CLASSES.get(" ".join(words)) or CLASSES.get(words[0])
    decl = declarations(parameter_class(cls)) if cls else {}
    argv = list(words)
    if words in (("ini",), ("simulate", "ini")):
        argv += ["--N", "1,2"]  # the default 1..16 costs seconds per method; --N below overrides
    if words == ("sweep",):
        model = draw(st.sampled_from(["lopc", "ini", "policy", "pdq", "nosuch",
                                      "models.lopc:nope"]))
        argv.append(model)
        cls = CLASSES.get(model)
        decl = declarations(parameter_class(cls)) if cls else {}
        argv += ["--workers", "1", "--no-progress"]
    acts = _options(parser)
    chosen = draw(st.lists(st.sampled_from(acts), max_size=3, unique_by=id)) if acts else []
    for a in chosen:
        opt = draw(st.sampled_from(a.option_strings))
        if a.nargs == 0:
            argv.append(opt)
            continue
        if a.choices is not None:
            value = draw(st.one_of(st.sampled_from([str(c) for c in a.choices]),
                                   st.sampled_from(BAD_TOKENS)))
        elif a.dest in ("cycles", "warmup", "batches", "replications", "max_queue"):
            value = draw(st.one_of(st.integers(1, 600).map(str), st.sampled_from(BAD_TOKENS)))
        elif a.dest in ("store", "trace", "out"):
            value = draw(st.sampled_from(["/nonexistent/dir/file.db", "/nonexistent.csv", ""]))
        elif a.dest == "scheduler":
            value = draw(st.sampled_from(["", "notaurl"]))
        elif a.dest == "param":
            name = draw(st.sampled_from(sorted(decl) or ["P", "W", "x"]))
            value = f"{name}=" + draw(cli_tokens(decl.get(name)))
        elif a.dest == "workers":
            value = draw(st.sampled_from(["1", "0", "-2", "abc", ""]))
        else:
            value = draw(cli_tokens(decl.get(a.dest)))
        argv.append(f"{opt}={value}" if value.startswith("-") or not value else opt)
        if not (value.startswith("-") or not value):
            argv.append(value)
    if draw(st.integers(0, 30)) == 0:
        argv.append(draw(st.sampled_from(["--no-such-option", "extra", "-h"])))
    return argv


def _run(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()

    bound = SIMULATE_BOUND if argv[:1] == ["simulate"] else BOUND

    def alarm(signum, frame):  # pragma: no cover - only on a hang
        raise Hang(f"{bound} CPU s exceeded: {argv}")

    old = signal.signal(signal.SIGPROF, alarm)
    signal.setitimer(signal.ITIMER_PROF, bound)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                code = main(argv)
            except SystemExit as exc:
                code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.signal(signal.SIGPROF, old)
    return code, out.getvalue(), err.getvalue()


def check(argv: list[str]) -> None:
    code, out, err = _run(argv)
    assert "Traceback" not in out + err, (argv, err)
    if code == 0:
        assert out.strip(), (argv, "exit 0 without output")
        return
    assert code == 2, (argv, code, err)
    lines = [ln for ln in err.splitlines() if ln.strip()]
    errors = [ln for ln in lines if "error:" in ln]
    assert len(errors) == 1 and lines[-1] == errors[0], (argv, err)


#: (command words, examples): at least 5,000 generated command lines in all
PLAN = {w: (60 if w[0] == "simulate" else 100 if w[0] in ("whatif", "cost")
            else 150 if len(w) == 1 and _subparsers(COMMANDS[w]) else 400) for w in COMMANDS}

#: CI runs the fixed (derandomized) plan; FUZZ_RANDOM=1 lets ``--hypothesis-seed=N`` pick
#: other command lines and FUZZ_SCALE (e.g. 0.2) shrinks the plan for such extra runs
DERANDOMIZE = os.environ.get("FUZZ_RANDOM", "0") != "1"
SCALE = float(os.environ.get("FUZZ_SCALE", "1"))


def test_plan_reaches_5000_lines():
    assert sum(PLAN.values()) >= 5000, PLAN


@pytest.mark.parametrize("words", sorted(c for c in COMMANDS if c[0] != "validate"),
                         ids=" ".join)
def test_cli_fuzz(words):
    @settings(max_examples=max(1, round(SCALE * PLAN[words])), derandomize=DERANDOMIZE,
              deadline=None, database=None,
              suppress_health_check=list(HealthCheck))
    @given(command_lines(words))
    def run(argv):
        if words[0] == "simulate" and len(words) > 1:
            argv = argv + ["--cycles", "300", "--batches", "5"] \
                if not any(a.startswith("--cycles") for a in argv) else argv
        check(argv)

    run()


@st.composite
def validate_errors(draw):
    """``validate`` argv that carries at least one argument error (no full run)."""
    argv = ["validate", "--quick"] + draw(command_lines(("validate",)))[1:]
    bad = draw(st.sampled_from([["--workers", "0"], ["--workers=-3"], ["--scale", "0"],
                                ["--scale=-1"], ["--scale", "nan"], ["--seed", "abc"],
                                ["--workers", "x"], ["--scale", "inf", "--workers", "0"],
                                ["--bogus"]]))
    return argv + bad


@settings(max_examples=max(1, round(SCALE * PLAN[("validate",)])), derandomize=DERANDOMIZE,
          deadline=None, database=None,
          suppress_health_check=list(HealthCheck))
@given(validate_errors())
def test_validate_argument_errors(argv):
    code, out, err = _run(argv)
    if "-h" in argv:       # help is acted on where it stands: before a later bad value
        if code == 0:
            assert out.startswith("usage:") and not err, (argv, out, err)
            return
    assert code == 2 and "Traceback" not in err, (argv, code, err)
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert sum("error:" in ln for ln in lines) == 1 and "error:" in lines[-1], (argv, err)


# --------------------------------------------------------------------------
# regressions the fuzz found (each fixed at its cause)
# --------------------------------------------------------------------------


def test_validate_help_is_printed_to_stdout():
    """``validate -h`` before a bad value prints the help (exit 0), not an error."""
    code, out, err = _run(["validate", "--quick", "-h", "--workers", "0"])
    assert code == 0 and out.startswith("usage:") and "--workers" in out and not err


@pytest.mark.parametrize("argv", [["lopc", "--cs2", "1e308"], ["lopc", "--cs2", "1e6"],
                                  ["ini", "--N", "1", "--cs2_O", "1e6"],
                                  ["pdq", "--cs2", "1e308"]])
def test_huge_cs2_is_refused_with_the_range(argv):
    """cs2 = 1e308 ran the node chain for minutes: now one line naming cs2 and [0, ...]."""
    code, out, err = _run(argv)
    assert code == 2, (argv, code, err)
    name = argv[-2].lstrip("-")
    assert err.strip().splitlines()[-1].endswith(f"error: {name} must lie in [0, "
                                                 f"{'100' if argv[0] == 'pdq' else '10'}]; got "
                                                 f"{float(argv[-1])!r}"), err


@pytest.mark.parametrize("argv", [["lopc", "--P", "58", "--method", "linearizer"],
                                  ["ini", "--N", "1", "--K", "8", "--clusters", "27",
                                   "--method", "schweitzer"]])
def test_slow_engine_methods_are_refused_before_starting(argv):
    """lopc linearizer at P=58 and ini schweitzer at 27 clusters x K=8 ran > 10 CPU s."""
    code, out, err = _run(argv)
    assert code == 2 and "would take about" in err and "CPU s" in err and "instead" in err, err


def test_sweep_pdq_builds_its_parameter_object():
    """``sweep pdq --param O_int=0`` raised a TypeError: pdq.solve takes a PDQParams."""
    code, out, err = _run(["sweep", "pdq", "--workers", "1", "--no-progress", "--param",
                           "O_int=0", "--param", "load=0.5"])
    assert code == 0 and "0.5" in out and "Traceback" not in err, (code, err)
    check(["sweep", "pdq", "--workers", "1", "--no-progress", "--param", "O_int=0"])
