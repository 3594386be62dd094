"""The remote element site: an element server in another process as the loop's site.

Behind the :class:`~rths_ident.protocols.Site` protocol, each slow step sends the
interface target to an OpenFresco-protocol element server
(:class:`~rths_ident.transport.openfresco_client.OpenFrescoClient`: an OpenSees
``adapter`` element, an OpenFresco ``startSimAppSiteServer``, or ``rths-ident serve
site``) and returns what it measured there: the server's ``daqDisp`` and ``daqForce``
(the specimen's restoring force, the site protocol's sign). With an OpenSees adapter
the remote specimen is any OpenSees model (a material, an element, a whole
subassembly) condensed to the adapter's DOFs.

No rate transition or compensation runs here: the remote server receives exactly the
target (an ideal transfer system, or its own, e.g. ``serve site --transfer-system
carrion-spencer``).
"""

from __future__ import annotations

import numpy as np

from rths_ident.protocols import SiteReading


class RemoteElementSite:
    """A :class:`~rths_ident.transport.openfresco_client.OpenFrescoClient` as a Site.

    client : a connected client (its ``n_dof`` is the site's ``n_interface``).
    dt : slow step Δt_n [s]; the simapp dialect sends the time ``k·dt`` of step k and
        the velocity ``Δtarget/dt`` (the adapter element reads the displacement only).
    """

    def __init__(self, client, dt: float):
        if not (np.isfinite(dt) and dt > 0):
            raise ValueError(f"RemoteElementSite.dt must be a finite step > 0 s; got {dt!r}")
        self.client = client
        self.dt = float(dt)
        self.n_interface = client.n_dof
        self._previous = np.zeros(self.n_interface)
        self._steps = 0

    def step(self, target) -> SiteReading:
        x = np.asarray(target, dtype=np.float64).reshape(self.n_interface)
        velocity = (x - self._previous) / self.dt
        self._steps += 1
        reading = self.client.step(x, velocity=velocity, time=self._steps * self.dt)
        self._previous = x
        return SiteReading(displacement=reading.displacement, force=reading.force,
                           log={"target": x.copy(), "displacement": reading.displacement,
                                "force": reading.force})

    def close(self) -> None:
        self.client.close()
