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


def test_leading_axes_broadcast_like_matmul(rng):
    A, B, x = rng.normal(size=(6, 3, 4)), rng.normal(size=(6, 4, 2)), rng.normal(size=(6, 4))
    np.testing.assert_allclose(sl.matmul(A, B), A @ B, rtol=1e-14)
    np.testing.assert_allclose(sl.matvec(A, x), np.einsum("cij,cj->ci", A, x), rtol=1e-14)
    np.testing.assert_allclose(sl.matvec(A[0], x), x @ A[0].T, rtol=1e-14)  # one matrix, many vectors
