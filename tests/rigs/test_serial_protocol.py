"""The rig line protocol codec: checksums computed independently, every malformed line a
RigProtocolError that shows the bytes."""

import functools
import operator

import pytest

from rths_ident.rigs import serial_protocol as proto
from rths_ident.rigs.errors import RigProtocolError


def test_checksum_is_xor_of_payload():
    assert proto.checksum(b"M 1 90000") == functools.reduce(operator.xor, b"M 1 90000")
    assert proto.move(1, 90.0) == b"M 1 90000*%02X\n" % functools.reduce(operator.xor, b"M 1 90000")


def test_round_trip_and_sequence_wrap():
    message = proto.decode(proto.move(65537, 45.5))
    assert (message.kind, message.fields) == ("M", ("1", "45500"))
    assert proto.decode(b"R 7 531 42*" + b"%02X" % proto.checksum(b"R 7 531 42") + b"\r\n").integer(1, "adc") == 531


@pytest.mark.parametrize("raw, text", [
    (b"\x00\xff\x13garbage\n", "non-printable"),
    (b"R 7 531 42\n", "without '\\*HH' checksum"),
    (b"R 7 531 42*00\n", "checksum mismatch"),
    (b"Q 1*" + b"%02X" % proto.checksum(b"Q 1") + b"\n", "unknown message kind 'Q'"),
    (b"R " + b"1" * 70 + b"\n", "exceeds 64"),
])
def test_malformed_lines(raw, text):
    with pytest.raises(RigProtocolError, match=text):
        proto.decode(raw)


def test_field_checks_and_angle_range():
    with pytest.raises(RigProtocolError, match="field 'adc' = '-3'"):
        proto.decode(proto.encode("R", 1, -3, 0)).integer(1, "adc")
    with pytest.raises(ValueError, match="outside"):
        proto.move(1, 181.0)
