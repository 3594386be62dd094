"""Output-error identification of a single-degree-of-freedom oscillator from a dynamic
test (``rths-ident fit FILE --dynamic``):

    m ÿ + c ẏ + F_model(y, ẏ; history) = u   (a force on the mass)   or   −m a_g

with F_model a registered model (:data:`rths_ident.models.MODELS`). q* minimises
½ Σ_k ((ŷ_k(q) − y_k)/rms y)² over the scored samples, ŷ(q) the simulated output
(:mod:`.problem`), within box bounds (:mod:`.spec`):

1. **Linear start** (:mod:`.linear_start`): m, c, k of a linear oscillator fitted to the
   record's frequency response; they set the units of the fit and the starts.
2. **Global stage**: differential evolution (:func:`~..global_search.global_search`,
   seeded) over the whole box on the first ``global_samples`` samples with a quarter of
   the sub-steps, a population evaluated in one ``vmap`` per generation.
3. **Local stages**: ``scipy.optimize.least_squares`` (trust-region reflective, box
   bounds, exact Jacobian by ``jax.jacfwd`` of the simulation) on every scored sample —
   first with a quarter of the sub-steps from ``n_starts`` distinct points (the global
   optimum, the linear start, then the best of ``n_screen`` Latin-hypercube points
   screened on the global stage's samples), then with all the sub-steps from the best.
4. **Uncertainty**: the coordinates' covariance from the Jacobian at the optimum
   (:func:`~..identifiability.covariance`), carried to the SI fields by the delta method
   (``jax.jacfwd`` of the coordinates → fields map): standard errors and correlations;
   the identifiability report of the quasi-static fits.

Scoring: a periodic record's first period runs in and is not scored; its last
``hold_out_periods`` periods are not fitted but predicted by the same simulation run
(held out); a second record validates the model on an input it has not seen.
"""

from __future__ import annotations

import dataclasses
import math
import time
from typing import Callable

import jax
import jax.numpy as jnp
import numpy as np
from scipy.optimize import least_squares
from scipy.stats import qmc

from rths_ident.errors import ParameterError
from rths_ident.estimators.offline.dynamic.input_interpolation import INTERPOLATIONS, interpolate_input
from rths_ident.estimators.offline.dynamic.linear_start import LinearOscillator, fit_linear_oscillator
from rths_ident.estimators.offline.dynamic.noise import between_period_noise, noise_corrected_error
from rths_ident.estimators.offline.dynamic.oscillator import simulate_substeps
from rths_ident.estimators.offline.dynamic.output_sampling import OUTPUT_SAMPLINGS
from rths_ident.estimators.offline.dynamic.problem import OutputErrorProblem, SimulationSettings, Simulator
from rths_ident.estimators.offline.dynamic.record import DynamicRecord
from rths_ident.estimators.offline.dynamic.result import DynamicFitResult, Prediction, output_metrics
from rths_ident.estimators.offline.dynamic.spec import DynamicSpec, dynamic_spec
from rths_ident.estimators.offline.fit_data import Scales
from rths_ident.estimators.offline.global_search import global_search
from rths_ident.estimators.offline.identifiability import covariance, identifiability
from rths_ident.models.fit_specification import FitContext
from rths_ident.models.linear import LinearElement, LinearParams
from rths_ident.models.registry import MODELS

__all__ = ["fit_dynamic", "default_substeps", "STEP_RATIO", "scored_ranges"]

#: the default sub-steps keep ω_n·h ≤ this (the central-difference period error is
#: (ω h)²/24 ≈ 1.7e-5 there)
STEP_RATIO = 0.02


def default_substeps(linear: LinearOscillator, dt: float) -> int:
    """The fewest sub-steps per sample with ω_n·Δt/S ≤ :data:`STEP_RATIO` (at least 2)."""
    return max(2, math.ceil(linear.natural_frequency * dt / STEP_RATIO))


def scored_ranges(record: DynamicRecord, hold_out_periods: int, run_in: int | None) -> tuple[int, int, int]:
    """(first scored sample, end of the fitted part, end of the record): a periodic
    record runs in over its first period by default; the last ``hold_out_periods``
    periods are held out."""
    n = record.n_samples
    if hold_out_periods and record.period is None:
        raise ParameterError("hold-out periods need a periodic record (declare it with --periodic PERIOD_SAMPLES)")
    if hold_out_periods < 0 or int(hold_out_periods) != hold_out_periods:
        raise ParameterError(f"hold-out periods must be a whole number ≥ 0; got {hold_out_periods!r}")
    if run_in is None:
        run_in = record.period if record.period is not None else 0
    if not 0 <= run_in < n:
        raise ParameterError(f"run-in must be in [0, {n}) samples; got {run_in}")
    end = n - hold_out_periods * (record.period or 0)
    if end - run_in < 16:
        raise ParameterError(f"{record.source}: after the run-in ({run_in} samples) and the held-out periods "
                             f"({hold_out_periods}) only {max(end - run_in, 0)} samples are left to fit "
                             f"(need ≥ 16); a periodic record needs ≥ 2 periods, 3 with one held out")
    return run_in, end, n


def _scales(record: DynamicRecord, linear: LinearOscillator) -> tuple[Scales, float]:
    """Unit scales of the fit (:mod:`.spec`) and the energy the linear damping dissipates
    over the record, normalised (the scale of energy-driven degradation rates)."""
    substeps = max(2, math.ceil(linear.natural_frequency * record.dt / 0.1))
    fine = interpolate_input(record.input, substeps, record.period is not None, "bandlimited")
    excitation = fine if record.input_kind == "force" else -linear.m * fine
    h = record.dt / substeps
    y = np.asarray(jax.jit(simulate_substeps, static_argnums=(0, 6))(
        LinearElement, LinearParams(k=linear.k), linear.m, linear.c, jnp.asarray(excitation), h, "displacement"))
    y = y[::substeps]
    peak = float(np.max(np.abs(record.output))) if record.output_kind == "displacement" else float(np.max(np.abs(y)))
    if not (np.isfinite(peak) and peak > 0.0):
        raise ParameterError(f"{record.source}: the linear oscillator fitted to the record does not move; "
                             f"check --input/--output")
    scales = Scales(displacement=peak, force=linear.k * peak, time=1.0 / linear.natural_frequency)
    velocity = np.gradient(y, record.dt)
    energy = linear.c * float(np.sum(velocity**2)) * record.dt / (scales.force * scales.displacement)
    return scales, max(energy, 0.05)


def _least_squares(problem: OutputErrorProblem, q0, lower, upper, max_nfev: int, tight: bool):
    tolerance = 1e-10 if tight else 1e-8
    solution = least_squares(
        lambda q: np.asarray(problem.residual(jnp.asarray(q))), np.clip(q0, lower, upper),
        jac=lambda q: np.asarray(problem.jacobian(jnp.asarray(q))), bounds=(lower, upper), method="trf",
        x_scale="jac", max_nfev=max_nfev, ftol=tolerance, xtol=tolerance, gtol=tolerance)
    return solution


def _segment(record: DynamicRecord, samples: int) -> DynamicRecord:
    return dataclasses.replace(record, input=record.input[:samples], output=record.output[:samples], period=None)


def _field_uncertainty(spec: DynamicSpec, q: np.ndarray, cov_q, fitted: list[str]):
    """SE and correlation of the SI fields ``fitted`` by the delta method."""
    fields = jax.jacfwd(lambda x: jnp.stack([spec.physical_fields(x)[name] for name in fitted]))
    G = np.asarray(fields(jnp.asarray(q)))
    matrix, structurally = cov_q.matrix, cov_q.structurally
    cov = G @ matrix @ G.T
    se = np.sqrt(np.clip(np.diag(cov), 0.0, None))
    unknown = (np.abs(G[:, structurally]) > 0.0).any(axis=1) if structurally.any() else np.zeros(len(fitted), bool)
    with np.errstate(invalid="ignore", divide="ignore"):
        correlation = cov / np.outer(se, se)
    correlation[unknown, :] = np.nan
    correlation[:, unknown] = np.nan
    errors = {name: (None if unknown[i] else float(se[i])) for i, name in enumerate(fitted)}
    return errors, correlation


def fit_dynamic(record: DynamicRecord, model: str, *, fixed: dict[str, float] | None = None,
                substeps: int | None = None, interpolation: str = "bandlimited", output_sampling: str = "point",
                hold_out_periods: int = 0, run_in: int | None = None, validation: DynamicRecord | None = None,
                form: str | None = None, seed: int = 0, global_generations: int = 30, popsize: int = 6,
                global_samples: int = 2048, n_starts: int = 3, n_screen: int = 64, max_nfev: int = 60,
                progress: Callable[[str], None] | None = None) -> DynamicFitResult:
    """Identify ``model`` as the restoring force of the oscillator behind ``record``
    (module docstring). ``fixed``: SI values to hold (``m``, ``c`` or the model's fields);
    a ground-acceleration record needs ``m`` (the mass does not show in its response).
    ``substeps``: per sample (None: :func:`default_substeps`); ``interpolation``,
    ``output_sampling``: by name; ``validation``: a second record of the same kinds."""
    say = progress or (lambda message: None)
    t_start = time.perf_counter()
    if model not in MODELS:
        MODELS[model]  # the registry's error, naming the models
    INTERPOLATIONS[interpolation], OUTPUT_SAMPLINGS[output_sampling]  # unknown names: one clear error each
    fixed = dict(fixed or {})
    if record.input_kind == "ground-acceleration" and "m" not in fixed:
        raise ParameterError("m is not identifiable from a ground acceleration (m ÿ + c ẏ + F = −m a_g: the mass "
                             "divides out); give it, e.g. --fix m=2.0 [kg]")
    if validation is not None and (validation.input_kind, validation.output_kind) != (record.input_kind,
                                                                                         record.output_kind):
        raise ParameterError(f"the validation record must have the same input and output kinds as the fitted one "
                             f"({record.input_kind} → {record.output_kind})")
    for name, value, low in (("global_generations", global_generations, 0), ("popsize", popsize, 2),
                             ("global_samples", global_samples, 64), ("n_starts", n_starts, 1),
                             ("n_screen", n_screen, 0), ("max_nfev", max_nfev, 1)):
        if int(value) != value or value < low:
            raise ParameterError(f"{name} must be an integer ≥ {low}; got {value!r}")
    first, end, n = scored_ranges(record, hold_out_periods, run_in)
    linear = fit_linear_oscillator(record, mass=fixed.get("m"))
    say(f"linear start: m {linear.m:.5g} kg, c {linear.c:.5g} N·s/m, k {linear.k:.5g} N/m "
        f"(f_n {linear.natural_frequency / (2 * np.pi):.4g} Hz, ζ {linear.damping_ratio:.3g}; "
        f"{linear.lines} lines {linear.band[0]:.3g}–{linear.band[1]:.3g} Hz)")
    if substeps is None:
        substeps = default_substeps(linear, record.dt)
    elif int(substeps) != substeps or substeps < 1:
        raise ParameterError(f"substeps must be a positive integer; got {substeps!r}")
    settings = SimulationSettings(int(substeps), interpolation, output_sampling)
    coarse = dataclasses.replace(settings, substeps=max(2, math.ceil(settings.substeps / 4)))
    scales, energy = _scales(record, linear)
    c_lin = linear.c * scales.time * scales.displacement / scales.force
    spec = dynamic_spec(model, FitContext(1.0, energy, True, False), scales, c_lin, fixed=fixed, form=form)
    lower, upper = spec.bounds()
    start = np.clip(spec.start(), lower, upper)
    scored = np.arange(first, end)
    stages: dict = {}

    # 2. global stage: the first samples, coarse sub-steps
    length = min(n, int(global_samples))
    segment = OutputErrorProblem(spec, _segment(record, length), coarse, np.arange(length // 8, length))
    candidates = [start]
    if global_generations > 0:
        t0 = time.perf_counter()
        found = global_search(segment.costs, start, np.arange(start.size), lower, upper, seed=seed,
                              generations=global_generations, popsize=popsize, starts=[start])
        candidates.insert(0, found["x"])
        stages["global"] = {"samples": length, "substeps": coarse.substeps, "generations": found["generations"],
                            "evaluations": found["evaluations"], "cost": found["cost"],
                            "seconds": time.perf_counter() - t0}
        say(f"{model}: global stage {found['generations']} generations on {length} samples: "
            f"cost {found['cost']:.4g} ({time.perf_counter() - t0:.1f} s)")
    if n_screen > 0 and len(candidates) < n_starts:
        points = qmc.scale(qmc.LatinHypercube(d=start.size, seed=seed).random(n_screen), lower, upper)
        screened = np.asarray(segment.costs(jnp.asarray(points)))
        span = np.where(upper > lower, upper - lower, 1.0)
        for index in np.argsort(np.where(np.isfinite(screened), screened, np.inf)):
            if len(candidates) >= n_starts:
                break
            if all(np.max(np.abs(points[index] - c) / span) > 1e-3 for c in candidates):
                candidates.append(points[index])

    # 3. local stages: coarse from each candidate, then fine from the best
    t0 = time.perf_counter()
    problem = OutputErrorProblem(spec, record, coarse, scored)
    best, runs = None, []
    for i, q0 in enumerate(candidates, start=1):
        solution = _least_squares(problem, q0, lower, upper, max_nfev, tight=False)
        runs.append({"start": i, "cost": float(solution.cost), "nfev": int(solution.nfev), "status": int(solution.status)})
        say(f"{model}: local start {i} ({coarse.substeps} sub-steps): cost {solution.cost:.5g} "
            f"({solution.nfev} evaluations)")
        if best is None or solution.cost < best.cost:
            best = solution
    stages["local_coarse"] = {"substeps": coarse.substeps, "starts": runs, "seconds": time.perf_counter() - t0}
    t0 = time.perf_counter()
    problem = OutputErrorProblem(spec, record, settings, scored)
    solution = _least_squares(problem, best.x, lower, upper, max_nfev, tight=True)
    q = np.asarray(solution.x)
    stages["local"] = {"substeps": settings.substeps, "cost": float(solution.cost), "nfev": int(solution.nfev),
                       "status": int(solution.status), "message": str(solution.message),
                       "seconds": time.perf_counter() - t0}
    say(f"{model}: local ({settings.substeps} sub-steps): cost {solution.cost:.6g} ({solution.nfev} evaluations, "
        f"{time.perf_counter() - t0:.1f} s)")

    # 4. uncertainty
    residual = np.asarray(problem.residual(jnp.asarray(q)))
    jacobian = np.asarray(problem.jacobian(jnp.asarray(q)))
    names = spec.names
    report = identifiability(jacobian, residual, names, q, lower, upper, spec.log_flags())
    fitted = spec.fitted_names()
    errors, correlation = _field_uncertainty(spec, q, covariance(jacobian, residual), fitted)
    params = {name: float(value) for name, value in spec.physical_fields(jnp.asarray(q)).items()}
    params.update({name: float(value) for name, value in fixed.items()})  # exactly as given, not round-tripped

    # predictions: the fitted part, held-out periods, a validation record
    simulated = problem.simulator.si_output(q)
    y = record.output
    predictions = [Prediction("fit", record, first, end, simulated, output_metrics(simulated[first:end], y[first:end]))]
    noise = None
    if record.period is not None:
        periods_fitted = (end - first) // record.period
        lo_p = first // record.period
        hi_p = lo_p + periods_fitted if periods_fitted >= 2 else n // record.period
        if hi_p - lo_p >= 2:
            noise = between_period_noise(y, record.period, lo_p, hi_p)
            predictions[0].metrics["model_error"] = noise_corrected_error(
                predictions[0].metrics["rmse"], end - first, noise)
    if end < n:
        metrics = output_metrics(simulated[end:], y[end:])
        if noise is not None:
            metrics["model_error"] = noise_corrected_error(metrics["rmse"], n - end, noise)
        predictions.append(Prediction("held-out", record, end, n, simulated, metrics))
    if validation is not None:
        v_first = validation.period if validation.period is not None else 0
        v_simulated = Simulator(spec, validation, settings).si_output(q)
        predictions.append(Prediction("validation", validation, v_first, validation.n_samples, v_simulated,
                                      output_metrics(v_simulated[v_first:], validation.output[v_first:])))
    element = spec.element_params(jnp.asarray(q))
    region = getattr(element, "sign_region", None)
    if region is not None:  # in SI (the sign of β + γ does not depend on the units)
        region = MODELS[model].model.Params(**{k: params[k] for k in spec.element.dimensions if k in params},
                                            **spec.element.config).sign_region
    details = {"linear_start": dataclasses.asdict(linear), "stages": stages, "scales": dataclasses.asdict(scales),
               "element_config": dict(spec.element.config), "seconds": time.perf_counter() - t_start,
               "scored": [first, end], "hold_out_periods": hold_out_periods}
    return DynamicFitResult(model=model, record=record, params=params, fitted=fitted, units=spec.units(),
                            standard_errors=errors, correlation_names=fitted, correlation=correlation,
                            predictions=predictions, identifiability=report, simulation=settings.describe(record.dt),
                            sign_region=region, noise=noise, details=details, spec=spec, coordinates=q)
