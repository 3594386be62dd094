"""Delay/dynamics compensation at the fast rate (seed 000 §2.4).

Every compensator is a pure pair ``init(params) -> state`` and
``step(params, state, inputs, dt) -> (state, x_command)`` with
``inputs = CompensatorInputs(target, measured)`` (x_t and the newest x_m; all in m and
s; docs/hybrid/components.md), usable inside ``jax.lax.scan``, plus a thin stateful
wrapper (``.command(x_t, x_m, dt)``):

* :mod:`.polynomial` — polynomial extrapolation by the delay τ (Eqs. 2.27–2.31);
* :mod:`.amb` — adaptive model-based compensation, continuous normalised gradient (Eqs. 2.32–2.34);
* :mod:`.damb` — discrete AMB: inverse-plant FIR identified by RLS (Eqs. 2.37–2.44).

Shared pieces: :mod:`.lowpass` (Butterworth IIR filter), :mod:`.finite_difference` (Eq. 2.37).
"""

from rths_ident.hybrid.fast_side.compensation import amb, damb, finite_difference, lowpass, polynomial
from rths_ident.hybrid.fast_side.compensation.amb import AMB, AMBParams, AMBState
from rths_ident.hybrid.fast_side.compensation.damb import DAMB, DAMBParams, DAMBState
from rths_ident.hybrid.fast_side.compensation.inputs import CompensatorInputs
from rths_ident.hybrid.fast_side.compensation.polynomial import (
    PolynomialExtrapolation,
    PolynomialExtrapolationParams,
    PolynomialExtrapolationState,
)

__all__ = [
    "AMB",
    "AMBParams",
    "AMBState",
    "CompensatorInputs",
    "DAMB",
    "DAMBParams",
    "DAMBState",
    "PolynomialExtrapolation",
    "PolynomialExtrapolationParams",
    "PolynomialExtrapolationState",
    "amb",
    "damb",
    "finite_difference",
    "lowpass",
    "polynomial",
]
