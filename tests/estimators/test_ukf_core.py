"""The UKF functional core (rths_ident.estimators.ukf_core) against filterpy: filterpy's
sigma-point objects read by ukf_init, the RTS smoother, a custom unscented transform and
a user sigma-point generator, all inside compiled scans."""

import numpy as np
import pytest
from filterpy.kalman import JulierSigmaPoints as FilterpyJulier
from filterpy.kalman import MerweScaledSigmaPoints as FilterpyMerwe
from filterpy.kalman import SimplexSigmaPoints as FilterpySimplex
from filterpy.kalman import UnscentedKalmanFilter as FilterpyUKF
from filterpy.kalman import unscented_transform as filterpy_ut

import jax
import jax.numpy as jnp

import rths_ident  # noqa: F401  (float64)
from rths_ident.estimators.ukf_core import ukf_init, ukf_rts_smoother, ukf_scan

DT = 0.05
RTOL = 1e-10  # max |ours − filterpy| / max |filterpy|, per array


def normwise(ours, ref):
    ours, ref = np.asarray(ours, dtype=float), np.asarray(ref, dtype=float)
    return float(np.max(np.abs(ours - ref)) / np.max(np.abs(ref)))


def pendulum(xp):
    """Damped pendulum (θ, ω) with a drift term, one explicit midpoint step; observed
    through the bob's horizontal position and the angular rate."""

    def fx(x, dt):
        def rate(s):
            return xp.array([s[1], -9.81 * xp.sin(s[0]) - 0.3 * s[1]])

        mid = x + 0.5 * dt * rate(x)
        return x + dt * rate(mid)

    def hx(x):
        return xp.array([xp.sin(x[0]), x[1]])

    return fx, hx


FX_NP, HX_NP = pendulum(np)
FX_JAX, HX_JAX = pendulum(jnp)
X0, P0 = np.array([1.2, 0.0]), np.diag([0.3, 0.5])
Q, R = np.diag([1e-5, 1e-4]), np.diag([0.02**2, 0.05**2])


@pytest.fixture(scope="module")
def measurements():
    rng = np.random.default_rng(4)
    truth, zs = np.array([1.0, 0.5]), []
    for _ in range(150):
        truth = FX_NP(truth, DT)
        zs.append(HX_NP(truth) + rng.normal(0.0, [0.02, 0.05]))
    return np.array(zs)


def filterpy_run(points, zs, UT=None, fx=FX_NP, hx=HX_NP):
    kf = FilterpyUKF(2, 2, DT, hx, fx, points)
    kf.x, kf.P, kf.Q, kf.R = X0.copy(), P0.copy(), Q.copy(), R.copy()
    means, covs, lls = [], [], []
    for z in zs:
        kf.predict(UT=UT)
        kf.update(z, UT=UT)
        means.append(kf.x.copy())
        covs.append(kf.P.copy())
        lls.append(kf.log_likelihood)
    return kf, np.array(means), np.array(covs), np.array(lls)


FILTERPY_POINTS = {
    "merwe": lambda: FilterpyMerwe(2, alpha=0.2, beta=2.0, kappa=1.0),
    "julier": lambda: FilterpyJulier(2, kappa=1.0),
    "simplex": lambda: FilterpySimplex(2),
}


@pytest.mark.parametrize("kind", list(FILTERPY_POINTS))
def test_ukf_init_reads_filterpy_points_and_the_scan_matches_filterpy(kind, measurements):
    _, means, covs, lls = filterpy_run(FILTERPY_POINTS[kind](), measurements)
    params, state = ukf_init(FILTERPY_POINTS[kind](), X0, P0, Q, R, DT)
    assert params.sigma_kind == ("simplex" if kind == "simplex" else "symmetric")
    assert params.sqrt_method is None and params.sigma_subtract is None  # filterpy's defaults, compiled
    _, hist = ukf_scan(FX_JAX, HX_JAX, params, state, measurements)
    assert normwise(hist.x, means) < RTOL
    assert normwise(hist.P, covs) < RTOL
    np.testing.assert_allclose(np.asarray(hist.log_likelihood), lls, rtol=RTOL)


@pytest.mark.parametrize("kind", list(FILTERPY_POINTS))
def test_rts_smoother_matches_filterpy(kind, measurements):
    kf, means, covs, _ = filterpy_run(FILTERPY_POINTS[kind](), measurements)
    xs_ref, Ps_ref, Ks_ref = kf.rts_smoother(means, covs)
    params, _ = ukf_init(FILTERPY_POINTS[kind](), X0, P0, Q, R, DT)
    smoothed = ukf_rts_smoother(FX_JAX, params, means, covs)
    assert normwise(smoothed.x, xs_ref) < RTOL
    assert normwise(smoothed.P, Ps_ref) < RTOL
    assert normwise(smoothed.K, Ks_ref) < RTOL
    # smoothing changed the estimates and shrank the uncertainty
    assert np.all(np.trace(np.asarray(smoothed.P)[:-1], axis1=1, axis2=2) < np.trace(covs[:-1], axis1=1, axis2=2))


def test_rts_smoother_per_step_dts_and_Qs(measurements):
    """dts as in filterpy; Qs per step (filterpy 2.0 ignores its Qs argument and uses
    self.Q, so the reference filter's Q is set to that value instead)."""
    kf, means, covs, _ = filterpy_run(FILTERPY_POINTS["merwe"](), measurements)
    dts = DT * (1.0 + 0.1 * (np.arange(len(means)) % 3))
    Q_smooth = np.diag([4e-5, 2e-4])
    kf.Q = Q_smooth
    xs_ref, Ps_ref, _ = kf.rts_smoother(means, covs, dts=dts)
    params, _ = ukf_init(FILTERPY_POINTS["merwe"](), X0, P0, Q, R, DT)
    smoothed = ukf_rts_smoother(FX_JAX, params, means, covs, dts, np.tile(Q_smooth, (len(means), 1, 1)))
    assert normwise(smoothed.x, xs_ref) < RTOL
    assert normwise(smoothed.P, Ps_ref) < RTOL


def test_custom_unscented_transform_in_the_scan(measurements):
    """``UT=``: a transform with 10 % covariance inflation, jax.numpy vs numpy in filterpy."""

    def inflated_np(sigmas, Wm, Wc, noise_cov, mean_fn, residual_fn):
        mean, cov = filterpy_ut(sigmas, Wm, Wc, noise_cov, mean_fn, residual_fn)
        return mean, 1.1 * cov

    def inflated_jax(sigmas, Wm, Wc, noise_cov, mean_fn, residual_fn):
        assert mean_fn is None and residual_fn is jnp.subtract  # filterpy passes np.subtract
        mean = Wm @ sigmas
        dev = sigmas - mean
        return mean, 1.1 * (dev.T @ (Wc[:, None] * dev) + noise_cov)

    _, means, covs, _ = filterpy_run(FILTERPY_POINTS["julier"](), measurements, UT=inflated_np)
    _, plain, _, _ = filterpy_run(FILTERPY_POINTS["julier"](), measurements)
    params, state = ukf_init(FILTERPY_POINTS["julier"](), X0, P0, Q, R, DT)
    _, hist = ukf_scan(FX_JAX, HX_JAX, params, state, measurements, UT=inflated_jax)
    assert normwise(hist.x, means) < RTOL
    assert normwise(hist.P, covs) < RTOL
    assert normwise(plain, means) > 1e-6  # the transform mattered


class ShrunkPoints(FilterpyMerwe):
    """A user's own sigma-point generator: filterpy's points pulled 10 % towards the mean."""

    def __init__(self, xp, *args):
        super().__init__(*args)
        self.xp = xp

    def sigma_points(self, x, P):
        sig = super().sigma_points(x, P) if self.xp is np else self._jax_points(x, P)
        return x + 0.9 * (sig - x)

    def _jax_points(self, x, P):
        U = jnp.linalg.cholesky(self._spread() * P).T
        return jnp.concatenate([x[None, :], x + U, x - U])

    def _spread(self):
        return self.alpha**2 * (self.n + self.kappa)


def test_custom_sigma_point_generator_compiled(measurements):
    _, means, covs, _ = filterpy_run(ShrunkPoints(np, 2, 0.5, 2.0, 0.0), measurements)
    params, state = ukf_init(ShrunkPoints(jnp, 2, 0.5, 2.0, 0.0), X0, P0, Q, R, DT)
    assert params.sigma_kind == "custom"
    _, hist = ukf_scan(FX_JAX, HX_JAX, params, state, measurements)
    assert normwise(hist.x, means) < RTOL
    assert normwise(hist.P, covs) < RTOL


def test_smoother_runs_under_vmap(measurements):
    """The smoother runs under vmap (a batch of two records in one call) and gives each
    record's own result."""
    kf, means, covs, _ = filterpy_run(FILTERPY_POINTS["simplex"](), measurements)
    first = kf.rts_smoother(means, covs)[0]
    _, means2, covs2, _ = filterpy_run(FILTERPY_POINTS["simplex"](), measurements[::-1])
    second = kf.rts_smoother(means2, covs2)[0]
    params, _ = ukf_init(FILTERPY_POINTS["simplex"](), X0, P0, Q, R, DT)
    batched = jax.vmap(lambda x, P: ukf_rts_smoother(FX_JAX, params, x, P).x)(
        jnp.stack([means, means2]), jnp.stack([covs, covs2])
    )
    assert normwise(batched[0], first) < RTOL
    assert normwise(batched[1], second) < RTOL


def test_ukf_init_rejects_what_is_not_a_points_object():
    with pytest.raises(TypeError, match=r"points must be a sigma-point object.*lacks n, Wm, Wc"):
        ukf_init(object(), X0, P0, Q, R, DT)
    with pytest.raises(Exception, match=r"x0 must have shape \(2,\)"):
        ukf_init(FilterpySimplex(2), np.zeros(3), P0, Q, R, DT)


def chain(xp, n):
    """n coupled, damped oscillators in a ring, one explicit Euler step with a sine
    nonlinearity; observed through the sine of every other state."""
    coupling = -np.eye(n) * 1.5 + np.roll(np.eye(n), 1, axis=1) * 0.4 + np.roll(np.eye(n), -1, axis=1) * 0.3

    def fx(x, dt):
        return x + dt * (xp.asarray(coupling) @ x + 0.5 * xp.sin(x))

    def hx(x):
        return xp.sin(x[::2])

    return fx, hx


@pytest.mark.parametrize("n", [6, 10])
def test_small_and_large_filters_match_filterpy(n):
    """n ≤ small_linalg.MAX_UNROLLED_SIZE (8): unrolled Cholesky and solves, no LAPACK
    call in the compiled scan (a loop XLA can emit as one kernel); n = 10: LAPACK's.
    Both give filterpy's numbers."""
    from rths_ident.small_linalg import MAX_UNROLLED_SIZE  # noqa: PLC0415

    fx_np, hx_np = chain(np, n)
    fx_jax, hx_jax = chain(jnp, n)
    m = (n + 1) // 2
    rng = np.random.default_rng(n)
    x0, P0n = rng.normal(size=n), np.diag(rng.uniform(0.1, 0.5, size=n))
    Qn, Rn = 1e-4 * np.eye(n), 0.05**2 * np.eye(m)
    truth, zs = x0 + 0.3, []
    for _ in range(60):
        truth = fx_np(truth, DT)
        zs.append(hx_np(truth) + rng.normal(0.0, 0.05, size=m))
    zs = np.array(zs)
    kf = FilterpyUKF(n, m, DT, hx_np, fx_np, FilterpyMerwe(n, alpha=0.3, beta=2.0, kappa=0.0))
    kf.x, kf.P, kf.Q, kf.R = x0.copy(), P0n.copy(), Qn.copy(), Rn.copy()
    means, covs = [], []
    for z in zs:
        kf.predict()
        kf.update(z)
        means.append(kf.x.copy())
        covs.append(kf.P.copy())
    params, state = ukf_init(FilterpyMerwe(n, alpha=0.3, beta=2.0, kappa=0.0), x0, P0n, Qn, Rn, DT)
    _, hist = ukf_scan(fx_jax, hx_jax, params, state, zs)
    assert normwise(hist.x, np.array(means)) < RTOL
    assert normwise(hist.P, np.array(covs)) < RTOL
    text = ukf_scan.lower(fx_jax, hx_jax, params, state, zs).compile().as_text()
    lapack = "lapack_dpotrf" in text or "lapack_dtrsm" in text
    assert lapack == (n > MAX_UNROLLED_SIZE)
