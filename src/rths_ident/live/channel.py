"""The run's events handed to the page's server process: a bounded, non-blocking channel
that drops step frames rather than wait.

The page's server runs in its own process (:mod:`rths_ident.live.page_process`), so that
its work — turning events into series, JSON, WebSockets — never holds the loop's
interpreter lock. The loop's side is :class:`FrameSender`, the run's
:class:`~rths_ident.runner.events.EventStream` subscriber. Per event, on the emitting
thread, it

* pickles ``(stamp, event, extra)`` into one length-prefixed frame — a step's values
  and only what the page reads (:func:`step_values`), a few kB — (``stamp``: the wall
  time ``time.time()`` [s] of the hand-off; ``extra``: a paced run's latency, NS share and
  missed ticks of the steps not sent yet, read from the pacer's arrays — the server
  process has no pacer of its own);
* queues it behind the frames not yet written, and writes what the socket takes now
  with one non-blocking ``send`` (a stream socket of a ``socketpair``: a partly written
  frame is finished by the next call; nothing ever waits for the reader).

When more than :data:`MAX_PENDING_BYTES` are waiting (the server process has fallen
behind, or stalled), a :class:`~rths_ident.runner.events.StepDone` is dropped (counted in
:attr:`FrameSender.dropped`; the page counts the steps it never saw); the other events
— the run's description, phases, notes, its end: a few per run — are always queued.
When the server process has gone (the socket is closed), every later event is dropped:
the run goes on without its page.

The server process's side is :func:`read_frames`: blocking reads of whole frames.
"""

from __future__ import annotations

import collections
import dataclasses
import pickle
import socket
import struct
import threading
import time as _time
from collections.abc import Mapping

import numpy as np

from rths_ident.runner.events import StepDone, TestStarted

__all__ = ["FrameSender", "read_frames", "frame", "step_frame", "step_values", "PAGE_FIELDS", "MAX_PENDING_BYTES", "ModelLoop", "PacedFigures", "PacedSoFar"]

#: bytes of frames waiting for the server process above which step frames are dropped
MAX_PENDING_BYTES = 1 << 20
_HEADER = struct.Struct("<I")


@dataclasses.dataclass(frozen=True)
class PacedFigures:
    """A paced run's figures of the steps since the last frame sent: per step, the
    latency (window opening → next target ready) [s], the numerical substructure's share
    [s] and the clock ticks missed (:meth:`~rths_ident.hybrid.loop.realtime.RealTimePacer.so_far`),
    from step ``first`` on."""

    first: int
    latency_s: list
    ns_s: list
    missed: list


class PacedSoFar:
    """The server process's stand-in for the run's pacer: the :class:`PacedFigures` of
    every frame received, with the pacer's ``so_far()`` (lists: latency [s], the NS's
    share [s], missed ticks per step)."""

    def __init__(self):
        self._latency: list = []
        self._ns: list = []
        self._missed: list = []

    def add(self, figures: PacedFigures) -> None:
        del self._latency[figures.first:], self._ns[figures.first:], self._missed[figures.first:]
        self._latency.extend(figures.latency_s)
        self._ns.extend(figures.ns_s)
        self._missed.extend(figures.missed)

    def so_far(self) -> tuple[list, list, list]:
        return self._latency, self._ns, self._missed


@dataclasses.dataclass(frozen=True)
class ModelLoop:
    """The identified model's force [N] at every fast sample so far, with the estimate
    ``theta`` it was simulated with (or ``error``: why it could not be), computed in the
    run's process off the loop's thread (:mod:`rths_ident.live.model_loop`)."""

    theta: list
    force: object = None  # np.ndarray, or None with an error
    error: str = ""


#: what of a step's log the page reads (:meth:`rths_ident.live.state.LiveState.apply`):
#: group → its fields (None: the value itself)
PAGE_FIELDS = {"time": None, "fast": ("target", "measured", "displacement", "command", "force"),
               "update": ("estimate", "relative_std", "applied", "converged"), "ns": ("displacement",)}


def _packed(value) -> tuple:
    array = np.asarray(value)
    return array.dtype.str, array.shape, array.tobytes()


def _unpacked(packed: tuple) -> np.ndarray:
    dtype, shape, data = packed
    return np.frombuffer(data, dtype=dtype).reshape(shape)


def step_values(log) -> dict:
    """What the page reads of a step's log (:data:`PAGE_FIELDS`), each value packed as
    (dtype, shape, bytes) — the engine's row
    (:class:`~rths_ident.hybrid.loop.step_logs.StepRow`) is a view into the whole run's
    columns: pickling it would copy every step, and pickling NumPy arrays one by one costs
    more than their bytes."""
    values: dict = {}
    if not isinstance(log, Mapping):
        return values
    for group, fields in PAGE_FIELDS.items():
        if group not in log:
            continue
        node = log[group]
        if fields is None:
            values[group] = _packed(node)
        elif isinstance(node, Mapping):
            values[group] = {name: _packed(node[name]) for name in fields if name in node}
    return values


def _unpacked_values(values: dict) -> dict:
    return {group: _unpacked(node) if isinstance(node, tuple) else {name: _unpacked(v) for name, v in node.items()}
            for group, node in values.items()}


def frame(stamp: float, event, extra=None) -> bytes:
    """One frame: a 4-byte length, then the pickle of ``(stamp, event, extra)``."""
    return _framed(pickle.dumps((stamp, event, extra), protocol=pickle.HIGHEST_PROTOCOL))


def step_frame(stamp: float, event: StepDone, paced: tuple | None) -> bytes:
    """A step's frame: ``(stamp, step, total, step_values(log), paced)`` — plain tuples,
    bytes and numbers, the cheapest to pickle; ``paced``: :class:`PacedFigures`' fields."""
    body = (stamp, event.step, event.total, step_values(event.log), paced)
    return _framed(pickle.dumps(body, protocol=pickle.HIGHEST_PROTOCOL))


def _framed(body: bytes) -> bytes:
    return _HEADER.pack(len(body)) + body


def _without_live_objects(event: TestStarted) -> TestStarted:
    """The run's description as the server process gets it: the watched objects (the
    pacer, the identified model's force function) stay in the run's process; the server
    is told that they exist."""
    watch = event.watch or {}
    return TestStarted(event.name, event.info, {"paced": watch.get("pacer") is not None,
                                                  "model": watch.get("model_force") is not None})


class FrameSender:
    """The run's subscriber (module doc): ``sender(event)`` on the emitting thread."""

    def __init__(self, sock: socket.socket, max_pending_bytes: int = MAX_PENDING_BYTES, clock=_time.time):
        sock.setblocking(False)
        self._socket = sock
        self._clock = clock
        self._max_pending = int(max_pending_bytes)
        self._pending: collections.deque = collections.deque()  # frames (or their unsent rest), oldest first
        self._pending_bytes = 0
        self._pacer = None
        self._pacer_sent = 0  # the pacer's steps already in a frame
        self.observers: list = []  # called with each event first (the model loop's collector)
        self.dropped = 0  # step frames dropped
        self.closed = False  # the server process has gone
        # emitters on several threads (a server's sessions) take turns; the loop, alone, never waits on it
        self._lock = threading.Lock()

    def __call__(self, event) -> None:
        if self.closed:
            return
        with self._lock:
            self._hand_off(event)

    def _hand_off(self, event) -> None:
        for observe in self.observers:
            observe(event)
        kind = type(event)
        if kind is StepDone and self._pending_bytes > self._max_pending:
            self.dropped += 1  # the server is behind: this step is not shown (the page counts it)
            self._flush()
            return
        if kind is StepDone:
            paced = None
            if self._pacer is not None:
                latency, ns, missed = self._pacer.so_far()
                first = self._pacer_sent
                paced = (first, latency[first:].tolist(), ns[first:].tolist(), missed[first:].tolist())
                self._pacer_sent = len(latency)
            self._put(step_frame(self._clock(), event, paced))
            return
        if kind is TestStarted:
            self._pacer, self._pacer_sent = (event.watch or {}).get("pacer"), 0
            event = _without_live_objects(event)
        self._put(frame(self._clock(), event))

    def _put(self, data: bytes) -> None:
        """Queue a frame and write what the socket takes now (never waits)."""
        self._pending.append(memoryview(data))
        self._pending_bytes += len(data)
        self._flush()

    def _flush(self) -> None:
        pending, send = self._pending, self._socket.send
        while pending:
            try:
                sent = send(pending[0])
            except (BlockingIOError, InterruptedError):
                return
            except OSError:  # the server process has gone: the run goes on without its page
                self._close()
                return
            self._pending_bytes -= sent
            if sent == len(pending[0]):
                pending.popleft()
            else:
                pending[0] = pending[0][sent:]
                return

    def backlog(self) -> int:
        """Frames not yet written to the server process (after writing what it takes now)."""
        with self._lock:
            self._flush()
            return len(self._pending)

    def drain(self, timeout_s: float) -> bool:
        """Write every waiting frame, waiting up to ``timeout_s`` [s] (at the end of the run,
        never during it); True when all were written."""
        deadline = _time.monotonic() + timeout_s
        while self.backlog() and not self.closed:
            if _time.monotonic() >= deadline:
                return False
            _time.sleep(0.005)
        return not self._pending

    def _close(self) -> None:
        self.closed = True
        self._pending.clear()
        self._pending_bytes = 0


def read_frames(sock: socket.socket):
    """The frames a :class:`FrameSender` wrote, as ``(stamp, event, extra)``, until the
    run's process closes its end."""
    reader = sock.makefile("rb")
    while True:
        header = reader.read(_HEADER.size)
        if len(header) < _HEADER.size:
            return
        (size,) = _HEADER.unpack(header)
        body = reader.read(size)
        if len(body) < size:
            return
        message = pickle.loads(body)
        if len(message) == 3:
            yield message
        else:
            stamp, step, total, values, paced = message
            yield stamp, StepDone(step, total, _unpacked_values(values)), None if paced is None else PacedFigures(
                *paced)
