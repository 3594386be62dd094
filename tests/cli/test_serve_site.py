"""``rths-ident serve site`` (issue 8 acceptance pieces), the CLI run in a subprocess.

* ideal transfer system: an OpenSeesPy SDOF whose column is a ``genericClient`` element
  connected to ``rths-ident serve site --specimen boucwen:…`` equals the same SDOF with
  the column ``zeroLength`` + ``uniaxialMaterial BoucWen`` in process. Tolerance 1e-10
  of the peak: float64 crosses the socket unchanged, rths_ident's BoucWen with
  ``substeps=1`` is OpenSees' update to ~7e-13, Newton stops under NormDispIncr 1e-12 m
  on a ~2e-2 m peak (tests/transport/test_openfresco_generic_client.py measured 4e-15).
* carrion-spencer: rths_ident's OpenFrescoClient (simapp dialect) drives the served
  specimen through the virtual actuator and gets the measured displacement and force.
  Checked against computations independent of the server: (i) the actuator's
  displacement history recomputed in this process from the commands (the same ramp,
  4000 Hz, ``actuator_step``) equals the one served (1e-12 m: same arithmetic, the wire
  is exact); (ii) the measured force equals rths_ident's BoucWen driven along the
  measured displacements (50 sub-steps per 10 ms step), to 2e-3 of the peak: the server
  integrates the same z(x) law along the actuator's 4000 Hz path, the reference along
  its 100 Hz samples, and the two differ where the path reverses inside a step
  (measured 4e-4); (iii) control–structure interaction is visible: the actuator lags
  its command by several per cent of the amplitude.
"""

from __future__ import annotations

import importlib.util
import os
import pathlib
import signal
import subprocess
import tempfile
import sys

import numpy as np
import pytest

import rths_ident
from rths_ident.cli import main

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "transport"))
from _opensees_sdof import A, ALPHA, BETA, GAMMA, K, N, _run_opensees  # noqa: E402

SPECIMEN = f"boucwen:k={K},alpha={ALPHA},A={A},beta={BETA},gamma={GAMMA},n={N},substeps=1"
SRC = str(pathlib.Path(rths_ident.__file__).resolve().parents[1])
TIMEOUT_S = 90.0


class ServeSite:
    """``rths-ident serve site --port 0 …`` in a subprocess; ``port`` from its first line."""

    def __init__(self, popen, *options):
        """``popen``: the ``pressable`` fixture (tests/conftest.py), so Ctrl-C reaches the server."""
        env = {**os.environ, "PYTHONPATH": SRC}
        if "--records" not in options:
            options = (*options, "--records", tempfile.mkdtemp(prefix="serve-site-records-"))
        self.proc = popen([sys.executable, "-m", "rths_ident.cli", "serve", "site", "--port", "0", "--wait", "60",
                           *options], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
        self.first_line = self.proc.stdout.readline()
        if "listening on" not in self.first_line:
            self.proc.kill()
            raise AssertionError(f"serve site did not start: {self.first_line}{self.proc.communicate()}")
        address = self.first_line.split("listening on ")[1].split()[0]
        self.host, port = address.rsplit(":", 1)
        self.port = int(port)

    def finish(self):
        try:
            out, err = self.proc.communicate(timeout=TIMEOUT_S)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.communicate()
        return self.proc.returncode, out, err


@pytest.mark.opensees
@pytest.mark.slow
def test_generic_client_column_served_by_the_cli_equals_opensees_in_process(tmp_path, pressable):
    if importlib.util.find_spec("openseespy") is None:
        pytest.skip("openseespy is not installed")
    server = ServeSite(pressable, "--specimen", SPECIMEN, "--records", str(tmp_path / "records"))
    assert server.host == "127.0.0.1"
    try:
        remote = _run_opensees(tmp_path, "client", server.port)
    finally:
        status, out, err = server.finish()
    assert status == 0, out + err
    assert "client sent DIE" in out and "commitState 400" in out, out
    local = _run_opensees(tmp_path, "local")
    for key in ("u", "f"):
        err_rel = np.max(np.abs(remote[key] - local[key])) / np.max(np.abs(local[key]))
        print(f"{key}: serve site vs in-process OpenSees BoucWen, max error / peak = {err_rel:.1e}")
        assert err_rel < 1e-10
    # the server's record holds every committed step: the column's force as OpenSees got it
    from rths_ident.records import read_test_record

    record = read_test_record(tmp_path / "records" / "session-001.h5")
    assert record.complete and record.kind == "serve site" and record.n_steps == 400
    np.testing.assert_allclose(np.abs(record.steps["force"][:, 0]), np.abs(remote["f"][-400:]),
                               rtol=0, atol=1e-9 * np.max(np.abs(local["f"])))


@pytest.mark.slow
def test_carrion_spencer_site_over_the_simapp_dialect(tmp_path, pressable):
    import jax
    import jax.numpy as jnp

    from rths_ident.hybrid.fast_side import actuator as act
    from rths_ident.models import BoucWen, ElementInputs
    from rths_ident.transport.openfresco_client import OpenFrescoClient

    scaled = (1.0e5, 0.1, 1.0)  # peak force [N], displacement [m], velocity [m/s]
    server = ServeSite(pressable, "--specimen", SPECIMEN.replace(",substeps=1", ""),
                       "--transfer-system", "carrion-spencer", "--actuator-scaled-for", ",".join(map(str, scaled)))
    dt, amplitude = 0.01, 0.03
    times = np.arange(1, 101) * dt
    commands = amplitude * np.sin(2 * np.pi * 1.0 * times)  # 1 Hz, 1 s: past yield (z_u = 0.01 m)
    try:
        client = OpenFrescoClient.connect(server.host, server.port, n_dof=1, dialect="simapp", timeout_s=60.0)
        readings = [client.step([d], time=t) for d, t in zip(commands, times)]
        client.close()
    finally:
        status, out, err = server.finish()
    assert status == 0, out + err
    assert "commitState 100" in out and "getDaqResponse 100" in out, out
    x_a = np.array([r.displacement[0] for r in readings])
    force = np.array([r.force[0] for r in readings])

    # (i) the actuator history recomputed here: 40 periods of 1/4000 s per step, ramped command
    params = BoucWen.Params(k=K, alpha=ALPHA, A=A, beta=BETA, gamma=GAMMA, n=N)
    transfer = act.TransferSystemParams(actuator=act.CarrionSpencerParams.scaled_for(*scaled), specimen=params,
                                        specimen_model=BoucWen)
    starts = np.concatenate([[0.0], commands[:-1]])
    ramp = np.arange(1, 41) / 40
    fast_commands = (starts[:, None] + ramp[None, :] * (commands - starts)[:, None]).ravel()

    def body(state, command):
        state, _ = act.actuator_step(transfer, state, act.ActuatorInputs(command), dt / 40)
        return state, (state.displacement, state.restoring_force)

    _, (x_fast, r_fast) = jax.jit(lambda s, c: jax.lax.scan(body, s, c))(act.actuator_init(transfer),
                                                                         jnp.asarray(fast_commands))
    ours = np.stack([np.asarray(x_fast)[39::40], np.asarray(r_fast)[39::40]], axis=1)
    np.testing.assert_allclose(x_a, ours[:, 0], rtol=0, atol=1e-12)
    np.testing.assert_allclose(force, ours[:, 1], rtol=0, atol=1e-12 * np.max(np.abs(force)))

    # (ii) the specimen law along the measured displacements
    fine = BoucWen.Params(k=K, alpha=ALPHA, A=A, beta=BETA, gamma=GAMMA, n=N, substeps=50)
    velocities = np.diff(np.concatenate([[0.0], x_a])) / dt

    def bw(state, xv):
        return BoucWen.step(fine, state, ElementInputs(xv[0], xv[1]), dt)

    _, reference = jax.jit(lambda s, xv: jax.lax.scan(bw, s, xv))(BoucWen.init(fine),
                                                                  jnp.stack([x_a, velocities], axis=1))
    reference = np.asarray(reference)
    err_rel = np.max(np.abs(force - np.array(reference))) / np.max(np.abs(reference))
    print(f"measured force vs BoucWen along the measured displacement: {err_rel:.1e} of peak")
    assert err_rel < 2e-3
    # (iii) control-structure interaction: the specimen is not where it was told to be
    lag = np.max(np.abs(x_a - commands)) / amplitude
    print(f"actuator tracking error: {lag:.3f} of the amplitude")
    assert 0.01 < lag < 0.3
    assert np.max(np.abs(x_a)) > 2 * A / (BETA + GAMMA)  # past yield


@pytest.mark.parametrize(
    "specimen, message",
    [
        ("boucwn:k=1", "--specimen: unknown model 'boucwn': expected one of lugre | boucwen | degrading-boucwen"),
        ("boucwen:k=2e6,alpha=0.1,A=1,beta=60,gamma=40,nn=1", "unknown field 'nn'; fields of boucwen: k, alpha, A"),
        ("boucwen:k=2e6,alpha=0.1,A=1,beta=60,gamma=40,n=x", "n='x' is not a number"),
        ("boucwen:k=2e6,alpha=0.1", "missing A, beta, gamma, n"),
        ("boucwen:k=-2e6,alpha=0.1,A=1,beta=60,gamma=40,n=1", "BoucWenParams.k"),
        ("bilinear:k=1e6,fy=1e4,b=0.1,substeps=2", "unknown field 'substeps'"),
    ],
)
def test_bad_specimen_is_one_line_before_listening(specimen, message, capsys):
    assert main(["serve", "site", "--port", "0", "--specimen", specimen]) == 1
    captured = capsys.readouterr()
    assert captured.out == ""  # refused before the server listens
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and message in lines[0], captured.err


def test_no_client_within_wait_is_one_line(capsys, tmp_path):
    assert main(["serve", "site", "--port", "0", "--specimen", "linear:k=1e6", "--wait", "0.2",
                 "--records", str(tmp_path)]) == 1
    captured = capsys.readouterr()
    assert "listening on 127.0.0.1:" in captured.out
    assert "no OpenFresco client connected" in captured.err and len(captured.err.strip().splitlines()) == 1


def test_client_with_another_data_size_is_refused(capsys, tmp_path):
    import threading

    from rths_ident.transport import openfresco as of
    from rths_ident.transport.tcp import connect

    result = {}
    thread = threading.Thread(target=lambda: result.update(code=main(
        ["serve", "site", "--port", "0", "--specimen", "linear:k=1e6", "--wait", "10", "--timeout", "10",
         "--records", str(tmp_path)])))
    thread.start()
    for _ in range(200):  # the address is printed once the server listens
        out = capsys.readouterr().out
        if "listening on" in out:
            break
        thread.join(0.05)
    port = int(out.split("listening on 127.0.0.1:")[1].split()[0])
    with connect("127.0.0.1", port, timeout_s=10.0) as sock:
        sock.sendall(of.encode_setup(of.SetupMessage.for_generic_client(1, data_size=128)._replace(data_size=128)))
        thread.join(10.0)
    assert result["code"] == 1
    assert "client's data_size 128 != --data-size 256" in capsys.readouterr().err


def test_ctrl_c_stops_the_server_with_one_line(pressable):
    server = ServeSite(pressable, "--specimen", "linear:k=1e6")
    server.proc.send_signal(signal.SIGINT)
    status, out, err = server.finish()
    assert status == 130, out + err
    assert err.strip().splitlines()[-1] == "rths-ident serve site: interrupted (Ctrl-C)", err


LIMIT_CLIENT = """
import math, sys
import openseespy.opensees as ops
port = int(sys.argv[1])
ops.wipe(); ops.model('basic', '-ndm', 1, '-ndf', 1)
ops.node(1, 0.0); ops.node(2, 0.0); ops.fix(1, 1); ops.mass(2, 1.0e3)
ops.element('genericClient', 1, '-node', 1, 2, '-dof', 1, '-dof', 1, '-server', port, '127.0.0.1')
accel = [2.0 * 9.81 * math.sin(2 * math.pi * 4.0 * i * 0.005) for i in range(401)]
ops.timeSeries('Path', 1, '-dt', 0.005, '-values', *accel)
ops.pattern('UniformExcitation', 1, 1, '-accel', 1)
ops.constraints('Plain'); ops.numberer('Plain'); ops.system('FullGeneral')
ops.test('NormDispIncr', 1.0e-12, 50); ops.algorithm('Newton'); ops.integrator('Newmark', 0.5, 0.25)
ops.analysis('Transient')
for k in range(400):
    if ops.analyze(1, 0.005) != 0:
        print('analysis failed at step %d' % k, flush=True)
        ops.wipe()  # destroys the genericClient element: it sends DIE
        sys.exit(2)
print('no limit reached', flush=True)
"""


@pytest.mark.opensees
@pytest.mark.slow
def test_an_actuator_limit_tells_the_opensees_client_and_stops_in_one_line(tmp_path, pressable):
    """The served actuator sized for a 5 mm peak (stroke limit 1.5 × 5 mm = 7.5 mm,
    CarrionSpencerParams.scaled_for rule 7) under a 2 g ground motion: the stroke limit
    trips; the server brings the actuator to rest, answers OpenSees' genericClient with
    NaN so that its analysis fails (instead of blocking in read forever), and after the
    client's DIE ends with one line and exit status 3; the record keeps every committed
    step and the error."""
    if importlib.util.find_spec("openseespy") is None:
        pytest.skip("openseespy is not installed")
    server = ServeSite(pressable, "--specimen", SPECIMEN.replace(",substeps=1", ""),
                       "--transfer-system", "carrion-spencer", "--actuator-scaled-for", "1e5,0.005,1.0",
                       "--records", str(tmp_path / "records"))
    script = tmp_path / "client.py"
    script.write_text(LIMIT_CLIENT)
    try:
        client = subprocess.run([sys.executable, str(script), str(server.port)], capture_output=True, text=True,
                                timeout=TIMEOUT_S)  # a hung genericClient fails the test here
    finally:
        status, out, err = server.finish()
    assert client.returncode == 2 and "analysis failed at step" in client.stdout, client.stdout + client.stderr
    assert status == 3, out + err
    [line] = [text for text in err.strip().splitlines() if text.startswith("rths-ident serve site:")]
    assert line.startswith("rths-ident serve site: the test stopped: ActuatorLimitError: actuator stroke limit "
                           "exceeded at t = ")
    assert "m > 0.0075 m" in line and "the actuator was brought to rest: command held at " in line
    assert "; the client sent DIE after " in line
    assert line.endswith(f"test record → {tmp_path / 'records' / 'session-001.h5'}")
    from rths_ident.records import read_test_record

    record = read_test_record(tmp_path / "records" / "session-001.h5")
    assert not record.complete and record.n_steps > 0
    assert record.errors()[0].message in line
    assert abs(record.steps["measured_displacement"][-1, 1]) > 0.0075  # x_a of the committed step that crossed it (node 2)


@pytest.mark.opensees
@pytest.mark.slow
def test_an_interlock_declared_in_the_test_file_stops_the_served_actuator_first(tmp_path, pressable):
    """The same 2 g test with ``--interlocks TEST.toml`` whose ``[interlocks]`` declares a
    4 mm measured stroke (and a command stroke of 1 m; left out, the command's would be
    the actuator's own stroke limit, 7.5 mm, which the command crosses first): the interlock trips
    at the first controller period whose x_a passes 4 mm, before the actuator's limit; the
    server brings the actuator to rest and tells the client the same way (NaN replies, exit
    status 3), and its one line and the record say which interlock, its value and limit,
    the commit and the time."""
    if importlib.util.find_spec("openseespy") is None:
        pytest.skip("openseespy is not installed")
    test_file = tmp_path / "limits.toml"
    test_file.write_text("[interlocks]\nmeasured_stroke = 0.004\ncommand_stroke = 1.0\n")
    server = ServeSite(pressable, "--specimen", SPECIMEN.replace(",substeps=1", ""),
                       "--transfer-system", "carrion-spencer", "--actuator-scaled-for", "1e5,0.005,1.0",
                       "--records", str(tmp_path / "records"),
                       "--interlocks", str(test_file))
    script = tmp_path / "client.py"
    script.write_text(LIMIT_CLIENT)
    try:
        client = subprocess.run([sys.executable, str(script), str(server.port)], capture_output=True, text=True,
                                timeout=TIMEOUT_S)
    finally:
        status, out, err = server.finish()
    assert client.returncode == 2 and "analysis failed at step" in client.stdout, client.stdout + client.stderr
    assert status == 3, out + err
    [line] = [text for text in err.strip().splitlines() if text.startswith("rths-ident serve site:")]
    assert line.startswith("rths-ident serve site: the test stopped: InterlockTripped: interlock measured_stroke "
                           "tripped: sample "), line
    value = float(line.split(" m beyond the limit 0.004 m")[0].rsplit(" ", 1)[1])
    assert 0.004 < abs(value) < 0.0075  # past the interlock, short of the actuator's own stroke limit
    assert "the actuator was brought to rest: command held at " in line
    from rths_ident.records import read_test_record

    record = read_test_record(tmp_path / "records" / "session-001.h5")
    assert not record.complete and record.errors()[0].message in line
    assert np.max(np.abs(record.steps["measured_displacement"][:-1, 1])) <= 0.004  # every earlier commit within it
