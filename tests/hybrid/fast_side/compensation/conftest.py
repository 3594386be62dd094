"""Shared test plants for the compensators: discrete LTI plants run in one lax.scan."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.signal

import rths_ident  # noqa: F401  (float64)
from rths_ident.hybrid.fast_side.compensation import CompensatorInputs

FAST_DT = 1.0 / 4000.0


def third_order_plant(plant_coefficients, dt):
    """ZOH discretisation (scipy) of x_m/x_c = 1/(a_3 s³ + a_2 s² + a_1 s + a_0)."""
    a0, a1, a2, a3 = plant_coefficients
    A, B, C, D = scipy.signal.tf2ss([1.0], [a3, a2, a1, a0])
    Ad, Bd, Cd, _, _ = scipy.signal.cont2discrete((A, B, C, D), dt, method="zoh")
    return jnp.asarray(Ad), jnp.asarray(Bd[:, 0]), jnp.asarray(Cd[0])


def run_with_state_space_plant(module, params, x_target, plant, dt):
    """Closed loop: the measurement at sample i answers the commands up to i−1.
    Returns (x_measured, x_command, final compensator state) as NumPy/pytrees."""
    Ad, Bd, Cd = plant

    def body(carry, target):
        comp_state, plant_state = carry
        measured = Cd @ plant_state
        comp_state, command = module.step(params, comp_state, CompensatorInputs(target, measured), dt)
        return (comp_state, Ad @ plant_state + Bd * command), (measured, command)

    @jax.jit
    def run(targets):
        return jax.lax.scan(body, (module.init(params), jnp.zeros(Ad.shape[0])), targets)

    (state, _), (measured, command) = run(jnp.asarray(x_target))
    return np.asarray(measured), np.asarray(command), state


def run_with_pure_delay(module, params, x_target, delay_samples, dt):
    """Closed loop with x_m[i] = x_c[i − delay_samples] (delay_samples ≥ 1)."""

    def body(carry, target):
        comp_state, line = carry  # line[0] = x_c[i−1], ..., line[-1] = x_c[i−delay]
        measured = line[-1]
        comp_state, command = module.step(params, comp_state, CompensatorInputs(target, measured), dt)
        return (comp_state, jnp.concatenate([command[None], line[:-1]])), (measured, command)

    @jax.jit
    def run(targets):
        return jax.lax.scan(body, (module.init(params), jnp.zeros(delay_samples)), targets)

    (state, _), (measured, command) = run(jnp.asarray(x_target))
    return np.asarray(measured), np.asarray(command), state


def j2_percent(measured, target):
    """J2 of seed 000 Table 4.1: normalised RMS tracking error [%]."""
    return 100.0 * np.sqrt(np.sum((measured - target) ** 2) / np.sum(target**2))


def multisine_target(duration=6.0, dt=FAST_DT, amplitude=0.02):
    """Smooth displacement target [m]: 1, 2.7 and 4.1 Hz sines under a 1 s quintic
    (C²) ramp-in, so backward differences see no kink at the start."""
    t = np.arange(int(round(duration / dt))) * dt
    tau = np.minimum(t / 1.0, 1.0)
    ramp = 10 * tau**3 - 15 * tau**4 + 6 * tau**5
    return amplitude * ramp * (
        np.sin(2 * np.pi * 1.0 * t) + 0.5 * np.sin(2 * np.pi * 2.7 * t + 0.3) + 0.3 * np.sin(2 * np.pi * 4.1 * t + 1.0)
    )


class Loop:
    FAST_DT = FAST_DT
    third_order_plant = staticmethod(third_order_plant)
    run_with_state_space_plant = staticmethod(run_with_state_space_plant)
    run_with_pure_delay = staticmethod(run_with_pure_delay)
    j2_percent = staticmethod(j2_percent)
    multisine_target = staticmethod(multisine_target)


@pytest.fixture(scope="session")
def loop():
    """Plant simulators and metrics shared by the compensator tests."""
    return Loop
