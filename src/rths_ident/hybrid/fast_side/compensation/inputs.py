"""The compensators' inputs: one fast sample (the project's component shape,
``step(params, state, inputs, dt) -> (state, outputs)``; docs/hybrid/components.md)."""

from __future__ import annotations

from typing import NamedTuple

import jax


class CompensatorInputs(NamedTuple):
    """One fast sample of a compensator. A record (for ``lax.scan``) is the same
    NamedTuple with a leading time axis on each field.

    target: x_t, the target displacement of this sample [m];
    measured: x_m, the newest measured displacement [m] — the response to the command
    of the previous sample (feedforward compensators ignore it).
    """

    target: jax.Array
    measured: jax.Array
