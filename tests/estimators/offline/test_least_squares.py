"""Batch constrained LS (exact QP) and the separable ``ls`` fits on noise-free data."""

import numpy as np
import pytest
from scipy.optimize import lsq_linear

from rths_ident.errors import ParameterError
from rths_ident.estimators.offline import FitData, bounded_linear_least_squares, fit_ls

from offline_synthetic import bilinear_return_map, growing_triangle_wave, lugre_closed_form


def test_inactive_bounds_equal_numpy_lstsq(rng):
    phi = rng.normal(size=(200, 3)) * np.array([1.0, 1e3, 1e-2])  # badly scaled columns
    theta = np.array([2.0, -3e-3, 50.0])
    y = phi @ theta + 0.01 * rng.normal(size=200)
    expected = np.linalg.lstsq(phi, y, rcond=None)[0]
    got = bounded_linear_least_squares(phi, y, lower=[-10, -1, 0], upper=[10, 1, 100])
    np.testing.assert_allclose(got, expected, rtol=1e-9)


def test_noise_free_lip_data_is_recovered_exactly(rng):
    phi = rng.normal(size=(100, 3))
    theta = np.array([1.5, -0.7, 3.0])
    got = bounded_linear_least_squares(phi, phi @ theta)
    np.testing.assert_allclose(got, theta, rtol=1e-11)
    np.testing.assert_allclose(got, np.linalg.lstsq(phi, phi @ theta, rcond=None)[0], rtol=1e-11)


def test_active_bounds_match_scipy_bvls(rng):
    phi = rng.normal(size=(150, 3))
    phi[:, 1] += 0.8 * phi[:, 0]  # correlated columns: the projection is not a clip
    y = phi @ np.array([1.0, -2.0, 0.5]) + 0.05 * rng.normal(size=150)
    lower, upper = np.array([0.0, -1.0, 0.0]), np.array([0.8, 1.0, 0.3])
    got = bounded_linear_least_squares(phi, y, lower, upper)
    reference = lsq_linear(phi, y, bounds=(lower, upper), method="bvls", tol=1e-14).x
    np.testing.assert_allclose(got, reference, atol=1e-9)
    unconstrained = np.linalg.lstsq(phi, y, rcond=None)[0]
    assert np.any(unconstrained < lower) or np.any(unconstrained > upper)  # the bounds matter
    active = np.isclose(got, lower, atol=1e-12) | np.isclose(got, upper, atol=1e-12)
    assert 1 <= active.sum() < 3
    assert not np.allclose(got, np.clip(unconstrained, lower, upper), atol=1e-3)  # not a clip


def test_bad_shapes_and_bounds_raise():
    with pytest.raises(ParameterError, match=r"regressors must be \(N, p\)"):
        bounded_linear_least_squares(np.ones(5), np.ones(5))
    with pytest.raises(ParameterError, match="lower bounds must be <= upper"):
        bounded_linear_least_squares(np.eye(3), np.ones(3), lower=[1, 0, 0], upper=[0, 1, 1])


def test_linear_static_stiffness_is_the_lstsq_slope(rng):
    x = growing_triangle_wave(300, 0.01)
    f = 2.5e6 * x + 50.0 * rng.normal(size=x.size)
    result = fit_ls(FitData.from_arrays(x, f), "linear")
    slope = np.linalg.lstsq(x[:, None], f, rcond=None)[0][0]
    assert result.params["k"] == pytest.approx(slope, rel=1e-10)
    assert result.params["m"] == 0.0 and result.params["c"] == 0.0  # quasi-static: held


def test_lugre_separable_ls_recovers_noise_free_parameters():
    truth = {"sigma0": 2.0e6, "Fc": 2.0e4, "sigma3": 1.0e5}
    x = growing_triangle_wave(400, 0.05)
    f = lugre_closed_form(x, **truth)
    result = fit_ls(FitData.from_arrays(x, f), "lugre", n_starts=2, n_screen=16)
    for name, value in truth.items():
        assert result.params[name] == pytest.approx(value, rel=1e-4), name
    assert result.nrmse_percent < 1e-3


def test_bilinear_separable_ls_recovers_noise_free_parameters():
    truth = {"k": 5.0e6, "fy": 3.0e4, "b": 0.08}
    x = growing_triangle_wave(400, 0.03)
    f = bilinear_return_map(x, **truth)
    result = fit_ls(FitData.from_arrays(x, f), "bilinear", n_starts=2, n_screen=16)
    for name, value in truth.items():
        assert result.params[name] == pytest.approx(value, rel=1e-4), name


def test_ls_is_refused_for_the_degrading_model():
    x = growing_triangle_wave(100, 0.01)
    with pytest.raises(ParameterError, match="'ls' is not available for model 'degrading-boucwen'"):
        fit_ls(FitData.from_arrays(x, 1e6 * x), "degrading-boucwen")


def test_linear_mck_with_physical_time_against_analytic_derivatives():
    # two sines (one frequency alone cannot separate m from k: ẍ = −ω² x); ẋ and ẍ
    # analytic, while the fit differentiates x numerically (second order)
    t = np.linspace(0.0, 3.0, 3001)
    w1, w2 = 2 * np.pi * 1.5, 2 * np.pi * 7.0
    x = 0.01 * np.sin(w1 * t) + 0.002 * np.sin(w2 * t)
    v = 0.01 * w1 * np.cos(w1 * t) + 0.002 * w2 * np.cos(w2 * t)
    a = -0.01 * w1**2 * np.sin(w1 * t) - 0.002 * w2**2 * np.sin(w2 * t)
    m, c, k = 0.356, 5.43, 1540.0
    result = fit_ls(FitData.from_arrays(x, m * a + c * v + k * x, t), "linear")
    assert result.params["k"] == pytest.approx(k, rel=1e-3)
    assert result.params["c"] == pytest.approx(c, rel=1e-3)
    assert result.params["m"] == pytest.approx(m, rel=1e-3)
