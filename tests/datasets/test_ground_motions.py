"""Shipped ground motions: values against the raw files parsed by numpy, sizes and
peaks against the source digests, damaged copies raise DataFileError."""

from __future__ import annotations

import numpy as np
import pytest
from _datasets_helpers import STANDARD_GRAVITY, raw_table, replace_line

from rths_ident.errors import DataFileError, UnknownDatasetError
from rths_ident.datasets import load_ground_motion


def test_elcentro_1940_matches_the_raw_file_in_g():
    raw_g = raw_table("ground_motions/elcentro_1940/elcentro_1940_NS_g_dt0.02.txt")
    t, ag = load_ground_motion("elcentro_1940")
    # digest 000 §11: 1560 samples at dt = 0.02 s (31.2 s).
    assert raw_g.size == 1560 and t.size == 1560 and ag.size == 1560
    np.testing.assert_allclose(np.diff(t), 0.02, rtol=0, atol=1e-12)
    assert t[0] == 0.0
    np.testing.assert_allclose(ag, raw_g * STANDARD_GRAVITY, rtol=1e-15, atol=0)
    # PGA from the raw file: 0.31882 g at sample 102 (t = 2.02 s).
    peak_g = np.max(np.abs(raw_g))
    assert peak_g == pytest.approx(0.31882, abs=1e-12)
    assert np.max(np.abs(ag)) == pytest.approx(peak_g * STANDARD_GRAVITY, rel=1e-15)
    assert t[np.argmax(np.abs(ag))] == pytest.approx(0.02 * np.argmax(np.abs(raw_g)), abs=1e-12)


# digest 004 §12 table: dt, N, duration, last non-zero sample, unscaled PGA [m/s²].
MARTHS_RECORDS = [
    ("elcentro_1940_marths", "elcentro_1940_marths/elcentro_1940_marths_m_s2.csv", 0.02, 2060, 41.18, 36.18, 3.135),
    ("kobe_1995", "kobe_1995/kobe_1995_marths_m_s2.csv", 0.01, 5095, 50.94, 45.94, 6.330),
    ("morgan_hill_1984", "morgan_hill_1984/morgan_hill_1984_marths_m_s2.csv", 0.005, 7995, 39.97, 34.97, 2.389),
]


@pytest.mark.parametrize("name,relative,dt,n,duration,last_nonzero,pga", MARTHS_RECORDS)
def test_marths_records_match_raw_file_and_digest_table(name, relative, dt, n, duration, last_nonzero, pga):
    raw = raw_table("ground_motions/" + relative, delimiter=",", skiprows=1)
    t, ag = load_ground_motion(name)
    np.testing.assert_array_equal(t, raw[:, 0])
    np.testing.assert_array_equal(ag, raw[:, 1])  # stored in m/s² already
    assert t.size == n
    np.testing.assert_allclose(np.diff(t), dt, rtol=1e-9)
    assert t[-1] == pytest.approx(duration, abs=1e-9)
    assert t[np.flatnonzero(ag)[-1]] == pytest.approx(last_nonzero, abs=1e-9)
    assert t[np.flatnonzero(ag)[0]] == pytest.approx(5.0, abs=1e-9)  # "the data show 5 s" of zeros
    assert np.max(np.abs(ag)) == pytest.approx(pga, abs=5e-4)


def test_northridge_is_converted_from_g():
    raw = raw_table("ground_motions/northridge_1994/northridge_1994_time_s_accel_g.txt")
    t, ag = load_ground_motion("northridge_1994")
    assert t.size == 3000
    np.testing.assert_array_equal(t, raw[:, 0])
    np.testing.assert_allclose(ag, raw[:, 1] * STANDARD_GRAVITY, rtol=1e-15)
    # shared/README: "accel in g by its peak of 0.885".
    assert np.max(np.abs(ag)) / STANDARD_GRAVITY == pytest.approx(0.885, abs=5e-4)


def test_unknown_name_lists_the_valid_ground_motions():
    with pytest.raises(UnknownDatasetError) as info:
        load_ground_motion("elcentro")
    message = str(info.value)
    for name in ("elcentro_1940", "kobe_1995", "morgan_hill_1984", "northridge_1994"):
        assert name in message
    assert "kunnath" not in message  # only ground motions are valid here
    assert isinstance(info.value, ValueError)


def test_nan_in_a_damaged_copy_names_file_column_and_line(data_copy):
    path = data_copy / "ground_motions/elcentro_1940/elcentro_1940_NS_g_dt0.02.txt"
    replace_line(path, 100, "   NaN")
    with pytest.raises(DataFileError) as info:
        load_ground_motion("elcentro_1940", root=data_copy)
    error = info.value
    assert (error.line, error.column) == (100, "acceleration")
    assert str(path) in str(error) and "line 100" in str(error) and "NaN" in str(error)


def test_missing_column_in_a_damaged_copy(data_copy):
    path = data_copy / "ground_motions/kobe_1995/kobe_1995_marths_m_s2.csv"
    replace_line(path, 1, "time_s,acceleration")
    with pytest.raises(DataFileError) as info:
        load_ground_motion("kobe_1995", root=data_copy)
    assert info.value.column == "accel_m_s2" and info.value.line == 1
    assert "missing column" in str(info.value) and str(path) in str(info.value)


def test_non_monotonic_time_in_a_damaged_copy(data_copy):
    path = data_copy / "ground_motions/kobe_1995/kobe_1995_marths_m_s2.csv"
    replace_line(path, 12, "0.09,0")  # line 11 holds t = 0.09 s already (line 2 is t = 0)
    with pytest.raises(DataFileError) as info:
        load_ground_motion("kobe_1995", root=data_copy)
    assert (info.value.column, info.value.line) == ("time_s", 12)
    assert "increase" in str(info.value)


def test_non_uniform_time_in_a_damaged_copy(data_copy):
    path = data_copy / "ground_motions/morgan_hill_1984/morgan_hill_1984_marths_m_s2.csv"
    replace_line(path, 31, "0.1455,0")  # should be 0.145
    with pytest.raises(DataFileError) as info:
        load_ground_motion("morgan_hill_1984", root=data_copy)
    assert (info.value.column, info.value.line) == ("time_s", 31)


def test_truncated_copy_reports_the_expected_count(data_copy):
    path = data_copy / "ground_motions/elcentro_1940/elcentro_1940_NS_g_dt0.02.txt"
    lines = path.read_text().splitlines()
    path.write_text("\n".join(lines[:-1]) + "\n")
    with pytest.raises(DataFileError, match="expected 1560 samples.*found 1559"):
        load_ground_motion("elcentro_1940", root=data_copy)


def test_text_in_place_of_a_number_names_the_line(data_copy):
    path = data_copy / "ground_motions/northridge_1994/northridge_1994_time_s_accel_g.txt"
    replace_line(path, 7, "0.12\tabc")
    with pytest.raises(DataFileError) as info:
        load_ground_motion("northridge_1994", root=data_copy)
    assert (info.value.column, info.value.line) == ("acceleration", 7)
    assert "'abc' is not a number" in str(info.value)
