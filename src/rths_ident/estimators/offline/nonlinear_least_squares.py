"""Nonlinear least squares through the simulated force history (multi-start).

    q* = argmin_q Σ_k (F̃_model(q; x̃_1..k)_k − F̃_meas,k)²    within box bounds on q

F̃_model is the model's own ``step`` scanned over the measured displacement
(:mod:`rths_ident.estimators.offline.simulation`); ``q`` are the log/bounded coordinates
of :mod:`rths_ident.estimators.offline.model_specs`, in normalised units. Solved with
``scipy.optimize.least_squares`` (trust-region reflective, which keeps the box) using the
exact Jacobian ``jax.jacfwd`` of the scanned history.

Multi-start: ``n_screen`` Latin-hypercube points of the box (seeded) plus the heuristic
start are ranked by their cost in one vectorised (``vmap``) evaluation, and the best
``n_starts`` are refined; the best refined point wins.
"""

from __future__ import annotations

from typing import Callable

import jax
import jax.numpy as jnp
import numpy as np
from scipy.optimize import least_squares
from scipy.stats import qmc

from rths_ident._params import ParameterError
from rths_ident.estimators.offline.fit_data import FitData
from rths_ident.estimators.offline.model_specs import ModelSpec, model_spec
from rths_ident.estimators.offline.result import FitResult, make_result
from rths_ident.estimators.offline.simulation import normalised_record, simulate_normalised

__all__ = ["fit_nls", "residual_functions", "result_from_coordinates"]

#: residual used in place of a non-finite simulated force (keeps the optimiser away)
_NON_FINITE_RESIDUAL = 10.0


def residual_functions(spec: ModelSpec, record):
    """Jitted ``residual(q)``, ``jacobian(q)`` and vectorised ``costs(Q)`` (normalised)."""
    measured = record[3]

    def residual(q):
        r = simulate_normalised(spec, q, record) - measured
        return jnp.where(jnp.isfinite(r), r, _NON_FINITE_RESIDUAL)

    def cost(q):
        r = residual(q)
        return 0.5 * jnp.sum(r * r)

    def jacobian(q):
        jac = jax.jacfwd(residual)(q)
        return jnp.where(jnp.isfinite(jac), jac, 0.0)

    return jax.jit(residual), jax.jit(jacobian), jax.jit(jax.vmap(cost))


def result_from_coordinates(spec: ModelSpec, data: FitData, q, method: str, record=None,
                            posterior=None, details=None) -> FitResult:
    """The :class:`FitResult` at coordinates ``q`` (physical params, fitted force)."""
    record = normalised_record(data) if record is None else record
    scales = data.scales()
    fields = {k: float(v) for k, v in spec.fields(jnp.asarray(q)).items()}
    params_si = spec.to_physical(fields, scales)
    fitted_force = np.asarray(simulate_normalised(spec, jnp.asarray(q), record)) * scales.force
    fitted = [name for name in fields if name not in spec.held]
    details = dict(details or {})
    if spec.config:
        details["model_config"] = dict(spec.config)
    return make_result(spec.name, method, spec.model, params_si, fitted, data, fitted_force, posterior, details,
                       config=spec.config)


def _screen_points(spec: ModelSpec, n_screen: int, seed: int) -> np.ndarray:
    lower, upper = spec.bounds()
    points = [np.clip(spec.start(), lower, upper)]
    if n_screen > 0:
        sampler = qmc.LatinHypercube(d=lower.size, seed=seed)
        points.extend(qmc.scale(sampler.random(n_screen), lower, upper))
    return np.array(points)


def fit_nls(
    data: FitData,
    model: str,
    *,
    n_starts: int = 6,
    n_screen: int = 64,
    seed: int = 0,
    free_A: bool = False,
    substeps: int | None = None,
    fixed: dict[str, float] | None = None,
    max_nfev: int = 300,
    progress: Callable[[str], None] | None = None,
) -> FitResult:
    """Fit ``model`` to ``data`` by multi-start nonlinear least squares (module doc).

    Returns the best local solution; ``details`` lists every start's final cost and
    NRMSE (range form, %) so a user can judge how multi-modal the problem was.
    """
    if n_starts < 1:
        raise ParameterError(f"n_starts must be ≥ 1; got {n_starts}")
    if n_screen < 0:
        raise ParameterError(f"n_screen must be ≥ 0; got {n_screen}")
    spec = model_spec(model, data, free_A=free_A, substeps=substeps, fixed=fixed)
    record = normalised_record(data)
    residual, jacobian, costs = residual_functions(spec, record)
    lower, upper = spec.bounds()
    candidates = _screen_points(spec, n_screen, seed)
    screened = np.asarray(costs(jnp.asarray(candidates)))
    screened = np.where(np.isfinite(screened), screened, np.inf)
    order = np.argsort(screened)[: min(n_starts, len(candidates))]
    f_range = float(np.ptp(np.asarray(record[3])))
    n = data.n_samples

    def nrmse(cost_value):
        return float(np.sqrt(2.0 * cost_value / n) / f_range * 100.0)

    best, starts = None, []
    for i, index in enumerate(order, start=1):
        q0 = np.clip(candidates[index], lower, upper)
        solution = least_squares(
            lambda q: np.asarray(residual(jnp.asarray(q))),
            q0,
            jac=lambda q: np.asarray(jacobian(jnp.asarray(q))),
            bounds=(lower, upper),
            method="trf",
            x_scale="jac",
            max_nfev=max_nfev,
        )
        starts.append({"start": i, "cost": float(solution.cost), "nrmse_percent": nrmse(solution.cost),
                       "nfev": int(solution.nfev), "status": int(solution.status)})
        if progress is not None:
            progress(f"{model} nls start {i}/{len(order)}: NRMSE {nrmse(solution.cost):.2f} % "
                     f"({solution.nfev} evaluations)")
        if best is None or solution.cost < best.cost:
            best = solution
    details = {"starts": starts, "n_screen": n_screen, "seed": seed, "message": best.message,
               "coordinates": [p.name for p in spec.free]}
    return result_from_coordinates(spec, data, best.x, "nls", record=record, details=details)
