"""Unscented Kalman filter (UKF): a pure JAX core and a filterpy-compatible wrapper.

The maths is the additive-noise UKF of van der Merwe (2004, Algorithm 3.5.1 with the
scaled sigma points of :mod:`rths_ident.estimators.sigma_points`), in the exact order
``filterpy.kalman.UnscentedKalmanFilter`` (v1.4.5 / 2.0) uses, so the two give the same
numbers:

predict (prior)::

    χ      = sigma_points(x, P)                    # 2n+1 points
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

Functional core (pure, JAX-traceable; runs in ``jit``/``scan``/``vmap``):
:func:`ukf_init`, :func:`ukf_predict`, :func:`ukf_update`, :func:`ukf_step`,
:func:`ukf_scan`. Stateful wrapper: :class:`UnscentedKalmanFilter`.

**Bounds (joint state–parameter estimation).** ``ukf_init(..., lower_bound=...,
upper_bound=...)`` sets a box on the state (±inf for unbounded components). The box is
enforced by *sigma-point projection by clipping* (Kandepu, Foss & Imsland 2008): every
sigma point is clipped into the box before it goes through ``fx`` or ``hx``, and the
prior and posterior means are clipped too. The covariances are not altered. Without
bounds (the default) no clipping happens and the numbers are filterpy's.
"""

from __future__ import annotations

import math
from functools import partial
from typing import Any, Callable, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax.scipy.linalg import cho_solve

from rths_ident._params import ParameterError, field_range, params_dataclass
from rths_ident.estimators.sigma_points import MerweScaledSigmaPoints, merwe_sigma_points

__all__ = [
    "UKFParams",
    "UKFState",
    "UKFUpdateInfo",
    "UKFHistory",
    "UnscentedKalmanFilter",
    "ukf_init",
    "ukf_predict",
    "ukf_update",
    "ukf_step",
    "ukf_scan",
    "unscented_transform",
]


# --------------------------------------------------------------------------------------
# functional core
# --------------------------------------------------------------------------------------


@params_dataclass(
    static=("sqrt_method", "sigma_subtract", "x_mean_fn", "z_mean_fn", "residual_x", "residual_z", "state_add")
)
class UKFParams:
    """Everything that configures a UKF except the models ``fx``/``hx``.

    Build it with :func:`ukf_init` (which checks shapes). Numeric fields are pytree
    leaves; the optional user functions are static (changing them recompiles).
    """

    process_noise_cov: Any = field_range(doc="Q, process noise covariance (units of x²)")
    measurement_noise_cov: Any = field_range(doc="R, measurement noise covariance (units of z²)")
    mean_weights: Any = field_range(doc="Wm, sigma-point weights for the mean")
    covariance_weights: Any = field_range(doc="Wc, sigma-point weights for the covariance")
    sigma_spread: Any = field_range(low=0.0, low_inclusive=False, doc="n + λ of the scaled sigma points")
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


def _check_covariance(name, arr, definite: bool, error=ParameterError):
    """``arr`` must be symmetric and positive (semi-)definite."""
    if not np.all(np.isfinite(arr)):
        raise error(f"{name} must be finite")
    scale = max(float(np.max(np.abs(arr))), np.finfo(float).tiny)
    if np.max(np.abs(arr - arr.T)) > 1e-8 * scale:
        raise error(f"{name} must be symmetric (a covariance matrix)")
    if definite:
        try:
            np.linalg.cholesky(arr)
        except np.linalg.LinAlgError:
            raise error(f"{name} must be positive definite (its Cholesky factor gives the sigma points)") from None
    elif np.min(np.linalg.eigvalsh(arr)) < -1e-10 * scale:
        raise error(f"{name} must be positive semi-definite")


def _square(name, value, size, definite=False):
    arr = np.asarray(value, dtype=float)
    if arr.ndim == 0:
        arr = np.eye(size) * arr
    if arr.shape != (size, size):
        raise ParameterError(f"{name} must have shape ({size}, {size}); got {arr.shape}")
    _check_covariance(name, arr, definite)
    return arr


def _bound(name, value, size, fill):
    if value is None:
        return None
    arr = np.broadcast_to(np.asarray(value, dtype=float), (size,)).copy()
    arr[np.isnan(arr)] = fill
    return arr


def ukf_init(
    points: MerweScaledSigmaPoints,
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

    ``points``: a :class:`MerweScaledSigmaPoints` (its ``n`` fixes the state size);
    ``x0`` (n,), ``P0`` (n, n) or scalar; ``Q`` (n, n) or scalar; ``R`` (m, m) or scalar
    (m = 1 then); ``dt`` [s]. ``lower_bound``/``upper_bound``: state box (scalar or
    (n,), ±inf or NaN for unbounded), enforced by sigma-point clipping (module doc).
    The optional functions have filterpy's meaning and must be JAX-traceable.
    """
    n = points.n
    x0 = np.atleast_1d(np.asarray(x0, dtype=float)).reshape(-1)
    if x0.shape != (n,):
        raise ParameterError(f"x0 must have shape ({n},) (points.n); got {x0.shape}")
    P0 = _square("P0", P0, n, definite=True)
    Q = _square("Q", Q, n)
    R_arr = np.asarray(R, dtype=float)
    m = 1 if R_arr.ndim == 0 else R_arr.shape[0]
    R = _square("R", R, m)
    lower = _bound("lower_bound", lower_bound, n, -np.inf)
    upper = _bound("upper_bound", upper_bound, n, np.inf)
    if lower is not None and upper is not None and np.any(lower > upper):
        raise ParameterError(f"lower_bound must be <= upper_bound; got {lower} > {upper}")
    params = UKFParams(
        process_noise_cov=jnp.asarray(Q),
        measurement_noise_cov=jnp.asarray(R),
        mean_weights=jnp.asarray(points.Wm),
        covariance_weights=jnp.asarray(points.Wc),
        sigma_spread=float(points.spread),
        dt=float(dt),
        lower_bound=None if lower is None else jnp.asarray(lower),
        upper_bound=None if upper is None else jnp.asarray(upper),
        sqrt_method=points.sqrt,
        sigma_subtract=points.subtract,
        x_mean_fn=x_mean_fn,
        z_mean_fn=z_mean_fn,
        residual_x=residual_x,
        residual_z=residual_z,
        state_add=state_add,
    )
    return params, UKFState(jnp.asarray(x0), jnp.asarray(P0))


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

    ``sigmas`` (2n+1, k); returns ``(mean (k,), covariance (k, k))``; ``noise_cov`` is
    added to the covariance when given.
    """
    mean = Wm @ sigmas if mean_fn is None else mean_fn(sigmas, Wm)
    dev = _residuals(residual_fn, sigmas, mean)
    cov = dev.T @ (Wc[:, None] * dev)
    if noise_cov is not None:
        cov = cov + noise_cov
    return mean, cov


def _sigma_points(params: UKFParams, state: UKFState):
    sig = merwe_sigma_points(state.x, state.P, params.sigma_spread, params.sqrt_method, params.sigma_subtract)
    return _clip(params, sig)


def ukf_predict(params: UKFParams, state: UKFState, fx: Callable, fx_args: dict | None = None) -> UKFState:
    """Prior ``(x⁻, P⁻)``: sigma points of ``state`` through ``fx(x, dt, **fx_args)``.

    Pure; ``fx`` must be written with ``jax.numpy`` and map an (n,) state to (n,).
    """
    fx_args = {} if fx_args is None else fx_args
    sigmas = _sigma_points(params, state)
    sigmas_f = jax.vmap(lambda s: jnp.reshape(fx(s, params.dt, **fx_args), (-1,)))(sigmas)
    x, P = unscented_transform(
        sigmas_f,
        params.mean_weights,
        params.covariance_weights,
        params.process_noise_cov,
        params.x_mean_fn,
        params.residual_x,
    )
    return UKFState(_clip(params, x), P)


def ukf_update(
    params: UKFParams, state: UKFState, z, hx: Callable, hx_args: dict | None = None
) -> tuple[UKFState, UKFUpdateInfo]:
    """Posterior given measurement ``z`` (m,) and ``hx(x, **hx_args)`` -> (m,).

    ``state`` is the prior from :func:`ukf_predict`. Returns the posterior and an
    :class:`UKFUpdateInfo`. Pure and JAX-traceable.
    """
    hx_args = {} if hx_args is None else hx_args
    z = jnp.reshape(jnp.asarray(z, dtype=state.x.dtype), (-1,))
    sigmas = _sigma_points(params, state)
    sigmas_h = jax.vmap(lambda s: jnp.reshape(hx(s, **hx_args), (-1,)))(sigmas)
    z_pred, S = unscented_transform(
        sigmas_h,
        params.mean_weights,
        params.covariance_weights,
        params.measurement_noise_cov,
        params.z_mean_fn,
        params.residual_z,
    )
    dx = _residuals(params.residual_x, sigmas, state.x)
    dz = _residuals(params.residual_z, sigmas_h, z_pred)
    Pxz = dx.T @ (params.covariance_weights[:, None] * dz)
    y = z - z_pred if params.residual_z is None else params.residual_z(z, z_pred)
    S_factor = jnp.linalg.cholesky(S)
    # one solve for both S⁻¹ Pxzᵀ (the gain, S symmetric) and S⁻¹ y (the likelihood)
    solved = cho_solve((S_factor, True), jnp.concatenate([Pxz.T, y[:, None]], axis=1))
    K = solved[:, :-1].T  # K = Pxz S⁻¹
    Ky = K @ y
    x = state.x + Ky if params.state_add is None else params.state_add(state.x, Ky)
    P = state.P - K @ S @ K.T
    m = z_pred.shape[0]
    maha2 = y @ solved[:, -1]
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
) -> tuple[UKFState, tuple[UKFState, UKFUpdateInfo]]:
    """One predict + update. Returns ``(posterior, (prior, info))``."""
    prior = ukf_predict(params, state, fx, fx_args)
    posterior, info = ukf_update(params, prior, z, hx, hx_args)
    return posterior, (prior, info)


@partial(jax.jit, static_argnames=("fx", "hx"))
def ukf_scan(
    fx: Callable,
    hx: Callable,
    params: UKFParams,
    state0: UKFState,
    zs,
    fx_args_seq: dict | None = None,
    hx_args_seq: dict | None = None,
) -> tuple[UKFState, UKFHistory]:
    """Filter a whole record in one ``jax.lax.scan`` (compiled once per ``fx``/``hx``).

    ``zs`` (N, m) measurements; ``fx_args_seq`` / ``hx_args_seq``: dicts of arrays
    with leading axis N, sliced per step and passed as keyword arguments
    (``fx(x, dt, **fx_args_seq[k])``). Each step is predict then update, like a
    ``predict(); update(z)`` loop with the wrapper. Returns the final posterior and a
    :class:`UKFHistory`.
    """
    zs = jnp.asarray(zs)
    if zs.ndim == 1:
        zs = zs[:, None]
    fx_args_seq = {} if fx_args_seq is None else fx_args_seq
    hx_args_seq = {} if hx_args_seq is None else hx_args_seq

    def body(state, inputs):
        z, fx_args, hx_args = inputs
        posterior, (prior, info) = ukf_step(params, state, z, fx, hx, fx_args, hx_args)
        record = UKFHistory(prior.x, prior.P, posterior.x, posterior.P, info.y, info.S, info.log_likelihood)
        return posterior, record

    return jax.lax.scan(body, state0, (zs, fx_args_seq, hx_args_seq))


# --------------------------------------------------------------------------------------
# stateful wrapper
#
# Crossing from Python into compiled code costs ~5–10 µs per call plus ~1 µs per array
# argument and per output. The wrapper therefore keeps everything that evolves in ONE
# flat float64 vector (the "record": x, P, x_prior, P_prior, x_post, P_post, K, y, S,
# log-likelihood) and everything that configures it in another (the "config": Q, R,
# Wm, Wc, n+λ, bounds); a step is one compiled call record -> record, and a deferred
# predict() is fused with the next update().
# --------------------------------------------------------------------------------------


class _FlatLayout:
    """Named slices of a flat float64 vector (offsets fixed by ``fields``)."""

    def __init__(self, fields: tuple[tuple[str, tuple[int, ...]], ...]):
        self.fields = fields
        self.slices = {}
        offset = 0
        for name, shape in fields:
            size = math.prod(shape)
            self.slices[name] = (offset, offset + size, shape)
            offset += size
        self.size = offset

    def unpack(self, flat) -> dict:
        return {name: flat[a:b].reshape(shape) for name, (a, b, shape) in self.slices.items()}

    def read(self, flat, name):
        a, b, shape = self.slices[name]
        return flat[a:b].reshape(shape)

    def pack_jax(self, values: dict):
        return jnp.concatenate([jnp.reshape(values[name], (-1,)) for name, _ in self.fields])

    def write(self, flat: np.ndarray, name, value):
        a, b, _ = self.slices[name]
        flat[a:b] = np.reshape(value, (-1,))


def _record_layout(n: int, m: int) -> _FlatLayout:
    return _FlatLayout(
        (
            ("x", (n,)),
            ("P", (n, n)),
            ("x_prior", (n,)),
            ("P_prior", (n, n)),
            ("x_post", (n,)),
            ("P_post", (n, n)),
            ("K", (n, m)),
            ("y", (m,)),
            ("S", (m, m)),
            ("log_likelihood", ()),
        )
    )


def _config_layout(n: int, m: int) -> _FlatLayout:
    return _FlatLayout(
        (
            ("Q", (n, n)),
            ("R", (m, m)),
            ("Wm", (2 * n + 1,)),
            ("Wc", (2 * n + 1,)),
            ("sigma_spread", ()),
            ("lower_bound", (n,)),
            ("upper_bound", (n,)),
        )
    )


class _Static(NamedTuple):
    """Compile-time configuration of the wrapper's kernels (hashable)."""

    n: int
    m: int
    clip_lower: bool
    clip_upper: bool
    sqrt_method: Callable | None
    sigma_subtract: Callable | None
    x_mean_fn: Callable | None
    z_mean_fn: Callable | None
    residual_x: Callable | None
    residual_z: Callable | None
    state_add: Callable | None


def _params_from_config(static: _Static, config, dt) -> UKFParams:
    c = _config_layout(static.n, static.m).unpack(config)
    return UKFParams(
        process_noise_cov=c["Q"],
        measurement_noise_cov=c["R"],
        mean_weights=c["Wm"],
        covariance_weights=c["Wc"],
        sigma_spread=c["sigma_spread"],
        dt=dt,
        lower_bound=c["lower_bound"] if static.clip_lower else None,
        upper_bound=c["upper_bound"] if static.clip_upper else None,
        sqrt_method=static.sqrt_method,
        sigma_subtract=static.sigma_subtract,
        x_mean_fn=static.x_mean_fn,
        z_mean_fn=static.z_mean_fn,
        residual_x=static.residual_x,
        residual_z=static.residual_z,
        state_add=static.state_add,
    )


def _with_prior(rec: dict, prior: UKFState) -> dict:
    return {**rec, "x": prior.x, "P": prior.P, "x_prior": prior.x, "P_prior": prior.P}


def _with_posterior(rec: dict, post: UKFState, info: UKFUpdateInfo) -> dict:
    return {
        **rec,
        "x": post.x,
        "P": post.P,
        "x_post": post.x,
        "P_post": post.P,
        "K": info.K,
        "y": info.y,
        "S": info.S,
        "log_likelihood": info.log_likelihood,
    }


@partial(jax.jit, static_argnames=("static", "fx"))
def _kernel_predict(record, config, dt, fx_args, static, fx):
    layout = _record_layout(static.n, static.m)
    rec = layout.unpack(record)
    params = _params_from_config(static, config, dt)
    prior = ukf_predict(params, UKFState(rec["x"], rec["P"]), fx, fx_args)
    return layout.pack_jax(_with_prior(rec, prior))


@partial(jax.jit, static_argnames=("static", "hx"))
def _kernel_update(record, config, z, dt, hx_args, static, hx):
    layout = _record_layout(static.n, static.m)
    rec = layout.unpack(record)
    params = _params_from_config(static, config, dt)
    post, info = ukf_update(params, UKFState(rec["x"], rec["P"]), z, hx, hx_args)
    return layout.pack_jax(_with_posterior(rec, post, info))


@partial(jax.jit, static_argnames=("static", "fx", "hx"))
def _kernel_predict_update(record, config, z, dt, fx_args, hx_args, static, fx, hx):
    layout = _record_layout(static.n, static.m)
    rec = layout.unpack(record)
    params = _params_from_config(static, config, dt)
    post, (prior, info) = ukf_step(params, UKFState(rec["x"], rec["P"]), z, fx, hx, fx_args, hx_args)
    return layout.pack_jax(_with_posterior(_with_prior(rec, prior), post, info))


def _typed(args: dict) -> dict:
    """Python floats -> numpy float64, so that ``u=0.5`` and ``u=np.float64(0.5)`` (or
    an array element) share one compiled kernel instead of two (weak vs strong type)."""
    if not args:
        return args
    return {key: (np.float64(value) if type(value) is float else value) for key, value in args.items()}


def _explain_tracer_error(err, which):
    return TypeError(
        f"{which} must be written with jax.numpy (it is compiled with jax.jit); "
        f"it called numpy on a traced array: {err}"
    )


class _KalmanWrapperBase:
    """Record/config storage shared by the UKF and EKF wrappers (no maths here).

    ``x, P, Q, R`` are handed to the user as writable numpy arrays; edits in place
    (``kf.P *= 2``) or by assignment are picked up by the next step. Keep no
    long-lived reference to them across steps: after a step a fresh array is handed
    out, as filterpy does for ``x`` and ``P``.
    """

    _settable = ("x", "P", "Q", "R")
    _config_names = ("Q", "R")

    def _init_storage(self, record_layout: _FlatLayout, config_layout: _FlatLayout, record0, config0):
        self._rec_layout = record_layout
        self._cfg_layout = config_layout
        self._record = record0  # jax or numpy flat vector
        self._record_np = record0 if isinstance(record0, np.ndarray) else None
        self._config_np = config0
        self._config = jnp.asarray(config0)
        self._user: dict[str, np.ndarray] = {}
        self._snapshot: dict[str, bytes] = {}  # bytes of arrays handed out, to detect edits
        self._pending = None

    # subclasses run their deferred predict here
    def _flush(self):
        raise NotImplementedError

    def _record_numpy(self) -> np.ndarray:
        if self._record_np is None:
            self._record_np = np.asarray(self._record)
        return self._record_np

    def _set_record(self, record):
        self._record = record
        self._record_np = None

    def _sync(self):
        """Apply the user's edits of x, P, Q, R before a compiled call."""
        if not self._user:
            return
        record_edits, config_edits = {}, {}
        for name, arr in self._user.items():
            snap = self._snapshot.get(name)
            if snap is not None and arr.tobytes() == snap:  # not edited in place
                continue
            (config_edits if name in self._config_names else record_edits)[name] = arr
        self._user.clear()
        self._snapshot.clear()
        if record_edits:
            rec = np.array(self._record_numpy())
            for name, arr in record_edits.items():
                self._rec_layout.write(rec, name, arr)
            self._set_record(rec)
        if config_edits:
            cfg = self._config_np.copy()
            for name, arr in config_edits.items():
                self._cfg_layout.write(cfg, name, arr)
            self._config_np = cfg
            self._config = jnp.asarray(cfg)

    def _get_settable(self, name):
        self._flush()
        arr = self._user.get(name)
        if arr is None:
            if name in self._config_names:
                arr = np.array(self._cfg_layout.read(self._config_np, name))
            else:
                arr = np.array(self._rec_layout.read(self._record_numpy(), name))
            self._user[name] = arr
            self._snapshot[name] = arr.tobytes()
        return arr

    def _set_settable(self, name, value):
        self._flush()
        layout = self._cfg_layout if name in self._config_names else self._rec_layout
        shape = layout.slices[name][2]
        arr = np.asarray(value, dtype=float)
        if arr.ndim == 0 and len(shape) == 2 and shape[0] == shape[1]:
            arr = np.eye(shape[0]) * arr
        elif arr.size == math.prod(shape) and arr.shape != shape:
            arr = arr.reshape(shape)  # e.g. a column vector (n, 1) for x
        if arr.shape != shape:
            raise ValueError(f"{type(self).__name__}.{name} must have shape {shape}; got {np.shape(value)}")
        where = f"{type(self).__name__}.{name}"
        if name == "x":
            if not np.all(np.isfinite(arr)):
                raise ValueError(f"{where} must be finite")
        else:
            _check_covariance(where, arr, definite=(name == "P"), error=ValueError)
        self._user[name] = arr
        self._snapshot.pop(name, None)

    def _read_output(self, name):
        return self._rec_layout.read(self._record_numpy(), name)

    @staticmethod
    def _settable_property(name, doc):
        return property(
            lambda self: self._get_settable(name),
            lambda self, value: self._set_settable(name, value),
            doc=doc,
        )

    x = _settable_property("x", "state mean x (n,)")
    P = _settable_property("P", "state covariance P (n, n)")
    Q = _settable_property("Q", "process noise covariance Q (n, n)")
    R = _settable_property("R", "measurement noise covariance R (m, m)")

    @property
    def x_prior(self):
        self._flush()
        self._sync()
        return self._read_output("x_prior")

    @property
    def P_prior(self):
        self._flush()
        self._sync()
        return self._read_output("P_prior")

    @property
    def x_post(self):
        self._sync()
        return self._read_output("x_post")

    @property
    def P_post(self):
        self._sync()
        return self._read_output("P_post")

    @property
    def K(self):
        return self._read_output("K")

    @property
    def y(self):
        return self._read_output("y")

    @property
    def S(self):
        return self._read_output("S")

    @property
    def SI(self):
        return np.linalg.inv(self.S)

    @property
    def log_likelihood(self) -> float:
        """Log-likelihood of the last innovation ``y`` under N(0, S)."""
        return float(self._read_output("log_likelihood"))

    @property
    def likelihood(self) -> float:
        return max(math.exp(self.log_likelihood), np.finfo(float).tiny)

    @property
    def mahalanobis(self) -> float:
        y = self.y
        return float(math.sqrt(y @ np.linalg.solve(self.S, y)))

    def _check_z_R(self, z, R):
        z_arr = np.asarray(z, dtype=float)
        if z_arr.size != self._dim_z:
            raise ValueError(f"z must have {self._dim_z} elements (dim_z); got shape {z_arr.shape}")
        if R is not None:
            R = np.asarray(R, dtype=float)
            if R.ndim == 0:
                R = np.eye(self._dim_z) * R
            if R.shape != (self._dim_z, self._dim_z):
                raise ValueError(f"R must have shape ({self._dim_z}, {self._dim_z}); got {R.shape}")
        return z_arr.reshape(self._dim_z), R

    def _config_with_R(self, R):
        if R is None:
            return self._config
        cfg = self._config_np.copy()
        self._cfg_layout.write(cfg, "R", R)
        return cfg

    def _record_missing_measurement(self):
        """``update(None)``: the prior becomes the posterior (filterpy)."""
        self._flush()
        self._sync()
        rec = np.array(self._record_numpy())
        self._rec_layout.write(rec, "x_post", self._rec_layout.read(rec, "x"))
        self._rec_layout.write(rec, "P_post", self._rec_layout.read(rec, "P"))
        self._set_record(rec)
        self.z = np.array([[None] * self._dim_z]).T


class UnscentedKalmanFilter(_KalmanWrapperBase):
    """Drop-in for ``filterpy.kalman.UnscentedKalmanFilter`` with compiled maths.

    ``fx(x, dt, **fx_args)`` and ``hx(x, **hx_args)`` must be written with
    ``jax.numpy``; they are compiled once per function (and argument structure) and
    the compiled code is reused for every step and by every filter using them.

    Attributes as filterpy: ``x``, ``P``, ``Q``, ``R`` (settable numpy arrays; in-place
    edits such as ``ukf.P *= 2`` work), and ``x_prior``, ``P_prior``, ``x_post``,
    ``P_post``, ``K``, ``y``, ``S``, ``SI``, ``log_likelihood``, ``likelihood``,
    ``mahalanobis``, ``z``, ``Wm``, ``Wc`` (read-only arrays). ``params`` and ``state``
    give the functional-core containers (for :func:`ukf_scan`).

    Speed: ``predict()`` is deferred and fused with the following ``update(z)`` into one
    compiled call; reading or setting ``x, P, Q, R, x_prior, P_prior`` in between runs
    it first, so the numbers are those of the unfused order.

    Differences from filterpy: a custom ``UT`` is not supported (use ``x_mean_fn`` /
    ``residual_x`` …); ``sqrt_fn`` is stored but, as in filterpy, unused (the points'
    ``sqrt_method`` is what counts); the update draws its sigma points from the current
    ``(x, P)`` (filterpy reuses those drawn at the end of predict, which is the same
    unless ``x``/``P`` are edited between predict and update). Extension:
    ``bounds=(lower, upper)`` boxes the state by sigma-point clipping (module doc).
    """

    def __init__(
        self,
        dim_x,
        dim_z,
        dt,
        hx,
        fx,
        points,
        sqrt_fn=None,
        x_mean_fn=None,
        z_mean_fn=None,
        residual_x=None,
        residual_z=None,
        state_add=None,
        *,
        bounds=None,
    ):
        if not isinstance(points, MerweScaledSigmaPoints):
            raise TypeError(
                "points must be rths_ident.estimators.MerweScaledSigmaPoints "
                f"(JAX sigma points); got {type(points).__name__}"
            )
        if int(dim_x) != dim_x or dim_x < 1 or points.n != dim_x:
            raise ValueError(f"dim_x must be a positive integer equal to points.n = {points.n}; got {dim_x!r}")
        if int(dim_z) != dim_z or dim_z < 1:
            raise ValueError(f"dim_z must be a positive integer; got {dim_z!r}")
        n, m = int(dim_x), int(dim_z)
        lower, upper = (None, None) if bounds is None else bounds
        self._dim_x, self._dim_z = n, m
        self._dt = float(dt)
        self.hx, self.fx = hx, fx
        self.points_fn = points
        self.msqrt = sqrt_fn
        self.Wm, self.Wc = points.Wm, points.Wc
        self.x_mean, self.z_mean = x_mean_fn, z_mean_fn
        self.residual_x, self.residual_z, self.state_add = residual_x, residual_z, state_add
        lower = _bound("lower_bound", lower, n, -np.inf)
        upper = _bound("upper_bound", upper, n, np.inf)
        if lower is not None and upper is not None and np.any(lower > upper):
            raise ValueError(f"bounds: lower must be <= upper; got {lower} > {upper}")
        self._static = _Static(
            n, m, lower is not None, upper is not None,
            points.sqrt, points.subtract, x_mean_fn, z_mean_fn, residual_x, residual_z, state_add,
        )  # fmt: skip
        rec_layout, cfg_layout = _record_layout(n, m), _config_layout(n, m)
        record = np.zeros(rec_layout.size)
        for name in ("P", "P_prior", "P_post"):
            rec_layout.write(record, name, np.eye(n))
        rec_layout.write(record, "log_likelihood", math.log(np.finfo(float).tiny))
        config = np.zeros(cfg_layout.size)
        cfg_layout.write(config, "Q", np.eye(n))
        cfg_layout.write(config, "R", np.eye(m))
        cfg_layout.write(config, "Wm", points.Wm)
        cfg_layout.write(config, "Wc", points.Wc)
        cfg_layout.write(config, "sigma_spread", points.spread)
        cfg_layout.write(config, "lower_bound", -np.inf if lower is None else lower)
        cfg_layout.write(config, "upper_bound", np.inf if upper is None else upper)
        self._init_storage(rec_layout, cfg_layout, record, config)
        self.z = np.array([[None] * m]).T

    # --- functional-core views ----------------------------------------------------
    @property
    def params(self) -> UKFParams:
        """The :class:`UKFParams` equivalent to this filter's current settings."""
        self._flush()
        self._sync()
        return _params_from_config(self._static, jnp.asarray(self._config_np), self._dt)

    @property
    def state(self) -> UKFState:
        """The current ``(x, P)`` as a :class:`UKFState`."""
        self._flush()
        self._sync()
        rec = self._record_numpy()
        return UKFState(jnp.asarray(self._rec_layout.read(rec, "x")), jnp.asarray(self._rec_layout.read(rec, "P")))

    # --- steps --------------------------------------------------------------------
    def _flush(self):
        if self._pending is None:
            return
        fx, dt, fx_args = self._pending
        self._pending = None
        self._sync()
        try:
            record = _kernel_predict(self._record, self._config, dt, fx_args, static=self._static, fx=fx)
        except jax.errors.TracerArrayConversionError as err:
            raise _explain_tracer_error(err, "fx") from err
        self._set_record(record)

    def predict(self, dt=None, UT=None, fx=None, **fx_args):
        """Predict step (filterpy signature); ``fx_args`` are passed to ``fx``.

        Deferred until the next ``update`` or attribute access (class doc)."""
        if UT is not None:
            raise TypeError("a custom UT is not supported; use x_mean_fn/residual_x instead")
        if self._pending is not None:
            self._flush()
        self._pending = (self.fx if fx is None else fx, self._dt if dt is None else float(dt), _typed(fx_args))

    def update(self, z, R=None, UT=None, hx=None, **hx_args):
        """Update with measurement ``z`` (dim_z,) (filterpy signature).

        ``z = None`` records the prior as the posterior. ``R`` overrides ``self.R``
        for this call only (a scalar means ``R·I``)."""
        if UT is not None:
            raise TypeError("a custom UT is not supported; use z_mean_fn/residual_z instead")
        if z is None:
            self._record_missing_measurement()
            return
        z, R = self._check_z_R(z, R)
        self._sync()
        config = self._config_with_R(R)
        hx = self.hx if hx is None else hx
        hx_args = _typed(hx_args)
        try:
            if self._pending is not None:
                fx, dt, fx_args = self._pending
                self._pending = None
                record = _kernel_predict_update(
                    self._record, config, z, dt, fx_args, hx_args, static=self._static, fx=fx, hx=hx
                )
            else:
                record = _kernel_update(self._record, config, z, self._dt, hx_args, static=self._static, hx=hx)
        except jax.errors.TracerArrayConversionError as err:
            raise _explain_tracer_error(err, "fx/hx") from err
        self._set_record(record)
        self.z = z

    def batch_filter(self, zs, Rs=None, dts=None, UT=None, saver=None):
        """Filter a sequence of measurements (filterpy signature).

        Returns ``(means (N, n), covariances (N, n, n))`` of the posteriors. With
        ``Rs``, ``dts``, ``UT`` and ``saver`` all ``None`` and no missing measurement it
        runs as one compiled :func:`ukf_scan`; otherwise step by step."""
        zs_list = list(zs)
        n_steps = len(zs_list)
        fast = Rs is None and dts is None and UT is None and saver is None
        if fast and all(z is not None for z in zs_list):
            zs_arr = np.asarray(zs_list, dtype=float).reshape(n_steps, self._dim_z)
            final, hist = ukf_scan(self.fx, self.hx, self.params, self.state, zs_arr)
            rec = np.array(self._record_numpy())
            values = {
                "x": final.x, "P": final.P, "x_prior": hist.x_prior[-1], "P_prior": hist.P_prior[-1],
                "x_post": final.x, "P_post": final.P, "y": hist.y[-1], "S": hist.S[-1],
                "log_likelihood": hist.log_likelihood[-1],
            }  # fmt: skip
            for name, value in values.items():
                self._rec_layout.write(rec, name, np.asarray(value))
            self._set_record(rec)
            self.z = zs_arr[-1].copy()
            return np.asarray(hist.x), np.asarray(hist.P)
        Rs = [None] * n_steps if Rs is None else Rs
        dts = [None] * n_steps if dts is None else ([dts] * n_steps if np.isscalar(dts) else dts)
        means = np.zeros((n_steps, self._dim_x))
        covariances = np.zeros((n_steps, self._dim_x, self._dim_x))
        for i, (z, r, dt) in enumerate(zip(zs_list, Rs, dts)):
            self.predict(dt=dt, UT=UT)
            self.update(z, r, UT=UT)
            means[i] = self.x
            covariances[i] = self.P
            if saver is not None:
                saver.save()
        return means, covariances

    def __repr__(self):
        return f"UnscentedKalmanFilter(dim_x={self._dim_x}, dim_z={self._dim_z}, dt={self._dt}, x={self.x})"
