"""The errors every layer of rths_ident shares (the ground floor: imports nothing of the package).

* :class:`ParameterError` — a parameter, option or test-file value outside its allowed
  range (the message names the field and the range);
* :class:`DataFileError` — a data file that cannot be read, naming the file, the column
  and the line or row;
* :class:`UnknownDatasetError` — a dataset name that is not shipped;
* :class:`MissingExtra` — what was asked needs a part of the install that is not there
  (an optional extra, or a system library); :mod:`rths_ident.extras` raises it.

The operator's stop (Ctrl-C) has its own ground-floor module: :mod:`rths_ident.operator_stop`.
"""

from __future__ import annotations

import os
import re

_NUMPY_SCALAR_REPR = re.compile(r"np\.(?:float|int|uint|complex)\d*\(([^()]*)\)")


class ParameterError(ValueError):
    """A parameter value is outside its allowed range, is not a number, or has the
    wrong shape. Messages show numbers as plain numbers: NumPy scalar reprs built into
    a message (``np.float64(0.5)``, NumPy ≥ 2) are written as ``0.5``."""

    def __init__(self, message: str = "", *args):
        super().__init__(_NUMPY_SCALAR_REPR.sub(r"\1", str(message)), *args)


class DataFileError(ValueError):
    """A data file is unreadable or its content is invalid.

    The message names the file and, where they apply, the column and the place of the
    problem: ``line`` for text files (1-based, as a text editor shows it) or ``row``
    for arrays read from ``.npz``/``.mat``/HDF5 files (1-based, i.e. index + 1).
    The same values are available as attributes for programs that handle the error.
    """

    def __init__(
        self,
        source: str | os.PathLike,
        message: str,
        *,
        column: str | None = None,
        line: int | None = None,
        row: int | None = None,
    ) -> None:
        self.source = str(source)
        self.column = column
        self.line = line
        self.row = row
        self.reason = message
        where = [self.source]
        if column is not None:
            where.append(f"column {column!r}")
        if line is not None:
            where.append(f"line {line}")
        if row is not None:
            where.append(f"row {row}")
        super().__init__(", ".join(where) + ": " + message)


class UnknownDatasetError(ValueError):
    """A dataset name that is not shipped with the package; the message lists the
    valid names."""

    def __init__(self, name: str, valid_names: list[str], kind: str | None = None) -> None:
        self.name = name
        self.valid_names = list(valid_names)
        what = f"{kind} dataset" if kind else "dataset"
        super().__init__(
            f"unknown {what} {name!r}; valid names: {', '.join(self.valid_names)}"
        )


class MissingExtra(ImportError):
    """What was asked needs something this install does not have: an optional extra of
    the package (``pip install 'rths_ident[cluster]'``) or a system library (OpenSeesPy's
    BLAS/LAPACK). The message is one line: what asked for it, what it needs, and the
    command that installs it. An :class:`ImportError`, so code that already handles a
    missing module handles this one too."""
