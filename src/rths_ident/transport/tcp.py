"""TCP helpers: a listening server and a client connection, with clear one-line errors.

Both ends bind or connect to 127.0.0.1 unless told otherwise, turn Nagle's algorithm off
(``TCP_NODELAY``: a small message per slow step must not wait for the next one), and put
``timeout_s`` on the connected socket, so every read and write is bounded.

A port already in use, a refused connection, or a peer that never connects raise
:class:`~rths_ident.transport.errors.TransportError` within ``timeout_s``.
"""

from __future__ import annotations

import errno
import socket

from rths_ident.transport.errors import TransportError, TransportTimeout

#: Default timeout [s] for connecting, accepting and each read/write.
DEFAULT_TIMEOUT_S = 10.0


def _configure(sock: socket.socket, timeout_s: float) -> socket.socket:
    sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    sock.settimeout(timeout_s)
    return sock


class Listener:
    """A bound, listening TCP socket; :meth:`accept` waits for one peer.

    Use :func:`serve` to make one. ``address`` is the ``(host, port)`` actually bound
    (the real port when 0 was asked for).
    """

    def __init__(self, sock: socket.socket, timeout_s: float):
        self.sock = sock
        self.timeout_s = timeout_s
        self.address: tuple[str, int] = sock.getsockname()[:2]

    @property
    def port(self) -> int:
        return self.address[1]

    def accept(self, timeout_s: float | None = None) -> socket.socket:
        """Wait for a peer; returns the connected socket (TCP_NODELAY, timeout set).

        Raises:
            TransportTimeout: no peer connected within ``timeout_s`` (default: the
                listener's).
        """
        timeout = self.timeout_s if timeout_s is None else timeout_s
        self.sock.settimeout(timeout)
        host, port = self.address
        try:
            conn, _ = self.sock.accept()
        except socket.timeout:
            raise TransportTimeout(
                f"no peer connected to {host}:{port} within {timeout} s — start the client, "
                "or check its host and port"
            ) from None
        except OSError as exc:
            raise TransportError(f"accepting a connection on {host}:{port} failed: {exc}") from exc
        return _configure(conn, self.timeout_s)

    def close(self) -> None:
        self.sock.close()

    def __enter__(self) -> Listener:
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()


def serve(host: str = "127.0.0.1", port: int = 0, timeout_s: float = DEFAULT_TIMEOUT_S) -> Listener:
    """Bind ``host:port`` and listen for one peer (port 0: the system picks one).

    Raises:
        TransportError: the port is in use, or the address cannot be bound.
    """
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        sock.listen(1)
    except OSError as exc:
        sock.close()
        if exc.errno == errno.EADDRINUSE:
            raise TransportError(
                f"cannot listen on {host}:{port}: the port is already in use — stop the other "
                "server or choose another port (0 picks a free one)"
            ) from None
        raise TransportError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    return Listener(sock, timeout_s)


def connect(host: str, port: int, timeout_s: float = DEFAULT_TIMEOUT_S) -> socket.socket:
    """Connect to ``host:port``; returns the socket (TCP_NODELAY, timeout set).

    Raises:
        TransportError: the connection was refused (no server there) or failed.
        TransportTimeout: the server did not answer within ``timeout_s``.
    """
    try:
        sock = socket.create_connection((host, port), timeout=timeout_s)
    except socket.timeout:
        raise TransportTimeout(f"connecting to {host}:{port} timed out after {timeout_s} s") from None
    except ConnectionRefusedError:
        raise TransportError(
            f"connection to {host}:{port} refused — is the server running and listening on that port?"
        ) from None
    except OSError as exc:
        raise TransportError(f"cannot connect to {host}:{port}: {exc.strerror or exc}") from None
    return _configure(sock, timeout_s)
