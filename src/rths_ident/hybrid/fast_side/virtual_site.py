"""The virtual site: the virtual fast side (:mod:`rths_ident.hybrid.fast_side.fast_chunk`)
compiled once per slow step behind the :class:`~rths_ident.protocols.Site` protocol, for
the step-wise engine; its safe stop brings the virtual specimen to rest through the
transition and the compensator (:mod:`rths_ident.hybrid.fast_side.virtual_safe_stop`).
"""

from __future__ import annotations

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
from rths_ident.protocols import SiteReading
from rths_ident.typed_leaves import canonical_state


class VirtualSite:
    """The virtual fast side behind the :class:`~rths_ident.protocols.Site` protocol:
    one compiled call per slow step (the fast chunk and the identifier's estimate).

    ``state`` is the fast side's state, kept here between steps; ``params`` its
    parameters (default :func:`fast_params`). The chunk is :func:`make_fast_chunk`'s,
    the one the fused engine compiles too.
    """

    n_interface = 1

    def __init__(self, side: FastSide, seed: int = 123, params: dict | None = None, state: Any = None):
        chunk, identify = make_fast_chunk(side), make_identify(side)

        def site_step(fp, fs, target):
            fs, log, force = chunk(fp, fs, target)
            return fs, log, force, identify(fp, fs)

        # compiled ahead of time (shapes are fixed): the first slow step of a run does not
        # pay for the compilation, and a paced test never misses its first deadline
        self.side = side
        self.params = fast_params(side) if params is None else params
        self.state = canonical_state(initial_fast_state(side, seed) if state is None else state)
        target = jnp.zeros(self.n_interface)
        self._step = jax.jit(site_step).lower(self.params, self.state, target).compile()

    @property
    def uses_arrival(self) -> bool:
        """Whether the rate transition takes the target's arrival time (the
        predictor–corrector: it predicts until then, and slows down after 0.6·Δt)."""
        return hasattr(self.side.transition.params, "arrival_tick")

    def prepare_realtime(self) -> None:
        """Compile the step that takes the measured arrival time (a paced run calls this
        before its clock starts)."""
        if self.uses_arrival and getattr(self, "_step_arrival", None) is None:
            chunk, identify = make_fast_chunk(self.side), make_identify(self.side)

            def site_step(fp, fs, target, arrival_tick):
                fs, log, force = chunk(fp, fs, target, arrival_tick)
                return fs, log, force, identify(fp, fs)

            target = jnp.zeros(self.n_interface)
            self._step_arrival = jax.jit(site_step).lower(self.params, self.state, target,
                                                          jnp.asarray(0, dtype=jnp.int32)).compile()

    def restarted(self, state) -> "VirtualSite":
        """A site at ``state`` sharing this one's compiled step (no recompilation)."""
        site = object.__new__(VirtualSite)
        site.__dict__.update(self.__dict__)
        site.state = canonical_state(state)
        return site

    def step(self, target, arrival_s: float | None = None) -> SiteReading:
        """One slow step towards ``target`` [m]. ``arrival_s``: in a paced run, when the
        target arrived after the step's window opened [s] (the NS's time); a
        predictor–corrector then predicts until that fast tick (and slows down after
        0.6·Δt) instead of its configured arrival."""
        target = jnp.asarray(np.reshape(np.asarray(target, dtype=float), (self.n_interface,)))
        if arrival_s is not None and self.uses_arrival:
            self.prepare_realtime()
            tick = int(min(max(np.ceil(arrival_s * self.side.fast_rate - 1e-9), 0), self.side.ratio - 1))
            self.state, log, force, estimate = self._step_arrival(self.params, self.state, target,
                                                                  jnp.asarray(tick, dtype=jnp.int32))
        else:
            self.state, log, force, estimate = self._step(self.params, self.state, target)
        log, force = jax.device_get((log, force))  # one transfer for every leaf
        self.last_command = float(log["command"][-1])
        return SiteReading(displacement=log["measured"][-1:], force=force, log=log, estimate=estimate)

    def safe_stop(self, last_target, dt_slow: float, policy) -> dict:
        """Hold the actuator's last command, then ramp it to zero, bypassing the rate
        transition and the compensator (:mod:`rths_ident.hybrid.fast_side.virtual_safe_stop`;
        compiled when first needed). Returns the logs stacked per slow step."""

        chunk = jax.jit(make_command_chunk(self.side))
        last = getattr(self, "last_command", 0.0)  # nothing commanded yet: at rest already
        per_step = []
        for commands in command_profile(last, self.side.ratio, self.side.ratio / self.side.fast_rate, policy):
            self.state, log = chunk(self.params, self.state, jnp.asarray(commands))
            per_step.append(jax.device_get(log))
        return jax.tree_util.tree_map(lambda *xs: np.stack(xs), *per_step)

    def close(self) -> None:
        pass
