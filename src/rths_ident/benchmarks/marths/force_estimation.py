"""Feedback force from the specimen model (seed 004 Eq. 31, §5.2, Fig. 22A).

The load cells are not used (they carry the coupler's inertia, which is not part of the
structure). The estimated frame motion ψ̂_m = (x̂4, θ̂4) and its two derivatives go
through the ES model instead::

    f̂_m = M_es ψ̈̂_m + C_es ψ̇̂_m + K_es ψ̂_m        (31)    f̂_m = [F_m4 (N), M_m4 (N·m)]

The ES model is the paper's reduced 2-DOF frame (§4.5 item 1c): the central first-storey
frame of :mod:`.model` (reference minus numerical SAP model) statically condensed onto
(x4, θ4) — θ7, the pinned-base rotations and the verticals carry no external force in the
lab; its mass is the frame's horizontal mass (11.85 kg); C_es = a0 M + a1 K with the
reference's Rayleigh coefficients. Paper coordinates (θ counter-clockwise).

The derivatives come from the Kalman filter's state instead of finite differences: with
η̂ = C ẑ and a strictly proper plant, η̂̇ = C A ẑ and η̂̈ = C A² ẑ + C A B u exactly for the
model, and ψ̇ = J⁻¹ η̇, ψ̈ ≈ J⁻¹ η̈ (J the coupler Jacobian at θ̂; the J̇ ψ̇ term, of order
θ̇², is dropped) — no differentiation noise (the digest suggests filtered differences).
"""

from __future__ import annotations

from typing import NamedTuple

import jax.numpy as jnp
import numpy as np

from rths_ident import small_linalg as sl
from rths_ident.benchmarks.marths.model import MarthsModel

__all__ = ["ReducedSpecimen", "reduced_specimen", "estimate_force"]


class ReducedSpecimen(NamedTuple):
    """The 2-DOF ES model on (x4 [m], θ4 [rad]): mass, damping, stiffness (2, 2), SI."""

    mass: jnp.ndarray
    damping: jnp.ndarray
    stiffness: jnp.ndarray


def reduced_specimen(model: MarthsModel) -> ReducedSpecimen:
    """Condense the ES of ``model`` onto (x4, θ4) (module doc)."""
    es = list(model.es_equations)
    keep = [es.index(model.equations["x4"]), es.index(model.equations["theta4"])]
    other = [i for i in range(len(es)) if i not in keep]
    k = model.stiffness_es[np.ix_(es, es)]
    k_c = k[np.ix_(keep, keep)] - k[np.ix_(keep, other)] @ np.linalg.solve(k[np.ix_(other, other)],
                                                                           k[np.ix_(other, keep)])
    sign = np.diag([model.sign("x4"), model.sign("theta4")])
    k_c = sign @ k_c @ sign
    m_c = np.diag([model.mass_es[model.equations["x4"], model.equations["x4"]], 0.0])
    a0, a1 = model.rayleigh
    return ReducedSpecimen(jnp.asarray(m_c), jnp.asarray(a0 * m_c + a1 * k_c), jnp.asarray(0.5 * (k_c + k_c.T)))


def estimate_force(specimen: ReducedSpecimen, psi, psi_dot, psi_ddot):
    """f̂_m (2,) [N, N·m] of Eq. 31 for ψ̂, ψ̇̂, ψ̈̂ (2,) each."""
    return (sl.matvec(specimen.mass, psi_ddot) + sl.matvec(specimen.damping, psi_dot)  # multiply-sum, not dot
            + sl.matvec(specimen.stiffness, psi))
