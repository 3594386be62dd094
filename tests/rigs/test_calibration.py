"""Seed 002's calibration (digest 002 §3, §8 acceptance checks)."""

import math

import numpy as np
import pytest

from rths_ident.errors import ParameterError
from rths_ident.rigs.calibration import (
    SEED002_CALIBRATION_COUNTS,
    SEED002_CALIBRATION_FORCE_N,
    ForceCalibration,
    ServoKinematics,
    arc_error_at_stroke,
    fit_force_calibration,
    servo_force_limit,
)


def test_arc_kinematics_error_7_2_percent_at_10_mm():
    arc = ServoKinematics(model="arc")
    assert np.radians(arc.angle(0.010) - 90.0) == pytest.approx(0.6667, abs=1e-4)
    assert arc.displacement(arc.angle(0.010)) * 1e3 == pytest.approx(9.276, abs=5e-4)
    assert arc.relative_error(0.010) * 100 == pytest.approx(7.2, abs=0.05)
    assert arc.relative_error(0.010) == pytest.approx(1 - 1.5 * math.sin(1 / 1.5), rel=1e-12)
    assert arc_error_at_stroke() == pytest.approx(arc.relative_error(0.010))


def test_asin_kinematics_exact_and_symmetric():
    exact = ServoKinematics()
    u = np.linspace(-0.01, 0.01, 21)
    assert exact.displacement(exact.angle(u)) == pytest.approx(u, abs=1e-15)
    assert exact.angle(-0.005) - 90 == pytest.approx(-(exact.angle(0.005) - 90))


def test_force_fit_reproduces_eq_4_1():
    fit = fit_force_calibration(SEED002_CALIBRATION_FORCE_N, SEED002_CALIBRATION_COUNTS)
    assert fit.slope == pytest.approx(0.6620, abs=5e-4)
    assert fit.intercept == pytest.approx(-339.05, abs=0.05)
    assert fit.r_squared == pytest.approx(0.985, abs=1e-3)


def test_force_dead_band_sign_policy_and_resolution():
    cal = ForceCalibration()
    assert cal.force(513, 0.005) == 0.0  # dead band: idle current
    assert cal.force(531, 0.005) == pytest.approx(0.662 * 531 - 339.05)
    assert cal.force(531, -0.005) == pytest.approx(-(0.662 * 531 - 339.05))
    assert ForceCalibration(sign_policy="unsigned").force(531, -0.005) > 0
    # one count ≈ 0.43 mm at K_e = 1540 N/m (digest §3)
    assert cal.resolution / 1540 * 1e3 == pytest.approx(0.43, abs=0.005)
    assert cal.counts(cal.magnitude(600)) == pytest.approx(600)


def test_force_limit_16_67_or_16_35():
    assert servo_force_limit() == pytest.approx(16.67, abs=0.005)
    assert servo_force_limit(gravity=9.81) == pytest.approx(16.35, abs=0.005)


def test_bad_calibration_named():
    with pytest.raises(ParameterError, match="sign_policy"):
        ForceCalibration(sign_policy="guess")
    with pytest.raises(ParameterError, match="arm radius"):
        ServoKinematics().angle(0.02)
    with pytest.raises(ParameterError, match="model"):
        ServoKinematics(model="chord")
