"""RemoteElementSite: a remote element server as the loop's Site (simapp dialect, over
loopback to rths_ident's ElementServer in this process). Its readings must equal the
DirectSite's — the same specimen model driven in process with the same slow step and
the same velocity Δx/Δt_n — to round-off: float64 crosses the socket unchanged, and the
server's step length ``t_k − t_{k−1}`` differs from Δt_n by an ulp at most. The adapter
dialect against OpenSees is tested in tests/transport/test_openfresco_client.py.
"""

from __future__ import annotations

import numpy as np
import pytest

from rths_ident.hybrid.fast_side.direct_site import DirectSite
from rths_ident.transport.remote_site import RemoteElementSite
from rths_ident.models import BoucWen
from rths_ident.transport.openfresco import ElementServer, ModelElementSite
from rths_ident.transport.openfresco_client import OpenFrescoClient

PARAMS = BoucWen.Params(k=2.0e6, alpha=0.1, A=1.0, beta=60.0, gamma=40.0, n=1.0)
DT = 0.01


def test_remote_site_equals_direct_site_for_the_same_specimen():
    server = ElementServer(lambda setup: ModelElementSite(BoucWen, PARAMS, n_basic=setup.ctrl_disp),
                           accept_timeout=10.0, timeout=30.0).start()
    client = OpenFrescoClient.connect(*server.address, n_dof=1, dialect="simapp", timeout_s=30.0)
    remote, direct = RemoteElementSite(client, DT), DirectSite(BoucWen, PARAMS, DT)
    targets = 0.03 * np.sin(2 * np.pi * np.arange(1, 61) * DT)  # past yield (z_u = 0.01 m)
    readings = [(remote.step([x]), direct.step([x])) for x in targets]
    remote.close()
    server.join(timeout=10.0)
    f_remote = np.array([r.force[0] for r, _ in readings])
    f_direct = np.array([d.force[0] for _, d in readings])
    np.testing.assert_allclose(f_remote, f_direct, rtol=0, atol=1e-12 * np.max(np.abs(f_direct)))
    np.testing.assert_array_equal([r.displacement[0] for r, _ in readings], targets)  # ideal site
    history = np.array(server.site.history)  # (time, deformation, force) per commit
    np.testing.assert_allclose(history[:, 0], np.arange(1, 61) * DT, rtol=1e-15)  # k·Δt_n, sent
    assert server.counts["commitState"] == 60  # committed by close(), then DIE
    assert readings[0][0].log["target"].tolist() == [targets[0]]


def test_remote_site_checks_its_step():
    with pytest.raises(ValueError, match="dt"):
        RemoteElementSite(object(), 0.0)
