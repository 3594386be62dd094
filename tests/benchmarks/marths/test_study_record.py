"""A maRTHS study streams its runs to its test record: one row per finished run, flushed
at once, the kept histories attached; a study stopped halfway (an exception, kill -9)
leaves a readable record with the finished runs; a retried chunk adds no second row;
no run's time history outlives its batch except the kept ones.

Short studies: 6 s of El Centro (its first 5 s are zeros), 4–5 runs, batches of 2.
"""

from __future__ import annotations

import gc
import json
import os
import subprocess
import sys
import weakref
from pathlib import Path

import numpy as np
import pytest

from rths_ident.errors import ParameterError
from rths_ident.benchmarks.marths import study
from rths_ident.benchmarks.marths.study import StudyConfig, run_chunk, run_study, study_plants
from rths_ident.benchmarks.marths.study_record import KIND, StudyRecorder, is_study_record, study_rows
from rths_ident.records import read_test_record

pytestmark = pytest.mark.slow
CFG = StudyConfig(controller="lqg", uncertain=3, duration=6.0, batch=2)


@pytest.fixture(scope="module")
def complete(tmp_path_factory):
    """The whole study with its record: (result, record path)."""
    path = tmp_path_factory.mktemp("study") / "study.h5"
    return run_study(CFG, test_record=path), path


def _assert_rows_equal_json(rows: list[dict], result: dict, runs: list[int], rtol: float = 1e-12):
    assert [row["run"] for row in rows] == runs
    for row in rows:
        i = row["run"]
        for name, values in result["J_runs"][i].items():
            np.testing.assert_allclose(row["J"][name], values, rtol=rtol, atol=1e-12, err_msg=f"run {i} {name}")
        assert row["seed"] == CFG.seed + i
        assert row["plant"] == result["plants"][i]
        report, expected = row["realisability"], result["realisability"][i]
        assert sorted(report) == sorted(expected)
        for name, value in expected.items():
            if isinstance(value, dict):
                np.testing.assert_allclose(report[name].pop("peak"), value["peak"], rtol=rtol, atol=1e-15)
                value = {k: v for k, v in value.items() if k != "peak"}
            assert report[name] == value, name


def test_record_rows_are_the_json_runs(complete):
    result, path = complete
    record = read_test_record(path)
    assert is_study_record(record) and record.kind == KIND and record.complete and record.closed
    assert record.config["runs_planned"] == 4 and record.config["plants"] == result["plants"]
    _assert_rows_equal_json(study_rows(record), result, [0, 1, 2, 3])
    assert record.metrics == json.loads(json.dumps({k: v for k, v in result.items() if not k.startswith("_")}))
    # rows in the order written: the time column (wall seconds) never goes back
    assert np.all(np.diff(record.time) >= 0)
    assert record.units["J/J1"] == "ms" and record.units["J/J7"] == "%"


def test_the_kept_histories_and_the_reference_are_attached(complete):
    result, path = complete
    record = read_test_record(path)
    kept = result["_arrays"]["histories"]
    assert len(kept) == 2
    for run, logs in enumerate(kept):
        for name, array in logs.items():
            np.testing.assert_array_equal(record.attached[f"histories/run_{run}/{name}"], array)
    assert not any(path.startswith("histories/run_2") for path in record.attached)
    np.testing.assert_array_equal(record.attached["reference/time"], result["_arrays"]["time"])
    np.testing.assert_array_equal(record.attached["reference/interface"], result["_arrays"]["reference_interface"])
    assert record.attached_units["histories/run_0/psi_upper"] == {"x2": "m", "theta2": "rad", "x3": "m",
                                                                   "theta3": "rad"}


class _Stop(Exception):
    pass


def test_a_study_stopped_halfway_keeps_its_finished_runs(complete, tmp_path):
    """The callback raises once run 2's row is written: runs 0–2 stay, equal to the
    complete study's; the record says why it stopped."""
    full, _ = complete
    path = tmp_path / "stopped.h5"

    def stop_after_run_2(run, summary):
        if run == 2:
            raise _Stop("stopped by the test")

    with pytest.raises(_Stop):
        run_study(CFG, test_record=path, on_run=stop_after_run_2)
    record = read_test_record(path)
    assert not record.complete and record.metrics is None
    assert record.errors()[0].message == "_Stop: stopped by the test"
    _assert_rows_equal_json(study_rows(record), full, [0, 1, 2])


def test_ctrl_c_in_a_study_is_the_operators_stop_counted_in_runs(complete, tmp_path):
    """Ctrl-C once run 1's row is written: a stop event (not an error) counting the runs
    finished; the rows stay, equal to the complete study's."""
    full, _ = complete
    path = tmp_path / "interrupted.h5"

    def ctrl_c_after_run_1(run, summary):
        if run == 1:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        run_study(CFG, test_record=path, on_run=ctrl_c_after_run_1)
    record = read_test_record(path)
    n = len(full["plants"])
    assert not record.complete and not record.errors()
    assert record.events[-1].kind == "stop" and record.events[-1].step == 2
    assert record.events[-1].message == (f"stopped by the operator (Ctrl-C) after 2 of {n} runs (the finished runs "
                                         f"are kept; missing runs: {n - 2})")
    _assert_rows_equal_json(study_rows(record), full, [0, 1])


_KILL_SCRIPT = """
import os, signal, sys
from rths_ident.benchmarks.marths.study import StudyConfig, run_study

def kill_after_run_1(run, summary):
    if run == 1:
        os.kill(os.getpid(), signal.SIGKILL)

run_study(StudyConfig(controller="lqg", uncertain=3, duration=6.0, batch=0), keep_histories=1,
          test_record=sys.argv[1], on_run=kill_after_run_1)
"""


def test_a_study_killed_with_sigkill_leaves_a_readable_record(complete, tmp_path):
    """kill -9 of the process right after run 1's row: the record (never closed) reads
    in SWMR mode with runs 0 and 1, equal to the complete study's (one by one here,
    batches of 2 there: the same numbers to 1e-10)."""
    full, _ = complete
    path = tmp_path / "killed.h5"
    env = dict(os.environ, PYTHONPATH=str(Path(study.__file__).resolve().parents[3]))
    done = subprocess.run([sys.executable, "-c", _KILL_SCRIPT, str(path)], env=env, timeout=300,
                          capture_output=True, text=True)
    assert done.returncode == -9, done.stderr
    record = read_test_record(path)
    assert not record.closed and not record.complete
    _assert_rows_equal_json(study_rows(record), full, [0, 1], rtol=1e-10)
    assert "histories/run_0/eta_measured" in record.attached


class _OutOfOrderExecutor:
    """Chunks run here, handed back last first, and the last one twice (the answer of a
    task the scheduler retried after its first answer had arrived)."""

    def iter_chunks(self, run_chunk_summaries, cfg, chunks):
        answers = [(first, run_chunk_summaries(cfg, first, count)) for first, count in chunks][::-1]
        yield from answers + answers[-1:]


def test_rows_stream_in_any_order_once_each(complete, tmp_path):
    full, _ = complete
    path = tmp_path / "streamed.h5"
    seen = []
    result = run_study(CFG, keep_histories=1, executor=_OutOfOrderExecutor(), test_record=path,
                       on_run=lambda run, summary: seen.append(run))
    assert seen == [0, 3, 1, 2]  # the kept run here first, then the chunks as answered
    record = read_test_record(path)
    assert record.steps["run"].tolist() == [0, 3, 1, 2] and record.complete
    _assert_rows_equal_json(study_rows(record), full, [0, 1, 2, 3])
    assert result["J_runs"] == full["J_runs"]


def test_a_run_is_recorded_once(tmp_path):
    plants = study_plants(StudyConfig(uncertain=1))
    t = np.arange(1, 4) / 1024.0
    summary = {"J": {f"J{i}": [1.0, 2.0] + ([3.0, 4.0] if i in (8, 10) else []) for i in range(1, 11)},
               "J2_estimated": [0.5, 0.25],
               "realisability": {**{name: {"peak": [0.1, 0.2], "within": True}
                                    for name in ("command_v", "force_n", "velocity_m_s", "stroke_m")},
                                 "commands_within_saturation": True, "limits_respected": True}}
    with StudyRecorder(tmp_path / "once.h5", StudyConfig(uncertain=1), plants,
                       (t, np.zeros((3, 2)), np.zeros((3, 4)))) as recorder:
        assert recorder.add_run(1, summary) and not recorder.add_run(1, summary)
        with pytest.raises(ParameterError, match="run 2 outside"):
            recorder.add_run(2, summary)
        with pytest.raises(ParameterError, match="before the first step"):
            recorder.attach_history(0, {"stroke": np.zeros((3, 2))})
    rows = study_rows(tmp_path / "once.h5")
    assert [row["run"] for row in rows] == [1] and rows[0]["J"]["J8"] == [1.0, 2.0, 3.0, 4.0]
    assert rows[0]["realisability"]["limits_respected"]
    # a record written before the flag was renamed (it was "realisable") still reads
    import h5py  # noqa: PLC0415

    with h5py.File(tmp_path / "once.h5", "r+") as f:
        f.move("steps/realisability/limits_respected", "steps/realisability/realisable")
    assert study_rows(tmp_path / "once.h5")[0]["realisability"]["limits_respected"]


def test_no_history_outlives_its_batch(monkeypatch):
    """Every array a batch returns is dead before the batch's rows are written and once
    the study ends; the kept histories are copies (they do not pin their batch's
    arrays); the result holds exactly the kept ones."""
    produced = []
    original = study.run_batch

    def watched(*args, **kwargs):
        runs = original(*args, **kwargs)
        for logs in runs:
            for array in logs.values():
                produced.append(weakref.ref(array))
                if array.base is not None:
                    produced.append(weakref.ref(array.base))
        return runs

    alive_during = []
    monkeypatch.setattr(study, "run_batch", watched)
    result = run_study(CFG, keep_histories=1,
                       on_run=lambda run, summary: alive_during.append(sum(r() is not None for r in produced)))
    gc.collect()
    assert len(produced) > 0 and sum(r() is not None for r in produced) == 0
    assert len(result["_arrays"]["histories"]) == 1
    assert all(a.base is None for a in result["_arrays"]["histories"][0].values())
    # while the study runs: a batch's arrays are gone before its rows are written
    assert alive_during == [0, 0, 0, 0]
