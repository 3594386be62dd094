"""The site a lab implements for its own hardware.

A :class:`HardwareSite` is a :class:`~rths_ident.protocols.Site` (the step-wise engine
runs against it) built from two objects the lab provides:

``RigDriver`` — the hardware, in its own units:
    ``command(command (n,)) -> RawReading`` moves the actuator(s) to ``command`` (servo
    angle, valve set-point, …), waits until the rig is ready to be read (seed 002's
    settle-before-read wait) and returns the raw sensor values; ``hold()`` stops where it
    is; ``close()`` releases the port; ``where`` says where the hardware is (for errors).
``RigCalibration`` — engineering units:
    ``to_command(displacement [m]) -> command``, ``to_displacement(command, reading) -> [m]``
    (the rig's measured or, when it measures none, kinematically reached displacement)
    and ``to_force(reading, displacement) -> [N]`` (the restoring force; the displacement
    lets a sign policy use it).

The site adds what every rig needs, once:

* **interlocks** (:class:`~rths_ident.hybrid.fast_side.interlocks.Interlocks`, optional): the
  test's interlocks on what the rig reads each step — command (the target, m) and
  measured displacement stroke and velocity, force, tracking error — the first that trips
  stops the rig safely and raises :class:`~rths_ident.hybrid.fast_side.interlocks.InterlockTripped`
  (which, its value and limit, the step and the time);
* **limits** (:class:`RigLimits`): stroke |target| ≤ stroke before anything moves;
  velocity |Δtarget|/Δt ≤ v_max in real-time mode (in pseudo-dynamic mode the rig moves at
  its own pace); |force| ≤ force limit after each reading;
* a **safe stop** (:meth:`HardwareSite.safe_stop`) on any limit or device fault: hold, then
  ramp to zero in increments of ``ramp_increment`` (a move that gets a bad or no reply is
  tried once more after a hold, which resynchronises the line); its outcome is part of
  the error message (and says so when the device could not be reached);
* **modes**: ``"pseudo-dynamic"`` (each step takes as long as the rig needs — seed 002's
  tests ran ≈ 14× slower than real time) and ``"real-time"`` (each step is paced to Δt of
  wall-clock time; a step that overruns is a missed deadline, more than
  ``max_missed_deadlines`` abort the test);
* a **record** of every step the rig completed (:meth:`HardwareSite.record`) — kept
  when a step fails, including the reading that tripped a force limit — and the events
  (safe stops, errors) in :attr:`HardwareSite.events`.

Units SI (m, N, s).
"""

from __future__ import annotations

import dataclasses
import math
import time
from typing import NamedTuple, Protocol, runtime_checkable

import numpy as np

from rths_ident.errors import ParameterError
from rths_ident.hybrid.fast_side.interlocks import InterlockMonitor, Interlocks, InterlockTripped
from rths_ident.protocols import SiteReading
from rths_ident.rigs.calibration import ForceCalibration, ServoKinematics
from rths_ident.rigs.errors import DeadlineMissed, RigDisconnected, RigError, RigLimitError

__all__ = ["RawReading", "RigDriver", "RigCalibration", "RigLimits", "ServoRigCalibration", "HardwareSite", "MODES"]

MODES = ("pseudo-dynamic", "real-time")


class RawReading(NamedTuple):
    """What a driver reads for one command, in the rig's own units."""

    force_raw: np.ndarray  # (n,) raw force channel (ADC counts, volts, …)
    displacement_raw: np.ndarray | None  # (n,) raw displacement channel; None when the rig measures none
    device_time: float  # s the device spent on the command (move, settle, read)


@runtime_checkable
class RigDriver(Protocol):
    """The lab's hardware (module doc)."""

    where: str

    def command(self, command: np.ndarray) -> RawReading: ...

    def hold(self) -> None: ...

    def close(self) -> None: ...


@runtime_checkable
class RigCalibration(Protocol):
    """Engineering units ↔ the rig's units (module doc)."""

    def to_command(self, displacement: np.ndarray) -> np.ndarray: ...

    def to_displacement(self, command: np.ndarray, reading: RawReading) -> np.ndarray: ...

    def to_force(self, reading: RawReading, displacement: np.ndarray) -> np.ndarray: ...


@dataclasses.dataclass(frozen=True)
class RigLimits:
    """stroke [m] (|u| ≤ stroke), force [N] (|F| ≤ force), velocity [m/s] (real-time mode)."""

    stroke: float = 0.010
    force: float = 16.67
    velocity: float = math.inf

    def __post_init__(self):
        for name in ("stroke", "force", "velocity"):
            value = getattr(self, name)
            if not value > 0:
                raise ParameterError(f"RigLimits.{name} must be > 0; got {value!r}")


@dataclasses.dataclass(frozen=True)
class ServoRigCalibration:
    """Seed 002's rig: servo angle from displacement; no displacement sensor (the reached
    displacement is the arm's kinematics at the commanded angle); force from the ADC
    count of the supply current (:mod:`rths_ident.rigs.calibration`)."""

    kinematics: ServoKinematics = ServoKinematics()
    force_calibration: ForceCalibration = ForceCalibration()

    def to_command(self, displacement):
        return self.kinematics.angle(displacement)

    def to_displacement(self, command, reading):
        return self.kinematics.displacement(command)

    def to_force(self, reading, displacement):
        return self.force_calibration.force(reading.force_raw, displacement)


class _Retried(Exception):
    """A safe-stop move that needed a second try; ``error`` is why it failed again (None:
    the second try worked)."""

    def __init__(self, error: str | None):
        super().__init__(error or "")
        self.error = error


def _mm(x) -> str:
    return np.array2string(np.asarray(x) * 1e3, precision=3, separator=", ") + " mm"


class HardwareSite:
    """A rig behind the site protocol (module doc).

    driver : the lab's :class:`RigDriver`; calibration : its :class:`RigCalibration`.
    dt : the test's time step Δt [s] (real-time pacing and the velocity limit).
    limits : :class:`RigLimits`; mode : ``"pseudo-dynamic"`` or ``"real-time"``.
    interlocks : the test's :class:`~rths_ident.hybrid.fast_side.interlocks.Interlocks` on the
        rig's readings (None: the limits only).
    n_interface : number of interface DOFs the driver serves.
    ramp_increment : largest move [m] of the safe stop's ramp to zero.
    max_missed_deadlines : real-time mode: missed deadlines tolerated before aborting.
    """

    def __init__(self, driver: RigDriver, calibration: RigCalibration, dt: float, *,
                 limits: RigLimits = RigLimits(), mode: str = "pseudo-dynamic", n_interface: int = 1,
                 ramp_increment: float = 0.5e-3, max_missed_deadlines: int = 0,
                 interlocks: Interlocks | None = None):
        if mode not in MODES:
            raise ParameterError(f"mode must be one of {', '.join(MODES)}; got {mode!r}")
        if not (np.isfinite(dt) and dt > 0):
            raise ParameterError(f"dt must be a positive time step [s]; got {dt!r}")
        if not ramp_increment > 0:
            raise ParameterError(f"ramp_increment must be > 0 [m]; got {ramp_increment!r}")
        if int(n_interface) != n_interface or n_interface < 1:
            raise ParameterError(f"n_interface must be an integer ≥ 1; got {n_interface!r}")
        self.driver, self.calibration, self.limits = driver, calibration, limits
        self.dt, self.mode, self.n_interface = float(dt), mode, int(n_interface)
        self.ramp_increment, self.max_missed_deadlines = float(ramp_increment), int(max_missed_deadlines)
        self.events: list[str] = []
        self._rows: list[dict] = []
        self._last_target = np.zeros(self.n_interface)
        self._stopped = False
        self._stop_summary: str | None = None
        self.at_rest = True  # False once a safe stop could not finish (secure the rig by hand)
        self._closed = False
        self._clock0 = None
        self.missed_deadlines = 0
        self.monitor = None if interlocks is None else InterlockMonitor(interlocks, self.dt)

    @property
    def where(self) -> str:
        return self.driver.where

    @property
    def steps_done(self) -> int:
        return len(self._rows)

    def record(self) -> dict:
        """Every completed step as NumPy arrays (leading axis: step)."""
        if not self._rows:
            return {}
        return {key: np.stack([np.asarray(row[key]) for row in self._rows]) for key in self._rows[0]}

    def _fail(self, error: type, message: str):
        summary = self.safe_stop()
        context = f"step {self.steps_done}" if self.where in message else f"{self.where}, step {self.steps_done}"
        full = f"{message} ({context}); {summary}"
        self.events.append(full)
        return error(full)

    def step(self, target) -> SiteReading:
        if self._stopped or self._closed:
            raise RigError(f"{self.where}: the site was stopped ({self.events[-1] if self.events else 'closed'}); "
                           "open a new one for a new test")
        x = np.asarray(target, dtype=float).reshape(-1)
        if x.shape != (self.n_interface,):
            raise ParameterError(f"target must have {self.n_interface} value(s) [m]; got shape {np.shape(target)}")
        if not np.all(np.isfinite(x)):
            raise self._fail(RigLimitError, f"non-finite target {x!r}")
        over = np.flatnonzero(np.abs(x) > self.limits.stroke)
        if over.size:
            i = int(over[0])
            raise self._fail(RigLimitError, f"stroke limit: target {x[i] * 1e3:.3f} mm at interface DOF {i} "
                             f"exceeds ±{self.limits.stroke * 1e3:g} mm")
        if self.mode == "real-time":
            speed = np.abs(x - self._last_target) / self.dt
            fast = np.flatnonzero(speed > self.limits.velocity)
            if fast.size:
                i = int(fast[0])
                raise self._fail(RigLimitError, f"velocity limit: {speed[i]:.4g} m/s at interface DOF {i} exceeds "
                                 f"{self.limits.velocity:g} m/s")
        if self._clock0 is None:
            self._clock0 = time.perf_counter()
        command = np.asarray(self.calibration.to_command(x), dtype=float).reshape(self.n_interface)
        started = time.perf_counter()
        try:
            reading = self.driver.command(command)
        except RigError as exc:
            raise self._fail(type(exc), str(exc)) from exc
        wall = time.perf_counter() - started
        self._last_target = x
        force = np.asarray(self.calibration.to_force(reading, x), dtype=float).reshape(self.n_interface)
        displacement = np.asarray(self.calibration.to_displacement(command, reading),
                                  dtype=float).reshape(self.n_interface)
        row = {"target": x, "command": command, "force_raw": np.asarray(reading.force_raw, dtype=float),
               "displacement": displacement, "force": force, "device_time": np.float64(reading.device_time),
               "wall_time": np.float64(wall), "missed_deadline": np.bool_(False)}
        self._rows.append(row)
        if self.monitor is not None:
            trip = self.monitor.check_site_log({"target": x, "command": x, "measured": displacement, "force": force},
                                               self.steps_done - 1)
            if trip is not None:
                summary = self.safe_stop()
                error = InterlockTripped(trip, f"{self.where}; {summary}")
                self.events.append(str(error))
                raise error
        if np.any(np.abs(force) > self.limits.force):
            i = int(np.argmax(np.abs(force)))
            raise self._fail(RigLimitError, f"force limit: measured {force[i]:.3f} N at interface DOF {i} exceeds "
                             f"±{self.limits.force:g} N at target {_mm(x)}")
        if self.mode == "real-time":
            self._pace(row)
        return SiteReading(displacement=displacement, force=force, log=dict(row))

    def _pace(self, row: dict) -> None:
        deadline = self._clock0 + self.steps_done * self.dt
        now = time.perf_counter()
        if now > deadline:
            row["missed_deadline"] = np.bool_(True)
            self.missed_deadlines += 1
            if self.missed_deadlines > self.max_missed_deadlines:
                raise self._fail(DeadlineMissed, f"real-time: step overran Δt = {self.dt:g} s by "
                                 f"{(now - deadline) * 1e3:.1f} ms ({self.missed_deadlines} missed, "
                                 f"{self.max_missed_deadlines} allowed); run pseudo-dynamic or use a larger Δt")
        else:
            time.sleep(deadline - now)

    def safe_stop(self, last_target=None, dt=None, policy=None) -> str:
        """Hold, then ramp to zero in moves of ``ramp_increment``; returns what happened
        (also in :attr:`events`; :attr:`at_rest` says whether it could). Done once: a
        second call returns the first one's sentence. The arguments of the loop's safe
        stop (:func:`~rths_ident.hybrid.loop.safe_stop.bring_to_rest`) are not needed: the
        rig starts from the last target it reached, at its own pace."""
        if self._stopped:
            return self._stop_summary or "safe stop already done"
        self._stopped = True
        self._stop_summary = summary = self._hold_and_ramp()
        self.events.append(summary)
        return summary

    def _hold_and_ramp(self) -> str:
        start = self._last_target.copy()
        # any failure here is reported, never raised: the error that called for the stop must survive
        try:
            self.driver.hold()
        except Exception as exc:  # noqa: BLE001
            self.at_rest = False
            return f"safe stop FAILED to hold ({exc}): secure the rig by hand"
        moves = int(math.ceil(np.max(np.abs(start), initial=0.0) / self.ramp_increment))
        repeated = 0
        for j in range(1, moves + 1):
            u = start * (1.0 - j / moves)
            command = np.asarray(self.calibration.to_command(u), dtype=float).reshape(self.n_interface)
            try:
                self._move_or_retry(command)
            except RigDisconnected as exc:
                self.at_rest = False
                return (f"safe stop: held at {_mm(start)}, ramp to zero FAILED at {_mm(u)} ({exc}): "
                        "secure the rig by hand")
            except _Retried as retried:
                repeated += 1
                if retried.error is not None:
                    self.at_rest = False
                    return (f"safe stop: held at {_mm(start)}, ramp to zero FAILED at {_mm(u)} ({retried.error}): "
                            "secure the rig by hand")
            self._last_target = u
        again = f" ({repeated} move(s) repeated after a bad reply)" if repeated else ""
        return f"safe stop: held at {_mm(start)}, ramped to zero in {moves} move(s){again}"

    def _move_or_retry(self, command) -> None:
        """One move of the safe stop's ramp; after a bad or missing reply (not a lost
        port), once more after a hold that resynchronises the line: raises
        :class:`_Retried` saying whether that worked."""
        try:
            self.driver.command(command)
            return
        except RigDisconnected:
            raise
        except Exception as first:  # noqa: BLE001 - any reply the protocol does not allow
            try:
                self.driver.hold()
                self.driver.command(command)
            except Exception as exc:  # noqa: BLE001
                raise _Retried(f"{first}; again: {exc}") from exc
            raise _Retried(None) from first

    def close(self) -> None:
        """End of test: hold and ramp to zero (if not done), then release the driver."""
        if self._closed:
            return
        try:
            if not self._stopped:
                self.safe_stop()
        finally:
            self._closed = True
            self.driver.close()
