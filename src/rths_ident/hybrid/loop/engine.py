"""The two loop engines of a hybrid test: fused and step-wise.

A hybrid test alternates two rates (ARCHITECTURE.md, "One loop, two rates"):

* the **slow side** — the numerical substructure (NS) — advances one step Δt_n with the
  interface force measured at the end of the previous step and produces the next
  interface target;
* the **fast side** — rate transition, compensation, transfer system, specimen, sensors
  and the online identifier — runs ``ratio = Δt_n/Δt_e`` fast steps per slow step: seen
  from the slow side it is the **site** (:mod:`rths_ident.protocols`);
* between the two, the **model-updating hook** may push the identifier's estimate into
  the NS when its guards pass.

Per slow step k, both engines do the same thing in the same order: the fast chunk towards
the target the NS sent → the identifier's estimate → the hook's guards → (if accepted)
the estimate into the NS → the NS step with the force measured at the end of the chunk
(ZOH), which returns the next target.

The pure functions of a slow step are packed in a :class:`SlowStepFunctions`:

``fast_chunk(fast_params, fast_state, target) -> (fast_state, chunk_log, feedback)``
    the whole fast side for one slow step (internally a ``lax.scan`` of ``ratio`` steps);
``identify(fast_params, fast_state) -> Estimate``
    the online identifier's θ̂, relative std and ``converged`` flag;
``hook(hook_state, estimate, slow_index) -> (hook_state, applied)``
    the model-updating hook's guards (:func:`~rths_ident.hybrid.loop.model_updating.hook_decide`);
``apply_estimate(ns_params, theta) -> ns_params``
    how θ̂ enters the numerical elements (native NS);
``ns_step(ns_params, ns_state, feedback, ground_accel) -> (ns_state, target, ns_log)``
    the native NS.

The **fused engine** scans the composition over the whole record in one compiled call
(``jax.lax.scan``): every part is native, and it can be ``vmap``-ed over records, plants
or initial guesses. The **step-wise engine** talks to a :class:`~rths_ident.protocols.Site`
and a :class:`~rths_ident.structures.numerical_substructure.NumericalSubstructure` from
Python, once per slow step: the NS may be native, an OpenSeesPy model or a remote peer,
the site virtual, remote or a rig. It keeps its logs in NumPy, so a run that fails halfway
leaves everything logged up to the failure readable (:class:`LoopAborted` carries it).
"""

from __future__ import annotations

import inspect
import time
from typing import Any, Callable, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from rths_ident.operator_stop import OperatorStopped, operator_stop_text
from rths_ident.hybrid.loop.model_updating import HostHook, UpdateGuards, UpdateHookState
from rths_ident.hybrid.loop.safe_stop import SafeStop, bring_to_rest
from rths_ident.hybrid.loop.step_logs import StepLogs
from rths_ident.packed_calls import PackedProgram
from rths_ident.protocols import Estimate
from rths_ident.typed_leaves import canonical_state


class SlowStepFunctions(NamedTuple):
    """The pure functions of one slow step (static: hashable Python callables)."""

    fast_chunk: Callable
    identify: Callable
    hook: Callable
    apply_estimate: Callable
    ns_step: Callable


class LoopState(NamedTuple):
    """Everything that evolves in the fused engine, as one pytree."""

    ns_state: Any
    fast_state: Any
    slow_input: Any  # what the NS last sent to the fast side (the interface target)
    ns_params: Any  # the NS parameters (changed by the model-updating hook)
    hook_state: Any


class LoopAborted(RuntimeError):
    """Raised by the step-wise engine when a step reports a fatal condition
    (actuator limit, non-finite state, a peer that failed). ``.logs`` holds every slow
    step completed before the failure (NumPy arrays), ``.slow_index`` the failing step."""

    def __init__(self, message: str, logs: dict, slow_index: int, safe_stop_logs: dict | None = None, trip=None):
        super().__init__(message)
        self.logs = logs
        self.slow_index = slow_index
        self.safe_stop_logs = safe_stop_logs  # the site's logs while it was brought to rest
        self.trip = trip  # the interlock that fired (:class:`~rths_ident.hybrid.fast_side.interlocks.Trip`), if one did


def update_log(estimate, applied) -> dict:
    """What both engines log of the hook each slow step."""
    return {"applied": applied, "estimate": estimate.theta, "relative_std": estimate.relative_std,
            "converged": estimate.converged, "covariance_ok": jnp.asarray(estimate.covariance_ok, dtype=bool)}


def _slow_step(functions: SlowStepFunctions, fast_params, loop_state: LoopState, slow_index, ground_accel):
    fast_state, chunk_log, feedback = functions.fast_chunk(fast_params, loop_state.fast_state, loop_state.slow_input)
    estimate = functions.identify(fast_params, fast_state)
    hook_state, applied = functions.hook(loop_state.hook_state, estimate, slow_index)
    candidate = functions.apply_estimate(loop_state.ns_params, estimate.theta)
    ns_params = jax.tree_util.tree_map(lambda new, old: jnp.where(applied, new, old), candidate, loop_state.ns_params)
    ns_state, target, ns_log = functions.ns_step(ns_params, loop_state.ns_state, feedback, ground_accel)
    new_state = LoopState(ns_state, fast_state, target, ns_params, hook_state)
    return new_state, {"fast": chunk_log, "ns": ns_log, "update": update_log(estimate, applied)}


def run_fused(functions: SlowStepFunctions, fast_params, initial: LoopState, ground_accel_slow):
    """Run the whole record in one ``lax.scan`` (call inside ``jax.jit``).

    ``ground_accel_slow[k]`` is the ground acceleration at the END of slow step k
    (``t = (k+1)·Δt_n``). Returns the final :class:`LoopState` and the stacked logs
    (leading axis: slow step; fast logs have a second axis of length ``ratio``).
    """
    n_slow = ground_accel_slow.shape[0]

    def body(state, inputs):
        k, ag = inputs
        return _slow_step(functions, fast_params, state, k, ag)

    return jax.lax.scan(body, initial, (jnp.arange(n_slow), ground_accel_slow))


def make_fused_runner(functions: SlowStepFunctions):
    """A jitted ``(fast_params, initial, ground_accel_slow) -> (final, logs)``; cache it."""
    return jax.jit(lambda fast_params, initial, ag: run_fused(functions, fast_params, initial, ag))


class ModelUpdater:
    """The model-updating hook as the step-wise engine runs it: the guards compiled once
    (a :class:`~rths_ident.packed_calls.PackedProgram`: the hook's state stays on the
    device, the estimate and the slow step go in as one vector), their state kept here.
    ``hook(hook_state, estimate, k) -> (hook_state, applied)``; given ``example_estimate``
    (an :class:`~rths_ident.protocols.Estimate` of the identifier's shapes) it is
    compiled now, else at the first step. :attr:`log` is the last step's update log
    (``applied``, ``estimate``, ``relative_std``, ``converged``, ``covariance_ok``:
    views of that step's result)."""

    def __init__(self, hook: Callable, hook_state, example_estimate=None):
        self._hook = hook
        self._initial = canonical_state(hook_state)
        self._program = None
        self.n_params = None  # length of θ̂ (known once compiled)
        if example_estimate is not None:  # compiled now, not in the first (maybe paced) step
            self._build(int(np.size(example_estimate.theta)))

    def _build(self, n_params: int) -> None:
        hook, p = self._hook, n_params

        def decide(_, hook_state, inputs):
            estimate = Estimate(inputs[:p], inputs[p:2 * p], inputs[2 * p] != 0, inputs[2 * p + 1] != 0)
            hook_state, applied = hook(hook_state, estimate, inputs[2 * p + 2].astype(jnp.int64))
            return hook_state, update_log(estimate, applied)

        # inputs: θ̂ (p), relative std (p), converged, covariance_ok, the slow step
        self._program = PackedProgram(decide, (), self._initial, 2 * p + 3)
        self.n_params = p
        self._inputs = self._program.inputs
        self.log = None

    @property
    def state(self):
        """The hook's state now (NumPy copies)."""
        return self._initial if self._program is None else self._program.carry

    def step(self, estimate, slow_index: int) -> bool:
        theta = estimate.theta
        if self._program is None:
            self._build(int(np.size(theta)))
        inputs, p = self._inputs, self.n_params
        if p:
            inputs[:p] = theta
            inputs[p:2 * p] = estimate.relative_std
        inputs[2 * p] = estimate.converged
        inputs[2 * p + 1] = getattr(estimate, "covariance_ok", True)
        inputs[2 * p + 2] = slow_index
        self.log = self._program()
        return bool(self.log["applied"])


class GuardsUpdater:
    """The model-updating hook's guards (:func:`~rths_ident.hybrid.loop.model_updating.hook_decide`)
    as the step-wise engine runs them when the hook is those guards alone: decided on the
    host (:class:`~rths_ident.hybrid.loop.model_updating.HostHook`, the same decisions and
    state bit for bit) instead of a compiled call per slow step. The interface of
    :class:`ModelUpdater`; :attr:`log` is preallocated and overwritten by every step."""

    def __init__(self, guards: UpdateGuards, hook_state: UpdateHookState, dt_slow: float):
        self._host = HostHook(guards, hook_state, dt_slow)
        self.n_params = int(np.size(hook_state.applied_estimate))
        p = self.n_params
        self.log = {"applied": np.zeros((), bool), "estimate": np.zeros(p), "relative_std": np.zeros(p),
                    "converged": np.zeros((), bool), "covariance_ok": np.zeros((), bool)}
        self._applied, self._estimate, self._relative_std, self._converged, self._covariance_ok = self.log.values()

    @property
    def state(self):
        """The hook's state now and its guards (NumPy copies), as :class:`ModelUpdater` holds them."""
        return self._host.state, self._host.guards

    def step(self, estimate, slow_index: int) -> bool:
        self._estimate[...] = estimate.theta
        self._relative_std[...] = estimate.relative_std
        converged = bool(estimate.converged)
        applied = self._host.decide(self._estimate.tolist(), self._relative_std.tolist(), converged, slow_index)
        self._applied[...] = applied
        self._converged[...] = converged
        self._covariance_ok[...] = bool(getattr(estimate, "covariance_ok", True))
        return applied


def run_stepwise(site, ns, ground_accel_slow, *, updater: ModelUpdater | GuardsUpdater | None = None,
                 check: Callable[[Any, int], str | None] | None = None,
                 on_step: Callable[[int, Any], None] | None = None,
                 pacer=None, safe_stop: SafeStop | None = SafeStop(), stop=None, monitor=None,
                 param_names: tuple = (), logs: StepLogs | None = None):
    """Run slow step by slow step from Python: ``site`` (a
    :class:`~rths_ident.protocols.Site`) and ``ns`` (a
    :class:`~rths_ident.structures.numerical_substructure.NumericalSubstructure`).

    Per step: ``site.step(target)`` → the updater's guards on the site's estimate → (if
    accepted) ``ns.apply_parameters`` → ``ns.step(force, ẍ_g)`` → the next target.
    ``check(step_log, k)`` may return a message to abort (e.g. an actuator limit flag);
    the logs up to and including step ``k`` are then attached to :class:`LoopAborted`, as
    they are when the site or the NS raises. ``on_step(k, step_log)`` is called after
    every step (progress bars, records). ``step_log`` is the step's row of the logs
    (:class:`~rths_ident.hybrid.loop.step_logs.StepRow`: a nested mapping,
    ``step_log["fast"]["limit"]``). Returns the logs stacked like :func:`run_fused`'s
    (``{"fast", "ns", "update"}``).

    The hot path allocates nothing of its own: each step's logs are copied into
    preallocated columns (:class:`~rths_ident.hybrid.loop.step_logs.StepLogs`; pass
    ``logs`` to follow them as they fill, e.g. a test record written from another
    thread: ``logs.count`` rows are complete), the site's and the substructure's results
    are read where they lie (the virtual site and the native substructure return views
    of their output buffers).

    ``pacer`` (a :class:`~rths_ident.hybrid.loop.realtime.RealTimePacer`) holds each step to
    its wall-clock window and times the site's and the NS's shares; a site whose ``step``
    takes ``arrival_s`` is told when each target arrived (the previous NS step's time: a
    predictor–corrector predicts until then and slows down after 0.6·Δt), and its
    ``prepare_realtime()``, if any, runs before the clock starts. When a step fails, ``safe_stop``
    (:class:`~rths_ident.hybrid.loop.safe_stop.SafeStop`; None: leave the site as it is)
    brings the specimen to rest before :class:`LoopAborted` is raised; its error says
    what failed, at which slow step and test time, and how the specimen was left. A
    failing ``on_step`` (the test record cannot be written: a full disk) is such a
    failure too.

    Ctrl-C (:class:`KeyboardInterrupt`) anywhere in the loop is the operator's stop: the
    specimen is brought to rest by the same policy (a second Ctrl-C meanwhile does not
    cut it short) and :class:`~rths_ident.operator_stop.OperatorStopped` is
    raised with the completed steps. With ``safe_stop=None`` (a computation, e.g. a
    scenario's reference run, or a site to be left as it is) Ctrl-C goes through as it is.

    ``stop`` (a :class:`~rths_ident.hybrid.loop.stop_request.StopRequest`: STOP on the live
    page) is read once per slow step, at its end (after ``on_step``): when set, the
    specimen is brought to rest the same way, from the target of step k, and
    :class:`~rths_ident.operator_stop.OperatorStopped` is raised as for Ctrl-C ("stopped by
    the operator (STOP on the live page) at slow step k, t = … s. …"), step k included in
    its logs.

    ``monitor`` (an :class:`~rths_ident.hybrid.fast_side.interlocks.InterlockMonitor`) checks
    the test's interlocks after every step — the site's log, the identifier's estimate
    (``param_names`` name its entries), the NS's next target and response, the step's
    wall-clock time — and the first that trips stops the test through the same safe stop
    (:attr:`LoopAborted.trip` says which, its value and limit, the step and the time).
    """
    ground_accel_slow = np.asarray(ground_accel_slow, dtype=float)
    n_steps = ground_accel_slow.shape[0]
    logs = StepLogs(n_steps) if logs is None else logs
    dt = float(getattr(ns, "dt", np.nan))
    target = ns.initial_target()

    rested: list = []  # the safe stop's result: it runs once, whatever asks for it (a fault, then Ctrl-C)

    def to_rest():
        if not rested:
            rested.append(bring_to_rest(site, target, dt, safe_stop))
        return rested[0]

    def step_time(k: int) -> float | None:
        """Test time of slow step ``k`` [s], as its record and live page say: the
        substructure's own clock when its log has one (a rig's partitioned Newmark starts
        at t = 0: step k is t = k·Δt), else (k + 1)·Δt (a frame test's first step ends at Δt)."""
        if not np.isfinite(dt):
            return None
        clock = logs.columns.get("ns", {}).get("time") if isinstance(logs.columns.get("ns"), dict) else None
        if clock is not None:
            return float(np.asarray(clock[0]).reshape(-1)[0]) + k * dt
        return (k + 1) * dt

    def abort(message: str, k: int, advice: str | None = None, trip=None):
        t = step_time(k)
        where = f"slow step {k}" + (f" (t = {t:.3f} s)" if t is not None else "")
        stopped = to_rest()
        kept = f"the {logs.count} completed slow steps are kept"
        said = stopped.summary or stopped.error  # a rig that stopped itself already said how, in its error
        rest = stopped.describe() if not (said and said in message) else (
            "The rig brought itself to rest as said" if stopped.at_rest else "The rig could not be brought to rest")
        head = message if trip is not None else f"{where} {message}"  # a trip's message says where
        text = f"{head}. {rest}; {kept}." + (f" What to do: {advice}." if advice else "")
        return LoopAborted(text, logs.stacked(), k, safe_stop_logs=stopped.logs, trip=trip)

    def operator_stop(k: int, how: str = "Ctrl-C"):
        t = step_time(k)
        stopped = to_rest()
        text = (f"{operator_stop_text(k, t, how)}. {stopped.describe()}; the {logs.count} completed slow steps "
                "are kept.")
        return OperatorStopped(text, logs.stacked(), k, t, safe_stop_logs=stopped.logs,
                               rest=stopped.describe(), at_rest=stopped.at_rest)

    # paced: the site learns when each target arrived (the NS's time), if it can use it
    takes_arrival = pacer is not None and "arrival_s" in inspect.signature(site.step).parameters
    if updater is not None and updater.n_params is not None and hasattr(ns, "prepare_parameters"):
        ns.prepare_parameters(updater.n_params)  # compiled before the clock starts
    clock = time.perf_counter
    store, row = logs.store, logs.row
    arrival_s = None
    k = 0
    try:
        if pacer is not None:
            prepare = getattr(site, "prepare_realtime", None)
            if prepare is not None:
                prepare()
            pacer.start(n_steps)
        for k in range(n_steps):
            if pacer is not None:
                pacer.begin_step(k)
            step_start = clock()
            in_ns = False
            try:
                site_start = clock()
                reading = site.step(target, arrival_s=arrival_s) if takes_arrival else site.step(target)
                site_end = clock()
                store("fast", k, reading.log)
                applied = False
                if updater is not None and reading.estimate is not None:
                    applied = updater.step(reading.estimate, k)
                    store("update", k, updater.log)
                ns_start, in_ns = clock(), True  # the substructure's share: the update it takes, and its step
                # the substructure gets copies: the site's reading is overwritten by its next step,
                # and a substructure may keep what it is given (OpenSeesSubstructure keeps the feedback)
                if applied:
                    ns.apply_parameters(np.array(reading.estimate.theta))
                next_target, ns_log = ns.step(np.array(reading.force), ground_accel_slow[k])
                ns_end = clock()
                store("ns", k, ns_log)
            except LoopAborted:
                raise
            except Exception as exc:
                if _interrupted(exc):  # Ctrl-C landed inside a C call, which reported it as its own error
                    raise KeyboardInterrupt from exc
                if monitor is not None and in_ns and getattr(exc, "non_finite", False):
                    # a remote NS that sent a non-finite value: its transport refused it, the
                    # NS-divergence interlock is what fired
                    trip = monitor.ns_not_finite(k, str(exc))
                    raise abort(trip.message(), k, getattr(exc, "advice", None), trip=trip) from exc
                site_trip = getattr(exc, "trip", None)  # a site that checks its own interlocks tripped one
                if site_trip is not None:
                    raise abort(str(exc), k, getattr(exc, "advice", None), trip=site_trip) from exc
                raise abort(f"failed: {exc}", k, getattr(exc, "advice", None)) from exc
            logs.count = k + 1
            if monitor is not None:
                try:
                    trip = (monitor.check_site_log(reading.log, k)
                            or monitor.check_estimate(reading.estimate, k, param_names)
                            or monitor.check_ns(next_target, ns_log, k)
                            or monitor.check_deadline(clock() - step_start, k))
                except Exception as exc:
                    if _interrupted(exc):
                        raise KeyboardInterrupt from exc
                    raise abort(f"failed checking the interlocks: {exc}", k) from exc
                if trip is not None:
                    raise abort(trip.message(), k, trip=trip)
            if check is not None:
                message = check(row(k), k)
                if message:
                    raise abort(f"stopped: {message}", k)
            if pacer is not None:
                pacer.end_step(k, ns_end - ns_start, site_end - site_start)
                if takes_arrival:
                    arrival_s = ns_end - ns_start
            if on_step is not None:
                try:
                    on_step(k, row(k))
                except Exception as exc:  # the record cannot be written (a full disk): stop safely
                    raise abort(f"stopped: recording the step failed: {type(exc).__name__}: {exc}", k,
                                getattr(exc, "advice", None)) from exc
            if stop is not None and stop.is_set():  # STOP on the live page: at rest from step k's target
                raise operator_stop(k, stop.how)
            target = next_target  # the site has the last target it was sent until here (a safe stop holds it)
    except KeyboardInterrupt as interrupt:
        if isinstance(interrupt, OperatorStopped) or safe_stop is None:
            raise
        raise operator_stop(k) from None
    finally:
        if pacer is not None:
            pacer.stop()  # the garbage collector resumes, also after a fault
    return logs.stacked()


def _interrupted(exc: BaseException) -> bool:
    """Whether a Ctrl-C is behind ``exc`` (a :class:`KeyboardInterrupt` raised inside a C
    call surfaces as that call's own error, e.g. "returned a result with an exception set",
    with the interrupt as its context)."""
    seen = set()
    while exc is not None and id(exc) not in seen:
        if isinstance(exc, KeyboardInterrupt):
            return True
        seen.add(id(exc))
        exc = exc.__cause__ or exc.__context__
    return False
