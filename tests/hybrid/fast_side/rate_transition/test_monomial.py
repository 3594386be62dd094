import numpy as np
import pytest

import rths_ident  # noqa: F401
from rths_ident.errors import ParameterError
from rths_ident.hybrid.fast_side.rate_transition.monomial import interpolation_matrix, segment_times


@pytest.mark.parametrize("ratio", [40, 80, 160])
def test_cubic_data_reproduced_exactly(ratio):
    coefficients = np.random.default_rng(4).standard_normal(4)
    cubic = lambda t: np.polyval(coefficients[::-1], t)  # noqa: E731
    values = cubic(np.linspace(0, 1, 4))
    samples = interpolation_matrix(4, ratio) @ values
    np.testing.assert_allclose(samples, cubic(segment_times(4, ratio)), rtol=0, atol=1e-13)
    assert samples[-1] == pytest.approx(values[-1], abs=1e-14)  # ends on the prediction


def test_repository_evaluation_points():
    # [REPO]: x02 = linspace(0, 1, 241)[-80:]
    np.testing.assert_allclose(segment_times(4, 80), np.linspace(0, 1, 241)[-80:], rtol=0, atol=1e-15)


def test_conditioning_guard():
    interpolation_matrix(8, 80)  # cond ≈ 2.7e5: accepted
    with pytest.raises(ParameterError, match="condition number"):
        interpolation_matrix(9, 80)  # cond ≈ 2.0e6
    with pytest.raises(ParameterError, match="n_nodes"):
        interpolation_matrix(1, 80)
