"""Shared fixtures: bounded socket pairs and a server thread whose errors reach the test.

Every socket here has a timeout and every thread is joined with one, so no test can hang.
"""

from __future__ import annotations

import pathlib
import socket
import sys
import threading

import pytest

_HERE = str(pathlib.Path(__file__).resolve().parent)
if _HERE not in sys.path:  # ``import _toy_ns`` under any import mode
    sys.path.insert(0, _HERE)

TIMEOUT_S = 5.0

_HERE = str(pathlib.Path(__file__).parent)
if _HERE not in sys.path:  # _opensees_sdof importable under any import mode
    sys.path.insert(0, _HERE)


@pytest.fixture
def socket_pair():
    """A connected pair of stream sockets, each with a timeout."""
    a, b = socket.socketpair()
    a.settimeout(TIMEOUT_S)
    b.settimeout(TIMEOUT_S)
    yield a, b
    a.close()
    b.close()


class PeerThread:
    """Runs ``target()`` in a daemon thread; :meth:`result` joins (bounded) and re-raises."""

    def __init__(self, target):
        self._target = target
        self._value = None
        self._error: BaseException | None = None
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()

    def _run(self):
        try:
            self._value = self._target()
        except BaseException as exc:  # handed to the test thread
            self._error = exc

    def result(self, timeout_s: float = 2 * TIMEOUT_S):
        self._thread.join(timeout_s)
        if self._thread.is_alive():
            raise AssertionError(f"peer thread still running after {timeout_s} s")
        if self._error is not None:
            raise self._error
        return self._value


@pytest.fixture
def peer_thread():
    """Factory: ``peer_thread(fn)`` starts ``fn`` in a thread; ``.result()`` joins it."""
    threads = []

    def start(target):
        thread = PeerThread(target)
        threads.append(thread)
        return thread

    yield start
    for thread in threads:
        thread._thread.join(2 * TIMEOUT_S)
