"""The page's server in a process of its own: the run does not depend on it. A paced run
whose page process is killed mid-run ends normally with every step in its record."""

import asyncio
import json
import os
import re
import signal
import subprocess

import pytest
from tornado.httpclient import HTTPRequest
from tornado.websocket import websocket_connect

from rths_ident.records import read_test_record


def _children(pid: int) -> list[int]:
    out = subprocess.run(["ps", "-o", "pid=,args=", "--ppid", str(pid)], capture_output=True, text=True).stdout
    return [int(line.split()[0]) for line in out.splitlines() if "rths_ident.live.page_process" in line]


def _watch_until_step(url: str, step: int) -> dict:
    """Read the page's socket until it shows slow step ``step``; its last status."""
    with __import__("urllib.request").request.urlopen(url, timeout=30) as response:
        token = re.search(r'data-token="([^"]+)"', response.read().decode()).group(1)

    async def run():
        socket = await websocket_connect(HTTPRequest(url.replace("http", "ws") + f"ws?token={token}",
                                                     headers={"Origin": url.rstrip("/")}, connect_timeout=30))
        while True:
            message = json.loads(await asyncio.wait_for(socket.read_message(), 120))
            status = message["status"]
            if (status.get("step") or 0) >= step:
                socket.close()
                return status

    return asyncio.run(run())


@pytest.mark.slow
def test_a_paced_run_whose_page_process_is_killed_ends_normally_with_a_complete_record(tmp_path, start_live):
    record_path = tmp_path / "record.h5"
    process, url = start_live(["run", "lugre-frame", "--engine", "stepwise", "--realtime", "--duration", "4",
                               "--pad", "1", "--no-compare", "--quiet", "--live", "--live-port", "0",
                               "--test-record", str(record_path)], tmp_path)
    try:
        children = _children(process.pid)
        assert len(children) == 1  # the page's server process
        status = _watch_until_step(url, 20)
        total = status["total"]
        os.kill(children[0], signal.SIGKILL)  # mid-run
        out, err = process.communicate(timeout=300)
    finally:
        if process.poll() is None:
            process.kill()
    assert status["step"] < total - 50  # it was killed well before the end
    assert process.returncode == 0, err
    assert "Traceback" not in err
    record = read_test_record(record_path)
    assert record.complete and record.n_steps == total  # every slow step the run described
