"""Continuity across slow-step boundaries: the Hermite correction a rate transition adds
to its own segment so that the command starts where the previous segment ended.

A transition that builds each slow step's fast samples as a fresh polynomial segment
p(s), s ∈ (0, 1] the step's normalised time, jumps at every boundary by the mismatch
between where the previous segment ended and where p starts (DDMRT: by the prediction
error u_n − û_n; seed 000 §3.2.2 does not correct it). A compensator then differentiates
the jump (dAMB's FIR at 4 kHz multiplies a step by its first tap, ≈ 360 for rc-frame's
actuator), and the servo-valve receives a spike. The correction

    c(s) = Σ_{i=0..m} Δ_i H_i(s),   Δ = [y, y', y''](end of the previous segment) − [p, p', p''](0)

with the Hermite basis H_i of order m (H_i^{(j)}(0) = δ_ij, H_i^{(j)}(1) = 0 for j ≤ m)
makes the emitted samples y = p + c continuous with m continuous derivatives (m = 1:
value and slope, cubic basis; m = 2: value, slope and curvature, quintic basis), and
leaves the end of the segment — value, slope and curvature — exactly p's. Derivatives
are with respect to s (one slow step = 1).

Cubic basis (m = 1): H_0 = 1 − 3s² + 2s³, H_1 = s − 2s² + s³; quintic (m = 2):
H_0 = 1 − 10s³ + 15s⁴ − 6s⁵, H_1 = s − 6s³ + 8s⁴ − 3s⁵, H_2 = (s² − 3s³ + 3s⁴ − s⁵)/2.
"""

from __future__ import annotations

import numpy as np

from rths_ident.errors import ParameterError

#: continuity orders a transition may ask for: 0 (none: the segment as the source
#: builds it), 1 (value and slope), 2 (… and curvature), 3 (… and jerk)
ORDERS = (0, 1, 2, 3)


def hermite_basis(order: int) -> tuple:
    """The Hermite basis of ``order`` m as power-series coefficients (lowest first):
    m + 1 polynomials of degree 2m + 1 with H_i^{(j)}(0) = δ_ij and H_i^{(j)}(1) = 0 for
    j = 0 … m (solved from those 2m + 2 conditions)."""
    order = check_order(order)
    degree = 2 * order + 1
    powers = np.arange(degree + 1)
    rows = []
    for point in (0.0, 1.0):
        for j in range(order + 1):
            falling = np.array([np.prod(np.arange(p - j + 1, p + 1)) if p >= j else 0.0 for p in powers])
            rows.append(falling * np.where(powers >= j, point ** np.maximum(powers - j, 0), 0.0))
    conditions = np.array(rows)
    return tuple(np.linalg.solve(conditions, np.eye(degree + 1)[:, i]) for i in range(order + 1))


def check_order(order) -> int:
    if order not in ORDERS:
        raise ParameterError(f"continuity order must be one of {ORDERS} (0: none, 1: value and slope, 2: value, "
                             f"slope and curvature); got {order!r}")
    return int(order)


def correction_matrix(order: int, ratio: int, window: float = 1.0) -> np.ndarray:
    """(ratio, order + 1) matrix: the correction for a unit mismatch of each derivative,
    W^i H_i(s/W), at the step's samples s_j = j/ratio, j = 1 … ratio, W = ``window`` slow
    steps (the correction for a mismatch Δ is this matrix times Δ[:order + 1]). Order 0:
    an empty (ratio, 0) matrix (no correction)."""
    order = check_order(order)
    if int(ratio) != ratio or ratio < 1:
        raise ParameterError(f"ratio must be an integer ≥ 1; got {ratio!r}")
    if order == 0:
        return np.zeros((int(ratio), 0))
    s = np.arange(1, int(ratio) + 1) / ratio
    return np.stack([window**i * np.polynomial.polynomial.polyval(np.minimum(s / window, 1.0), c)
                     for i, c in enumerate(hermite_basis(order))], axis=1)


def end_matrix(order: int, window: float = 1.0) -> np.ndarray:
    """(4, order + 1): value and first three derivatives at s = 1 of the correction for a
    unit mismatch of each derivative (zero when ``window`` = 1: it has died out)."""
    order = check_order(order)
    out = np.zeros((4, order + 1 if order else 0))
    if order == 0 or window <= 1.0:
        return out
    for i, c in enumerate(hermite_basis(order)):
        p = np.polynomial.Polynomial(c)
        for j in range(4):
            out[j, i] = window ** (i - j) * p.deriv(j)(1.0 / window)
    return out


def basis_derivatives(order: int, s: float) -> np.ndarray:
    """(order + 1, 3): value, first and second derivative of each H_i at ``s`` (tests and
    docs: the defining conditions of the basis)."""
    order = check_order(order)
    rows = []
    for c in (hermite_basis(order) if order else ()):
        p = np.polynomial.Polynomial(c)
        rows.append([p(s), p.deriv(1)(s), p.deriv(2)(s)])
    return np.array(rows).reshape(order + 1 if order else 0, 3)
