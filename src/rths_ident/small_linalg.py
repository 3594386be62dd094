"""Products of small vectors and matrices written as broadcast-multiply-sum; small
Cholesky factorisations and triangular solves written out entry by entry.

``A @ x`` becomes an XLA ``dot``, and a loop with a ``dot`` inside is never emitted as
one kernel by XLA:CPU (:mod:`rths_ident.small_loop_kernels`): the fast-side components
(RLS updates of 3–4 parameters, dAMB's FIR, the QP projection's 3×3 systems, the
maRTHS controller) use these instead. They are elementwise products and sums — XLA
fuses them with their neighbours — and give the same values as ``@`` up to the order
of the additions (rounding). Leading axes broadcast (batches, ``vmap``). A sum over an
axis of at most :data:`MAX_UNROLLED_SIZE` entries is written out as additions
(:func:`summed`), not an XLA ``reduce``: a compiled call sets up buffers for every
reducer computation on every call (:mod:`rths_ident.packed_calls`). For the same reason
max, all, any and argmin over axes of up to :data:`MAX_WRITTEN_OUT` entries are written
out as comparisons and selects (:func:`largest`, :func:`all_of`, :func:`any_of`,
:func:`first_argmin`: no rounding, so the same results as the reductions; the QP
projection of the LuGre identifier uses them).

:func:`cholesky`, :func:`solve_lower`, :func:`solve_lower_transposed` and
:func:`cho_solve` do the same for the factorisations of small filters (the joint UKF's
6×6 covariance, its 1×1 innovation variance): elementwise operations up to
:data:`MAX_UNROLLED_SIZE`, LAPACK above (the conventions of ``jnp.linalg.cholesky`` and
``jax.scipy.linalg`` either way).
"""

from __future__ import annotations

import jax.numpy as jnp


def _written_out(x, axis: int, combine, reduce, largest_size: int):
    """``combine`` folded over ``axis`` of x, left to right, for an axis of at most
    ``largest_size`` entries; ``reduce(x, axis=axis)`` (an XLA ``reduce``) otherwise."""
    x = jnp.asarray(x)
    n = x.shape[axis]
    if n == 0 or n > largest_size:
        return reduce(x, axis=axis)
    total = jnp.take(x, 0, axis=axis)
    for k in range(1, n):
        total = combine(total, jnp.take(x, k, axis=axis))
    return total


def summed(x, axis: int = -1):
    """Σ over ``axis`` of x: for a short axis (≤ :data:`MAX_UNROLLED_SIZE`) written out as
    additions, left to right, instead of an XLA ``reduce`` (each ``reduce`` brings its own
    small reducer computation, and XLA:CPU sets up a buffer per value of every such
    computation on every call of a program: :mod:`rths_ident.packed_calls`)."""
    return _written_out(x, axis, jnp.add, jnp.sum, MAX_UNROLLED_SIZE)


#: comparisons and logical folds (no rounding: any order gives the same result) are
#: written out over axes of up to this many entries
MAX_WRITTEN_OUT = 32


def largest(x, axis: int = -1):
    """max over ``axis`` of x (``jnp.max``: a NaN gives NaN) as ``jnp.maximum`` of its
    entries for an axis of ≤ :data:`MAX_WRITTEN_OUT` entries (no XLA ``reduce``:
    :func:`summed`)."""
    return _written_out(x, axis, jnp.maximum, jnp.max, MAX_WRITTEN_OUT)


def all_of(x, axis: int = -1):
    """``jnp.all`` over ``axis`` as ``&`` of its entries (≤ :data:`MAX_WRITTEN_OUT`)."""
    return _written_out(jnp.asarray(x, dtype=bool), axis, jnp.logical_and, jnp.all, MAX_WRITTEN_OUT)


def any_of(x, axis: int = -1):
    """``jnp.any`` over ``axis`` as ``|`` of its entries (≤ :data:`MAX_WRITTEN_OUT`)."""
    return _written_out(jnp.asarray(x, dtype=bool), axis, jnp.logical_or, jnp.any, MAX_WRITTEN_OUT)


def first_argmin(x):
    """(index, value) of the smallest entry of the last axis of x, the first one where
    several are equal and the first NaN if any (``jnp.argmin``'s choice), written out as
    comparisons and selects for ≤ :data:`MAX_WRITTEN_OUT` entries (a variadic XLA
    ``reduce`` otherwise)."""
    x = jnp.asarray(x)
    n = x.shape[-1]
    if n == 0 or n > MAX_WRITTEN_OUT:
        index = jnp.argmin(x, axis=-1)
        return index, jnp.take_along_axis(x, index[..., None], axis=-1)[..., 0]
    best, index = x[..., 0], jnp.zeros(x.shape[:-1], dtype=int)
    for k in range(1, n):
        value = x[..., k]
        take = (value < best) | (jnp.isnan(value) & ~jnp.isnan(best))
        best, index = jnp.where(take, value, best), jnp.where(take, k, index)
    return index, best


def vdot(x, y):
    """xᵀy over the last axis."""
    return summed(jnp.asarray(x) * jnp.asarray(y), axis=-1)


def matvec(A, x):
    """A x: A (…, m, n), x (…, n) → (…, m)."""
    A, x = jnp.asarray(A), jnp.asarray(x)
    return summed(A * x[..., None, :], axis=-1)


def vecmat(x, A):
    """xᵀ A: x (…, m), A (…, m, n) → (…, n)."""
    A, x = jnp.asarray(A), jnp.asarray(x)
    return summed(x[..., :, None] * A, axis=-2)


def matmul(A, B):
    """A B: A (…, m, k), B (…, k, n) → (…, m, n)."""
    A, B = jnp.asarray(A), jnp.asarray(B)
    return summed(A[..., :, :, None] * B[..., None, :, :], axis=-2)


def outer(x, y):
    """x yᵀ: x (…, m), y (…, n) → (…, m, n)."""
    x, y = jnp.asarray(x), jnp.asarray(y)
    return x[..., :, None] * y[..., None, :]


def quadratic_form(A, B):
    """A B Aᵀ (the covariance propagation of filters): A (…, m, n), B (…, n, n)."""
    return matmul(matmul(A, B), jnp.swapaxes(jnp.asarray(A), -1, -2))


# ------------------------------------------------------------------ small factorisations

#: matrices up to this size are factorised and solved entry by entry (elementwise
#: operations only: no LAPACK call, so a loop around them can stay one kernel); larger
#: ones go to LAPACK (``jnp.linalg.cholesky``, ``solve_triangular``). The unrolled code
#: grows as n³/6 operations, which at n = 8 is still a few hundred.
MAX_UNROLLED_SIZE = 8


def cholesky(A):
    """Lower-triangular L with L Lᵀ = A, A (…, n, n) symmetric positive definite.

    The conventions of ``jnp.linalg.cholesky``: the input is symmetrised first
    ((A + Aᵀ)/2), the strict upper triangle of L is zero, and a matrix that is not
    positive definite (a pivot ≤ 0, LAPACK's ``potrf`` failure) gives NaN in the whole
    lower triangle; a NaN entry gives NaN in the entries that depend on it. n ≤ :data:`MAX_UNROLLED_SIZE`: the Cholesky–Crout recurrence
    written out entry by entry, L_jj = √(A_jj − Σ_{k<j} L_jk²),
    L_ij = (A_ij − Σ_{k<j} L_ik L_jk) / L_jj; larger n: ``jnp.linalg.cholesky``.
    """
    A = jnp.asarray(A)
    n = A.shape[-1]
    if n > MAX_UNROLLED_SIZE:
        return jnp.linalg.cholesky(A)
    A = 0.5 * (A + jnp.swapaxes(A, -1, -2))
    L = [[None] * n for _ in range(n)]
    pivots = []
    for j in range(n):
        pivot = A[..., j, j] - sum(L[j][k] * L[j][k] for k in range(j))
        pivots.append(pivot)
        L[j][j] = jnp.sqrt(pivot)
        for i in range(j + 1, n):
            L[i][j] = (A[..., i, j] - sum(L[i][k] * L[j][k] for k in range(j))) / L[j][j]
    zero = jnp.zeros_like(A[..., 0, 0])
    factor = jnp.stack([jnp.stack([L[i][j] if j <= i else zero for j in range(n)], axis=-1) for i in range(n)],
                       axis=-2)
    # LAPACK's potrf (as JAX calls it) fails on a pivot ≤ 0; a NaN pivot is not caught
    # there but propagates to the entries that depend on it, as it does here
    positive = ~any_of(jnp.stack(pivots, axis=-1) <= 0.0, axis=-1)
    lower = jnp.tril(jnp.ones((n, n), dtype=bool))
    return jnp.where(positive[..., None, None] | ~lower, factor, jnp.nan)


def _as_columns(B, n, name):
    B = jnp.asarray(B)
    if B.ndim < 2 or B.shape[-2] != n:
        raise ValueError(f"{name}: the right-hand side must have shape (…, {n}, k); got {B.shape}")
    return B


def solve_lower(L, B):
    """X with L X = B: L (…, n, n) lower triangular (its upper triangle is not read),
    B (…, n, k). Forward substitution entry by entry for n ≤ :data:`MAX_UNROLLED_SIZE`,
    else ``jax.scipy.linalg.solve_triangular``. A zero on the diagonal gives non-finite
    entries, as LAPACK's ``trsm``."""
    L = jnp.asarray(L)
    n = L.shape[-1]
    B = _as_columns(B, n, "solve_lower")
    if n > MAX_UNROLLED_SIZE:
        from jax.scipy.linalg import solve_triangular  # noqa: PLC0415

        return solve_triangular(L, B, lower=True)
    X = []
    for i in range(n):
        rest = B[..., i, :] - sum(L[..., i, k, None] * X[k] for k in range(i))
        X.append(rest / L[..., i, i, None])
    return jnp.stack(X, axis=-2)


def solve_lower_transposed(L, B):
    """X with Lᵀ X = B: L (…, n, n) lower triangular, B (…, n, k) (back substitution;
    conventions of :func:`solve_lower`)."""
    L = jnp.asarray(L)
    n = L.shape[-1]
    B = _as_columns(B, n, "solve_lower_transposed")
    if n > MAX_UNROLLED_SIZE:
        from jax.scipy.linalg import solve_triangular  # noqa: PLC0415

        return solve_triangular(L, B, lower=True, trans="T")
    X = [None] * n
    for i in reversed(range(n)):
        rest = B[..., i, :] - sum(L[..., k, i, None] * X[k] for k in range(i + 1, n))
        X[i] = rest / L[..., i, i, None]
    return jnp.stack(X, axis=-2)


def cho_solve(L, B):
    """X with (L Lᵀ) X = B from the lower Cholesky factor L (…, n, n) of :func:`cholesky`,
    B (…, n, k) — ``jax.scipy.linalg.cho_solve((L, True), B)``, entry by entry for small n."""
    return solve_lower_transposed(L, solve_lower(L, B))


def solve(A, b):
    """x with A x = b for a general square A (…, n, n), b (…, n) — ``jnp.linalg.solve``
    for one right-hand side. n ≤ :data:`MAX_UNROLLED_SIZE`: Gaussian elimination with
    partial pivoting (the row of largest |a_ij| at or below the diagonal becomes the
    pivot row, as LAPACK's ``getrf`` chooses it), written out entry by entry with
    selects for the row exchanges; larger n: ``jnp.linalg.solve``. A singular A gives
    non-finite entries either way."""
    A, b = jnp.asarray(A), jnp.asarray(b)
    n = A.shape[-1]
    if A.shape[-2:] != (n, n) or b.shape[-1] != n:
        raise ValueError(f"solve: A must be (…, n, n) and b (…, n); got {A.shape} and {b.shape}")
    if n > MAX_UNROLLED_SIZE:
        return jnp.linalg.solve(A, b[..., None])[..., 0]
    rows = [[A[..., i, j] for j in range(n)] + [b[..., i]] for i in range(n)]  # [A | b]
    for j in range(n):
        for i in range(j + 1, n):  # bring the largest |a_ij| (i ≥ j) to row j
            exchange = jnp.abs(rows[i][j]) > jnp.abs(rows[j][j])
            rows[j], rows[i] = ([jnp.where(exchange, low, high) for high, low in zip(rows[j], rows[i])],
                                [jnp.where(exchange, high, low) for high, low in zip(rows[j], rows[i])])
        for i in range(j + 1, n):
            factor = rows[i][j] / rows[j][j]
            rows[i] = rows[i][:j + 1] + [rows[i][k] - factor * rows[j][k] for k in range(j + 1, n + 1)]
    x = [None] * n
    for i in reversed(range(n)):
        x[i] = (rows[i][n] - sum(rows[i][k] * x[k] for k in range(i + 1, n))) / rows[i][i]
    return jnp.stack(x, axis=-1)


def is_positive_definite(A):
    """Whether the symmetric part of A (…, n, n) is positive definite: its Cholesky
    factor (:func:`cholesky`) exists and is finite. A traced boolean (…,)."""
    factor = cholesky(A)
    finite = jnp.isfinite(factor)
    return all_of(finite.reshape(*finite.shape[:-2], -1), axis=-1)
