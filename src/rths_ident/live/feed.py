"""The events waiting for the live page's server thread: it only appends.

In the page's process (:mod:`rths_ident.live.page_process`) the thread that reads the
run's frames appends each event with the run's stamp (:meth:`LiveFeed.put`); used in the
same process as a run, :class:`LiveFeed` is an
:class:`~rths_ident.runner.events.EventStream` subscriber. For every event it appends
``(stamp, event)`` to a bounded ``collections.deque`` — no copy, no arithmetic, no lock
(a deque's append is atomic) — and returns. When the page's server falls behind by
:data:`CAPACITY` events the oldest are dropped (the page counts the steps it never saw);
the page process's reader holds back well before that. The server's thread takes the
events with :meth:`LiveFeed.drain`.

The server is told that events are waiting without polling: it *arms* the feed with a
wake-up (:meth:`LiveFeed.arm`) once it has sent what it had, and the first event after
that calls it once and disarms the feed — at most one wake-up per update the server
sends (≤ 15 a second), whatever the loop's rate. The server's wake-up is
``asyncio``'s ``call_soon_threadsafe``: a deque append and one non-blocking write to the
event loop's self-pipe (it never waits; a full pipe is ignored).
"""

from __future__ import annotations

import collections
import time as _time

from rths_ident.runner.events import TestStarted

__all__ = ["LiveFeed", "CAPACITY"]

#: events kept for the page's server before the oldest are dropped
CAPACITY = 8192


class LiveFeed:
    """``feed(event)`` or ``feed.put(stamp, event)`` on the emitting thread; ``drain()``
    on the server's (module doc)."""

    def __init__(self, capacity: int = CAPACITY, clock=_time.time):
        self._events: collections.deque = collections.deque(maxlen=int(capacity))
        self._clock = clock
        self.started: tuple | None = None  # (stamp, the last TestStarted): kept even if the deque drops it
        self._wake = None  # the server's wake-up, called once by the next event (arm)

    def __call__(self, event) -> None:
        self.put(self._clock(), event)

    def put(self, stamp: float, event) -> None:
        """Append ``event`` emitted at ``stamp`` (``time.time()`` [s]; the run's process
        stamped it when the page's server runs in a process of its own)."""
        self._events.append((stamp, event))
        if type(event) is TestStarted:
            self.started = (stamp, event)
        wake = self._wake
        if wake is not None:
            self._wake = None
            wake()

    def arm(self, wake) -> None:
        """Call ``wake()`` (once) at the next event, on the emitting thread. When events
        are already waiting it is called now: an event appended between the server's
        drain and this call is not left waiting for the next one."""
        self._wake = wake
        if self._events and self._wake is not None:
            self._wake = None
            wake()

    def __len__(self) -> int:
        return len(self._events)

    def drain(self) -> list:
        """Every event appended so far, oldest first (and removed)."""
        taken = []
        pop = self._events.popleft
        while True:
            try:
                taken.append(pop())
            except IndexError:
                return taken
