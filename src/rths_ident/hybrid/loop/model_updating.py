"""The online model-updating hook.

An estimator running on the physical specimen produces an estimate θ̂ of the specimen's
parameters and a confidence (a covariance and/or a ``converged`` flag). The hook maps θ̂
onto the parameters of the numerical elements that share the specimen's model (e.g. the
eight numerical columns of a frame whose ninth column is tested), at a chosen rate, and
only when guards pass:

* every entry of θ̂ is finite;
* θ̂ lies inside ``[lower_bounds, upper_bounds]`` (physical plausibility);
* the estimator's relative standard deviation ``sqrt(diag P)/|θ̂|`` is below
  ``max_relative_std`` (when the estimator provides one);
* optionally the estimator reports ``converged`` (``require_converged=True``);
* the test time is past ``freeze_until_s`` (e.g. hold the initial model until the
  specimen has been driven past yield and the nonlinear parameters are excited).

When the guards fail the numerical elements keep the parameters they had (the last
accepted update or the initial model). The hook is a pure function, so it runs inside
the fused engine's ``lax.scan`` as well as from the step-wise engine.
"""

from __future__ import annotations

import math
from typing import Any, Callable, NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from rths_ident._params import field_range, params_dataclass
from rths_ident.errors import ParameterError


@params_dataclass(static=("update_every_slow_steps", "require_converged"))
class UpdateGuards:
    """Guards and rate of the model-updating hook.

    ``lower_bounds``/``upper_bounds`` are in the units of the estimate vector θ̂ (for
    the LuGre identifier: [σ0 N/m, F_C N, σ3 N/m]).
    """

    lower_bounds: Any = None
    upper_bounds: Any = None
    max_relative_std: float = field_range(
        np.inf, low=0.0, low_inclusive=False, allow_inf=True, doc="largest accepted sqrt(P_ii)/|θ_i|"
    )
    freeze_until_s: float = field_range(0.0, low=0.0, unit="s", allow_inf=True,
                                        doc="no update before this test time (inf: never update)")
    update_every_slow_steps: int = 1
    require_converged: bool = False

    def __post_init__(self):
        if self.lower_bounds is None or self.upper_bounds is None:
            raise ParameterError("UpdateGuards.lower_bounds and upper_bounds are required (physical bounds of θ̂)")
        lb = np.asarray(self.lower_bounds, dtype=float)
        ub = np.asarray(self.upper_bounds, dtype=float)
        if lb.shape != ub.shape or lb.ndim != 1:
            raise ParameterError(
                f"UpdateGuards bounds must be 1-D of equal length; got lower {lb.shape}, upper {ub.shape}"
            )
        if np.any(lb > ub):
            raise ParameterError(f"UpdateGuards.lower_bounds must be <= upper_bounds; got {lb} > {ub}")
        if int(self.update_every_slow_steps) < 1:
            raise ParameterError(
                f"UpdateGuards.update_every_slow_steps must be >= 1; got {self.update_every_slow_steps}"
            )


class UpdateHookState(NamedTuple):
    """What the hook remembers: the last applied estimate and counters."""

    applied_estimate: jax.Array  # θ̂ last pushed into the numerical substructure
    n_updates: jax.Array  # how many times the guards passed and an update was applied
    n_rejected: jax.Array  # how many due updates the guards refused
    last_update_time: jax.Array  # test time of the last applied update [s] (-1: never)


def hook_init(initial_estimate) -> UpdateHookState:
    """State before any update; ``initial_estimate`` is the numerical model's θ."""
    theta = jnp.asarray(initial_estimate, dtype=float)
    return UpdateHookState(
        applied_estimate=theta,
        n_updates=jnp.asarray(0),
        n_rejected=jnp.asarray(0),
        last_update_time=jnp.asarray(-1.0),
    )


def guards_pass(guards: UpdateGuards, estimate, relative_std, converged, time_s):
    """Boolean (traceable): may ``estimate`` be pushed into the numerical model now?"""
    estimate = jnp.asarray(estimate)
    ok = jnp.all(jnp.isfinite(estimate))
    ok &= jnp.all(estimate >= jnp.asarray(guards.lower_bounds))
    ok &= jnp.all(estimate <= jnp.asarray(guards.upper_bounds))
    ok &= jnp.all(jnp.nan_to_num(jnp.asarray(relative_std), nan=jnp.inf) <= guards.max_relative_std)
    ok &= time_s >= guards.freeze_until_s
    if guards.require_converged:
        ok &= jnp.asarray(converged, dtype=bool)
    return ok


def hook_decide(
    guards: UpdateGuards,
    state: UpdateHookState,
    estimate,
    relative_std,
    converged,
    time_s,
    slow_index,
) -> tuple[UpdateHookState, jax.Array]:
    """One call per slow step: is an update due and do the guards pass? Returns the new
    hook state and ``applied`` (traceable boolean). The caller pushes ``estimate`` into
    the numerical substructure when ``applied`` is true (the fused engine with a
    ``jnp.where`` on the parameter pytree, the step-wise engine through
    ``NumericalSubstructure.apply_parameters``)."""
    due = (slow_index % guards.update_every_slow_steps) == 0
    ok = guards_pass(guards, estimate, relative_std, converged, time_s)
    apply = due & ok
    new_state = UpdateHookState(
        applied_estimate=jnp.where(apply, jnp.asarray(estimate, dtype=float), state.applied_estimate),
        n_updates=state.n_updates + apply.astype(int),
        n_rejected=state.n_rejected + (due & ~ok).astype(int),
        last_update_time=jnp.where(apply, time_s, state.last_update_time),
    )
    return new_state, apply


def hook_step(
    guards: UpdateGuards,
    state: UpdateHookState,
    element_params: Any,
    estimate,
    relative_std,
    converged,
    time_s,
    slow_index,
    apply_estimate: Callable[[Any, jax.Array], Any],
) -> tuple[UpdateHookState, Any, jax.Array]:
    """:func:`hook_decide` and the update of a native parameter pytree in one call.

    ``apply_estimate(element_params, estimate) -> element_params`` maps θ̂ onto the
    numerical elements' parameter pytree (a static Python function). Returns the new
    hook state, the (possibly updated) element parameters and whether an update was
    applied at this step.
    """
    new_state, apply = hook_decide(guards, state, estimate, relative_std, converged, time_s, slow_index)
    candidate = apply_estimate(element_params, jnp.asarray(estimate))
    new_params = jax.tree_util.tree_map(lambda new, old: jnp.where(apply, new, old), candidate, element_params)
    return new_state, new_params, apply


#: the largest float64: where ``jnp.nan_to_num`` puts an infinite relative std
_FLOAT_MAX = float(np.finfo(np.float64).max)


def _relative_std_ok(relative_std: float, max_relative_std: float) -> bool:
    """``nan_to_num(relative_std, nan=inf) <= max_relative_std`` as :func:`guards_pass`
    computes it (NaN → inf; ±inf → ±the largest float64)."""
    if relative_std != relative_std:
        relative_std = math.inf
    elif relative_std == math.inf:
        relative_std = _FLOAT_MAX
    elif relative_std == -math.inf:
        relative_std = -_FLOAT_MAX
    return relative_std <= max_relative_std


class HostHook:
    """:func:`hook_decide` on the host, in plain Python floats, for the step-wise engine:
    the same decision and state bit for bit (comparisons and selections only; the test
    time ``(k + 1)·Δt_n`` the same float64 product), without a compiled call per slow
    step (whose crossing costs several times the handful of comparisons).

    ``decide(theta, relative_std, converged, slow_index) -> applied``; :attr:`state` is
    the :class:`UpdateHookState` (NumPy)."""

    def __init__(self, guards: UpdateGuards, state: UpdateHookState, dt_slow: float):
        self.guards = guards
        self.dt_slow = float(dt_slow)
        self._lower = [float(v) for v in np.ravel(guards.lower_bounds)]
        self._upper = [float(v) for v in np.ravel(guards.upper_bounds)]
        self._every = int(guards.update_every_slow_steps)
        self._max_relative_std = float(guards.max_relative_std)
        self._freeze = float(guards.freeze_until_s)
        self._require_converged = bool(guards.require_converged)
        self.applied_estimate = np.array(state.applied_estimate, dtype=np.float64)
        self.n_updates = int(state.n_updates)
        self.n_rejected = int(state.n_rejected)
        self.last_update_time = float(state.last_update_time)

    @property
    def state(self) -> UpdateHookState:
        return UpdateHookState(self.applied_estimate.copy(), np.asarray(self.n_updates),
                               np.asarray(self.n_rejected), np.asarray(self.last_update_time))

    def passes(self, theta: list, relative_std: list, converged: bool, time_s: float) -> bool:
        """:func:`guards_pass` on Python floats."""
        isfinite = math.isfinite
        for value, low, high in zip(theta, self._lower, self._upper):
            if not (isfinite(value) and value >= low and value <= high):
                return False
        for value in relative_std:
            if not _relative_std_ok(value, self._max_relative_std):
                return False
        if not time_s >= self._freeze:
            return False
        return converged or not self._require_converged

    def decide(self, theta, relative_std, converged: bool, slow_index: int) -> bool:
        """One slow step (:func:`hook_decide`): returns ``applied``; the state advances."""
        time_s = (slow_index + 1) * self.dt_slow
        if slow_index % self._every != 0:
            return False
        if self.passes(theta, relative_std, converged, time_s):
            self.applied_estimate[:] = theta
            self.n_updates += 1
            self.last_update_time = time_s
            return True
        self.n_rejected += 1
        return False
