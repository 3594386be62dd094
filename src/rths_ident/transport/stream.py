"""Exact-length reads and complete writes on a connected stream socket.

TCP delivers a byte stream, not messages: one ``recv`` may return part of a message
(seed 000's server script accepts whatever one ``recv`` returns; digest 000 §12.1 warns
that a robust implementation loops until the whole message has arrived). Every codec of
this package reads through :func:`receive_exactly`.
"""

from __future__ import annotations

import socket

from rths_ident.transport.errors import PeerClosedError, TransportError, TransportTimeout


def receive_exactly(sock: socket.socket, nbytes: int, what: str = "message") -> bytes:
    """Read exactly ``nbytes`` from ``sock`` (looping over partial reads).

    Uses the socket's own timeout (``sock.settimeout``) for each read.

    Raises:
        PeerClosedError: the peer closed the connection before ``nbytes`` arrived; the
            message says how many bytes came (0 means it closed between messages).
        TransportTimeout: a read timed out; the message says how many bytes came.
        TransportError: any other socket error.
    """
    if nbytes < 0:
        raise ValueError(f"nbytes must be >= 0, got {nbytes}")
    buffer = bytearray(nbytes)
    view = memoryview(buffer)
    received = 0
    while received < nbytes:
        try:
            count = sock.recv_into(view[received:], nbytes - received)
        except socket.timeout:
            raise TransportTimeout(
                f"timed out after {sock.gettimeout()} s waiting for a {what}: "
                f"{received} of {nbytes} bytes arrived"
            ) from None
        except OSError as exc:
            raise TransportError(
                f"receiving a {what} failed after {received} of {nbytes} bytes: {exc}"
            ) from exc
        if count == 0:
            if received == 0:
                detail = "before any byte of it arrived"
            else:
                detail = f"mid-message: {received} of {nbytes} bytes arrived"
            raise PeerClosedError(f"peer closed the connection while a {what} was expected, {detail}")
        received += count
    return bytes(buffer)


def send_all(sock: socket.socket, data: bytes, what: str = "message") -> None:
    """Send every byte of ``data`` or raise a :class:`TransportError` saying why."""
    try:
        sock.sendall(data)
    except socket.timeout:
        raise TransportTimeout(
            f"timed out after {sock.gettimeout()} s sending a {what} of {len(data)} bytes"
        ) from None
    except (BrokenPipeError, ConnectionResetError) as exc:
        raise PeerClosedError(f"peer closed the connection while a {what} was being sent: {exc}") from exc
    except OSError as exc:
        raise TransportError(f"sending a {what} of {len(data)} bytes failed: {exc}") from exc
