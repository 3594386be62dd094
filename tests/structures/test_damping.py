"""Rayleigh (seed 001 Eqs. 3.11–3.12, digest table) and modal damping, checked through the
eigenvalues of the state matrix (Eq. 3.9)."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg
from _structures_helpers import K_COLUMN, Spring, SpringParams

from rths_ident.errors import ParameterError
from rths_ident.structures import (
    modal_damping,
    rayleigh_coefficients,
    rayleigh_damping_ratios,
    state_space_matrices,
    structure_from_matrices,
    three_storey_two_bay_frame,
)


def frame(mass):
    return three_storey_two_bay_frame(mass, Spring, SpringParams(stiffness=K_COLUMN))


@pytest.mark.parametrize(
    "mass, a0, a1",
    [(5000.0, 0.9300, 2.0843e-3), (16000.0, 0.5199, 3.7286e-3), (64000.0, 0.2599, 7.4571e-3)],
)
def test_rayleigh_coefficients_and_third_mode_ratio(mass, a0, a1):
    c, a0_got, a1_got = frame(mass).rayleigh_damping(0.05, modes=(1, 2))
    assert a0_got == pytest.approx(a0, abs=5e-5)
    assert a1_got == pytest.approx(a1, abs=5e-8)
    omega = frame(mass).modal_analysis().omega
    ratios = rayleigh_damping_ratios(omega, a0_got, a1_got)
    np.testing.assert_allclose(ratios[:2], 0.05, rtol=1e-12)
    assert ratios[2] == pytest.approx(0.0623, abs=5e-5)  # digest: 6.23 % in mode 3


def test_rayleigh_ratios_from_state_space_eigenvalues():
    """Independent route: damping ratio = −Re λ / |λ| of the state matrix (Eq. 3.9)."""
    b = frame(5000.0)
    c, _, _ = b.rayleigh_damping(0.05)
    _, params = structure_from_matrices(b.mass_matrix, b.linearised_stiffness(), c)
    a, _, _, _ = state_space_matrices(params)
    lam = scipy.linalg.eigvals(a)
    lam = lam[lam.imag > 0]
    lam = lam[np.argsort(np.abs(lam))]
    np.testing.assert_allclose(-lam.real / np.abs(lam), [0.05, 0.05, 0.0623489], atol=1e-6)
    np.testing.assert_allclose(np.abs(lam), b.modal_analysis().omega, rtol=1e-10)


def test_modal_damping_gives_requested_ratios():
    b = frame(16000.0)
    zetas = [0.02, 0.03, 0.07]
    c = modal_damping(b.mass_matrix, b.linearised_stiffness(), zetas)
    _, params = structure_from_matrices(b.mass_matrix, b.linearised_stiffness(), c)
    lam = scipy.linalg.eigvals(state_space_matrices(params)[0])
    lam = lam[lam.imag > 0]
    lam = lam[np.argsort(np.abs(lam))]
    np.testing.assert_allclose(-lam.real / np.abs(lam), zetas, rtol=1e-9)


def test_rayleigh_coefficients_formula_and_errors():
    a0, a1 = rayleigh_coefficients(10.0, 30.0, 0.02)
    assert a0 == pytest.approx(2 * 0.02 * 300 / 40, rel=1e-15)
    assert a1 == pytest.approx(2 * 0.02 / 40, rel=1e-15)
    with pytest.raises(ParameterError, match="omega_i"):
        rayleigh_coefficients(-1.0, 30.0, 0.02)
    with pytest.raises(ParameterError, match="modes"):
        frame(5000.0).rayleigh_damping(0.05, modes=(1, 4))
