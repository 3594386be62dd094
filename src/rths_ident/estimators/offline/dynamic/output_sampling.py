"""How the simulated output becomes samples comparable with the measured ones. The
oscillator is integrated on S sub-steps per sample; by name (:data:`OUTPUT_SAMPLINGS`):

* ``point`` (default): the output at the sample instants (an ideal sampler);
* ``fir-decimation``: the output at the sub-step rate passes the anti-alias filters of a
  decimating acquisition chain before every S-th value is kept — one stage per prime
  factor q of S (largest last, e.g. 2, 2, 5 for S = 20), each a linear-phase low-pass
  FIR of order 30 designed by the window method (Hamming window, cutoff at 1/q of the
  stage's Nyquist frequency, unit gain at 0 Hz), applied with its group delay removed
  (zero phase), then every q-th value kept. This is the classic ``decimate`` design
  (``scipy.signal.decimate(x, q, n=30, ftype="fir")``, which the tests use as the
  reference), the way a record sampled at a low rate from a fast simulation or a fast
  converter is usually made. It passes the band below about 0.8 of the final Nyquist
  frequency and attenuates (not removes) the band just above it, so a record made so
  differs from the point samples in its top octave.

The filters are convolutions in ``jax.numpy``: traceable and differentiable, inside the
fit's residual and Jacobian. The record's ends are padded with their end values.
"""

from __future__ import annotations

from typing import Callable

import jax.numpy as jnp
import numpy as np
import scipy.signal

from rths_ident.registry import Registry

__all__ = ["OUTPUT_SAMPLINGS", "FIR_ORDER", "decimation_stages", "sample_output"]

#: order of each decimation stage's FIR filter (31 taps)
FIR_ORDER = 30


def _prime_factors(n: int) -> list[int]:
    factors, d = [], 2
    while n > 1:
        while n % d == 0:
            factors.append(d)
            n //= d
        d += 1
    return factors


def decimation_stages(substeps: int) -> list[tuple[int, np.ndarray]]:
    """(q, FIR taps) per stage of ``fir-decimation`` for ``substeps`` sub-steps per sample."""
    return [(q, scipy.signal.firwin(FIR_ORDER + 1, 1.0 / q, window="hamming")) for q in _prime_factors(int(substeps))]


def _point(fine, substeps: int):
    return fine[::substeps]


def _fir_decimation(fine, substeps: int):
    half = FIR_ORDER // 2
    for q, taps in decimation_stages(substeps):
        padded = jnp.concatenate([jnp.full(half, fine[0]), fine, jnp.full(half, fine[-1])])
        fine = jnp.convolve(padded, jnp.asarray(taps[::-1]), mode="valid")[::q]
    return fine


#: name -> ``(output at the (N − 1)·S + 1 sub-step instants, S) -> output at the N samples``
OUTPUT_SAMPLINGS: Registry[Callable] = Registry("output sampling", {
    "point": _point,
    "fir-decimation": _fir_decimation,
})


def sample_output(fine, substeps: int, method: str = "point"):
    """The simulated output at the sample instants from its values at every sub-step."""
    return OUTPUT_SAMPLINGS[method](fine, int(substeps))
