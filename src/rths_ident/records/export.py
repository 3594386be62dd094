"""A test record for people who work in spreadsheets or MATLAB: CSV files and a MAT file.

:func:`export_csv` writes into a folder

* ``slow_steps.csv`` — one row per slow step: the test time [s] and every per-step
  dataset with one value per step or per named column (the floors' response, each
  identified parameter …);
* ``fast_samples.csv`` — one row per fast sample (when the record has datasets with
  several samples per slow step: target, command, measured displacement and force …),
  with the time of each sample;
* ``record.json`` — the configuration, the events, the metrics, the units and the
  software of the record.

Every column header says the dataset's path, its column and its unit:
``ns/displacement floor2 [m]``. :func:`export_mat` writes ``test_record.mat`` with the
same data (``steps``, ``fast``, ``units`` structs; MATLAB field names: ``/`` and spaces
become ``_``) and ``record.json`` beside it.
"""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path

import numpy as np

from rths_ident.records.layout import json_value

__all__ = ["export_csv", "export_mat", "columns"]


def _columns_of(record, path: str, array: np.ndarray, samples: int | None) -> list[tuple[str, np.ndarray]]:
    """(header, column) pairs of one dataset: per slow step (``samples`` None) or per
    fast sample (the second axis of ``samples``)."""
    unit = record.units.get(path, "?")
    names = list(unit) if isinstance(unit, dict) else None
    if samples is not None:
        array = array.reshape(array.shape[0] * samples, *array.shape[2:])
    array = array.reshape(array.shape[0], -1) if array.ndim > 1 else array.reshape(-1, 1)
    out = []
    for j in range(array.shape[1]):
        if names is not None and len(names) == array.shape[1]:
            label, column_unit = names[j], unit[names[j]]
        else:
            label, column_unit = (str(j) if array.shape[1] > 1 else ""), (unit if isinstance(unit, str) else "?")
        header = f"{path}{' ' + label if label else ''} [{column_unit}]"
        out.append((header, array[:, j]))
    return out


def columns(record) -> tuple[list[tuple[str, np.ndarray]], list[tuple[str, np.ndarray]]]:
    """The record's (slow-step columns, fast-sample columns), time first in each."""
    n = record.n_steps
    samples = int(record.time_base.get("samples_per_step", 0) or 0)
    slow = [("time [s]", np.asarray(record.time, dtype=float))]
    fast = []
    for path in sorted(record.steps):
        array = np.asarray(record.steps[path])
        if path == "time" or array.shape[:1] != (n,) or array.dtype.kind not in "biuf":
            continue
        if samples > 1 and path.startswith("fast/") and array.ndim >= 2 and array.shape[1] == samples:
            fast += _columns_of(record, path, array, samples)
        else:
            slow += _columns_of(record, path, array, None)
    if fast:
        fast.insert(0, ("time [s]", np.asarray(record.fast_time(), dtype=float)))
    return slow, fast


def _write_csv(path: Path, table: list[tuple[str, np.ndarray]]) -> Path:
    with path.open("w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow([header for header, _ in table])
        for row in zip(*(column for _, column in table)):
            writer.writerow([repr(float(v)) if isinstance(v, (float, np.floating)) else int(v) for v in row])
    return path


def _metadata(record) -> dict:
    return json_value({"path": record.path, "kind": record.kind, "created_utc": record.created_utc,
                       "complete": record.complete, "status": record.status(), "config": record.config,
                       "metrics": record.metrics, "units": record.units, "time_base": record.time_base,
                       "software": record.software,
                       "events": [{"kind": e.kind, "message": e.message, "step": e.step, "time": e.time}
                                  for e in record.events]})


def export_csv(record, folder) -> list[Path]:
    """Write the record as CSV files and ``record.json`` into ``folder`` (module doc);
    returns the paths written."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    slow, fast = columns(record)
    paths = [_write_csv(folder / "slow_steps.csv", slow)]
    if fast:
        paths.append(_write_csv(folder / "fast_samples.csv", fast))
    meta = folder / "record.json"
    meta.write_text(json.dumps(_metadata(record), indent=2), encoding="utf-8")
    return paths + [meta]


def _matlab_name(header: str) -> str:
    """A MATLAB field name from a column header (letters, digits, _; a letter first)."""
    name = re.sub(r"\s*\[.*\]$", "", header)
    name = re.sub(r"[^0-9A-Za-z]+", "_", name).strip("_")
    return name if name[:1].isalpha() else f"x_{name}"


def export_mat(record, folder) -> list[Path]:
    """Write the record as ``test_record.mat`` (structs ``steps``, ``fast``, ``units``)
    and ``record.json`` into ``folder`` (module doc); returns the paths written."""
    from scipy.io import savemat  # noqa: PLC0415

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    slow, fast = columns(record)
    units: dict = {}

    def struct(table):
        out = {}
        for header, column in table:
            name = _matlab_name(header)
            out[name] = np.asarray(column)
            units[name] = re.search(r"\[(.*)\]$", header).group(1)
        return out

    data = {"steps": struct(slow)}
    if fast:
        data["fast"] = struct(fast)
    data["units"] = units
    path = folder / "test_record.mat"
    savemat(path, data, long_field_names=True, do_compression=True)
    meta = folder / "record.json"
    meta.write_text(json.dumps(_metadata(record), indent=2), encoding="utf-8")
    return [path, meta]
