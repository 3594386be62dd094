"""Output-error fits recover the oscillator that made a record (made independently by
solve_ivp, ``dynamic_synthetic``), with noise, in both Bouc–Wen sign regions and with a
ground acceleration; the held-out periods are predicted to the noise."""

from __future__ import annotations

import numpy as np
import pytest
from dynamic_synthetic import Multisine, bouc_wen_oscillator

from rths_ident.errors import ParameterError
from rths_ident.estimators.offline.dynamic import DynamicRecord, fit_dynamic

DT, PERIOD, PERIODS = 1.0 / 400.0, 1024, 4


def _record(truth, noise_fraction, seed, ground=False, output="displacement", rms=40.0):
    u = Multisine(PERIOD, DT, 3.0, 90.0, rms, seed=seed)
    y, v, a = bouc_wen_oscillator(u, PERIOD * PERIODS, DT, ground=ground, **truth)
    t = np.arange(PERIOD * PERIODS) * DT
    measured = {"displacement": y, "velocity": v, "acceleration": a + (u(t) if ground else 0.0)}[output]
    rng = np.random.default_rng(seed + 100)
    noisy = measured + rng.normal(scale=noise_fraction * np.sqrt(np.mean(measured**2)), size=measured.size)
    return DynamicRecord.from_arrays(u(t), noisy, dt=DT, input_kind="ground-acceleration" if ground else "force",
                                     output_kind=output, source="synthetic")


def _check_recovery(result, truth, names, sigmas=5.0, floor=0.01):
    for name in names:
        value, se = result.params[name], result.standard_errors[name]
        error = abs(value - truth[name])
        assert error <= max(sigmas * se, floor * abs(truth[name])), f"{name}: {value} vs {truth[name]} (SE {se})"


@pytest.mark.slow
def test_hardening_bouc_wen_is_recovered_and_predicts_the_held_out_period():
    truth = dict(m=1.5, c=6.0, k=9.0e4, alpha=0.4, beta=700.0, gamma=-1000.0, n=1.0)
    record = _record(truth, 0.01, seed=21)
    result = fit_dynamic(record, "boucwen", hold_out_periods=1, fixed={"n": 1.0}, seed=0)
    assert result.sign_region == "hardening"
    _check_recovery(result, truth, ("m", "c", "k", "alpha", "beta", "gamma"))
    noise_rms = 0.01 * np.sqrt(np.mean(record.output**2))
    held_out = result.prediction("held-out").metrics
    assert held_out["rmse"] < 1.05 * noise_rms  # the held-out period to the noise
    assert result.noise["std"] == pytest.approx(noise_rms, rel=0.05)  # between-period estimate
    assert held_out["model_error"]["upper_95"] < 0.35 * noise_rms


@pytest.mark.slow
def test_ground_acceleration_with_known_mass_to_absolute_acceleration():
    truth = dict(m=2.0, c=10.0, k=7.0e4, alpha=0.1, beta=5000.0, gamma=3000.0, n=1.5)  # z_u = 2.5 mm
    record = _record(truth, 0.005, seed=22, ground=True, output="acceleration", rms=10.0)  # peak 2.1 mm
    result = fit_dynamic(record, "boucwen", fixed={"m": 2.0}, seed=0)
    assert result.sign_region == "softening"
    assert "m" not in result.fitted and result.params["m"] == 2.0
    _check_recovery(result, truth, ("c", "k", "alpha"), floor=0.02)
    z_u = lambda p: (1.0 / (p["beta"] + p["gamma"])) ** (1.0 / p["n"])  # noqa: E731
    assert z_u(result.params) == pytest.approx(z_u(truth), rel=0.03)
    assert result.prediction("fit").metrics["nrmse_rms_percent"] < 0.6


def test_ground_acceleration_without_the_mass_is_one_clear_error():
    t = np.arange(512) * DT
    record = DynamicRecord.from_arrays(np.sin(40 * t) + np.sin(90 * t), np.cos(40 * t), dt=DT,
                                       input_kind="ground-acceleration")
    with pytest.raises(ParameterError, match="--fix m="):
        fit_dynamic(record, "boucwen")


def test_hold_out_needs_a_periodic_record_and_enough_periods():
    t = np.arange(512) * DT
    record = DynamicRecord.from_arrays(np.sin(40 * t) + np.sin(90 * t), np.cos(40 * t), dt=DT, period=None)
    with pytest.raises(ParameterError, match="periodic"):
        fit_dynamic(record, "boucwen", hold_out_periods=1)
    periodic = DynamicRecord.from_arrays(np.tile(np.sin(np.linspace(0, 30, 128)), 2), np.tile(np.cos(np.linspace(0, 30, 128)), 2),
                                         dt=DT, period=128)
    with pytest.raises(ParameterError, match="samples are left to fit"):
        fit_dynamic(periodic, "boucwen", hold_out_periods=1)
