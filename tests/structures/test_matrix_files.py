"""M, K, C of a numerical substructure from CSV files: what reads, and every way it does not."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from rths_ident.errors import ParameterError
from rths_ident.models import BilinearKinematic, BilinearParams
from rths_ident.structures import ShearBuilding, StoreyColumns
from rths_ident.structures.matrix_files import element_pairs, read_structure_matrices, write_structure_matrices

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "data" / "two_bay_frame_matrices"


def test_the_examples_matrices_are_the_two_bay_shear_frame():
    """examples/data/two_bay_frame_matrices is examples/two_bay_frame.toml's frame: M the
    floor masses, K zero (every column an element), C its Rayleigh damping (5 %, modes
    1–2) — as ShearBuilding builds them, to the last bit."""
    frame = ShearBuilding([20.0, 20.0], [StoreyColumns(BilinearKinematic, BilinearParams(k=1540.0, fy=8.0, b=0.05),
                                                       3)] * 2)
    matrices = read_structure_matrices(EXAMPLE)
    np.testing.assert_array_equal(matrices.mass, frame.mass_matrix)
    np.testing.assert_array_equal(matrices.stiffness, np.zeros((2, 2)))
    np.testing.assert_array_equal(matrices.damping, frame.rayleigh_damping(0.05, (1, 2))[0])
    # and that C gives 5 % in both modes (ζ_n = φᵀCφ / (2 ω_n φᵀMφ), the closed form of modal damping)
    k = 3 * 1540.0 * np.array([[2.0, -1.0], [-1.0, 1.0]])
    omega2, phi = np.linalg.eigh(np.linalg.solve(matrices.mass, k))
    for n in range(2):
        v = phi[:, n]
        assert v @ matrices.damping @ v / (2 * np.sqrt(omega2[n]) * (v @ matrices.mass @ v)) == pytest.approx(0.05)


def test_written_matrices_read_back_bit_for_bit(tmp_path):
    rng = np.random.default_rng(1)
    a = rng.normal(size=(4, 4))
    mass, stiffness, damping = a @ a.T + 4 * np.eye(4), a + a.T, 1e-3 * (a + a.T)
    read = read_structure_matrices(write_structure_matrices(tmp_path / "m", mass, stiffness, damping))
    for got, expected in zip(read, (mass, stiffness, damping)):
        np.testing.assert_array_equal(got, expected)


def _folder(tmp_path, mass="20,0\n0,20\n", stiffness="0,0\n0,0\n", damping="1,-1\n-1,1\n"):
    folder = tmp_path / "frame"
    folder.mkdir()
    for stem, text in (("M", mass), ("K", stiffness), ("C", damping)):
        if text is not None:
            (folder / f"{stem}.csv").write_text(text)
    return folder


@pytest.mark.parametrize("files, message", [
    (dict(damping=None), r"structure.matrices: .*C.csv: no such file \(the damping matrix \[N·s/m\]"),
    (dict(stiffness="1,2,3\n4,5,6\n"), r"K.csv: 2×3: expected a square matrix"),
    (dict(stiffness="1,0,0\n0,1,0\n0,0,1\n"), r"K.csv: 3×3: expected 2×2, the size of M.csv"),
    (dict(mass="20,1\n0,20\n"), r"M.csv: not symmetric \(line 1, column 2: 1.0 but line 2, column 1: 0.0\)"),
    (dict(mass="20,0\n0,0\n"), r"M.csv: smallest eigenvalue 0 kg: expected a positive definite mass matrix"),
    (dict(damping="1,x\n-1,1\n"), r"C.csv: not a matrix of numbers"),
    (dict(damping="1,nan\nnan,1\n"), r"C.csv: expected finite numbers"),
])
def test_a_bad_matrix_file_is_named_with_the_field_and_what_is_expected(tmp_path, files, message):
    folder = _folder(tmp_path, **files)
    with pytest.raises(ParameterError, match=message):
        read_structure_matrices(folder)


def test_a_missing_folder_is_named(tmp_path):
    with pytest.raises(ParameterError, match=r"structure.matrices = '.*nowhere': no such folder"):
        read_structure_matrices(tmp_path / "nowhere")


def test_element_pairs_are_dof_numbers_from_one_with_the_ground_zero():
    assert element_pairs([[1, 0], [2, 1], [3, 1]], 3) == ((0, -1), (1, 0), (2, 0))
    for bad in ([[4, 0]], [[1, 1]], [[0, 1]], [[1, -1]]):
        with pytest.raises(ParameterError, match="structure.updated_elements"):
            element_pairs(bad, 3)
