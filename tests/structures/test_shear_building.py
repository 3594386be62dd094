"""Shear building assembled from column elements (seed 001 §3.2, Eq. 3.10) and its
input checks."""

from __future__ import annotations

import numpy as np
import pytest
from _structures_helpers import K_COLUMN, Spring, SpringParams

from rths_ident.errors import ParameterError
from rths_ident.structures import ShearBuilding, StoreyColumns, batch_params, three_storey_two_bay_frame


def frame(mass):
    return three_storey_two_bay_frame(mass, Spring, SpringParams(stiffness=K_COLUMN))


def test_linearised_stiffness_is_eq_3_10():
    k = K_COLUMN
    expected = np.array([[6 * k, -3 * k, 0], [-3 * k, 6 * k, -3 * k], [0, -3 * k, 3 * k]])
    np.testing.assert_allclose(frame(5000.0).linearised_stiffness(), expected, rtol=1e-14)


def test_storeys_with_different_columns_and_batched_params():
    params = batch_params([SpringParams(stiffness=k) for k in (1.0e6, 2.0e6)])
    b = ShearBuilding(
        [1000.0, 2000.0],
        [StoreyColumns(Spring, params, 2), StoreyColumns(Spring, SpringParams(stiffness=5.0e5), 1)],
    )
    np.testing.assert_allclose(b.storey_stiffnesses(), [3.0e6, 5.0e5])
    np.testing.assert_allclose(b.linearised_stiffness(), [[3.5e6, -5.0e5], [-5.0e5, 5.0e5]])


def test_shear_building_errors_name_the_problem():
    with pytest.raises(ParameterError, match="floor_masses"):
        ShearBuilding([-1.0], [StoreyColumns(Spring, SpringParams(stiffness=1.0), 1)])
    with pytest.raises(ParameterError, match="one StoreyColumns per floor"):
        ShearBuilding([1.0, 1.0], [StoreyColumns(Spring, SpringParams(stiffness=1.0), 1)])
    bad = batch_params([SpringParams(stiffness=1.0)] * 2)
    with pytest.raises(ParameterError, match="count = 3"):
        ShearBuilding([1.0], [StoreyColumns(Spring, bad, 3)])
    with pytest.raises(ParameterError, match="stiffness"):
        SpringParams(stiffness=-1.0)


def test_lugre_model_instance_as_column_params_gives_eq_3_10():
    """ModifiedLuGre.from_physical (seed 001 Eqs. 2.11–2.16): initial tangent σ0 + σ3 = k."""
    from rths_ident.models import ModifiedLuGre

    column = ModifiedLuGre.from_physical(k=1.34e6, Fy=2.24e4, alpha=0.96, m=19.3, zeta=0.01, xi=0.02)
    building = three_storey_two_bay_frame(5000.0, ModifiedLuGre, column)
    np.testing.assert_allclose(building.storey_stiffnesses(), [3 * 1.34e6] * 3, rtol=1e-12)
