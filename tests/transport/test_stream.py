"""receive_exactly: polling first (``spin_s``, after a quiet wait) returns the same bytes
as a blocking read from a plain socket peer, whether the bytes arrive while it polls or
after it gave up;
a silent peer times out with the designed message, the socket's own timeout restored;
a peer that closes while it polls is a PeerClosedError saying how many bytes came."""

from __future__ import annotations

import os
import socket
import threading
import time

import pytest

from rths_ident.transport import PeerClosedError, TransportTimeout
from rths_ident.transport.stream import receive_exactly

MESSAGE = os.urandom(118) + bytes(range(256)) * 3  # 886 bytes: several reads' worth when fed in pieces


def _tcp_pair(timeout_s: float = 5.0):
    listener = socket.create_server(("127.0.0.1", 0))
    listener.settimeout(5.0)
    client = socket.create_connection(listener.getsockname()[:2], timeout=5.0)
    server, _ = listener.accept()
    listener.close()
    client.settimeout(timeout_s)
    server.settimeout(5.0)
    return client, server


def _feed(sock: socket.socket, pieces, release: threading.Event | None = None) -> threading.Thread:
    """A plain peer: sends ``pieces`` one after the other (after ``release``, if given)."""
    def run():
        if release is not None:
            release.wait(5.0)
        for piece in pieces:
            sock.sendall(piece)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread


@pytest.mark.parametrize("spin_s", [0.0, 1e-6, 2.0])
@pytest.mark.parametrize("pieces", [1, 7])
@pytest.mark.parametrize("quiet_s", [0.0, 0.05, 30.0])  # 30 s: the bytes wake the quiet wait
def test_polled_and_blocking_reads_return_the_bytes_sent(spin_s, pieces, quiet_s):
    client, server = _tcp_pair()
    try:
        size = -(-len(MESSAGE) // pieces)
        chunks = [MESSAGE[i:i + size] for i in range(0, len(MESSAGE), size)]
        feeder = _feed(server, chunks)
        quiet_until = time.perf_counter() + quiet_s
        assert receive_exactly(client, len(MESSAGE), spin_s=spin_s, quiet_until=quiet_until) == MESSAGE
        feeder.join(5.0)
        assert client.gettimeout() == 5.0  # the socket's own timeout, as it was
    finally:
        client.close()
        server.close()


def test_bytes_that_arrive_after_the_poll_gave_up_are_read_blocking():
    """The peer sends only once the reader has stopped polling (it polls 1 µs, the
    peer waits for a reader that has already started its blocking read)."""
    client, server = _tcp_pair()
    release = threading.Event()
    try:
        feeder = _feed(server, [MESSAGE[:5], MESSAGE[5:]], release)
        reading = []
        reader = threading.Thread(target=lambda: reading.append(receive_exactly(client, len(MESSAGE), spin_s=1e-6)),
                                  daemon=True)
        reader.start()
        reader.join(0.05)  # the 1 µs poll is long over: the reader blocks in recv
        release.set()
        reader.join(5.0)
        feeder.join(5.0)
        assert reading == [MESSAGE]
    finally:
        client.close()
        server.close()


@pytest.mark.parametrize("sent", [0, 3])
def test_a_silent_peer_times_out_after_the_poll_and_the_socket_timeout(sent):
    client, server = _tcp_pair(timeout_s=0.2)
    try:
        server.sendall(MESSAGE[:sent])
        with pytest.raises(TransportTimeout, match=rf"^timed out after 0.2 s waiting for a reply: {sent} of 10 bytes "
                                                   r"arrived$"):
            receive_exactly(client, 10, what="reply", spin_s=0.05)
        assert client.gettimeout() == 0.2
    finally:
        client.close()
        server.close()


@pytest.mark.parametrize("sent, detail", [(0, "before any byte of it arrived"),
                                          (3, "mid-message: 3 of 10 bytes arrived")])
def test_a_peer_that_closes_while_polled_is_a_peer_closed_error(sent, detail):
    """The peer closes while the reader polls (a 5 s poll: the close comes first)."""
    client, server = _tcp_pair()
    try:
        server.sendall(MESSAGE[:sent])
        server.close()
        with pytest.raises(PeerClosedError,
                           match=rf"^peer closed the connection while a reply was expected, {detail}$"):
            receive_exactly(client, 10, what=lambda: "reply", spin_s=5.0)
        assert client.gettimeout() == 5.0
    finally:
        client.close()
