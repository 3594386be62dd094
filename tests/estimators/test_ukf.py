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
    with pytest.raises(TypeError, match="points must be a sigma-point object.*MerweScaledSigmaPoints"):
        UnscentedKalmanFilter(2, 2, DT, HX_JAX, FX_JAX, "merwe")  # filterpy's points are accepted (drop-in)
    numpy_ukf = UnscentedKalmanFilter(2, 2, DT, HX_NP, lambda x, dt: np.asarray(x) * 2.0, pts)
    numpy_ukf.predict()
    with pytest.raises(TypeError, match="jax.numpy"):
        numpy_ukf.update(np.zeros(2))
    with pytest.raises(Exception, match="P0 must have shape"):
        ukf_init(pts, [0.0, 0.0], np.eye(3), 1.0, 1.0, DT)


# --------------------------------------------------------------------------------------
# drop-in: filterpy's own documented usage, unchanged except for the import
# --------------------------------------------------------------------------------------

import functools  # noqa: E402

import filterpy.kalman as filterpy_kalman  # noqa: E402
from filterpy.common import Q_discrete_white_noise  # noqa: E402

#: How close "equal to filterpy" is: max |ours − filterpy| / max |filterpy| per array.
DROP_IN_RTOL = 1e-10


def normwise(ours, ref):
    ours, ref = np.asarray(ours, dtype=float), np.asarray(ref, dtype=float)
    return float(np.max(np.abs(ours - ref)) / np.max(np.abs(ref)))


def cv_models(xp):
    """fx/hx of filterpy's UnscentedKalmanFilter docstring (constant velocity in 2D)."""

    def fx(x, dt):
        # state transition function - predict next state based
        # on constant velocity model x = vt + x_0
        F = xp.array([[1, dt, 0, 0], [0, 1, 0, 0], [0, 0, 1, dt], [0, 0, 0, 1]], dtype=float)
        return xp.dot(F, x)

    def hx(x):
        # measurement function - convert state into a measurement
        # where measurements are [x_pos, y_pos]
        return xp.array([x[0], x[2]])

    return fx, hx


CV_NP, CV_JAX = cv_models(np), cv_models(jnp)


def cv_measurements(count=50, seed=7):
    rng = np.random.default_rng(seed)
    z_std = 0.1
    return [[i + rng.standard_normal() * z_std, i + rng.standard_normal() * z_std] for i in range(count)]


def docstring_example(UnscentedKalmanFilter, points, zs, fx, hx):
    """filterpy's UnscentedKalmanFilter docstring example, verbatim but for the points
    object (passed in) and recording what it prints."""
    dt = 0.1
    kf = UnscentedKalmanFilter(dim_x=4, dim_z=2, dt=dt, fx=fx, hx=hx, points=points)
    kf.x = np.array([-1.0, 1.0, -1.0, 1])  # initial state
    kf.P *= 0.2  # initial uncertainty
    z_std = 0.1
    kf.R = np.diag([z_std**2, z_std**2])  # 1 standard
    kf.Q = Q_discrete_white_noise(dim=2, dt=dt, var=0.01**2, block_size=2)
    printed = []
    for z in zs:
        kf.predict()
        kf.update(z)
        printed.append((kf.x.copy(), kf.P.copy(), kf.log_likelihood))
    return kf, printed


POINT_KINDS = {
    "merwe": lambda module: module.MerweScaledSigmaPoints(4, alpha=0.1, beta=2.0, kappa=-1),
    "julier": lambda module: module.JulierSigmaPoints(4, kappa=1.0),
    "simplex": lambda module: module.SimplexSigmaPoints(4),
}

HostUKF = functools.partial(UnscentedKalmanFilter, host_functions=True)


@pytest.mark.parametrize("kind", list(POINT_KINDS))
@pytest.mark.parametrize("mode", ["numpy functions, host_functions=True", "jax.numpy functions, compiled"])
def test_filterpy_docstring_example_gives_filterpy_numbers(kind, mode):
    """filterpy's points objects as ``points=``; fx/hx in numpy (unchanged) on the host
    path, or in jax.numpy compiled; x, P and the log-likelihood at every step."""
    zs = cv_measurements()
    _, ref = docstring_example(filterpy_kalman.UnscentedKalmanFilter, POINT_KINDS[kind](filterpy_kalman), zs, *CV_NP)
    host = mode.startswith("numpy")
    cls, models = (HostUKF, CV_NP) if host else (UnscentedKalmanFilter, CV_JAX)
    ours_kf, ours = docstring_example(cls, POINT_KINDS[kind](filterpy_kalman), zs, *models)
    assert len(ours_kf.Wm) == (5 if kind == "simplex" else 9)
    for (x, P, ll), (x_ref, P_ref, ll_ref) in zip(ours, ref):
        assert normwise(x, x_ref) < DROP_IN_RTOL
        assert normwise(P, P_ref) < DROP_IN_RTOL
        assert ll == pytest.approx(ll_ref, rel=DROP_IN_RTOL)
    assert abs(ref[-1][0][0] - 48.9) < 1.0  # it tracked the target (position ≈ 49 at the end)


@pytest.mark.parametrize("kind", list(POINT_KINDS))
def test_batch_filter_with_dts_then_rts_smoother_match_filterpy(kind):
    """The pattern of filterpy's batch_filter docstring: varying dts, then rts_smoother."""
    zs = cv_measurements(40, seed=11)
    dts = [0.1 + 0.02 * (i % 4) for i in range(len(zs))]
    results = []
    for cls, fx, hx in ((filterpy_kalman.UnscentedKalmanFilter, *CV_NP), (UnscentedKalmanFilter, *CV_JAX)):
        kf = cls(dim_x=4, dim_z=2, dt=0.1, fx=fx, hx=hx, points=POINT_KINDS[kind](filterpy_kalman))
        kf.x = np.array([-1.0, 1.0, -1.0, 1.0])
        kf.P *= 0.2
        kf.R = np.diag([0.01, 0.01])
        kf.Q = Q_discrete_white_noise(dim=2, dt=0.1, var=0.01**2, block_size=2)
        mu, cov = kf.batch_filter(zs, dts=dts)
        xs, Ps, Ks = kf.rts_smoother(mu, cov, dts=dts)
        results.append((mu, cov, xs, Ps, Ks))
    for ours, ref in zip(results[1], results[0]):
        assert normwise(ours, ref) < DROP_IN_RTOL
    # the smoother did something: its estimates differ from the filter's, and are better
    assert normwise(results[1][2], results[1][0]) > 1e-4


def test_fast_batch_filter_and_smoother_match_filterpy():
    """Without Rs/dts the batch runs as one compiled scan; the smoother is one backward scan."""
    zs = cv_measurements(60, seed=3)
    out = []
    for cls, fx, hx in ((filterpy_kalman.UnscentedKalmanFilter, *CV_NP), (UnscentedKalmanFilter, *CV_JAX)):
        kf = cls(4, 2, 0.1, hx, fx, filterpy_kalman.MerweScaledSigmaPoints(4, 0.3, 2.0, 0.0))
        kf.P *= 0.5
        kf.R *= 0.01
        kf.Q = Q_discrete_white_noise(dim=2, dt=0.1, var=0.05**2, block_size=2)
        mu, cov = kf.batch_filter(zs)
        out.append((mu, cov, *kf.rts_smoother(mu, cov), kf.x, kf.P))
    for ours, ref in zip(out[1], out[0]):
        assert normwise(ours, ref) < DROP_IN_RTOL


def normalize_angle(a):
    a = a % (2 * np.pi)
    if a > np.pi:
        a -= 2 * np.pi
    return a


def range_bearing_filters():
    """A target circling a radar at the origin, measured in range and bearing; the
    bearing wraps at ±π. Written the filterpy way (in-place angle normalisation in
    residual_z, circular mean in z_mean_fn)."""

    def fx(x, dt):
        return np.array([x[0] + dt * x[1], x[1], x[2] + dt * x[3], x[3]])

    def hx(x):
        return np.array([np.hypot(x[0], x[2]), np.arctan2(x[2], x[0])])

    def residual_z(a, b):
        y = a - b
        y[1] = normalize_angle(y[1])
        return y

    def z_mean(sigmas, Wm):
        z = np.zeros(2)
        z[0] = np.sum(sigmas[:, 0] * Wm)
        z[1] = np.arctan2(np.sum(np.sin(sigmas[:, 1]) * Wm), np.sum(np.cos(sigmas[:, 1]) * Wm))
        return z

    filters = []
    for cls in (filterpy_kalman.UnscentedKalmanFilter, HostUKF):
        points = filterpy_kalman.MerweScaledSigmaPoints(4, alpha=0.5, beta=2.0, kappa=-1.0)
        kf = cls(4, 2, 0.1, hx, fx, points, z_mean_fn=z_mean, residual_z=residual_z)
        kf.x = np.array([-10.0, 0.0, 0.5, -3.0])
        kf.P = np.diag([1.0, 0.5, 1.0, 0.5])
        kf.R = np.diag([0.05**2, 0.01**2])
        kf.Q = Q_discrete_white_noise(dim=2, dt=0.1, var=0.05**2, block_size=2)
        filters.append(kf)
    return filters, hx


def test_custom_angle_residual_in_numpy_matches_filterpy_across_the_wrap():
    (ref, ours), hx = range_bearing_filters()
    rng = np.random.default_rng(2)
    crossed = 0
    for k in range(80):
        # bearing π − 0.5 + 0.0125 k: it passes +π (and wraps to −π) at k = 40
        truth = np.array([-10.0 * np.cos(0.5 - 0.0125 * k), 0.0, 10.0 * np.sin(0.5 - 0.0125 * k), 0.0])
        z = hx(truth) + rng.normal(0.0, [0.05, 0.01])
        z[1] = normalize_angle(z[1])
        crossed += z[1] < 0
        for f in (ref, ours):
            f.predict()
            f.update(z)
        assert normwise(ours.x, ref.x) < DROP_IN_RTOL
        assert normwise(ours.P, ref.P) < DROP_IN_RTOL
        assert normwise(ours.y, ref.y) < DROP_IN_RTOL
    assert crossed > 10  # the measurements did wrap
    assert abs(ref.y[1]) < 0.1  # and the residual kept the innovation small across the wrap


def test_custom_UT_numpy_on_the_host_and_jax_compiled():
    """``UT=`` as in filterpy: filterpy's own unscented_transform (numpy, host path), and a
    jax.numpy UT that inflates the covariance (compiled), against filterpy."""

    def inflated_np(sigmas, Wm, Wc, noise_cov, mean_fn, residual_fn):
        mean, cov = filterpy_ut(sigmas, Wm, Wc, noise_cov, mean_fn, residual_fn)
        return mean, 1.05 * cov

    def inflated_jax(sigmas, Wm, Wc, noise_cov, mean_fn, residual_fn):
        mean = Wm @ sigmas
        dev = jax.vmap(lambda s: residual_fn(s, mean))(sigmas)
        return mean, 1.05 * (dev.T @ (Wc[:, None] * dev) + noise_cov)

    zs = cv_measurements(30, seed=5)
    for ut_ref, ut_ours, cls, (fx, hx) in (
        (filterpy_ut, filterpy_ut, HostUKF, CV_NP),
        (inflated_np, inflated_jax, UnscentedKalmanFilter, CV_JAX),
    ):
        pair = []
        for make, f, h in ((filterpy_kalman.UnscentedKalmanFilter, *CV_NP), (cls, fx, hx)):
            kf = make(4, 2, 0.1, h, f, filterpy_kalman.JulierSigmaPoints(4, kappa=0.5))
            kf.R *= 0.01
            kf.Q *= 1e-4
            pair.append(kf)
        ref, ours = pair
        for k, z in enumerate(zs):
            for kf, ut in ((ref, ut_ref), (ours, ut_ours)):
                kf.predict(UT=ut)
                kf.update(z, UT=ut if k % 2 else None)
            assert normwise(ours.x, ref.x) < DROP_IN_RTOL
            assert normwise(ours.P, ref.P) < DROP_IN_RTOL


def test_points_subclass_overriding_sigma_points_runs_on_the_host():
    """A filterpy points subclass with its own (numpy) sigma_points: called back on the
    host path; the compiled path refuses it with an error naming points.sigma_points."""
    lower, upper = np.array([-np.inf, -np.inf, 0.8]), np.array([np.inf, np.inf, 3.0])

    def fx_maker(xp):
        return lambda s, dt: xp.array([s[0] + dt * s[1], s[1] - dt * (s[2] * s[0] + 0.1 * s[1]), s[2]])

    def hx_maker(xp):
        return lambda s: xp.array([s[0]])

    fx, hx = fx_maker(np), hx_maker(np)
    ref = FilterpyUKF(3, 1, 0.05, hx, fx, ClippedPoints(lower, upper, 3, 0.5, 2.0, 0.0))
    ours = HostUKF(3, 1, 0.05, hx, fx, ClippedPoints(lower, upper, 3, 0.5, 2.0, 0.0))
    truth = np.array([1.0, 0.0, 0.5])
    for f in (ref, ours):
        f.x = np.array([1.0, 0.0, 1.5])
        f.P = np.diag([1e-4, 1e-4, 0.5])
        f.Q = np.diag([1e-8, 1e-8, 1e-6])
        f.R = np.array([[1e-4]])
    for _ in range(60):
        truth = fx(truth, 0.05)
        for f in (ref, ours):
            f.predict()
            f.update(truth[:1])
        assert normwise(ours.x, ref.x) < DROP_IN_RTOL
        assert normwise(ours.P, ref.P) < DROP_IN_RTOL
    clipped = ClippedPoints(lower, upper, 3, 0.5, 2.0, 0.0)
    compiled = UnscentedKalmanFilter(3, 1, 0.05, hx_maker(jnp), fx_maker(jnp), clipped)
    compiled.predict()
    with pytest.raises(TypeError, match=r"points\.sigma_points.*jax\.numpy.*host_functions=True"):
        compiled.update(np.zeros(1))


def test_numpy_functions_without_host_path_name_the_option():
    ukf = UnscentedKalmanFilter(4, 2, 0.1, CV_NP[1], CV_NP[0], filterpy_kalman.SimplexSigmaPoints(4))
    ukf.predict()
    with pytest.raises(TypeError, match=r"fx/hx must be written with jax\.numpy.*host_functions=True"):
        ukf.update(np.zeros(2))
    ukf = UnscentedKalmanFilter(4, 2, 0.1, CV_JAX[1], CV_JAX[0], filterpy_kalman.MerweScaledSigmaPoints(4, 0.1, 2, 0))
    with pytest.raises(TypeError, match=r"UT must be written with jax\.numpy"):
        ukf.batch_filter(cv_measurements(3), UT=filterpy_ut)
    with pytest.raises(ValueError, match=r"dim_x must be a positive integer equal to points.n = 4"):
        UnscentedKalmanFilter(3, 2, 0.1, CV_JAX[1], CV_JAX[0], filterpy_kalman.JulierSigmaPoints(4))
    with pytest.raises(ValueError, match="Xs and Ps must have the same length"):
        ukf.rts_smoother(np.zeros((3, 4)), np.zeros((2, 4, 4)))
    with pytest.raises(ValueError, match=r"Qs must have shape \(3, 4, 4\)"):
        ukf.rts_smoother(np.zeros((3, 4)), np.tile(np.eye(4), (3, 1, 1)), Qs=np.eye(4))


def test_numpy_sqrt_method_and_subtract_of_filterpy_points_on_the_host():
    from scipy.linalg import sqrtm  # noqa: PLC0415

    def subtract(a, b):
        return np.subtract(a, b)

    def sqrt_method(a):
        return np.real(sqrtm(a))

    def fx(x, dt):
        return np.array([x[0] + dt * x[1], x[1] - dt * np.sin(x[0])])

    def hx(x):
        return np.array([np.sin(x[0])])

    for make_points in (
        lambda: filterpy_kalman.MerweScaledSigmaPoints(2, 0.5, 2.0, 0.0, sqrt_method=sqrt_method, subtract=subtract),
        lambda: filterpy_kalman.SimplexSigmaPoints(2, sqrt_method=sqrt_method, subtract=subtract),
    ):
        ref, ours = FilterpyUKF(2, 1, 0.1, hx, fx, make_points()), HostUKF(2, 1, 0.1, hx, fx, make_points())
        for f in (ref, ours):
            f.x = np.array([1.0, 0.0])
            f.R *= 0.01
            f.Q *= 1e-4
        for k in range(30):
            for f in (ref, ours):
                f.predict()
                f.update(np.sin(np.cos(0.3 * k)))
            assert normwise(ours.x, ref.x) < DROP_IN_RTOL
            assert normwise(ours.P, ref.P) < DROP_IN_RTOL


def test_filterpy_saver_records_the_same_history():
    from filterpy.common import Saver  # noqa: PLC0415

    zs = cv_measurements(20, seed=9)
    saved = []
    for cls, fx, hx in ((filterpy_kalman.UnscentedKalmanFilter, *CV_NP), (UnscentedKalmanFilter, *CV_JAX)):
        kf = cls(4, 2, 0.1, hx, fx, filterpy_kalman.MerweScaledSigmaPoints(4, 0.3, 2.0, 0.0))
        kf.R *= 0.01
        kf.Q *= 1e-4
        saver = Saver(kf)
        kf.batch_filter(zs, saver=saver)
        saver.to_array()
        saved.append(saver)
    ref, ours = saved
    for key in ("x", "P", "x_prior", "P_prior", "K", "y", "S", "log_likelihood"):
        assert normwise(getattr(ours, key), getattr(ref, key)) < DROP_IN_RTOL, key
