"""The Hermite correction that keeps a rate transition's command continuous: its basis
checked against its defining conditions (numpy's own polynomial derivatives) and the
closed forms of the cubic and quintic Hermite bases."""

import numpy as np
import pytest

from rths_ident.errors import ParameterError
from rths_ident.hybrid.fast_side.rate_transition import continuity as cont


@pytest.mark.parametrize("order", [1, 2, 3])
def test_basis_meets_its_conditions(order):
    for i, coefficients in enumerate(cont.hermite_basis(order)):
        p = np.polynomial.Polynomial(coefficients)
        assert p.degree() <= 2 * order + 1
        for j in range(order + 1):
            assert p.deriv(j)(0.0) == pytest.approx(float(i == j), abs=1e-12)
            assert p.deriv(j)(1.0) == pytest.approx(0.0, abs=1e-11)


def test_cubic_and_quintic_bases_are_the_textbook_ones():
    s = np.linspace(0, 1, 11)
    cubic = cont.correction_matrix(1, 10)
    np.testing.assert_allclose(cubic[:, 0], 1 - 3 * s[1:] ** 2 + 2 * s[1:] ** 3, atol=1e-13)
    np.testing.assert_allclose(cubic[:, 1], s[1:] - 2 * s[1:] ** 2 + s[1:] ** 3, atol=1e-13)
    quintic = cont.correction_matrix(2, 10)
    t = s[1:]
    np.testing.assert_allclose(quintic[:, 0], 1 - 10 * t**3 + 15 * t**4 - 6 * t**5, atol=1e-13)
    np.testing.assert_allclose(quintic[:, 1], t - 6 * t**3 + 8 * t**4 - 3 * t**5, atol=1e-13)
    np.testing.assert_allclose(quintic[:, 2], (t**2 - 3 * t**3 + 3 * t**4 - t**5) / 2, atol=1e-13)


def test_a_longer_window_keeps_the_start_conditions_and_carries_the_rest():
    window = 2.0
    s = np.linspace(0.0, 1.0, 2001)[1:]
    m = cont.correction_matrix(2, 2000, window)
    # column i is W^i H_i(s/W): its i-th derivative at 0 is 1 (finite differences at the start)
    h = 1 / 2000
    assert m[0, 0] == pytest.approx(1.0, abs=1e-6)
    assert (m[1, 1] - m[0, 1]) / h == pytest.approx(1.0, abs=1e-3)
    ends = cont.end_matrix(2, window)
    for i in range(3):
        p = np.polynomial.Polynomial(cont.hermite_basis(2)[i])
        assert ends[0, i] == pytest.approx(window**i * p(1 / window), abs=1e-14)
        assert m[-1, i] == pytest.approx(ends[0, i], abs=1e-14)
    assert np.all(cont.end_matrix(2, 1.0) == 0)


def test_orders_outside_the_range_are_refused():
    with pytest.raises(ParameterError, match="continuity order"):
        cont.correction_matrix(4, 10)
    assert cont.correction_matrix(0, 10).shape == (10, 0)
