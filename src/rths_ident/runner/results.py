"""What a hybrid-test run reports: the metrics of each variant and the result dictionary
of ``rths-ident run`` (JSON keys; arrays for the plots under ``_arrays``).

Metrics (seed 000 Table 4.1, :mod:`rths_ident.metrics`): J2 tracking error of the fast
side (target vs measured), J4 of each response DOF against the reference, J4 of the
interface force, τ (frequency-domain delay, measured leading target is negative), the
identified parameters, their errors and 2 % convergence times, the updates applied.
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import dataclasses
import time as _time
from typing import Callable, NamedTuple

import jax
import numpy as np

from rths_ident import metrics
from rths_ident.errors import ParameterError
from rths_ident.hybrid.loop.assembled import (
    HybridTest,
    compiled_fused_runner,
    loop_arguments,
    prepared_fused_runner,
    run_loop,
    virtual_site,
)
from rths_ident.hybrid.loop.host_counters import HostCounters
from rths_ident.hybrid.loop.realtime import RealTimePacer
from rths_ident.hybrid.loop.realtime_host import (RUNNING_CHECK_S, HostSettings, RealTimeHost, measure_jitter,
                                                  spin_tail)
from rths_ident.runner.events import Note
from rths_ident.runner.options import RunOptions
from rths_ident.runner.events import TestStarted
from rths_ident.runner.recording import StepRecorder, open_run_record
from rths_ident.runner.watch_info import describe_run

COMPARISON_VARIANTS = ("none", "oracle")
#: seconds of empty windows the host's jitter is measured over before a paced run
JITTER_CALIBRATION_S = 1.0


class VariantResult(NamedTuple):
    """One run of the loop (one updating mode) with its metrics."""

    updating: str
    metrics: dict
    logs: dict
    wall_s: float


def finite_or_none(value: float):
    return float(value) if np.isfinite(value) else None


def variant_metrics(test: HybridTest, logs: dict, reference_response, reference_force,
                    variant: str = "updating") -> dict:
    """The metrics of one run against the reference (module doc). ``params_final`` is
    what the identifier ended with; ``ns_params_final`` what the numerical substructure
    used at the end (the last update the hook applied, else the variant's initial model:
    the wrong guess for ``none``, the truth for ``oracle``)."""
    names = test.param_names
    response = np.asarray(logs["ns"]["displacement"])
    samples_per_step = np.asarray(logs["fast"]["target"]).shape[1]  # the virtual side's ratio; a rig's 1
    target = np.asarray(logs["fast"]["target"]).ravel()
    measured = np.asarray(logs["fast"]["measured"]).ravel()
    force_slow = np.asarray(logs["fast"]["force"])[:, -1]
    estimates = np.asarray(logs["update"]["estimate"])
    true = np.asarray(test.true_values, dtype=float)
    final = estimates[-1]
    out = {
        "J2_percent": float(metrics.j2_tracking_error(target, measured)),
        "J4_percent": {name: float(metrics.j4_global_error(reference_response[:, i], response[:, i]))
                       for i, name in enumerate(test.response_names)},
        "J4_force_percent": float(metrics.j4_global_error(reference_force, force_slow)),
        "tau_ms": float(metrics.fei_delay(target, measured, test.slow_rate * samples_per_step) * 1e3),
        "params_final": dict(zip(names, map(float, final))),
        "ns_params_final": dict(zip(names, map(float, _ns_values(test, logs, variant)))),
        "param_error_percent": dict(zip(names, map(float, 100 * np.abs(final / true - 1)))),
        "convergence_time_s": {
            name: finite_or_none(metrics.convergence_time(test.time_slow, estimates[:, i], true[i], tol=0.02))
            for i, name in enumerate(names)
        },
        "updates_applied": int(np.sum(logs["update"]["applied"])),
        "actuator_limit_code": int(np.max(logs["fast"]["limit"])),
        "missed_deadlines": 0,  # not paced: the loop runs as fast as it can (run_scenario's realtime)
    }
    out.update(command_metrics(logs))
    if names:  # every online identifier reports its relative std (estimators.online_identifier)
        out["param_std_percent"] = dict(zip(names, map(float, 100 * np.asarray(logs["update"]["relative_std"])[-1])))
    out.update(test.extra_metrics(logs))
    return out


def command_metrics(logs: dict) -> dict:
    """The command a servo-valve receives against the NS's target
    (:func:`rths_ident.metrics.command_smoothness`): its peak over the target's, its largest
    jump per fast step over the target's; ``{}`` for a site that does not log its
    command in metres beside the NS's target (a rig logs its own units: its command is the
    target itself, one per slow step)."""
    fast = logs.get("fast", {})
    if not all(key in fast for key in ("command", "target", "slow_target")):
        return {}
    command = np.asarray(fast["command"], dtype=float)
    target = np.asarray(fast["target"], dtype=float)
    if command.ndim != 2 or command.shape[0] < 2:
        return {}
    slow = np.asarray(fast["slow_target"], dtype=float).reshape(-1)
    if not (np.all(np.isfinite(command)) and np.all(np.isfinite(slow))):
        return {}
    return metrics.command_smoothness(slow, command.ravel(), command.shape[1], fast_target=target.ravel())


def _ns_values(test: HybridTest, logs: dict, variant: str) -> np.ndarray:
    applied = np.asarray(logs["update"]["applied"], dtype=bool)
    if applied.any():
        return np.asarray(logs["update"]["estimate"])[applied][-1]
    return np.asarray(test.true_values if variant == "oracle" else test.initial_values, dtype=float)


class PhaseClock:
    """Times the phases of a run and reports each as it ends: ``report(phase, seconds)``
    (None: silent). ``seconds`` keeps every phase's duration."""

    def __init__(self, report: Callable[[str, float], None] | None = None):
        self.report, self.seconds, self._start = report, {}, _time.perf_counter()

    def lap(self, phase: str) -> float:
        """End ``phase`` now (it began when the previous one ended)."""
        now = _time.perf_counter()
        elapsed, self._start = now - self._start, now
        self.seconds[phase] = self.seconds.get(phase, 0.0) + elapsed
        if self.report is not None:
            self.report(phase, elapsed)
        return elapsed


def run_scenario(cfg, build: Callable[..., HybridTest], options: RunOptions = RunOptions(),
                 describe: Callable[[HybridTest], dict] | None = None, model_force: Callable | None = None) -> dict:
    """Run the configured variant and (``options.compare``) ``none`` and ``oracle`` for
    the side-by-side plots. Returns the JSON keys of ``rths-ident run`` (for the
    configured variant), ``variants`` (metrics of each) and ``_arrays`` (what the plots
    need); ``describe(test)`` adds scenario-specific keys.

    ``options.realtime``: the configured variant runs step-wise, paced against the wall
    clock (:class:`~rths_ident.hybrid.loop.realtime.RealTimePacer`; the comparison runs
    are not paced); ``cfg.pad_seconds`` of the record count as start-up.
    ``missed_deadlines`` and ``latency_ms`` then come from the pacer, and ``realtime``
    holds its whole report.

    ``options.test_record``: the configured variant's run is recorded there as it goes
    (:mod:`rths_ident.runner.recording`, keeping ``options.test_file``), the result's
    JSON keys are its metrics; a run that fails leaves the record with the error and
    ``complete = False``.

    Events (``options.events``): a phase event as each phase ends — building (the test,
    its reference and the loop's arguments), compiling (what is left of the loop's
    compilation, once for every variant, which runs on a worker thread from the start of
    the reference), running <variant> (fused engine: the configured variant alone, then
    ``running none + oracle`` side by side), comparing (the metrics); the seconds of each
    are in the result's ``phase_s``. A step event after every slow step of the
    configured variant (step-wise engine), all compilation done; before it, a
    :class:`~rths_ident.runner.events.TestStarted` (what a live page draws;
    ``model_force(θ, displacement) -> force``, when given, draws the identified model's
    loop). ``options.stop``: the configured variant's step-wise loop stops on it (the
    comparison runs are virtual and run to their end)."""
    engine, realtime, test_record = options.engine, options.realtime, options.test_record
    if realtime and engine != "stepwise":
        raise ParameterError("real-time pacing needs the step-wise engine (engine='stepwise')")
    start_all = _time.perf_counter()
    clock = PhaseClock(options.phase_callback())
    test = build(cfg)
    progress = options.step_callback(len(test.time_slow))
    record = None if test_record is None else open_run_record(test_record, cfg, test, engine,
                                                               test_file=options.test_file)
    with record if record is not None else contextlib.nullcontext():
        out = _run_variants(cfg, test, engine, options.compare, progress, describe, record, start_all, realtime,
                            clock, watch=(options.events, options.stop, model_force),
                            note=lambda text: options.stream.emit(Note(text)), fused_loop=options.fused_loop)
        if record is not None:
            record.finish({k: v for k, v in out.items() if k != "_arrays"})
    return out


def calibrated_pacer(cfg, host: HostSettings, note: Callable[[str], None] | None = None) -> RealTimePacer:
    """The pacer of a paced run at ``cfg.slow_rate`` (``cfg.pad_seconds`` of start-up),
    after a second of the host's jitter and half a second of a spinning thread measured in
    the settings the run gets (:func:`~rths_ident.hybrid.loop.realtime_host.measure_jitter`,
    told to ``note``): its
    busy-wait tail is the measured sleep overshoot
    (:func:`~rths_ident.hybrid.loop.realtime_host.spin_tail`)."""
    dt = 1.0 / cfg.slow_rate
    jitter = measure_jitter(dt, seconds=JITTER_CALIBRATION_S, running_seconds=RUNNING_CHECK_S)
    spin = spin_tail(jitter)
    if note is not None:
        note(f"real time: {host.describe()}")
        note(f"  {jitter.describe()}; busy-wait tail {1e6 * spin:.0f} µs")
    figures = {"settings": dataclasses.asdict(host), "jitter": jitter.as_dict(), "spin_tail_us": 1e6 * spin}
    return RealTimePacer(dt, startup_steps=int(round(cfg.pad_seconds * cfg.slow_rate)), spin_s=spin, host=figures,
                         counters=HostCounters(host.cpu))


def _variant(cfg, mode: str) -> str:
    """The loop variant of updating mode ``mode`` (rls, ukf → updating)."""
    return "updating" if mode in cfg.IDENTIFYING_MODES else mode


def _compile_loop(test: HybridTest, engine: str) -> None:
    """Compile what the runs will call: the fused loop (one program for every variant)
    or the virtual site's step."""
    if engine == "fused":
        compiled_fused_runner(test)  # for the arguments' shapes: their values are computed meanwhile
    else:
        virtual_site(test)


def _compile_and_reference(cfg, test: HybridTest, engine: str, clock: PhaseClock) -> tuple:
    """The test's loop compiled (fused) or its site's step (step-wise), and its reference
    response and force."""
    with concurrent.futures.ThreadPoolExecutor(max_workers=1) as background:
        # the loop is traced here first (Python: nothing else then holds the interpreter
        # lock) and compiled for its arguments' shapes on the worker (XLA releases the
        # lock) while the arguments' values and the reference are computed: the phase
        # lines then read "building" up to both, "compiling" what is left of the compilation
        if engine == "fused":
            prepared_fused_runner(test)
        compiling = background.submit(_compile_loop, test, engine)
        if engine == "fused":
            jax.block_until_ready(loop_arguments(test, _variant(cfg, cfg.updating)))
        reference = test.reference()
        clock.lap("building")
        compiling.result()
    clock.lap("compiling")
    return reference


def _run_variants(cfg, test: HybridTest, engine: str, compare: bool, progress, describe, record,
                  start_all: float, realtime: bool = False, clock: PhaseClock | None = None,
                  watch: tuple = (None, None, None), note: Callable[[str], None] | None = None,
                  fused_loop: Callable | None = None) -> dict:
    clock = PhaseClock() if clock is None else clock
    events, stop, model_force = watch
    runner = fused_loop(test) if fused_loop is not None and engine == "fused" else None
    if runner is not None:  # the loop is a batch's (a study): nothing of its own to compile
        reference_response, reference_force = test.reference()
        clock.lap("building")
    else:
        reference_response, reference_force = _compile_and_reference(cfg, test, engine, clock)
    comparisons = [m for m in COMPARISON_VARIANTS if m != cfg.updating and m in cfg.UPDATING_MODES]
    order = [cfg.updating] + (comparisons if compare else [])
    results = {}
    pacer = None
    side_by_side = engine == "fused" and len(order) > 2  # the comparison runs of one compiled program
    for mode in order[:1] if side_by_side else order:
        variant = _variant(cfg, mode)
        main_run = mode == cfg.updating
        recorder = (StepRecorder(record, test.time_slow, progress, test.ground_accel)
                    if main_run and record is not None else None)
        site = test.make_site() if main_run and test.make_site is not None else None
        with RealTimeHost(enabled=realtime and main_run) as host:
            if realtime and main_run:
                pacer = calibrated_pacer(cfg, host, note)
            if main_run and events is not None:
                info = describe_run(test, cfg, engine, variant, pacer is not None, reference_response)
                events.emit(TestStarted(test.name, info, {"pacer": pacer, "model_force": model_force}))
            logs, wall = run_loop(test, engine, variant=variant, progress=progress if main_run else None,
                                  pacer=pacer if main_run else None, recorder=recorder, site=site,
                                  stop=stop if main_run else None,
                                  interlocks=main_run,  # the interlocks guard the configured run, not the comparisons
                                  runner=runner if main_run else None)
        clock.lap(f"running {mode}")
        results[mode] = VariantResult(mode, None, logs, wall)
    if side_by_side:
        # the configured variant ran alone (its wall time is the real-time figure); the
        # comparison runs share the compiled loop and run side by side, one per core
        rest = order[1:]
        with concurrent.futures.ThreadPoolExecutor(max_workers=len(rest)) as pool:
            runs = {mode: pool.submit(run_loop, test, engine, variant=_variant(cfg, mode), interlocks=False)
                    for mode in rest}
            for mode, run in runs.items():
                logs, wall = run.result()
                results[mode] = VariantResult(mode, None, logs, wall)
        clock.lap("running " + " + ".join(rest))
    for mode, result in results.items():
        variant = _variant(cfg, mode)
        results[mode] = result._replace(
            metrics=variant_metrics(test, result.logs, reference_response, reference_force, variant))
    clock.lap("comparing")
    main = results[cfg.updating]
    if pacer is not None:
        report = pacer.report().as_dict()
        main.metrics.update(missed_deadlines=report["missed_deadlines"], latency_ms=report["latency_ms"],
                            realtime=report)
    names = test.param_names
    duration = float(test.time_slow[-1])
    out = dict(main.metrics)
    out.update({
        "scenario": cfg.SCENARIO,
        "record": cfg.record,
        "updating": cfg.updating,
        "engine": engine,
        "compensation": cfg.compensation,
        "transition": cfg.transition_kind,
        "transfer_system": cfg.transfer_system,
        "fast_rate_hz": cfg.fast_rate,
        "slow_rate_hz": cfg.slow_rate,
        "identifier_rate_hz": cfg.fast_rate / cfg.identifier_every,
        "params_true": dict(zip(names, map(float, test.true_values))),
        "params_initial": dict(zip(names, map(float, test.initial_values))),
        "realtime_factor": duration / main.wall_s,
        "sim_duration_s": duration,
        "wall_s": main.wall_s,
        "total_wall_s": _time.perf_counter() - start_all,
        "phase_s": dict(clock.seconds),
        "variants": {m: r.metrics for m, r in results.items()},
    })
    if describe is not None:
        out.update(describe(test))
    out["_arrays"] = {
        "time_slow": test.time_slow,
        "time_fast": test.time_slow[0] - 1.0 / cfg.slow_rate
        + np.arange(1, len(test.time_slow) * test.samples_per_step + 1) / (cfg.slow_rate * test.samples_per_step),
        "reference_floors": reference_response,
        "reference_force": reference_force,
        "logs": {m: r.logs for m, r in results.items()},
    }
    return out
