"""``rths-ident serve ns`` in a child process, always cleaned up.

:class:`NSServerProcess` starts the server (``python -m rths_ident.cli serve ns …``,
with this process's ``rths_ident`` first on the path), waits for the line that says
where it listens (port 0: the system picks a free one, so there is no race for a port),
and on exit — normal, error or Ctrl-C — stops it: a stop request on the wire (framed: a
connection that opens with SHUTDOWN; seed 000, which has none: SIGINT, as Ctrl-C), then
SIGTERM (at once if the request found the server busy in a session), then SIGKILL,
within :data:`STOP_BOUND_S` (15 s) in all.

The child runs in its own session: a Ctrl-C at the terminal reaches this process only,
whose loop stops the test safely (the child's NS is part of it) and then stops the
child. The child's session records go to a temporary folder (the run's own record holds
every step), removed when the child is stopped.

If this process is killed outright (SIGKILL), the child is bounded by its own
``--timeout``: it waits that long for a client, then exits (its temporary folder stays).
"""

from __future__ import annotations

import collections
import os
import queue
import re
import shutil
import signal
import subprocess
import tempfile
import sys
import threading
import time as _time

from rths_ident.transport.errors import TransportError
from rths_ident.transport.remote_substructure import stop_server

#: the line ``rths-ident serve ns`` prints once it listens
LISTENING = re.compile(r"listening on (?P<host>[^\s:]+):(?P<port>\d+)")
#: default time limits [s]: the child to listen (imports, OpenSeesPy), to stop after a request
STARTUP_TIMEOUT_S = 60.0
STOP_TIMEOUT_S = 5.0
#: the longest a stop takes [s]: the request answered, the child's exit, SIGTERM, SIGKILL
STOP_BOUND_S = 2 * STOP_TIMEOUT_S + 5.0


class NSServerProcess:
    """A ``rths-ident serve ns`` child process (module doc).

    serve_args : the arguments after ``serve ns`` (default: the scenarios' OpenSees NS on
        127.0.0.1, a free port, 600 s time limit).
    """

    def __init__(self, serve_args=("--host", "127.0.0.1", "--port", "0", "--timeout", "600"),
                 startup_timeout_s: float = STARTUP_TIMEOUT_S, stop_timeout_s: float = STOP_TIMEOUT_S):
        self.serve_args = [str(a) for a in serve_args]
        self.startup_timeout_s = float(startup_timeout_s)
        self.stop_timeout_s = float(stop_timeout_s)
        self.process: subprocess.Popen | None = None
        self.address: tuple[str, int] | None = None
        self._records: str | None = None
        self._stdout: queue.Queue = queue.Queue()
        self._stderr: collections.deque = collections.deque(maxlen=20)

    @property
    def records_folder(self) -> str | None:
        """The temporary folder of the child's session records (None: given, or removed)."""
        return self._records

    @property
    def command(self) -> list[str]:
        args = list(self.serve_args)
        if "--records" not in args:  # the run's own test record holds every step; the child's goes to temp
            if self._records is None:
                self._records = tempfile.mkdtemp(prefix="rths-serve-ns-")
            args += ["--records", self._records]
        return [sys.executable, "-m", "rths_ident.cli", "serve", "ns", *args]

    def start(self) -> tuple[str, int]:
        """Start the child and return ``(host, port)`` once it listens.

        Raises:
            TransportError: it exited or did not listen within ``startup_timeout_s``
                (the message quotes its last error line); it is then stopped.
        """
        env = dict(os.environ)
        source = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # …/src
        env["PYTHONPATH"] = os.pathsep.join([source] + [p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p])
        self.process = subprocess.Popen(self.command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                        env=env, bufsize=1, start_new_session=True)
        for stream, sink in ((self.process.stdout, self._stdout.put), (self.process.stderr, self._stderr.append)):
            threading.Thread(target=_drain, args=(stream, sink), daemon=True).start()
        deadline = _time.monotonic() + self.startup_timeout_s
        try:
            while True:
                remaining = deadline - _time.monotonic()
                if remaining <= 0:
                    raise TransportError(f"the NS server process did not listen within {self.startup_timeout_s:g} s "
                                         f"({self._last_error() or 'no output'})")
                try:
                    line = self._stdout.get(timeout=min(remaining, 0.2))
                except queue.Empty:
                    if self.process.poll() is not None and self._stdout.empty():
                        _time.sleep(0.1)  # let the stderr reader catch the last line
                        raise TransportError(f"the NS server process exited with status {self.process.returncode} "
                                             f"before listening: {self._last_error() or 'no output'}") from None
                    continue
                match = LISTENING.search(line or "")
                if match:
                    self.address = (match["host"], int(match["port"]))
                    return self.address
        except BaseException:
            self.stop()
            raise

    def output(self) -> str:
        """What the child printed on stdout so far, after its listening line (e.g. its
        last line, ``stopped after … session(s)``)."""
        return "".join(self._stdout.queue)

    def _last_error(self) -> str:
        lines = [line.strip() for line in self._stderr if line.strip()]
        return lines[-1] if lines else ""

    def stop(self) -> int | None:
        """Stop the child (stop request, SIGTERM, SIGKILL) and remove its temporary
        records folder; returns its exit status."""
        try:
            return self._stop()
        finally:
            if self._records is not None:
                shutil.rmtree(self._records, ignore_errors=True)
                self._records = None

    def _stop(self) -> int | None:
        process = self.process
        if process is None:
            return None
        asked = False
        if process.poll() is None and self.address is not None:
            if self._wire() == "seed000":
                process.send_signal(signal.SIGINT)
                asked = True
            else:
                try:
                    stop_server(*self.address, timeout_s=self.stop_timeout_s)
                    asked = True
                except TransportError:
                    pass  # busy in a session or gone: the signals below
        try:
            process.wait(self.stop_timeout_s if asked else 0.1)
        except subprocess.TimeoutExpired:
            process.terminate()
            try:
                process.wait(3.0)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait(2.0)
        return process.returncode

    def _wire(self) -> str:
        args = self.serve_args
        for i, arg in enumerate(args):
            if arg == "--wire" and i + 1 < len(args):
                return args[i + 1]
            if arg.startswith("--wire="):
                return arg.split("=", 1)[1]
        return "framed"

    def __enter__(self) -> NSServerProcess:
        self.start()
        return self

    def __exit__(self, *exc_info) -> None:
        self.stop()


def _drain(stream, sink) -> None:
    for line in stream:
        sink(line)
    stream.close()


__all__ = ["LISTENING", "NSServerProcess", "STARTUP_TIMEOUT_S", "STOP_BOUND_S", "STOP_TIMEOUT_S"]
