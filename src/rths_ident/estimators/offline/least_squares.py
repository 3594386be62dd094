"""Batch least squares in the linear-in-parameters (LIP) form, with box constraints.

Constrained batch LS (:func:`bounded_linear_least_squares`)::

    θ* = argmin_θ ‖Φ θ − y‖²   s.t.  lower ≤ θ ≤ upper

is solved exactly as the ordinary LS estimate θ̂ = (ΦᵀΦ)⁻¹Φᵀy projected onto the box in
the metric ΦᵀΦ — ``rths_ident.estimators.qp_projection.project(θ̂, (ΦᵀΦ)⁻¹, lower,
upper)``, the same exact QP projection (and the same physical bounds) that the online
constrained RLS applies after every update. (‖Φθ − y‖² = (θ − θ̂)ᵀΦᵀΦ(θ − θ̂) + const.)

What ``ls`` means for each model (:func:`fit_ls`): the force is linear in some
parameters once the others — which fix the hysteretic variable z — are given. ``ls``
solves the linear ones exactly by the constrained batch LS above and searches the
others (variable projection / separable least squares):

===================  =====================================  ===============================
model                linear (LS with bounds)                 searched (outer, bounded)
===================  =====================================  ===============================
linear               k (+ c, m with a physical time):        — (one exact solve)
                     F = k x + c ẋ + m ẍ
lugre                σ0, σ3 (+ σ2): F = σ0 z + σ3 x + σ2 ẋ   the ratio σ0/F_C, which alone
                     (seed 001 Eq. 4.2 with σ1 = 0)           fixes z (Eq. 2.10); F_C = σ0/ratio
boucwen              αk, (1−α)k: F = αk x + (1−α)k z          β, γ/β, n (A = 1) — they fix z
bilinear             bk, (1−b)k: F = bk x + (1−b)k z          yield displacement d_y = f_y/k,
                                                              z = elastic–perfectly-plastic
degrading-boucwen    not offered (energy-driven degradation couples k to z): use nls/bayes
===================  =====================================  ===============================

For LuGre this is the "fix σ0/F_C → compute z → LS → update the ratio" loop,
with the update done by a bounded 1-D search of the LS residual over log(σ0/F_C), so it
always descends. z is computed by the models' own ``step`` with unit coefficients (e.g.
LuGre with σ0 = 1, F_C = 1/ratio, σ1 = σ2 = σ3 = 0 returns F = z), so there is one
implementation of each model. The outer search (:func:`_outer_search`): in one
dimension a 121-point log grid plus Brent's bounded refinement; in more (Bouc–Wen),
Latin-hypercube screening plus ``scipy.optimize.least_squares`` from the best points.
"""

from __future__ import annotations

import dataclasses
from typing import Callable

import jax
import jax.numpy as jnp
import numpy as np
from scipy.optimize import least_squares
from scipy.stats import qmc

from rths_ident.errors import ParameterError
from rths_ident.estimators import qp_projection
from rths_ident.estimators.offline.fit_data import FitData
from rths_ident.estimators.offline.model_specs import FreeParameter, ModelSpec, model_spec
from rths_ident.estimators.offline.result import FitResult, make_result
from rths_ident.estimators.offline.simulation import normalised_record, simulate_force

__all__ = ["bounded_linear_least_squares", "fit_ls", "LS_MODELS"]

#: models for which ``ls`` is defined
LS_MODELS = ("linear", "lugre", "boucwen", "bilinear")


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


@dataclasses.dataclass(frozen=True)
class _Separable:
    """F̃ = Φ(s) θ with s the searched coordinates and θ the LS coefficients."""

    outer: tuple[FreeParameter, ...]
    linear_names: tuple[str, ...]
    linear_lower: np.ndarray
    linear_upper: np.ndarray
    regressors: Callable  # (s_values: dict, record) -> Φ (N, p), traceable
    to_fields: Callable  # (s_values: dict, θ: array) -> model fields (normalised)


def _unit_z(model, fields, record, config=None):
    x, v, _, _, dt = record
    return simulate_force(model, model.Params(**fields, **(config or {})), x, v, dt)


def _separable(name: str, spec: ModelSpec, time_is_physical: bool, fixed=None) -> _Separable:
    by_name = {p.name: p for p in spec.free}
    model = spec.model
    if fixed and name != "boucwen":
        raise ParameterError(f"method 'ls' cannot hold parameters of {name!r} fixed; use 'nls'")
    if name == "lugre":
        s0, fc = by_name["sigma0"], by_name["Fc"]
        outer = (FreeParameter("ratio", s0.low / fc.high, s0.high / fc.low, s0.start / fc.start),)
        names = ["sigma0", "sigma3"] + (["sigma2"] if time_is_physical else [])

        def regressors(s, record):
            z = _unit_z(model, dict(sigma0=1.0, sigma1=0.0, sigma2=0.0, sigma3=0.0, Fc=1.0 / s["ratio"]), record)
            columns = [z, record[0]] + ([record[1]] if time_is_physical else [])
            return jnp.stack(columns, axis=1)

        def to_fields(s, theta):
            fields = dict(spec.held)
            fields.update(zip(names, theta))
            fields["Fc"] = theta[0] / s["ratio"]
            return fields

    elif name == "boucwen":
        if "k" in spec.held or "alpha" in spec.held:
            raise ParameterError("method 'ls' estimates k and alpha together (linear part); to fix them use 'nls'")
        outer = tuple(p for p in spec.free if p.name in ("beta", "gamma_over_beta", "n", "A"))
        names = ["alpha_k", "one_minus_alpha_k"]

        def shape(s):
            def value(key):
                return s[key] if key in s else spec.held[key]

            return dict(A=value("A"), beta=s["beta"], gamma=s["gamma_over_beta"] * s["beta"], n=value("n"))

        def regressors(s, record):
            fields = dict(k=1.0, alpha=0.0, **shape(s))
            return jnp.stack([record[0], _unit_z(model, fields, record, spec.config)], axis=1)

        def to_fields(s, theta):
            k = theta[0] + theta[1]
            return dict(k=k, alpha=theta[0] / k, **shape(s))

    elif name == "bilinear":
        k, fy = by_name["k"], by_name["fy"]
        outer = (FreeParameter("yield_displacement", fy.low / k.high, fy.high / k.low, fy.start / k.start),)
        names = ["b_k", "one_minus_b_k"]

        def regressors(s, record):
            z = _unit_z(model, dict(k=1.0, fy=s["yield_displacement"], b=0.0), record)
            return jnp.stack([record[0], z], axis=1)

        def to_fields(s, theta):
            k_total = theta[0] + theta[1]
            return dict(k=k_total, fy=k_total * s["yield_displacement"], b=theta[0] / k_total)

    elif name == "linear":
        outer = ()
        names = [p.name for p in spec.free]

        def regressors(s, record):
            columns = {"k": record[0], "c": record[1], "m": record[2]}
            return jnp.stack([columns[n] for n in names], axis=1)

        def to_fields(s, theta):
            fields = dict(spec.held)
            fields.update(zip(names, theta))
            return fields

    else:
        raise ParameterError(
            f"method 'ls' is not available for model {name!r} (valid: {', '.join(LS_MODELS)}); use 'nls' or 'bayes'"
        )
    if name in ("linear", "lugre"):
        lower = np.array([by_name[n].low for n in names])
        upper = np.array([by_name[n].high for n in names])
    else:  # the two stiffness shares are non-negative (α, b ∈ [0, 1))
        lower, upper = np.zeros(2), np.full(2, np.inf)
    return _Separable(outer, tuple(names), lower, upper, regressors, to_fields)


def _outer_search(problem: _Separable, solve, n_starts, n_screen, seed, max_nfev, model, progress):
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
