"""Sensors of the transfer system: band-limited white noise and ADC quantization.

Noise (seed 000 §12.3 / digest 003 §3 [REPO]). The Simulink "Band-Limited White Noise"
block with *noise power* P (the height of the two-sided power spectral density,
[unit²/Hz] = [unit²·s]) and sample time T_s outputs independent Gaussian samples of
variance ``P / T_s`` (standard deviation ``sqrt(P/T_s)`` — the repository's
``rms = sqrt(power/samplePeriod)``). The one-sided PSD of that sequence is ``2 P`` up to
the Nyquist frequency ``1/(2 T_s)``. Here ``T_s`` is the ``dt`` of each call, or, with
``hold_samples`` = H > 1, H·dt: one draw of σ = sqrt(P/(H·dt)) held over H consecutive
samples of an array measured at once. The [REPO] Case 4 model runs its noise blocks at
the slow sample time dtsim = 0.02 s (its ``rmsD = sqrt(rms_noise_DT/dtsim)``, digest 000
§12.3) while the loop samples at 4000 Hz: H = 80.

Source values, and their conversion to SI:

* displacement noise power 6.25e-13 in²·s (the thesis ES works in inches)
  → 6.25e-13 · 0.0254² = 4.0323e-16 m²·s (σ = 1.27 µm at 4000 Hz);
* force noise power 1.16e-13 kip²·s (the ES forces are in kips, digest 000 §12.3)
  → 1.16e-13 · 4448.2216² = 2.2953e-6 N²·s (σ = 0.0958 N at 4000 Hz).

ADC quantization: a mid-tread quantizer with ``2**adc_bits`` codes over
``[−adc_full_scale, +adc_full_scale)``: ``q = lsb · clip(round(y / lsb), −2**(bits−1),
2**(bits−1) − 1)`` with ``lsb = 2 · adc_full_scale / 2**adc_bits``. Inside the range the
error is at most lsb/2; outside it the reading saturates. ``adc_bits = 0`` disables
quantization (and saturation).

Reproducibility: the state is a JAX PRNG key, split once per step; the same key gives
the same noise, in ``lax.scan`` or step by step.

Shape (docs/hybrid/components.md): ``sensor_init(params, key) -> state`` and
``sensor_step(params, state, SensorInputs(true_value), dt) -> (state, measured)``.
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from rths_ident.errors import ParameterError
from rths_ident._params import field_range, params_dataclass
from rths_ident.hybrid.fast_side.actuator import INCH, KIP

__all__ = [
    "THESIS_DISPLACEMENT_NOISE_POWER",
    "THESIS_FORCE_NOISE_POWER",
    "SensorParams",
    "SensorState",
    "SensorInputs",
    "sensor_init",
    "sensor_step",
    "sensor_run",
    "noise_standard_deviation",
    "quantize",
    "Sensor",
]

#: 6.25e-13 in²·s (seed 000 §12.3 ``rms_noise_DT``) in m²·s.
THESIS_DISPLACEMENT_NOISE_POWER = 6.25e-13 * INCH**2
#: 1.16e-13 kip²·s (seed 000 §12.3 ``rms_noise_FT``) in N²·s.
THESIS_FORCE_NOISE_POWER = 1.16e-13 * KIP**2


@params_dataclass(static=("adc_bits", "hold_samples"))
class SensorParams:
    """One measurement channel (displacement in m or force in N)."""

    noise_power: float = field_range(
        0.0, low=0.0, unit="unit²·s",
        doc="P, band-limited white-noise power (two-sided PSD height); 0 = no noise")
    adc_full_scale: float = field_range(
        1.0, low=0.0, low_inclusive=False, unit="unit", doc="ADC range ±full scale")
    adc_bits: int = 0
    hold_samples: int = 1  # H: one noise draw held over H samples (module doc); 1 = a draw per sample

    def __post_init__(self):
        if not isinstance(self.adc_bits, (int, np.integer)) or not (0 <= int(self.adc_bits) <= 32):
            raise ParameterError(
                f"SensorParams.adc_bits = {self.adc_bits!r} must be an integer in [0, 32] "
                "(0 = no quantization)")
        if not isinstance(self.hold_samples, (int, np.integer)) or int(self.hold_samples) < 1:
            raise ParameterError(
                f"SensorParams.hold_samples = {self.hold_samples!r} must be an integer ≥ 1 "
                "(1 = an independent noise sample per measured sample)")

    @classmethod
    def thesis_displacement(cls, **changes) -> "SensorParams":
        """Displacement channel with the thesis noise power (in SI), no quantization."""
        return cls(**{"noise_power": THESIS_DISPLACEMENT_NOISE_POWER, **changes})

    @classmethod
    def thesis_force(cls, **changes) -> "SensorParams":
        """Force channel with the thesis noise power (in SI), no quantization."""
        return cls(**{"noise_power": THESIS_FORCE_NOISE_POWER, **changes})

    def lsb(self) -> float:
        """Quantization step [unit] (0 if quantization is off)."""
        if self.adc_bits == 0:
            return 0.0
        return float(2.0 * self.adc_full_scale / 2 ** self.adc_bits)


class SensorState(NamedTuple):
    key: jax.Array  # JAX PRNG key (uint32[2])


class SensorInputs(NamedTuple):
    """One sample of a channel (the project's component shape, docs/hybrid/components.md).

    true_value: what the transducer sees [unit of the channel], a scalar or an array (an
    array is measured in one draw: one independent noise sample per element).
    """

    true_value: jax.Array


def sensor_init(params: SensorParams, key=123) -> SensorState:
    """``key``: an int seed (default 123, the repository's ``rng(123)``) or a JAX key."""
    if isinstance(key, (int, np.integer)):
        key = jax.random.PRNGKey(int(key))
    return SensorState(key=jnp.asarray(key))


def noise_standard_deviation(params: SensorParams, dt):
    """σ = sqrt(P / T_s) of the band-limited white noise at sample time ``dt`` [s]."""
    return jnp.sqrt(params.noise_power / dt)


def quantize(value, full_scale, bits: int):
    """Mid-tread ADC with ``2**bits`` codes over [−full_scale, full_scale)."""
    lsb = 2.0 * full_scale / 2.0**bits
    code = jnp.clip(jnp.round(value / lsb), -(2.0 ** (bits - 1)), 2.0 ** (bits - 1) - 1.0)
    return code * lsb


def sensor_step(params: SensorParams, state: SensorState, inputs: SensorInputs, dt):
    """Measure ``inputs.true_value`` (scalar or array) over a sample of ``dt`` [s].

    Returns ``(state, measured)``: ``true + σ·N(0, 1)``, then quantized if enabled. With
    ``params.hold_samples`` = H > 1, ``true_value`` is a 1-D array of a multiple of H
    samples and each draw, of σ = sqrt(P/(H·dt)), is held over H of them.
    """
    key, sub = jax.random.split(state.key)
    true_value = jnp.asarray(inputs.true_value, dtype=jnp.float64)
    hold = int(params.hold_samples)
    if hold == 1:
        noise = noise_standard_deviation(params, dt) * jax.random.normal(sub, true_value.shape, jnp.float64)
    else:
        if true_value.ndim != 1 or true_value.shape[0] % hold:
            raise ParameterError(f"SensorParams.hold_samples = {hold}: the samples measured at once must be a 1-D "
                                 f"array of a multiple of {hold} samples; got shape {true_value.shape}")
        draws = jax.random.normal(sub, (true_value.shape[0] // hold,), jnp.float64)
        noise = noise_standard_deviation(params, dt * hold) * jnp.repeat(draws, hold)
    measured = true_value + noise
    if params.adc_bits > 0:  # static configuration, not a traced value
        measured = quantize(measured, params.adc_full_scale, params.adc_bits)
    return SensorState(key=key), measured


def sensor_run(params: SensorParams, state: SensorState, true_values, dt):
    """``lax.scan`` of :func:`sensor_step` over the first axis of ``true_values``."""

    def body(s, inputs):
        return sensor_step(params, s, inputs, dt)

    return jax.lax.scan(body, state, SensorInputs(jnp.asarray(true_values, dtype=jnp.float64)))


_run_jit = jax.jit(sensor_run)


class Sensor:
    """Stateful wrapper: ``Sensor(params, seed).measure(true_values, dt)``."""

    def __init__(self, params: SensorParams, key=123):
        self.params = params
        self.state = sensor_init(params, key)

    def measure(self, true_values, dt: float) -> np.ndarray:
        """Measured samples for a record of true values (first axis: time)."""
        self.state, out = _run_jit(self.params, self.state, np.asarray(true_values, dtype=float), dt)
        return np.asarray(out)
