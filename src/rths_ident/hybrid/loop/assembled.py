"""A hybrid test as data, and running it with either engine.

A :class:`HybridTest` is what a scenario builds: the record at the slow rate, the fast
side (:class:`~rths_ident.hybrid.fast_side.fast_chunk.FastSide`), the numerical substructure
(native pieces for the fused engine, and a factory of
:class:`~rths_ident.structures.numerical_substructure.NumericalSubstructure` objects for
the step-wise engine — native, OpenSeesPy or remote), the model-updating hook's guards,
the identified parameters (names, true and initial values) and the reference response.

Three **variants** of a test share one compiled loop: ``"updating"`` (identify and
update), ``"none"`` (the hook frozen for ever: the wrong initial model stays) and
``"oracle"`` (the NS starts from the true parameters, never updated). They differ only in
pytree leaves (initial NS parameters, the hook's freeze time).

Compiled functions are cached per test ``key`` (a hashable description of everything
that changes the program, e.g. the scenario's configuration), so repeated runs and the
three variants compile once.
"""

from __future__ import annotations

import dataclasses
import hashlib
import math
import threading
import time as _time
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any, Callable, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from rths_ident import exported_programs, stored_arrays
from rths_ident.errors import ParameterError
from rths_ident.operator_stop import OperatorStopped, operator_stop_text
from rths_ident.protocols import Estimate
from rths_ident.hybrid.loop.engine import (
    LoopAborted,
    LoopState,
    GuardsUpdater,
    SlowStepFunctions,
    make_fused_runner,
    run_fused,
    run_stepwise,
)
from rths_ident.hybrid.fast_side.interlocks import InterlockMonitor, Interlocks
from rths_ident.hybrid.loop.model_updating import UpdateGuards, hook_decide, hook_init
from rths_ident.hybrid.loop.step_logs import StepLogs
from rths_ident.hybrid.fast_side.fast_chunk import (
    FastSide,
    fast_params,
    initial_fast_state,
    make_fast_chunk,
    make_identify,
)
from rths_ident.hybrid.fast_side.virtual_site import VirtualSite
from rths_ident.structures.numerical_substructure import NativeSubstructure

VARIANTS = ("updating", "none", "oracle")
ENGINES = ("fused", "stepwise")


class NativeNS(NamedTuple):
    """A native numerical substructure: what the fused engine compiles.

    ``ns_step(params, state, feedback (n,), ground_accel) -> (state, target (n,), log)``
    and ``apply_estimate(params, θ̂) -> params`` are pure; ``params``/``params_true``
    are the initial-guess and true-parameter models (``oracle``).
    """

    integrator: Any
    params: Any
    params_true: Any
    interface_dofs: tuple
    ns_step: Callable
    apply_estimate: Callable


class HybridTest(NamedTuple):
    """Everything a run needs, built once (static parts and arrays; SI units)."""

    key: Any  # hashable: identifies the compiled program (cache key)
    name: str  # scenario name
    time_slow: np.ndarray  # t_1 … t_N [s]
    ground_accel: np.ndarray  # ẍ_g at t_1 … t_N [m/s²]
    slow_rate: float  # Hz
    fast_side: FastSide
    native_ns: NativeNS | None  # None: the NS is not native (step-wise engine only)
    make_ns: Callable[[str], Any]  # variant -> NumericalSubstructure (step-wise engine)
    guards: UpdateGuards
    param_names: tuple
    true_values: np.ndarray  # θ of the specimen
    initial_values: np.ndarray  # θ of the NS's initial model
    reference: Callable[[], tuple]  # () -> (response (N, n_response) [m], interface force (N,) [N])
    seed: int  # sensor-noise seed
    response_names: tuple = ("floor1", "floor2", "floor3")
    extra_metrics: Callable[[dict], dict] = lambda logs: {}  # scenario-specific metrics from the logs
    param_units: Mapping[str, str] = MappingProxyType({})  # SI unit of each identified parameter (test records)
    # the configured run's physical side when it is not the virtual fast side (a rig):
    # () -> Site, opened for the run and closed by it; the comparison runs stay virtual
    make_site: Callable[[], Any] | None = None
    # samples per slow step that site logs (a rig reads once per step); None: the fast side's ratio
    site_samples_per_step: int | None = None
    # the test's interlocks (hybrid.fast_side.interlocks) and the physical range of θ̂ they
    # hold the identifier to ((lower, upper); None: finiteness and covariance only)
    interlocks: Interlocks = Interlocks()
    identifier_bounds: tuple | None = None

    @property
    def samples_per_step(self) -> int:
        """Samples per slow step in the configured run's site log."""
        return self.fast_side.ratio if self.site_samples_per_step is None else int(self.site_samples_per_step)


def slow_step_functions(test: HybridTest) -> SlowStepFunctions:
    """The pure functions of a slow step for a native test (cached per test key)."""
    if test.native_ns is None:
        raise ParameterError(f"{test.name}: the fused engine needs a native numerical substructure "
                             "(use engine='stepwise' with this one)")
    return _cached("functions", test, lambda: _make_functions(test))


def _make_functions(test: HybridTest) -> SlowStepFunctions:
    dt_slow = 1.0 / test.slow_rate
    ns = test.native_ns

    def ns_step(params, state, feedback, ground_accel):
        return ns.ns_step(params, state, feedback, ground_accel, dt_slow)

    return SlowStepFunctions(make_fast_chunk(test.fast_side), make_identify(test.fast_side), _hook(test),
                             ns.apply_estimate, ns_step)


def variant_guards(test: HybridTest, variant: str) -> UpdateGuards:
    """The hook's guards for ``variant`` (``none``/``oracle``: frozen for ever)."""
    if variant not in VARIANTS:
        raise ParameterError(f"variant = {variant!r}: expected one of {', '.join(VARIANTS)}")
    if variant == "updating":
        return test.guards
    return dataclasses.replace(test.guards, freeze_until_s=np.inf)


def initial_loop_state(test: HybridTest, variant: str = "updating") -> LoopState:
    """The fused engine's initial state for ``variant``."""
    guards = variant_guards(test, variant)
    ns = test.native_ns
    params = ns.params_true if variant == "oracle" else ns.params
    values = test.true_values if variant == "oracle" else test.initial_values
    ns_state, fast_state, target, hook_state = _cached("initial_state", test, lambda: _initial_state_program(test))(
        params, jnp.asarray(values, jnp.float64))
    return LoopState(ns_state, fast_state, target, params, (hook_state, guards))


def _initial_state_program(test: HybridTest) -> Callable:
    """``(ns params, θ of the NS's model) -> (ns state, fast state, first target, hook
    state)`` as one compiled program: at set-up its dozens of small operations would
    otherwise each compile as a program of their own (≈ 1 s on a first run). The fast
    side's parameters are constants of the program (the filter designs need them
    concrete); the variants differ only in the arguments."""
    ns = test.native_ns
    dt_slow = 1.0 / test.slow_rate

    def initial_state(params, values):
        ns_state = ns.integrator.init(params, dt_slow)
        target = ns.integrator.predicted_displacement(params, ns_state, dt_slow)[jnp.asarray(ns.interface_dofs)]
        return ns_state, initial_fast_state(test.fast_side, test.seed), target, hook_init(values)

    return jax.jit(initial_state)


def native_substructure(test: HybridTest, variant: str) -> NativeSubstructure:
    """The native NS of ``test`` behind the protocol (the step-wise engine's default)."""
    ns = test.native_ns
    functions = slow_step_functions(test)
    return NativeSubstructure(ns.integrator, ns.params_true if variant == "oracle" else ns.params,
                              ns.interface_dofs, 1.0 / test.slow_rate, apply_estimate=functions.apply_estimate,
                              ns_step=ns.ns_step)


# --------------------------------------------------------------------------------------
# compiled-function cache
# --------------------------------------------------------------------------------------
_CACHE: dict = {}


def _cached(kind: str, test: HybridTest, make: Callable):
    key = (kind, test.key)
    if key not in _CACHE:
        _CACHE[key] = make()
    return _CACHE[key]


def compiled_fused_runner(test: HybridTest, initial: LoopState | None = None):
    """The fused loop compiled ahead of time for this test (cached in this process, and
    between processes when the store of :mod:`rths_ident.exported_programs` is on and
    ``test.key`` is a configuration of this package: the key is ``test.key``, the
    arguments' shapes and the record). Without ``initial`` it is
    compiled for the shapes of the loop's arguments alone (:func:`loop_argument_shapes`),
    so the arguments' values can be computed meanwhile on another thread; it is then
    :func:`prepared_fused_runner`'s program (traced earlier, perhaps on another thread)."""
    def make():
        if initial is None:
            return prepared_fused_runner(test).compile()
        args = (fast_params(test.fast_side), initial, jnp.asarray(test.ground_accel))
        return exported_programs.compile_program("fused-loop", exported_programs.package_key(test.key),
                                                 make_fused_runner(slow_step_functions(test)), args,
                                                 digest_arrays=(test.ground_accel,))
    return _cached("fused", test, make)


def prepared_fused_runner(test: HybridTest) -> exported_programs.PreparedProgram:
    """The fused loop traced and lowered (or loaded from the store) for the shapes of its
    arguments, not compiled yet (cached per test key): a run traces it on its main
    thread, where nothing else then holds the interpreter, and compiles it on a worker
    (:meth:`~rths_ident.exported_programs.PreparedProgram.compile` releases the lock)
    while the main thread computes the loop's arguments and the reference."""
    return _cached("fused-prepared", test, lambda: exported_programs.prepare_program(
        "fused-loop", exported_programs.package_key(test.key), make_fused_runner(slow_step_functions(test)),
        loop_argument_shapes(test), digest_arrays=(test.ground_accel,)))


def program_fingerprint(test: HybridTest) -> str:
    """A digest of the fused loop's program as traced for ``test`` (its jaxpr, its
    constants' bytes and its arguments' tree and shapes): two tests with the same
    fingerprint run one program on different argument values, so their loops can share
    one compiled (and ``vmap``-ed) call. Traced, not compiled."""
    functions = slow_step_functions(test)
    shapes = loop_argument_shapes(test)
    closed = jax.make_jaxpr(lambda fp, initial, ag: run_fused(functions, fp, initial, ag))(*shapes)
    digest = hashlib.sha256(str(closed.jaxpr).encode())
    digest.update(str(jax.tree_util.tree_structure(shapes)).encode())
    for const in closed.consts:
        array = np.asarray(const)
        digest.update(f"{array.shape}{array.dtype}".encode())
        digest.update(np.ascontiguousarray(array).tobytes())
    return digest.hexdigest()


_BATCHED: dict = {}
_BATCHED_LOCK = threading.Lock()


def batched_fused_runner(test: HybridTest, fingerprint: str, size: int) -> Callable:
    """The fused loop of ``test`` ``vmap``-ed over a leading axis of ``size`` runs of all
    three arguments ``(fast params, initial state, ground acceleration)``, compiled ahead
    of time (for NumPy arguments, as a batch stacks them) and shared by every test whose
    :func:`program_fingerprint` is ``fingerprint`` (one compilation per process, whichever
    thread asks first; the others wait for it)."""
    with _BATCHED_LOCK:
        if (fingerprint, size) not in _BATCHED:
            functions = slow_step_functions(test)
            shapes = jax.tree_util.tree_map(lambda s: jax.ShapeDtypeStruct((size, *s.shape), s.dtype),
                                            loop_argument_shapes(test))
            batched = jax.jit(jax.vmap(lambda fp, initial, ag: run_fused(functions, fp, initial, ag)))
            _BATCHED[(fingerprint, size)] = batched.lower(*shapes).compile()
        return _BATCHED[(fingerprint, size)]


def loop_argument_shapes(test: HybridTest) -> tuple:
    """Shapes and dtypes (:class:`jax.ShapeDtypeStruct`) of the fused loop's arguments
    ``(fast params, initial state, ground acceleration)``, traced without computing them
    (or read from the store of :func:`loop_arguments`)."""
    return jax.eval_shape(lambda: (*loop_arguments(test), jnp.asarray(test.ground_accel)))


def loop_arguments(test: HybridTest, variant: str = "updating") -> tuple:
    """``(fast params, initial state)`` of the fused loop for ``variant``; kept between
    processes with the loop's program (:func:`rths_ident.stored_arrays.stored_tree`: the
    same key, the record's bytes, the package's sources)."""
    key = exported_programs.package_key(test.key)
    return stored_arrays.stored_tree("loop-arguments", None if key is None else (key, variant),
                                     lambda: (fast_params(test.fast_side), initial_loop_state(test, variant)),
                                     digest_arrays=(test.ground_accel,))


def virtual_site(test: HybridTest) -> VirtualSite:
    """A fresh virtual site (state at the start of the test), compiled once per key."""
    site = _cached("site", test, lambda: VirtualSite(test.fast_side, test.seed))
    return site.restarted(initial_fast_state(test.fast_side, test.seed))


def _flat_list(values) -> list:
    """``values`` flattened to a list of Python numbers (a NumPy array's without
    ``np.ravel``'s conversion)."""
    return (values.ravel() if isinstance(values, (np.ndarray, np.generic)) else np.ravel(values)).tolist()


def _limit_check(slow_rate: float):
    """What stops the step-wise loop after a step: an actuator limit, or an identifier
    whose estimate is no longer finite (it diverged: nothing it says can be trusted, and a
    test that goes on without it is another test)."""
    def check(log, k):
        # plain Python first (a NumPy reduction costs a microsecond or more each): any
        # nonzero code; a finite sum has only finite terms (else NumPy decides)
        limit = log["fast"]["limit"]
        if any(_flat_list(limit)):
            return (f"actuator limit exceeded (code {int(np.max(limit))}) in slow step {k} "
                    f"(t = {(k + 1) / slow_rate:.3f} s)")
        update = log["update"] if "update" in log else None
        estimate = update["estimate"] if update is not None and "estimate" in update else None
        if (estimate is not None and not math.isfinite(sum(_flat_list(estimate)))
                and not np.all(np.isfinite(estimate))):
            values = ", ".join(f"{v:.6g}" for v in np.ravel(estimate))
            return (f"the online identifier diverged: its estimate is not finite ({values}) in slow step {k} "
                    f"(t = {(k + 1) / slow_rate:.3f} s)")
        return None
    return check


def interlock_monitor(test: HybridTest) -> InterlockMonitor:
    """A fresh monitor of the test's interlocks (one per run)."""
    return InterlockMonitor(test.interlocks, 1.0 / test.slow_rate, test.identifier_bounds, test.samples_per_step,
                            time_offset=float(test.time_slow[0]) - 1.0 / test.slow_rate)


def first_trip(test: HybridTest, logs: dict):
    """The first interlock the stacked logs of a whole run trip (the fused engine checks
    after its one compiled call), or None; the same checks as the step-wise loop's, the
    watchdog aside (a fused run has no per-step wall-clock time)."""
    monitor = interlock_monitor(test)
    fast, ns, update = logs["fast"], logs.get("ns", {}), logs.get("update")
    per_sample = {key: np.asarray(fast[key]) for key in ("command", "measured", "target", "force") if key in fast}
    next_targets = np.asarray(fast["slow_target"]) if "slow_target" in fast else None
    displacement = np.asarray(ns["displacement"]) if "displacement" in ns else None
    n_steps = next(iter(per_sample.values())).shape[0]
    start = _first_suspect_step(monitor, per_sample, n_steps, next_targets, displacement, update)
    if start is None:
        return None
    monitor.seek({key: value[:start].reshape(-1) for key, value in per_sample.items()})
    for k in range(start, n_steps):
        trip = monitor.check_site_log({key: value[k] for key, value in per_sample.items()}, k)
        if trip is None and update is not None:
            estimate = Estimate(update["estimate"][k], update["relative_std"][k], update["converged"][k],
                                update.get("covariance_ok", np.ones(n_steps, bool))[k])
            trip = monitor.check_estimate(estimate, k, test.param_names)
        if trip is None:
            following = next_targets[k + 1] if next_targets is not None and k + 1 < n_steps else np.zeros(0)
            trip = monitor.check_ns(following, {"displacement": displacement[k]} if displacement is not None else None,
                                    k)
        if trip is not None:
            return trip
    return None


def _first_suspect_step(monitor: InterlockMonitor, per_sample: dict, n_steps: int, next_targets, displacement,
                        update) -> int | None:
    """The first slow step of a whole run at which :func:`first_trip`'s step-by-step
    checks could trip (the site's samples: :meth:`InterlockMonitor.first_suspect_sample`;
    the identifier's estimate and the NS's targets and response: the same comparisons on
    every step at once), or None: the checks before it are skipped (none trips there)."""
    flat = {key: value.reshape(-1) for key, value in per_sample.items()}
    steps = []
    sample = monitor.first_suspect_sample(flat)
    if sample is not None:
        steps.append(sample // max(1, next(iter(flat.values())).size // n_steps))
    lim = monitor.interlocks
    if update is not None and lim.identifier:
        theta = np.asarray(update["estimate"], dtype=float).reshape(n_steps, -1)
        bad = ~np.all(np.isfinite(theta), axis=1)
        bad |= ~np.asarray(update.get("covariance_ok", np.ones(n_steps, bool))).reshape(n_steps, -1).all(axis=1)
        if monitor.bounds is not None and theta.shape[1]:
            lower, upper = monitor.bounds
            if lower.size != theta.shape[1]:
                bad[:] = True  # the monitor's own path says what is wrong
            else:
                bad |= np.any((theta < lower) | (theta > upper), axis=1)
        steps.extend(np.flatnonzero(bad)[:1].tolist())
    # step k checks the NS's next target (the row k + 1) and its response at k
    for values, first_row in ((next_targets, 1), (displacement, 0)):
        if values is not None and n_steps > first_row:
            rows = np.asarray(values, dtype=float).reshape(n_steps, -1)[first_row:]
            bad = ~np.all(np.isfinite(rows), axis=1) | np.any(np.abs(rows) > lim.ns_displacement, axis=1)
            steps.extend(np.flatnonzero(bad)[:1].tolist())
    return min(steps) if steps else None


def _cut(logs, n: int):
    if isinstance(logs, dict):
        return {key: _cut(value, n) for key, value in logs.items()}
    return np.asarray(logs)[:n]


def run_loop(test: HybridTest, engine: str = "fused", variant: str = "updating", progress=None, ns=None,
             site=None, pacer=None, recorder=None, stop=None, interlocks: bool = True, runner=None):
    """Run the hybrid loop; returns (logs as NumPy, wall seconds of the run alone — the
    fused loop is compiled beforehand).

    Step-wise: ``ns`` (default ``test.make_ns(variant)``) and ``site`` (default the
    virtual site) may be any objects of the protocols; ``progress(k, step_log)`` is
    called after each slow step (fused: for every step after the compiled call); ``pacer`` (a
    :class:`~rths_ident.hybrid.loop.realtime.RealTimePacer`) paces the steps against the wall
    clock.

    ``recorder``: what feeds the test record (:class:`rths_ident.runner.recording.StepRecorder`):
    ``start(engine)``, then (step-wise) ``recorder(k, step_log)`` after every step, which
    appends it and reports progress — paced, ``follow(logs)`` first: a thread of the
    recorder's own writes the steps from the loop's preallocated logs, the per-step call
    only reports progress (and a failed write), and ``stop_following()`` writes the rest
    when the loop ends;
    (fused) ``record_all(logs)`` after the compiled call; and, when the loop aborts,
    ``record_aborted(error)``.

    ``interlocks``: check the test's interlocks (:mod:`rths_ident.hybrid.fast_side.interlocks`).
    Step-wise, the first that trips brings the specimen to rest and raises
    :class:`LoopAborted`; fused (one compiled call, nothing physical moves), the run is
    cut after the step that tripped and :class:`LoopAborted` carries the steps up to it.

    ``runner`` (fused): ``runner(fast params, initial, ground acceleration) -> (final,
    logs)`` in place of the test's own compiled loop (a study's batch: the call returns
    when the batch it joins has run; :mod:`rths_ident.scenarios.study_batches`).
    """
    if engine == "fused":
        parameters, initial = loop_arguments(test, variant)
        runner = compiled_fused_runner(test, initial) if runner is None else runner
        ag = jax.device_put(np.asarray(test.ground_accel))  # jnp.asarray would compile a small program
        if recorder is not None:
            recorder.start(engine)
        start = _time.perf_counter()
        try:
            _, logs = runner(parameters, initial, ag)
            jax.block_until_ready(logs)
        except KeyboardInterrupt:  # nothing moves: the record says why it has no step
            stopped = OperatorStopped(f"{operator_stop_text(None, None)}: the fused engine computes the whole record "
                                      "in one compiled call (nothing moves on a virtual site); no slow step is kept")
            if recorder is not None:
                recorder.record_aborted(stopped)
            raise stopped from None
        wall = _time.perf_counter() - start
        logs = jax.tree_util.tree_map(np.asarray, logs)
        trip = first_trip(test, logs) if interlocks else None
        if trip is not None:
            kept = _cut(logs, trip.step + 1)
            aborted = LoopAborted(f"{trip.message()}. The fused engine ran the whole record in one call: the run is "
                                  f"cut after that step ({trip.step + 1} slow steps kept; run step-wise for the "
                                  "safe stop)", kept, trip.step, trip=trip)
            if recorder is not None:
                recorder.record_aborted(aborted)
            raise aborted
        if recorder is not None:
            recorder.record_all(logs)
        if progress is not None:  # the steps as the compiled call completed them (after it)
            for k in range(len(test.time_slow)):
                progress(k, jax.tree_util.tree_map(lambda x, k=k: x[k], logs))
        return logs, wall
    if engine != "stepwise":
        raise ParameterError(f"engine = {engine!r}: expected one of {', '.join(ENGINES)}")
    if pacer is not None and engine == "fused":
        raise ParameterError("real-time pacing needs the step-wise engine (engine='stepwise')")
    guards = variant_guards(test, variant)
    values = test.true_values if variant == "oracle" else test.initial_values
    # the hook is the guards alone (_hook): decided on the host, as the compiled hook would
    updater = GuardsUpdater(guards, hook_init(values), 1.0 / test.slow_rate)
    site = virtual_site(test) if site is None else site
    ns = test.make_ns(variant) if ns is None else ns
    logs = StepLogs(len(test.ground_accel))
    if recorder is not None:
        recorder.start(engine)
        if pacer is not None:
            recorder.follow(logs)  # paced: written from a thread as the steps complete
    start = _time.perf_counter()
    try:
        logs = run_stepwise(site, ns, np.asarray(test.ground_accel), updater=updater,
                            check=_limit_check(test.slow_rate), on_step=progress if recorder is None else recorder,
                            pacer=pacer, stop=stop, monitor=interlock_monitor(test) if interlocks else None,
                            param_names=tuple(test.param_names), logs=logs)
        wall = _time.perf_counter() - start
        if recorder is not None:
            recorder.stop_following()  # the steps the writer thread has not written yet
    except (LoopAborted, OperatorStopped) as aborted:
        if recorder is not None:
            recorder.record_aborted(aborted)
        _close_quietly(ns, site)  # a peer that is gone must not hide why the test stopped
        raise
    except BaseException:
        if recorder is not None:
            recorder.stop_following(raise_failure=False)
        _close_quietly(ns, site)
        raise
    ns.close()
    site.close()
    return logs, wall


def _close_quietly(*parts) -> None:
    """Close each part, ignoring their errors (an error is already on its way)."""
    for part in parts:
        try:
            part.close()
        except Exception:  # noqa: BLE001
            pass


def _hook(test: HybridTest):
    """The hook's guards as both engines call them (one function per test key):
    ``hook((hook_state, guards), estimate, k) -> ((hook_state, guards), applied)``."""
    dt_slow = 1.0 / test.slow_rate

    def hook(hook, estimate, k):
        hook_state, guards = hook
        hook_state, applied = hook_decide(guards, hook_state, estimate.theta, estimate.relative_std,
                                          estimate.converged, (k + 1) * dt_slow, k)
        return (hook_state, guards), applied

    return _cached("hook", test, lambda: hook)
