"""Stability limits of the time integrators (undamped linear analysis).

For the Newmark family with γ ≥ 1/2 (Hughes, *The Finite Element Method*, §9.1):

* 2β ≥ γ ≥ 1/2: unconditionally stable (average acceleration β = 1/4, γ = 1/2);
* otherwise stable for Ω = ω_max Δt ≤ Ω_crit = 1/√(γ/2 − β): explicit Newmark
  (β = 0, γ = 1/2) and central difference give Ω_crit = 2, so Δt_crit = 2/ω_max.

α-OS (seed 000 Eqs. 2.48–2.55) is unconditionally stable while the splitting stiffness
K^l is not smaller than the current tangent stiffness (softening structures); a
structure that hardens above K^l makes it conditionally stable.

ω_max is the largest natural circular frequency of (M, K) with K the linearised
stiffness of the coupled system (numerical part + interface estimate).
"""

from __future__ import annotations

import math

import numpy as np
import scipy.linalg

from rths_ident.errors import ParameterError

__all__ = ["TimeStepError", "critical_time_step", "max_natural_frequency", "newmark_critical_omega_dt"]


class TimeStepError(ValueError):
    """The time step exceeds the stability limit of a conditionally stable scheme."""


def max_natural_frequency(mass, stiffness) -> float:
    """Largest ω [rad/s] of K φ = ω² M φ (M must be positive definite)."""
    m = np.asarray(mass, dtype=float)
    k = np.asarray(stiffness, dtype=float)
    k = 0.5 * (k + k.T)
    try:
        eig = scipy.linalg.eigh(k, m, eigvals_only=True)
    except np.linalg.LinAlgError as exc:
        raise ParameterError(
            "the stability limit needs a positive-definite mass matrix (massless DOFs make "
            "explicit schemes unusable: condense them first)"
        ) from exc
    return float(math.sqrt(max(eig.max(), 0.0)))


def newmark_critical_omega_dt(beta: float, gamma: float) -> float:
    """Ω_crit = ω Δt limit of Newmark(β, γ); ``inf`` if unconditionally stable."""
    if gamma < 0.5:
        raise ParameterError(f"Newmark gamma must be >= 1/2 (otherwise unstable); got {gamma!r}")
    if 2.0 * beta >= gamma:
        return math.inf
    return 1.0 / math.sqrt(gamma / 2.0 - beta)


def critical_time_step(mass, stiffness, beta: float, gamma: float) -> float:
    """Largest stable Δt [s] of Newmark(β, γ) for (M [kg], K [N/m]); ``inf`` if
    unconditionally stable. Central difference: β = 0, γ = 1/2 (Δt_crit = 2/ω_max)."""
    omega_dt = newmark_critical_omega_dt(beta, gamma)
    if math.isinf(omega_dt):
        return math.inf
    omega_max = max_natural_frequency(mass, stiffness)
    if omega_max == 0.0:
        return math.inf
    return omega_dt / omega_max


def check_time_step(dt: float, dt_critical: float, scheme: str) -> None:
    """Raise :class:`TimeStepError` if ``dt`` > ``dt_critical``."""
    if dt > dt_critical:
        raise TimeStepError(
            f"{scheme}: dt = {dt:.6g} s exceeds the stability limit dt_crit = {dt_critical:.6g} s "
            f"(= Ω_crit/ω_max of the linearised structure); use dt <= {dt_critical:.6g} s or an "
            "unconditionally stable scheme (average-acceleration Newmark, α-OS)"
        )
