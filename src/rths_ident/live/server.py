"""The live page's server: Tornado (HTTP and WebSockets) on a thread with its own event loop.

A run's page is served in a process of its own (:mod:`rths_ident.live.page_process`
binds the socket in the run's process and hands it over: :meth:`LivePage.on_sockets`);
:class:`LivePage` itself (which can also bind its socket: a port in use is a clear
error) serves on a daemon thread with its own event loop:

* ``GET /`` the page (``static/index.html`` with a fresh random token written into it),
  ``/static/…`` its script, style sheet and the vendored plotting library (uPlot, MIT) —
  nothing is fetched from the internet;
* ``/ws?token=…`` a WebSocket per tab: the whole state when it connects (a tab opened
  late sees the history), then a delta as soon as the loop has emitted something new —
  the feed wakes the server (:meth:`~rths_ident.live.feed.LiveFeed.arm`) —, at most
  once per :data:`PUSH_PERIOD_S`: a step is on its way to the tabs within a millisecond
  of its event when the previous update is that old, and waits at most
  :data:`PUSH_PERIOD_S` otherwise. A tab whose previous message is still unsent is
  skipped and sent the whole state once it has caught up; a tab that disconnects is
  forgotten; more than :data:`MAX_TABS` tabs are refused;
* ``{"type": "stop", "token": …}`` from a tab with the page's token sets the run's
  :class:`~rths_ident.hybrid.loop.stop_request.StopRequest`; anything else a browser sends
  (not JSON, too long, another token, another origin or Host) is ignored or refused.

Events only are appended to the :class:`~rths_ident.live.feed.LiveFeed`
(:attr:`LivePage.feed`; in the page's process by the thread that reads the run's
frames); every computation (:class:`~rths_ident.live.state.LiveState`) and every byte
sent happen on the server's thread. Loopback (127.0.0.1) unless another host is asked for.
"""

from __future__ import annotations

import asyncio
import functools
import hmac
import json
import logging
import math
import secrets
import threading
import time
from pathlib import Path

import tornado.httpserver
import tornado.ioloop
import tornado.web
import tornado.websocket

from rths_ident.errors import ParameterError
from rths_ident.live.feed import LiveFeed
from rths_ident.live.listen import bind_page_sockets
from rths_ident.live.state import LiveState
from rths_ident.runner.events import StepDone

__all__ = ["LivePage", "STATIC", "PUSH_PERIOD_S", "MAX_TABS", "STOP_HOW"]

STATIC = Path(__file__).parent / "static"
#: the shortest time between two updates sent to the tabs [s] (≤ 15 a second; the page
#: redraws on each: its share of the machine, which it shares with the loop, stays small)
PUSH_PERIOD_S = 1 / 15
#: tabs served at once
MAX_TABS = 16
#: the largest message a tab may send [bytes]
MAX_MESSAGE_BYTES = 1024
#: what STOP sets the run's StopRequest with (the record: "stopped by the operator (STOP on the live page) …")
STOP_HOW = "STOP on the live page"
#: what the page shows once STOP was accepted
STOP_REASON = f"by the operator ({STOP_HOW})"


def _json(frame: dict) -> str:
    try:
        return json.dumps(frame, allow_nan=False, separators=(",", ":"))
    except ValueError:  # a non-finite number slipped through: null, as the page expects
        return json.dumps(_finite(frame), separators=(",", ":"))


def _finite(value):
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v) for v in value]
    return value


class _Tab:
    """One connected tab: at most one message in flight."""

    def __init__(self, socket: "_Socket"):
        self.socket = socket
        self.pending = None
        self.needs_snapshot = True

    def send(self, text: str) -> bool:
        if self.pending is not None and not self.pending.done():
            self.needs_snapshot = True  # slow tab: skip, and send it everything when it has caught up
            return False
        try:
            self.pending = self.socket.write_message(text)
        except tornado.websocket.WebSocketClosedError:
            return False
        self.pending.add_done_callback(self._sent)
        return True

    def _sent(self, _future) -> None:
        if self.needs_snapshot:  # it has caught up: its snapshot with the next update
            self.socket.page.wake()


class _Handler(tornado.web.RequestHandler):
    page: "LivePage"

    def initialize(self, page):
        self.page = page

    def prepare(self):
        if not self.page.host_allowed(self.request.host):  # a DNS-rebinding page names another host
            raise tornado.web.HTTPError(403)

    def set_default_headers(self):
        self.set_header("Cache-Control", "no-store")
        self.set_header("X-Frame-Options", "DENY")
        self.set_header("X-Content-Type-Options", "nosniff")
        self.set_header("Content-Security-Policy", "default-src 'self'; connect-src 'self'; "
                        "style-src 'self'; script-src 'self'; img-src 'self' data:; frame-ancestors 'none'")


class _PageHandler(_Handler):
    def get(self):
        html = (STATIC / "index.html").read_text(encoding="utf-8").replace("{{TOKEN}}", self.page.token)
        self.set_header("Content-Type", "text/html; charset=utf-8")
        self.write(html)


class _NoIconHandler(_Handler):
    def get(self):
        self.set_status(204)


class _StaticHandler(tornado.web.StaticFileHandler):
    page: "LivePage"

    def initialize(self, path, page):
        super().initialize(path)
        self.page = page

    def prepare(self):
        if not self.page.host_allowed(self.request.host):
            raise tornado.web.HTTPError(403)


class _Socket(tornado.websocket.WebSocketHandler):
    page: "LivePage"

    def initialize(self, page):
        self.page = page
        self.tab = None

    def check_origin(self, origin: str) -> bool:  # the page this server served, nothing else
        return self.page.host_allowed(self.request.host) and origin in (
            f"http://{self.request.host}", f"https://{self.request.host}")

    def open(self):
        token = self.get_query_argument("token", "")
        if not hmac.compare_digest(token.encode(), self.page.token.encode()):
            self.close(4403, "wrong token")
            return
        if len(self.page.tabs) >= MAX_TABS:
            self.close(4429, f"more than {MAX_TABS} tabs")
            return
        self.tab = _Tab(self)
        self.page.tabs.append(self.tab)
        self.page.send_snapshot(self.tab)

    def on_message(self, message):
        if self.tab is None or not isinstance(message, str) or len(message) > MAX_MESSAGE_BYTES:
            return
        try:
            request = json.loads(message)
        except ValueError:
            return
        if not isinstance(request, dict) or request.get("type") != "stop":
            return
        token = request.get("token")
        if isinstance(token, str) and hmac.compare_digest(token.encode(), self.page.token.encode()):
            self.page.request_stop()

    def on_close(self):
        if self.tab in self.page.tabs:
            self.page.tabs.remove(self.tab)


class LivePage:
    """The page of one run (module doc). ``feed`` is the run's subscriber; ``stop`` the
    run's :class:`~rths_ident.hybrid.loop.stop_request.StopRequest` (None: the page has
    no STOP, e.g. a replay). ``port`` 0 picks a free port; ``url`` says which."""

    def __init__(self, host: str = "127.0.0.1", port: int = 8050, stop=None, replay: bool = False):
        self._setup(bind_page_sockets(host, port), host, secrets.token_urlsafe(24), stop, replay)

    @classmethod
    def on_sockets(cls, sockets: list, host: str, token: str, stop=None, replay: bool = False) -> "LivePage":
        """The page on listening sockets bound elsewhere (the run's process binds them and
        hands them to the page's server process: :mod:`rths_ident.live.page_process`)."""
        page = cls.__new__(cls)
        page._setup(sockets, host, token, stop, replay)
        return page

    def _setup(self, sockets: list, host: str, token: str, stop, replay: bool) -> None:
        self._sockets = sockets
        bound = self._sockets[0].getsockname()
        self.host, self.port = host, int(bound[1])
        self.token = token
        self.stop = stop
        self.replay = replay
        self.feed = LiveFeed()
        self.state = LiveState()
        self.state.status["replay"] = replay
        self.state.status["stop_available"] = stop is not None
        self.tabs: list[_Tab] = []
        self._allowed_hosts = {f"{name}:{self.port}" for name in (host, "127.0.0.1", "localhost", "[::1]")}
        self._thread: threading.Thread | None = None
        self._loop: tornado.ioloop.IOLoop | None = None
        self._ready = threading.Event()
        self._closing = False
        self._error: BaseException | None = None
        self._push_due = None  # the next update's timer (None: none is due)
        self._last_push = -math.inf  # when the last update went [s, the event loop's clock]

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"http://{host}:{self.port}/"

    def host_allowed(self, host_header: str) -> bool:
        return host_header in self._allowed_hosts

    # ------------------------------------------------------------------ thread
    def start(self) -> "LivePage":
        for name in ("tornado.access", "tornado.general"):  # a refused request is not news on the terminal
            logging.getLogger(name).setLevel(logging.CRITICAL)
        self._thread = threading.Thread(target=self._serve, name="rths-ident live page", daemon=True)
        self._thread.start()
        self._ready.wait(10.0)
        if self._error is not None:
            raise ParameterError(f"the live page could not start: {self._error}")
        return self

    def _serve(self) -> None:
        try:
            asyncio.set_event_loop(asyncio.new_event_loop())
            self._loop = tornado.ioloop.IOLoop.current()
            app = tornado.web.Application(
                [(r"/", _PageHandler, {"page": self}),
                 (r"/favicon.ico", _NoIconHandler, {"page": self}),
                 (r"/static/(.*)", _StaticHandler, {"path": str(STATIC), "page": self}),
                 (r"/ws", _Socket, {"page": self})],
                websocket_max_message_size=MAX_MESSAGE_BYTES, compress_response=False)
            self._http = tornado.httpserver.HTTPServer(app, max_body_size=MAX_MESSAGE_BYTES, max_header_size=16384,
                                                       idle_connection_timeout=60.0)
            self._http.add_sockets(self._sockets)
            self._wake_from_feed = functools.partial(self._loop.add_callback, self.wake)
            self.feed.arm(self._wake_from_feed)
        except BaseException as error:  # noqa: BLE001 - told to the caller's thread
            self._error = error
            self._ready.set()
            return
        self._ready.set()
        self._loop.start()
        self._loop.close(all_fds=False)

    def close(self, flush_s: float = 2.0) -> None:
        """Send the final state to every tab (waiting up to ``flush_s`` [s] for them to
        take it), then stop serving. The tabs keep showing what they have."""
        if self._loop is None or self._closing:
            return
        self._closing = True
        done = threading.Event()

        async def finish():
            if self._push_due is not None:
                self._loop.remove_timeout(self._push_due)
                self._push_due = None
            deadline = self._loop.time() + flush_s
            while True:  # the final state to every tab; a slow one gets it when it has caught up
                self._send_update()
                if self._loop.time() >= deadline or not any(
                        t.needs_snapshot or (t.pending is not None and not t.pending.done()) for t in self.tabs):
                    break
                await asyncio.sleep(0.02)
            self._http.stop()
            for tab in list(self.tabs):
                tab.socket.close(1001, "the run has ended")
            await asyncio.sleep(0.05)
            done.set()
            self._loop.stop()

        self._loop.add_callback(finish)
        try:
            done.wait(flush_s + 2.0)
            if self._thread is not None:
                self._thread.join(2.0)
        except KeyboardInterrupt:  # Ctrl-C while closing: quit now (the thread is a daemon)
            pass
        for sock in self._sockets:
            sock.close()

    # ------------------------------------------------------------------ on the server's thread
    def wake(self) -> None:
        """Something is new (an event, a STOP, a tab that caught up): send an update now,
        or :data:`PUSH_PERIOD_S` after the last one if that is later."""
        if self._push_due is not None or self._closing:
            return
        due = self._last_push + PUSH_PERIOD_S
        if due <= self._loop.time():
            self._push()
        else:
            self._push_due = self._loop.call_at(due, self._push)

    def _push(self) -> None:
        self._push_due = None
        if self._closing:
            return
        self._last_push = self._loop.time()
        self._send_update()
        self.feed.arm(self._wake_from_feed)  # the next event wakes the server again

    def _take_events(self) -> list:
        """Apply the events the loop has emitted so far to the state; returns them."""
        batch = self.feed.drain()
        if batch and self.state.info is None and self.feed.started is not None and not any(
                e is self.feed.started[1] for _, e in batch):
            self.state.apply(*self.feed.started)  # the description was dropped with old events
        for stamp, event in batch:
            self.state.apply(stamp, event)
        return batch

    def _send_update(self) -> None:
        try:
            drained = time.time()
            batch = self._take_events()
            self.state.after_batch()
            frame = self.state.delta()
            if frame is not None:  # for the page's measurement of the latency and its parts
                first = next((stamp for stamp, event in batch if type(event) is StepDone), None)
                frame["server"] = {"first_step": first, "drained": drained, "sent": time.time()}
            text = None if frame is None else _json(frame)
            snapshot = None
            for tab in list(self.tabs):
                if tab.needs_snapshot or (frame is not None and frame["type"] == "snapshot"):
                    if tab.pending is not None and not tab.pending.done():
                        continue
                    snapshot = text if frame is not None and frame["type"] == "snapshot" else (
                        snapshot or _json(self.state.snapshot()))
                    if tab.send(snapshot):
                        tab.needs_snapshot = False
                elif text is not None:
                    tab.send(text)
        except Exception as error:  # noqa: BLE001 - the page must never take the test down
            self.state.status["page_error"] = f"{type(error).__name__}: {error}"

    def send_snapshot(self, tab: _Tab) -> None:
        if tab.send(_json(self.state.snapshot())):
            tab.needs_snapshot = False

    def _run_over(self) -> str | None:
        """Why a STOP now comes too late (None: the loop will still read it)."""
        status = self.state.status
        if status.get("state") == "ended":
            return f"the run had already ended ({status.get('how')}): nothing to stop"
        step, total = status.get("step"), status.get("total")
        if step is not None and total and step >= total - 1:
            return (f"the run had already done its last slow step ({step + 1} of {total}) when STOP came: "
                    "nothing to stop")
        return None

    def request_stop(self) -> None:
        """STOP from a tab (on the server's thread). Refused, saying so, once the loop has
        done its last slow step (it reads STOP at the end of each step, after the step's
        event: the events it emitted so far are applied first) or the run has ended."""
        try:
            self._take_events()
        except Exception as error:  # noqa: BLE001 - the page must never take the test down
            self.state.status["page_error"] = f"{type(error).__name__}: {error}"
        over = self._run_over()
        if over is not None:
            self.state.note_stop_request(over, False)
            self.wake()
            return
        engine = (self.state.info or {}).get("engine")
        if self.stop is None:
            why = ("this page replays a record: nothing to stop" if self.replay else
                   "the fused engine runs the whole record in one compiled call: STOP applies to step-wise runs"
                   if engine == "fused" else "this page has no STOP (a served session: the client's run stops it)")
            self.state.note_stop_request(why, False)
            self.wake()
            return
        accepted = self.stop.set(STOP_HOW)
        self.state.note_stop_request(STOP_REASON if accepted else "already asked for", accepted)
        self.wake()
