"""The two loop engines of a virtual RTHS test: fused and step-wise.

A hybrid test alternates two rates (ARCHITECTURE.md, "One loop, two rates"):

* the **slow side** — the numerical substructure (NS) — advances one step Δt_n with the
  interface force measured at the end of the previous step and produces the next
  interface target;
* the **fast side** — rate transition, compensation, transfer system, specimen, sensors
  and the online estimator — runs ``ratio = Δt_n/Δt_e`` fast steps per slow step;
* between the two, the **model-updating hook** may push the estimator's parameters into
  the NS.

Both engines call the *same* three pure functions, packed in a :class:`SlowStepFunctions`:

``fast_chunk(fast_params, fast_state, slow_input) -> (fast_state, chunk_log, feedback)``
    the whole fast side for one slow step (internally a ``lax.scan`` of ``ratio`` steps);
``ns_step(ns_params, ns_state, feedback, ground_accel) -> (ns_state, slow_input, ns_log)``
    the NS: consume the measured feedback, advance one slow step, emit the next target;
``update(params, states, feedback, slow_index) -> (params, states, update_log)``
    the model-updating hook (may be the identity).

The **fused engine** scans the composition over the whole record in one compiled call
(``jax.lax.scan``); it can be ``vmap``-ed over records, plants or initial guesses. The
**step-wise engine** calls the jitted pieces once per slow step from Python — the path
that lets the NS be OpenSeesPy or a TCP peer — and keeps its logs in NumPy so that a run
that fails halfway leaves everything logged up to the failure readable
(:class:`LoopAborted` carries it).
"""

from __future__ import annotations

from typing import Any, Callable, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np


class SlowStepFunctions(NamedTuple):
    """The pure functions of one slow step (static: hashable Python callables)."""

    fast_chunk: Callable
    ns_step: Callable
    update: Callable


class LoopState(NamedTuple):
    """Everything that evolves, as one pytree."""

    ns_state: Any
    fast_state: Any
    slow_input: Any  # what the NS last sent to the fast side (interface target, ...)
    ns_params: Any  # the NS parameters (changed by the model-updating hook)
    hook_state: Any


class LoopAborted(RuntimeError):
    """Raised by the step-wise engine when a step reports a fatal condition
    (actuator limit, non-finite state). ``.logs`` holds every slow step completed
    before the failure (NumPy arrays), ``.slow_index`` the failing step."""

    def __init__(self, message: str, logs: dict, slow_index: int):
        super().__init__(message)
        self.logs = logs
        self.slow_index = slow_index


def _slow_step(functions: SlowStepFunctions, fast_params, loop_state: LoopState, slow_index, ground_accel):
    fast_state, chunk_log, feedback = functions.fast_chunk(fast_params, loop_state.fast_state, loop_state.slow_input)
    ns_params, hook_state, update_log = functions.update(
        loop_state.ns_params, loop_state.hook_state, fast_state, feedback, slow_index
    )
    ns_state, slow_input, ns_log = functions.ns_step(ns_params, loop_state.ns_state, feedback, ground_accel)
    new_state = LoopState(ns_state, fast_state, slow_input, ns_params, hook_state)
    return new_state, {"fast": chunk_log, "ns": ns_log, "update": update_log}


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


def make_slow_stepper(functions: SlowStepFunctions):
    """A jitted single slow step for the step-wise engine; cache it."""
    return jax.jit(lambda fast_params, state, k, ag: _slow_step(functions, fast_params, state, k, ag))


def run_stepwise(
    slow_stepper: Callable,
    fast_params,
    initial: LoopState,
    ground_accel_slow,
    *,
    check: Callable[[dict, int], str | None] | None = None,
    on_step: Callable[[int, LoopState, dict], None] | None = None,
):
    """Run slow step by slow step from Python.

    ``check(step_log, k)`` may return a message to abort (e.g. an actuator limit flag);
    the logs up to and including step ``k`` are then attached to :class:`LoopAborted`.
    ``on_step`` is called after every step (progress bars, pacing, remote NS I/O).
    Returns the final state and logs stacked like :func:`run_fused`'s.
    """
    state = canonical_state(initial)
    per_step: list = []
    ground_accel_slow = np.asarray(ground_accel_slow)
    for k in range(ground_accel_slow.shape[0]):
        state, log = slow_stepper(fast_params, state, k, ground_accel_slow[k])
        log_np = jax.tree_util.tree_map(np.asarray, log)
        per_step.append(log_np)
        if check is not None:
            message = check(log_np, k)
            if message:
                raise LoopAborted(message, stack_logs(per_step), k)
        if on_step is not None:
            on_step(k, state, log_np)
    return state, stack_logs(per_step)


def canonical_state(state):
    """Every leaf as a JAX array with an explicit dtype (no weak types, no Python
    scalars), i.e. exactly the types a jitted step returns — so the step-wise engine's
    jitted call is traced once, not again after its first output."""

    def leaf(x):
        arr = jnp.asarray(x)
        return jnp.asarray(arr, dtype=arr.dtype)

    return jax.tree_util.tree_map(leaf, state)


def stack_logs(per_step: list) -> dict:
    """Stack a list of per-step log pytrees along a new leading axis (NumPy)."""
    if not per_step:
        return {}
    return jax.tree_util.tree_map(lambda *xs: np.stack(xs), *per_step)
