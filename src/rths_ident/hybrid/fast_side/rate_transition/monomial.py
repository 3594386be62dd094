"""Monomial (Vandermonde) interpolation of the last segment (seed 000 §3.2.2.3,
Eqs. 3.9–3.12; Heath 2001).

n nodes at normalised times t_j = j/(n−1), j = 0 … n−1, carry the last n−1 received
slow samples and the prediction (last node, t = 1). The interpolant p(t) = Σ x_k t^k has
coefficients from the Vandermonde system A x = y, A_jk = t_j^k (3.12). DDMRT evaluates p
on the last segment only, at the ``ratio`` points t = (n−2)/(n−1) + k/((n−1)·ratio),
k = 1 … ratio ([REPO]: the last 80 points of linspace(0, 1, 241) for n = 4, ratio 80),
so the fast samples end exactly on the prediction.

Since p is linear in y, the whole map is one constant (ratio × n) matrix
E·A⁻¹, computed here once in NumPy. The Vandermonde conditioning grows exponentially
with n; ``interpolation_matrix`` refuses n outside [2, 12] or cond(A) > 1e6 (so n ≤ 8).
"""

from __future__ import annotations

import numpy as np

from rths_ident.errors import ParameterError

MAX_CONDITION_NUMBER = 1e6  # n = 8 equispaced nodes: 2.7e5; n = 9: 2.0e6


def vandermonde(times) -> np.ndarray:
    """A_jk = t_j^k (Eq. 3.12)."""
    t = np.asarray(times, dtype=float)
    return t[:, None] ** np.arange(t.size)[None, :]


def segment_times(n_nodes: int, ratio: int) -> np.ndarray:
    """The ``ratio`` normalised times of the last segment, ending at t = 1."""
    return (n_nodes - 2) / (n_nodes - 1) + np.arange(1, ratio + 1) / ((n_nodes - 1) * ratio)


def interpolation_matrix(n_nodes: int = 4, ratio: int = 80) -> np.ndarray:
    """(ratio × n_nodes) matrix mapping node values (oldest first) to the fast samples."""
    if int(n_nodes) != n_nodes or not 2 <= n_nodes <= 12:
        raise ParameterError(f"n_nodes must be an integer in [2, 12]; got {n_nodes!r}")
    if int(ratio) != ratio or ratio < 1:
        raise ParameterError(f"ratio must be an integer ≥ 1; got {ratio!r}")
    nodes = np.linspace(0.0, 1.0, int(n_nodes))
    matrix = vandermonde(nodes)
    condition = np.linalg.cond(matrix)
    if condition > MAX_CONDITION_NUMBER:
        raise ParameterError(
            f"Vandermonde matrix for n_nodes={n_nodes} has condition number {condition:.3g} "
            f"> {MAX_CONDITION_NUMBER:g}; use fewer nodes"
        )
    evaluation = segment_times(int(n_nodes), int(ratio))[:, None] ** np.arange(int(n_nodes))[None, :]
    # E A⁻¹ = (A⁻ᵀ Eᵀ)ᵀ, solved rather than inverted
    return np.linalg.solve(matrix.T, evaluation.T).T


def segment_end_derivatives(n_nodes: int = 4) -> np.ndarray:
    """(2, 4, n_nodes) matrix mapping node values (oldest first) to the interpolant's
    value and first three derivatives at the start (``[0]``) and the end (``[1]``) of the
    last segment, with respect to the segment's own normalised time s ∈ [0, 1]
    (t = (n−2)/(n−1) + s/(n−1), so d/ds = (1/(n−1))·d/dt)."""
    interpolation_matrix(n_nodes, 1)  # validates n_nodes and conditioning
    n = int(n_nodes)
    inverse = np.linalg.inv(vandermonde(np.linspace(0.0, 1.0, n)))  # coefficients x = A⁻¹ y
    powers = np.arange(n)
    rows = []
    for t in ((n - 2) / (n - 1), 1.0):
        derivatives = []
        for j in range(4):
            falling = np.array([np.prod(np.arange(p - j + 1, p + 1)) if p >= j else 0.0 for p in powers])
            derivatives.append(falling * np.where(powers >= j, t ** np.maximum(powers - j, 0), 0.0) / (n - 1) ** j)
        rows.append(np.stack(derivatives) @ inverse)
    return np.stack(rows)
