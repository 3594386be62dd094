import jax
import jax.numpy as jnp
import numpy as np
import pytest

import rths_ident  # noqa: F401
from rths_ident.errors import ParameterError
from rths_ident.hybrid.fast_side.compensation import CompensatorInputs, polynomial
from rths_ident.hybrid.fast_side.compensation.polynomial import (
    PolynomialExtrapolation,
    PolynomialExtrapolationParams,
    extrapolate,
    extrapolated_acceleration,
)

DT = 1.0 / 4000.0


def _taps(fun, t, dt=DT):
    return jnp.asarray([fun(t - k * dt) for k in range(4)])


@pytest.mark.parametrize("include_jerk", [True, False])
def test_quadratic_target_is_extrapolated_exactly(include_jerk):
    quadratic = lambda t: 0.3 - 1.2 * t + 4.0 * t**2  # noqa: E731
    t, delay = 0.8, 0.012
    predicted = extrapolate(_taps(quadratic, t), delay, DT, include_jerk)
    assert abs(float(predicted) - quadratic(t + delay)) < 1e-11


def test_cubic_target_error_is_the_central_velocity_error():
    # x = c t^3: central velocity is off by dt^2 x'''/6, so x' is off by h dt^2 x'''/6.
    # (a coarse step keeps the 1/dt^3 rounding of the third difference negligible)
    c, t, delay, dt = 5.0, 0.6, 0.03, 0.01
    cubic = lambda s: c * s**3  # noqa: E731
    predicted = float(extrapolate(_taps(cubic, t, dt), delay, dt))
    horizon = dt + delay
    expected_error = horizon * dt**2 * 6 * c / 6
    assert abs(predicted - cubic(t + delay) - expected_error) < 1e-6 * expected_error


def test_eq_2_31_difference_and_eq_2_27_forms():
    taps = jnp.asarray(np.random.default_rng(3).standard_normal(4))
    delay = 0.004
    horizon = DT + delay
    difference = extrapolate(taps, delay, DT, True) - extrapolate(taps, delay, DT, False)
    acc_0 = (taps[0] - 2 * taps[1] + taps[2]) / DT**2
    acc_m1 = (taps[1] - 2 * taps[2] + taps[3]) / DT**2
    np.testing.assert_allclose(difference, horizon**3 / 6 * (acc_0 - acc_m1) / DT, rtol=1e-12)
    # Eq. 2.27, second printed form: (2 + τ/Δt) ẍ_0 − (1 + τ/Δt) ẍ_{−1}, with horizon Δt + τ.
    np.testing.assert_allclose(
        extrapolated_acceleration(acc_0, acc_m1, horizon, DT),
        (2 + delay / DT) * acc_0 - (1 + delay / DT) * acc_m1,
        rtol=1e-12,
    )


def test_compensates_a_pure_delay(loop):
    delay_samples = 40  # 10 ms at 4000 Hz
    target = loop.multisine_target(duration=4.0)
    uncompensated, _, _ = loop.run_with_pure_delay(
        polynomial, PolynomialExtrapolationParams(delay=0.0), target, delay_samples, DT
    )
    # x_m[i] = x_c[i − 40]: the command must lead the target by the full 40 samples
    params = PolynomialExtrapolationParams(delay=delay_samples * DT)
    compensated, commands, _ = loop.run_with_pure_delay(polynomial, params, target, delay_samples, DT)
    j2_off, j2_on = loop.j2_percent(uncompensated, target), loop.j2_percent(compensated, target)
    print(f"\npolynomial, 10 ms pure delay: J2 uncompensated {j2_off:.3f} %, compensated {j2_on:.5f} %")
    assert j2_on < 0.01 * j2_off
    # the wrapper runs the same pure step
    wrapper = PolynomialExtrapolation(params)
    wrapped = [wrapper.command(x, 0.0, DT) for x in target[:50]]
    np.testing.assert_allclose(wrapped, commands[:50], rtol=0, atol=1e-15)


def test_differentiable_and_vmappable_in_the_delay():
    target = jnp.sin(2 * jnp.pi * 2.0 * jnp.arange(200) * DT)

    def final_command(delay):
        params = PolynomialExtrapolationParams(delay=delay)
        _, commands = jax.lax.scan(
            lambda s, x: polynomial.step(params, s, CompensatorInputs(x, 0.0), DT), polynomial.init(params), target
        )
        return commands[-1]

    grad = jax.grad(final_command)(0.01)
    numeric = (final_command(0.01 + 1e-6) - final_command(0.01 - 1e-6)) / 2e-6
    np.testing.assert_allclose(grad, numeric, rtol=1e-6)
    batch = jax.vmap(final_command)(jnp.array([0.0, 0.01]))
    np.testing.assert_allclose(batch[1], final_command(0.01), rtol=1e-12)


def test_negative_delay_is_rejected():
    with pytest.raises(ParameterError, match="PolynomialExtrapolationParams.delay"):
        PolynomialExtrapolationParams(delay=-0.001)


def test_reduces_the_lag_of_a_third_order_plant(loop):
    # plant 1/(a_3 s³ + a_2 s² + a_1 s + a_0): low-frequency delay a_1/a_0; the static gain
    # error 1/a_0 is not the extrapolation's business and remains (≈ 4.8 %).
    plant_coefficients = np.array([1.05, 0.025, 1.5e-4, 3e-7])
    plant = loop.third_order_plant(plant_coefficients, DT)
    target = loop.multisine_target(duration=6.0)
    half = target.size // 2
    j2 = {}
    for delay in (0.0, plant_coefficients[1] / plant_coefficients[0]):
        measured, _, _ = loop.run_with_state_space_plant(
            polynomial, PolynomialExtrapolationParams(delay=delay), target, plant, DT
        )
        j2[delay] = loop.j2_percent(measured[half:], target[half:])
    print(f"\npolynomial, 3rd-order plant, J2 over the 2nd half: {j2}")
    off, on = j2.values()
    assert on < 0.3 * off
