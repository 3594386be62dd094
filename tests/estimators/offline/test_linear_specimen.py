"""Seed 002 linear-specimen identification: Table 5-3 numbers and closed-form records."""

import math

import numpy as np
import pytest

from rths_ident.errors import ParameterError
from rths_ident.estimators.offline import (
    free_vibration_peaks,
    identify_free_vibration,
    log_decrement,
    static_stiffness,
)


def test_table_5_3_of_seed_002():
    # u0/u1 = 8.3/6.87 mm, T_d = 0.93 s, K_T = K_1 + K_e = 30 + 1540 N/m, M_1 = 34 kg,
    # C_1 = 8.5 N·s/m → δ = 0.189, ζ = 0.030, ω_n ≈ 6.76 rad/s, M_e ≈ 0.36 kg,
    # C_T ≈ 13.93–13.94, C_e ≈ 5.43–5.44 N·s/m (digest 002 §4 and its [D] checks)
    r = log_decrement(8.3, 6.87, 0.93, 1570.0, numerical_mass=34.0, numerical_damping=8.5, numerical_stiffness=30.0)
    assert r.log_decrement == pytest.approx(0.18909, abs=5e-5)
    assert r.damping_ratio == pytest.approx(0.03008, abs=5e-5)
    assert r.natural_frequency == pytest.approx(6.7592, abs=5e-4)
    assert r.total_mass == pytest.approx(34.365, abs=0.005)
    assert r.specimen_mass == pytest.approx(0.36, abs=0.01)
    # the thesis rounds ζ to 0.03 before Eq. 5-9: C_T = 13.93–13.94, C_e = 5.43–5.44; with
    # the unrounded ζ = 0.030083 the same equation gives C_T = 13.974, C_e = 5.474
    assert r.total_damping * 0.03 / r.damping_ratio == pytest.approx(13.94, abs=0.01)
    assert r.total_damping == pytest.approx(13.974, abs=0.002)
    assert r.specimen_damping == pytest.approx(r.total_damping - 8.5, rel=1e-12)
    assert r.specimen_stiffness == 1540.0
    assert r.mass_sensitivity_to_period == pytest.approx(74.0, abs=0.5)  # ≈ 2 M_T / T_d


def test_free_vibration_record_from_the_closed_form():
    # eq. (2-2) of seed 002 with M = 34.356 kg, C = 13.93 N·s/m, K = 1570 N/m, u0 = 10 mm
    M, C, K = 34.356, 13.93, 1570.0
    wn = math.sqrt(K / M)
    zeta = C / (2 * M * wn)
    wd = wn * math.sqrt(1 - zeta**2)
    t = np.arange(0.0, 8.0, 0.01)
    u = np.exp(-zeta * wn * t) * (0.01 * np.cos(wd * t) + zeta * wn * 0.01 / wd * np.sin(wd * t))
    r = identify_free_vibration(t, u, K, numerical_mass=34.0, numerical_damping=8.5)
    assert r.damping_ratio == pytest.approx(zeta, rel=2e-3)
    assert r.natural_frequency == pytest.approx(wn, rel=1e-4)
    assert r.total_mass == pytest.approx(M, rel=2e-4)
    assert r.total_damping == pytest.approx(C, rel=3e-3)
    # the peaks of the sampled record sit within a fraction of a step of the true ones
    times, values = free_vibration_peaks(t, u)
    assert np.diff(times).mean() == pytest.approx(2 * math.pi / wd, rel=1e-4)


def test_static_stiffness_matches_numpy_polyfit(rng):
    u = np.linspace(-0.01, 0.01, 11)
    f = 1540.0 * u + 0.2 + 0.05 * rng.normal(size=u.size)
    line = static_stiffness(u, f)
    slope, intercept = np.polyfit(u, f, 1)
    assert line.stiffness == pytest.approx(slope, rel=1e-12)
    assert line.intercept == pytest.approx(intercept, rel=1e-10)
    assert 0.99 < line.r_squared <= 1.0


def test_bad_inputs_raise():
    with pytest.raises(ParameterError, match="later_peak"):
        log_decrement(5.0, 6.0, 1.0, 100.0)
    with pytest.raises(ParameterError, match="damped_period must be a positive"):
        log_decrement(6.0, 5.0, 0.0, 100.0)
    with pytest.raises(ParameterError, match="two different displacements"):
        static_stiffness([1.0, 1.0], [2.0, 3.0])
    with pytest.raises(ParameterError, match="at least two positive peaks"):
        identify_free_vibration(np.arange(10.0), np.linspace(0, 1, 10), 100.0)


def test_fit_results_of_a_static_and_a_free_vibration_record():
    """fit_static_stiffness / fit_free_vibration (what ``fit --method static|logdec`` runs):
    the slope of an exact line, and the closed-form free vibration's M_e, C_e (eq. 2-2 of
    seed 002 with M_T = 34.356 kg, C_T = 13.93 N·s/m, K_T = 1570 N/m; numerical part
    M_1 = 34 kg, C_1 = 8.5 N·s/m, K_1 = 30 N/m)."""
    from rths_ident.estimators.offline import FitData, fit_free_vibration, fit_static_stiffness

    u = np.linspace(-0.01, 0.01, 9)
    static = fit_static_stiffness(FitData.from_arrays(u, 1540.0 * u + 0.1, np.arange(u.size, dtype=float)))
    assert static.model == "linear" and static.method == "static"
    assert static.params == {"m": 0.0, "c": 0.0, "k": pytest.approx(1540.0, rel=1e-12)}
    assert static.details["intercept_N"] == pytest.approx(0.1, rel=1e-9)

    M, C, K = 34.356, 13.93, 1570.0
    wn = math.sqrt(K / M)
    zeta = C / (2 * M * wn)
    wd = wn * math.sqrt(1 - zeta**2)
    t = np.arange(0.0, 8.0, 0.01)
    u = np.exp(-zeta * wn * t) * (0.01 * np.cos(wd * t) + zeta * wn * 0.01 / wd * np.sin(wd * t))
    data = FitData.from_arrays(u, 1540.0 * u, t)
    free = fit_free_vibration(data, 1540.0, numerical_mass=34.0, numerical_damping=8.5, numerical_stiffness=30.0)
    assert free.params["k"] == 1540.0
    assert free.params["m"] == pytest.approx(M - 34.0, abs=0.02)  # ill-conditioned: ∂M_T/∂T_d ≈ 74 kg/s
    assert free.params["c"] == pytest.approx(C - 8.5, abs=0.05)
    with pytest.raises(ParameterError, match="identified specimen mass is negative"):
        fit_free_vibration(data, 1540.0, numerical_mass=40.0, numerical_stiffness=30.0)
    with pytest.raises(ParameterError, match="physical time axis"):
        fit_free_vibration(FitData.from_arrays(u, 1540.0 * u), 1540.0)
    with pytest.raises(ParameterError, match="specimen_stiffness K_e must be > 0"):
        fit_free_vibration(data, 0.0)
