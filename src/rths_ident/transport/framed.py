"""The framed protocol of rths_ident (codec only; see ``framed_channel`` for sockets).

Every message is a 14-byte header followed by a payload, all in network byte order
(big-endian). The byte table, with an example, is in ``docs/transport.md``; a test
checks that the page and :data:`HEADER_LAYOUT` / :class:`MessageType` agree.

=========  ======  ===============  ==========================================
offset     size    field            value
=========  ======  ===============  ==========================================
0          4       magic            ``b"RTHS"``
4          1       version          uint8, :data:`VERSION` (1)
5          1       message type     uint8, :class:`MessageType`
6          4       sequence number  uint32, 0, 1, 2, … per sender, every type
10         4       payload length   uint32, bytes after the header
=========  ======  ===============  ==========================================

Payloads by type: HELLO — a UTF-8 JSON object (roles, interface sizes); TARGET,
FEEDBACK, PARAMETERS — n ≥ 0 float64 big-endian; HEARTBEAT, SHUTDOWN — empty; ERROR —
UTF-8 text.
"""

from __future__ import annotations

import enum
import functools
import json
import math
import struct
from typing import Any, NamedTuple

import numpy as np

from rths_ident.transport.errors import ProtocolError
from rths_ident.transport.vectors import require_finite

#: The four bytes every frame starts with.
MAGIC = b"RTHS"
#: The protocol version this module writes and reads.
VERSION = 1
#: Largest payload accepted by default [bytes] (16 MiB: two million float64).
DEFAULT_MAX_PAYLOAD_BYTES = 16 * 1024 * 1024
#: Sequence numbers are uint32 and wrap from 2**32 - 1 to 0.
SEQUENCE_MODULUS = 2**32

#: (field, offset, size, struct code) of the header, in order.
HEADER_LAYOUT = (
    ("magic", 0, 4, "4s"),
    ("version", 4, 1, "B"),
    ("message type", 5, 1, "B"),
    ("sequence number", 6, 4, "I"),
    ("payload length", 10, 4, "I"),
)
_HEADER = struct.Struct("!" + "".join(code for *_, code in HEADER_LAYOUT))
#: Header size [bytes].
HEADER_SIZE = _HEADER.size

_FLOAT = np.dtype(">f8")


class MessageType(enum.IntEnum):
    """Message types of the framed protocol (the uint8 at offset 5)."""

    HELLO = 1        #: UTF-8 JSON object: roles, interface sizes
    TARGET = 2       #: float64 vector: interface target (slow side -> fast side)
    FEEDBACK = 3     #: float64 vector: measured response (fast side -> slow side)
    PARAMETERS = 4   #: float64 vector: identified parameters θ̂ for model updating
    HEARTBEAT = 5    #: empty
    SHUTDOWN = 6     #: empty: the sender stops cleanly
    ERROR = 7        #: UTF-8 text: what went wrong


VECTOR_TYPES = frozenset({MessageType.TARGET, MessageType.FEEDBACK, MessageType.PARAMETERS})
_TYPES = {t.value: t for t in MessageType}
#: vectors of at most this many float64 are packed and unpacked by ``struct`` (a slow
#: step's message: no NumPy call per message), longer ones by NumPy; the bytes are the same
SMALL_VECTOR = 256


@functools.lru_cache(maxsize=64)
def _vector_struct(count: int) -> struct.Struct:
    return struct.Struct(f"!{count}d")


@functools.lru_cache(maxsize=64)
def _vector_message_struct(count: int) -> struct.Struct:
    return struct.Struct(_HEADER.format + f"{count}d")
EMPTY_TYPES = frozenset({MessageType.HEARTBEAT, MessageType.SHUTDOWN})


class Header(NamedTuple):
    magic: bytes
    version: int
    message_type: MessageType
    sequence: int
    payload_length: int


class Message(NamedTuple):
    """A decoded message: ``value`` is a float64 array (vector types), a dict (HELLO),
    a str (ERROR) or None (HEARTBEAT, SHUTDOWN)."""

    message_type: MessageType
    sequence: int
    value: Any


def _known_types() -> str:
    return ", ".join(f"{t.value} ({t.name})" for t in MessageType)


def encode_payload(message_type: MessageType, value: Any = None) -> bytes:
    """The payload bytes of a message of ``message_type`` carrying ``value``."""
    message_type = MessageType(message_type)
    if message_type in VECTOR_TYPES:
        array = np.asarray(value, dtype=np.float64)
        if array.ndim > 1:
            raise ValueError(f"{message_type.name} payload: expected a 1-D vector, got shape {array.shape}")
        return array.reshape(-1).astype(_FLOAT).tobytes()
    if message_type is MessageType.HELLO:
        if not isinstance(value, dict):
            raise TypeError(f"HELLO payload: expected a dict, got {type(value).__name__}")
        return json.dumps(value, sort_keys=True, separators=(",", ":"), allow_nan=False).encode("utf-8")
    if message_type is MessageType.ERROR:
        return str(value).encode("utf-8")
    if value is not None:
        raise ValueError(f"{message_type.name} carries no payload, got {value!r}")
    return b""


def encode_vector_message(message_type: MessageType, sequence: int, numbers) -> bytes:
    """Header and payload of a vector message (TARGET, FEEDBACK, PARAMETERS) carrying
    ``numbers``, a list or tuple of Python floats: the bytes :func:`encode_message` makes
    of the same vector, packed in one ``struct`` call when it is short
    (:data:`SMALL_VECTOR`)."""
    count = len(numbers)
    if message_type not in VECTOR_TYPES or count > SMALL_VECTOR or not 0 <= sequence < SEQUENCE_MODULUS:
        return encode_message(message_type, sequence, numbers)
    return _vector_message_struct(count).pack(MAGIC, VERSION, message_type, sequence, 8 * count, *numbers)


def encode_header(message_type: MessageType, sequence: int, payload_length: int) -> bytes:
    """The 14 header bytes."""
    message_type = MessageType(message_type)
    if not 0 <= sequence < SEQUENCE_MODULUS:
        raise ValueError(f"sequence number: expected 0 <= n < 2**32, got {sequence}")
    if not 0 <= payload_length < SEQUENCE_MODULUS:
        raise ValueError(f"payload length: expected 0 <= n < 2**32, got {payload_length}")
    return _HEADER.pack(MAGIC, VERSION, int(message_type), sequence, payload_length)


def encode_message(message_type: MessageType, sequence: int, value: Any = None,
                   max_payload_bytes: int = DEFAULT_MAX_PAYLOAD_BYTES) -> bytes:
    """Header and payload of one message, ready to send."""
    payload = encode_payload(message_type, value)
    if len(payload) > max_payload_bytes:
        raise ValueError(
            f"payload length: {len(payload)} bytes is over the limit of {max_payload_bytes} bytes"
        )
    return encode_header(message_type, sequence, len(payload)) + payload


def decode_header(data: bytes, expected_sequence: int | None = None,
                  max_payload_bytes: int = DEFAULT_MAX_PAYLOAD_BYTES) -> Header:
    """Check and unpack the 14 header bytes.

    Raises:
        ProtocolError: wrong length, magic, version or type; payload length over
            ``max_payload_bytes``; sequence number not ``expected_sequence`` (when given).
    """
    if len(data) != HEADER_SIZE:
        raise ProtocolError(f"header: expected {HEADER_SIZE} bytes, got {len(data)}")
    magic, version, type_code, sequence, length = _HEADER.unpack(data)
    if magic != MAGIC:
        raise ProtocolError(
            f"magic (bytes 0-3): expected {MAGIC!r}, got {magic!r} — the peer does not speak "
            "the rths_ident framed protocol (seed 000 or OpenFresco mode?)"
        )
    if version != VERSION:
        raise ProtocolError(f"version (byte 4): expected {VERSION}, got {version} (unsupported version)")
    message_type = _TYPES.get(type_code)
    if message_type is None:
        raise ProtocolError(
            f"message type (byte 5): expected one of {_known_types()}, got {type_code} (unknown type)"
        )
    if length > max_payload_bytes:
        raise ProtocolError(
            f"payload length (bytes 10-13): expected at most {max_payload_bytes} bytes, got {length}"
        )
    if expected_sequence is not None and sequence != expected_sequence:
        gap = (sequence - expected_sequence) % SEQUENCE_MODULUS
        raise ProtocolError(
            f"sequence number (bytes 6-9): expected {expected_sequence}, got {sequence} "
            f"({gap} message(s) missing or out of order)"
        )
    return Header(magic, version, message_type, sequence, length)


def decode_payload(message_type: MessageType, payload: bytes) -> Any:
    """The value carried by ``payload`` (see :class:`Message`)."""
    message_type = MessageType(message_type)
    name = message_type.name
    if message_type in VECTOR_TYPES:
        if len(payload) % _FLOAT.itemsize:
            raise ProtocolError(
                f"{name} payload length: expected a multiple of 8 bytes (float64), got {len(payload)}"
            )
        count = len(payload) // _FLOAT.itemsize
        if count <= SMALL_VECTOR:
            numbers = _vector_struct(count).unpack(payload)
            if all(map(math.isfinite, numbers)):
                return np.array(numbers, dtype=np.float64)
        return require_finite(np.frombuffer(payload, dtype=_FLOAT).astype(np.float64), f"{name} payload")
    if message_type in EMPTY_TYPES:
        if payload:
            raise ProtocolError(f"{name} payload length: expected 0 bytes, got {len(payload)}")
        return None
    try:
        text = payload.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ProtocolError(f"{name} payload: expected UTF-8 text, got invalid bytes ({exc})") from None
    if message_type is MessageType.ERROR:
        return text
    try:
        value = json.loads(text, parse_constant=_reject_constant)
    except ValueError as exc:
        raise ProtocolError(f"HELLO payload: expected a JSON object, got invalid JSON ({exc})") from None
    except RecursionError:  # found by fuzzing: "[[[[…" deeper than Python's recursion limit
        raise ProtocolError("HELLO payload: expected a JSON object, got JSON nested too deeply") from None
    if not isinstance(value, dict):
        raise ProtocolError(f"HELLO payload: expected a JSON object, got a JSON {type(value).__name__}")
    return value


def _reject_constant(name: str) -> float:
    raise ValueError(f"{name} is not valid JSON")


def decode_message(data: bytes, expected_sequence: int | None = None,
                   max_payload_bytes: int = DEFAULT_MAX_PAYLOAD_BYTES) -> Message:
    """Decode one whole message (header and payload, nothing more)."""
    header = decode_header(data[:HEADER_SIZE], expected_sequence, max_payload_bytes)
    payload = data[HEADER_SIZE:]
    if len(payload) != header.payload_length:
        raise ProtocolError(
            f"payload length (bytes 10-13): header says {header.payload_length} bytes, "
            f"{len(payload)} bytes follow the header"
        )
    return Message(header.message_type, header.sequence, decode_payload(header.message_type, payload))


def next_sequence(sequence: int) -> int:
    """The sequence number after ``sequence`` (uint32, wraps to 0)."""
    return (sequence + 1) % SEQUENCE_MODULUS


__all__ = [
    "DEFAULT_MAX_PAYLOAD_BYTES", "EMPTY_TYPES", "HEADER_LAYOUT", "HEADER_SIZE", "Header", "MAGIC",
    "Message", "MessageType", "SEQUENCE_MODULUS", "VECTOR_TYPES", "VERSION", "decode_header",
    "decode_message", "decode_payload", "encode_header", "encode_message", "encode_payload",
    "encode_vector_message", "next_sequence", "SMALL_VECTOR",
]
