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

__all__ = ["LinearParams", "LinearState", "LinearElement"]


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
