"""Stateful-wrapper machinery shared by the Kalman filters (UKF, EKF): no maths here.

Crossing from Python into compiled code costs ~5–10 µs per call plus ~1 µs per array
argument and per output. A wrapper therefore keeps everything that evolves in ONE flat
float64 vector (the "record": x, P, x_prior, P_prior, x_post, P_post, K, y, S,
log-likelihood, …) and everything that configures it in another (the "config": Q, R,
weights, bounds, …), both described by a :class:`FlatLayout`; a step is one compiled
call record -> record, and a deferred ``predict()`` is fused with the next ``update()``.

:class:`KalmanWrapperBase` holds that storage and gives the filterpy attributes
(``x, P, Q, R`` settable and editable in place; ``x_prior, P_prior, x_post, P_post, K,
y, S, SI, log_likelihood, likelihood, mahalanobis``). A filter subclasses it, defines
its layouts and compiled kernels (which call its functional core) and its ``_flush``
(run a deferred predict).
"""

from __future__ import annotations

import math

import jax
import jax.numpy as jnp
import numpy as np

from rths_ident.estimators.covariance_checks import check_covariance

__all__ = [
    "FlatLayout",
    "KalmanWrapperBase",
    "HostFunction",
    "TRACER_ERRORS",
    "typed_args",
    "explain_tracer_error",
    "host_view",
]

#: What jax raises when Python/numpy code meets a traced array (``np.asarray(tracer)``,
#: ``if tracer > 0``, ``float(tracer)``, ``int(tracer)``).
TRACER_ERRORS = (
    jax.errors.TracerArrayConversionError,
    jax.errors.ConcretizationTypeError,
    jax.errors.TracerBoolConversionError,
    jax.errors.TracerIntegerConversionError,
)


class FlatLayout:
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


def typed_args(args: dict) -> dict:
    """Python floats -> numpy float64, so that ``u=0.5`` and ``u=np.float64(0.5)`` (or
    an array element) share one compiled kernel instead of two (weak vs strong type)."""
    if not args:
        return args
    return {key: (np.float64(value) if type(value) is float else value) for key, value in args.items()}


def explain_tracer_error(err, which: str, hint: str = "") -> TypeError:
    """A ``TypeError`` saying which user function(s) must be written with ``jax.numpy``."""
    return TypeError(
        f"{which} must be written with jax.numpy (it is compiled with jax.jit); "
        f"it ran numpy/Python code on a traced array{hint}: {err}"
    )


class KalmanWrapperBase:
    """Record/config storage shared by the UKF and EKF wrappers (no maths here).

    ``x, P, Q, R`` are handed to the user as writable numpy arrays; edits in place
    (``kf.P *= 2``) or by assignment are picked up by the next step. Keep no
    long-lived reference to them across steps: after a step a fresh array is handed
    out, as filterpy does for ``x`` and ``P``.
    """

    _settable = ("x", "P", "Q", "R")
    _config_names = ("Q", "R")

    def _init_storage(self, record_layout: FlatLayout, config_layout: FlatLayout, record0, config0):
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
            check_covariance(where, arr, definite=(name == "P"), error=ValueError)
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


# --------------------------------------------------------------------------------------
# plain-Python user functions inside compiled kernels
# --------------------------------------------------------------------------------------


def _to_host(value):
    arr = np.asarray(value)
    return arr[()] if arr.ndim == 0 else arr


class HostFunction:
    """A user's plain Python/numpy function, called back from compiled code.

    Calling it on traced arrays issues one ``jax.pure_callback``: the arguments arrive
    in Python as numpy arrays (0-d ones as numpy scalars), ``fn`` runs there, and its
    result (float64) goes back into the compiled program. ``arg_rank`` is the rank of
    the first argument in one call of ``fn`` (1 for a state ``x``, 2 for a set of sigma
    points); when ``jax.vmap`` batches the call (the UKF core maps ``fx``, ``hx`` and
    the residuals over the sigma points) the callback receives the whole batch and
    loops over it in Python, so a batch costs one crossing, not one per point.

    ``out`` gives the result's shape: a tuple; ``"broadcast"`` (the broadcast shape of
    the arguments, for ``subtract``/``residual``/``state_add``-like functions); or
    ``"transform"`` (filterpy's ``UT(sigmas, Wm, Wc, noise_cov, mean_fn, residual_fn)
    -> (mean (k,), cov (k, k))``, whose two function arguments are passed through as the
    user's own Python functions). Instances compare equal when they wrap the same
    function the same way, so compiled kernels keyed on them are reused.
    """

    def __init__(self, fn, name: str, arg_rank: int, out):
        if not callable(fn):
            raise TypeError(f"{name} must be callable; got {type(fn).__name__}")
        self.fn, self.name, self.arg_rank, self.out = fn, name, int(arg_rank), out

    def _key(self):
        return (self.fn, self.name, self.arg_rank, self.out)

    def __eq__(self, other):
        return isinstance(other, HostFunction) and self._key() == other._key()

    def __hash__(self):
        return hash(self._key())

    def __repr__(self):
        return f"HostFunction({self.name}={self.fn!r})"

    def _result_shapes(self, arrays):
        if self.out == "broadcast":
            return jnp.broadcast_shapes(*(jnp.shape(a) for a in arrays))
        if self.out == "transform":
            k = jnp.shape(arrays[0])[1]
            return ((k,), (k, k))
        return tuple(self.out)

    def __call__(self, *args, **kwargs):
        if self.out == "transform":
            sigmas, Wm, Wc, noise_cov, mean_fn, residual_fn = args
            arrays = (sigmas, Wm, Wc, noise_cov)
            user = (host_view(mean_fn), host_view(residual_fn))
        else:
            arrays, user = args, ()
        shapes = self._result_shapes(arrays)
        nested = isinstance(shapes[0], tuple)
        result_spec = (
            tuple(jax.ShapeDtypeStruct(s, jnp.float64) for s in shapes)
            if nested
            else jax.ShapeDtypeStruct(shapes, jnp.float64)
        )

        def one_call(call_args, call_kwargs):
            out = self.fn(*call_args, *user, **call_kwargs)
            if nested:
                return tuple(np.asarray(o, dtype=np.float64).reshape(s) for o, s in zip(out, shapes))
            return np.asarray(out, dtype=np.float64).reshape(shapes)

        def host(host_args, host_kwargs):
            host_args = [np.asarray(a) for a in host_args]
            host_kwargs = {k: np.asarray(v) for k, v in host_kwargs.items()}
            batch = host_args[0].shape[: host_args[0].ndim - self.arg_rank]
            if not batch:
                return one_call([_to_host(a) for a in host_args], {k: _to_host(v) for k, v in host_kwargs.items()})
            results = [
                one_call([_to_host(a[i]) for a in host_args], {k: _to_host(v[i]) for k, v in host_kwargs.items()})
                for i in np.ndindex(*batch)
            ]
            if nested:
                return tuple(np.stack([r[i] for r in results]).reshape(batch + shapes[i]) for i in range(len(shapes)))
            return np.stack(results).reshape(batch + tuple(shapes))

        return jax.pure_callback(host, result_spec, tuple(arrays), dict(kwargs), vmap_method="broadcast_all")


def host_view(fn):
    """The plain-Python function behind ``fn`` (what a user's ``UT`` expects to get):
    a :class:`HostFunction`'s own function, numpy's ``subtract`` for ``jnp.subtract``,
    ``fn`` otherwise."""
    if isinstance(fn, HostFunction):
        return fn.fn
    if fn is jnp.subtract:
        return np.subtract
    return fn
