"""The input between samples against closed forms."""

from __future__ import annotations

import numpy as np
from dynamic_synthetic import Multisine

from rths_ident.estimators.offline.dynamic import interpolate_input


def test_bandlimited_interpolation_of_a_periodic_multisine_is_exact():
    """A multisine below the Nyquist frequency, whole periods: the zero-padded DFT
    reproduces its values between samples to rounding."""
    dt, period = 1.0 / 200.0, 400
    u = Multisine(period, dt, 1.0, 60.0, 10.0, seed=1)
    samples = u(np.arange(3 * period) * dt)
    fine = interpolate_input(samples, 7, periodic=True)
    exact = u(np.arange(fine.size) * dt / 7)
    assert np.max(np.abs(fine - exact)) < 1e-9 * np.max(np.abs(exact))


def test_bandlimited_interpolation_of_any_record_is_close_away_from_its_ends():
    dt = 1.0 / 200.0
    u = Multisine(1000, dt, 1.0, 40.0, 10.0, seed=2)  # 40 Hz: well inside the 100 Hz Nyquist band
    fine = interpolate_input(u(np.arange(1000) * dt), 5, periodic=False)
    exact = u(np.arange(fine.size) * dt / 5)
    interior = slice(200, -200)
    assert np.sqrt(np.mean((fine - exact)[interior] ** 2)) < 1e-3 * np.sqrt(np.mean(exact**2))


def test_linear_and_hold():
    u = np.array([0.0, 1.0, 3.0])
    np.testing.assert_allclose(interpolate_input(u, 2, False, "linear"), [0.0, 0.5, 1.0, 2.0, 3.0])
    np.testing.assert_allclose(interpolate_input(u, 2, False, "hold"), [0.0, 0.0, 1.0, 1.0, 3.0])
