"""The sample LQG tracking controller of the maRTHS benchmark (seed 004 §5.3, Eqs. 32–36).

Designed in discrete time at the loop rate on the nominal plant's RK4 step matrices
(Φ, Γ, C) of :mod:`.plant` (the package designs in continuous time and Simulink
discretises; at 1024 Hz the two agree closely).

**LQR with integral action** (Eqs. 32–35, signs restored). The error integrator
z_err[k+1] = z_err[k] + Δt (η_ns[k] − η_m[k]) augments the plant::

    z_a = [z; z_err],  Φ_a = [Φ 0; −Δt C I],  Γ_a = [Γ; 0]
    J = Σ z_aᵀ Q z_a + uᵀ R u,   Q = blockdiag(q_y CᵀC, diag(q_err)),  R = diag(r)
    u[k] = −K_p ẑ[k] − K_ε z_err[k]                                         (35)

(``control.dlqr``). The paper uses larger Q/R for actuator 1 (it works against the frame):
the default ``q_err`` is larger on actuator 1. The error integrates the MEASURED η_m, as
Eq. 32 writes it (ε = η_ns − η_m): integrating the Kalman estimate instead (the digest's
§13 B.5) leaves a steady offset whenever the true plant differs from the model (the
estimate, not the stroke, is driven to the target) — tested on 20 random plants.

**Kalman filter** (Eq. 36). w enters with the commands (process noise G = Γ, covariance
``process_std``² I), v is the sensor noise of the §3.6.3 table (STD² per actuator). The
current-estimate form: ẑ[k|k] = ẑ[k|k−1] + M (y[k] − C ẑ[k|k−1]), ẑ[k+1|k] = Φ ẑ[k|k] + Γ u[k],
M = P Cᵀ (C P Cᵀ + R_v)⁻¹ with P the a-priori DARE solution (scipy).

The paper's final weights are only in the companion package; the defaults here are ours
(chosen so that El Centro ×0.4 stays within the 3.8 V command limit over random plants;
docs/benchmarks/marths.md). The sample is "not intended to be competitive".
"""

from __future__ import annotations

from typing import NamedTuple

import control
import jax.numpy as jnp
import numpy as np
import scipy.linalg

from rths_ident import small_linalg as sl
from rths_ident.errors import ParameterError
from rths_ident.benchmarks.marths.daq import noise_offsets
from rths_ident.benchmarks.marths.plant import NOMINAL_PLANT, PlantDescription, rk4_discretisation, state_space

__all__ = ["LQGWeights", "LQGDesign", "KalmanDesign", "design_kalman", "design_lqg", "kalman_correct",
           "kalman_predict", "lqr_command"]


class LQGWeights(NamedTuple):
    """q_output: weight on η (CᵀC) [1/m²]; q_integral (2,): on z_err [1/(m·s)²];
    r (2,): on u [1/m²]; process_std: Kalman process noise on the commands [m]."""

    q_output: float = 1.0
    q_integral: tuple = (1.0e6, 1.0e5)
    r: tuple = (1.0, 1.0)
    process_std: float = 1e-4


class KalmanDesign(NamedTuple):
    """Discrete plant model and the current-estimate gain M (8, 2); ``a_c``: the
    continuous A, ``b_c``: continuous B (for the derivatives of η̂, Eq. 31 feed)."""

    phi: jnp.ndarray
    gamma: jnp.ndarray
    c: jnp.ndarray
    gain: jnp.ndarray
    a_c: jnp.ndarray
    b_c: jnp.ndarray


class LQGDesign(NamedTuple):
    """The LQR gains K_p (2, 8), K_ε (2, 2) and the Kalman filter."""

    k_state: jnp.ndarray
    k_integral: jnp.ndarray
    kalman: KalmanDesign


def _check_weights(weights: LQGWeights) -> None:
    for name in ("q_integral", "r"):
        value = np.asarray(getattr(weights, name), dtype=float)
        if value.shape != (2,) or not np.all(value > 0):
            raise ParameterError(f"LQGWeights.{name} must be two positive numbers; got {getattr(weights, name)!r}")
    if not (weights.q_output >= 0 and weights.process_std > 0):
        raise ParameterError("LQGWeights.q_output must be >= 0 and process_std > 0")


def design_kalman(dt: float, plant: PlantDescription = NOMINAL_PLANT, process_std: float = 1e-4,
                  measurement_std=None) -> KalmanDesign:
    """The Kalman filter of the module doc (``measurement_std`` default: the table's STDs)."""
    ss = state_space(plant)
    phi, gamma = rk4_discretisation(ss, dt)
    std = noise_offsets("displacement")[1] if measurement_std is None else np.asarray(measurement_std, dtype=float)
    q_w = gamma @ gamma.T * process_std**2
    r_v = np.diag(std**2)
    p = scipy.linalg.solve_discrete_are(phi.T, ss.C.T, q_w + 1e-30 * np.eye(phi.shape[0]), r_v)
    gain = p @ ss.C.T @ np.linalg.inv(ss.C @ p @ ss.C.T + r_v)
    return KalmanDesign(*(jnp.asarray(x) for x in (phi, gamma, ss.C, gain, ss.A, ss.B)))


def design_lqg(dt: float, weights: LQGWeights = LQGWeights(), plant: PlantDescription = NOMINAL_PLANT) -> LQGDesign:
    """LQR with integral action + Kalman filter on ``plant`` (module doc)."""
    _check_weights(weights)
    ss = state_space(plant)
    phi, gamma = rk4_discretisation(ss, dt)
    n = phi.shape[0]
    phi_a = np.block([[phi, np.zeros((n, 2))], [-dt * ss.C, np.eye(2)]])
    gamma_a = np.vstack([gamma, np.zeros((2, 2))])
    q = scipy.linalg.block_diag(weights.q_output * ss.C.T @ ss.C, np.diag(weights.q_integral))
    gain, _, _ = control.dlqr(phi_a, gamma_a, q, np.diag(weights.r))
    gain = np.asarray(gain)
    kalman = design_kalman(dt, plant, weights.process_std)
    return LQGDesign(jnp.asarray(gain[:, :n]), jnp.asarray(gain[:, n:]), kalman)


def kalman_correct(kalman: KalmanDesign, predicted, measured):
    """ẑ[k|k] and η̂_m = C ẑ[k|k] from ẑ[k|k−1] and the measured strokes (2,)."""
    # products as multiply-sum, not dot: the fast loop stays one kernel (rths_ident.small_linalg)
    z = predicted + sl.matvec(kalman.gain, measured - sl.matvec(kalman.c, predicted))
    return z, sl.matvec(kalman.c, z)


def kalman_predict(kalman: KalmanDesign, corrected, command):
    """ẑ[k+1|k] = Φ ẑ[k|k] + Γ u[k]."""
    return sl.matvec(kalman.phi, corrected) + sl.matvec(kalman.gamma, command)


def lqr_command(design: LQGDesign, estimate, integral):
    """u = −K_p ẑ − K_ε z_err (Eq. 35) [m]."""
    return -sl.matvec(design.k_state, estimate) - sl.matvec(design.k_integral, integral)
