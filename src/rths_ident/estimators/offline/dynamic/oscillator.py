"""The single-degree-of-freedom oscillator of a dynamic test, integrated on sub-steps
with a registered model as its restoring force:

    m ÿ + c ẏ + F_model(y, ẏ; history) = p(t),   p = u (a force on the mass)
                                              or p = −m a_g (a ground acceleration;
                                                 y is then relative to the ground)

Integrator: explicit central differences in velocity-Verlet form on a step h = Δt/S
(second order; stable while ω h < 2, with ω² the largest tangent stiffness over m):

    v_½ = v_k + (h/2) a_k,   y_{k+1} = y_k + h v_½,
    F_{k+1} = model.step(state_k, (y_{k+1}, v_½ + (h/2) a_k)),
    a_{k+1} = (p_{k+1} − c v_½ − F_{k+1}) / (m + c h/2),   v_{k+1} = v_½ + (h/2) a_{k+1}

The restoring force is the model's own ``step`` (its committed state advanced by the
displacement increment, its velocity input a second-order predictor of ẏ_{k+1}), so a
fitted model is the model the library runs elsewhere; the viscous term is implicit in
the half step. One call of ``step`` per sub-step, all in one ``jax.lax.scan``: pure,
``jit``/``jacfwd``/``vmap``-able. The oscillator starts at rest (y = ẏ = 0, the model's
virgin state).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from rths_ident.models.base import ElementInputs

__all__ = ["simulate_substeps"]


def simulate_substeps(model_cls, params, mass, damping, excitation, h, output_kind: str, ground_acceleration=None):
    """The oscillator's response at every sub-step instant (module docstring).

    ``excitation``: p [N] at the (N − 1)·S + 1 sub-step instants (for a ground
    acceleration, p = −m a_g); ``h`` the sub-step [s]; ``output_kind``:
    ``displacement`` y, ``velocity`` ẏ or ``acceleration`` (ÿ, plus ``ground_acceleration``
    a_g at the same instants when given: the absolute acceleration). Returns an array of
    the length of ``excitation``.
    """
    excitation = jnp.asarray(excitation)
    zero = jnp.zeros((), dtype=excitation.dtype)
    a0 = (excitation[0] - 0.0) / mass  # at rest: F = 0, v = 0
    half = 0.5 * h

    def substep(carry, p_next):
        y, v, a, state = carry
        v_half = v + half * a
        y_next = y + h * v_half
        state_next, force = model_cls.step(params, state, ElementInputs(y_next, v_half + half * a), h)
        a_next = (p_next - damping * v_half - force) / (mass + damping * half)
        v_next = v_half + half * a_next
        out = {"displacement": y_next, "velocity": v_next, "acceleration": a_next}[output_kind]
        return (y_next, v_next, a_next, state_next), out

    first = {"displacement": zero, "velocity": zero, "acceleration": a0}[output_kind]
    _, rest = jax.lax.scan(substep, (zero, zero, a0, model_cls.init(params)), excitation[1:])
    response = jnp.concatenate([jnp.reshape(first, (1,)), rest])
    if output_kind == "acceleration" and ground_acceleration is not None:
        response = response + jnp.asarray(ground_acceleration)
    return response
