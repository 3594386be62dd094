"""Multi-rate transition between the slow NS rate Δt_n and the fast rate Δt_e = Δt_n/ratio
(seed 000 §3.2).

Each method is a pure pair ``init(params) -> state`` and
``step(params, state, inputs, dt) -> (state, output)`` called once per slow step, with
``inputs = TransitionInputs(slow_target)`` (u_n [m]) and ``dt`` the slow step Δt_n [s]
(present for the common shape, docs/hybrid/components.md; neither method uses it);
``output`` carries the ``ratio`` fast samples (``output.samples``). Thin wrappers offer
``on_slow_sample(u_n, dt)`` and ``fast_samples()``.

* :mod:`.predictor_corrector` — OpenFresco-style 2nd-order Lagrange predictor–corrector
  with the 0.6·Δt slow-down rule;
* :mod:`.ddmrt` — data-driven multi-rate transition: Wiener one-step predictor (fixed,
  LTI, or leaky-LMS adaptive, LTV) + monomial interpolation;
* :mod:`.wiener` — offline Wiener coefficients, correlation estimates, LMS bound;
* :mod:`.monomial` — Vandermonde interpolation matrix of the last segment;
* :mod:`.zoh` — zero-order-hold down-sampling (fast → slow).
"""

from rths_ident.hybrid.fast_side.rate_transition import ddmrt, monomial, predictor_corrector, wiener, zoh
from rths_ident.hybrid.fast_side.rate_transition.ddmrt import DDMRT, DDMRTOutput, DDMRTParams, DDMRTState
from rths_ident.hybrid.fast_side.rate_transition.inputs import TransitionInputs
from rths_ident.hybrid.fast_side.rate_transition.predictor_corrector import (
    PredictorCorrector,
    PredictorCorrectorOutput,
    PredictorCorrectorParams,
    PredictorCorrectorState,
)
from rths_ident.hybrid.fast_side.rate_transition.wiener import lms_step_size_bound, wiener_coefficients
from rths_ident.hybrid.fast_side.rate_transition.zoh import zoh_downsample, zoh_sample

__all__ = [
    "DDMRT",
    "DDMRTOutput",
    "DDMRTParams",
    "DDMRTState",
    "PredictorCorrector",
    "PredictorCorrectorOutput",
    "PredictorCorrectorParams",
    "PredictorCorrectorState",
    "TransitionInputs",
    "ddmrt",
    "lms_step_size_bound",
    "monomial",
    "predictor_corrector",
    "wiener",
    "wiener_coefficients",
    "zoh",
    "zoh_downsample",
    "zoh_sample",
]
