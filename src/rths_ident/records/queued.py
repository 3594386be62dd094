"""A test record fed by a thread that must answer in time, written by a thread of its own.

A served substructure's serving thread answers each FEEDBACK within a slow step (0.98 ms
at 1024 Hz). Written there, its session record costs that thread HDF5's appends and
flushes: every 25 rows or 0.5 s a flush of 0.5–1.5 ms, and 10–12 ms for the first (the
step datasets created, the file switched to SWMR mode) on a 2-core KVM guest — the next
FEEDBACK then waits, and at 1024 Hz the client's step misses its deadline.

:class:`QueuedRecord` takes rows and events in their order into a queue (a
``collections.deque`` append: no I/O, no lock) and a writer thread writes them every
``interval_s`` [s]: consecutive rows as one block (:meth:`TestRecordWriter.extend
<rths_ident.records.writer.TestRecordWriter.extend>`, one flush), each event in its place
between them (an event flushes at once, as always). The record on disk is the same rows
and events as when written one by one; it lags the thread that feeds it by at most
``interval_s`` plus a write.

``thread_setup`` runs first in the writer thread: a process whose serving thread runs at
``SCHED_FIFO`` passes a function that puts the writer below it
(:func:`~rths_ident.hybrid.loop.realtime_host.lower_this_thread`); a thread created by
a FIFO thread inherits its priority, and on the same CPU a writer at the same priority
would run its whole flush before the serving thread could answer.

A write that fails in the writer thread (a full disk: :class:`~rths_ident.records.writer.RecordWriteError`)
stops it; the next :meth:`append` or :meth:`event` raises that error in the feeding
thread, as a write there would have. :meth:`finish` and :meth:`close` stop the thread,
write what is queued and finish or close the record in the calling thread.
"""

from __future__ import annotations

import collections
import threading
from collections.abc import Callable, Mapping

import numpy as np

from rths_ident.records.writer import TestRecordWriter

__all__ = ["QueuedRecord", "WRITE_INTERVAL_S"]

#: how often [s] the writer thread writes what is queued
WRITE_INTERVAL_S = 0.25


class QueuedRecord:
    """Rows and events for ``writer`` (a :class:`TestRecordWriter`), queued by the feeding
    thread and written by a thread of their own every ``interval_s`` [s] (module doc)."""

    def __init__(self, writer: TestRecordWriter, interval_s: float = WRITE_INTERVAL_S,
                 thread_setup: Callable[[], object] | None = None):
        self.writer = writer
        self.interval_s = float(interval_s)
        self._queue: collections.deque = collections.deque()
        self._stop = threading.Event()
        self._failure: BaseException | None = None
        self._thread_setup = thread_setup
        self._thread = threading.Thread(target=self._run, name="served-record-writer", daemon=True)
        self._thread.start()

    @property
    def path(self):
        return self.writer.path

    def append(self, row: Mapping) -> None:
        """Queue one row (a nested mapping of arrays with its test time under ``"time"``
        [s], as :meth:`TestRecordWriter.append` takes it; copied by the caller if it
        changes later)."""
        self._raise_failure()
        self._queue.append(("row", row))

    def event(self, kind: str, message: str = "", step: int | None = None, time: float | None = None) -> None:
        """Queue an event, written in its place among the rows."""
        self._raise_failure()
        self._queue.append(("event", (kind, message, step, time)))

    def finish(self, metrics: Mapping) -> None:
        """Stop the writer thread, write what is queued, finish the record (complete)."""
        self._stop_thread()
        self._write_queued()
        self.writer.finish(metrics)

    def close(self) -> None:
        """Stop the writer thread, write what is queued (as far as the record can take
        it), close the record (not complete)."""
        self._stop_thread()
        try:
            self._write_queued()
        finally:
            self.writer.close()

    def _raise_failure(self) -> None:
        if self._failure is not None:
            raise self._failure

    def _stop_thread(self) -> None:
        if self._thread.is_alive():
            self._stop.set()
            self._thread.join()

    def _run(self) -> None:
        if self._thread_setup is not None:
            self._thread_setup()
        try:
            while not self._stop.wait(self.interval_s):
                self._write_queued()
        except BaseException as error:  # noqa: BLE001 - raised in the feeding thread (module doc)
            self._failure = error

    def _write_queued(self) -> None:
        """Write the queued items in order: each run of rows as one block, events between."""
        if self._failure is not None:
            return
        rows: list = []
        while self._queue:
            kind, item = self._queue.popleft()
            if kind == "row":
                rows.append(item)
                continue
            self._write_rows(rows)
            rows = []
            self.writer.event(*item)
        self._write_rows(rows)

    def _write_rows(self, rows: list) -> None:
        if rows:
            self.writer.extend(_stacked(rows))


def _stacked(rows: list):
    """Rows (nested mappings of the same keys and shapes) as one mapping of arrays with
    a leading axis of len(rows)."""
    first = rows[0]
    if isinstance(first, Mapping):
        return {key: _stacked([row[key] for row in rows]) for key in first}
    return np.stack([np.asarray(value) for value in rows])
