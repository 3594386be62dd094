"""Bouc–Wen–Baber–Noori hysteresis with a nonlinear elastic spring in parallel: the
pinching model of :mod:`.pinching_bouc_wen` plus a cubic (Duffing) spring,

    F = F_BWBN(x) + k₃ x³

k₃ > 0 stiffens the member smoothly at large displacements (confinement, membrane or
tension-stiffening action, bars engaging gradually); k₃ < 0 softens it (a P–Δ-like loss of
stiffness at large drifts, which the energy-driven degradation alone cannot draw: with
k₃ < 0 the envelope can turn down). The spring is elastic: the same on loading and
unloading, it dissipates nothing and pulls every branch towards the origin, as the
restoring part of a self-centring member does.

With k₃ = 0 it is :class:`~.pinching_bouc_wen.PinchingBoucWen` exactly.
"""

from __future__ import annotations

from rths_ident._params import field_range, params_dataclass
from rths_ident.models.base import ElementInputs, HystereticModel, tangent_from_step
from rths_ident.models.bouc_wen import gamma_from_ratio, ratio_from_gamma
from rths_ident.models.entry import ModelEntry
from rths_ident.models.fit_specification import FitContext, FitParameters, FreeParameter, ModelFit
from rths_ident.models.pinching_bouc_wen import FIT_FORMS as PINCHING_FORMS
from rths_ident.models.pinching_bouc_wen import _FORMS_OFF as PINCHING_OFF
from rths_ident.models.pinching_bouc_wen import _fit_parameters as pinching_fit_parameters
from rths_ident.models.pinching_bouc_wen import PinchingBoucWen, PinchingBoucWenParams, PinchingBoucWenState

__all__ = ["SpringBoucWenParams", "SpringBoucWen", "ENTRY", "FIT_FORMS"]


@params_dataclass(static=("substeps",))
class SpringBoucWenParams(PinchingBoucWenParams):
    """The pinching model's fields (:class:`PinchingBoucWenParams`) and the spring's."""

    k3: float = field_range(0.0, unit="N/m^3", doc="k₃, cubic stiffness of the elastic spring (either sign)")

    def __post_init__(self):
        PinchingBoucWenParams.__post_init__(self)


class SpringBoucWen(HystereticModel):
    """Bouc–Wen–Baber–Noori ∥ a cubic elastic spring; see the module docstring."""

    Params = SpringBoucWenParams
    State = PinchingBoucWenState
    rate_dependent = False

    @staticmethod
    def init(params: SpringBoucWenParams) -> PinchingBoucWenState:
        return PinchingBoucWen.init(params)

    @staticmethod
    def spring_force(params: SpringBoucWenParams, x):
        """k₃ x³ [N]."""
        return params.k3 * x**3

    @staticmethod
    def step(params: SpringBoucWenParams, state: PinchingBoucWenState, inputs: ElementInputs, dt):
        new_state, force = PinchingBoucWen.step(params, state, inputs, dt)
        return new_state, force + SpringBoucWen.spring_force(params, new_state.displacement)

    @staticmethod
    def tangent(params: SpringBoucWenParams, state: PinchingBoucWenState, inputs: ElementInputs, dt):
        """∂F/∂x at the end of the step [N/m] (consistent with the discrete update)."""
        return tangent_from_step(SpringBoucWen.step, params, state, inputs, dt)


# -- offline fit (data for rths_ident.estimators.offline) -----------------------------

#: nested forms, smallest first: the pinching model's, with the spring freed right after
#: the plain Bouc–Wen form
FIT_FORMS = {
    "hysteretic": PINCHING_FORMS["hysteretic"],
    "spring": PINCHING_FORMS["hysteretic"] + ("k3",),
    "degrading": PINCHING_FORMS["degrading"] + ("k3",),
    "pinched": PINCHING_FORMS["pinched"] + ("k3",),
    "full": PINCHING_FORMS["full"] + ("k3",),
}
_FORMS_OFF = {**PINCHING_OFF, "k3": 0.0}


def _fit_parameters(context: FitContext) -> FitParameters:
    """The pinching model's coordinates and k₃ in [−0.5, 5]·max|F|/max|x|³ (plain)."""
    free, held = pinching_fit_parameters(context)
    return FitParameters(tuple(free) + (FreeParameter("k3", -0.5, 5.0, 0.0, log=False),), held)


#: the registry entry (:data:`rths_ident.models.registry.MODELS` ``["spring-boucwen"]``)
ENTRY = ModelEntry(
    model=SpringBoucWen,
    doc="docs/models/spring_bouc_wen.md",
    # the pinching example with a spring that adds half its yield force at 3 cm
    fit=ModelFit(_fit_parameters, gamma_from_ratio, ratio_from_gamma, forms=FIT_FORMS, off=_FORMS_OFF),
    example=SpringBoucWenParams(
        k=1.0e6, alpha=0.05, beta=600.0, gamma=400.0, n=1.5, delta_nu=2.0e-4, delta_eta=3.0e-4, delta_A=5.0e-5,
        zeta_s=0.8, p=5.0e-3, q=0.1, psi=4.0e-3, delta_psi=1.0e-6, lam=0.5, k3=1.8e8),
    example_peak_displacement=0.03,
)
