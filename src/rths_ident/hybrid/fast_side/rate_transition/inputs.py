"""The rate transitions' inputs: one slow step (the project's component shape,
``step(params, state, inputs, dt) -> (state, outputs)``; docs/hybrid/components.md)."""

from __future__ import annotations

from typing import NamedTuple

import jax


class TransitionInputs(NamedTuple):
    """One slow step of a rate transition. A record (for ``lax.scan``) is the same
    NamedTuple with a leading time axis.

    slow_target: u_n, the interface target received from the numerical substructure at
    the slow rate [m].
    arrival_tick: the fast tick at which that target arrived in a paced (real-time) loop;
    None = the transition's own setting (only the predictor–corrector uses it).
    """

    slow_target: jax.Array
    arrival_tick: jax.Array | None = None
