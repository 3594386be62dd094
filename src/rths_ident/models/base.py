"""Common interface of the hysteretic and element models (CONTRIBUTING.md, "Hysteretic
element models").

Every model is a class whose *static* methods are the functional core::

    state = Model.init(params)
    state, force = Model.step(params, state, ElementInputs(x, v), dt)   # x, v at the END of the step
    stiffness = Model.tangent(params, state, ElementInputs(x, v), dt)    # dF/dx at the end of the step

and whose instances are a thin stateful wrapper with no maths of its own::

    model = Model(field=value, ...)          # or Model(params)
    model.params                              # the validated Params container
    model.force_history(displacement, dt)     # displacement-driven, like OpenSees setStrain

``step``/``tangent`` have the library's one component shape (docs/hybrid/components.md):
``inputs`` is the NamedTuple :class:`ElementInputs` ``(displacement, velocity)``; a record
for ``jax.lax.scan`` is the same NamedTuple with a leading time axis on each field.

Conventions shared by all models
--------------------------------
* ``state`` is the *committed* state at the start of the step and always stores the
  displacement of that instant (``state.displacement``); the displacement increment of
  the step is ``inputs.displacement - state.displacement``. ``step`` never mutates
  anything, so an implicit integrator may call it repeatedly from the same committed
  state with different trial inputs; nothing is committed until the caller keeps the
  returned state.
* ``force`` is the restoring force [N] (SI units unless a model's docstring says
  otherwise). Inertia forces of a specimen's own mass are not part of it; models that
  carry a mass give it by a separate static ``inertia_force(params, a)``.
* ``tangent`` is ∂F/∂x at fixed velocity, at the end of the step.
* All functions are pure and JAX-traceable (``jax.lax.scan``, ``jax.grad``,
  ``jax.vmap``); float64 is enabled by importing :mod:`rths_ident`.
"""

from __future__ import annotations

import functools
from typing import Any, Callable, ClassVar, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from rths_ident.errors import ParameterError
from rths_ident._params import plain

__all__ = [
    "ElementInputs",
    "HystereticModel",
    "tangent_from_step",
    "velocity_from_displacement",
    "direction_of_motion",
    "scan_force",
]


class ElementInputs(NamedTuple):
    """Inputs of an element model's ``step``/``tangent``: where the element is at the
    END of the step.

    displacement : x [m] (for a storey column, the drift u[top] − u[bottom]).
    velocity : ẋ [m/s] (rate-independent models use it only for the direction of
        motion at a zero increment).
    """

    displacement: Any
    velocity: Any


def tangent_from_step(step: Callable, params, state, inputs: ElementInputs, dt) -> jax.Array:
    """∂F/∂x at the end of the step, by forward-mode differentiation of ``step`` with
    respect to ``inputs.displacement``.

    Used by models whose update has no short closed-form tangent. Velocity is held
    fixed (the damping part of a rate-dependent model is ∂F/∂v, not included). The
    derivative is jit-compiled once per ``step`` function (also when called eagerly).
    """
    return _jitted_tangent(step)(params, state, inputs, dt)


@functools.lru_cache(maxsize=None)
def _jitted_tangent(step: Callable):
    def tangent(params, state, inputs, dt):
        x = jnp.asarray(inputs.displacement, dtype=jnp.float64)

        def force_at(trial_x):
            return step(params, state, ElementInputs(trial_x, inputs.velocity), dt)[1]

        return jax.jacfwd(force_at)(x)

    return jax.jit(tangent)


def direction_of_motion(dx, v) -> jax.Array:
    """±1: the sign of the displacement increment ``dx``, or of ``v`` when ``dx == 0``
    (then +1 if ``v == 0`` too).

    Hysteretic branches depend on the direction of motion; at a zero increment the
    direction is taken from the velocity so that the tangent of a trial call at the
    committed displacement is the one-sided tangent in the direction the structure is
    moving. Piecewise constant, so it carries no derivative.
    """
    by_velocity = jnp.where(v < 0.0, -1.0, 1.0)
    return jnp.where(dx > 0.0, 1.0, jnp.where(dx < 0.0, -1.0, by_velocity))


def velocity_from_displacement(displacement: np.ndarray, dt: float) -> np.ndarray:
    """Velocity [m/s] of a sampled displacement [m] by finite differences.

    Second-order central differences inside the record and one-sided second-order
    differences at both ends (``numpy.gradient(..., edge_order=2)``); a record of
    two samples uses the first-order difference.
    """
    x = np.asarray(displacement, dtype=float)
    if x.size < 2:
        return np.zeros_like(x)
    return np.gradient(x, dt, edge_order=2 if x.size > 2 else 1)


def _check_history(displacement) -> np.ndarray:
    x = np.asarray(displacement, dtype=float)
    if x.ndim != 1:
        raise ValueError(f"displacement must be a 1-D array of samples [m]; got shape {x.shape}")
    if not np.all(np.isfinite(x)):
        raise ValueError("displacement must be finite (found NaN or inf)")
    return x


def scan_force(model_cls: type, params, displacement, velocity, dt):
    """Restoring force history [N] of ``model_cls`` with ``params`` from its virgin state:
    ``Model.step`` scanned over ``ElementInputs(displacement, velocity)`` (pure,
    traceable: usable inside ``jit``, ``grad``, ``vmap`` and the fitters)."""

    def body(state, inputs):
        return model_cls.step(params, state, inputs, dt)

    _, force = jax.lax.scan(body, model_cls.init(params), ElementInputs(displacement, velocity))
    return force


@functools.lru_cache(maxsize=None)
def _history_function(model_cls: type, with_tangent: bool):
    """Jitted ``lax.scan`` of ``model_cls.step`` over a displacement/velocity record.

    Cached per model class (and static params fields, through jit's own cache): the
    scan is compiled once per record length, never per step.
    """

    def run(params, displacement, velocity, dt):
        state0 = model_cls.init(params)

        def body(state, inputs):
            new_state, force = model_cls.step(params, state, inputs, dt)
            if with_tangent:
                stiffness = model_cls.tangent(params, state, inputs, dt)
                return new_state, (force, stiffness)
            return new_state, force

        _, out = jax.lax.scan(body, state0, ElementInputs(displacement, velocity))
        return out

    return jax.jit(run)


@functools.lru_cache(maxsize=None)
def _jitted_step(model_cls: type):
    return jax.jit(model_cls.step)


class HystereticModel:
    """Base class of the models in :mod:`rths_ident.models`.

    Subclasses define the class attributes ``Params`` (a ``params_dataclass``) and
    ``State`` (a ``NamedTuple`` whose first field is ``displacement``), and the static
    methods ``init``, ``step`` and ``tangent`` (see the module docstring). The
    instance methods below only call those; they hold no maths.

    ``rate_dependent`` says whether the force depends on the velocity; such models need
    ``dt`` (or an explicit ``velocity``) in :meth:`force_history`.
    """

    Params: ClassVar[type]
    State: ClassVar[type]
    rate_dependent: ClassVar[bool] = False

    # -- functional core (overridden by every model) -------------------------------
    @staticmethod
    def init(params):  # pragma: no cover - abstract
        raise NotImplementedError

    @staticmethod
    def step(params, state, inputs: ElementInputs, dt):  # pragma: no cover - abstract
        raise NotImplementedError

    @staticmethod
    def tangent(params, state, inputs: ElementInputs, dt):  # pragma: no cover - abstract
        raise NotImplementedError

    # -- thin wrapper ---------------------------------------------------------------
    def __init__(self, params: Any = None, **fields: Any):
        if params is None:
            params = self.Params(**fields)
        elif fields:
            raise TypeError(
                f"{type(self).__name__}: give either a {self.Params.__name__} or field "
                f"values, not both (got params and {sorted(fields)})"
            )
        if not isinstance(params, self.Params):
            raise TypeError(
                f"{type(self).__name__} expects params of type {self.Params.__name__}; "
                f"got {type(params).__name__}"
            )
        self.params = params
        self.state = self.init(params)

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.params!r})"

    def reset(self) -> None:
        """Back to the initial (virgin) state."""
        self.state = self.init(self.params)

    def update(self, x: float, v: float = 0.0, dt: float = 0.0) -> float:
        """Step-wise use: move to displacement ``x`` [m] with velocity ``v`` [m/s] at the
        end of a step of ``dt`` [s], commit the new state, return the restoring force [N].
        """
        self.state, force = _jitted_step(type(self))(self.params, self.state, ElementInputs(x, v), dt)
        return float(force)

    def _needs_velocity(self) -> bool:
        return bool(self.rate_dependent)

    def _inputs(self, displacement, dt, velocity):
        x = _check_history(displacement)
        if velocity is not None:
            v = np.asarray(velocity, dtype=float)
            if v.shape != x.shape:
                raise ValueError(
                    f"velocity must have the shape of displacement {x.shape}; got {v.shape}"
                )
        elif dt is not None:
            if not (np.isfinite(dt) and dt > 0):
                raise ValueError(f"dt must be a positive time step [s]; got {dt!r}")
            v = velocity_from_displacement(x, dt)
        elif self._needs_velocity():
            raise ValueError(
                f"{type(self).__name__} is rate-dependent (its force depends on the "
                "velocity): pass dt [s] so that the velocity can be computed from the "
                "displacement by finite differences, or pass velocity= explicitly"
            )
        else:
            v = np.zeros_like(x)
        step_dt = 0.0 if dt is None else float(dt)
        return jnp.asarray(x), jnp.asarray(v), step_dt

    def force_history(self, displacement, dt: float | None = None, velocity=None) -> np.ndarray:
        """Restoring force [N] for a displacement history [m], starting from the virgin
        state (displacement-driven, like OpenSees ``setStrain``/``getStress``).

        ``dt`` [s]: sample interval; the velocity is then taken from finite differences
        of the displacement (:func:`velocity_from_displacement`). Rate-dependent models
        raise ``ValueError`` without ``dt`` or ``velocity``. The first sample is reached
        from the initial displacement 0.
        """
        x, v, step_dt = self._inputs(displacement, dt, velocity)
        out = _history_function(type(self), False)(self.params, x, v, step_dt)
        return np.asarray(out)

    def tangent_history(self, displacement, dt: float | None = None, velocity=None) -> np.ndarray:
        """Tangent stiffness ∂F/∂x [N/m] at every sample of a displacement history."""
        x, v, step_dt = self._inputs(displacement, dt, velocity)
        _, stiffness = _history_function(type(self), True)(self.params, x, v, step_dt)
        return np.asarray(stiffness)


def raise_if(condition: bool, owner: str, field: str, message: str) -> None:
    """Cross-field check helper for ``__post_init__`` of params containers."""
    if condition:
        raise ParameterError(f"{owner}.{field} {message}")


def is_concrete(*values) -> bool:
    """True when none of ``values`` is a JAX tracer (so checks can be made)."""
    return not any(isinstance(v, jax.core.Tracer) for v in values)


def check_scalar(owner, name, value, low=None, high=None, low_inclusive=True) -> float:
    """Validate a scalar argument of a constructor (not a params field); returns it
    as a float or raises :class:`ParameterError` naming ``owner`` and ``name``."""
    if isinstance(value, (str, bytes)):  # float('1e6') would accept it
        raise ParameterError(f"{owner}: {name} must be a real number, not the text {value!r}")
    try:
        val = float(value)
    except (TypeError, ValueError) as exc:
        raise ParameterError(f"{owner}: {name} must be a real number; got {value!r}") from exc
    bad = not np.isfinite(val)
    if low is not None:
        bad |= val < low if low_inclusive else val <= low
    if high is not None:
        bad |= val > high
    if bad:
        left = "[" if low_inclusive else "("
        right = "inf)" if high is None else f"{high:g}]"
        low_s = "-inf" if low is None else f"{low:g}"
        raise ParameterError(
            f"{owner}: {name} = {plain(value)} is outside the allowed range {left}{low_s}, {right}"
        )
    return val
