"""α-OS (seed 000 Eqs. 2.48–2.55): parameters of Eq. 2.51, reduction to the trapezoidal
rule at α = 0, and the HHT-α spectral radius for a linear structure (K^l = K)."""

from __future__ import annotations

import numpy as np
import pytest
from _structures_helpers import K_COLUMN, Spring, SpringParams, elcentro_m_s2

from rths_ident.errors import ParameterError
from rths_ident.structures import (
    AlphaOS,
    AlphaOSState,
    NewmarkFixedIteration,
    structure_from_matrices,
    three_storey_two_bay_frame,
)


def test_parameters_of_eq_2_51():
    structure, _ = structure_from_matrices([[1.0]], [[1.0]])
    integ = AlphaOS(structure, alpha=-0.1)
    assert (integ.beta, integ.gamma) == (pytest.approx(0.3025, abs=1e-15), pytest.approx(0.6, abs=1e-15))
    os_integ = AlphaOS.from_opensees_alpha(structure, 0.9)
    assert os_integ.alpha == pytest.approx(-0.1, abs=1e-15)
    for bad in (0.1, -0.34):
        with pytest.raises(ParameterError, match=r"\[-1/3, 0\]"):
            AlphaOS(structure, alpha=bad)


def test_alpha_zero_is_the_trapezoidal_rule():
    building = three_storey_two_bay_frame(5000.0, Spring, SpringParams(stiffness=K_COLUMN))
    c, _, _ = building.rayleigh_damping(0.05)
    structure, params = building.to_linear_structure(c)
    record = elcentro_m_s2(300)
    _, out_os = AlphaOS(structure, alpha=0.0).simulate(params, record, 0.02)
    _, out_nm = NewmarkFixedIteration(structure, iterations=1).simulate(params, record, 0.02)
    scale = np.abs(np.asarray(out_nm.displacement)).max()
    np.testing.assert_allclose(out_os.displacement, out_nm.displacement, atol=1e-11 * scale)
    np.testing.assert_allclose(out_os.acceleration, out_nm.acceleration,
                               atol=1e-11 * np.abs(np.asarray(out_nm.acceleration)).max())


@pytest.mark.parametrize("alpha", [-0.1, -0.3])
def test_high_frequency_dissipation_matches_hht_spectral_radius(alpha):
    """Linear undamped SDOF (K^l = K, so α-OS is HHT-α): the one-step map of (u, u̇, ü)
    at Ω = ω Δt = 1e6 has spectral radius ρ∞ = (1 + α)/(1 − α) (Hilber, Hughes & Taylor
    1977); at Ω = 0.1 it is stable and nearly dissipation-free."""
    structure, params = structure_from_matrices([[1.0]], [[1.0]])  # ω = 1 rad/s
    integ = AlphaOS(structure, alpha=alpha)

    def spectral_radius(dt):
        columns = []
        for basis in np.eye(3):
            u, v, a = (np.array([x]) for x in basis)
            state = AlphaOSState(u, v, a, (), u * 1.0, np.zeros(1))  # r_n = K u_n, P_n = 0
            new, _ = integ.step(params, state, 0.0, None, dt)
            columns.append([float(new.displacement[0]), float(new.velocity[0]), float(new.acceleration[0])])
        return np.abs(np.linalg.eigvals(np.array(columns).T)).max()

    assert spectral_radius(1.0e6) == pytest.approx((1 + alpha) / (1 - alpha), rel=1e-5)
    assert 1.0 - 1e-3 < spectral_radius(0.1) <= 1.0 + 1e-12
    assert integ.critical_time_step(params) == np.inf
