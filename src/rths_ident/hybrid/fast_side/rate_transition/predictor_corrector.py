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

Continuity (ours; ``continuity``, :mod:`.continuity`): the scheme is continuous in
value, but its slope jumps twice per slow step — at the boundary (the previous
correction's slope at x = 1 against the new predictor's at x = 0) and at the switch
(predictor against corrector at xi) — and a compensator differentiates the kinks into
command spikes. With ``continuity`` = m ≥ 1 two Hermite corrections of order m are
added: one over the whole step for the mismatch at the boundary, one over [xi, 1] for the
mismatch at the switch (zero in value: both curves pass through sigXi). Both vanish
with m derivatives at x = 1, so the step still ends on the new target with the
corrector's derivatives. Derivatives are in x; in the slowed-down ticks x is not uniform
in time, and the command keeps the scheme's own deceleration. ``continuity`` = 0 is the
source's scheme.

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
from rths_ident.hybrid.fast_side.rate_transition import continuity as cont
from rths_ident.hybrid.fast_side.rate_transition._wrapper import RateTransitionWrapper
from rths_ident.hybrid.fast_side.rate_transition.inputs import TransitionInputs


@params_dataclass(static=("ratio", "arrival_tick", "continuity"))
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
    continuity: int = 0  # derivatives kept continuous at the boundary and the switch: 0 (the source) … 3 (module doc)

    def __post_init__(self):
        if int(self.ratio) != self.ratio or self.ratio < 1:
            raise ParameterError(f"PredictorCorrectorParams.ratio must be an integer ≥ 1; got {self.ratio!r}")
        if int(self.arrival_tick) != self.arrival_tick or not 0 <= self.arrival_tick < self.ratio:
            raise ParameterError(
                f"PredictorCorrectorParams.arrival_tick must be an integer in [0, ratio−1 = {self.ratio - 1}]; "
                f"got {self.arrival_tick!r}"
            )
        cont.check_order(self.continuity)


class PredictorCorrectorState(NamedTuple):
    """targets: [sig1, sig2, sig3], the last three NS targets, newest first [m];
    segment_end: value [m] and first three x-derivatives of the commands at the end of
    the last step."""

    targets: jax.Array
    segment_end: jax.Array


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
    return PredictorCorrectorState(targets=jnp.zeros(3), segment_end=jnp.zeros(4))


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


def _derivatives(curve, x):
    """[value, d/dx, d²/dx², d³/dx³] of the scalar polynomial ``curve`` at ``x`` (forward mode)."""
    first = jax.grad(curve)
    second = jax.grad(first)
    third = jax.grad(second)
    return jnp.stack([curve(x), first(x), second(x), third(x)])


def hermite_correction(mismatch, order: int, start, length, x):
    """Σ_i Δ_i L^i H_i((x − start)/L) for x in [start, start + L] (0 outside after it ends;
    :mod:`.continuity`); ``mismatch`` Δ: value and derivatives, ``order`` m static."""
    s = jnp.clip((x - start) / jnp.maximum(length, 1e-12), 0.0, 1.0)
    total = jnp.zeros_like(x)
    for i, coefficients in enumerate(cont.hermite_basis(order)):
        basis = sum(c * s**k for k, c in enumerate(coefficients))
        total = total + mismatch[i] * length**i * basis
    return total


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
    in_prediction = sample < first - 1
    samples = jnp.where(in_prediction, predicted_samples, corrected)
    slowed_down = arrival - 1 > threshold_tick

    def corrector(x):
        return correct_d2(u_new, sig_xi, sig2, xi, x)

    order = params.continuity
    if order:
        def predictor(x):
            return predict_p2(sig1, sig2, sig3, x)

        predicted_x_all = jnp.concatenate([predicted_x, predicted_x[-1:]]) if ratio > 1 else x_correct
        x_all = jnp.where(in_prediction, predicted_x_all, x_correct)
        # the step starts on the predictor (target not there yet), else on the corrector
        start = jnp.where(arrival >= 2, _derivatives(predictor, 0.0), _derivatives(corrector, 0.0))
        boundary = (state.segment_end - start)[: order + 1]
        switch = (_derivatives(predictor, xi) - _derivatives(corrector, xi))[: order + 1]
        switch = jnp.where(arrival >= 2, switch, 0.0)
        samples = (samples + hermite_correction(boundary, order, 0.0, 1.0, x_all)
                   + jnp.where(in_prediction, 0.0, hermite_correction(switch, order, xi, 1.0 - xi, x_all)))
    segment_end = _derivatives(corrector, 1.0)
    new_state = PredictorCorrectorState(targets=jnp.stack([jnp.asarray(u_new, dtype=jnp.float64), sig1, sig2]),
                                        segment_end=segment_end)
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
