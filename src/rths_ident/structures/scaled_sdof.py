"""The numerical substructure of seed 003's SDOF hybrid test (§2.3, our partition): the
prototype m ẍ + c ẋ + k x = −m ẍ_g with its stiffness split into a numerical part
(1 − α) k and a physical spring α k tested at the length scale λ.

The NS integrates m, c and (1 − α) k with the explicit Newmark method (γ = ½, β = 0;
stable for ω Δt_n < 2) and sends the lab target x_t = λ x (λ = lab / prototype
displacement, so the prototype's displacements fit the actuator's stroke). The lab
spring k_lab answers r_lab; the prototype sees r = r_lab · α k / (λ k_lab).

State (x, v_pred): x is the displacement the step solves equilibrium at (the predictor
u_{n+1} = u_n + Δt u̇_n + Δt²/2 ü_n of :class:`~rths_ident.structures.newmark.ExplicitNewmark`),
v_pred = u̇_n + Δt/2 ü_n; at rest both are zero. One function,
:func:`scaled_sdof_step`, is the step of ``rths-ident run sdof`` (both engines) and of
the compensator calibration's population (:mod:`rths_ident.scenarios.sdof_calibration`).
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

__all__ = ["ScaledSDOFParams", "scaled_sdof_params", "scaled_sdof_step", "ScaledSDOFNewmark"]


class ScaledSDOFParams(NamedTuple):
    """The numerical substructure's numbers (SI; scalars, or arrays (n,) for a population)."""

    mass: jax.Array  # m [kg]
    damping: jax.Array  # c = 2 ζ m ω [N·s/m]
    stiffness: jax.Array  # the numerical (1 − α) k [N/m]
    force_scale: jax.Array  # r [N] = force_scale · r_lab [N]: α k / (λ k_lab)
    length_scale: jax.Array  # λ = lab / prototype displacement [-]


def scaled_sdof_params(mass, period, damping_ratio, experimental_share, lab_stiffness,
                       length_scale) -> ScaledSDOFParams:
    """The NS of a specimen: m [kg], natural period T [s] (k = m (2π/T)² [N/m]), damping
    ratio ζ [-], experimental share α [-], the lab spring k_lab [N/m] and λ [-] (each a
    number or an array (n,) of specimens)."""
    m = jnp.asarray(mass, dtype=jnp.float64)
    omega = 2.0 * np.pi / jnp.asarray(period, dtype=jnp.float64)
    k = m * omega**2
    alpha = jnp.asarray(experimental_share, dtype=jnp.float64)
    lam = jnp.full_like(m, length_scale)
    return ScaledSDOFParams(m, 2.0 * jnp.asarray(damping_ratio) * m * omega, (1.0 - alpha) * k,
                            alpha * k / (lam * jnp.asarray(lab_stiffness)), lam)


def scaled_sdof_step(p: ScaledSDOFParams, state, feedback, ground_accel, dt: float):
    """One slow step: ``(params, (x, v_pred), feedback (1,) = r_lab [N], ẍ_g [m/s²], Δt_n [s])
    -> (state, target (1,) = λ x_next [m], log)``; the log's ``displacement`` (1,) is the
    prototype's x [m] the step solved equilibrium at."""
    x, v_pred = state
    r = p.force_scale * feedback[0]
    a = (-p.mass * ground_accel - p.damping * v_pred - p.stiffness * x - r) / (p.mass + 0.5 * dt * p.damping)
    v = v_pred + 0.5 * dt * a
    x_next = x + dt * v + 0.5 * dt**2 * a
    target = jnp.reshape(p.length_scale * x_next, (1,))
    return (x_next, v + 0.5 * dt * a), target, {"displacement": jnp.reshape(x, (1,))}


class ScaledSDOFNewmark:
    """The integrator face the loop asks of a native NS (``init``, ``predicted_displacement``)
    for :func:`scaled_sdof_step`: at rest, and the target λ x of the state."""

    def init(self, params: ScaledSDOFParams, dt: float):
        del dt
        zero = jnp.zeros_like(jnp.asarray(params.mass, dtype=jnp.float64))
        return zero, zero

    def predicted_displacement(self, params: ScaledSDOFParams, state, dt: float):
        """The lab target λ x [m] (1,) the state sends."""
        del dt
        return jnp.reshape(params.length_scale * state[0], (1,))
