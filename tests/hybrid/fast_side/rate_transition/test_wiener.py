import jax.numpy as jnp
import numpy as np
import pytest
import scipy.signal

import rths_ident  # noqa: F401
from rths_ident.errors import ParameterError
from rths_ident.hybrid.fast_side.rate_transition import ddmrt
from rths_ident.hybrid.fast_side.rate_transition.wiener import (
    correlation_estimate,
    lms_step_size_bound,
    regressor_matrix,
    wiener_coefficients,
)

AR2 = (1.6, -0.8)  # u_n = 1.6 u_{n−1} − 0.8 u_{n−2} + white noise (stable: |poles| = 0.894)


def _ar2(n, seed=0):
    noise = np.random.default_rng(seed).standard_normal(n)
    return scipy.signal.lfilter([1.0], [1.0, -AR2[0], -AR2[1]], noise)


def test_normal_equations_and_positive_definiteness():
    u = _ar2(3000)
    lam = 1e-10
    w = wiener_coefficients(u, L=8, lam=lam, N=2000)
    est = correlation_estimate(u, 8, 2000)
    assert est.n_windows == 2000 - 8
    np.testing.assert_allclose((est.R + lam * np.eye(8)) @ w, est.r, rtol=0, atol=1e-10 * np.abs(est.r).max())
    assert np.linalg.eigvalsh(est.R + lam * np.eye(8)).min() > 0


def test_agrees_with_regularised_lstsq_on_the_same_data():
    # (R + λI) w = r with R = UᵀU/M, r = Uᵀu/M  ⇔  min ‖U w − u‖² + λ M ‖w‖²
    u = _ar2(1500, seed=3)
    lam = 1e-3
    rows, targets = regressor_matrix(u, 8, 2000)
    m = targets.size
    stacked = np.vstack([rows, np.sqrt(lam * m) * np.eye(8)])
    expected, *_ = np.linalg.lstsq(stacked, np.concatenate([targets, np.zeros(8)]), rcond=None)
    np.testing.assert_allclose(wiener_coefficients(u, L=8, lam=lam, N=2000), expected, rtol=1e-9, atol=1e-12)


def test_recovers_the_ar2_predictor():
    # the optimal one-step predictor of an AR(2) process is [a_1, a_2, 0, …, 0]
    u = _ar2(200_000, seed=1)
    w = wiener_coefficients(u, L=8, lam=1e-10, N=200_000)
    # sampling error of the estimate ~ 0.01 at N = 2e5 (seed-dependent): 3 sigma
    np.testing.assert_allclose(w, [*AR2, 0, 0, 0, 0, 0, 0], atol=0.03)


def test_bad_inputs():
    with pytest.raises(ParameterError, match="lam"):
        wiener_coefficients(np.ones(100), lam=0.0)
    with pytest.raises(ParameterError, match="at least L"):
        wiener_coefficients(np.ones(5), L=8)
    with pytest.raises(ParameterError, match="1-D"):
        wiener_coefficients(np.ones((10, 2)))


@pytest.mark.parametrize("factor, diverges", [(1.5, True), (0.05, False)])
def test_leaky_lms_stability_bound(factor, diverges):
    # Eq. 3.8: 0 < μ < 2/(λ + ψ(R)). Above it the LMS diverges along the top eigenvector.
    u = _ar2(3000, seed=2)
    est = correlation_estimate(u, 8, 3000)
    bound = lms_step_size_bound(est.R, 1e-10)
    w0 = wiener_coefficients(u, L=8, lam=1e-10, N=3000)
    params = ddmrt.DDMRTParams(weights=w0, learning_rate=factor * bound, ratio=1, adaptive=True)
    state, _, predictions = ddmrt.run(params, jnp.asarray(u))
    weight_norm = float(jnp.linalg.norm(state.weights))
    print(f"\nμ = {factor} × bound ({bound:.4g}): final ‖w‖ = {weight_norm:.3g}")
    if diverges:
        assert not np.isfinite(weight_norm) or weight_norm > 1e6
    else:
        assert weight_norm < 10.0
        errors = u[1:] - np.asarray(predictions)[:-1]
        assert np.sqrt(np.mean(errors[-1000:] ** 2)) < 1.2  # noise std is 1: near-optimal
