"""DynamicRecord: checks with one clear error each, and the period it recognises."""

from __future__ import annotations

import numpy as np
import pytest

from rths_ident.errors import ParameterError
from rths_ident.estimators.offline.dynamic import DynamicRecord, detect_period


def test_detects_the_shortest_exact_period():
    rng = np.random.default_rng(0)
    period = rng.normal(size=100)
    assert detect_period(np.tile(period, 6)) == 100
    assert detect_period(np.tile(period, 6)[:-1]) is None  # not whole periods
    assert detect_period(rng.normal(size=600)) is None


@pytest.mark.parametrize("bad, message", [
    (dict(input=np.ones(3), output=np.ones(3)), "at least 64 samples"),
    (dict(input=np.arange(100.0), output=np.ones(100)), "output is constant"),
    (dict(input=np.arange(100.0), output=np.r_[np.arange(99.0), np.nan]), "finite"),
    (dict(input=np.arange(100.0), output=np.arange(99.0)), "equal length"),
])
def test_bad_records_name_what_is_wrong(bad, message):
    with pytest.raises(ParameterError, match=message):
        DynamicRecord.from_arrays(**bad, dt=0.01)


def test_time_must_be_uniform_and_the_period_must_divide_the_record():
    x = np.sin(np.arange(200.0))
    time = np.cumsum(np.r_[0.0, np.full(199, 0.01)])
    time[50:] += 0.003
    with pytest.raises(ParameterError, match="uniform sampling"):
        DynamicRecord.from_arrays(x, x, time=time)
    with pytest.raises(ParameterError, match="does not divide"):
        DynamicRecord.from_arrays(x, x, dt=0.01, period=60)
    with pytest.raises(ParameterError, match="dt"):
        DynamicRecord.from_arrays(x, x, dt=0.01, time=time)
    with pytest.raises(ParameterError, match="input must be one of"):
        DynamicRecord.from_arrays(x, x, dt=0.01, input_kind="pressure")
    record = DynamicRecord.from_arrays(x, x, time=np.arange(200) * 0.01, period=100)
    assert record.dt == pytest.approx(0.01) and record.n_periods == 2
