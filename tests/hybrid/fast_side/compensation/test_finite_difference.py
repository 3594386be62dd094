import numpy as np

import rths_ident  # noqa: F401
from rths_ident.hybrid.fast_side.compensation.finite_difference import derivatives, fir_from_plant_coefficients


def test_repository_initial_fir():
    # digest 000 §4.3 [REPO]: a = [1, 0.02, 8e-5, 2e-7], dt = 0.02 s -> F0.
    fir = np.asarray(fir_from_plant_coefficients([1.0, 0.02, 8e-5, 2e-7], 0.02))
    np.testing.assert_allclose(fir, [2.225, -1.475, 0.275, -0.025], rtol=0, atol=1e-12)
    assert abs(fir.sum() - 1.0) < 1e-12


def test_backward_differences_of_a_cubic():
    h, t = 0.01, 0.37
    taps = np.array([(t - k * h) ** 3 for k in range(4)])
    x, v, a, j = np.asarray(derivatives(taps, h))
    # closed forms of the backward differences of t^3
    assert abs(x - t**3) < 1e-15
    assert abs(v - (3 * t**2 - 3 * t * h + h**2)) < 1e-12
    assert abs(a - (6 * t - 6 * h)) < 1e-9
    assert abs(j - 6.0) < 1e-6
