"""The identified 2×2 control plant of the maRTHS benchmark (seed 004 Eqs. 19–20, 25–27).

Inputs u = [u1, u2] (actuator commands, bottom and top), outputs η_m = [η_m1, η_m2]
(actuator strokes); H_ij is input j → output i. Every entry is the product of an
actuator part (per column: two real poles; zeros per entry) and the frame's complex pole
pair F(s) shared by all four (Eq. 26). Printed values are in Hz and multiply 2π
(s in rad/s; digest 004 §8, from the package's ``fcn_build_uncert_plant``)::

    H11 = 2165.2   (s + 2π·120)(s + 2π·90) / [(s + 2π·2.65)(s + 2π·40)] · F(s)
    H21 = 349.95   (s + 2π·120)(s + 2π·90) / [(s + 2π·2.65)(s + 2π·40)] · F(s)
    H12 = 4.5394e6 (s + 2π·3)              / [(s + 2π·3.5)(s + 2π·18.5)] · F(s)
    H22 = 1.9238e7 (s + 2π·5)              / [(s + 2π·3.5)(s + 2π·18.5)] · F(s)
    F(s) = 1 / [(s + 2π(50 + 63j))(s + 2π(50 − 63j))]

Corrections to the printed Eq. 25 (digest §14 item 2): the H22 gain is printed 2165.2
(|H22(0)| would be 1e-4); the package's 1.9238e7 is used. H12's printed 4.5e6 is the
package's 4.5394e6 rounded; 4.5394e6 is used (DC gain 0.131, the issue's figure). DC gains
H11, H12, H21, H22 = 0.864, 0.131, 0.140, 0.926.

The plant is unit-agnostic (both sides are strokes); the library feeds it metres.

State space: one SIMO realisation per input column (the column's two entries share
their denominator), controllable canonical form, stacked: 8 states, D = 0 (every entry
is strictly proper). Discretisation at the loop rate: the package integrates the plant
with fixed-step RK4 (Simulink ode4) with the command held over the step; for an LTI
plant that step is exactly z⁺ = Φ z + Γ u with the 4th-order Taylor polynomials of
(A Δt) (:func:`rk4_discretisation`).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from rths_ident.errors import ParameterError

__all__ = ["PlantDescription", "NOMINAL_PLANT", "StateSpace", "entry_polynomials", "state_space",
           "frequency_response", "dc_gains", "rk4_discretisation"]

TWO_PI = 2.0 * np.pi


class PlantDescription(NamedTuple):
    """Poles and zeros of Eq. 25 in Hz (a root at s = −2π·value), gains in s-units.

    column_poles : (2, 2) — the two real poles of input column j in row j.
    zeros : ((z11a, z11b), (z21a, z21b), (z12,), (z22,)) — per entry (H11, H21, H12, H22).
    gains : (2, 2) — K_ij of H_ij.
    frame_pole : complex — the frame's pole 50 + 63j Hz (its conjugate is implied).
    """

    column_poles: np.ndarray
    zeros: tuple
    gains: np.ndarray
    frame_pole: complex


NOMINAL_PLANT = PlantDescription(
    column_poles=np.array([[2.65, 40.0], [3.5, 18.5]]),
    zeros=((120.0, 90.0), (120.0, 90.0), (3.0,), (5.0,)),
    gains=np.array([[2165.2, 4.5394e6], [349.95, 1.9238e7]]),
    frame_pole=50.0 + 63.0j,
)


class StateSpace(NamedTuple):
    """ż = A z + B u, η = C z + D u (continuous, s in rad/s)."""

    A: np.ndarray
    B: np.ndarray
    C: np.ndarray
    D: np.ndarray


def _zeros_of(plant: PlantDescription, i: int, j: int) -> tuple:
    return plant.zeros[{(0, 0): 0, (1, 0): 1, (0, 1): 2, (1, 1): 3}[(i, j)]]


def _check(plant: PlantDescription) -> None:
    poles = np.asarray(plant.column_poles, dtype=float)
    gains = np.asarray(plant.gains, dtype=float)
    if poles.shape != (2, 2) or gains.shape != (2, 2):
        raise ParameterError(f"column_poles and gains must be (2, 2); got {poles.shape}, {gains.shape}")
    if not (np.all(poles > 0) and np.all(np.isfinite(gains)) and np.real(plant.frame_pole) > 0):
        raise ParameterError("the plant must be stable: column poles > 0 Hz and Re(frame_pole) > 0 Hz "
                             f"(roots at s = −2π·value); got {poles.tolist()}, {plant.frame_pole!r}")


def entry_polynomials(plant: PlantDescription, i: int, j: int) -> tuple[np.ndarray, np.ndarray]:
    """(numerator, denominator) of H_ij in descending powers of s (rad/s)."""
    _check(plant)
    num = plant.gains[i][j] * np.poly(-TWO_PI * np.asarray(_zeros_of(plant, i, j), dtype=float))
    frame = np.real(np.poly(-TWO_PI * np.array([plant.frame_pole, np.conj(plant.frame_pole)])))
    den = np.polymul(np.poly(-TWO_PI * np.asarray(plant.column_poles[j], dtype=float)), frame)
    return np.atleast_1d(num), den


def state_space(plant: PlantDescription = NOMINAL_PLANT) -> StateSpace:
    """The 8-state realisation of the module doc."""
    blocks_a, blocks_c = [], []
    for j in range(2):
        den = entry_polynomials(plant, 0, j)[1]
        n = den.size - 1
        a = np.zeros((n, n))
        a[:-1, 1:] = np.eye(n - 1)
        a[-1, :] = -den[:0:-1] / den[0]
        rows = []
        for i in range(2):
            num = entry_polynomials(plant, i, j)[0] / den[0]
            padded = np.zeros(n)
            padded[:num.size] = num[::-1]  # ascending powers: c_k multiplies s^k
            rows.append(padded)
        blocks_a.append(a)
        blocks_c.append(np.array(rows))
    n = blocks_a[0].shape[0]
    a = np.zeros((2 * n, 2 * n))
    b = np.zeros((2 * n, 2))
    c = np.zeros((2, 2 * n))
    for j in range(2):
        sl = slice(j * n, (j + 1) * n)
        a[sl, sl] = blocks_a[j]
        b[(j + 1) * n - 1, j] = 1.0
        c[:, sl] = blocks_c[j]
    return StateSpace(a, b, c, np.zeros((2, 2)))


def frequency_response(plant: PlantDescription, frequencies_hz) -> np.ndarray:
    """H(j2πf) (len(f), 2, 2) from the polynomials."""
    s = 1j * TWO_PI * np.atleast_1d(np.asarray(frequencies_hz, dtype=float))
    out = np.empty((s.size, 2, 2), dtype=complex)
    for i in range(2):
        for j in range(2):
            num, den = entry_polynomials(plant, i, j)
            out[:, i, j] = np.polyval(num, s) / np.polyval(den, s)
    return out


def dc_gains(plant: PlantDescription = NOMINAL_PLANT) -> np.ndarray:
    """H(0) (2, 2)."""
    return np.real(frequency_response(plant, [0.0])[0])


def rk4_discretisation(system: StateSpace, dt: float) -> tuple[np.ndarray, np.ndarray]:
    """(Φ, Γ) of one classical RK4 step of ż = A z + B u with u held over the step:
    Φ = Σ_{k=0..4} (A Δt)^k / k!, Γ = Σ_{k=1..4} A^{k−1} Δt^k / k! · B."""
    if not (np.isfinite(dt) and dt > 0):
        raise ParameterError(f"dt must be a time step > 0 [s]; got {dt!r}")
    a = np.asarray(system.A, dtype=float)
    n = a.shape[0]
    phi, gamma_sum, term = np.eye(n), np.zeros((n, n)), np.eye(n)
    factorial = 1.0
    for k in range(1, 5):
        gamma_sum = gamma_sum + term * dt**k / (factorial * k)
        factorial *= k
        term = term @ a
        phi = phi + term * dt**k / factorial
    return phi, gamma_sum @ np.asarray(system.B, dtype=float)
