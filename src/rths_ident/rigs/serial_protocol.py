"""The rig line protocol: what the host and an Arduino-class rig say over a serial line.

Seed 002 gives no format (digest 002 ⚠ 11); this is ours, small enough for an Arduino
Uno (``firmware/rths_rig/rths_rig.ino`` speaks it) and documented byte by byte in
``docs/rigs.md`` (a test checks the table against this module).

One message per line: printable ASCII, fields separated by one space, then ``*`` and
two upper-case hex digits — the XOR of every byte before the ``*`` (NMEA-style) — then
``\\n`` (a ``\\r`` before it is ignored). At most :data:`MAX_LINE` bytes including the
newline. 115200 baud, 8N1 by default.

=========  ======================================  ==========================================
sender     line                                    meaning
=========  ======================================  ==========================================
host       ``H <version>``                         hello: the protocol version the host speaks
device     ``H <version> <device> <adc_bits> <settle_ms>``  hello reply
host       ``M <seq> <angle_mdeg>``                move the servo to angle/1000 degrees, wait
                                                   until it settles, read the force channel
device     ``R <seq> <adc> <wait_ms>``             the ADC count read after ``wait_ms`` ms
host       ``S <seq>``                             hold: stop at the current angle
device     ``K <seq>``                             hold acknowledged
device     ``B <version> <device>``                boot banner (power-up or reset)
device     ``E <seq> <code> <text>``               error (codes: :data:`ERROR_CODES`)
=========  ======================================  ==========================================

``seq`` counts commands modulo 65536 (an Arduino ``unsigned int``); a reply carries the
sequence number of its command, so a lost or stale line is detected. Angles travel as
integer millidegrees (0 … 180000) so no float parsing is needed on the board.
"""

from __future__ import annotations

import dataclasses

from rths_ident.rigs.errors import RigProtocolError

__all__ = [
    "PROTOCOL_VERSION",
    "BAUD_RATE",
    "MAX_LINE",
    "SEQUENCE_MODULUS",
    "ANGLE_MDEG_MAX",
    "ERROR_CODES",
    "LINES",
    "KINDS",
    "Message",
    "checksum",
    "encode",
    "decode",
    "hello",
    "move",
    "hold",
]

PROTOCOL_VERSION = 1
BAUD_RATE = 115200
MAX_LINE = 64
SEQUENCE_MODULUS = 65536
ANGLE_MDEG_MAX = 180000
#: error code -> meaning (the ``E`` line's ``code``)
ERROR_CODES = {
    1: "bad checksum",
    2: "unknown command or wrong number of fields",
    3: "angle out of range",
    4: "unsupported protocol version",
    5: "line too long",
}
#: (sender, kind, field names) of every line — the table in the module doc and docs/rigs.md
LINES = (
    ("host", "H", ("version",)),
    ("device", "H", ("version", "device", "adc_bits", "settle_ms")),
    ("host", "M", ("seq", "angle_mdeg")),
    ("device", "R", ("seq", "adc", "wait_ms")),
    ("host", "S", ("seq",)),
    ("device", "K", ("seq",)),
    ("device", "B", ("version", "device")),
    ("device", "E", ("seq", "code", "text")),
)
KINDS = frozenset(kind for _, kind, _ in LINES)


@dataclasses.dataclass(frozen=True)
class Message:
    """One decoded line: its kind (first field) and the remaining fields (strings)."""

    kind: str
    fields: tuple

    def integer(self, index: int, name: str) -> int:
        """Field ``index`` as a non-negative integer (RigProtocolError naming ``name``)."""
        try:
            text = self.fields[index]
        except IndexError:
            raise RigProtocolError(f"{self.kind!r} line lacks field {name!r}: {self}") from None
        if not text.isdigit():
            raise RigProtocolError(f"{self.kind!r} line: field {name!r} = {text!r} is not a non-negative integer")
        return int(text)

    def __str__(self) -> str:
        return " ".join((self.kind,) + self.fields)


def checksum(payload: bytes) -> int:
    """XOR of the bytes of ``payload`` (everything before ``*``)."""
    value = 0
    for byte in payload:
        value ^= byte
    return value


def encode(kind: str, *fields) -> bytes:
    """``kind f1 f2 …*HH\\n`` as bytes (fields are converted with ``str``)."""
    payload = " ".join([kind] + [str(f) for f in fields]).encode("ascii")
    line = payload + b"*%02X\n" % checksum(payload)
    if len(line) > MAX_LINE:
        raise ValueError(f"line of {len(line)} bytes exceeds the protocol's {MAX_LINE}")
    return line


def _shown(raw: bytes) -> str:
    return repr(raw[:40]) + ("…" if len(raw) > 40 else "")


def decode(raw: bytes) -> Message:
    """Parse one received line (with or without its ``\\n``); RigProtocolError when it is
    not a well-formed line of this protocol (the bytes are shown in the message)."""
    line = raw.rstrip(b"\n").rstrip(b"\r")
    if len(line) + 1 > MAX_LINE:
        raise RigProtocolError(f"line of {len(line) + 1} bytes exceeds {MAX_LINE}: {_shown(raw)}")
    if any(b < 0x20 or b > 0x7E for b in line):
        raise RigProtocolError(f"non-printable bytes in line {_shown(raw)} (garbage on the line or wrong baud rate)")
    payload, star, check = line.rpartition(b"*")
    if not star or len(check) != 2:
        raise RigProtocolError(f"line without '*HH' checksum: {_shown(raw)}")
    try:
        expected = int(check, 16)
    except ValueError:
        raise RigProtocolError(f"checksum {check!r} is not two hex digits in {_shown(raw)}") from None
    if checksum(payload) != expected:
        raise RigProtocolError(f"checksum mismatch in {_shown(raw)}: computed {checksum(payload):02X}")
    parts = payload.decode("ascii").split(" ")
    if not parts[0] or parts[0] not in KINDS:
        raise RigProtocolError(f"unknown message kind {parts[0]!r} in {_shown(raw)}")
    return Message(parts[0], tuple(parts[1:]))


def hello(version: int = PROTOCOL_VERSION) -> bytes:
    """The host's ``H <version>`` line."""
    return encode("H", version)


def move(seq: int, angle_deg: float) -> bytes:
    """The host's ``M <seq> <angle_mdeg>`` line for a servo angle [deg] in [0, 180]."""
    mdeg = int(round(angle_deg * 1000.0))
    if not 0 <= mdeg <= ANGLE_MDEG_MAX:
        raise ValueError(f"servo angle {angle_deg!r}° outside [0, 180]")
    return encode("M", seq % SEQUENCE_MODULUS, mdeg)


def hold(seq: int) -> bytes:
    """The host's ``S <seq>`` line."""
    return encode("S", seq % SEQUENCE_MODULUS)
