"""The framed protocol over real loopback sockets (server in a thread)."""

from __future__ import annotations

import struct

import numpy as np
import pytest

from rths_ident.transport import (
    FramedChannel,
    MessageType,
    PeerClosedError,
    ProtocolError,
    RemoteError,
    TransportTimeout,
    connect,
    serve,
)


def raw_header(type_code, sequence, length):
    return b"RTHS" + struct.pack(">BBII", 1, type_code, sequence, length)


def test_session_over_tcp(peer_thread):
    """HELLO, targets/feedback, a parameter update, a clean SHUTDOWN."""
    with serve(timeout_s=5.0) as listener:
        def ns_server():
            with FramedChannel(listener.accept()) as channel:
                hello = channel.receive_expect(MessageType.HELLO).value
                channel.send(MessageType.HELLO, {"role": "ns", "n_target": 2})
                theta = None
                targets = 0
                while True:
                    message = channel.receive_expect(MessageType.FEEDBACK, MessageType.PARAMETERS, MessageType.SHUTDOWN)
                    if message.message_type is MessageType.SHUTDOWN:
                        return hello, theta, targets
                    if message.message_type is MessageType.PARAMETERS:
                        theta = message.value
                        continue
                    channel.send(MessageType.TARGET, np.concatenate([message.value, [targets]]))
                    targets += 1

        server = peer_thread(ns_server)
        with FramedChannel(connect("127.0.0.1", listener.port, timeout_s=5.0)) as client:
            client.send(MessageType.HELLO, {"role": "site", "n_feedback": 1})
            assert client.receive_expect(MessageType.HELLO).value == {"role": "ns", "n_target": 2}
            for k in range(20):
                client.send(MessageType.FEEDBACK, [0.1 * k])
                np.testing.assert_array_equal(client.receive_vector(MessageType.TARGET), [0.1 * k, k])
            client.send(MessageType.PARAMETERS, [2.0e6, 0.1, 1.0, 60.0, 40.0, 1.0])
            client.send(MessageType.SHUTDOWN)
            assert client.send_sequence == 23 and client.receive_sequence == 21
        hello, theta, targets = server.result()
    assert hello == {"role": "site", "n_feedback": 1}
    np.testing.assert_array_equal(theta, [2.0e6, 0.1, 1.0, 60.0, 40.0, 1.0])
    assert targets == 20


def test_thousand_messages_with_interleaved_heartbeats(peer_thread):
    """Sequence numbers count every message, heartbeats included; receive() sees them all."""
    n = 1000
    with serve(timeout_s=5.0) as listener:
        def sender():
            with FramedChannel(listener.accept()) as channel:
                for k in range(n):
                    if k % 7 == 3:
                        channel.send(MessageType.HEARTBEAT)
                    channel.send(MessageType.TARGET, [float(k), -float(k)])
                channel.send(MessageType.SHUTDOWN)

        thread = peer_thread(sender)
        with FramedChannel(connect("127.0.0.1", listener.port, timeout_s=5.0)) as receiver:
            sequences, types, values = [], [], []
            while True:
                message = receiver.receive()
                sequences.append(message.sequence)
                types.append(message.message_type)
                if message.message_type is MessageType.SHUTDOWN:
                    break
                if message.message_type is MessageType.TARGET:
                    values.append(message.value)
        thread.result()
    heartbeats = sum(1 for k in range(n) if k % 7 == 3)
    assert sequences == list(range(n + heartbeats + 1))
    assert types.count(MessageType.HEARTBEAT) == heartbeats
    np.testing.assert_array_equal(np.array(values), np.column_stack([np.arange(n), -np.arange(n)]))


def test_receive_expect_skips_heartbeats_and_raises_remote_error(socket_pair):
    a, b = socket_pair
    sender, receiver = FramedChannel(a), FramedChannel(b)
    sender.send(MessageType.HEARTBEAT)
    sender.send(MessageType.HEARTBEAT)
    sender.send(MessageType.FEEDBACK, [1.0])
    sender.send(MessageType.ERROR, "specimen force over the load-cell limit")
    sender.send(MessageType.PARAMETERS, [3.0])
    np.testing.assert_array_equal(receiver.receive_vector(MessageType.FEEDBACK), [1.0])
    with pytest.raises(RemoteError, match="specimen force over the load-cell limit"):
        receiver.receive_expect(MessageType.FEEDBACK)
    with pytest.raises(ProtocolError, match="message type: expected FEEDBACK, got PARAMETERS .sequence number 4."):
        receiver.receive_expect(MessageType.FEEDBACK)


def test_sequence_gap_on_the_wire(socket_pair):
    a, b = socket_pair
    a.sendall(raw_header(5, 0, 0) + raw_header(5, 2, 0))
    receiver = FramedChannel(b)
    assert receiver.receive().sequence == 0
    with pytest.raises(ProtocolError, match="sequence number .bytes 6-9.: expected 1, got 2"):
        receiver.receive()


def test_oversized_frame_rejected_before_reading_payload(socket_pair):
    a, b = socket_pair
    a.sendall(raw_header(2, 0, 8 * 1000))  # no payload follows: the header alone must fail
    with pytest.raises(ProtocolError, match="expected at most 800 bytes, got 8000"):
        FramedChannel(b, max_payload_bytes=800).receive()


def test_wrong_magic_version_type_on_the_wire(socket_pair):
    a, b = socket_pair
    a.sendall(struct.pack(">d", 0.5) + b"\x00" * 6)  # a seed 000 client talking to a framed server
    with pytest.raises(ProtocolError, match="magic"):
        FramedChannel(b).receive()


def test_peer_closes_mid_header(socket_pair):
    a, b = socket_pair
    a.sendall(raw_header(2, 0, 16)[:9])
    a.close()
    with pytest.raises(PeerClosedError, match="mid-message: 9 of 14 bytes arrived"):
        FramedChannel(b).receive()


def test_peer_closes_mid_payload(socket_pair):
    a, b = socket_pair
    a.sendall(raw_header(2, 0, 16) + struct.pack(">d", 1.0) + b"\x00\x00")
    a.close()
    with pytest.raises(PeerClosedError, match=r"TARGET payload \(16 bytes\).*10 of 16 bytes arrived"):
        FramedChannel(b).receive()


def test_frame_fed_byte_by_byte(socket_pair, peer_thread):
    a, b = socket_pair
    data = raw_header(3, 0, 24) + struct.pack(">3d", 1.0, -2.0, 1e-9)

    def trickle():
        for i in range(len(data)):
            a.sendall(data[i:i + 1])

    thread = peer_thread(trickle)
    message = FramedChannel(b).receive()
    thread.result()
    assert message.message_type is MessageType.FEEDBACK and message.sequence == 0
    np.testing.assert_array_equal(message.value, [1.0, -2.0, 1e-9])


def test_silent_peer_times_out(socket_pair):
    a, b = socket_pair
    b.settimeout(0.2)
    with pytest.raises(TransportTimeout, match="0 of 14 bytes arrived"):
        FramedChannel(b).receive()


def test_send_to_closed_peer_fails_cleanly(socket_pair):
    a, b = socket_pair
    b.close()
    channel = FramedChannel(a)
    with pytest.raises(PeerClosedError):
        for _ in range(100):  # the first sends may still be buffered
            channel.send(MessageType.TARGET, np.zeros(1000))
