"""Predictor–corrector rate transition, OpenFresco style, second order
(seed 000 §3.2.1; seed 003 §3.3; digest 003 §6; Mosqueda et al. 2005, Schellenberg et
al. 2009). Written from the description of OpenFresco's ``PredictorCorrector.c``; no
code was copied.

Within each slow step the normalised time x runs from 0 to 1 over ``ratio`` fast ticks.
Targets from the NS: sig1 (newest), sig2, sig3 at x = 0, −1, −2 while waiting.

* **Predict** (while the NS computes the next target): second-order Lagrange
  extrapolation through (−2, sig3), (−1, sig2), (0, sig1)
  (``predictP2(x) = sig1(1+x)(2+x)/2 − sig2·x(2+x) + sig3·x(1+x)/2``).
* **Correct** (once the new target arrives at tick k_a): the history shifts (new target
  at x = 1, the previous ones at 0 and −1) and the command follows the quadratic through
  (−1, sig3), (xi, sigXi), (1, sig1), where (xi, sigXi) is the point where prediction
  stopped (``correctD2``), so the command is continuous at the switch and reaches the
  new target at the end of the step.
* **Slow-down rule** (seed 000 §3.2.1): if no target has arrived by
  ``slowdown_threshold``·Δt (0.6), the predictor slows down: each further tick advances
  x by ``slowdown_factor`` times the previous increment (the command decelerates to a
  hold). For real time the NS must therefore finish each step within 0.6·Δt; the output
  flag ``slowed_down`` says when it did not.

Virtual-loop simplification (ours): a step always lasts ``ratio`` ticks. After a late
arrival the correction spans the remaining ticks uniformly in x from xi to 1. A lab
controller would instead keep the nominal x rate and stretch the step; the flag marks
the steps where that would have happened. The target is taken to arrive after
``arrival_tick`` ticks (the NS computing time in ticks; 0 = instantaneous NS).

Timing: the samples returned by the call that receives u_{n+1} move the command from u_n
to u_{n+1}: the transition lags the NS by one slow step (the command can only reach a
target after it was computed), unlike DDMRT, which predicts.

Units: m (any unit; the map is linear).
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp

from rths_ident.errors import ParameterError
from rths_ident._params import field_range, params_dataclass
from rths_ident.hybrid.fast_side.rate_transition._wrapper import RateTransitionWrapper
from rths_ident.hybrid.fast_side.rate_transition.inputs import TransitionInputs


@params_dataclass(static=("ratio", "arrival_tick"))
class PredictorCorrectorParams:
    """Second-order predictor–corrector (seed 000 §3.2.1; digest 003 §6)."""

    slowdown_threshold: float = field_range(
        0.6, low=0.0, low_inclusive=False, high=1.0, high_inclusive=False, unit="-",
        doc="fraction of Δt after which the predictor slows down (seed 000: 0.6)",
    )
    slowdown_factor: float = field_range(
        0.5, low=0.0, high=1.0, high_inclusive=False, unit="-", doc="per-tick decay of the x increment when slowed"
    )
    ratio: int = 80  # fast ticks per slow step, Δt_n/Δt_e
    arrival_tick: int = 0  # tick (0 … ratio−1) from which the new target is used; ticks 1 … arrival_tick−1 predict (0 and 1: no prediction)

    def __post_init__(self):
        if int(self.ratio) != self.ratio or self.ratio < 1:
            raise ParameterError(f"PredictorCorrectorParams.ratio must be an integer ≥ 1; got {self.ratio!r}")
        if int(self.arrival_tick) != self.arrival_tick or not 0 <= self.arrival_tick < self.ratio:
            raise ParameterError(
                f"PredictorCorrectorParams.arrival_tick must be an integer in [0, ratio−1 = {self.ratio - 1}]; "
                f"got {self.arrival_tick!r}"
            )


class PredictorCorrectorState(NamedTuple):
    """targets: [sig1, sig2, sig3], the last three NS targets, newest first [m]."""

    targets: jax.Array


class PredictorCorrectorOutput(NamedTuple):
    """samples: the ``ratio`` commands of the step [m]; slowed_down: the target arrived
    after slowdown_threshold·Δt; switch_point: xi, the normalised time where prediction
    stopped; switch_value: sigXi, the command there [m]."""

    samples: jax.Array
    slowed_down: jax.Array
    switch_point: jax.Array
    switch_value: jax.Array


def init(params: PredictorCorrectorParams) -> PredictorCorrectorState:
    """At rest: all past targets zero."""
    return PredictorCorrectorState(targets=jnp.zeros(3))


def predict_p2(sig1, sig2, sig3, x):
    """Quadratic Lagrange extrapolation through (0, sig1), (−1, sig2), (−2, sig3)."""
    return sig1 * (1 + x) * (2 + x) / 2 - sig2 * x * (2 + x) + sig3 * x * (1 + x) / 2


def correct_d2(sig1, sig_xi, sig3, xi, x):
    """Quadratic Lagrange interpolation through (−1, sig3), (xi, sigXi), (1, sig1)."""
    return (
        sig1 * (x - xi) * (1 + x) / (2 * (1 - xi))
        + sig_xi * (1 - x) * (1 + x) / ((1 - xi) * (1 + xi))
        - sig3 * (1 - x) * (x - xi) / (2 * (1 + xi))
    )


def step(params: PredictorCorrectorParams, state: PredictorCorrectorState, inputs: TransitionInputs, dt):
    """Receive the new NS target u_new = ``inputs.slow_target`` [m]; return the state and
    the ``ratio`` commands. ``dt``: the slow step Δt_n [s] (unused: the map is in
    normalised time; kept for the common shape).

    Ticks 1 … a−1 predict; the target is used from tick a on, where a is
    ``inputs.arrival_tick`` when given (a traced integer: the tick at which a paced loop's
    target really arrived) and ``params.arrival_tick`` otherwise (static). The
    ``slowdown_threshold``, ``slowdown_factor`` fields may be traced; ``ratio`` is static."""
    del dt
    u_new = inputs.slow_target
    sig1, sig2, sig3 = state.targets[0], state.targets[1], state.targets[2]
    ratio = params.ratio
    arrival = params.arrival_tick if inputs.arrival_tick is None else inputs.arrival_tick
    arrival = jnp.clip(jnp.asarray(arrival), 0, ratio - 1)
    first = jnp.maximum(arrival, 1)  # first corrected tick
    threshold_tick = jnp.floor(params.slowdown_threshold * ratio + 1e-9)
    # x reached while predicting at every tick 1 … ratio−1, with the slow-down rule; the
    # ticks before the arrival use it
    ticks = jnp.arange(1, ratio)
    factor = params.slowdown_factor
    late = jnp.maximum(ticks - threshold_tick, 0.0)
    # full-speed ticks contribute 1/ratio; the m-th late tick contributes factor^m/ratio
    on_time = jnp.minimum(ticks, threshold_tick)
    late_sum = jnp.where(late > 0, factor * (1 - factor**late) / (1 - factor), 0.0)
    predicted_x = (on_time + late_sum) / ratio
    predicted = predict_p2(sig1, sig2, sig3, predicted_x)
    # the switch: where prediction stopped (x = 0 when the target came by the first tick)
    last_predicted = jnp.maximum(arrival - 2, 0)
    xi = jnp.where(arrival >= 2, predicted_x[last_predicted] if ratio > 1 else 0.0, 0.0)
    sig_xi = jnp.where(arrival >= 2, predicted[last_predicted] if ratio > 1 else sig1, sig1)
    # correction: new target at x = 1; old sig1 at 0, old sig2 at −1, over the remaining
    # n_correct ticks uniformly in x from xi to 1
    n_correct = ratio - first + 1
    sample = jnp.arange(ratio)  # sample j is tick j + 1
    m = sample - (first - 1) + 1  # 1 … n_correct on the corrected samples
    x_correct = xi + (1.0 - xi) * m / n_correct
    corrected = correct_d2(u_new, sig_xi, sig2, xi, x_correct)
    predicted_samples = jnp.concatenate([predicted, predicted[-1:]]) if ratio > 1 else corrected
    samples = jnp.where(sample < first - 1, predicted_samples, corrected)
    slowed_down = arrival - 1 > threshold_tick
    new_state = PredictorCorrectorState(targets=jnp.stack([jnp.asarray(u_new, dtype=jnp.float64), sig1, sig2]))
    return new_state, PredictorCorrectorOutput(samples, slowed_down, xi, sig_xi)


_step_jit = jax.jit(step)


class PredictorCorrector(RateTransitionWrapper):
    """Stateful wrapper: ``on_slow_sample(u_n, dt)`` then ``fast_samples()`` → array[ratio];
    ``slowed_down`` is the flag of the last step."""

    Params = PredictorCorrectorParams
    _init = staticmethod(init)
    _step_jit = staticmethod(_step_jit)

    @property
    def slowed_down(self) -> bool:
        return bool(self._last.slowed_down) if self._last is not None else False
