"""Delay/dynamics compensation at the fast rate (seed 000 §2.4).

Every compensator is a pure pair ``init(params) -> state`` and
``step(params, state, x_target, x_measured, dt) -> (state, x_command)`` (all in m and s),
usable inside ``jax.lax.scan``, plus a thin stateful wrapper:

* :mod:`.polynomial` — polynomial extrapolation by the delay τ (Eqs. 2.27–2.31);
* :mod:`.amb` — adaptive model-based compensation, continuous normalised gradient (Eqs. 2.32–2.34);
* :mod:`.damb` — discrete AMB: inverse-plant FIR identified by RLS (Eqs. 2.37–2.44).

Shared pieces: :mod:`.lowpass` (Butterworth IIR filter), :mod:`.finite_difference` (Eq. 2.37).
"""

from rths_ident.hybrid.compensation import amb, damb, finite_difference, lowpass, polynomial
from rths_ident.hybrid.compensation.amb import AMB, AMBParams, AMBState
from rths_ident.hybrid.compensation.damb import DAMB, DAMBParams, DAMBState
from rths_ident.hybrid.compensation.polynomial import (
    PolynomialExtrapolation,
    PolynomialExtrapolationParams,
    PolynomialExtrapolationState,
)

__all__ = [
    "AMB",
    "AMBParams",
    "AMBState",
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
