"""maRTHS benchmark matrices: shapes, symmetry, the DOF map (digest 004 §1) and the
natural frequencies from static condensation (digest 004 §1 [DERIVED])."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg
from _datasets_helpers import raw_table, replace_line

from rths_ident.errors import ParameterError
from rths_ident.errors import DataFileError
from rths_ident.datasets import load_marths_matrices


def _condensed_frequencies_hz(K, M):
    """Static condensation of the massless equations, then the generalized eigenproblem."""
    mass = np.diag(M)
    m_idx, o_idx = np.flatnonzero(mass > 0), np.flatnonzero(mass == 0)
    Kmm, Kmo, Koo = K[np.ix_(m_idx, m_idx)], K[np.ix_(m_idx, o_idx)], K[np.ix_(o_idx, o_idx)]
    K_condensed = Kmm - Kmo @ np.linalg.solve(Koo, Kmo.T)
    eigenvalues = scipy.linalg.eigh(K_condensed, np.diag(mass[m_idx]), eigvals_only=True)
    return np.sqrt(eigenvalues) / (2 * np.pi)


def test_reference_matrices_match_raw_files_and_have_29_equations():
    model = load_marths_matrices("reference")
    np.testing.assert_array_equal(model.K, raw_table("marths/reference/K_matrix.csv", delimiter=","))
    np.testing.assert_array_equal(model.M, raw_table("marths/reference/M_matrix.csv", delimiter=","))
    assert model.K.shape == model.M.shape == (29, 29)
    assert model.K.dtype == np.float64
    np.testing.assert_array_equal(model.K, model.K.T)
    assert model.mass_equations.size == 15


def test_numerical_matrices_have_27_equations():
    model = load_marths_matrices("numerical")
    np.testing.assert_array_equal(model.K, raw_table("marths/numerical/N_K_matrix.csv", delimiter=","))
    assert model.K.shape == model.M.shape == (27, 27)
    assert model.mass_equations.size == 15
    assert model.which == "numerical"


def test_reference_frequencies_from_static_condensation():
    model = load_marths_matrices("reference")
    frequencies = _condensed_frequencies_hz(model.K, model.M)[:5]
    # digest 004 §1: 2.2913, 12.748, 26.280, 26.535, 29.912 Hz (paper: 2.29, 12.74, 26.28, 26.53, 29.91)
    np.testing.assert_allclose(frequencies, [2.2913, 12.748, 26.280, 26.535, 29.912], rtol=5e-4)


def test_joint_dof_map_of_the_reference_model():
    table = load_marths_matrices("reference").joint_dof
    raw = raw_table("marths/reference/Joint_DOF.csv", delimiter=",", skiprows=1).astype(int)
    np.testing.assert_array_equal(table.joints, raw[:, 0])
    np.testing.assert_array_equal(table.equations, raw[:, 1:])
    # digest 004 §1: horizontal interface DOF = equation 27, interface rotations 21 and 29
    assert table.equation(7, "Ry") == 21 and table.equation(6, "Ry") == 29
    assert {table.equation(j, "Ux") for j in (5, 6, 7, 8)} == {27}
    assert table.equation(1, "Ux") is None
    assert table.index(7, "Ry") == 20
    with pytest.raises(KeyError):
        table.equation(99, "Ux")
    assert table.as_rows()[1] == {"Joint": 2, "Ux": 0, "Uy": 0, "Uz": 0, "Rx": 0, "Ry": 19, "Rz": 0}


def test_the_storey_masses_sit_on_the_floor_equations():
    model = load_marths_matrices("reference")
    # floors' horizontal equations (Ux of joints 5, 9, 13) carry the largest masses
    floor = [model.joint_dof.index(j, "Ux") for j in (5, 9, 13)]
    heaviest = np.argsort(np.diag(model.M))[-3:]
    assert set(floor) == set(heaviest.tolist())


def test_bad_which():
    with pytest.raises(ParameterError, match="reference"):
        load_marths_matrices("experimental")


def test_asymmetric_stiffness_in_a_damaged_copy(data_copy):
    path = data_copy / "marths/reference/K_matrix.csv"
    rows = [line.split(",") for line in path.read_text().splitlines()]
    rows[2][5] = "12345.0"  # K[3, 6] (1-based) no longer equals K[6, 3] = 0
    path.write_text("\n".join(",".join(r) for r in rows) + "\n")
    with pytest.raises(DataFileError, match="not symmetric") as info:
        load_marths_matrices("reference", root=data_copy)
    assert {info.value.line, int(info.value.column.split()[-1])} == {3, 6}
    assert str(path) in str(info.value)


def test_short_row_in_a_damaged_copy(data_copy):
    path = data_copy / "marths/numerical/N_M_matrix.csv"
    lines = path.read_text().splitlines()
    replace_line(path, 4, lines[3].rsplit(",", 1)[0])
    with pytest.raises(DataFileError, match="expected 27 values") as info:
        load_marths_matrices("numerical", root=data_copy)
    assert info.value.line == 4


def test_nan_mass_in_a_damaged_copy(data_copy):
    path = data_copy / "marths/reference/M_matrix.csv"
    rows = [line.split(",") for line in path.read_text().splitlines()]
    rows[3][3] = "NaN"
    path.write_text("\n".join(",".join(r) for r in rows) + "\n")
    with pytest.raises(DataFileError, match="NaN") as info:
        load_marths_matrices("reference", root=data_copy)
    assert (info.value.line, info.value.column) == (4, "column 4")


def test_missing_column_of_the_joint_table_in_a_damaged_copy(data_copy):
    path = data_copy / "marths/reference/Joint_DOF.csv"
    lines = [line.rsplit(",", 1)[0] for line in path.read_text().splitlines()]
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(DataFileError, match="missing column") as info:
        load_marths_matrices("reference", root=data_copy)
    assert info.value.column == "Rz" and info.value.line == 1


def test_joint_table_without_an_equation_in_a_damaged_copy(data_copy):
    path = data_copy / "marths/reference/Joint_DOF.csv"
    replace_line(path, 3, "2,0,0,0,0,0,0")  # joint 2 held equation 19 alone
    with pytest.raises(DataFileError, match=r"equations \[19\]"):
        load_marths_matrices("reference", root=data_copy)
