"""An emulated seed 002 rig on a pseudo-terminal: an Arduino-class board speaking the line
protocol (:mod:`rths_ident.rigs.serial_protocol`) with a virtual specimen behind it.

What the emulated board does for ``M <seq> <angle_mdeg>`` (the reference firmware's loop,
seed 002 Fig. 4-3):

1. the servo pulse is set to the angle, quantised to the pulse-width resolution
   (1 µs of a 1000 µs / 180° servo = 0.18°);
2. the board waits for the servo to settle — seed 002 §3's settle-before-read wait:
   the SG90's travel time (0.1 s / 60°) plus ``settle_time``, multiplied by
   ``time_scale`` (1 = the real board's timing, 0 = no waiting, for fast tests);
3. it reads the current channel: the arm reaches u = r·sin(θ − θ_0) (r = 15 mm), the
   virtual specimen resists with r = M_e ü + C_e u̇ + K_e u (:class:`VirtualSpecimen`,
   seed 002 Table 5-4: 0.356 kg, 5.43 N·s/m, 1540 N/m), where u̇ and ü are backward
   differences of the imposed displacements at the *test's* Δt (the specimen lives in
   test time, whatever the wall-clock pace); the supply current follows |r| through
   eq. 4-1 (0.662 N per count, idle count 513 inside a 1.45 N dead band), plus Gaussian
   noise of ``noise_counts`` and rounding to the 10-bit ADC (0 … 1023);
4. it answers ``R <seq> <adc> <wait_ms>``.

The first move after power-up (or a reset) places the specimen quasi-statically: it
starts at rest there, so the initial displacement of a free-vibration test is not a
step in velocity.

Faults for tests (:meth:`RigEmulator.inject`, at the n-th move since start):
``"silence"`` (stop answering: a timeout), ``"garbage"`` (random bytes instead of the
reply), ``"reset"`` (reboot: banner, state lost), ``"disconnect"`` (the pseudo-terminal
goes away: the port disappears), ``"late"`` (the reply comes ``late_s`` seconds late,
after the host's timeout, and the board answers what follows only then) and ``"stuck"``
(the current sensor stuck at its rail from that move on: a broken wire pulls the ADC to
full scale, 1023 counts). :meth:`RigEmulator.unplug` pulls the cable at any moment
(mid-step included).
"""

from __future__ import annotations

import dataclasses
import math
import os
import select
import threading
import time
import tty

import numpy as np

from rths_ident.errors import ParameterError
from rths_ident.rigs import serial_protocol as proto
from rths_ident.rigs.calibration import ForceCalibration
from rths_ident.rigs.errors import RigProtocolError

__all__ = ["VirtualSpecimen", "RigEmulator", "FAULTS"]

FAULTS = ("silence", "garbage", "reset", "disconnect", "late", "stuck")
#: SG90 speed: 0.1 s per 60° (seed 002 §3)
SERVO_SECONDS_PER_DEGREE = 0.1 / 60.0


@dataclasses.dataclass(frozen=True)
class VirtualSpecimen:
    """r = M_e ü + C_e u̇ + K_e u [N] (seed 002 Table 5-4); test_dt [s]: the test's Δt."""

    mass: float = 0.356
    damping: float = 5.43
    stiffness: float = 1540.0
    test_dt: float = 0.01

    def __post_init__(self):
        for name in ("mass", "damping", "stiffness"):
            if not (np.isfinite(getattr(self, name)) and getattr(self, name) >= 0):
                raise ParameterError(f"VirtualSpecimen.{name} must be finite and ≥ 0; got {getattr(self, name)!r}")
        if not self.test_dt > 0:
            raise ParameterError(f"VirtualSpecimen.test_dt must be > 0 [s]; got {self.test_dt!r}")

    def force(self, u: float, previous: tuple) -> float:
        """Restoring force at u [m] after the imposed history ``previous`` = (u_{k−1}, u_{k−2})."""
        u1, u2 = previous
        velocity = (3.0 * u - 4.0 * u1 + u2) / (2.0 * self.test_dt)
        acceleration = (u - 2.0 * u1 + u2) / self.test_dt**2
        return self.mass * acceleration + self.damping * velocity + self.stiffness * u


class RigEmulator:
    """The emulated board (module doc); ``port`` is the pseudo-terminal path to open.

    Use as a context manager (starts the board thread, stops it on exit)."""

    def __init__(self, specimen: VirtualSpecimen = VirtualSpecimen(), *, arm_radius: float = 0.015,
                 neutral_angle: float = 90.0, force_calibration: ForceCalibration = ForceCalibration(),
                 dead_band_force: float = 1.45, noise_counts: float = 0.3, seed: int = 0,
                 settle_time: float = 0.040, time_scale: float = 0.0, pulse_resolution: float = 0.18,
                 device: str = "EMU-SG90-ACS712"):
        if not (time_scale >= 0 and settle_time >= 0 and noise_counts >= 0 and dead_band_force >= 0):
            raise ParameterError("time_scale, settle_time, noise_counts and dead_band_force must be ≥ 0")
        self.specimen, self.arm_radius, self.neutral_angle = specimen, float(arm_radius), float(neutral_angle)
        self.force_calibration, self.dead_band_force = force_calibration, float(dead_band_force)
        self.noise_counts, self.settle_time, self.time_scale = float(noise_counts), float(settle_time), float(time_scale)
        self.pulse_resolution, self.device = float(pulse_resolution), device
        self.rng = np.random.default_rng(seed)
        self.late_s = 1.0  # s: how late a "late" reply comes
        self._send_lock = threading.Lock()
        self.master, self.slave = os.openpty()
        tty.setraw(self.slave)  # no echo, no line editing: bytes pass unchanged
        self.port = os.ttyname(self.slave)
        self.moves = 0  # M commands received since start
        self.faults: dict[int, str] = {}
        self.forces: list[float] = []  # the true specimen force of every answered move [N]
        self._history = None
        self._angle = neutral_angle
        self._silent = False
        self._stuck = False
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="rig-emulator", daemon=True)

    def inject(self, fault: str, at_move: int) -> None:
        """Make the ``at_move``-th move command (1-based, counted since start) fail with ``fault``."""
        if fault not in FAULTS:
            raise ParameterError(f"fault must be one of {', '.join(FAULTS)}; got {fault!r}")
        if int(at_move) != at_move or at_move < 1:
            raise ParameterError(f"at_move must be an integer ≥ 1; got {at_move!r}")
        self.faults[int(at_move)] = fault

    def start(self) -> "RigEmulator":
        self._send(proto.encode("B", proto.PROTOCOL_VERSION, self.device))
        self._thread.start()
        return self

    def unplug(self) -> None:
        """The cable pulled, now: the port's other end closes at once (a command in
        progress gets no reply; the host's read fails), the board thread ends."""
        self._stop.set()
        with self._send_lock:
            master, self.master = self.master, -1
        if master >= 0:
            os.close(master)

    def stop(self) -> None:
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=2.0)
        for fd in (self.master, self.slave):
            try:
                os.close(fd)
            except OSError:
                pass
        self.master = self.slave = -1

    def __enter__(self) -> "RigEmulator":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    def _send(self, line: bytes) -> None:
        with self._send_lock:
            if self.master >= 0:
                os.write(self.master, line)

    def _run(self) -> None:
        buffer = b""
        while not self._stop.is_set() and self.master >= 0:
            try:
                ready, _, _ = select.select([self.master], [], [], 0.02)
                if not ready:
                    continue
                chunk = os.read(self.master, 256)
            except (OSError, ValueError):  # closed (unplugged)
                return
            buffer += chunk
            while b"\n" in buffer:
                line, buffer = buffer.split(b"\n", 1)
                if not self._handle(line):
                    return

    def _handle(self, line: bytes) -> bool:
        """Answer one line; False when the board is gone (disconnect). Answers as the
        reference firmware does (same error codes and texts)."""
        if len(line) + 1 > proto.MAX_LINE:
            self._send(proto.encode("E", 0, 5, "too long"))
            return True
        try:
            message = proto.decode(line)
        except RigProtocolError:
            self._send(proto.encode("E", 0, 1, "bad line"))
            return True
        if message.kind == "H":
            if message.fields != (str(proto.PROTOCOL_VERSION),):
                self._send(proto.encode("E", 0, 4, "version"))
            else:
                self._send(proto.encode("H", proto.PROTOCOL_VERSION, self.device,
                                        self.force_calibration.adc_bits, int(round(self.settle_time * 1000))))
            return True
        if message.kind == "S" and len(message.fields) == 1:
            if not self._silent:
                self._send(proto.encode("K", message.fields[0]))
            return True
        if message.kind != "M" or len(message.fields) != 2 or not all(f.isdigit() for f in message.fields):
            self._send(proto.encode("E", 0, 2, "bad command"))
            return True
        self.moves += 1
        fault = self.faults.get(self.moves)
        if fault == "disconnect":
            os.close(self.master)
            self.master = -1
            return False
        if fault == "silence":
            self._silent = True
        if fault == "stuck":
            self._stuck = True
        if fault == "garbage":
            self._send(bytes(self.rng.integers(0, 256, size=23, dtype=np.uint8)) + b"\n")
            return True
        if fault == "reset":
            self._history, self._angle = None, self.neutral_angle
            self._send(proto.encode("B", proto.PROTOCOL_VERSION, self.device))
            return True
        if self._silent:
            return True
        if fault == "late":
            time.sleep(self.late_s)
        seq, mdeg = int(message.fields[0]), int(message.fields[1])
        if mdeg > proto.ANGLE_MDEG_MAX:
            self._send(proto.encode("E", seq, 3, "angle"))
            return True
        self._send(self._move(seq, mdeg / 1000.0))
        return True

    def _move(self, seq: int, angle: float) -> bytes:
        angle = round(angle / self.pulse_resolution) * self.pulse_resolution
        wait = self.time_scale * (abs(angle - self._angle) * SERVO_SECONDS_PER_DEGREE + self.settle_time)
        if wait > 0:
            time.sleep(wait)
        self._angle = angle
        u = self.arm_radius * math.sin(math.radians(angle - self.neutral_angle))
        if self._history is None:
            self._history = (u, u)
        force = self.specimen.force(u, self._history)
        self._history = (u, self._history[0])
        self.forces.append(force)
        if abs(force) < self.dead_band_force:
            expected = float(self.force_calibration.idle_counts)
        else:
            expected = float(self.force_calibration.counts(abs(force)))
        full_scale = 2**self.force_calibration.adc_bits - 1
        counts = int(np.clip(np.round(expected + self.noise_counts * self.rng.standard_normal()), 0, full_scale))
        if self._stuck:
            counts = full_scale
        return proto.encode("R", seq, counts, int(round(wait * 1000)))
