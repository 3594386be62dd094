"""TCP ports and HOST:PORT addresses: the one check behind --port, --live-port, --dask,
ns_address and a rig site's address."""

import socket

import pytest

from rths_ident.tcp_ports import PORT_MAX, is_port, parse_address


def test_the_largest_port_is_the_one_the_system_binds():
    # a port number is 16 bits on the wire: the socket layer itself refuses one past the largest
    with socket.socket() as s, pytest.raises(OverflowError):
        s.bind(("127.0.0.1", PORT_MAX + 1))
    assert is_port(PORT_MAX) and not is_port(PORT_MAX + 1)


def test_port_zero_only_where_the_system_may_pick_a_free_one():
    assert not is_port(0) and is_port(0, free_port_allowed=True)
    assert not is_port(-1, free_port_allowed=True)
    assert not is_port(True) and not is_port(8080.0) and not is_port("8080")


def test_parse_address():
    assert parse_address("127.0.0.1:8091") == ("127.0.0.1", 8091)
    assert parse_address("localhost", default_port=8090) == ("localhost", 8090)
    assert parse_address("[::1]:8786") == ("[::1]", 8786)
    for bad in ("127.0.0.1:x", "127.0.0.1:0", ":80", "host:70000", "host:+80", "host: 80", "host:８０", "host"):
        with pytest.raises(ValueError, match=r"HOST:PORT with PORT an integer in 1…65535"):
            parse_address(bad)
