"""RLS: checked against the closed-form (exponentially weighted) least-squares solution
and against filterpy's Kalman filter (RLS with forgetting λ = KF with F = I, Q = 0,
R = 1 and fading-memory factor α = 1/√λ)."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from filterpy.kalman import KalmanFilter

import rths_ident  # noqa: F401  (float64)
from rths_ident.errors import ParameterError
from rths_ident.estimators import rls

update = jax.jit(rls.update)
run = jax.jit(rls.run)


def _data(n=3, N=200, seed=0, noise=0.1):
    rng = np.random.default_rng(seed)
    theta_true = rng.normal(size=n)
    Phi = rng.normal(size=(N, n)) * np.array([1.0, 10.0, 0.1])[:n]
    Y = Phi @ theta_true + noise * rng.normal(size=N)
    return Phi, Y, theta_true


def _weighted_ls(theta0, P0, Phi, Y, lam):
    """θ_N = (λ^N P0⁻¹ + Σ λ^{N−k} φφᵀ)⁻¹ (λ^N P0⁻¹ θ0 + Σ λ^{N−k} φ y), P_N = (…)⁻¹."""
    N = len(Y)
    weights = lam ** np.arange(N - 1, -1, -1)
    info = lam**N * np.linalg.inv(P0) + (Phi * weights[:, None]).T @ Phi
    rhs = lam**N * np.linalg.inv(P0) @ theta0 + (Phi * weights[:, None]).T @ Y
    return np.linalg.solve(info, rhs), np.linalg.inv(info)


@pytest.mark.parametrize("lam", [1.0, 0.98])
def test_matches_closed_form_weighted_least_squares(lam):
    Phi, Y, _ = _data()
    theta0 = np.array([0.5, -0.2, 1.0])
    P0 = np.diag([10.0, 1.0, 100.0])
    params = rls.RLSParams(forgetting=lam)
    state, hist = run(params, rls.init(params, theta0, P0), Phi, Y)
    theta_ls, P_ls = _weighted_ls(theta0, P0, Phi, Y, lam)
    np.testing.assert_allclose(state.theta, theta_ls, rtol=1e-9, atol=1e-11)
    np.testing.assert_allclose(state.covariance, P_ls, rtol=1e-8, atol=1e-14)
    # a-priori prediction errors
    prev = np.vstack([theta0, np.asarray(hist.theta)[:-1]])
    np.testing.assert_allclose(hist.prediction_error, Y - np.sum(Phi * prev, axis=1), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("lam", [1.0, 0.95])
def test_matches_filterpy_kalman_filter(lam):
    Phi, Y, _ = _data(N=150, seed=3)
    theta0 = np.zeros(3)
    P0 = 5.0 * np.eye(3)
    kf = KalmanFilter(dim_x=3, dim_z=1)
    kf.x = theta0.reshape(3, 1).copy()
    kf.P = P0.copy()
    kf.F = np.eye(3)
    kf.Q = np.zeros((3, 3))
    kf.R = np.array([[1.0]])
    kf.alpha = 1.0 / np.sqrt(lam)
    params = rls.RLSParams(forgetting=lam)
    state = rls.init(params, theta0, P0)
    for phi, y in zip(Phi, Y):
        kf.predict()
        kf.update(np.array([[y]]), H=phi.reshape(1, 3))
        state, _ = update(params, state, phi, y)
    np.testing.assert_allclose(state.theta, kf.x.ravel(), rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(state.covariance, kf.P, rtol=1e-8, atol=1e-14)


def test_dead_zone_skips_small_errors_and_otherwise_updates_normally():
    params_dz = rls.RLSParams(dead_zone=0.5)
    params = rls.RLSParams()
    state = rls.init(params, np.zeros(2), np.eye(2))
    phi = np.array([1.0, 2.0])
    small, _ = update(params_dz, state, phi, 0.4)  # |e| = 0.4 ≤ 0.5
    np.testing.assert_array_equal(small.theta, state.theta)
    np.testing.assert_array_equal(small.covariance, state.covariance)
    big_dz, _ = update(params_dz, state, phi, 3.0)
    big, _ = update(params, state, phi, 3.0)
    np.testing.assert_allclose(big_dz.theta, big.theta, rtol=0, atol=0)
    # closed form: K = Pφ/(1 + φᵀPφ) = φ/6, θ = 3 K
    np.testing.assert_allclose(big.theta, 3.0 * phi / 6.0, rtol=1e-14)


def test_trace_cap_stops_covariance_windup():
    lam = 0.9
    params = rls.RLSParams(forgetting=lam, trace_cap=10.0)
    state = rls.init(params, np.zeros(2), np.eye(2))
    traces = []
    for _ in range(30):
        state, _ = update(params, state, np.zeros(2), 0.0)  # no excitation: P ← P/λ
        traces.append(float(np.trace(state.covariance)))
    expected = np.minimum(2.0 / lam ** np.arange(1, 31), 10.0)
    np.testing.assert_allclose(traces, expected, rtol=1e-12)


def test_eigen_floor_and_reset():
    Phi, Y, _ = _data(n=2, N=400, seed=5)
    P0 = np.eye(2)
    floored = rls.RLSParams(eigen_floor=1e-2)
    state, _ = run(floored, rls.init(floored, np.zeros(2), P0), Phi, Y)
    eig = np.linalg.eigvalsh(state.covariance)
    assert eig.min() == pytest.approx(1e-2, rel=1e-9)
    # plain RLS would have shrunk below the floor
    plain = rls.RLSParams()
    state_plain, _ = run(plain, rls.init(plain, np.zeros(2), P0), Phi, Y)
    assert np.linalg.eigvalsh(state_plain.covariance).min() < 1e-3
    # reset: the first sample that drives λ_min(P) below 0.5 restores P(0)
    reset = rls.RLSParams(reset_below=0.5)
    state = rls.init(reset, np.zeros(2), P0)
    state, _ = rls.update(reset, state, np.array([3.0, 0.0]), 1.0)  # λ_min = 1/10 < 0.5
    np.testing.assert_array_equal(state.covariance, P0)
    assert state.theta[0] == pytest.approx(3.0 / 10.0)


def test_covariance_stays_symmetric_positive_definite_on_ill_conditioned_data():
    rng = np.random.default_rng(7)
    base = rng.normal(size=2000)
    Phi = np.stack([base, base + 1e-6 * rng.normal(size=2000), 1e3 * rng.normal(size=2000)], axis=1)
    Y = Phi @ np.array([1.0, 2.0, 3e-3]) + 1e-3 * rng.normal(size=2000)
    params = rls.RLSParams(forgetting=0.999)
    state, _ = run(params, rls.init(params, np.zeros(3), 1e6), Phi, Y)
    P = np.asarray(state.covariance)
    np.testing.assert_array_equal(P, P.T)
    assert np.linalg.eigvalsh(P).min() > 0


def test_vmap_and_grad_through_run():
    Phi, Y, _ = _data(N=60, seed=11)
    params = rls.RLSParams(forgetting=0.97)
    state0 = rls.init(params, np.zeros(3), 10.0)

    def final_theta(Y):
        return run(params, state0, Phi, Y)[0].theta

    # θ_N is linear in Y: its Jacobian is the closed-form weighted-LS matrix
    jac = jax.jacfwd(final_theta)(jnp.asarray(Y))
    N = len(Y)
    weights = 0.97 ** np.arange(N - 1, -1, -1)
    info = 0.97**N * np.eye(3) / 10.0 + (Phi * weights[:, None]).T @ Phi
    np.testing.assert_allclose(jac, np.linalg.solve(info, (Phi * weights[:, None]).T), rtol=1e-8, atol=1e-12)
    # vmap over a batch of records equals one-by-one runs
    Ys = np.stack([Y, 2 * Y, -Y])
    batched = jax.vmap(final_theta)(jnp.asarray(Ys))
    for i in range(3):
        np.testing.assert_allclose(batched[i], final_theta(Ys[i]), rtol=1e-12)


def test_wrapper_matches_functional_core_and_validates():
    Phi, Y, _ = _data(N=50, seed=2)
    filt = rls.RLS(3, theta0=np.ones(3), P0=[1.0, 2.0, 3.0], forgetting=0.99)
    errors = [filt.update(phi, y) for phi, y in zip(Phi, Y)]
    params = rls.RLSParams(forgetting=0.99)
    state, hist = run(params, rls.init(params, np.ones(3), np.diag([1.0, 2.0, 3.0])), Phi, Y)
    np.testing.assert_allclose(filt.theta, state.theta, rtol=1e-12)
    np.testing.assert_allclose(filt.P, state.covariance, rtol=1e-12)
    np.testing.assert_allclose(errors, hist.prediction_error, rtol=1e-12)
    with pytest.raises(ParameterError, match="RLSParams.forgetting"):
        rls.RLS(2, forgetting=1.5)
    with pytest.raises(ParameterError, match="shape"):
        filt.update([1.0, 2.0], 0.0)
    with pytest.raises(ParameterError, match="positive definite"):
        rls.RLS(2, P0=[[1.0, 0.0], [0.0, -1.0]])
