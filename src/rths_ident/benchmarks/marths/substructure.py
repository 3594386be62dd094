"""The maRTHS numerical substructure as the engine's ``ns_step`` (seed 004 Eqs. 6, 8).

Only node 4 is driven (§3.4.2), so the NS is the reference minus the ES model the
feedback comes from — the 2-DOF frame of Eq. 31 (:mod:`.force_estimation`) on (x4, θ4) —
as the package's ``build_numerical`` subtracts its ES model from the reference on the
DOFs it feeds back (digest §2, §13 A.4). Removing instead the whole physical frame (the
SAP difference of :mod:`.model`) leaves joint 7, the verticals and the pinned bases
without the frame the lab does not drive there: with a perfect transfer system that
hybrid structure misses the reference by ~70 % (J7), while this one only adds the
one-step lag. All 29 equations, average-acceleration Newmark at 1024 Hz
(:mod:`rths_ident.structures.linear_newmark`).
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

from rths_ident import small_linalg as sl
from rths_ident.benchmarks.marths.force_estimation import reduced_specimen
from rths_ident.benchmarks.marths.ideal_partition import INTERFACE_NAMES, UPPER_NAMES
from rths_ident.benchmarks.marths.model import MarthsModel
from rths_ident.structures.linear_newmark import (
    LinearNewmarkParams,
    linear_newmark_init,
    linear_newmark_params,
    linear_newmark_step,
)

__all__ = ["NSParams", "ns_matrices", "ns_params", "ns_init", "ns_step"]


class NSParams(NamedTuple):
    """newmark: the NS's Newmark params (29 equations); ground_mass (29,) [kg];
    interface (2,) int: positions of x4, θ4; interface_sign (2,); upper (4,) int and
    upper_sign (4,): x2, θ2, x3, θ3."""

    newmark: LinearNewmarkParams
    ground_mass: jnp.ndarray
    interface: jnp.ndarray
    interface_sign: jnp.ndarray
    upper: jnp.ndarray
    upper_sign: jnp.ndarray


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
    newmark = linear_newmark_params(*ns_matrices(model), dt)

    def where(names):
        return jnp.asarray([model.equations[n] for n in names]), jnp.asarray([model.sign(n) for n in names])

    return NSParams(newmark, jnp.asarray(model.ground_mass), *where(INTERFACE_NAMES), *where(UPPER_NAMES))


def ns_init(params: NSParams):
    return linear_newmark_init(params.ground_mass.shape[0])


def ns_step(params: NSParams, state, feedback, ground_accel):
    load = -params.ground_mass * ground_accel
    # the feedback placed on the interface equations with a ±1 placement matrix rather
    # than a scatter: XLA emits a loop holding a scatter thunk by thunk (small_loop_kernels)
    rows = jnp.arange(load.shape[0])[:, None] == params.interface[None, :]
    load = load - sl.matvec(rows * params.interface_sign[None, :], feedback)
    state = linear_newmark_step(params.newmark, state, load)
    u = state.displacement
    target = params.interface_sign * u[params.interface]
    return state, target, {"psi_interface": target, "psi_upper": params.upper_sign * u[params.upper]}
