"""The native integrators against OpenSeesPy for a linear 3-DOF shear building under El
Centro 1940 (same integrator on both sides), the interface-force path, parameter
updating (the import error message: tests/test_extras.py)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from _structures_helpers import ELCENTRO_DT, K_COLUMN, Spring, SpringParams, elcentro_m_s2

from rths_ident.structures import (
    AlphaOS,
    CentralDifference,
    ExplicitNewmark,
    NewmarkFixedIteration,
    three_storey_two_bay_frame,
)

pytestmark = pytest.mark.opensees
pytest.importorskip("openseespy.opensees")

from rths_ident.structures.opensees_adapter import OpenSeesShearBuilding  # noqa: E402


def building_and_damping():
    building = three_storey_two_bay_frame(5000.0, Spring, SpringParams(stiffness=K_COLUMN))
    c, a0, a1 = building.rayleigh_damping(0.05)
    return building, c, a0, a1


def relative_error(native, reference):
    return np.abs(np.asarray(native) - reference).max() / np.abs(reference).max()


@pytest.mark.parametrize(
    "name, make_native, opensees_kwargs, dt",
    [
        ("Newmark", lambda s: NewmarkFixedIteration(s, iterations=1), {}, 0.02),
        ("AlphaOS", lambda s: AlphaOS(s, alpha=-0.1), {"alpha_os": 0.9}, 0.02),
        ("CentralDifference", CentralDifference, {}, 0.01),
        ("NewmarkExplicit", ExplicitNewmark, {}, 0.01),
    ],
)
def test_el_centro_matches_opensees(name, make_native, opensees_kwargs, dt):
    building, c, a0, a1 = building_and_damping()
    record = elcentro_m_s2()  # full record, 31.2 s
    n_steps = int(round((record.size - 1) * ELCENTRO_DT / dt))
    times = dt * np.arange(1, n_steps + 1)
    ground = np.interp(times, ELCENTRO_DT * np.arange(record.size), record)  # = Path series
    model = OpenSeesShearBuilding.from_shear_building(
        building, dt, ground_accel=record, record_dt=ELCENTRO_DT, rayleigh=(a0, a1), integrator=name,
        **opensees_kwargs,
    )
    reference = np.array([model.step() for _ in range(n_steps)])
    structure, params = building.to_structure(c)
    _, out = make_native(structure).simulate(params, ground, dt)
    error = relative_error(out.displacement, reference)
    assert error <= 1e-6, error
    assert np.abs(reference).max() > 0.05  # a real response (top floor ~7 cm)
    model.close()


def test_interface_force_and_parameter_update_match_native():
    """apply_interface_force (subtracted) and update_parameter (OpenSees parameter)
    against the native Newmark with the force vector and the column params replaced as
    pytree leaves mid-record (the model-updating hook path)."""
    building, c, a0, a1 = building_and_damping()
    dt = 0.02
    record = elcentro_m_s2(401)
    ground = record[1:]
    force = 2.0e3 * np.sin(2 * np.pi * 1.5 * dt * np.arange(1, ground.size + 1))
    model = OpenSeesShearBuilding.from_shear_building(building, dt, ground_accel=record, rayleigh=(a0, a1))
    new_k = 0.7 * K_COLUMN
    reference = []
    for i in range(ground.size):
        if i == 200:
            model.update_parameter(storey=1, column=0, stiffness=new_k)
        model.apply_interface_force([force[i], 0.0, 0.0])
        reference.append(model.step())
    reference = np.array(reference)
    assert model.column_stiffness(1, 0) == pytest.approx(new_k)
    assert model.interface_displacement(0) == pytest.approx(reference[-1, 0])

    structure, params = building.to_structure(c)
    storey1 = params.element_params[0]
    updated_storey1 = dataclasses.replace(storey1, stiffness=storey1.stiffness.at[0].set(new_k))
    params_after = dataclasses.replace(params, element_params=(updated_storey1,) + params.element_params[1:])
    # OpenSees applies Rayleigh's a1 to each element's CURRENT stiffness, so its damping
    # follows the update: C = a0 M + a1 K_updated
    k_after = np.asarray(structure.initial_stiffness(params_after, dt))
    params_after = dataclasses.replace(params_after, damping=a0 * building.mass_matrix + a1 * k_after)
    integ = NewmarkFixedIteration(structure, iterations=1)
    forces = np.zeros((ground.size, 3))
    forces[:, 0] = force
    state, out1 = integ.simulate(params, ground[:200], dt, interface_forces=forces[:200])
    _, out2 = integ.simulate(params_after, ground[200:], dt, interface_forces=forces[200:], state=state)
    native = np.concatenate([np.asarray(out1.displacement), np.asarray(out2.displacement)])
    assert relative_error(native, reference) <= 1e-6
    model.close()


def test_wiped_model_refuses_to_step():
    building, _, _, _ = building_and_damping()
    first = OpenSeesShearBuilding.from_shear_building(building, 0.01)
    second = OpenSeesShearBuilding.from_shear_building(building, 0.01)
    with pytest.raises(RuntimeError, match="one model per process"):
        first.step()
    second.close()
