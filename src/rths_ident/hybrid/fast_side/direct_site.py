"""The direct site: the specimen's model imposed at the interface target, once per slow step.

No actuator, no compensation, no rate transition, no sensors: the specimen model is
driven straight to the target the numerical substructure sent, with the velocity of that
slow step (Δx/Δt_n), and its restoring force goes back. Coupled with a numerical
substructure through the step-wise engine, this is the *ideal partitioned test*: the
purely numerical simulation of the same substructures with the same slow step and the
same integrator. Scenarios whose NS is not a matrix model (an OpenSeesPy frame) use it as
their reference, so that J4 measures what the physical loop (transfer system, delay,
noise, rate transition) adds and nothing else (seed 001's single-rate virtual test is
the same idea).
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
import numpy as np

from rths_ident.protocols import SiteReading
from rths_ident.models import ElementInputs


@functools.lru_cache(maxsize=32)
def _compiled_step(model: type, dt: float):
    def step(params, state, previous, target):
        velocity = (target - previous) / dt
        state, force = model.step(params, state, ElementInputs(target, velocity), dt)
        return state, force

    return jax.jit(step)


class DirectSite:
    """A specimen model of :mod:`rths_ident.models` behind the
    :class:`~rths_ident.protocols.Site` protocol (one interface DOF).

    model : the model class (``init(params)``, ``step(params, state, ElementInputs(x, v), dt)``).
    params : its Params (SI).
    dt : slow step Δt_n [s].
    """

    n_interface = 1

    def __init__(self, model: type, params, dt: float):
        self.model, self.params, self.dt = model, params, float(dt)
        self.state = model.init(params)
        self.previous = jnp.zeros(())
        self._step = _compiled_step(model, self.dt)

    def step(self, target) -> SiteReading:
        x = jnp.asarray(np.reshape(np.asarray(target, dtype=float), (1,))[0])
        self.state, force = self._step(self.params, self.state, self.previous, x)
        self.previous = x
        f = np.asarray(force).reshape(1)
        return SiteReading(displacement=np.asarray(x).reshape(1), force=f,
                           log={"target": np.asarray(x).reshape(1), "force": f})

    def close(self) -> None:
        pass
