"""Zero-order-hold down-sampling from the fast rate to the slow rate (seed 000 §3.2.2,
Fig. 3.3: "a ZOH brings fast signals down to the slow rate").

The slow side reads the fast signal once per slow step, at the end of that step (the
last of the ``ratio`` fast samples produced during it), and holds it until the next one.
"""

from __future__ import annotations

import jax.numpy as jnp

from rths_ident.errors import ParameterError


def zoh_sample(fast_samples_of_one_slow_step):
    """The value the slow side reads from one slow step's fast samples (last axis): the
    last one. JAX-traceable."""
    return jnp.asarray(fast_samples_of_one_slow_step)[..., -1]


def zoh_downsample(fast_signal, ratio: int):
    """Slow-rate samples of a fast signal (last axis, length a multiple of ``ratio``):
    sample k·ratio + ratio − 1 for k = 0, 1, …"""
    if int(ratio) != ratio or ratio < 1:
        raise ParameterError(f"ratio must be an integer ≥ 1; got {ratio!r}")
    signal = jnp.asarray(fast_signal)
    if signal.shape[-1] % int(ratio):
        raise ParameterError(
            f"fast_signal length {signal.shape[-1]} must be a multiple of ratio = {ratio}"
        )
    return signal[..., int(ratio) - 1 :: int(ratio)]
