"""The operator's request to stop a step-wise hybrid test from another thread: STOP on the live page.

:class:`StopRequest` is set from any thread (the live page's server) and read by the
step-wise engine (:func:`~rths_ident.hybrid.loop.engine.run_stepwise`) once per slow step,
at its end: the engine then brings the specimen to rest through the safe stop
(:mod:`rths_ident.hybrid.loop.safe_stop`) — within one slow step of the request — and
raises :class:`~rths_ident.operator_stop.OperatorStopped` with every completed step, as it
does for Ctrl-C (the record's ``stop`` event, the command's one line and exit status 130:
docs/endings.md). The fused engine runs the whole record in one compiled call: it has no
step at which to stop, and ignores the request.
"""

from __future__ import annotations

import os
import threading

__all__ = ["StopRequest"]


class StopRequest:
    """A one-way flag with what set it (module doc). ``set(how)`` keeps the first ``how``
    (it goes into the record: "stopped by the operator (<how>) at slow step k …");
    ``is_set()`` costs one attribute read, and one non-blocking read of a pipe while it
    listens to another process (:meth:`listen`; the loop calls it every slow step)."""

    def __init__(self):
        self._flag = threading.Event()
        self.how = ""
        self._fd: int | None = None  # a pipe another process may write the request into (listen)

    def set(self, how: str = "STOP on the live page") -> bool:
        """Ask the run to stop; returns False when a stop was already asked for."""
        if self._flag.is_set():
            return False
        self.how = str(how)
        self._flag.set()
        return True

    def listen(self, fd: int) -> None:
        """Also take the request from the non-blocking read end ``fd`` of a pipe: another
        process (the live page's server) writes ``how`` into it. :meth:`is_set` reads it
        (one non-blocking read) until a request or the pipe's end arrives; the pipe is
        closed then."""
        os.set_blocking(fd, False)
        self._fd = fd

    def is_set(self) -> bool:
        if self._fd is not None and not self._flag.is_set():
            self._read_pipe()
        return self._flag.is_set()

    def _read_pipe(self) -> None:
        try:
            how = os.read(self._fd, 1024)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            how = b""
        fd, self._fd = self._fd, None
        os.close(fd)
        if how:
            self.set(how.decode(errors="replace"))

    def wait(self, timeout: float | None = None) -> bool:
        return self._flag.wait(timeout)
