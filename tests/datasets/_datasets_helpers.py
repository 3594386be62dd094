"""Helpers shared by the datasets tests (imported by the test modules)."""

from __future__ import annotations

import importlib.resources
import io
import pathlib

import numpy as np

#: The project's shared data (the origin of the packaged copies); absent outside the
#: development machine, so tests that compare with it skip when it is missing.
# the project's shared/ folder sits beside the repository (also in CI)
SHARED_DATA = pathlib.Path(__file__).resolve().parents[3] / "shared" / "data"

STANDARD_GRAVITY = 9.80665  # m/s², written out here on purpose (not the package's constant)


def packaged(relative: str):
    """A file of the package's data folder (importlib Traversable)."""
    return importlib.resources.files("rths_ident.datasets").joinpath("data", *relative.split("/"))


def raw_table(relative: str, delimiter=None, skiprows: int = 0) -> np.ndarray:
    """The numbers of a packaged data file parsed by numpy (independently of the
    package's own parser)."""
    return np.loadtxt(io.StringIO(packaged(relative).read_text()), delimiter=delimiter, skiprows=skiprows)


def replace_line(path: pathlib.Path, line_number: int, new_text: str) -> None:
    """Replace the 1-based ``line_number`` of a text file."""
    lines = path.read_text().splitlines()
    lines[line_number - 1] = new_text
    path.write_text("\n".join(lines) + "\n")
