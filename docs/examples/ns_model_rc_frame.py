"""Model file for ``rths-ident serve ns``: seed 000 Case 4's numerical substructure.

The 3-storey, 2-bay RC frame without its tested column (digest 000 §12.2; elastic
columns, 5 % modal damping, gravity pre-load), in SI, stepped by OpenSees' AlphaOS
(α_OS = 0.9) at Δt = 0.02 s under El Centro 1940 NS × 1.5 — the thesis' OpenSeesPy
server script as a model file. Serve it to the thesis' Simulink client (seed 000 bytes:
force in, displacement out) with

    rths-ident serve ns --model docs/examples/ns_model_rc_frame.py --wire seed000 --reply displacement

(``--reply displacement`` sends ``nodeDisp`` of the interface after each step, as the
thesis' script does; the default sends the next α-OS target), or to a Python client on
the framed wire (``rths_ident.transport.RemoteSubstructure``).
"""

import numpy as np

from rths_ident.datasets import load_ground_motion, resample_ground_motion
from rths_ident.structures.rc_frame import INTERFACE_NODE, build_rc_frame

MODEL_NAME = "seed000-case4-rc-frame"
DT = 0.02  # s: the slow step (50 Hz)
_t, _ag = load_ground_motion("elcentro_1940")  # m/s²
if abs((_t[1] - _t[0]) - DT) > 1e-12:
    _t, _ag = resample_ground_motion(_t, _ag, DT)
GROUND_ACCEL = np.concatenate([[0.0], 1.5 * _ag[1:]])  # from t = 0, at rest (as rths-ident run rc-frame)

INTERFACE = [(INTERFACE_NODE, 1)]  # node 6, horizontal: the top of the removed column
RESPONSE = [(4, 1), (7, 1), (10, 1)]  # floors 1–3 of the left column line
INTEGRATOR = "alpha-os"
ALPHA_OS = 0.9


def build(ops):
    build_rc_frame(ops, nonlinear=False, damping="modal")
