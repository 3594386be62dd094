"""The virtual site: the virtual fast side (:mod:`rths_ident.hybrid.fast_side.fast_chunk`)
compiled once per slow step behind the :class:`~rths_ident.protocols.Site` protocol, for
the step-wise engine; its safe stop brings the virtual specimen to rest through the
transition and the compensator (:mod:`rths_ident.hybrid.fast_side.virtual_safe_stop`).
"""

from __future__ import annotations

import math
from typing import Any

import jax
import jax.numpy as jnp
import numpy as np

from rths_ident.hybrid.fast_side.fast_chunk import (
    FastSide,
    fast_params,
    initial_fast_state,
    make_fast_chunk,
    make_identify,
)
from rths_ident.hybrid.fast_side.virtual_safe_stop import command_profile, make_command_chunk
from rths_ident.packed_calls import PackedProgram
from rths_ident.protocols import Estimate, SiteReading
from rths_ident.typed_leaves import canonical_state


def _site_step(side: FastSide):
    """``(fast params, fast state, inputs) -> (fast state, {log, force, estimate})``: the
    fast chunk towards ``inputs[0]`` (the target [m]), then the identifier's estimate.
    ``inputs[1]`` is the fast tick the target arrived at (a paced run measures it), or
    −1 for the transition's configured arrival; a transition without an arrival (DDMRT)
    ignores it."""
    chunk, identify = make_fast_chunk(side), make_identify(side)
    configured = getattr(side.transition.params, "arrival_tick", None)

    def site_step(fp, fs, inputs):
        arrival = None
        if configured is not None:
            arrival = jnp.where(inputs[1] < 0, configured, inputs[1]).astype(jnp.int32)
        fs, log, force = chunk(fp, fs, inputs[:1], arrival)
        estimate = identify(fp, fs)
        return fs, {"log": log, "force": force,
                    "estimate": {"theta": estimate.theta, "relative_std": estimate.relative_std,
                                 "converged": estimate.converged,
                                 "covariance_ok": jnp.asarray(estimate.covariance_ok, dtype=bool)}}

    return site_step


class VirtualSite:
    """The virtual fast side behind the :class:`~rths_ident.protocols.Site` protocol:
    one compiled call per slow step (the fast chunk and the identifier's estimate).

    ``state`` is the fast side's state, kept here between steps; ``params`` its
    parameters (default :func:`fast_params`). The chunk is :func:`make_fast_chunk`'s,
    the one the fused engine compiles too.

    The call is a :class:`~rths_ident.packed_calls.PackedProgram`: the parameters and
    the state stay on the device as one byte vector each (the state's updated in place),
    the target (and, when paced, its arrival tick) goes in as one float64 vector, and the
    log, the force and the estimate come back behind the new state in one byte vector, copied into the site's
    own host buffer that the reading views by name (built once: every step returns the
    same :class:`~rths_ident.protocols.SiteReading`, overwritten by the next step): the
    call crosses three arguments and one result (the new state and the outputs in one
    vector) instead of the trees' ~90 leaves.
    """

    n_interface = 1

    def __init__(self, side: FastSide, seed: int = 123, params: dict | None = None, state: Any = None):
        # compiled ahead of time (shapes are fixed): the first slow step of a run does not
        # pay for the compilation, and a paced test never misses its first deadline
        self.side = side
        params = fast_params(side) if params is None else params
        state = canonical_state(initial_fast_state(side, seed) if state is None else state)
        self._program = PackedProgram(_site_step(side), params, state, self.n_interface + 1)
        self._attach(self._program)

    def _attach(self, program: PackedProgram) -> None:
        """Use ``program`` (its input vector, and its host outputs: the reading every
        step returns, built once)."""
        self._program, self._inputs = program, program.inputs
        self._inputs[self.n_interface] = -1.0
        out = program.host_outputs
        log, estimate = out["log"], out["estimate"]
        self._reading = SiteReading(log["measured"][-1:], out["force"], log,
                                    Estimate(estimate["theta"], estimate["relative_std"], estimate["converged"],
                                             estimate["covariance_ok"]))
        self._stepped = False  # whether a step ran (its last command is where a safe stop starts)
    @property
    def program(self) -> PackedProgram:
        """The compiled call behind :meth:`step` (:class:`~rths_ident.packed_calls.PackedProgram`:
        its parameters, state, inputs and outputs packed)."""
        return self._program

    @property
    def params(self) -> dict:
        """The fast side's parameters (NumPy copies of what the compiled call uses)."""
        return self._program.constants

    @property
    def state(self) -> dict:
        """The fast side's state now (NumPy copies); assigning one restarts from it."""
        return self._program.carry

    @state.setter
    def state(self, state) -> None:
        self._program.carry = canonical_state(state)

    @property
    def uses_arrival(self) -> bool:
        """Whether the rate transition takes the target's arrival time (the
        predictor–corrector: it predicts until then, and slows down after 0.6·Δt)."""
        return hasattr(self.side.transition.params, "arrival_tick")

    def restarted(self, state) -> "VirtualSite":
        """A site at ``state`` sharing this one's compiled step (no recompilation)."""
        site = object.__new__(VirtualSite)
        site.__dict__.update(self.__dict__)
        site._attach(self._program.with_carry(canonical_state(state)))
        return site

    def with_params(self, params: dict, state) -> "VirtualSite":
        """A site sharing this one's compiled step (no recompilation) with other values
        of the fast side's parameters (the same tree and shapes), starting at ``state``
        (e.g. another extra delay of :mod:`rths_ident.hybrid.fast_side.command_delay`)."""
        site = self.restarted(state)
        site._program.constants = params
        return site

    def step(self, target, arrival_s: float | None = None) -> SiteReading:
        """One slow step towards ``target`` [m]. ``arrival_s``: in a paced run, when the
        target arrived after the step's window opened [s] (the NS's time); a
        predictor–corrector then predicts until that fast tick (and slows down after
        0.6·Δt) instead of its configured arrival. The reading is the same object every
        step, its arrays views of this site's output buffer: the next step overwrites
        them (copy what you keep; the step-wise engine copies each step into its logs)."""
        inputs = self._inputs
        inputs[0] = target[0] if np.ndim(target) else target
        if arrival_s is None:
            inputs[1] = -1.0
        else:
            inputs[1] = min(max(math.ceil(arrival_s * self.side.fast_rate - 1e-9), 0), self.side.ratio - 1)
        self._program.call_into_host()
        self._stepped = True
        return self._reading

    @property
    def last_command(self) -> float:
        """The actuator command at the end of the last slow step [m] (0 before any)."""
        return float(self._reading.log["command"][-1]) if self._stepped else 0.0

    def safe_stop(self, last_target, dt_slow: float, policy) -> dict:
        """Hold the actuator's last command, then ramp it to zero, bypassing the rate
        transition and the compensator (:mod:`rths_ident.hybrid.fast_side.virtual_safe_stop`;
        compiled when first needed). Returns the logs stacked per slow step."""

        chunk = jax.jit(make_command_chunk(self.side))
        last = self.last_command  # nothing commanded yet: at rest already
        params, state = self.params, self.state
        per_step = []
        for commands in command_profile(last, self.side.ratio, self.side.ratio / self.side.fast_rate, policy):
            state, log = chunk(params, state, jnp.asarray(commands))
            per_step.append(jax.device_get(log))
        self.state = state
        return jax.tree_util.tree_map(lambda *xs: np.stack(xs), *per_step)

    def close(self) -> None:
        pass
