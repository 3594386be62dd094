"""The one stateful wrapper of the identifiers, for research scripts (filterpy-style).

An identifier is written once as pure functions (``init``, ``step(params, state, inputs,
dt) -> (state, outputs)``, ``estimate(params, state) -> Estimate``; the protocol of
:mod:`rths_ident.estimators.online_identifier`). :class:`IdentifierWrapper` holds its
``params`` and ``state`` and calls those functions, compiled once per function (module
cache, never per step); it contains no maths::

    ident = LuGreIdentifier(guess)                  # a subclass: builds the functions' params
    out = ident.update(x, v, force, dt)             # one sample: step, compiled
    history = ident.run(x_record, v_record, force_record, dt)   # one compiled scan
    ident.theta, ident.relative_std, ident.converged, ident.P

* ``update(*inputs, dt)`` — one sample; ``inputs`` are the fields of the identifier's
  inputs NamedTuple (:class:`~rths_ident.estimators.online_identifier.IdentifierInputs`:
  x [m], ẋ [m/s], R [N]), then the sample interval ``dt`` [s], positional or by keyword
  (default: the wrapper's ``dt``, if it has one);
* ``run(*records, dt)`` — a record (arrays of N samples, one per field of the inputs,
  then ``dt``) in one compiled scan; returns the stacked outputs and keeps the stacked
  estimates in ``estimates``;
* ``estimate`` (:class:`~rths_ident.estimators.online_identifier.Estimate`), ``theta`` (θ̂
  in ``param_names`` order, physical units), ``relative_std``, ``converged`` (the
  identifier's own documented rule), ``P`` (the covariance the estimator propagates,
  read from the state by the subclass's ``covariance_of``).
"""

from __future__ import annotations

import functools
from typing import Any, Callable

import jax
import numpy as np

from rths_ident.errors import ParameterError
from rths_ident.protocols import Estimate, IdentifierInputs
from rths_ident.estimators.online_identifier import scan_steps

__all__ = ["IdentifierWrapper"]


@functools.lru_cache(maxsize=None)
def _compiled_step(step: Callable):
    return jax.jit(step)


@functools.lru_cache(maxsize=None)
def _compiled_scan(step: Callable, estimate: Callable):
    return jax.jit(functools.partial(scan_steps, step, estimate))


@functools.lru_cache(maxsize=None)
def _compiled_estimate(estimate: Callable):
    return jax.jit(estimate)


class IdentifierWrapper:
    """Holds an identifier's ``params`` and ``state``; calls its pure functions (module doc).

    ``functions``: anything with ``params``, ``init``, ``step``, ``estimate`` and
    ``param_names`` (an :class:`~rths_ident.estimators.online_identifier.OnlineIdentifier`,
    or an identifier of another problem with its own inputs NamedTuple
    ``inputs_type``). ``state``: start here instead of ``init(params)``. ``dt`` [s]: the
    default sample interval of ``update``/``run``.
    """

    inputs_type: type = IdentifierInputs

    def __init__(self, functions: Any, state: Any = None, dt: float | None = None):
        self.functions = functions
        self.params = functions.params
        self.state = functions.init(functions.params) if state is None else state
        self.dt = None if dt is None else self._checked_dt(dt)
        self.last_output = None
        self.estimates: Estimate | None = None

    # --- what a subclass may override (reading, never computing) -------------------
    @staticmethod
    def covariance_of(state):
        """The covariance the estimator propagates (its own coordinates)."""
        raise NotImplementedError

    # --- stepping ------------------------------------------------------------------
    def _checked_dt(self, dt):
        if dt is None:
            if self.dt is None:
                raise ParameterError(f"{type(self).__name__}: give dt, the sample interval [s]")
            return self.dt
        if not (np.ndim(dt) == 0 and np.isfinite(dt) and dt > 0):
            raise ParameterError(f"{type(self).__name__}: dt must be a positive sample interval [s]; got {dt!r}")
        return np.float64(dt)

    def _split_dt(self, args, dt, method):
        """``(inputs, dt)`` of ``update``/``run`` arguments (``dt`` last positional or keyword)."""
        n = len(self.inputs_type._fields)
        if len(args) == n + 1 and dt is None:
            return args[:n], args[n]
        if len(args) != n:
            raise ParameterError(f"{type(self).__name__}.{method} takes {n} inputs {self.inputs_type._fields} "
                                 f"and dt; got {len(args)} positional arguments")
        return args, dt

    def update(self, *inputs, dt: float | None = None):
        """One sample (the fields of ``inputs_type``, in order, then ``dt``); returns the
        step's outputs."""
        inputs, dt = self._split_dt(inputs, dt, "update")
        sample = self.inputs_type(*(np.asarray(a, dtype=np.float64) for a in inputs))
        step = _compiled_step(self.functions.step)
        self.state, self.last_output = step(self.params, self.state, sample, self._checked_dt(dt))
        return self.last_output

    def run(self, *records, dt: float | None = None):
        """A record: one array of N samples per field of ``inputs_type`` (leading axis N),
        in one compiled scan from the current state. Returns the stacked outputs; the
        stacked estimates are kept in ``estimates``."""
        name = type(self).__name__
        fields = self.inputs_type._fields
        records, dt = self._split_dt(records, dt, "run")
        arrays = [np.asarray(a, dtype=np.float64) for a in records]
        if any(a.ndim == 0 for a in arrays) or len({a.shape[0] for a in arrays}) != 1:
            raise ParameterError(
                f"{name}.run needs {len(fields)} records {fields} of equal length (leading axis); got shapes "
                + ", ".join(str(a.shape) for a in arrays)
            )
        dt = self._checked_dt(dt)
        scan = _compiled_scan(self.functions.step, self.functions.estimate)
        self.state, (outputs, self.estimates) = scan(self.params, self.state, self.inputs_type(*arrays), dt)
        return outputs

    # --- reading -------------------------------------------------------------------
    @property
    def estimate(self) -> Estimate:
        """:class:`~rths_ident.estimators.online_identifier.Estimate` of the current state (numpy)."""
        theta, relative_std, converged, covariance_ok = _compiled_estimate(self.functions.estimate)(self.params,
                                                                                                  self.state)
        return Estimate(np.asarray(theta), np.asarray(relative_std), bool(converged), bool(covariance_ok))

    @property
    def param_names(self) -> tuple:
        return tuple(self.functions.param_names)

    @property
    def theta(self) -> np.ndarray:
        """θ̂ in ``param_names`` order (physical units)."""
        return self.estimate.theta

    @property
    def relative_std(self) -> np.ndarray:
        """√Var(θ̂_i)/|θ̂_i|."""
        return self.estimate.relative_std

    @property
    def converged(self) -> bool:
        """The identifier's own ``converged`` rule on the current state."""
        return self.estimate.converged

    @property
    def P(self) -> np.ndarray:
        return np.asarray(self.covariance_of(self.state))

    def __repr__(self):
        values = ", ".join(f"{n}={v:.6g}" for n, v in zip(self.param_names, self.theta.tolist()))
        return f"{type(self).__name__}({values}, converged={self.converged})"
