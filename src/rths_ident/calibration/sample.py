"""The Latin-hypercube sample of SDOF specimens (seed 003 §2.3 steps 2–3).

Seed 003 samples the SDOF structure's mass, stiffness and damping (natural period
0.6–4 s) and the adaptive controller's initial conditions by Latin hypercube. Here a
specimen is (all SI):

* ``mass`` m [kg] and ``period`` T [s] (so k = m (2π/T)² [N/m]) — for a linear SDOF
  under base excitation m cancels; it is kept because the source samples it;
* ``damping_ratio`` ζ [-] (c = 2 ζ m ω [N·s/m]);
* ``experimental_share`` α [-]: the share of k carried by the physical specimen, the rest
  (1 − α) k is numerical;
* ``lab_stiffness`` k_lab [N/m]: the physical spring behind the actuator (it sets the
  control–structure interaction of the shipped Carrion–Spencer actuator);
* ``initial_delay_factor`` κ [-]: the compensator's initial model is the nominal one with
  its time scale multiplied by κ (a_k → a_k κ^k; the controller's initial conditions).

Log-uniform for m and k_lab (they span decades), uniform otherwise.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from scipy.stats import qmc

from rths_ident.errors import ParameterError


class SpecimenBounds(NamedTuple):
    low: float
    high: float
    unit: str
    log: bool  # sampled uniformly in log10


#: the sampled quantities, their bounds and units (module doc)
BOUNDS = {
    "mass": SpecimenBounds(100.0, 10000.0, "kg", True),
    "period": SpecimenBounds(0.6, 4.0, "s", False),
    "damping_ratio": SpecimenBounds(0.01, 0.05, "-", False),
    "experimental_share": SpecimenBounds(0.3, 1.0, "-", False),
    "lab_stiffness": SpecimenBounds(1.0e3, 1.0e5, "N/m", True),
    "initial_delay_factor": SpecimenBounds(0.5, 1.5, "-", False),
}


class Specimens(NamedTuple):
    """A batch of SDOF specimens: each field an array of shape (n,) (module doc)."""

    mass: np.ndarray
    period: np.ndarray
    damping_ratio: np.ndarray
    experimental_share: np.ndarray
    lab_stiffness: np.ndarray
    initial_delay_factor: np.ndarray

    def __len__(self) -> int:  # number of specimens (not of fields)
        return int(np.shape(self.mass)[0])

    def take(self, index) -> "Specimens":
        return Specimens(*(np.asarray(f)[index] for f in self))


def sample_specimens(n: int, seed: int) -> Specimens:
    """``n`` specimens drawn by a scrambled Latin hypercube (``scipy.stats.qmc``) seeded by
    ``seed``: the same (n, seed) gives the same sample."""
    if not (isinstance(n, (int, np.integer)) and n >= 1):
        raise ParameterError(f"number of specimens n = {n!r}: expected an integer ≥ 1")
    unit = qmc.LatinHypercube(d=len(BOUNDS), seed=np.random.default_rng(seed)).random(int(n))
    columns = []
    for j, b in enumerate(BOUNDS.values()):
        if b.log:
            columns.append(10.0 ** (np.log10(b.low) + unit[:, j] * (np.log10(b.high) - np.log10(b.low))))
        else:
            columns.append(b.low + unit[:, j] * (b.high - b.low))
    return Specimens(*columns)
