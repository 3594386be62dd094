"""Extended Kalman filter (EKF) with Jacobians from ``jax.jacfwd``.

Same maths and order as ``filterpy.kalman.ExtendedKalmanFilter`` (which asks the user
for the Jacobians; here automatic differentiation provides them):

predict::

    F  = ∂fx/∂x (x, dt)            # jax.jacfwd, at the posterior mean
    x⁻ = fx(x, dt, **fx_args)
    P⁻ = F P Fᵀ + Q

update::

    H  = ∂hx/∂x (x⁻)               # jax.jacfwd, at the prior mean
    S  = H P⁻ Hᵀ + R
    K  = P⁻ Hᵀ S⁻¹
    y  = z − hx(x⁻)
    x⁺ = x⁻ + K y
    P⁺ = (I − K H) P⁻ (I − K H)ᵀ + K R Kᵀ      # Joseph form, as filterpy

Functional core: :func:`ekf_init`, :func:`ekf_predict`, :func:`ekf_update`,
:func:`ekf_scan`; wrapper: :class:`ExtendedKalmanFilter` (``fx``/``hx`` written with
``jax.numpy``).
"""

from __future__ import annotations

import math
from functools import partial
from typing import Any, Callable, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
from jax.scipy.linalg import cho_solve

from rths_ident._params import field_range, params_dataclass
from rths_ident.estimators.covariance_checks import square_covariance
from rths_ident.estimators.filter_scan import scan_filter
from rths_ident.estimators.kalman_wrapper import FlatLayout, KalmanWrapperBase, explain_tracer_error, typed_args

__all__ = [
    "EKFParams",
    "EKFState",
    "EKFUpdateInfo",
    "EKFHistory",
    "ExtendedKalmanFilter",
    "ekf_init",
    "ekf_predict",
    "ekf_update",
    "ekf_step",
    "ekf_scan",
]


@params_dataclass
class EKFParams:
    """Noise covariances and time step of an EKF (build with :func:`ekf_init`)."""

    process_noise_cov: Any = field_range(doc="Q, process noise covariance (units of x²)")
    measurement_noise_cov: Any = field_range(doc="R, measurement noise covariance (units of z²)")
    dt: Any = field_range(doc="time step passed to fx [s]")


class EKFState(NamedTuple):
    """Mean ``x`` (n,) and covariance ``P`` (n, n)."""

    x: jax.Array
    P: jax.Array


class EKFUpdateInfo(NamedTuple):
    """Gain ``K`` (n, m), innovation ``y`` (m,), its covariance ``S`` (m, m), the
    measurement Jacobian ``H`` (m, n) and the log-likelihood of ``y`` under N(0, S)."""

    K: jax.Array
    y: jax.Array
    S: jax.Array
    H: jax.Array
    log_likelihood: jax.Array


class EKFHistory(NamedTuple):
    """Per-step record of :func:`ekf_scan` (leading axis = time step)."""

    x_prior: jax.Array
    P_prior: jax.Array
    x: jax.Array
    P: jax.Array
    y: jax.Array
    S: jax.Array
    log_likelihood: jax.Array


def ekf_init(x0, P0, Q, R, dt: float = 1.0) -> tuple[EKFParams, EKFState]:
    """Parameters and initial state; ``x0`` (n,), ``P0``/``Q`` (n, n) or scalar,
    ``R`` (m, m) or scalar (m = 1), ``dt`` [s]."""
    x0 = np.atleast_1d(np.asarray(x0, dtype=float)).reshape(-1)
    n = x0.shape[0]
    P0 = square_covariance("P0", P0, n, definite=True)
    Q = square_covariance("Q", Q, n)
    R_arr = np.asarray(R, dtype=float)
    R = square_covariance("R", R, 1 if R_arr.ndim == 0 else R_arr.shape[0])
    params = EKFParams(process_noise_cov=jnp.asarray(Q), measurement_noise_cov=jnp.asarray(R), dt=float(dt))
    return params, EKFState(jnp.asarray(x0), jnp.asarray(P0))


def _value_and_jacobian(fn, x):
    def both(s):
        out = jnp.reshape(fn(s), (-1,))
        return out, out

    jac, value = jax.jacfwd(both, has_aux=True)(x)
    return value, jac


def _predict_with_jacobian(params: EKFParams, state: EKFState, fx, fx_args):
    fx_args = {} if fx_args is None else fx_args
    x, F = _value_and_jacobian(lambda s: fx(s, params.dt, **fx_args), state.x)
    P = F @ state.P @ F.T + params.process_noise_cov
    return EKFState(x, P), F


def ekf_predict(params: EKFParams, state: EKFState, fx: Callable, fx_args: dict | None = None) -> EKFState:
    """Prior: ``x⁻ = fx(x, dt, **fx_args)``, ``P⁻ = F P Fᵀ + Q`` with ``F = ∂fx/∂x``."""
    return _predict_with_jacobian(params, state, fx, fx_args)[0]


def ekf_update(
    params: EKFParams, state: EKFState, z, hx: Callable, hx_args: dict | None = None
) -> tuple[EKFState, EKFUpdateInfo]:
    """Posterior given ``z`` (m,) and ``hx(x, **hx_args)`` -> (m,) (Joseph form)."""
    hx_args = {} if hx_args is None else hx_args
    z = jnp.reshape(jnp.asarray(z, dtype=state.x.dtype), (-1,))
    z_pred, H = _value_and_jacobian(lambda s: hx(s, **hx_args), state.x)
    R = params.measurement_noise_cov
    PHT = state.P @ H.T
    S = H @ PHT + R
    y = z - z_pred
    S_factor = jnp.linalg.cholesky(S)
    # one solve for both S⁻¹ H P (the gain) and S⁻¹ y (the likelihood)
    solved = cho_solve((S_factor, True), jnp.concatenate([PHT.T, y[:, None]], axis=1))
    K = solved[:, :-1].T  # K = P Hᵀ S⁻¹
    x = state.x + K @ y
    I_KH = jnp.eye(state.x.shape[0]) - K @ H
    P = I_KH @ state.P @ I_KH.T + K @ R @ K.T
    m = z_pred.shape[0]
    maha2 = y @ solved[:, -1]
    log_det = 2.0 * jnp.sum(jnp.log(jnp.diag(S_factor)))
    log_likelihood = -0.5 * (m * math.log(2.0 * math.pi) + log_det + maha2)
    return EKFState(x, P), EKFUpdateInfo(K, y, S, H, log_likelihood)


def ekf_step(params, state, z, fx, hx, fx_args=None, hx_args=None):
    """One predict + update. Returns ``(posterior, (prior, info))``."""
    prior = ekf_predict(params, state, fx, fx_args)
    posterior, info = ekf_update(params, prior, z, hx, hx_args)
    return posterior, (prior, info)


@partial(jax.jit, static_argnames=("fx", "hx"))
def ekf_scan(fx, hx, params: EKFParams, state0: EKFState, zs, fx_args_seq=None, hx_args_seq=None):
    """Filter a record ``zs`` (N, m) in one ``jax.lax.scan``; see :func:`ukf_scan`.

    Returns the final posterior and an :class:`EKFHistory`."""
    return scan_filter(
        lambda state, z, fx_args, hx_args: ekf_step(params, state, z, fx, hx, fx_args, hx_args),
        lambda prior, posterior, info: EKFHistory(prior.x, prior.P, posterior.x, posterior.P, info.y, info.S,
                                                  info.log_likelihood),
        state0, zs, fx_args_seq, hx_args_seq)


# --------------------------------------------------------------------------------------
# wrapper kernels (one flat record in, one out; see kalman_wrapper.py)
# --------------------------------------------------------------------------------------


def _record_layout(n: int, m: int) -> FlatLayout:
    return FlatLayout(
        (
            ("x", (n,)),
            ("P", (n, n)),
            ("x_prior", (n,)),
            ("P_prior", (n, n)),
            ("x_post", (n,)),
            ("P_post", (n, n)),
            ("F", (n, n)),
            ("H", (m, n)),
            ("K", (n, m)),
            ("y", (m,)),
            ("S", (m, m)),
            ("log_likelihood", ()),
        )
    )


def _config_layout(n: int, m: int) -> FlatLayout:
    return FlatLayout((("Q", (n, n)), ("R", (m, m))))


def _params_from_config(n, m, config, dt):
    c = _config_layout(n, m).unpack(config)
    return EKFParams(process_noise_cov=c["Q"], measurement_noise_cov=c["R"], dt=dt)


def _do_predict(rec, params, fx, fx_args):
    prior, F = _predict_with_jacobian(params, EKFState(rec["x"], rec["P"]), fx, fx_args)
    return {**rec, "x": prior.x, "P": prior.P, "x_prior": prior.x, "P_prior": prior.P, "F": F}


def _do_update(rec, params, z, hx, hx_args):
    post, info = ekf_update(params, EKFState(rec["x"], rec["P"]), z, hx, hx_args)
    return {
        **rec, "x": post.x, "P": post.P, "x_post": post.x, "P_post": post.P, "H": info.H,
        "K": info.K, "y": info.y, "S": info.S, "log_likelihood": info.log_likelihood,
    }  # fmt: skip


@partial(jax.jit, static_argnames=("n", "m", "fx"))
def _kernel_predict(record, config, dt, fx_args, n, m, fx):
    layout = _record_layout(n, m)
    rec = _do_predict(layout.unpack(record), _params_from_config(n, m, config, dt), fx, fx_args)
    return layout.pack_jax(rec)


@partial(jax.jit, static_argnames=("n", "m", "hx"))
def _kernel_update(record, config, z, dt, hx_args, n, m, hx):
    layout = _record_layout(n, m)
    rec = _do_update(layout.unpack(record), _params_from_config(n, m, config, dt), z, hx, hx_args)
    return layout.pack_jax(rec)


@partial(jax.jit, static_argnames=("n", "m", "fx", "hx"))
def _kernel_predict_update(record, config, z, dt, fx_args, hx_args, n, m, fx, hx):
    layout = _record_layout(n, m)
    params = _params_from_config(n, m, config, dt)
    rec = _do_predict(layout.unpack(record), params, fx, fx_args)
    return layout.pack_jax(_do_update(rec, params, z, hx, hx_args))


class ExtendedKalmanFilter(KalmanWrapperBase):
    """EKF with automatic Jacobians, filterpy-style.

    ``fx(x, dt, **fx_args) -> (n,)`` and ``hx(x, **hx_args) -> (m,)`` are written with
    ``jax.numpy``; their Jacobians come from ``jax.jacfwd``. Attributes as filterpy's
    ``ExtendedKalmanFilter``: ``x, P, Q, R`` (settable numpy arrays), ``x_prior,
    P_prior, x_post, P_post, K, y, S, SI, log_likelihood, likelihood, mahalanobis``
    and the last Jacobians ``F`` (of fx) and ``H`` (of hx). ``predict()`` is deferred
    and fused with the next ``update(z)`` (as in :class:`UnscentedKalmanFilter`).

    Unlike filterpy (linear ``F`` in predict, ``HJacobian``/``Hx`` passed to each
    update) the models are given once, to the constructor.
    """

    def __init__(self, dim_x, dim_z, fx, hx, dt=1.0):
        for name, value in (("dim_x", dim_x), ("dim_z", dim_z)):
            if int(value) != value or value < 1:
                raise ValueError(f"{name} must be a positive integer; got {value!r}")
        n, m = int(dim_x), int(dim_z)
        self._dim_x, self._dim_z = n, m
        self._dt = float(dt)
        self.fx, self.hx = fx, hx
        rec_layout, cfg_layout = _record_layout(n, m), _config_layout(n, m)
        record = np.zeros(rec_layout.size)
        for name in ("P", "P_prior", "P_post", "F"):
            rec_layout.write(record, name, np.eye(n))
        rec_layout.write(record, "log_likelihood", math.log(np.finfo(float).tiny))
        config = np.zeros(cfg_layout.size)
        cfg_layout.write(config, "Q", np.eye(n))
        cfg_layout.write(config, "R", np.eye(m))
        self._init_storage(rec_layout, cfg_layout, record, config)
        self.z = np.array([[None] * m]).T

    @property
    def F(self):
        """Jacobian ∂fx/∂x of the last predict (n, n)."""
        self._flush()
        return self._read_output("F")

    @property
    def H(self):
        """Jacobian ∂hx/∂x of the last update (m, n)."""
        return self._read_output("H")

    @property
    def params(self) -> EKFParams:
        self._flush()
        self._sync()
        return _params_from_config(self._dim_x, self._dim_z, jnp.asarray(self._config_np), self._dt)

    @property
    def state(self) -> EKFState:
        self._flush()
        self._sync()
        rec = self._record_numpy()
        return EKFState(jnp.asarray(self._rec_layout.read(rec, "x")), jnp.asarray(self._rec_layout.read(rec, "P")))

    def _flush(self):
        if self._pending is None:
            return
        fx, dt, fx_args = self._pending
        self._pending = None
        self._sync()
        try:
            record = _kernel_predict(self._record, self._config, dt, fx_args, n=self._dim_x, m=self._dim_z, fx=fx)
        except jax.errors.TracerArrayConversionError as err:
            raise explain_tracer_error(err, "fx") from err
        self._set_record(record)

    def predict(self, dt=None, fx=None, **fx_args):
        """Predict step; ``fx_args`` are passed to ``fx``. Deferred (class doc)."""
        if self._pending is not None:
            self._flush()
        self._pending = (self.fx if fx is None else fx, self._dt if dt is None else float(dt), typed_args(fx_args))

    def update(self, z, R=None, hx=None, **hx_args):
        """Update with ``z`` (dim_z,); ``R`` overrides ``self.R`` for this call;
        ``z = None`` records the prior as the posterior."""
        if z is None:
            self._record_missing_measurement()
            return
        z, R = self._check_z_R(z, R)
        self._sync()
        config = self._config_with_R(R)
        hx = self.hx if hx is None else hx
        hx_args = typed_args(hx_args)
        n, m = self._dim_x, self._dim_z
        try:
            if self._pending is not None:
                fx, dt, fx_args = self._pending
                self._pending = None
                record = _kernel_predict_update(self._record, config, z, dt, fx_args, hx_args, n=n, m=m, fx=fx, hx=hx)
            else:
                record = _kernel_update(self._record, config, z, self._dt, hx_args, n=n, m=m, hx=hx)
        except jax.errors.TracerArrayConversionError as err:
            raise explain_tracer_error(err, "fx/hx") from err
        self._set_record(record)
        self.z = z

    def __repr__(self):
        return f"ExtendedKalmanFilter(dim_x={self._dim_x}, dim_z={self._dim_z}, dt={self._dt}, x={self.x})"
