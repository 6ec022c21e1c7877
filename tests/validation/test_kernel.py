"""The event kernel: ordering, returned events, pause/stop, errors."""

from __future__ import annotations

import random

import pytest

from validation.sim.kernel import Kernel, Pause, Stop


def test_events_run_in_time_then_scheduling_order() -> None:
    k = Kernel()
    log: list[tuple[float, str]] = []
    for t, name in [(2.0, "c"), (1.0, "a"), (2.0, "d"), (1.0, "b"), (0.5, "first")]:
        k.schedule(t, lambda now, n: log.append((now, n)), name)
    assert k.run() == "empty"
    # ties keep the order in which they were scheduled
    assert log == [(0.5, "first"), (1.0, "a"), (1.0, "b"), (2.0, "c"), (2.0, "d")]
    assert k.events == 5 and k.now == 2.0


def _chain(k: Kernel, returning: bool, seed: int) -> list[tuple[float, int]]:
    """Random event chains, each event scheduling one or two more (some at the same time)."""
    rnd = random.Random(seed)
    log: list[tuple[float, int]] = []

    def ev(now: float, n: int):
        log.append((now, n))
        if n >= 400:
            return None
        if rnd.random() < 0.3:                      # a second event, always pushed
            k.schedule(now + rnd.choice([0.0, 1.0, rnd.random()]), ev, n + 1000)
        follow = (now + rnd.choice([0.0, 2.0, rnd.random()]), k.next_seq(), ev, n + 1)
        if returning:
            return follow
        k.schedule(follow[0], ev, n + 1)
        return None

    for i in range(5):
        k.schedule(rnd.random(), ev, i * 10)
    assert k.run() == "empty"
    return log


@pytest.mark.parametrize("seed", range(5))
def test_returning_an_event_equals_pushing_it(seed: int) -> None:
    # same random decisions, same order of sequence numbers: the same run
    pushed = _chain(Kernel(), False, seed)
    returned = _chain(Kernel(), True, seed)
    assert returned == pushed
    times = [t for t, _ in returned]
    assert times == sorted(times)


def test_pause_resumes_where_it_stopped_and_stop_ends() -> None:
    k = Kernel()
    log: list[int] = []

    def ev(now: float, n: int):
        log.append(n)
        if n == 3:
            raise Pause(n)
        if n == 6:
            raise Stop
        return (now + 1.0, k.next_seq(), ev, n + 1)

    k.schedule(0.0, ev, 0)
    assert k.run() == "pause" and log == [0, 1, 2, 3] and k.now == 3.0
    assert k.run() == "empty"              # the paused event is gone: nothing follows it
    k.schedule(10.0, ev, 4)
    assert k.run() == "stop" and log[-3:] == [4, 5, 6] and k.now == 12.0
    assert k.heap == []
    assert k.events == 7                   # events 0..6


def test_an_index_error_inside_an_event_propagates() -> None:
    k = Kernel()

    def bad(now: float, _: object) -> None:
        [][1]

    k.schedule(1.0, bad)
    with pytest.raises(IndexError):
        k.run()
