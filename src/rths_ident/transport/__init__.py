"""Wire codecs and TCP helpers (NumPy and the standard library only).

* :mod:`~rths_ident.transport.seed000` — seed 000's mode: n big-endian float64 per
  message, no header (byte-compatible with the thesis' OpenSeesPy script and Simulink).
* :mod:`~rths_ident.transport.framed` / :mod:`~rths_ident.transport.framed_channel` —
  rths_ident's framed protocol (versioned 14-byte header; byte table in
  ``docs/transport.md``).
* :mod:`~rths_ident.transport.tcp` — :func:`serve` / :func:`connect` on 127.0.0.1 by
  default, TCP_NODELAY, bounded by timeouts.
* :mod:`~rths_ident.transport.openfresco` — the OpenFresco protocol, server role: an
  :class:`ElementServer` that OpenSees' ``genericClient`` element drives (tested against
  OpenSeesPy's own element).
* :mod:`~rths_ident.transport.openfresco_client` — the OpenFresco protocol, client role:
  an :class:`OpenFrescoClient` that drives OpenSees' ``adapter`` element (tested against
  OpenSeesPy's) or an OpenFresco SimApp site server.
* :mod:`~rths_ident.transport.vectors` — every decoded vector must be finite (a NaN/Inf
  is a :class:`ProtocolError` naming the field).
* :mod:`~rths_ident.transport.errors` — :class:`TransportError` and its kinds.
"""

from rths_ident.transport.errors import (
    PeerClosedError,
    ProtocolError,
    RemoteError,
    TransportError,
    TransportTimeout,
)
from rths_ident.transport.framed import Message, MessageType
from rths_ident.transport.framed_channel import FramedChannel
from rths_ident.transport.openfresco import ElementServer, ModelElementSite, OpenFrescoProtocolError
from rths_ident.transport.openfresco_client import OpenFrescoClient
from rths_ident.transport.seed000 import Seed000Channel
from rths_ident.transport.tcp import Listener, connect, serve

__all__ = [
    "ElementServer",
    "FramedChannel",
    "ModelElementSite",
    "OpenFrescoClient",
    "OpenFrescoProtocolError",
    "Listener",
    "Message",
    "MessageType",
    "PeerClosedError",
    "ProtocolError",
    "RemoteError",
    "Seed000Channel",
    "TransportError",
    "TransportTimeout",
    "connect",
    "serve",
]
