"""Line-aware parsing of numeric text tables and checks on the parsed columns.

Every value keeps the 1-based line number it came from, so a bad value is reported as
``file, column 'force', line 17: ...`` — the line a text editor shows. Used by the
shipped-data loaders and by :func:`rths_ident.datasets.load_logged_test`.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable, Sequence

import numpy as np

from rths_ident.errors import DataFileError

WHITESPACE = "whitespace"


@dataclasses.dataclass(frozen=True)
class NumericTable:
    """Columns of numbers parsed from a text file.

    ``values`` has one row per data line and one column per name; ``line_numbers``
    gives the 1-based line of each row in the file.
    """

    source: str
    names: tuple[str, ...]
    values: np.ndarray
    line_numbers: np.ndarray
    header_line: int | None

    def column(self, name: str) -> np.ndarray:
        """The column called ``name`` as a float64 array (a copy)."""
        return np.array(self.values[:, self.names.index(name)], dtype=np.float64)

    def line_of_row(self, row_index: int) -> int:
        """The 1-based line number in the file of the 0-based ``row_index``."""
        return int(self.line_numbers[row_index])


def detect_delimiter(header_line: str) -> str:
    """Comma, semicolon or tab if the header line contains one, else whitespace."""
    for candidate in (",", ";", "\t"):
        if candidate in header_line:
            return candidate
    return WHITESPACE


def _split(line: str, delimiter: str) -> list[str]:
    if delimiter == WHITESPACE:
        return line.split()
    return [field.strip() for field in line.split(delimiter)]


def _is_skipped(stripped: str, comment: str | None) -> bool:
    return stripped == "" or (comment is not None and stripped.startswith(comment))


def parse_numeric_table(
    text: str,
    *,
    source: str,
    names: Sequence[str] | None = None,
    header: bool = True,
    delimiter: str | None = None,
    comment: str | None = "#",
    expected_header: str | None = None,
) -> NumericTable:
    """Parse a table of numbers.

    Parameters
    ----------
    text:
        The file content.
    source:
        The file name used in error messages.
    names:
        With ``header=False``: the names of the columns, in order (their number is the
        number of values expected on every line). With ``header=True``: ignored; the
        names come from the first non-blank, non-comment line.
    delimiter:
        ``","``, ``";"``, ``"\\t"`` or ``"whitespace"``; ``None`` detects it from the
        first non-blank, non-comment line.
    comment:
        Lines starting with this (after leading blanks) are skipped, like blank lines.
    expected_header:
        With ``header=True``: an example header for the message when the first line
        is numbers (a file without a header), e.g. ``"time,displacement,force"``.

    Raises
    ------
    DataFileError
        For a line with the wrong number of values, an empty field, a value that is not
        a number, a duplicated header name or a file without data lines. Names the
        file, the column and the line.
    """
    lines = text.splitlines()
    header_names: tuple[str, ...] | None = None
    header_line: int | None = None
    rows: list[list[float]] = []
    line_numbers: list[int] = []

    if not header and not names:
        raise ValueError("parse_numeric_table: names are required when header=False")
    column_names: tuple[str, ...] | None = None if header else tuple(names)

    for index, raw in enumerate(lines):
        line_number = index + 1
        stripped = raw.strip()
        if _is_skipped(stripped, comment):
            continue
        if delimiter is None:
            delimiter = detect_delimiter(stripped)
        fields = _split(stripped, delimiter)
        if column_names is None:
            header_names = tuple(fields)
            header_line = line_number
            if all(_is_number(name) for name in header_names):
                raise DataFileError(
                    source, f"the first line {stripped[:80]!r} holds numbers, not column names: the file needs "
                    "a header line naming its columns" + (f", e.g. '{expected_header}'" if expected_header else ""),
                    line=line_number)
            if any(name == "" for name in header_names):
                raise DataFileError(source, "the header has an empty column name", line=line_number)
            duplicated = sorted({n for n in header_names if header_names.count(n) > 1})
            if duplicated:
                raise DataFileError(
                    source, f"the header repeats the column name(s) {duplicated}", line=line_number
                )
            column_names = header_names
            continue
        if len(fields) != len(column_names):
            raise DataFileError(
                source,
                f"expected {len(column_names)} values ({', '.join(column_names)}), "
                f"found {len(fields)}: {stripped[:80]!r}",
                line=line_number,
            )
        row: list[float] = []
        for name, field in zip(column_names, fields):
            if field == "":
                raise DataFileError(source, "empty value", column=name, line=line_number)
            try:
                row.append(float(field))
            except ValueError:
                raise DataFileError(
                    source, f"{field[:40]!r} is not a number", column=name, line=line_number
                ) from None
        rows.append(row)
        line_numbers.append(line_number)

    if column_names is None:
        raise DataFileError(source, "the file is empty (no header and no data lines)")
    if not rows:
        raise DataFileError(source, "the file has no data lines")
    return NumericTable(
        source=source,
        names=column_names,
        values=np.asarray(rows, dtype=np.float64),
        line_numbers=np.asarray(line_numbers, dtype=np.int64),
        header_line=header_line,
    )


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def require_columns(
    table: NumericTable, required: Sequence[str], *, purpose: dict[str, str] | None = None
) -> None:
    """Raise :class:`DataFileError` naming the first column of ``required`` that is not
    in ``table`` and listing the columns that are. ``purpose`` maps a file column name
    to what it stands for (e.g. ``{'Disp': 'displacement'}``) for the message."""
    for name in required:
        if name not in table.names:
            meaning = f" (the {purpose[name]} column)" if purpose and name in purpose else ""
            raise DataFileError(
                table.source,
                f"missing column{meaning}; the header has {list(table.names)}",
                column=name,
                line=table.header_line,
            )


Locator = Callable[[int], dict]
"""Maps a 0-based row index to the ``line=``/``row=`` keyword of DataFileError."""


def text_locator(table: NumericTable) -> Locator:
    """Locate rows of a text table by their line number in the file."""
    return lambda row_index: {"line": table.line_of_row(row_index)}


def array_locator(row_index: int) -> dict:
    """Locate rows of an array by their 1-based row number (index + 1)."""
    return {"row": row_index + 1}


def check_finite(source: str, column: str, values: np.ndarray, locate: Locator) -> None:
    """Raise :class:`DataFileError` at the first NaN or infinite value."""
    bad = np.flatnonzero(~np.isfinite(values))
    if bad.size:
        value = values[bad[0]]
        what = "NaN" if math.isnan(value) else f"{value} (not finite)"
        raise DataFileError(source, f"value is {what}", column=column, **locate(int(bad[0])))


def check_strictly_increasing(
    source: str, column: str, values: np.ndarray, locate: Locator
) -> None:
    """Raise :class:`DataFileError` at the first value not greater than the one
    before it."""
    steps = np.diff(values)
    bad = np.flatnonzero(~(steps > 0.0))
    if bad.size:
        i = int(bad[0]) + 1
        raise DataFileError(
            source,
            f"time must increase strictly; {values[i]!r} follows {values[i - 1]!r}",
            column=column,
            **locate(i),
        )


def check_uniform_step(
    source: str, column: str, values: np.ndarray, step: float, locate: Locator,
    relative_tolerance: float = 1e-6,
) -> None:
    """Raise :class:`DataFileError` at the first sample whose time step differs from
    ``step`` by more than ``relative_tolerance * step``."""
    deviations = np.abs(np.diff(values) - step)
    bad = np.flatnonzero(deviations > relative_tolerance * step)
    if bad.size:
        i = int(bad[0]) + 1
        raise DataFileError(
            source,
            f"time step {values[i] - values[i - 1]!r} s differs from the record's dt = {step} s",
            column=column,
            **locate(i),
        )
