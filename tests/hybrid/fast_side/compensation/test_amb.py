import jax
import jax.numpy as jnp
import numpy as np
import pytest

import rths_ident  # noqa: F401
from rths_ident.errors import ParameterError
from rths_ident._params import replace
from rths_ident.hybrid.fast_side.compensation import CompensatorInputs, amb, polynomial
from rths_ident.hybrid.fast_side.compensation.amb import AMB, AMBParams, adaptation_increment

DT = 1.0 / 4000.0
# A 3rd-order plant different from the printed a(0) = [1, 0.019, 1e-4, 0]
TRUE_PLANT = np.array([1.05, 0.025, 1.5e-4, 3e-7])  # a_0..a_3


def test_exact_integration_of_the_adaptation_law():
    rng = np.random.default_rng(7)
    gains = 10.0 ** np.array([6.03, 4.23, 1.48, -1.10])
    coefficients, regressor = rng.standard_normal(4), rng.standard_normal(4) * [1, 10, 100, 1000]
    command = 0.3
    error_0 = command - coefficients @ regressor
    normaliser = 1 + regressor @ regressor
    kappa = (gains * regressor) @ regressor / normaliser
    for dt in (1e-9, 1e-3, 1.0):
        new = coefficients + np.asarray(adaptation_increment(gains, coefficients, regressor, command, dt))
        # with φ held, ė = −κ e: the error decays exactly as exp(−κ dt)
        np.testing.assert_allclose(command - new @ regressor, error_0 * np.exp(-kappa * dt), rtol=1e-7, atol=1e-14)
    # small κΔt: forward Euler of Eq. 2.34
    euler = gains * error_0 * regressor / normaliser * 1e-9
    np.testing.assert_allclose(adaptation_increment(gains, coefficients, regressor, command, 1e-9), euler, rtol=1e-6)


def test_amb_tracks_a_third_order_plant_and_identifies_it(loop):
    plant = loop.third_order_plant(TRUE_PLANT, DT)
    target = loop.multisine_target(duration=8.0)
    half = target.size // 2
    uncompensated, _, _ = loop.run_with_state_space_plant(
        polynomial, polynomial.PolynomialExtrapolationParams(delay=0.0), target, plant, DT
    )
    params = AMBParams()
    fixed, _, _ = loop.run_with_state_space_plant(amb, replace(params, adaptation_gains=np.zeros(4)), target, plant, DT)
    adapted, _, state = loop.run_with_state_space_plant(amb, params, target, plant, DT)
    j2 = {name: loop.j2_percent(x[half:], target[half:]) for name, x in
          [("uncompensated", uncompensated), ("fixed a(0)", fixed), ("AMB", adapted)]}
    print("\nAMB, 3rd-order plant, J2 over the 2nd half [%]:", {k: round(v, 4) for k, v in j2.items()},
          "a(T) =", np.asarray(state.coefficients))
    assert j2["AMB"] < 0.02 * j2["uncompensated"]
    assert j2["AMB"] < 0.1 * j2["fixed a(0)"]
    # a_0, a_1, a_2 converge to the plant; a_3 is barely excited (tiny regressor weight)
    np.testing.assert_allclose(np.asarray(state.coefficients)[:3], TRUE_PLANT[:3], rtol=0.02)


def test_vmap_over_gains_and_wrapper_agree():
    target = jnp.sin(2 * jnp.pi * jnp.arange(400) * DT)
    measured = 0.9 * jnp.sin(2 * jnp.pi * (jnp.arange(400) - 40) * DT)

    def final_coefficients(gains):
        params = replace(AMBParams(), adaptation_gains=gains)
        state, _ = jax.lax.scan(
            lambda s, inputs: amb.step(params, s, inputs, DT), amb.init(AMBParams()),
            CompensatorInputs(target, measured),
        )
        return state.coefficients

    gains = jnp.stack([jnp.asarray(AMBParams().adaptation_gains), jnp.zeros(4)])
    batch = jax.vmap(final_coefficients)(gains)
    np.testing.assert_allclose(batch[1], AMBParams().initial_coefficients, rtol=0, atol=0)
    wrapper = AMB()
    for x_t, x_m in zip(np.asarray(target), np.asarray(measured)):
        wrapper.command(x_t, x_m, DT)
    np.testing.assert_allclose(wrapper.coefficients, batch[0], rtol=1e-12)


def test_bad_parameters_are_rejected():
    with pytest.raises(ParameterError, match="adaptation_gains"):
        AMBParams(adaptation_gains=np.array([1.0, -1.0, 0.0, 0.0]))
    with pytest.raises(ParameterError, match="shape"):
        AMBParams(initial_coefficients=np.zeros(3))
    with pytest.raises(ParameterError, match="cutoff_frequency"):
        AMBParams(filter_cutoff_frequency=30.0, filter_sample_rate=50.0)


def _frozen_amb_commands(coefficients, target):
    """AMB with Γ = 0 (a held at ``coefficients``) over ``target``, through ``lax.scan``."""
    params = AMBParams(adaptation_gains=np.zeros(4), initial_coefficients=np.asarray(coefficients))

    def one(state, x):
        return amb.step(params, state, CompensatorInputs(x, jnp.zeros(())), DT)

    return np.asarray(jax.lax.scan(one, amb.init(params), jnp.asarray(target))[1])


def test_a_jerk_discontinuity_steps_the_command_by_two_thirds_a3_times_it():
    """A target continuous to its curvature whose jerk jumps by Δj at t_0 (what a rate
    transition with continuity 2 hands over at every slow step, docs/hybrid/smooth_commands.md):
    the backward third difference (Eq. 2.37) ramps x⃛ from 0 to Δj over three samples by
    1/6, 4/6, 1/6 of Δj, so the command x_c = a_3 x⃛ jumps by at most (2/3) a_3 Δj in one fast
    step — a fixed step, however small Δt_e. Continuous to the jerk (a snap jump Δs), x⃛
    ramps at Δs from t_0 on (increments 1/24, 12/24, 23/24, then 1 of Δs Δt_e): the largest
    jump is a_3 Δs Δt_e, which vanishes with the step."""
    a3, jerk_jump, snap_jump = 2e-7, 40.0, 4000.0
    samples = np.arange(-8, 40)
    after = np.maximum(samples, 0) * DT  # t − t_0, zero before t_0
    cubic = jerk_jump * after**3 / 6.0  # x⃛ jumps by Δj at t_0
    quartic = snap_jump * after**4 / 24.0  # x⃛ continuous, x⁗ jumps by Δs
    jump = np.max(np.abs(np.diff(_frozen_amb_commands([0.0, 0.0, 0.0, a3], cubic))))
    assert jump == pytest.approx(2.0 / 3.0 * a3 * jerk_jump, rel=1e-9)
    smooth_jump = np.max(np.abs(np.diff(_frozen_amb_commands([0.0, 0.0, 0.0, a3], quartic))))
    assert smooth_jump == pytest.approx(a3 * snap_jump * DT, rel=1e-9)


def test_on_a_sinusoid_the_command_outruns_the_target_by_the_inverse_models_gain():
    """The lower bound of any lead compensator's jump ratio: on x_t = sin ωt the command
    x_c = Σ a_k x_t^(k) is a sinusoid of amplitude |Σ a_k (iω)^k| (backward differences
    at 4 kHz, ω Δt_e ≪ 1), so its largest step per fast sample over the target's is that
    gain: above 1 wherever the inverse model amplifies (the actuator attenuates)."""
    coefficients = np.array([0.983, 0.0118, 3.2e-5, 0.0])  # dAMB's identified inverse on rc-frame, 3 s in
    omega = 2.0 * np.pi * 4.0
    t = np.arange(int(2.0 / DT)) * DT
    target = np.sin(omega * t)
    command = _frozen_amb_commands(coefficients, target)
    settled = slice(100, None)
    ratio = np.max(np.abs(np.diff(command[settled]))) / np.max(np.abs(np.diff(target[settled])))
    gain = abs(np.polynomial.polynomial.polyval(1j * omega, coefficients))
    assert ratio == pytest.approx(gain, rel=2e-3)
    assert gain > 1.0
