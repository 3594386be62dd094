"""Population searches over the unit cube u ∈ [0, 1]^d of a :class:`~.gains.GainSpace`,
each population evaluated as ONE batch (``objective(U (P, d)) -> scores (P,)``, one
compiled ``vmap`` call over candidates × specimens).

* :func:`particle_swarm` — the method of seed 003 §2.3 step 4 (global-best PSO, inertia
  w = 0.7298, c_1 = c_2 = 1.49618: Clerc's constriction values), positions kept in the
  cube, velocities clamped to ±0.25 of the cube per iteration. The swarm starts on a
  Latin hypercube with particle 0 at the start point, so the result is never worse than
  the start.
* :func:`differential_evolution` — scipy's, with ``vectorized=True`` and deferred
  updating (one population per call); failed candidates get a large finite score
  (``FAILED_SCORE``) because scipy's convergence test needs finite energies.

Both return a :class:`SearchResult`.
"""

from __future__ import annotations

from typing import Callable, NamedTuple

import numpy as np
import scipy.optimize
from scipy.stats import qmc

FAILED_SCORE = 1.0e6  # J2 [%] given to a failed candidate where a finite number is needed


class SearchResult(NamedTuple):
    best_u: np.ndarray  # (d,) in the unit cube
    best_score: float  # mean J2 [%] over the calibration sample
    history: np.ndarray  # best score after each iteration (population)
    evaluations: int  # candidate tests (each a batch over the specimens)
    iterations_done: int | None = None  # iterations the search ran (None: all it was asked for)
    message: str = ""  # why the search stopped, as its optimiser says (scipy's message)


def particle_swarm(objective: Callable, start_u, n_particles: int, iterations: int, seed: int,
                   progress: Callable[[int, float], None] | None = None) -> SearchResult:
    """Global-best particle swarm (module doc) for ``iterations`` populations after the first."""
    start_u = np.clip(np.asarray(start_u, dtype=float), 0.0, 1.0)
    d = start_u.size
    rng = np.random.default_rng(seed)
    x = qmc.LatinHypercube(d=d, seed=rng).random(n_particles)
    x[0] = start_u
    v = np.zeros_like(x)
    scores = np.asarray(objective(x), dtype=float)
    personal, personal_score = x.copy(), scores.copy()
    g = int(np.argmin(personal_score))
    history = [personal_score[g]]
    w, c1, c2, vmax = 0.7298, 1.49618, 1.49618, 0.25
    for it in range(iterations):
        r1, r2 = rng.random(x.shape), rng.random(x.shape)
        v = w * v + c1 * r1 * (personal - x) + c2 * r2 * (personal[g] - x)
        v = np.clip(v, -vmax, vmax)
        x = np.clip(x + v, 0.0, 1.0)
        scores = np.asarray(objective(x), dtype=float)
        better = scores < personal_score
        personal[better], personal_score[better] = x[better], scores[better]
        g = int(np.argmin(personal_score))
        history.append(personal_score[g])
        if progress is not None:
            progress(it + 1, float(personal_score[g]))
    return SearchResult(personal[g].copy(), float(personal_score[g]), np.asarray(history),
                        n_particles * (iterations + 1))


def differential_evolution(objective: Callable, start_u, population: int, iterations: int, seed: int,
                           progress: Callable[[int, float], None] | None = None) -> SearchResult:
    """scipy's differential evolution, one population per objective call (module doc);
    ``population`` is rounded up to a multiple of d (scipy's ``popsize`` · d)."""
    start_u = np.clip(np.asarray(start_u, dtype=float), 0.0, 1.0)
    d = start_u.size
    history: list = []
    count = [0]

    def vectorized(u_columns):  # scipy passes (d, S)
        scores = np.asarray(objective(np.asarray(u_columns).T), dtype=float)
        count[0] += scores.size
        return np.where(np.isfinite(scores), scores, FAILED_SCORE)

    def callback(intermediate_result):
        history.append(float(intermediate_result.fun))
        if progress is not None:
            progress(len(history), float(intermediate_result.fun))

    result = scipy.optimize.differential_evolution(
        vectorized, [(0.0, 1.0)] * d, maxiter=iterations, popsize=max(1, int(np.ceil(population / d))),
        seed=seed, polish=False, init="latinhypercube", x0=start_u, vectorized=True, updating="deferred",
        callback=callback, tol=0.0, atol=0.0)
    best = float(result.fun) if result.fun < FAILED_SCORE else float("inf")
    return SearchResult(np.asarray(result.x), best, np.asarray(history), count[0], int(result.nit),
                        str(result.message))
