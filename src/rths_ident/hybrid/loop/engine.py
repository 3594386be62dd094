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

from rths_ident.typed_leaves import canonical_state
from rths_ident.operator_stop import OperatorStopped, operator_stop_text
from rths_ident.hybrid.loop.safe_stop import SafeStop, bring_to_rest


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
    """The model-updating hook as the step-wise engine runs it: the guards compiled once,
    their state kept here. ``hook(hook_state, estimate, k) -> (hook_state, applied)``;
    given ``example_estimate`` (an :class:`~rths_ident.estimators.online_identifier.Estimate`
    of the identifier's shapes) it is compiled ahead of time."""

    def __init__(self, hook: Callable, hook_state, example_estimate=None):
        self.state = canonical_state(hook_state)
        self._hook = jax.jit(hook)
        if example_estimate is not None:  # compiled now, not in the first (maybe paced) step
            estimate = canonical_state(example_estimate)
            self._hook = self._hook.lower(self.state, estimate, jnp.asarray(0)).compile()

    def step(self, estimate, slow_index: int) -> bool:
        self.state, applied = self._hook(self.state, estimate, jnp.asarray(slow_index))
        return bool(applied)


def run_stepwise(site, ns, ground_accel_slow, *, updater: ModelUpdater | None = None,
                 check: Callable[[dict, int], str | None] | None = None,
                 on_step: Callable[[int, dict], None] | None = None,
                 pacer=None, safe_stop: SafeStop | None = SafeStop(), stop=None, monitor=None,
                 param_names: tuple = ()):
    """Run slow step by slow step from Python: ``site`` (a
    :class:`~rths_ident.protocols.Site`) and ``ns`` (a
    :class:`~rths_ident.structures.numerical_substructure.NumericalSubstructure`).

    Per step: ``site.step(target)`` → the updater's guards on the site's estimate → (if
    accepted) ``ns.apply_parameters`` → ``ns.step(force, ẍ_g)`` → the next target.
    ``check(step_log, k)`` may return a message to abort (e.g. an actuator limit flag);
    the logs up to and including step ``k`` are then attached to :class:`LoopAborted`, as
    they are when the site or the NS raises. ``on_step(k, step_log)`` is called after
    every step (progress bars, records). Returns the logs stacked like
    :func:`run_fused`'s (``{"fast", "ns", "update"}``).

    ``pacer`` (a :class:`~rths_ident.hybrid.loop.realtime.RealTimePacer`) holds each step to
    its wall-clock window and times the NS's share; a site whose ``step`` takes
    ``arrival_s`` is told when each target arrived (the previous NS step's time: a
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
    per_step: list = []
    ground_accel_slow = np.asarray(ground_accel_slow)
    dt = float(getattr(ns, "dt", np.nan))
    target = ns.initial_target()

    rested: list = []  # the safe stop's result: it runs once, whatever asks for it (a fault, then Ctrl-C)

    def to_rest():
        if not rested:
            rested.append(bring_to_rest(site, target, dt, safe_stop))
        return rested[0]

    def abort(message: str, k: int, advice: str | None = None, trip=None):
        where = f"slow step {k}" + (f" (t = {(k + 1) * dt:.3f} s)" if np.isfinite(dt) else "")
        stopped = to_rest()
        kept = f"the {len(per_step)} completed slow steps are kept"
        said = stopped.summary or stopped.error  # a rig that stopped itself already said how, in its error
        rest = stopped.describe() if not (said and said in message) else (
            "The rig brought itself to rest as said" if stopped.at_rest else "The rig could not be brought to rest")
        head = message if trip is not None else f"{where} {message}"  # a trip's message says where
        text = f"{head}. {rest}; {kept}." + (f" What to do: {advice}." if advice else "")
        return LoopAborted(text, stack_logs(per_step), k, safe_stop_logs=stopped.logs, trip=trip)

    def operator_stop(k: int, how: str = "Ctrl-C"):
        t = (k + 1) * dt if np.isfinite(dt) else None
        stopped = to_rest()
        text = (f"{operator_stop_text(k, t, how)}. {stopped.describe()}; the {len(per_step)} completed slow steps "
                "are kept.")
        return OperatorStopped(text, stack_logs(per_step), k, t, safe_stop_logs=stopped.logs,
                               rest=stopped.describe(), at_rest=stopped.at_rest)

    # paced: the site learns when each target arrived (the NS's time), if it can use it
    arrival_s = None
    takes_arrival = pacer is not None and "arrival_s" in inspect.signature(site.step).parameters
    k = 0
    try:
        if pacer is not None:
            prepare = getattr(site, "prepare_realtime", None)
            if prepare is not None:
                prepare()
            pacer.start()
        for k in range(ground_accel_slow.shape[0]):
            if pacer is not None:
                pacer.begin_step(k)
            step_start = time.perf_counter()
            in_ns = False
            try:
                reading = site.step(target, arrival_s=arrival_s) if arrival_s is not None else site.step(target)
                step_log = {"fast": reading.log}
                if updater is not None and reading.estimate is not None:
                    applied = updater.step(reading.estimate, k)
                    if applied:
                        ns.apply_parameters(np.asarray(reading.estimate.theta))
                    step_log["update"] = jax.device_get(update_log(reading.estimate, applied))
                ns_start, in_ns = time.perf_counter(), True
                next_target, ns_log = ns.step(reading.force, ground_accel_slow[k])
                ns_seconds = time.perf_counter() - ns_start
                step_log["ns"] = ns_log
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
            per_step.append(step_log)
            if monitor is not None:
                try:
                    trip = (monitor.check_site_log(reading.log, k)
                            or monitor.check_estimate(reading.estimate, k, param_names)
                            or monitor.check_ns(next_target, ns_log, k)
                            or monitor.check_deadline(time.perf_counter() - step_start, k))
                except Exception as exc:
                    if _interrupted(exc):
                        raise KeyboardInterrupt from exc
                    raise abort(f"failed checking the interlocks: {exc}", k) from exc
                if trip is not None:
                    raise abort(trip.message(), k, trip=trip)
            if check is not None:
                message = check(step_log, k)
                if message:
                    raise abort(f"stopped: {message}", k)
            if pacer is not None:
                pacer.end_step(k, ns_seconds)
                if takes_arrival:
                    arrival_s = ns_seconds
            if on_step is not None:
                try:
                    on_step(k, step_log)
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
    return stack_logs(per_step)


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


def stack_logs(per_step: list) -> dict:
    """Stack a list of per-step log pytrees along a new leading axis (NumPy)."""
    if not per_step:
        return {}
    return jax.tree_util.tree_map(lambda *xs: np.stack(xs), *per_step)
