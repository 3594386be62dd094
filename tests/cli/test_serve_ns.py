"""``rths-ident serve ns`` in a child process, as a user starts it: framed sessions give
the numbers of the same model file in process (bit for bit), the seed 000 wire speaks
the thesis' bytes to a client written with ``socket`` and ``struct`` only, and failures
are one clear line (a remote OpenSees exception with its text and slow step, a server
killed mid-test, a port in use)."""

from __future__ import annotations

import socket
import struct
import tempfile
from pathlib import Path

import numpy as np
import pytest

from rths_ident.cli import main
from rths_ident.transport.ns_server_process import NSServerProcess
from rths_ident.transport import PeerClosedError, RemoteError
from rths_ident.transport.remote_substructure import RemoteSubstructure

pytestmark = pytest.mark.opensees
pytest.importorskip("openseespy.opensees")

MODEL = Path(__file__).resolve().parents[1] / "transport" / "ns_model_two_storey.py"
SPRING = 1.0e6  # N/m: the specimen, a linear spring at the roof


def in_process(steps: int, update_at: int | None = None):
    """The model file's NS in this process, closed by a linear spring: targets, logs."""
    from rths_ident.structures.ns_model_file import load_ns_model

    model = load_ns_model(MODEL)
    ns = model.substructure()
    try:
        return closed_loop(ns, model.ground_accel, steps, update_at)
    finally:
        ns.close()


def closed_loop(ns, record, steps, update_at=None):
    target = ns.initial_target()
    targets, logs = [target], []
    for k in range(steps):
        if k == update_at:
            ns.apply_parameters([2.0e6])
        target, log = ns.step(SPRING * target, record[k + 1])
        targets.append(target)
        logs.append(log)
    return np.array(targets), logs


def _serving(*extra):
    """``serve ns --model ns_model_two_storey.py`` on a free port, stopped after use."""
    started: list = []

    records = tempfile.mkdtemp(prefix="serve-ns-records-")  # not the working folder

    def start(*more):
        options = [*extra, *more]
        if "--records" not in options:
            options += ["--records", records]
        process = NSServerProcess(["--model", MODEL, "--port", "0", "--timeout", "60", *options])
        started.append(process)
        process.start()
        return process

    yield start
    for process in started:
        process.stop()
        assert process.process.poll() is not None


@pytest.fixture
def served():
    """A server of its own for one test."""
    yield from _serving()


@pytest.fixture(scope="module")
def framed_server():
    """One framed server for several tests (one session each)."""
    yield from (start() for start in _serving())


@pytest.fixture(scope="module")
def seed000_server():
    """One seed 000 server (reply: the target) for several tests (one session each)."""
    yield from (start() for start in _serving("--wire", "seed000"))


def test_framed_session_equals_the_model_in_process_with_an_update(framed_server):
    host, port = framed_server.address
    record = np.sin(2 * np.pi * 2.0 * 0.01 * np.arange(201))
    with RemoteSubstructure(host, port, {}, dt=0.01, n_interface=1, model="two-storey") as remote:
        assert (remote.parameter_names, remote.parameter_units) == (("k1",), ("N/m",))
        targets, logs = closed_loop(remote, record, 120, update_at=60)
    want_targets, want_logs = in_process(120, update_at=60)
    np.testing.assert_array_equal(targets, want_targets)
    for got, want in zip(logs, want_logs):
        assert list(got) == list(want)
        for name in want:
            np.testing.assert_array_equal(got[name], want[name])
    # the update changed the response (so it did reach the remote OpenSees material)
    unchanged, _ = in_process(120)
    assert np.max(np.abs(unchanged[-30:] - targets[-30:])) > 1e-3 * np.max(np.abs(targets))


def test_remote_opensees_exception_reaches_the_client_naming_the_step(framed_server):
    host, port = framed_server.address
    remote = RemoteSubstructure(host, port, {})
    for k in range(3):
        remote.step([0.0], np.sin(2 * np.pi * 2.0 * 0.01 * (k + 1)))
    with pytest.raises(RemoteError) as info:
        remote.step([0.0], 5.0)  # not the model's record: OpenSeesSubstructure refuses it
    message = str(info.value)
    assert f"remote numerical substructure at {host}:{port}, in slow step 3 (t = 0.04 s)" in message
    assert "ValueError: ground_accel = 5.0 m/s² at t = 0.04 s differs from the model's record" in message
    remote.close()


def test_each_session_is_recorded_complete_or_with_its_error(served, tmp_path):
    from rths_ident.records import read_test_record

    server = served("--records", str(tmp_path))
    host, port = server.address
    record = np.sin(2 * np.pi * 2.0 * 0.01 * np.arange(201))
    with RemoteSubstructure(host, port, {}) as remote:
        targets, _ = closed_loop(remote, record, 40, update_at=20)
    remote = RemoteSubstructure(host, port, {})
    remote.step([0.0], record[1])
    with pytest.raises(RemoteError):
        remote.step([0.0], 5.0)  # not the model's record: the session fails at slow step 1
    remote.close()
    server.stop()
    done, failed = (read_test_record(tmp_path / f"session-00{i}.h5") for i in (1, 2))
    assert done.complete and done.n_steps == 40 and done.kind == "serve ns"
    np.testing.assert_array_equal(done.steps["target"][:, 0], targets[1:, 0])
    np.testing.assert_array_equal(done.steps["feedback"][:, 0], SPRING * targets[:-1, 0])
    np.testing.assert_array_equal(done.steps["ground_accel"], record[1:41])
    assert any(e.kind == "update" and e.step == 20 for e in done.events)
    assert not failed.complete and failed.n_steps == 1
    assert failed.errors()[0].step == 1 and "differs from the model's record" in failed.errors()[0].message


def test_server_killed_mid_test_is_a_clear_transport_error(served):
    server = served()
    host, port = server.address
    remote = RemoteSubstructure(host, port, {})
    remote.step([0.0], np.sin(2 * np.pi * 2.0 * 0.01))
    server.process.kill()
    server.process.wait(10)
    with pytest.raises(PeerClosedError) as info:
        remote.step([0.0], np.sin(2 * np.pi * 2.0 * 0.02))
    message = str(info.value)
    assert message.startswith(f"remote numerical substructure at {host}:{port}, in slow step 1 (t = 0.02 s): ")
    assert "peer closed the connection" in message and "\n" not in message
    assert (info.value.slow_index, info.value.time) == (1, pytest.approx(0.02))
    remote.close()


def receive_exactly(sock, n):
    data = b""
    while len(data) < n:
        chunk = sock.recv(n - len(data))
        assert chunk, "server closed early"
        data += chunk
    return data


@pytest.mark.parametrize("reply", ["target", "displacement"])
def test_seed000_wire_speaks_the_thesis_bytes(seed000_server, served, reply):
    """The thesis' Simulink client as plain socket + struct: per slow step 8 bytes
    ``>d`` force out, 8 bytes ``>d`` back; the server's answers are the model file's NS
    in process, bit for bit (the target, or the interface displacement = nodeDisp)."""
    server = seed000_server if reply == "target" else served("--wire", "seed000", "--reply", reply, "--once")
    host, port = server.address
    steps = 80
    want_targets, want_logs = in_process(steps)
    with socket.create_connection((host, port), timeout=10) as sock:
        received = []
        value = want_targets[0][0]  # the client starts from the NS's first target
        for k in range(steps):
            force = SPRING * (want_targets[k][0])
            sock.sendall(struct.pack(">d", force))
            raw = receive_exactly(sock, 8)
            received.append(raw)
            value = struct.unpack(">d", raw)[0]
            assert np.isfinite(value)
    want = [t[0] for t in want_targets[1:]] if reply == "target" else \
        [log["interface_displacement"][0] for log in want_logs]
    assert received == [struct.pack(">d", w) for w in want]


def test_seed000_split_writes_are_read_whole(seed000_server):
    """A force that arrives in pieces (TCP may split it) is read whole, not taken as 0."""
    host, port = seed000_server.address
    want_targets, _ = in_process(2)
    with socket.create_connection((host, port), timeout=10) as sock:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        for k in range(2):
            data = struct.pack(">d", SPRING * want_targets[k][0])
            sock.sendall(data[:3])
            sock.sendall(data[3:])
            assert struct.unpack(">d", receive_exactly(sock, 8))[0] == want_targets[k + 1][0]


def test_cli_errors_are_one_line(capsys, tmp_path):
    assert main(["serve", "ns", "--wire", "seed000", "--port", "0"]) == 1
    assert "--wire seed000 needs --model FILE.py defining DT and GROUND_ACCEL" in capsys.readouterr().err
    assert main(["serve", "ns", "--model", str(tmp_path / "missing.py"), "--port", "0"]) == 1
    assert "no such file" in capsys.readouterr().err
    empty = tmp_path / "empty.py"
    empty.write_text("X = 1\n")
    assert main(["serve", "ns", "--model", str(empty), "--port", "0"]) == 1
    assert "define make_substructure(setup), or build(ops) and INTERFACE" in capsys.readouterr().err
    with socket.create_server(("127.0.0.1", 0)) as busy:
        port = busy.getsockname()[1]
        assert main(["serve", "ns", "--model", str(MODEL), "--port", str(port)]) == 1
    err = capsys.readouterr().err.strip()
    assert err == (f"rths-ident: error: cannot listen on 127.0.0.1:{port}: the port is already in use — stop the "
                   "other server or choose another port (0 picks a free one)")
    assert main(["serve", "ns", "--model", str(MODEL), "--port", "0", "--timeout", "0.5", "--once"]) == 1
    err = capsys.readouterr().err
    assert "rths-ident: error: no peer connected to 127.0.0.1:" in err and "within 0.5 s" in err
    assert main(["serve", "ns", "--model", str(MODEL), "--port", "0", "--spin-ms", "5000"]) == 1
    assert capsys.readouterr().err.strip() == ("rths-ident: error: --spin-ms 5000.0: expected a number of milliseconds "
                                               "from 0 to 1000")
    assert main(["serve", "ns", "--model", str(MODEL), "--port", "0", "--step-marks", str(tmp_path / "nowhere")]) == 1
    assert capsys.readouterr().err.strip() == (f"rths-ident: error: --step-marks {tmp_path / 'nowhere'}: expected an "
                                               "existing folder")


@pytest.mark.slow
def test_once_serves_one_whole_run_with_its_comparison_runs(tmp_path, capsys):
    """``serve ns --once`` then ``run bw-frame … --ns opensees-tcp --ns-address``: the run
    opens three sessions (ukf, then the comparisons none and oracle) and says when it is
    over; the server serves all three and stops by itself, exit status 0."""
    server = NSServerProcess(["--port", "0", "--timeout", "120", "--once", "--records", str(tmp_path / "records")])
    host, port = server.start()
    try:
        code = main(["run", "bw-frame", "--set", "specimen.model=boucwen", "--ns", "opensees-tcp", "--ns-address",
                     f"{host}:{port}", "--duration", "0.3", "--quiet", "--test-record", str(tmp_path / "run.h5")])
        server.process.wait(60)  # by itself: --once
    finally:
        server.stop()
    assert code == 0, capsys.readouterr().err
    assert server.process.returncode == 0
    assert "stopped after 3 session(s) of 1 run(s), 0 failed" in server.output()
    assert sorted(p.name for p in (tmp_path / "records").iterdir()) == ["session-001.h5", "session-002.h5",
                                                                          "session-003.h5"]


DYING_MODEL = '''
"""The scenarios' OpenSees NS, whose process dies (exit 9, no reply) in slow step {at}."""
import os

from rths_ident.scenarios import remote_ns

MODEL_NAME = remote_ns.MODEL_NAME


class Dying:
    def __init__(self, ns):
        self.ns, self.k = ns, 0

    def __getattr__(self, name):
        return getattr(self.ns, name)

    def step(self, feedback, ground_accel):
        if self.k == {at}:
            os._exit(9)
        self.k += 1
        return self.ns.step(feedback, ground_accel)


def make_substructure(setup):
    return Dying(remote_ns.make_substructure(setup))
'''


@pytest.mark.slow
def test_a_server_that_dies_while_the_loop_polls_ends_the_run_in_one_line(tmp_path, capsys, monkeypatch):
    """``run rc-frame --ns opensees-tcp`` against a server that dies in slow step 7 while
    the loop polls for its reply (polling made 2 s long here, so the death comes within
    it): the run stops safely with the designed one line and exit status 3, and the
    close was seen by the poll."""
    from rths_ident.transport import remote_substructure, stream

    model = tmp_path / "dying.py"
    model.write_text(DYING_MODEL.replace("{at}", "7"))
    monkeypatch.setattr(remote_substructure, "SPIN_FRACTION", 100.0)  # 100 × 20 ms …
    monkeypatch.setattr(remote_substructure, "SPIN_MAX_S", 2.0)  # … at most 2 s
    seen = []
    polled = stream._spin_into

    def spin_into(*args):
        try:
            return polled(*args)
        except stream.PeerClosedError as error:
            seen.append(error)
            raise

    monkeypatch.setattr(stream, "_spin_into", spin_into)
    server = NSServerProcess(["--model", str(model), "--port", "0", "--timeout", "60", "--records", str(tmp_path)])
    host, port = server.start()
    try:
        code = main(["run", "rc-frame", "--ns", "opensees-tcp", "--ns-address", f"{host}:{port}", "--duration", "0.3",
                     "--no-compare", "--quiet", "--test-record", str(tmp_path / "run.h5")])
    finally:
        server.stop()
    err = capsys.readouterr().err.strip()
    assert code == 3 and "\n" not in err and "Traceback" not in err, err
    assert err.startswith(f"rths-ident: the test stopped: slow step 7 (t = 0.160 s) failed: remote numerical "
                          f"substructure at {host}:{port}, in slow step 7 (t = 0.16 s): peer closed the connection "
                          "while a framed message header was expected, before any byte of it arrived"), err
    assert "the 7 completed slow steps are kept" in err and "What to do: the peer went away" in err
    assert err.endswith(f"test record → {tmp_path / 'run.h5'}")
    assert len(seen) == 1


def test_the_server_runs_at_a_short_switch_interval_and_gives_it_back(monkeypatch, tmp_path):
    """While it serves, ``serve ns`` runs at the paced loop's switch interval (the serving
    thread takes the interpreter from the record's writer thread within 50 µs, not
    Python's 5 ms); after it, also when it stopped with an error, the interval is as before."""
    import sys  # noqa: PLC0415

    from rths_ident.hybrid.loop.realtime_host import SWITCH_INTERVAL_S  # noqa: PLC0415
    from rths_ident.transport.ns_server import NSServer  # noqa: PLC0415

    seen = []
    monkeypatch.setattr(NSServer, "serve", lambda self, **_: seen.append(sys.getswitchinterval()) or 0)
    before = sys.getswitchinterval()
    assert before != SWITCH_INTERVAL_S
    assert main(["serve", "ns", "--model", str(MODEL), "--port", "0", "--records", str(tmp_path)]) == 0
    assert seen == [pytest.approx(SWITCH_INTERVAL_S)] and sys.getswitchinterval() == before
    monkeypatch.undo()
    assert main(["serve", "ns", "--model", str(MODEL), "--port", "0", "--timeout", "0.5", "--once",
                 "--records", str(tmp_path)]) == 1  # no client came
    assert sys.getswitchinterval() == before
