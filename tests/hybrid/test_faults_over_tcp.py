"""Faults on the wire between the loop and a numerical substructure in another process.

A real NS server (the rc-frame's native NS behind :class:`NSServer`) talks to the loop's
:class:`RemoteSubstructure` through a proxy that forwards every byte and, at the reply to
slow step ``AT``, injects one fault: the peer disconnects, stalls past the timeout, sends
a short frame, an oversized frame, a NaN, an unknown message type, another protocol
version, or skips a sequence number. Each must stop the test safely (the NaN through the
NS-divergence interlock): the virtual
specimen brought to rest, one error naming what happened, the slow step, the test time
and the peer, with advice; every completed step on disk in the test record, readable.
"""

import socket
import struct
import threading

import numpy as np
import pytest

from rths_ident.hybrid.loop.engine import LoopAborted
from rths_ident.hybrid.loop.assembled import run_loop
from rths_ident.runner.recording import StepRecorder, open_run_record
from rths_ident.scenarios import rc_frame as rc
from rths_ident.records import read_test_record
from rths_ident.transport.framed import HEADER_SIZE, MessageType
from rths_ident.transport.ns_server import NSServer
from rths_ident.transport.remote_substructure import RemoteSubstructure
from rths_ident.transport.stream import receive_exactly

pytestmark = pytest.mark.slow

AT = 12  # the slow step whose reply is damaged
STEP_TIMEOUT_S = 1.0


def _mutate(fault: str, header: bytes, payload: bytes) -> bytes | None:
    """The bytes the proxy sends instead of one server message (None: send nothing)."""
    magic, version, kind, sequence, length = struct.unpack("!4sBBII", header)
    if fault == "nan":
        payload = struct.pack("!d", float("nan")) + payload[8:]
    elif fault == "short":
        return header + payload[: len(payload) // 2]
    elif fault == "oversized":
        length = 1 << 30
    elif fault == "unknown-type":
        kind = 42
    elif fault == "version":
        version = 2
    elif fault == "sequence-gap":
        sequence += 1
    return struct.pack("!4sBBII", magic, version, kind, sequence, length) + payload


class FaultyProxy:
    """Forwards bytes between a client and ``server``; the ``at``-th TARGET the server
    sends after the initial one gets ``fault`` (module doc). Stops by itself."""

    def __init__(self, server: tuple[str, int], fault: str, at: int):
        self.server, self.fault, self.at = server, fault, at
        self.listener = socket.create_server(("127.0.0.1", 0))
        self.listener.settimeout(30.0)
        self.port = self.listener.getsockname()[1]
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self):
        client, _ = self.listener.accept()
        upstream = socket.create_connection(self.server, timeout=30.0)
        self.sockets = (client, upstream)
        for s in (client, upstream):
            s.settimeout(30.0)
        threading.Thread(target=self._forward_raw, args=(client, upstream), daemon=True).start()
        targets = 0
        try:
            while not self.stop.is_set():
                header = receive_exactly(upstream, HEADER_SIZE, what="header")
                length = struct.unpack("!I", header[10:14])[0]
                payload = receive_exactly(upstream, length, what="payload")
                if header[5] == MessageType.TARGET:
                    targets += 1
                    if targets == self.at + 1 + 1:  # the initial target, then one per step
                        if self.fault == "disconnect":
                            break
                        if self.fault == "stall":
                            self.stop.wait(4 * STEP_TIMEOUT_S)
                            break
                        client.sendall(_mutate(self.fault, header, payload))
                        if self.fault == "short":
                            break
                        continue
                client.sendall(header + payload)
        except OSError:
            pass
        finally:
            for s in (client, upstream):
                try:  # wakes the forwarding thread and sends the FIN now
                    s.shutdown(socket.SHUT_RDWR)
                except OSError:
                    pass
            for s in (client, upstream, self.listener):
                s.close()

    @staticmethod
    def _forward_raw(source, sink):
        try:
            while data := source.recv(65536):
                sink.sendall(data)
        except OSError:
            pass

    def close(self):
        """Stop now: both connections are shut down, which also ends the server's session."""
        self.stop.set()
        for s in getattr(self, "sockets", ()):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
        self.thread.join(timeout=10.0)


@pytest.fixture(scope="module")
def frame_case():
    return rc.build(rc.RCFrameConfig(duration=1.0))


@pytest.mark.parametrize("fault, expected", [
    ("disconnect", "closed"),
    ("stall", "time"),
    ("short", "closed"),
    ("oversized", "payload"),
    ("nan", "nan"),
    ("unknown-type", "type"),
    ("version", "version"),
    ("sequence-gap", "sequence"),
])
def test_a_fault_on_the_wire_stops_the_test_safely_and_keeps_the_record(frame_case, tmp_path, fault, expected):
    server = NSServer(lambda setup: frame_case.make_ns("none"), port=0, timeout_s=30.0, log=lambda line: None)
    serving = threading.Thread(target=server.serve, kwargs={"max_sessions": 1}, daemon=True)
    serving.start()
    proxy = FaultyProxy(server.address, fault, AT)
    cfg = rc.RCFrameConfig(duration=1.0)
    path = tmp_path / "test_record.h5"
    try:
        ns = RemoteSubstructure("127.0.0.1", proxy.port, {"dt": frame_test_dt(frame_case)},
                                step_timeout_s=STEP_TIMEOUT_S)
        with pytest.raises(LoopAborted) as info:
            with open_run_record(path, cfg, frame_case, "stepwise") as record:
                run_loop(frame_case, "stepwise", variant="none", ns=ns,
                         recorder=StepRecorder(record, frame_case.time_slow, None, frame_case.ground_accel))
    finally:
        proxy.close()
        server.close()
        serving.join(timeout=10.0)
    message = str(info.value)
    assert f"slow step {AT}" in message and f"t = {(AT + 1) * 0.02:.3f} s" in message
    assert f"127.0.0.1:{proxy.port}" in message  # the peer
    assert expected in message.lower()
    assert "brought to rest" in message and "What to do:" in message
    # a NaN from the NS is the NS-divergence interlock (the transport refused it); the rest are faults
    trip = info.value.trip
    assert (None if trip is None else (trip.name, trip.step)) == (("ns_divergence", AT) if fault == "nan" else None)
    # the specimen was unloaded through the virtual actuator
    stop = info.value.safe_stop_logs
    assert abs(stop["measured"].ravel()[-1]) < 1e-3 * max(1e-3, np.max(np.abs(stop["command"])))
    # every completed step is on disk and readable, with the error where it happened
    r = read_test_record(path)
    assert not r.complete and r.n_steps == AT
    assert r.errors()[0].step == AT
    np.testing.assert_array_equal(r.fast_series("fast/measured")[: AT * 80].size, AT * 80)


def frame_test_dt(test) -> float:
    return float(test.time_slow[1] - test.time_slow[0])
