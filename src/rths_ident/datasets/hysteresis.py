"""Shipped laboratory cyclic tests (measured displacement and restoring force).

From the public data set accompanying Ortiz, Alvarez & Bedoya-Ruíz (2015), Computers &
Structures 146:252–269 (the citation is in each test's metadata and in
``list_datasets("hysteresis_test")``).
"""

from __future__ import annotations

import os
from importlib.resources.abc import Traversable

import numpy as np

from rths_ident.errors import ParameterError

from rths_ident.datasets._textio import check_finite, parse_numeric_table, text_locator
from rths_ident.errors import DataFileError
from rths_ident.datasets.registry import DatasetRecord, get_dataset, read_text

#: Factor from the stored units to SI for each quantity.
_TO_SI = {"mm": 1.0e-3, "m": 1.0, "kN": 1.0e3, "N": 1.0}


def _read_single_column(record: DatasetRecord, quantity: str) -> np.ndarray:
    data_file = record.file(record.metadata["files"][quantity])
    source = str(data_file)
    table = parse_numeric_table(read_text(data_file), source=source, names=(quantity,), header=False)
    values = table.column(quantity)
    check_finite(source, quantity, values, text_locator(table))
    if values.size != record.n_samples:
        raise DataFileError(
            source,
            f"expected {record.n_samples} samples (n_samples in {record.metadata_file.name}), "
            f"found {values.size}",
            column=quantity,
        )
    return values


def read_hysteresis_record(record: DatasetRecord, units: str = "as_stored") -> tuple[np.ndarray, np.ndarray]:
    """Read and check the two files of a hysteresis-test ``record``; see
    :func:`load_hysteresis_test`."""
    if units not in ("as_stored", "SI"):
        raise ParameterError(f"units must be 'as_stored' (mm, kN) or 'SI' (m, N); got {units!r}")
    displacement = _read_single_column(record, "displacement")
    force = _read_single_column(record, "force")
    if units == "SI":
        stored = record.units_as_stored
        displacement = displacement * _TO_SI[stored["displacement"]]
        force = force * _TO_SI[stored["force"]]
    return displacement, force


def load_hysteresis_test(
    name: str, units: str = "as_stored", *, root: str | os.PathLike | Traversable | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Measured displacement and restoring force of a shipped laboratory cyclic test.

    Parameters
    ----------
    name:
        ``"kunnath"`` (1326 samples), ``"gill"`` (627) or ``"daniel"`` (380).
    units:
        ``"as_stored"`` (default): displacement [mm], force [kN], as in the data set.
        ``"SI"``: displacement [m], force [N].
    root:
        A copy of the package's data folder to read instead of the shipped one.

    Returns
    -------
    displacement, force : ndarray (n,)
        Sample-by-sample pairs in the order of the loading history (no time column).

    Raises
    ------
    UnknownDatasetError
        For a name that is not shipped (the message lists the valid names).
    DataFileError
        If a file is damaged (not a number, NaN, wrong count); names the file, the
        column and the line.

    Examples
    --------
    >>> x_mm, f_kn = load_hysteresis_test("gill")
    >>> x_m, f_n = load_hysteresis_test("gill", units="SI")
    >>> bool(abs(x_m[5] - x_mm[5] / 1000) < 1e-15)
    True
    """
    return read_hysteresis_record(get_dataset(name, "hysteresis_test", root=root), units)
