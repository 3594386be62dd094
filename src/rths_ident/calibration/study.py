"""The whole calibration study (what ``rths-ident calibrate amb|damb|polynomial`` runs,
:func:`rths_ident.scenarios.sdof_calibration.calibrate`): draw the calibration and
held-out samples of specimens of a study's test, score the start θ, search, score the
result on both samples.

Reproducible for a seed: the calibration sample is drawn with ``seed``, the held-out one
with ``seed + 1`` (both Latin hypercubes, :mod:`.sample`), and the searches use ``seed``.

Ctrl-C during the search keeps the best gains found so far (the best candidate the
search evaluated, whatever its method): they are scored on both samples as a finished
search's are, and :class:`~rths_ident.operator_stop.OperatorStopped` is raised with
``partial``, that result (``interrupted`` true, ``iterations_done``). A new search can
start from them (``rths-ident calibrate … --resume OUT.json``: its gains as the start).
"""

from __future__ import annotations

import time
from typing import Callable

import numpy as np

from rths_ident.errors import ParameterError
from rths_ident.calibration import gradient, search
from rths_ident.calibration.gains import with_bounds
from rths_ident.calibration.trust import calibration_warnings
from rths_ident.operator_stop import OperatorStopped
from rths_ident.calibration.sample import BOUNDS, sample_specimens
from rths_ident.calibration.sdof_rths import SDOFStudy, make_batch_j2, score, specimen_arrays, summary

METHODS = ("pso", "de", "gradient")


def check_search_options(method: str, n_specimens: int, iterations: int, population: int) -> None:
    """One clear error for a search option out of range (before any work)."""
    if method not in METHODS:
        raise ParameterError(f"method = {method!r}: expected one of {', '.join(METHODS)}")
    for name, value, low in (("specimens", n_specimens, 1), ("iterations", iterations, 0), ("population", population, 2)):
        if not (isinstance(value, (int, np.integer)) and value >= low):
            raise ParameterError(f"calibration {name} = {value!r}: expected an integer ≥ {low}")


def calibrate_population(study: SDOFStudy, *, n_specimens: int = 64, n_holdout: int | None = None,
                         method: str = "pso", iterations: int = 30, population: int = 8, seed: int = 0, start=None,
                         progress: Callable[[int, float], None] | None = None, bounds: dict | None = None,
                         wall_start: float | None = None) -> dict:
    """Calibrate the compensator of ``study`` (its test's slow step, :mod:`.sdof_rths`)
    over a population of its specimens; returns the result as plain Python/NumPy values
    (module doc). ``start``: θ to start from (default the sources' values, :mod:`.gains`);
    ``population``: candidates per batch (PSO, DE); ``bounds``: {gain: (low, high)}
    replacing some gains' boxes (:func:`.gains.with_bounds`; the sources' start is then
    clipped into the box, a start you give must lie in it). ``warnings`` (:mod:`.trust`):
    gains on a bound, a held-out J2 that got worse, a search that stopped early and why.
    ``wall_start``: when the work began (``time.perf_counter()``; default now)."""
    wall_start = time.perf_counter() if wall_start is None else wall_start
    kind, settings = study.space.kind, study.settings
    check_search_options(method, n_specimens, iterations, population)
    n_holdout = n_specimens if n_holdout is None else n_holdout
    if bounds:
        study = study._replace(space=with_bounds(study.space, bounds))
    space = study.space
    start = np.clip(space.source, space.low, space.high) if start is None else space.check(start)
    calibration_sample = sample_specimens(n_specimens, seed)
    holdout_sample = sample_specimens(n_holdout, seed + 1)
    cal, hold = specimen_arrays(study, calibration_sample), specimen_arrays(study, holdout_sample)
    batch = make_batch_j2(study)
    # one compiled executable for every batch of the study: the searches' populations and
    # the before/after scoring (padded to the same number of rows)
    d = start.size
    rows = {"pso": population, "de": int(np.ceil(population / d)) * d, "gradient": 2}[method]
    start_u = space.to_unit(start)
    compile_start = time.perf_counter()
    compiled = batch.lower(np.zeros((rows, d)), cal).compile()
    if method == "gradient":
        value_and_grad = gradient.make_value_and_grad(study, cal)
        value_and_grad(start_u)  # compiles
    compile_s = time.perf_counter() - compile_start

    def evaluate(thetas, specimens):
        thetas = np.asarray(thetas, dtype=float)
        k = len(thetas)
        same_shape = k <= rows and specimens["kappa"].shape == cal["kappa"].shape
        if not same_shape:
            return np.asarray(batch(thetas, specimens)[0])
        padded = np.concatenate([thetas, np.repeat(thetas[-1:], rows - k, axis=0)])
        return np.asarray(compiled(padded, specimens)[0])[:k]

    kept = BestSoFar()

    def objective(u):
        scores = score(evaluate(np.asarray(space.from_unit(u)), cal))
        kept.seen(u, scores)
        return scores

    def value_and_grad_kept(u):
        value, grad = value_and_grad(u)
        kept.seen(np.asarray(u)[None], np.asarray([value]))
        return value, grad

    def progress_kept(iteration, best_score):
        kept.iterations = iteration
        if progress is not None:
            progress(iteration, best_score)

    search_start = time.perf_counter()
    interrupted = None
    try:
        if method == "pso":
            result = search.particle_swarm(objective, start_u, population, iterations, seed, progress_kept)
        elif method == "de":
            result = search.differential_evolution(objective, start_u, population, iterations, seed, progress_kept)
        else:
            result = gradient.lbfgs(value_and_grad_kept, start_u, iterations, progress_kept)
    except KeyboardInterrupt as interrupt:  # the operator's stop: keep the best so far
        if kept.u is None:
            raise
        interrupted = interrupt
        result = search.SearchResult(np.clip(kept.u, 0.0, 1.0), kept.score, np.asarray(kept.history),
                                     kept.evaluations)
    search_s = time.perf_counter() - search_start
    best = np.asarray(space.from_unit(result.best_u))
    pair = np.stack([start, best])
    cal_j2, hold_j2 = evaluate(pair, cal), evaluate(pair, hold)
    wall_s = time.perf_counter() - wall_start
    out = {
        "compensator": kind,
        "method": method,
        "seed": seed,
        "iterations": iterations,
        "population": population if method != "gradient" else 1,
        "evaluations": int(result.evaluations),
        "gains": dict(zip(space.names, map(float, best))),
        "start_gains": dict(zip(space.names, map(float, start))),
        "source_gains": dict(zip(space.names, map(float, space.source))),
        "gain_units": dict(zip(space.names, space.units)),
        "gain_bounds": {n: [float(lo), float(hi)] for n, lo, hi in zip(space.names, space.low, space.high)},
        "J2_before": summary(hold_j2[0]),
        "J2_after": summary(hold_j2[1]),
        "J2_calibration_before": summary(cal_j2[0]),
        "J2_calibration_after": summary(cal_j2[1]),
        "history": [float(h) for h in result.history],
        "wall_s": wall_s,
        "compile_s": compile_s,
        "search_s": search_s,
        "specimens": n_specimens,
        "holdout_specimens": n_holdout,
        "interrupted": interrupted is not None,
        "iterations_done": kept.iterations if interrupted is not None else (
            iterations if result.iterations_done is None else result.iterations_done),
        "settings": settings._asdict(),
        "sample_bounds": {n: {"low": b.low, "high": b.high, "unit": b.unit, "log": b.log} for n, b in BOUNDS.items()},
        "_per_specimen": {"calibration": cal_j2, "holdout": hold_j2,
                          "calibration_period": calibration_sample.period, "holdout_period": holdout_sample.period},
    }
    out["warnings"] = calibration_warnings(out, result.iterations_done, result.message)
    if interrupted is not None:
        stopped = interrupted if isinstance(interrupted, OperatorStopped) else OperatorStopped(
            f"stopped by the operator (Ctrl-C) after {kept.iterations} of {iterations} iterations: the best gains "
            "so far are kept")
        stopped.partial = out
        raise stopped from None
    return out


class BestSoFar:
    """The best candidate a search has evaluated (lowest mean J2), whatever the method:
    ``seen(U (P, d), scores (P,))`` after each batch; ``u``, ``score``, ``history`` (the
    best after each batch), ``evaluations``; ``iterations`` as the search reports them."""

    def __init__(self):
        self.u: np.ndarray | None = None
        self.score = float("inf")
        self.history: list[float] = []
        self.evaluations = 0
        self.iterations = 0

    def seen(self, candidates, scores) -> None:
        candidates, scores = np.atleast_2d(np.asarray(candidates, dtype=float)), np.asarray(scores, dtype=float)
        self.evaluations += scores.size
        finite = np.where(np.isfinite(scores), scores, np.inf)
        i = int(np.argmin(finite))
        if self.u is None or finite[i] < self.score:
            self.u, self.score = candidates[i].copy(), float(finite[i])
        self.history.append(self.score)
