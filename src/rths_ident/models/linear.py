"""Linear element: mass m, viscous damping c, stiffness k (seed 000 Eq. 4.2 with a linear
r_e; seed 001 Eq. 3.4, f_e = M_f ẍ + C_f ẋ + K_f x).

For a hybrid loop the element's :meth:`LinearElement.step` returns the *restoring*
force c ẋ + k x [N]; the inertia force of the specimen's own mass, m ẍ, is given
separately by :meth:`LinearElement.inertia_force` (the loop knows the acceleration it
imposes; a displacement-driven element does not). The measured force of a specimen is
their sum. Linear-in-parameters form: f = [m, c, k] · [ẍ, ẋ, x].
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from rths_ident._params import field_range, params_dataclass
from rths_ident.models.base import ElementInputs, HystereticModel
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

__all__ = ["LinearParams", "LinearState", "LinearElement", "ENTRY"]


@params_dataclass
class LinearParams:
    """Linear m–c–k element (SI)."""

    m: float = field_range(0.0, low=0.0, unit="kg", doc="m, mass")
    c: float = field_range(0.0, low=0.0, unit="N*s/m", doc="c, viscous damping")
    k: float = field_range(0.0, low=0.0, unit="N/m", doc="k, stiffness")


class LinearState(NamedTuple):
    """Committed state at the start of a step."""

    displacement: jax.Array  # x of the previous step [m]


class LinearElement(HystereticModel):
    """Linear element; ``step`` returns c ẋ + k x, ``inertia_force`` returns m ẍ."""

    Params = LinearParams
    State = LinearState
    rate_dependent = True

    @staticmethod
    def init(params: LinearParams) -> LinearState:
        return LinearState(displacement=jnp.zeros((), dtype=jnp.float64))

    @staticmethod
    def step(params: LinearParams, state: LinearState, inputs: ElementInputs, dt):
        x = jnp.asarray(inputs.displacement, dtype=jnp.float64)
        force = params.c * inputs.velocity + params.k * x
        return LinearState(displacement=x), force

    @staticmethod
    def tangent(params: LinearParams, state: LinearState, inputs: ElementInputs, dt):
        return params.k + 0.0 * jnp.asarray(inputs.displacement, dtype=jnp.float64)

    @staticmethod
    def inertia_force(params: LinearParams, a):
        """m ẍ [N] for the acceleration ``a`` [m/s²]."""
        return params.m * a

    @staticmethod
    def regressor(x, v, a):
        """φ = [ẍ, ẋ, x] so that m ẍ + c ẋ + k x = [m, c, k] · φ."""
        return jnp.array([a, v, x])

    @staticmethod
    def theta_from_params(params: LinearParams):
        """Θ = [m, c, k], the coefficients of :meth:`regressor`."""
        return jnp.array([params.m, params.c, params.k])

    def _needs_velocity(self) -> bool:
        return bool(np.any(np.asarray(self.params.c) != 0.0))

    def total_force_history(self, displacement, dt: float) -> np.ndarray:
        """m ẍ + c ẋ + k x [N], with ẋ and ẍ from finite differences of the displacement
        (second-order ``numpy.gradient`` applied twice)."""
        x = np.asarray(displacement, dtype=float)
        a = np.gradient(np.gradient(x, dt, edge_order=2), dt, edge_order=2)
        return self.force_history(x, dt=dt) + np.asarray(self.inertia_force(self.params, a))


# -- offline fit (data for rths_ident.estimators.offline) -----------------------------


def _fit_parameters(context: FitContext) -> FitParameters:
    """k; with a physical time also c and m. Without one m = c = 0 (k is then the
    static stiffness)."""
    free = [FreeParameter("k", 1e-3, 1e4, max(context.initial_stiffness, 1e-3))]
    held = {}
    if context.time_is_physical:
        free += [FreeParameter("c", 0.0, 50.0, 0.01, log=False), FreeParameter("m", 0.0, 50.0, 0.01, log=False)]
    else:
        held = {"c": 0.0, "m": 0.0}
    return FitParameters(tuple(free), held)


def _separable(free: dict, held: dict, config: dict, time_is_physical: bool) -> SeparableProblem:
    """F = k x + c ẋ + m ẍ: every free parameter is linear (one exact solve)."""
    names = tuple(free)

    def regressors(s, record):
        x, v, a, _, _ = record
        columns = {"k": x, "c": v, "m": a}
        return jnp.stack([columns[n] for n in names], axis=1)

    def to_fields(s, theta):
        fields = dict(held)
        fields.update(zip(names, theta))
        return fields

    lower = np.array([free[n].low for n in names])
    upper = np.array([free[n].high for n in names])
    return SeparableProblem((), names, lower, upper, regressors, to_fields)


#: the registry entry (:data:`rths_ident.models.registry.MODELS` ``["linear"]``)
ENTRY = ModelEntry(
    model=LinearElement,
    doc="docs/models/linear.md",
    fit=ModelFit(_fit_parameters),
    linear_in_parameters=LinearInParameters(
        _separable, linear="k (+ c, m with a physical time): F = k x + c ẋ + m ẍ"),
    # uniaxialMaterial Elastic tag E eta: force E·x + eta·ẋ = step's c ẋ + k x (m ẍ is separate)
    opensees_twin=OpenSeesTwin("Elastic", lambda p: (p.k, p.c), updatable={"k": "E", "c": "eta"}),
    example=LinearParams(m=3.0, c=40.0, k=5.0e4),
    example_peak_displacement=0.01,
)
