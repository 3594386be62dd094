"""Errors of the transport layer.

Every failure on the wire is a :class:`TransportError` (a ``ConnectionError``), so a
caller that only wants to stop safely catches one class. Subclasses say which kind:

* :class:`ProtocolError` — bytes arrived but are not a valid message (wrong magic,
  unsupported version, unknown type, oversized or malformed payload, sequence gap);
* :class:`PeerClosedError` — the peer closed the connection (mid-message or between
  messages);
* :class:`TransportTimeout` — nothing (or not enough) arrived within the timeout;
* :class:`RemoteError` — the peer sent an ERROR message; its text is the message.
"""

from __future__ import annotations


class TransportError(ConnectionError):
    """A connection could not be made or a message could not be exchanged."""


class ProtocolError(TransportError):
    """Bytes arrived that do not form a valid message of the expected protocol."""


class PeerClosedError(TransportError):
    """The peer closed the connection."""


class TransportTimeout(TransportError, TimeoutError):
    """The peer did not connect, send or accept data within the stated timeout."""


class RemoteError(TransportError):
    """The peer reported an error (framed protocol, ERROR message)."""
