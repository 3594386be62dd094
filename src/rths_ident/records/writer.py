"""Writing a test record as the test goes: :class:`TestRecordWriter`.

A record must stay readable whatever happens to the process writing it, ``kill -9``
included. HDF5 alone does not give that: a file opened for writing is inconsistent on
disk while its metadata cache is dirty, and a file created with the latest format and not
closed is refused by ordinary readers ("file is already open for write"). The writer
therefore goes through three phases, each leaving a readable file at every instant:

1. **header** (:meth:`open` until the first flush with steps): the configuration,
   versions, units, time base and events so far are written to ``PATH.partial``, closed,
   and renamed over ``PATH`` (``os.replace`` is atomic on POSIX). The record on disk is
   always a complete, closed file.
2. **steps** (from the first flush with steps): the same header and the step datasets
   (chunked, resizable) are created in ``PATH.partial``, the file is switched to HDF5
   single-writer/multiple-reader mode (SWMR, ``libver="latest"``), the first steps are
   written and flushed, and the file is renamed over ``PATH``. From then on rows are
   appended and flushed every ``flush_every`` slow steps or ``flush_interval_s`` seconds,
   whichever comes first, and at every event. In SWMR mode HDF5 orders its metadata
   writes so that the file on disk is consistent after every flush: a reader opening it
   with ``swmr=True`` (:func:`~rths_ident.records.reader.read_test_record` does when a
   plain open is refused) sees every step up to the last flush, even after the writer
   was killed. Steps appended after the last flush are lost (at most ``flush_every``
   steps, or ``flush_interval_s`` of test).
3. **finish**: the SWMR file is closed (a closed file opens with any HDF5 ≥ 1.10 reader),
   copied to ``PATH.partial``, the metrics and ``complete = True`` are added there and the
   copy renamed over ``PATH``. Killed during this copy, the record stays the closed step
   file with ``complete = False`` and its ``stop`` event.

Datasets that are not per step (a whole run's time history, a reference) can be
:meth:`~TestRecordWriter.attach`-ed under ``/attached`` while the record is in phase 1:
HDF5 cannot create datasets in a file in SWMR mode, so they are written with the header
(and rewritten with it until phase 2 starts; the writer then drops its copy).

A disk that fills up: before each write the writer checks the free space, and with less
than the write needs plus :data:`RESERVE_BYTES` (1 MiB) it stops before writing anything
(HDF5 hitting a full disk mid-write cannot close its file cleanly). That, or any failed
write: the write raises :class:`RecordWriteError`
(an ``OSError`` naming the record and how many slow steps it keeps), the writer stops
writing and closes the file as far as it can, and the record on disk keeps what the last
successful flush wrote (phase 1: the previous header file, replaced atomically; phase 2:
the SWMR file up to its last flush; finishing: the closed step file, ``complete =
False``). Later appends raise the same error; events and ``close`` become no-ops, so the
code that reports the failure is not hit by it again.

What this does not cover: a power cut or an OS crash (flushes hand the data to the
operating system, they do not ``fsync``).
"""

from __future__ import annotations

import datetime
import errno
import math
import os
import shutil
import time as _time
from collections.abc import Mapping
from pathlib import Path

import h5py
import numpy as np

from rths_ident.errors import ParameterError
from rths_ident.operator_stop import operator_stop_text
from rths_ident.records import layout
from rths_ident.records.versions import software_versions

#: bytes per chunk of a step dataset (rows per chunk = this / bytes per row)
CHUNK_BYTES = 64 * 1024
#: free bytes a writer keeps on its disk: below this plus the next write, it stops writing (a full disk)
RESERVE_BYTES = 1 << 20


class RecordWriteError(OSError):
    """Writing the test record failed (a full disk, a removed folder): the message names
    the record, the cause and the slow steps the file keeps (module doc)."""


class DiskFull(OSError):
    """The disk has less free space than the next write needs plus the reserve."""


def _utc_now() -> str:
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")


def _partial_path(path: Path) -> Path:
    return path.with_name(path.name + ".partial")


def _normalise_units(units: Mapping) -> dict[str, str | dict[str, str]]:
    """``{path: unit}`` or ``{path: {column: unit, …}}`` (columns of the last axis)."""
    if not isinstance(units, Mapping):
        raise ParameterError(f"units must be a mapping of dataset path -> unit; got {type(units).__name__}")
    out: dict[str, str | dict[str, str]] = {}
    for path, unit in units.items():
        if isinstance(unit, Mapping):
            if not unit or not all(isinstance(c, str) and isinstance(u, str) for c, u in unit.items()):
                raise ParameterError(f"units[{path!r}]: a unit string or a non-empty mapping column -> unit string")
            out[str(path)] = {str(c): str(u) for c, u in unit.items()}
        elif isinstance(unit, str):
            out[str(path)] = unit
        else:
            raise ParameterError(f"units[{path!r}] = {unit!r}: expected a unit string (SI, e.g. 'm', 'N', '1')")
    out.setdefault(layout.TIME, "s")
    return out


class TestRecordWriter:
    """A crash-safe HDF5 record of one test (module doc for the guarantees).

    ``TestRecordWriter.open(path, config, units)`` writes the header at once;
    :meth:`append` one slow step (a nested dictionary of arrays with the test time under
    ``"time"`` [s]); :meth:`event` a start, stop or error; :meth:`finish` the metrics and
    ``complete = True``. Used as a context manager, an exception that leaves the block
    is recorded as an ``error`` event (at the exception's ``slow_index`` if it has one,
    else the step in progress; at the test time of the last step appended) and the file
    closed with ``complete = False``.

    Parameters
    ----------
    path:
        the ``.h5`` file (its folder is created); an existing file is replaced.
    config:
        the test's configuration (JSON-serialisable after NumPy scalars and arrays are
        converted); stored as JSON on the root and as attributes of ``/config``.
    units:
        the unit of every per-step dataset, by path (``"fast/target": "m"``), or for a
        dataset whose last axis holds named quantities a mapping column -> unit
        (``"update/estimate": {"k_e": "N/m", "f_y0": "N"}``). ``time`` is ``s``. A step
        with a dataset missing here is refused.
    kind:
        what wrote the record (``"run"``, ``"serve site"``, …).
    time_base:
        attributes of ``/steps`` that say how the samples map to time, e.g.
        ``{"slow_rate_hz": 50, "fast_rate_hz": 4000, "samples_per_step": 80}``.
    flush_every, flush_interval_s:
        flush after this many buffered slow steps or this many wall-clock seconds since
        the last flush, whichever comes first (and at every event).
    """

    __test__ = False  # not a pytest class
    #: free bytes kept on the disk (module doc; :data:`RESERVE_BYTES`)
    reserve_bytes = RESERVE_BYTES

    def __init__(self, path, config: Mapping, units: Mapping, *, kind: str = "test",
                 time_base: Mapping | None = None, flush_every: int = 25, flush_interval_s: float = 0.5):
        if not isinstance(flush_every, int) or isinstance(flush_every, bool) or flush_every < 1:
            raise ParameterError(f"flush_every = {flush_every!r}: expected an integer ≥ 1 (slow steps)")
        if not (isinstance(flush_interval_s, (int, float)) and flush_interval_s > 0):
            raise ParameterError(f"flush_interval_s = {flush_interval_s!r}: expected a positive number of seconds")
        if not isinstance(config, Mapping):
            raise ParameterError(f"config must be a mapping; got {type(config).__name__}")
        self.path = Path(path)
        self.flush_every = flush_every
        self.flush_interval_s = float(flush_interval_s)
        self._config = layout.json_value(config)
        self._units = _normalise_units(units)
        self._kind = str(kind)
        self._time_base = layout.json_value(dict(time_base or {}))
        self._software = software_versions()
        self._created = _utc_now()
        self._events: list[tuple] = []  # every event (the header phase rewrites them all)
        self._events_on_disk = 0
        self._buffer: list[dict[str, np.ndarray]] = []  # blocks of steps (leading axis: step)
        self._buffered = 0  # steps in the buffer
        self._layout: dict[str, tuple[tuple, np.dtype]] | None = None  # path -> (shape of a step, dtype)
        self._empty: dict[str, list] = {}  # zero-size per-step arrays: path -> shape (kept as an attribute)
        self._file: h5py.File | None = None  # the SWMR file (phase 2)
        self._datasets: dict[str, h5py.Dataset] = {}  # its step datasets, by path
        self._appended = 0
        self._last_time: float | None = None  # test time of the last appended step [s]
        self._on_disk = 0
        self._last_flush = _time.monotonic()
        self._closed = False
        self._finished = False
        self._end_recorded = False  # an error or stop event is in the record
        self._failure: RecordWriteError | None = None  # a write failed: the writer stopped writing
        self._events_only = False  # the disk is (nearly) full: no more steps, still the events that say why
        self._attached: dict[str, tuple[np.ndarray, str]] = {}  # path under /attached -> (data, unit), phase 1
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._replace_with_header()

    # ------------------------------------------------------------------ public API
    @classmethod
    def open(cls, path, config: Mapping, units: Mapping, **options) -> "TestRecordWriter":
        """Create the record at ``path`` (class doc for the arguments)."""
        return cls(path, config, units, **options)

    @property
    def steps(self) -> int:
        """Slow steps appended so far."""
        return self._appended

    @property
    def steps_on_disk(self) -> int:
        """Slow steps flushed to the file (what a reader sees, and survives a kill)."""
        return self._on_disk

    @property
    def closed(self) -> bool:
        return self._closed

    @property
    def failure(self) -> "RecordWriteError | None":
        """The failed write that stopped the writer (None: none)."""
        return self._failure

    def append(self, step: Mapping) -> None:
        """Buffer one slow step: a nested mapping of arrays (the same keys and shapes
        every step) with the test time under ``"time"`` [s]; flushed per the policy."""
        self._check_open()
        flat = layout.flatten(step)
        if layout.TIME not in flat:
            raise ParameterError("a record step needs its test time under 'time' [s]")
        arrays = {p: np.asarray(v) for p, v in flat.items()}
        if self._layout is None:
            self._set_layout(arrays)
        self._check_step(arrays)
        self._buffer.append({p: a[np.newaxis] for p, a in arrays.items() if p in self._layout})
        self._buffered += 1
        self._appended += 1
        self._last_time = float(arrays[layout.TIME])
        if self._buffered >= self.flush_every or _time.monotonic() - self._last_flush >= self.flush_interval_s:
            self.flush()

    def extend(self, steps: Mapping) -> None:
        """Append many slow steps at once: ``steps`` is stacked along a leading axis
        (e.g. the fused engine's logs, with ``"time"`` of shape (N,)); checked as
        :meth:`append` checks a step, written as one block and flushed."""
        self._check_open()
        flat = layout.flatten(steps)
        if layout.TIME not in flat:
            raise ParameterError("record steps need their test times under 'time' [s]")
        arrays = {p: np.asarray(v) for p, v in flat.items()}
        n = arrays[layout.TIME].shape[0]
        for path, array in arrays.items():
            if array.ndim == 0 or array.shape[0] != n:
                raise ParameterError(f"record steps: {path!r} has shape {array.shape}; expected {n} steps "
                                     "(the length of 'time') along its first axis")
        if n == 0:
            return
        first_step = {p: a[0] for p, a in arrays.items()}
        if self._layout is None:
            self._set_layout(first_step)
        self._check_step(first_step)  # every step has the first one's shapes: they are stacked
        self._buffer.append({p: a for p, a in arrays.items() if p in self._layout})
        self._buffered += n
        self._appended += n
        self._last_time = float(arrays[layout.TIME][-1])
        self.flush()

    def attach(self, name: str, arrays: Mapping, units: Mapping) -> None:
        """Write datasets that are not per step under ``/attached/<name>/…`` (a nested
        mapping of arrays, e.g. one run's whole time history), with the unit of each
        path of ``arrays`` in ``units`` (a string, or a mapping column -> unit for the
        last axis). Only before the first step: they go into the header (module doc);
        on disk at once."""
        self._check_open()
        if self._file is not None or self._buffer:
            raise ParameterError(f"test record {self.path}: attach {name!r} before the first step (HDF5 cannot "
                                 "add datasets to a file in SWMR mode)")
        if not isinstance(name, str) or not all(name.split("/")):
            raise ParameterError(f"attach: the name must be a path of non-empty words ('histories/run_0'); got {name!r}")
        flat = layout.flatten(arrays)
        normalised = _normalise_units(units)
        for path, value in flat.items():
            array = np.asarray(value)
            if array.dtype.kind not in "biuf":
                raise ParameterError(f"attach {name!r}: {path!r} has dtype {array.dtype}; expected numbers or booleans")
            if path not in normalised:
                raise ParameterError(f"attach {name!r}: no unit given for {path!r} (every dataset needs one)")
            unit = normalised[path]
            if isinstance(unit, dict) and (array.ndim == 0 or array.shape[-1] != len(unit)):
                raise ParameterError(f"attach {name!r}: {path!r} has shape {array.shape}; its units name "
                                     f"{len(unit)} columns ({', '.join(unit)}) for the last axis")
            self._attached[f"{name}/{path}"] = (array, unit)
        self._replace_with_header()

    def event(self, kind: str, message: str = "", step: int | None = None, time: float | None = None) -> None:
        """Record an event (``start``, ``stop``, ``error``, …) at slow step ``step`` and
        test time ``time`` [s] (``None``: not tied to one), and flush at once. After a
        failed write: nothing (module doc)."""
        if self._failure is not None and not self._events_only:
            return  # nothing more reaches the disk; the failure is what the caller reports
        if self._closed:
            raise ParameterError(f"the test record {self.path} is closed")
        if not isinstance(kind, str) or not kind or len(kind.encode()) > layout.EVENT_KIND_BYTES:
            raise ParameterError(f"event kind {kind!r}: expected a non-empty word of ≤ {layout.EVENT_KIND_BYTES} bytes")
        self._events.append((kind, _clip_message(str(message)), -1 if step is None else int(step),
                             math.nan if time is None else float(time), _time.time()))
        if kind in ("error", "stop"):
            self._end_recorded = True
        self.flush()

    def flush(self) -> None:
        """Write the buffered steps and events and hand them to the operating system;
        :class:`RecordWriteError` if that fails (module doc)."""
        if self._closed:
            return
        if self._events_only:  # a full disk: the events that say so, no more steps
            self._flush_events_only()
            return
        if self._failure is not None:
            raise self._failure
        on_disk = self._on_disk if self._file is not None else 0  # phase 1: the record has no step yet
        try:
            self._check_space()
        except DiskFull as exc:  # nothing written: the file stays open for the events that say why
            self._failure = RecordWriteError(f"test record {self.path}: {exc.strerror}; the record keeps the "
                                             f"{on_disk} slow steps flushed before")
            self._buffer.clear()
            self._buffered = 0
            self._events_only = True
            self._flush()  # the events so far (small: the reserve is there for them)
            raise self._failure from exc
        try:
            self._flush()
        except Exception as exc:
            self._on_disk = on_disk  # what the record on disk keeps: the steps of the last good flush
            raise self._failed(exc) from exc

    def _flush_events_only(self) -> None:
        try:
            self._flush()
        except Exception as exc:  # even the events no longer fit: stop writing altogether
            self._events_only = False
            self._release()
            raise self._failure from exc

    def _check_space(self, extra: int = 0) -> None:
        """An ``OSError`` (ENOSPC) before anything is written when the disk has less
        free than the next write needs plus :attr:`reserve_bytes`: the record stays the
        consistent file of the last flush (HDF5 hitting a full disk mid-write leaves its
        cache in a state it cannot close cleanly)."""
        pending = extra + sum(a.nbytes for block in self._buffer for a in block.values())
        if self._file is None and self.path.exists():  # phase 1 and 2's start rewrite the whole file
            pending += self.path.stat().st_size
        try:
            free = shutil.disk_usage(self.path.parent).free
        except OSError:
            return
        if free < pending + self.reserve_bytes:
            raise DiskFull(errno.ENOSPC, f"the disk is full: {free / 1e3:.0f} kB free, the next write needs about "
                                         f"{pending / 1e3:.0f} kB and {self.reserve_bytes / 1e3:.0f} kB are kept free")

    def _flush(self) -> None:
        if self._file is None:
            if self._buffer:
                self._start_steps_file()
            elif len(self._events) > self._events_on_disk:
                self._replace_with_header()
        else:
            self._write_pending(self._file)
            self._file.flush()
        self._last_flush = _time.monotonic()

    def finish(self, metrics: Mapping) -> None:
        """End a test that ran to its end: record ``stop``, the ``metrics`` (JSON on
        ``/metrics`` and its scalar leaves as attributes) and ``complete = True``."""
        self._check_open()
        if not isinstance(metrics, Mapping):
            raise ParameterError(f"metrics must be a mapping; got {type(metrics).__name__}")
        self.event("stop", "the test ran to its end")
        self._close_file()
        partial = _partial_path(self.path)
        try:
            self._check_space(self.path.stat().st_size)
            shutil.copyfile(self.path, partial)
            with h5py.File(partial, "r+") as f:
                f.attrs["complete"] = True
                group = f.create_group(layout.METRICS)
                group.attrs["json"] = layout.to_json(metrics)
                for name, value in layout.scalar_attributes(metrics).items():
                    group.attrs[name] = value
        except Exception as exc:  # the closed step file stays the record (complete = False)
            partial.unlink(missing_ok=True)
            text = " ".join(str(exc).split())
            self._failure = RecordWriteError(f"test record {self.path}: adding the metrics failed ({text}); the record "
                                             f"keeps its {self._on_disk} slow steps, marked not complete")
            raise self._failure from exc
        os.replace(partial, self.path)
        self._finished = True

    def close(self) -> None:
        """Flush and close without completing the record (``complete`` stays false; a
        ``stop`` event says so unless an error or stop was recorded). Idempotent; after a
        failed write it only releases the file."""
        if self._closed:
            return
        if self._failure is not None and not self._events_only:
            self._release()
            return
        try:
            if not self._end_recorded:
                self.event("stop", "closed before the end of the test (no finish)")
            self._close_file()
        except RecordWriteError:  # the disk filled up even for the last event: what is there stays
            self._release()

    def __enter__(self) -> "TestRecordWriter":
        return self

    def __exit__(self, exc_type, exc, traceback) -> bool:
        if exc is not None and not self._closed and not self._end_recorded:
            # where: the failing step if the exception says (LoopAborted), else the step in
            # progress; when: the end of the last step appended (the last time known).
            # Ctrl-C is the operator's stop, not an error.
            step = getattr(exc, "slow_index", None)
            step = self._appended if step is None else step
            if isinstance(exc, KeyboardInterrupt):
                time = getattr(exc, "time", None)
                self.event("stop", describe_exception(exc, step, self._last_time if time is None else time),
                           step=step, time=self._last_time if time is None else time)
            else:
                self.event("error", describe_exception(exc), step=step, time=self._last_time)
        self.close()
        return False

    # ------------------------------------------------------------------ internals
    def _check_open(self) -> None:
        if self._failure is not None:
            raise self._failure
        if self._closed:
            raise ParameterError(f"the test record {self.path} is closed")

    def _set_layout(self, arrays: dict[str, np.ndarray]) -> None:
        missing = sorted(p for p in arrays if p not in self._units)
        if missing:
            raise ParameterError(f"test record {self.path}: no unit given for {', '.join(missing)} "
                                 "(every per-step dataset needs one)")
        chosen = {}
        for path, array in arrays.items():
            if array.dtype.kind not in "biuf":
                raise ParameterError(f"test record: {path!r} has dtype {array.dtype}; expected numbers or booleans")
            unit = self._units[path]
            if isinstance(unit, dict) and (array.ndim == 0 or array.shape[-1] != len(unit)):
                raise ParameterError(f"test record: {path!r} has shape {array.shape} per step; its units name "
                                     f"{len(unit)} columns ({', '.join(unit)}) for the last axis")
            if array.size == 0:
                self._empty[path] = list(array.shape)
            else:
                chosen[path] = (array.shape, array.dtype)
        self._layout = chosen

    def _check_step(self, arrays: dict[str, np.ndarray]) -> None:
        known = set(self._layout) | set(self._empty)
        if set(arrays) != known:
            extra, lacking = sorted(set(arrays) - known), sorted(known - set(arrays))
            raise ParameterError(f"test record: step {self._appended} has other datasets than the first step "
                                 f"(new: {extra or 'none'}; missing: {lacking or 'none'})")
        for path, (shape, _) in self._layout.items():
            if arrays[path].shape != shape:
                raise ParameterError(f"test record: {path!r} has shape {arrays[path].shape} in step "
                                     f"{self._appended}; the first step had {shape}")

    def _write_header(self, f: h5py.File) -> None:
        f.attrs["format"] = layout.FORMAT
        f.attrs["format_version"] = layout.FORMAT_VERSION
        f.attrs["kind"] = self._kind
        f.attrs["created_utc"] = self._created
        f.attrs["complete"] = False
        f.attrs["config_json"] = layout.to_json(self._config)
        f.create_group(layout.CONFIG).attrs.update(layout.scalar_attributes(self._config))
        f.create_group(layout.SOFTWARE).attrs.update(self._software)
        present = None if self._layout is None else set(self._layout) | set(self._empty)
        units = f.create_group(layout.UNITS)
        for path, unit in self._units.items():
            if present is None or path in present:
                units.attrs[path] = unit if isinstance(unit, str) else layout.to_json(unit)
        steps = f.create_group(layout.STEPS)
        steps.attrs.update(layout.scalar_attributes(self._time_base))
        steps.attrs["time_base_json"] = layout.to_json(self._time_base)
        steps.attrs["empty_datasets_json"] = layout.to_json(self._empty)
        for path, (array, unit) in self._attached.items():
            ds = f.create_dataset(f"{layout.ATTACHED}/{path}", data=array)
            _set_units(ds, unit)
            ds.attrs["units_json"] = layout.to_json(unit)
        events = f.create_group(layout.EVENTS)
        for name, dtype in layout.EVENT_FIELDS.items():
            ds = events.create_dataset(name, shape=(0,), maxshape=(None,), chunks=(64,), dtype=dtype)
            ds.attrs["units"] = layout.EVENT_UNITS[name]
        self._events_on_disk = 0

    def _create_step_datasets(self, f: h5py.File) -> None:
        self._datasets = {}
        for path, (shape, dtype) in self._layout.items():
            row_bytes = max(1, int(np.prod(shape, dtype=np.int64)) * dtype.itemsize)
            rows = int(min(4096, max(1, CHUNK_BYTES // row_bytes)))
            ds = f.create_dataset(f"{layout.STEPS}/{path}", shape=(0, *shape), maxshape=(None, *shape),
                                  chunks=(rows, *shape), dtype=dtype)
            self._datasets[path] = ds
            _set_units(ds, self._units[path])

    def _write_pending(self, f: h5py.File) -> None:
        if self._buffer:
            n = self._buffered
            # time last: a reader never sees a time without the data of its step
            for path in sorted(self._layout, key=lambda p: p == layout.TIME):
                rows = [block[path] for block in self._buffer]
                _append_rows(self._datasets[path], self._on_disk, rows[0] if len(rows) == 1 else np.concatenate(rows))
            self._on_disk += n
            self._buffer.clear()
            self._buffered = 0
        new = self._events[self._events_on_disk:]
        if new:
            start = self._events_on_disk
            for i, name in enumerate(layout.EVENT_FIELDS):
                ds = f[f"{layout.EVENTS}/{name}"]
                ds.resize(start + len(new), axis=0)
                values = [row[i].encode("utf-8") if isinstance(row[i], str) else row[i] for row in new]
                ds[start:] = np.asarray(values, dtype=layout.EVENT_FIELDS[name])
            self._events_on_disk += len(new)

    def _replace_with_header(self) -> None:
        """Phase 1: the header and every event, written aside and renamed over the record."""
        partial = _partial_path(self.path)
        with h5py.File(partial, "w", libver="latest") as f:
            self._write_header(f)
            self._write_pending(f)
        os.replace(partial, self.path)

    def _start_steps_file(self) -> None:
        """Phase 2: the header, the step datasets, SWMR mode and the first steps, written
        aside and renamed over the record (which stays the phase-1 file until then)."""
        partial = _partial_path(self.path)
        f = h5py.File(partial, "w", libver="latest")
        try:
            self._write_header(f)
            self._create_step_datasets(f)
            f.swmr_mode = True
            self._write_pending(f)
            f.flush()
        except BaseException:
            f.close()
            partial.unlink(missing_ok=True)
            raise
        os.replace(partial, self.path)
        self._file = f
        self._attached = {}  # in the file now; never rewritten from memory again

    def _close_file(self) -> None:
        self.flush()
        if self._file is not None:
            self._file.close()
            self._file = None
        self._closed = True

    def _failed(self, exc: Exception) -> RecordWriteError:
        """Stop writing after ``exc`` (module doc): the error to raise, now and later."""
        text = " ".join(str(exc).split())  # HDF5's messages span lines
        self._failure = RecordWriteError(f"test record {self.path}: writing failed ({type(exc).__name__}: {text}); "
                                         f"the record keeps the {self._on_disk} slow steps flushed before")
        self._release()
        return self._failure

    def _release(self) -> None:
        """Close the file without writing anything more (after a failed write)."""
        self._buffer.clear()
        self._buffered = 0
        if self._file is not None:
            try:
                self._file.close()
            except Exception:  # noqa: BLE001 - HDF5 may try to write its cache once more: the disk is full
                pass
            self._file = None
        _partial_path(self.path).unlink(missing_ok=True)
        self._closed = True


def _set_units(ds: h5py.Dataset, unit: str | dict) -> None:
    if isinstance(unit, dict):
        ds.attrs["units"] = ", ".join(unit.values())
        ds.attrs["columns"] = list(unit)
    else:
        ds.attrs["units"] = unit


def _append_rows(ds: h5py.Dataset, start: int, rows: np.ndarray) -> None:
    """Extend ``ds`` to ``start + len(rows)`` rows and write ``rows`` there, through
    h5py's low-level calls (the high-level slicing costs several times more per call,
    and a flush writes every dataset)."""
    ds.id.set_extent((start + rows.shape[0], *rows.shape[1:]))
    file_space = ds.id.get_space()
    file_space.select_hyperslab((start,) + (0,) * (rows.ndim - 1), rows.shape)
    ds.id.write(h5py.h5s.create_simple(rows.shape), file_space, np.ascontiguousarray(rows, dtype=ds.dtype))


def _clip_message(message: str) -> str:
    encoded = message.encode("utf-8")
    if len(encoded) <= layout.EVENT_MESSAGE_BYTES:
        return message
    tail = " … (truncated)".encode("utf-8")
    return encoded[:layout.EVENT_MESSAGE_BYTES - len(tail)].decode("utf-8", errors="ignore") + tail.decode("utf-8")


def describe_exception(exc: BaseException, step: int | None = None, time: float | None = None) -> str:
    """One line for an error event: the exception's type and text. Ctrl-C
    (:class:`KeyboardInterrupt`): its own sentence if it carries one (the loop's operator
    stop says how the specimen was left), else ``stopped by the operator (Ctrl-C) at slow
    step k, t = … s`` at ``step`` and ``time``."""
    if isinstance(exc, KeyboardInterrupt):
        return str(exc).strip() or operator_stop_text(step, time)
    text = str(exc).strip()
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__
