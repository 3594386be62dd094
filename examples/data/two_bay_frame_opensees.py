"""The two-bay frame of examples/two_bay_frame.toml as an OpenSeesPy model, without its
tested column: the numerical substructure of examples/opensees_frame.toml.

Two floors of 20 kg; storey 1 keeps two of its three columns (the right-most one is
the specimen), storey 2 has three; every column a Steel01 zeroLength element (the
OpenSees twin of rths_ident's bilinear model: E = k [N/m], Fy = f_y [N], b);
Rayleigh damping, 5 % on modes 1 and 2 of the whole frame (specimen included),
C = a0 M + a1 K as a0 M (rayleigh) plus one dashpot per storey (a1 × the storey's
stiffness). SI units: N, m, s, kg.
"""

import numpy as np

from rths_ident.structures import ElementParameter

FLOOR_MASS = 20.0  # kg
K, FY, B = 1540.0, 8.0, 0.05  # a column: N/m, N, - (the identified fields start from the test file's guess)
COLUMNS = {1: 2, 2: 3}  # storey -> numerical columns (storey 1: one column is the specimen)
ZETA = 0.05

# Rayleigh coefficients from the whole frame's two modes (3 columns per storey)
_k_storey = 3 * K
_stiffness = np.array([[2 * _k_storey, -_k_storey], [-_k_storey, _k_storey]])
_omega = np.sqrt(np.sort(np.linalg.eigvals(np.linalg.solve(FLOOR_MASS * np.eye(2), _stiffness)).real))
A0 = 2 * ZETA * _omega[0] * _omega[1] / (_omega[0] + _omega[1])  # 1/s
A1 = 2 * ZETA / (_omega[0] + _omega[1])  # s


def build(ops):
    ops.wipe()
    ops.model("basic", "-ndm", 1, "-ndf", 1)
    ops.node(0, 0.0)
    ops.fix(0, 1)
    for floor in (1, 2):
        ops.node(floor, 0.0)
        ops.mass(floor, FLOOR_MASS)
    tag = 1
    for storey, count in COLUMNS.items():
        for _ in range(count):
            ops.uniaxialMaterial("Steel01", tag, FY, K, B)
            ops.element("zeroLength", tag, storey - 1, storey, "-mat", tag, "-dir", 1)
            tag += 1
    for storey in (1, 2):  # the stiffness-proportional part: a dashpot per storey
        ops.uniaxialMaterial("Viscous", 100 + storey, A1 * _k_storey, 1.0)
        ops.element("zeroLength", 100 + storey, storey - 1, storey, "-mat", 100 + storey, "-dir", 1)
    ops.rayleigh(A0, 0.0, 0.0, 0.0)


INTERFACE = (1, 1)  # floor 1: the specimen acts between it and the ground
RESPONSE = [(1, 1), (2, 1)]  # floors 1 and 2
COLUMN_TAGS = (1, 2, 3, 4, 5)
PARAMETER_MAP = [ElementParameter(COLUMN_TAGS, "E"), ElementParameter(COLUMN_TAGS, "Fy")]
PARAMETER_NAMES = ["k", "fy"]  # the bilinear model's fields they update
