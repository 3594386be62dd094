"""DDMRT — data-driven multi-rate transition (seed 000 §3.2.2, Fig. 3.3; Mera, Gómez &
Fermandois 2022): predict the next slow sample with a Wiener FIR, then interpolate the
last segment up to the fast rate.

One slow step n (digest 000 §8.2 algorithm; [REPO] defaults):

1. receive the NS target u_n (slow rate, e.g. Δt_n = 0.02 s);
2. adaptive only (LTV, Eq. 3.7): e = u_n − û_n (previous prediction),
   w ← (1 − μλ) w + μ e U with U = [u_{n−1} … u_{n−L}] (μ = 0.01, λ = 10⁻¹⁰);
3. predict û_{n+1} = Σ_{i=1..L} w_i u_{n+1−i} (Eq. 3.1 shifted by one, as [REPO]: the
   8-sample buffer includes the current sample), L = 8;
4. interpolate the n_nodes = 4 values [u_{n−2}, u_{n−1}, u_n, û_{n+1}] at normalised
   times {0, ⅓, ⅔, 1} with monomials and evaluate the last segment at ``ratio`` points
   (``monomial``); they are the fast targets for t_n + k·Δt_e, k = 1 … ratio, ending at
   the prediction for t_{n+1}. (The [REPO] hard-codes 80 points — digest 000 §13 item
   18; here it is ``ratio``.)

Continuity (ours; ``continuity``, :mod:`.continuity`): the segment of step n starts at
u_n while the previous one ended at its prediction û_n, so seed 000's command jumps by
the prediction error at every slow-step boundary. With ``continuity`` = 2 (the
registry's default) a quintic Hermite correction that dies out over the step starts the
segment where the previous one ended, with its slope and curvature; it ends on the
prediction with the interpolant's slope and curvature, as before. The corrected segment
is the quintic through those six conditions. ``continuity`` = 0 is seed 000's segment.
``blend_steps`` = W > 1 lets the correction die out over W slow steps instead of one
(the correction is W^i H_i(s/W), restarted at every boundary with the whole mismatch):
the command's content at the slow rate and above shrinks, and the segment no longer
ends exactly on the prediction (docs/hybrid/rate_transition.md has the measured
trade-off).

Fixed W (LTI) = ``adaptive=False``; adaptive W (LTV) = ``adaptive=True`` starting from
``weights``. Default weights: the [REPO] w_80 for Δt_n = 0.02 s (digest 000 §12.5);
compute your own with :func:`rths_ident.hybrid.fast_side.rate_transition.wiener.wiener_coefficients`
from an approximate realisation of the NS response.

Units: u in m (any length unit works for the LTI filter; μ and λ are tied to u², see
``wiener.lms_step_size_bound``).
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from rths_ident import small_linalg as sl
from rths_ident.errors import ParameterError
from rths_ident._params import array_field, field_range, params_dataclass
from rths_ident.hybrid.fast_side.rate_transition._wrapper import RateTransitionWrapper
from rths_ident.hybrid.fast_side.rate_transition.inputs import TransitionInputs
from rths_ident.hybrid.fast_side.rate_transition import continuity as cont
from rths_ident.hybrid.fast_side.rate_transition.monomial import interpolation_matrix, segment_end_derivatives

REPOSITORY_W80 = np.array(
    [
        4.15196215127984,
        -8.61304476276613,
        11.5668233445886,
        -11.3369579306043,
        8.58283182617035,
        -4.94233392101430,
        1.94188198247825,
        -0.394838977645662,
    ]
)


@params_dataclass(static=("ratio", "n_nodes", "adaptive", "continuity", "blend_steps"))
class DDMRTParams:
    """DDMRT rate transition (seed 000 Eqs. 3.1, 3.7, 3.12; [REPO] constants)."""

    weights: np.ndarray = array_field(REPOSITORY_W80, unit="-", doc="Wiener FIR w_1..w_L (initial, if adaptive)")
    learning_rate: float = field_range(0.01, low=0.0, unit="1/m²", doc="μ of the leaky LMS (Eq. 3.7)")
    leakage: float = field_range(1e-10, low=0.0, unit="m²", doc="λ of the leaky LMS (Eq. 3.7)")
    ratio: int = 80  # Δt_n/Δt_e: fast samples per slow step
    n_nodes: int = 4  # interpolation nodes N ([REPO] 4)
    adaptive: bool = False  # False: fixed W (LTI); True: leaky-LMS W (LTV)
    continuity: int = 0  # derivatives continuous across slow steps: 0 (seed 000), 1 or 2 (module doc)
    blend_steps: float = 1.0  # slow steps over which the continuity correction dies out (module doc)

    def __post_init__(self):
        weights = np.shape(self.weights)
        if len(weights) != 1 or weights[0] < max(1, self.n_nodes - 1):
            raise ParameterError(
                f"DDMRTParams.weights must be a 1-D array of length L ≥ n_nodes − 1 = {self.n_nodes - 1}; "
                f"got shape {weights}"
            )
        interpolation_matrix(self.n_nodes, self.ratio)  # validates ratio, n_nodes, conditioning
        cont.check_order(self.continuity)
        if not (isinstance(self.blend_steps, (int, float)) and 1.0 <= self.blend_steps <= 8.0):
            raise ParameterError(f"DDMRTParams.blend_steps must be a number of slow steps in [1, 8]; "
                                 f"got {self.blend_steps!r}")


class DDMRTState(NamedTuple):
    """history: received slow samples [u_n, u_{n−1}, …, u_{n−L+1}] [m];
    weights: current w; prediction: û_{n+1} [m]; segment_end: value [m], slope and
    curvature (per slow step, per slow step²) of the emitted samples at the end of the
    last segment; started: whether a sample has been received (before the first one the
    history is taken as constant at it: a numerical substructure that starts displaced,
    e.g. under gravity, is not read as a jump from rest that the predictor extrapolates)."""

    history: jax.Array
    weights: jax.Array
    prediction: jax.Array
    segment_end: jax.Array
    started: jax.Array


class DDMRTOutput(NamedTuple):
    """samples: the ``ratio`` fast targets of the coming slow step [m];
    prediction: û_{n+1} [m]; prediction_error: u_n − û_n of the sample just received [m]."""

    samples: jax.Array
    prediction: jax.Array
    prediction_error: jax.Array


def init(params: DDMRTParams) -> DDMRTState:
    """At rest: zero history (filled with the first sample when it comes), w = ``params.weights``."""
    weights = jnp.asarray(params.weights, dtype=jnp.float64)
    return DDMRTState(history=jnp.zeros(weights.shape[0]), weights=weights, prediction=jnp.zeros(()),
                      segment_end=jnp.zeros(4), started=jnp.asarray(False))


def leaky_lms_update(weights, error, regressor, learning_rate, leakage):
    """w ← (1 − μλ) w + μ e U (Eq. 3.7)."""
    return (1.0 - learning_rate * leakage) * weights + learning_rate * error * regressor


def step(params: DDMRTParams, state: DDMRTState, inputs: TransitionInputs, dt) -> tuple[DDMRTState, DDMRTOutput]:
    """Receive slow sample u_n = ``inputs.slow_target`` [m]; return the state and the
    ``ratio`` fast samples. ``dt``: the slow step Δt_n [s] (unused: the predictor works in
    samples; kept for the common shape)."""
    del dt
    u_new = inputs.slow_target
    error = u_new - state.prediction
    weights = state.weights
    if params.adaptive:
        weights = leaky_lms_update(weights, error, state.history, params.learning_rate, params.leakage)
    history = jnp.where(state.started, jnp.concatenate([jnp.reshape(u_new, (1,)), state.history[:-1]]),
                        jnp.full_like(state.history, u_new))
    prediction = sl.vdot(weights, history)  # multiply-sum, not dot (small_linalg)
    known = history[: params.n_nodes - 1][::-1]  # [u_{n−N+2} … u_n], oldest first
    nodes = jnp.concatenate([known, jnp.reshape(prediction, (1,))])
    samples = sl.matvec(jnp.asarray(interpolation_matrix(params.n_nodes, params.ratio)), nodes)
    ends = segment_end_derivatives(params.n_nodes)  # (start, end) × (value, slope, curvature) × nodes
    order = params.continuity
    segment_end = sl.matvec(jnp.asarray(ends[1]), nodes)
    if order:
        mismatch = state.segment_end[: order + 1] - sl.matvec(jnp.asarray(ends[0, : order + 1]), nodes)
        samples = samples + sl.matvec(jnp.asarray(cont.correction_matrix(order, params.ratio, params.blend_steps)),
                                      mismatch)
        segment_end = segment_end + sl.matvec(jnp.asarray(cont.end_matrix(order, params.blend_steps)), mismatch)
    return (DDMRTState(history, weights, prediction, segment_end, jnp.asarray(True)),
            DDMRTOutput(samples, prediction, error))


_step_jit = jax.jit(step)


def run(params: DDMRTParams, slow_signal, state: DDMRTState | None = None, dt=None):
    """Whole slow record in one ``lax.scan``: returns (state, fast signal of
    len(slow_signal)·ratio samples, predictions). Fast sample k·ratio + j (j = 0 … ratio−1)
    is the target for t_k + (j+1)·Δt_e. ``dt``: the slow step Δt_n [s], passed to
    :func:`step` (which does not use it)."""
    state = init(params) if state is None else state
    state, out = _run_jit(params, state, TransitionInputs(jnp.asarray(slow_signal, dtype=jnp.float64)), dt)
    return state, jnp.reshape(out.samples, (-1,)), out.prediction


@jax.jit
def _run_jit(params, state, inputs, dt):
    return jax.lax.scan(lambda s, i: step(params, s, i, dt), state, inputs)


class DDMRT(RateTransitionWrapper):
    """Stateful wrapper: ``on_slow_sample(u_n, dt)`` then ``fast_samples()`` → array[ratio]."""

    Params = DDMRTParams
    _init = staticmethod(init)
    _step_jit = staticmethod(_step_jit)

    @property
    def weights(self) -> np.ndarray:
        return np.asarray(self.state.weights)
