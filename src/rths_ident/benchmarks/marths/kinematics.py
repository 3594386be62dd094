"""Coupler kinematics of the maRTHS transfer system (seed 004 Eqs. 21–24, 28–30).

A rigid triangle A-O-B bolted to joint 4: O at the beam/column axes, A (bottom actuator 1)
and B (top actuator 2) at distance p from O and angles α1 = −α, α2 = +α from the
horizontal; p = 295.39 mm, α = 25.46° (the package's x_v = 266.70 mm, y_v = ±127 mm).
Frame coordinates: translation x = ψ4 [m], rotation θ = ψ28 [rad, counter-clockwise].

Frame → actuator (Eq. 28; the horizontal component of each attachment point's motion)::

    η_i = x + p [cos(θ + α_i) − cos α_i],   i = 1, 2

Actuator → frame (Eqs. 29–30). η1 − η2 = 2 p sin α sin θ exactly, so::

    θ = asin((η1 − η2) / (2 p sin α)),   x = η1 − p [cos(θ + α1) − cos α1]

The paper's Eq. 30 prints η_ns,1; the estimated η̂_m,1 is meant (digest §14 item 3). The
asin argument is clipped to [−1, 1] (a noisy reading cannot produce NaN).

Pure JAX functions (work on arrays of any leading shape).
"""

from __future__ import annotations

import math

import jax.numpy as jnp

__all__ = ["COUPLER_ARM_M", "COUPLER_ANGLE_RAD", "frame_to_actuator", "actuator_to_frame", "jacobian"]

#: p [m] and α [rad] (seed 004 §5.1.1)
COUPLER_ARM_M = 0.29539
COUPLER_ANGLE_RAD = math.radians(25.46)


def _angles(alpha):
    return -alpha, alpha


def frame_to_actuator(x, theta, p: float = COUPLER_ARM_M, alpha: float = COUPLER_ANGLE_RAD):
    """(η1, η2) [m] for the joint translation ``x`` [m] and rotation ``theta`` [rad] (Eq. 28)."""
    a1, a2 = _angles(alpha)
    eta1 = x + p * (jnp.cos(theta + a1) - math.cos(a1))
    eta2 = x + p * (jnp.cos(theta + a2) - math.cos(a2))
    return eta1, eta2


def actuator_to_frame(eta1, eta2, p: float = COUPLER_ARM_M, alpha: float = COUPLER_ANGLE_RAD):
    """(x [m], θ [rad]) for the strokes ``eta1``, ``eta2`` [m] (Eqs. 29–30)."""
    a1, _ = _angles(alpha)
    theta = jnp.arcsin(jnp.clip((eta1 - eta2) / (2.0 * p * math.sin(alpha)), -1.0, 1.0))
    x = eta1 - p * (jnp.cos(theta + a1) - math.cos(a1))
    return x, theta


def jacobian(theta, p: float = COUPLER_ARM_M, alpha: float = COUPLER_ANGLE_RAD):
    """∂(η1, η2)/∂(x, θ) (2, 2) at rotation ``theta``. By virtual work the actuator forces
    f = J⁻ᵀ [F, M] carry a joint force F [N] and moment M [N·m]."""
    a1, a2 = _angles(alpha)
    return jnp.array([[1.0, -p * jnp.sin(theta + a1)], [1.0, -p * jnp.sin(theta + a2)]])
