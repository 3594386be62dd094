"""Reader for PEER NGA strong-motion acceleration files (``.AT2``).

Layout of an AT2 file:

* line 1: database name (e.g. ``PEER NGA STRONG MOTION DATABASE RECORD``);
* line 2: event, date, station and component;
* line 3: quantity and units (``ACCELERATION TIME HISTORY IN UNITS OF G``);
* line 4: the number of points and the time step, in one of these forms::

      NPTS=  5590, DT= .0050 SEC            (NGA-West2)
      NPTS=   5590, DT=   0.0050 SEC,
      5590   0.0050   NPTS, DT              (older NGA files)

* then the NPTS acceleration values, several per line, in the units of line 3.
"""

from __future__ import annotations

import os
import pathlib
import re

import numpy as np

from rths_ident.errors import DataFileError
from rths_ident.datasets.ground_motions import STANDARD_GRAVITY

_NUMBER = r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[EeDd][-+]?\d+)?"
_NPTS_KEYED = re.compile(r"NPTS\s*=\s*(" + _NUMBER + ")", re.IGNORECASE)
_DT_KEYED = re.compile(r"\bDT\s*=\s*(" + _NUMBER + ")", re.IGNORECASE)
_LEADING_PAIR = re.compile(r"^\s*(" + _NUMBER + r")[\s,]+(" + _NUMBER + r")\s*[,]?\s*NPTS\s*,\s*DT", re.IGNORECASE)

#: Units that may appear on line 3, with their factor to m/s².
_UNIT_PATTERNS = (
    (re.compile(r"\bCM\s*/\s*S(EC)?\s*/\s*S(EC)?\b|\bCM\s*/\s*S(EC)?\s*\*\*\s*2|\bCM/S2\b|\bGAL\b", re.IGNORECASE), 0.01),
    (re.compile(r"\bM\s*/\s*S(EC)?\s*/\s*S(EC)?\b|\bM\s*/\s*S(EC)?\s*\*\*\s*2|\bM/S2\b", re.IGNORECASE), 1.0),
    (re.compile(r"\bUNITS\s+OF\s+G\b|\bIN\s+G\b|\(G\)|\bG\s*$", re.IGNORECASE), STANDARD_GRAVITY),
)


def _float(text: str) -> float:
    return float(text.replace("D", "E").replace("d", "e"))


def _parse_npts_dt(line: str, source: str) -> tuple[int, float]:
    keyed_npts, keyed_dt = _NPTS_KEYED.search(line), _DT_KEYED.search(line)
    if keyed_npts and keyed_dt:
        npts_text, dt_text = keyed_npts.group(1), keyed_dt.group(1)
    else:
        pair = _LEADING_PAIR.search(line)
        if not pair:
            raise DataFileError(
                source,
                "cannot find NPTS and DT; expected e.g. 'NPTS=  5590, DT= .0050 SEC' or "
                f"'5590   0.0050   NPTS, DT', found {line.strip()[:80]!r}",
                line=4,
            )
        npts_text, dt_text = pair.group(1), pair.group(2)
    npts_value, dt = _float(npts_text), _float(dt_text)
    if npts_value != int(npts_value) or npts_value < 1:
        raise DataFileError(source, f"NPTS must be a positive integer; found {npts_text!r}", line=4)
    if not (np.isfinite(dt) and dt > 0.0):
        raise DataFileError(source, f"DT must be > 0 s; found {dt_text!r}", line=4)
    return int(npts_value), dt


def _unit_factor(line: str, source: str) -> float:
    for pattern, factor in _UNIT_PATTERNS:
        if pattern.search(line):
            return factor
    raise DataFileError(
        source,
        f"cannot tell the acceleration units from {line.strip()[:80]!r} "
        "(expected e.g. 'ACCELERATION TIME HISTORY IN UNITS OF G')",
        line=3,
    )


def read_peer_at2(path: str | os.PathLike) -> tuple[np.ndarray, np.ndarray, dict]:
    """Read a PEER NGA ``.AT2`` acceleration file.

    Returns
    -------
    t : ndarray (npts,)
        Time [s], ``k * DT``.
    ag : ndarray (npts,)
        Ground acceleration [m/s²] (g converted with g = 9.80665 m/s²; cm/s² also
        recognised).
    metadata : dict
        ``database``, ``event`` (line 2), ``units_line`` (line 3), ``npts``, ``dt`` [s],
        ``units`` (``"g"``, ``"cm/s^2"`` or ``"m/s^2"``), ``source`` (the path).

    Raises
    ------
    DataFileError
        For an unreadable file, a header with fewer than 4 lines, no NPTS/DT on line 4,
        unknown units on line 3, a value that is not a number or not finite, or a value
        count different from NPTS. Names the file and the line.
    """
    source = str(path)
    try:
        text = pathlib.Path(path).read_text(encoding="latin-1")
    except OSError as error:
        raise DataFileError(source, f"cannot read the file ({error.strerror or error})") from error
    lines = text.splitlines()
    if len(lines) < 4:
        raise DataFileError(source, f"an AT2 file has a 4-line header; the file has {len(lines)} line(s)")
    npts, dt = _parse_npts_dt(lines[3], source)
    factor = _unit_factor(lines[2], source)

    values: list[float] = []
    for index in range(4, len(lines)):
        for field in lines[index].replace(",", " ").split():
            try:
                value = _float(field)
            except ValueError:
                raise DataFileError(source, f"{field[:40]!r} is not a number", line=index + 1) from None
            if not np.isfinite(value):
                raise DataFileError(source, f"value {field!r} is not finite", line=index + 1)
            if len(values) == npts:
                raise DataFileError(source, f"more values than NPTS = {npts}", line=index + 1)
            values.append(value)
    if len(values) != npts:
        raise DataFileError(source, f"NPTS = {npts} on line 4 but the file has {len(values)} values")

    units = {STANDARD_GRAVITY: "g", 0.01: "cm/s^2", 1.0: "m/s^2"}[factor]
    metadata = {
        "database": lines[0].strip(),
        "event": lines[1].strip(),
        "units_line": lines[2].strip(),
        "npts": npts,
        "dt": dt,
        "units": units,
        "source": source,
    }
    time = dt * np.arange(npts, dtype=np.float64)
    return time, np.asarray(values, dtype=np.float64) * factor, metadata
