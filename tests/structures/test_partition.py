"""Partition (seed 001 Eqs. 3.2–3.5): the numerical substructure plus the removed
column's force fed back equals the monolithic building, for every integrator, with
nonlinear modified-LuGre columns (seed 001 Ch. 4: 64 t floors, α = 0.96, ζ = 1 %,
ξ = 2 %); the fixed-iteration Newmark run also satisfies the equation of motion."""

from __future__ import annotations

import numpy as np
import pytest

from rths_ident.structures.numerical_substructure import NativeSubstructure
from _structures_helpers import K_COLUMN, Spring, SpringParams, elcentro_m_s2

from rths_ident.errors import ParameterError
from rths_ident.models import ElementInputs
from rths_ident.structures import (
    AlphaOS,
    CentralDifference,
    ExplicitNewmark,
    NewmarkFixedIteration,
    partition_column,
    partition_matrices,
    three_storey_two_bay_frame,
)


def lugre_frame():
    from rths_ident.models import ModifiedLuGre

    params = ModifiedLuGre.params_from_physical(k=1.34e6, Fy=2.24e4, alpha=0.96, m=19.3, zeta=0.01, xi=0.02)
    return three_storey_two_bay_frame(64000.0, ModifiedLuGre, params)


INTEGRATORS = {
    "newmark-3-iterations": lambda s: NewmarkFixedIteration(s, iterations=3),
    "explicit-newmark": ExplicitNewmark,
    "alpha-os": AlphaOS,
    "central-difference": CentralDifference,
}


@pytest.mark.parametrize("name", list(INTEGRATORS))
def test_partitioned_plus_fed_back_column_equals_monolithic(name):
    building = lugre_frame()
    c, _, _ = building.rayleigh_damping(0.05)
    record = 2.5 * elcentro_m_s2(300)  # the physical column yields
    dt = 0.02
    structure, params = building.to_structure(c)
    _, mono = INTEGRATORS[name](structure).simulate(params, record, dt)
    part = partition_column(building, storey=1, column=-1, damping=c)
    _, _, coupled = INTEGRATORS[name](part.structure).simulate_coupled(
        part.params, record, dt, part.interface, part.interface_params
    )
    assert np.abs(np.asarray(mono.column_forces[0])).max() > 2.24e4  # nonlinear range
    if name == "newmark-3-iterations":
        # after the fixed Newton iterations the discrete equation of motion holds
        u, v, a = (np.asarray(x) for x in (mono.displacement, mono.velocity, mono.acceleration))
        r = np.asarray(mono.restoring_force)
        residual = a @ building.mass_matrix.T + v @ c.T + r + np.outer(record, building.floor_masses)
        assert np.abs(residual).max() < 1e-6 * np.abs(r).max()
    for field in ("displacement", "velocity", "acceleration"):
        ref = np.asarray(getattr(mono, field))
        np.testing.assert_allclose(getattr(coupled, field), ref, rtol=0, atol=1e-10 * np.abs(ref).max())
    # the removed column's force (f_e at DOF 0) is the monolithic right-most column's
    np.testing.assert_allclose(np.asarray(coupled.interface_force)[:, 0], np.asarray(mono.column_forces[0])[:, -1],
                               rtol=0, atol=1e-10 * 2.24e4)
    # the remaining storey-1 columns are the other two
    np.testing.assert_allclose(coupled.column_forces[0], np.asarray(mono.column_forces[0])[:, :2],
                               rtol=0, atol=1e-10 * 2.24e4)


def test_stepwise_predict_measure_feed_back_loop_equals_monolithic():
    """The RTHS usage with an explicit scheme through the numerical-substructure protocol:
    send the target, 'measure' the specimen force there, feed it back — exact, step by
    step from Python."""
    building = three_storey_two_bay_frame(5000.0, Spring, SpringParams(stiffness=K_COLUMN))
    c, _, _ = building.rayleigh_damping(0.05)
    record = elcentro_m_s2(120)
    dt = 0.01
    structure, params = building.to_structure(c)
    integ = ExplicitNewmark(structure)
    _, mono = integ.simulate(params, record, dt)

    part = partition_column(building, damping=c)
    num = NativeSubstructure(ExplicitNewmark(part.structure), part.params, part.interface_dofs, dt)
    specimen_state = part.interface.init(part.interface_params)
    displacements = []
    target, velocity = num.initial_target(), np.zeros(1)  # command to the actuator; predictor velocity
    for ag in record:
        specimen_state, measured = part.interface.model.step(part.interface_params, specimen_state,
                                                             ElementInputs(target[0], velocity[0]), dt)
        target, log = num.step(np.atleast_1d(measured), ag)
        velocity = (log["velocity"] + 0.5 * dt * log["acceleration"])[list(part.interface_dofs)]
        displacements.append(np.asarray(log["displacement"]))
    ref = np.asarray(mono.displacement)
    np.testing.assert_allclose(np.array(displacements), ref, rtol=0, atol=1e-10 * np.abs(ref).max())


def test_partition_keeps_full_ground_mass_and_removes_column():
    building = three_storey_two_bay_frame(5000.0, Spring, SpringParams(stiffness=K_COLUMN))
    part = partition_column(building, storey=1, column=-1, specimen_mass=19.3)
    np.testing.assert_allclose(part.params.ground_mass, [5000.0, 5000.0, 5000.0])  # Eq. 3.3: full M ι
    np.testing.assert_allclose(np.diag(part.params.mass), [5000.0 - 19.3, 5000.0, 5000.0])
    k = K_COLUMN
    k_n = np.asarray(part.structure.initial_stiffness(part.params, 0.01))
    np.testing.assert_allclose(k_n, [[5 * k, -3 * k, 0], [-3 * k, 6 * k, -3 * k], [0, -3 * k, 3 * k]], rtol=1e-14)
    np.testing.assert_allclose(part.params.interface_stiffness, np.diag([k, 0.0, 0.0]))
    assert part.structure.groups[0].count == 2 and part.interface_dofs == (0,)
    with pytest.raises(ParameterError, match="storey"):
        partition_column(building, storey=4)
    with pytest.raises(ParameterError, match="column"):
        partition_column(building, storey=1, column=3)


def test_partition_matrices_eq_3_2():
    k = K_COLUMN
    m = np.diag([5000.0] * 3)
    kk = np.array([[6 * k, -3 * k, 0], [-3 * k, 6 * k, -3 * k], [0, -3 * k, 3 * k]])
    kf = np.zeros((3, 3))
    kf[0, 0] = k
    mf = np.zeros((3, 3))
    mf[0, 0] = 19.3
    _, params = partition_matrices(m, kk, kf, physical_mass=mf)
    np.testing.assert_allclose(params.linear_stiffness, [[5 * k, -3 * k, 0], [-3 * k, 6 * k, -3 * k], [0, -3 * k, 3 * k]])
    np.testing.assert_allclose(params.mass, m - mf)
    np.testing.assert_allclose(params.ground_mass, [5000.0] * 3)


def test_step_and_predict_emits_the_next_target():
    building = three_storey_two_bay_frame(5000.0, Spring, SpringParams(stiffness=K_COLUMN))
    part = partition_column(building)
    integ = CentralDifference(part.structure)
    dt = 0.01
    state = integ.init(part.params, dt)
    state, target, out = integ.step_and_predict(part.params, state, 1.0, [100.0, 0.0, 0.0], dt)
    np.testing.assert_allclose(target, integ.predicted_displacement(part.params, state, dt), rtol=0, atol=0)
    # central difference: the first step from rest, u_1 = 0, returns u_2 from
    # (M/Δt²) u_2 = P_1 − f_e (C = 0): u_2 = −Δt² (m_g ẍ_g + f_e)/m
    np.testing.assert_allclose(target, -dt**2 * (5000.0 * 1.0 + np.array([100.0, 0, 0])) / np.diag(part.params.mass))
    with pytest.raises(NotImplementedError, match="implicit"):
        NewmarkFixedIteration(part.structure).predicted_displacement(part.params, state, dt)
