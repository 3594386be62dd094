"""dAMB — discrete adaptive model-based compensation: inverse-plant FIR identified by
recursive least squares (seed 000 §2.4.1.1.2, Eqs. 2.35–2.44; Wang et al. 2020).

Inverse plant as a 4-tap FIR (2.39): x_c[i] = Fᵀ X_t^tap[i], X_t^tap = [x_t[i] … x_t[i−3]].
Estimated command (2.40) x̂_c = Fᵀ X_m^tap from the (filtered) measurement taps, error
(2.41) e = x_c − Fᵀ X_m^tap, and the RLS update with forgetting factor ρ (2.42–2.43):

    k = P X_m^tap / (ρ + X_m^tapᵀ P X_m^tap),   F ← F + k e,   P ← (P − k X_m^tapᵀ P) / ρ,

with P_0 = 10¹⁰ I (2.44). The initial FIR is F_0 = (aᵀ D(Δt_0))ᵀ (Eq. 2.37–2.39) from
a = [a_0, a_1, a_2, a_3]; the [REPO] values a = [1, 0.02, 8·10⁻⁵, 2·10⁻⁷] with
Δt_0 = 0.02 s give F_0 = [2.225, −1.475, 0.275, −0.025].

Both x_c and x_m pass through the same Butterworth low-pass (order 4, f_c = 20 Hz in
[REPO]). ⚠ [REPO] designs that filter *and* F_0 with dtsim = 0.02 s (50 Hz) although the
block runs at 4000 Hz (digest 000 §4.3): at 4000 Hz that filter cuts at 20·80 = 1600 Hz.
Here the design rate is the explicit field ``filter_sample_rate`` (default 4000 Hz, so
f_c really is 20 Hz at the Case 4 fast rate); :meth:`DAMBParams.repository_case4`
reproduces the [REPO] choice (50 Hz). F_0 uses ``initial_fir_time_step``.

Algorithm per fast sample i (digest 000 §4.3, with the [REPO] one-sample delay of x_c):
the newest measurement x_m[i] answers the previous command x_c[i−1], so the filtered
x_c[i−1] is regressed on the filtered taps ending at x_m[i]; F is updated, then the new
command x_c[i] = Fᵀ X_t^tap[i] is issued. Units: m, s (the [REPO] works in m too).
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from rths_ident import small_linalg as sl
from rths_ident._params import array_field, check_shape, field_range, params_dataclass, replace
from rths_ident.hybrid.fast_side.compensation import lowpass
from rths_ident.hybrid.fast_side.compensation._wrapper import CompensatorWrapper
from rths_ident.hybrid.fast_side.compensation.finite_difference import fir_from_plant_coefficients, push
from rths_ident.hybrid.fast_side.compensation.inputs import CompensatorInputs

REPOSITORY_INITIAL_PLANT = np.array([1.0, 0.02, 8e-5, 2e-7])


@params_dataclass(static=("filter_order",))
class DAMBParams:
    """dAMB compensator (seed 000 Eqs. 2.37–2.44; [REPO] defaults)."""

    initial_plant_coefficients: np.ndarray = array_field(
        REPOSITORY_INITIAL_PLANT, unit="s^k", doc="a = [a_0..a_3] giving F_0 = (aᵀD)ᵀ"
    )
    initial_fir_time_step: float = field_range(
        0.02, low=0.0, low_inclusive=False, unit="s", doc="Δt used in D to build F_0 ([REPO]: dtsim)"
    )
    forgetting_factor: float = field_range(1.0, low=0.0, low_inclusive=False, high=1.0, unit="-", doc="ρ")
    initial_covariance: float = field_range(1e10, low=0.0, low_inclusive=False, unit="-", doc="P_0 = value·I (Eq. 2.44)")
    filter_cutoff_frequency: float = field_range(
        20.0, low=0.0, low_inclusive=False, unit="Hz", doc="Butterworth cut-off f_c on x_m and x_c"
    )
    filter_sample_rate: float = field_range(
        4000.0, low=0.0, low_inclusive=False, unit="Hz", doc="rate the filter is designed for ([REPO]: 50)"
    )
    filter_order: int = 4

    def __post_init__(self):
        check_shape("DAMBParams", "initial_plant_coefficients", self.initial_plant_coefficients, (4,))
        lowpass.design_butterworth(self.filter_order, self.filter_cutoff_frequency, self.filter_sample_rate)

    @classmethod
    def repository_case4(cls) -> "DAMBParams":
        """The [REPO] Case 4 setting: filter designed at 1/dtsim = 50 Hz (⚠ run at 4000 Hz)."""
        return cls(filter_sample_rate=50.0)


class DAMBState(NamedTuple):
    """fir: F = [f_0..f_3]; covariance: P (4×4); target_taps, measured_taps: newest-first
    lines of x_t and filtered x_m [m]; previous_command: x_c[i−1] [m]; the two filters."""

    fir: jax.Array
    covariance: jax.Array
    target_taps: jax.Array
    measured_taps: jax.Array
    previous_command: jax.Array
    measured_filter: lowpass.LowPassState
    command_filter: lowpass.LowPassState


def init(params: DAMBParams) -> DAMBState:
    """At rest, F = F_0, P = P_0·I; designs the filter (needs concrete params)."""
    sos = lowpass.design_butterworth(params.filter_order, float(params.filter_cutoff_frequency),
                                     float(params.filter_sample_rate))
    return DAMBState(
        fir=fir_from_plant_coefficients(params.initial_plant_coefficients, params.initial_fir_time_step),
        covariance=jnp.eye(4) * jnp.asarray(params.initial_covariance, dtype=jnp.float64),
        target_taps=jnp.zeros(4),
        measured_taps=jnp.zeros(4),
        previous_command=jnp.zeros(()),
        measured_filter=lowpass.init(sos),
        command_filter=lowpass.init(sos),
    )


def rls_update(fir, covariance, regressor, target, forgetting_factor):
    """One RLS step (Eqs. 2.42–2.43). Returns (F, P). P is re-symmetrised."""
    p_phi = sl.matvec(covariance, regressor)  # multiply-sum, not dot (small_linalg)
    gain = p_phi / (forgetting_factor + sl.vdot(regressor, p_phi))
    error = target - sl.vdot(fir, regressor)
    fir = fir + gain * error
    covariance = (covariance - sl.outer(gain, p_phi)) / forgetting_factor
    return fir, 0.5 * (covariance + covariance.T)


def step(params: DAMBParams, state: DAMBState, inputs: CompensatorInputs, dt):
    """One fast sample. inputs: target x_t [m] and newest x_m [m] (response to the
    previous command); dt: fast step [s] (unused by the FIR itself, kept for the common
    shape). Returns (state, x_c [m])."""
    del dt
    x_target, x_measured = inputs.target, inputs.measured
    measured_filter, measured_f = lowpass.step(state.measured_filter, x_measured)
    command_filter, command_f = lowpass.step(state.command_filter, state.previous_command)
    measured_taps = push(state.measured_taps, measured_f)
    fir, covariance = rls_update(state.fir, state.covariance, measured_taps, command_f, params.forgetting_factor)
    target_taps = push(state.target_taps, x_target)
    x_command = sl.vdot(fir, target_taps)
    new_state = DAMBState(fir, covariance, target_taps, measured_taps, x_command, measured_filter, command_filter)
    return new_state, x_command


class DAMB(CompensatorWrapper):
    """Stateful wrapper: ``DAMB().command(x_t, x_m, dt)``; ``.fir`` is F(t)."""

    Params = DAMBParams
    _init = staticmethod(init)
    _step = staticmethod(step)

    @property
    def fir(self) -> np.ndarray:
        return np.asarray(self.state.fir)


def with_calibration_gains(theta, kappa, params: DAMBParams, state):
    """θ = [log10 P_0, ρ, s] → (params, initial state): the RLS initial covariance
    P_0 = 10^θ_0 · I (Eq. 2.44), the forgetting factor ρ (Eq. 2.43) and the initial FIR
    from a_k = a_REPO,k (s κ)^k (``kappa``: the specimen's time-scale factor). Pure and
    traceable."""
    scale = (theta[2] * kappa) ** jnp.arange(4.0)
    a = jnp.asarray(REPOSITORY_INITIAL_PLANT) * scale
    params = replace(params, initial_covariance=10.0 ** theta[0], forgetting_factor=theta[1])
    fir = fir_from_plant_coefficients(a, params.initial_fir_time_step)
    return params, state._replace(fir=fir, covariance=jnp.eye(4) * 10.0 ** theta[0])
