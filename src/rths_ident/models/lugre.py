"""Modified LuGre hysteresis model of a steel column (seed 001, Salmerón Becerra 2021,
§2.2, Eqs. 2.10–2.16; linear-in-parameters form Eqs. 4.1–4.5 and recovery 4.15–4.17).

    R  = σ0 z + σ1 ż + σ2 ẋ + σ3 x                                   (2.10)
    ż  = ẋ − (σ0 / F_C) |ẋ| z

Physical parametrisation (Eqs. 2.11, 2.14–2.16), with k the lateral stiffness, F_y the
yield force, m the specimen mass and 0 ≤ α ≤ 1 (α is the share of k in σ0 — the
*opposite* of the Bouc–Wen convention, where α is the post-yield ratio):

    σ0 = α k,  σ3 = (1 − α) k,  F_C = F_y,  σ2 = 2 ζ √(k m),  σ1 = 2 ξ √(σ0 m)

Integration of z. Over a step the velocity is taken constant, so dz/dx = 1 − (σ0/F_C)
sgn(Δx) z is linear in z and has the exact solution (in the displacement increment Δx,
whatever the step duration)::

    z_end = s z* + (z0 − s z*) exp(−(σ0/F_C)|Δx|),   z* = F_C/σ0,  s = sgn(Δx)

written below as ``z0·e^{−u} + Δx·(1 − e^{−u})/u`` with u = (σ0/F_C)|Δx| so that it stays
finite for σ0 → 0 (α = 0, linear column). It is unconditionally stable: |z_end| never
exceeds max(|z0|, F_C/σ0). ż at the end of the step follows from the ODE with the
end-of-step velocity.
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from rths_ident._params import field_range, params_dataclass
from rths_ident.models.base import (
    ElementInputs,
    HystereticModel,
    check_scalar as _check_scalar,
    direction_of_motion,
    scan_force,
    tangent_from_step,
)
from rths_ident.models.entry import ModelEntry
from rths_ident.models.fit_specification import (
    FitContext,
    FitParameters,
    FreeParameter,
    LinearInParameters,
    ModelFit,
    SeparableProblem,
)

__all__ = ["LuGreParams", "LuGreState", "ModifiedLuGre", "ENTRY"]


@params_dataclass
class LuGreParams:
    """Parameters of the modified LuGre column model (seed 001, Eq. 2.10). SI units."""

    sigma0: float = field_range(
        low=0.0, unit="N/m", doc="σ0, bristle (elastic) stiffness = α k (Eq. 2.11)"
    )
    sigma1: float = field_range(
        low=0.0, unit="N*s/m", doc="σ1, micro-damping of the z dynamics = 2 ξ √(σ0 m) (Eq. 2.16)"
    )
    sigma2: float = field_range(
        low=0.0, unit="N*s/m", doc="σ2, macro (viscous) damping = 2 ζ √(k m) (Eq. 2.15)"
    )
    sigma3: float = field_range(
        low=0.0, unit="N/m", doc="σ3, hardening (post-yield) stiffness = (1 − α) k (Eq. 2.11)"
    )
    Fc: float = field_range(
        low=0.0, low_inclusive=False, unit="N", doc="F_C, Coulomb force = yield force F_y (Eq. 2.14)"
    )


class LuGreState(NamedTuple):
    """Committed state at the start of a step."""

    displacement: jax.Array  # x of the previous step [m]
    z: jax.Array  # internal bristle deflection z [m]


def _one_minus_exp_over(u):
    """(1 − e^{−u})/u for u ≥ 0, finite and smooth at u = 0."""
    small = u < 1e-6
    u_safe = jnp.where(small, 1.0, u)
    return jnp.where(small, 1.0 - u / 2.0 + u * u / 6.0, -jnp.expm1(-u_safe) / u_safe)


class ModifiedLuGre(HystereticModel):
    """Modified LuGre column model (seed 001, Eq. 2.10); see the module docstring.

    Example::

        col = ModifiedLuGre.from_physical(k=1.34e6, Fy=2.24e4)   # α=0.96, ζ=1%, ξ=2%
        force = col.force_history(x, dt=1/4096)
    """

    Params = LuGreParams
    State = LuGreState
    rate_dependent = True

    # -- functional core ----------------------------------------------------------
    @staticmethod
    def init(params: LuGreParams) -> LuGreState:
        zero = jnp.zeros((), dtype=jnp.float64)
        return LuGreState(displacement=zero, z=zero)

    @staticmethod
    def zdot(params: LuGreParams, z, v):
        """ż = ẋ − (σ0/F_C)|ẋ| z   (Eq. 2.10) [m/s]."""
        return v - params.sigma0 / params.Fc * jnp.abs(v) * z

    @staticmethod
    def step(params: LuGreParams, state: LuGreState, inputs: ElementInputs, dt):
        """Advance to ``inputs.displacement`` [m] / ``inputs.velocity`` [m/s]; exact z update."""
        x = jnp.asarray(inputs.displacement, dtype=jnp.float64)
        v = jnp.asarray(inputs.velocity, dtype=jnp.float64)
        dx = x - state.displacement
        s = direction_of_motion(dx, v)
        rate = params.sigma0 / params.Fc  # σ0/F_C [1/m]
        u = rate * s * dx  # = (σ0/F_C)|Δx| ≥ 0, but differentiable at Δx = 0
        z = state.z * jnp.exp(-u) + dx * _one_minus_exp_over(u)
        zdot = ModifiedLuGre.zdot(params, z, v)
        force = params.sigma0 * z + params.sigma1 * zdot + params.sigma2 * v + params.sigma3 * x
        return LuGreState(displacement=x, z=z), force

    @staticmethod
    def tangent(params: LuGreParams, state: LuGreState, inputs: ElementInputs, dt):
        """∂R/∂x at fixed ẋ [N/m] (one-sided in the direction of motion at Δx = 0)."""
        return tangent_from_step(ModifiedLuGre.step, params, state, inputs, dt)

    # -- linear-in-parameters form (Eqs. 4.1–4.5, 4.15–4.17) ---------------------
    @staticmethod
    def lip_regressor(z, v, x):
        """ψ = [z, −|ẋ| z, x]  (Eq. 4.5), so that R − (σ1+σ2)ẋ = Θᵀψ (Eq. 4.3)."""
        return jnp.array([z, -jnp.abs(v) * z, x])

    @staticmethod
    def theta_from_params(params: LuGreParams):
        """Θ = [σ0, σ0σ1/F_C, σ3]  (Eq. 4.5). Units [N/m, N·s/m², N/m]."""
        return jnp.array([params.sigma0, params.sigma0 * params.sigma1 / params.Fc, params.sigma3])

    @staticmethod
    def params_from_theta(theta, sigma1, sigma2, validate: bool = True) -> LuGreParams:
        """Recover the parameters from Θ (Eqs. 4.15–4.17), σ1 and σ2 being known:
        σ0 = θ1, F_C = σ0 σ1/θ2, σ3 = θ3.

        Traceable (works inside jit/grad/vmap; traced values are never checked).
        With concrete values the container is validated (``ParameterError`` for e.g.
        θ2 ≤ 0) unless ``validate=False``.
        """
        theta = jnp.asarray(theta)
        sigma0 = theta[0]
        values = dict(
            sigma0=sigma0,
            sigma1=sigma1,
            sigma2=sigma2,
            sigma3=theta[2],
            Fc=sigma0 * sigma1 / theta[1],
        )
        if validate:
            return LuGreParams(**values)
        leaves = [values[name] for name in ("sigma0", "sigma1", "sigma2", "sigma3", "Fc")]
        treedef = jax.tree_util.tree_structure(
            LuGreParams(sigma0=1.0, sigma1=1.0, sigma2=1.0, sigma3=1.0, Fc=1.0)
        )
        return jax.tree_util.tree_unflatten(treedef, leaves)

    @staticmethod
    def lip_known_force(params: LuGreParams, v):
        """The part of R with known coefficients, (σ1 + σ2) ẋ  (Eq. 4.2) [N]."""
        return (params.sigma1 + params.sigma2) * v

    # -- constructors ---------------------------------------------------------------
    @staticmethod
    def params_from_physical(k, Fy, alpha=0.96, m=19.3, zeta=0.01, xi=0.02) -> LuGreParams:
        """Eqs. 2.11, 2.14–2.16. k [N/m], Fy [N], m [kg], alpha/zeta/xi [-].

        Defaults: seed 001 Chapter 4 (α = 0.96, m = 19.3 kg, ζ = 1 %, ξ = 2 %).
        """
        for name, value, low, high in (
            ("alpha", alpha, 0.0, 1.0),
            ("zeta", zeta, 0.0, None),
            ("xi", xi, 0.0, None),
            ("m", m, 0.0, None),
        ):
            _check_scalar("ModifiedLuGre.from_physical", name, value, low, high)
        sigma0 = alpha * k
        return LuGreParams(
            sigma0=sigma0,
            sigma1=2.0 * xi * (sigma0 * m) ** 0.5,
            sigma2=2.0 * zeta * (k * m) ** 0.5,
            sigma3=(1.0 - alpha) * k,
            Fc=Fy,
        )

    @classmethod
    def from_physical(cls, k, Fy, alpha=0.96, m=19.3, zeta=0.01, xi=0.02) -> "ModifiedLuGre":
        """Model from lateral stiffness k [N/m] and yield force Fy [N] (Eqs. 2.11–2.16)."""
        _check_scalar("ModifiedLuGre.from_physical", "k", k, 0.0, None, low_inclusive=False)
        _check_scalar("ModifiedLuGre.from_physical", "Fy", Fy, 0.0, None, low_inclusive=False)
        return cls(cls.params_from_physical(k, Fy, alpha, m, zeta, xi))

    @classmethod
    def from_section(
        cls, E, I, L, fy, Sx, alpha=0.96, m=19.3, zeta=0.01, xi=0.02
    ) -> "ModifiedLuGre":
        """Fixed–fixed column from its section (seed 001 Table 2.1 and §2.5):
        k = 12 E I / L³,  F_y = 2 f_y S_x / L  (yield moment M_y = f_y S_x at both ends).

        E [Pa], I [m⁴], L [m], fy [Pa], Sx [m³]; the rest as in :meth:`from_physical`.
        """
        for name, value in (("E", E), ("I", I), ("L", L), ("fy", fy), ("Sx", Sx)):
            _check_scalar("ModifiedLuGre.from_section", name, value, 0.0, None, low_inclusive=False)
        k = 12.0 * E * I / L**3
        Fy = 2.0 * fy * Sx / L
        return cls.from_physical(k, Fy, alpha=alpha, m=m, zeta=zeta, xi=xi)


# -- offline fit (data for rths_ident.estimators.offline) -----------------------------


def _fit_parameters(context: FitContext) -> FitParameters:
    """σ1 = 0 always, and σ2 = 0 when the time axis is not physical (quasi-static test):
    they multiply velocities, which a pseudo-time makes meaningless; with σ1 = σ2 = 0 the
    model is rate-independent (Dahl model with linear hardening, seed 001 Eq. 2.10). With
    a physical time σ2 (viscous damping) is fitted; σ1 only damps the z equation
    numerically (seed 001 §2.4) and is not identifiable from a smooth test."""
    k0 = context.initial_stiffness
    free = [
        FreeParameter("sigma0", 0.05, 2000.0, k0),
        FreeParameter("Fc", 0.01, 5.0, 0.7),
        FreeParameter("sigma3", 0.0, 50.0, 0.05 * k0, log=False),
    ]
    held = {"sigma1": 0.0}
    if context.time_is_physical:
        free.append(FreeParameter("sigma2", 0.0, 5.0, 0.01, log=False))
    else:
        held["sigma2"] = 0.0
    return FitParameters(tuple(free), held)


def _separable(free: dict, held: dict, config: dict, time_is_physical: bool) -> SeparableProblem:
    """F = σ0 z + σ3 x (+ σ2 ẋ) with σ1 = 0 (seed 001 Eq. 4.2): z depends on the ratio
    σ0/F_C alone (Eq. 2.10), computed by :meth:`ModifiedLuGre.step` with σ0 = 1,
    F_C = 1/ratio, σ1 = σ2 = σ3 = 0 (then F = z); F_C = σ0/ratio."""
    s0, fc = free["sigma0"], free["Fc"]
    outer = (FreeParameter("ratio", s0.low / fc.high, s0.high / fc.low, s0.start / fc.start),)
    names = ("sigma0", "sigma3") + (("sigma2",) if time_is_physical else ())

    def regressors(s, record):
        x, v, _, _, dt = record
        unit = LuGreParams(sigma0=1.0, sigma1=0.0, sigma2=0.0, sigma3=0.0, Fc=1.0 / s["ratio"])
        z = scan_force(ModifiedLuGre, unit, x, v, dt)
        return jnp.stack([z, x] + ([v] if time_is_physical else []), axis=1)

    def to_fields(s, theta):
        fields = dict(held)
        fields.update(zip(names, theta))
        fields["Fc"] = theta[0] / s["ratio"]
        return fields

    lower = np.array([free[n].low for n in names])
    upper = np.array([free[n].high for n in names])
    return SeparableProblem(outer, names, lower, upper, regressors, to_fields)


#: the registry entry (:data:`rths_ident.models.registry.MODELS` ``["lugre"]``)
ENTRY = ModelEntry(
    model=ModifiedLuGre,
    doc="docs/models/lugre.md",
    fit=ModelFit(_fit_parameters),
    linear_in_parameters=LinearInParameters(
        _separable, linear="σ0, σ3 (+ σ2): F = σ0 z + σ3 x + σ2 ẋ (σ1 = 0)",
        searched="the ratio σ0/F_C, which alone fixes z"),
    example=ModifiedLuGre.params_from_physical(k=1.34e6, Fy=2.24e4),  # seed 001's column
    example_peak_displacement=0.05,
)
