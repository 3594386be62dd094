"""Calibrating a compensator over a population of ``sdof`` tests (what
``rths-ident calibrate amb|damb|polynomial`` runs; seed 003 §2.3, digest 003 §4): the
test of :mod:`rths_ident.scenarios.sdof`, built from its test file like any run of it,
with its specimen fields — m, T, ζ, α, k_lab (:mod:`rths_ident.calibration.sample`) —
and its compensator's gains as the arguments of one compiled, ``vmap``-ed loop
(:mod:`rths_ident.calibration.sdof_rths`): a population of candidates × the sampled
specimens is one call; the held-out specimens are a second sample. The search, the
scoring and the trust warnings are :mod:`rths_ident.calibration.study`.

The specimens' sampled κ (the compensator's initial model, seed 003's "controller's
initial conditions") multiplies the gain ``s``: a specimen's test runs with
``compensation.s = s κ``. Every specimen of a calibration is the ``sdof`` test run as
``rths-ident run sdof --set structure.mass=… --set compensation.s=…`` runs it, to
rounding (tests/scenarios/test_sdof_calibration.py).
"""

from __future__ import annotations

import itertools
import time
from typing import Callable

from rths_ident.calibration.gains import gain_space
from rths_ident.calibration.sdof_rths import SDOFStudy, StudySettings, reduce_chunk
from rths_ident.calibration.study import calibrate_population, check_search_options
from rths_ident.hybrid.fast_side.compensation.registry import COMPENSATORS
from rths_ident.hybrid.fast_side.fast_chunk import fast_params, initial_fast_state
from rths_ident.hybrid.loop.assembled import initial_loop_state, slow_step_functions
from rths_ident.scenarios.sdof import SDOFTestConfig, build

__all__ = ["calibration_config", "build_study", "calibrate"]

_OWN_TRANSFER_SYSTEMS = itertools.count()


def calibration_config(kind: str, settings: StudySettings = StudySettings()) -> SDOFTestConfig:
    """The ``sdof`` test a calibration of compensator ``kind`` runs for each specimen (its
    specimen fields are the sample's; the compensator's gains the candidate's)."""
    return SDOFTestConfig(record=settings.record, record_scale=settings.record_scale, record_start=settings.start,
                          duration=settings.duration, fast_rate=settings.fast_rate, slow_rate=settings.slow_rate,
                          length_scale=settings.length_scale, actuator_substeps=settings.actuator_substeps,
                          sensor_noise=settings.sensor_noise, compensation=kind)


def build_study(kind: str, settings: StudySettings = StudySettings(), actuator=None,
                actuator_step=None) -> SDOFStudy:
    """The study of compensator ``kind``: the ``sdof`` test of :func:`calibration_config` as the
    runner builds it, behind ``actuator`` (default the test's: the shipped Carrion–Spencer
    actuator, seed 000 Table 2.1) stepped by ``actuator_step`` (default the test's; any
    function of its shape, e.g. :func:`~rths_ident.hybrid.fast_side.actuator.ideal_actuator_step`)."""
    settings = settings.check()
    gain_space(kind, 1.0)  # a compensator with nothing to calibrate: named before any work
    cfg = calibration_config(kind, settings)
    test = build(cfg)
    if actuator is not None or actuator_step is not None:
        side = test.fast_side
        actuator = side.actuator if actuator is None else actuator
        side = side._replace(actuator=actuator, actuator_step=side.actuator_step if actuator_step is None
                             else actuator_step, compensation=side.compensation._replace(
            params=COMPENSATORS[kind].default_params(cfg.fast_rate, actuator.loop_gain())))
        # a program of its own (the compiled functions are cached by the test's key)
        test = test._replace(fast_side=side, key=(test.key, "own transfer system", next(_OWN_TRANSFER_SYSTEMS)))
    functions = slow_step_functions(test)
    functions = functions._replace(fast_chunk=reduce_chunk(functions.fast_chunk))
    return SDOFStudy(settings, gain_space(kind, test.fast_side.actuator.loop_gain()), test.fast_side, functions,
                     test.ground_accel, fast_params(test.fast_side), initial_fast_state(test.fast_side, test.seed),
                     initial_loop_state(test, "none"))


def calibrate(kind: str, *, n_specimens: int = 64, n_holdout: int | None = None, method: str = "pso",
              iterations: int = 30, population: int = 8, seed: int = 0, settings: StudySettings = StudySettings(),
              start=None, progress: Callable[[int, float], None] | None = None, actuator=None, actuator_step=None,
              bounds: dict | None = None) -> dict:
    """Calibrate compensator ``kind`` (``amb`` | ``damb`` | ``polynomial``) over the
    ``sdof`` test's population (module doc); the result as plain values
    (:func:`rths_ident.calibration.study.calibrate_population`, which says every option)."""
    wall_start = time.perf_counter()
    check_search_options(method, n_specimens, iterations, population)
    study = build_study(kind, settings, actuator, actuator_step)
    return calibrate_population(study, n_specimens=n_specimens, n_holdout=n_holdout, method=method,
                                iterations=iterations, population=population, seed=seed, start=start,
                                progress=progress, bounds=bounds, wall_start=wall_start)
