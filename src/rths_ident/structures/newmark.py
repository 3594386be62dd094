"""Newmark integrators (seed 000 §2.5, Eqs. 2.56–2.57)::

    u_{n+1} = u_n + Δt u̇_n + (Δt²/2)[(1−2β) ü_n + 2β ü_{n+1}]
    u̇_{n+1} = u̇_n + Δt[(1−γ) ü_n + γ ü_{n+1}]

* :class:`NewmarkFixedIteration` — implicit (default average acceleration β = 1/4,
  γ = 1/2) with a FIXED number of Newton iterations, as used for RTHS in seed 000 (10
  iterations in §2.5, 3 in §4.7.4 and Case 5): the number of evaluations (actuator
  commands) per step is constant. The iteration matrix is the consistent tangent of the
  discrete residual, by forward-mode autodiff through the elements' ``step`` (this
  includes their velocity dependence, ∂r/∂u̇ · γ/(βΔt)), or, with
  ``tangent="element"``, M/(βΔt²) + γC/(βΔt) + Σ element ``tangent`` (∂F/∂x only).
  For a linear structure one iteration gives the exact Newmark solution.
* :class:`ExplicitNewmark` — β = 0 (seed 000 §2.5, the four-step algorithm): predictor
  displacement, restoring force there, then ``[M + γΔt C] ü_{n+1} = P_{n+1} − r_{n+1} −
  C[u̇_n + Δt(1−γ)ü_n]``. Conditionally stable: Δt ≤ 2/ω_max for γ = 1/2.
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp

from rths_ident import small_linalg as sl
from rths_ident.errors import ParameterError
from rths_ident.structures.integrator_base import Integrator, StepOutputs
from rths_ident.structures.structure import Structure

__all__ = ["NewmarkState", "NewmarkFixedIteration", "ExplicitNewmark"]


class NewmarkState(NamedTuple):
    """Committed state at t_n (SI, relative to the ground)."""

    displacement: jax.Array
    velocity: jax.Array
    acceleration: jax.Array
    element_states: tuple


class NewmarkFixedIteration(Integrator):
    """Implicit Newmark(β, γ) with ``iterations`` Newton iterations per step.

    tangent : "autodiff" (consistent tangent of the discrete residual, default) or
        "element" (the elements' ``tangent`` methods; velocity dependence ignored).
    """

    scheme = "implicit Newmark (fixed iterations)"

    def __init__(self, structure: Structure, iterations: int = 3, beta: float = 0.25,
                 gamma: float = 0.5, tangent: str = "autodiff"):
        if int(iterations) < 1:
            raise ParameterError(f"iterations must be >= 1; got {iterations!r}")
        if not (gamma >= 0.5 and beta > 0.0):
            raise ParameterError(
                f"implicit Newmark needs gamma >= 1/2 and beta > 0; got beta={beta!r}, gamma={gamma!r}"
            )
        if tangent not in ("autodiff", "element"):
            raise ParameterError(f"tangent must be 'autodiff' or 'element'; got {tangent!r}")
        self.iterations = int(iterations)
        self.beta = float(beta)
        self.gamma = float(gamma)
        self.tangent = tangent
        super().__init__(structure)

    def scheme_constants(self):
        return self.beta, self.gamma

    def _initial_state(self, params, dt, u0, v0, a0, states, r0, f0, p0):
        return NewmarkState(u0, v0, a0, states)

    def _advance(self, params, state, ground_accel, interface, interface_params, interface_state, dt):
        beta, gamma = self.beta, self.gamma
        structure = self.structure
        m, c = params.mass, params.damping
        load = structure.ground_load(params, ground_accel)
        u_n, v_n, a_n = state.displacement, state.velocity, state.acceleration
        base_u = u_n + dt * v_n + dt**2 * (0.5 - beta) * a_n
        base_v = v_n + dt * (1.0 - gamma) * a_n

        def kinematics(u):
            a = (u - base_u) / (beta * dt**2)
            return base_v + gamma * dt * a, a

        def interface_force(u, v):
            return interface(interface_params, interface_state, u, v, dt)[1]

        def residual(u):
            v, a = kinematics(u)
            _, r, _ = structure.restoring_force(params, state.element_states, u, v, dt)
            res = m @ a + c @ v + r + interface_force(u, v) - load
            return res, res

        def newton_update(_, u):
            if self.tangent == "autodiff":
                jac, res = jax.jacfwd(residual, has_aux=True)(u)
            else:
                v, _ = kinematics(u)
                res = residual(u)[0]
                k_elements = structure.tangent_stiffness(params, state.element_states, u, v, dt)
                k_interface = jax.jacfwd(lambda w: interface_force(w, kinematics(w)[0]))(u)
                jac = m / (beta * dt**2) + c * (gamma / (beta * dt)) + k_elements + k_interface
            return u - jnp.linalg.solve(jac, res)

        u = jax.lax.fori_loop(0, self.iterations, newton_update, u_n)
        v, a = kinematics(u)
        element_states, r, column_forces = structure.restoring_force(params, state.element_states, u, v, dt)
        interface_state, f = interface(interface_params, interface_state, u, v, dt)
        new_state = NewmarkState(u, v, a, element_states)
        return new_state, interface_state, StepOutputs(u, v, a, r, f, column_forces)


class ExplicitNewmark(Integrator):
    """Explicit Newmark (β = 0, default γ = 1/2; seed 000 §2.5, four steps).

    The elements (and an interface function) are evaluated at the predicted
    displacement u_{n+1} = u_n + Δt u̇_n + Δt²/2 ü_n and the predicted velocity
    u̇_n + Δt(1−γ)ü_n (the end-of-step velocity is not known yet: that is what a
    specimen driven by this scheme sees).
    """

    scheme = "explicit Newmark"
    needs_positive_definite_mass = True

    def __init__(self, structure: Structure, gamma: float = 0.5):
        if not gamma >= 0.5:
            raise ParameterError(f"explicit Newmark needs gamma >= 1/2; got {gamma!r}")
        self.gamma = float(gamma)
        super().__init__(structure)

    def scheme_constants(self):
        return 0.0, self.gamma

    def _initial_state(self, params, dt, u0, v0, a0, states, r0, f0, p0):
        return NewmarkState(u0, v0, a0, states)

    def predicted_displacement(self, params, state, dt):
        return state.displacement + dt * state.velocity + 0.5 * dt**2 * state.acceleration

    def _advance(self, params, state, ground_accel, interface, interface_params, interface_state, dt):
        gamma = self.gamma
        m, c = params.mass, params.damping
        u = self.predicted_displacement(params, state, dt)
        v_pred = state.velocity + dt * (1.0 - gamma) * state.acceleration
        element_states, r, column_forces = self.structure.restoring_force(
            params, state.element_states, u, v_pred, dt
        )
        interface_state, f = interface(interface_params, interface_state, u, v_pred, dt)
        load = self.structure.ground_load(params, ground_accel)
        # small_linalg: no dot or LAPACK call, so the record's loop can be one XLA kernel
        a = sl.solve(m + gamma * dt * c, load - r - f - sl.matvec(c, v_pred))
        v = v_pred + gamma * dt * a
        new_state = NewmarkState(u, v, a, element_states)
        return new_state, interface_state, StepOutputs(u, v, a, r, f, column_forces)
