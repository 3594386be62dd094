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
