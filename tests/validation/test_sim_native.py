"""The compiled loop's cached native object (validation.sim._native)."""

from __future__ import annotations

import subprocess
import sys
import warnings

import pytest

from validation import simulate
from validation.sim import _native
from models.lopc import LoPCParams


def test_cache_file_round_trip_and_damage_detection(tmp_path) -> None:
    path = str(tmp_path / "x.simobj")
    _native._write([path], b"\x7fELF-not-really" * 10, "cfunc.entry")
    assert _native._read(path) == (b"\x7fELF-not-really" * 10, "cfunc.entry")
    data = bytearray(open(path, "rb").read())
    data[-3] ^= 0xFF                                  # one flipped byte
    open(path, "wb").write(bytes(data))
    assert _native._read(path) is None
    open(path, "wb").write(b"something else entirely")
    assert _native._read(path) is None
    assert _native._read(str(tmp_path / "missing.simobj")) is None


def test_the_object_key_changes_with_the_source_and_numba_settings(monkeypatch, tmp_path) -> None:
    ll = _native._llvm()
    k1 = _native._key(ll)
    assert k1 == _native._key(ll) and len(k1) == 32
    for name in _native._SOURCES:                     # a copy of the sources: the same key
        (tmp_path / name).write_bytes(open(f"{_native._HERE}/{name}", "rb").read())
    monkeypatch.setattr(_native, "_HERE", str(tmp_path))
    assert _native._key(ll) == k1
    with open(tmp_path / "_compiled.py", "a") as fh:  # one more line: another key
        fh.write("\n# changed\n")
    k2 = _native._key(ll)
    assert k2 != k1
    monkeypatch.setenv("NUMBA_OPT", "1")
    assert _native._key(ll) not in (k1, k2)


def test_a_new_process_runs_the_cached_object_without_numba() -> None:
    _native.runner()                                   # builds the object if it is missing
    code = ("import sys\n"
            "from models.lopc import LoPCParams\n"
            "from validation import simulate\n"
            "p = LoPCParams(P=4, W=100, o=10, L=5)\n"
            "r = simulate(p, cycles=2000, seed=3, progress=False, engine='compiled')\n"
            "print(r.extra['engine'], 'numba' in sys.modules, 'scipy.special' in sys.modules, "
            "repr(r.cycle_time.mean))\n")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.split()
    ref = simulate(LoPCParams(P=4, W=100, o=10, L=5), cycles=2000, seed=3, progress=False,
                   engine="compiled")
    assert out == ["compiled", "False", "False", repr(ref.cycle_time.mean)]


def test_numba_dispatcher_fallback_gives_the_same_results(monkeypatch, tmp_path) -> None:
    from validation.sim import _compiled
    p = LoPCParams(P=5, W=200, o=20, L=10)
    ref = simulate(p, cycles=3000, seed=4, progress=False, engine="compiled")

    def broken() -> None:
        raise RuntimeError("no linker today")
    monkeypatch.setattr(_native, "_run", None)
    monkeypatch.setattr(_native, "_cache_dirs", lambda: [str(tmp_path)])
    monkeypatch.setattr(_compiled, "build_object", broken)
    with pytest.warns(RuntimeWarning, match="no linker today"):
        run = _native.runner()
    assert run is _compiled.run
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = simulate(p, cycles=3000, seed=4, progress=False, engine="compiled")
    assert got.to_dict() | {"wall_time": 0} == ref.to_dict() | {"wall_time": 0}
    assert not list(tmp_path.iterdir())               # nothing cached from a failed build


def test_a_built_object_is_written_to_the_cache_and_found_again(monkeypatch, tmp_path) -> None:
    monkeypatch.setattr(_native, "_run", None)
    monkeypatch.setattr(_native, "_cache_dirs", lambda: [str(tmp_path)])
    ll = _native._llvm()
    path = _native.object_path(_native._key(ll))[0]
    run = _native.runner()
    got = _native._read(path)
    assert got is not None and got[1].startswith("cfunc.")
    monkeypatch.setattr(_native, "_run", None)
    from validation.sim import _compiled

    def must_not_build() -> None:
        raise AssertionError("rebuilt although cached")
    monkeypatch.setattr(_compiled, "build_object", must_not_build)
    assert _native.runner() is not run                 # loaded afresh from the file
