"""The native numerical substructure: JAX integrators behind the
:class:`~rths_ident.protocols.NumericalSubstructure` protocol (its calls, units and sign
convention are in :mod:`rths_ident.protocols`), and the backends a test's NS can run on
(:data:`NS_BACKENDS`).

:class:`NativeSubstructure` is the implementation over a native
:class:`~rths_ident.structures.integrator_base.Integrator` (explicit schemes with a
predictor): it calls the same pure functions the fused engine compiles, jitted once.
"""

from __future__ import annotations

from typing import Any, Callable, NamedTuple

import functools

import jax
import jax.numpy as jnp
import numpy as np

from rths_ident.protocols import NumericalSubstructure
from rths_ident.registry import Registry

__all__ = ["NumericalSubstructure", "NativeSubstructure", "native_ns_step", "NSBackend", "NS_BACKENDS"]


def native_ns_step(integrator, interface_dofs, response: Callable | None = None):
    """The pure NS step of a native explicit integrator, as both engines use it:
    ``ns_step(params, state, feedback (n,), ground_accel, dt) -> (state, target (n,), log)``.

    ``interface_dofs`` are the NS DOF indices where the specimen acts; ``response(out)``
    picks the logged response from the integrator's :class:`StepOutputs` (default: all
    displacements, velocities and accelerations).
    """
    dofs = jnp.asarray(interface_dofs, dtype=int)
    n_dof = integrator.structure.n_dof

    def ns_step(params, state, feedback, ground_accel, dt):
        force = jnp.zeros(n_dof).at[dofs].set(jnp.reshape(feedback, (-1,)))
        state, target, out = integrator.step_and_predict(params, state, ground_accel, force, dt)
        if response is None:
            log = {"displacement": out.displacement, "velocity": out.velocity, "acceleration": out.acceleration}
        else:
            log = response(out)
        return state, target[dofs], log

    return ns_step


@functools.lru_cache(maxsize=64)
def _compiled_step(ns_step: Callable, dt: float):
    # one jitted function per (step, Δt_n): a new substructure object does not retrace
    return jax.jit(lambda p, s, f, ag: ns_step(p, s, f, ag, dt))


@functools.lru_cache(maxsize=64)
def _compiled_apply(apply_estimate: Callable):
    return jax.jit(apply_estimate)


class NativeSubstructure:
    """A native (JAX) numerical substructure behind the protocol, for the step-wise engine.

    integrator : an explicit :class:`Integrator` with ``predicted_displacement``
        (α-OS, explicit Newmark, central difference).
    params : its :class:`StructureParams` (the initial model).
    interface_dofs : NS DOF indices of the interface (n ≥ 1).
    dt : slow step Δt_n [s].
    apply_estimate : ``(params, θ̂) -> params`` (traceable), how identified parameters
        enter the numerical elements; None = this NS cannot be updated.
    ns_step : the pure step (default :func:`native_ns_step`); scenarios pass the one
        their fused engine compiles so both engines run the same function.
    state : initial integrator state (default ``integrator.init(params, dt)``).
    """

    def __init__(self, integrator, params, interface_dofs, dt: float, apply_estimate: Callable | None = None,
                 ns_step: Callable | None = None, state: Any = None):
        self.integrator = integrator
        self.params = params
        self.dt = float(dt)
        self.interface_dofs = tuple(int(i) for i in np.atleast_1d(interface_dofs))
        self.n_interface = len(self.interface_dofs)
        step = ns_step if ns_step is not None else native_ns_step(integrator, self.interface_dofs)
        self._step = _compiled_step(step, self.dt)
        self._apply = None if apply_estimate is None else _compiled_apply(apply_estimate)
        state = integrator.init(params, self.dt) if state is None else state
        # explicit dtypes (no weak types): the jitted step is traced once, not again on its own output
        self.state = jax.tree_util.tree_map(lambda x: jnp.asarray(x, dtype=jnp.asarray(x).dtype), state)
        # compile now (result discarded), not in the first slow step of a run
        self._step(self.params, self.state, jnp.zeros(self.n_interface), jnp.asarray(0.0))

    def initial_target(self) -> np.ndarray:
        u = self.integrator.predicted_displacement(self.params, self.state, self.dt)
        return np.asarray(u)[list(self.interface_dofs)]

    def step(self, feedback, ground_accel):
        feedback = jnp.asarray(np.reshape(np.asarray(feedback, dtype=float), (self.n_interface,)))
        self.state, target, log = self._step(self.params, self.state, feedback, jnp.asarray(ground_accel, float))
        return jax.device_get((target, log))

    def apply_parameters(self, estimate) -> None:
        if self._apply is None:
            raise TypeError("this native substructure was built without apply_estimate: it cannot be updated")
        self.params = self._apply(self.params, jnp.asarray(estimate, dtype=float))

    def close(self) -> None:
        pass


class NSBackend(NamedTuple):
    """Where a test's numerical substructure is computed (one registered backend)."""

    description: str
    compiled_with_loop: bool  # True: native JAX, the fused engine can compile it with the loop
    opensees: bool  # True: an OpenSeesPy model (needs openseespy and the system BLAS/LAPACK)


#: numerical-substructure backends by name (test files, ``run --ns``)
NS_BACKENDS: Registry[NSBackend] = Registry("numerical-substructure backend", {
    "native": NSBackend("JAX, compiled with the loop (fused or step-wise engine)", True, False),
    "opensees": NSBackend("an OpenSeesPy model in this process (step-wise engine)", False, True),
    "opensees-tcp": NSBackend("an OpenSeesPy model in a 'rths-ident serve ns' process over the framed protocol "
                              "(step-wise engine; the same numbers as opensees)", False, True),
})
