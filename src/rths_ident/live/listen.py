"""The live page's listening sockets, bound in the run's process: a port in use is one
clear error before the run (the page's process then serves them)."""

from __future__ import annotations

from rths_ident.errors import ParameterError
from rths_ident.tcp_ports import PORT_MAX, is_port

__all__ = ["bind_page_sockets"]


def bind_page_sockets(host: str, port: int) -> list:
    """The page's listening sockets (``port`` 0: any free port), or one clear error."""
    import tornado.netutil  # noqa: PLC0415 - only with --live

    if not is_port(port, free_port_allowed=True):
        raise ParameterError(f"--live-port {port}: expected a port number 0…{PORT_MAX} (0: any free port)")
    try:
        return tornado.netutil.bind_sockets(port, address=host)
    except OSError as error:
        raise ParameterError(f"--live-host {host} --live-port {port}: cannot serve the live page there "
                             f"({error.strerror or error}); choose another port (--live-port 0: any free one)")
