"""LMS, normalised LMS and leaky LMS adaptive filters (seed 000 Eqs. 3.6–3.8).

For a regressor (tap vector) ``u`` (n,) and desired signal ``d``:

    d̂ = wᵀ u                                  prediction               (3.6)
    e = d − d̂                                  error
    w ← (1 − μλ) w + μ e u                     leaky LMS update         (3.7)

with step size μ and leak λ ≥ 0 (λ = 0: plain LMS). In the DDMRT rate transition
(seed 000 §3.2.2) u = U_n = [u_{n−1} … u_{n−L}]ᵀ and d = u_n: a one-step-ahead Wiener
predictor adapted online (:func:`delay_line_regressors` builds those pairs).

Stability (Eq. 3.8): the mean weight error obeys E[w̃⁺] = (I − μ(λI + R)) E[w̃], so the
mean converges iff

    0 < μ < 2 / (λ + λ_max(R)),      R = E[u uᵀ],

and then to the regularised Wiener solution w* = (R + λI)⁻¹ r, r = E[d u] (Eq. 3.4).
This bound is necessary, not sufficient, for mean-square stability: in practice use
μ well below it (a few per cent to ~30 %). The analysis assumes regressors independent
in time; with a tapped delay line they are not, and the mean of w then carries an O(μ)
bias (largest with a leak, whose error term stays correlated with the regressors): a
fraction of a per cent of the bound makes it negligible. :func:`lms_stability_bound` computes it
from R or from a signal; :class:`LMS` warns (:class:`LMSStabilityWarning`) when μ
exceeds it.

NLMS (``normalized=True``) uses the step μ / (ε + uᵀu); it is mean-square stable for
0 < μ < 2 (with λ = 0) whatever the input power.

Functional core: :func:`init`, :func:`update`, :func:`run`; wrapper :class:`LMS`.
"""

from __future__ import annotations

import warnings
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from rths_ident.errors import ParameterError
from rths_ident._params import field_range, params_dataclass

__all__ = [
    "LMSParams",
    "LMSState",
    "LMSHistory",
    "LMSStabilityWarning",
    "init",
    "update",
    "run",
    "lms_stability_bound",
    "delay_line_regressors",
    "LMS",
]


class LMSStabilityWarning(UserWarning):
    """The LMS step size exceeds the mean-convergence bound 2/(λ + λ_max(R))."""


@params_dataclass(static=("normalized",))
class LMSParams:
    """LMS-family configuration (seed 000 Eqs. 3.6–3.8)."""

    step_size: float = field_range(0.01, low=0.0, low_inclusive=False, doc="learning rate μ")
    leak: float = field_range(0.0, low=0.0, doc="leak λ: w ← (1 − μλ) w + μ e u (0 = plain LMS)")
    regularization: float = field_range(
        1e-12, low=0.0, low_inclusive=False, unit="units of u²", doc="ε in the NLMS step μ/(ε + uᵀu)"
    )
    normalized: bool = False


class LMSState(NamedTuple):
    """Filter weights w (n,)."""

    weights: jax.Array


class LMSHistory(NamedTuple):
    weights: jax.Array  # (N, n) after each sample
    error: jax.Array  # (N,) a-priori error d − wᵀu
    prediction: jax.Array  # (N,) a-priori prediction wᵀu


def init(params: LMSParams, initial_weights) -> LMSState:
    """State from w(0) (n,); DDMRT initialises with the offline Wiener solution."""
    del params
    w = jnp.asarray(initial_weights, jnp.float64)
    if w.ndim != 1:
        raise ParameterError(f"LMS initial_weights must be a 1-D vector; got shape {w.shape}")
    return LMSState(weights=w)


def update(params: LMSParams, state: LMSState, regressor, desired) -> tuple[LMSState, jax.Array]:
    """One (leaky / normalised) LMS step; returns the new state and the a-priori error."""
    u = jnp.asarray(regressor, jnp.float64)
    w = state.weights
    error = desired - w @ u
    if params.normalized:  # static field
        mu = params.step_size / (params.regularization + u @ u)
    else:
        mu = params.step_size
    w_new = (1.0 - mu * params.leak) * w + mu * error * u  # Eq. 3.7
    return LMSState(weights=w_new), error


def run(params: LMSParams, state: LMSState, regressors, desired) -> tuple[LMSState, LMSHistory]:
    """Scan :func:`update` over ``regressors`` (N, n) and ``desired`` (N,)."""

    def body(state, sample):
        u, d = sample
        prediction = state.weights @ u
        state, error = update(params, state, u, d)
        return state, LMSHistory(state.weights, error, prediction)

    return jax.lax.scan(body, state, (jnp.asarray(regressors, jnp.float64), jnp.asarray(desired, jnp.float64)))


def _autocorrelation_matrix(signal: np.ndarray, order: int) -> np.ndarray:
    """Toeplitz R_ij = r(|i−j|) with the biased estimate r(k) = (1/N) Σ u_t u_{t+k}."""
    signal = np.asarray(signal, dtype=float)
    N = signal.shape[0]
    r = np.array([signal[: N - k] @ signal[k:] / N for k in range(order)])
    idx = np.abs(np.arange(order)[:, None] - np.arange(order)[None, :])
    return r[idx]


def lms_stability_bound(correlation_or_signal, leak: float = 0.0, order: int | None = None) -> float:
    """Mean-convergence bound 2/(λ + λ_max(R)) on the LMS step size (seed 000 Eq. 3.8).

    ``correlation_or_signal`` is one of
      * the input correlation matrix R (n, n) (square);
      * regressor samples U (N, n), N ≠ n: R = UᵀU / N;
      * a 1-D signal u: the Toeplitz R of a delay line of ``order`` taps, from the
        biased autocorrelation estimate.
    Units: 1/(units of u²).
    """
    data = np.asarray(correlation_or_signal, dtype=float)
    if leak < 0 or not np.isfinite(leak):
        raise ParameterError(f"lms_stability_bound: leak must be finite and ≥ 0; got {leak!r}")
    if data.ndim == 1:
        if order is None or int(order) < 1:
            raise ParameterError("lms_stability_bound: a 1-D signal needs order = number of taps (≥ 1)")
        R = _autocorrelation_matrix(data, int(order))
    elif data.ndim == 2 and data.shape[0] == data.shape[1]:
        R = 0.5 * (data + data.T)
    elif data.ndim == 2:
        R = data.T @ data / data.shape[0]
    else:
        raise ParameterError(
            f"lms_stability_bound: expected R (n, n), regressors (N, n) or a 1-D signal; got shape {data.shape}"
        )
    if not np.all(np.isfinite(R)):
        raise ParameterError("lms_stability_bound: the correlation matrix must be finite")
    lam_max = float(np.linalg.eigvalsh(R).max())
    if lam_max + leak <= 0.0:
        raise ParameterError("lms_stability_bound: λ + λ_max(R) must be > 0 (zero input and no leak)")
    return 2.0 / (leak + lam_max)


def delay_line_regressors(signal, order: int) -> tuple[np.ndarray, np.ndarray]:
    """One-step-ahead predictor pairs (seed 000 Eq. 3.6): U_n = [u_{n−1} … u_{n−L}], d_n = u_n.

    Returns ``(U, d)`` with shapes (N − L, L) and (N − L,).
    """
    signal = np.asarray(signal, dtype=float)
    if signal.ndim != 1 or int(order) < 1 or signal.shape[0] <= order:
        raise ParameterError(f"delay_line_regressors needs a 1-D signal longer than order ≥ 1; got {signal.shape}, {order}")
    L = int(order)
    N = signal.shape[0]
    U = np.stack([signal[L - i : N - i] for i in range(1, L + 1)], axis=1)
    return U, signal[L:]


_update_jit = jax.jit(update)
_run_jit = jax.jit(run)


class LMS:
    """Stateful LMS / NLMS / leaky LMS for scripts; all maths lives in :func:`update`.

    ``input_correlation`` (R (n, n) or a 1-D input signal) lets the wrapper compute
    :attr:`stability_bound` and warn when μ exceeds it (plain and leaky LMS; for NLMS
    the bound is μ < 2).
    """

    def __init__(self, n: int, initial_weights=None, *, step_size: float, leak: float = 0.0,
                 normalized: bool = False, regularization: float = 1e-12, input_correlation=None):
        if int(n) != n or n < 1:
            raise ParameterError(f"LMS n (number of taps) must be a positive integer; got {n!r}")
        w0 = np.zeros(int(n)) if initial_weights is None else np.asarray(initial_weights, dtype=float)
        if w0.shape != (int(n),):
            raise ParameterError(f"LMS initial_weights must have shape ({int(n)},); got {w0.shape}")
        self.params = LMSParams(step_size=step_size, leak=leak, regularization=regularization,
                                normalized=bool(normalized))
        self.state = init(self.params, w0)
        self.stability_bound = None
        if normalized:
            self.stability_bound = 2.0
        elif input_correlation is not None:
            data = np.asarray(input_correlation, dtype=float)
            self.stability_bound = lms_stability_bound(data, leak, order=int(n) if data.ndim == 1 else None)
        if self.stability_bound is not None and step_size >= self.stability_bound:
            warnings.warn(
                f"LMS step size μ = {step_size:g} ≥ stability bound {self.stability_bound:g}"
                + (" (NLMS: μ < 2)" if normalized else " = 2/(λ + λ_max(R)) (seed 000 Eq. 3.8): the filter will diverge"),
                LMSStabilityWarning,
                stacklevel=2,
            )

    @property
    def weights(self) -> np.ndarray:
        return np.asarray(self.state.weights)

    def predict(self, regressor) -> float:
        return float(np.asarray(regressor, dtype=float) @ self.weights)

    def update(self, regressor, desired) -> float:
        """Assimilate one sample; returns the a-priori error d − wᵀu."""
        u = np.asarray(regressor, dtype=float)
        if u.shape != self.weights.shape:
            raise ParameterError(f"LMS regressor must have shape {self.weights.shape}; got {u.shape}")
        self.state, error = _update_jit(self.params, self.state, u, jnp.float64(desired))
        return float(error)

    def run(self, regressors, desired) -> LMSHistory:
        regressors = np.asarray(regressors, dtype=float)
        desired = np.asarray(desired, dtype=float)
        if regressors.ndim != 2 or regressors.shape[1] != self.weights.shape[0] or desired.shape != (regressors.shape[0],):
            raise ParameterError(
                f"LMS.run needs regressors (N, {self.weights.shape[0]}) and desired (N,); got {regressors.shape}, {desired.shape}"
            )
        self.state, history = _run_jit(self.params, self.state, regressors, desired)
        return history
