"""Batch least squares in the linear-in-parameters (LIP) form, with box constraints.

Constrained batch LS (:func:`bounded_linear_least_squares`)::

    θ* = argmin_θ ‖Φ θ − y‖²   s.t.  lower ≤ θ ≤ upper

is solved exactly as the ordinary LS estimate θ̂ = (ΦᵀΦ)⁻¹Φᵀy projected onto the box in
the metric ΦᵀΦ — ``rths_ident.estimators.qp_projection.project(θ̂, (ΦᵀΦ)⁻¹, lower,
upper)``, the same exact QP projection (and the same physical bounds) that the online
constrained RLS applies after every update. (‖Φθ − y‖² = (θ − θ̂)ᵀΦᵀΦ(θ − θ̂) + const.)

What ``ls`` means for a model (:func:`fit_ls`): the force is linear in some parameters
once the others — which fix the hysteretic variable z — are given. ``ls`` solves the
linear ones exactly by the constrained batch LS above and searches the others (variable
projection / separable least squares). Which is which is the model's own
linear-in-parameters form, in its registry entry
(:attr:`ModelEntry.linear_in_parameters <rths_ident.models.entry.ModelEntry>`, e.g.
Bouc–Wen: αk and (1−α)k linear, β, γ/β, n searched); models without one (the degrading
and pinching Bouc–Wen models: energy-driven degradation couples k to z) are fitted by
``nls``/``bayes``. :func:`ls_models` lists the models with a form.

For LuGre this is the "fix σ0/F_C → compute z → LS → update the ratio" loop,
with the update done by a bounded 1-D search of the LS residual over log(σ0/F_C), so it
always descends. z is computed by the models' own ``step`` with unit coefficients (e.g.
LuGre with σ0 = 1, F_C = 1/ratio, σ1 = σ2 = σ3 = 0 returns F = z), so there is one
implementation of each model. The outer search (:func:`_outer_search`): in one
dimension a 121-point log grid plus Brent's bounded refinement; in more (Bouc–Wen),
Latin-hypercube screening plus ``scipy.optimize.least_squares`` from the best points.
"""

from __future__ import annotations

from typing import Callable

import jax
import jax.numpy as jnp
import numpy as np
from scipy.optimize import least_squares
from scipy.stats import qmc

from rths_ident.errors import ParameterError
from rths_ident.estimators import qp_projection
from rths_ident.estimators.offline.bound_check import linear_form_at_bounds
from rths_ident.estimators.offline.fit_data import FitData
from rths_ident.estimators.offline.model_specs import ModelSpec, model_spec
from rths_ident.estimators.offline.result import FitResult, make_result
from rths_ident.estimators.offline.simulation import normalised_record, simulate_force
from rths_ident.models.fit_specification import SeparableProblem
from rths_ident.models.registry import MODELS

__all__ = ["bounded_linear_least_squares", "fit_ls", "ls_models"]


def _bounded_lls(regressors, measurements, lower, upper):
    """Traceable core of :func:`bounded_linear_least_squares` (columns pre-scaled)."""
    column_norm = jnp.sqrt(jnp.sum(regressors**2, axis=0))
    column_norm = jnp.where(column_norm > 0.0, column_norm, 1.0)
    scaled = regressors / column_norm
    gram = scaled.T @ scaled
    gram = gram + 1e-12 * jnp.trace(gram) / gram.shape[0] * jnp.eye(gram.shape[0])
    theta_scaled = jnp.linalg.solve(gram, scaled.T @ measurements)
    covariance = jnp.linalg.inv(gram)
    covariance = 0.5 * (covariance + covariance.T)
    projected = qp_projection.project(theta_scaled, covariance, lower * column_norm, upper * column_norm)
    return projected / column_norm


_bounded_lls_jit = jax.jit(_bounded_lls)


def bounded_linear_least_squares(regressors, measurements, lower=None, upper=None) -> np.ndarray:
    """θ* = argmin ‖Φθ − y‖² s.t. lower ≤ θ ≤ upper (exact; see the module docstring).

    ``regressors`` Φ (N, p), ``measurements`` y (N,), bounds (p,) with ∓inf allowed
    (None = unbounded). Columns are scaled to unit norm internally for conditioning.
    """
    phi = np.asarray(regressors, dtype=float)
    y = np.asarray(measurements, dtype=float)
    if phi.ndim != 2 or y.shape != (phi.shape[0],):
        raise ParameterError(f"regressors must be (N, p) and measurements (N,); got {phi.shape} and {y.shape}")
    p = phi.shape[1]
    if phi.shape[0] < p:
        raise ParameterError(f"need at least as many samples as parameters ({p}); got {phi.shape[0]}")
    lower = np.full(p, -np.inf) if lower is None else np.broadcast_to(np.asarray(lower, float), (p,))
    upper = np.full(p, np.inf) if upper is None else np.broadcast_to(np.asarray(upper, float), (p,))
    if np.any(lower > upper):
        raise ParameterError(f"lower bounds must be <= upper bounds; got {lower} and {upper}")
    if not (np.all(np.isfinite(phi)) and np.all(np.isfinite(y))):
        raise ParameterError("regressors and measurements must be finite")
    return np.asarray(_bounded_lls_jit(jnp.asarray(phi), jnp.asarray(y), jnp.asarray(lower), jnp.asarray(upper)))


# ------------------------------------------------------------------ separable problems


def ls_models() -> tuple[str, ...]:
    """Registered models with a linear-in-parameters form: those ``ls`` fits."""
    return tuple(name for name, entry in MODELS.items() if entry.linear_in_parameters is not None)


def _separable(name: str, spec: ModelSpec, time_is_physical: bool, fixed=None) -> SeparableProblem:
    """The model's linear-in-parameters form (its registry entry) for this spec."""
    form = MODELS[name].linear_in_parameters
    if form is None:
        raise ParameterError(
            f"method 'ls' is not available for model {name!r} (valid: {', '.join(ls_models())}); use 'nls' or 'bayes'"
        )
    if fixed and not form.holds_fixed:
        raise ParameterError(f"method 'ls' cannot hold parameters of {name!r} fixed; use 'nls'")
    return form.build({p.name: p for p in spec.free}, dict(spec.held), dict(spec.config), time_is_physical)


def _outer_search(problem: SeparableProblem, solve, n_starts, n_screen, seed, max_nfev, model, progress):
    """Minimise the LS residual over the outer coordinates (module docstring).

    One dimension (LuGre ratio, bilinear yield displacement): a log-spaced grid of 121
    points, then Brent's bounded search between the neighbours of the best point.
    More dimensions (Bouc–Wen β, γ/β, n): Latin-hypercube screening, then
    ``least_squares`` (trust-region reflective, finite-difference Jacobian) from the best
    ``n_starts`` points.
    """
    from scipy.optimize import minimize_scalar

    def residual(q):
        r = np.asarray(solve(jnp.asarray(q, dtype=jnp.float64))[0])
        return np.where(np.isfinite(r), r, 10.0)

    def cost(q):
        r = residual(q)
        return 0.5 * float(r @ r)

    lower = np.array([p.coordinate_bounds()[0] for p in problem.outer])
    upper = np.array([p.coordinate_bounds()[1] for p in problem.outer])
    if lower.size == 1:
        grid = np.linspace(lower[0], upper[0], 121)
        grid_costs = np.array([cost([g]) for g in grid])
        i = int(np.argmin(grid_costs))
        lo, hi = grid[max(i - 1, 0)], grid[min(i + 1, grid.size - 1)]
        refined = minimize_scalar(lambda g: cost([g]), bounds=(lo, hi), method="bounded",
                                  options={"xatol": 1e-10 * max(1.0, abs(grid[i]))})
        q_best = np.array([refined.x if refined.fun <= grid_costs[i] else grid[i]])
        if progress is not None:
            progress(f"{model} ls: {problem.outer[0].name} searched on a grid of {grid.size} + Brent")
        return q_best, {"outer": [problem.outer[0].name], "grid_points": int(grid.size),
                        "cost": float(min(refined.fun, grid_costs[i]))}
    start = np.clip([p.to_coordinate(p.start) for p in problem.outer], lower, upper)
    sampler = qmc.LatinHypercube(d=lower.size, seed=seed)
    candidates = np.vstack([start, qmc.scale(sampler.random(n_screen), lower, upper)])
    screened = np.array([cost(c) for c in candidates])
    best, runs = None, []
    order = np.argsort(screened)[:n_starts]
    for i, index in enumerate(order, start=1):
        solution = least_squares(residual, candidates[index], jac="2-point", bounds=(lower, upper),
                                 method="trf", x_scale=1.0, diff_step=1e-6, max_nfev=max_nfev)
        runs.append({"start": i, "cost": float(solution.cost), "nfev": int(solution.nfev)})
        if progress is not None:
            progress(f"{model} ls start {i}/{len(order)}: cost {solution.cost:.4g}")
        if best is None or solution.cost < best.cost:
            best = solution
    return best.x, {"outer": [p.name for p in problem.outer], "starts": runs}


def fit_ls(
    data: FitData,
    model: str,
    *,
    n_starts: int = 4,
    n_screen: int = 32,
    seed: int = 0,
    free_A: bool = False,
    substeps: int | None = None,
    fixed: dict[str, float] | None = None,
    max_nfev: int = 200,
    progress: Callable[[str], None] | None = None,
) -> FitResult:
    """Separable constrained least squares (module docstring) of ``model`` to ``data``."""
    spec = model_spec(model, data, free_A=free_A, substeps=substeps, fixed=fixed)
    problem = _separable(model, spec, data.time_is_physical, fixed)
    record = normalised_record(data)
    measured = record[3]
    lower_theta, upper_theta = jnp.asarray(problem.linear_lower), jnp.asarray(problem.linear_upper)

    def outer_values(q):
        return {p.name: (jnp.exp(q[i]) if p.log else q[i]) for i, p in enumerate(problem.outer)}

    @jax.jit
    def solve(q):
        s = outer_values(q)
        phi = problem.regressors(s, record)
        theta = _bounded_lls(phi, measured, lower_theta, upper_theta)
        return phi @ theta - measured, theta

    if not problem.outer:
        q_best = jnp.zeros(0)
        details = {"outer": []}
    else:
        q_best, details = _outer_search(problem, solve, n_starts, n_screen, seed, max_nfev, model, progress)
    _, theta = solve(q_best)
    fields = problem.to_fields(outer_values(q_best), theta)
    fields = {k: float(v) for k, v in fields.items()}
    details["linear_coefficients"] = dict(zip(problem.linear_names, np.asarray(theta).tolist()))
    details["at_bound"] = linear_form_at_bounds(problem.outer, np.atleast_1d(np.asarray(q_best)),
                                                problem.linear_names, np.asarray(theta), problem.linear_lower,
                                                problem.linear_upper)
    scales = data.scales()
    params_si = spec.to_physical(fields, scales)
    # the fitted force is the model's own simulation with the identified parameters
    x, v, a, _, dt = record
    normalised_params = spec.model.Params(**fields, **spec.config)
    fitted = simulate_force(spec.model, normalised_params, x, v, dt, a if spec.includes_inertia else None)
    fitted_names = [n for n in fields if n not in spec.held]
    if spec.config:
        details["model_config"] = dict(spec.config)
    return make_result(model, "ls", spec.model, params_si, fitted_names, data, np.asarray(fitted) * scales.force,
                       details=details, config=spec.config)
