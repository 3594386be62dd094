"""Static (Guyan) condensation of massless degrees of freedom.

FE models exported from SAP2000/OpenSees (e.g. the maRTHS benchmark matrices, seed 004
§1) carry rotational DOFs without mass. Explicit integrators and modal analysis need a
positive-definite M: eliminate the massless DOFs s from K u = f with f_s = 0::

    K_c = K_mm − K_ms K_ss⁻¹ K_sm,   M_c = M_mm,   u_s = −K_ss⁻¹ K_sm u_m

This is exact for the static response and for inertia that lives only on the kept DOFs
(lumped mass with zero rotational inertia).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from rths_ident.errors import ParameterError

__all__ = ["CondensedModel", "condense_massless_dofs"]


class CondensedModel(NamedTuple):
    """mass, stiffness : condensed (m, m) matrices [kg, N/m] (or the source units).
    kept_dofs : (m,) indices into the original DOFs (those with mass).
    recovery : (n, m) matrix T with u_full = T u_kept.
    """

    mass: np.ndarray
    stiffness: np.ndarray
    kept_dofs: np.ndarray
    recovery: np.ndarray


def condense_massless_dofs(mass, stiffness, mass_tolerance: float = 0.0) -> CondensedModel:
    """Condense the DOFs whose diagonal mass is <= ``mass_tolerance`` (M must have no
    coupling between kept and condensed DOFs, as a lumped mass matrix)."""
    m = np.asarray(mass, dtype=float)
    k = np.asarray(stiffness, dtype=float)
    if m.ndim != 2 or m.shape[0] != m.shape[1] or k.shape != m.shape:
        raise ParameterError(f"mass and stiffness must be square and equal in shape; got {m.shape}, {k.shape}")
    has_mass = np.diag(m) > mass_tolerance
    kept = np.flatnonzero(has_mass)
    dropped = np.flatnonzero(~has_mass)
    if kept.size == 0:
        raise ParameterError("no DOF has mass: nothing to keep")
    if dropped.size and np.abs(m[np.ix_(dropped, np.arange(m.shape[0]))]).max() > 0.0:
        raise ParameterError("massless DOFs must have zero rows/columns in the mass matrix")
    n = m.shape[0]
    recovery = np.zeros((n, kept.size))
    recovery[kept, np.arange(kept.size)] = 1.0
    if dropped.size == 0:
        return CondensedModel(m.copy(), k.copy(), kept, recovery)
    k_ss = k[np.ix_(dropped, dropped)]
    k_sm = k[np.ix_(dropped, kept)]
    try:
        static = -np.linalg.solve(k_ss, k_sm)
    except np.linalg.LinAlgError as exc:
        raise ParameterError("the stiffness of the massless DOFs is singular (a mechanism)") from exc
    recovery[dropped, :] = static
    k_c = k[np.ix_(kept, kept)] + k[np.ix_(kept, dropped)] @ static
    return CondensedModel(m[np.ix_(kept, kept)], 0.5 * (k_c + k_c.T), kept, recovery)
