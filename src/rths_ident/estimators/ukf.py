"""filterpy-compatible unscented Kalman filter: the stateful wrapper over the UKF core.

:class:`UnscentedKalmanFilter` keeps filterpy's constructor, methods and attributes and
runs the maths of :mod:`rths_ident.estimators.ukf_core` (van der Merwe 2004, in
filterpy's order) in compiled kernels. It holds state; the maths lives in the core.

This module also re-exports the core's public names, so
``from rths_ident.estimators.ukf import ukf_init, ukf_scan, UKFParams, …`` keeps working.

Two ways to give the user functions (``fx``, ``hx``, ``x_mean_fn``, ``z_mean_fn``,
``residual_x``, ``residual_z``, ``state_add``, the points' ``sqrt_method`` /
``subtract`` / overridden ``sigma_points``, and ``UT``):

* written with ``jax.numpy`` (default): compiled into the step, several times faster
  than filterpy per step, and the whole record in one ``lax.scan`` by ``batch_filter``;
* plain Python/numpy, unchanged filterpy code, with ``host_functions=True``: each one
  is called back from the compiled step (``jax.pure_callback``, one crossing per
  function per predict/update, the sigma points looped over in Python). Same numbers,
  but ~2× slower than filterpy itself (~0.1 ms per crossing): a porting aid.

The filterpy points objects (``MerweScaledSigmaPoints``, ``JulierSigmaPoints``,
``SimplexSigmaPoints``) are read through
:func:`~rths_ident.estimators.sigma_points.sigma_point_spec` (their ``n``, weights,
``alpha``/``beta``/``kappa``, ``sqrt`` and ``subtract``). docs/estimators/ukf.md lists
every difference from filterpy.
"""

from __future__ import annotations

import math
from functools import partial
from typing import Callable, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from rths_ident.estimators.covariance_checks import box_bound
from rths_ident.estimators.kalman_wrapper import (
    TRACER_ERRORS,
    FlatLayout,
    HostFunction,
    KalmanWrapperBase,
    explain_tracer_error,
    typed_args,
)
from rths_ident.estimators.sigma_points import sigma_point_spec
from rths_ident.estimators.ukf_core import (
    UKFHistory,
    UKFParams,
    UKFSmootherResult,
    UKFState,
    UKFUpdateInfo,
    ukf_init,
    ukf_predict,
    ukf_rts_smoother,
    ukf_scan,
    ukf_step,
    ukf_update,
    unscented_transform,
)

__all__ = [
    "UKFParams",
    "UKFState",
    "UKFUpdateInfo",
    "UKFHistory",
    "UKFSmootherResult",
    "UnscentedKalmanFilter",
    "ukf_init",
    "ukf_predict",
    "ukf_update",
    "ukf_step",
    "ukf_scan",
    "ukf_rts_smoother",
    "unscented_transform",
]


# --------------------------------------------------------------------------------------
# flat storage and compiled kernels (see kalman_wrapper)
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
            ("K", (n, m)),
            ("y", (m,)),
            ("S", (m, m)),
            ("log_likelihood", ()),
        )
    )


def _config_layout(n: int, m: int, num_sigmas: int) -> FlatLayout:
    return FlatLayout(
        (
            ("Q", (n, n)),
            ("R", (m, m)),
            ("Wm", (num_sigmas,)),
            ("Wc", (num_sigmas,)),
            ("sigma_spread", ()),
            ("lower_bound", (n,)),
            ("upper_bound", (n,)),
        )
    )


class _Static(NamedTuple):
    """Compile-time configuration of the wrapper's kernels (hashable)."""

    n: int
    m: int
    num_sigmas: int
    clip_lower: bool
    clip_upper: bool
    sigma_kind: str
    sigma_generator: Callable | None
    sqrt_method: Callable | None
    sigma_subtract: Callable | None
    x_mean_fn: Callable | None
    z_mean_fn: Callable | None
    residual_x: Callable | None
    residual_z: Callable | None
    state_add: Callable | None


def _params_from_config(static: _Static, config, dt) -> UKFParams:
    c = _config_layout(static.n, static.m, static.num_sigmas).unpack(config)
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
        sigma_kind=static.sigma_kind,
        sigma_generator=static.sigma_generator,
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


@partial(jax.jit, static_argnames=("static", "fx", "UT"))
def _kernel_predict(record, config, dt, fx_args, static, fx, UT=None):
    layout = _record_layout(static.n, static.m)
    rec = layout.unpack(record)
    params = _params_from_config(static, config, dt)
    prior = ukf_predict(params, UKFState(rec["x"], rec["P"]), fx, fx_args, UT)
    return layout.pack_jax(_with_prior(rec, prior))


@partial(jax.jit, static_argnames=("static", "hx", "UT"))
def _kernel_update(record, config, z, dt, hx_args, static, hx, UT=None):
    layout = _record_layout(static.n, static.m)
    rec = layout.unpack(record)
    params = _params_from_config(static, config, dt)
    post, info = ukf_update(params, UKFState(rec["x"], rec["P"]), z, hx, hx_args, UT)
    return layout.pack_jax(_with_posterior(rec, post, info))


@partial(jax.jit, static_argnames=("static", "fx", "hx", "UT_predict", "UT_update"))
def _kernel_predict_update(record, config, z, dt, fx_args, hx_args, static, fx, hx, UT_predict=None, UT_update=None):
    layout = _record_layout(static.n, static.m)
    rec = layout.unpack(record)
    params = _params_from_config(static, config, dt)
    prior = ukf_predict(params, UKFState(rec["x"], rec["P"]), fx, fx_args, UT_predict)
    post, info = ukf_update(params, prior, z, hx, hx_args, UT_update)
    return layout.pack_jax(_with_posterior(_with_prior(rec, prior), post, info))


# --------------------------------------------------------------------------------------
# the wrapper
# --------------------------------------------------------------------------------------


class _CoreView:
    """A read-only attribute computed by a method. Deliberately not a ``property``:
    filterpy's ``Saver`` records every property of the filter at each step, and the
    functional-core containers (a ``UKFState`` is not an array) would break its
    ``to_array()``."""

    def __init__(self, method):
        self.method = method
        self.__doc__ = method.__doc__

    def __get__(self, obj, owner=None):
        return self if obj is None else self.method(obj)


class UnscentedKalmanFilter(KalmanWrapperBase):
    """Drop-in for ``filterpy.kalman.UnscentedKalmanFilter`` with compiled maths.

    Same constructor, ``predict(dt, UT, fx, **fx_args)``, ``update(z, R, UT, hx,
    **hx_args)``, ``batch_filter(zs, Rs, dts, UT, saver)`` and ``rts_smoother(Xs, Ps,
    Qs, dts, UT)``. ``points``: rths_ident's or filterpy's ``MerweScaledSigmaPoints``,
    ``JulierSigmaPoints`` or ``SimplexSigmaPoints``, or any object with their
    interface (``n, Wm, Wc, num_sigmas(), sigma_points(x, P)``).

    ``fx(x, dt, **fx_args)`` and ``hx(x, **hx_args)`` (and the other user functions)
    are compiled, so they must be written with ``jax.numpy``; they are compiled once
    per function (and argument structure) and reused by every filter using them.
    With ``host_functions=True`` they may be plain numpy (filterpy code unchanged),
    called back from the compiled step: same numbers, slower (module doc).

    Attributes as filterpy: ``x``, ``P``, ``Q``, ``R`` (settable numpy arrays; in-place
    edits such as ``ukf.P *= 2`` work), and ``x_prior``, ``P_prior``, ``x_post``,
    ``P_post``, ``K``, ``y``, ``S``, ``SI``, ``log_likelihood``, ``likelihood``,
    ``mahalanobis``, ``z``, ``Wm``, ``Wc``, ``points_fn``, ``msqrt``, ``x_mean``,
    ``z_mean``, ``residual_x``, ``residual_z``, ``state_add``. ``params`` and ``state``
    give the functional-core containers (for :func:`ukf_scan`).

    Speed: ``predict()`` is deferred and fused with the following ``update(z)`` into one
    compiled call; reading or setting ``x, P, Q, R, x_prior, P_prior`` in between runs
    it first, so the numbers are those of the unfused order. The update draws its sigma
    points from the current ``(x, P)`` (filterpy reuses those drawn at the end of
    predict: the same unless ``x``/``P`` are edited between predict and update).

    ``sqrt_fn`` is stored as ``msqrt`` and, as in filterpy, unused (the points'
    ``sqrt_method`` is what counts). Extension: ``bounds=(lower, upper)`` boxes the
    state by sigma-point clipping (:mod:`~rths_ident.estimators.ukf_core`).
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
        host_functions=False,
    ):
        spec = sigma_point_spec(points)
        if isinstance(dim_x, bool) or int(dim_x) != dim_x or dim_x < 1 or spec.n != dim_x:
            raise ValueError(f"dim_x must be a positive integer equal to points.n = {spec.n}; got {dim_x!r}")
        if isinstance(dim_z, bool) or int(dim_z) != dim_z or dim_z < 1:
            raise ValueError(f"dim_z must be a positive integer; got {dim_z!r}")
        n, m = int(dim_x), int(dim_z)
        lower, upper = (None, None) if bounds is None else bounds
        self._dim_x, self._dim_z = n, m
        self._dt = float(dt)
        self._host = bool(host_functions)
        self.hx, self.fx = hx, fx
        self.points_fn = points
        self.msqrt = sqrt_fn
        self.Wm, self.Wc = points.Wm, points.Wc
        self.x_mean, self.z_mean = x_mean_fn, z_mean_fn
        self.residual_x, self.residual_z, self.state_add = residual_x, residual_z, state_add
        self._user_functions = {
            name: fn
            for name, fn in (
                ("x_mean_fn", x_mean_fn), ("z_mean_fn", z_mean_fn), ("residual_x", residual_x),
                ("residual_z", residual_z), ("state_add", state_add), ("points.sqrt_method", spec.sqrt_method),
                ("points.subtract", spec.subtract), ("points.sigma_points", spec.generator),
            )
            if fn is not None
        }  # fmt: skip
        lower = box_bound("lower_bound", lower, n, -np.inf)
        upper = box_bound("upper_bound", upper, n, np.inf)
        if lower is not None and upper is not None and np.any(lower > upper):
            raise ValueError(f"bounds: lower must be <= upper; got {lower} > {upper}")
        subtract_rank = 2 if spec.kind == "simplex" else 1
        self._static = _Static(
            n, m, spec.num_sigmas, lower is not None, upper is not None, spec.kind,
            self._wrap(spec.generator, "points.sigma_points", 1, (spec.num_sigmas, n)),
            self._wrap(spec.sqrt_method, "points.sqrt_method", 2, (n, n)),
            self._wrap(spec.subtract, "points.subtract", subtract_rank, "broadcast"),
            self._wrap(x_mean_fn, "x_mean_fn", 2, (n,)),
            self._wrap(z_mean_fn, "z_mean_fn", 2, (m,)),
            self._wrap(residual_x, "residual_x", 1, "broadcast"),
            self._wrap(residual_z, "residual_z", 1, "broadcast"),
            self._wrap(state_add, "state_add", 1, "broadcast"),
        )  # fmt: skip
        rec_layout, cfg_layout = _record_layout(n, m), _config_layout(n, m, spec.num_sigmas)
        record = np.zeros(rec_layout.size)
        for name in ("P", "P_prior", "P_post"):
            rec_layout.write(record, name, np.eye(n))
        rec_layout.write(record, "log_likelihood", math.log(np.finfo(float).tiny))
        config = np.zeros(cfg_layout.size)
        cfg_layout.write(config, "Q", np.eye(n))
        cfg_layout.write(config, "R", np.eye(m))
        cfg_layout.write(config, "Wm", spec.mean_weights)
        cfg_layout.write(config, "Wc", spec.covariance_weights)
        cfg_layout.write(config, "sigma_spread", spec.spread)
        cfg_layout.write(config, "lower_bound", -np.inf if lower is None else lower)
        cfg_layout.write(config, "upper_bound", np.inf if upper is None else upper)
        self._init_storage(rec_layout, cfg_layout, record, config)
        self.z = np.array([[None] * m]).T

    # --- user functions: compiled, or called back on the host ---------------------
    def _wrap(self, fn, name, arg_rank, out):
        if fn is None or not self._host:
            return fn
        return HostFunction(fn, name, arg_rank, out)

    def _model(self, fn, which):
        """``fx``/``hx``/``UT`` as the kernels take them."""
        if which == "fx":
            return self._wrap(fn, "fx", 1, (self._dim_x,))
        if which == "hx":
            return self._wrap(fn, "hx", 1, (self._dim_z,))
        return self._wrap(fn, "UT", 2, "transform")

    def _compiled(self, kernel, names, *args, **kwargs):
        """Run a kernel; a user function that is not JAX-traceable gets a clear error."""
        try:
            return kernel(*args, **kwargs)
        except TRACER_ERRORS as err:
            raise self._tracer_error(err, names) from err
        except TypeError as err:
            if "does not support item assignment" not in str(err):
                raise
            raise self._tracer_error(err, names) from err

    def _tracer_error(self, err, names):
        given = [*names, *self._user_functions]
        return explain_tracer_error(
            err,
            "/".join(given),
            " (pass host_functions=True to UnscentedKalmanFilter to call plain numpy functions, slower)",
        )

    # --- functional-core views ----------------------------------------------------
    @_CoreView
    def params(self) -> UKFParams:
        """The :class:`UKFParams` equivalent to this filter's current settings."""
        self._flush()
        self._sync()
        return _params_from_config(self._static, jnp.asarray(self._config_np), self._dt)

    @_CoreView
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
        fx, dt, fx_args, UT = self._pending
        self._pending = None
        self._sync()
        record = self._compiled(
            _kernel_predict, ["fx"] + (["UT"] if UT is not None else []),
            self._record, self._config, dt, fx_args,
            static=self._static, fx=self._model(fx, "fx"), UT=self._model(UT, "UT"),
        )  # fmt: skip
        self._set_record(record)

    def predict(self, dt=None, UT=None, fx=None, **fx_args):
        """Predict step (filterpy signature); ``fx_args`` are passed to ``fx``; ``UT``
        replaces the unscented transform for this step.

        Deferred until the next ``update`` or attribute access (class doc)."""
        if self._pending is not None:
            self._flush()
        fx = self.fx if fx is None else fx
        self._pending = (fx, self._dt if dt is None else float(dt), typed_args(fx_args), UT)

    def update(self, z, R=None, UT=None, hx=None, **hx_args):
        """Update with measurement ``z`` (dim_z,) (filterpy signature).

        ``z = None`` records the prior as the posterior. ``R`` overrides ``self.R``
        for this call only (a scalar means ``R·I``); ``UT`` replaces the unscented
        transform of the measurement sigma points."""
        if z is None:
            self._record_missing_measurement()
            return
        z, R = self._check_z_R(z, R)
        self._sync()
        config = self._config_with_R(R)
        hx = self.hx if hx is None else hx
        hx_args = typed_args(hx_args)
        if self._pending is not None:
            fx, dt, fx_args, UT_predict = self._pending
            self._pending = None
            names = ["fx", "hx"] + (["UT"] if UT_predict is not None or UT is not None else [])
            record = self._compiled(
                _kernel_predict_update, names, self._record, config, z, dt, fx_args, hx_args,
                static=self._static, fx=self._model(fx, "fx"), hx=self._model(hx, "hx"),
                UT_predict=self._model(UT_predict, "UT"), UT_update=self._model(UT, "UT"),
            )  # fmt: skip
        else:
            record = self._compiled(
                _kernel_update, ["hx"] + (["UT"] if UT is not None else []),
                self._record, config, z, self._dt, hx_args,
                static=self._static, hx=self._model(hx, "hx"), UT=self._model(UT, "UT"),
            )  # fmt: skip
        self._set_record(record)
        self.z = z

    def batch_filter(self, zs, Rs=None, dts=None, UT=None, saver=None):
        """Filter a sequence of measurements (filterpy signature).

        Returns ``(means (N, n), covariances (N, n, n))`` of the posteriors. With
        ``Rs``, ``dts`` and ``saver`` all ``None`` and no missing measurement it runs as
        one compiled :func:`ukf_scan`; otherwise step by step."""
        zs_list = list(zs)
        n_steps = len(zs_list)
        if n_steps == 0:
            raise ValueError("zs must hold at least one measurement")
        fast = Rs is None and dts is None and saver is None
        if fast and all(z is not None for z in zs_list):
            zs_arr = np.asarray(zs_list, dtype=float)
            if zs_arr.size != n_steps * self._dim_z:
                raise ValueError(
                    f"each element of zs must have {self._dim_z} elements (dim_z); got shape {zs_arr.shape}"
                )
            zs_arr = zs_arr.reshape(n_steps, self._dim_z)
            final, hist = self._compiled(
                ukf_scan, ["fx", "hx"] + (["UT"] if UT is not None else []),
                self._model(self.fx, "fx"), self._model(self.hx, "hx"), self.params, self.state, zs_arr,
                UT=self._model(UT, "UT"),
            )  # fmt: skip
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

    def rts_smoother(self, Xs, Ps, Qs=None, dts=None, UT=None):
        """Rauch–Tung–Striebel smoother over filtered ``Xs`` (N, n), ``Ps`` (N, n, n),
        e.g. the output of :meth:`batch_filter` (filterpy signature and maths; one
        compiled backward scan, :func:`ukf_rts_smoother`).

        ``Qs``: (N, n, n), a list of N (n, n), or ``None`` for ``self.Q``; ``dts``:
        scalar or N time steps, ``None`` for ``dt``. Returns ``(xs, Ps, Ks)``."""
        Xs = np.asarray(Xs, dtype=float)
        Ps = np.asarray(Ps, dtype=float)
        if len(Xs) != len(Ps):
            raise ValueError("Xs and Ps must have the same length")
        n = self._dim_x
        if Xs.ndim == 3 and Xs.shape[2] == 1:
            Xs = Xs[:, :, 0]
        if Xs.ndim != 2 or Xs.shape[1] != n or Ps.shape != (len(Xs), n, n):
            raise ValueError(f"Xs must have shape (N, {n}) and Ps (N, {n}, {n}); got {Xs.shape} and {Ps.shape}")
        if dts is not None:
            dts = np.broadcast_to(np.asarray(dts, dtype=float), (len(Xs),))
        if Qs is not None:
            Qs = np.asarray(Qs, dtype=float)
            if Qs.shape != (len(Xs), n, n):
                raise ValueError(f"Qs must have shape ({len(Xs)}, {n}, {n}) (one Q per step); got {Qs.shape}")
        result = self._compiled(
            ukf_rts_smoother, ["fx"] + (["UT"] if UT is not None else []),
            self._model(self.fx, "fx"), self.params, Xs, Ps, dts, Qs, UT=self._model(UT, "UT"),
        )  # fmt: skip
        return np.asarray(result.x), np.asarray(result.P), np.asarray(result.K)

    def __repr__(self):
        return f"UnscentedKalmanFilter(dim_x={self._dim_x}, dim_z={self._dim_z}, dt={self._dt}, x={self.x})"
