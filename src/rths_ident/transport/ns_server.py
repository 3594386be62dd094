"""A server that holds a numerical substructure (NS) for a loop in another process.

:class:`NSServer` listens on one TCP port (127.0.0.1 unless told otherwise) and serves
connections one after the other; each connection is a *session* with a fresh NS built by
``make_ns(setup)`` — any object of the
:class:`~rths_ident.structures.numerical_substructure.NumericalSubstructure` protocol
(duck-typed: this module imports nothing outside NumPy, the standard library and the
transport package). Two wires:

``"framed"`` (default)
    the session protocol of :mod:`~rths_ident.transport.ns_messages`: the client's HELLO
    carries the setup, the server answers with its HELLO and the initial target; then
    FEEDBACK → TARGET (+ the step's log), PARAMETERS → PARAMETERS (acknowledged), SHUTDOWN
    → SHUTDOWN. An exception of the NS goes back as ERROR with its text (and the slow step
    and time) and ends the session. A connection whose first message is SHUTDOWN stops
    the server; one whose HELLO says ``run_ended`` ends a run (several sessions of one
    client run: :meth:`NSServer.serve`'s ``max_runs``).
``"seed000"``
    seed 000's bytes (digest 000 §7, §12.1): per slow step the client sends the n
    interface forces as big-endian float64, the server steps the NS and sends n
    big-endian float64 back (the next target, or with ``seed000_reply="displacement"``
    the interface displacement after the step, ``nodeDisp`` as the thesis' script
    sends). Nothing on this wire carries the setup or the record: they come from
    ``seed000_setup`` (the model file). The session ends when the client closes the
    connection between two messages.

Every wait is bounded by ``timeout_s``: for a client to connect and for each of its
messages.

The serving thread reads, steps and answers on the wire itself (no queue, no other
thread). While a framed session runs it polls for the client's next message without
sleeping for up to ``spin_s`` (default: :data:`SPIN_SLOW_STEPS` of the session's slow
steps, at most :data:`SPIN_MAX_S`), then waits in the kernel: at a lab's coordination
rates the next FEEDBACK arrives within that, and a thread that spins needs no wake-up
(a dedicated core's way; :mod:`~rths_ident.transport.stream`). It starts polling
:data:`SPIN_LEAD_STEPS` of a slow step before the next FEEDBACK is due (one slow step
after the last one arrived) and sleeps before that, woken at once by an early one: a
real-time thread that never sleeps is stopped by the kernel for 50 ms of every second. With ``step_marks`` (a
folder) each framed session's clock marks per slow step — FEEDBACK read, decoded, NS
stepped, TARGET encoded, sent; ``time.perf_counter``, the system's monotonic clock —
are saved there as ``marks-session-NNN.npy`` when it ends with SHUTDOWN
(``rths-ident bench --only realtime`` splits the wire's round trip with them).
"""

from __future__ import annotations

import os
import socket
import sys
import time as _time
from typing import Callable

import numpy as np

from rths_ident.transport import ns_messages as nsm
from rths_ident.transport.errors import ProtocolError, TransportError
from rths_ident.transport.framed import MessageType, decode_payload
from rths_ident.transport.framed_channel import FramedChannel
from rths_ident.transport.seed000 import Seed000Channel
from rths_ident.transport.tcp import serve as listen

#: default port of the NS server (seed 000's OpenSeesPy server, digest 000 §7)
DEFAULT_PORT = 8090
#: default time limit [s] for a client to connect and for each of its messages
DEFAULT_TIMEOUT_S = 300.0
WIRES = ("framed", "seed000")
#: a framed session's thread polls this many slow steps for the next message before it sleeps
SPIN_SLOW_STEPS = 2.0
#: … and at most this long [s] (at the seeds' 50 Hz it sleeps: the wire's µs do not matter there)
SPIN_MAX_S = 0.01
#: … from this many slow steps before the next FEEDBACK is due (one step after the last); before, it sleeps
SPIN_LEAD_STEPS = 0.25
#: the clock marks per slow step saved with ``step_marks`` (module doc)
STEP_MARKS = ("received", "decoded", "stepped", "encoded", "sent")
SEED000_REPLIES = ("target", "displacement")


def _describe_exception(exc: BaseException) -> str:
    return f"{type(exc).__name__}: {exc}"


def _where(k: int, dt: float) -> str:
    """Slow step ``k`` of a session, as the server's messages name it."""
    return f"slow step {k} (t = {(k + 1) * dt:.6g} s)"


def ground_accel_function(setup: dict) -> Callable[[float], float]:
    """ẍ_g(t) [m/s²] from a setup's ``ground_accel`` (samples at ``record_dt``, default
    ``dt``, from t = 0): linear interpolation, ramping to 0 over one sample interval after
    the last sample (as an OpenSees ``Path`` series with a trailing zero)."""
    record = setup.get("ground_accel")
    if record is None:
        return lambda t: 0.0
    values = np.append(np.asarray(record, dtype=float).ravel(), 0.0)
    record_dt = float(setup.get("record_dt") or setup["dt"])
    times = record_dt * np.arange(values.size)
    return lambda t: float(np.interp(t, times, values, right=0.0))


class NSServer:
    """Serve ``make_ns(setup)`` sessions on ``host:port`` (module doc).

    make_ns : ``setup (dict) -> NumericalSubstructure``. At the end of a framed session
        the NS's ``end_session(ok, how)`` is called if it has one (a recording wrapper:
        :mod:`rths_ident.records.served`), else ``close()``.
    wire : ``"framed"`` or ``"seed000"``.
    seed000_setup : the setup of every seed 000 session (``dt`` [s], ``ground_accel``
        [m/s²], ``record_dt`` [s]); required with ``wire="seed000"``.
    seed000_reply : ``"target"`` or ``"displacement"`` (``log["interface_displacement"]``).
    model : a name for the HELLO and the messages (e.g. the model file).
    log : where progress lines go (default: stderr).
    spin_s : how long [s] a framed session polls for each message before it sleeps
        (None: :meth:`spin_for` the session's slow step; 0: never polls).
    step_marks : a folder for each framed session's clock marks (module doc), or None.
    """

    def __init__(self, make_ns: Callable[[dict], object], *, host: str = "127.0.0.1", port: int = DEFAULT_PORT,
                 wire: str = "framed", timeout_s: float = DEFAULT_TIMEOUT_S, seed000_setup: dict | None = None,
                 seed000_reply: str = "target", model: str = "", log: Callable[[str], None] | None = None,
                 spin_s: float | None = None, step_marks: str | None = None):
        if wire not in WIRES:
            raise ValueError(f"wire = {wire!r}: expected one of {', '.join(WIRES)}")
        if seed000_reply not in SEED000_REPLIES:
            raise ValueError(f"seed000_reply = {seed000_reply!r}: expected one of {', '.join(SEED000_REPLIES)}")
        if wire == "seed000":
            if not seed000_setup or not seed000_setup.get("dt"):
                raise ValueError("seed 000 wire: the setup (dt, ground_accel) must come from the model, nothing on "
                                 "that wire carries it (seed000_setup needs at least 'dt')")
        if not (timeout_s > 0):
            raise ValueError(f"timeout_s must be > 0 s, got {timeout_s!r}")
        if spin_s is not None and not (0 <= spin_s <= 1.0):
            raise ValueError(f"spin_s must be between 0 and 1 s, got {spin_s!r}")
        self.spin_s = spin_s
        self.step_marks = step_marks
        self.make_ns = make_ns
        self.wire = wire
        self.timeout_s = float(timeout_s)
        self.seed000_setup = seed000_setup
        self.seed000_reply = seed000_reply
        self.model = model
        self._log = log or (lambda line: print(line, file=sys.stderr, flush=True))
        self.listener = listen(host, port, self.timeout_s)
        self.sessions = 0
        self.failures: list[str] = []
        self._session_run: str | None = None  # the run of the session being served (None: a run by itself)
        self._run_ended: str | None = None  # set by a connection that says a run is over
        self.runs_ended: set = set()  # the runs over (("run", id) or ("session", number))

    @property
    def address(self) -> tuple[str, int]:
        return self.listener.address

    def close(self) -> None:
        self.listener.close()

    def __enter__(self) -> NSServer:
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()

    # -- the loop over connections ---------------------------------------------------
    def serve(self, max_sessions: int | None = None, max_runs: int | None = None) -> int:
        """Serve sessions until a stop request (framed: a connection opening with
        SHUTDOWN), ``max_sessions`` sessions, or ``max_runs`` runs; returns the number of
        sessions served. A run is every session whose HELLO carries the same ``run`` id,
        over when the client says so (a connection opening with HELLO ``run_ended``:
        :func:`~rths_ident.transport.remote_substructure.end_run`); a session without a
        run id (seed 000's wire, a script's own client) is a run by itself. A session
        that fails is logged and kept in :attr:`failures`; the server goes on with the
        next one. The listening socket is closed when this returns (or raises).

        Raises:
            TransportTimeout: no client connected within ``timeout_s``.
        """
        try:
            return self._serve(max_sessions, max_runs)
        finally:
            self.close()

    def _serve(self, max_sessions: int | None, max_runs: int | None) -> int:
        host, port = self.address
        ended = self.runs_ended  # runs over (ids; a session without one counts as its own)
        while (max_sessions is None or self.sessions < max_sessions) and (max_runs is None or len(ended) < max_runs):
            conn = self.listener.accept()
            self._session_run, self._run_ended = None, None
            with conn:
                peer = "%s:%d" % conn.getpeername()[:2]
                number = self.sessions + 1
                try:
                    if self.wire == "framed":
                        stop = self._framed_session(conn, number, peer)
                    else:
                        self._seed000_session(conn, number, peer)
                        stop = False
                except TransportError as exc:
                    self.failures.append(f"session {number} ({peer}): {exc}")
                    self._log(f"ns server {host}:{port}: session {number} ({peer}) ended: {exc}")
                    stop = False
            if stop:
                self._log(f"ns server {host}:{port}: stop requested by {peer}")
                break
            if self._run_ended is not None:  # not a session: a run's end
                ended.add(("run", self._run_ended))
                self._log(f"ns server {host}:{port}: run {self._run_ended} ended ({peer})")
                continue
            self.sessions += 1
            if self._session_run is None:
                ended.add(("session", number))
        return self.sessions

    # -- framed ----------------------------------------------------------------------
    def _framed_session(self, conn: socket.socket, number: int, peer: str) -> bool:
        channel = FramedChannel(conn)
        try:
            return self._framed_session_on(channel, number, peer)
        except ProtocolError as exc:  # bad bytes from the client: tell it why before closing
            try:
                channel.send(MessageType.ERROR, f"protocol error: {exc}")
            except TransportError:
                pass
            raise

    def _framed_session_on(self, channel: FramedChannel, number: int, peer: str) -> bool:
        first = channel.receive()
        if first.message_type is MessageType.SHUTDOWN:
            channel.send(MessageType.SHUTDOWN)
            return True
        if first.message_type is not MessageType.HELLO:
            raise ProtocolError(f"expected HELLO (or SHUTDOWN) as the first message, got {first.message_type.name}")
        nsm.check_hello(first.value, nsm.CLIENT_ROLE)
        if "run_ended" in first.value:  # a run's end, not a session
            self._run_ended = str(first.value["run_ended"])
            channel.send(MessageType.SHUTDOWN)
            return False
        self._session_run = None if first.value.get("run") is None else str(first.value["run"])
        setup = nsm.setup_from_json(first.value.get("setup", {}))
        try:
            ns = self.make_ns(setup)
        except Exception as exc:  # the model's own error, reported to the client
            text = f"building the numerical substructure failed: {_describe_exception(exc)}"
            self._report(channel, number, peer, text)
            return False
        self._outcome = None  # (ok, how the session ended), set where it ends
        try:
            return self._framed_steps(channel, ns, number, peer)
        except TransportError as exc:
            self._outcome = (False, f"transport: {exc}")
            raise
        finally:
            ok, how = self._outcome or (False, "session ended unexpectedly")
            end_session = getattr(ns, "end_session", None)  # e.g. a recording wrapper
            if end_session is not None:
                end_session(ok, how)
            else:
                ns.close()

    def _framed_steps(self, channel: FramedChannel, ns, number: int, peer: str) -> bool:
        try:
            names = [str(n) for n in (getattr(ns, "parameter_names", None) or ())]
            units = getattr(ns, "parameter_units", None)
            hello = {"protocol": nsm.PROTOCOL, "version": nsm.PROTOCOL_VERSION, "role": nsm.SERVER_ROLE,
                     "n_interface": int(ns.n_interface), "dt": float(ns.dt), "parameter_names": names,
                     "parameter_units": None if units is None else [str(u) for u in units], "model": self.model}
            initial = np.asarray(ns.initial_target(), dtype=np.float64).reshape(-1)
        except Exception as exc:
            self._report(channel, number, peer, f"reading the numerical substructure failed: {_describe_exception(exc)}")
            return False
        channel.send(MessageType.HELLO, hello)
        channel.send(MessageType.TARGET, initial)
        n = int(ns.n_interface)
        dt = float(ns.dt)
        channel.spin_s = self.spin_for(dt)  # the session's messages: polled (module doc)
        quiet_s = (1.0 - SPIN_LEAD_STEPS) * dt
        marks = [] if self.step_marks is not None else None
        clock = _time.perf_counter
        packer = nsm.LogPacker()
        k = 0
        while True:
            header, payload = channel.receive_frame()
            received = clock()
            kind = header.message_type
            if kind is MessageType.FEEDBACK:
                values = decode_payload(kind, payload)
                if values.size != n + 1:
                    text = (f"{_where(k, dt)}: FEEDBACK must carry {n} interface force(s) and the ground acceleration "
                            f"({n + 1} float64), got {values.size}")
                    self._report(channel, number, peer, text)
                    return False
                decoded = clock()
                try:
                    target, log = ns.step(values[:n], float(values[n]))
                    stepped = clock()
                    reply, changed = packer.pack(np.asarray(target, dtype=np.float64).reshape(-1), log)
                except Exception as exc:
                    self._report(channel, number, peer, f"{_where(k, dt)}: {_describe_exception(exc)}")
                    return False
                if changed:
                    channel.send(MessageType.HELLO, {"log": packer.layout})
                data = channel.vector_frame(MessageType.TARGET, reply)
                encoded = clock()
                channel.send_frame(MessageType.TARGET, data)
                if marks is not None:
                    marks.append((received, decoded, stepped, encoded, clock()))
                k += 1
                channel.quiet_until = received + quiet_s  # the next FEEDBACK is due about one slow step later
                continue
            value = decode_payload(kind, payload)
            if kind is MessageType.PARAMETERS:
                try:
                    ns.apply_parameters(value.copy())
                except Exception as exc:
                    text = f"parameters before {_where(k, dt)}: {_describe_exception(exc)}"
                    self._report(channel, number, peer, text)
                    return False
                channel.send(MessageType.PARAMETERS, value)
            elif kind is MessageType.HEARTBEAT:
                continue
            elif kind is MessageType.SHUTDOWN:
                self._save_marks(marks, number)
                channel.send(MessageType.SHUTDOWN)
                self._outcome = (True, f"SHUTDOWN after {k} slow steps")
                self._log(f"ns server: session {number} ({peer}) done after {k} slow steps")
                return False
            else:
                text = f"{_where(k, dt)}: unexpected {kind.name} message (expected FEEDBACK, PARAMETERS or SHUTDOWN)"
                self._report(channel, number, peer, text)
                return False

    def spin_for(self, dt: float) -> float:
        """How long [s] a session of slow step ``dt`` [s] polls for each message."""
        if self.spin_s is not None:
            return self.spin_s
        return min(SPIN_SLOW_STEPS * dt, SPIN_MAX_S)

    def _save_marks(self, marks: list | None, number: int) -> None:
        if marks is None:
            return
        path = os.path.join(self.step_marks, f"marks-session-{number:03d}.npy")
        try:
            np.save(path, np.asarray(marks, dtype=np.float64).reshape(-1, len(STEP_MARKS)))
        except OSError as exc:
            self._log(f"ns server: could not save the step marks to {path}: {exc.strerror or exc}")

    def _report(self, channel: FramedChannel, number: int, peer: str, text: str) -> None:
        """Send ERROR with ``text`` (the session ends) and log it."""
        self._outcome = (False, text)
        self.failures.append(f"session {number} ({peer}): {text}")
        self._log(f"ns server: session {number} ({peer}) failed: {text}")
        try:
            channel.send(MessageType.ERROR, text)
        except TransportError as exc:
            self._log(f"ns server: could not send the error to {peer}: {exc}")

    # -- seed 000 --------------------------------------------------------------------
    def _seed000_session(self, conn: socket.socket, number: int, peer: str) -> None:
        setup = dict(self.seed000_setup)
        ground_accel = ground_accel_function(setup)
        ns = self.make_ns(setup)
        outcome = (False, "session ended unexpectedly")
        try:
            n = int(ns.n_interface)
            dt = float(ns.dt)
            channel = Seed000Channel(conn, n=n)
            k = 0
            start = _time.perf_counter()
            while True:
                try:
                    if conn.recv(1, socket.MSG_PEEK) == b"":  # closed between two messages: the end
                        break
                except socket.timeout:
                    raise TransportError(f"seed 000 session {number} ({peer}): no force within {self.timeout_s} s "
                                         f"at slow step {k}") from None
                force = channel.receive()
                t = (k + 1) * dt
                try:
                    target, log = ns.step(force, ground_accel(t))
                except Exception as exc:
                    # nothing on this wire carries an error: close, and say it here
                    raise TransportError(f"slow step {k} (t = {t:.6g} s): {_describe_exception(exc)} — "
                                         "closing the connection (seed 000 has no error message)") from exc
                if self.seed000_reply == "target":
                    reply = target
                else:
                    reply = log["interface_displacement"]
                channel.send(np.asarray(reply, dtype=np.float64).reshape(n))
                k += 1
            self._log(f"ns server: seed 000 session {number} ({peer}) done after {k} slow steps "
                      f"({_time.perf_counter() - start:.3g} s)")
            outcome = (True, f"the client closed the connection after {k} slow steps")
        except Exception as exc:
            outcome = (False, str(exc))
            raise
        finally:
            end_session = getattr(ns, "end_session", None)
            if end_session is not None:
                end_session(*outcome)
            else:
                ns.close()


__all__ = ["DEFAULT_PORT", "DEFAULT_TIMEOUT_S", "NSServer", "SEED000_REPLIES", "SPIN_LEAD_STEPS", "SPIN_MAX_S",
           "SPIN_SLOW_STEPS", "STEP_MARKS", "WIRES", "ground_accel_function"]
