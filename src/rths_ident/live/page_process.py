"""The live page served by a process of its own, fed by the run without ever holding it up.

The page's server (:class:`~rths_ident.live.server.LivePage`: Tornado, the events turned
into series, JSON, a WebSocket per tab) runs in a child process
(``python -m rths_ident.live.page_process``), not on a thread of the run's interpreter:
its work never holds the interpreter lock the loop needs (a thread's JSON encoding or
percentile of a long history holds it for as long as that C call runs, and the loop,
woken at its window's opening, waits for it). :class:`LivePageProcess` is the run's
handle on it:

* it binds the page's socket in the run's process (a port in use is one clear error
  before the run) and hands it to the child, with the page's random token (on the
  child's standard input, never on its command line);
* :attr:`LivePageProcess.feed` is the run's subscriber, a
  :class:`~rths_ident.live.channel.FrameSender`: per event one pickled frame and one
  non-blocking write to a socket pair; when the child falls behind, step frames are
  dropped; when it has gone, the run goes on without it;
* STOP comes back on a pipe: the child writes why, and the run's
  :class:`~rths_ident.hybrid.loop.stop_request.StopRequest` reads the pipe (one
  non-blocking read) where the loop already asks it, once per slow step;
* the identified model's loop is computed in the run's process off the loop's thread
  (:mod:`rths_ident.live.model_loop`) and sent on a socket of its own;
* :meth:`LivePageProcess.close` writes what is still waiting, the model's final loop,
  then tells the child to send the final state to every tab and end.

The child ignores Ctrl-C (the run's process decides when the page ends) and ends when
the run's process closes its end of the channel, also if that process dies.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time

from rths_ident.errors import ParameterError
from rths_ident.live.channel import FrameSender, read_frames
from rths_ident.live.listen import bind_page_sockets
from rths_ident.live.model_loop import ModelLoopMaker

__all__ = ["LivePageProcess"]

#: seconds the run's process waits for the child to end after the final state was sent
END_GRACE_S = 5.0
#: events waiting for the child's server thread above which its reader stops reading (the
#: run's sender then keeps its frames, and drops step frames past its own bound)
READER_BACKLOG = 2048


class LivePageProcess:
    """The page of one run, served by a child process (module doc). ``stop``: the run's
    :class:`~rths_ident.hybrid.loop.stop_request.StopRequest` (None: no STOP, e.g. a
    replay); ``url`` says where the page is."""

    def __init__(self, host: str = "127.0.0.1", port: int = 8050, stop=None, replay: bool = False):
        import secrets  # noqa: PLC0415

        self._sockets = bind_page_sockets(host, port)
        self.host, self.port = host, int(self._sockets[0].getsockname()[1])
        self.token = secrets.token_urlsafe(24)
        self.stop, self.replay = stop, replay
        self._process: subprocess.Popen | None = None
        self.feed: FrameSender | None = None
        self._model: ModelLoopMaker | None = None
        self._closed = False

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}/"

    def start(self) -> "LivePageProcess":
        events_here, events_there = socket.socketpair()
        model_here, model_there = socket.socketpair()
        stop_read, stop_write = os.pipe()
        os.set_blocking(stop_read, False)
        config = {"host": self.host, "port": self.port, "token": self.token, "replay": self.replay,
                  "stop": self.stop is not None, "listen": [s.fileno() for s in self._sockets],
                  "events": events_there.fileno(), "model": model_there.fileno(), "stop_pipe": stop_write}
        passed = [*config["listen"], config["events"], config["model"], stop_write]
        try:
            self._process = subprocess.Popen([sys.executable, "-m", "rths_ident.live.page_process"],
                                             stdin=subprocess.PIPE, pass_fds=passed, text=True)
            self._process.stdin.write(json.dumps(config))
            self._process.stdin.close()
        except OSError as error:
            raise ParameterError(f"the live page could not start its server process: {error}")
        finally:
            for end in (events_there, model_there):
                end.close()
            os.close(stop_write)
            for sock in self._sockets:  # the child serves them now
                sock.close()
        model_here.settimeout(30.0)
        self._model = ModelLoopMaker(model_here)
        self.feed = FrameSender(events_here)
        self.feed.observers.append(self._model.observe)
        if self.stop is not None:
            self.stop.listen(stop_read)
        else:
            os.close(stop_read)
        self._model_socket, self._events_socket = model_here, events_here
        return self

    def close(self, flush_s: float = 2.0) -> None:
        """Write what is still waiting and the model's final loop, then have the child send
        the final state to every tab (up to ``flush_s`` [s]) and end. The tabs keep showing
        what they have."""
        if self._closed or self._process is None:
            return
        self._closed = True
        try:
            self._model.final()
            self.feed.drain(flush_s)
            self._model_socket.close()
            self._events_socket.shutdown(socket.SHUT_WR)  # the end of the events: the child's cue
            try:
                self._process.wait(flush_s + END_GRACE_S)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait(5.0)
        except KeyboardInterrupt:  # Ctrl-C while closing: end the page now
            self._process.kill()
        finally:
            self._events_socket.close()


class _PipeStop:
    """The child's side of the run's StopRequest: ``set(how)`` writes ``how`` to the pipe
    the run's loop reads once per slow step; the first one counts."""

    def __init__(self, fd: int):
        self._fd = fd
        self.how = ""

    def set(self, how: str) -> bool:
        if self.how:
            return False
        self.how = str(how)
        try:
            os.write(self._fd, self.how.encode()[:512])
        except OSError:  # the run's process has gone
            return False
        return True


def _read_events(sock: socket.socket, page, ended: threading.Event, paced_store: list) -> None:
    """The run's frames into the page's feed (the child's reader thread)."""
    from rths_ident.live.channel import PacedFigures, PacedSoFar  # noqa: PLC0415
    from rths_ident.runner.events import TestStarted  # noqa: PLC0415

    for stamp, event, extra in read_frames(sock):
        while len(page.feed) > READER_BACKLOG:
            time.sleep(0.005)
        if type(event) is TestStarted:
            watch = {"pacer": PacedSoFar()} if (event.watch or {}).get("paced") else {}
            paced_store[:] = [watch.get("pacer")]
            event = TestStarted(event.name, event.info, watch)
        if isinstance(extra, PacedFigures) and paced_store and paced_store[0] is not None:
            paced_store[0].add(extra)
        page.feed.put(stamp, event)
    ended.set()


def _read_model_loops(sock: socket.socket, page) -> None:
    for stamp, event, _ in read_frames(sock):
        page.feed.put(stamp, event)


def _child_main() -> int:
    """The server process: ``LivePage`` on the sockets the run's process handed over."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C is the run's; the run's process ends the page
    config = json.loads(sys.stdin.read())
    from rths_ident.live.server import LivePage  # noqa: PLC0415

    listen = [socket.socket(fileno=fd) for fd in config["listen"]]
    stop = _PipeStop(config["stop_pipe"]) if config["stop"] else None
    page = LivePage.on_sockets(listen, config["host"], config["token"], stop=stop, replay=config["replay"]).start()
    ended = threading.Event()
    paced: list = []
    events = socket.socket(fileno=config["events"])
    model = socket.socket(fileno=config["model"])
    model_reader = threading.Thread(target=_read_model_loops, args=(model, page), daemon=True)
    model_reader.start()
    threading.Thread(target=_read_events, args=(events, page, ended, paced), daemon=True).start()
    ended.wait()
    model_reader.join(5.0)  # the model's final loop comes before the end of the events
    page.close()
    return 0


if __name__ == "__main__":
    status = _child_main()
    sys.stdout.flush()
    sys.stderr.flush()
    os._exit(status)  # the tabs have the final state: no interpreter teardown (JAX's exit hooks) to wait for
