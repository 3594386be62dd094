"""The operator's stop (Ctrl-C) and what a second Ctrl-C does.

A lab stops a hybrid test by hand with Ctrl-C (SIGINT). Python turns the first one into
:class:`KeyboardInterrupt` wherever the main thread is; the step-wise engine catches it,
brings the specimen to rest through the site's safe stop
(:mod:`rths_ident.hybrid.loop.safe_stop`) and raises :class:`OperatorStopped`: a
``KeyboardInterrupt`` (so no ``except Exception`` on the way mistakes it for a fault)
carrying the completed steps and the sentence that goes into the test record,
``stopped by the operator (Ctrl-C) at slow step k, t = … s. …``. STOP on the live page
ends a test the same way: the loop reads the page's
:class:`~rths_ident.hybrid.loop.stop_request.StopRequest` at the end of each slow step and
raises the same :class:`OperatorStopped` after the same safe stop (``… (STOP on the live
page) at slow step k …``); the command exits with the same status.

A second Ctrl-C must not cut the safe stop, or the record's closing, halfway:

* :func:`ctrl_c_deferred` — inside it, each Ctrl-C prints one line ("stopping safely …")
  and is otherwise ignored (the safe stop runs in it);
* :func:`first_ctrl_c_only` — inside it, the first Ctrl-C interrupts as usual and every
  later one prints the line and is ignored, so that the code unwinding from the first
  (the safe stop, the record, the report) runs to its end (the command line runs every
  command in it).

Signals reach Python's main thread only: off it (a worker thread, a Dask worker) these
do nothing, and there is nothing to defer. This module imports nothing but the standard
library (the command line installs the handler before it imports anything heavy), and
every layer uses it: the ground floor.
"""

from __future__ import annotations

import contextlib
import signal
import sys
import threading

__all__ = ["OperatorStopped", "SAFE_STOP_LINE", "STOPPING_LINE", "ctrl_c_deferred", "first_ctrl_c_only",
           "operator_stop_text"]

#: what a Ctrl-C prints while the specimen is brought to rest
SAFE_STOP_LINE = ("rths-ident: stopping safely (the specimen is being brought to rest); Ctrl-C again does not "
                  "interrupt this")
#: what a later Ctrl-C prints while a command winds down after the first
STOPPING_LINE = ("rths-ident: stopping (what ran is being saved and closed); Ctrl-C again does not interrupt "
                 "this")


class OperatorStopped(KeyboardInterrupt):
    """The operator stopped the test (Ctrl-C, or STOP on the live page: a
    :class:`~rths_ident.hybrid.loop.stop_request.StopRequest` the step-wise loop reads once
    per slow step) and the loop brought the specimen to rest.

    ``str(error)`` is the record's sentence (module doc); ``slow_index`` the step in
    progress, ``time`` its end [s] (None: unknown), ``logs`` every completed slow step
    (stacked NumPy arrays, as :class:`~rths_ident.hybrid.loop.engine.LoopAborted`'s),
    ``safe_stop_logs`` the site's logs while it was brought to rest, ``rest`` how it was
    left (one sentence), ``at_rest`` whether the safe stop could finish (None: nothing
    was moving — a fused run, a set-up). The runner adds ``test_records`` (the records
    that say so)."""

    def __init__(self, message: str, logs: dict | None = None, slow_index: int = 0, time: float | None = None,
                 safe_stop_logs: dict | None = None, rest: str = "", at_rest: bool | None = None):
        super().__init__(message)
        self.message = message
        self.logs = logs or {}
        self.slow_index = int(slow_index)
        self.time = time
        self.safe_stop_logs = safe_stop_logs
        self.rest = rest
        self.at_rest = at_rest
        self.test_records: tuple = ()

    def __str__(self) -> str:
        return self.message


def operator_stop_text(step: int | None, time: float | None, how: str = "Ctrl-C") -> str:
    """``stopped by the operator (Ctrl-C) at slow step k, t = … s`` — what a test record
    and the command line say when the operator stopped a test at slow step ``step`` (test
    time ``time`` [s]); ``before the first slow step`` when none had run. ``how``: what
    the operator pressed (``Ctrl-C``, ``STOP on the live page``)."""
    if step is None or (step == 0 and time is None):
        return f"stopped by the operator ({how}) before the first slow step"
    when = "" if time is None else f", t = {time:.3f} s"
    return f"stopped by the operator ({how}) at slow step {step}{when}"


def _say(line: str) -> None:
    try:
        print(line, file=sys.stderr, flush=True)
    except (OSError, ValueError):  # stderr gone: the stop goes on regardless
        pass


def _in_main_thread() -> bool:
    return threading.current_thread() is threading.main_thread()


@contextlib.contextmanager
def ctrl_c_deferred(line: str = SAFE_STOP_LINE):
    """Inside: Ctrl-C prints ``line`` and does not interrupt (module doc)."""
    if not _in_main_thread():
        yield
        return
    previous = signal.signal(signal.SIGINT, lambda signum, frame: _say(line))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)


@contextlib.contextmanager
def first_ctrl_c_only(line: str = STOPPING_LINE):
    """Inside: the first Ctrl-C raises :class:`KeyboardInterrupt`, later ones print
    ``line`` and are ignored (module doc). A SIGINT that was ignored when the block began
    (a background job) stays ignored."""
    if not _in_main_thread() or signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
        yield
        return
    pressed = []

    def on_ctrl_c(signum, frame):
        if pressed:
            _say(line)
            return
        pressed.append(True)
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGINT, on_ctrl_c)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, previous)
