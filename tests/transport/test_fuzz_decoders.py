"""Property-based tests (hypothesis): random, truncated, oversized and bit-flipped bytes
sent to every decoder of the transport layer — the framed header and payloads (codec and
channel over a socket), seed 000, the OpenFresco setup, frames, command codes, the
element server and the client's replies — fail with nothing but the library's own
:class:`~rths_ident.transport.errors.TransportError` kinds (a ProtocolError for bad bytes,
PeerClosedError/TransportTimeout for bytes that stop coming). NaN/Inf in a vector
payload is a ProtocolError naming the field.
"""

from __future__ import annotations

import socket
import struct
import threading

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from rths_ident.transport import framed, seed000
from rths_ident.transport import openfresco as of
from rths_ident.transport.errors import ProtocolError, TransportError
from rths_ident.transport.framed import MessageType
from rths_ident.transport.framed_channel import FramedChannel
from rths_ident.transport.openfresco_client import OpenFrescoClient, decode_daq_reply

FAST = settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
SOCKETS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])

floats = st.floats(allow_nan=True, allow_infinity=True, width=64)
finite = st.floats(min_value=-1e6, max_value=1e6, allow_nan=False, allow_infinity=False)


def _valid_framed_message(draw_type, values, sequence):
    if draw_type in framed.VECTOR_TYPES:
        return framed.encode_message(draw_type, sequence, values)
    if draw_type is MessageType.HELLO:
        return framed.encode_message(draw_type, sequence, {"role": "ns", "n": len(values)})
    if draw_type is MessageType.ERROR:
        return framed.encode_message(draw_type, sequence, "boom")
    return framed.encode_message(draw_type, sequence)


@st.composite
def mangled(draw, valid: bytes):
    """``valid`` truncated, extended, or with bytes flipped."""
    kind = draw(st.sampled_from(["truncate", "extend", "flip", "as is"]))
    data = bytearray(valid)
    if kind == "truncate" and data:
        data = data[: draw(st.integers(0, len(data) - 1))]
    elif kind == "extend":
        data += draw(st.binary(min_size=1, max_size=64))
    elif kind == "flip" and data:
        for _ in range(draw(st.integers(1, 4))):
            i = draw(st.integers(0, len(data) - 1))
            data[i] ^= draw(st.integers(1, 255))
    return bytes(data)


@st.composite
def framed_bytes(draw):
    message_type = draw(st.sampled_from(list(MessageType)))
    values = draw(st.lists(floats, max_size=8))
    valid = _valid_framed_message(message_type, [v if np.isfinite(v) else 0.0 for v in values],
                                  draw(st.integers(0, 2**32 - 1)))
    return draw(st.one_of(st.binary(max_size=80), mangled(valid)))


def _only_library_errors(fn, *args, **kwargs):
    try:
        return fn(*args, **kwargs)
    except TransportError:
        return None


# -- framed -----------------------------------------------------------------------------
@FAST
@given(data=framed_bytes(), expected=st.one_of(st.none(), st.integers(0, 2**32 - 1)),
       limit=st.integers(0, 1 << 24))
def test_framed_decode_message_raises_only_protocol_errors(data, expected, limit):
    try:
        message = framed.decode_message(data, expected_sequence=expected, max_payload_bytes=limit)
    except ProtocolError:
        return
    if message.message_type in framed.VECTOR_TYPES:
        assert np.all(np.isfinite(message.value))


@FAST
@given(message_type=st.sampled_from(list(MessageType)), payload=st.binary(max_size=200))
def test_framed_decode_payload_raises_only_protocol_errors(message_type, payload):
    _only_library_errors(framed.decode_payload, message_type, payload)


def test_deeply_nested_hello_is_a_protocol_error():
    with pytest.raises(ProtocolError, match="HELLO payload"):
        framed.decode_payload(MessageType.HELLO, b"[" * 100_000)


@SOCKETS
@given(chunks=st.lists(framed_bytes(), min_size=1, max_size=4))
def test_framed_channel_on_random_streams_raises_only_transport_errors(chunks):
    a, b = socket.socketpair()
    a.settimeout(5.0)
    b.settimeout(5.0)
    try:
        b.sendall(b"".join(chunks))
        b.close()  # whatever is missing never comes: PeerClosedError, not a hang
        channel = FramedChannel(a, max_payload_bytes=1 << 16)
        for _ in range(8):
            channel.receive()
    except TransportError:
        pass
    finally:
        a.close()


@pytest.mark.parametrize("message_type", sorted(framed.VECTOR_TYPES))
@pytest.mark.parametrize("bad", [float("nan"), float("inf"), float("-inf")])
def test_framed_vector_with_nan_or_inf_names_the_field(message_type, bad):
    data = framed.encode_message(message_type, 0, [0.5, bad])
    with pytest.raises(ProtocolError, match=rf"{message_type.name} payload\[1\] is {bad!r}"):
        framed.decode_message(data)


# -- seed 000 ---------------------------------------------------------------------------
@FAST
@given(data=st.binary(max_size=100), n=st.integers(1, 12))
def test_seed000_decode_raises_only_protocol_errors(data, n):
    try:
        values = seed000.decode(data, n)
    except ProtocolError:
        return
    assert values.shape == (n,) and np.all(np.isfinite(values))


def test_seed000_nan_names_the_field():
    with pytest.raises(ProtocolError, match=r"seed 000 message\[0\] is nan"):
        seed000.decode(struct.pack(">d", float("nan")), 1)


# -- OpenFresco codec -------------------------------------------------------------------
@FAST
@given(data=st.one_of(st.binary(max_size=60),
                      st.lists(st.integers(-2**31, 2**31 - 1), min_size=11, max_size=11).map(
                          lambda v: struct.pack("<11i", *v)),
                      mangled(of.encode_setup(of.SetupMessage.for_generic_client(2)))))
def test_openfresco_decode_setup_raises_only_protocol_errors(data):
    try:
        setup = of.decode_setup(data)
    except ProtocolError:
        return
    assert 1 <= setup.data_size <= of.MAX_DATA_SIZE and min(setup) >= 0


@FAST
@given(data=st.binary(max_size=300), data_size=st.integers(-4, 40))
def test_openfresco_decode_frame_raises_only_protocol_errors(data, data_size):
    try:
        frame = of.decode_frame(data, data_size)
    except ProtocolError:
        return
    assert frame.shape == (data_size,) and np.all(np.isfinite(frame))


@FAST
@given(code=floats)
def test_openfresco_command_code_raises_only_protocol_errors(code):
    try:
        assert of.command_code(np.array([code])) in of.COMMAND_NAMES
    except ProtocolError:
        pass


@FAST
@given(data=st.binary(max_size=200), data_size=st.integers(-2, 30), n=st.integers(1, 20))
def test_client_reply_decoder_raises_only_protocol_errors(data, data_size, n):
    try:
        reading = decode_daq_reply(data, data_size, n)
    except ProtocolError:
        return
    assert reading.displacement.shape == (n,) and reading.force.shape == (n,)


class _Spring:
    n_basic = 1

    def set_trial(self, d, v, a, t):
        self.d = float(d[0])

    def force(self):
        return np.array([1e3 * getattr(self, "d", 0.0)])

    def commit(self):
        pass

    def initial_stiffness(self):
        return np.array([[1e3]])

    tangent_stiffness = initial_stiffness

    def damping(self):
        return np.zeros((1, 1))

    mass = damping


@st.composite
def client_sessions(draw):
    """A genericClient-like session (setup + frames of 16 float64) with random damage."""
    setup = of.SetupMessage.for_generic_client(1, data_size=16)._replace(data_size=16)
    frames = []
    for _ in range(draw(st.integers(0, 5))):
        code = draw(st.sampled_from([3, 5, 10, 12, 13, 6, 7, 11, 99, 1, 42, 3.5]))
        frames.append(of.encode_frame([code, draw(floats), draw(floats), draw(floats), draw(finite)], 16))
    return draw(mangled(of.encode_setup(setup) + b"".join(frames)))


@SOCKETS
@given(session=client_sessions())
def test_element_server_on_random_sessions_raises_only_transport_errors(session):
    server = of.ElementServer(_Spring(), accept_timeout=5.0, timeout=2.0).start()
    with socket.create_connection(server.address, timeout=5.0) as conn:
        try:
            conn.sendall(session)
            conn.shutdown(socket.SHUT_WR)  # nothing more comes: the server must stop by itself
        except OSError:  # the server already refused the session and closed its end
            pass
        try:
            server.join(timeout=10.0)  # re-raises whatever stopped the server
        except TransportError:
            pass


def test_element_server_names_the_non_finite_trial_field():
    server = of.ElementServer(_Spring(), accept_timeout=5.0, timeout=5.0).start()
    with socket.create_connection(server.address, timeout=5.0) as conn:
        conn.sendall(of.encode_setup(of.SetupMessage.for_generic_client(1)))
        conn.sendall(of.encode_frame([of.SET_TRIAL_RESPONSE, 0.0, float("inf"), 0.0, 0.0], 256))
        with pytest.raises(ProtocolError, match=r"setTrialResponse velocity\[0\] is inf"):
            server.join(timeout=10.0)


@SOCKETS
@given(reply=st.binary(max_size=300), close_early=st.booleans())
def test_client_on_random_replies_raises_only_transport_errors(reply, close_early):
    a, b = socket.socketpair()
    a.settimeout(0.2)  # a reply that never completes: TransportTimeout after 0.2 s
    b.settimeout(2.0)

    def server():
        try:
            b.recv(1 << 16)
            b.sendall(reply)
            if close_early:
                b.close()
        except OSError:
            pass

    thread = threading.Thread(target=server, daemon=True)
    thread.start()
    try:
        client = OpenFrescoClient(a, n_dof=1, data_size=16)
        for _ in range(3):
            client.step([0.001])
    except TransportError:
        pass
    finally:
        thread.join(5.0)
        a.close()
        b.close()
