"""Viscous damping matrices: Rayleigh (seed 001 Eqs. 3.11–3.12) and modal damping.

All functions are set-up code on concrete NumPy arrays (not traced).
"""

from __future__ import annotations

import numpy as np

from rths_ident.errors import ParameterError
from rths_ident.structures.modal import modal_analysis

__all__ = [
    "rayleigh_coefficients",
    "rayleigh_damping",
    "rayleigh_damping_ratios",
    "modal_damping",
]


def _check_positive(name: str, value: float) -> float:
    value = float(value)
    if not (np.isfinite(value) and value > 0.0):
        raise ParameterError(f"{name} must be a positive finite number; got {value!r}")
    return value


def rayleigh_coefficients(omega_i: float, omega_j: float, zeta: float) -> tuple[float, float]:
    """Rayleigh coefficients (a0 [1/s], a1 [s]) giving damping ratio ``zeta`` at the two
    circular frequencies ``omega_i``, ``omega_j`` [rad/s] (seed 001 Eq. 3.12):

        a0 = 2 ζ ω_i ω_j / (ω_i + ω_j),   a1 = 2 ζ / (ω_i + ω_j),   C = a0 M + a1 K.
    """
    wi = _check_positive("omega_i", omega_i)
    wj = _check_positive("omega_j", omega_j)
    zeta = float(zeta)
    if not (np.isfinite(zeta) and zeta >= 0.0):
        raise ParameterError(f"zeta must be a finite damping ratio >= 0; got {zeta!r}")
    return 2.0 * zeta * wi * wj / (wi + wj), 2.0 * zeta / (wi + wj)


def rayleigh_damping_ratios(omega, a0: float, a1: float) -> np.ndarray:
    """Damping ratio of each mode under Rayleigh damping: ζ_n = a0/(2ω_n) + a1 ω_n/2."""
    omega = np.asarray(omega, dtype=float)
    return a0 / (2.0 * omega) + a1 * omega / 2.0


def rayleigh_damping(mass, stiffness, zeta: float, modes: tuple[int, int] = (1, 2)):
    """``(C, a0, a1)``: Rayleigh damping with ratio ``zeta`` in the two ``modes``
    (1-based; seed 001 uses modes 1 and 2, the maRTHS benchmark modes 1 and 3).

    ``stiffness`` should be the linear (initial) stiffness of the FULL structure.
    """
    i, j = modes
    props = modal_analysis(mass, stiffness)
    n = props.omega.size
    if not (1 <= i <= n and 1 <= j <= n and i != j):
        raise ParameterError(f"modes must be two different mode numbers in 1..{n}; got {modes!r}")
    a0, a1 = rayleigh_coefficients(props.omega[i - 1], props.omega[j - 1], zeta)
    return a0 * np.asarray(mass, dtype=float) + a1 * np.asarray(stiffness, dtype=float), a0, a1


def modal_damping(mass, stiffness, zetas) -> np.ndarray:
    """Classical damping matrix with ratio ``zetas[n]`` in mode n (scalar: all modes):

        C = M Φ diag(2 ζ_n ω_n) Φᵀ M,   with mass-normalised Φ (Φᵀ M Φ = I).
    """
    props = modal_analysis(mass, stiffness)
    zetas = np.broadcast_to(np.asarray(zetas, dtype=float), props.omega.shape)
    if np.any(zetas < 0) or not np.all(np.isfinite(zetas)):
        raise ParameterError(f"zetas must be finite damping ratios >= 0; got {zetas!r}")
    m = np.asarray(mass, dtype=float)
    phi = props.mode_shapes
    return m @ phi @ np.diag(2.0 * zetas * props.omega) @ phi.T @ m
