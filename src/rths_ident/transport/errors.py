"""Errors of the transport layer.

Every failure on the wire is a :class:`TransportError` (a ``ConnectionError``), so a
caller that only wants to stop safely catches one class. Subclasses say which kind:

* :class:`ProtocolError` — bytes arrived but are not a valid message (wrong magic,
  unsupported version, unknown type, oversized or malformed payload, sequence gap);
* :class:`PeerClosedError` — the peer closed the connection (mid-message or between
  messages);
* :class:`TransportTimeout` — nothing (or not enough) arrived within the timeout;
* :class:`RemoteError` — the peer sent an ERROR message; its text is the message.

Each class carries ``advice``: what the person running the test should do next (the
step-wise engine appends it to the error it reports).
"""

from __future__ import annotations


class TransportError(ConnectionError):
    """A connection could not be made or a message could not be exchanged.

    ``slow_index`` and ``time`` [s] say where in a test it happened, when the raiser
    knows (e.g. :class:`~rths_ident.transport.remote_substructure.RemoteSubstructure`);
    otherwise None."""

    slow_index: int | None = None
    time: float | None = None

    advice = "check that the peer process is running and reachable, then start the test again"


class ProtocolError(TransportError):
    """Bytes arrived that do not form a valid message of the expected protocol."""

    advice = ("the peer sent something this protocol does not allow: check that both ends speak the same "
              "protocol and version (and the same interface size), and look at the peer's own log")


class PeerClosedError(TransportError):
    """The peer closed the connection."""

    advice = "the peer went away: look at its output or record for why it stopped, then start the test again"


class TransportTimeout(TransportError, TimeoutError):
    """The peer did not connect, send or accept data within the stated timeout."""

    advice = ("the peer did not answer in time: check that it is running and not stalled, or allow a longer "
              "timeout")


class RemoteError(TransportError):
    """The peer reported an error (framed protocol, ERROR message)."""

    advice = "the peer failed with the error above: fix it on the peer's side, then start the test again"


class NonFiniteError(ProtocolError):
    """A vector on the wire held a NaN or ±Inf (a diverged peer, garbled bytes):
    ``non_finite`` tells the loop's NS-divergence interlock that it is one."""

    non_finite = True
