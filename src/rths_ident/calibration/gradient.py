"""The gradient path: mean J2 over the calibration sample differentiated with
``jax.grad`` through the whole fused loop (every slow step, every fast step, the
actuator's RK4, the compensator's adaptation), with respect to θ in the unit cube —
log-gains and the initial model's time scale (:mod:`.gains`) — and minimised with
scipy's L-BFGS-B inside the cube's bounds.

Memory: reverse mode through a ``lax.scan`` keeps every step's residuals; the fast chunk
is wrapped in ``jax.checkpoint`` so only the state at each slow step is kept and each
chunk is recomputed on the way back (≈ 2× the forward work, memory ∝ slow steps).

Failed runs (actuator limit, non-finite state) score ``FAILED_PENALTY`` with a zero
gradient (the gradient of a failed run means nothing; non-finite entries are zeroed), so
the line search backs away from them.
"""

from __future__ import annotations

from typing import Callable

import jax
import jax.numpy as jnp
import numpy as np
import scipy.optimize

from rths_ident.calibration.sdof_rths import SDOFStudy, run_one
from rths_ident.calibration.search import SearchResult

FAILED_PENALTY = 1.0e3  # J2 [%] of a failed run on the gradient path


def checkpointed(study: SDOFStudy) -> SDOFStudy:
    """The study with its fast chunk rematerialised on the backward pass."""
    return study._replace(functions=study.functions._replace(fast_chunk=jax.checkpoint(study.functions.fast_chunk)))


def make_value_and_grad(study: SDOFStudy, specimens: dict) -> Callable:
    """Jitted ``u (d,) -> (mean J2 [%], dJ2/du (d,))`` over ``specimens`` (arrays (n,))."""
    study = checkpointed(study)

    def mean_j2(u):
        theta = study.space.from_unit(u)
        j2, failed = jax.vmap(lambda s: run_one(study, theta, s))(specimens)
        return jnp.mean(jnp.where(failed, FAILED_PENALTY, j2))

    value_and_grad = jax.jit(jax.value_and_grad(mean_j2))

    def evaluate(u):
        value, grad = value_and_grad(jnp.asarray(u, dtype=jnp.float64))
        return float(value), np.nan_to_num(np.asarray(grad), nan=0.0, posinf=0.0, neginf=0.0)

    return evaluate


def lbfgs(value_and_grad: Callable, start_u, iterations: int,
          progress: Callable[[int, float], None] | None = None, first_step: float = 0.05) -> SearchResult:
    """L-BFGS-B from ``start_u`` inside [0, 1]^d for at most ``iterations`` iterations.

    L-BFGS-B's first trial step has unit length; in the unit cube that is a jump across
    the whole box (into failed runs, whose penalty stalls the line search). The search
    therefore runs in z = (u − start_u)/``first_step``: its first step moves u by
    ``first_step``."""
    start_u = np.clip(np.asarray(start_u, dtype=float), 0.0, 1.0)
    history: list = []
    count = [0]

    def fun(z):
        count[0] += 1
        value, grad = value_and_grad(start_u + first_step * np.asarray(z))
        return value, grad * first_step

    def callback(intermediate_result):
        history.append(float(intermediate_result.fun))
        if progress is not None:
            progress(len(history), float(intermediate_result.fun))

    first = fun(np.zeros_like(start_u))[0]
    bounds = [(-s / first_step, (1.0 - s) / first_step) for s in start_u]
    result = scipy.optimize.minimize(fun, np.zeros_like(start_u), jac=True, method="L-BFGS-B", bounds=bounds,
                                     options={"maxiter": iterations}, callback=callback)
    best = float(result.fun) if result.fun < FAILED_PENALTY else float("inf")
    best_u = np.clip(start_u + first_step * np.asarray(result.x), 0.0, 1.0)
    return SearchResult(best_u, best, np.asarray([first] + history), count[0], int(result.nit),
                        str(result.message))
