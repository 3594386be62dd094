"""Loader for a logged dynamic test: an input (a force on the mass or a ground
acceleration) and an output measured on the mass (displacement, velocity or
acceleration), with their time or sample rate. Used by ``rths-ident fit --dynamic``.

Reads the file types of :func:`rths_ident.datasets.load_logged_test` (CSV/text with a
header, ``.npz``, ``.mat``, HDF5 by dataset path, e.g. ``multisine/u``) and converts to
SI: the arrays of :class:`DynamicTest` are in N or m/s², and m, m/s or m/s².
"""

from __future__ import annotations

import dataclasses
import os
import pathlib
from collections.abc import Mapping

import numpy as np

from rths_ident.datasets.ground_motions import STANDARD_GRAVITY
from rths_ident.datasets.logged import UNIT_FACTORS, read_named_columns
from rths_ident.errors import ParameterError

__all__ = ["DynamicTest", "load_dynamic_test", "KIND_UNITS"]

_ACCELERATION = {"m/s2": 1.0, "g": STANDARD_GRAVITY, "cm/s2": 1e-2, "mm/s2": 1e-3, "in/s2": 0.0254}
#: units accepted per kind of input/output, with their factor to SI
KIND_UNITS: dict[str, dict[str, float]] = {
    "force": UNIT_FACTORS["force"],
    "ground-acceleration": _ACCELERATION,
    "displacement": UNIT_FACTORS["displacement"],
    "velocity": {"m/s": 1.0, "cm/s": 1e-2, "mm/s": 1e-3, "in/s": 0.0254},
    "acceleration": _ACCELERATION,
    "time": UNIT_FACTORS["time"],
}


@dataclasses.dataclass(frozen=True)
class DynamicTest:
    """A logged dynamic test in SI: ``input`` (N or m/s²), ``output`` (m, m/s or m/s²),
    ``time`` [s] (None when read with a sample rate), ``dt`` [s], the units the file had
    (``units``: quantity → unit) and ``source``."""

    input: np.ndarray
    output: np.ndarray
    time: np.ndarray | None
    dt: float | None
    units: dict[str, str]
    source: str


def _units(input_kind: str, output_kind: str, units: Mapping[str, str] | None) -> dict[str, str]:
    kinds = {"time": "time", "input": input_kind, "output": output_kind}
    chosen = {q: next(iter(KIND_UNITS[kind])) for q, kind in kinds.items()}
    for key, value in (units or {}).items():
        if key not in kinds:
            raise ParameterError(f"units: unknown key {key!r}; allowed keys: time, input, output")
        allowed = KIND_UNITS[kinds[key]]
        if value not in allowed:
            raise ParameterError(f"units: the {key} ({kinds[key]}) in {value!r}? expected one of {', '.join(allowed)}")
        chosen[key] = value
    return chosen


def load_dynamic_test(path: str | os.PathLike, *, input_kind: str, output_kind: str,
                      columns: Mapping[str, str] | None = None, units: Mapping[str, str] | None = None,
                      sample_rate: float | None = None) -> DynamicTest:
    """Read the input and output columns of ``path`` (and time unless ``sample_rate``
    [Hz] is given) and convert them to SI.

    ``columns``: the file's names of ``time``, ``input``, ``output`` (default: those
    words); ``units``: their units (``KIND_UNITS``; default SI). Errors as
    :func:`~rths_ident.datasets.load_logged_test`: one :class:`DataFileError` naming the
    file, the column and the line/row.
    """
    names = {"time": "time", "input": "input", "output": "output"}
    for key, value in (columns or {}).items():
        if key not in names:
            raise ParameterError(f"columns: unknown key {key!r}; allowed keys: time, input, output")
        if not isinstance(value, str) or not value:
            raise ParameterError(f"columns[{key!r}] must be a non-empty column/variable name; got {value!r}")
        names[key] = value
    if sample_rate is not None:
        if columns and "time" in columns:
            raise ParameterError("give a time column or a sample rate, not both")
        if not (np.isfinite(sample_rate) and sample_rate > 0.0):
            raise ParameterError(f"sample rate must be a positive frequency [Hz]; got {sample_rate!r}")
        del names["time"]
    chosen = _units(input_kind, output_kind, units)
    file_path = pathlib.Path(path)
    source = str(file_path)
    raw = read_named_columns(file_path, names)
    kinds = {"time": "time", "input": input_kind, "output": output_kind}
    converted = {q: raw[q] * KIND_UNITS[kinds[q]][chosen[q]] for q in names}
    if sample_rate is not None:
        chosen.pop("time")
    return DynamicTest(input=converted["input"], output=converted["output"], time=converted.get("time"),
                       dt=None if sample_rate is None else 1.0 / float(sample_rate), units=chosen, source=source)
