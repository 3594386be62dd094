"""Shipped laboratory hysteresis tests against the raw files parsed by numpy."""

from __future__ import annotations

import numpy as np
import pytest
from _datasets_helpers import raw_table, replace_line

from rths_ident.errors import ParameterError
from rths_ident.errors import DataFileError, UnknownDatasetError
from rths_ident.datasets import get_dataset, load_hysteresis_test

TESTS = [("kunnath", 1326), ("gill", 627), ("daniel", 380)]


@pytest.mark.parametrize("name,n", TESTS)
def test_values_match_raw_files_in_mm_and_kn(name, n):
    raw_x = raw_table(f"hysteresis_tests/{name}/displ_mm_{name}.txt")
    raw_f = raw_table(f"hysteresis_tests/{name}/load_kN_{name}.txt")
    x, f = load_hysteresis_test(name)
    assert raw_x.size == n and raw_f.size == n
    np.testing.assert_array_equal(x, raw_x)
    np.testing.assert_array_equal(f, raw_f)


@pytest.mark.parametrize("name,n", TESTS)
def test_si_units_are_metres_and_newtons(name, n):
    raw_x = raw_table(f"hysteresis_tests/{name}/displ_mm_{name}.txt")
    raw_f = raw_table(f"hysteresis_tests/{name}/load_kN_{name}.txt")
    x, f = load_hysteresis_test(name, units="SI")
    np.testing.assert_allclose(x, raw_x / 1000.0, rtol=1e-15)
    np.testing.assert_allclose(f, raw_f * 1000.0, rtol=1e-15)


def test_peaks_of_the_gill_test():
    # extremes read off the raw file: -33.825 / 33.868 mm, -696.16 / 656.88 kN
    x, f = load_hysteresis_test("gill")
    assert (x.min(), x.max(), f.min(), f.max()) == (-33.825, 33.868, -696.16, 656.88)


def test_metadata_carries_the_citation_and_units():
    for name, _ in TESTS:
        record = get_dataset(name)
        assert "Ortiz" in record.citation and "Computers & Structures 146:252" in record.citation
        assert record.units_as_stored == {"displacement": "mm", "force": "kN"}


def test_bad_units_and_unknown_name():
    with pytest.raises(ParameterError, match="units"):
        load_hysteresis_test("gill", units="imperial")
    with pytest.raises(UnknownDatasetError, match="daniel, gill, kunnath"):
        load_hysteresis_test("elcentro_1940")


def test_nan_in_a_damaged_copy(data_copy):
    path = data_copy / "hysteresis_tests/gill/load_kN_gill.txt"
    replace_line(path, 10, "nan")
    with pytest.raises(DataFileError) as info:
        load_hysteresis_test("gill", root=data_copy)
    assert (info.value.column, info.value.line) == ("force", 10)
    assert str(path) in str(info.value)


def test_unequal_lengths_in_a_damaged_copy(data_copy):
    path = data_copy / "hysteresis_tests/daniel/displ_mm_daniel.txt"
    path.write_text("\n".join(path.read_text().splitlines()[:-3]) + "\n")
    with pytest.raises(DataFileError, match="expected 380 samples.*found 377") as info:
        load_hysteresis_test("daniel", root=data_copy)
    assert info.value.column == "displacement"


def test_two_values_on_a_line_in_a_damaged_copy(data_copy):
    path = data_copy / "hysteresis_tests/kunnath/displ_mm_kunnath.txt"
    replace_line(path, 3, "0.12287 0.5")
    with pytest.raises(DataFileError, match="expected 1 values") as info:
        load_hysteresis_test("kunnath", root=data_copy)
    assert info.value.line == 3


def test_missing_file_in_a_damaged_copy(data_copy):
    (data_copy / "hysteresis_tests/kunnath/load_kN_kunnath.txt").unlink()
    with pytest.raises(DataFileError, match="load_kN_kunnath.txt.*cannot read"):
        load_hysteresis_test("kunnath", root=data_copy)
