"""The live page's listening sockets, bound in the run's process: a port in use is one
clear error before the run (the page's process then serves them)."""

from __future__ import annotations

from rths_ident.errors import ParameterError

__all__ = ["bind_page_sockets"]


def bind_page_sockets(host: str, port: int) -> list:
    """The page's listening sockets (``port`` 0: any free port), or one clear error."""
    import tornado.netutil  # noqa: PLC0415 - only with --live

    if not (isinstance(port, int) and 0 <= port <= 65535):
        raise ParameterError(f"--live-port {port}: expected a port number 0–65535 (0: any free port)")
    try:
        return tornado.netutil.bind_sockets(port, address=host)
    except OSError as error:
        raise ParameterError(f"--live-host {host} --live-port {port}: cannot serve the live page there "
                             f"({error.strerror or error}); choose another port (--live-port 0: any free one)")
