"""Products of small vectors and matrices written as broadcast-multiply-sum.

``A @ x`` becomes an XLA ``dot``, and a loop with a ``dot`` inside is never emitted as
one kernel by XLA:CPU (:mod:`rths_ident.small_loop_kernels`): the fast-side components
(RLS updates of 3–4 parameters, dAMB's FIR, the QP projection's 3×3 systems, the
maRTHS controller) use these instead. They are elementwise products and sums — XLA
fuses them with their neighbours — and give the same values as ``@`` up to the order
of the additions (rounding). Leading axes broadcast (batches, ``vmap``).
"""

from __future__ import annotations

import jax.numpy as jnp


def vdot(x, y):
    """xᵀy over the last axis."""
    return jnp.sum(jnp.asarray(x) * jnp.asarray(y), axis=-1)


def matvec(A, x):
    """A x: A (…, m, n), x (…, n) → (…, m)."""
    A, x = jnp.asarray(A), jnp.asarray(x)
    return jnp.sum(A * x[..., None, :], axis=-1)


def vecmat(x, A):
    """xᵀ A: x (…, m), A (…, m, n) → (…, n)."""
    A, x = jnp.asarray(A), jnp.asarray(x)
    return jnp.sum(x[..., :, None] * A, axis=-2)


def matmul(A, B):
    """A B: A (…, m, k), B (…, k, n) → (…, m, n)."""
    A, B = jnp.asarray(A), jnp.asarray(B)
    return jnp.sum(A[..., :, :, None] * B[..., None, :, :], axis=-2)


def outer(x, y):
    """x yᵀ: x (…, m), y (…, n) → (…, m, n)."""
    x, y = jnp.asarray(x), jnp.asarray(y)
    return x[..., :, None] * y[..., None, :]


def quadratic_form(A, B):
    """A B Aᵀ (the covariance propagation of filters): A (…, m, n), B (…, n, n)."""
    return matmul(matmul(A, B), jnp.swapaxes(jnp.asarray(A), -1, -2))
