"""Unscented Kalman filter (UKF): the functional core (pure functions, JAX-traceable).

The maths is the additive-noise UKF of van der Merwe (2004, Algorithm 3.5.1 with the
scaled sigma points of :mod:`rths_ident.estimators.sigma_points`), in the exact order
``filterpy.kalman.UnscentedKalmanFilter`` (v1.4.5 / 2.0) uses, so the two give the same
numbers:

predict (prior)::

    χ      = sigma_points(x, P)                    # 2n+1 points (n+1 for simplex points)
    χ_f,i  = fx(χ_i, dt, **fx_args)
    x⁻     = Σ Wm_i χ_f,i
    P⁻     = Σ Wc_i (χ_f,i − x⁻)(χ_f,i − x⁻)ᵀ + Q

update (posterior)::

    χ      = sigma_points(x⁻, P⁻)                  # filterpy re-draws the points here
    γ_i    = hx(χ_i, **hx_args)
    ẑ      = Σ Wm_i γ_i
    S      = Σ Wc_i (γ_i − ẑ)(γ_i − ẑ)ᵀ + R
    Pxz    = Σ Wc_i (χ_i − x⁻)(γ_i − ẑ)ᵀ
    K      = Pxz S⁻¹
    y      = z − ẑ
    x⁺     = x⁻ + K y
    P⁺     = P⁻ − K S Kᵀ                           # no symmetrisation (as filterpy)

Rauch–Tung–Striebel smoother (filterpy's ``UnscentedKalmanFilter.rts_smoother``), for
k = N−2 … 0 from the filtered ``(x_k, P_k)`` and the smoothed ``(xˢ_k+1, Pˢ_k+1)``::

    χ      = sigma_points(x_k, P_k);  χ_f,i = fx(χ_i, dt_k)
    x̄, P̄   = Σ Wm_i χ_f,i,  Σ Wc_i (χ_f,i − x̄)(χ_f,i − x̄)ᵀ + Q_k
    Pxx̄    = Σ Wc_i (χ_i − x_k)(χ_f,i − x̄)ᵀ
    G      = Pxx̄ P̄⁻¹
    xˢ_k   = x_k + G (xˢ_k+1 − x̄);   Pˢ_k = P_k + G (Pˢ_k+1 − P̄) Gᵀ

Everything here is pure and JAX-traceable (runs in ``jit``/``scan``/``vmap``/``grad``):
:func:`ukf_init`, :func:`ukf_predict`, :func:`ukf_update`, :func:`ukf_step`,
:func:`ukf_scan`, :func:`ukf_rts_smoother`, :func:`unscented_transform`. The user
functions (``fx``, ``hx``, ``x_mean_fn``, ``residual_x``, …, a custom ``UT``) are
called on traced arrays, so they must be written with ``jax.numpy`` — or be wrapped so
that they call back into Python (what ``UnscentedKalmanFilter(host_functions=True)``
does). The stateful wrapper is :class:`rths_ident.estimators.ukf.UnscentedKalmanFilter`.

**Sigma points.** ``ukf_init`` reads any object :func:`~rths_ident.estimators.
sigma_points.sigma_point_spec` accepts: rths_ident's or filterpy's van der Merwe,
Julier and simplex points, or a custom generator.

**Custom unscented transform.** ``UT(sigmas, Wm, Wc, noise_cov, mean_fn, residual_fn)
-> (mean, cov)`` replaces :func:`unscented_transform` in predict and update (filterpy's
``UT=`` argument); it receives ``residual_fn = jnp.subtract`` when no residual is set
(filterpy passes ``np.subtract``).

**Bounds (joint state–parameter estimation).** ``ukf_init(..., lower_bound=...,
upper_bound=...)`` sets a box on the state (±inf for unbounded components). The box is
enforced by *sigma-point projection by clipping* (Kandepu, Foss & Imsland 2008): every
sigma point is clipped into the box before it goes through ``fx`` or ``hx``, and the
prior and posterior means are clipped too. The covariances are not altered. Without
bounds (the default) no clipping happens and the numbers are filterpy's.

**Small filters.** For state and measurement sizes ≤ ``small_linalg.MAX_UNROLLED_SIZE``
(8) the products are written as multiply-sum and the Cholesky factorisations and
solves entry by entry (:mod:`rths_ident.small_linalg`), so a loop holding a filter step
has no ``dot`` and no LAPACK call and XLA:CPU can emit it as one kernel
(:mod:`rths_ident.small_loop_kernels`); larger filters use ``@`` and LAPACK. The two
give the same numbers up to rounding.
"""

from __future__ import annotations

import math
from functools import partial
from typing import Any, Callable, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from rths_ident import small_linalg as sl
from rths_ident.errors import ParameterError
from rths_ident._params import field_range, params_dataclass
from rths_ident.estimators.covariance_checks import box_bound, square_covariance
from rths_ident.estimators.filter_scan import scan_filter
from rths_ident.estimators.sigma_points import merwe_sigma_points, sigma_point_spec, simplex_sigma_points

__all__ = [
    "UKFParams",
    "UKFState",
    "UKFUpdateInfo",
    "UKFHistory",
    "UKFSmootherResult",
    "ukf_init",
    "ukf_predict",
    "ukf_update",
    "ukf_step",
    "ukf_scan",
    "ukf_rts_smoother",
    "unscented_transform",
]


@params_dataclass(
    static=(
        "sqrt_method", "sigma_subtract", "x_mean_fn", "z_mean_fn", "residual_x", "residual_z", "state_add",
        "sigma_kind", "sigma_generator",
    )
)  # fmt: skip
class UKFParams:
    """Everything that configures a UKF except the models ``fx``/``hx``.

    Build it with :func:`ukf_init` (which checks shapes). Numeric fields are pytree
    leaves; the optional user functions are static (changing them recompiles).
    """

    process_noise_cov: Any = field_range(doc="Q, process noise covariance (units of x²)")
    measurement_noise_cov: Any = field_range(doc="R, measurement noise covariance (units of z²)")
    mean_weights: Any = field_range(doc="Wm, sigma-point weights for the mean")
    covariance_weights: Any = field_range(doc="Wc, sigma-point weights for the covariance")
    sigma_spread: Any = field_range(
        low=0.0, low_inclusive=False, doc="n + λ (van der Merwe), n + κ (Julier), 1 (simplex): P is scaled by it"
    )
    dt: Any = field_range(doc="time step passed to fx [s]")
    lower_bound: Any = None  # state box, or None (no bound); may contain -inf
    upper_bound: Any = None  # state box, or None (no bound); may contain +inf
    sqrt_method: Callable | None = None
    sigma_subtract: Callable | None = None
    x_mean_fn: Callable | None = None
    z_mean_fn: Callable | None = None
    residual_x: Callable | None = None
    residual_z: Callable | None = None
    state_add: Callable | None = None
    sigma_kind: str = "symmetric"  # "symmetric" (2n+1 points), "simplex" (n+1) or "custom"
    sigma_generator: Callable | None = None  # "custom": sigma_generator(x, P) -> (N, n)


class UKFState(NamedTuple):
    """Mean ``x`` (n,) and covariance ``P`` (n, n) of the state estimate."""

    x: jax.Array
    P: jax.Array


class UKFUpdateInfo(NamedTuple):
    """By-products of an update: gain ``K`` (n, m), innovation ``y`` (m,), innovation
    covariance ``S`` (m, m), predicted measurement ``z_pred`` (m,) and the Gaussian
    log-likelihood of ``y`` under ``N(0, S)``."""

    K: jax.Array
    y: jax.Array
    S: jax.Array
    z_pred: jax.Array
    log_likelihood: jax.Array


class UKFHistory(NamedTuple):
    """Per-step record from :func:`ukf_scan` (leading axis = time step)."""

    x_prior: jax.Array
    P_prior: jax.Array
    x: jax.Array
    P: jax.Array
    y: jax.Array
    S: jax.Array
    log_likelihood: jax.Array


def ukf_init(
    points,
    x0,
    P0,
    Q,
    R,
    dt: float,
    *,
    lower_bound=None,
    upper_bound=None,
    x_mean_fn=None,
    z_mean_fn=None,
    residual_x=None,
    residual_z=None,
    state_add=None,
) -> tuple[UKFParams, UKFState]:
    """Parameters and initial state of a UKF.

    ``points``: a sigma-point object, rths_ident's or filterpy's (van der Merwe, Julier,
    simplex; see :func:`~rths_ident.estimators.sigma_points.sigma_point_spec`; its ``n``
    fixes the state size and its ``sqrt``/``subtract`` must be JAX-traceable);
    ``x0`` (n,), ``P0`` (n, n) or scalar; ``Q`` (n, n) or scalar; ``R`` (m, m) or scalar
    (m = 1 then); ``dt`` [s]. ``lower_bound``/``upper_bound``: state box (scalar or
    (n,), ±inf or NaN for unbounded), enforced by sigma-point clipping (module doc).
    The optional functions have filterpy's meaning and must be JAX-traceable.
    """
    spec = sigma_point_spec(points)
    n = spec.n
    x0 = np.atleast_1d(np.asarray(x0, dtype=float)).reshape(-1)
    if x0.shape != (n,):
        raise ParameterError(f"x0 must have shape ({n},) (points.n); got {x0.shape}")
    P0 = square_covariance("P0", P0, n, definite=True)
    Q = square_covariance("Q", Q, n)
    R_arr = np.asarray(R, dtype=float)
    m = 1 if R_arr.ndim == 0 else R_arr.shape[0]
    R = square_covariance("R", R, m)
    lower = box_bound("lower_bound", lower_bound, n, -np.inf)
    upper = box_bound("upper_bound", upper_bound, n, np.inf)
    if lower is not None and upper is not None and np.any(lower > upper):
        raise ParameterError(f"lower_bound must be <= upper_bound; got {lower} > {upper}")
    params = UKFParams(
        process_noise_cov=_on_device(Q),
        measurement_noise_cov=_on_device(R),
        mean_weights=_on_device(spec.mean_weights),
        covariance_weights=_on_device(spec.covariance_weights),
        sigma_spread=float(spec.spread),
        dt=float(dt),
        lower_bound=None if lower is None else _on_device(lower),
        upper_bound=None if upper is None else _on_device(upper),
        sqrt_method=spec.sqrt_method,
        sigma_subtract=spec.subtract,
        x_mean_fn=x_mean_fn,
        z_mean_fn=z_mean_fn,
        residual_x=residual_x,
        residual_z=residual_z,
        state_add=state_add,
        sigma_kind=spec.kind,
        sigma_generator=spec.generator,
    )
    return params, UKFState(_on_device(x0), _on_device(P0))


def _on_device(values) -> jax.Array:
    """A set-up array as a JAX array: ``jax.device_put`` of its NumPy value, the array
    ``jnp.asarray`` gives, without the small program per shape ``jnp.asarray`` compiles."""
    return jax.device_put(np.asarray(values))


def _clip(params: UKFParams, values):
    if params.lower_bound is None and params.upper_bound is None:
        return values
    return jnp.clip(values, params.lower_bound, params.upper_bound)


def _residuals(residual_fn, points, reference):
    if residual_fn is None:
        return points - reference[None, :]
    return jax.vmap(lambda p: residual_fn(p, reference))(points)


def unscented_transform(sigmas, Wm, Wc, noise_cov=None, mean_fn=None, residual_fn=None):
    """Mean and covariance of weighted sigma points (filterpy's ``unscented_transform``).

    ``sigmas`` (number of points, k); returns ``(mean (k,), covariance (k, k))``; ``noise_cov`` is
    added to the covariance when given.
    """
    small = _small(sigmas.shape[-1])
    if mean_fn is not None:
        mean = mean_fn(sigmas, Wm)
    else:
        mean = sl.vecmat(Wm, sigmas) if small else Wm @ sigmas
    dev = _residuals(residual_fn, sigmas, mean)
    cov = _weighted_cross(dev, Wc, dev, small)
    if noise_cov is not None:
        cov = cov + noise_cov
    return mean, cov


def _small(*sizes) -> bool:
    """Whether matrices of these sizes take the small path (module doc, "Small filters")."""
    return max(sizes) <= sl.MAX_UNROLLED_SIZE


def _weighted_cross(a, weights, b, small):
    """Σ_i w_i a_i b_iᵀ = aᵀ diag(w) b for deviations a (N, k), b (N, l)."""
    weighted = weights[:, None] * b
    return sl.matmul(a.T, weighted) if small else a.T @ weighted


def _sigma_points(params: UKFParams, state: UKFState):
    if params.sigma_kind == "custom":
        sig = jnp.reshape(params.sigma_generator(state.x, state.P), (-1, state.x.shape[0]))
    elif params.sigma_kind == "simplex":
        sig = simplex_sigma_points(state.x, state.P, params.sqrt_method, params.sigma_subtract)
    else:
        sig = merwe_sigma_points(state.x, state.P, params.sigma_spread, params.sqrt_method, params.sigma_subtract)
    return _clip(params, sig)


def _transform(params: UKFParams, sigmas, noise_cov, mean_fn, residual_fn, UT):
    """:func:`unscented_transform`, or the user's ``UT`` with filterpy's arguments."""
    if UT is None:
        return unscented_transform(
            sigmas, params.mean_weights, params.covariance_weights, noise_cov, mean_fn, residual_fn
        )
    residual = jnp.subtract if residual_fn is None else residual_fn
    mean, cov = UT(sigmas, params.mean_weights, params.covariance_weights, noise_cov, mean_fn, residual)
    k = sigmas.shape[1]
    mean = jnp.reshape(jnp.asarray(mean, dtype=sigmas.dtype), (k,))
    return mean, jnp.reshape(jnp.asarray(cov, dtype=sigmas.dtype), (k, k))


def _through(fn, sigmas, *args, **kwargs):
    """``fn`` applied to every sigma point (rows), each output flattened."""
    return jax.vmap(lambda s: jnp.reshape(fn(s, *args, **kwargs), (-1,)))(sigmas)


def ukf_predict(
    params: UKFParams, state: UKFState, fx: Callable, fx_args: dict | None = None, UT: Callable | None = None
) -> UKFState:
    """Prior ``(x⁻, P⁻)``: sigma points of ``state`` through ``fx(x, dt, **fx_args)``.

    Pure; ``fx`` must be written with ``jax.numpy`` and map an (n,) state to (n,).
    ``UT``: optional custom unscented transform (module doc).
    """
    fx_args = {} if fx_args is None else fx_args
    sigmas_f = _through(fx, _sigma_points(params, state), params.dt, **fx_args)
    x, P = _transform(params, sigmas_f, params.process_noise_cov, params.x_mean_fn, params.residual_x, UT)
    return UKFState(_clip(params, x), P)


def ukf_update(
    params: UKFParams, state: UKFState, z, hx: Callable, hx_args: dict | None = None, UT: Callable | None = None
) -> tuple[UKFState, UKFUpdateInfo]:
    """Posterior given measurement ``z`` (m,) and ``hx(x, **hx_args)`` -> (m,).

    ``state`` is the prior from :func:`ukf_predict`. Returns the posterior and an
    :class:`UKFUpdateInfo`. ``UT``: optional custom unscented transform (module doc).
    Pure and JAX-traceable.
    """
    hx_args = {} if hx_args is None else hx_args
    z = jnp.reshape(jnp.asarray(z, dtype=state.x.dtype), (-1,))
    sigmas = _sigma_points(params, state)
    sigmas_h = _through(hx, sigmas, **hx_args)
    z_pred, S = _transform(params, sigmas_h, params.measurement_noise_cov, params.z_mean_fn, params.residual_z, UT)
    dx = _residuals(params.residual_x, sigmas, state.x)
    dz = _residuals(params.residual_z, sigmas_h, z_pred)
    small = _small(state.x.shape[0], z_pred.shape[0])
    Pxz = _weighted_cross(dx, params.covariance_weights, dz, small)
    y = z - z_pred if params.residual_z is None else jnp.reshape(params.residual_z(z, z_pred), (-1,))
    # lower factor, NaN if S is not positive definite (jnp.linalg.cholesky's convention
    # either way; the unrolled one for small S)
    S_factor = sl.cholesky(S) if small else jnp.linalg.cholesky(S)
    # one solve for both S⁻¹ Pxzᵀ (the gain, S symmetric) and S⁻¹ y (the likelihood)
    solved = sl.cho_solve(S_factor, jnp.concatenate([Pxz.T, y[:, None]], axis=1))
    K = solved[:, :-1].T  # K = Pxz S⁻¹
    Ky = sl.matvec(K, y) if small else K @ y
    x = state.x + Ky if params.state_add is None else jnp.reshape(params.state_add(state.x, Ky), (-1,))
    P = state.P - (sl.quadratic_form(K, S) if small else K @ S @ K.T)
    m = z_pred.shape[0]
    maha2 = sl.vdot(y, solved[:, -1]) if small else y @ solved[:, -1]
    log_det = 2.0 * jnp.sum(jnp.log(jnp.diag(S_factor)))
    log_likelihood = -0.5 * (m * math.log(2.0 * math.pi) + log_det + maha2)
    return UKFState(_clip(params, x), P), UKFUpdateInfo(K, y, S, z_pred, log_likelihood)


def ukf_step(
    params: UKFParams,
    state: UKFState,
    z,
    fx: Callable,
    hx: Callable,
    fx_args: dict | None = None,
    hx_args: dict | None = None,
    UT: Callable | None = None,
) -> tuple[UKFState, tuple[UKFState, UKFUpdateInfo]]:
    """One predict + update (``UT`` used by both). Returns ``(posterior, (prior, info))``."""
    prior = ukf_predict(params, state, fx, fx_args, UT)
    posterior, info = ukf_update(params, prior, z, hx, hx_args, UT)
    return posterior, (prior, info)


@partial(jax.jit, static_argnames=("fx", "hx", "UT"))
def ukf_scan(
    fx: Callable,
    hx: Callable,
    params: UKFParams,
    state0: UKFState,
    zs,
    fx_args_seq: dict | None = None,
    hx_args_seq: dict | None = None,
    UT: Callable | None = None,
) -> tuple[UKFState, UKFHistory]:
    """Filter a whole record in one ``jax.lax.scan`` (compiled once per ``fx``/``hx``).

    ``zs`` (N, m) measurements; ``fx_args_seq`` / ``hx_args_seq``: dicts of arrays
    with leading axis N, sliced per step and passed as keyword arguments
    (``fx(x, dt, **fx_args_seq[k])``). Each step is predict then update, like a
    ``predict(); update(z)`` loop with the wrapper. Returns the final posterior and a
    :class:`UKFHistory`.
    """
    return scan_filter(
        lambda state, z, fx_args, hx_args: ukf_step(params, state, z, fx, hx, fx_args, hx_args, UT),
        lambda prior, posterior, info: UKFHistory(prior.x, prior.P, posterior.x, posterior.P, info.y, info.S,
                                                  info.log_likelihood),
        state0, zs, fx_args_seq, hx_args_seq)


class UKFSmootherResult(NamedTuple):
    """Output of :func:`ukf_rts_smoother`: smoothed means ``x`` (N, n), covariances
    ``P`` (N, n, n) and smoother gains ``K`` (N, n, n; the last one is zero)."""

    x: jax.Array
    P: jax.Array
    K: jax.Array


@partial(jax.jit, static_argnames=("fx", "UT"))
def ukf_rts_smoother(
    fx: Callable,
    params: UKFParams,
    xs,
    Ps,
    dts=None,
    Qs=None,
    fx_args_seq: dict | None = None,
    UT: Callable | None = None,
) -> UKFSmootherResult:
    """Rauch–Tung–Striebel smoothing of filtered means ``xs`` (N, n) and covariances
    ``Ps`` (N, n, n) (e.g. from :func:`ukf_scan`: ``hist.x``, ``hist.P``), in one
    backward ``jax.lax.scan`` (module doc).

    ``dts``: scalar or (N,) time steps passed to ``fx`` (default ``params.dt``);
    ``Qs``: (n, n) or (N, n, n) process noise (default ``params.process_noise_cov``);
    ``fx_args_seq``: dict of arrays with leading axis N, as for :func:`ukf_scan`.
    With bounds, sigma points and means are clipped as in :func:`ukf_predict`.
    """
    xs = jnp.asarray(xs, dtype=float)
    Ps = jnp.asarray(Ps, dtype=float)
    count, n = xs.shape
    dts = jnp.broadcast_to(jnp.asarray(params.dt if dts is None else dts, dtype=xs.dtype), (count,))
    Qs = jnp.broadcast_to(jnp.asarray(params.process_noise_cov if Qs is None else Qs, dtype=xs.dtype), (count, n, n))
    fx_args_seq = {} if fx_args_seq is None else fx_args_seq
    Wc = params.covariance_weights

    def body(smoothed_next, inputs):
        x_next, P_next = smoothed_next
        x, P, dt, Q, fx_args = inputs
        sigmas = _sigma_points(params, UKFState(x, P))
        sigmas_f = _through(fx, sigmas, dt, **fx_args)
        x_bar, P_bar = _transform(params, sigmas_f, Q, params.x_mean_fn, params.residual_x, UT)
        x_bar = _clip(params, x_bar)
        dx = _residuals(params.residual_x, sigmas, x)
        dx_bar = _residuals(params.residual_x, sigmas_f, x_bar)
        cross = dx.T @ (Wc[:, None] * dx_bar)
        gain = jnp.linalg.solve(P_bar, cross.T).T  # cross P̄⁻¹ (P̄ symmetric)
        ahead = x_next - x_bar if params.residual_x is None else jnp.reshape(params.residual_x(x_next, x_bar), (-1,))
        x_s = _clip(params, x + gain @ ahead)
        P_s = P + gain @ (P_next - P_bar) @ gain.T
        return (x_s, P_s), (x_s, P_s, gain)

    earlier = jax.tree_util.tree_map(lambda a: a[:-1], (xs, Ps, dts, Qs, fx_args_seq))
    _, (x_s, P_s, gains) = jax.lax.scan(body, (xs[-1], Ps[-1]), earlier, reverse=True)
    return UKFSmootherResult(
        jnp.concatenate([x_s, xs[-1:]]), jnp.concatenate([P_s, Ps[-1:]]), jnp.concatenate([gains, jnp.zeros((1, n, n))])
    )
