"""The maRTHS I/O board and sensors (seed 004 §3.6.3, items 5–8; the package's ``S1_Input_Data``).

* **Conversion factors** (item 7): actuator 1 7.4921 mm/V, 2074.74 N/V; actuator 2
  7.3907 mm/V, 2006.36 N/V. The package's affine offsets and correction gains
  (``v2d_const``, ``correction_gain``) calibrate its real board and are not used.
* **Commands**: metres → volts → saturation at ±``saturation_v`` (the package's 3.8 V;
  the paper states ±4 V, digest §14 item 8) → quantization → metres.
* **Quantization** (item 6, 18-bit A/D): a uniform quantizer of interval 2⁻¹⁸ V, the
  package's ``quantize_int`` (applied to commands and to every measured channel, in volts).
* **Sensor noise** (item 8, from experimental data): Gaussian white noise with the
  table's STD and a constant offset √(RMS² − STD²) (a non-zero mean is what makes the
  RMS exceed the STD; digest §15 check 9)::

      actuator 1 displacement  RMS 0.0182 mm  STD 0.0172 mm  → offset 0.00595 mm
      actuator 1 force         RMS 74.40 N    STD 20.13 N    → offset 71.62 N
      actuator 2 displacement  RMS 0.0199 mm  STD 0.0198 mm  → offset 0.00199 mm
      actuator 2 force         RMS 10.95 N    STD 7.62 N     → offset 7.86 N

Pure JAX functions; noise from an explicit ``jax.random`` key (seeded runs).
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from rths_ident.errors import ParameterError

__all__ = ["DaqParams", "default_daq", "command_to_plant", "quantize", "measure", "noise_offsets"]

#: item 8: (RMS, STD) per channel, SI (m, N)
NOISE_TABLE = {
    "displacement": ((0.0182e-3, 0.0172e-3), (0.0199e-3, 0.0198e-3)),
    "force": ((74.40, 20.13), (10.95, 7.62)),
}


def noise_offsets(channel: str) -> tuple[np.ndarray, np.ndarray]:
    """(offset, std) per actuator of ``channel`` ("displacement" [m] or "force" [N])."""
    rms, std = np.array(NOISE_TABLE[channel]).T
    return np.sqrt(rms**2 - std**2), std


class DaqParams(NamedTuple):
    """metres_per_volt, newtons_per_volt : (2,) conversion factors; saturation_v [V];
    quantum_v [V] (0 disables quantization); displacement/force noise offsets and STDs
    (2,) [m], [N] (zero STD and offset: ideal sensors)."""

    metres_per_volt: jax.Array
    newtons_per_volt: jax.Array
    saturation_v: jax.Array
    quantum_v: jax.Array
    displacement_offset: jax.Array
    displacement_std: jax.Array
    force_offset: jax.Array
    force_std: jax.Array


def default_daq(saturation_v: float = 3.8, noise: bool = True, quantization: bool = True) -> DaqParams:
    """The benchmark's board: ±3.8 V (``saturation_v=4.0`` for the paper's figure),
    2⁻¹⁸ V quantum, the §3.6.3 noise (``noise=False``: ideal sensors)."""
    if not (np.isfinite(saturation_v) and saturation_v > 0):
        raise ParameterError(f"saturation_v must be > 0 [V]; got {saturation_v!r}")
    d_off, d_std = noise_offsets("displacement")
    f_off, f_std = noise_offsets("force")
    scale = 1.0 if noise else 0.0
    return DaqParams(
        metres_per_volt=jnp.array([7.4921e-3, 7.3907e-3]), newtons_per_volt=jnp.array([2074.74, 2006.36]),
        saturation_v=jnp.asarray(float(saturation_v)), quantum_v=jnp.asarray(2.0**-18 if quantization else 0.0),
        displacement_offset=jnp.asarray(scale * d_off), displacement_std=jnp.asarray(scale * d_std),
        force_offset=jnp.asarray(scale * f_off), force_std=jnp.asarray(scale * f_std))


def quantize(volts, quantum):
    """Round to the nearest multiple of ``quantum`` [V] (``quantum`` = 0: unchanged)."""
    safe = jnp.where(quantum > 0, quantum, 1.0)
    return jnp.where(quantum > 0, jnp.round(volts / safe) * safe, volts)


def command_to_plant(daq: DaqParams, command_m):
    """(command reaching the plant [m], its voltage [V] before saturation) for a
    controller output ``command_m`` (2,) [m]."""
    volts = command_m / daq.metres_per_volt
    held = quantize(jnp.clip(volts, -daq.saturation_v, daq.saturation_v), daq.quantum_v)
    return held * daq.metres_per_volt, volts


def measure(daq: DaqParams, key, displacement_m, force_n):
    """(measured strokes [m], measured forces [N]) (2,) each: offset + white noise, then
    the A/D quantization in volts."""
    kd, kf = jax.random.split(key)
    d = displacement_m + daq.displacement_offset + daq.displacement_std * jax.random.normal(kd, (2,))
    f = force_n + daq.force_offset + daq.force_std * jax.random.normal(kf, (2,))
    d = quantize(d / daq.metres_per_volt, daq.quantum_v) * daq.metres_per_volt
    f = quantize(f / daq.newtons_per_volt, daq.quantum_v) * daq.newtons_per_volt
    return d, f
