"""OpenFresco-compatible wire protocol, server role (digest 003 §7.2; issue 8).

A finite-element program connects to :class:`ElementServer` and drives a *site* (here:
an element model answering trial displacements with resisting forces). The client this
module is tested against is OpenSees' own ``genericClient`` element (shipped in
OpenSeesPy)::

    element('genericClient', tag, '-node', i, j, '-dof', 1, '-dof', 1,
            '-server', port, '127.0.0.1')

Byte layout (read from OpenSees ``GenericClient``/``TCP_Socket`` and checked on the wire
against OpenSeesPy 3.7.1 on x86-64):

* **Setup message**, client → server, once after connecting: 11 C ``int`` (4 bytes
  each) in the client's native byte order (little-endian on x86-64/arm64; OpenSees'
  ``TCP_Socket`` writes raw memory, no conversion), 44 bytes::

      [ctrl_disp, ctrl_vel, ctrl_accel, ctrl_force, ctrl_time,
       daq_disp,  daq_vel,  daq_accel,  daq_force,  daq_time,  data_size]

  ``genericClient`` with ``nb`` basic DOFs sends ``[nb, nb, nb, 0, 1, 0, 0, 0, nb, 0,
  data_size]`` with ``data_size = max(requested (256 by default), 3 nb + 2, nb²)``.
* **Every later message**, both ways: exactly ``data_size`` float64 (native order, 8
  bytes each, ``8·data_size`` bytes; 2048 for the default 256). A request carries the
  command code in element 0 and, for setTrialResponse, the trial response packed from
  element 1 in the order disp, vel, accel, force, time with the ``ctrl_*`` sizes.
  A reply is packed from element 0: a force vector (``nb`` values) or an ``nb × nb``
  matrix in column-major order (OpenSees ``Matrix`` storage); the rest is zero.
* Which commands expect a reply (``genericClient``): getForce (10), getInitialStiff
  (12), getTangentStiff (13), getDamp (14), getMass (15) do; setTrialResponse (3),
  commitState (5) and DIE (99, sent when the element is destroyed, e.g. ``wipe()``) do
  not. A server that never replies leaves OpenSees blocked in ``read``: the client side
  needs its own time limit.

**When the site stops the test** (an actuator limit, a specimen model that fails): the
element protocol has no error reply, and OpenSees' ``genericClient`` waits for a reply
forever — its ``TCP_Socket`` loops on ``read`` even after the server closed — so closing
would leave the client hung. The server therefore brings the site to rest (its
``safe_stop()``, if it has one), then answers every later request that expects a reply
with a frame of NaN: the client's analysis fails at its next solve (Newton's unbalance
is NaN) instead of blocking, and the client ends with DIE or by closing the connection.
:meth:`ElementServer.serve` then raises :class:`SiteStopped` with the site's error. A
client that still sends requests ``stop_grace_s`` after the stop is disconnected.

Every decoded frame must be finite (a NaN/Inf names the field and index). The client
role — rths_ident driving an OpenSees ``adapter`` element or an OpenFresco SimApp server —
is :mod:`rths_ident.transport.openfresco_client`.

The codes are OpenFresco's ``FrescoGlobals.h`` / OpenSees ``GenericClient.h``
``RemoteTest_*`` values. This module depends on NumPy and the standard library only; a
site built on an :mod:`rths_ident.models` model (:class:`ModelElementSite`) imports that
package when it is constructed.
"""

from __future__ import annotations

import socket
import threading
import time
from dataclasses import dataclass, field
from typing import Any, NamedTuple, Protocol

import numpy as np

from rths_ident.transport import tcp
from rths_ident.transport.errors import PeerClosedError, ProtocolError, TransportError, TransportTimeout
from rths_ident.transport.stream import send_all
from rths_ident.transport.vectors import require_finite

__all__ = [
    "OPEN",
    "SETUP",
    "SET_TRIAL_RESPONSE",
    "EXECUTE",
    "COMMIT_STATE",
    "GET_DAQ_RESPONSE",
    "GET_DISP",
    "GET_VEL",
    "GET_ACCEL",
    "GET_FORCE",
    "GET_TIME",
    "GET_INITIAL_STIFF",
    "GET_TANGENT_STIFF",
    "GET_DAMP",
    "GET_MASS",
    "DIE",
    "SiteStopped",
    "COMMAND_NAMES",
    "DEFAULT_DATA_SIZE",
    "SETUP_DTYPE",
    "FRAME_DTYPE",
    "SETUP_LENGTH",
    "SETUP_NBYTES",
    "MAX_DATA_SIZE",
    "OpenFrescoProtocolError",
    "SetupMessage",
    "encode_setup",
    "decode_setup",
    "encode_frame",
    "decode_frame",
    "check_finite",
    "receive_frame_bytes",
    "command_code",
    "ElementSite",
    "ModelElementSite",
    "ElementServer",
]

# -- command codes (OpenFresco FrescoGlobals.h OF_RemoteTest_*, OpenSees RemoteTest_*) --
OPEN = 1
SETUP = 2
SET_TRIAL_RESPONSE = 3
EXECUTE = 4
COMMIT_STATE = 5
GET_DAQ_RESPONSE = 6
GET_DISP = 7
GET_VEL = 8
GET_ACCEL = 9
GET_FORCE = 10
GET_TIME = 11
GET_INITIAL_STIFF = 12
GET_TANGENT_STIFF = 13
GET_DAMP = 14
GET_MASS = 15
DIE = 99

COMMAND_NAMES = {
    OPEN: "open",
    SETUP: "setup",
    SET_TRIAL_RESPONSE: "setTrialResponse",
    EXECUTE: "execute",
    COMMIT_STATE: "commitState",
    GET_DAQ_RESPONSE: "getDaqResponse",
    GET_DISP: "getDisp",
    GET_VEL: "getVel",
    GET_ACCEL: "getAccel",
    GET_FORCE: "getForce",
    GET_TIME: "getTime",
    GET_INITIAL_STIFF: "getInitialStiff",
    GET_TANGENT_STIFF: "getTangentStiff",
    GET_DAMP: "getDamp",
    GET_MASS: "getMass",
    DIE: "DIE",
}

DEFAULT_DATA_SIZE = 256  # OF_Network_dataSize
#: OpenSees writes host memory as is; little-endian on the platforms OpenSeesPy ships for.
SETUP_DTYPE = np.dtype("<i4")
FRAME_DTYPE = np.dtype("<f8")
#: the commands that expect a reply frame (getDaqResponse … getMass)
_REPLY_CODES = frozenset(range(GET_DAQ_RESPONSE, GET_MASS + 1))
SETUP_LENGTH = 11
SETUP_NBYTES = SETUP_LENGTH * SETUP_DTYPE.itemsize  # 44
#: Largest data_size accepted from a peer (a guard against a garbled setup: 8 MiB frames).
MAX_DATA_SIZE = 1 << 20


class OpenFrescoProtocolError(ProtocolError, ValueError):
    """A message that breaks the OpenFresco protocol (what was wrong, and where)."""


class SiteStopped(RuntimeError):
    """The site stopped the test (its error is ``__cause__``); the server brought it to
    rest (``rest``: what the site's safe stop said, or None), told the client by NaN
    replies (module doc) and the client has gone (``how``)."""

    def __init__(self, message: str, rest: str | None = None, how: str = ""):
        super().__init__(message)
        self.rest, self.how = rest, how


class SetupMessage(NamedTuple):
    """The 11-int setup message (sizes of the control and data-acquisition vectors)."""

    ctrl_disp: int
    ctrl_vel: int
    ctrl_accel: int
    ctrl_force: int
    ctrl_time: int
    daq_disp: int
    daq_vel: int
    daq_accel: int
    daq_force: int
    daq_time: int
    data_size: int

    @property
    def ctrl_sizes(self) -> tuple[int, int, int, int, int]:
        return tuple(self[0:5])  # type: ignore[return-value]

    @property
    def daq_sizes(self) -> tuple[int, int, int, int, int]:
        return tuple(self[5:10])  # type: ignore[return-value]

    @classmethod
    def for_generic_client(cls, n_basic: int, data_size: int = DEFAULT_DATA_SIZE):
        """What OpenSees' ``genericClient`` with ``n_basic`` DOFs sends."""
        data_size = max(data_size, 3 * n_basic + 2, n_basic * n_basic)
        return cls(n_basic, n_basic, n_basic, 0, 1, 0, 0, 0, n_basic, 0, data_size)


def encode_setup(setup: SetupMessage) -> bytes:
    """44 bytes: the 11 ints as 4-byte little-endian C ints."""
    values = np.asarray(tuple(setup), dtype=np.int64)
    if values.shape != (SETUP_LENGTH,):
        raise OpenFrescoProtocolError(f"a setup message has {SETUP_LENGTH} ints; got {values.size}")
    return values.astype(SETUP_DTYPE).tobytes()


def decode_setup(data: bytes) -> SetupMessage:
    """Parse and check the 11-int setup message; :class:`OpenFrescoProtocolError` if it
    is not one (wrong length, negative size, data_size out of range or too small for the
    vectors it must carry)."""
    if len(data) != SETUP_NBYTES:
        raise OpenFrescoProtocolError(
            f"setup message must be {SETUP_NBYTES} bytes (11 x 4-byte int); got {len(data)}"
        )
    setup = SetupMessage(*(int(v) for v in np.frombuffer(data, dtype=SETUP_DTYPE)))
    if any(v < 0 for v in setup):
        raise OpenFrescoProtocolError(f"malformed setup message: negative size in {list(setup)}")
    if not 1 <= setup.data_size <= MAX_DATA_SIZE:
        raise OpenFrescoProtocolError(
            f"malformed setup message: data_size {setup.data_size} outside 1..{MAX_DATA_SIZE} "
            f"(ints {list(setup)}; a byte-order mismatch gives values like this)"
        )
    needed_request = 1 + sum(setup.ctrl_sizes)
    needed_reply = max(sum(setup.daq_sizes), 1)
    if setup.data_size < max(needed_request, needed_reply):
        raise OpenFrescoProtocolError(
            f"malformed setup message: data_size {setup.data_size} cannot carry a request of "
            f"{needed_request} or a reply of {needed_reply} values (ints {list(setup)})"
        )
    return setup


def encode_frame(values, data_size: int) -> bytes:
    """``values`` packed from element 0 into a zero-filled frame of ``data_size``
    float64 (``8·data_size`` bytes)."""
    flat = np.asarray(values, dtype=np.float64).ravel()
    if flat.size > data_size:
        raise OpenFrescoProtocolError(
            f"{flat.size} values do not fit a frame of data_size {data_size}"
        )
    frame = np.zeros(data_size, dtype=FRAME_DTYPE)
    frame[: flat.size] = flat
    return frame.tobytes()


def decode_frame(data: bytes, data_size: int, what: str = "frame", *, finite: bool = True) -> np.ndarray:
    """A frame of exactly ``data_size`` float64 as a float64 array (a copy).

    ``finite`` (default): a NaN or ±Inf anywhere is an :class:`OpenFrescoProtocolError`
    naming ``what`` and the element index (vectors on the wire must be finite)."""
    if not 1 <= data_size <= MAX_DATA_SIZE:
        raise OpenFrescoProtocolError(f"{what}: data_size {data_size} outside 1..{MAX_DATA_SIZE}")
    if len(data) != data_size * FRAME_DTYPE.itemsize:
        raise OpenFrescoProtocolError(
            f"{what} must be {data_size * FRAME_DTYPE.itemsize} bytes "
            f"({data_size} float64); got {len(data)}"
        )
    values = np.frombuffer(data, dtype=FRAME_DTYPE).astype(np.float64)
    if finite:
        check_finite(values, what)
    return values


def check_finite(values, field: str) -> None:
    """:class:`OpenFrescoProtocolError` naming ``field`` and the first index that holds
    a NaN or ±Inf."""
    require_finite(np.asarray(values), field, OpenFrescoProtocolError)


def command_code(frame: np.ndarray) -> int:
    """The command code in element 0; an error naming the value if it is not one of the
    known codes."""
    raw = float(frame[0])
    if not np.isfinite(raw) or raw != int(raw) or int(raw) not in COMMAND_NAMES:
        raise OpenFrescoProtocolError(
            f"unknown OpenFresco command code {raw!r} (known: "
            + ", ".join(f"{c} {n}" for c, n in COMMAND_NAMES.items())
            + ")"
        )
    return int(raw)


# -- sites -------------------------------------------------------------------------------
class ElementSite(Protocol):
    """What :class:`ElementServer` drives: the element as the FE client sees it, in the
    client's basic (= selected global) DOFs, ``n_basic`` of them.

    Optional: ``measured_displacement() -> (n_basic,)``, what the site measured at the
    trial (a site with a transfer system); getDisp and getDaqResponse then return it
    instead of the trial displacement the client sent."""

    n_basic: int

    def set_trial(self, displacement, velocity, acceleration, time) -> None: ...
    def force(self) -> np.ndarray: ...  # resisting force at the trial state, (n_basic,)
    def commit(self) -> None: ...
    def initial_stiffness(self) -> np.ndarray: ...  # (n_basic, n_basic)
    def tangent_stiffness(self) -> np.ndarray: ...
    def damping(self) -> np.ndarray: ...
    def mass(self) -> np.ndarray: ...


_COMPILED_STEPS: dict = {}


def _compiled_step(model):
    """``jax.jit(model.step)``, compiled once per model class (an eager step costs ~50 ms,
    longer than a client waits comfortably between two messages)."""
    if model not in _COMPILED_STEPS:
        import jax

        _COMPILED_STEPS[model] = jax.jit(model.step)
    return _COMPILED_STEPS[model]


@dataclass
class ModelElementSite:
    """A 1-D element whose force comes from an :mod:`rths_ident.models` model.

    ``n_basic=2``: two nodes, one DOF each (``-dof 1 -dof 1``); the deformation is
    ``d[1] − d[0]`` and the resisting forces are ``[−F, F]``, stiffness ``k·[[1, −1],
    [−1, 1]]`` (a ``zeroLength`` element's global form). ``n_basic=1``: one node, the
    other end fixed implicitly; deformation ``d[0]``, force ``[F]``.

    Trial calls start from the committed state (``model.step`` is pure); ``commit()``
    keeps the last trial. The velocity passed to the model is the deformation rate the
    client sent; ``dt`` is the client's time since the last commit. Damping and mass are
    zero (the model's force is its restoring force only).
    """

    model: Any  # an rths_ident.models model class (static init/step/tangent)
    params: Any
    n_basic: int = 2
    committed_time: float = 0.0
    history: list = field(default_factory=list)  # (time, deformation, force) per commit

    def __post_init__(self):
        if self.n_basic not in (1, 2):
            raise ValueError(f"ModelElementSite.n_basic must be 1 or 2; got {self.n_basic}")
        from rths_ident.models import ElementInputs  # JAX lives there, not in transport

        self._inputs = ElementInputs
        self._step = _compiled_step(self.model)
        self._state = self.model.init(self.params)
        self._trial_state = self._state
        self._trial_force = 0.0
        self._trial_inputs = ElementInputs(0.0, 0.0)
        self._trial_time = self.committed_time
        self._pattern = np.array([1.0]) if self.n_basic == 1 else np.array([-1.0, 1.0])

    def _deformation(self, values) -> float:
        v = np.asarray(values, dtype=np.float64)
        return float(v[0]) if self.n_basic == 1 else float(v[1] - v[0])

    def set_trial(self, displacement, velocity, acceleration, time) -> None:
        x = self._deformation(displacement)
        v = self._deformation(velocity) if velocity is not None else 0.0
        self._trial_time = float(time) if time is not None else self.committed_time
        dt = self._trial_time - self.committed_time
        self._trial_inputs = self._inputs(np.float64(x), np.float64(v))
        state, force = self._step(self.params, self._state, self._trial_inputs, dt)
        self._trial_state, self._trial_force = state, float(force)

    def force(self) -> np.ndarray:
        return self._pattern * self._trial_force

    def commit(self) -> None:
        self._state = self._trial_state
        self.committed_time = self._trial_time
        self.history.append(
            (self.committed_time, float(self._trial_inputs.displacement), self._trial_force)
        )

    def _stiffness_matrix(self, k: float) -> np.ndarray:
        return k * np.outer(self._pattern, self._pattern)

    def initial_stiffness(self) -> np.ndarray:
        state0 = self.model.init(self.params)
        k0 = float(self.model.tangent(self.params, state0, self._inputs(0.0, 0.0), 0.0))
        return self._stiffness_matrix(k0)

    def tangent_stiffness(self) -> np.ndarray:
        dt = self._trial_time - self.committed_time
        k = float(self.model.tangent(self.params, self._state, self._trial_inputs, dt))
        return self._stiffness_matrix(k)

    def damping(self) -> np.ndarray:
        return np.zeros((self.n_basic, self.n_basic))

    def mass(self) -> np.ndarray:
        return np.zeros((self.n_basic, self.n_basic))


# -- server ------------------------------------------------------------------------------
#: Names of the setTrialResponse parts, in the order of the ctrl sizes.
_CTRL_FIELDS = ("displacement", "velocity", "acceleration", "force", "time")


def _quick_ack(conn: socket.socket) -> None:
    """Acknowledge at once (Linux ``TCP_QUICKACK``; it resets itself, hence per receive).

    OpenSees' ``TCP_Socket`` leaves Nagle's algorithm on and ``genericClient`` writes two
    frames back to back (setTrialResponse, then getForce): with delayed ACKs on our side the
    second frame waits ~40 ms for the ACK of the first, every exchange.
    """
    quickack = getattr(socket, "TCP_QUICKACK", None)
    if quickack is not None:
        try:
            conn.setsockopt(socket.IPPROTO_TCP, quickack, 1)
        except OSError:
            pass


def receive_frame_bytes(conn: socket.socket, nbytes: int, what: str) -> bytes:
    """Exactly ``nbytes`` from ``conn`` (partial reads looped, ``TCP_QUICKACK`` before
    each): :class:`PeerClosedError` if the peer closes first, :class:`TransportTimeout`
    when the socket's timeout passes, :class:`TransportError` on any other socket error."""
    chunks, got = [], 0
    while got < nbytes:
        _quick_ack(conn)
        try:
            chunk = conn.recv(nbytes - got)
        except socket.timeout as exc:
            raise TransportTimeout(
                f"OpenFresco peer sent {got} of {nbytes} bytes of the {what} and then "
                f"nothing within the socket timeout"
            ) from exc
        except ConnectionResetError as exc:
            raise PeerClosedError(
                f"OpenFresco peer reset the connection after {got} of {nbytes} bytes of the {what}"
            ) from exc
        except OSError as exc:
            raise TransportError(f"receiving the OpenFresco {what} failed: {exc}") from exc
        if not chunk:
            raise PeerClosedError(
                f"OpenFresco peer closed the connection after {got} of {nbytes} bytes of "
                f"the {what} (a client stops by sending DIE, code {DIE})"
            )
        chunks.append(chunk)
        got += len(chunk)
    return b"".join(chunks)


_recv_exact = receive_frame_bytes  # the name the first tests use


class ElementServer:
    """Serves one OpenFresco-protocol client (e.g. OpenSees ``genericClient``) on
    ``host:port`` (127.0.0.1 and an OS-chosen port by default) until it sends DIE.

    ``server.address`` is known as soon as the object exists (the socket is bound and
    listening). ``serve()`` runs in the calling thread; ``start()`` runs it in a daemon
    thread and ``join(timeout)`` waits for it and re-raises its error. ``accept_timeout``
    bounds the wait for the client, ``timeout`` every later receive (an analysis step
    between two messages must be shorter). Counts of the commands served are in
    ``server.counts``.

    ``site`` is an :class:`ElementSite`, or a function ``site(setup) -> ElementSite``
    called once the client's :class:`SetupMessage` has arrived (a site whose number of
    basic DOFs follows the client's; ``server.site`` is then set). ``on_command``, if
    given, is called after every command served as ``on_command(code, frame, reply)``
    (``reply`` None when the command has none): the hook for a test record. When the site
    raises (an actuator limit), the server stops the test as the module doc says
    (``stop_grace_s``: how long a client may go on after the stop before it is
    disconnected; default ``timeout``).
    """

    def __init__(
        self,
        site,
        port: int = 0,
        host: str = "127.0.0.1",
        *,
        accept_timeout: float = 30.0,
        timeout: float = 30.0,
        on_command=None,
        stop_grace_s: float | None = None,
    ):
        self._site_for_setup = None if hasattr(site, "n_basic") else site
        self.site = site if self._site_for_setup is None else None
        self.on_command = on_command
        self.timeout = timeout
        self.accept_timeout = accept_timeout
        self.stop_grace_s = timeout if stop_grace_s is None else float(stop_grace_s)
        self.setup: SetupMessage | None = None
        self.counts: dict[str, int] = {}
        self.error: BaseException | None = None
        self._thread: threading.Thread | None = None
        self._listener = tcp.serve(host, port, timeout_s=accept_timeout)
        self.address: tuple[str, int] = self._listener.address

    @property
    def port(self) -> int:
        return self.address[1]

    # -- running --
    def start(self) -> "ElementServer":
        self._thread = threading.Thread(target=self._run_capturing, daemon=True,
                                        name=f"openfresco-server-{self.port}")
        self._thread.start()
        return self

    def _run_capturing(self):
        try:
            self.serve()
        except BaseException as exc:  # re-raised by join()
            self.error = exc

    def join(self, timeout: float | None = None) -> None:
        if self._thread is not None:
            self._thread.join(timeout)
            if self._thread.is_alive():
                self.close()
                raise TransportTimeout(f"OpenFresco server on port {self.port} still running "
                                   f"after {timeout} s")
        if self.error is not None:
            raise self.error

    def close(self) -> None:
        self._listener.close()

    def serve(self) -> None:
        """Accept one client and serve it until DIE; raise on any protocol error."""
        try:
            conn = self._listener.accept()  # TCP_NODELAY on
        except TransportTimeout as exc:
            raise TransportTimeout(f"no OpenFresco client connected: {exc}") from None
        finally:
            self.close()
        with conn:
            conn.settimeout(self.timeout)
            self._serve_connection(conn)

    def _serve_connection(self, conn: socket.socket) -> None:
        setup = decode_setup(receive_frame_bytes(conn, SETUP_NBYTES, "setup message"))
        if self._site_for_setup is not None:
            self.site = self._site_for_setup(setup)
        n = self.site.n_basic
        if setup.ctrl_disp != n:
            raise OpenFrescoProtocolError(
                f"client controls {setup.ctrl_disp} displacements but the site has {n} "
                f"basic DOFs (setup ints {list(setup)})"
            )
        self.setup = setup
        size = setup.data_size
        offsets = np.concatenate([[1], 1 + np.cumsum(setup.ctrl_sizes)])
        site = self.site

        def part(frame, i):
            return frame[offsets[i]: offsets[i + 1]] if setup.ctrl_sizes[i] else None

        def measured_displacement():
            """What the site measured (a site with a transfer system), else the trial."""
            if hasattr(site, "measured_displacement"):
                return np.asarray(site.measured_displacement(), dtype=np.float64)
            return last_trial["disp"]

        last_trial = {"disp": np.zeros(n), "vel": np.zeros(n), "accel": np.zeros(n),
                      "time": 0.0}
        while True:
            frame = decode_frame(receive_frame_bytes(conn, 8 * size, "command frame"), size,
                                 finite=False)
            code = command_code(frame)
            name = COMMAND_NAMES[code]
            self.counts[name] = self.counts.get(name, 0) + 1
            try:
                reply = self._answer(code, name, frame, setup, site, part, measured_displacement, last_trial)
            except (TransportError, OpenFrescoProtocolError):
                raise
            except Exception as exc:  # the site stopped the test: tell the client, then end
                self._stop_the_test(conn, size, exc)
                return
            if code == DIE:
                if self.on_command is not None:
                    self.on_command(code, frame, None)
                return
            if reply is not None:
                reply = np.asarray(reply, dtype=np.float64).ravel()
                send_all(conn, encode_frame(reply, size), what=f"OpenFresco {name} reply")
            if self.on_command is not None:
                self.on_command(code, frame, reply)

    def _answer(self, code, name, frame, setup, site, part, measured_displacement, last_trial):
        """The site's answer to one command (None: the command has no reply)."""
        n = site.n_basic
        reply = None
        if code == SET_TRIAL_RESPONSE:
            for i, field_name in enumerate(_CTRL_FIELDS):
                values = part(frame, i)
                if values is not None:
                    check_finite(values, f"setTrialResponse {field_name}")
            disp, vel, accel = part(frame, 0), part(frame, 1), part(frame, 2)
            t = part(frame, 4)
            time = float(t[0]) if t is not None else None
            site.set_trial(disp, vel, accel, time)
            last_trial.update(disp=disp, vel=vel if vel is not None else np.zeros(n),
                              accel=accel if accel is not None else np.zeros(n),
                              time=time if time is not None else 0.0)
        elif code == COMMIT_STATE:
            site.commit()
        elif code == GET_FORCE:
            reply = site.force()
        elif code == GET_INITIAL_STIFF:
            reply = np.asarray(site.initial_stiffness()).ravel(order="F")
        elif code == GET_TANGENT_STIFF:
            reply = np.asarray(site.tangent_stiffness()).ravel(order="F")
        elif code == GET_DAMP:
            reply = np.asarray(site.damping()).ravel(order="F")
        elif code == GET_MASS:
            reply = np.asarray(site.mass()).ravel(order="F")
        elif code == GET_DISP:
            reply = measured_displacement()
        elif code == GET_VEL:
            reply = last_trial["vel"]
        elif code == GET_ACCEL:
            reply = last_trial["accel"]
        elif code == GET_TIME:
            reply = [last_trial["time"]]
        elif code == GET_DAQ_RESPONSE:
            parts = (measured_displacement(), last_trial["vel"], last_trial["accel"],
                     site.force(), [last_trial["time"]])
            reply = np.concatenate(
                [np.asarray(p, dtype=float)[:k] for p, k in zip(parts, setup.daq_sizes)]
                + [np.zeros(0)]
            )
        elif code == DIE:
            pass
        else:  # OPEN, SETUP, EXECUTE: the OpenFresco site/controller dialects
            raise OpenFrescoProtocolError(
                f"command {code} ({name}) is not served by ElementServer: it speaks the "
                f"element dialect (genericClient / expElement -server)"
            )
        return reply

    def _stop_the_test(self, conn: socket.socket, size: int, error: Exception) -> None:
        """The site raised ``error``: bring it to rest, answer NaN until the client ends,
        raise :class:`SiteStopped` (module doc)."""
        rest = None
        stop = getattr(self.site, "safe_stop", None)
        if stop is not None:
            try:
                rest = str(stop())
            except Exception as exc:  # noqa: BLE001 - reported, never masks the error
                rest = f"bringing the site to rest FAILED ({type(exc).__name__}: {exc})"
        nan_frame = encode_frame(np.full(size, np.nan), size)
        deadline = time.monotonic() + self.stop_grace_s
        answered = 0
        how = ""
        try:
            while True:
                if time.monotonic() > deadline:
                    how = (f"the client still sent requests {self.stop_grace_s:g} s after the stop "
                           f"({answered} answered with NaN): disconnected")
                    break
                data = receive_frame_bytes(conn, 8 * size, "command frame")
                code = int(np.frombuffer(data[:8], dtype=FRAME_DTYPE)[0]) if len(data) >= 8 else -1
                if code == DIE:
                    how = f"the client sent DIE after {answered} NaN replies"
                    break
                if code in _REPLY_CODES:
                    send_all(conn, nan_frame, what="OpenFresco NaN reply (the test stopped)")
                    answered += 1
        except TransportError as exc:
            how = f"the client closed the connection after {answered} NaN replies ({exc})"
        raise SiteStopped(f"{type(error).__name__}: {error}", rest, how) from error
