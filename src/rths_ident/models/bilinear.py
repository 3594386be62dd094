"""Bilinear hysteresis with kinematic hardening (seed 001 §2.1.1, Eq. 2.2; Simo & Hughes),
written for a force–displacement element.

Elastic stiffness k, yield force f_y, post-yield stiffness b·k. The elastic range has
constant width 2 f_y (Bauschinger effect) and translates with the hardening. With
q the back-force, the return map of one displacement increment Δx is::

    F_trial = F0 + k Δx
    F       = clip(F_trial, b k x − (1 − b) f_y, b k x + (1 − b) f_y)

i.e. the force is bounded by the two hardening lines F = b k x ± (1 − b) f_y. This is
the exact solution of the rate-independent 1-D kinematic-hardening model for any
increment (it is linear on each branch), and it is the update of OpenSees ``Steel01``
with its isotropic-hardening terms a1…a4 set to zero. (Seed 001 prints q̇ = H ε̇ in
Eq. 2.2c; the intended law is q̇ = H ε̇_p, which is what this implements, with
b = H/(E + H).)
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp

from rths_ident._params import field_range, params_dataclass
from rths_ident.models.base import ElementInputs, HystereticModel

__all__ = ["BilinearParams", "BilinearState", "BilinearKinematic"]


@params_dataclass
class BilinearParams:
    """Bilinear kinematic-hardening parameters (SI)."""

    k: float = field_range(low=0.0, low_inclusive=False, unit="N/m", doc="k, elastic stiffness")
    fy: float = field_range(low=0.0, low_inclusive=False, unit="N", doc="f_y, yield force")
    b: float = field_range(
        low=0.0, high=1.0, high_inclusive=False, unit="-", doc="b, post-yield to elastic stiffness ratio"
    )


class BilinearState(NamedTuple):
    """Committed state at the start of a step."""

    displacement: jax.Array  # x of the previous step [m]
    force: jax.Array  # restoring force of the previous step [N]


class BilinearKinematic(HystereticModel):
    """Bilinear kinematic hardening (exact return mapping; = OpenSees Steel01, a_i = 0).

    Rate-independent (``dt`` and ``inputs.velocity`` unused).
    """

    Params = BilinearParams
    State = BilinearState
    rate_dependent = False

    @staticmethod
    def init(params: BilinearParams) -> BilinearState:
        zero = jnp.zeros((), dtype=jnp.float64)
        return BilinearState(displacement=zero, force=zero)

    @staticmethod
    def _bounds(params: BilinearParams, x):
        hardening = params.b * params.k * x
        offset = (1.0 - params.b) * params.fy
        return hardening - offset, hardening + offset

    @staticmethod
    def step(params: BilinearParams, state: BilinearState, inputs: ElementInputs, dt):
        x = jnp.asarray(inputs.displacement, dtype=jnp.float64)
        trial = state.force + params.k * (x - state.displacement)
        lower, upper = BilinearKinematic._bounds(params, x)
        force = jnp.minimum(jnp.maximum(trial, lower), upper)
        return BilinearState(displacement=x, force=force), force

    @staticmethod
    def tangent(params: BilinearParams, state: BilinearState, inputs: ElementInputs, dt):
        """k inside the elastic range, b·k on a hardening line [N/m]."""
        x = jnp.asarray(inputs.displacement, dtype=jnp.float64)
        trial = state.force + params.k * (x - state.displacement)
        lower, upper = BilinearKinematic._bounds(params, x)
        yielding = (trial > upper) | (trial < lower)
        return jnp.where(yielding, params.b * params.k, params.k)
