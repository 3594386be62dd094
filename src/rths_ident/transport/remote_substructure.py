"""A numerical substructure in another process, behind the substructure protocol.

:class:`RemoteSubstructure` is the client of an :class:`~rths_ident.transport.ns_server.NSServer`
(framed wire; session protocol in :mod:`~rths_ident.transport.ns_messages`). It
implements the :class:`~rths_ident.structures.numerical_substructure.NumericalSubstructure`
protocol — ``dt``, ``n_interface``, ``initial_target()``, ``step(feedback, ground_accel)
-> (target, log)``, ``apply_parameters(θ̂)``, ``close()`` — so the step-wise engine
drives it like an NS in this process, and returns the same numbers: float64 crosses the
wire unchanged, the log comes back with its names, shapes and dtypes.

Errors. Every failure is a :class:`~rths_ident.transport.errors.TransportError` whose
message names the server, the slow step and the test time, and which carries them as
``.slow_index`` and ``.time`` [s] (``None`` before the first step): the server's
exception text arrives as a :class:`RemoteError`; a server that dies mid-test gives a
:class:`PeerClosedError`; one that stops answering a :class:`TransportTimeout`. After a
failure the session is over: further calls raise.
"""

from __future__ import annotations

import math
import re
import time as _time

import numpy as np

from rths_ident.transport import ns_messages as nsm
from rths_ident.transport.errors import ProtocolError, RemoteError, TransportError
from rths_ident.transport.framed import Message, MessageType, decode_payload
from rths_ident.transport.framed_channel import FramedChannel
from rths_ident.transport.tcp import connect

#: default time limits [s]: connecting, the server building its model, one slow step
CONNECT_TIMEOUT_S = 10.0
SETUP_TIMEOUT_S = 120.0
STEP_TIMEOUT_S = 60.0
#: a step's reply is polled for without sleeping this fraction of the slow step …
SPIN_FRACTION = 0.5
#: … and at most this long [s]; then the thread waits in the kernel
SPIN_MAX_S = 0.002
#: the clock marks per slow step kept in :attr:`RemoteSubstructure.step_marks`
STEP_MARKS = ("start", "sent", "received", "done")


_SERVER_LOCATION = re.compile(r"^(parameters before )?slow step \d+ \(t = [^)]*\): ")


def stop_server(host: str, port: int, timeout_s: float = 5.0) -> None:
    """Ask the NS server at ``host:port`` to stop (a connection that opens with SHUTDOWN)."""
    with FramedChannel(connect(host, port, timeout_s)) as channel:
        channel.send(MessageType.SHUTDOWN)
        channel.receive_expect(MessageType.SHUTDOWN)


def end_run(host: str, port: int, run: str, timeout_s: float = 5.0) -> None:
    """Tell the NS server at ``host:port`` that run ``run`` opened its last session (a
    server serving one run then stops: ``serve ns --once``)."""
    with FramedChannel(connect(host, port, timeout_s)) as channel:
        channel.send(MessageType.HELLO, nsm.run_ended_hello(run))
        channel.receive_expect(MessageType.SHUTDOWN)


class RemoteSubstructure:
    """The numerical substructure served at ``host:port`` (module doc).

    setup : what the server's model is built from (JSON-able; arrays allowed), e.g.
        ``{"dt": 0.02, "ground_accel": record, ...}``.
    dt, n_interface : when given, the server's must be equal (else a clear error).
    model : when given, the server's model name must be equal.
    connect_timeout_s, setup_timeout_s, step_timeout_s : time limits [s] for connecting,
        for the server to build its model, and for each later answer.
    run : the run this session belongs to (one run may open several sessions: the test
        and its comparison runs; :func:`end_run` says when it is over). None: the session
        is a run by itself.
    spin_s : how long [s] each reply is polled for without sleeping before the thread
        waits in the kernel (None: :data:`SPIN_FRACTION` of the slow step, at most
        :data:`SPIN_MAX_S`; 0: never). A reply that arrives while the thread polls needs
        no wake-up (:mod:`~rths_ident.transport.stream`).

    ``step_marks``: set it to a list and each :meth:`step` appends its clock marks
    (:data:`STEP_MARKS`: called, FEEDBACK sent, TARGET read, returning;
    ``time.perf_counter``, the system's monotonic clock, comparable with the server's).
    """

    def __init__(self, host: str, port: int, setup: dict | None = None, *, dt: float | None = None,
                 n_interface: int | None = None, model: str | None = None,
                 connect_timeout_s: float = CONNECT_TIMEOUT_S, setup_timeout_s: float = SETUP_TIMEOUT_S,
                 step_timeout_s: float = STEP_TIMEOUT_S, run: str | None = None, spin_s: float | None = None):
        if spin_s is not None and not (0 <= spin_s <= 1.0):
            raise ValueError(f"spin_s must be between 0 and 1 s, got {spin_s!r}")
        self.address = f"{host}:{port}"
        self.step_marks: list | None = None
        self.slow_index = 0
        self._layout: list | None = None
        self._plan: tuple | None = None  # nsm.log_plan of the layout
        self._closed = False
        self._broken = False
        hello_out = nsm.client_hello(dict(setup or {}), run)  # JSON problems before connecting
        self._channel = FramedChannel(connect(host, port, connect_timeout_s))
        try:
            self._channel.sock.settimeout(setup_timeout_s)
            self._channel.send(MessageType.HELLO, hello_out)
            hello = self._receive(MessageType.HELLO).value
            nsm.check_hello(hello, nsm.SERVER_ROLE)
            self.n_interface = int(hello["n_interface"])
            self.dt = float(hello["dt"])
            self.parameter_names = tuple(hello.get("parameter_names") or ())
            units = hello.get("parameter_units")
            self.parameter_units = None if units is None else tuple(units)
            self.model = str(hello.get("model", ""))
            self._check_expected("dt", dt, self.dt)
            self._check_expected("n_interface", n_interface, self.n_interface)
            self._check_expected("model", model, self.model)
            self._initial_target = self._receive(MessageType.TARGET).value
            if self._initial_target.size != self.n_interface:
                raise ProtocolError(f"initial TARGET: expected {self.n_interface} values, got "
                                    f"{self._initial_target.size}")
            self._channel.sock.settimeout(step_timeout_s)
            self._channel.spin_s = min(SPIN_FRACTION * self.dt, SPIN_MAX_S) if spin_s is None else spin_s
        except TransportError as exc:
            self._abandon()
            raise self._located(exc, "setting up the session") from exc
        except (KeyError, TypeError, ValueError) as exc:
            self._abandon()
            raise ProtocolError(f"remote numerical substructure at {self.address}: malformed server HELLO ({exc})") \
                from exc

    def _check_expected(self, name, expected, got) -> None:
        if expected is None:
            return
        same = abs(float(expected) - float(got)) <= 1e-12 * abs(float(expected)) if name == "dt" else expected == got
        if not same:
            raise ProtocolError(f"the server's {name} is {got!r}, this loop needs {expected!r} — is the server "
                                "serving the right model?")

    # -- protocol ----------------------------------------------------------------------
    def initial_target(self) -> np.ndarray:
        """The first interface target [m], as the server's NS gave it at set-up."""
        return self._initial_target.copy()

    def step(self, feedback, ground_accel) -> tuple[np.ndarray, dict]:
        """One slow step on the server: FEEDBACK [f, ẍ_g] → TARGET [target, log]."""
        clock = _time.perf_counter
        start = clock()
        self._check_usable()
        numbers = np.asarray(feedback, dtype=np.float64).reshape(-1).tolist()
        if len(numbers) != self.n_interface or not all(map(math.isfinite, numbers)):
            raise ValueError(f"feedback must be {self.n_interface} finite interface force(s) [N]; got {feedback!r}")
        numbers.append(float(ground_accel))
        if not math.isfinite(numbers[-1]):
            raise ValueError(f"ground_accel must be a finite ground acceleration [m/s²]; got {ground_accel!r}")
        channel = self._channel
        try:
            channel.send_frame(MessageType.FEEDBACK, channel.vector_frame(MessageType.FEEDBACK, numbers))
            sent = clock()
            while True:
                header, payload = channel.receive_frame()
                received = clock()
                kind = header.message_type
                if kind is MessageType.TARGET:
                    values = decode_payload(kind, payload)
                    break
                message = self._expected(Message(kind, header.sequence, decode_payload(kind, payload)),
                                         MessageType.TARGET, MessageType.HELLO)
                if message is None:
                    continue
                if "log" not in message.value:
                    raise ProtocolError(f"HELLO during the session must announce a log layout, got {message.value!r}")
                self._layout = nsm.check_layout(message.value["log"])
                self._plan = nsm.log_plan(self._layout)
            if self._layout is None:
                raise ProtocolError("TARGET arrived before the server announced its log layout")
            n = self.n_interface
            if values.size < n:
                raise ProtocolError(f"TARGET: expected at least {n} values, got {values.size}")
            log = nsm.unflatten_planned(self._plan, values[n:])
        except TransportError as exc:
            self._broken = True
            raise self._located(exc, "in") from exc
        except BaseException:  # Ctrl-C mid-exchange: a reply may be half read; close() only closes the socket
            self._broken = True
            raise
        self.slow_index += 1
        target = values[:n].copy()
        if self.step_marks is not None:
            self.step_marks.append((start, sent, received, clock()))
        return target, log

    def apply_parameters(self, estimate) -> None:
        """Push θ̂ to the server's NS; returns once the server has applied it."""
        self._check_usable()
        theta = np.asarray(estimate, dtype=np.float64).reshape(-1)
        if self.parameter_names and theta.size != len(self.parameter_names):
            raise ValueError(f"estimate must be {len(self.parameter_names)} values "
                             f"({', '.join(self.parameter_names)}); got {theta.size}")
        try:
            self._channel.send(MessageType.PARAMETERS, theta)
            echo = self._receive(MessageType.PARAMETERS).value
            if echo.shape != theta.shape or not np.array_equal(echo, theta, equal_nan=True):
                raise ProtocolError(f"PARAMETERS acknowledgement {echo.tolist()} differs from what was sent "
                                    f"{theta.tolist()}")
        except TransportError as exc:
            self._broken = True
            raise self._located(exc, "applying parameters before") from exc
        except BaseException:
            self._broken = True
            raise

    def close(self) -> None:
        """End the session (SHUTDOWN, answered by SHUTDOWN) and close the connection;
        idempotent. After a failure it only closes the socket."""
        if self._closed:
            return
        self._closed = True
        if self._broken:
            self._channel.close()
            return
        try:
            self._channel.sock.settimeout(min(self._channel.sock.gettimeout() or 10.0, 10.0))
            self._channel.send(MessageType.SHUTDOWN)
            self._receive(MessageType.SHUTDOWN)
        except TransportError as exc:
            raise self._located(exc, "closing") from exc
        finally:
            self._channel.close()

    # -- helpers -------------------------------------------------------------------------
    @property
    def time(self) -> float:
        """Test time [s] at the end of the next slow step."""
        return (self.slow_index + 1) * self.dt

    def _receive(self, *types: MessageType) -> Message:
        """The next message of ``types`` (heartbeats skipped); ERROR → RemoteError with
        the server's text as it is."""
        while True:
            message = self._expected(self._channel.receive(), *types)
            if message is not None:
                return message

    def _expected(self, message: Message, *types: MessageType) -> Message | None:
        """``message`` if of ``types``; None for a heartbeat (to be skipped); ERROR →
        RemoteError with the server's text; any other type → ProtocolError."""
        if message.message_type in types:
            return message
        if message.message_type is MessageType.HEARTBEAT:
            return None
        if message.message_type is MessageType.ERROR:
            # the server names the step too (for its own log and other clients): said once here
            text = _SERVER_LOCATION.sub("", str(message.value), count=1)
            raise RemoteError(f"the server reported: {text}")
        names = " or ".join(t.name for t in types)
        raise ProtocolError(f"expected {names}, got {message.message_type.name}")

    def _check_usable(self) -> None:
        if self._closed:
            raise TransportError(f"remote numerical substructure at {self.address}: the session is closed")
        if self._broken:
            raise TransportError(f"remote numerical substructure at {self.address}: the session failed earlier "
                                 f"(slow step {self.slow_index}); start a new one")

    def _located(self, exc: TransportError, what: str) -> TransportError:
        """``exc`` again (same class), its message naming the server, step and time."""
        if what == "setting up the session":
            where, slow_index, time = "setting up the session", None, None
        elif what == "closing":
            slow_index, time = self.slow_index, self.slow_index * self.dt
            where = f"closing the session after {slow_index} slow steps"
        else:
            slow_index, time = self.slow_index, self.time
            where = f"{what} slow step {slow_index} (t = {time:.6g} s)"
        located = type(exc)(f"remote numerical substructure at {self.address}, {where}: {exc}")
        located.slow_index = slow_index
        located.time = time
        return located

    def _abandon(self) -> None:
        self._closed = self._broken = True
        self._channel.close()

    def __enter__(self) -> RemoteSubstructure:
        return self

    def __exit__(self, *exc_info) -> None:
        if exc_info[0] is not None:
            self._broken = True
        self.close()


__all__ = ["CONNECT_TIMEOUT_S", "RemoteSubstructure", "SETUP_TIMEOUT_S", "SPIN_FRACTION", "SPIN_MAX_S", "STEP_MARKS",
           "STEP_TIMEOUT_S", "end_run", "stop_server"]
