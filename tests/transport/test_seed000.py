"""Seed 000 wire mode: bytes as the thesis' script packs them (``struct.pack('>d', x)``)."""

from __future__ import annotations

import math
import struct

import numpy as np
import pytest

from rths_ident.transport import (
    PeerClosedError,
    ProtocolError,
    Seed000Channel,
    TransportTimeout,
    connect,
    serve,
)
from rths_ident.transport import seed000

VALUES = [0.0, -0.0, 1.0, -3.5, 0.0125, 1e-300, -1.7976931348623157e308, math.pi, 5e-324]


@pytest.mark.parametrize("x", VALUES)
def test_one_value_is_struct_big_endian_double(x):
    assert seed000.encode(x) == struct.pack(">d", x)
    assert seed000.encode([x]) == struct.pack(">d", x)
    decoded = seed000.decode(struct.pack(">d", x), 1)
    assert decoded.shape == (1,) and decoded.dtype == np.float64
    assert struct.pack(">d", decoded[0]) == struct.pack(">d", x)  # bit-exact, sign of zero too


@pytest.mark.parametrize("n", [1, 2, 3, 7, 256])
def test_n_values_are_concatenated_struct_doubles(n):
    values = np.random.default_rng(n).normal(scale=1e3, size=n)
    expected = struct.pack(f">{n}d", *values)
    assert expected == b"".join(struct.pack(">d", v) for v in values)
    assert seed000.encode(values) == expected
    np.testing.assert_array_equal(seed000.decode(expected, n), values)


def test_special_values_are_encoded_as_ieee_but_refused_on_decode():
    """IEEE-754 bytes for ±Inf/NaN go out as is (the thesis' struct.pack does the same),
    but a receiver refuses them, naming the field and index (issue 8: NaN/Inf payloads
    stop the test safely)."""
    values = np.array([1.0, np.inf, -np.inf, np.nan])
    data = seed000.encode(values)
    assert data[8:24] == struct.pack(">2d", np.inf, -np.inf)
    with pytest.raises(ProtocolError, match=r"seed 000 message\[1\] is inf: .*3 non-finite"):
        seed000.decode(data, 4)


def test_documented_example_bytes():
    # docs/transport.md: n = 2, values 0.0125 and -3.5
    assert seed000.encode([0.0125, -3.5]).hex(" ") == "3f 89 99 99 99 99 99 9a c0 0c 00 00 00 00 00 00"


def test_invalid_sizes():
    with pytest.raises(ValueError, match="n >= 1"):
        seed000.encode([])
    with pytest.raises(ValueError, match="n >= 1"):
        seed000.decode(b"", 0)
    with pytest.raises(ValueError, match="expected 2 values, got 3"):
        seed000.encode([1.0, 2.0, 3.0], n=2)
    with pytest.raises(ValueError, match="1-D"):
        seed000.encode(np.zeros((2, 2)))
    with pytest.raises(ProtocolError, match="expected 16 bytes .2 float64., got 15"):
        seed000.decode(b"\x00" * 15, 2)


def test_short_reads_byte_by_byte(socket_pair, peer_thread):
    a, b = socket_pair
    values = [0.0125, -3.5, 6.02e23]
    data = struct.pack(">3d", *values)

    def trickle():
        for i in range(len(data)):
            a.sendall(data[i:i + 1])

    sender = peer_thread(trickle)
    out = Seed000Channel(b, n=3).receive()
    sender.result()
    assert [struct.pack(">d", v) for v in out] == [struct.pack(">d", v) for v in values]


def test_short_reads_in_uneven_chunks(socket_pair):
    a, b = socket_pair
    channel = Seed000Channel(b, n=2)
    data = struct.pack(">2d", 1.5, -2.25) + struct.pack(">2d", 3.0, 4.0)
    a.sendall(data[:5])
    a.sendall(data[5:19])
    a.sendall(data[19:])
    np.testing.assert_array_equal(channel.receive(), [1.5, -2.25])
    np.testing.assert_array_equal(channel.receive(), [3.0, 4.0])


def test_peer_closes_mid_message(socket_pair):
    a, b = socket_pair
    a.sendall(struct.pack(">d", 1.0)[:5])
    a.close()
    with pytest.raises(PeerClosedError, match="mid-message: 5 of 8 bytes arrived"):
        Seed000Channel(b, n=1).receive()


def test_peer_closes_between_messages(socket_pair):
    a, b = socket_pair
    a.close()
    with pytest.raises(PeerClosedError, match="before any byte"):
        Seed000Channel(b, n=1).receive()


def test_timeout_names_the_bytes_that_came(socket_pair):
    a, b = socket_pair
    b.settimeout(0.2)
    a.sendall(b"\x3f\x89\x99")
    with pytest.raises(TransportTimeout, match="3 of 16 bytes arrived"):
        Seed000Channel(b, n=2).receive()


def test_round_trip_over_tcp_like_the_thesis(peer_thread):
    """The NS is the server (force in, displacement out), the fast side the client."""
    forces = np.linspace(-2.0, 2.0, 50)

    with serve(port=0, timeout_s=5.0) as listener:
        def numerical_substructure():
            with Seed000Channel(listener.accept(), n=1) as channel:
                received = []
                for _ in forces:
                    force = channel.receive()
                    received.append(force[0])
                    channel.send(force * 1e-3)  # displacement: a stand-in spring
                return received

        server = peer_thread(numerical_substructure)
        # the client side written with struct and raw sockets, as the thesis' peers do
        with connect("127.0.0.1", listener.port, timeout_s=5.0) as sock:
            displacements = []
            for force in forces:
                sock.sendall(struct.pack(">d", force))
                displacements.append(struct.unpack(">d", _recv8(sock))[0])
        received = server.result()
    np.testing.assert_array_equal(received, forces)
    np.testing.assert_array_equal(displacements, forces * 1e-3)


def _recv8(sock):
    data = b""
    while len(data) < 8:
        chunk = sock.recv(8 - len(data))
        assert chunk, "server closed early"
        data += chunk
    return data


def test_vector_round_trip_different_sizes_each_way(peer_thread):
    with serve(timeout_s=5.0) as listener:
        def server():
            with Seed000Channel(listener.accept(), n=3, n_send=2) as channel:
                for _ in range(10):
                    x = channel.receive()
                    channel.send(x[:2] * 2.0)

        thread = peer_thread(server)
        with Seed000Channel(connect("127.0.0.1", listener.port, timeout_s=5.0), n=2, n_send=3) as client:
            for k in range(10):
                sent = np.array([k, -k, 0.5 * k], dtype=float)
                client.send(sent)
                np.testing.assert_array_equal(client.receive(), sent[:2] * 2.0)
        thread.result()
