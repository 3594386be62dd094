"""Ideal RTHS of the maRTHS partition (digest 004 §15 check 7)."""

from __future__ import annotations

import numpy as np
import pytest

from rths_ident.errors import ParameterError
from rths_ident.benchmarks.marths import ideal_partition as ip
from rths_ident.benchmarks.marths.model import marths_model
from rths_ident.datasets import load_ground_motion
from rths_ident.datasets.processing import resample_ground_motion

DT = 1.0 / 1024.0


@pytest.fixture(scope="module")
def long_record():
    t, ag = load_ground_motion("elcentro_1940_marths")
    _, a = resample_ground_motion(t, 0.4 * ag, DT)
    return a[5 * 1024:21 * 1024]  # 16 s of strong motion (the record opens with 5 s of zeros)


@pytest.fixture(scope="module")
def record(long_record):
    return long_record[:6 * 1024]


@pytest.fixture(scope="module")
def reference(record):
    return ip.reference_response(marths_model(), record, DT)


def test_coupled_partition_reproduces_the_reference(record, reference):
    model = marths_model()
    run = ip.ideal_partition_response(model, record, DT, "coupled")
    for name, values in ip.global_indices(model, reference, run).items():
        assert np.all(values < 1e-6), name


def test_lagged_partition_diverges_and_the_moved_stiffness_fixes_it(long_record, record, reference):
    model = marths_model()
    lagged = ip.ideal_partition_response(model, long_record, DT, "lagged")
    peak = np.abs(reference).max()
    last = np.abs(lagged.ns_displacement[-1024:])
    assert not np.all(last < 1e2 * peak)  # grows ~14× per second (or overflows)
    run = ip.ideal_partition_response(model, record, DT, "lagged-stiffness")
    indices = ip.global_indices(model, reference, run)
    assert all(np.all(v < 0.1) for v in indices.values())
    assert np.all(indices["J7"] > 1e-4)  # the one-step delay does cost something


def test_unknown_coupling_is_refused(record):
    with pytest.raises(ParameterError, match="coupling"):
        ip.ideal_partition_response(marths_model(), record[:10], DT, "implicit")
