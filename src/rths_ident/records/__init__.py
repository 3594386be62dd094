"""Crash-safe test records (HDF5, h5py): what a test did, written as it goes.

Every ``rths-ident run`` (and every server that drives a test) writes one record: the
configuration, the software versions, the units of every dataset, the time base, the
per-slow-step data appended and flushed during the test, the events (start, stop,
errors) and the metrics at the end, with a ``complete`` flag. A process killed with
``kill -9`` leaves a record readable up to its last flush (:mod:`.writer` says how).

>>> import tempfile, pathlib
>>> path = pathlib.Path(tempfile.mkdtemp()) / "test_record.h5"
>>> with TestRecordWriter.open(path, {"specimen": "spring"}, {"x": "m", "f": "N"}) as rec:
...     rec.event("start", "test started", step=0, time=0.0)
...     for k in range(3):
...         rec.append({"time": 0.02 * (k + 1), "x": 1e-3 * k, "f": 2.0 * k})
...     rec.finish({"peak_force_N": 4.0})
>>> record = read_test_record(path)
>>> record.complete, record.n_steps, record.steps["f"].tolist(), record.units["f"]
(True, 3, [0.0, 2.0, 4.0], 'N')

Layout: ``docs/records.md``. Depends on NumPy and h5py (file errors: :class:`~rths_ident.errors.DataFileError`).
"""

from rths_ident.records.reader import Event, TestRecord, is_test_record, read_test_record
from rths_ident.records.writer import TestRecordWriter, describe_exception

__all__ = ["Event", "TestRecord", "TestRecordWriter", "describe_exception", "is_test_record", "read_test_record"]
