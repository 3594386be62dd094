"""Loader for users' logged test data (time, displacement, force).

Reads what a laboratory data logger or a previous simulation wrote — CSV/text, NumPy
``.npz``, MATLAB ``.mat`` (scipy.io; v7.3 files through h5py), HDF5 (h5py) or a test
record of a hybrid run (:mod:`rths_ident.records`) — checks it and returns SI arrays in a
:class:`LoggedTest`. Used by ``rths-ident fit``.
"""

from __future__ import annotations

import dataclasses
import os
import pathlib
import zipfile
from collections.abc import Mapping

import numpy as np

from rths_ident.errors import ParameterError
from rths_ident.datasets._textio import (
    array_locator,
    check_finite,
    check_strictly_increasing,
    parse_numeric_table,
    require_columns,
    text_locator,
)
from rths_ident.errors import DataFileError

#: The quantities of a logged test, in order.
QUANTITIES = ("time", "displacement", "force")

#: Units accepted for each quantity and their factor to SI (s, m, N).
UNIT_FACTORS: dict[str, dict[str, float]] = {
    "time": {"s": 1.0, "ms": 1.0e-3, "min": 60.0},
    "displacement": {"m": 1.0, "cm": 1.0e-2, "mm": 1.0e-3, "in": 0.0254},
    "force": {"N": 1.0, "kN": 1.0e3, "MN": 1.0e6, "lbf": 4.4482216152605, "kip": 4448.2216152605},
}

SI_UNITS = {"time": "s", "displacement": "m", "force": "N"}

TEXT_SUFFIXES = (".csv", ".txt", ".dat", ".tsv")
HDF5_SUFFIXES = (".h5", ".hdf5", ".hdf", ".he5")


@dataclasses.dataclass(frozen=True)
class LoggedTest:
    """A logged test, in SI units.

    Attributes
    ----------
    time: [s], strictly increasing; None for a quasi-static record read without a
        time column (``time_column=False``).
    displacement: [m].
    force: [N].
    units: the units the columns had in the file (converted from), e.g.
        ``{"time": "s", "displacement": "mm", "force": "kN"}``.
    source: the file it was read from.
    """

    time: np.ndarray | None
    displacement: np.ndarray
    force: np.ndarray
    units: dict[str, str]
    source: str

    @property
    def n_samples(self) -> int:
        return int(self.displacement.size)

    @property
    def duration(self) -> float:
        """t[-1] - t[0] [s] (a quasi-static record without time has none: ValueError)."""
        if self.time is None:
            raise ValueError(f"{self.source}: a quasi-static record read without time has no duration")
        return float(self.time[-1] - self.time[0])


def _column_map(columns: Mapping[str, str] | None) -> dict[str, str]:
    mapping = {q: q for q in QUANTITIES}
    if columns is None:
        return mapping
    for key, value in columns.items():
        if key not in QUANTITIES:
            raise ParameterError(f"columns: unknown key {key!r}; allowed keys: {list(QUANTITIES)}")
        if not isinstance(value, str) or not value:
            raise ParameterError(f"columns[{key!r}] must be a non-empty column/variable name; got {value!r}")
        mapping[key] = value
    return mapping


def _unit_map(units: Mapping[str, str] | None) -> dict[str, str]:
    chosen = dict(SI_UNITS)
    if units is None:
        return chosen
    for key, value in units.items():
        if key not in QUANTITIES:
            raise ParameterError(f"units: unknown key {key!r}; allowed keys: {list(QUANTITIES)}")
        if value not in UNIT_FACTORS[key]:
            raise ParameterError(f"units[{key!r}] must be one of {list(UNIT_FACTORS[key])}; got {value!r}")
        chosen[key] = value
    return chosen


def _read_text_file(path: pathlib.Path, names: dict[str, str]):
    """The named columns of a text table and a locator of rows by line number."""
    source = str(path)
    try:
        text = path.read_text(encoding="utf-8-sig")
    except UnicodeDecodeError as error:
        raise DataFileError(source, f"not a text file ({error.reason} at byte {error.start})") from error
    table = parse_numeric_table(text, source=source, header=True, expected_header=",".join(names.values()))
    require_columns(table, list(names.values()), purpose={v: k for k, v in names.items()})
    return {q: table.column(name) for q, name in names.items()}, text_locator(table)


def _vector(source: str, name: str, value) -> np.ndarray:
    array = np.asarray(value)
    if array.dtype.kind not in "iuf":
        raise DataFileError(source, f"expected numbers, found data of type {array.dtype}", column=name)
    array = np.squeeze(array)
    if array.ndim != 1:
        raise DataFileError(source, f"expected a vector, found an array of shape {np.shape(value)}", column=name)
    return array.astype(np.float64)


def _missing_variable(source: str, name: str, quantity: str, available) -> DataFileError:
    return DataFileError(
        source, f"missing variable (the {quantity} column); the file has {sorted(available)}", column=name
    )


def _read_npz(path: pathlib.Path, names: dict[str, str]) -> dict[str, np.ndarray]:
    source = str(path)
    try:
        with np.load(path, allow_pickle=False) as archive:
            if not hasattr(archive, "files"):
                raise DataFileError(source, "a .npy array, not an .npz archive of named arrays")
            result = {}
            for quantity, name in names.items():
                if name not in archive.files:
                    raise _missing_variable(source, name, quantity, archive.files)
                result[quantity] = _vector(source, name, archive[name])
            return result
    except (OSError, ValueError, zipfile.BadZipFile, EOFError) as error:
        if isinstance(error, DataFileError):
            raise
        raise DataFileError(source, f"cannot read as .npz ({error})") from error


def _import_h5py():
    import h5py  # noqa: PLC0415 - imported only when an HDF5 file is read

    return h5py


def _read_hdf5(path: pathlib.Path, names: dict[str, str]) -> dict[str, np.ndarray]:
    source = str(path)
    h5py = _import_h5py()
    try:
        handle = h5py.File(path, "r")
    except OSError as error:
        raise DataFileError(source, f"cannot read as HDF5 ({error})") from error
    with handle:
        available: list[str] = []
        handle.visititems(lambda key, obj: available.append(key) if isinstance(obj, h5py.Dataset) else None)
        result = {}
        for quantity, name in names.items():
            item = handle.get(name)
            if not isinstance(item, h5py.Dataset):
                raise _missing_variable(source, name, quantity, available)
            result[quantity] = _vector(source, name, item[()])
        return result


#: what a test record (:mod:`rths_ident.records`) gives for each quantity by default:
#: the specimen's measured displacement and force at the fast rate
RECORD_COLUMNS = {"displacement": "fast/measured", "force": "fast/force"}


def _read_test_record(path: pathlib.Path, columns: Mapping[str, str] | None) -> dict[str, np.ndarray]:
    """Time, displacement and force of a test record: per-step datasets with
    ``samples_per_step`` fast samples each, as series at the fast rate (SI)."""
    from rths_ident.records import read_test_record  # noqa: PLC0415 - h5py only for HDF5 files

    names = dict(RECORD_COLUMNS)
    for key, value in (columns or {}).items():
        if key == "time":
            raise ParameterError("columns['time']: a test record's time comes from its time base "
                                 "(steps/time and the fast rate); name only displacement and force")
        names[key] = value
    record = read_test_record(path)
    if record.n_steps < 1:
        raise DataFileError(str(path), f"the test record has no slow step ({record.status()})")
    return {"time": record.fast_time(), **{q: record.fast_series(names[q]) for q in ("displacement", "force")}}


def _is_test_record(path: pathlib.Path) -> bool:
    from rths_ident.records import is_test_record  # noqa: PLC0415 - h5py only for HDF5 files

    return is_test_record(path)


def _read_mat(path: pathlib.Path, names: dict[str, str]) -> dict[str, np.ndarray]:
    import scipy.io  # noqa: PLC0415 - keeps `import rths_ident.datasets` light

    source = str(path)
    try:
        contents = scipy.io.loadmat(path)
    except NotImplementedError:
        # MATLAB v7.3 files are HDF5 files.
        return _read_hdf5(path, names)
    except (OSError, ValueError, TypeError) as error:
        raise DataFileError(source, f"cannot read as a MATLAB .mat file ({error})") from error
    variables = [key for key in contents if not key.startswith("__")]
    result = {}
    for quantity, name in names.items():
        if name not in variables:
            raise _missing_variable(source, name, quantity, variables)
        result[quantity] = _vector(source, name, contents[name])
    return result


def _check_columns(source: str, names: dict[str, str], columns: dict[str, np.ndarray], locate) -> None:
    lengths = {q: columns[q].size for q in names}
    shortest = min(lengths, key=lengths.get)
    longest = max(lengths, key=lengths.get)
    if lengths[shortest] != lengths[longest]:
        raise DataFileError(
            source,
            "columns have unequal lengths: "
            + ", ".join(f"{names[q]!r} has {lengths[q]}" for q in names)
            + f"; {names[shortest]!r} ends before row {lengths[shortest] + 1}",
            column=names[shortest],
        )
    if lengths[shortest] < 2:
        raise DataFileError(source, f"need at least 2 samples, found {lengths[shortest]}")
    for quantity in names:
        check_finite(source, names[quantity], columns[quantity], locate)
    if "time" in names:
        check_strictly_increasing(source, names["time"], columns["time"], locate)


def read_named_columns(file_path: pathlib.Path, names: dict[str, str]) -> dict[str, np.ndarray]:
    """The columns ``names`` (quantity → the file's column, variable or HDF5 dataset path)
    of a CSV/text, ``.npz``, ``.mat`` or HDF5 file, checked (equal lengths, at least two
    samples, finite, time strictly increasing) and in the file's own units. Raises
    :class:`DataFileError` naming the file (and the column and row where one is at fault)."""
    source = str(file_path)
    if not file_path.is_file():
        raise DataFileError(source, "no such file")
    suffix = file_path.suffix.lower()
    try:
        if suffix in TEXT_SUFFIXES:
            raw, locate = _read_text_file(file_path, names)
        elif suffix == ".npz":
            raw, locate = _read_npz(file_path, names), array_locator
        elif suffix == ".mat":
            raw, locate = _read_mat(file_path, names), array_locator
        elif suffix in HDF5_SUFFIXES:
            raw, locate = _read_hdf5(file_path, names), array_locator
        else:
            raise DataFileError(source, f"unsupported file type {suffix!r}; expected one of "
                                        f"{list(TEXT_SUFFIXES) + ['.npz', '.mat'] + list(HDF5_SUFFIXES)}")
    except PermissionError as error:
        raise DataFileError(source, f"cannot read the file ({error.strerror})") from error
    _check_columns(source, names, raw, locate)
    return raw


def load_logged_test(
    path: str | os.PathLike,
    columns: Mapping[str, str] | None = None,
    units: Mapping[str, str] | None = None,
    time_column: bool = True,
) -> LoggedTest:
    """Read a logged test (time, displacement, force) and convert it to SI.

    Parameters
    ----------
    path:
        ``.csv``/``.txt``/``.dat``/``.tsv``: a header line with the column names, then
        one sample per line; comma, semicolon, tab or whitespace separated (detected
        from the header); blank lines and lines starting with ``#`` are skipped.
        ``.npz``: named arrays. ``.mat``: MATLAB variables (v7.3 files read with h5py).
        ``.h5``/``.hdf5``/``.hdf``: datasets, by name or path (``"run1/force"``), read
        with h5py (imported only for these files). A test record written by
        ``rths-ident run`` (:mod:`rths_ident.records`) is recognised: by default its
        specimen's measured displacement ``steps/fast/measured`` and force
        ``steps/fast/force`` at the fast rate, with the time of every fast sample
        from its time base (records whose writer was killed: up to the last flush).
    columns:
        The file's names of the quantities, e.g. ``{"time": "Time",
        "displacement": "LVDT1", "force": "LoadCell"}``; by default ``time``,
        ``displacement`` and ``force``. Other columns are ignored. For a test record:
        paths under ``steps/`` of fast-rate datasets (e.g. ``{"force": "fast/true_force"}``).
    units:
        The units in the file, e.g. ``{"displacement": "mm", "force": "kN"}``; by
        default s, m, N. Allowed: time s/ms/min; displacement m/cm/mm/in; force
        N/kN/MN/lbf/kip.
    time_column:
        False for a quasi-static record: only displacement and force are read (a time
        column, if the file has one, is ignored) and ``time`` is None.

    Returns
    -------
    LoggedTest
        ``time`` [s], ``displacement`` [m], ``force`` [N], ``units`` (those of the
        file), ``source``.

    Raises
    ------
    DataFileError
        A missing or unreadable file, an unsupported suffix, a missing column or
        variable, a value that is not a number, NaN or infinite, columns of unequal
        length, fewer than 2 samples, or time not strictly increasing. The message
        names the file, the column and the line (text files, 1-based as an editor
        shows it) or the row (arrays, 1-based).
    ParameterError
        For an unknown key or unit in ``columns``/``units``.

    Examples
    --------
    >>> import pathlib, tempfile
    >>> f = pathlib.Path(tempfile.mkdtemp()) / "log.csv"
    >>> _ = f.write_text("time,displacement,force\\n0,0,0\\n0.01,1.5,2.0\\n")
    >>> test = load_logged_test(f, units={"displacement": "mm", "force": "kN"})
    >>> float(test.displacement[1]), float(test.force[1])
    (0.0015, 2000.0)
    """
    names = _column_map(columns)
    if not time_column:
        if columns is not None and "time" in columns:
            raise ParameterError("columns: a quasi-static record is read without time; "
                                 "name only the displacement and force columns")
        del names["time"]
    chosen_units = _unit_map(units)
    file_path = pathlib.Path(path)
    source = str(file_path)
    try:
        is_record = file_path.suffix.lower() in HDF5_SUFFIXES and file_path.is_file() and _is_test_record(file_path)
    except PermissionError as error:
        raise DataFileError(source, f"cannot read the file ({error.strerror})") from error
    if is_record:
        if units is not None and any(chosen_units[q] != SI_UNITS[q] for q in QUANTITIES):
            raise ParameterError(f"{source} is a test record: its data are in SI units (s, m, N); "
                                 "do not give other units")
        raw = _read_test_record(file_path, columns)
        names = {"time": "steps/time (fast time base)",
                 **{q: "steps/" + (columns or {}).get(q, RECORD_COLUMNS[q]) for q in RECORD_COLUMNS}}
        _check_columns(source, names, raw, array_locator)
    else:
        raw = read_named_columns(file_path, names)
    converted = {q: raw[q] * UNIT_FACTORS[q][chosen_units[q]] for q in names}
    if not time_column:
        chosen_units.pop("time")
    return LoggedTest(
        time=converted.get("time"),
        displacement=converted["displacement"],
        force=converted["force"],
        units=chosen_units,
        source=source,
    )
