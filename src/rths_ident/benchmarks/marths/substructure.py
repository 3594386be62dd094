"""The maRTHS numerical substructure as the engine's ``ns_step`` (seed 004 Eqs. 6, 8).

Only node 4 is driven (§3.4.2), so the NS is the reference minus the ES model the
feedback comes from — the 2-DOF frame of Eq. 31 (:mod:`.force_estimation`) on (x4, θ4) —
as the package's ``build_numerical`` subtracts its ES model from the reference on the
DOFs it feeds back (digest §2, §13 A.4). Removing instead the whole physical frame (the
SAP difference of :mod:`.model`) leaves joint 7, the verticals and the pinned bases
without the frame the lab does not drive there: with a perfect transfer system that
hybrid structure misses the reference by ~70 % (J7), while this one only adds the
one-step lag. All 29 equations, average-acceleration Newmark at 1024 Hz, stepped in
the modal coordinates of (M_ns, K_ns) (:mod:`rths_ident.structures.modal_newmark`): C_ns
is Rayleigh (a0 M_ns + a1 K_ns, the reference's coefficients on both the reference and
the ES part it removes), so the step is the physical effective-stiffness Newmark of
:mod:`rths_ident.structures.linear_newmark` up to rounding, at O(29) operations for the
coordinates plus the two projections (29×3 for the ground and feedback loads, 6×29 for
the six DOFs read) instead of three 29×29 products.
The ground term keeps the full mass (Eq. 6). The feedback f̂_m = [F_m4, M_m4] (paper
coordinates) acts at x4 and θ4 only — the transfer system drives node 4 only (§3.4.2) —
and is subtracted like an internal force. Step k uses the feedback of the chunk that
tracked the target of step k − 1 (the usual one-step lag).

``ns_step(params, state, feedback (2,), ground_accel) -> (state, target ψ_ns (2,), log)``;
the log holds the NS's interface and upper-storey ψ (J5–J10).
"""

from __future__ import annotations

from typing import NamedTuple

import jax.numpy as jnp
import numpy as np

from rths_ident.benchmarks.marths.force_estimation import reduced_specimen
from rths_ident.benchmarks.marths.ideal_partition import INTERFACE_NAMES, UPPER_NAMES
from rths_ident.benchmarks.marths.model import MarthsModel
from rths_ident.structures.modal_newmark import (
    ModalNewmarkParams,
    modal_newmark_init,
    modal_newmark_output,
    modal_newmark_params,
    modal_newmark_step,
)

__all__ = ["NSParams", "ns_matrices", "ns_params", "ns_init", "ns_step"]


class NSParams(NamedTuple):
    """modal: the NS's modal Newmark params (29 modes) with the load input
    w = [ẍ_g [m/s²], F_m4 [N], M_m4 [N·m]] (load distribution [−m_g, −P], P placing the
    feedback at x4, θ4 with the paper-coordinate signs) and the outputs ψ = [x4, θ4, x2,
    θ2, x3, θ3] [m, rad] (paper coordinates)."""

    modal: ModalNewmarkParams


def ns_matrices(model: MarthsModel) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(M_ns, C_ns, K_ns) (29, 29): the reference minus the 2-DOF ES at (x4, θ4)."""
    spec = reduced_specimen(model)
    where = [model.equations[n] for n in INTERFACE_NAMES]
    sign = np.diag([model.sign(n) for n in INTERFACE_NAMES])
    out = []
    for full, part in ((model.mass, spec.mass), (model.damping, spec.damping), (model.stiffness, spec.stiffness)):
        matrix = np.array(full, dtype=float)
        matrix[np.ix_(where, where)] -= sign @ np.asarray(part) @ sign
        out.append(matrix)
    return tuple(out)


def ns_params(model: MarthsModel, dt: float) -> NSParams:
    mass, damping, stiffness = ns_matrices(model)
    n = mass.shape[0]

    def placement(names):  # ±1 at each named equation, one column per name (29, len(names))
        matrix = np.zeros((n, len(names)))
        matrix[[model.equations[name] for name in names], range(len(names))] = [model.sign(name) for name in names]
        return matrix

    loads = np.column_stack([-np.asarray(model.ground_mass), -placement(INTERFACE_NAMES)])
    outputs = placement(INTERFACE_NAMES + UPPER_NAMES).T
    return NSParams(modal_newmark_params(mass, damping, stiffness, dt, load_distribution=loads, outputs=outputs))


def ns_init(params: NSParams):
    return modal_newmark_init(params.modal)


def ns_step(params: NSParams, state, feedback, ground_accel):
    load_input = jnp.concatenate([jnp.reshape(ground_accel, (1,)), feedback])
    state = modal_newmark_step(params.modal, state, load_input)
    psi = modal_newmark_output(params.modal, state.coordinate)
    target = psi[:2]
    return state, target, {"psi_interface": target, "psi_upper": psi[2:]}
