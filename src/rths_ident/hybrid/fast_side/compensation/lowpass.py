"""Butterworth low-pass filter as a stateful IIR filter (functional core).

The AMB and dAMB compensators filter the measured displacement x_m and the command x_c
with the *same* low-pass filter so the two stay synchronised (seed 000 §2.4.1.1.1–2,
digest 000 §4.2–4.3; [REPO]: ``butter(4, 20/(fs/2))``, order 4, cut-off 20 Hz).

The filter is designed once with :func:`scipy.signal.butter` (second-order sections,
which stay well conditioned when the cut-off is a small fraction of the sampling rate,
e.g. 20 Hz at 4000 Hz) and then run sample by sample in transposed direct form II
inside JAX, so it can live in ``jax.lax.scan``.

The *design* sampling rate is an explicit parameter: a digital filter has no notion of
seconds, so a filter designed for ``sample_rate`` and run at another rate has its
cut-off scaled by the ratio of the two rates (the [REPO] dAMB designs at 50 Hz and runs
at 4000 Hz: the effective cut-off is 20·80 = 1600 Hz).
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from rths_ident import stored_arrays
from rths_ident.errors import ParameterError


class LowPassState(NamedTuple):
    """Second-order sections and their memory.

    sos: (n_sections, 6) coefficients [b0, b1, b2, a0=1, a1, a2] of each section.
    memory: (n_sections, 2) transposed-direct-form-II delay registers.
    """

    sos: jax.Array
    memory: jax.Array


def design_butterworth(order: int, cutoff_frequency: float, sample_rate: float) -> np.ndarray:
    """Second-order sections of a digital Butterworth low-pass filter.

    order: filter order (≥ 1). cutoff_frequency: −3 dB frequency f_c [Hz].
    sample_rate: sampling rate the filter is designed for, f_s [Hz]; f_c < f_s/2.
    """
    if int(order) != order or order < 1:
        raise ParameterError(f"filter order must be an integer ≥ 1; got {order!r}")
    if not (np.isfinite(sample_rate) and sample_rate > 0):
        raise ParameterError(f"filter sample_rate must be > 0 Hz; got {sample_rate!r}")
    nyquist = 0.5 * sample_rate
    if not (0.0 < cutoff_frequency < nyquist):
        raise ParameterError(
            f"filter cutoff_frequency = {cutoff_frequency!r} Hz must be in (0, {nyquist:g}) Hz, "
            f"i.e. below the Nyquist frequency of the design sample_rate {sample_rate:g} Hz"
        )
    # the design is scipy's; the command line keeps it between runs, because importing
    # scipy.signal costs about a second (rths_ident.stored_arrays)
    import scipy  # noqa: PLC0415 (its version only: milliseconds)

    return stored_arrays.stored_array(
        "butterworth-sos", (int(order), float(cutoff_frequency), float(sample_rate)),
        lambda: _scipy_butterworth(int(order), cutoff_frequency, sample_rate), versions=(scipy.__version__,))


def _scipy_butterworth(order: int, cutoff_frequency: float, sample_rate: float) -> np.ndarray:
    import scipy.signal  # noqa: PLC0415

    return scipy.signal.butter(order, cutoff_frequency, btype="low", fs=sample_rate, output="sos")


def init(sos) -> LowPassState:
    """Filter at rest (zero memory)."""
    sos = jnp.asarray(sos, dtype=jnp.float64)
    return LowPassState(sos=sos, memory=jnp.zeros((sos.shape[0], 2)))


def step(state: LowPassState, x) -> tuple[LowPassState, jax.Array]:
    """Filter one sample ``x``; returns the new state and the filtered sample."""
    sos = state.sos
    new_memory = []
    y = x
    for k in range(sos.shape[0]):  # static number of sections: unrolled
        b0, b1, b2, _, a1, a2 = (sos[k, j] for j in range(6))
        z1, z2 = state.memory[k, 0], state.memory[k, 1]
        u = y
        y = b0 * u + z1
        new_memory.append(jnp.stack([b1 * u - a1 * y + z2, b2 * u - a2 * y]))
    return LowPassState(sos=sos, memory=jnp.stack(new_memory)), y
