"""The maRTHS fast side as the engine's chunk (seed 004 Fig. 13B / 22B; digest §13 B).

One call per NS step (both at 1024 Hz, ratio 1), with the NS target ψ_ns = (x4, θ4)::

    η_ns = kinematics(ψ_ns)                                   (Eq. 28)
    y    = board(C z) — strokes with sensor noise, 18-bit A/D  (§3.6.3)
    ẑ, η̂ = Kalman correction with y                          (Eq. 36)
    u    = control law: LQR + integral on (ẑ, z_err) | dAMB per actuator on (η_ns, y)
    u'   = board(u) — volts, ±3.8 V saturation, quantization, back to metres
    z    ← Φ z + Γ u'  (the TRUE plant: nominal or a random draw; RK4 step)
    ψ̂    = inverse kinematics(η̂)                               (Eqs. 29–30)
    f̂    = M ψ̈̂ + C ψ̇̂ + K ψ̂ (2-DOF ES model)                    (Eq. 31) → the NS

The Kalman filter (and so ψ̂ and f̂) runs with both control laws: it is the estimator of
the sample implementation, independent of the law. ``"ideal"`` replaces everything by a
perfect transfer (η_m = η_ns, no noise): what is left is the partition error of the
2-DOF interface and the one-step lag (a baseline).

The actuator force (logged for the realisability report) is the ES force of the TRUE
motion carried by the actuators through the coupler, f = J⁻ᵀ [F, M] (virtual work), plus
the load-cell reading (that force with the §3.6.3 force noise; not used by the loop).

``make_chunk(law, dt)`` → ``chunk(params, state, target (2,)) -> (state, log, f̂ (2,))``,
the engine's ``fast_chunk`` (:mod:`rths_ident.hybrid.loop.engine`).
"""

from __future__ import annotations

from typing import Any, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from rths_ident import small_linalg as sl
from rths_ident.errors import ParameterError
from rths_ident.benchmarks.marths import daq as board
from rths_ident.benchmarks.marths.controller import (
    KalmanDesign,
    LQGDesign,
    kalman_correct,
    kalman_predict,
    lqr_command,
)
from rths_ident.benchmarks.marths.decentralised_damb import damb_pair_init, damb_pair_step
from rths_ident.benchmarks.marths.force_estimation import ReducedSpecimen, estimate_force
from rths_ident.benchmarks.marths.kinematics import actuator_to_frame, frame_to_actuator, jacobian
from rths_ident.benchmarks.marths.plant import PlantDescription, rk4_discretisation, state_space

__all__ = ["LAWS", "TruePlant", "SiteParams", "true_plant", "site_init", "make_chunk"]

LAWS = ("lqg", "damb", "ideal")


class TruePlant(NamedTuple):
    """The plant the loop drives: RK4 step (phi, gamma), output c, continuous a, b."""

    phi: jnp.ndarray
    gamma: jnp.ndarray
    c: jnp.ndarray
    a: jnp.ndarray
    b: jnp.ndarray


def true_plant(plant: PlantDescription, dt: float) -> TruePlant:
    ss = state_space(plant)
    phi, gamma = rk4_discretisation(ss, dt)
    return TruePlant(*(jnp.asarray(x) for x in (phi, gamma, ss.C, ss.A, ss.B)))


class SiteParams(NamedTuple):
    """Everything the chunk reads (a pytree: ``plant`` may be batched over draws)."""

    plant: TruePlant
    kalman: KalmanDesign
    lqg: LQGDesign
    damb: Any  # tuple of two DAMBParams, or () for the other laws
    daq: board.DaqParams
    specimen: ReducedSpecimen


def site_init(params: SiteParams, seed: int) -> dict:
    """At rest; the sensor-noise stream seeded by ``seed``."""
    return {"plant": jnp.zeros(8), "predicted": jnp.zeros(8), "integral": jnp.zeros(2),
            "damb": damb_pair_init(params.damb) if params.damb else (), "key": jax.random.PRNGKey(seed),
            "last_command": jnp.zeros(2)}


def _derivatives(a, b, c, z, u):
    """η̇ = C A z and η̈ = C A² z + C A B u (strictly proper plant: C B = 0)."""
    az = sl.matvec(a, z)  # products as multiply-sum, not dot (rths_ident.small_linalg)
    return sl.matvec(c, az), sl.matvec(c, sl.matvec(a, az)) + sl.matvec(c, sl.matvec(a, sl.matvec(b, u)))


def _inverse_2x2(m):
    """[[a, b], [c, d]]⁻¹ = [[d, −b], [−c, a]] / (ad − bc): elementwise, so under
    ``jax.vmap`` it stays a few vector operations (``jnp.linalg.inv`` is an LU factorisation
    that XLA:CPU runs as one LAPACK call per batch member and step)."""
    a, b, c, d = m[0, 0], m[0, 1], m[1, 0], m[1, 1]
    return jnp.stack([jnp.stack([d, -b]), jnp.stack([-c, a])]) / (a * d - b * c)


def _frame_motion(eta, eta_dot, eta_ddot):
    x, theta = actuator_to_frame(eta[0], eta[1])
    inverse = _inverse_2x2(jacobian(theta))
    return jnp.stack([x, theta]), sl.matvec(inverse, eta_dot), sl.matvec(inverse, eta_ddot), inverse


def make_chunk(law: str, dt: float):
    """The engine's fast chunk for control law ``law`` (module doc)."""
    if law not in LAWS:
        raise ParameterError(f"controller must be one of {LAWS}; got {law!r}")

    def chunk(p: SiteParams, s: dict, target):
        eta_ns = jnp.stack(frame_to_actuator(target[0], target[1]))
        key, k_meas = jax.random.split(s["key"])
        stroke = sl.matvec(p.plant.c, s["plant"])
        if law == "ideal":
            z_hat, eta_hat, measured, force_meas = s["predicted"], eta_ns, eta_ns, jnp.zeros(2)
            command, volts, applied = eta_ns, eta_ns / p.daq.metres_per_volt, eta_ns
            psi_hat, psi_dot, psi_ddot = jnp.asarray(target), jnp.zeros(2), jnp.zeros(2)
            new = dict(s, key=key)
            stroke, force_act = eta_ns, jnp.zeros(2)
        else:
            # actuator force of the true motion (for the report and the load cells)
            d1, d2 = _derivatives(p.plant.a, p.plant.b, p.plant.c, s["plant"], s["last_command"])
            psi_t, psi_t_dot, psi_t_ddot, inv_j = _frame_motion(stroke, d1, d2)
            force_act = sl.vecmat(estimate_force(p.specimen, psi_t, psi_t_dot, psi_t_ddot), inv_j)  # J⁻ᵀ f
            measured, force_meas = board.measure(p.daq, k_meas, stroke, force_act)
            z_hat, eta_hat = kalman_correct(p.kalman, s["predicted"], measured)
            if law == "lqg":
                command, damb_state = lqr_command(p.lqg, z_hat, s["integral"]), ()
            else:
                damb_state, command = damb_pair_step(p.damb, s["damb"], eta_ns, measured, dt)
            applied, volts = board.command_to_plant(p.daq, command)
            k = p.kalman
            e1, e2 = _derivatives(k.a_c, k.b_c, k.c, z_hat, applied)
            psi_hat, psi_dot, psi_ddot, _ = _frame_motion(eta_hat, e1, e2)
            new = {"plant": sl.matvec(p.plant.phi, s["plant"]) + sl.matvec(p.plant.gamma, applied),
                   "predicted": kalman_predict(k, z_hat, applied),
                   "integral": s["integral"] + dt * (eta_ns - measured),
                   "damb": damb_state, "key": key, "last_command": applied}
        feedback = estimate_force(p.specimen, psi_hat, psi_dot, psi_ddot)
        log = {"psi_target": jnp.asarray(target), "eta_target": eta_ns, "eta_measured": measured, "eta_estimated": eta_hat, "psi_estimated": psi_hat,
               "command_v": volts, "stroke": stroke, "actuator_force": force_act, "load_cell": force_meas,
               "feedback": feedback}
        return new, log, feedback

    return chunk


def stack_plants(plants: list[TruePlant]) -> TruePlant:
    """A batch of true plants (leading axis: draw) for ``jax.vmap``."""
    return jax.tree_util.tree_map(lambda *xs: jnp.stack(xs), *plants)


def as_numpy(log: dict) -> dict:
    return {k: np.asarray(v) for k, v in log.items()}
