"""The test-record writer and reader in one process: what goes in comes out, with its
units, events and metrics; the flush policy; clear errors for bad steps."""

import doctest
import errno
import json
import os

import h5py
import numpy as np
import pytest

import rths_ident
import rths_ident.records
from rths_ident.errors import ParameterError
from rths_ident.errors import DataFileError
from rths_ident.records import TestRecordWriter, is_test_record, read_test_record
from rths_ident.records import writer as _record_writer

UNITS = {"x": "m", "fast/force": "N", "estimate": {"k": "N/m", "fy": "N"}, "flag": "1 (bool)"}
CONFIG = {"scenario": "spring", "rate": 50.0, "nested": {"a": 1, "b": [1, 2]}, "none": None}


def _step(k):
    return {"time": 0.02 * (k + 1), "x": 1e-3 * k,
            "fast": {"force": 10.0 * k + np.arange(4)}, "estimate": np.array([2e6 + k, 3e3 - k]),
            "flag": k % 2 == 0}


def test_module_example_runs():
    failures, _ = doctest.testmod(rths_ident.records, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert failures == 0


def test_round_trip_of_a_finished_record(tmp_path):
    path = tmp_path / "sub" / "rec.h5"
    with TestRecordWriter.open(path, CONFIG, UNITS, kind="unit-test", time_base={"slow_rate_hz": 50.0},
                               flush_every=3) as rec:
        rec.event("start", "go", step=0, time=0.0)
        for k in range(7):
            rec.append(_step(k))
        rec.finish({"J2_percent": 0.5, "J4": {"floor1": 1.25}, "inf": float("inf"), "arr": np.arange(2)})
    r = read_test_record(path)
    assert r.complete and r.closed and r.kind == "unit-test" and r.n_steps == 7
    assert r.status().startswith("complete")
    assert r.config == {"scenario": "spring", "rate": 50.0, "nested": {"a": 1, "b": [1, 2]}, "none": None}
    np.testing.assert_array_equal(r.time, 0.02 * (np.arange(7) + 1))
    np.testing.assert_array_equal(r.steps["fast/force"], 10.0 * np.arange(7)[:, None] + np.arange(4))
    np.testing.assert_array_equal(r.steps["estimate"][:, 1], 3e3 - np.arange(7))
    assert r.steps["flag"].tolist() == [True, False, True, False, True, False, True]
    assert r.units["estimate"] == {"k": "N/m", "fy": "N"} and r.units["time"] == "s" and r.units["x"] == "m"
    assert r.metrics == {"J2_percent": 0.5, "J4": {"floor1": 1.25}, "inf": None, "arr": [0, 1]}
    assert [e.kind for e in r.events] == ["start", "stop"]
    assert r.events[0].step == 0 and r.events[0].time == 0.0 and r.events[1].step is None
    assert r.software["rths_ident"] == rths_ident.__version__ and r.software["numpy"] == np.__version__
    assert r.software["hdf5"] == h5py.version.hdf5_version and "openseespy" in r.software
    assert r.time_base == {"slow_rate_hz": 50.0}
    # a closed record is a plain HDF5 file: attributes and per-dataset units for other tools
    with h5py.File(path, "r") as f:
        assert f.attrs["complete"] and f.attrs["format"] == "rths_ident test record"
        assert f["metrics"].attrs["J4.floor1"] == 1.25 and json.loads(f["metrics"].attrs["json"])["J2_percent"] == 0.5
        assert f["config"].attrs["nested.a"] == 1 and f["config"].attrs["scenario"] == "spring"
        assert f["steps/estimate"].attrs["units"] == "N/m, N"
        assert list(f["steps/estimate"].attrs["columns"]) == ["k", "fy"]
        assert f["steps/fast/force"].attrs["units"] == "N" and f["steps"].attrs["slow_rate_hz"] == 50.0
    assert not (tmp_path / "sub" / "rec.h5.partial").exists()
    assert is_test_record(path)


def test_an_exception_leaves_the_steps_and_the_error(tmp_path):
    path = tmp_path / "rec.h5"

    class Aborted(RuntimeError):
        slow_index = 4

    with pytest.raises(Aborted):
        with TestRecordWriter.open(path, CONFIG, UNITS, flush_every=100) as rec:
            for k in range(4):
                rec.append(_step(k))
            raise Aborted("peer went away")
    r = read_test_record(path)
    assert not r.complete and r.closed and r.n_steps == 4 and r.metrics is None
    assert [(e.kind, e.step, e.message) for e in r.events] == [("error", 4, "Aborted: peer went away")]
    assert r.status() == "not complete: stopped by an error at slow step 4: Aborted: peer went away"


def test_keyboard_interrupt_is_the_operators_stop_at_the_step_in_progress(tmp_path):
    path = tmp_path / "rec.h5"
    with pytest.raises(KeyboardInterrupt):
        with TestRecordWriter.open(path, CONFIG, UNITS) as rec:
            for k in range(3):
                rec.append(_step(k))
            raise KeyboardInterrupt
    r = read_test_record(path)
    # not a fault: a stop event, at the step in progress and the last test time reached (0.02 · 3 s)
    assert r.n_steps == 3 and not r.errors()
    stop = r.events[-1]
    assert (stop.kind, stop.step) == ("stop", 3) and stop.time == pytest.approx(0.06)
    assert stop.message == "stopped by the operator (Ctrl-C) at slow step 3, t = 0.060 s"
    assert r.status() == "not complete: stopped by the operator (Ctrl-C) at slow step 3, t = 0.060 s"


def test_keyboard_interrupt_with_its_own_sentence_keeps_it(tmp_path):
    from rths_ident.operator_stop import OperatorStopped

    path = tmp_path / "rec.h5"
    with pytest.raises(KeyboardInterrupt):
        with TestRecordWriter.open(path, CONFIG, UNITS) as rec:
            rec.append(_step(0))
            raise OperatorStopped("stopped by the operator (Ctrl-C) at slow step 1, t = 0.040 s. The specimen was "
                                  "brought to rest", slow_index=1, time=0.04)
    stop = read_test_record(path).events[-1]
    assert (stop.kind, stop.step, stop.time) == ("stop", 1, 0.04) and stop.message.endswith("brought to rest")


class _FullDisk:
    """``h5py.Dataset`` writes that fail with ENOSPC after ``after`` calls (what a full
    file system makes HDF5 report), counting the calls."""

    def __init__(self, after: int):
        self.after, self.calls = after, 0

    def __call__(self, ds, start, rows):
        self.calls += 1
        if self.calls > self.after:
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        return _APPEND_ROWS(ds, start, rows)


_APPEND_ROWS = _record_writer._append_rows


def test_a_failed_write_keeps_what_was_flushed_and_stops_writing(tmp_path, monkeypatch):
    """A disk that fills up mid-test: the write raises one error naming the record and what
    it keeps; the file on disk stays the record of the steps flushed before (readable,
    those steps' values); later events and close are no-ops, later appends the same error."""
    from rths_ident.records.writer import RecordWriteError

    path = tmp_path / "rec.h5"
    rec = TestRecordWriter.open(path, CONFIG, UNITS, flush_every=2)
    for k in range(4):  # two flushes: 4 steps on disk
        rec.append(_step(k))
    n_datasets = len(rec._datasets)
    monkeypatch.setattr(_record_writer, "_append_rows", _FullDisk(after=n_datasets // 2))  # half a flush, then full
    rec.append(_step(4))
    with pytest.raises(RecordWriteError) as caught:
        rec.append(_step(5))
    assert str(caught.value).startswith(f"test record {path}: writing failed (OSError: [Errno 28] No space left")
    assert "keeps the 4 slow steps flushed before" in str(caught.value)
    rec.event("error", "the loop stopped")  # nothing: the disk is full
    rec.close()
    with pytest.raises(RecordWriteError):
        rec.append(_step(6))
    r = read_test_record(path)
    assert r.n_steps == 4 and not r.complete
    np.testing.assert_array_equal(r.steps["x"], 1e-3 * np.arange(4))
    np.testing.assert_array_equal(r.time, 0.02 * np.arange(1, 5))
    assert not (tmp_path / "rec.h5.partial").exists()


def test_close_without_finish_says_so(tmp_path):
    rec = TestRecordWriter.open(tmp_path / "rec.h5", CONFIG, UNITS)
    rec.append(_step(0))
    rec.close()
    rec.close()  # idempotent
    r = read_test_record(tmp_path / "rec.h5")
    assert r.n_steps == 1 and not r.complete
    assert r.status() == "not complete: closed before the end of the test (no finish)"
    with pytest.raises(ParameterError, match="closed"):
        rec.append(_step(1))


def test_a_header_only_record_is_readable(tmp_path):
    rec = TestRecordWriter.open(tmp_path / "rec.h5", CONFIG, UNITS)
    rec.event("start", "compiling")
    r = read_test_record(tmp_path / "rec.h5")  # while the writer is open: phase 1 files are closed files
    assert r.n_steps == 0 and r.events[0].message == "compiling" and r.config["scenario"] == "spring"
    rec.close()


def test_flush_policy_every_n_steps_and_after_an_interval(tmp_path):
    rec = TestRecordWriter.open(tmp_path / "a.h5", CONFIG, UNITS, flush_every=4, flush_interval_s=3600)
    for k in range(3):
        rec.append(_step(k))
    assert (rec.steps, rec.steps_on_disk) == (3, 0)
    rec.append(_step(3))
    assert rec.steps_on_disk == 4
    for k in range(4, 7):
        rec.append(_step(k))
    assert rec.steps_on_disk == 4
    rec.event("info", "an event flushes")
    assert rec.steps_on_disk == 7
    rec.close()
    timed = TestRecordWriter.open(tmp_path / "b.h5", CONFIG, UNITS, flush_every=1000, flush_interval_s=1e-9)
    timed.append(_step(0))
    timed.append(_step(1))
    assert timed.steps_on_disk == 2
    timed.close()


def test_extend_equals_appends_and_empty_datasets_survive(tmp_path):
    n = 9
    stacked = {"time": 0.02 * (np.arange(n) + 1), "x": 1e-3 * np.arange(n), "empty": np.zeros((n, 0))}
    units = {"x": "m", "empty": "N"}
    with TestRecordWriter.open(tmp_path / "e.h5", {}, units, flush_every=4) as rec:
        rec.extend(stacked)
        rec.finish({})
    r = read_test_record(tmp_path / "e.h5")
    np.testing.assert_array_equal(r.steps["x"], stacked["x"])
    assert r.steps["empty"].shape == (n, 0)


@pytest.mark.parametrize("step, message", [
    ({"time": 0.0, "x": 1.0, "y": 2.0}, "no unit given for y"),
    ({"x": 1.0}, "needs its test time under 'time'"),
    ({"time": 0.0, "estimate": [1.0, 2.0, 3.0]}, "units name 2 columns"),
    ({"time": 0.0, "x": "text"}, "expected numbers or booleans"),
])
def test_bad_first_steps_are_clear_errors(tmp_path, step, message):
    with TestRecordWriter.open(tmp_path / "bad.h5", {}, UNITS) as rec:
        with pytest.raises(ParameterError, match=message):
            rec.append(step)


def test_a_step_unlike_the_first_is_refused(tmp_path):
    with TestRecordWriter.open(tmp_path / "bad.h5", {}, UNITS) as rec:
        rec.append({"time": 0.0, "fast": {"force": np.zeros(4)}})
        with pytest.raises(ParameterError, match=r"'fast/force' has shape \(5,\) in step 1; the first step had \(4,\)"):
            rec.append({"time": 0.1, "fast": {"force": np.zeros(5)}})
        with pytest.raises(ParameterError, match=r"new: \['x'\]"):
            rec.append({"time": 0.1, "fast": {"force": np.zeros(4)}, "x": 1.0})


@pytest.mark.parametrize("options, message", [
    ({"flush_every": 0}, "flush_every"), ({"flush_interval_s": 0.0}, "flush_interval_s"),
])
def test_bad_flush_settings_are_refused(tmp_path, options, message):
    with pytest.raises(ParameterError, match=message):
        TestRecordWriter.open(tmp_path / "x.h5", {}, {}, **options)


def test_long_messages_are_cut_at_a_character(tmp_path):
    with TestRecordWriter.open(tmp_path / "m.h5", {}, {}) as rec:
        rec.event("error", "é" * 3000)
    message = read_test_record(tmp_path / "m.h5").events[0].message
    assert message.endswith("(truncated)") and len(message.encode()) <= 2048 and message.startswith("éé")


def test_datasets_of_unequal_length_are_cut_to_the_common_length(tmp_path):
    """As a writer killed between two datasets of one flush could leave them."""
    path = tmp_path / "cut.h5"
    with TestRecordWriter.open(path, {}, {"x": "m"}) as rec:
        for k in range(5):
            rec.append({"time": float(k), "x": float(k)})
        rec.finish({})
    with h5py.File(path, "r+") as f:
        f["steps/x"].resize(7, axis=0)
    r = read_test_record(path)
    assert r.n_steps == 5 and r.steps["x"].shape == (5,)


def test_other_files_are_not_records(tmp_path):
    plain = tmp_path / "plain.h5"
    with h5py.File(plain, "w") as f:
        f["force"] = np.zeros(3)
    assert not is_test_record(plain) and not is_test_record(tmp_path / "missing.h5")
    with pytest.raises(DataFileError, match="not a test record"):
        read_test_record(plain)
    (tmp_path / "text.h5").write_text("not hdf5")
    with pytest.raises(DataFileError, match="cannot read as HDF5"):
        read_test_record(tmp_path / "text.h5")


def test_attached_datasets_are_on_disk_at_once_and_survive_the_steps_and_the_finish(tmp_path):
    """attach: readable right after the call (phase 1), still there once the steps file
    (SWMR) replaced the header, and after finish; refused once steps are on disk."""
    path = tmp_path / "att.h5"
    history = {"stroke": np.arange(12.0).reshape(6, 2), "volts": np.linspace(0.0, 1.0, 6)}
    rec = TestRecordWriter.open(path, CONFIG, UNITS, flush_every=1)
    rec.attach("histories/run_0", history, {"stroke": {"a1": "m", "a2": "m"}, "volts": "V"})
    early = read_test_record(path)
    np.testing.assert_array_equal(early.attached["histories/run_0/stroke"], history["stroke"])
    assert early.attached_units == {"histories/run_0/stroke": {"a1": "m", "a2": "m"}, "histories/run_0/volts": "V"}
    rec.append(_step(0))
    with pytest.raises(ParameterError, match="before the first step"):
        rec.attach("late", {"x": np.zeros(2)}, {"x": "m"})
    during = read_test_record(path)
    assert during.n_steps == 1
    np.testing.assert_array_equal(during.attached["histories/run_0/volts"], history["volts"])
    rec.finish({})
    done = read_test_record(path)
    assert done.complete and sorted(done.attached) == ["histories/run_0/stroke", "histories/run_0/volts"]


def test_attach_names_its_faults(tmp_path):
    rec = TestRecordWriter.open(tmp_path / "bad.h5", CONFIG, UNITS)
    with pytest.raises(ParameterError, match="no unit given for 'y'"):
        rec.attach("h", {"y": np.zeros(3)}, {"x": "m"})
    with pytest.raises(ParameterError, match="its units name 2 columns"):
        rec.attach("h", {"x": np.zeros((3, 3))}, {"x": {"a": "m", "b": "m"}})
    with pytest.raises(ParameterError, match="non-empty words"):
        rec.attach("h//x", {"x": np.zeros(3)}, {"x": "m"})
    rec.close()


def test_a_nearly_full_disk_stops_the_steps_before_any_write_and_the_record_says_why(tmp_path, monkeypatch):
    """Less free space than the next flush needs plus the reserve: nothing of that flush
    is written (HDF5 never meets the full disk), the steps flushed before stay, and the
    record still takes the events that say why, and closes cleanly."""
    import collections

    from rths_ident.records.writer import RecordWriteError

    path = tmp_path / "rec.h5"
    rec = TestRecordWriter.open(path, CONFIG, UNITS, flush_every=2)
    for k in range(4):
        rec.append(_step(k))
    usage = collections.namedtuple("usage", "total used free")
    two_steps = 2 * (8 + 8 + 4 * 8 + 2 * 8 + 1)  # bytes of steps 4 and 5: time, x, fast/force, estimate, flag
    free = rec.reserve_bytes + two_steps - 1
    monkeypatch.setattr(_record_writer.shutil, "disk_usage", lambda folder: usage(10 * free, 9 * free, free))
    rec.append(_step(4))
    with pytest.raises(RecordWriteError) as caught:
        rec.append(_step(5))
    assert str(caught.value) == (f"test record {path}: the disk is full: {free / 1e3:.0f} kB free, the next write "
                                 f"needs about {two_steps / 1e3:.0f} kB and "
                                 f"{rec.reserve_bytes / 1e3:.0f} kB are kept free; the record keeps the 4 slow steps "
                                 "flushed before")
    with pytest.raises(RecordWriteError):
        rec.append(_step(6))
    rec.event("error", "the loop stopped: the disk is full")
    rec.close()
    r = read_test_record(path)
    assert r.n_steps == 4 and not r.complete and r.closed
    assert r.errors()[0].message == "the loop stopped: the disk is full"
    np.testing.assert_array_equal(r.steps["x"], 1e-3 * np.arange(4))
