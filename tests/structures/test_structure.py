"""Structure / element groups: vmap over batched column params against closed-form
spring sums, the nonlinear (element) building against the linear matrix model, and the
parameter checks."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from _structures_helpers import Kelvin, KelvinParams, Spring, SpringParams

from rths_ident.errors import ParameterError
from rths_ident.structures import (
    ElementGroup,
    ShearBuilding,
    StoreyColumns,
    StructureParams,
    batch_params,
    set_column_params,
    structure_from_matrices,
    unbatch_params,
)


def two_storey():
    k1 = (1.0e6, 2.0e6, 3.0e6)
    k2 = (4.0e5, 6.0e5)
    storeys = [
        StoreyColumns(Spring, batch_params([SpringParams(stiffness=k) for k in k1]), 3),
        StoreyColumns(Spring, batch_params([SpringParams(stiffness=k) for k in k2]), 2),
    ]
    return ShearBuilding([1000.0, 500.0], storeys), k1, k2


def test_group_forces_are_vmapped_column_forces():
    b, k1, k2 = two_storey()
    structure, params = b.to_structure()
    u = jnp.array([0.01, 0.025])
    v = jnp.array([0.1, -0.2])
    states = structure.init_element_states(params)
    _, r, cols = structure.restoring_force(params, states, u, v, 0.01)
    drift2 = 0.025 - 0.01
    np.testing.assert_allclose(cols[0], np.array(k1) * 0.01, rtol=1e-15)
    np.testing.assert_allclose(cols[1], np.array(k2) * drift2, rtol=1e-15)
    expected = np.array([sum(k1) * 0.01 - sum(k2) * drift2, sum(k2) * drift2])
    np.testing.assert_allclose(r, expected, rtol=1e-14)
    np.testing.assert_allclose(structure.tangent_stiffness(params, states, u, v, 0.01) @ u, expected, rtol=1e-14)


def test_rate_dependent_element_sees_drift_velocity():
    params = batch_params([KelvinParams(stiffness=1.0e6, damping=2.0e3)] * 2)
    group = ElementGroup(Kelvin, top_dof=1, bottom_dof=0, count=2, name="s2")
    state = group.init(params)
    u = jnp.array([0.001, 0.003])
    v = jnp.array([0.5, 0.2])
    _, f, cols = group.nodal_force(2, params, state, u, v, 0.01)
    expected_col = 1.0e6 * 0.002 + 2.0e3 * (-0.3)
    np.testing.assert_allclose(cols, [expected_col, expected_col], rtol=1e-14)
    np.testing.assert_allclose(f, [-2 * expected_col, 2 * expected_col], rtol=1e-14)


def test_params_are_pytree_leaves_that_can_be_replaced():
    """The model-updating hook path: new column params as leaves (tree_map)."""
    b, k1, _ = two_storey()
    structure, params = b.to_structure()
    doubled = jax.tree_util.tree_map(lambda x: x, params)
    doubled = StructureParams(
        mass=params.mass,
        damping=params.damping,
        linear_stiffness=params.linear_stiffness,
        ground_mass=params.ground_mass,
        element_params=(jax.tree_util.tree_map(lambda x: 2 * x, params.element_params[0]),
                        params.element_params[1]),
    )
    k_new = structure.initial_stiffness(doubled, 0.01)
    np.testing.assert_allclose(k_new[0, 0] - k_new[1, 1], 2 * sum(k1), rtol=1e-14)
    assert float(unbatch_params(doubled.element_params[0], 2).stiffness) == 2 * k1[2]


def test_structure_params_validation_names_the_field():
    m = np.eye(2)
    with pytest.raises(ParameterError, match="damping"):
        StructureParams(mass=m, damping=np.eye(3), linear_stiffness=m, ground_mass=np.ones(2))
    with pytest.raises(ParameterError, match="mass must be symmetric"):
        StructureParams(mass=np.array([[1.0, 0.5], [0.0, 1.0]]), damping=m, linear_stiffness=m,
                        ground_mass=np.ones(2))
    with pytest.raises(ParameterError, match="ground_mass"):
        StructureParams(mass=m, damping=m, linear_stiffness=m, ground_mass=np.ones(3))
    with pytest.raises(ParameterError, match="positive semi-definite"):
        StructureParams(mass=-m, damping=m, linear_stiffness=m, ground_mass=np.ones(2))
    with pytest.raises(ParameterError, match="influence"):
        structure_from_matrices(m, m, influence=np.ones(3))


def test_set_column_params_updates_every_column_of_the_model_inside_jit():
    """The model-updating hook's apply_estimate: one identified Params into all
    numerical columns of that model, traced; the new storey stiffnesses follow."""
    b, _, _ = two_storey()
    structure, params = b.to_structure()

    @jax.jit
    def update(p, stiffness):
        identified = jax.tree_util.tree_map(lambda _: stiffness, SpringParams(stiffness=1.0))
        return set_column_params(structure, p, Spring, identified)

    updated = update(params, 7.0e5)
    k = np.asarray(structure.initial_stiffness(updated, 0.01))
    np.testing.assert_allclose(k, [[3 * 7.0e5 + 2 * 7.0e5, -2 * 7.0e5], [-2 * 7.0e5, 2 * 7.0e5]], rtol=1e-14)
    np.testing.assert_allclose(updated.mass, params.mass)
    with pytest.raises(ValueError, match="no element group"):
        set_column_params(structure, params, Kelvin, KelvinParams(stiffness=1.0, damping=0.0))
