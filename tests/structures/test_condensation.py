"""Static condensation on the maRTHS benchmark matrices (seed 004 §1): the first five
frequencies of the paper, 2.29, 12.74, 26.28, 26.53, 29.91 Hz (digest: 2.2913, 12.748,
26.280, 26.535, 29.912 Hz after condensation)."""

from __future__ import annotations
import importlib.resources

import numpy as np
import pytest

from rths_ident.errors import ParameterError
from rths_ident.structures import condense_massless_dofs, modal_analysis

MARTHS = str(importlib.resources.files("rths_ident.datasets") / "data/marths/reference")  # shipped copy of shared/data/marths


def test_marths_frequencies_after_condensation():
    k = np.loadtxt(f"{MARTHS}/K_matrix.csv", delimiter=",")
    m = np.loadtxt(f"{MARTHS}/M_matrix.csv", delimiter=",")
    model = condense_massless_dofs(m, k)
    assert model.kept_dofs.size == 15  # "only 15 DOFs carry mass"
    freqs = modal_analysis(model.mass, model.stiffness).frequency[:5]
    np.testing.assert_allclose(freqs, [2.2913, 12.748, 26.280, 26.535, 29.912], rtol=6e-5)
    np.testing.assert_allclose(freqs, [2.29, 12.74, 26.28, 26.53, 29.91], atol=0.01)
    # recovery gives zero force on the massless DOFs: K T = [K_c on kept; 0 elsewhere]
    kt = k @ model.recovery
    dropped = np.setdiff1d(np.arange(k.shape[0]), model.kept_dofs)
    assert np.abs(kt[dropped]).max() < 1e-9 * np.abs(k).max()
    np.testing.assert_allclose(kt[model.kept_dofs], model.stiffness, atol=1e-9 * np.abs(k).max())


def test_condensation_of_a_two_spring_chain_closed_form():
    """Springs k1 (ground–node 1, massless) and k2 (node 1–node 2, mass): series k1k2/(k1+k2)."""
    k1, k2 = 3.0, 6.0
    k = np.array([[k1 + k2, -k2], [-k2, k2]])
    model = condense_massless_dofs(np.diag([0.0, 2.0]), k)
    assert model.stiffness[0, 0] == pytest.approx(k1 * k2 / (k1 + k2), rel=1e-15)
    with pytest.raises(ParameterError, match="no DOF has mass"):
        condense_massless_dofs(np.zeros((2, 2)), k)


def test_implicit_newmark_on_fe_matrices_with_massless_dofs_equals_condensed_model():
    """The maRTHS 29-DOF SAP2000 matrices (15 DOFs with mass) under 0.4 × El Centro
    (seed 004 §1) with mass-proportional damping: implicit Newmark on the full singular-M
    model and on the condensed model give the same response on the massive DOFs (the
    massless rows are static constraints in both)."""
    from _structures_helpers import elcentro_m_s2

    from rths_ident.structures import NewmarkFixedIteration, structure_from_matrices

    k = np.loadtxt(f"{MARTHS}/K_matrix.csv", delimiter=",")
    m = np.loadtxt(f"{MARTHS}/M_matrix.csv", delimiter=",")
    model = condense_massless_dofs(m, k)
    # ι = 1 on the horizontal (Ux) equations of Joint_DOF.csv (1-based SAP numbering)
    joints = np.loadtxt(f"{MARTHS}/Joint_DOF.csv", delimiter=",", skiprows=1, dtype=int)
    ux_equations = np.unique(joints[:, 1][joints[:, 1] > 0]) - 1
    assert sorted(ux_equations.tolist()) == [12, 25, 26]  # 3 floors (rigid diaphragms); eq. 27 = interface
    influence_full = np.zeros(k.shape[0])
    influence_full[ux_equations] = 1.0
    record = 0.4 * elcentro_m_s2(150)
    dt = 1.0 / 1024.0 * 8
    a0 = 0.5
    full, full_params = structure_from_matrices(m, k, a0 * m, influence=influence_full)
    cond, cond_params = structure_from_matrices(
        model.mass, model.stiffness, a0 * model.mass, influence=influence_full[model.kept_dofs]
    )
    _, out_full = NewmarkFixedIteration(full, iterations=1).simulate(full_params, record, dt)
    _, out_cond = NewmarkFixedIteration(cond, iterations=1).simulate(cond_params, record, dt)
    u_full = np.asarray(out_full.displacement)
    u_cond = np.asarray(out_cond.displacement)
    scale = np.abs(u_cond).max()
    assert scale > 0
    np.testing.assert_allclose(u_full[:, model.kept_dofs], u_cond, rtol=0, atol=1e-9 * scale)
    # the massless DOFs follow the static recovery u_s = T_s u_m
    np.testing.assert_allclose(u_full, u_cond @ model.recovery.T, rtol=0, atol=1e-9 * np.abs(u_full).max())
