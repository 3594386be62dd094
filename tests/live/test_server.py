"""The live page's server without a browser: what it serves, to whom, and what it
accepts (a token in the page; its own Host and Origin; no garbage)."""

import asyncio
import json
import re
import urllib.error
import urllib.request

import pytest
from tornado.httpclient import HTTPRequest
from tornado.websocket import websocket_connect

from rths_ident.errors import ParameterError
from rths_ident.hybrid.loop.stop_request import StopRequest
from rths_ident.live.server import MAX_TABS, STOP_HOW, STOP_REASON, LivePage
from rths_ident.runner.events import PhaseEnded


@pytest.fixture
def page():
    stop = StopRequest()
    served = LivePage("127.0.0.1", 0, stop=stop).start()
    yield served
    served.close(flush_s=0.2)


def _get(url, host=None):
    request = urllib.request.Request(url, headers={"Host": host} if host else {})
    with urllib.request.urlopen(request, timeout=10) as response:
        return response.status, response.read().decode(), dict(response.headers)


def _talk(page, messages, token=None, origin=None, wait_s=0.4):
    """Open a tab's socket, send ``messages``, return what came back (and the close code)."""
    async def run():
        url = f"ws://127.0.0.1:{page.port}/ws?token={page.token if token is None else token}"
        headers = {"Origin": origin or f"http://127.0.0.1:{page.port}"}
        socket = await websocket_connect(HTTPRequest(url, headers=headers, connect_timeout=5))
        received = []
        for message in messages:
            await socket.write_message(message)
        deadline = asyncio.get_running_loop().time() + wait_s
        while asyncio.get_running_loop().time() < deadline:
            try:
                text = await asyncio.wait_for(socket.read_message(), 0.1)
            except asyncio.TimeoutError:
                continue
            if text is None:
                break
            received.append(json.loads(text))
        code = socket.close_code
        socket.close()
        return received, code

    return asyncio.run(run())


def test_the_page_carries_its_token_and_is_served_only_under_its_own_host(page):
    status, html, headers = _get(page.url)
    assert status == 200 and f'data-token="{page.token}"' in html
    assert "script-src 'self'" in headers["Content-Security-Policy"]  # no inline or remote script
    assert re.findall(r'src="([^"]+)"', html) == ["/static/vendor/uPlot.iife.min.js", "/static/live.js"]
    assert _get(page.url + "static/vendor/uPlot.iife.min.js")[0] == 200
    with pytest.raises(urllib.error.HTTPError, match="403"):  # a DNS-rebinding page names another host
        _get(page.url, host=f"attacker.example:{page.port}")


def test_a_tab_gets_the_history_then_stop_works_only_with_the_token(page):
    page.feed(PhaseEnded("building", 1.5))
    received, _ = _talk(page, ["not json", "{}", json.dumps({"type": "stop", "token": "guess"}),
                               json.dumps({"type": "stop"}), json.dumps([1, 2])])
    assert received[0]["type"] == "snapshot"
    assert ["building", 1.5] in received[-1]["status"]["phases"]  # the tick delivered the event
    assert not page.stop.is_set()  # garbage, a wrong token, no token: nothing
    _, code = _talk(page, ["x" * 5000])
    assert code == 1009 and not page.stop.is_set()  # an oversized message closes that tab only
    received, _ = _talk(page, [json.dumps({"type": "stop", "token": page.token})])
    assert page.stop.is_set() and page.stop.how == STOP_HOW
    assert received[-1]["status"]["stop_requested"] == {"reason": STOP_REASON, "accepted": True}


def test_a_socket_without_the_token_or_from_another_origin_is_refused(page):
    received, code = _talk(page, [], token="wrong")
    assert received == [] and code == 4403
    with pytest.raises(Exception, match="403"):
        _talk(page, [], origin="http://attacker.example")
    assert not page.stop.is_set()


def test_a_port_in_use_is_one_clear_error():
    first = LivePage("127.0.0.1", 0)
    try:
        with pytest.raises(ParameterError, match=rf"--live-port {first.port}: cannot serve the live page there"):
            LivePage("127.0.0.1", first.port)
    finally:
        for sock in first._sockets:
            sock.close()
    assert MAX_TABS >= 2


@pytest.mark.slow
def test_a_run_without_live_imports_nothing_of_it(tmp_path):
    """Without --live a run pays nothing for the page: neither Tornado nor rths_ident.live
    is imported."""
    import os  # noqa: PLC0415
    import subprocess  # noqa: PLC0415
    import sys  # noqa: PLC0415
    from pathlib import Path  # noqa: PLC0415

    src = str(Path(__file__).resolve().parents[2] / "src")
    code = ("import sys; from rths_ident.cli import main; "
            "status = main(['run', 'lugre-frame', '--duration', '0.5', '--no-compare', '--quiet']); "
            "print('imported:', sorted(m for m in sys.modules if m == 'tornado' or m.startswith('rths_ident.live'))); "
            "sys.exit(status)")
    out = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=600,
                         env={**os.environ, "PYTHONPATH": src})
    assert out.returncode == 0, out.stderr
    assert "imported: []" in out.stdout


def test_more_tabs_than_allowed_are_refused_and_the_others_keep_working(page):
    async def run():
        url = f"ws://127.0.0.1:{page.port}/ws?token={page.token}"
        origin = {"Origin": f"http://127.0.0.1:{page.port}"}
        sockets = [await websocket_connect(HTTPRequest(url, headers=origin, connect_timeout=5))
                   for _ in range(MAX_TABS + 1)]
        codes = []
        for socket in sockets:
            first = await asyncio.wait_for(socket.read_message(), 5)
            codes.append(socket.close_code if first is None else "served")
        for socket in sockets:
            socket.close()
        return codes

    codes = asyncio.run(run())
    assert codes[:MAX_TABS] == ["served"] * MAX_TABS and codes[MAX_TABS] == 4429


def test_a_tab_that_stops_reading_does_not_hold_up_the_others(page):
    """A tab that never reads (a stalled browser): its socket's buffers fill, the server
    skips it; the feed never blocks and a reading tab gets every step."""
    import socket as sockets  # noqa: PLC0415

    import numpy as np  # noqa: PLC0415

    from rths_ident.runner.events import RunEnded, StepDone, TestStarted  # noqa: PLC0415

    stalled = sockets.create_connection(("127.0.0.1", page.port))
    stalled.setsockopt(sockets.SOL_SOCKET, sockets.SO_RCVBUF, 4096)
    stalled.sendall((f"GET /ws?token={page.token} HTTP/1.1\r\nHost: 127.0.0.1:{page.port}\r\n"
                     f"Origin: http://127.0.0.1:{page.port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                     "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n").encode())
    steps, ratio = 3000, 80
    info = {"test": "t", "engine": "stepwise", "paced": False, "slow_rate_hz": 50.0, "fast_rate_hz": 4000.0,
            "samples_per_step": ratio, "steps": steps, "time_first_s": 0.02, "params": [], "guards": None,
            "response_names": ["floor1"], "reference": None, "limits": {}}

    async def run():
        url = f"ws://127.0.0.1:{page.port}/ws?token={page.token}"
        reader = await websocket_connect(HTTPRequest(url, headers={"Origin": f"http://127.0.0.1:{page.port}"}))
        page.feed(TestStarted("t", info))
        x = np.linspace(0, 0.01, ratio)
        for k in range(steps):
            page.feed(StepDone(k, steps, {"fast": {"target": x, "measured": x, "command": x, "force": 1e4 * x},
                                          "ns": {"displacement": np.array([1e-3 * k])}}))
            if k % 200 == 0:
                await asyncio.sleep(0.01)
        page.feed(RunEnded("complete"))
        last = None
        while True:
            text = await asyncio.wait_for(reader.read_message(), 20)
            last = json.loads(text)
            if last["status"].get("state") == "ended":
                break
        reader.close()
        return last

    last = asyncio.run(run())
    stalled.close()
    assert last["status"]["step"] == steps - 1 and last["status"]["dropped_steps"] == 0
    assert page.state.series["ns:0"][-1] == pytest.approx(1e-3 * (steps - 1))


def _steps_fed(page, total: int, done: int) -> None:
    """A run of ``total`` slow steps whose first ``done`` steps the loop has emitted."""
    from rths_ident.runner.events import StepDone, TestStarted  # noqa: PLC0415

    page.feed(TestStarted("t", {"test": "t", "engine": "stepwise", "paced": False, "slow_rate_hz": 50.0,
                                "fast_rate_hz": 50.0, "samples_per_step": 1, "steps": total, "time_first_s": 0.02,
                                "params": [], "guards": None, "response_names": [], "reference": None,
                                "limits": {}}))
    for k in range(done):
        page.feed(StepDone(k, total, {"fast": {"target": [0.0], "measured": [0.0]}}))


def test_a_stop_after_the_last_step_says_the_run_had_already_ended(page):
    """The loop reads STOP at the end of each step, after the step's event: once the event
    of the last step was emitted, STOP can stop nothing. The page says so — not "accepted"
    followed by "run complete" — and the run's StopRequest stays unset. The events the loop
    emitted just before the click (not yet sent to the tabs) count."""
    _steps_fed(page, total=5, done=5)
    received, _ = _talk(page, [json.dumps({"type": "stop", "token": page.token})])
    assert not page.stop.is_set()
    assert received[-1]["status"]["stop_requested"] == {
        "reason": "the run had already done its last slow step (5 of 5) when STOP came: nothing to stop",
        "accepted": False}
    from rths_ident.runner.events import RunEnded  # noqa: PLC0415

    page.feed(RunEnded("complete"))
    received, _ = _talk(page, [json.dumps({"type": "stop", "token": page.token})])
    assert not page.stop.is_set()
    assert received[-1]["status"]["stop_requested"]["reason"] == "the run had already ended (complete): nothing to stop"


def test_a_stop_before_the_last_step_is_accepted(page):
    _steps_fed(page, total=5, done=4)
    received, _ = _talk(page, [json.dumps({"type": "stop", "token": page.token})])
    assert page.stop.is_set() and page.stop.how == STOP_HOW
    assert received[-1]["status"]["stop_requested"] == {"reason": STOP_REASON, "accepted": True}


def test_an_event_reaches_a_tab_without_waiting_for_a_period(page):
    """The server is woken by the event (no fixed tick): a step emitted after a quiet
    spell longer than PUSH_PERIOD_S is sent within a few milliseconds (bounded here at
a quarter of the period: a fixed tick would give a delay uniform over it)."""
    from rths_ident.live.server import PUSH_PERIOD_S  # noqa: PLC0415
    from rths_ident.runner.events import StepDone  # noqa: PLC0415

    _steps_fed(page, total=100, done=1)

    async def run():
        url = f"ws://127.0.0.1:{page.port}/ws?token={page.token}"
        socket = await websocket_connect(HTTPRequest(url, headers={"Origin": f"http://127.0.0.1:{page.port}"}))
        await asyncio.wait_for(socket.read_message(), 5)  # the snapshot
        delays = []
        for k in range(1, 10):
            await asyncio.sleep(2 * PUSH_PERIOD_S)  # quiet: the next event is sent at once
            clock = asyncio.get_running_loop().time
            sent = clock()
            page.feed(StepDone(k, 100, {"fast": {"target": [0.0], "measured": [0.0]}}))
            while True:
                frame = json.loads(await asyncio.wait_for(socket.read_message(), 5))
                if frame["status"]["step"] == k:
                    break
            delays.append(clock() - sent)
        socket.close()
        return delays

    delays = asyncio.run(run())
    assert sorted(delays)[4] < 0.25 * PUSH_PERIOD_S, delays  # the median (a fixed tick: uniform over the period)
