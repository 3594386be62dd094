"""A record fed through a queue and written by a thread of its own: the same record as
written row by row in the feeding thread, no write in the feeding thread, a failed write
raised where the rows come from."""

import threading
import time

import numpy as np
import pytest

from rths_ident.records import TestRecordWriter, read_test_record
from rths_ident.records.queued import QueuedRecord
from rths_ident.records.writer import RecordWriteError

UNITS = {"feedback": "N", "target": "m", "fast/force": "N"}


def _row(k):
    return {"time": np.float64(0.01 * (k + 1)), "feedback": np.array([1e3 * k, -2.0 * k]),
            "target": np.array([1e-4 * k]), "fast": {"force": 10.0 * k + np.arange(4.0)}}


def _feed(record, n):
    """Rows 0…n−1 with an event after rows 3, 10 and the last (as a served session's
    parameter updates)."""
    for k in range(n):
        record.append(_row(k))
        if k in (3, 10, n - 1):
            record.event("update", f"parameters applied after row {k}", step=k + 1, time=0.01 * (k + 1))


class ThreadNotingWriter(TestRecordWriter):
    """A TestRecordWriter that notes the thread of each write to the file."""

    def flush(self):
        self.flush_threads.add(threading.get_ident())
        return super().flush()


def test_the_record_is_the_one_written_row_by_row(tmp_path):
    direct = TestRecordWriter.open(tmp_path / "direct.h5", {"how": "direct"}, UNITS, kind="serve ns")
    queued = QueuedRecord(TestRecordWriter.open(tmp_path / "queued.h5", {"how": "queued"}, UNITS, kind="serve ns"),
                          interval_s=0.01)
    for record in (direct, queued):
        record.event("start", "session opened", step=0, time=0.0)
    for k in range(60):  # the queue written in several blocks: events land between rows
        for record in (direct, queued):
            _feed_one(record, k)
        if k % 7 == 0:
            time.sleep(0.02)
    direct.finish({"slow_steps": 60})
    queued.finish({"slow_steps": 60})
    a, b = read_test_record(tmp_path / "direct.h5"), read_test_record(tmp_path / "queued.h5")
    assert b.complete and b.n_steps == 60 and sorted(a.steps) == sorted(b.steps)
    for name in a.steps:
        np.testing.assert_array_equal(b.steps[name], a.steps[name], err_msg=name)
    assert [(e.kind, e.message, e.step, e.time) for e in b.events] == \
        [(e.kind, e.message, e.step, e.time) for e in a.events]
    assert b.metrics == a.metrics == {"slow_steps": 60}


def _feed_one(record, k):
    record.append(_row(k))
    if k in (3, 10, 59):
        record.event("update", f"parameters applied after row {k}", step=k + 1, time=0.01 * (k + 1))


def test_the_feeding_thread_never_writes_to_the_file(tmp_path):
    writer = ThreadNotingWriter.open(tmp_path / "r.h5", {}, UNITS, kind="serve ns", flush_every=1)
    writer.flush_threads = set()
    setup_threads = []
    queued = QueuedRecord(writer, interval_s=0.005, thread_setup=lambda: setup_threads.append(threading.get_ident()))
    _feed(queued, 200)
    deadline = time.monotonic() + 10
    while writer.steps_on_disk < 200 and time.monotonic() < deadline:
        time.sleep(0.01)
    assert writer.steps_on_disk == 200  # written while the feeding thread went on (no finish yet)
    assert threading.get_ident() not in writer.flush_threads and writer.flush_threads == set(setup_threads)
    queued.finish({})
    assert read_test_record(tmp_path / "r.h5").n_steps == 200


def test_a_failed_write_is_raised_in_the_feeding_thread_and_the_record_keeps_what_was_flushed(tmp_path):
    class FailingWriter(TestRecordWriter):
        def extend(self, steps):
            if self.steps_on_disk >= 20:
                raise RecordWriteError(f"test record {self.path}: no space left on device; the record keeps the "
                                       f"{self.steps_on_disk} slow steps flushed before")
            return super().extend(steps)

    queued = QueuedRecord(FailingWriter.open(tmp_path / "r.h5", {}, UNITS, kind="serve ns"), interval_s=0.005)
    with pytest.raises(RecordWriteError, match="no space left on device"):
        for k in range(100000):
            queued.append(_row(k))
            time.sleep(0.0002)
    assert k >= 20
    queued.close()
    record = read_test_record(tmp_path / "r.h5")
    assert record.n_steps >= 20 and not record.complete
    np.testing.assert_array_equal(record.steps["feedback"][:, 0], 1e3 * np.arange(record.n_steps))


def test_close_writes_the_queue_and_leaves_the_record_not_complete(tmp_path):
    queued = QueuedRecord(TestRecordWriter.open(tmp_path / "r.h5", {}, UNITS, kind="serve ns"), interval_s=60)
    _feed(queued, 30)  # the thread waits 60 s: all of it is written by close
    queued.event("error", "the client went away", step=30, time=0.31)
    queued.close()
    record = read_test_record(tmp_path / "r.h5")
    assert record.n_steps == 30 and not record.complete
    assert [e.step for e in record.events] == [4, 11, 30, 30] and record.errors()[0].message == "the client went away"
