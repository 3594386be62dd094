"""One Kalman filter over a whole record in one ``jax.lax.scan`` (shared by the UKF and
the EKF cores).

``step(state, z, fx_args, hx_args) -> (posterior, (prior, info))`` is the filter's
predict-then-update; ``record(prior, posterior, info)`` builds the per-step history
entry. ``zs`` (N, m) or (N,) measurements; ``fx_args_seq`` / ``hx_args_seq`` dicts of
arrays with leading axis N, sliced per step and passed on as keyword arguments.
"""

from __future__ import annotations

from typing import Callable

import jax
import jax.numpy as jnp


def scan_filter(step: Callable, record: Callable, state0, zs, fx_args_seq: dict | None = None,
                hx_args_seq: dict | None = None):
    """Returns the final posterior and the stacked history (module doc)."""
    zs = jnp.asarray(zs)
    if zs.ndim == 1:
        zs = zs[:, None]
    fx_args_seq = {} if fx_args_seq is None else fx_args_seq
    hx_args_seq = {} if hx_args_seq is None else hx_args_seq

    def body(state, inputs):
        z, fx_args, hx_args = inputs
        posterior, (prior, info) = step(state, z, fx_args, hx_args)
        return posterior, record(prior, posterior, info)

    return jax.lax.scan(body, state0, (zs, fx_args_seq, hx_args_seq))
