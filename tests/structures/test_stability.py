"""Stability limits of the Newmark family (Ω_crit = 1/√(γ/2 − β), Hughes §9.1)."""

from __future__ import annotations

import numpy as np
import pytest

from rths_ident.errors import ParameterError
from rths_ident.structures import NewmarkFixedIteration, TimeStepError, critical_time_step, structure_from_matrices


def test_newmark_family_critical_time_step_closed_forms():
    """Ω_crit = 1/sqrt(γ/2 − β): linear acceleration (β = 1/6) → √12, explicit → 2,
    average acceleration → unconditionally stable."""
    m, k = np.diag([2.0, 1.0]), np.array([[3.0, -1.0], [-1.0, 1.0]]) * 1e4
    omega_max = np.sqrt(np.linalg.eigvals(np.linalg.solve(m, k)).max())
    assert critical_time_step(m, k, 1 / 6, 0.5) == pytest.approx(np.sqrt(12) / omega_max, rel=1e-12)
    assert critical_time_step(m, k, 0.0, 0.5) == pytest.approx(2 / omega_max, rel=1e-12)
    assert critical_time_step(m, k, 0.25, 0.5) == np.inf
    with pytest.raises(ParameterError, match="gamma"):
        critical_time_step(m, k, 0.25, 0.4)
    structure, params = structure_from_matrices(m, k)
    linear_acceleration = NewmarkFixedIteration(structure, beta=1 / 6)
    with pytest.raises(TimeStepError):
        linear_acceleration.init(params, 1.01 * np.sqrt(12) / omega_max)
