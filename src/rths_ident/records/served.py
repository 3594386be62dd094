"""Test records of what a ``serve`` command serves: one record per session.

A server answers one client after another; each connection (session) gets its own
record in the folder given by ``--records DIR``: ``session-001.h5``, ``session-002.h5``, …
(crash-safe like every record, :mod:`rths_ident.records.writer`). Two wrappers feed them
without changing what is served:

* :class:`RecordingSubstructure` — around a numerical substructure (``serve ns``): one
  row per slow step: the interface force received [N], the ground acceleration [m/s²],
  the target sent back [m], at the test time (k+1)·Δt; written by a thread of its own
  (:mod:`~rths_ident.records.queued`), not by the thread that answers the client;
* :class:`RecordingElementSite` — around an OpenFresco element site (``serve site``):
  one row per committed trial (commitState): the trial displacement the client sent, the
  measured displacement (with a transfer system), the resisting force returned, at the
  client's time.

A session that ends with an error keeps its rows and the error event; one that ends
normally is marked complete with its step count as the metrics.
"""

from __future__ import annotations

import datetime
from pathlib import Path

import numpy as np

from rths_ident.records.queued import QueuedRecord
from rths_ident.records.writer import TestRecordWriter


def default_records_folder(command: str) -> Path:
    """``rths-runs/<command>-<UTC time>/`` in the working folder."""
    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    return Path("rths-runs") / f"{command.replace(' ', '-')}-{stamp}"


class SessionRecords:
    """Hands out one :class:`TestRecordWriter` per session in ``folder``."""

    def __init__(self, folder, kind: str, config: dict):
        self.folder = Path(folder)
        self.kind, self.config = kind, dict(config)
        self.paths: list[Path] = []

    def open(self, units: dict, session_config: dict | None = None, **options) -> TestRecordWriter:
        path = self.folder / f"session-{len(self.paths) + 1:03d}.h5"
        self.paths.append(path)
        config = {**self.config, **(session_config or {}), "session": len(self.paths)}
        return TestRecordWriter.open(path, config, units, kind=self.kind, **options)


class RecordingSubstructure:
    """A numerical substructure whose every slow step is recorded in ``writer`` (module
    doc), through a :class:`~rths_ident.records.queued.QueuedRecord`: the serving thread
    only queues the row, a thread of its own writes it (``thread_setup`` runs first in
    that thread). The server's ``end_session(ok, how)`` finishes or closes the record."""

    def __init__(self, ns, writer: TestRecordWriter, thread_setup=None):
        self.ns = ns
        self.record = QueuedRecord(writer, thread_setup=thread_setup)
        self.dt, self.n_interface = ns.dt, ns.n_interface
        self.k = 0
        self.record.event("start", "session opened", step=0, time=0.0)

    @property
    def writer(self) -> TestRecordWriter:
        return self.record.writer

    def __getattr__(self, name):  # parameter names, units, … of the wrapped NS
        return getattr(self.ns, name)

    def initial_target(self):
        return self.ns.initial_target()

    def step(self, feedback, ground_accel):
        target, log = self.ns.step(feedback, ground_accel)
        self.k += 1
        self.record.append({"time": np.float64(self.k * self.dt),
                            "feedback": np.array(feedback, dtype=float).reshape(-1),
                            "ground_accel": np.float64(ground_accel),
                            "target": np.array(target, dtype=float).reshape(-1)})
        return target, log

    def apply_parameters(self, theta):
        self.record.event("update", "parameters applied: " + ", ".join(f"{v:.6g}" for v in np.ravel(theta)),
                          step=self.k, time=self.k * self.dt)
        return self.ns.apply_parameters(theta)

    def end_session(self, ok: bool, how: str):
        """The server's end of the session: ``ok`` (a clean SHUTDOWN) finishes the
        record as complete; otherwise ``how`` is recorded as the error at the step in
        progress and the record closed incomplete. Closes the NS."""
        try:
            self.ns.close()
        finally:
            if ok:
                self.record.finish({"slow_steps": self.k})
            else:
                self.record.event("error", how, step=self.k, time=(self.k + 1) * self.dt)
                self.record.close()

    def close(self):
        self.end_session(True, "closed")


#: units of a served NS session's rows
SUBSTRUCTURE_UNITS = {"feedback": "N", "ground_accel": "m/s^2", "target": "m"}
#: units of a served element site's rows (1-D specimen: translational DOFs)
ELEMENT_SITE_UNITS = {"trial_displacement": "m", "measured_displacement": "m", "force": "N"}


class RecordingElementSite:
    """An OpenFresco element site whose every committed trial is appended to ``writer``
    (module doc). Everything else is delegated."""

    def __init__(self, site, writer: TestRecordWriter):
        self.site, self.writer = site, writer
        self.n_basic = site.n_basic
        self.commits = 0
        self._trial = (np.zeros(self.n_basic), 0.0)
        writer.event("start", "client connected", step=0, time=0.0)

    def __getattr__(self, name):
        return getattr(self.site, name)

    def set_trial(self, displacement, velocity, acceleration, time):
        self._trial = (np.asarray(displacement, dtype=float).reshape(-1), float(time))
        return self.site.set_trial(displacement, velocity, acceleration, time)

    def commit(self):
        displacement, time = self._trial
        measured = getattr(self.site, "measured_displacement", None)
        self.writer.append({"time": time,
                            "trial_displacement": displacement,
                            "measured_displacement": np.asarray(measured() if measured else displacement,
                                                                dtype=float).reshape(-1),
                            "force": np.asarray(self.site.force(), dtype=float).reshape(-1)})
        self.commits += 1
        return self.site.commit()

    def finish(self):
        if not self.writer.closed:
            self.writer.finish({"commits": self.commits})
