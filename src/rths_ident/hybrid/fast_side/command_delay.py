"""An extra loop delay and a compensator gain error between the compensation and the
transfer system: what the pre-test check's delay margin sweeps
(:mod:`rths_ident.runner.delay_margin`).

Per fast sample the compensation (or none) turns the target x_t into its command x_c;
this stage then sends the transfer system::

    x_c' = x_t + s · (x_c − x_t)        the compensator's correction scaled by s
    u(t) = x_c'(t − τ)                  held back by the extra delay τ

* τ = ``delay`` [s] ≥ 0, any value up to the buffer's length (``max_delay`` of
  :func:`delayed_compensation`): a delay line of the last commands, read between two
  samples by linear interpolation (exact for τ a whole number of fast steps; the
  command before the test is 0, the specimen at rest);
* s = ``correction_gain`` [-]: 1 the compensator as designed, 1.2 a 20 % gain error
  (over-compensation), 0 no compensation at all. Without a compensator x_c = x_t and s
  does nothing.

With τ = 0 and s = 1 the command is the compensator's own, bit for bit. The
compensator still sees the measurement x_m (the response to the delayed command): an
adaptive one (dAMB) adapts to the delay as it would on a rig whose loop is slower than
designed. The component has the project's shape: :data:`init` / :func:`step` on
:class:`DelayedCommandParams` (the compensation's parameters inside, ``delay`` and
``correction_gain`` leaves a batch can ``vmap`` over).
"""

from __future__ import annotations

import math
import types
from typing import Any, NamedTuple

import jax.numpy as jnp

from rths_ident.errors import ParameterError
from rths_ident.hybrid.fast_side.compensation.inputs import CompensatorInputs
from rths_ident.hybrid.fast_side.fast_chunk import Strategy

__all__ = ["DelayedCommandParams", "DelayedCommandState", "delayed_compensation", "buffer_length"]


class DelayedCommandParams(NamedTuple):
    """inner: the compensation's parameters (None: no compensation); delay: τ [s];
    correction_gain: s [-] (module doc)."""

    inner: Any
    delay: Any
    correction_gain: Any


class DelayedCommandState(NamedTuple):
    """inner: the compensation's state; history: the last commands x_c', newest first [m]."""

    inner: Any
    history: Any


def buffer_length(max_delay: float, fast_rate: float) -> int:
    """Commands kept to delay by up to ``max_delay`` [s] at ``fast_rate`` [Hz] (two more
    than the whole fast steps in it: the sample now and the interpolation's second)."""
    if not (math.isfinite(max_delay) and max_delay >= 0):
        raise ParameterError(f"max_delay = {max_delay!r}: expected a delay ≥ 0 s")
    return int(math.ceil(max_delay * fast_rate - 1e-9)) + 2


def delayed_compensation(compensation: Strategy | None, max_delay: float, fast_rate: float,
                         delay: float = 0.0, correction_gain: float = 1.0) -> Strategy:
    """A :class:`~rths_ident.hybrid.fast_side.fast_chunk.Strategy` of this stage around
    ``compensation`` (None: none), for delays up to ``max_delay`` [s] at ``fast_rate``
    [Hz]; ``delay`` [s] and ``correction_gain`` [-] are its parameters' values."""
    if not (math.isfinite(delay) and 0.0 <= delay <= max_delay):
        raise ParameterError(f"delay = {delay!r}: expected 0 … {max_delay:g} s (max_delay)")
    if not (math.isfinite(correction_gain) and correction_gain >= 0.0):
        raise ParameterError(f"correction_gain = {correction_gain!r}: expected a factor ≥ 0")
    length = buffer_length(max_delay, fast_rate)
    inner = None if compensation is None else compensation.functions

    def init(params: DelayedCommandParams) -> DelayedCommandState:
        return DelayedCommandState(() if inner is None else inner.init(params.inner), jnp.zeros(length))

    def step(params: DelayedCommandParams, state: DelayedCommandState, inputs: CompensatorInputs, dt):
        if inner is None:
            inner_state, command = (), jnp.asarray(inputs.target, jnp.float64)
        else:
            inner_state, command = inner.step(params.inner, state.inner, inputs, dt)
        # x_t + s (x_c − x_t), written so that s = 1 leaves x_c bit for bit
        command = command + (params.correction_gain - 1.0) * (command - inputs.target)
        history = jnp.concatenate([jnp.reshape(command, (1,)), state.history[:-1]])
        position = jnp.clip(params.delay / dt, 0.0, length - 2.0)  # fast steps back
        whole = jnp.floor(position)
        fraction = position - whole
        index = whole.astype(jnp.int32)
        delayed = (1.0 - fraction) * history[index] + fraction * history[index + 1]
        return DelayedCommandState(inner_state, history), delayed

    functions = types.SimpleNamespace(init=init, step=step)
    params = DelayedCommandParams(None if compensation is None else compensation.params,
                                  jnp.asarray(float(delay)), jnp.asarray(float(correction_gain)))
    return Strategy(functions, params)
