"""Backward finite differences of a 4-sample tap line (seed 000 Eq. 2.37).

``[x, ẋ, ẍ, x⃛]ᵀ[i] = D(Δt) · [x[i], x[i−1], x[i−2], x[i−3]]ᵀ`` with

    D = [[1,      0,       0,      0     ],
         [1/Δt,  −1/Δt,    0,      0     ],
         [1/Δt², −2/Δt²,   1/Δt²,  0     ],
         [1/Δt³, −3/Δt³,   3/Δt³, −1/Δt³]]

The inverse plant x_c = a_0 x + a_1 ẋ + a_2 ẍ + a_3 x⃛ (Eq. 2.38) is then the FIR filter
x_c[i] = Fᵀ X^tap[i] with F = (aᵀ D)ᵀ (Eq. 2.39).
"""

from __future__ import annotations

import jax
import jax.numpy as jnp

from rths_ident import small_linalg as sl


def difference_matrix(dt) -> jax.Array:
    """D(Δt) of Eq. 2.37; rows give x, ẋ, ẍ, x⃛ from taps newest-first. dt [s]."""
    h1, h2, h3 = 1.0 / dt, 1.0 / dt**2, 1.0 / dt**3
    zero = jnp.zeros_like(jnp.asarray(h1, dtype=jnp.float64))
    one = zero + 1.0
    return jnp.stack(
        [
            jnp.stack([one, zero, zero, zero]),
            jnp.stack([one * h1, -h1 * one, zero, zero]),
            jnp.stack([one * h2, -2.0 * h2 * one, h2 * one, zero]),
            jnp.stack([one * h3, -3.0 * h3 * one, 3.0 * h3 * one, -h3 * one]),
        ]
    )


def derivatives(taps, dt) -> jax.Array:
    """[x, ẋ, ẍ, x⃛] at the newest tap by backward differences. taps: newest first."""
    return sl.matvec(difference_matrix(dt), taps)  # multiply-sum, not dot (small_linalg)


def fir_from_plant_coefficients(plant_coefficients, dt) -> jax.Array:
    """F = (aᵀ D(Δt))ᵀ (Eq. 2.39) for a = [a_0, a_1, a_2, a_3] of the plant
    1/(a_3 s³ + a_2 s² + a_1 s + a_0). Σ F = a_0."""
    return jnp.asarray(plant_coefficients, dtype=jnp.float64) @ difference_matrix(dt)


def push(taps, x) -> jax.Array:
    """Shift a newest-first tap line by one sample and put ``x`` in front."""
    return jnp.concatenate([jnp.reshape(x, (1,)), taps[:-1]])
