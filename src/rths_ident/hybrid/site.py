"""The site protocol: the physical side of a hybrid test as the slow side sees it.

Once per slow step the loop sends the site the interface target(s) the numerical
substructure computed and receives what was measured on the specimen at the end of that
step (ARCHITECTURE.md, "Extension points"):

``step(target (n,)) -> SiteReading``
    drive the specimen towards ``target`` [m] at n ≥ 1 interface DOFs for one slow step
    and return the measured displacement(s) [m] and force(s) [N] at its end (the
    zero-order hold the NS consumes), a log (NumPy arrays; the virtual site logs every
    fast sample) and, when the site runs an online identifier, its current estimate;
``close()``
    stop safely and release what the site holds.

Implementations: :class:`~rths_ident.hybrid.virtual_site.VirtualSite` (rate transition
→ compensation → actuator → specimen → sensors → identifier, compiled once per slow
step); remote sites and rigs follow the same protocol.

Sign convention: ``force`` is the specimen's restoring force (it resists the imposed
displacement), the ``feedback`` of
:class:`~rths_ident.structures.numerical_substructure.NumericalSubstructure`.
"""

from __future__ import annotations

from typing import Any, NamedTuple, Protocol, runtime_checkable

import numpy as np


class SiteReading(NamedTuple):
    """What a site returns for one slow step."""

    displacement: np.ndarray  # (n,) measured interface displacement(s) at the end of the step [m]
    force: np.ndarray  # (n,) measured restoring force(s) at the end of the step [N]
    log: dict  # NumPy arrays (the virtual site: one entry per fast sample)
    estimate: Any = None  # the site's online identifier estimate (θ̂, relative std, converged), if it runs one


@runtime_checkable
class Site(Protocol):
    """What the step-wise loop needs of the physical side (module doc)."""

    #: number of interface DOFs n ≥ 1
    n_interface: int

    def step(self, target: np.ndarray) -> SiteReading: ...

    def close(self) -> None: ...
