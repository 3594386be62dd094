"""The multiply-sum products equal NumPy's matrix products (a second implementation)."""

import numpy as np
import pytest

from rths_ident import small_linalg as sl


@pytest.fixture
def rng():
    return np.random.default_rng(7)


def test_products_equal_numpy(rng):
    A, B = rng.normal(size=(3, 4)), rng.normal(size=(4, 5))
    x, y = rng.normal(size=4), rng.normal(size=3)
    np.testing.assert_allclose(sl.matvec(A, x), A @ x, rtol=1e-14)
    np.testing.assert_allclose(sl.vecmat(y, A), y @ A, rtol=1e-14)
    np.testing.assert_allclose(sl.matmul(A, B), A @ B, rtol=1e-14)
    np.testing.assert_allclose(sl.vdot(x, x), x @ x, rtol=1e-14)
    np.testing.assert_allclose(sl.outer(x, y), np.outer(x, y), rtol=0)
    C = rng.normal(size=(4, 4))
    np.testing.assert_allclose(sl.quadratic_form(A, C), A @ C @ A.T, rtol=1e-13)


def test_short_sums_are_additions_left_to_right_without_a_reduction(rng):
    """Over an axis of at most MAX_UNROLLED_SIZE the sum is written out (x₀ + x₁ + … in
    that order, bit for bit a left-to-right float64 sum), so a compiled product holds no
    XLA reduce (each costs buffers on every call, rths_ident.packed_calls); a longer axis
    is jnp.sum's reduction."""
    import jax  # noqa: PLC0415

    x = rng.normal(size=(5, sl.MAX_UNROLLED_SIZE, 3))
    left_to_right = x[:, 0, :].copy()
    for k in range(1, x.shape[1]):
        left_to_right = left_to_right + x[:, k, :]
    assert np.asarray(sl.summed(x, axis=1)).tobytes() == left_to_right.tobytes()
    A, B = rng.normal(size=(3, 3)), rng.normal(size=(3, 3))
    hlo = jax.jit(lambda A, B, v: (sl.matmul(A, B), sl.matvec(A, v), sl.vecmat(v, A), sl.vdot(v, v))).lower(
        A, B, B[0]).compile().as_text()
    assert " reduce(" not in hlo
    long = rng.normal(size=sl.MAX_UNROLLED_SIZE + 1)
    np.testing.assert_allclose(sl.summed(long), long.sum(), rtol=1e-14)
    assert " reduce(" in jax.jit(sl.summed).lower(long).compile().as_text()


def test_leading_axes_broadcast_like_matmul(rng):
    A, B, x = rng.normal(size=(6, 3, 4)), rng.normal(size=(6, 4, 2)), rng.normal(size=(6, 4))
    np.testing.assert_allclose(sl.matmul(A, B), A @ B, rtol=1e-14)
    np.testing.assert_allclose(sl.matvec(A, x), np.einsum("cij,cj->ci", A, x), rtol=1e-14)
    np.testing.assert_allclose(sl.matvec(A[0], x), x @ A[0].T, rtol=1e-14)  # one matrix, many vectors


# ------------------------------------------------------------------ small factorisations
#
# Error bounds (Higham, Accuracy and Stability of Numerical Algorithms, 2nd ed.; ε the
# unit roundoff 2⁻⁵³, γ_n = nε/(1 − nε)):
# * Cholesky is backward stable componentwise (Thm 10.3): L̂L̂ᵀ = A + ΔA with
#   |ΔA| ≤ γ_{n+1}|L̂||L̂ᵀ|; checked with the residual in extended precision so that its
#   own rounding does not count. Forward: a perturbation ΔA moves the factor by
#   ‖ΔL‖_F/‖L‖_2 ≤ κ₂(A)‖ΔA‖_F/(√2‖A‖_2) to first order (Sun 1991, Higham Thm 10.8),
#   and ‖ΔA‖_F ≤ γ_{n+1} n‖A‖_2, so two backward-stable factors (ours, LAPACK's via
#   NumPy) differ by at most √2 n γ_{n+1} κ₂(A) ‖L‖_2.
# * Triangular substitution is backward stable componentwise (Thm 8.5): (L + ΔL)x̂ = b,
#   |ΔL| ≤ γ_n|L|, so ‖x̂ − x‖∞/‖x‖∞ ≤ γ_n cond(L, x)/(1 − γ_n cond(L)) with Skeel's
#   cond(L, x) = ‖|L⁻¹||L||x|‖∞/‖x‖∞ (Higham §8.2); two such solutions
#   (ours, SciPy's) differ by at most twice that.

EPS = np.finfo(float).eps / 2


def gamma(n):
    return n * EPS / (1 - n * EPS)


def spd(rng, n, condition):
    """A random SPD matrix with 2-norm condition number ``condition`` (eigenvalues
    log-spaced from 1 to 1/condition, random eigenvectors)."""
    Q, _ = np.linalg.qr(rng.normal(size=(n, n)))
    return (Q * np.logspace(0, -np.log10(condition), n)) @ Q.T * 3.7


CASES = [(n, c) for n in (1, 2, 3, 4, 6, 8) for c in (1.0, 1e4, 1e8)]


@pytest.mark.parametrize("n, condition", CASES)
def test_cholesky_is_backward_stable_and_matches_lapack(rng, n, condition):
    A = spd(rng, n, condition)
    A = 0.5 * (A + A.T)  # exactly symmetric (the factor symmetrises, as jnp's)
    L = np.asarray(sl.cholesky(A))
    assert np.all(np.triu(L, 1) == 0.0) and np.all(np.diag(L) > 0)
    residual = np.abs(L.astype(np.longdouble) @ L.T.astype(np.longdouble) - A.astype(np.longdouble))
    assert np.all(residual <= 1.01 * gamma(n + 1) * (np.abs(L) @ np.abs(L.T)))
    reference = np.linalg.cholesky(A)
    bound = np.sqrt(2) * n * gamma(n + 1) * np.linalg.cond(A) * np.linalg.norm(reference, 2)
    assert np.linalg.norm(L - reference) <= bound


def test_cholesky_batches_like_one_by_one(rng):
    As = np.stack([spd(rng, 5, 10.0 ** k) for k in range(4)])
    np.testing.assert_array_equal(sl.cholesky(As), np.stack([sl.cholesky(A) for A in As]))


def test_cholesky_conventions_are_jax_linalg_cholesky():
    """Not positive definite (a negative or zero pivot): NaN in the lower triangle, zero
    above, as jnp.linalg.cholesky (the UKF's NaN guards rely on it); a non-symmetric
    input is symmetrised first; above MAX_UNROLLED_SIZE it is jnp.linalg.cholesky."""
    import jax.numpy as jnp  # noqa: PLC0415

    nan_entry = np.array([[4.0, 1.0, 0.0], [1.0, np.nan, 0.0], [0.0, 0.0, 1.0]])
    np.testing.assert_array_equal(sl.cholesky(nan_entry), jnp.linalg.cholesky(nan_entry))  # NaN where it reaches
    for bad in ([[1.0, 2.0], [2.0, 1.0]], [[1.0, 0.0], [0.0, 0.0]], [[2.0, 1.0, 1.0], [1.0, 2.0, 1.0],
                                                                     [1.0, 1.0, -1.0]]):
        np.testing.assert_array_equal(sl.cholesky(np.array(bad)), jnp.linalg.cholesky(np.array(bad)))
        factor = np.asarray(sl.cholesky(np.array(bad)))
        assert np.all(np.isnan(factor[np.tril_indices(len(bad))])) and np.all(factor[np.triu_indices(len(bad), 1)] == 0)
    skew = np.array([[4.0, 1.0], [3.0, 5.0]])
    np.testing.assert_allclose(sl.cholesky(skew), jnp.linalg.cholesky(skew), rtol=1e-15)
    np.testing.assert_allclose(sl.cholesky(skew), np.linalg.cholesky([[4.0, 2.0], [2.0, 5.0]]), rtol=1e-15)
    big = spd(np.random.default_rng(1), sl.MAX_UNROLLED_SIZE + 1, 100.0)
    np.testing.assert_array_equal(sl.cholesky(big), jnp.linalg.cholesky(big))


def skeel_condition(L, x):
    """cond(L, x) = ‖|L⁻¹||L||x|‖∞/‖x‖∞, column by column of x (n, k) → (k,)."""
    inverse = np.linalg.inv(L)
    return np.max(np.abs(inverse) @ np.abs(L) @ np.abs(x), axis=0) / np.max(np.abs(x), axis=0)


@pytest.mark.parametrize("n, condition", CASES)
def test_triangular_solves_match_scipy(rng, n, condition):
    from scipy.linalg import cho_solve, solve_triangular  # noqa: PLC0415

    A = spd(rng, n, condition)
    L = np.linalg.cholesky(A)
    B = rng.normal(size=(n, 3))
    for ours, theirs, matrix in (
        (sl.solve_lower(L, B), solve_triangular(L, B, lower=True), L),
        (sl.solve_lower_transposed(L, B), solve_triangular(L, B, lower=True, trans="T"), L.T),
    ):
        ours = np.asarray(ours)
        cond = skeel_condition(matrix, theirs)
        error = np.max(np.abs(ours - theirs), axis=0) / np.max(np.abs(theirs), axis=0)
        g = gamma(n) * cond
        assert np.all(error <= 2 * g / (1 - gamma(n) * np.linalg.cond(matrix, np.inf)) + 1e-300)
    # the two substitutions together: cho_solve, checked on its backward error
    # ‖A x̂ − b‖ ≤ (3n + n²) ε |L||Lᵀ||x̂| (Higham §10.1, to first order)
    X = np.asarray(sl.cho_solve(L, B))
    np.testing.assert_allclose(X, cho_solve((L, True), B), rtol=4 * n * EPS * condition, atol=0)
    residual = np.abs(A.astype(np.longdouble) @ X.astype(np.longdouble) - B)
    assert np.all(residual <= 1.01 * (3 * n + n * n) * EPS * (np.abs(L) @ np.abs(L.T) @ np.abs(X)) + n * EPS
                  * np.abs(A) @ np.abs(X))


def test_triangular_solves_read_the_lower_triangle_only_and_fall_back_when_large(rng):
    from scipy.linalg import solve_triangular  # noqa: PLC0415

    L = np.linalg.cholesky(spd(rng, 4, 10.0))
    garbage = L + np.triu(rng.normal(size=(4, 4)), 1)
    B = rng.normal(size=(4, 2))
    np.testing.assert_array_equal(sl.solve_lower(garbage, B), sl.solve_lower(L, B))
    np.testing.assert_array_equal(sl.solve_lower_transposed(garbage, B), sl.solve_lower_transposed(L, B))
    n = sl.MAX_UNROLLED_SIZE + 2
    L = np.linalg.cholesky(spd(rng, n, 10.0))
    B = rng.normal(size=(n, 2))
    np.testing.assert_allclose(sl.solve_lower(L, B), solve_triangular(L, B, lower=True), rtol=1e-13)
    with pytest.raises(ValueError, match=r"solve_lower: the right-hand side must have shape \(…, 4, k\)"):
        sl.solve_lower(np.eye(4), np.ones(4))


# ------------------------------------------------------------------ general solve
#
# Gaussian elimination with partial pivoting is backward stable in practice (Higham
# Thm 9.5: (A + ΔA) x̂ = b, |ΔA| ≤ γ_{3n}|L̂||Û|, with |L̂| ≤ 1 entrywise and a growth
# factor that is small for these random matrices): the normwise backward error
# ‖A x̂ − b‖ / (‖A‖‖x̂‖ + ‖b‖) is checked against 10·n·ε, and the forward error against
# LAPACK's solution (numpy) relative to κ(A).


@pytest.mark.parametrize("n", range(1, sl.MAX_UNROLLED_SIZE + 1))
def test_solve_is_backward_stable_and_agrees_with_lapack(rng, n):
    eps = np.finfo(float).eps
    for trial in range(20):
        A, b = rng.normal(size=(n, n)), rng.normal(size=n)
        if n > 1 and trial % 4 == 0:
            A[0, 0] = 0.0  # no solve without a row exchange
        if trial % 5 == 1:  # ill-conditioned: singular values down to 1e-8
            u, _, vt = np.linalg.svd(A)
            A = u @ np.diag(np.logspace(0, -8, n)) @ vt
        x = np.asarray(sl.solve(A, b))
        backward = np.linalg.norm(A @ x - b) / (np.linalg.norm(A, 2) * np.linalg.norm(x) + np.linalg.norm(b))
        assert backward <= 10 * n * eps, (n, trial, backward)
        reference = np.linalg.solve(A, b)
        forward = np.linalg.norm(x - reference) / np.linalg.norm(reference)
        assert forward <= 20 * n * eps * np.linalg.cond(A), (n, trial, forward)


def test_solve_exchanges_rows_batches_and_falls_back_above_the_bound(rng):
    np.testing.assert_array_equal(sl.solve(np.array([[0.0, 1.0], [1.0, 0.0]]), np.array([2.0, 3.0])), [3.0, 2.0])
    assert not np.all(np.isfinite(sl.solve(np.ones((3, 3)), np.ones(3))))  # singular: non-finite
    A, b = rng.normal(size=(5, 4, 4)), rng.normal(size=(5, 4))
    np.testing.assert_allclose(sl.solve(A, b), np.linalg.solve(A, b[..., None])[..., 0], rtol=1e-12)
    n = sl.MAX_UNROLLED_SIZE + 3
    A, b = rng.normal(size=(n, n)) + n * np.eye(n), rng.normal(size=n)
    np.testing.assert_allclose(sl.solve(A, b), np.linalg.solve(A, b), rtol=1e-13)
    with pytest.raises(ValueError, match="solve"):
        sl.solve(np.ones((3, 3)), np.ones(2))


def test_written_out_max_all_any_and_argmin_equal_numpy_without_a_reduction(rng):
    """largest, all_of, any_of and first_argmin over short axes equal NumPy's max, all,
    any and argmin (NaN included: max gives NaN, argmin the first NaN; ties: the first
    index), and compile without an XLA reduce (each costs buffers on every call)."""
    import jax  # noqa: PLC0415

    x = rng.normal(size=(6, 27))
    x[1, 5] = x[1, 3] = -9.0  # a tie: the first wins
    x[2, 7], x[2, 4] = np.nan, np.nan  # NaNs: the first NaN is argmin's, max is NaN
    x[3, :] = 0.0
    flags = rng.random(size=(6, 27)) < 0.5
    flags[4, :], flags[5, :] = True, False
    with np.errstate(invalid="ignore"):
        expected_max = np.max(x, axis=1)
    fns = (lambda x, f: sl.largest(x, axis=1), lambda x, f: sl.all_of(f, axis=1),
           lambda x, f: sl.any_of(f, axis=1), lambda x, f: sl.first_argmin(x))
    for fn, expected in zip(fns, (expected_max, np.all(flags, axis=1), np.any(flags, axis=1))):
        np.testing.assert_array_equal(np.asarray(fn(x, flags)), expected)
    index, value = sl.first_argmin(x)
    np.testing.assert_array_equal(np.asarray(index), np.argmin(x, axis=1))
    np.testing.assert_array_equal(np.asarray(value), x[np.arange(6), np.argmin(x, axis=1)])
    for fn in fns:
        assert " reduce(" not in jax.jit(fn).lower(x, flags).compile().as_text()
    longer = rng.normal(size=(2, sl.MAX_WRITTEN_OUT + 1))  # beyond: jnp's reductions, the same numbers
    np.testing.assert_array_equal(np.asarray(sl.largest(longer)), np.max(longer, axis=-1))
    np.testing.assert_array_equal(np.asarray(sl.first_argmin(longer)[0]), np.argmin(longer, axis=-1))

