"""Functional test of the UKF benchmark (no timing assertions: speed is reported by
``python -m rths_ident.speed.ukf_vs_filterpy`` / ``rths-ident bench``)."""

import math

import pytest

from rths_ident.speed.ukf_vs_filterpy import SYSTEMS, run


@pytest.mark.parametrize(
    "system", [pytest.param(s, marks=pytest.mark.slow) if s == "bouc_wen" else s for s in SYSTEMS]
)
def test_run_measures_all_three_paths_and_they_agree_with_filterpy(system):
    result = run(n_steps=20, repeats=1, system=system)
    assert result["system"] == system and result["n_steps"] == 20
    for key in ("filterpy_us", "wrapper_us", "wrapper_read_x_us", "scan_us"):
        assert math.isfinite(result[key]) and result[key] > 0.0, key
    assert result["scan_speedup"] == pytest.approx(result["filterpy_us"] / result["scan_us"])
    assert result["wrapper_speedup"] == pytest.approx(result["filterpy_us"] / result["wrapper_us"])
    # the three implementations filtered the same record to the same estimates
    assert result["max_relative_state_difference"] < 1e-6


def test_bad_arguments():
    with pytest.raises(ValueError, match="system must be one of"):
        run(n_steps=10, repeats=1, system="pendulum")
    with pytest.raises(ValueError, match="n_steps >= 2"):
        run(n_steps=1, repeats=1)
