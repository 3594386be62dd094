"""A record survives ``kill -9``: a child process writes steps as fast as it can and is
killed with SIGKILL — before any step, right after its first flush, after many flushes
and at random instants (possibly inside a flush). The parent then opens the record and
finds every step up to the last flush the child reported, each equal to what was written.
The same is read while the child still writes.
"""

import os
import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

import rths_ident
from rths_ident.records import read_test_record

FLUSH_EVERY = 5
RATIO = 80

CHILD = f"""
import sys
import numpy as np
from rths_ident.records import TestRecordWriter

rec = TestRecordWriter.open(sys.argv[1], {{"case": "kill"}}, {{"x": "m", "f": {{"a": "N", "b": "N"}}}},
                            kind="kill-test", flush_every={FLUSH_EVERY}, flush_interval_s=3600.0)
rec.event("start", "writing", step=0, time=0.0)
print("open", flush=True)
k = 0
while True:
    rec.append({{"time": 0.01 * (k + 1), "x": k + np.arange({RATIO}) / {RATIO}, "f": [k, -2.0 * k]}})
    k += 1
    if rec.steps == rec.steps_on_disk:
        print(rec.steps_on_disk, flush=True)
"""

SRC = str(Path(rths_ident.__file__).resolve().parents[1])


def _start(path):
    env = {**os.environ, "PYTHONPATH": SRC + os.pathsep + os.environ.get("PYTHONPATH", "")}
    return subprocess.Popen([sys.executable, "-c", CHILD, str(path)], stdout=subprocess.PIPE, text=True, env=env)


def _kill(child):
    child.send_signal(signal.SIGKILL)
    child.wait(timeout=10)
    assert child.returncode == -signal.SIGKILL


def _read_until(child, flushes: int, deadline: float) -> int:
    """The child's reported steps on disk once it has reported ``flushes`` flushes."""
    assert child.stdout.readline().strip() == "open"
    on_disk = seen = 0
    while seen < flushes:
        assert time.monotonic() < deadline, "the child writes too slowly"
        line = child.stdout.readline()
        assert line, "the child died"
        on_disk, seen = int(line), seen + 1
    return on_disk


def _check(path, at_least: int):
    record = read_test_record(path)
    assert not record.complete and record.config == {"case": "kill"} and record.kind == "kill-test"
    assert [e.kind for e in record.events] == ["start"]
    n = record.n_steps
    assert n >= at_least
    if n == 0:  # killed in the header phase: no step datasets yet
        assert record.steps == {} and record.units["x"] == "m"
        return record
    k = np.arange(n)
    np.testing.assert_array_equal(record.time, 0.01 * (k + 1))
    np.testing.assert_array_equal(record.steps["x"], k[:, None] + np.arange(RATIO)[None, :] / RATIO)
    np.testing.assert_array_equal(record.steps["f"], np.stack([k, -2.0 * k], axis=1))
    assert record.units["f"] == {"a": "N", "b": "N"}
    return record


@pytest.mark.parametrize("flushes", [0, 1, 40])
def test_killed_after_a_known_flush(tmp_path, flushes):
    path = tmp_path / "rec.h5"
    child = _start(path)
    try:
        on_disk = _read_until(child, flushes, time.monotonic() + 60)
        if flushes:  # a reader while the writer runs (how `rths-ident show` watches a test)
            live = _check(path, at_least=on_disk)
            assert not live.closed
    finally:
        _kill(child)
    record = _check(path, at_least=on_disk)
    if flushes == 0:
        assert record.closed  # the header phase leaves closed files only
    else:
        assert not record.closed and "never closed the file" in record.status()


def test_killed_at_random_instants(tmp_path):
    rng = random.Random(20261124)
    for i in range(2):
        path = tmp_path / f"rec{i}.h5"
        child = _start(path)
        try:
            assert child.stdout.readline().strip() == "open"
            time.sleep(rng.uniform(0.05, 0.4))
        finally:
            _kill(child)
        _check(path, at_least=0)
