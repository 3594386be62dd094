"""Reading a test record: :func:`read_test_record` → :class:`TestRecord`.

A record whose writer is still running, or was killed, is marked "open for write" in its
HDF5 superblock and an ordinary ``h5py.File(path, "r")`` refuses it; it is then opened in
SWMR read mode, which reads it up to the writer's last flush (``docs/records.md``).
Other tools can do the same (``h5py.File(path, "r", swmr=True)``) or clear the flag with
HDF5's ``h5clear -s PATH``.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
from pathlib import Path

import h5py
import numpy as np

from rths_ident.errors import DataFileError
from rths_ident.records import layout


@dataclasses.dataclass(frozen=True)
class Event:
    """One event of a record: ``kind`` (start, stop, error, …), its ``message``, the
    slow step and test time [s] it belongs to (``None`` when none), and the UNIX time
    [s] it was written."""

    kind: str
    message: str
    step: int | None
    time: float | None
    wall_time: float


@dataclasses.dataclass(frozen=True)
class TestRecord:
    """A test record as read (SI units; ``units`` says which, per dataset).

    ``steps`` maps dataset paths (``"time"``, ``"fast/measured"``, …) to arrays whose
    first axis is the slow step (``n_steps`` rows); ``closed`` is false when the writer
    never closed the file (killed, or still running): it was read up to the last flush.
    """

    __test__ = False  # not a pytest class

    path: str
    kind: str
    created_utc: str
    complete: bool
    closed: bool
    config: dict
    software: dict
    units: dict
    time_base: dict
    steps: dict
    events: tuple
    metrics: dict | None
    format_version: int
    attached: dict = dataclasses.field(default_factory=dict)
    attached_units: dict = dataclasses.field(default_factory=dict)

    @property
    def n_steps(self) -> int:
        return int(self.steps[layout.TIME].shape[0]) if layout.TIME in self.steps else 0

    @property
    def time(self) -> np.ndarray:
        """Test time of each slow step [s]."""
        return self.steps.get(layout.TIME, np.zeros(0))

    def has(self, path: str) -> bool:
        return path in self.steps

    def errors(self) -> list[Event]:
        return [e for e in self.events if e.kind == "error"]

    def status(self) -> str:
        """Whether the test ran to its end, and if not, why (one line)."""
        if self.complete:
            return "complete: the test ran to its end"
        errors = self.errors()
        if errors:
            where = "" if errors[0].step is None else f" at slow step {errors[0].step}"
            return f"not complete: stopped by an error{where}: {errors[0].message}"
        stops = [e for e in self.events if e.kind == "stop"]
        if stops:
            return f"not complete: {stops[-1].message}"
        if not self.closed:
            return ("not complete: the writer never closed the file (the process was killed, or is still "
                    "running); read up to its last flush")
        return "not complete: the writer stopped before the end"

    def fast_time(self) -> np.ndarray:
        """Time [s] of every fast sample, for datasets with ``samples_per_step`` samples
        per slow step (the fast sample j of step k is at t_k − Δt_n + (j+1)/f_fast)."""
        try:
            slow, fast = float(self.time_base["slow_rate_hz"]), float(self.time_base["fast_rate_hz"])
            ratio = int(self.time_base["samples_per_step"])
        except KeyError as missing:
            raise DataFileError(self.path, f"the record's time base has no {missing} (no fast-rate data)") from None
        offsets = (np.arange(ratio) + 1) / fast - 1.0 / slow
        return (self.time[:, None] + offsets[None, :]).ravel()

    def fast_series(self, path: str) -> np.ndarray:
        """A fast-rate dataset (``(n_steps, samples_per_step)``) as one series."""
        if path not in self.steps:
            raise DataFileError(self.path, f"the record has no dataset steps/{path}; it has {sorted(self.steps)}")
        data = self.steps[path]
        ratio = int(self.time_base.get("samples_per_step", -1))
        if data.ndim != 2 or data.shape[1] != ratio:
            raise DataFileError(self.path, f"steps/{path} has shape {data.shape}: not {ratio} fast samples per "
                                "slow step")
        return data.ravel()


def _open(path: str) -> tuple[h5py.File, bool]:
    """The file and whether it was closed by its writer."""
    try:
        return h5py.File(path, "r"), True
    except OSError as plain_error:
        try:
            return h5py.File(path, "r", swmr=True), False
        except OSError:
            raise DataFileError(path, f"cannot read as HDF5 ({plain_error})") from plain_error


def _text(value) -> str:
    return value.decode("utf-8", errors="replace") if isinstance(value, bytes) else str(value)


def is_test_record(path) -> bool:
    """Whether ``path`` is an HDF5 file with the test-record format mark."""
    try:
        f, _ = _open(os.fspath(path))
    except (DataFileError, OSError):
        return False
    with f:
        return _text(f.attrs.get("format", "")) == layout.FORMAT


def read_test_record(path) -> TestRecord:
    """Read a test record (module doc for records whose writer did not close them).

    Step datasets are cut to their common length (a writer killed in the middle of a
    flush may leave some a flush longer than others).
    """
    source = os.fspath(path)
    if not Path(source).is_file():
        raise DataFileError(source, "no such file")
    f, closed = _open(source)
    with f:
        if _text(f.attrs.get("format", "")) != layout.FORMAT:
            raise DataFileError(source, f"not a test record (no format attribute {layout.FORMAT!r})")
        version = int(f.attrs.get("format_version", 0))
        if version > layout.FORMAT_VERSION:
            raise DataFileError(source, f"test-record format {version} is newer than this rths_ident reads "
                                f"({layout.FORMAT_VERSION}); update rths_ident")
        steps_group = f[layout.STEPS]
        flat: dict[str, np.ndarray] = {}
        steps_group.visititems(lambda name, obj: flat.__setitem__(name, obj[()]) if isinstance(obj, h5py.Dataset)
                               else None)
        n = min((a.shape[0] for a in flat.values()), default=0)
        flat = {p: a[:n] for p, a in flat.items()}
        for p, shape in json.loads(steps_group.attrs.get("empty_datasets_json", "{}")).items():
            flat[p] = np.zeros((n, *shape))
        units = {}
        for name, value in f[layout.UNITS].attrs.items():
            text = _text(value)
            units[name] = json.loads(text) if text.startswith("{") else text
        events_group = f[layout.EVENTS]
        columns = {name: events_group[name][()] for name in layout.EVENT_FIELDS}
        events = tuple(
            Event(kind=_text(columns["kind"][i]), message=_text(columns["message"][i]),
                  step=None if columns["step"][i] < 0 else int(columns["step"][i]),
                  time=None if math.isnan(columns["time"][i]) else float(columns["time"][i]),
                  wall_time=float(columns["wall_time"][i]))
            for i in range(min(len(c) for c in columns.values()))
        )
        metrics = json.loads(f[layout.METRICS].attrs["json"]) if layout.METRICS in f else None
        attached, attached_units = _attached(f)
        return TestRecord(
            path=source, kind=_text(f.attrs.get("kind", "")), created_utc=_text(f.attrs.get("created_utc", "")),
            complete=bool(f.attrs.get("complete", False)), closed=closed,
            config=json.loads(f.attrs.get("config_json", "{}")),
            software={k: _text(v) for k, v in f[layout.SOFTWARE].attrs.items()}, units=units,
            time_base=json.loads(steps_group.attrs.get("time_base_json", "{}")), steps=flat, events=events,
            metrics=metrics, format_version=version, attached=attached, attached_units=attached_units,
        )


def _attached(f: h5py.File) -> tuple[dict, dict]:
    """The datasets under ``/attached`` and their units (a string, or ``{column: unit}``
    for the last axis)."""
    data, units = {}, {}
    if layout.ATTACHED not in f:
        return data, units

    def visit(name, obj):
        if isinstance(obj, h5py.Dataset):
            data[name] = obj[()]
            units[name] = json.loads(_text(obj.attrs["units_json"])) if "units_json" in obj.attrs else "?"

    f[layout.ATTACHED].visititems(visit)
    return data, units
