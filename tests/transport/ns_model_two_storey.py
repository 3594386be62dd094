"""A model file for ``rths-ident serve ns`` (tests): a two-storey shear building in
OpenSeesPy, the specimen acting at the roof.

Floors of 5000 kg on zeroLength Elastic storeys of 4e6 N/m (periods 0.36 / 0.14 s),
α-OS, 0.5 % mass-proportional damping; 2 s of a 2 Hz ground shake of 1 m/s² sampled at
the slow step. θ̂ = [k₁] sets the first storey's Elastic E through ``updateParameter``.
"""

import numpy as np

from rths_ident.structures.opensees_substructure import ElementParameter

DT = 0.01  # s
GROUND_ACCEL = np.sin(2 * np.pi * 2.0 * DT * np.arange(201))  # m/s², from t = 0
MASS = 5000.0  # kg per floor
STOREY_STIFFNESS = 4.0e6  # N/m

INTERFACE = [(2, 1)]
RESPONSE = [(1, 1), (2, 1)]
INTEGRATOR = "alpha-os"
PARAMETER_MAP = [ElementParameter(1, "E")]
PARAMETER_NAMES = ["k1"]
PARAMETER_UNITS = ["N/m"]
MODEL_NAME = "two-storey"


def build(ops):
    ops.model("basic", "-ndm", 1, "-ndf", 1)
    ops.node(0, 0.0)
    ops.fix(0, 1)
    for i in (1, 2):
        ops.node(i, 0.0)
        ops.mass(i, MASS)
        ops.uniaxialMaterial("Elastic", i, STOREY_STIFFNESS)
        ops.element("zeroLength", i, i - 1, i, "-mat", i, "-dir", 1, "-doRayleigh", 1)
    ops.rayleigh(0.1, 0.0, 0.0, 0.0)
