"""A test record as CSV and MAT files, read back with NumPy and SciPy."""

from __future__ import annotations

import json

import numpy as np
import pytest
from scipy.io import loadmat

from rths_ident.cli import main
from rths_ident.records import TestRecordWriter, read_test_record
from rths_ident.records.export import export_csv, export_mat


@pytest.fixture
def record(tmp_path):
    path = tmp_path / "r.h5"
    units = {"fast/target": "m", "fast/force": "N", "ns/displacement": {"floor1": "m", "floor2": "m"},
             "update/estimate": {"k": "N/m"}}
    with TestRecordWriter.open(path, {"scenario": "demo", "test_file": "[test]\nkind = \"x\"\n"}, units,
                               time_base={"slow_rate_hz": 50.0, "fast_rate_hz": 200.0, "samples_per_step": 4}) as w:
        for k in range(6):
            t = (k + 1) / 50.0
            w.append({"time": t, "fast": {"target": 0.01 * np.arange(4) + k, "force": -np.arange(4.0) * k},
                      "ns": {"displacement": np.array([k * 1e-3, k * 2e-3])}, "update": {"estimate": [1e3 + k]}})
        w.finish({"J2_percent": 1.5})
    return read_test_record(path)


def test_csv_columns_are_the_records_datasets_with_their_units(record, tmp_path):
    paths = export_csv(record, tmp_path / "csv")
    assert sorted(p.name for p in paths) == ["fast_samples.csv", "record.json", "slow_steps.csv"]
    slow = np.loadtxt(tmp_path / "csv" / "slow_steps.csv", delimiter=",", skiprows=1)
    header = (tmp_path / "csv" / "slow_steps.csv").read_text().splitlines()[0].split(",")
    assert header == ["time [s]", "ns/displacement floor1 [m]", "ns/displacement floor2 [m]",
                      "update/estimate k [N/m]"]
    np.testing.assert_array_equal(slow[:, 0], record.time)
    np.testing.assert_array_equal(slow[:, 2], record.steps["ns/displacement"][:, 1])
    fast = np.loadtxt(tmp_path / "csv" / "fast_samples.csv", delimiter=",", skiprows=1)
    assert fast.shape == (24, 3)  # 6 steps × 4 samples: time, fast/force, fast/target
    np.testing.assert_allclose(fast[:, 0], record.fast_time())
    np.testing.assert_array_equal(fast[:, 2], record.steps["fast/target"].ravel())
    meta = json.loads((tmp_path / "csv" / "record.json").read_text())
    assert meta["metrics"] == {"J2_percent": 1.5} and meta["complete"] is True


def test_mat_file_holds_the_same_numbers(record, tmp_path):
    export_mat(record, tmp_path / "mat")
    data = loadmat(tmp_path / "mat" / "test_record.mat", squeeze_me=True)
    np.testing.assert_array_equal(data["steps"]["ns_displacement_floor1"].item(),
                                  record.steps["ns/displacement"][:, 0])
    np.testing.assert_array_equal(data["fast"]["fast_force"].item(), record.steps["fast/force"].ravel())
    assert data["units"]["update_estimate_k"].item() == "N/m"


def test_show_exports_from_the_command_line(record, tmp_path, capsys):
    assert main(["show", record.path, "--csv", str(tmp_path / "c"), "--mat", str(tmp_path / "m")]) == 0
    out = capsys.readouterr().out
    assert "data → " in out and (tmp_path / "c" / "slow_steps.csv").is_file()
    assert (tmp_path / "m" / "test_record.mat").is_file()
    assert main(["show", record.path, "--csv", str(tmp_path / "no" / "such" / "place")]) == 1
