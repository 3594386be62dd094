"""How a command ends: its exit status, the one line after a Ctrl-C, output into a closed pipe.

Exit status of every ``rths-ident`` command (docs/endings.md):

=====  ======================================================================================
0      done (a test ran to its end, a server's client said goodbye)
1      bad input, found before anything moved: an option, a test file, a record file, an
       output path, a board or a peer that cannot be reached when the test starts
2      a usage error (an unknown option, a missing argument: argparse's line)
3      the test started and stopped on a fault (a limit, a lost peer, a non-finite state):
       the specimen was brought to rest, the record keeps every completed step and why
130    stopped by the operator (Ctrl-C, STOP on the live page): the specimen brought to
       rest, the record says so
=====  ======================================================================================
"""

from __future__ import annotations

import os
import sys

__all__ = ["EXIT_OK", "EXIT_USER_ERROR", "EXIT_USAGE", "EXIT_TEST_STOPPED", "EXIT_INTERRUPTED",
           "operator_stop_line", "QuietPipe"]

EXIT_OK = 0
EXIT_USER_ERROR = 1
EXIT_USAGE = 2
EXIT_TEST_STOPPED = 3
EXIT_INTERRUPTED = 130  # 128 + SIGINT, what a shell reports for a program Ctrl-C ended


def operator_stop_line(stopped: BaseException, records=(), program: str = "rths-ident") -> str:
    """The one line a command prints when the operator stopped it: where it stopped (the
    record's own sentence), how the specimen was left, where the record is."""
    text = str(stopped).strip()
    first = text.split(". ")[0].rstrip(".") if text else _recorded_stop(records) or "stopped by the operator (Ctrl-C)"
    at_rest = getattr(stopped, "at_rest", None)
    rest = {True: "; the specimen was brought to rest",
            False: "; bringing the specimen to rest FAILED: check the rig by hand before touching it",
            None: ""}[at_rest]
    paths = [str(p) for p in records]
    where = f"; test record → {', '.join(paths)}" if paths else "; no test record was written"
    return f"{program}: {first}{rest}{where}"


def _recorded_stop(records) -> str | None:
    """The last stop event's sentence in the first readable record (what the record says)."""
    from rths_ident.records import read_test_record  # noqa: PLC0415

    for path in records:
        try:
            events = read_test_record(path).events
        except Exception:  # noqa: BLE001 - the line is printed with or without it
            continue
        stops = [e.message for e in events if e.kind == "stop"]
        if stops:
            return stops[-1].split(". ")[0].rstrip(".")
    return None


class QuietPipe:
    """``sys.stdout`` whose reader may go away (``rths-ident … | head``): the first
    :class:`BrokenPipeError` points the file descriptor at ``/dev/null``, and the command
    goes on to its end quietly (its record, JSON and figures are still written)."""

    def __init__(self, stream):
        self._stream = stream
        self.broken = False

    def _swallow(self) -> None:
        self.broken = True
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, self._stream.fileno())
            os.close(devnull)
        except (OSError, ValueError, AttributeError):
            pass

    def write(self, text: str) -> int:
        if self.broken:
            return len(text)
        try:
            return self._stream.write(text)
        except BrokenPipeError:
            self._swallow()
            return len(text)

    def flush(self) -> None:
        if self.broken:
            return
        try:
            self._stream.flush()
        except BrokenPipeError:
            self._swallow()

    def __getattr__(self, name):
        return getattr(self._stream, name)


def quiet_stdout() -> QuietPipe | None:
    """Wrap ``sys.stdout`` in :class:`QuietPipe` (once); returns the wrapper, or None when
    stdout is not a real stream (a test's capture)."""
    if isinstance(sys.stdout, QuietPipe):
        return sys.stdout
    try:
        sys.stdout.fileno()
    except (OSError, ValueError, AttributeError):
        return None
    sys.stdout = QuietPipe(sys.stdout)
    return sys.stdout
