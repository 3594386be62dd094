"""OpenFresco-compatible wire protocol, client role (digest 003 §7.4; issue 8).

:class:`OpenFrescoClient` drives an *element server* — a process that owns a specimen
(simulated or physical) and answers trial displacements with the displacement and
force it measured — in one of two dialects:

``"adapter"`` (OpenSees ``element adapter``, OpenFresco's ``ECSimFEAdapter``)
    Tested against the real thing: OpenSeesPy's ``adapter`` element
    (``tests/transport/test_openfresco_client.py``). Setup ``[n, 0, 0, 0, 0, n, 0, 0,
    n, 0, data_size]``; per step ``[3, d(1..n)]`` (setTrialResponse) then ``[10]``
    (getForce), reply ``[daqDisp(1..n), daqForce(1..n)]`` from index 0; ``[99]`` ends
    the session. Read from OpenSees ``Adapter.cpp``: the adapter is a TCP *server*
    (``TCP_Socket(ipPort)``, bound to every interface) that sets itself up on the first
    ``update()`` of the analysis it lives in, i.e. the adapter's process must be running
    an analysis loop (``analyze(1)`` repeatedly, static ``LoadControl`` in seed 003's
    ``ServerCol1_Adapter.tcl``). Each analysis step whose domain time advanced receives
    one frame in ``getResistingForce``: if it is getForce it first replies with the
    *previous* step's converged ``[db, −q]`` (``q = k_b (db − ctrlDisp)``, the penalty
    spring), then receives again; that frame must be setTrialResponse, whose
    displacement becomes the new ``ctrlDisp`` the step converges to. So the reply to
    ``[3, d_i], [10]`` is the response at ``d_i``, one analysis step behind. Any other
    code ends the process: ``exit(-1)`` after printing "The Simulation has successfully
    completed." for DIE (99) — the server process exits with status 255, normally.
    ``daqDisp`` is the adapter node's displacement ``db = ctrlDisp − F/k_b`` (not the
    command) and ``daqForce = k_b (ctrlDisp − db)`` the specimen's restoring force.

``"simapp"`` (OpenFresco ``startSimAppSiteServer``, the repo's ``SFun_GenericClient``)
    Setup ``[n, n, n, 0, 1, n, 0, 0, n, 0, data_size]``; per step ``[5, …]``
    (commitState of the previous step, carrying the previous trial so that the time
    sits where ``SimAppSiteServer`` reads it), ``[3, d, v, a, t]``, ``[6]``
    (getDaqResponse), reply ``[daqDisp(1..n), daqForce(1..n)]`` from index 0; at the end
    ``[5, …]`` and ``[99]``. Byte behaviour read from OpenFresco 2.7's
    ``OPF_startSimAppSiteServer`` (no reply to 1, 2, 3, 5, 99; the getDaqResponse reply
    packs disp, vel, accel, force, time with the daq sizes). OpenFresco is not part of
    OpenSeesPy, so this dialect is tested against rths_ident's own
    :class:`~rths_ident.transport.openfresco.ElementServer` (``rths-ident serve site``),
    whose element protocol is itself tested against OpenSees' ``genericClient``; it has
    not been run against a real OpenFresco server.

Byte layout: the 11-int setup is 4-byte little-endian C ints, frames are ``data_size``
little-endian float64 (see :mod:`~rths_ident.transport.openfresco`). Replies are checked:
the right length, finite values (a NaN/Inf names the field), or
:class:`~rths_ident.transport.openfresco.OpenFrescoProtocolError`.
"""

from __future__ import annotations

import socket
import time
from typing import NamedTuple

import numpy as np

from rths_ident.transport import tcp
from rths_ident.transport.errors import RemoteError, TransportError, TransportTimeout
from rths_ident.transport.openfresco import (
    COMMIT_STATE,
    DEFAULT_DATA_SIZE,
    DIE,
    GET_DAQ_RESPONSE,
    GET_FORCE,
    MAX_DATA_SIZE,
    SET_TRIAL_RESPONSE,
    OpenFrescoProtocolError,
    SetupMessage,
    decode_frame,
    encode_frame,
    encode_setup,
    receive_frame_bytes,
)
from rths_ident.transport.stream import send_all

__all__ = ["DIALECTS", "DaqReading", "OpenFrescoClient", "decode_daq_reply", "setup_for_dialect"]

#: The dialects :class:`OpenFrescoClient` speaks (module doc).
DIALECTS = ("adapter", "simapp")


class DaqReading(NamedTuple):
    """What the element server measured for one step, in its basic DOFs (SI)."""

    displacement: np.ndarray  # (n,) daqDisp [m]
    force: np.ndarray  # (n,) daqForce: the specimen's restoring force [N]


def setup_for_dialect(dialect: str, n_dof: int, data_size: int = DEFAULT_DATA_SIZE) -> SetupMessage:
    """The 11-int setup message a client of ``dialect`` with ``n_dof`` basic DOFs sends."""
    if dialect not in DIALECTS:
        raise ValueError(f"dialect must be one of {', '.join(DIALECTS)}; got {dialect!r}")
    n = int(n_dof)
    if n < 1:
        raise ValueError(f"n_dof must be >= 1; got {n_dof}")
    if dialect == "adapter":
        needed = 1 + n  # [code, ctrlDisp]
        return SetupMessage(n, 0, 0, 0, 0, n, 0, 0, n, 0, max(int(data_size), needed, 2 * n))
    needed = 1 + 3 * n + 1  # [code, disp, vel, accel, time]
    return SetupMessage(n, n, n, 0, 1, n, 0, 0, n, 0, max(int(data_size), needed, 2 * n))


def decode_daq_reply(data: bytes, data_size: int, n_dof: int) -> DaqReading:
    """The ``[daqDisp(1..n), daqForce(1..n)]`` reply (from index 0) of one frame; a
    frame of NaN only is an element server that stopped the test
    (:class:`~rths_ident.transport.errors.RemoteError`)."""
    raw = decode_frame(data, data_size, what="element server reply", finite=False)
    if np.all(np.isnan(raw)):
        raise RemoteError("the element server stopped the test (it answers NaN after a fault on its side, e.g. an "
                          "actuator limit): see its output and its record")
    frame = decode_frame(data, data_size, what="element server reply")
    if 2 * n_dof > data_size:
        raise OpenFrescoProtocolError(
            f"a reply of data_size {data_size} cannot carry {n_dof} displacements and {n_dof} forces")
    return DaqReading(frame[:n_dof].copy(), frame[n_dof: 2 * n_dof].copy())


class OpenFrescoClient:
    """Drives an OpenFresco-protocol element server over a connected socket.

    Use :meth:`connect` to open one. ``step(displacement)`` imposes the trial
    displacement (n values, metres, the server's basic DOFs) and returns the
    :class:`DaqReading` the server measured there; ``close()`` ends the session (DIE)
    and closes the socket. Every exchange is bounded by the socket's timeout.
    """

    def __init__(self, sock: socket.socket, n_dof: int, dialect: str = "adapter",
                 data_size: int = DEFAULT_DATA_SIZE):
        self.setup = setup_for_dialect(dialect, n_dof, data_size)
        if self.setup.data_size > MAX_DATA_SIZE:
            raise ValueError(f"data_size must be <= {MAX_DATA_SIZE}; got {self.setup.data_size}")
        self.sock = sock
        self.n_dof = int(n_dof)
        self.dialect = dialect
        self.data_size = self.setup.data_size
        self.steps = 0
        self._last_trial: np.ndarray | None = None  # simapp: payload of the last setTrialResponse
        self._closed = False
        send_all(sock, encode_setup(self.setup), what="OpenFresco setup message")

    @classmethod
    def connect(cls, host: str, port: int, n_dof: int, dialect: str = "adapter", *,
                data_size: int = DEFAULT_DATA_SIZE, timeout_s: float = tcp.DEFAULT_TIMEOUT_S,
                wait_for_server_s: float = 0.0) -> "OpenFrescoClient":
        """Connect to ``host:port`` and send the setup message.

        ``wait_for_server_s`` > 0 retries a refused connection for that long (an
        OpenSees adapter listens only once its analysis has started); the last error is
        raised after it. ``timeout_s`` bounds the connection and every later exchange.
        """
        deadline = time.monotonic() + max(0.0, wait_for_server_s)
        while True:
            try:
                sock = tcp.connect(host, port, timeout_s=timeout_s)
                break
            except TransportTimeout:
                raise
            except TransportError as exc:
                if time.monotonic() >= deadline:
                    if wait_for_server_s > 0:
                        raise TransportError(f"{exc} (retried for {wait_for_server_s} s)") from None
                    raise
                time.sleep(0.05)
        try:
            return cls(sock, n_dof, dialect, data_size)
        except BaseException:
            sock.close()
            raise

    def _send(self, values, what: str) -> None:
        send_all(self.sock, encode_frame(values, self.data_size), what=f"OpenFresco {what} frame")

    def _receive_reply(self) -> DaqReading:
        data = receive_frame_bytes(self.sock, 8 * self.data_size, "element server reply")
        return decode_daq_reply(data, self.data_size, self.n_dof)

    def step(self, displacement, velocity=None, acceleration=None, time: float | None = None) -> DaqReading:
        """Impose ``displacement`` (n,) [m] and return what the server measured.

        ``velocity``/``acceleration`` [m/s, m/s²] and ``time`` [s] travel in the simapp
        dialect only (zeros and the step count if not given); the adapter element reads
        the displacement alone.
        """
        if self._closed:
            raise TransportError("OpenFresco client is closed")
        d = self._vector(displacement, "displacement")
        if self.dialect == "adapter":
            self._send(np.concatenate([[SET_TRIAL_RESPONSE], d]), "setTrialResponse")
            self._send([GET_FORCE], "getForce")
        else:
            v = np.zeros(self.n_dof) if velocity is None else self._vector(velocity, "velocity")
            a = np.zeros(self.n_dof) if acceleration is None else self._vector(acceleration, "acceleration")
            t = float(self.steps + 1) if time is None else float(time)
            if self._last_trial is not None:  # the previous step is final: commit it
                self._send(np.concatenate([[COMMIT_STATE], self._last_trial]), "commitState")
            self._last_trial = np.concatenate([d, v, a, [t]])
            self._send(np.concatenate([[SET_TRIAL_RESPONSE], self._last_trial]), "setTrialResponse")
            self._send([GET_DAQ_RESPONSE], "getDaqResponse")
        reading = self._receive_reply()
        self.steps += 1
        return reading

    def _vector(self, values, name: str) -> np.ndarray:
        v = np.asarray(values, dtype=np.float64).reshape(-1)
        if v.shape != (self.n_dof,):
            raise ValueError(f"{name} must have {self.n_dof} values (the server's basic DOFs); got {v.size}")
        if not np.all(np.isfinite(v)):
            raise ValueError(f"{name} must be finite; got {v.tolist()}")
        return v

    def close(self) -> None:
        """End the session: commit the last step (simapp), send DIE, close the socket."""
        if self._closed:
            return
        self._closed = True
        try:
            if self.dialect == "simapp" and self._last_trial is not None:
                self._send(np.concatenate([[COMMIT_STATE], self._last_trial]), "commitState")
            self._send([DIE], "DIE")
        finally:
            self.sock.close()

    def __enter__(self) -> "OpenFrescoClient":
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()
