"""Calibrating a test's own compensator gains on its virtual twin (what
``rths-ident calibrate FILE.toml|SCENARIO`` runs): a study of the test file
(:mod:`rths_ident.scenarios.study`) whose varied fields are the gains of its
``[compensation]`` table, searched by the gradient-free searches of
:mod:`rths_ident.calibration.search` (particle swarm, differential evolution).

The objective is the test's tracking error J2 [%] (``J2_percent`` of ``rths-ident run``'s
metrics: the RMS of the tracking error over the RMS of the target, seed 000's J2), of the
test as its file declares it — its record, structure, specimen, actuator, sensors and
noise seed — optionally shortened to ``duration`` seconds of its record
(``record.duration``). Each population of the search is one set of runs of the study
runner: the test with ``compensation.NAME`` set to each candidate's gains, run in compiled
batches (one ``vmap``-ed fused loop per population,
:mod:`rths_ident.scenarios.study_batches`). A run that stops (an interlock, a non-finite
state) scores ``inf``.

The gains are searched in the boxes ``rths-ident calibrate KIND`` searches
(:func:`rths_ident.calibration.gains.gain_space`; ``bounds`` replaces some of them), from
the gains the file declares (a gain left out: its default,
:data:`~rths_ident.hybrid.fast_side.compensation.registry.GAIN_FIELDS`; the polynomial's
τ: the built test's, 1/g), clipped into the box. The start and the best gains are scored
again after the search, run by run as ``rths-ident run`` runs a test: ``J2_start`` and
``J2_best`` are what ``rths-ident run FILE --set compensation.NAME=VALUE …`` gives for
them, bit for bit. The search's own score of the best gains (``J2_best_in_search``, from
its batch) agrees to rounding — but a forgetting factor ρ well below 1 (dAMB) amplifies
the rounding of a ``vmap``-ed sum: at ρ = 0.99 on rc-frame the two differ by up to ~0.3 %
of J2 (at ρ = 0.999, ~1e-10). A best J2 above the start's when run again is a warning
(``worse_than_start``).
"""

from __future__ import annotations

import time
from typing import Callable

import numpy as np

from rths_ident.calibration import search
from rths_ident.calibration.gains import gain_space, option_name, with_bounds
from rths_ident.calibration.trust import bound_warnings, stopped_early_warnings
from rths_ident.errors import ParameterError
from rths_ident.hybrid.fast_side.compensation.registry import COMPENSATORS, GAIN_FIELDS

__all__ = ["TWIN_METHODS", "OBJECTIVE", "calibrate_test"]

#: the searches a test's calibration uses (gradient-free: each population is one batch of runs)
TWIN_METHODS = ("pso", "de")

#: the metric minimised, as ``rths-ident run --json`` names it
OBJECTIVE = "J2_percent"


def _checked_test(target: str, duration: float | None):
    """(test file, kind name, configuration, built test) of ``target``, or one clear
    error: not a test of a kind with a fused loop (a rig test, maRTHS), no compensator,
    or a compensator with nothing to calibrate."""
    from rths_ident.declaration import Override, resolve_values  # noqa: PLC0415
    from rths_ident.scenarios.kinds import kind_of, load_any  # noqa: PLC0415

    test_file = load_any(target)
    kind_name, kind = kind_of(test_file)
    build = getattr(kind.module, "build", None)
    paths = {field.path for field in kind.fields_for(test_file.values)}
    if build is None or "compensation.kind" not in paths:
        raise ParameterError(f"calibrate {target}: a {kind_name} test has no virtual twin with a compensator to "
                             "tune (calibrate FILE tunes a frame test's [compensation] gains, e.g. rc-frame; "
                             "calibrate damb|amb|polynomial calibrates over SDOF specimens)")
    overrides = [] if duration is None else [Override("record.duration", float(duration), "--duration")]
    raw = {**test_file.values, **{o.path: o.value for o in overrides}}
    values, _ = resolve_values(kind.fields_for(raw), test_file, overrides)
    cfg = kind.config(values)
    compensator = cfg.compensation
    if COMPENSATORS[compensator].calibration is None:
        raise ParameterError(f"calibrate {target}: compensation.kind = {compensator!r} has no gains to tune: "
                             f"expected one of {', '.join(k for k, e in COMPENSATORS.items() if e.calibration)} "
                             "(--set compensation.kind=… in the file)")
    return test_file, kind_name, cfg, build(cfg), overrides


def _start_gains(cfg, test, names: tuple) -> np.ndarray:
    """The gains the test runs with: declared, or each gain's default (the polynomial's
    τ: the built test's delay)."""
    declared = cfg.compensation_gains()
    start = []
    for name in names:
        if name in declared:
            start.append(float(declared[name]))
        elif GAIN_FIELDS[name].default is not None:
            start.append(float(GAIN_FIELDS[name].default))
        else:  # τ: 1/g of the test's actuator, as the built test has it
            start.append(float(test.fast_side.compensation.params.delay))
    return np.asarray(start)


def calibrate_test(target: str, *, method: str = "pso", iterations: int = 10, population: int = 8, seed: int = 0,
                   duration: float | None = None, bounds: dict | None = None,
                   progress: Callable[[int, float], None] | None = None) -> dict:
    """Calibrate the compensator gains of test ``target`` (a shipped test's name, a test
    file or a test record) on its virtual twin (module doc); the result as plain values."""
    from rths_ident.scenarios.study import StudyPlan, batching, check_plan, run_variant  # noqa: PLC0415
    from rths_ident.scenarios.study_batches import run_batches  # noqa: PLC0415

    wall_start = time.perf_counter()
    if method not in TWIN_METHODS:
        raise ParameterError(f"--method {method}: calibrating a test file searches by {' or '.join(TWIN_METHODS)} "
                             "(gradient: calibrate damb|amb|polynomial)")
    for name, value, low in (("iterations", iterations, 0), ("population", population, 2)):
        if not (isinstance(value, (int, np.integer)) and value >= low):
            raise ParameterError(f"calibration {name} = {value!r}: expected an integer ≥ {low}")
    if duration is not None and not (np.isfinite(duration) and duration > 0):
        raise ParameterError(f"--duration {duration:g}: expected a number of seconds > 0")
    test_file, kind_name, cfg, test, overrides = _checked_test(target, duration)
    compensator = cfg.compensation
    loop_gain = 1.0 / float(test.fast_side.compensation.params.delay) if compensator == "polynomial" else 1.0
    space = gain_space(compensator, loop_gain)
    if bounds:
        space = with_bounds(space, bounds)
    names = tuple(option_name(n) for n in space.names)
    start = np.clip(_start_gains(cfg, test, names), space.low, space.high)
    paths = tuple(f"compensation.{n}" for n in names)
    fixed = tuple((o.path, o.value) for o in overrides)
    d = len(names)
    rows = population if method == "pso" else int(np.ceil(population / d)) * d

    def plan_of(thetas) -> StudyPlan:
        runs = tuple(fixed + tuple((p, float(v)) for p, v in zip(paths, theta)) for theta in thetas)
        return StudyPlan(kind_name, test_file.text, test_file.source, runs, paths, seed)

    decided: dict = {}

    def j2_of(thetas, batched: bool = True) -> np.ndarray:
        """J2 [%] of the test with each row of gains (one batched set of runs; run by run
        when not ``batched``)."""
        plan = plan_of(np.atleast_2d(np.asarray(thetas, dtype=float)))
        check_plan(plan)  # a gain outside its field's range: a clear error before the runs
        if "decision" not in decided:  # which fields change the program: probed once
            decided["decision"] = batching(plan, rows)
        decision = decided["decision"]
        found: dict[int, dict] = {}
        indices = range(len(plan.runs))
        if decision.fingerprint is None or not batched:
            for index in indices:
                found[index] = run_variant(plan, index)
        else:
            run_batches(indices, rows, decision.fingerprint,
                        lambda index, fused_loop: run_variant(plan, index, fused_loop),
                        lambda row: found.__setitem__(row["run"], row), first_test=None)
        scores = []
        for index in indices:
            row = found[index]
            value = row["metrics"].get(OBJECTIVE)
            scores.append(float("inf") if row["stopped"] or value is None else float(value))
        return np.asarray(scores)

    evaluations = [0]

    def objective(u) -> np.ndarray:
        u = np.asarray(u, dtype=float)
        evaluations[0] += len(u)
        return j2_of(np.asarray(space.from_unit(u)))

    start_u = space.to_unit(start)
    search_start = time.perf_counter()
    if method == "pso":
        result = search.particle_swarm(objective, start_u, population, iterations, seed, progress)
    else:
        result = search.differential_evolution(objective, start_u, population, iterations, seed, progress)
    search_s = time.perf_counter() - search_start
    best = np.asarray(space.from_unit(result.best_u), dtype=float)
    j2_start, j2_best = j2_of(np.stack([start, best]), batched=False)
    out = {
        "test": test_file.source,
        "kind": kind_name,
        "compensator": compensator,
        "objective": f"{OBJECTIVE}: the test's tracking error J2 [%] (rths-ident run's metric)",
        "duration": duration,
        "method": method,
        "seed": seed,
        "iterations": iterations,
        "population": population,
        "evaluations": int(evaluations[0]),
        "gains": dict(zip(names, map(float, best))),
        "start_gains": dict(zip(names, map(float, start))),
        "gain_units": dict(zip(names, space.units)),
        "gain_bounds": {n: [float(lo), float(hi)] for n, lo, hi in zip(names, space.low, space.high)},
        "J2_start": float(j2_start),
        "J2_best": float(j2_best),
        "J2_best_in_search": float(result.best_score),
        "history": [float(h) for h in result.history],
        "iterations_done": iterations if result.iterations_done is None else int(result.iterations_done),
        "batched": decided["decision"].fingerprint is not None,
        "search_s": search_s,
        "wall_s": time.perf_counter() - wall_start,
        "set_options": [f"--set {p}={float(v)!r}" for p, v in zip(paths, best)],
    }
    out["warnings"] = bound_warnings(out) + stopped_early_warnings(out, result.iterations_done, result.message)
    if not j2_best <= j2_start:
        out["warnings"].append({"code": "worse_than_start", "before": float(j2_start), "after": float(j2_best)})
    return out
