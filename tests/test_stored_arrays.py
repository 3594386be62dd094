"""Tests of rths_ident.stored_arrays: a set-up array is computed once, read back bit
for bit, computed again for another key or a damaged file, and the low-pass design
read back is scipy's."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.signal

from rths_ident import exported_programs, stored_arrays
from rths_ident.hybrid.compensation import lowpass


def _restore(folder):
    if folder is None:
        exported_programs.disable()
    else:
        exported_programs.enable(folder.parent)


@pytest.fixture
def store(tmp_path):
    before = exported_programs.directory()
    folder = exported_programs.enable(tmp_path)
    yield folder
    _restore(before)  # an in-process command line may have switched it on


@pytest.fixture
def store_off():
    before = exported_programs.directory()
    exported_programs.disable()
    yield
    _restore(before)


def _counted(value):
    calls = []

    def compute():
        calls.append(1)
        return value

    return compute, calls


def test_off_computes_every_time(tmp_path, store_off):
    compute, calls = _counted(np.arange(3.0))
    stored_arrays.stored_array("x", 1, compute)
    stored_arrays.stored_array("x", 1, compute)
    assert len(calls) == 2 and not list(tmp_path.iterdir())


def test_computed_once_then_read_back_bit_for_bit(store):
    value = np.array([[1.0 / 3.0, np.pi, -0.0], [np.nextafter(1.0, 2.0), 1e-300, np.inf]])
    compute, calls = _counted(value)
    first = stored_arrays.stored_array("x", (4, 20.0), compute)
    second = stored_arrays.stored_array("x", (4, 20.0), compute)
    assert len(calls) == 1
    assert second.dtype == value.dtype and second.tobytes() == value.tobytes() == first.tobytes()
    stored_arrays.stored_array("x", (4, 21.0), compute)
    stored_arrays.stored_array("x", (4, 20.0), compute, versions=("another",))
    assert len(calls) == 3


def test_a_damaged_file_is_computed_again(store):
    compute, calls = _counted(np.arange(4.0))
    stored_arrays.stored_array("x", 1, compute)
    (path,) = store.glob("x-*.npy")
    path.write_bytes(b"not numpy")
    np.testing.assert_array_equal(stored_arrays.stored_array("x", 1, compute), np.arange(4.0))
    assert len(calls) == 2
    stored_arrays.stored_array("x", 1, compute)
    assert len(calls) == 2  # rewritten


@pytest.mark.parametrize("order, cutoff, rate", [(4, 20.0, 4000.0), (4, 20.0, 50.0), (3, 5.0, 1000.0)])
def test_the_stored_butterworth_design_is_scipys(store, order, cutoff, rate):
    expected = scipy.signal.butter(order, cutoff, btype="low", fs=rate, output="sos")
    for _ in range(2):  # computed, then read back
        sos = lowpass.design_butterworth(order, cutoff, rate)
        assert sos.tobytes() == expected.tobytes()
    assert len(list(store.glob("butterworth-sos-*.npy"))) == 1
