"""Input checks shared by the Kalman filters' functional cores and wrappers.

Plain numpy on concrete values (never traced): they run when a user builds a filter or
assigns ``x``, ``P``, ``Q``, ``R``, so a wrong value fails there, naming the argument,
instead of turning the estimate into NaN several steps later.
"""

from __future__ import annotations

import numpy as np

from rths_ident.errors import ParameterError

__all__ = ["check_covariance", "square_covariance", "box_bound"]


def check_covariance(name: str, arr, definite: bool, error=ParameterError) -> None:
    """Raise ``error`` unless ``arr`` is finite, symmetric and positive (semi-)definite.

    ``definite=True`` asks for a Cholesky factor (``P``: the sigma points need it);
    otherwise the smallest eigenvalue may be zero up to rounding (``Q``, ``R``).
    """
    if not np.all(np.isfinite(arr)):
        raise error(f"{name} must be finite")
    scale = max(float(np.max(np.abs(arr))), np.finfo(float).tiny)
    if np.max(np.abs(arr - arr.T)) > 1e-8 * scale:
        raise error(f"{name} must be symmetric (a covariance matrix)")
    if definite:
        try:
            np.linalg.cholesky(arr)
        except np.linalg.LinAlgError:
            raise error(f"{name} must be positive definite (its Cholesky factor gives the sigma points)") from None
    elif np.min(np.linalg.eigvalsh(arr)) < -1e-10 * scale:
        raise error(f"{name} must be positive semi-definite")


def square_covariance(name: str, value, size: int, definite: bool = False) -> np.ndarray:
    """``value`` as a checked ``(size, size)`` float covariance; a scalar means ``value·I``."""
    arr = np.asarray(value, dtype=float)
    if arr.ndim == 0:
        arr = np.eye(size) * arr
    if arr.shape != (size, size):
        raise ParameterError(f"{name} must have shape ({size}, {size}); got {arr.shape}")
    check_covariance(name, arr, definite)
    return arr


def box_bound(name: str, value, size: int, fill: float) -> np.ndarray | None:
    """A state bound broadcast to ``(size,)`` with NaN replaced by ``fill`` (±inf), or
    ``None`` when ``value`` is ``None`` (unbounded)."""
    if value is None:
        return None
    try:
        arr = np.broadcast_to(np.asarray(value, dtype=float), (size,)).copy()
    except ValueError:
        raise ParameterError(f"{name} must be a scalar or have shape ({size},); got shape {np.shape(value)}") from None
    arr[np.isnan(arr)] = fill
    return arr
