"""Seed 000's wire mode: n IEEE-754 float64 values, big-endian, no header.

This is the format of Mera Muñoz (2022)'s OpenSeesPy server script and Simulink TCP
blocks (digest 000 §7, §12.1): each message is ``n`` doubles packed as
``struct.pack('>d', x)`` one after the other (8·n bytes), nothing else — no header, no
command word, no termination message. The thesis used n = 1 (force in, displacement
out); more interface DOFs are the same format with a larger n, which both ends must
agree on beforehand (nothing on the wire says n).

Unlike the thesis' script (which takes whatever one ``recv(4096)`` returns and uses 0
when it is not exactly 8 bytes), :meth:`Seed000Channel.receive` reads until all 8·n bytes
have arrived, and fails with a clear error on end-of-stream or timeout.
"""

from __future__ import annotations

import socket

import numpy as np

from rths_ident.transport.errors import ProtocolError
from rths_ident.transport.vectors import require_finite
from rths_ident.transport.stream import receive_exactly, send_all

#: NumPy dtype of one value on the wire: IEEE-754 binary64, big-endian.
WIRE_DTYPE = np.dtype(">f8")
#: Bytes per value.
VALUE_SIZE = WIRE_DTYPE.itemsize


def _check_count(n: int) -> int:
    n = int(n)
    if n < 1:
        raise ValueError(f"seed 000 messages carry n >= 1 values, got n = {n}")
    return n


def encode(values, n: int | None = None) -> bytes:
    """Pack ``values`` (a scalar or a 1-D array) as big-endian float64.

    If ``n`` is given, the number of values must equal it.
    """
    array = np.asarray(values, dtype=np.float64)
    if array.ndim > 1:
        raise ValueError(f"seed 000 messages are 1-D vectors, got shape {array.shape}")
    array = array.reshape(-1)
    count = _check_count(array.size)
    if n is not None and count != _check_count(n):
        raise ValueError(f"seed 000 message: expected {n} values, got {count}")
    return array.astype(WIRE_DTYPE).tobytes()


def decode(data: bytes, n: int) -> np.ndarray:
    """Unpack ``n`` big-endian float64 values from exactly 8·n bytes.

    Returns a native-endian ``float64`` array of shape ``(n,)``.
    """
    n = _check_count(n)
    expected = n * VALUE_SIZE
    if len(data) != expected:
        raise ProtocolError(
            f"seed 000 message length: expected {expected} bytes ({n} float64), got {len(data)}"
        )
    return require_finite(np.frombuffer(data, dtype=WIRE_DTYPE).astype(np.float64), "seed 000 message")


class Seed000Channel:
    """Seed 000's wire mode over a connected stream socket.

    Args:
        sock: a connected socket (its timeout applies to every read and write).
        n: values per message (the interface size both ends agreed on; 1 in the thesis).
        n_send: values per outgoing message when it differs from incoming (default ``n``).
    """

    def __init__(self, sock: socket.socket, n: int = 1, n_send: int | None = None):
        self.sock = sock
        self.n_receive = _check_count(n)
        self.n_send = _check_count(n if n_send is None else n_send)

    def send(self, values) -> None:
        """Send one message of ``n_send`` values."""
        send_all(self.sock, encode(values, self.n_send), what="seed 000 message")

    def receive(self) -> np.ndarray:
        """Receive one message; returns a float64 array of shape ``(n,)``."""
        data = receive_exactly(
            self.sock,
            self.n_receive * VALUE_SIZE,
            what=f"seed 000 message ({self.n_receive} float64, {self.n_receive * VALUE_SIZE} bytes)",
        )
        return decode(data, self.n_receive)

    def close(self) -> None:
        self.sock.close()

    def __enter__(self) -> Seed000Channel:
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()
