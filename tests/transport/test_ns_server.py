"""NSServer's own rules, with the toy NS in a thread: a bad first message gets an ERROR
with its reason and the server goes on with the next client; the seed 000 wire reads a
whole message however TCP splits it and ends when the client closes; no client within
the time limit is one line."""

from __future__ import annotations

import socket
import struct

import numpy as np
import pytest
from _toy_ns import ToySDOF

from rths_ident.transport import TransportTimeout
from rths_ident.transport.framed import MessageType
from rths_ident.transport.framed_channel import FramedChannel
from rths_ident.transport.ns_server import NSServer, ground_accel_function
from rths_ident.transport.remote_substructure import RemoteSubstructure
from rths_ident.transport.tcp import connect

TIMEOUT_S = 5.0


def test_a_bad_first_message_is_refused_and_the_next_client_is_served(peer_thread):
    server = NSServer(lambda s: ToySDOF(), port=0, timeout_s=TIMEOUT_S, log=lambda line: None)
    thread = peer_thread(lambda: server.serve(max_sessions=3))
    host, port = server.address
    with FramedChannel(connect(host, port, TIMEOUT_S)) as channel:
        channel.send(MessageType.FEEDBACK, [0.0, 0.0])
        reply = channel.receive()
    assert (reply.message_type, reply.value) == (MessageType.ERROR, "protocol error: expected HELLO (or SHUTDOWN) "
                                                                    "as the first message, got FEEDBACK")
    with FramedChannel(connect(host, port, TIMEOUT_S)) as channel:
        channel.send(MessageType.HELLO, {"protocol": "rths-ns", "version": 9, "role": "ns-client", "setup": {}})
        reply = channel.receive()
    assert reply.message_type is MessageType.ERROR and "unsupported session protocol version" in reply.value
    with RemoteSubstructure(host, port, {}) as remote:
        target, log = remote.step([0.0], 1.0)
    assert thread.result() == 3
    assert len(server.failures) == 2
    local = ToySDOF()
    local.initial_target()
    np.testing.assert_array_equal(target, local.step([0.0], 1.0)[0])


def test_seed000_session_steps_until_the_client_closes(peer_thread):
    record = np.linspace(0.0, 1.0, 11)
    setup = {"dt": 0.01, "ground_accel": record}
    served = []
    server = NSServer(lambda s: served.append(ToySDOF(dt=s["dt"])) or served[-1], port=0, wire="seed000",
                      timeout_s=TIMEOUT_S, seed000_setup=setup, log=lambda line: None)
    thread = peer_thread(lambda: server.serve(max_sessions=1))
    replies = []
    with socket.create_connection(server.address, timeout=TIMEOUT_S) as sock:
        for force in (10.0, -20.0, 30.0):
            data = struct.pack(">d", force)
            sock.sendall(data[:5])
            sock.sendall(data[5:])
            replies.append(sock.recv(8))
    thread.result()
    local = ToySDOF(dt=0.01)
    want = [local.step([f], record[k + 1])[0][0] for k, f in enumerate((10.0, -20.0, 30.0))]
    assert replies == [struct.pack(">d", w) for w in want]
    assert served[0].steps == 3 and served[0].closed and not server.failures


def test_ground_accel_function_interpolates_like_an_opensees_path():
    ag = ground_accel_function({"dt": 0.01, "record_dt": 0.02, "ground_accel": [0.0, 2.0, 4.0]})
    assert [ag(t) for t in (0.0, 0.01, 0.02, 0.04, 0.05, 0.06, 1.0)] == pytest.approx([0.0, 1.0, 2.0, 4.0, 2.0, 0.0, 0.0],
                                                                                   abs=1e-14)


def test_no_client_within_the_time_limit_is_one_line():
    server = NSServer(lambda s: ToySDOF(), port=0, timeout_s=0.3, log=lambda line: None)
    port = server.address[1]
    with pytest.raises(TransportTimeout, match=rf"^no peer connected to 127\.0\.0\.1:{port} within 0\.3 s"):
        server.serve()


def test_bad_bytes_mid_session_are_answered_with_their_reason(peer_thread):
    """A non-finite FEEDBACK (refused where the vector is decoded) gets an ERROR naming
    the field, not a silent hang-up."""
    server = NSServer(lambda s: ToySDOF(), port=0, timeout_s=TIMEOUT_S, log=lambda line: None)
    thread = peer_thread(lambda: server.serve(max_sessions=1))
    with FramedChannel(connect(*server.address, TIMEOUT_S)) as channel:
        channel.send(MessageType.HELLO, {"protocol": "rths-ns", "version": 1, "role": "ns-client", "setup": {}})
        assert channel.receive().message_type is MessageType.HELLO
        assert channel.receive().message_type is MessageType.TARGET
        channel.send(MessageType.FEEDBACK, [np.nan, 0.0])
        reply = channel.receive()
    thread.result()
    assert reply.message_type is MessageType.ERROR
    assert reply.value.startswith("protocol error: FEEDBACK payload[0] is nan: vectors on the wire must be finite")


def test_one_run_is_every_session_it_announces_until_it_says_it_ended(peer_thread):
    """``serve(max_runs=1)`` (``serve ns --once``): a run that opens three sessions (the
    test and its comparison runs, each HELLO carrying the run's id) is served whole, and
    the server stops when the run says it ended — not after the first session."""
    from rths_ident.transport.remote_substructure import end_run

    server = NSServer(lambda s: ToySDOF(), port=0, timeout_s=TIMEOUT_S, log=lambda line: None)
    thread = peer_thread(lambda: server.serve(max_runs=1))
    host, port = server.address
    for variant in range(3):
        with RemoteSubstructure(host, port, {}, run="run-1") as remote:
            remote.step([0.0], 1.0)
    end_run(host, port, "run-1")
    assert thread.result() == 3 and server.runs_ended == {("run", "run-1")}


def test_a_session_that_announces_no_run_is_a_run_by_itself(peer_thread):
    server = NSServer(lambda s: ToySDOF(), port=0, timeout_s=TIMEOUT_S, log=lambda line: None)
    thread = peer_thread(lambda: server.serve(max_runs=1))
    host, port = server.address
    with RemoteSubstructure(host, port, {}) as remote:
        remote.step([0.0], 1.0)
    assert thread.result() == 1
