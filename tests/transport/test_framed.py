"""Framed protocol codec: header bytes built independently with struct, and every error."""

from __future__ import annotations

import json
import struct

import numpy as np
import pytest

from rths_ident.transport import ProtocolError
from rths_ident.transport.framed import (
    HEADER_SIZE,
    MessageType,
    decode_header,
    decode_message,
    encode_message,
    encode_vector_message,
    next_sequence,
)


def header(type_code, sequence, length, magic=b"RTHS", version=1):
    """The header as the byte table in docs/transport.md describes it."""
    return magic + struct.pack(">B", version) + struct.pack(">B", type_code) + struct.pack(">I", sequence) + struct.pack(">I", length)


def test_header_is_14_bytes():
    assert HEADER_SIZE == 14 == len(header(1, 0, 0))


@pytest.mark.parametrize("message_type", [MessageType.TARGET, MessageType.FEEDBACK, MessageType.PARAMETERS])
@pytest.mark.parametrize("n", [0, 1, 3, 100])
def test_vector_messages(message_type, n):
    values = np.random.default_rng(n).normal(size=n) * 10.0 ** np.arange(n)
    data = encode_message(message_type, 123456, values)
    assert data == header(int(message_type), 123456, 8 * n) + struct.pack(f">{n}d", *values)
    message = decode_message(data, expected_sequence=123456)
    assert message.message_type is message_type and message.sequence == 123456
    np.testing.assert_array_equal(message.value, values)  # float64 travels exactly


def test_hello_is_json():
    hello = {"role": "ns", "n_target": 1, "n_feedback": 2}
    data = encode_message(MessageType.HELLO, 0, hello)
    payload = data[HEADER_SIZE:]
    assert data[:HEADER_SIZE] == header(1, 0, len(payload))
    assert json.loads(payload.decode("utf-8")) == hello
    assert decode_message(data).value == hello


def test_empty_and_text_messages():
    assert encode_message(MessageType.HEARTBEAT, 5) == header(5, 5, 0)
    assert encode_message(MessageType.SHUTDOWN, 6) == header(6, 6, 0)
    text = "NS diverged at step 12: |u| = inf (ünits: m)"
    data = encode_message(MessageType.ERROR, 7, text)
    assert data == header(7, 7, len(text.encode("utf-8"))) + text.encode("utf-8")
    assert decode_message(data).value == text
    assert decode_message(header(5, 1, 0)).value is None


def test_wrong_magic():
    with pytest.raises(ProtocolError, match=r"magic \(bytes 0-3\): expected b'RTHS', got b'RTHX'"):
        decode_header(header(2, 0, 0, magic=b"RTHX"))


def test_seed000_bytes_are_not_a_frame():
    with pytest.raises(ProtocolError, match="magic"):
        decode_header(struct.pack(">d", 1.0) + b"\x00" * 6)


def test_unsupported_version():
    with pytest.raises(ProtocolError, match=r"version \(byte 4\): expected 1, got 2"):
        decode_header(header(2, 0, 0, version=2))


@pytest.mark.parametrize("code", [0, 8, 99, 255])
def test_unknown_type(code):
    with pytest.raises(ProtocolError, match=rf"message type \(byte 5\): expected one of 1 \(HELLO\).*got {code}"):
        decode_header(header(code, 0, 0))


def test_payload_over_limit():
    with pytest.raises(ProtocolError, match=r"payload length \(bytes 10-13\): expected at most 1024 bytes, got 1032"):
        decode_header(header(2, 0, 1032), max_payload_bytes=1024)
    # the default limit (16 MiB) rejects a length of 2**32 - 1 from the header alone
    with pytest.raises(ProtocolError, match="payload length"):
        decode_header(header(2, 0, 2**32 - 1))
    with pytest.raises(ValueError, match="over the limit of 16 bytes"):
        encode_message(MessageType.TARGET, 0, [1.0, 2.0, 3.0], max_payload_bytes=16)


def test_sequence_gap():
    with pytest.raises(ProtocolError, match=r"sequence number \(bytes 6-9\): expected 5, got 7 \(2 message"):
        decode_header(header(2, 7, 0), expected_sequence=5)
    with pytest.raises(ProtocolError, match="expected 5, got 4"):
        decode_header(header(2, 4, 0), expected_sequence=5)


def test_sequence_wraps():
    assert next_sequence(2**32 - 1) == 0
    assert decode_header(header(5, 0, 0), expected_sequence=next_sequence(2**32 - 1)).sequence == 0


def test_malformed_payloads():
    with pytest.raises(ProtocolError, match="TARGET payload length: expected a multiple of 8 bytes"):
        decode_message(header(2, 0, 7) + b"\x00" * 7)
    with pytest.raises(ProtocolError, match="HEARTBEAT payload length: expected 0 bytes, got 1"):
        decode_message(header(5, 0, 1) + b"\x00")
    with pytest.raises(ProtocolError, match="ERROR payload: expected UTF-8"):
        decode_message(header(7, 0, 2) + b"\xff\xfe")
    with pytest.raises(ProtocolError, match="HELLO payload: expected a JSON object, got a JSON list"):
        decode_message(header(1, 0, 2) + b"[]")
    with pytest.raises(ProtocolError, match="HELLO payload: expected a JSON object, got invalid JSON"):
        decode_message(header(1, 0, 3) + b"NaN")
    with pytest.raises(ProtocolError, match="header says 16 bytes, 8 bytes follow"):
        decode_message(header(2, 0, 16) + b"\x00" * 8)
    with pytest.raises(ProtocolError, match="header: expected 14 bytes, got 3"):
        decode_header(b"RTH")


def test_encode_rejects_bad_values():
    with pytest.raises(TypeError, match="HELLO payload: expected a dict"):
        encode_message(MessageType.HELLO, 0, [1, 2])
    with pytest.raises(ValueError, match="HEARTBEAT carries no payload"):
        encode_message(MessageType.HEARTBEAT, 0, [1.0])
    with pytest.raises(ValueError, match="sequence number"):
        encode_message(MessageType.HEARTBEAT, 2**32)
    with pytest.raises(ValueError, match="1-D"):
        encode_message(MessageType.TARGET, 0, np.zeros((2, 2)))


VECTORS = [
    [], [0.0], [-0.0, 1.5], [5e-324, -1.7976931348623157e308, 2.0 ** -1074, 1.0 / 3.0],
    list(np.random.default_rng(23).normal(scale=1e3, size=13)), list(np.arange(300.0)),  # 300: the NumPy path
]


@pytest.mark.parametrize("values", VECTORS, ids=len)
@pytest.mark.parametrize("kind", [MessageType.FEEDBACK, MessageType.TARGET, MessageType.PARAMETERS])
def test_vector_messages_packed_in_one_call_are_the_bytes_of_the_table(kind, values):
    """encode_vector_message against the header of the byte table and the payload as
    NumPy writes big-endian float64; decoding gives the floats back, bit for bit."""
    data = encode_vector_message(kind, 4_000_000_007, [float(v) for v in values])
    expected = header(int(kind), 4_000_000_007, 8 * len(values)) + np.asarray(values, dtype=">f8").tobytes()
    assert data == expected == encode_message(kind, 4_000_000_007, np.asarray(values))
    decoded = decode_message(data).value
    assert decoded.dtype == np.float64 and decoded.shape == (len(values),)
    np.testing.assert_array_equal(decoded.view(np.uint64), np.asarray(values, dtype=np.float64).view(np.uint64))


@pytest.mark.parametrize("count", [4, 300])  # the struct path and the NumPy path
def test_a_non_finite_value_is_named_with_its_index_on_either_path(count):
    values = np.ones(count)
    values[2] = np.inf
    values[count - 1] = np.nan
    with pytest.raises(ProtocolError, match=r"^TARGET payload\[2\] is inf: vectors on the wire must be finite "
                                            r"\(2 non-finite value\(s\)\)$"):
        decode_message(encode_message(MessageType.TARGET, 0, values))
