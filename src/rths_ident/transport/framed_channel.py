"""The framed protocol over a connected stream socket.

Each direction numbers its own messages 0, 1, 2, … (every type counts, heartbeats too);
:meth:`FramedChannel.receive` fails on any gap, so a lost or duplicated message is never
silently absorbed.
"""

from __future__ import annotations

import socket
from typing import Any

import numpy as np

from rths_ident.transport.errors import ProtocolError, RemoteError
from rths_ident.transport.framed import (
    DEFAULT_MAX_PAYLOAD_BYTES,
    HEADER_SIZE,
    Header,
    Message,
    MessageType,
    decode_header,
    decode_payload,
    encode_message,
    encode_vector_message,
    next_sequence,
)
from rths_ident.transport.stream import receive_exactly, send_all


_SENDING = {t: f"{t.name} message" for t in MessageType}


class FramedChannel:
    """Send and receive framed messages on ``sock`` (its timeout applies to each read).

    Args:
        sock: a connected stream socket.
        max_payload_bytes: largest payload accepted from the peer (and sent).
        spin_s: how long [s] each receive first polls without sleeping before it waits
            (:func:`~rths_ident.transport.stream.receive_exactly`; 0: it waits at once).
            A caller may change it between messages.

    ``quiet_until``: a ``time.perf_counter`` time before which the next receive sleeps
    instead of polling (woken at once when bytes arrive), e.g. shortly before the next
    message is due; used once.
    """

    def __init__(self, sock: socket.socket, max_payload_bytes: int = DEFAULT_MAX_PAYLOAD_BYTES,
                 spin_s: float = 0.0):
        self.sock = sock
        self.max_payload_bytes = int(max_payload_bytes)
        self.spin_s = float(spin_s)
        self.quiet_until = 0.0
        self.send_sequence = 0      # number of the next message sent
        self.receive_sequence = 0   # number expected on the next message received

    def send(self, message_type: MessageType, value: Any = None) -> int:
        """Send one message; returns its sequence number."""
        return self.send_frame(message_type, self.frame(message_type, value))

    def frame(self, message_type: MessageType, value: Any = None) -> bytes:
        """The bytes of the next message to send (numbered, not sent: :meth:`send_frame`)."""
        return encode_message(message_type, self.send_sequence, value, self.max_payload_bytes)

    def vector_frame(self, message_type: MessageType, numbers) -> bytes:
        """:meth:`frame` of a vector message from a list or tuple of Python floats
        (the same bytes, packed in one call: :func:`~rths_ident.transport.framed.encode_vector_message`)."""
        return encode_vector_message(message_type, self.send_sequence, numbers)

    def send_frame(self, message_type: MessageType, data: bytes) -> int:
        """Send ``data`` made by :meth:`frame` just before; returns its sequence number."""
        sequence = self.send_sequence
        send_all(self.sock, data, what=_SENDING[message_type])
        self.send_sequence = next_sequence(sequence)
        return sequence

    def receive(self) -> Message:
        """Receive the next message, whatever its type (checks the sequence number)."""
        header, payload = self.receive_frame()
        return Message(header.message_type, header.sequence, decode_payload(header.message_type, payload))

    def receive_frame(self) -> tuple[Header, bytes]:
        """The next message's checked header and its payload bytes, not yet decoded."""
        quiet_until, self.quiet_until = self.quiet_until, 0.0
        header = decode_header(
            receive_exactly(self.sock, HEADER_SIZE, what="framed message header", spin_s=self.spin_s,
                            quiet_until=quiet_until),
            expected_sequence=self.receive_sequence,
            max_payload_bytes=self.max_payload_bytes,
        )
        payload = receive_exactly(
            self.sock,
            header.payload_length,
            what=lambda: f"{header.message_type.name} payload ({header.payload_length} bytes)",
            spin_s=self.spin_s,
        )
        self.receive_sequence = next_sequence(header.sequence)
        return header, payload

    def receive_expect(self, *message_types: MessageType) -> Message:
        """The next message of one of ``message_types``, skipping heartbeats.

        Raises:
            RemoteError: the peer sent ERROR (its text is the error message).
            ProtocolError: another type arrived.
        """
        wanted = {MessageType(t) for t in message_types}
        while True:
            message = self.receive()
            if message.message_type in wanted:
                return message
            if message.message_type is MessageType.HEARTBEAT:
                continue
            if message.message_type is MessageType.ERROR:
                raise RemoteError(f"peer reported an error: {message.value}")
            names = " or ".join(sorted(t.name for t in wanted))
            raise ProtocolError(
                f"message type: expected {names}, got {message.message_type.name} "
                f"(sequence number {message.sequence})"
            )

    def receive_vector(self, message_type: MessageType) -> np.ndarray:
        """The float64 vector of the next ``message_type`` message (heartbeats skipped)."""
        return self.receive_expect(message_type).value

    def close(self) -> None:
        self.sock.close()

    def __enter__(self) -> FramedChannel:
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()
