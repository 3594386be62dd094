"""Scaled sigma points against filterpy and against the closed-form moments."""

import numpy as np
import pytest
from filterpy.kalman import MerweScaledSigmaPoints as FilterpyPoints
from scipy.linalg import sqrtm

import jax.numpy as jnp

from rths_ident.estimators.sigma_points import MerweScaledSigmaPoints, merwe_scaled_weights


def random_covariance(n, seed):
    rng = np.random.default_rng(seed)
    a = rng.standard_normal((n, n))
    scales = np.diag(10.0 ** rng.uniform(-3, 3, n))  # very different units per state
    return scales @ (a @ a.T + n * np.eye(n)) @ scales


@pytest.mark.parametrize(
    "n, alpha, beta, kappa", [(1, 1.0, 2.0, 0.0), (2, 0.1, 2.0, 1.0), (4, 1e-3, 2.0, 0.0), (7, 0.5, 0.0, -4.0)]
)
def test_weights_and_points_equal_filterpys(n, alpha, beta, kappa):
    ours = MerweScaledSigmaPoints(n, alpha, beta, kappa)
    ref = FilterpyPoints(n, alpha, beta, kappa)
    np.testing.assert_allclose(ours.Wm, ref.Wm, rtol=1e-14)
    np.testing.assert_allclose(ours.Wc, ref.Wc, rtol=1e-14)
    assert ours.num_sigmas() == ref.num_sigmas() == 2 * n + 1
    x = np.linspace(-1.0, 2.0, n)
    P = random_covariance(n, seed=n)
    expected = ref.sigma_points(x, P)
    got = np.asarray(ours.sigma_points(x, P))
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12 * np.abs(expected).max())


def test_points_reproduce_mean_and_covariance_exactly():
    # Σ Wm χ = x and Σ Wc (χ − x)(χ − x)ᵀ − (1 − α² + β)·0 = P: the central point has
    # zero deviation and the 2n others carry (n+λ)P with weight 1/(2(n+λ)) each.
    n, alpha, beta, kappa = 5, 0.3, 2.0, 0.5
    pts = MerweScaledSigmaPoints(n, alpha, beta, kappa)
    x = np.arange(1.0, n + 1.0)
    P = random_covariance(n, seed=3)
    sig = np.asarray(pts.sigma_points(x, P))
    mean = pts.Wm @ sig
    dev = sig - x
    cov = dev.T @ np.diag(pts.Wc) @ dev
    np.testing.assert_allclose(mean, x, rtol=1e-13)
    np.testing.assert_allclose(cov, P, rtol=1e-10, atol=1e-12 * np.abs(P).max())
    assert pts.Wm.sum() == pytest.approx(1.0, rel=1e-14)


def test_scalar_inputs_and_custom_sqrt_and_subtract_match_filterpy():
    ours = MerweScaledSigmaPoints(1, 0.5, 2.0, 1.0)
    ref = FilterpyPoints(1, 0.5, 2.0, 1.0)
    np.testing.assert_allclose(np.asarray(ours.sigma_points(5.0, 9.0)), ref.sigma_points(5.0, 9.0), rtol=1e-14)

    def sym_sqrt_jax(a):  # symmetric square root by eigen-decomposition
        w, v = jnp.linalg.eigh(a)
        return (v * jnp.sqrt(w)) @ v.T

    def wrap_angle_jax(a, b):
        d = a - b
        return d.at[0].set(jnp.mod(d[0] + jnp.pi, 2 * jnp.pi) - jnp.pi)

    def wrap_angle_np(a, b):
        d = np.subtract(a, b)
        d[0] = np.mod(d[0] + np.pi, 2 * np.pi) - np.pi
        return d

    ours = MerweScaledSigmaPoints(3, 0.8, 2.0, 0.0, sqrt_method=sym_sqrt_jax, subtract=wrap_angle_jax)
    ref = FilterpyPoints(3, 0.8, 2.0, 0.0, sqrt_method=lambda a: np.real(sqrtm(a)), subtract=wrap_angle_np)
    x = np.array([3.0, 0.2, -1.0])
    P = random_covariance(3, seed=11) * 1e-2 + np.diag([1.0, 0.0, 0.0])
    np.testing.assert_allclose(np.asarray(ours.sigma_points(x, P)), ref.sigma_points(x, P), rtol=1e-9, atol=1e-10)


def test_bad_inputs_raise_clear_errors():
    with pytest.raises(ValueError, match="alpha"):
        MerweScaledSigmaPoints(2, 0.0, 2.0, 0.0)
    with pytest.raises(ValueError, match="positive integer"):
        merwe_scaled_weights(0, 1.0, 2.0, 0.0)
    with pytest.raises(ValueError, match=r"n \+ λ"):
        merwe_scaled_weights(2, 1.0, 2.0, -2.0)
    pts = MerweScaledSigmaPoints(2, 1.0, 2.0, 0.0)
    with pytest.raises(ValueError, match=r"x must have shape \(2,\)"):
        pts.sigma_points(np.zeros(3), np.eye(2))
    with pytest.raises(ValueError, match=r"P must have shape \(2, 2\)"):
        pts.sigma_points(np.zeros(2), np.eye(3))


# --------------------------------------------------------------------------------------
# Julier and simplex points; reading filterpy's objects
# --------------------------------------------------------------------------------------

from filterpy.kalman import JulierSigmaPoints as FilterpyJulier  # noqa: E402
from filterpy.kalman import SimplexSigmaPoints as FilterpySimplex  # noqa: E402

from rths_ident.estimators.sigma_points import (  # noqa: E402
    JulierSigmaPoints,
    SimplexSigmaPoints,
    sigma_point_spec,
    simplex_directions,
)


@pytest.mark.parametrize("n", [1, 2, 3, 5])
def test_julier_and_simplex_points_and_weights_match_filterpy(n):
    x = np.linspace(-1.0, 2.0, n)
    P = random_covariance(n, seed=n)
    for ours, ref in (
        (JulierSigmaPoints(n, kappa=3.0 - n + 0.5), FilterpyJulier(n, kappa=3.0 - n + 0.5)),
        (SimplexSigmaPoints(n), FilterpySimplex(n)),
    ):
        assert ours.num_sigmas() == ref.num_sigmas()
        np.testing.assert_allclose(ours.Wm, ref.Wm, rtol=1e-15)
        np.testing.assert_allclose(ours.Wc, ref.Wc, rtol=1e-15)
        np.testing.assert_allclose(np.asarray(ours.sigma_points(x, P)), ref.sigma_points(x, P), rtol=1e-13, atol=1e-14)


@pytest.mark.parametrize("n", [1, 2, 4, 7])
def test_simplex_points_reproduce_mean_and_covariance(n):
    """Closed form: weights 1/(n+1) on the simplex points give back x and P exactly."""
    d = simplex_directions(n)
    np.testing.assert_allclose(d.sum(axis=1), 0.0, atol=1e-13)
    np.testing.assert_allclose(d @ d.T / (n + 1), np.eye(n), atol=1e-13)
    x, P = np.arange(n, dtype=float), random_covariance(n, seed=3 * n)
    sig = np.asarray(SimplexSigmaPoints(n).sigma_points(x, P))
    np.testing.assert_allclose(sig.mean(axis=0), x, atol=1e-12)
    np.testing.assert_allclose((sig - x).T @ (sig - x) / (n + 1), P, rtol=1e-12, atol=1e-13)


def test_sigma_point_spec_reads_filterpy_objects():
    merwe = sigma_point_spec(FilterpyPoints(4, alpha=0.1, beta=2.0, kappa=-1))
    assert (merwe.kind, merwe.n, merwe.num_sigmas) == ("symmetric", 4, 9)
    assert merwe.sqrt_method is None and merwe.subtract is None  # scipy cholesky / np.subtract: the defaults
    assert merwe.spread == pytest.approx(0.1**2 * 3, rel=1e-14)
    np.testing.assert_array_equal(merwe.covariance_weights, FilterpyPoints(4, 0.1, 2.0, -1).Wc)
    julier = sigma_point_spec(FilterpyJulier(3, kappa=2.0))
    assert (julier.kind, julier.spread) == ("symmetric", 5.0)
    simplex = sigma_point_spec(FilterpySimplex(3))
    assert (simplex.kind, simplex.num_sigmas, simplex.spread) == ("simplex", 4, 1.0)

    def my_sqrt(a):
        return a

    custom = sigma_point_spec(FilterpyPoints(2, 0.5, 2.0, 0.0, sqrt_method=my_sqrt, subtract=np.add))
    assert custom.sqrt_method is my_sqrt and custom.subtract is np.add

    class Shifted(FilterpySimplex):
        def sigma_points(self, x, P):
            return super().sigma_points(x, P) + 1.0

    shifted = Shifted(2)
    spec = sigma_point_spec(shifted)
    assert spec.kind == "custom" and spec.generator == shifted.sigma_points and spec.num_sigmas == 3
    with pytest.raises(TypeError, match="sigma-point object.*lacks n, Wm, Wc, num_sigmas, sigma_points"):
        sigma_point_spec("merwe")
    with pytest.raises(ValueError, match="n \\+ kappa"):
        JulierSigmaPoints(2, kappa=-2.0)
