"""OpenFresco protocol, client role: rths_ident's OpenFrescoClient drives OpenSees' own
``adapter`` element (seed 003's "ES server", ``ServerCol1_Adapter.tcl``) running in an
OpenSeesPy subprocess (issue 8 acceptance piece).

The server script below is seed 003's ES server in OpenSeesPy: a zeroLength column
(Steel01 or BoucWen) between a fixed node and node 2, the adapter element on node 2
with penalty stiffness k_b = 1e12 N/m, and a static LoadControl analysis stepping
``analyze(1)`` until the adapter receives DIE and ends the process (exit status 255,
"The Simulation has successfully completed." — OpenSees' Adapter.cpp, not a failure).

What is compared. The adapter imposes the client's displacement through its penalty
spring, so the column sits at ``daqDisp = d − F/k_b`` (not exactly at d) and
``daqForce = k_b (d − daqDisp)`` is the column's force there. The reference is the same
OpenSees material, in another process, driven along the returned ``daqDisp`` history
(``testUniaxialMaterial`` / ``setStrain``, which commits each strain). Tolerance 5e-9 of
the peak force: the material sees the same displacement history to round-off; what
differs is (i) ``k_b (d − daqDisp)``, computed from two ~0.15 m numbers whose
difference is ~1e-7 m: one ulp of 0.15 m times k_b is 2.8e-5 N, i.e. 3e-10 (Steel01,
1e5 N) to 6e-10 (BoucWen, 5e4 N) of the peak per ulp, and (ii) Newton stopping under
NormDispIncr 1e-14 m on a k_b-dominated system (an equilibrium residual below
k·1e-14 m, negligible). Measured: 1e-10 (Steel01) and 3e-10 (BoucWen), printed.
"""

from __future__ import annotations

import importlib.util
import json
import socket
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from rths_ident.transport import openfresco as of
from rths_ident.transport.errors import ProtocolError, TransportError
from rths_ident.transport.openfresco_client import (
    OpenFrescoClient,
    decode_daq_reply,
    setup_for_dialect,
)

PENALTY = 1.0e12  # k_b [N/m], seed 003's ServerCol1_Adapter.tcl
SUBPROCESS_TIMEOUT = 60.0
MATERIALS = {
    # Steel01: fy [N], E [N/m], b
    "Steel01": ("Steel01", 1.0e5, 2.0e6, 0.05),
    # BoucWen (OpenSees order): alpha ko n gamma beta Ao deltaA deltaNu deltaEta; SI
    "BoucWen": ("BoucWen", 0.1, 2.0e6, 1.0, 40.0, 60.0, 1.0, 0.0, 0.0, 0.0),
}

SERVER_SCRIPT = textwrap.dedent(
    """
    import json, sys
    import openseespy.opensees as ops

    port, material = int(sys.argv[1]), json.loads(sys.argv[2])
    ops.wipe()
    ops.model('basic', '-ndm', 1, '-ndf', 1)
    ops.node(1, 0.0)
    ops.node(2, 0.0)
    ops.fix(1, 1)
    ops.uniaxialMaterial(material[0], 1, *material[1:])
    ops.element('zeroLength', 1, 1, 2, '-mat', 1, '-dir', 1)
    ops.element('adapter', 2, '-node', 2, '-dof', 1, '-stif', 1.0e12, port)
    ops.timeSeries('Linear', 1)
    ops.pattern('Plain', 1, 1)
    ops.constraints('Plain')
    ops.numberer('Plain')
    ops.system('FullGeneral')
    ops.test('NormDispIncr', 1.0e-14, 50)
    ops.algorithm('Newton')
    ops.integrator('LoadControl', 1.0)
    ops.analysis('Static')
    while True:  # one step per client exchange; the adapter exits the process on DIE
        if ops.analyze(1) != 0:
            raise SystemExit('adapter server: analysis failed at step %g' % ops.getTime())
    """
)  # docs/transport.md shows this script (tests/transport/test_docs.py checks they agree)
assert "'-stif', 1.0e12," in SERVER_SCRIPT and PENALTY == 1.0e12

REFERENCE_SCRIPT = textwrap.dedent(
    """
    import json, sys
    import openseespy.opensees as ops

    material, strains, out = json.loads(sys.argv[1]), json.load(open(sys.argv[2])), sys.argv[3]
    ops.wipe()
    ops.uniaxialMaterial(material[0], 1, *material[1:])
    ops.testUniaxialMaterial(1)
    stresses = []
    for e in strains:
        ops.setStrain(e)          # trial strain, then commit
        stresses.append(ops.getStress())
    json.dump(stresses, open(out, 'w'))
    """
)


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _history(n_steps=240, peak=0.15):
    """Three cycles of growing amplitude, well past yield (Steel01: 0.05 m)."""
    s = np.linspace(0.0, 1.0, n_steps)
    return peak * s * np.sin(2 * np.pi * 3 * s)


def _require_openseespy():
    if importlib.util.find_spec("openseespy") is None:  # OpenSees runs in subprocesses only
        pytest.skip("openseespy is not installed")


class AdapterServer:
    """The OpenSeesPy adapter server script in a subprocess (killed if still alive)."""

    def __init__(self, tmp_path, material):
        script = tmp_path / "adapter_server.py"
        script.write_text(SERVER_SCRIPT)
        self.port = _free_port()
        self.proc = subprocess.Popen(
            [sys.executable, str(script), str(self.port), json.dumps(material)],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    def finish(self):
        try:
            out, err = self.proc.communicate(timeout=SUBPROCESS_TIMEOUT)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
                self.proc.communicate()
        return self.proc.returncode, out + err


def _reference_forces(tmp_path, material, strains):
    script = tmp_path / "reference.py"
    script.write_text(REFERENCE_SCRIPT)
    strains_file, out = tmp_path / "strains.json", tmp_path / "stresses.json"
    strains_file.write_text(json.dumps([float(e) for e in strains]))
    proc = subprocess.run([sys.executable, str(script), json.dumps(material), str(strains_file), str(out)],
                          capture_output=True, text=True, timeout=SUBPROCESS_TIMEOUT)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return np.asarray(json.loads(out.read_text()))


@pytest.mark.opensees
@pytest.mark.parametrize("material_name", sorted(MATERIALS))
def test_client_drives_opensees_adapter_element(tmp_path, material_name):
    _require_openseespy()
    material = MATERIALS[material_name]
    server = AdapterServer(tmp_path, material)
    history = _history()
    try:
        client = OpenFrescoClient.connect("127.0.0.1", server.port, n_dof=1, dialect="adapter",
                                          timeout_s=30.0, wait_for_server_s=30.0)
        readings = [client.step([d]) for d in history]
        client.close()  # DIE: the adapter ends its process
    finally:
        status, output = server.finish()
    assert "The Simulation has successfully completed." in output, output
    assert status == 255, f"adapter server exit status {status} (Adapter.cpp exits with -1 on DIE)\n{output}"

    daq_disp = np.array([r.displacement[0] for r in readings])
    daq_force = np.array([r.force[0] for r in readings])
    # the penalty spring: the node sits F/k_b short of the command
    np.testing.assert_allclose(daq_disp, history - daq_force / PENALTY, rtol=0, atol=1e-15)
    reference = _reference_forces(tmp_path, material, daq_disp)
    scale = np.max(np.abs(reference))
    err = np.max(np.abs(daq_force - reference)) / scale
    print(f"{material_name}: adapter force vs in-process material, max error / peak = {err:.1e}")
    assert err < 5e-9
    # the test exercises the hysteresis: force at zero displacement differs loading/unloading
    assert np.ptp(reference) > 0 and np.max(np.abs(history)) > 0.1


@pytest.mark.opensees
def test_remote_element_site_over_the_adapter_matches_bilinear_kinematic(tmp_path):
    """A Site in the loop: the adapter's Steel01 (b = 0.05) behind RemoteElementSite
    equals rths_ident's BilinearKinematic (seed 001 Eq. 2.2 = Steel01 with a_i = 0)
    driven in process along the same displacements (the adapter's daqDisp)."""
    _require_openseespy()
    import jax.numpy as jnp

    from rths_ident.transport.remote_site import RemoteElementSite
    from rths_ident.models import BilinearKinematic, ElementInputs

    _, fy, k, b = MATERIALS["Steel01"]
    server = AdapterServer(tmp_path, MATERIALS["Steel01"])
    history = _history(n_steps=120)
    try:
        client = OpenFrescoClient.connect("127.0.0.1", server.port, n_dof=1, timeout_s=30.0,
                                          wait_for_server_s=30.0)
        site = RemoteElementSite(client, dt=0.01)
        readings = [site.step(np.array([d])) for d in history]
        site.close()
    finally:
        server.finish()
    params = BilinearKinematic.Params(k=k, fy=fy, b=b)
    state, previous, ours = BilinearKinematic.init(params), 0.0, []
    for r in readings:
        x = float(r.displacement[0])
        state, force = BilinearKinematic.step(params, state, ElementInputs(jnp.float64(x), (x - previous) / 0.01),
                                              0.01)
        previous = x
        ours.append(float(force))
    remote = np.array([float(r.force[0]) for r in readings])
    err = np.max(np.abs(remote - np.array(ours))) / np.max(np.abs(ours))
    print(f"adapter Steel01 vs BilinearKinematic, max error / peak = {err:.1e}")
    assert err < 5e-9  # the k_b round-off of the module doc; measured 8e-11
    assert readings[0].log["target"].shape == (1,)


def test_setup_messages_of_the_two_dialects():
    assert tuple(setup_for_dialect("adapter", 1)) == (1, 0, 0, 0, 0, 1, 0, 0, 1, 0, 256)
    assert tuple(setup_for_dialect("simapp", 2)) == (2, 2, 2, 0, 1, 2, 0, 0, 2, 0, 256)
    # every setup the client sends is one the server-side decoder accepts
    for dialect in ("adapter", "simapp"):
        for n in (1, 3, 100):
            setup = setup_for_dialect(dialect, n)
            assert of.decode_setup(of.encode_setup(setup)) == setup
    with pytest.raises(ValueError, match="dialect"):
        setup_for_dialect("udp", 1)


def test_daq_reply_with_nan_names_the_field():
    frame = of.encode_frame([0.01, float("nan")], 256)
    with pytest.raises(ProtocolError, match=r"element server reply\[1\] is nan"):
        decode_daq_reply(frame, 256, 1)
    with pytest.raises(ProtocolError, match="2048 bytes"):
        decode_daq_reply(frame[:-8], 256, 1)


def test_client_reports_a_server_that_closes_mid_session(socket_pair, peer_thread):
    client_sock, server_sock = socket_pair

    def server():
        of.decode_setup(of.receive_frame_bytes(server_sock, 44, "setup"))
        of.receive_frame_bytes(server_sock, 2048, "frame")
        server_sock.close()

    thread = peer_thread(server)
    client = OpenFrescoClient(client_sock, n_dof=1)
    with pytest.raises(TransportError):
        client.step([0.01])
    thread.result()


def test_refused_connection_is_one_line_within_the_wait():
    port = _free_port()
    with pytest.raises(TransportError, match=r"refused.*retried for 0.3 s"):
        OpenFrescoClient.connect("127.0.0.1", port, n_dof=1, wait_for_server_s=0.3)
