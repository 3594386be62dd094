"""EKF with autodiff Jacobians against filterpy's ExtendedKalmanFilter given the
analytic Jacobians of the same models."""

import numpy as np
import pytest
from filterpy.kalman import ExtendedKalmanFilter as FilterpyEKF

import jax.numpy as jnp

from rths_ident.estimators.ekf import ExtendedKalmanFilter, ekf_init, ekf_scan

DT = 0.02
N_STEPS = 300


def fx_maker(xp):
    """Duffing oscillator x'' + 0.3x' + 4x + 2x³ = u, explicit (forward) Euler step."""

    def fx(x, dt, u=0.0):
        return xp.array([x[0] + dt * x[1], x[1] + dt * (u - 0.3 * x[1] - 4.0 * x[0] - 2.0 * x[0] ** 3)])

    return fx


def hx_maker(xp):
    def hx(x):
        return xp.array([x[0], xp.sin(x[0]) * x[1]])

    return hx


def F_analytic(x, dt):
    return np.array([[1.0, dt], [-dt * (4.0 + 6.0 * x[0] ** 2), 1.0 - 0.3 * dt]])


def H_analytic(x):
    return np.array([[1.0, 0.0], [np.cos(x[0]) * x[1], np.sin(x[0])]])


class FilterpyNonlinearEKF(FilterpyEKF):
    """filterpy's EKF with the nonlinear state transition (its documented extension
    point predict_x) and F set to the analytic Jacobian at the posterior mean."""

    def predict(self, u=0.0):
        self.F = F_analytic(self.x, DT)
        super().predict(u)

    def predict_x(self, u=0.0):
        self.x = fx_maker(np)(self.x, DT, u=u)


@pytest.fixture(scope="module")
def record():
    rng = np.random.default_rng(2)
    us = 3.0 * np.sin(2.0 * DT * np.arange(N_STEPS))
    truth = np.array([1.0, 0.0])
    zs = []
    for u in us:
        truth = fx_maker(np)(truth, DT, u=u)
        zs.append(hx_maker(np)(truth) + rng.normal(0.0, [0.02, 0.05]))
    return us, np.array(zs)


def setup(f):
    f.x = np.array([0.6, 0.4])
    f.P = np.diag([0.3, 0.5])
    f.Q = np.diag([1e-5, 1e-4])
    f.R = np.diag([0.02**2, 0.05**2])
    return f


def rel_err(a, b):
    a, b = np.asarray(a), np.asarray(b)
    return np.max(np.abs(a - b) / np.maximum(np.abs(b), 1e-3 * np.max(np.abs(b))))


def test_matches_filterpy_with_analytic_jacobians(record):
    us, zs = record
    ref = setup(FilterpyNonlinearEKF(2, 2))
    ours = setup(ExtendedKalmanFilter(2, 2, fx_maker(jnp), hx_maker(jnp), dt=DT))
    worst = 0.0
    for k in range(N_STEPS):
        ref.predict(u=us[k])
        ours.predict(u=us[k])
        if k % 50 == 0:  # unfused predict: the prior and F are read before the update
            np.testing.assert_allclose(ours.x_prior, ref.x_prior, rtol=1e-9)
            np.testing.assert_allclose(ours.F, ref.F, rtol=1e-12)
        ref.update(zs[k], H_analytic, hx_maker(np))
        ours.update(zs[k])
        np.testing.assert_allclose(ours.H, H_analytic(ref.x_prior), rtol=1e-9, atol=1e-12)
        worst = max(worst, rel_err(ours.x, ref.x), rel_err(ours.P, ref.P), rel_err(ours.K, ref.K))
        assert ours.log_likelihood == pytest.approx(ref.log_likelihood, rel=1e-6)
    assert worst < 1e-6
    np.testing.assert_allclose(ours.S, ref.S, rtol=1e-6)
    np.testing.assert_allclose(ours.y, ref.y, rtol=1e-6)


def test_scan_matches_filterpy(record):
    us, zs = record
    ref = setup(FilterpyNonlinearEKF(2, 2))
    means = []
    for k in range(N_STEPS):
        ref.predict(u=us[k])
        ref.update(zs[k], H_analytic, hx_maker(np))
        means.append(ref.x.copy())
    params, state0 = ekf_init([0.6, 0.4], np.diag([0.3, 0.5]), np.diag([1e-5, 1e-4]), np.diag([0.02**2, 0.05**2]), DT)
    final, hist = ekf_scan(fx_maker(jnp), hx_maker(jnp), params, state0, zs, {"u": us})
    assert rel_err(hist.x, np.array(means)) < 1e-6
    np.testing.assert_allclose(np.asarray(final.P), ref.P, rtol=1e-6)


def test_missing_measurement_and_bad_inputs():
    ekf = setup(ExtendedKalmanFilter(2, 2, fx_maker(jnp), hx_maker(jnp), dt=DT))
    ref = setup(FilterpyNonlinearEKF(2, 2))
    ekf.predict(u=1.0)
    ref.predict(u=1.0)
    ekf.update(None)
    np.testing.assert_allclose(ekf.x_post, ref.x_prior, rtol=1e-12)
    with pytest.raises(ValueError, match="z must have 2 elements"):
        ekf.update(np.zeros(1))
    with pytest.raises(ValueError, match=r"R must have shape"):
        ekf.update(np.zeros(2), R=np.eye(3))
    with pytest.raises(ValueError, match="dim_x"):
        ExtendedKalmanFilter(0, 1, fx_maker(jnp), hx_maker(jnp))
