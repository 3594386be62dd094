"""Finite-element matrices of the multi-axial RTHS (maRTHS) benchmark.

Condori Uribe et al. (2023), Front. Built Environ. 9:1270996 (digest 004 §1): a SAP2000
export of the 3-storey, 3-bay steel frame (``reference``, 29 equations) and of its
numerical substructure (``numerical``, 27 equations); lumped, diagonal mass with 15
non-zero entries; SI units. The equation numbering is SAP2000's: the joint/DOF table
maps each joint's DOF to its equation.
"""

from __future__ import annotations

import dataclasses
import os
from importlib.resources.abc import Traversable

import numpy as np

from rths_ident.errors import ParameterError

from rths_ident.datasets._textio import (
    check_finite,
    parse_numeric_table,
    require_columns,
    text_locator,
)
from rths_ident.errors import DataFileError
from rths_ident.datasets.registry import DatasetRecord, get_dataset, read_text

#: DOF names of the joint table, in SAP2000's order.
JOINT_DOF_NAMES = ("Ux", "Uy", "Uz", "Rx", "Ry", "Rz")

#: Relative tolerance of the symmetry check: |A - A^T| <= tol * max|A|.
SYMMETRY_TOLERANCE = 1e-9


@dataclasses.dataclass(frozen=True)
class JointDofTable:
    """SAP2000 joint → equation map.

    ``equations[i, j]`` is the 1-based equation number of DOF ``dof_names[j]`` of
    joint ``joints[i]``; 0 means the DOF is restrained or not an equation. Several
    joints may share an equation (e.g. the floor's horizontal Ux, a rigid diaphragm).
    """

    joints: np.ndarray
    equations: np.ndarray
    dof_names: tuple[str, ...] = JOINT_DOF_NAMES

    def equation(self, joint: int, dof: str) -> int | None:
        """1-based equation number of ``dof`` (``"Ux"``, ..., ``"Rz"``) of ``joint``, or
        ``None`` if it is restrained. KeyError for an unknown joint or DOF name."""
        rows = np.flatnonzero(self.joints == joint)
        if rows.size == 0:
            raise KeyError(f"joint {joint} is not in the table; joints: {self.joints.tolist()}")
        if dof not in self.dof_names:
            raise KeyError(f"DOF {dof!r} is not one of {self.dof_names}")
        number = int(self.equations[rows[0], self.dof_names.index(dof)])
        return number if number > 0 else None

    def index(self, joint: int, dof: str) -> int | None:
        """0-based row/column of ``dof`` of ``joint`` in K and M, or ``None``."""
        number = self.equation(joint, dof)
        return None if number is None else number - 1

    def as_rows(self) -> list[dict[str, int]]:
        """The table as a list of ``{"Joint": j, "Ux": eq, ...}`` dicts."""
        return [
            {"Joint": int(joint), **{name: int(eq) for name, eq in zip(self.dof_names, row)}}
            for joint, row in zip(self.joints, self.equations)
        ]


@dataclasses.dataclass(frozen=True)
class MarthsMatrices:
    """Stiffness and mass of the maRTHS benchmark model.

    Attributes
    ----------
    which: ``"reference"`` or ``"numerical"``.
    stiffness: K, (n, n) [N/m; N·m/rad for rotations, N/rad coupling].
    mass: M, (n, n) diagonal [kg], zero on massless (rotational/vertical) equations.
    joint_dof: the SAP2000 joint → equation table.
    source: the folder of the files.
    """

    which: str
    stiffness: np.ndarray
    mass: np.ndarray
    joint_dof: JointDofTable
    source: str

    @property
    def K(self) -> np.ndarray:  # noqa: N802 - the symbol of the source
        """Stiffness matrix K [N/m] (alias of ``stiffness``)."""
        return self.stiffness

    @property
    def M(self) -> np.ndarray:  # noqa: N802 - the symbol of the source
        """Mass matrix M [kg] (alias of ``mass``)."""
        return self.mass

    @property
    def n_equations(self) -> int:
        return self.stiffness.shape[0]

    @property
    def mass_equations(self) -> np.ndarray:
        """0-based indices of the equations with non-zero mass."""
        return np.flatnonzero(np.diag(self.mass) != 0.0)


def _read_square_matrix(data_file: Traversable, n: int) -> np.ndarray:
    source = str(data_file)
    names = tuple(f"column {j + 1}" for j in range(n))
    table = parse_numeric_table(read_text(data_file), source=source, names=names, header=False, delimiter=",")
    locate = text_locator(table)
    for j, name in enumerate(names):
        check_finite(source, name, table.values[:, j], locate)
    if table.values.shape != (n, n):
        raise DataFileError(source, f"expected a {n}×{n} matrix, found {table.values.shape[0]} rows")
    return np.array(table.values, dtype=np.float64)


def _check_symmetric(matrix: np.ndarray, source: str) -> None:
    asymmetry = np.abs(matrix - matrix.T)
    scale = float(np.max(np.abs(matrix)))
    worst = np.unravel_index(int(np.argmax(asymmetry)), matrix.shape)
    if asymmetry[worst] > SYMMETRY_TOLERANCE * scale:
        i, j = int(worst[0]), int(worst[1])
        raise DataFileError(
            source,
            f"the matrix is not symmetric: entry ({i + 1}, {j + 1}) = {matrix[i, j]!r} but "
            f"({j + 1}, {i + 1}) = {matrix[j, i]!r}",
            line=i + 1,
            column=f"column {j + 1}",
        )


def _read_joint_dof(data_file: Traversable, n: int) -> JointDofTable:
    source = str(data_file)
    table = parse_numeric_table(read_text(data_file), source=source, header=True, delimiter=",")
    require_columns(table, ("Joint",) + JOINT_DOF_NAMES)
    locate = text_locator(table)
    columns = {}
    for name in ("Joint",) + JOINT_DOF_NAMES:
        values = table.column(name)
        check_finite(source, name, values, locate)
        bad = np.flatnonzero((values != np.round(values)) | (values < 0) | ((values > n) & (name != "Joint")))
        if bad.size:
            allowed = "a positive integer" if name == "Joint" else f"an integer in 0..{n}"
            raise DataFileError(source, f"{values[bad[0]]!r} is not {allowed}", column=name, **locate(int(bad[0])))
        columns[name] = values.astype(np.int64)
    equations = np.column_stack([columns[name] for name in JOINT_DOF_NAMES])
    used = set(np.unique(equations[equations > 0]).tolist())
    missing = sorted(set(range(1, n + 1)) - used)
    if missing:
        raise DataFileError(source, f"equations {missing} of the {n}×{n} matrices belong to no joint")
    return JointDofTable(joints=columns["Joint"], equations=equations)


def read_marths_record(record: DatasetRecord) -> MarthsMatrices:
    """Read and check the files of an FE-matrix ``record``; see
    :func:`load_marths_matrices`."""
    meta = record.metadata
    n = int(meta["n_equations"])
    files = meta["files"]
    stiffness_file, mass_file = record.file(files["stiffness"]), record.file(files["mass"])
    stiffness = _read_square_matrix(stiffness_file, n)
    mass = _read_square_matrix(mass_file, n)
    _check_symmetric(stiffness, str(stiffness_file))
    _check_symmetric(mass, str(mass_file))
    off_diagonal = mass - np.diag(np.diag(mass))
    if np.any(off_diagonal != 0.0):
        i, j = (int(k) for k in np.argwhere(off_diagonal != 0.0)[0])
        raise DataFileError(str(mass_file), f"the lumped mass matrix has an off-diagonal entry ({i + 1}, {j + 1})",
                            line=i + 1, column=f"column {j + 1}")
    negative = np.flatnonzero(np.diag(mass) < 0.0)
    if negative.size:
        i = int(negative[0])
        raise DataFileError(str(mass_file), f"negative mass {mass[i, i]!r}", line=i + 1, column=f"column {i + 1}")
    n_mass = int(np.count_nonzero(np.diag(mass)))
    if n_mass != int(meta["n_mass_equations"]):
        raise DataFileError(str(mass_file), f"expected {meta['n_mass_equations']} equations with mass, found {n_mass}")
    nonpositive = np.flatnonzero(~(np.diag(stiffness) > 0.0))
    if nonpositive.size:
        i = int(nonpositive[0])
        raise DataFileError(str(stiffness_file), f"diagonal stiffness {stiffness[i, i]!r} is not > 0",
                            line=i + 1, column=f"column {i + 1}")
    joint_dof = _read_joint_dof(record.file(files["joint_dof"]), n)
    which = record.name.removeprefix("marths_")
    return MarthsMatrices(which=which, stiffness=stiffness, mass=mass, joint_dof=joint_dof, source=str(record.folder))


def load_marths_matrices(
    which: str = "reference", *, root: str | os.PathLike | Traversable | None = None
) -> MarthsMatrices:
    """Stiffness, mass and joint/DOF table of the maRTHS benchmark model.

    Parameters
    ----------
    which:
        ``"reference"``: the whole 3-storey, 3-bay frame, 29 equations (15 with mass);
        static condensation gives 2.29, 12.75, 26.28, 26.54, 29.91 Hz. The horizontal
        interface DOF is equation 27 and the interface rotations are equations 21 and 29
        (digest 004 §1). ``"numerical"``: the numerical substructure, 27 equations (15
        with mass), in its own SAP2000 numbering.
    root:
        A copy of the package's data folder to read instead of the shipped one.

    Returns
    -------
    MarthsMatrices
        ``.K`` [N/m], ``.M`` [kg] (float64, symmetric), ``.joint_dof`` (JointDofTable).

    Raises
    ------
    ValueError
        For another ``which``.
    DataFileError
        If a file is damaged: wrong size, not a number, NaN, asymmetric K or M, a
        non-diagonal or negative mass, a joint table that misses a column or an
        equation. Names the file, the column and the line.

    Examples
    --------
    >>> model = load_marths_matrices("reference")
    >>> model.K.shape, model.joint_dof.equation(7, "Ry")
    ((29, 29), 21)
    """
    if which not in ("reference", "numerical"):
        raise ParameterError(f"which must be 'reference' or 'numerical'; got {which!r}")
    return read_marths_record(get_dataset(f"marths_{which}", "fe_matrices", root=root))
