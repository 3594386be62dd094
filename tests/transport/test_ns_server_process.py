"""NSServerProcess: the ``serve ns`` child is stopped however the ``with`` ends (normally,
on an error, on Ctrl-C), within its stated time, and a child that cannot listen is one
line quoting its error."""

from __future__ import annotations

import time
from pathlib import Path

import numpy as np
import pytest

from rths_ident.transport.ns_server_process import STOP_BOUND_S, NSServerProcess
from rths_ident.transport import TransportError
from rths_ident.transport.remote_substructure import RemoteSubstructure

pytestmark = pytest.mark.opensees
pytest.importorskip("openseespy.opensees")

MODEL = Path(__file__).resolve().parents[1] / "transport" / "ns_model_two_storey.py"


def test_ctrl_c_inside_the_with_stops_the_child_within_the_stated_time():
    with pytest.raises(KeyboardInterrupt):
        with NSServerProcess(["--model", MODEL, "--port", "0"]) as server:
            host, port = server.address
            remote = RemoteSubstructure(host, port, {})  # a session in progress, never closed
            remote.step([0.0], np.sin(2 * np.pi * 2.0 * 0.01))  # the model file's record at t = 0.01 s
            start = time.monotonic()
            raise KeyboardInterrupt
    assert time.monotonic() - start < STOP_BOUND_S
    assert server.process.poll() is not None
    with pytest.raises(TransportError, match="refused"):
        RemoteSubstructure(host, port, {})


def test_a_child_that_cannot_listen_is_reported_and_reaped():
    process = NSServerProcess(["--model", "/nonexistent/model.py", "--port", "0"])
    with pytest.raises(TransportError, match=r"exited with status 1 before listening: .*no such file"):
        process.start()
    assert process.process.poll() == 1


def test_the_childs_temporary_records_folder_is_removed_when_it_stops():
    """The run's own record holds every step; the child's session records go to a
    temporary folder, which must not stay behind (one per --ns opensees-tcp run)."""
    with NSServerProcess(("--host", "127.0.0.1", "--port", "0", "--timeout", "60", "--model", str(MODEL))) as server:
        folder = Path(server.records_folder)
        assert folder.is_dir() and folder.name.startswith("rths-serve-ns-")
    assert not folder.exists() and server.records_folder is None
