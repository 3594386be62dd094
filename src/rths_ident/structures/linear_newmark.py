"""Newmark integration of a LINEAR structure in effective-stiffness form, K̄⁻¹ precomputed.

For M ü + C u̇ + K u = p(t) with constant matrices (massless DOFs allowed: K̄ stays
non-singular), the implicit Newmark(β, γ) step from t_n to t_{n+1} is (seed 004 §2, the
benchmark's ``fcn_num`` as the digest transcribes it; Chopra Table 5.4.2)::

    a0 = 1/(β Δt²)   a1 = γ/(β Δt)   a2 = 1/(β Δt)   a3 = 1/(2β) − 1
    a4 = γ/β − 1     a5 = Δt/2 (γ/β − 2)   a6 = Δt (1 − γ)   a7 = γ Δt
    K̄   = K + a0 M + a1 C
    R̄   = p_{n+1} + M (a0 u_n + a2 u̇_n + a3 ü_n) + C (a1 u_n + a4 u̇_n + a5 ü_n)
    u_{n+1} = K̄⁻¹ R̄
    ü_{n+1} = a0 (u_{n+1} − u_n) − a2 u̇_n − a3 ü_n
    u̇_{n+1} = u̇_n + a6 ü_n + a7 ü_{n+1}

Average acceleration (β = 1/4, γ = 1/2) is the default: unconditionally stable, no
numerical damping. One matrix–vector product per step instead of a solve: this is what a
1024 Hz benchmark loop over 29 equations needs. :class:`~rths_ident.structures.newmark.
NewmarkFixedIteration` solves the same equations with Newton iterations (nonlinear
elements); for a linear structure the two agree to round-off (tested).

Pure functions over a :class:`LinearNewmarkParams` pytree (``vmap``-able over plants or
structures); SI units.
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from rths_ident import small_linalg as sl
from rths_ident.errors import ParameterError

__all__ = ["LinearNewmarkParams", "LinearNewmarkState", "linear_newmark_params", "linear_newmark_init",
           "linear_newmark_step", "linear_newmark_simulate", "newmark_constants"]


class LinearNewmarkParams(NamedTuple):
    """mass M [kg], damping C [N·s/m], stiffness K [N/m] (n, n); ``effective_inverse``
    K̄⁻¹ (n, n); ``constants`` a0…a7 of the module doc (8,)."""

    mass: jax.Array
    damping: jax.Array
    stiffness: jax.Array
    effective_inverse: jax.Array
    constants: jax.Array


class LinearNewmarkState(NamedTuple):
    """u, u̇, ü at t_n (n,) [m, m/s, m/s²] (relative to the ground)."""

    displacement: jax.Array
    velocity: jax.Array
    acceleration: jax.Array


def newmark_constants(dt: float, beta: float = 0.25, gamma: float = 0.5) -> np.ndarray:
    """a0 … a7 of the module doc for time step ``dt`` [s]."""
    if not (np.isfinite(dt) and dt > 0.0):
        raise ParameterError(f"dt must be a time step > 0 [s]; got {dt!r}")
    if not (beta > 0.0 and gamma >= 0.5):
        raise ParameterError(f"implicit Newmark needs beta > 0 and gamma >= 1/2; got beta={beta!r}, gamma={gamma!r}")
    return np.array([1.0 / (beta * dt**2), gamma / (beta * dt), 1.0 / (beta * dt), 0.5 / beta - 1.0,
                     gamma / beta - 1.0, 0.5 * dt * (gamma / beta - 2.0), dt * (1.0 - gamma), gamma * dt])


def linear_newmark_params(mass, damping, stiffness, dt: float, beta: float = 0.25,
                          gamma: float = 0.5) -> LinearNewmarkParams:
    """Check the matrices and precompute K̄⁻¹ (set-up code, concrete arrays)."""
    m, c, k = (np.asarray(a, dtype=float) for a in (mass, damping, stiffness))
    for name, a in (("mass", m), ("damping", c), ("stiffness", k)):
        if a.ndim != 2 or a.shape[0] != a.shape[1] or a.shape != m.shape:
            raise ParameterError(f"{name} must be a square (n, n) matrix like mass {m.shape}; got {a.shape}")
        if not np.all(np.isfinite(a)):
            raise ParameterError(f"{name} must be finite")
    a = newmark_constants(dt, beta, gamma)
    effective = k + a[0] * m + a[1] * c
    if np.linalg.cond(effective) > 1e14:
        raise ParameterError("the effective stiffness K + a0 M + a1 C is singular (a mechanism)")
    return LinearNewmarkParams(jnp.asarray(m), jnp.asarray(c), jnp.asarray(k), jnp.asarray(np.linalg.inv(effective)),
                               jnp.asarray(a))


def linear_newmark_init(n: int) -> LinearNewmarkState:
    """At rest: u = u̇ = ü = 0 (the records start with zeros)."""
    zero = jnp.zeros(n)
    return LinearNewmarkState(zero, zero, zero)


def linear_newmark_step(params: LinearNewmarkParams, state: LinearNewmarkState, load) -> LinearNewmarkState:
    """One step with the external load p_{n+1} (n,) [N] at the END of the step."""
    a = params.constants
    u0, v0, acc0 = state
    # products as multiply-sum (small_linalg), not ``@``: in a vmap-ed batch sharing the
    # matrices, ``@`` is a matrix–matrix dot that XLA:CPU hands to a library (YNNPACK),
    # and that takes the whole loop out of its single kernel (small_loop_kernels)
    rhs = (load + sl.matvec(params.mass, a[0] * u0 + a[2] * v0 + a[3] * acc0)
           + sl.matvec(params.damping, a[1] * u0 + a[4] * v0 + a[5] * acc0))
    u1 = sl.matvec(params.effective_inverse, rhs)
    acc1 = a[0] * (u1 - u0) - a[2] * v0 - a[3] * acc0
    v1 = v0 + a[6] * acc0 + a[7] * acc1
    return LinearNewmarkState(u1, v1, acc1)


def linear_newmark_simulate(params: LinearNewmarkParams, loads) -> LinearNewmarkState:
    """The response to loads (N, n) [N] (loads[k] at t_{k+1}), from rest: stacked states."""
    def body(state, load):
        new = linear_newmark_step(params, state, load)
        return new, new

    return jax.lax.scan(body, linear_newmark_init(params.mass.shape[0]), jnp.asarray(loads))[1]
