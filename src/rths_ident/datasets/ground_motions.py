"""Shipped earthquake ground-acceleration records.

``load_ground_motion(name)`` returns the time [s] and the ground acceleration [m/s²] of
one of the records listed by ``list_datasets("ground_motion")``. Records stored in g are
converted with the standard gravity g = 9.80665 m/s².
"""

from __future__ import annotations

import os
from importlib.resources.abc import Traversable

import numpy as np

from rths_ident.datasets._textio import (
    check_finite,
    check_strictly_increasing,
    check_uniform_step,
    parse_numeric_table,
    require_columns,
    text_locator,
)
from rths_ident.errors import DataFileError
from rths_ident.datasets.registry import DatasetRecord, get_dataset, read_text

#: Standard acceleration of gravity [m/s²] (3rd CGPM, 1901), used for g → m/s².
STANDARD_GRAVITY = 9.80665

#: Factor from an acceleration unit (as written in metadata / file headers) to m/s².
ACCELERATION_UNITS_TO_SI = {
    "g": STANDARD_GRAVITY,
    "m/s^2": 1.0,
    "cm/s^2": 0.01,
}


def acceleration_factor(unit: str, source: str) -> float:
    """The factor that converts an acceleration in ``unit`` to m/s²."""
    try:
        return ACCELERATION_UNITS_TO_SI[unit]
    except KeyError:
        raise DataFileError(
            source, f"unknown acceleration unit {unit!r}; known: {sorted(ACCELERATION_UNITS_TO_SI)}"
        ) from None


def read_ground_motion_record(record: DatasetRecord) -> tuple[np.ndarray, np.ndarray]:
    """Read and check the file of a ground-motion ``record``; see
    :func:`load_ground_motion`."""
    meta = record.metadata
    data_file: Traversable = record.file(meta["file"])
    source = str(data_file)
    column_names = tuple(meta["columns"])
    table = parse_numeric_table(
        read_text(data_file),
        source=source,
        names=None if meta["header"] else column_names,
        header=bool(meta["header"]),
        delimiter=meta["delimiter"],
    )
    if meta["header"]:
        # The file's own column names, in the order of `columns` (time, acceleration).
        file_names = tuple(meta["header_names"])
        require_columns(table, file_names, purpose=dict(zip(file_names, column_names)))
        by_role = dict(zip(column_names, file_names))
    else:
        by_role = {name: name for name in column_names}

    locate = text_locator(table)
    dt = float(meta["dt"])
    acceleration = table.column(by_role["acceleration"])
    check_finite(source, by_role["acceleration"], acceleration, locate)
    if acceleration.size != record.n_samples:
        raise DataFileError(
            source,
            f"expected {record.n_samples} samples (n_samples in {record.metadata_file.name}), "
            f"found {acceleration.size}",
        )
    if "time" in by_role:
        time = table.column(by_role["time"])
        check_finite(source, by_role["time"], time, locate)
        check_strictly_increasing(source, by_role["time"], time, locate)
        check_uniform_step(source, by_role["time"], time, dt, locate)
    else:
        time = dt * np.arange(acceleration.size, dtype=np.float64)

    factor = acceleration_factor(record.units_as_stored["acceleration"], str(record.metadata_file))
    return time, acceleration * factor


def load_ground_motion(
    name: str, *, root: str | os.PathLike | Traversable | None = None
) -> tuple[np.ndarray, np.ndarray]:
    """Time and ground acceleration of a shipped record.

    Parameters
    ----------
    name:
        ``"elcentro_1940"`` (NS, 0.02 s, 1560 points, stored in g),
        ``"elcentro_1940_marths"``, ``"kobe_1995"``, ``"morgan_hill_1984"`` (the
        multi-axial benchmark's unscaled records, stored in m/s², 5 s of leading zeros)
        or ``"northridge_1994"`` (0.02 s, 3000 points, stored in g).
        ``list_datasets("ground_motion")`` lists them with their origin.
    root:
        A copy of the package's data folder to read instead of the shipped one.

    Returns
    -------
    t : ndarray, shape (n,)
        Time [s], uniformly spaced, starting at 0.
    ag : ndarray, shape (n,)
        Ground acceleration [m/s²] (g converted with g = 9.80665 m/s²).

    Raises
    ------
    UnknownDatasetError
        For a name that is not shipped (the message lists the valid names).
    DataFileError
        If the file is damaged (wrong count, missing column, NaN, time not increasing or
        not uniform); names the file, the column and the line.

    Examples
    --------
    >>> t, ag = load_ground_motion("elcentro_1940")
    >>> t.size, round(float(t[1] - t[0]), 6)
    (1560, 0.02)
    """
    return read_ground_motion_record(get_dataset(name, "ground_motion", root=root))
