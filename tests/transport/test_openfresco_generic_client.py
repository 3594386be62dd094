"""OpenFresco protocol, server role: OpenSees' own ``genericClient`` element drives
:class:`rths_ident.transport.openfresco.ElementServer` (issue 8 acceptance piece).

The acceptance test runs the same OpenSeesPy SDOF twice, each in its own subprocess
(OpenSees keeps one model per process): once with its column a ``genericClient`` element
connected to an ElementServer in this process whose site is rths_ident's BoucWen, once
with the column a ``zeroLength`` element with OpenSees' ``uniaxialMaterial BoucWen`` of
the same parameters. The two responses must agree to 1e-10 of their peak (measured:
~4e-15). Why that bound: float64 travels the socket bit for bit (raw IEEE-754 doubles both ways, no text,
no rounding), so the only differences left are (i) the two Bouc–Wen implementations,
rths_ident's BoucWen with ``substeps=1`` being OpenSees' update to ~7e-13 relative, and
(ii) Newton iterates that differ by round-off, each run stopping under the same
``NormDispIncr 1e-12`` m test, i.e. within ~1e-12 m of a ~2e-2 m peak (5e-11 relative).
"""

from __future__ import annotations

import importlib.util
import socket
import struct

import numpy as np
import pytest

from rths_ident.transport import openfresco as of

from _opensees_sdof import (  # noqa: E402  (tests/transport is on sys.path: conftest)
    ALPHA,
    BETA,
    GAMMA,
    K,
    N,
    N_STEPS,
    SUBPROCESS_TIMEOUT,
    A,
    _run_opensees,
)


@pytest.mark.opensees
def test_generic_client_reproduces_in_process_bouc_wen(tmp_path):
    if importlib.util.find_spec("openseespy") is None:  # OpenSees runs in subprocesses only
        pytest.skip("openseespy is not installed")
    from rths_ident.models import BoucWen

    params = BoucWen.Params(k=K, alpha=ALPHA, A=A, beta=BETA, gamma=GAMMA, n=N, substeps=1)
    site = of.ModelElementSite(BoucWen, params, n_basic=2)
    server = of.ElementServer(site, port=0, accept_timeout=SUBPROCESS_TIMEOUT, timeout=30.0)
    assert server.address[0] == "127.0.0.1"
    server.start()
    try:
        remote = _run_opensees(tmp_path, "client", server.port)
    finally:
        server.join(timeout=10.0)  # returns once DIE arrived; re-raises a server error
    local = _run_opensees(tmp_path, "local")

    # the wire: what OpenSees sent and asked for
    assert server.setup == of.SetupMessage.for_generic_client(2)
    assert server.setup.data_size == of.DEFAULT_DATA_SIZE
    assert server.counts["DIE"] == 1
    assert server.counts["commitState"] == N_STEPS
    assert server.counts["setTrialResponse"] >= N_STEPS
    assert server.counts["getForce"] >= N_STEPS
    # the server's committed record is OpenSees' own response
    hist = np.asarray(site.history)
    np.testing.assert_array_equal(hist[:, 0], remote["t"])
    np.testing.assert_array_equal(hist[:, 1], remote["u"])  # node 1 is fixed: drift = u2

    # the column yields (the test exercises the hysteresis, not a linear spring)
    assert np.max(np.abs(remote["u"])) > 2 * (A / (BETA + GAMMA))
    for key in ("u", "f"):
        scale = np.max(np.abs(local[key]))
        err = np.max(np.abs(remote[key] - local[key])) / scale
        print(f"{key}: genericClient vs in-process, max error / peak = {err:.2e}")
        assert err < 1e-10, f"{key}: genericClient vs in-process relative error {err:.2e}"


def test_setup_and_frame_codec_round_trip():
    setup = of.SetupMessage.for_generic_client(3)
    raw = of.encode_setup(setup)
    assert len(raw) == 44 and raw[:4] == struct.pack("<i", 3)
    assert of.decode_setup(raw) == setup
    frame = of.encode_frame([of.GET_FORCE, 1.5, -2.0], 256)
    assert len(frame) == 2048
    values = of.decode_frame(frame, 256)
    assert of.command_code(values) == 10 and values[1] == 1.5 and not values[3:].any()


@pytest.mark.parametrize(
    "raw, match",
    [
        (b"\x00" * 40, "44 bytes"),
        (struct.pack("<11i", 1, 1, 1, 0, 1, 0, 0, 0, 1, 0, -256), "negative"),
        (struct.pack(">11i", 1, 1, 1, 0, 1, 0, 0, 0, 1, 0, 256), "data_size"),
        (struct.pack("<11i", 4, 4, 4, 0, 1, 0, 0, 0, 4, 0, 8), "cannot carry"),
    ],
)
def test_malformed_setup_is_a_protocol_error(raw, match):
    with pytest.raises(of.OpenFrescoProtocolError, match=match):
        of.decode_setup(raw)


def test_unknown_command_names_the_code():
    with pytest.raises(of.OpenFrescoProtocolError, match="42"):
        of.command_code(np.array([42.0, 0.0]))
    with pytest.raises(of.OpenFrescoProtocolError, match="3.5"):
        of.command_code(np.array([3.5]))


class _LinearSite:
    """A linear spring in one DOF (the site's contract, for the server's error path)."""

    n_basic = 1

    def set_trial(self, d, v, a, t):
        self.d = float(d[0])

    def force(self):
        return np.array([1e3 * self.d])


def test_server_reports_unknown_command_and_stops():
    server = of.ElementServer(_LinearSite(), accept_timeout=10.0, timeout=10.0).start()
    with socket.create_connection(server.address, timeout=10.0) as conn:
        conn.sendall(of.encode_setup(of.SetupMessage.for_generic_client(1)))
        conn.sendall(of.encode_frame([of.SET_TRIAL_RESPONSE, 0.002], 256))
        conn.sendall(of.encode_frame([of.GET_FORCE], 256))
        reply = of.decode_frame(of._recv_exact(conn, 2048, "reply"), 256)
        assert reply[0] == 2.0 and not reply[1:].any()
        conn.sendall(of.encode_frame([77.0], 256))
        with pytest.raises(of.OpenFrescoProtocolError, match="77"):
            server.join(timeout=10.0)


def test_server_rejects_a_setup_for_another_element():
    server = of.ElementServer(_LinearSite(), accept_timeout=10.0, timeout=10.0).start()
    with socket.create_connection(server.address, timeout=10.0) as conn:
        conn.sendall(of.encode_setup(of.SetupMessage.for_generic_client(2)))
        with pytest.raises(of.OpenFrescoProtocolError, match="controls 2 displacements"):
            server.join(timeout=10.0)


def test_server_times_out_when_no_client_connects():
    server = of.ElementServer(_LinearSite(), accept_timeout=0.2).start()
    with pytest.raises(TimeoutError, match="no OpenFresco client connected"):
        server.join(timeout=5.0)


def test_stiffness_and_daq_replies_of_a_model_site():
    """Replies genericClient's transient run above does not ask for (getInitialStiff is
    only used by initial-stiffness algorithms), byte for byte."""
    from rths_ident.models import BoucWen

    params = BoucWen.Params(k=K, alpha=ALPHA, A=A, beta=BETA, gamma=GAMMA, n=N, substeps=1)
    server = of.ElementServer(of.ModelElementSite(BoucWen, params), timeout=10.0).start()
    setup = of.SetupMessage.for_generic_client(2)

    def ask(conn, code):
        conn.sendall(of.encode_frame([code], 256))
        return of.decode_frame(of._recv_exact(conn, 2048, "reply"), 256)

    with socket.create_connection(server.address, timeout=10.0) as conn:
        conn.sendall(of.encode_setup(setup))
        np.testing.assert_array_equal(ask(conn, of.GET_INITIAL_STIFF)[:5], [K, -K, -K, K, 0])
        # trial [d1, d2, v1, v2, a1, a2, t]: drift 1 mm, elastic range
        conn.sendall(of.encode_frame([of.SET_TRIAL_RESPONSE, 0, 1e-3, 0, 0.1, 0, 0, 0.01], 256))
        f = ask(conn, of.GET_FORCE)[:3]
        assert f[0] == -f[1] and 0.0 < f[1] < K * 1e-3 and f[2] == 0.0
        kt = ask(conn, of.GET_TANGENT_STIFF)[:4]
        assert kt[0] == kt[3] == -kt[1] == -kt[2] and ALPHA * K < kt[0] < K
        assert not ask(conn, of.GET_DAMP).any() and not ask(conn, of.GET_MASS).any()
        np.testing.assert_array_equal(ask(conn, of.GET_DISP)[:3], [0, 1e-3, 0])
        assert ask(conn, of.GET_TIME)[0] == 0.01
        daq = ask(conn, of.GET_DAQ_RESPONSE)  # sizes daq = [0, 0, 0, 2, 0]: the force
        np.testing.assert_array_equal(daq[:3], f)
        conn.sendall(of.encode_frame([of.COMMIT_STATE], 256))
        conn.sendall(of.encode_frame([of.DIE], 256))
        server.join(timeout=10.0)
    assert server.counts["DIE"] == 1 and len(server.site.history) == 1
