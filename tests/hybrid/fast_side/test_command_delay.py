"""The extra loop delay and compensator gain error stage (hybrid.fast_side.command_delay)
against closed forms: a ramp delayed by τ is the ramp τ later (exact for linear
interpolation, whole or fractional delays), the nominal stage is the compensator bit for
bit, and a gain s scales the compensator's correction x_c − x_t."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from rths_ident.errors import ParameterError
from rths_ident.hybrid.fast_side.command_delay import buffer_length, delayed_compensation
from rths_ident.hybrid.fast_side.compensation import polynomial
from rths_ident.hybrid.fast_side.compensation.inputs import CompensatorInputs
from rths_ident.hybrid.fast_side.fast_chunk import Strategy

FAST_RATE = 4000.0
DT = 1.0 / FAST_RATE


def _run(strategy, targets, measured=None):
    measured = np.zeros_like(targets) if measured is None else measured

    def body(state, inputs):
        return strategy.functions.step(strategy.params, state, CompensatorInputs(*inputs), DT)

    _, commands = jax.lax.scan(body, strategy.functions.init(strategy.params),
                               (jnp.asarray(targets), jnp.asarray(measured)))
    return np.asarray(commands)


@pytest.mark.parametrize("delay", [0.0, 3 * DT, 2.4 * DT, 0.0104])
def test_a_ramp_comes_out_delay_later(delay):
    slope = 0.02  # m/s
    time = DT * np.arange(1, 201)
    out = _run(delayed_compensation(None, 0.012, FAST_RATE, delay=delay), slope * time)
    # closed form: x(t − τ) once the delayed instant is a sample time of the ramp or later, 0 (at rest) before
    valid = time - delay >= DT
    np.testing.assert_allclose(out[valid], slope * (time[valid] - delay), rtol=0, atol=1e-15)
    assert np.all(out[time - delay <= -1e-12] == 0.0)


def test_nominal_stage_is_the_compensator_and_a_gain_scales_its_correction():
    params = polynomial.PolynomialExtrapolationParams(delay=0.012)
    compensator = Strategy(polynomial, params)
    time = DT * np.arange(400)
    targets = 0.01 * np.sin(2 * np.pi * 2.0 * time)
    measured = 0.01 * np.sin(2 * np.pi * 2.0 * (time - 0.01))
    alone = _run(compensator, targets, measured)
    nominal = _run(delayed_compensation(compensator, 0.02, FAST_RATE), targets, measured)
    assert np.array_equal(nominal, alone)  # bit for bit
    over = _run(delayed_compensation(compensator, 0.02, FAST_RATE, correction_gain=1.3), targets, measured)
    np.testing.assert_allclose(over, targets + 1.3 * (alone - targets), rtol=0, atol=1e-15)


def test_bad_values_name_the_field():
    with pytest.raises(ParameterError, match="max_delay"):
        buffer_length(-0.001, FAST_RATE)
    with pytest.raises(ParameterError, match=r"delay = 0\.03: expected 0 … 0\.02 s"):
        delayed_compensation(None, 0.02, FAST_RATE, delay=0.03)
    with pytest.raises(ParameterError, match="correction_gain"):
        delayed_compensation(None, 0.02, FAST_RATE, correction_gain=-1.0)
