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

import jax
import jax.numpy as jnp
import numpy as np

from rths_ident.packed_calls import PackedProgram
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


def _packed_step(step: Callable, n_interface: int, dt: float) -> Callable:
    """``(params, state, inputs) -> (state, {target, log})`` with ``inputs`` = the
    feedback (n,) then ẍ_g: the shape :class:`~rths_ident.packed_calls.PackedProgram` calls."""

    def packed_step(params, state, inputs):
        state, target, log = step(params, state, inputs[:n_interface], inputs[n_interface], dt)
        return state, {"target": target, "log": log}

    return packed_step


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

    The step is one :class:`~rths_ident.packed_calls.PackedProgram` call (compiled once
    per step function, Δt_n and shapes, in this process): the parameters and the state
    stay on the device as byte vectors, the feedback and ẍ_g go in as one float64
    vector, and the next target and the log come back as one byte vector that
    :meth:`step` returns views of. An accepted estimate enters the packed parameters in
    one compiled call too.
    """

    def __init__(self, integrator, params, interface_dofs, dt: float, apply_estimate: Callable | None = None,
                 ns_step: Callable | None = None, state: Any = None):
        self.integrator = integrator
        self.dt = float(dt)
        self.interface_dofs = tuple(int(i) for i in np.atleast_1d(interface_dofs))
        self.n_interface = len(self.interface_dofs)
        step = ns_step if ns_step is not None else native_ns_step(integrator, self.interface_dofs)
        state = integrator.init(params, self.dt) if state is None else state
        # explicit dtypes (no weak types), as a jitted step returns them
        state = jax.tree_util.tree_map(lambda x: jnp.asarray(x, dtype=jnp.asarray(x).dtype), state)
        # compiled now (cached per step, Δt_n and shapes), not in the first slow step of a run
        self._program = PackedProgram(_packed_step(step, self.n_interface, self.dt), params, state,
                                      self.n_interface + 1, cache_key=("native-ns", step, self.dt))
        self._inputs = self._program.inputs
        self._apply_estimate, self._apply, self._apply_size = apply_estimate, None, None

    @property
    def params(self):
        """The NS parameters now (NumPy copies; the hook's accepted estimates included)."""
        return self._program.constants

    @property
    def state(self):
        """The integrator's state now (NumPy copies)."""
        return self._program.carry

    def initial_target(self) -> np.ndarray:
        u = self.integrator.predicted_displacement(self.params, self.state, self.dt)
        return np.asarray(u)[list(self.interface_dofs)]

    def step(self, feedback, ground_accel):
        """One slow step (protocol); returns the next target (n,) and the log (views of
        the call's result, one buffer per step)."""
        inputs, n = self._inputs, self.n_interface
        if n == 1:
            inputs[0] = feedback[0] if np.ndim(feedback) else feedback
        else:
            inputs[:n] = np.reshape(feedback, (n,))
        inputs[n] = ground_accel
        out = self._program()
        return out["target"], out["log"]

    def prepare_parameters(self, n_values: int) -> None:
        """Compile how an estimate of ``n_values`` parameters enters (the step-wise engine
        calls this before a run, so the first update does not compile mid-test; nothing
        to do when this NS cannot be updated)."""
        if self._apply_estimate is None:
            return
        if self._apply is None or self._apply_size != int(n_values):
            self._apply_size = int(n_values)
            self._apply = self._program.constants_update(self._apply_estimate, self._apply_size,
                                                         cache_key=("native-ns-apply", self._apply_estimate))

    def apply_parameters(self, estimate) -> None:
        if self._apply_estimate is None:
            raise TypeError("this native substructure was built without apply_estimate: it cannot be updated")
        if self._apply is None or self._apply_size != np.size(estimate):
            self.prepare_parameters(np.size(estimate))
        self._apply(estimate)

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
