"""TCP port numbers and ``HOST:PORT`` addresses, checked one way by every option, test-file
field and command that takes one (``--port``, ``--live-port``, ``--dask tcp://…``,
``ns_address``, a rig site's address, a served substructure's address)."""

from __future__ import annotations

__all__ = ["ADDRESS_FORM", "PORT_MAX", "is_port", "parse_address"]

#: the largest TCP port number
PORT_MAX = 65535
#: what an address must look like, as error messages say it
ADDRESS_FORM = f"HOST:PORT with PORT an integer in 1…{PORT_MAX}"


def is_port(value, free_port_allowed: bool = False) -> bool:
    """Whether ``value`` is an integer port 1…65535; with ``free_port_allowed`` 0 too (a
    listening socket bound to port 0 gets a free port from the system)."""
    if not isinstance(value, int) or isinstance(value, bool):
        return False
    return (0 if free_port_allowed else 1) <= value <= PORT_MAX


def parse_address(address: str, default_port: int | None = None) -> tuple[str, int]:
    """``"HOST:PORT"`` (or ``"HOST"`` with a default port) → ``(host, port)``; anything
    else (no host, a port not written in decimal digits, outside 1…65535) is a
    ``ValueError`` saying :data:`ADDRESS_FORM`. An IPv6 host keeps its brackets
    (``"[::1]:8786"`` → ``("[::1]", 8786)``)."""
    host, sep, port_text = str(address).rpartition(":")
    if not sep:
        host, port_text = str(address), "" if default_port is None else str(default_port)
    port = int(port_text) if port_text.isascii() and port_text.isdigit() else -1
    if not host or not is_port(port):
        raise ValueError(f"address {address!r}: expected {ADDRESS_FORM}")
    return host, port
