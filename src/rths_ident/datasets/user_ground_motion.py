"""A user's own ground-motion file, for ``rths-ident run SCENARIO --record PATH``.

Two kinds of file:

* a PEER NGA ``.AT2`` file (:func:`~rths_ident.datasets.read_peer_at2`): its header
  states the time step and the units, so ``dt`` and ``units`` must not be given;
* a text file (``.csv``, ``.txt``, ``.dat``, …): one column (the acceleration; give
  ``dt``) or two (time [s], acceleration; ``dt`` optional, and if given it must agree
  with the time column), separated by commas, semicolons, tabs or blanks; an optional
  header line of names; blank lines and ``#`` comments skipped. Its units must be given
  (``units``: ``g``, ``m/s2`` or ``cm/s2``): a column of numbers does not say whether
  0.3 is in g or in m/s².

:func:`load_record` resolves a record argument: a shipped name
(:func:`~rths_ident.datasets.load_ground_motion`) or a path to such a file.
"""

from __future__ import annotations

import os
import pathlib

import numpy as np

from rths_ident.errors import ParameterError
from rths_ident.datasets._textio import (
    _is_number,
    check_finite,
    check_strictly_increasing,
    check_uniform_step,
    detect_delimiter,
    parse_numeric_table,
    text_locator,
)
from rths_ident.errors import DataFileError
from rths_ident.datasets.ground_motions import STANDARD_GRAVITY, load_ground_motion
from rths_ident.datasets.peer_at2 import read_peer_at2

#: accepted ``units`` (as typed on the command line) and their factor to m/s²
UNITS_TO_SI = {"g": STANDARD_GRAVITY, "m/s2": 1.0, "cm/s2": 0.01}


def shipped_ground_motions() -> list[str]:
    """Names of the shipped ground motions."""
    from rths_ident.datasets.registry import list_datasets  # noqa: PLC0415

    return [r.name for r in list_datasets("ground_motion")]


def check_record_argument(record: str, dt: float | None = None, units: str | None = None) -> None:
    """Raise a clear error (before any work) unless ``record`` is a shipped ground motion
    (then without ``dt``/``units``) or a readable file of one (module doc)."""
    names = shipped_ground_motions()
    if record in names:
        if dt is not None or units is not None:
            raise ParameterError(f"record {record!r} is shipped with its own time step and units: "
                                 "record_dt / record_units apply to your own files only")
        return
    if not pathlib.Path(record).is_file():
        raise ParameterError(f"unknown record {record!r}: not a shipped ground motion ({' | '.join(names)}) "
                             "nor a file (a PEER .AT2 file, or a text file with record_dt / record_units)")
    load_user_ground_motion(record, dt=dt, units=units)


def load_record(record: str, dt: float | None = None, units: str | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(t [s], ẍ_g [m/s²]) of a shipped record name or of a user's file (module doc)."""
    if record in shipped_ground_motions():
        check_record_argument(record, dt, units)
        return load_ground_motion(record)
    return load_user_ground_motion(record, dt=dt, units=units)


def load_user_ground_motion(path: str | os.PathLike, dt: float | None = None,
                            units: str | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Read a user's ground-motion file (module doc): time [s] from 0, uniformly
    spaced, and the ground acceleration [m/s²].

    Raises
    ------
    ParameterError
        ``dt`` not a positive time step, ``units`` not one of :data:`UNITS_TO_SI`, or
        either given for an ``.AT2`` file / missing for a text file that needs it.
    DataFileError
        The file is missing or unreadable, has more than two columns, a value that is
        not a finite number, fewer than 2 samples, a time column that does not increase
        uniformly or disagrees with ``dt``. Names the file, the column and the line.
    """
    file_path = pathlib.Path(path)
    source = str(file_path)
    if dt is not None and not (isinstance(dt, (int, float)) and np.isfinite(dt) and dt > 0):
        raise ParameterError(f"record_dt = {dt!r}: expected the record's time step, a positive number of seconds")
    if units is not None and units not in UNITS_TO_SI:
        raise ParameterError(f"record_units = {units!r}: expected one of {' | '.join(UNITS_TO_SI)}")
    if not file_path.is_file():
        raise DataFileError(source, "no such file")
    if file_path.suffix.lower() == ".at2":
        if dt is not None or units is not None:
            raise ParameterError(f"{source}: a PEER .AT2 file states its time step and units in its header; "
                                 "do not give record_dt / record_units")
        t, ag, _ = read_peer_at2(file_path)
        return t, ag
    if units is None:
        raise ParameterError(f"{source}: give the acceleration's units (record_units / --record-units "
                             f"{' | '.join(UNITS_TO_SI)}): a column of numbers does not say whether it is in g or m/s²")
    try:
        text = file_path.read_text(encoding="utf-8-sig")
    except (UnicodeDecodeError, OSError) as error:
        raise DataFileError(source, f"cannot read as a text file ({error})") from error
    table = _table(text, source)
    locate = text_locator(table)
    if len(table.names) == 1:
        if dt is None:
            raise ParameterError(f"{source}: one column of accelerations: give its time step "
                                 "(record_dt / --record-dt, in s)")
        acceleration = table.column(table.names[0])
        check_finite(source, table.names[0], acceleration, locate)
        time = dt * np.arange(acceleration.size, dtype=float)
    else:
        time_name, acc_name = table.names
        time, acceleration = table.column(time_name), table.column(acc_name)
        for name, values in ((time_name, time), (acc_name, acceleration)):
            check_finite(source, name, values, locate)
        check_strictly_increasing(source, time_name, time, locate)
        step = float(time[1] - time[0]) if time.size > 1 else float("nan")
        if dt is not None and abs(step - dt) > 1e-6 * dt:
            raise DataFileError(source, f"the time column steps by {step:g} s but record_dt = {dt:g} s",
                                column=time_name, line=table.line_of_row(1))
        check_uniform_step(source, time_name, time, step, locate)
        time = time - time[0]
    if acceleration.size < 2:
        raise DataFileError(source, f"need at least 2 samples, found {acceleration.size}")
    return time, acceleration * UNITS_TO_SI[units]


def _table(text: str, source: str):
    """The one- or two-column numeric table of a text record, with or without a header."""
    first = next((line.strip() for line in text.splitlines() if line.strip() and not line.strip().startswith("#")),
                 None)
    if first is None:
        raise DataFileError(source, "the file is empty")
    fields = first.replace(",", " ").replace(";", " ").split()
    has_header = not all(_is_number(f) for f in fields)
    n_columns = len(fields)
    if n_columns not in (1, 2):
        raise DataFileError(source, f"expected one column (acceleration) or two (time, acceleration); "
                            f"the first line has {n_columns}: {first[:80]!r}")
    names = None if has_header else (("acceleration",) if n_columns == 1 else ("time", "acceleration"))
    return parse_numeric_table(text, source=source, names=names, header=has_header,
                               delimiter=detect_delimiter(first))
