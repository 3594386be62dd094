"""The maRTHS fast side's closed-form 2×2 inverse (kept elementwise so it vectorises
under vmap) against NumPy's LU inverse."""

import numpy as np

import rths_ident  # noqa: F401  (float64)
from rths_ident.benchmarks.marths.kinematics import jacobian
from rths_ident.benchmarks.marths.site import _inverse_2x2


def test_closed_form_inverse_of_the_coupler_jacobian_equals_numpy():
    for theta in (-0.05, 0.0, 0.003, 0.08):
        j = np.asarray(jacobian(theta))
        inverse = np.asarray(_inverse_2x2(jacobian(theta)))
        np.testing.assert_allclose(inverse, np.linalg.inv(j), rtol=1e-13, atol=0)
        np.testing.assert_allclose(inverse @ j, np.eye(2), rtol=0, atol=1e-13)
