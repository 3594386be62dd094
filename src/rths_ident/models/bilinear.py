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
import numpy as np

from rths_ident._params import field_range, params_dataclass
from rths_ident.models.base import ElementInputs, HystereticModel, scan_force
from rths_ident.models.entry import ModelEntry
from rths_ident.models.fit_specification import (
    FitContext,
    FitParameters,
    FreeParameter,
    LinearInParameters,
    ModelFit,
    SeparableProblem,
)
from rths_ident.models.opensees_twin import OpenSeesTwin

__all__ = ["BilinearParams", "BilinearState", "BilinearKinematic", "ENTRY"]


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


# -- offline fit (data for rths_ident.estimators.offline) -----------------------------


def _fit_parameters(context: FitContext) -> FitParameters:
    """k, f_y and b, all free."""
    free = (
        FreeParameter("k", 0.05, 2000.0, context.initial_stiffness),
        FreeParameter("fy", 0.01, 5.0, 0.6),
        FreeParameter("b", 0.0, 0.95, 0.05, log=False),
    )
    return FitParameters(free, {})


def _separable(free: dict, held: dict, config: dict, time_is_physical: bool) -> SeparableProblem:
    """F = bk x + (1−b)k z with z the elastic–perfectly-plastic response of yield
    displacement d_y = f_y/k (:meth:`BilinearKinematic.step` with k = 1, b = 0)."""
    k, fy = free["k"], free["fy"]
    outer = (FreeParameter("yield_displacement", fy.low / k.high, fy.high / k.low, fy.start / k.start),)

    def regressors(s, record):
        x, v, _, _, dt = record
        z = scan_force(BilinearKinematic, BilinearParams(k=1.0, fy=s["yield_displacement"], b=0.0), x, v, dt)
        return jnp.stack([x, z], axis=1)

    def to_fields(s, theta):
        k_total = theta[0] + theta[1]
        return dict(k=k_total, fy=k_total * s["yield_displacement"], b=theta[0] / k_total)

    return SeparableProblem(outer, ("b_k", "one_minus_b_k"), np.zeros(2), np.full(2, np.inf), regressors, to_fields)


#: the registry entry (:data:`rths_ident.models.registry.MODELS` ``["bilinear"]``)
ENTRY = ModelEntry(
    model=BilinearKinematic,
    doc="docs/models/bilinear.md",
    fit=ModelFit(_fit_parameters),
    linear_in_parameters=LinearInParameters(
        _separable, linear="bk, (1−b)k: F = bk x + (1−b)k z",
        searched="the yield displacement d_y = f_y/k (z elastic–perfectly-plastic)"),
    # uniaxialMaterial Steel01 tag Fy E0 b (isotropic hardening a1…a4 = 0)
    opensees_twin=OpenSeesTwin("Steel01", lambda p: (p.fy, p.k, p.b), updatable={"fy": "Fy", "k": "E", "b": "b"}),
    example=BilinearParams(k=3.0e6, fy=2.0e4, b=0.1),  # yield displacement 6.7 mm
    example_peak_displacement=0.02,
)
