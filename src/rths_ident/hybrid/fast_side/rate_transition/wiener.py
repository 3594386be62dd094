"""Regularised causal Wiener predictor for DDMRT (seed 000 §3.2.2.1–2, Eqs. 3.1–3.8).

One-step-ahead FIR predictor (3.1): û_n = Σ_{i=1..L} w_i u_{n−i}. Minimising
E[(u_n − û_n)²] + λ‖w‖² (3.2) gives the normal equations (3.3–3.4)

    (R + λI) w = r,   R_ij = E(u_{n−i} u_{n−j}),   r_i = E(u_n u_{n−i}),

with the expectations estimated from an approximate realisation ũ (3.5): the average
over the available windows. [REPO] ``WienerFilter.m``: L = 8, λ = 10⁻¹⁰, N = 2000
samples, accumulating over i = L … N (⚠ its header gives the order [L, N, l]; the code
reads [L, l, N] — digest 000 §12.5; here they are keywords).

LMS stability (3.8): the leaky-LMS update w ← (1 − μλ) w + μ e U converges in the mean
for 0 < μ < 2/(λ + ψ(R)), ψ(R) the largest eigenvalue of R. R scales with u², so the
bound (and the [REPO] μ = 0.01) depends on the length unit of u.

Offline (NumPy) functions: they run once, before the test.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from rths_ident.errors import ParameterError


class CorrelationEstimate(NamedTuple):
    """R (L×L), r (L,) of Eq. 3.3 estimated by Eq. 3.5 from ``n_windows`` windows."""

    R: np.ndarray
    r: np.ndarray
    n_windows: int


def _check(realisation, filter_length: int, n_samples: int) -> np.ndarray:
    u = np.asarray(realisation, dtype=float)
    if u.ndim != 1:
        raise ParameterError(f"realisation must be a 1-D array of slow-rate samples; got shape {u.shape}")
    if int(filter_length) != filter_length or filter_length < 1:
        raise ParameterError(f"filter_length L must be an integer ≥ 1; got {filter_length!r}")
    if int(n_samples) != n_samples or n_samples < filter_length + 1:
        raise ParameterError(f"n_samples N must be an integer ≥ L + 1 = {filter_length + 1}; got {n_samples!r}")
    if not np.all(np.isfinite(u)):
        raise ParameterError("realisation must be finite")
    u = u[: int(n_samples)]
    if u.size < filter_length + 1:
        raise ParameterError(f"realisation needs at least L + 1 = {filter_length + 1} samples; got {u.size}")
    return u


def regressor_matrix(realisation, filter_length: int = 8, n_samples: int = 2000):
    """Rows U_n = [u_{n−1} … u_{n−L}] and targets u_n for n = L … min(N, len)−1."""
    u = _check(realisation, filter_length, n_samples)
    L = int(filter_length)
    rows = np.stack([u[L - i : u.size - i] for i in range(1, L + 1)], axis=1)
    return rows, u[L:]


def correlation_estimate(realisation, filter_length: int = 8, n_samples: int = 2000) -> CorrelationEstimate:
    """R and r of Eq. 3.3 by the window average of Eq. 3.5 over the first N samples."""
    rows, targets = regressor_matrix(realisation, filter_length, n_samples)
    m = targets.size
    return CorrelationEstimate(R=rows.T @ rows / m, r=rows.T @ targets / m, n_windows=m)


def wiener_coefficients(realisation, L: int = 8, lam: float = 1e-10, N: int = 2000) -> np.ndarray:
    """w = (R + λI)⁻¹ r (Eq. 3.4) from the first N samples of ``realisation`` (slow rate).

    L: filter length; lam: Tikhonov factor λ > 0 (in units of u²); N: samples used.
    Solved by Cholesky: R + λI is symmetric positive definite for λ > 0.
    """
    if not (np.isfinite(lam) and lam > 0):
        raise ParameterError(f"lam (Tikhonov factor λ) must be > 0; got {lam!r}")
    est = correlation_estimate(realisation, L, N)
    system = est.R + lam * np.eye(int(L))
    factor = np.linalg.cholesky(system)
    return np.linalg.solve(factor.T, np.linalg.solve(factor, est.r))


def lms_step_size_bound(R, lam: float = 1e-10) -> float:
    """Upper bound 2/(λ + ψ(R)) on the leaky-LMS learning rate μ (Eq. 3.8)."""
    return 2.0 / (lam + float(np.max(np.linalg.eigvalsh(np.asarray(R, dtype=float)))))
