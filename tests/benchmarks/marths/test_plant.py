"""The 2×2 plant of Eq. 25 against python-control and the digest's derived values."""

from __future__ import annotations

import control
import numpy as np
import pytest

from rths_ident.errors import ParameterError
from rths_ident.benchmarks.marths.plant import (
    NOMINAL_PLANT,
    dc_gains,
    entry_polynomials,
    frequency_response,
    rk4_discretisation,
    state_space,
)


def test_dc_gains_are_the_issues_and_python_controls():
    expected = np.array([[0.864, 0.131], [0.140, 0.926]])  # H11 H12 / H21 H22
    for i in range(2):
        for j in range(2):
            num, den = entry_polynomials(NOMINAL_PLANT, i, j)
            gain = control.dcgain(control.tf(num, den))
            assert abs(gain - expected[i, j]) < 5e-4, (i, j)
            assert abs(dc_gains()[i, j] - gain) < 1e-12 * abs(gain)


def test_state_space_realises_the_transfer_matrix():
    ss = state_space()
    system = control.ss(ss.A, ss.B, ss.C, ss.D)
    f = np.array([0.3, 2.29, 10.0, 40.0, 80.0])
    response = system(1j * 2 * np.pi * f)  # (2, 2, len(f))
    assert np.allclose(np.moveaxis(response, -1, 0), frequency_response(NOMINAL_PLANT, f), rtol=1e-9)
    assert np.all(np.linalg.eigvals(ss.A).real < 0)


def test_digest_magnitude_and_phase_at_the_first_mode():
    h = frequency_response(NOMINAL_PLANT, [2.29])[0]
    assert abs(abs(h[0, 0]) - 0.653) < 1e-3 and abs(np.degrees(np.angle(h[0, 0])) + 43.6) < 0.1
    assert abs(abs(h[1, 1]) - 0.846) < 1e-3 and abs(np.degrees(np.angle(h[1, 1])) + 17.7) < 0.1
    # frame pole: ω_n = 505.4 rad/s, ζ = 0.622
    pole = 2 * np.pi * (50 + 63j)
    assert abs(abs(pole) - 505.4) < 0.1 and abs(pole.real / abs(pole) - 0.622) < 1e-3


def test_rk4_matrices_equal_four_rk4_stages():
    """Φ, Γ against four explicit RK4 stages with u held (a second implementation)."""
    ss = state_space()
    dt = 1.0 / 1024.0
    phi, gamma = rk4_discretisation(ss, dt)
    rng = np.random.default_rng(0)
    z, u = rng.normal(size=8), rng.normal(size=2)

    def f(x):
        return ss.A @ x + ss.B @ u

    k1 = f(z)
    k2 = f(z + dt / 2 * k1)
    k3 = f(z + dt / 2 * k2)
    k4 = f(z + dt * k3)
    expected = z + dt / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
    assert np.allclose(phi @ z + gamma @ u, expected, rtol=1e-12, atol=1e-12 * np.abs(expected).max())


def test_an_unstable_description_is_refused():
    with pytest.raises(ParameterError, match="stable"):
        state_space(NOMINAL_PLANT._replace(frame_pole=-50 + 63j))
