"""Logged-test loader: every format, column maps, unit conversion, and errors that name
the file, the column and the line/row."""

from __future__ import annotations

import struct

import h5py
import numpy as np
import pytest
import scipy.io

from rths_ident.errors import ParameterError
from rths_ident.errors import DataFileError
from rths_ident.datasets import LoggedTest, load_logged_test

TIME = np.array([0.0, 0.01, 0.02, 0.03, 0.04])
DISPLACEMENT_MM = np.array([0.0, 1.5, 3.0, 2.0, -1.0])
FORCE_KN = np.array([0.0, 10.0, 18.5, 12.0, -6.25])


def _csv(path, header="time,displacement,force", rows=None, prefix=""):
    rows = rows if rows is not None else [f"{t},{x},{f}" for t, x, f in zip(TIME, DISPLACEMENT_MM, FORCE_KN)]
    path.write_text(prefix + header + "\n" + "\n".join(rows) + "\n")
    return path


def _check_si(test: LoggedTest, displacement_factor=1.0, force_factor=1.0):
    np.testing.assert_array_equal(test.time, TIME)
    np.testing.assert_allclose(test.displacement, DISPLACEMENT_MM * displacement_factor, rtol=1e-15)
    np.testing.assert_allclose(test.force, FORCE_KN * force_factor, rtol=1e-15)


def test_csv_with_default_names_is_taken_as_si(tmp_path):
    test = load_logged_test(_csv(tmp_path / "log.csv"))
    _check_si(test)
    assert test.units == {"time": "s", "displacement": "m", "force": "N"}
    assert test.source == str(tmp_path / "log.csv")
    assert test.n_samples == 5 and test.duration == pytest.approx(0.04)


def test_csv_with_column_map_units_comments_and_semicolons(tmp_path):
    path = tmp_path / "lab.csv"
    path.write_text(
        "# MTS log, test 7\n"
        "\n"
        "Time;LoadCell;Temp;LVDT\n"
        + "\n".join(f"{t};{f};21.5;{x}" for t, x, f in zip(TIME, DISPLACEMENT_MM, FORCE_KN))
        + "\n"
    )
    test = load_logged_test(
        path,
        columns={"time": "Time", "displacement": "LVDT", "force": "LoadCell"},
        units={"displacement": "mm", "force": "kN"},
    )
    _check_si(test, 1e-3, 1e3)
    assert test.units == {"time": "s", "displacement": "mm", "force": "kN"}


def test_whitespace_separated_text(tmp_path):
    path = tmp_path / "log.txt"
    path.write_text("time displacement force\n" + "\n".join(f"{t}  {x}\t{f}" for t, x, f in zip(TIME, DISPLACEMENT_MM, FORCE_KN)))
    _check_si(load_logged_test(path))


def test_npz(tmp_path):
    path = tmp_path / "log.npz"
    np.savez(path, t=TIME, d=DISPLACEMENT_MM.reshape(-1, 1), F=FORCE_KN)
    test = load_logged_test(path, columns={"time": "t", "displacement": "d", "force": "F"},
                            units={"displacement": "mm", "force": "kN"})
    _check_si(test, 1e-3, 1e3)


def test_mat(tmp_path):
    path = tmp_path / "log.mat"
    scipy.io.savemat(path, {"time": TIME, "displacement": DISPLACEMENT_MM, "force": FORCE_KN, "note": "x"})
    _check_si(load_logged_test(path))


def test_hdf5_with_group_paths(tmp_path):
    path = tmp_path / "log.h5"
    with h5py.File(path, "w") as handle:
        handle["run1/time"] = TIME
        handle["run1/x"] = DISPLACEMENT_MM
        handle["run1/f"] = FORCE_KN
    test = load_logged_test(path, columns={"time": "run1/time", "displacement": "run1/x", "force": "run1/f"},
                            units={"displacement": "mm", "force": "kN"})
    _check_si(test, 1e-3, 1e3)


def _matlab_73_header() -> bytes:
    text = b"MATLAB 7.3 MAT-file, Platform: GLNXA64, Created on: Mon Jan  1 00:00:00 2024 HDF5 schema 1.00 ."
    return text.ljust(116, b" ") + b"\x00" * 8 + struct.pack("<H", 0x0200) + b"IM"


def test_matlab_v73_file_is_read_through_hdf5(tmp_path):
    path = tmp_path / "log73.mat"
    with h5py.File(path, "w", userblock_size=512) as handle:
        handle["time"] = TIME.reshape(1, -1)  # MATLAB writes row vectors as (1, n)
        handle["displacement"] = DISPLACEMENT_MM.reshape(1, -1)
        handle["force"] = FORCE_KN.reshape(1, -1)
    with open(path, "r+b") as raw:
        raw.write(_matlab_73_header())
    with pytest.raises(NotImplementedError):
        scipy.io.loadmat(path)  # scipy itself refuses v7.3
    _check_si(load_logged_test(path))


# --------------------------------------------------------------------------- errors


def test_missing_column_names_file_and_column(tmp_path):
    path = _csv(tmp_path / "log.csv", header="time,disp,force")
    with pytest.raises(DataFileError) as info:
        load_logged_test(path)
    error = info.value
    assert error.column == "displacement" and error.line == 1
    assert str(path) in str(error) and "'disp'" in str(error)


def test_nan_names_the_editor_line(tmp_path):
    rows = ["0,0,0", "0.01,1,2", "0.02,nan,3", "0.03,1,1"]
    path = _csv(tmp_path / "log.csv", rows=rows, prefix="# comment\n\n")
    with pytest.raises(DataFileError) as info:
        load_logged_test(path)
    # line 1 comment, 2 blank, 3 header, 4..7 data: the NaN is on line 6
    assert (info.value.column, info.value.line) == ("displacement", 6)
    assert f"{path}, column 'displacement', line 6: value is NaN" == str(info.value)


def test_mapped_column_is_named_as_in_the_file(tmp_path):
    path = _csv(tmp_path / "log.csv", header="t,x,F", rows=["0,0,0", "0.01,1,inf"])
    with pytest.raises(DataFileError) as info:
        load_logged_test(path, columns={"time": "t", "displacement": "x", "force": "F"})
    assert (info.value.column, info.value.line) == ("F", 3)


def test_time_not_increasing_names_the_line(tmp_path):
    rows = ["0,0,0", "0.01,1,2", "0.02,2,3", "0.02,1,1", "0.04,0,0"]
    with pytest.raises(DataFileError, match="increase strictly") as info:
        load_logged_test(_csv(tmp_path / "log.csv", rows=rows))
    assert (info.value.column, info.value.line) == ("time", 5)


def test_short_row_and_non_number(tmp_path):
    with pytest.raises(DataFileError, match="expected 3 values") as info:
        load_logged_test(_csv(tmp_path / "a.csv", rows=["0,0,0", "0.01,1"]))
    assert info.value.line == 3
    with pytest.raises(DataFileError, match="'1,5' is not a number|'abc' is not a number") as info:
        load_logged_test(_csv(tmp_path / "b.csv", rows=["0,0,0", "0.01,abc,1"]))
    assert (info.value.column, info.value.line) == ("displacement", 3)


def test_unequal_lengths_in_npz(tmp_path):
    path = tmp_path / "log.npz"
    np.savez(path, time=TIME, displacement=DISPLACEMENT_MM[:4], force=FORCE_KN)
    with pytest.raises(DataFileError, match="unequal lengths") as info:
        load_logged_test(path)
    assert info.value.column == "displacement" and "row 5" in str(info.value)


def test_nan_in_hdf5_names_the_row(tmp_path):
    path = tmp_path / "log.hdf5"
    force = FORCE_KN.copy()
    force[3] = np.nan
    with h5py.File(path, "w") as handle:
        handle["time"], handle["displacement"], handle["force"] = TIME, DISPLACEMENT_MM, force
    with pytest.raises(DataFileError) as info:
        load_logged_test(path)
    assert (info.value.column, info.value.row) == ("force", 4)


def test_missing_variable_in_mat_lists_the_variables(tmp_path):
    path = tmp_path / "log.mat"
    scipy.io.savemat(path, {"time": TIME, "force": FORCE_KN})
    with pytest.raises(DataFileError, match=r"missing variable.*\['force', 'time'\]") as info:
        load_logged_test(path)
    assert info.value.column == "displacement"


def test_matrix_variable_is_rejected(tmp_path):
    path = tmp_path / "log.npz"
    np.savez(path, time=TIME, displacement=np.zeros((5, 2)), force=FORCE_KN)
    with pytest.raises(DataFileError, match=r"expected a vector.*\(5, 2\)"):
        load_logged_test(path)


@pytest.mark.parametrize("suffix", [".npz", ".mat", ".h5", ".csv"])
def test_unreadable_files(tmp_path, suffix):
    path = tmp_path / ("garbage" + suffix)
    path.write_bytes(b"\x89\xff\x00\x13garbage" * 10)
    with pytest.raises(DataFileError) as info:
        load_logged_test(path)
    assert str(path) in str(info.value)


def test_missing_file_and_unsupported_suffix(tmp_path):
    with pytest.raises(DataFileError, match="no such file"):
        load_logged_test(tmp_path / "absent.csv")
    path = tmp_path / "log.xlsx"
    path.write_text("x")
    with pytest.raises(DataFileError, match="unsupported file type '.xlsx'"):
        load_logged_test(path)


def test_empty_and_single_sample_files(tmp_path):
    empty = tmp_path / "empty.csv"
    empty.write_text("\n# nothing\n")
    with pytest.raises(DataFileError, match="empty"):
        load_logged_test(empty)
    with pytest.raises(DataFileError, match="at least 2 samples"):
        load_logged_test(_csv(tmp_path / "one.csv", rows=["0,0,0"]))


def test_bad_column_map_and_units(tmp_path):
    path = _csv(tmp_path / "log.csv")
    with pytest.raises(ParameterError, match="unknown key 'velocity'"):
        load_logged_test(path, columns={"velocity": "v"})
    with pytest.raises(ParameterError, match=r"units\['force'\] must be one of"):
        load_logged_test(path, units={"force": "tonnes"})


def _write_record(path, n_steps=6, ratio=4, slow=50.0, finish=True):
    """A test record with fast-rate displacement and force: x = sample index [mm]."""
    from rths_ident.records import TestRecordWriter  # noqa: PLC0415

    units = {"fast/measured": "m", "fast/force": "N", "fast/true_force": "N"}
    rec = TestRecordWriter.open(path, {"scenario": "synthetic"}, units,
                                time_base={"slow_rate_hz": slow, "fast_rate_hz": slow * ratio,
                                           "samples_per_step": ratio})
    for k in range(n_steps):
        x = 1e-3 * (k * ratio + np.arange(ratio))
        rec.append({"time": (k + 1) / slow, "fast": {"measured": x, "force": 5e4 * x, "true_force": 4e4 * x}})
    if finish:
        rec.finish({})
    else:
        rec.close()


def test_a_test_record_gives_the_specimen_at_the_fast_rate(tmp_path):
    path = tmp_path / "test_record.h5"
    _write_record(path)
    test = load_logged_test(path)
    n = 6 * 4
    # fast sample j of step k at t_k − Δt_n + (j+1)/f_fast: the samples are 1/200 s apart from 1/200 s
    np.testing.assert_allclose(test.time, (np.arange(n) + 1) / 200.0, rtol=0, atol=1e-15)
    np.testing.assert_allclose(test.displacement, 1e-3 * np.arange(n), rtol=0, atol=1e-18)
    np.testing.assert_allclose(test.force, 50.0 * np.arange(n), rtol=1e-15)
    assert test.units == {"time": "s", "displacement": "m", "force": "N"}
    other = load_logged_test(path, columns={"force": "fast/true_force"})
    np.testing.assert_allclose(other.force, 40.0 * np.arange(n), rtol=1e-15)


def test_test_record_errors(tmp_path):
    path = tmp_path / "test_record.h5"
    _write_record(path)
    with pytest.raises(ParameterError, match="SI units"):
        load_logged_test(path, units={"displacement": "mm"})
    with pytest.raises(ParameterError, match="time comes from its time base"):
        load_logged_test(path, columns={"time": "t"})
    with pytest.raises(DataFileError, match="no dataset steps/fast/nope"):
        load_logged_test(path, columns={"force": "fast/nope"})
    empty = tmp_path / "empty.h5"
    _write_record(empty, n_steps=0, finish=False)
    with pytest.raises(DataFileError, match="no slow step"):
        load_logged_test(empty)
