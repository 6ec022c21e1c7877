"""The event kernel: a heap of ``(time, sequence, function, argument)``.

That is all of it.  An event is a function and one argument; scheduling pushes
``(time, next sequence number, function, argument)`` on a binary heap, and the
loop takes the earliest event and calls ``function(time, argument)``.  The
sequence number breaks ties in scheduling order, so a run is a deterministic
function of its inputs (same seed, same result, bit for bit) and the heap
never compares functions.

An event function may also *return* one new event tuple instead of pushing
it: the loop then swaps it for the event just run with one
:func:`heapq.heapreplace` (one sift instead of a pop and a push).  This is
exact because events never schedule into the past: while the function runs,
its own entry -- the earliest time, and the smallest sequence number at that
time -- stays at the top of the heap, whatever else it pushes.  Returning or
pushing gives the same order of events; only the cost differs.

Nothing scans resources: every state change is an event on the heap.  For
speed, hardware code binds ``heapq.heappush``, the heap list and the sequence
counter's ``__next__`` to local names and builds tuples directly (see
:mod:`validation.sim.hardware`).

A run stops when an event raises :class:`Stop` (the end of the measurement),
pauses when one raises :class:`Pause` (a batch boundary; :meth:`Kernel.run`
returns and can be called again), and ends when the heap empties.

Examples
--------
>>> k = Kernel()
>>> log = []
>>> def tick(t, n):
...     log.append((t, n))
...     if n < 3:
...         k.schedule(t + 1.5, tick, n + 1)
>>> k.schedule(0.0, tick, 0)
>>> k.run()
'empty'
>>> log
[(0.0, 0), (1.5, 1), (3.0, 2), (4.5, 3)]
>>> k.events
4
>>> def chain(t, n):             # returning the next event instead of pushing it
...     log.append((t, n))
...     return (t + 1.0, k.next_seq(), chain, n + 1) if n < 6 else None
>>> k.schedule(10.0, chain, 5)
>>> k.run(), log[-2:], k.events
('empty', [(10.0, 5), (11.0, 6)], 6)
"""

from __future__ import annotations

import heapq
import itertools
from typing import Any, Callable

__all__ = ["Kernel", "Stop", "Pause"]

# an event function ``fn(time, arg)``: returns the next event tuple to swap in, or None
_EventFn = Callable[[float, Any], "tuple[Any, ...] | None"]


class Stop(Exception):
    """Raised by an event to end the run."""


class Pause(Exception):
    """Raised by an event to return from :meth:`Kernel.run` (it may be resumed)."""


class Kernel:
    """A minimal discrete-event loop.

    Attributes
    ----------
    heap : list
        The pending events ``(time, seq, fn, arg)``.
    now : float
        Time of the last event run.
    """

    __slots__ = ("heap", "counter", "next_seq", "now")

    def __init__(self) -> None:
        self.heap: list[tuple[float, int, _EventFn, Any]] = []
        self.counter = itertools.count()
        self.next_seq = self.counter.__next__
        self.now = 0.0

    def schedule(self, time: float, fn: _EventFn, arg: Any = None) -> None:
        """Run ``fn(time, arg)`` at ``time``."""
        heapq.heappush(self.heap, (time, self.next_seq(), fn, arg))

    @property
    def events(self) -> int:
        """Events run so far (scheduled minus pending)."""
        # the counter's repr is "count(n)": n events were scheduled
        scheduled = int(repr(self.counter)[6:-1])
        return scheduled - len(self.heap)

    def run(self) -> str:
        """Run events until one raises :class:`Stop` or :class:`Pause`, or none is left.

        An event that returns a tuple ``(time, seq, fn, arg)`` (with ``time``
        not before its own) schedules it.  Returns ``"stop"``, ``"pause"`` or
        ``"empty"``.
        """
        heap = self.heap
        pop = heapq.heappop
        replace = heapq.heapreplace
        t = self.now
        try:
            while True:
                t, _, fn, arg = heap[0]     # IndexError: nothing left
                new = fn(t, arg)
                if new is None:
                    pop(heap)
                else:
                    replace(heap, new)
        except IndexError:
            if heap:       # raised by an event (its own entry is still on the heap)
                raise
        except Pause:
            pop(heap)      # the pausing event is still on top
            return "pause"
        except Stop:
            pop(heap)
            return "stop"
        finally:
            self.now = t
        return "empty"
