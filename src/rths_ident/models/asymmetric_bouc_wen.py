"""Asymmetric Bouc–Wen–Baber–Noori hysteresis: the pinching model of
:mod:`.pinching_bouc_wen` with a different strength on the two sides of the loop and a
different pinch on branches moving in +x and in −x (members whose push and pull differ:
T-sections, unequal top and bottom reinforcement, walls with openings).

Source of the asymmetry: the generalized Bouc–Wen model of Song & Der Kiureghian
("Generalized Bouc–Wen model for highly asymmetric hysteresis", J. Eng. Mech. 132(6),
610–618, 2006) makes the shape coefficient depend on the signs of z and ẋ; here that is
done in its simplest two-sided form, on top of Baber–Noori degradation and Foliente
pinching (Baber & Noori 1985, 1986; Foliente 1995). Equations (SI, z in m)::

    F = α k x + (1 − α) k z
    ż = h(z) [A(ε) ẋ − ν(ε) σ(z) (β |ẋ| |z|^{n−1} z + γ ẋ |z|^n)] / η(ε)
    σ(z) = 1 for z ≥ 0,  r^{−n} for z < 0         (r: strength_ratio)
    h(z) = 1 − ζ₁(ε) exp(−(z sgn(ẋ) − q z_u(sgn ẋ))² / ζ₂(ε)²)
    ζ₁(ε) = ζ_s(sgn ẋ) (1 − e^{−p ε}),  ζ_s(+) = ζ_s,  ζ_s(−) = ζ_s⁻ (zeta_s_negative)
    z_u(+) = (A(ε)/(ν(ε)(β+γ)))^{1/n},  z_u(−) = r z_u(+)

so the loop's ultimate hysteretic force is (1 − α) k z_u on the positive side and
r times it on the negative side, and the pinch of the branches moving in +x has the
severity ζ_s, that of the branches moving in −x ζ_s⁻. The other laws (A(ε), ν(ε), η(ε),
ζ₂, ε) are those of :mod:`.pinching_bouc_wen`. σ(z) multiplies |z|^n, which vanishes at
z = 0, so ż stays continuous when z changes sign.

With r = 1 and ζ_s⁻ = ζ_s it is :class:`~.pinching_bouc_wen.PinchingBoucWen` (the same
update to rounding; tested). The update: ``substeps`` sub-steps per increment; in each,
A, ν, η and h are taken at the start of the sub-step and z follows the backward-Euler
increment of :func:`._bouc_wen_increment.branch_increment` with the coefficients of the
side each branch lies on (c₊ of the side the motion goes to, c₋ of the other), ε by the
trapezoidal rule.
"""

from __future__ import annotations


import jax.numpy as jnp
import numpy as np

from rths_ident._params import field_range, params_dataclass
from rths_ident.errors import ParameterError
from rths_ident.models._bouc_wen_increment import branch_increment, integrate_increment, ultimate_value
from rths_ident.models.base import ElementInputs, HystereticModel, direction_of_motion, is_concrete, tangent_from_step
from rths_ident.models.bouc_wen import gamma_from_ratio, ratio_from_gamma
from rths_ident.models.entry import ModelEntry
from rths_ident.models.fit_specification import FitContext, FitParameters, FreeParameter, ModelFit
from rths_ident.models.pinching_bouc_wen import (
    FIT_FORMS as PINCHING_FORMS,
    PinchingBoucWen,
    PinchingBoucWenParams,
    PinchingBoucWenState,
)
from rths_ident.models.pinching_bouc_wen import _FORMS_OFF as PINCHING_OFF
from rths_ident.models.pinching_bouc_wen import _fit_parameters as pinching_fit_parameters

__all__ = ["AsymmetricBoucWenParams", "AsymmetricBoucWen", "ENTRY", "FIT_FORMS"]


@params_dataclass(static=("substeps",))
class AsymmetricBoucWenParams(PinchingBoucWenParams):
    """The pinching model's fields (:class:`PinchingBoucWenParams`) and the two sides'."""

    strength_ratio: float = field_range(
        1.0, low=0.0, low_inclusive=False, unit="-",
        doc="r, ultimate hysteretic force on the negative side over that on the positive side",
    )
    zeta_s_negative: float = field_range(
        0.0, low=0.0, high=1.0, high_inclusive=False, unit="-",
        doc="ζ_s⁻, pinching severity of the branches moving in −x (ζ_s: in +x)",
    )

    def __post_init__(self):
        if not isinstance(self.substeps, int) or self.substeps < 1:
            raise ParameterError(f"AsymmetricBoucWenParams.substeps = {self.substeps!r} must be an integer >= 1")
        if is_concrete(self.beta, self.gamma):
            total = np.min(np.asarray(self.beta, dtype=float) + np.asarray(self.gamma, dtype=float))
            if not total > 0.0:
                raise ParameterError(f"AsymmetricBoucWenParams.gamma = {self.gamma!r} must satisfy beta + gamma > 0 "
                                     f"(beta = {self.beta!r}): each side of the loop has an ultimate value")


class AsymmetricBoucWen(HystereticModel):
    """Asymmetric Bouc–Wen–Baber–Noori model; see the module docstring."""

    Params = AsymmetricBoucWenParams
    State = PinchingBoucWenState
    rate_dependent = False

    @staticmethod
    def init(params: AsymmetricBoucWenParams) -> PinchingBoucWenState:
        zero = jnp.zeros((), dtype=jnp.float64)
        return PinchingBoucWenState(displacement=zero, z=zero, energy=zero)

    @staticmethod
    def side_factor(params: AsymmetricBoucWenParams, side):
        """σ of the side ``side`` = ±1: 1 on the positive side, r^{−n} on the negative."""
        return jnp.where(side > 0.0, 1.0, params.strength_ratio ** (-params.n))

    @staticmethod
    def pinching(params: AsymmetricBoucWenParams, z, direction, energy):
        """h(z) with the severity and the ultimate value of the side ``direction`` = ±1."""
        A, nu, _ = PinchingBoucWen.degradation(params, energy)
        energy = jnp.maximum(energy, 0.0)
        severity = jnp.where(direction > 0.0, params.zeta_s, params.zeta_s_negative)
        zeta1 = severity * (1.0 - jnp.exp(-params.p * energy))
        zeta2 = (params.psi + params.delta_psi * energy) * (params.lam + zeta1)
        scale = nu * AsymmetricBoucWen.side_factor(params, direction)
        z_u = ultimate_value(A, scale * params.beta, scale * params.gamma, params.n)
        return 1.0 - zeta1 * jnp.exp(-(((z * direction - params.q * z_u) / zeta2) ** 2))

    @staticmethod
    def step(params: AsymmetricBoucWenParams, state: PinchingBoucWenState, inputs: ElementInputs, dt):
        x = jnp.asarray(inputs.displacement, dtype=jnp.float64)
        dx = x - state.displacement
        s = direction_of_motion(dx, inputs.velocity)
        sub_dx = dx / params.substeps
        hysteretic_stiffness = (1.0 - params.alpha) * params.k
        towards, away = AsymmetricBoucWen.side_factor(params, s), AsymmetricBoucWen.side_factor(params, -s)

        def substep(carry):
            z, energy = carry
            A, nu, eta = PinchingBoucWen.degradation(params, energy)
            scale = AsymmetricBoucWen.pinching(params, z, s, energy) / eta
            shape = scale * nu
            z_new = branch_increment(z, sub_dx, s, scale * A, shape * towards * (params.beta + params.gamma),
                                     shape * away * (params.gamma - params.beta), params.n)
            return z_new, energy + hysteretic_stiffness * 0.5 * (z + z_new) * sub_dx

        z, energy = integrate_increment(substep, (state.z, state.energy), params.substeps)
        new_state = PinchingBoucWenState(displacement=x, z=z, energy=energy)
        return new_state, params.alpha * params.k * x + hysteretic_stiffness * z

    @staticmethod
    def tangent(params: AsymmetricBoucWenParams, state: PinchingBoucWenState, inputs: ElementInputs, dt):
        """∂F/∂x at the end of the step [N/m] (consistent with the discrete update)."""
        return tangent_from_step(AsymmetricBoucWen.step, params, state, inputs, dt)


# -- offline fit (data for rths_ident.estimators.offline) -----------------------------

_HYSTERETIC = PINCHING_FORMS["hysteretic"]
#: nested forms, smallest first: the pinching model's, with the two sides' strength freed
#: right after the plain Bouc–Wen form and their pinch with the pinching terms
FIT_FORMS = {
    "hysteretic": _HYSTERETIC,
    "asymmetric": _HYSTERETIC + ("strength_ratio",),
    "degrading": PINCHING_FORMS["degrading"] + ("strength_ratio",),
    "pinched": PINCHING_FORMS["pinched"] + ("strength_ratio", "zeta_s_negative"),
    "full": PINCHING_FORMS["full"] + ("strength_ratio", "zeta_s_negative"),
}
_FORMS_OFF = {**PINCHING_OFF, "strength_ratio": 0.0, "zeta_s_negative": 0.0}  # log coordinate of r = 1


def _fit_parameters(context: FitContext) -> FitParameters:
    """The pinching model's coordinates (bounds scaled by the record) and r in
    [0.2, 5] (log), ζ_s⁻ in [0, 0.99]."""
    free, held = pinching_fit_parameters(context)
    extra = (FreeParameter("strength_ratio", 0.2, 5.0, 1.0),
             FreeParameter("zeta_s_negative", 0.0, 0.99, 0.5, log=False))
    return FitParameters(tuple(free) + extra, held)


#: the registry entry (:data:`rths_ident.models.registry.MODELS` ``["asymmetric-boucwen"]``)
ENTRY = ModelEntry(
    model=AsymmetricBoucWen,
    doc="docs/models/asymmetric_bouc_wen.md",
    fit=ModelFit(_fit_parameters, gamma_from_ratio, ratio_from_gamma, forms=FIT_FORMS, off=_FORMS_OFF),
    # the pinching example, 30 % weaker in pull, pinched harder in push
    example=AsymmetricBoucWenParams(
        k=1.0e6, alpha=0.05, beta=600.0, gamma=400.0, n=1.5, delta_nu=2.0e-4, delta_eta=3.0e-4, delta_A=5.0e-5,
        zeta_s=0.8, p=5.0e-3, q=0.1, psi=4.0e-3, delta_psi=1.0e-6, lam=0.5, strength_ratio=0.7,
        zeta_s_negative=0.5),
    example_peak_displacement=0.03,
)
