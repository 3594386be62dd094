"""Modal analysis against seed 001 (derived modal table of its digest, §3.2) and the
closed-form eigenvalues of the fixed-free spring chain."""

from __future__ import annotations

import numpy as np
import pytest
from _structures_helpers import K_COLUMN, Spring, SpringParams, chain_eigenvalue_factors

from rths_ident.errors import ParameterError
from rths_ident.structures import modal_analysis, three_storey_two_bay_frame


def frame(mass):
    return three_storey_two_bay_frame(mass, Spring, SpringParams(stiffness=K_COLUMN))


@pytest.mark.parametrize(
    "mass, periods",
    [
        (5000.0, (0.4979, 0.1777, 0.1230)),  # digest 001 §3.2 table, 5 t
        (16000.0, (0.8907, 0.3179, 0.2200)),  # 16 t (Kobe)
        (36000.0, (1.3360, 0.4768, 0.3300)),  # 36 t (SCT)
        (64000.0, (1.7814, 0.6358, 0.4400)),  # 64 t (El Centro, Morgan)
    ],
)
def test_modal_periods_match_seed_001_table(mass, periods):
    props = frame(mass).modal_analysis()
    np.testing.assert_allclose(props.period, periods, atol=5.1e-5)  # table rounded to 1e-4 s
    # closed form: ω² = (3k/m) λ_j of the fixed-free chain
    omega_closed = np.sqrt(3 * K_COLUMN / mass * chain_eigenvalue_factors(3))
    np.testing.assert_allclose(props.omega, omega_closed, rtol=1e-12)
    np.testing.assert_allclose(chain_eigenvalue_factors(3), [0.19806, 1.55496, 3.24698], atol=5e-6)


def test_mode_shapes_mass_normalised_and_solve_eigenproblem():
    b = frame(5000.0)
    props = b.modal_analysis()
    phi, m, k = props.mode_shapes, b.mass_matrix, b.linearised_stiffness()
    np.testing.assert_allclose(phi.T @ m @ phi, np.eye(3), atol=1e-12)
    np.testing.assert_allclose(k @ phi, m @ phi @ np.diag(props.omega**2), rtol=1e-10, atol=1e-6)


def test_singular_stiffness_is_reported():
    with pytest.raises(ParameterError, match="not positive definite"):
        modal_analysis(np.eye(2), np.array([[1.0, -1.0], [-1.0, 1.0]]))
    with pytest.raises(ParameterError, match="square"):
        modal_analysis(np.eye(2), np.eye(3))
