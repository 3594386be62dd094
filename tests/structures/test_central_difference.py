"""Central difference: exact discrete recurrence of the undamped SDOF and equality with
explicit Newmark (β = 0, γ = 1/2) for linear structures."""

from __future__ import annotations

import numpy as np
import pytest
from _structures_helpers import K_COLUMN, Spring, SpringParams, elcentro_m_s2

from rths_ident.structures import (
    CentralDifference,
    ExplicitNewmark,
    TimeStepError,
    structure_from_matrices,
    three_storey_two_bay_frame,
)


def test_undamped_recurrence_is_exact():
    """u_{n+1} − (2 − Ω²) u_n + u_{n−1} = 0 for every n (the scheme's definition)."""
    omega = 30.0
    structure, params = structure_from_matrices([[2.0]], [[2.0 * omega**2]])
    dt = 1.5 / omega
    integ = CentralDifference(structure)
    state = integ.init(params, dt, displacement0=[0.01], velocity0=[0.2])
    _, out = integ.simulate(params, np.zeros(150), dt, state=state)
    u = np.concatenate([[0.01], np.asarray(out.displacement)[:, 0]])
    big = (omega * dt) ** 2
    np.testing.assert_allclose(u[2:] - (2 - big) * u[1:-1] + u[:-2], 0.0, atol=1e-15)
    # start: u_1 = u_0 + Δt v_0 + Δt²/2 a_0 with a_0 = −ω² u_0
    assert u[1] == pytest.approx(0.01 + dt * 0.2 - 0.5 * dt**2 * omega**2 * 0.01, rel=1e-14)


def test_equals_explicit_newmark_for_linear_damped_structure():
    building = three_storey_two_bay_frame(5000.0, Spring, SpringParams(stiffness=K_COLUMN))
    c, _, _ = building.rayleigh_damping(0.05)
    structure, params = building.to_linear_structure(c)
    record = elcentro_m_s2(300)
    _, out_cd = CentralDifference(structure).simulate(params, record, 0.02)
    _, out_en = ExplicitNewmark(structure).simulate(params, record, 0.02)
    scale = np.abs(np.asarray(out_en.displacement)).max()
    np.testing.assert_allclose(out_cd.displacement, out_en.displacement, atol=1e-12 * scale)
    with pytest.raises(TimeStepError, match="central difference"):
        CentralDifference(structure).init(params, 0.05)
