"""Global stage of the nonlinear fits: differential evolution on a decimated record.

Before the local refinement (``scipy.optimize.least_squares`` on the full record), the
box of the fitted coordinates is searched by ``scipy.optimize.differential_evolution``
(seeded; ``best1bin``; a population of ``popsize`` × dimension members, at most
``generations`` generations; no polishing). Every generation is one vectorised
(``jax.vmap``) evaluation of the cost ½‖F̃_model − F̃_meas‖² over the population, on a
*decimated* record: every k-th sample (about ``max_samples`` in all), plus every reversal of the
displacement (the loop tips, where the hysteretic state turns), the first and the last.
For the rate-independent models (Bouc–Wen family, bilinear, quasi-static LuGre) a
decimated record is the same test with larger increments; the sub-stepped update keeps
it accurate enough to find the basin, which the local stage then refines on every sample.
"""

from __future__ import annotations

from typing import Callable

import jax.numpy as jnp
import numpy as np
from scipy.optimize import differential_evolution
from scipy.stats import qmc

from rths_ident.estimators.offline.simulation import NormalisedRecord

__all__ = ["reversal_indices", "decimated_record", "global_search"]


def reversal_indices(x: np.ndarray, tolerance: float = 0.01) -> np.ndarray:
    """Indices of the displacement's turning points: a running extreme counts as a
    reversal once x has retreated from it by more than ``tolerance`` × (max x − min x),
    so sensor noise does not make every sample a reversal."""
    x = np.asarray(x, dtype=float)
    threshold = tolerance * float(np.ptp(x))
    turns = []
    extreme, direction = 0, 0
    for i in range(1, x.size):
        if direction == 0:
            if abs(x[i] - x[0]) > threshold:
                direction, extreme = (1 if x[i] > x[0] else -1), i
        elif direction * (x[i] - x[extreme]) >= 0.0:
            extreme = i  # still moving the same way: a new running extreme
        elif abs(x[i] - x[extreme]) > threshold:
            turns.append(extreme)
            direction, extreme = -direction, i
    return np.array(turns, dtype=int)


def decimated_record(record: NormalisedRecord, max_samples: int) -> NormalisedRecord:
    """Every k-th sample of ``record`` (k = ⌈n / max_samples⌉) plus every reversal, the
    first and the last sample; the mean time step grows accordingly."""
    x, v, a, f, dt = record
    n = int(x.shape[0])
    if n <= max_samples:
        return record
    stride = int(np.ceil(n / max_samples))
    keep = np.union1d(np.arange(0, n, stride), reversal_indices(np.asarray(x)))
    keep = np.union1d(keep, [0, n - 1])
    step = dt * (n - 1) / (keep.size - 1)
    return NormalisedRecord(x[keep], v[keep], a[keep], f[keep], jnp.float64(step))


def global_search(costs: Callable, base: np.ndarray, active: np.ndarray, lower: np.ndarray, upper: np.ndarray,
                  *, seed: int, generations: int, popsize: int, starts: list[np.ndarray]) -> dict:
    """Differential evolution over the coordinates ``active`` of the full vector ``base``.

    ``costs(Q)`` maps an (S, p) array of full coordinate vectors to S costs (vmapped);
    ``starts`` are full vectors placed in the initial population (the heuristic start, a
    smaller form's optimum). Returns ``{"x": best full vector, "cost", "generations",
    "evaluations"}``.
    """
    base = np.asarray(base, dtype=float)
    bounds = list(zip(lower[active], upper[active]))

    def population_cost(members: np.ndarray) -> np.ndarray:
        # scipy passes (d, S) when vectorized
        members = np.asarray(members)
        members = members.T if members.ndim == 2 else members[None, :]
        full = np.repeat(base[None, :], members.shape[0], axis=0)
        full[:, active] = members
        values = np.asarray(costs(jnp.asarray(full)))
        return np.where(np.isfinite(values), values, np.inf)

    size = max(popsize * active.size, 8)
    rng = np.random.default_rng(seed)
    init = qmc.scale(qmc.LatinHypercube(d=active.size, seed=rng).random(size), lower[active], upper[active])
    for i, start in enumerate(starts[: size // 2]):
        init[i] = np.clip(np.asarray(start, dtype=float)[active], lower[active], upper[active])
    solution = differential_evolution(
        population_cost, bounds, maxiter=generations, popsize=popsize, init=init, rng=rng, polish=False,
        updating="deferred", vectorized=True, tol=1e-6, mutation=(0.5, 1.0), recombination=0.7,
    )
    best = base.copy()
    best[active] = solution.x
    return {"x": best, "cost": float(solution.fun), "generations": int(solution.nit),
            "evaluations": int(solution.nfev)}
