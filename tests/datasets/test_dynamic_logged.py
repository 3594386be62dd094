"""load_dynamic_test: columns, units to SI, sample rate, HDF5 dataset paths, errors."""

from __future__ import annotations

import h5py
import numpy as np
import pytest

from rths_ident.datasets import DataFileError, load_dynamic_test
from rths_ident.errors import ParameterError


def test_csv_in_g_and_mm_converts_to_si(tmp_path):
    path = tmp_path / "table.csv"
    path.write_text("t,ag,x\n0,0.1,1.5\n0.01,-0.2,2.0\n0.02,0.0,-1.0\n")
    test = load_dynamic_test(path, input_kind="ground-acceleration", output_kind="displacement",
                             columns={"time": "t", "input": "ag", "output": "x"}, units={"input": "g", "output": "mm"})
    np.testing.assert_allclose(test.input, [0.980665, -1.96133, 0.0])
    np.testing.assert_allclose(test.output, [1.5e-3, 2.0e-3, -1.0e-3])
    assert test.units == {"time": "s", "input": "g", "output": "mm"} and test.dt is None


def test_hdf5_dataset_paths_with_a_sample_rate(tmp_path):
    path = tmp_path / "bench.h5"
    with h5py.File(path, "w") as handle:
        handle["multisine/u"] = np.arange(10.0)[:, None]
        handle["multisine/y"] = np.arange(10.0)[None, :] * 1e-3
    test = load_dynamic_test(path, input_kind="force", output_kind="displacement", sample_rate=750.0,
                             columns={"input": "multisine/u", "output": "multisine/y"})
    assert test.dt == pytest.approx(1 / 750) and test.time is None and test.output[3] == pytest.approx(3e-3)


def test_errors_name_the_field(tmp_path):
    path = tmp_path / "table.csv"
    path.write_text("time,input,output\n0,1,0\n0.01,x,1\n")
    with pytest.raises(DataFileError, match="line 3"):
        load_dynamic_test(path, input_kind="force", output_kind="velocity")
    with pytest.raises(ParameterError, match="expected one of m/s, cm/s, mm/s, in/s"):
        load_dynamic_test(path, input_kind="force", output_kind="velocity", units={"output": "mm"})
    with pytest.raises(ParameterError, match="not both"):
        load_dynamic_test(path, input_kind="force", output_kind="velocity", sample_rate=100.0, columns={"time": "t"})
