"""serve / connect: loopback by default, TCP_NODELAY, clear errors within the timeout."""

from __future__ import annotations

import socket

import pytest

from rths_ident.transport import TransportError, TransportTimeout, connect, serve


def test_serve_binds_loopback_and_connect_sets_nodelay(peer_thread):
    with serve(port=0, timeout_s=5.0) as listener:
        host, port = listener.address
        assert host == "127.0.0.1" and port > 0
        accepted = peer_thread(listener.accept)
        client = connect("127.0.0.1", port, timeout_s=3.0)
        server_side = accepted.result()
        try:
            for sock, timeout in ((client, 3.0), (server_side, 5.0)):
                assert sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) != 0
                assert sock.gettimeout() == timeout
            client.sendall(b"ping")
            assert server_side.recv(4) == b"ping"
        finally:
            client.close()
            server_side.close()


def test_port_in_use():
    with serve(port=0, timeout_s=1.0) as first:
        with pytest.raises(TransportError, match=rf"cannot listen on 127.0.0.1:{first.port}: the port is already in use"):
            serve(port=first.port, timeout_s=1.0)


def test_refused_connection():
    # a bound socket that does not listen: connecting to its port is refused
    with socket.socket() as placeholder:
        placeholder.bind(("127.0.0.1", 0))
        port = placeholder.getsockname()[1]
        with pytest.raises(TransportError, match=rf"connection to 127.0.0.1:{port} refused"):
            connect("127.0.0.1", port, timeout_s=1.0)


def test_peer_never_connects():
    with serve(port=0, timeout_s=0.2) as listener:
        with pytest.raises(TransportTimeout, match=rf"no peer connected to 127.0.0.1:{listener.port} within 0.2 s"):
            listener.accept()


def test_error_is_one_line_and_a_connection_error():
    with serve(port=0, timeout_s=0.1) as listener:
        with pytest.raises(ConnectionError) as info:
            listener.accept()
    assert "\n" not in str(info.value)


def test_bad_host():
    with pytest.raises(TransportError, match="cannot listen on 203.0.113.1"):
        serve(host="203.0.113.1", port=0, timeout_s=0.5)  # TEST-NET-3: not an address of this machine
