"""Our compensation on the maRTHS plant: one dAMB per actuator (decentralised).

Each actuator i gets its own discrete adaptive model-based compensator
(:mod:`rths_ident.hybrid.fast_side.compensation.damb`: an inverse-plant 4-tap FIR identified online
by RLS — the plant's online identification feeding the command), fed with its own target
η_ns,i and its own measured stroke η_m,i; the coupling H12, H21 is left to the RLS (it sees
it as part of its channel). The initial inverse plant is the first-order Taylor form of
1/H_ii(s) of the nominal plant: a0 = 1/H_ii(0), a1 = −H_ii'(0)/H_ii(0)², built over the
time step ``initial_fir_time_step``; the Butterworth filter of x_c and x_m is designed at
the loop rate.

Pure ``init``/``step`` over a pair of stacked DAMB states (``jax.vmap`` over the two
channels).
"""

from __future__ import annotations

import jax
import numpy as np

from rths_ident.benchmarks.marths.plant import NOMINAL_PLANT, PlantDescription, entry_polynomials
from rths_ident.hybrid.fast_side.compensation import damb
from rths_ident.hybrid.fast_side.compensation.inputs import CompensatorInputs

__all__ = ["inverse_plant_coefficients", "damb_pair_params", "damb_pair_init", "damb_pair_step"]


def inverse_plant_coefficients(plant: PlantDescription = NOMINAL_PLANT) -> np.ndarray:
    """(2, 4): a = [a0, a1, 0, 0] of 1/H_ii(s) ≈ a0 + a1 s for each actuator."""
    rows = []
    for i in range(2):
        num, den = entry_polynomials(plant, i, i)
        h0 = num[-1] / den[-1]
        dh0 = (num[-2] * den[-1] - num[-1] * den[-2]) / den[-1] ** 2
        rows.append([1.0 / h0, -dh0 / h0**2, 0.0, 0.0])
    return np.array(rows)


def damb_pair_params(rate_hz: float, cutoff_hz: float = 20.0, initial_fir_time_step: float = 0.02,
                     plant: PlantDescription = NOMINAL_PLANT) -> tuple:
    """The two channels' :class:`~rths_ident.hybrid.fast_side.compensation.damb.DAMBParams`."""
    return tuple(damb.DAMBParams(initial_plant_coefficients=a, initial_fir_time_step=initial_fir_time_step,
                                 filter_cutoff_frequency=cutoff_hz, filter_sample_rate=rate_hz)
                 for a in inverse_plant_coefficients(plant))


def damb_pair_init(params: tuple):
    """Stacked initial states (leading axis: actuator)."""
    states = [damb.init(p) for p in params]
    return jax.tree_util.tree_map(lambda *xs: jax.numpy.stack(xs), *states)


def damb_pair_step(params: tuple, state, target, measured, dt):
    """(state, commands (2,) [m]) for targets and measured strokes (2,) [m]."""
    stacked = jax.tree_util.tree_map(lambda *xs: jax.numpy.stack(xs), *params)
    return jax.vmap(lambda p, s, t, m: damb.step(p, s, CompensatorInputs(t, m), dt))(stacked, state, target, measured)
