"""Test records of hybrid runs (:mod:`rths_ident.records`): the units of the loop's
logs, the record a run opens, and the recorder the engines feed.

The step-wise engine appends every slow step as it completes (``on_step``); a run that
fails (:class:`~rths_ident.hybrid.loop.engine.LoopAborted`) appends the steps the failure
carries and records the error where it happened. The fused engine runs the whole record
in one compiled call: its per-step logs are written after the call, in chunks of
``flush_every`` steps, so a fused run killed mid-call leaves the header and the start
event only. Ctrl-C is the operator's stop: a ``stop`` event saying so, at the step and
test time it came (an ``error`` event is a fault).

A paced run must not write files in its loop (an HDF5 flush takes milliseconds, a slow
step at 1024 Hz 0.98 ms): :meth:`StepRecorder.follow` hands the record to a writer
thread, which appends the rows the loop has completed in its preallocated logs
(:class:`~rths_ident.hybrid.loop.step_logs.StepLogs`) every ``interval_s`` — the logs are
the ring buffer, sized for the whole run, so the loop never waits for the writer. The
thread runs below the loop (:func:`~rths_ident.hybrid.loop.realtime_host.lower_this_thread`),
and h5py releases the interpreter lock while it writes. A write that fails on the thread
(a full disk) is raised by the loop's next per-step call, so the loop stops there as it
does when it writes itself. A run killed mid-test loses at most the last ``interval_s``
of steps (plus the writer's own flush policy).
"""

from __future__ import annotations

import dataclasses
import threading
from pathlib import Path

import numpy as np

from rths_ident.records import TestRecordWriter

#: units of the hybrid loop's logs (paths under ``/steps``); datasets whose last axis
#: holds named quantities get per-column units from :func:`log_units`
LOG_UNITS = {
    "ground_accel": "m/s²",  # ẍ_g at the end of each slow step (the record the NS was driven with)
    "fast/slow_target": "m",  # the interface target the NS sent for this slow step (one per step)
    "fast/target": "m",  # interface target x_t after the rate transition, per fast sample
    "fast/command": "m",  # actuator command x_c (after compensation)
    "fast/command_raw": "the rig's own command unit (servo angle, set-point, …)",
    "fast/measured": "m",  # measured specimen displacement x_m (sensor)
    "fast/force": "N",  # measured restoring force of the specimen (load cell)
    "fast/true_force": "N",  # the specimen model's force (virtual site only)
    "fast/limit": "1 (actuator limit bit mask: 1 stroke, 2 velocity, 4 force; 0 none)",
    "fast/identifier/dissipated_energy": "J",
    "ns/interface_displacement": "m",
    "ns/interface_load": "N",
    "ns/time": "s",
    "update/applied": "1 (bool: the estimate entered the NS this step)",
    "update/converged": "1 (bool)",
    "update/covariance_ok": "1 (bool: the estimator's covariance is positive definite)",
}


def log_units(test) -> dict:
    """Units of every dataset a run of ``test`` (a :class:`~rths_ident.hybrid.loop.assembled.HybridTest`)
    logs: :data:`LOG_UNITS`, the response per DOF, the estimate per parameter."""
    units: dict = dict(LOG_UNITS)
    response = {name: "m" for name in test.response_names}
    for key, unit in (("displacement", "m"), ("velocity", "m/s"), ("acceleration", "m/s²")):
        units[f"ns/{key}"] = {name: unit for name in test.response_names} if response else unit
    names = tuple(test.param_names)
    param_units = dict(test.param_units)
    units["update/estimate"] = {n: _si(param_units.get(n, "SI")) for n in names} if names else "SI"
    units["update/relative_std"] = {n: "1" for n in names} if names else "1"
    return units


def _si(unit: str) -> str:
    return "1" if unit in ("-", "") else unit


def run_record_config(cfg, test, engine: str) -> dict:
    """What a run's record keeps as its configuration."""
    return {
        "scenario": cfg.SCENARIO,
        "engine": engine,
        "variant": cfg.variant,
        "updating": cfg.updating,
        "settings": dataclasses.asdict(cfg),
        "param_names": list(test.param_names),
        "param_units": dict(test.param_units),
        "params_true": dict(zip(test.param_names, map(float, test.true_values))),
        "params_initial": dict(zip(test.param_names, map(float, test.initial_values))),
        "response_names": list(test.response_names),
    }


def time_base(test) -> dict:
    """The record's time base: rates and how sample indices map to test time."""
    return {
        "slow_rate_hz": float(test.slow_rate),
        "fast_rate_hz": float(test.slow_rate) * test.samples_per_step,
        "samples_per_step": int(test.samples_per_step),
        "time": "steps/time[k] = t_k, the end of slow step k (t_k = (k+1)·Δt_n from the start)",
        "fast_time": "fast sample j of step k is at t_k − Δt_n + (j+1)/f_fast",
    }


def open_run_record(path, cfg, test, engine: str, test_file: str | None = None, **options) -> TestRecordWriter:
    """The record of one ``rths-ident run`` (configuration with the test file's text when
    given — ``rths-ident run RECORD.h5`` runs it again —, units, time base)."""
    config = run_record_config(cfg, test, engine)
    if test_file is not None:
        config["test_file"] = test_file
    return TestRecordWriter.open(Path(path), config, log_units(test), kind="run", time_base=time_base(test),
                                 **options)


class StepRecorder:
    """Feeds a record from a run: ``recorder(k, step_log)`` is the step-wise engine's
    ``on_step`` (then calls ``progress`` if given); :meth:`record_all` writes a fused
    run's stacked logs; :meth:`record_aborted` what a failed run leaves. Each step gets
    its test time ``time_slow[k]`` [s] and, when given, ``ground_accel[k]`` [m/s²]."""

    def __init__(self, writer: TestRecordWriter, time_slow, progress=None, ground_accel=None):
        self.writer = writer
        self.time_slow = np.asarray(time_slow, dtype=float)
        self.ground_accel = None if ground_accel is None else np.asarray(ground_accel, dtype=float)
        self.progress = progress
        self._followed = None  # the StepLogs a writer thread follows
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()
        self._failure: BaseException | None = None

    def follow(self, logs, interval_s: float = 0.25) -> None:
        """Write the steps of ``logs`` (a :class:`~rths_ident.hybrid.loop.step_logs.StepLogs`
        the engine fills) from a thread, every ``interval_s`` (module doc); the per-step
        call then only reports progress. :meth:`stop_following` writes the rest."""
        from rths_ident.hybrid.loop.realtime_host import lower_this_thread  # noqa: PLC0415

        self._followed = logs
        self._stop.clear()

        def write_rows():
            lower_this_thread()
            try:
                while not self._stop.wait(interval_s):
                    self._write_followed()
            except BaseException as error:  # noqa: BLE001 - reported by stop_following
                self._failure = error

        self._thread = threading.Thread(target=write_rows, name="test-record-writer", daemon=True)
        self._thread.start()

    def stop_following(self, raise_failure: bool = True) -> None:
        """Stop the writer thread and write the steps it has not written (idempotent);
        a failed write is raised (``raise_failure=False``: kept in ``writer.failure``
        only, for code that reports another error)."""
        if self._thread is not None:
            self._stop.set()
            self._thread.join()
            self._thread = None
        if self._followed is not None:
            followed, self._followed = self._followed, None
            if self._failure is None and self.writer.failure is None:
                try:
                    self._write_logs(followed)
                except Exception as error:  # noqa: BLE001 - raised below
                    self._failure = error
        failure, self._failure = self._failure, None
        if failure is not None and raise_failure:
            raise failure

    def _write_followed(self) -> None:
        self._write_logs(self._followed)

    def _write_logs(self, logs) -> None:
        first, n = self.writer.steps, logs.count
        if n > first:
            self.writer.extend({**self._inputs(slice(first, n)), **_slice(logs.columns, first, n)})

    def start(self, engine: str) -> None:
        how = ("the whole record in one compiled call; steps written after it" if engine == "fused"
               else "slow step by slow step, each appended as it completes")
        self.writer.event("start", f"{engine} engine: {how}", step=0, time=float(self.time_slow[0]) - self.dt)

    @property
    def dt(self) -> float:
        return float(self.time_slow[1] - self.time_slow[0]) if self.time_slow.size > 1 else 0.0

    def _inputs(self, steps) -> dict:
        """Time (and ground acceleration, when given) of slow step(s) ``steps``."""
        inputs = {"time": self.time_slow[steps]}
        if self.ground_accel is not None:
            inputs["ground_accel"] = self.ground_accel[steps]
        return inputs

    def __call__(self, k: int, step_log) -> None:
        if self._followed is None:
            self.writer.append({**self._inputs(k), **step_log})
        elif self._failure is not None:  # the writer thread's write failed: the loop stops here
            raise self._failure
        if self.progress is not None:
            self.progress(k, step_log)

    def record_all(self, logs: dict) -> None:
        """Append the steps of ``logs`` (stacked) not yet in the record."""
        if not logs:
            return
        first = self.writer.steps
        n = _n_steps(logs)
        if n <= first:
            return
        stacked = {**self._inputs(slice(first, n)), **_slice(logs, first, n)}
        self.writer.extend(stacked)

    def record_aborted(self, exc) -> None:
        """A :class:`~rths_ident.hybrid.loop.engine.LoopAborted` (or the operator's
        :class:`~rths_ident.operator_stop.OperatorStopped`): its completed
        steps, then the error (the stop) at the failing step. When the record itself
        could not be written (a full disk stopped the loop), the error only, if the
        writer can still write it."""
        self.stop_following(raise_failure=False)
        if self.writer.failure is None:
            self.record_all(exc.logs)
        k = int(exc.slow_index)
        t = float(self.time_slow[k]) if 0 <= k < self.time_slow.size else None
        trip = getattr(exc, "trip", None)
        if trip is not None:  # which interlock, its value and limit, where (hybrid.fast_side.interlocks)
            self.writer.event("interlock", trip.message(), step=k, time=t)
        self.writer.event("stop" if isinstance(exc, KeyboardInterrupt) else "error", str(exc), step=k, time=t)


def _n_steps(tree) -> int:
    """Length of the leading (slow-step) axis of the first array in ``tree``."""
    while isinstance(tree, dict):
        tree = next(iter(tree.values()))
    return int(np.asarray(tree).shape[0])


def _slice(tree, start: int, stop: int):
    if isinstance(tree, dict):
        return {key: _slice(value, start, stop) for key, value in tree.items()}
    return np.asarray(tree)[start:stop]
