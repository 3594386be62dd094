import jax
import jax.numpy as jnp
import numpy as np

import rths_ident  # noqa: F401
from rths_ident.hybrid.fast_side.compensation import CompensatorInputs, damb, polynomial
from rths_ident.hybrid.fast_side.compensation.damb import DAMB, DAMBParams, rls_update
from rths_ident.hybrid.fast_side.compensation.finite_difference import fir_from_plant_coefficients

DT = 1.0 / 4000.0
TRUE_PLANT = np.array([1.05, 0.025, 1.5e-4, 3e-7])  # a_0..a_3 of 1/(a_3 s³ + … + a_0)


def test_initial_state_is_the_repository_fir():
    state = damb.init(DAMBParams())
    np.testing.assert_allclose(state.fir, [2.225, -1.475, 0.275, -0.025], atol=1e-12)
    np.testing.assert_allclose(state.covariance, 1e10 * np.eye(4))
    assert DAMBParams.repository_case4().filter_sample_rate == 50.0


def test_rls_equals_regularised_batch_least_squares():
    # With ρ = 1 and P_0 = p I, N RLS steps give the closed form
    # F_N = (Σ φφᵀ + I/p)⁻¹ (Σ φ y + F_0/p).
    rng = np.random.default_rng(11)
    regressors, targets = rng.standard_normal((50, 4)), rng.standard_normal(50)
    fir0, p0 = np.array([2.225, -1.475, 0.275, -0.025]), 1e3

    def body(carry, data):
        return rls_update(*carry, data[0], data[1], 1.0), None

    (fir, covariance), _ = jax.lax.scan(body, (jnp.asarray(fir0), p0 * jnp.eye(4)), (regressors, targets))
    normal = regressors.T @ regressors + np.eye(4) / p0
    np.testing.assert_allclose(fir, np.linalg.solve(normal, regressors.T @ targets + fir0 / p0), rtol=1e-10)
    np.testing.assert_allclose(covariance, np.linalg.inv(normal), rtol=1e-9)


def test_fir_converges_to_the_inverse_of_an_all_pole_plant():
    # Discrete plant whose exact inverse is a 4-tap FIR f (closed form, Eq. 2.39 at Δt):
    # f_0 x_m[k+1] + f_1 x_m[k] + f_2 x_m[k−1] + f_3 x_m[k−2] = x_c[k].
    true_fir = np.asarray(fir_from_plant_coefficients(TRUE_PLANT, DT))
    target = 0.01 * np.random.default_rng(0).standard_normal(6000)
    # a wide filter so the regressor spans 4 independent directions (with the default
    # 20 Hz filter the data only determine F inside 0–20 Hz)
    params = DAMBParams(filter_cutoff_frequency=1000.0)

    def body(carry, x_t):
        state, history = carry
        state, command = damb.step(params, state, CompensatorInputs(x_t, history[0]), DT)
        next_measured = (command - true_fir[1:] @ history) / true_fir[0]
        return (state, jnp.concatenate([next_measured[None], history[:-1]])), state.fir

    (state, _), firs = jax.jit(lambda x: jax.lax.scan(body, (damb.init(params), jnp.zeros(3)), x))(target)
    error = np.max(np.abs(np.asarray(state.fir) - true_fir)) / np.max(np.abs(true_fir))
    print(f"\ndAMB FIR vs closed-form inverse: max relative error {error:.2e}; F = {np.asarray(state.fir)}")
    assert error < 1e-6


def test_damb_tracks_a_third_order_plant(loop):
    plant = loop.third_order_plant(TRUE_PLANT, DT)
    target = loop.multisine_target(duration=6.0)
    half = target.size // 2
    uncompensated, _, _ = loop.run_with_state_space_plant(
        polynomial, polynomial.PolynomialExtrapolationParams(delay=0.0), target, plant, DT
    )
    compensated, _, _ = loop.run_with_state_space_plant(damb, DAMBParams(), target, plant, DT)
    repository, _, _ = loop.run_with_state_space_plant(damb, DAMBParams.repository_case4(), target, plant, DT)
    j2_off = loop.j2_percent(uncompensated[half:], target[half:])
    j2_on = loop.j2_percent(compensated[half:], target[half:])
    j2_repo = loop.j2_percent(repository[half:], target[half:])
    print(f"\ndAMB, 3rd-order plant, J2 over the 2nd half: uncompensated {j2_off:.3f} %, "
          f"dAMB (filter designed at 4000 Hz) {j2_on:.4f} %, [REPO] filter design at 50 Hz {j2_repo:.3f} %")
    assert j2_on < 0.05 * j2_off


def test_wrapper_matches_the_pure_step():
    rng = np.random.default_rng(2)
    targets, measured = rng.standard_normal(30) * 0.01, rng.standard_normal(30) * 0.01
    wrapper = DAMB()
    commands = [wrapper.command(x_t, x_m, DT) for x_t, x_m in zip(targets, measured)]
    params = DAMBParams()
    state, expected = jax.lax.scan(
        lambda s, inputs: damb.step(params, s, inputs, DT), damb.init(params), CompensatorInputs(targets, measured)
    )
    np.testing.assert_allclose(commands, expected, rtol=1e-12)
    np.testing.assert_allclose(wrapper.fir, state.fir, rtol=1e-12)
