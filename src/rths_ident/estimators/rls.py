"""Recursive least squares (RLS) with forgetting, covariance guards and a dead zone.

Model: ``y(t) = φ(t)ᵀ θ + e(t)`` with a scalar measurement ``y`` and regressor ``φ``
(length n). One update (seed 001 Eqs. 4.6–4.9, Ljung; in the standard form with the
forgetting factor λ):

    ŷ = φᵀ θ̂(t−1)                          a-priori prediction          (4.7)
    e = y − ŷ                               a-priori prediction error
    K = P φ / (λ + φᵀ P φ)                  gain                          (4.8)
    θ̂(t) = θ̂(t−1) + K e                                                 (4.6)
    P(t) = [(I − K φᵀ) P (I − K φᵀ)ᵀ + λ K Kᵀ] / λ                        (4.9)

Seed 001's printed Eqs. 4.8–4.9 omit the ``λ +`` in the denominators (digest 001 §4.2,
flag 7): as printed, ``P(t) φ(t) = 0`` after every step and ``P`` collapses in rank. We
follow the standard form (what Simulink's RLS block — the one the thesis used —
implements), with λ = 1 by default. ``P`` is propagated in Joseph form, algebraically
equal to ``(P − P φ φᵀ P / (λ + φᵀ P φ)) / λ`` but symmetric and positive semi-definite
by construction, and symmetrised once more against round-off.

Guards (all off by default; none is in the thesis):

* dead zone: no update (neither θ̂ nor P) when ``|e| ≤ dead_zone``;
* covariance reset: ``P ← P(0)`` when the smallest eigenvalue of ``P`` drops below
  ``reset_below`` (restores alertness after long excitation);
* eigenvalue floor: eigenvalues of ``P`` below ``eigen_floor`` are raised to it;
* trace cap: ``P`` is scaled down so that ``tr P ≤ trace_cap`` (stops covariance wind-up
  when λ < 1 and the regressor is not exciting).

Functional core: :func:`init`, :func:`update`, :func:`correct`, :func:`run` (pure,
``jax.lax.scan``/``vmap``/``grad`` compatible). Thin wrapper: :class:`RLS`.
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from rths_ident import small_linalg as sl
from rths_ident.errors import ParameterError
from rths_ident._params import field_range, params_dataclass

__all__ = ["RLSParams", "RLSState", "RLSHistory", "init", "update", "correct", "run", "RLS"]


@params_dataclass
class RLSParams:
    """Configuration of recursive least squares (seed 001 Eqs. 4.6–4.9).

    A value of 0 switches a guard off.
    """

    forgetting: float = field_range(
        1.0, low=0.0, high=1.0, low_inclusive=False, doc="forgetting factor λ (1 = none)"
    )
    dead_zone: float = field_range(
        0.0, low=0.0, unit="units of y", doc="no update while |prediction error| ≤ dead_zone"
    )
    trace_cap: float = field_range(0.0, low=0.0, doc="upper bound on tr P (0 = off)")
    eigen_floor: float = field_range(0.0, low=0.0, doc="lower bound on the eigenvalues of P (0 = off)")
    reset_below: float = field_range(
        0.0, low=0.0, doc="reset P to P(0) when its smallest eigenvalue < reset_below (0 = off)"
    )


class RLSState(NamedTuple):
    """What evolves: estimate θ̂ (n,), covariance P (n, n), and P(0) kept for resets."""

    theta: jax.Array
    covariance: jax.Array
    initial_covariance: jax.Array


class RLSHistory(NamedTuple):
    """Per-sample record produced by :func:`run`."""

    theta: jax.Array  # (N, n) estimate after each sample
    prediction_error: jax.Array  # (N,) a-priori error y − φᵀθ̂(t−1)
    covariance_trace: jax.Array  # (N,) tr P after each sample


def _as_covariance(initial_covariance, n: int, owner: str) -> jax.Array:
    """Scalar → scalar·I; (n,) → diag; (n, n) → as is. Checks concrete values."""
    P0 = jnp.asarray(initial_covariance, dtype=jnp.float64)
    if P0.ndim == 0:
        P0 = P0 * jnp.eye(n)
    elif P0.ndim == 1:
        if P0.shape[0] != n:
            raise ParameterError(f"{owner}: initial covariance diagonal must have length n={n}; got shape {P0.shape}")
        P0 = jnp.diag(P0)
    if P0.shape != (n, n):
        raise ParameterError(f"{owner}: initial covariance must be a scalar, (n,) or (n, n) with n={n}; got shape {P0.shape}")
    if not isinstance(P0, jax.core.Tracer):
        P0_np = np.asarray(P0)
        if not np.all(np.isfinite(P0_np)):
            raise ParameterError(f"{owner}: initial covariance must be finite")
        if not np.allclose(P0_np, P0_np.T, rtol=1e-10, atol=0.0):
            raise ParameterError(f"{owner}: initial covariance must be symmetric")
        if np.linalg.eigvalsh(0.5 * (P0_np + P0_np.T)).min() <= 0.0:
            raise ParameterError(f"{owner}: initial covariance must be positive definite")
    return P0


def init(params: RLSParams, theta0, initial_covariance) -> RLSState:
    """Initial state from θ̂(0) (length n) and P(0) (scalar, diagonal (n,) or (n, n) SPD)."""
    del params  # the state does not depend on the configuration
    theta0 = jnp.asarray(theta0, dtype=jnp.float64)
    if theta0.ndim != 1:
        raise ParameterError(f"RLS theta0 must be a 1-D vector; got shape {theta0.shape}")
    P0 = _as_covariance(initial_covariance, theta0.shape[0], "RLS")
    return RLSState(theta=theta0, covariance=P0, initial_covariance=P0)


def _symmetrise(P):
    return 0.5 * (P + P.T)


def _guard_covariance(params: RLSParams, P, P_initial):
    """Reset / eigenvalue floor / trace cap (see the module docstring)."""

    def with_eigen_guards(P):
        eigenvalues, vectors = jnp.linalg.eigh(P)
        reset = (params.reset_below > 0.0) & (eigenvalues[0] < params.reset_below)
        floored = (vectors * jnp.maximum(eigenvalues, params.eigen_floor)) @ vectors.T
        return jnp.where(reset, P_initial, _symmetrise(floored))

    needs_eigen = (params.eigen_floor > 0.0) | (params.reset_below > 0.0)
    P = jax.lax.cond(needs_eigen, with_eigen_guards, lambda P: P, P)
    trace = jnp.trace(P)
    scale = jnp.where((params.trace_cap > 0.0) & (trace > params.trace_cap), params.trace_cap / trace, 1.0)
    return P * scale


def correct(params: RLSParams, state: RLSState, phi, prediction_error) -> RLSState:
    """One RLS correction with a given a-priori prediction error ``e``.

    :func:`update` is ``correct(params, state, φ, y − φᵀθ̂)``. Identifiers that predict
    with one regressor and adapt along another (e.g. freezing a parameter by zeroing its
    regressor entry in the gain) call this directly.
    """
    phi = jnp.asarray(phi, dtype=jnp.float64)
    theta, P = state.theta, state.covariance
    lam = params.forgetting
    # small products as multiply-sum, not dot: the fast loop stays one kernel (small_linalg)
    P_phi = sl.matvec(P, phi)
    gain = P_phi / (lam + sl.vdot(phi, P_phi))  # Eq. 4.8 with the λ the printed equation misses
    theta_new = theta + gain * prediction_error
    identity_minus = jnp.eye(theta.shape[0]) - sl.outer(gain, phi)
    P_new = (sl.quadratic_form(identity_minus, P) + lam * sl.outer(gain, gain)) / lam  # Joseph form
    P_new = _guard_covariance(params, _symmetrise(P_new), state.initial_covariance)
    active = (jnp.abs(prediction_error) > params.dead_zone) | (params.dead_zone <= 0.0)
    return RLSState(
        theta=jnp.where(active, theta_new, theta),
        covariance=jnp.where(active, P_new, P),
        initial_covariance=state.initial_covariance,
    )


def update(params: RLSParams, state: RLSState, phi, y) -> tuple[RLSState, jax.Array]:
    """One RLS step with regressor ``φ`` (n,) and measurement ``y`` (scalar).

    Returns the new state and the a-priori prediction error ``y − φᵀθ̂(t−1)``.
    """
    phi = jnp.asarray(phi, dtype=jnp.float64)
    error = y - sl.vdot(phi, state.theta)
    return correct(params, state, phi, error), error


def run(params: RLSParams, state: RLSState, regressors, measurements) -> tuple[RLSState, RLSHistory]:
    """Scan :func:`update` over a record: ``regressors`` (N, n), ``measurements`` (N,)."""

    def body(state, sample):
        phi, y = sample
        state, error = update(params, state, phi, y)
        return state, RLSHistory(state.theta, error, jnp.trace(state.covariance))

    return jax.lax.scan(body, state, (jnp.asarray(regressors, jnp.float64), jnp.asarray(measurements, jnp.float64)))


_update_jit = jax.jit(update)
_run_jit = jax.jit(run)


class RLS:
    """Stateful RLS for scripts (filterpy-like); all maths lives in :func:`update`.

    >>> rls = RLS(2, theta0=[0, 0], P0=1e3, forgetting=0.99)
    >>> error = rls.update([1.0, 2.0], 3.0)
    >>> rls.theta, rls.P
    """

    def __init__(self, n: int, theta0=None, P0=1.0e3, *, forgetting: float = 1.0, dead_zone: float = 0.0,
                 trace_cap: float = 0.0, eigen_floor: float = 0.0, reset_below: float = 0.0):
        if int(n) != n or n < 1:
            raise ParameterError(f"RLS n (number of parameters) must be a positive integer; got {n!r}")
        theta0 = np.zeros(int(n)) if theta0 is None else np.asarray(theta0, dtype=float)
        if theta0.shape != (int(n),):
            raise ParameterError(f"RLS theta0 must have shape ({int(n)},); got {theta0.shape}")
        self.params = RLSParams(forgetting=forgetting, dead_zone=dead_zone, trace_cap=trace_cap,
                                eigen_floor=eigen_floor, reset_below=reset_below)
        self.state = init(self.params, theta0, P0)

    @property
    def n(self) -> int:
        return int(self.state.theta.shape[0])

    @property
    def theta(self) -> np.ndarray:
        return np.asarray(self.state.theta)

    @property
    def P(self) -> np.ndarray:
        return np.asarray(self.state.covariance)

    def _check_phi(self, phi) -> np.ndarray:
        phi = np.asarray(phi, dtype=float)
        if phi.shape != (self.n,):
            raise ParameterError(f"RLS regressor phi must have shape ({self.n},); got {phi.shape}")
        return phi

    def update(self, phi, y) -> float:
        """Assimilate one sample; returns the a-priori prediction error."""
        self.state, error = _update_jit(self.params, self.state, self._check_phi(phi), jnp.float64(y))
        return float(error)

    def predict(self, phi) -> float:
        """ŷ = φᵀθ̂ with the current estimate."""
        return float(self._check_phi(phi) @ self.theta)

    def run(self, regressors, measurements) -> RLSHistory:
        """Assimilate a whole record at once (compiled scan); returns the history."""
        regressors = np.asarray(regressors, dtype=float)
        measurements = np.asarray(measurements, dtype=float)
        if regressors.ndim != 2 or regressors.shape[1] != self.n or measurements.shape != (regressors.shape[0],):
            raise ParameterError(
                f"RLS.run needs regressors (N, {self.n}) and measurements (N,); got {regressors.shape} and {measurements.shape}"
            )
        self.state, history = _run_jit(self.params, self.state, regressors, measurements)
        return history
