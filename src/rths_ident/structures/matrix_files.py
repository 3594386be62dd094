"""A numerical substructure's mass, stiffness and damping matrices from a folder of CSV files.

The folder holds three files, each ``n`` lines of ``n`` comma-separated numbers (no
header; ``#`` starts a comment), in SI:

* ``M.csv`` — mass M [kg], symmetric positive definite;
* ``K.csv`` — linear stiffness K [N/m], symmetric (the part of the structure given as a
  matrix; numerical copies of the specimen's model come on top, as elements);
* ``C.csv`` — viscous damping C [N·s/m], symmetric (of the whole structure, specimen
  included: it stays whole in the numerical substructure, :mod:`.partition`).

Line/column ``i`` (1-based) is DOF ``i``: a horizontal displacement relative to the
ground, every DOF moving with the ground (influence vector ι = 1, ground mass m_g = M ι).
The specimen is NOT in the matrices: it is the physical substructure. Test files number
DOFs from 1, with 0 for the ground.

CSV rather than ``.npz``: a spreadsheet, MATLAB (``writematrix``) or NumPy
(``np.savetxt(..., delimiter=",")``) writes it, and it reads in a text editor and a diff.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import NamedTuple

import numpy as np

from rths_ident.errors import ParameterError

__all__ = ["MATRIX_FILES", "StructureMatrices", "read_structure_matrices", "element_pairs", "write_structure_matrices"]

#: file stem → (what it is, unit)
MATRIX_FILES = {"M": ("mass", "kg"), "K": ("stiffness", "N/m"), "C": ("damping", "N·s/m")}
#: symmetry tolerance: |A − Aᵀ| ≤ this × max |A| (a CSV written with 12 significant digits passes)
SYMMETRY_TOLERANCE = 1e-9


class StructureMatrices(NamedTuple):
    """M [kg], K [N/m], C [N·s/m], each (n, n), from :func:`read_structure_matrices`."""

    mass: np.ndarray
    stiffness: np.ndarray
    damping: np.ndarray

    @property
    def n_dof(self) -> int:
        return int(self.mass.shape[0])


def _read_one(folder: Path, stem: str, field: str) -> np.ndarray:
    path = folder / f"{stem}.csv"
    what, unit = MATRIX_FILES[stem]
    place = f"{field}: {path}"
    if not path.is_file():
        raise ParameterError(f"{place}: no such file (the {what} matrix [{unit}], n lines of n comma-separated "
                             "numbers)")
    try:
        matrix = np.loadtxt(path, delimiter=",", ndmin=2, dtype=float, comments="#")
    except ValueError as error:
        raise ParameterError(f"{place}: not a matrix of numbers ({error})") from None
    if matrix.ndim != 2 or matrix.shape[0] != matrix.shape[1] or matrix.shape[0] == 0:
        raise ParameterError(f"{place}: {matrix.shape[0]}×{matrix.shape[1]}: expected a square matrix (n lines of n "
                             f"numbers) [{unit}]")
    if not np.all(np.isfinite(matrix)):
        raise ParameterError(f"{place}: expected finite numbers [{unit}]")
    scale = max(float(np.max(np.abs(matrix))), 1e-300)
    asymmetry = float(np.max(np.abs(matrix - matrix.T)))
    if asymmetry > SYMMETRY_TOLERANCE * scale:
        i, j = np.unravel_index(np.argmax(np.abs(matrix - matrix.T)), matrix.shape)
        raise ParameterError(f"{place}: not symmetric (line {i + 1}, column {j + 1}: {matrix[i, j]!r} but line {j + 1}, "
                             f"column {i + 1}: {matrix[j, i]!r}): expected a symmetric {what} matrix [{unit}]")
    return matrix


def read_structure_matrices(folder, field: str = "structure.matrices") -> StructureMatrices:
    """M, K and C from ``folder`` (module doc); every problem is a :class:`ParameterError`
    naming ``field``, the file and what is expected."""
    folder = Path(os.fspath(folder))
    if not folder.is_dir():
        raise ParameterError(f"{field} = {str(folder)!r}: no such folder (expected a folder holding M.csv, K.csv "
                             "and C.csv)")
    mass, stiffness, damping = (_read_one(folder, stem, field) for stem in MATRIX_FILES)
    n = mass.shape[0]
    for stem, matrix in (("K", stiffness), ("C", damping)):
        if matrix.shape != (n, n):
            raise ParameterError(f"{field}: {folder / (stem + '.csv')}: {matrix.shape[0]}×"
                                 f"{matrix.shape[1]}: expected {n}×{n}, the size of M.csv")
    smallest = float(np.linalg.eigvalsh(mass).min())
    if not smallest > 0.0:
        raise ParameterError(f"{field}: {folder / 'M.csv'}: smallest eigenvalue {smallest:.6g} kg: "
                             "expected a positive definite mass matrix (a mass at every DOF)")
    return StructureMatrices(mass, stiffness, damping)


def element_pairs(pairs, n_dof: int, field: str = "structure.updated_elements") -> tuple[tuple[int, int], ...]:
    """``[[i, j], …]`` (DOF numbers from 1, 0 the ground; an element's deformation is
    u_i − u_j) checked against ``n_dof`` DOFs; returned as (top, bottom) 0-based indices,
    ``bottom`` −1 for the ground."""
    out = []
    for pair in pairs:
        i, j = (int(v) for v in pair)
        if not (1 <= i <= n_dof and 0 <= j <= n_dof and i != j):
            raise ParameterError(f"{field}: [{i}, {j}]: expected [i, j] with i a DOF in 1…{n_dof} and j another DOF "
                                 f"in 1…{n_dof} or 0 (the ground)")
        out.append((i - 1, j - 1))
    return tuple(out)


def write_structure_matrices(folder, mass, stiffness, damping) -> Path:
    """Write M.csv, K.csv and C.csv into ``folder`` (created), every number as its
    shortest exact decimal (``repr``): the matrices read back bit for bit."""
    folder = Path(os.fspath(folder))
    folder.mkdir(parents=True, exist_ok=True)
    for stem, matrix in zip(MATRIX_FILES, (mass, stiffness, damping)):
        rows = np.atleast_2d(np.asarray(matrix, dtype=float))
        what, unit = MATRIX_FILES[stem]
        text = f"# {stem}: {what} [{unit}], line/column i = DOF i\n"
        text += "\n".join(",".join(repr(float(v)) for v in row) for row in rows) + "\n"
        (folder / f"{stem}.csv").write_text(text, encoding="utf-8")
    return folder
