"""α-OS: the α-method with operator splitting (Combescure & Pegon 1997), seed 000
§2.5, Eqs. 2.48–2.55 — with the digest's corrections to the garbled Eq. 2.55.

Predictor (2.48)::

    ũ_{n+1} = u_n + Δt u̇_n + (Δt²/2)(1−2β) ü_n,    ũ̇_{n+1} = u̇_n + Δt(1−γ) ü_n

Corrector (2.49): u_{n+1} = ũ_{n+1} + βΔt² ü_{n+1},  u̇_{n+1} = ũ̇_{n+1} + γΔt ü_{n+1}.

α-shifted equilibrium (2.50) with the split restoring force (2.52)
r_{n+1} ≈ r̃_{n+1}(ũ_{n+1}) + K^l (u_{n+1} − ũ_{n+1})::

    M̂ ü_{n+1} = P̂_{n+1},   M̂ = M + (1+α)γΔt C + (1+α)βΔt² K^l                 (2.53–2.54)
    P̂_{n+1} = (1+α)P_{n+1} − αP_n − (1+α)(r̃_{n+1} + C ũ̇_{n+1}) + α(r_n + C u̇_n)  (2.55, corrected)

where r_n = r̃_n + K^l(u_n − ũ_n) and u̇_n are the corrected values of the previous step
(this equals the digest's form α r̃_n + α C ũ̇_n + α(γΔt C + βΔt² K^l) ü_n).

Which version is followed: the thesis prints Eq. 2.55 (seed 000 text, line ~1070) with
"(1 − α) r̃_{n+1}", "α V ũ_n" and "(1 + α) C ũ_{n+1}"; those terms contradict Eq. 2.50
(the α-weights of r_{n+1} and C u̇_{n+1} are 1 + α, and the damping terms act on
velocities). We follow the digest's correction, which is what Eqs. 2.49, 2.50 and 2.52
give when combined, and which reproduces OpenSees ``AlphaOS`` to ~1e-12 (tests).

Parameters
(2.51): α ∈ [−1/3, 0], β = (1−α)²/4, γ = 1/2 − α; α = 0 is the trapezoidal rule.
OpenSees ``integrator AlphaOS α_OS`` uses α_OS = 1 + α (α_OS = 0.9 ↔ α = −0.1,
β = 0.3025, γ = 0.6).

The elements and the physical specimen are evaluated ONCE per step, at the predictor
(ũ, ũ̇): r̃ includes the interface force, and K^l = initial stiffness of the numerical
part + ``params.interface_stiffness`` (the specimen's initial-stiffness estimate).
Unconditionally stable while K^l ≥ the current tangent (softening); conditionally
stable for structures that harden above K^l (documented, not checked).

Note on nonlinear elements: this is the force form of Eq. 2.50 (the forces at ũ_n and
ũ_{n+1} are blended). OpenSees AlphaOS instead evaluates its elements at the blended
displacement (1−α_OS)ũ_n + α_OS ũ_{n+1}; both are identical for linear elements.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import jax

from rths_ident import small_linalg as sl
from rths_ident.errors import ParameterError
from rths_ident.structures.integrator_base import Integrator, StepOutputs
from rths_ident.structures.structure import Structure

__all__ = ["AlphaOSState", "AlphaOS"]


class AlphaOSState(NamedTuple):
    """Committed state at t_n (SI).

    split_restoring_force : r_n = r̃_n + K^l(u_n − ũ_n), numerical + interface [N].
    load : P_n = −m_g ẍ_g(t_n) [N].
    """

    displacement: jax.Array
    velocity: jax.Array
    acceleration: jax.Array
    element_states: tuple
    split_restoring_force: jax.Array
    load: jax.Array


class AlphaOS(Integrator):
    """α-OS with ``alpha`` ∈ [−1/3, 0] (default −0.1, the value of seed 000's code).

    ``beta``/``gamma`` default to (1−α)²/4 and 1/2 − α (Eq. 2.51).
    """

    scheme = "alpha-OS"

    def __init__(self, structure: Structure, alpha: float = -0.1, beta: float | None = None,
                 gamma: float | None = None):
        alpha = float(alpha)
        if not (-1.0 / 3.0 - 1e-12 <= alpha <= 0.0):
            raise ParameterError(f"alpha-OS alpha must be in [-1/3, 0] (seed 000 Eq. 2.51); got {alpha!r}")
        self.alpha = alpha
        self.beta = (1.0 - alpha) ** 2 / 4.0 if beta is None else float(beta)
        self.gamma = 0.5 - alpha if gamma is None else float(gamma)
        super().__init__(structure)

    @classmethod
    def from_opensees_alpha(cls, structure: Structure, alpha_os: float) -> "AlphaOS":
        """From OpenSees' α_OS ∈ [2/3, 1] (α = α_OS − 1)."""
        return cls(structure, alpha=float(alpha_os) - 1.0)

    def scheme_constants(self):
        return self.beta, self.gamma

    def critical_time_step(self, params, dt: float = 1.0 / 4096.0) -> float:
        """``inf``: unconditionally stable for K^l ≥ current tangent (see module doc)."""
        if 2.0 * self.beta >= self.gamma >= 0.5:
            return math.inf
        return super().critical_time_step(params, dt)

    def _initial_state(self, params, dt, u0, v0, a0, states, r0, f0, p0):
        return AlphaOSState(u0, v0, a0, states, r0 + f0, p0)

    def splitting_stiffness(self, params, dt):
        """K^l [N/m]: initial stiffness of the numerical part + interface estimate."""
        return self.structure.linearised_stiffness(params, dt)

    def predicted_displacement(self, params, state, dt):
        return state.displacement + dt * state.velocity + dt**2 * (0.5 - self.beta) * state.acceleration

    def _advance(self, params, state, ground_accel, interface, interface_params, interface_state, dt):
        alpha, beta, gamma = self.alpha, self.beta, self.gamma
        m, c = params.mass, params.damping
        u_pred = self.predicted_displacement(params, state, dt)
        v_pred = state.velocity + dt * (1.0 - gamma) * state.acceleration
        element_states, r_num, column_forces = self.structure.restoring_force(
            params, state.element_states, u_pred, v_pred, dt
        )
        interface_state, f = interface(interface_params, interface_state, u_pred, v_pred, dt)
        r_pred = r_num + f
        k_numerical = self.structure.initial_stiffness(params, dt)
        k_split = k_numerical + params.interface_stiffness  # = splitting_stiffness()
        load = self.structure.ground_load(params, ground_accel)
        m_hat = m + (1.0 + alpha) * gamma * dt * c + (1.0 + alpha) * beta * dt**2 * k_split
        p_hat = (
            (1.0 + alpha) * load
            - alpha * state.load
            - (1.0 + alpha) * (r_pred + sl.matvec(c, v_pred))
            + alpha * (state.split_restoring_force + sl.matvec(c, state.velocity))
        )
        # small_linalg: products and (for n ≤ 8 DOFs) the solve without dot or LAPACK,
        # so the record's loop around this step can be one XLA kernel
        a = sl.solve(m_hat, p_hat)
        u = u_pred + beta * dt**2 * a
        v = v_pred + gamma * dt * a
        correction = u - u_pred
        r_split = r_pred + sl.matvec(k_split, correction)
        r_num_split = r_num + sl.matvec(k_numerical, correction)
        new_state = AlphaOSState(u, v, a, element_states, r_split, load)
        return new_state, interface_state, StepOutputs(u, v, a, r_num_split, f, column_forces)
