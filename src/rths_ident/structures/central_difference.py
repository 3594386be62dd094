"""Central difference (seed 000 §2.5, used in its Cases 1–3).

Equilibrium at t_{n+1} with v = (u_{n+2} − u_n)/(2Δt), a = (u_{n+2} − 2u_{n+1} + u_n)/Δt²::

    (M/Δt² + C/(2Δt)) u_{n+2} = P_{n+1} − r_{n+1} + (2M/Δt²) u_{n+1} − (M/Δt² − C/(2Δt)) u_n

The displacement u_{n+1} is known at the start of the step (it was solved for in the
previous one): it is :meth:`CentralDifference.predicted_displacement`, the command to
send to a specimen, and the elements (and an interface function) are evaluated there
with the backward-difference velocity (u_{n+1} − u_n)/Δt. A step consumes ẍ_g(t_{n+1})
and f_e(t_{n+1}), and returns the response at t_{n+1} (velocity and acceleration need
u_{n+2}, which it also computes). Start: u_1 = u_0 + Δt u̇_0 + Δt²/2 ü_0 (equivalent to the
usual fictitious u_{−1}).

For linear elements and matrix damping the displacements equal those of explicit
Newmark (β = 0, γ = 1/2). Conditionally stable: Δt ≤ 2/ω_max.
"""

from __future__ import annotations

from typing import NamedTuple

import jax

from rths_ident import small_linalg as sl
from rths_ident.structures.integrator_base import Integrator, StepOutputs

__all__ = ["CentralDifferenceState", "CentralDifference"]


class CentralDifferenceState(NamedTuple):
    """State at t_n plus the already-solved displacement at t_{n+1} (SI)."""

    displacement: jax.Array
    velocity: jax.Array
    acceleration: jax.Array
    element_states: tuple
    next_displacement: jax.Array


class CentralDifference(Integrator):
    """Central-difference integrator (explicit; needs a positive-definite M)."""

    scheme = "central difference"
    needs_positive_definite_mass = True

    def scheme_constants(self):
        return 0.0, 0.5

    def _initial_state(self, params, dt, u0, v0, a0, states, r0, f0, p0):
        u1 = u0 + dt * v0 + 0.5 * dt**2 * a0
        return CentralDifferenceState(u0, v0, a0, states, u1)

    def predicted_displacement(self, params, state, dt):
        return state.next_displacement

    def _advance(self, params, state, ground_accel, interface, interface_params, interface_state, dt):
        m, c = params.mass, params.damping
        u_prev = state.displacement
        u = state.next_displacement
        v_backward = (u - u_prev) / dt
        element_states, r, column_forces = self.structure.restoring_force(
            params, state.element_states, u, v_backward, dt
        )
        interface_state, f = interface(interface_params, interface_state, u, v_backward, dt)
        load = self.structure.ground_load(params, ground_accel)
        lhs = m / dt**2 + c / (2.0 * dt)
        rhs = load - r - f + (2.0 / dt**2) * sl.matvec(m, u) - sl.matvec(m / dt**2 - c / (2.0 * dt), u_prev)
        u_next = sl.solve(lhs, rhs)  # small_linalg: the record's loop can be one XLA kernel
        v = (u_next - u_prev) / (2.0 * dt)
        a = (u_next - 2.0 * u + u_prev) / dt**2
        new_state = CentralDifferenceState(u, v, a, element_states, u_next)
        return new_state, interface_state, StepOutputs(u, v, a, r, f, column_forces)
