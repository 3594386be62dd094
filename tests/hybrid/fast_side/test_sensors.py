"""Tests of rths_ident.hybrid.fast_side.sensors: band-limited white noise and ADC quantization.

References: the Simulink band-limited-white-noise definition (variance = P/T_s,
two-sided PSD = P, so one-sided = 2P), scipy.signal.welch for the spectrum, the
chi-square spread of a sample variance (relative std sqrt(2/N)), and the LSB/2 bound of
a rounding quantizer.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.signal
from hypothesis import given, settings
from hypothesis import strategies as st

import rths_ident  # noqa: F401
from rths_ident.errors import ParameterError
from rths_ident.hybrid.fast_side.sensors import (
    THESIS_DISPLACEMENT_NOISE_POWER,
    THESIS_FORCE_NOISE_POWER,
    Sensor,
    SensorInputs,
    SensorParams,
    quantize,
    sensor_init,
    sensor_step,
)

DT = 1.0 / 4000.0
N = 2**16


def test_thesis_noise_powers_in_si():
    assert THESIS_DISPLACEMENT_NOISE_POWER == pytest.approx(6.25e-13 * 0.0254**2, rel=1e-14)
    assert THESIS_FORCE_NOISE_POWER == pytest.approx(1.16e-13 * 4448.2216152605**2, rel=1e-14)
    # the repository's rms = sqrt(power / samplePeriod), in source units, then in SI
    assert np.sqrt(6.25e-13 / DT) * 0.0254 == pytest.approx(np.sqrt(THESIS_DISPLACEMENT_NOISE_POWER / DT))


@pytest.mark.parametrize("power", [THESIS_DISPLACEMENT_NOISE_POWER, THESIS_FORCE_NOISE_POWER])
def test_noise_variance_is_power_over_sample_time(power):
    noise = Sensor(SensorParams(noise_power=power), key=7).measure(np.zeros(N), DT)
    expected = power / DT
    # sample variance of N Gaussian samples: relative std sqrt(2/N) = 0.55 %; allow 5 sigma
    assert np.var(noise) == pytest.approx(expected, rel=5 * np.sqrt(2 / N))
    assert abs(np.mean(noise)) < 5 * np.sqrt(expected / N)


@pytest.mark.parametrize("dt", [DT, 1.0 / 1024.0])
def test_noise_spectrum_is_flat_at_twice_the_power(dt):
    power = THESIS_DISPLACEMENT_NOISE_POWER
    noise = Sensor(SensorParams(noise_power=power), key=11).measure(np.zeros(N), dt)
    freqs, psd = scipy.signal.welch(noise, fs=1 / dt, nperseg=1024)
    inner = psd[1:-1]  # DC and Nyquist bins carry half the weight
    # 127 averaged segments x 511 bins: the mean is good to ~0.2 %
    assert np.mean(inner) == pytest.approx(2 * power, rel=0.02)
    low, high = inner[: inner.size // 2], inner[inner.size // 2:]
    assert np.mean(low) / np.mean(high) == pytest.approx(1.0, abs=0.04)


def test_noise_is_reproducible_and_scan_equals_steps():
    params = SensorParams.thesis_force()
    truth = np.linspace(0.0, 1.0e4, 64)
    a = Sensor(params, key=3).measure(truth, DT)
    b = Sensor(params, key=3).measure(truth, DT)
    c = Sensor(params, key=4).measure(truth, DT)
    np.testing.assert_array_equal(a, b)
    assert not np.allclose(a, c)
    state = sensor_init(params, 3)
    stepped = []
    for y in truth:
        state, m = sensor_step(params, state, SensorInputs(y), DT)
        stepped.append(float(m))
    np.testing.assert_allclose(stepped, a, rtol=0, atol=1e-12)


def test_wrapper_continues_the_stream_across_calls():
    params = SensorParams.thesis_displacement()
    whole = Sensor(params, key=5).measure(np.zeros(40), DT)
    s = Sensor(params, key=5)
    parts = np.concatenate([s.measure(np.zeros(15), DT), s.measure(np.zeros(25), DT)])
    np.testing.assert_array_equal(whole, parts)


@settings(max_examples=50, deadline=None)
@given(st.lists(st.floats(-0.2, 0.2 - 1e-6), min_size=1, max_size=50),
       st.integers(min_value=4, max_value=24))
def test_quantization_error_is_at_most_half_an_lsb(values, bits):
    params = SensorParams(adc_full_scale=0.2, adc_bits=bits)
    y = np.asarray(values)
    q = np.asarray(quantize(jnp.asarray(y), 0.2, bits))
    lsb = params.lsb()
    assert lsb == pytest.approx(0.4 / 2**bits)
    inside = y < 0.2 - lsb / 2
    assert np.all(np.abs(q[inside] - y[inside]) <= lsb / 2 * (1 + 1e-12))
    # readings are integer multiples of the LSB
    np.testing.assert_allclose(q / lsb, np.round(q / lsb), atol=1e-6)


def test_quantized_reading_saturates_and_uses_2_to_the_bits_codes():
    params = SensorParams(adc_full_scale=1.0, adc_bits=4)
    truth = np.linspace(-2.0, 2.0, 4001)
    out = Sensor(params).measure(truth, DT)
    lsb = params.lsb()
    assert np.unique(out).size == 2**4
    assert out.min() == pytest.approx(-1.0) and out.max() == pytest.approx(1.0 - lsb)


def test_noise_plus_quantization_sample_variance():
    """Fine quantization adds lsb²/12 to the noise variance (uniform error model)."""
    power = 1e-10
    sigma2 = power / DT
    params = SensorParams(noise_power=power, adc_full_scale=1.0, adc_bits=12)
    out = Sensor(params, key=1).measure(np.full(N, 0.1234), DT)
    expected = sigma2 + params.lsb() ** 2 / 12
    assert np.var(out) == pytest.approx(expected, rel=5 * np.sqrt(2 / N))


def test_held_noise_is_one_draw_per_block_of_variance_power_over_block_time():
    """hold_samples = H: the [REPO]'s noise block at sample time H·dt (dtsim = 80 fast
    steps): constant over each block of H samples, variance P/(H·dt) across blocks."""
    hold, blocks, power = 80, 8000, THESIS_DISPLACEMENT_NOISE_POWER
    params = SensorParams(noise_power=power, hold_samples=hold)
    _, out = sensor_step(params, sensor_init(params, 3), SensorInputs(jnp.zeros(hold * blocks)), DT)
    per_block = np.asarray(out).reshape(blocks, hold)
    assert np.array_equal(per_block, np.repeat(per_block[:, :1], hold, axis=1))
    # sample variance of `blocks` Gaussian draws: relative std sqrt(2/blocks) = 1.6 %; allow 5 sigma
    assert np.var(per_block[:, 0]) == pytest.approx(power / (hold * DT), rel=5 * np.sqrt(2 / blocks))
    with pytest.raises(ParameterError, match="hold_samples"):
        sensor_step(params, sensor_init(params, 3), SensorInputs(jnp.zeros(hold + 1)), DT)


@pytest.mark.parametrize("bad, name", [(dict(noise_power=-1.0), "noise_power"),
                                       (dict(hold_samples=0), "hold_samples"),
                                       (dict(adc_bits=-1), "adc_bits"),
                                       (dict(adc_full_scale=0.0), "adc_full_scale")])
def test_bad_sensor_parameters(bad, name):
    with pytest.raises(ParameterError, match=name):
        SensorParams(**bad)


def test_sensor_step_under_vmap_and_grad():
    params = SensorParams.thesis_displacement()
    keys = jax.random.split(jax.random.PRNGKey(0), 3)
    _, out = jax.vmap(lambda k: sensor_step(params, sensor_init(params, k), SensorInputs(0.01), DT))(keys)
    assert out.shape == (3,) and np.unique(np.asarray(out)).size == 3
    g = jax.grad(lambda y: sensor_step(params, sensor_init(params, 0), SensorInputs(y), DT)[1])(0.01)
    assert float(g) == pytest.approx(1.0)
