"""RemoteSubstructure against an NSServer in a thread: the same numbers as the same NS in
process (bit for bit: float64 crosses the wire unchanged), parameter updates
acknowledged, and every failure one clear TransportError naming the server, the slow
step and the time."""

from __future__ import annotations

import socket

import numpy as np
import pytest
from _toy_ns import ToySDOF

from rths_ident.transport import PeerClosedError, ProtocolError, RemoteError, TransportError
from rths_ident.transport.ns_server import NSServer
from rths_ident.transport.remote_substructure import RemoteSubstructure, stop_server

TIMEOUT_S = 5.0


def start_server(peer_thread, make_ns=None, sessions=1, **options):
    made = []

    def make(setup):
        ns = (make_ns or (lambda s: ToySDOF(dt=s["dt"])))(setup)
        made.append((setup, ns))
        return ns

    server = NSServer(make, port=0, timeout_s=TIMEOUT_S, model="toy", log=lambda line: None, **options)
    thread = peer_thread(lambda: server.serve(max_sessions=sessions))
    return server, thread, made


def drive(ns, ground, forces, update_at=None):
    targets, logs = [ns.initial_target()], []
    for k, (ag, f) in enumerate(zip(ground, forces)):
        if update_at is not None and k == update_at:
            ns.apply_parameters([2.5e4])
        target, log = ns.step([f], ag)
        targets.append(target)
        logs.append(log)
    return np.array(targets), logs


@pytest.mark.parametrize("client_spin_s, server_spin_s", [(None, None), (0.0, 0.0), (0.5, 0.0), (0.0, 0.5)])
def test_remote_equals_in_process_bit_for_bit(peer_thread, client_spin_s, server_spin_s):
    """Whether either end polls for its messages (the defaults: both) or sleeps."""
    rng = np.random.default_rng(7)
    ground = rng.normal(0.0, 3.0, 60)  # m/s²
    forces = rng.normal(0.0, 50.0, 60)  # N
    server, thread, made = start_server(peer_thread, spin_s=server_spin_s)
    remote = RemoteSubstructure(*server.address, {"dt": 0.01, "ground_accel": ground}, dt=0.01, n_interface=1,
                                model="toy", spin_s=client_spin_s)
    assert (remote.parameter_names, remote.parameter_units) == (("k",), ("N/m",))
    remote_targets, remote_logs = drive(remote, ground, forces, update_at=20)
    remote.close()
    assert thread.result() == 1
    setup, served = made[0]
    np.testing.assert_array_equal(setup["ground_accel"], ground)  # the record arrived exactly (JSON repr)
    assert served.closed and served.k == 2.5e4
    local_targets, local_logs = drive(ToySDOF(dt=0.01), ground, forces, update_at=20)
    np.testing.assert_array_equal(remote_targets, local_targets)
    for got, want in zip(remote_logs, local_logs):
        assert list(got) == list(want)
        for name in want:
            assert got[name].dtype == want[name].dtype and got[name].shape == want[name].shape
            np.testing.assert_array_equal(got[name], want[name])


def test_remote_exception_text_reaches_the_client_with_step_and_time(peer_thread):
    server, thread, made = start_server(peer_thread, lambda s: ToySDOF(dt=0.02, fail_above=100.0))
    remote = RemoteSubstructure(*server.address, {"dt": 0.02})
    remote.step([1.0], 0.0)
    remote.step([2.0], 0.0)
    with pytest.raises(RemoteError) as info:
        remote.step([500.0], 0.0)
    message = str(info.value)
    assert "slow step 2 (t = 0.06 s)" in message and message.count("slow step") == 1  # said once
    assert "RuntimeError: analysis diverged: feedback 500 N" in message
    assert f"127.0.0.1:{server.address[1]}" in message
    assert (info.value.slow_index, info.value.time) == (2, pytest.approx(0.06))
    assert "\n" not in message
    with pytest.raises(TransportError, match="failed earlier"):
        remote.step([0.0], 0.0)
    remote.close()
    thread.result()
    assert made[0][1].closed  # the server closed its NS when the session failed
    assert "analysis diverged" in server.failures[0]


def test_rejected_parameters_are_an_error_not_a_silent_no_op(peer_thread):
    server, thread, _ = start_server(peer_thread)
    remote = RemoteSubstructure(*server.address, {"dt": 0.01})
    with pytest.raises(ValueError, match="estimate must be 1 values"):
        remote.apply_parameters([1.0, 2.0])  # checked here, against the names the server announced
    with pytest.raises(RemoteError, match=r"applying parameters before slow step 0 .*ValueError: k must be > 0"):
        remote.apply_parameters([-1.0])
    remote.close()
    thread.result()


def test_server_that_dies_mid_test_gives_a_peer_closed_error_naming_the_step(peer_thread):
    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(TIMEOUT_S)
    port = listener.getsockname()[1]

    def fake_server():
        # a real session for 3 steps, then the process "dies" (the socket closes)
        from rths_ident.transport.framed import MessageType
        from rths_ident.transport.framed_channel import FramedChannel

        conn, _ = listener.accept()
        conn.settimeout(TIMEOUT_S)
        channel = FramedChannel(conn)
        channel.receive()
        channel.send(MessageType.HELLO, {"protocol": "rths-ns", "version": 1, "role": "ns-server", "n_interface": 1,
                                         "dt": 0.02, "parameter_names": [], "model": "dies"})
        channel.send(MessageType.TARGET, [0.0])
        channel.send(MessageType.HELLO, {"log": []})
        for _ in range(3):
            channel.receive()
            channel.send(MessageType.TARGET, [0.0])
        channel.receive()
        conn.close()
        listener.close()

    thread = peer_thread(fake_server)
    remote = RemoteSubstructure("127.0.0.1", port, {})
    for _ in range(3):
        remote.step([0.0], 0.0)
    with pytest.raises(PeerClosedError, match=r"at 127\.0\.0\.1:\d+, in slow step 3 \(t = 0\.08 s\): peer closed"):
        remote.step([0.0], 0.0)
    remote.close()  # after a failure: closes the socket, no error
    thread.result()


def test_mismatched_expectations_and_refused_connections_are_one_line_errors(peer_thread):
    server, thread, _ = start_server(peer_thread)
    with pytest.raises(ProtocolError, match=r"the server's dt is 0\.01, this loop needs 0\.02"):
        RemoteSubstructure(*server.address, {"dt": 0.01}, dt=0.02)
    thread.result()
    with pytest.raises(TransportError, match="refused — is the server running"):
        RemoteSubstructure(*server.address, {"dt": 0.01})


def test_a_setup_the_model_cannot_build_is_reported_at_set_up(peer_thread):
    server, thread, _ = start_server(peer_thread, lambda s: ToySDOF(dt=s["dt"], m=s["mass"]))
    with pytest.raises(RemoteError, match=r"setting up the session: .*building the numerical substructure failed: "
                                          r"KeyError: 'mass'"):
        RemoteSubstructure(*server.address, {"dt": 0.01})
    thread.result()


def test_stop_request_ends_the_server(peer_thread):
    server, thread, _ = start_server(peer_thread, sessions=None)
    with RemoteSubstructure(*server.address, {"dt": 0.01}) as remote:
        remote.step([0.0], 0.0)
    stop_server(*server.address)
    assert thread.result() == 1


def test_both_ends_clock_marks_are_in_causal_order(peer_thread, tmp_path):
    """The client's marks (called, sent, read, returning) and the server's (read,
    decoded, stepped, encoded, sent; saved at SHUTDOWN) on the one monotonic clock: each
    step's come in the order cause and effect allow."""
    server, thread, _ = start_server(peer_thread, step_marks=str(tmp_path))
    remote = RemoteSubstructure(*server.address, {"dt": 0.01})
    remote.step_marks = []
    drive(remote, np.zeros(25), np.ones(25))
    remote.close()
    thread.result()
    client = np.asarray(remote.step_marks)
    served = np.load(tmp_path / "marks-session-001.npy")
    assert client.shape == (25, 4) and served.shape == (25, 5)
    start, sent, received, done = client.T
    s_read, s_decoded, s_stepped, s_encoded, s_sent = served.T
    # a message is read after its sender started sending it (not necessarily after its send returned)
    for before, after in ((start, sent), (sent, received), (received, done), (start, s_read), (s_read, s_decoded),
                          (s_decoded, s_stepped), (s_stepped, s_encoded), (s_encoded, s_sent),
                          (s_encoded, received)):
        assert np.all(before <= after)
    assert np.all(done[:-1] <= start[1:]) and np.all(s_sent[:-1] <= s_read[1:])


def test_spin_out_of_range_is_refused():
    with pytest.raises(ValueError, match="spin_s must be between 0 and 1 s, got 2"):
        RemoteSubstructure("127.0.0.1", 9, {}, spin_s=2)
    with pytest.raises(ValueError, match="spin_s must be between 0 and 1 s, got -1"):
        NSServer(lambda setup: None, port=0, spin_s=-1)


def test_non_finite_inputs_are_refused_before_the_wire(peer_thread):
    server, thread, made = start_server(peer_thread)
    with RemoteSubstructure(*server.address, {"dt": 0.01}) as remote:
        with pytest.raises(ValueError, match="feedback must be 1 finite interface force"):
            remote.step([np.inf], 0.0)
        with pytest.raises(ValueError, match="ground_accel must be a finite"):
            remote.step([0.0], np.nan)
        remote.step([0.0], 0.0)  # the session is still good
    thread.result()
    assert made[0][1].steps == 1
