"""What every time integrator of a numerical substructure shares.

Every integrator is a small object that holds only static configuration (the
:class:`~rths_ident.structures.structure.Structure` and its scheme constants) and whose
methods are pure and JAX-traceable::

    state = integ.init(params, dt)                      # at rest unless told otherwise
    state, out = integ.step(params, state, ground_accel, interface_force, dt)
    state, istate, out = integ.step_coupled(params, state, ground_accel,
                                            interface, interface_params, istate, dt)

* ``ground_accel`` ẍ_g [m/s²] and ``interface_force`` f_e [N, vector over the DOFs] are
  the values at the END of the step (time t_{n+1}).
* The interface force is the physical substructure's restoring force on the numerical
  DOFs. It acts like an internal force: it is SUBTRACTED,
  ``M ü + C u̇ + r(u, u̇) = −m_g ẍ_g − f_e`` (seed 001 Eq. 3.5).
* ``step`` holds ``interface_force`` fixed during the step. For the explicit schemes
  (explicit Newmark, α-OS, central difference) the displacement at the end of the step
  is known before the force is needed: send :meth:`predicted_displacement` to the
  specimen, measure f_e there, then call ``step``; the coupling is then exact.
* ``step_coupled`` takes an *interface function*
  ``interface(interface_params, interface_state, u, v, dt) -> (interface_state, f_e)``
  (pure; e.g. :class:`~rths_ident.structures.elements.InterfaceElement`, a virtual
  specimen) and evaluates it at the trial (u, v) — every Newton iteration of the
  implicit scheme, with its autodiff tangent — so that a virtual hybrid simulation
  closes the loop exactly.

Outputs per step (:class:`StepOutputs`): displacement, velocity, acceleration (relative
to the ground) at t_{n+1}, the numerical restoring force vector, the interface force
applied, and the per-column forces of each element group.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from rths_ident.structures.stability import check_time_step, critical_time_step
from rths_ident.structures.structure import Structure, StructureParams

__all__ = ["StepOutputs", "Integrator", "constant_interface_force"]


class StepOutputs(NamedTuple):
    """Response at the end of a step (SI; relative to the ground).

    displacement, velocity, acceleration : (n,) m, m/s, m/s².
    restoring_force : (n,) N — numerical restoring force K_lin u + Σ element forces.
    interface_force : (n,) N — the physical substructure's force that was subtracted.
    column_forces : tuple of (count,) N — force of each column of each element group.
    """

    displacement: jax.Array
    velocity: jax.Array
    acceleration: jax.Array
    restoring_force: jax.Array
    interface_force: jax.Array
    column_forces: tuple


def constant_interface_force(force, state, u, v, dt):
    """Interface function that ignores (u, v): the force vector is its ``params``."""
    return state, force


def _is_concrete(*values) -> bool:
    leaves = jax.tree_util.tree_leaves(values)
    return not any(isinstance(x, jax.core.Tracer) for x in leaves)


class Integrator:
    """Base class; subclasses implement ``_initial_state`` and ``_advance``."""

    scheme = "integrator"
    needs_positive_definite_mass = False

    def __init__(self, structure: Structure):
        if not isinstance(structure, Structure):
            raise TypeError(f"{type(self).__name__} needs a Structure; got {type(structure).__name__}")
        self.structure = structure
        self._simulate_jit = jax.jit(self._simulate)
        self._simulate_coupled_jit = jax.jit(self._simulate_coupled, static_argnums=(3,))

    def __repr__(self) -> str:
        return f"{type(self).__name__}(n_dof={self.structure.n_dof})"

    # -- stability ----------------------------------------------------------------
    def scheme_constants(self) -> tuple[float, float]:
        """(β, γ) of the Newmark-family scheme used for the stability limit."""
        raise NotImplementedError

    def critical_time_step(self, params: StructureParams, dt: float = 1.0 / 4096.0) -> float:
        """Largest stable Δt [s] for the linearised coupled structure (``inf`` if
        unconditionally stable). ``dt`` is only passed to the elements' ``tangent``."""
        beta, gamma = self.scheme_constants()
        k = np.asarray(self.structure.linearised_stiffness(params, dt))
        return critical_time_step(np.asarray(params.mass), k, beta, gamma)

    def check_time_step(self, params: StructureParams, dt: float) -> float:
        """Raise :class:`~rths_ident.structures.stability.TimeStepError` if ``dt``
        exceeds :meth:`critical_time_step`; return the limit."""
        if not (math.isfinite(float(dt)) and float(dt) > 0.0):
            raise ValueError(f"dt must be a positive time step [s]; got {dt!r}")
        limit = self.critical_time_step(params, float(dt))
        check_time_step(float(dt), limit, self.scheme)
        return limit

    # -- initial state ------------------------------------------------------------
    def _vector(self, name: str, value):
        """(n,) float64 array from ``value`` (None → zeros); a clear error otherwise."""
        n = self.structure.n_dof
        if value is None:
            return jnp.zeros(n)
        arr = jnp.asarray(value, dtype=jnp.float64)
        if arr.ndim == 0:
            return jnp.broadcast_to(arr, (n,))
        if arr.shape != (n,):
            raise ValueError(f"{name} must be a vector of {n} values (one per DOF) or a scalar; got shape {arr.shape}")
        return arr

    def _initial_kinematics(self, params, dt, displacement0, velocity0, ground_accel0, interface_force0):
        u0 = self._vector("displacement0 [m]", displacement0)
        v0 = self._vector("velocity0 [m/s]", velocity0)
        f0 = self._vector("interface_force0 [N]", interface_force0)
        states = self.structure.init_element_states(params)
        states, r0, _ = self.structure.restoring_force(params, states, u0, v0, dt)
        p0 = self.structure.ground_load(params, ground_accel0)
        rhs = p0 - params.damping @ v0 - r0 - f0
        at_rest = jnp.all(rhs == 0.0)
        a0 = jnp.where(at_rest, 0.0, jnp.linalg.solve(params.mass, jnp.where(at_rest, 1.0, rhs)))
        return u0, v0, a0, states, r0, f0, p0

    def init(
        self,
        params: StructureParams,
        dt,
        displacement0=None,
        velocity0=None,
        ground_accel0=0.0,
        interface_force0=None,
        check_stability: bool = True,
    ):
        """Initial state at t_0: displacement/velocity [m, m/s] (default zero), the
        acceleration from equilibrium with ẍ_g(t_0) = ``ground_accel0`` [m/s²] and
        ``interface_force0`` [N]. Element states start virgin and are stepped once to
        ``displacement0``. With concrete params and dt, the time step is checked against
        :meth:`critical_time_step` (:class:`TimeStepError`)."""
        if check_stability and _is_concrete(params, dt):
            self.structure.check_params(params)
            if self.needs_positive_definite_mass:
                eig = np.linalg.eigvalsh(np.asarray(params.mass))
                if eig.min() <= 0.0:
                    raise ValueError(
                        f"{self.scheme} needs a positive-definite mass matrix (smallest "
                        f"eigenvalue {eig.min():.3g} kg); condense massless DOFs first"
                    )
            self.check_time_step(params, dt)
        kin = self._initial_kinematics(params, dt, displacement0, velocity0, ground_accel0, interface_force0)
        return self._initial_state(params, dt, *kin)

    def _initial_state(self, params, dt, u0, v0, a0, states, r0, f0, p0):
        raise NotImplementedError

    # -- stepping -------------------------------------------------------------------
    def _advance(self, params, state, ground_accel, interface, interface_params, interface_state, dt):
        raise NotImplementedError

    def step(self, params: StructureParams, state, ground_accel, interface_force, dt):
        """One step to t_{n+1}; ``interface_force`` [N] (n,) held fixed (None = zero)."""
        force = self._vector("interface_force [N]", interface_force)
        state, _, out = self._advance(params, state, ground_accel, constant_interface_force, force, None, dt)
        return state, out

    def step_coupled(self, params, state, ground_accel, interface, interface_params, interface_state, dt):
        """One step with the interface force evaluated at the trial response:
        returns ``(state, interface_state, outputs)``."""
        return self._advance(params, state, ground_accel, interface, interface_params, interface_state, dt)

    def predicted_displacement(self, params: StructureParams, state, dt):
        """Displacement at t_{n+1} known before the step (explicit schemes): the target
        to send to the physical substructure."""
        raise NotImplementedError(
            f"{self.scheme} is implicit: its end-of-step displacement is only known after "
            "the iterations; use step_coupled with an interface function"
        )

    def step_and_predict(self, params: StructureParams, state, ground_accel, interface_force, dt):
        """Explicit schemes, for a loop engine: consume the force measured at the last
        target, advance one step, and return ``(state, next_target, outputs)`` where
        ``next_target`` is :meth:`predicted_displacement` of the new state (the
        displacements [m] to impose on the specimen next)."""
        state, out = self.step(params, state, ground_accel, interface_force, dt)
        return state, self.predicted_displacement(params, state, dt), out

    # -- whole records (lax.scan; jitted once per integrator instance) ---------------
    def _simulate(self, params, state, ground_accel, interface_forces, dt):
        def body(carry, inputs):
            ag, f = inputs
            new, out = self.step(params, carry, ag, f, dt)
            return new, out

        return jax.lax.scan(body, state, (ground_accel, interface_forces))

    def _simulate_coupled(self, params, state, ground_accel, interface, interface_params, interface_state, dt):
        def body(carry, ag):
            s, istate = carry
            s, istate, out = self._advance(params, s, ag, interface, interface_params, istate, dt)
            return (s, istate), out

        return jax.lax.scan(body, (state, interface_state), ground_accel)

    def simulate(self, params, ground_accel, dt, interface_forces=None, state=None):
        """Run a ground-acceleration record ẍ_g [m/s²] at t_1, t_2, … (``dt`` apart)
        from ``state`` (default at rest); ``interface_forces`` (N, n) [N] per step.
        Returns ``(final_state, StepOutputs stacked over steps)``."""
        ag = jnp.asarray(ground_accel, dtype=jnp.float64)
        if ag.ndim != 1:
            raise ValueError(f"ground_accel must be a 1-D record [m/s²]; got shape {ag.shape}")
        shape = (ag.shape[0], self.structure.n_dof)
        if interface_forces is None:
            interface_forces = jnp.zeros(shape)
        elif jnp.shape(interface_forces) != shape:
            raise ValueError(
                f"interface_forces must have shape (steps, DOFs) = {shape} [N]; got {jnp.shape(interface_forces)}"
            )
        if state is None:
            state = self.init(params, dt)
        return self._simulate_jit(params, state, ag, jnp.asarray(interface_forces, dtype=jnp.float64), dt)

    def simulate_coupled(self, params, ground_accel, dt, interface, interface_params, interface_state=None, state=None):
        """Like :meth:`simulate` with an interface function (e.g. the removed column as a
        virtual specimen). Returns ``(final_state, final_interface_state, outputs)``."""
        ag = jnp.asarray(ground_accel, dtype=jnp.float64)
        if state is None:
            state = self.init(params, dt)
        if interface_state is None:
            interface_state = interface.init(interface_params)
        (state, istate), out = self._simulate_coupled_jit(
            params, state, ag, interface, interface_params, interface_state, dt
        )
        return state, istate, out
