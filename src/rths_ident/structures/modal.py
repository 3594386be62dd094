"""Modal analysis of M ü + K u = 0 (natural circular frequencies, periods, mode shapes).

Set-up code on concrete arrays (SciPy's symmetric generalised eigen-solver).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import scipy.linalg

from rths_ident.errors import ParameterError

__all__ = ["ModalProperties", "modal_analysis"]


class ModalProperties(NamedTuple):
    """Modes in ascending frequency.

    omega : (n,) rad/s — natural circular frequencies ω_n.
    frequency : (n,) Hz — ω_n / 2π.
    period : (n,) s — T_n = 2π / ω_n.
    mode_shapes : (n, n) — column n is φ_n, mass-normalised (Φᵀ M Φ = I) and signed so
        that its largest-magnitude entry is positive.
    """

    omega: np.ndarray
    frequency: np.ndarray
    period: np.ndarray
    mode_shapes: np.ndarray


def modal_analysis(mass, stiffness) -> ModalProperties:
    """Solve K φ = ω² M φ for a positive-definite M [kg] and positive-definite K [N/m]."""
    m = np.asarray(mass, dtype=float)
    k = np.asarray(stiffness, dtype=float)
    if m.ndim != 2 or m.shape[0] != m.shape[1] or k.shape != m.shape:
        raise ParameterError(
            f"mass and stiffness must be square matrices of equal shape; got {m.shape} and {k.shape}"
        )
    try:
        eigenvalues, vectors = scipy.linalg.eigh(k, m)
    except np.linalg.LinAlgError as exc:
        raise ParameterError(
            "modal analysis needs a symmetric positive-definite mass matrix "
            "(condense massless DOFs first)"
        ) from exc
    if eigenvalues.min() <= 0.0:
        raise ParameterError(
            f"stiffness is not positive definite (smallest ω² = {eigenvalues.min():.4g}); "
            "the structure is unstable or unsupported"
        )
    omega = np.sqrt(eigenvalues)
    signs = np.sign(vectors[np.argmax(np.abs(vectors), axis=0), np.arange(vectors.shape[1])])
    vectors = vectors * signs
    return ModalProperties(
        omega=omega,
        frequency=omega / (2.0 * np.pi),
        period=2.0 * np.pi / omega,
        mode_shapes=vectors,
    )
