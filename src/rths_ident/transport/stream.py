"""Exact-length reads and complete writes on a connected stream socket.

TCP delivers a byte stream, not messages: one ``recv`` may return part of a message
(seed 000's server script accepts whatever one ``recv`` returns; digest 000 §12.1 warns
that a robust implementation loops until the whole message has arrived). Every codec of
this package reads through :func:`receive_exactly`.

Busy-polling. A thread woken by the kernel when bytes arrive starts late: on a virtual
machine a sleeping CPU takes tens to hundreds of µs to wake. A loop on a dedicated real-time
core instead spins on a non-blocking ``recv`` while a reply is imminent;
``receive_exactly(…, spin_s=…)`` does that for at most ``spin_s`` seconds, then waits as
usual (the socket's timeout per read). The bytes returned are the same either way.
A thread that polls all the time at a real-time priority is stopped by the kernel for
the rest of a second once it has used 95 % of it (Linux's real-time throttling,
``sched_rt_runtime_us``): with ``quiet_until`` a reader that knows when the bytes are
due sleeps until shortly before (woken at once if they come earlier), then polls.
"""

from __future__ import annotations

import select
import socket
import time

from typing import Callable, Union

from rths_ident.transport.errors import PeerClosedError, TransportError, TransportTimeout

#: what a read is for, in its errors: a text, or a function that makes it (only on an error)
What = Union[str, Callable[[], str]]


def _text(what: What) -> str:
    return what() if callable(what) else what


def receive_exactly(sock: socket.socket, nbytes: int, what: What = "message", spin_s: float = 0.0,
                    quiet_until: float = 0.0) -> bytes:
    """Read exactly ``nbytes`` from ``sock`` (looping over partial reads).

    For the first ``spin_s`` seconds [s] (0: not at all) it polls without sleeping
    (module doc); after that, or once the bytes are in, it uses the socket's own timeout
    (``sock.settimeout``) for each read. A read therefore times out after at most
    ``spin_s`` plus the socket's timeout. With ``spin_s`` > 0 and ``quiet_until`` (a
    ``time.perf_counter`` time) still ahead, it first sleeps until then or until bytes
    arrive, whichever comes first (module doc).

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
    if spin_s > 0:
        _wait_quietly(sock, quiet_until - time.perf_counter())
        received = _spin_into(sock, view, nbytes, spin_s, what)
    else:
        received = 0
    while received < nbytes:
        try:
            received += _read_into(sock, view, received, nbytes, what)
        except socket.timeout:
            raise TransportTimeout(
                f"timed out after {sock.gettimeout()} s waiting for a {_text(what)}: "
                f"{received} of {nbytes} bytes arrived"
            ) from None
    return bytes(buffer)


def _read_into(sock: socket.socket, view: memoryview, received: int, nbytes: int, what: What) -> int:
    """One read into ``view[received:nbytes]``; the number of bytes read (> 0). A timeout,
    or nothing there on a non-blocking socket, passes through for the caller."""
    try:
        count = sock.recv_into(view[received:], nbytes - received)
    except (socket.timeout, BlockingIOError):
        raise
    except OSError as exc:
        raise TransportError(f"receiving a {_text(what)} failed after {received} of {nbytes} bytes: {exc}") from exc
    if count == 0:
        detail = "before any byte of it arrived" if received == 0 else \
            f"mid-message: {received} of {nbytes} bytes arrived"
        raise PeerClosedError(f"peer closed the connection while a {_text(what)} was expected, {detail}")
    return count


def _wait_quietly(sock: socket.socket, seconds: float) -> None:
    """Sleep up to ``seconds`` [s] (µs resolution), less if ``sock`` becomes readable."""
    if seconds <= 0:
        return
    try:
        select.select((sock,), (), (), seconds)
    except (ValueError, OSError):  # a descriptor select cannot watch, or a closed one: the reads say what is wrong
        pass


def _spin_into(sock: socket.socket, view: memoryview, nbytes: int, spin_s: float, what: What) -> int:
    """Fill ``view`` from ``sock`` with non-blocking reads for at most ``spin_s`` [s];
    returns the number of bytes read (errors as :func:`receive_exactly` raises them)."""
    timeout = sock.gettimeout()
    sock.settimeout(0.0)
    clock = time.perf_counter
    deadline = clock() + spin_s
    received = 0
    try:
        while received < nbytes:
            try:
                received += _read_into(sock, view, received, nbytes, what)
            except BlockingIOError:  # nothing there yet
                if clock() >= deadline:
                    break
    finally:
        sock.settimeout(timeout)
    return received


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
