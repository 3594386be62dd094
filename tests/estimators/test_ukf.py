"""UKF (wrapper and functional core) side by side with filterpy's UnscentedKalmanFilter."""

import numpy as np
import pytest
from filterpy.kalman import MerweScaledSigmaPoints as FilterpyPoints
from filterpy.kalman import UnscentedKalmanFilter as FilterpyUKF
from filterpy.kalman import unscented_transform as filterpy_ut

import jax
import jax.numpy as jnp

from rths_ident.estimators.sigma_points import MerweScaledSigmaPoints
from rths_ident.estimators.ukf import (
    UnscentedKalmanFilter,
    _kernel_predict_update,
    ukf_init,
    ukf_predict,
    ukf_scan,
    ukf_update,
)

DT = 0.05
N_STEPS = 300


def duffing_fx(xp):
    """Forced Duffing oscillator x'' + 0.2x' + x + 0.5x³ = u, one RK4 step."""

    def fx(x, dt, u=0.0):
        def rate(s):
            return xp.array([s[1], -0.2 * s[1] - s[0] - 0.5 * s[0] ** 3 + u])

        k1 = rate(x)
        k2 = rate(x + 0.5 * dt * k1)
        k3 = rate(x + 0.5 * dt * k2)
        k4 = rate(x + dt * k3)
        return x + dt / 6.0 * (k1 + 2 * k2 + 2 * k3 + k4)

    return fx


def duffing_hx(xp):
    def hx(x, gain=1.0):
        return xp.array([gain * x[0], x[0] ** 2 + x[1]])

    return hx


FX_NP, HX_NP = duffing_fx(np), duffing_hx(np)
FX_JAX, HX_JAX = duffing_fx(jnp), duffing_hx(jnp)


@pytest.fixture(scope="module")
def record():
    rng = np.random.default_rng(0)
    us = 2.0 * np.sin(0.7 * DT * np.arange(N_STEPS))
    truth = np.array([1.0, 0.0])
    zs = []
    for u in us:
        truth = FX_NP(truth, DT, u=u)
        zs.append(HX_NP(truth) + rng.normal(0.0, 0.05, 2))
    return us, np.array(zs)


def configure(ukf):
    ukf.x = np.array([0.5, 0.3])
    ukf.P *= 0.5  # in-place edit, the usual filterpy idiom
    ukf.Q = np.eye(2) * 1e-3
    ukf.R = np.diag([0.05**2, 0.06**2])
    return ukf


def make_pair():
    ref = configure(FilterpyUKF(2, 2, DT, HX_NP, FX_NP, FilterpyPoints(2, 0.1, 2.0, 1.0)))
    ours = configure(UnscentedKalmanFilter(2, 2, DT, HX_JAX, FX_JAX, MerweScaledSigmaPoints(2, 0.1, 2.0, 1.0)))
    return ref, ours


def rel_err(a, b):
    a, b = np.asarray(a), np.asarray(b)
    return np.max(np.abs(a - b) / np.maximum(np.abs(b), 1e-3 * np.max(np.abs(b))))


def test_wrapper_matches_filterpy_over_a_nonlinear_record(record):
    us, zs = record
    ref, ours = make_pair()
    worst = dict.fromkeys(["x", "P", "x_prior", "P_prior", "K", "y", "S", "loglik"], 0.0)
    for k in range(N_STEPS):
        ref.predict(u=us[k])
        ours.predict(u=us[k])
        ref.update(zs[k], gain=1.0)
        ours.update(zs[k], gain=1.0)
        worst["x"] = max(worst["x"], rel_err(ours.x, ref.x))
        worst["P"] = max(worst["P"], rel_err(ours.P, ref.P))
        worst["x_prior"] = max(worst["x_prior"], rel_err(ours.x_prior, ref.x_prior))
        worst["P_prior"] = max(worst["P_prior"], rel_err(ours.P_prior, ref.P_prior))
        worst["K"] = max(worst["K"], rel_err(ours.K, ref.K))
        worst["y"] = max(worst["y"], rel_err(ours.y, ref.y))
        worst["S"] = max(worst["S"], rel_err(ours.S, ref.S))
        worst["loglik"] = max(worst["loglik"], abs(ours.log_likelihood - ref.log_likelihood) / abs(ref.log_likelihood))
    assert max(worst.values()) < 1e-6, worst
    np.testing.assert_allclose(ours.x_post, ref.x_post, rtol=1e-6)
    np.testing.assert_allclose(ours.P_post, ref.P_post, rtol=1e-6)
    assert ours.mahalanobis == pytest.approx(ref.mahalanobis, rel=1e-6)
    np.testing.assert_allclose(ours.Wm, ref.Wm)


def test_edits_between_steps_and_unfused_order_match_filterpy(record):
    """Reading the prior between predict and update, setting x, in-place P/Q edits,
    dt overrides, R overrides and a missing measurement, all as filterpy does."""
    us, zs = record
    ref, ours = make_pair()
    for k in range(40):
        for f in (ref, ours):
            f.predict(dt=DT * (1.0 + 0.1 * (k % 3)), u=us[k])
        if k % 5 == 0:
            np.testing.assert_allclose(ours.x_prior, ref.x_prior, rtol=1e-9)
            np.testing.assert_allclose(ours.P, ref.P, rtol=1e-9)
        if k == 10:
            for f in (ref, ours):
                f.Q[1, 1] = 2e-3  # in-place edit of Q (takes effect at the next predict)
        if k == 20:
            for f in (ref, ours):
                f.update(None)
            np.testing.assert_allclose(ours.x_post, ref.x_post, rtol=1e-9)
            continue
        R = 0.01 if k % 7 == 0 else None
        for f in (ref, ours):
            f.update(zs[k], R=R)
        np.testing.assert_allclose(ours.x, ref.x, rtol=1e-8)
        np.testing.assert_allclose(ours.P, ref.P, rtol=1e-8, atol=1e-14)
        if k == 30:
            for f in (ref, ours):
                f.x = f.x + np.array([0.1, -0.2])  # assignment between steps
                f.P[0, 0] += 0.01  # in-place edit of P
    np.testing.assert_allclose(ours.Q, ref.Q)


def test_scan_matches_filterpy_loop(record):
    us, zs = record
    ref, _ = make_pair()
    means, covs, lls = [], [], []
    for k in range(N_STEPS):
        ref.predict(u=us[k])
        ref.update(zs[k])
        means.append(ref.x.copy())
        covs.append(ref.P.copy())
        lls.append(ref.log_likelihood)
    params, state0 = ukf_init(
        MerweScaledSigmaPoints(2, 0.1, 2.0, 1.0), [0.5, 0.3], 0.5, 1e-3, np.diag([0.05**2, 0.06**2]), DT
    )
    final, hist = ukf_scan(FX_JAX, HX_JAX, params, state0, zs, {"u": us})
    assert rel_err(hist.x, np.array(means)) < 1e-6
    assert rel_err(hist.P, np.array(covs)) < 1e-6
    np.testing.assert_allclose(np.asarray(hist.log_likelihood), lls, rtol=1e-6)
    np.testing.assert_allclose(np.asarray(final.x), means[-1], rtol=1e-6)


def test_batch_filter_matches_filterpy(record):
    _, zs = record
    fx_np = lambda x, dt: FX_NP(x, dt, u=0.5)  # noqa: E731
    fx_jax = lambda x, dt: FX_JAX(x, dt, u=0.5)  # noqa: E731
    ref = configure(FilterpyUKF(2, 2, DT, HX_NP, fx_np, FilterpyPoints(2, 0.1, 2.0, 1.0)))
    ours = configure(UnscentedKalmanFilter(2, 2, DT, HX_JAX, fx_jax, MerweScaledSigmaPoints(2, 0.1, 2.0, 1.0)))
    m_ref, c_ref = ref.batch_filter(list(zs[:100]))
    m_ours, c_ours = ours.batch_filter(list(zs[:100]))
    assert rel_err(m_ours, m_ref) < 1e-6
    assert rel_err(c_ours, c_ref) < 1e-6
    np.testing.assert_allclose(ours.x, ref.x, rtol=1e-6)


def test_angle_residuals_and_circular_means_match_filterpy():
    """Pendulum observed through a wrapped angle: residual_x/z, x_mean_fn, z_mean_fn."""
    dt = 0.05

    def wrap(a, xp):
        return xp.mod(a + xp.pi, 2 * xp.pi) - xp.pi

    def fx_maker(xp):
        return lambda x, dt: xp.array([x[0] + dt * x[1], x[1] - dt * 9.81 * xp.sin(x[0])])

    def hx_maker(xp):
        return lambda x: xp.array([wrap(x[0], xp)])

    def residual_x_maker(xp):
        def r(a, b):
            d = a - b
            if xp is np:
                d = np.array(d, dtype=float)
                d[0] = wrap(d[0], np)
                return d
            return d.at[0].set(wrap(d[0], jnp))

        return r

    def residual_z_maker(xp):
        return lambda a, b: wrap(a - b, xp)

    def x_mean_maker(xp):
        def mean(sigmas, Wm):
            angle = xp.arctan2(xp.sum(xp.sin(sigmas[:, 0]) * Wm), xp.sum(xp.cos(sigmas[:, 0]) * Wm))
            return xp.array([angle, xp.sum(sigmas[:, 1] * Wm)])

        return mean

    def z_mean_maker(xp):
        def mean(sigmas, Wm):
            return xp.array([xp.arctan2(xp.sum(xp.sin(sigmas[:, 0]) * Wm), xp.sum(xp.cos(sigmas[:, 0]) * Wm))])

        return mean

    filters = []
    for cls, pts, xp in ((FilterpyUKF, FilterpyPoints, np), (UnscentedKalmanFilter, MerweScaledSigmaPoints, jnp)):
        f = cls(
            2, 1, dt, hx_maker(xp), fx_maker(xp), pts(2, 0.3, 2.0, 0.0),
            x_mean_fn=x_mean_maker(xp), z_mean_fn=z_mean_maker(xp),
            residual_x=residual_x_maker(xp), residual_z=residual_z_maker(xp),
        )  # fmt: skip
        f.x = np.array([3.0, 0.5])
        f.P = np.diag([0.2, 0.5])
        f.Q = np.diag([1e-4, 1e-3])
        f.R = np.array([[0.02]])
        filters.append(f)
    ref, ours = filters
    rng = np.random.default_rng(5)
    truth = np.array([3.1, 0.0])
    for _ in range(120):
        truth = fx_maker(np)(truth, dt)
        z = hx_maker(np)(truth) + rng.normal(0.0, 0.1, 1)
        for f in filters:
            f.predict()
            f.update(wrap(z, np))
        assert rel_err(ours.x, ref.x) < 1e-6
        assert rel_err(ours.P, ref.P) < 1e-6


class ClippedPoints(FilterpyPoints):
    def __init__(self, lower, upper, *args):
        super().__init__(*args)
        self.lower, self.upper = lower, upper

    def sigma_points(self, x, P):
        return np.clip(super().sigma_points(x, P), self.lower, self.upper)


class ClippedFilterpyUKF(FilterpyUKF):
    """filterpy's UKF with the documented projection: clipped sigma points and means."""

    def predict(self, **fx_args):
        self.compute_process_sigmas(self._dt, None, **fx_args)
        self.x, self.P = filterpy_ut(self.sigmas_f, self.Wm, self.Wc, self.Q)
        self.x = np.clip(self.x, self.points_fn.lower, self.points_fn.upper)
        self.sigmas_f = self.points_fn.sigma_points(self.x, self.P)

    def update(self, z, **hx_args):
        super().update(z, **hx_args)
        self.x = np.clip(self.x, self.points_fn.lower, self.points_fn.upper)


def test_bounds_by_sigma_point_clipping():
    """A decaying oscillation with unknown stiffness θ ≥ 0.8; the data say θ ≈ 0.5."""
    lower, upper = np.array([-np.inf, -np.inf, 0.8]), np.array([np.inf, np.inf, 3.0])

    def fx_maker(xp):
        return lambda s, dt: xp.array([s[0] + dt * s[1], s[1] - dt * (s[2] * s[0] + 0.1 * s[1]), s[2]])

    hx_np = lambda s: np.array([s[0]])  # noqa: E731
    hx_jax = lambda s: jnp.array([s[0]])  # noqa: E731
    ref = ClippedFilterpyUKF(3, 1, 0.05, hx_np, fx_maker(np), ClippedPoints(lower, upper, 3, 0.5, 2.0, 0.0))
    ours = UnscentedKalmanFilter(
        3, 1, 0.05, hx_jax, fx_maker(jnp), MerweScaledSigmaPoints(3, 0.5, 2.0, 0.0), bounds=(lower, upper)
    )
    free = UnscentedKalmanFilter(3, 1, 0.05, hx_jax, fx_maker(jnp), MerweScaledSigmaPoints(3, 0.5, 2.0, 0.0))
    truth = np.array([1.0, 0.0, 0.5])
    for f in (ref, ours, free):
        f.x = np.array([1.0, 0.0, 1.5])
        f.P = np.diag([1e-4, 1e-4, 0.5])
        f.Q = np.diag([1e-8, 1e-8, 1e-6])
        f.R = np.array([[1e-4]])
    lowest_free = np.inf
    for _ in range(200):
        truth = fx_maker(np)(truth, 0.05)
        for f in (ref, ours, free):
            f.predict()
            f.update(truth[:1])
        assert ours.x[2] >= 0.8
        lowest_free = min(lowest_free, free.x[2])
        assert rel_err(ours.x, ref.x) < 1e-6
    assert lowest_free < 0.7  # without the bound the estimate does leave the box
    assert 0.8 <= ours.x[2] < 0.81  # held at the bound, where the data push it


def test_functional_core_is_pure_and_differentiable(record):
    us, zs = record
    params, state = ukf_init(MerweScaledSigmaPoints(2, 0.1, 2.0, 1.0), [0.5, 0.3], 0.5, 1e-3, 0.01 * np.eye(2), DT)

    def loglik(q):
        p = params.__class__(**{**params.__dict__, "process_noise_cov": q * jnp.eye(2)})
        prior = ukf_predict(p, state, FX_JAX, {"u": us[0]})
        _, info = ukf_update(p, prior, zs[0], HX_JAX)
        return info.log_likelihood

    loglik = jax.jit(loglik)
    grad = jax.jit(jax.grad(loglik))(1e-3)
    h = 1e-7
    fd = (loglik(1e-3 + h) - loglik(1e-3 - h)) / (2 * h)
    assert float(grad) == pytest.approx(float(fd), rel=1e-5)
    batch = jax.jit(jax.vmap(loglik))(jnp.array([1e-3, 2e-3]))
    assert float(batch[0]) == pytest.approx(float(loglik(1e-3)), rel=1e-12)


def test_no_recompilation_per_step(record):
    us, zs = record
    _, ours = make_pair()
    ours.predict(u=us[0])
    ours.update(zs[0])
    size = _kernel_predict_update._cache_size()
    other = configure(UnscentedKalmanFilter(2, 2, DT, HX_JAX, FX_JAX, MerweScaledSigmaPoints(2, 0.1, 2.0, 1.0)))
    for k in range(1, 30):
        for f in (ours, other):
            f.predict(dt=DT * (1 + k % 2), u=float(us[k]))
            f.update(zs[k])
    assert _kernel_predict_update._cache_size() == size


def test_bad_inputs_raise_clear_errors():
    pts = MerweScaledSigmaPoints(2, 0.1, 2.0, 1.0)
    ukf = UnscentedKalmanFilter(2, 2, DT, HX_JAX, FX_JAX, pts)
    with pytest.raises(ValueError, match=r"x must have shape \(2,\)"):
        ukf.x = np.zeros(3)
    with pytest.raises(ValueError, match=r"Q must have shape \(2, 2\)"):
        ukf.Q = np.eye(3)
    with pytest.raises(ValueError, match="P must be positive definite"):
        ukf.P = np.diag([1.0, -1.0])
    with pytest.raises(ValueError, match="R must be symmetric"):
        ukf.R = np.array([[1.0, 0.5], [0.0, 1.0]])
    with pytest.raises(ValueError, match="Q must be positive semi-definite"):
        ukf.Q = np.diag([1.0, -1.0])
    with pytest.raises(ValueError, match="z must have 2 elements"):
        ukf.update(np.zeros(3))
    with pytest.raises(ValueError, match="points.n"):
        UnscentedKalmanFilter(3, 2, DT, HX_JAX, FX_JAX, pts)
    with pytest.raises(TypeError, match="MerweScaledSigmaPoints"):
        UnscentedKalmanFilter(2, 2, DT, HX_JAX, FX_JAX, FilterpyPoints(2, 0.1, 2.0, 1.0))
    numpy_ukf = UnscentedKalmanFilter(2, 2, DT, HX_NP, lambda x, dt: np.asarray(x) * 2.0, pts)
    numpy_ukf.predict()
    with pytest.raises(TypeError, match="jax.numpy"):
        numpy_ukf.update(np.zeros(2))
    with pytest.raises(Exception, match="P0 must have shape"):
        ukf_init(pts, [0.0, 0.0], np.eye(3), 1.0, 1.0, DT)
