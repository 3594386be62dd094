"""Bouc–Wen–Baber–Noori hysteresis with a closing gap: the pinching model of
:mod:`.pinching_bouc_wen` in parallel with an elastic spring that engages only beyond a
gap (slip, then contact: bars or bolts taking load after a slip, a gap closing),

    F = F_BWBN(x) + F_gap(x),   F_gap = k_g · sgn(x) · max(|x| − g, 0)

so a loop can run along a long low-stiffness slip plateau (the pinched, degraded
hysteretic part) and stiffen sharply at its largest displacements (k_g joins), its peaks
well above the plateau force. F_gap is nonlinear elastic: the same on loading and
unloading, no dissipation. Compare OpenSees ``uniaxialMaterial ElasticMultiLinear``
with the points (−L, −g, g, L) ↦ (−k_g(L − g), 0, 0, k_g(L − g)): the same spring
(``gap_spring_points`` builds them; tested against OpenSeesPy).

With k_g = 0 it is :class:`~.pinching_bouc_wen.PinchingBoucWen` exactly.
"""

from __future__ import annotations

import jax.numpy as jnp

from rths_ident._params import field_range, params_dataclass
from rths_ident.models.base import ElementInputs, HystereticModel, tangent_from_step
from rths_ident.models.bouc_wen import gamma_from_ratio, ratio_from_gamma
from rths_ident.models.entry import ModelEntry
from rths_ident.models.fit_specification import FitContext, FitParameters, FreeParameter, ModelFit
from rths_ident.models.pinching_bouc_wen import FIT_FORMS as PINCHING_FORMS
from rths_ident.models.pinching_bouc_wen import _FORMS_OFF as PINCHING_OFF
from rths_ident.models.pinching_bouc_wen import _fit_parameters as pinching_fit_parameters
from rths_ident.models.pinching_bouc_wen import PinchingBoucWen, PinchingBoucWenParams, PinchingBoucWenState

__all__ = ["GapBoucWenParams", "GapBoucWen", "ENTRY", "FIT_FORMS", "gap_force", "gap_spring_points"]


@params_dataclass(static=("substeps",))
class GapBoucWenParams(PinchingBoucWenParams):
    """The pinching model's fields (:class:`PinchingBoucWenParams`) and the gap spring's."""

    k_gap: float = field_range(0.0, low=0.0, unit="N/m", doc="k_g, stiffness of the spring once the gap is closed")
    gap: float = field_range(0.0, low=0.0, unit="m", doc="g, the displacement at which the gap closes (either way)")

    def __post_init__(self):
        PinchingBoucWenParams.__post_init__(self)


def gap_force(params, x):
    """F_gap = k_g sgn(x) max(|x| − g, 0) [N]."""
    return params.k_gap * jnp.sign(x) * jnp.maximum(jnp.abs(x) - params.gap, 0.0)


def gap_spring_points(k_gap: float, gap: float, reach: float) -> tuple[list[float], list[float]]:
    """(strains, stresses) of OpenSees ``ElasticMultiLinear`` for the gap spring up to
    ±``reach`` [m] (> gap)."""
    force = k_gap * (reach - gap)
    return [-reach, -gap, gap, reach], [-force, 0.0, 0.0, force]


class GapBoucWen(HystereticModel):
    """Bouc–Wen–Baber–Noori ∥ a gap spring; see the module docstring."""

    Params = GapBoucWenParams
    State = PinchingBoucWenState
    rate_dependent = False

    @staticmethod
    def init(params: GapBoucWenParams) -> PinchingBoucWenState:
        return PinchingBoucWen.init(params)

    @staticmethod
    def step(params: GapBoucWenParams, state: PinchingBoucWenState, inputs: ElementInputs, dt):
        new_state, force = PinchingBoucWen.step(params, state, inputs, dt)
        return new_state, force + gap_force(params, new_state.displacement)

    @staticmethod
    def tangent(params: GapBoucWenParams, state: PinchingBoucWenState, inputs: ElementInputs, dt):
        """∂F/∂x at the end of the step [N/m] (consistent with the discrete update)."""
        return tangent_from_step(GapBoucWen.step, params, state, inputs, dt)


# -- offline fit (data for rths_ident.estimators.offline) -----------------------------

_GAP = ("k_gap", "gap")
#: nested forms, smallest first: the pinching model's, with the gap spring freed right
#: after the plain Bouc–Wen form
FIT_FORMS = {
    "hysteretic": PINCHING_FORMS["hysteretic"],
    "gap": PINCHING_FORMS["hysteretic"] + _GAP,
    "degrading": PINCHING_FORMS["degrading"] + _GAP,
    "pinched": PINCHING_FORMS["pinched"] + _GAP,
    "full": PINCHING_FORMS["full"] + _GAP,
}
_FORMS_OFF = {**PINCHING_OFF, "k_gap": 0.0, "gap": 0.8}


def _fit_parameters(context: FitContext) -> FitParameters:
    """The pinching model's coordinates and k_g in [0, 20]·max|F|/max|x| (plain: 0 is
    "no gap"), g in [0, 1]·max|x| (start 0.7)."""
    free, held = pinching_fit_parameters(context)
    extra = (FreeParameter("k_gap", 0.0, 20.0, 1.0, log=False), FreeParameter("gap", 0.0, 1.0, 0.7, log=False))
    return FitParameters(tuple(free) + extra, held)


#: the registry entry (:data:`rths_ident.models.registry.MODELS` ``["gap-boucwen"]``)
ENTRY = ModelEntry(
    model=GapBoucWen,
    doc="docs/models/gap_bouc_wen.md",
    fit=ModelFit(_fit_parameters, gamma_from_ratio, ratio_from_gamma, forms=FIT_FORMS, off=_FORMS_OFF),
    # a strongly pinched member (slip plateau) whose gap closes at 2 cm
    example=GapBoucWenParams(
        k=1.0e6, alpha=0.02, beta=600.0, gamma=400.0, n=1.5, delta_nu=2.0e-4, delta_eta=3.0e-4,
        zeta_s=0.9, p=2.0e-2, q=0.0, psi=6.0e-3, lam=0.5, k_gap=6.0e5, gap=0.02),
    example_peak_displacement=0.03,
)
