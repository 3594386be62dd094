"""The serial backend: a seed 002 style rig (one servo, one force channel) over pyserial.

:class:`SerialRigDriver` is a :class:`~rths_ident.rigs.hardware_site.RigDriver` speaking
the line protocol of :mod:`rths_ident.rigs.serial_protocol` (the reference firmware
``firmware/rths_rig/rths_rig.ino``, or the emulator of :mod:`rths_ident.rigs.emulator`).
:func:`open_serial_site` wraps it with seed 002's calibration and limits into a
:class:`~rths_ident.rigs.hardware_site.HardwareSite`.

Opening the port resets an Arduino Uno (DTR); the driver sends its hello until the
board answers or ``boot_timeout`` passes, ignoring the boot banner and the bytes a
booting board may emit. After the hello, every command expects exactly its reply:

* no complete line within ``timeout`` → :class:`~rths_ident.rigs.errors.RigTimeout`;
* a line that is not the protocol's (garbage, bad checksum, a wrong sequence number) →
  :class:`~rths_ident.rigs.errors.RigProtocolError` showing the bytes;
* a boot banner → :class:`~rths_ident.rigs.errors.RigResetError` (the board rebooted:
  brown-out, watchdog, someone opened the port elsewhere);
* the port failing (cable pulled, device node gone) →
  :class:`~rths_ident.rigs.errors.RigDisconnected`.

A port that cannot be opened (it does not exist, is not a serial port, is busy or not
permitted) is :class:`~rths_ident.rigs.errors.RigUnavailable`: nothing moved, and the
message says what to check and lists the serial ports found.

Each message names the port and the command that was waiting.
"""

from __future__ import annotations

import time

import numpy as np

from rths_ident.rigs import serial_protocol as proto
from rths_ident.rigs.errors import (
    RigDeviceError,
    RigDisconnected,
    RigProtocolError,
    RigResetError,
    RigTimeout,
    RigUnavailable,
)
from rths_ident.rigs.hardware_site import HardwareSite, RawReading, RigLimits, ServoRigCalibration

__all__ = ["SerialRigDriver", "open_serial_site"]


def _why_not(port: str, exc: BaseException) -> str:
    """What a failed open means and what to check (one sentence), the ports that exist."""
    import errno  # noqa: PLC0415
    import os  # noqa: PLC0415

    code = getattr(exc, "errno", None)
    text = str(exc)
    if code == errno.ENOENT or not os.path.exists(port):
        why = "the port does not exist (check the board's cable and the port's name)"
    elif code in (errno.EACCES, errno.EPERM):
        why = "permission denied (on Linux: add yourself to the 'dialout' group, then log in again)"
    elif code == errno.EBUSY:
        why = "the port is busy (close the other program using it: a serial monitor, another test)"
    elif code == errno.EISDIR or os.path.isdir(port):
        why = "it is a folder, not a serial port"
    elif code == errno.ENOTTY or "Inappropriate ioctl" in text:
        why = "it is not a serial port (not a terminal device): is it the board's port?"
    else:
        why = text
    return f"{why}; serial ports here: {_ports() or 'none found'}"


def _ports() -> str:
    """The serial ports pyserial finds on this machine (``/dev/ttyACM0, /dev/ttyUSB0``)."""
    try:
        from serial.tools import list_ports  # noqa: PLC0415

        return ", ".join(sorted(p.device for p in list_ports.comports()))
    except Exception:  # noqa: BLE001 - a hint only
        return ""


def _termios_error() -> tuple:
    try:
        import termios  # noqa: PLC0415
    except ImportError:  # not POSIX
        return ()
    return (termios.error,)


class SerialRigDriver:
    """One servo + one force channel over a serial port (module doc).

    port : device path (``/dev/ttyACM0``, ``COM3``, a pseudo-terminal).
    baudrate : default :data:`~rths_ident.rigs.serial_protocol.BAUD_RATE`.
    timeout : s to wait for each reply (must cover the board's move + settle + read).
    boot_timeout : s to wait for the hello reply after opening.
    """

    def __init__(self, port: str, *, baudrate: int = proto.BAUD_RATE, timeout: float = 1.0,
                 boot_timeout: float = 3.0):
        import serial  # noqa: PLC0415  (pyserial: only needed for a serial rig)

        # pyserial raises SerialException, OSError or (tcflush on a vanished POSIX tty) termios.error
        self._serial_exception = (serial.SerialException,) + _termios_error()
        self.port, self.timeout = port, float(timeout)
        self.where = f"serial rig on {port}"
        try:
            self.serial = serial.Serial(port, baudrate, timeout=timeout, write_timeout=timeout)
        except (serial.SerialException, OSError) as exc:
            raise RigUnavailable(f"cannot open serial port {port} at {baudrate} baud: {_why_not(port, exc)}") from exc
        self.seq = 0
        try:
            self.info = self._handshake(boot_timeout)
        except Exception:
            self.serial.close()
            raise

    def _write(self, line: bytes, what: str) -> None:
        try:
            self.serial.write(line)
            self.serial.flush()
        except (*self._serial_exception, OSError) as exc:
            raise RigDisconnected(f"{self.where}: port failed while sending {what}: {exc}") from exc

    def _readline(self, what: str) -> bytes:
        try:
            raw = self.serial.readline(proto.MAX_LINE)
        except (*self._serial_exception, OSError) as exc:
            raise RigDisconnected(f"{self.where}: port failed while waiting for the reply to {what}: {exc}") from exc
        if not raw.endswith(b"\n"):
            if len(raw) >= proto.MAX_LINE:
                raise RigProtocolError(f"{self.where}: reply to {what} longer than {proto.MAX_LINE} bytes: {raw[:40]!r}…")
            partial = f" (received only {raw!r})" if raw else ""
            raise RigTimeout(f"{self.where}: no reply to {what} within {self.timeout:g} s{partial}")
        return raw

    def _handshake(self, boot_timeout: float) -> dict:
        """Send hello, read until its reply; resend only when a read times out (a board
        booting after the port opened loses what it was sent). Banner and noise are skipped."""
        deadline = time.monotonic() + boot_timeout
        seen = []
        self._write(proto.hello(), "hello")
        while time.monotonic() < deadline:
            try:
                raw = self._readline("hello")
            except RigTimeout:
                self._write(proto.hello(), "hello")
                continue
            try:
                message = proto.decode(raw)
            except RigProtocolError:
                seen.append(raw)  # a booting board's noise
                continue
            if message.kind == "B":
                continue
            if message.kind == "E" and message.integer(1, "code") == 4:
                raise RigProtocolError(f"{self.where}: the device does not speak protocol version "
                                       f"{proto.PROTOCOL_VERSION} ({message})")
            if message.kind == "H":
                version = message.integer(0, "version")
                if version != proto.PROTOCOL_VERSION:
                    raise RigProtocolError(f"{self.where}: device speaks protocol version {version}, host "
                                           f"{proto.PROTOCOL_VERSION}")
                return {"version": version, "device": message.fields[1], "adc_bits": message.integer(2, "adc_bits"),
                        "settle_ms": message.integer(3, "settle_ms")}
            seen.append(raw)
        shown = f"; received {seen[-1][:40]!r}" if seen else "; received nothing"
        raise RigTimeout(f"{self.where}: no hello reply within {boot_timeout:g} s{shown} "
                         "(is the rths_rig firmware loaded, the baud rate right?)")

    def _exchange(self, line: bytes, what: str, reply_kind: str, seq: int, skip_stale: bool = False) -> proto.Message:
        """Send ``line``, return its reply. ``skip_stale``: replies to earlier moves (a
        board that answered late, after the host gave up) are read past."""
        self._write(line, what)
        message = None
        while message is None or message.kind == "H" or (skip_stale and message.kind == "R"
                                                          and message.integer(0, "seq") != seq % proto.SEQUENCE_MODULUS):
            raw = self._readline(what)
            try:
                message = proto.decode(raw)
            except RigProtocolError as exc:
                raise RigProtocolError(f"{self.where}: bad reply to {what}: {exc}") from exc
        if message.kind == "B":
            raise RigResetError(f"{self.where}: the device reset during the test (boot banner {str(message)!r} "
                                f"in reply to {what})")
        if message.kind == "E":
            code = message.integer(1, "code")
            meaning = proto.ERROR_CODES.get(code, "unknown error code")
            raise RigDeviceError(f"{self.where}: device error {code} ({meaning}) in reply to {what}: {message}")
        if message.kind != reply_kind:
            raise RigProtocolError(f"{self.where}: expected a {reply_kind!r} line in reply to {what}, got {message}")
        got = message.integer(0, "seq")
        if got != seq % proto.SEQUENCE_MODULUS:
            raise RigProtocolError(f"{self.where}: reply to {what} carries sequence {got}, expected "
                                   f"{seq % proto.SEQUENCE_MODULUS} (a stale or lost line)")
        return message

    def command(self, command) -> RawReading:
        angle = float(np.asarray(command, dtype=float).reshape(-1)[0])
        self.seq += 1
        what = f"move #{self.seq} to {angle:.3f}°"
        message = self._exchange(proto.move(self.seq, angle), what, "R", self.seq)
        adc = message.integer(1, "adc")
        return RawReading(force_raw=np.array([float(adc)]), displacement_raw=None,
                          device_time=message.integer(2, "wait_ms") / 1000.0)

    def hold(self) -> None:
        """Discard any stale input (a hold follows faults), then ``S``/``K``; a late reply
        to an earlier move arriving meanwhile is read past."""
        try:
            self.serial.reset_input_buffer()
        except (*self._serial_exception, OSError) as exc:
            raise RigDisconnected(f"{self.where}: port failed before hold: {exc}") from exc
        self.seq += 1
        self._exchange(proto.hold(self.seq), f"hold #{self.seq}", "K", self.seq, skip_stale=True)

    def close(self) -> None:
        try:
            self.serial.close()
        except (*self._serial_exception, OSError):
            pass


def open_serial_site(port: str, dt: float, *, calibration: ServoRigCalibration = ServoRigCalibration(),
                     limits: RigLimits = RigLimits(), mode: str = "pseudo-dynamic", timeout: float = 1.0,
                     baudrate: int = proto.BAUD_RATE, boot_timeout: float = 3.0, **site_options) -> HardwareSite:
    """A :class:`HardwareSite` over :class:`SerialRigDriver` with seed 002's calibration and limits."""
    driver = SerialRigDriver(port, baudrate=baudrate, timeout=timeout, boot_timeout=boot_timeout)
    try:
        return HardwareSite(driver, calibration, dt, limits=limits, mode=mode, **site_options)
    except Exception:
        driver.close()
        raise
