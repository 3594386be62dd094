"""Polynomial-extrapolation delay compensation (seed 000 §2.4.1, Eqs. 2.27–2.31).

Horiuchi & Konno (2001): assume the target acceleration varies linearly in time and
extrapolate the target ahead by the delay τ, so that a transfer system that lags by τ
lands on the target. Subscript 0 is the last sample whose velocity and acceleration are
known, −1 the one before; primes are predictions (h = Δt + τ):

* (2.27) ẍ' = ẍ_0 + (h/Δt)(ẍ_0 − ẍ_{−1}) — the extraction prints ẋ' on the left; it is
  the predicted acceleration (digest 000 §4.1 ⚠, followed here);
* (2.28) x' = x_0 + h ẋ_0 + ½ h² ẍ_0 + (1/6) h³ x⃛_0, x⃛_0 ≈ (ẍ_0 − ẍ_{−1})/Δt — the
  extraction prints ⅓ for the quadratic term; ½ is the Taylor coefficient and the one
  consistent with Eq. 2.31 and with the text "2.30 follows from 2.28 for constant
  acceleration" (the original seed 000 line 856 prints ⅓; digest 000 §4.1 ⚠ followed);
* (2.30) x' = x_0 + h ẋ_0 + ½ h² ẍ_0 — constant acceleration (``include_jerk=False``).

At the fast rate only the target displacement is available, so velocity and
acceleration come from central differences of the target history: at fast sample i the
last sample with known (central) velocity and acceleration is i−1 (subscript 0), and
h = Δt + τ reaches t_i + τ, exactly the horizon of Eq. 2.28:

    ẋ_0 = (x_i − x_{i−2}) / (2Δt),   ẍ_0 = (x_i − 2x_{i−1} + x_{i−2}) / Δt²,
    ẍ_{−1} = (x_{i−1} − 2x_{i−2} + x_{i−3}) / Δt².

A quadratic target is extrapolated exactly; for a cubic one the central velocity is off
by Δt² x⃛/6, so x' is off by h Δt² x⃛/6.

Units: displacements in m, Δt and τ in s. The measured displacement is not used (pure
feedforward); it is part of :class:`CompensatorInputs` so every compensator has the same
``step(params, state, inputs, dt)``.
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp

from rths_ident._params import field_range, params_dataclass, replace
from rths_ident.hybrid.fast_side.compensation._wrapper import CompensatorWrapper
from rths_ident.hybrid.fast_side.compensation.finite_difference import push
from rths_ident.hybrid.fast_side.compensation.inputs import CompensatorInputs


@params_dataclass(static=("include_jerk",))
class PolynomialExtrapolationParams:
    """Polynomial extrapolation compensator (seed 000 Eqs. 2.27–2.30)."""

    delay: float = field_range(0.0, low=0.0, unit="s", doc="delay τ to compensate")
    include_jerk: bool = True  # True: Eq. 2.28 (linear acceleration); False: Eq. 2.30


class PolynomialExtrapolationState(NamedTuple):
    """target_taps: the last 4 targets [x_i, x_{i−1}, x_{i−2}, x_{i−3}] [m]."""

    target_taps: jax.Array


def init(params: PolynomialExtrapolationParams) -> PolynomialExtrapolationState:
    """All-zero target history (structure at rest)."""
    return PolynomialExtrapolationState(target_taps=jnp.zeros(4))


def extrapolated_acceleration(acceleration_0, acceleration_minus_1, horizon, dt):
    """ẍ' of Eq. 2.27: linear extrapolation of the acceleration by ``horizon`` = Δt + τ."""
    return acceleration_0 + (horizon / dt) * (acceleration_0 - acceleration_minus_1)


def extrapolate(taps, delay, dt, include_jerk: bool = True):
    """x' of Eq. 2.28 (or 2.30) from newest-first target taps, at t_i + ``delay``."""
    x_i, x_i1, x_i2, x_i3 = taps[0], taps[1], taps[2], taps[3]
    velocity_0 = (x_i - x_i2) / (2.0 * dt)
    acceleration_0 = (x_i - 2.0 * x_i1 + x_i2) / dt**2
    horizon = dt + delay
    prediction = x_i1 + horizon * velocity_0 + 0.5 * horizon**2 * acceleration_0
    if include_jerk:
        acceleration_minus_1 = (x_i1 - 2.0 * x_i2 + x_i3) / dt**2
        jerk_0 = (acceleration_0 - acceleration_minus_1) / dt
        prediction = prediction + horizon**3 * jerk_0 / 6.0
    return prediction


def step(params: PolynomialExtrapolationParams, state: PolynomialExtrapolationState, inputs: CompensatorInputs,
         dt):
    """One fast sample: push the target x_t [m] (``inputs.measured`` is not used), return
    the command x_c = x'(t_i + τ) [m]."""
    taps = push(state.target_taps, inputs.target)
    x_command = extrapolate(taps, params.delay, dt, params.include_jerk)
    return PolynomialExtrapolationState(target_taps=taps), x_command


class PolynomialExtrapolation(CompensatorWrapper):
    """Stateful wrapper: ``PolynomialExtrapolation(delay=0.01).command(x_t, x_m, dt)``."""

    Params = PolynomialExtrapolationParams
    _init = staticmethod(init)
    _step = staticmethod(step)


def with_calibration_gains(theta, kappa, params: PolynomialExtrapolationParams, state):
    """θ = [τ] → (params, state): the delay compensated by extrapolation [s] (``kappa``
    unused: the compensator has no initial model). Pure and traceable."""
    del kappa
    return replace(params, delay=theta[0]), state
