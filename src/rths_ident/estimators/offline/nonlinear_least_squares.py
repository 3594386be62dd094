"""Nonlinear least squares through the simulated force history (global + local stages).

    q* = argmin_q Σ_k (F̃_model(q; x̃_1..k)_k − F̃_meas,k)²    within box bounds on q

F̃_model is the model's own ``step`` scanned over the measured displacement
(:mod:`rths_ident.estimators.offline.simulation`); ``q`` are the log/bounded coordinates
of :mod:`rths_ident.estimators.offline.model_specs`, in normalised units, with bounds
and starts scaled by the data.

1. Global stage (:mod:`.global_search`): seeded differential evolution over the box on a
   decimated record (reversals kept), a vectorised population per generation.
2. Local stage: ``scipy.optimize.least_squares`` (trust-region reflective, which keeps
   the box) on every sample with the exact Jacobian ``jax.jacfwd`` of the scanned
   history, from the global optimum, from the warm start of a smaller form, and from the
   best of ``n_screen`` Latin-hypercube points (``n_starts`` refinements in all).
3. Pinching model: the form — which degradation/pinching parameters are free — is chosen
   by nested comparisons (:mod:`.form_selection`) unless given.
4. Identifiability of the chosen fit from the Jacobian at the optimum
   (:mod:`.identifiability`), in ``details["identifiability"]``.

All forms share one compiled residual/Jacobian/cost of the full coordinate vector; a
form fits a subset of its coordinates and holds the others at their ``off`` values.
"""

from __future__ import annotations

import time
from typing import Callable

import jax
import jax.numpy as jnp
import numpy as np
from scipy.optimize import least_squares
from scipy.stats import qmc

from rths_ident.errors import ParameterError
from rths_ident.estimators.offline.fit_data import FitData
from rths_ident.estimators.offline.form_selection import compare_nested
from rths_ident.estimators.offline.global_search import decimated_record, global_search
from rths_ident.estimators.offline.identifiability import identifiability
from rths_ident.estimators.offline.model_specs import ModelSpec, model_spec
from rths_ident.estimators.offline.result import FitResult, make_result
from rths_ident.estimators.offline.simulation import normalised_record, simulate_normalised

__all__ = ["fit_nls", "residual_functions", "result_from_coordinates", "GLOBAL_MAX_SAMPLES"]

#: residual used in place of a non-finite simulated force (keeps the optimiser away)
_NON_FINITE_RESIDUAL = 10.0

#: samples of the decimated record of the global stage
GLOBAL_MAX_SAMPLES = 300


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
                            posterior=None, details=None, fitted=None, fitted_force=None) -> FitResult:
    """The :class:`FitResult` at coordinates ``q`` (physical params, fitted force).

    ``fitted``: names of the estimated fields (default: every field not held);
    ``fitted_force``: the normalised simulated force if already computed."""
    record = normalised_record(data) if record is None else record
    scales = data.scales()
    fields = {k: float(v) for k, v in spec.fields(jnp.asarray(q)).items()}
    params_si = spec.to_physical(fields, scales)
    if fitted_force is None:
        fitted_force = simulate_normalised(spec, jnp.asarray(q), record)
    fitted_force = np.asarray(fitted_force) * scales.force
    if fitted is None:
        fitted = [name for name in fields if name not in spec.held]
    details = dict(details or {})
    if spec.config:
        details["model_config"] = dict(spec.config)
    return make_result(spec.name, method, spec.model, params_si, fitted, data, fitted_force, posterior, details,
                       config=spec.config)


class _Problem:
    """One data set and one model: compiled residual (full record), Jacobian, and
    vectorised costs (full record for screening, decimated for the global stage)."""

    def __init__(self, spec: ModelSpec, data: FitData):
        self.spec = spec
        self.record = normalised_record(data)
        self.residual, self.jacobian, self.costs = residual_functions(spec, self.record)
        coarse = decimated_record(self.record, GLOBAL_MAX_SAMPLES)
        self.coarse_costs = residual_functions(spec, coarse)[2] if coarse is not self.record else self.costs
        self.n_coarse = int(coarse[0].shape[0])
        self.lower, self.upper = spec.bounds()

    def local(self, q0: np.ndarray, active: np.ndarray, max_nfev: int):
        base = np.clip(np.asarray(q0, dtype=float), self.lower, self.upper)

        def full(sub):
            q = base.copy()
            q[active] = sub
            return jnp.asarray(q)

        solution = least_squares(
            lambda sub: np.asarray(self.residual(full(sub))),
            base[active],
            jac=lambda sub: np.asarray(self.jacobian(full(sub)))[:, active],
            bounds=(self.lower[active], self.upper[active]),
            method="trf",
            x_scale="jac",
            max_nfev=max_nfev,
        )
        q = np.asarray(full(solution.x))
        return q, float(solution.cost), solution


def _distinct(points: list[np.ndarray], candidate: np.ndarray, span: np.ndarray, tolerance: float = 1e-3) -> bool:
    return all(np.max(np.abs(candidate - p) / span) > tolerance for p in points)


def _fit_form(problem: _Problem, form: str | None, warm: np.ndarray | None, *, n_starts: int, n_screen: int,
              seed: int, global_generations: int, popsize: int, max_nfev: int, progress, label: str) -> dict:
    """Global + local fit of the coordinates of ``form`` (None: all), others held at ``base``."""
    spec = problem.spec
    base = spec.off_coordinates() if spec.forms else spec.start()
    active = spec.form_indices(form) if form is not None else np.arange(base.size)
    lower, upper = problem.lower, problem.upper
    span = np.where(upper > lower, upper - lower, 1.0)
    heuristic = np.clip(base, lower, upper)
    if warm is not None:
        # a smaller form's optimum, its optional coordinates at their off values: a point
        # of this form with the smaller form's cost
        heuristic_warm = heuristic.copy()
        heuristic_warm[active] = np.asarray(warm)[active]
        warm = heuristic_warm
    starts: list[np.ndarray] = []
    info: dict = {"form": form, "coordinates": [spec.free[i].name for i in active]}
    t0 = time.perf_counter()
    if global_generations > 0:
        seeds = [heuristic] + ([warm] if warm is not None else [])
        found = global_search(problem.coarse_costs, heuristic, active, lower, upper, seed=seed,
                              generations=global_generations, popsize=popsize, starts=seeds)
        starts.append(found["x"])
        info["global"] = {"generations": found["generations"], "evaluations": found["evaluations"],
                          "samples": problem.n_coarse, "seconds": time.perf_counter() - t0}
    if warm is not None and _distinct(starts, warm, span):
        starts.append(warm)
    if n_screen > 0 or not starts:
        points = [heuristic]
        if n_screen > 0:
            sampler = qmc.LatinHypercube(d=active.size, seed=seed)
            for row in qmc.scale(sampler.random(n_screen), lower[active], upper[active]):
                point = heuristic.copy()
                point[active] = row
                points.append(point)
        points = np.array(points)
        screened = np.asarray(problem.costs(jnp.asarray(points)))
        screened = np.where(np.isfinite(screened), screened, np.inf)
        for index in np.argsort(screened):
            if len(starts) >= n_starts:
                break
            if _distinct(starts, points[index], span):
                starts.append(points[index])
    best = None
    records = []
    for i, q0 in enumerate(starts[:max(n_starts, 1 + (warm is not None))], start=1):
        q, cost, solution = problem.local(q0, active, max_nfev)
        records.append({"start": i, "cost": cost, "nfev": int(solution.nfev), "status": int(solution.status)})
        if progress is not None:
            progress(f"{label} start {i}: cost {cost:.5g} ({solution.nfev} evaluations)")
        if best is None or cost < best["cost"]:
            best = {"q": q, "cost": cost, "message": solution.message}
    info["starts"] = records
    info["seconds"] = time.perf_counter() - t0
    return {**best, "active": active, "info": info}


def fit_nls(
    data: FitData,
    model: str,
    *,
    n_starts: int = 2,
    n_screen: int = 32,
    seed: int = 0,
    free_A: bool = False,
    substeps: int | None = None,
    fixed: dict[str, float] | None = None,
    form: str = "auto",
    global_generations: int = 40,
    popsize: int = 6,
    max_nfev: int = 100,
    progress: Callable[[str], None] | None = None,
) -> FitResult:
    """Fit ``model`` to ``data`` by nonlinear least squares (module doc).

    ``n_starts`` local refinements per form (the global optimum, a smaller form's
    optimum, then the best screened points); ``global_generations`` = 0 skips the global
    stage. ``form`` (a model with nested forms, e.g. pinching-boucwen: its
    ``ModelFit.forms``): ``auto`` (nested BIC comparisons) or one form. ``details`` holds
    every form's fit (starts, costs, global stage), the tests between forms, the chosen
    form and the identifiability report of the chosen fit.
    """
    for name, value, low in (("n_starts", n_starts, 1), ("n_screen", n_screen, 0),
                             ("global_generations", global_generations, 0), ("popsize", popsize, 2),
                             ("max_nfev", max_nfev, 1)):
        if int(value) != value or value < low:
            raise ParameterError(f"{name} must be an integer ≥ {low}; got {value!r}")
    spec = model_spec(model, data, free_A=free_A, substeps=substeps, fixed=fixed)
    if spec.forms:
        if form != "auto" and form not in spec.forms:
            raise ParameterError(f"form {form!r} of {model!r}: use auto or one of {', '.join(spec.forms)}")
        forms = list(spec.forms) if form == "auto" else [form]
    elif form != "auto":
        raise ParameterError(f"form applies to pinching-boucwen only, not to {model!r}")
    else:
        forms = [None]
    t_start = time.perf_counter()
    problem = _Problem(spec, data)
    options = dict(n_starts=n_starts, n_screen=n_screen, seed=seed, global_generations=global_generations,
                   popsize=popsize, max_nfev=max_nfev, progress=progress)
    chosen = _fit_form(problem, forms[0], None, label=f"{model} {forms[0] or 'nls'}", **options)
    fits, tests = [chosen["info"]], []
    for candidate_form in forms[1:]:
        candidate = _fit_form(problem, candidate_form, chosen["q"], label=f"{model} {candidate_form}", **options)
        fits.append(candidate["info"])
        test = compare_nested(2.0 * chosen["cost"], chosen["active"].size, 2.0 * candidate["cost"],
                              candidate["active"].size, data.n_samples)
        test.update({"smaller": chosen["info"]["form"], "larger": candidate_form})
        tests.append(test)
        if progress is not None:
            verdict = "accepted" if test["accept_larger"] else "rejected"
            progress(f"{model}: {candidate_form} vs {chosen['info']['form']}: ΔBIC = {test['delta_bic']:.1f}, "
                     f"RSS −{100 * test['rss_reduction']:.1f} % → {verdict}")
        if test["accept_larger"]:
            chosen = candidate
    q, active = chosen["q"], chosen["active"]
    residual = np.asarray(problem.residual(jnp.asarray(q)))
    jac = np.asarray(problem.jacobian(jnp.asarray(q)))[:, active]
    names = [spec.free[i].name for i in active]
    report = identifiability(jac, residual, names, q[active], problem.lower[active], problem.upper[active],
                             [spec.free[i].log for i in active])
    details = {"form": chosen["info"]["form"], "forms": fits, "form_tests": tests,
               "identifiability": report, "n_screen": n_screen, "seed": seed, "message": chosen["message"],
               "coordinates": names, "seconds": time.perf_counter() - t_start,
               "starts": chosen["info"]["starts"]}
    inactive = {p.name for p in spec.free} - set(names)
    fitted = [name for name in spec.fields(jnp.asarray(q)) if name not in spec.held and name not in inactive]
    simulated = residual + np.asarray(problem.record[3])
    return result_from_coordinates(spec, data, q, "nls", record=problem.record, details=details, fitted=fitted,
                                   fitted_force=simulated)
