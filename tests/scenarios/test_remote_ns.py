"""``--ns opensees-tcp``: the scenarios' OpenSeesPy substructure in a ``rths-ident serve
ns`` child process gives the numbers of ``--ns opensees`` in this process (the second
implementation here is the in-process run: float64 crosses the wire unchanged, so every
logged value must be EQUAL), model updating included; the child is always stopped."""

from __future__ import annotations

import json
import socket
import threading

import jax
import numpy as np
import pytest

from rths_ident.errors import ParameterError
from rths_ident.cli import main
from rths_ident.transport import ns_server_process
from rths_ident.scenarios import bw_frame as bf
from rths_ident.scenarios import rc_frame as rc
from rths_ident.cli.run import EXIT_TEST_STOPPED
from rths_ident.runner.options import RunOptions

pytestmark = [pytest.mark.slow, pytest.mark.opensees]
pytest.importorskip("openseespy.opensees")

#: keys of a run's result that are timings (they differ between any two runs)
TIMINGS = ("wall_s", "total_wall_s", "realtime_factor", "phase_s")


def assert_same_run(local: dict, remote: dict, variant: str) -> None:
    logs_local, logs_remote = local["_arrays"]["logs"][variant], remote["_arrays"]["logs"][variant]
    assert jax.tree_util.tree_structure(logs_local) == jax.tree_util.tree_structure(logs_remote)
    for a, b in zip(jax.tree_util.tree_leaves(logs_local), jax.tree_util.tree_leaves(logs_remote)):
        np.testing.assert_array_equal(b, a)
    np.testing.assert_array_equal(remote["_arrays"]["reference_floors"], local["_arrays"]["reference_floors"])
    same = {k: v for k, v in local.items() if k not in TIMINGS + ("_arrays", "ns")}
    assert {k: remote[k] for k in same} == same


@pytest.fixture
def recorded_servers(monkeypatch):
    """Every NSServerProcess the scenarios start, to check they were stopped."""
    started = []

    class Recorded(ns_server_process.NSServerProcess):
        def start(self):
            started.append(self)
            return super().start()

    monkeypatch.setattr(ns_server_process, "NSServerProcess", Recorded)
    return started


def test_rc_frame_over_tcp_equals_in_process(recorded_servers):
    results = {ns: rc.run_scenario(rc.RCFrameConfig(ns=ns, duration=1.0), RunOptions(engine="stepwise", compare=False))
               for ns in ("opensees", "opensees-tcp")}
    assert results["opensees-tcp"]["ns"] == "opensees-tcp"
    assert_same_run(results["opensees"], results["opensees-tcp"], "none")
    [server] = recorded_servers  # one server for the three sessions (DDMRT training, reference, test)
    assert server.process.poll() == 0


def test_bw_frame_with_model_updating_over_tcp_equals_in_process(recorded_servers):
    """The UKF's θ̂ = [k, α, β, γ] pushed into the remote OpenSees BoucWen materials
    every slow step after 0.1 s: the same floors as when they are pushed in process."""
    results = {}
    for ns in ("opensees", "opensees-tcp"):
        # the configuration of test_bw_frame's α-OS test: in one pytest process the loop is compiled once
        cfg = bf.BWFrameConfig(column_model="boucwen", ns=ns, duration=2.0)
        results[ns] = bf.run_scenario(cfg, RunOptions(engine="stepwise", compare=False))
    assert results["opensees-tcp"]["updates_applied"] > 60
    assert_same_run(results["opensees"], results["opensees-tcp"], "ukf")
    assert recorded_servers[0].process.poll() == 0


def test_the_server_child_is_stopped_when_the_run_fails(recorded_servers):
    from rths_ident.scenarios import lugre_frame as lf

    with pytest.raises(ParameterError, match="no OpenSees twin"):
        lf.run_scenario(lf.LugreFrameConfig(ns="opensees-tcp", duration=0.2), RunOptions(engine="stepwise"))
    [server] = recorded_servers
    assert server.process.poll() is not None


def test_address_settings_and_a_refused_connection_are_one_line(capsys, tmp_path):
    with pytest.raises(ParameterError, match="ns_address"):
        rc.RCFrameConfig(ns="opensees", ns_address="127.0.0.1:8090")
    with pytest.raises(ParameterError, match="HOST:PORT"):
        bf.BWFrameConfig(ns="opensees-tcp", ns_address="localhost")
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    code = main(["run", "rc-frame", "--ns", "opensees-tcp", "--ns-address", f"127.0.0.1:{port}", "--duration", "0.2",
                 "--quiet", "--test-record", str(tmp_path / "record.h5")])
    assert code == 1
    assert capsys.readouterr().err.strip().splitlines() == [
        f"rths-ident: error: connection to 127.0.0.1:{port} refused — is the server running and listening on that "
        "port?"]


def test_cli_with_a_server_started_by_hand(tmp_path, capsys):
    """``rths-ident serve ns`` (the scenarios' NS) started first, then ``run … --ns-address``:
    the run's metrics equal the in-process ones; the server keeps serving until stopped."""
    with ns_server_process.NSServerProcess() as server:
        host, port = server.address
        out = {}
        for ns in ("opensees", "opensees-tcp"):
            extra = ["--ns-address", f"{host}:{port}"] if ns == "opensees-tcp" else []
            out[ns] = tmp_path / f"{ns}.json"
            assert main(["run", "rc-frame", "--ns", ns, *extra, "--duration", "0.4", "--quiet", "--no-compare",
                         "--json", str(out[ns])]) == 0
        assert server.process.poll() is None
    assert server.process.poll() == 0
    local, remote = (json.loads(out[ns].read_text()) for ns in ("opensees", "opensees-tcp"))
    assert remote.pop("ns") == "opensees-tcp" and local.pop("ns") == "opensees"
    for key in TIMINGS:
        local.pop(key), remote.pop(key)
    assert remote == local
    assert "J4 force" in capsys.readouterr().out


class _FailsAtStep:
    """The scenario's OpenSees NS, made to fail at slow step ``k`` as an OpenSees
    analysis that does not converge would (``OpenSeesSubstructure.step`` raises
    RuntimeError with OpenSees' status)."""

    def __init__(self, ns, k):
        self.ns, self.k, self.steps = ns, k, 0
        self.dt, self.n_interface = ns.dt, ns.n_interface

    def initial_target(self):
        return self.ns.initial_target()

    def step(self, feedback, ground_accel):
        if self.steps == self.k:
            raise RuntimeError(f"OpenSees analyze failed with status -3 at t = {(self.k + 1) * self.dt:.6g} s")
        self.steps += 1
        return self.ns.step(feedback, ground_accel)

    def apply_parameters(self, estimate):
        self.ns.apply_parameters(estimate)

    def close(self):
        self.ns.close()


def test_a_remote_opensees_failure_is_one_line_naming_the_slow_step(capsys, tmp_path):
    """``run rc-frame --ns opensees-tcp`` against a server whose OpenSees analysis fails at
    slow step 5: the command ends with one line — the step, the time, the server, the
    remote exception's text — and the stopped-test exit status."""
    from rths_ident.scenarios import remote_ns
    from rths_ident.transport.ns_server import NSServer

    server = NSServer(lambda setup: _FailsAtStep(remote_ns.make_substructure(setup), 5), port=0, timeout_s=60,
                      model=remote_ns.MODEL_NAME, log=lambda line: None)
    host, port = server.address
    thread = threading.Thread(target=server.serve, kwargs={"max_sessions": 1}, daemon=True)
    thread.start()
    code = main(["run", "rc-frame", "--ns", "opensees-tcp", "--ns-address", f"{host}:{port}", "--duration", "0.4",
                 "--quiet", "--test-record", str(tmp_path / "record.h5")])
    thread.join(60)
    assert not thread.is_alive() and len(server.failures) == 1
    assert code == EXIT_TEST_STOPPED
    err = capsys.readouterr().err  # the in-thread server's OpenSees prints its own warnings here too
    line = err[err.index("rths-ident: the test stopped:"):].strip()
    assert "\n" not in line
    # the engine adds how the specimen was brought to rest after the server's words
    assert line.startswith(
        f"rths-ident: the test stopped: slow step 5 (t = 0.120 s) failed: remote numerical substructure at "
        f"{host}:{port}, in slow step 5 (t = 0.12 s): the server reported: RuntimeError: OpenSees analyze failed "
        "with status -3 at t = 0.12 s")
