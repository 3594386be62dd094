"""Newmark integration of a LINEAR, CLASSICALLY DAMPED structure in modal coordinates.

For M ü + C u̇ + K u = p(t) with K symmetric positive definite, M symmetric positive
SEMI-definite (massless DOFs allowed) and C diagonalised by the same modes (classical
damping, e.g. Rayleigh C = a0 M + a1 K), the congruence Φ of the generalised eigenproblem
M φ = μ K φ, scaled so that Φᵀ K Φ = I, gives Φᵀ M Φ = diag(m_i) (m_i = μ_i ≥ 0) and
Φᵀ C Φ = diag(c_i) (Rayleigh: c_i = a0 μ_i + a1). With u = Φ q the structure is n
uncoupled scalar equations

    m_i q̈_i + c_i q̇_i + k_i q_i = f_i,    f = Φᵀ p,    k_i = 1 (Φᵀ K Φ = I),

one-DOF oscillators for m_i > 0 and first-order equations for m_i = 0 (the massless DOFs).
q has units √J: qᵀq = uᵀ K u is twice the strain energy.

**Exactness.** The Newmark(β, γ) step of :mod:`rths_ident.structures.linear_newmark`
(constants a0 … a7 there) is linear in (u_n, u̇_n, ü_n, p_{n+1}) and uses M, C, K only
through products. Writing u = Φ q (and likewise u̇, ü) and multiplying its effective
equation K̄ u_{n+1} = R̄ by Φᵀ gives (Φᵀ K̄ Φ) q_{n+1} = Φᵀ R̄ with
Φᵀ K̄ Φ = diag(k_i + a0 m_i + a1 c_i) and Φᵀ R̄ = f_{n+1} + diag(m_i)(a0 q_n + a2 q̇_n + a3 q̈_n)
+ diag(c_i)(a1 q_n + a4 q̇_n + a5 q̈_n); the updates of ü and u̇ are the same linear
combinations applied to Φ q. So the modal step reproduces the physical one exactly
(up to rounding) — it is the same integrator, not an approximation of it — and costs
O(n) per step for the coordinates, plus the projections of the load (Φᵀ L, n × k) and of
the outputs (S Φ, r × n) that a caller asks for:

    q_{n+1} = (f_{n+1} + m_i (a0 q + a2 q̇ + a3 q̈) + c_i (a1 q + a4 q̇ + a5 q̈)) / K̄_i,
    K̄_i = k_i + a0 m_i + a1 c_i,
    q̈_{n+1} = a0 (q_{n+1} − q_n) − a2 q̇_n − a3 q̈_n,   q̇_{n+1} = q̇_n + a6 q̈_n + a7 q̈_{n+1}.

Loads enter through a load distribution L (n, k): p = L w for a small input w (k,)
(default L = I: w is the physical load). Outputs are y = S u = (S Φ) q for an output
matrix S (r, n) (default I: all DOFs). Set-up in NumPy/SciPy (concrete arrays); the step
is pure JAX with elementwise operations and :func:`rths_ident.small_linalg.matvec` for
the two projections (no ``dot``, no LAPACK, no scatter: a loop around it stays one XLA
kernel, :mod:`rths_ident.small_loop_kernels`), ``vmap``-able. SI units.
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import scipy.linalg

from rths_ident import small_linalg as sl
from rths_ident.errors import ParameterError
from rths_ident.structures.linear_newmark import newmark_constants

__all__ = ["ModalNewmarkParams", "ModalNewmarkState", "modal_newmark_params", "modal_newmark_init",
           "modal_newmark_step", "modal_newmark_output", "DAMPING_COUPLING_TOLERANCE",
           "SYMMETRY_TOLERANCE"]

#: largest accepted coupling of two modes by the damping, max_{i≠j} a1 |(Φᵀ C Φ)_ij| /
#: √(K̄_i K̄_j): the size, relative to the effective stiffness the step divides by, of
#: the terms the modal step leaves out. Rounding gives ~1e-16 (the maRTHS NS: 2.9e-16); one
#: dashpot added to a Rayleigh-damped structure gives ~1e-3 (tests/structures).
DAMPING_COUPLING_TOLERANCE = 1e-10
#: largest accepted |A − Aᵀ| / max|A| of M, C, K (eigh reads one triangle only)
SYMMETRY_TOLERANCE = 1e-12


class ModalNewmarkParams(NamedTuple):
    """Per mode (n,): ``modal_mass`` m_i = (Φᵀ M Φ)_ii, ``modal_damping`` c_i = (Φᵀ C Φ)_ii,
    ``modal_stiffness`` k_i = (Φᵀ K Φ)_ii (= 1), ``effective_inverse`` 1/K̄_i;
    ``load_projection`` Φᵀ L (n, k); ``output_shapes`` S Φ (r, n); ``constants`` a0 … a7 (8,)
    (module doc)."""

    modal_mass: jax.Array
    modal_damping: jax.Array
    modal_stiffness: jax.Array
    effective_inverse: jax.Array
    load_projection: jax.Array
    output_shapes: jax.Array
    constants: jax.Array


class ModalNewmarkState(NamedTuple):
    """q, q̇, q̈ at t_n (n,) [√J, √J/s, √J/s²]: the modal coordinates (u = Φ q)."""

    coordinate: jax.Array
    velocity: jax.Array
    acceleration: jax.Array


def _square(name: str, a: np.ndarray, shape) -> None:
    if a.ndim != 2 or a.shape[0] != a.shape[1] or (shape is not None and a.shape != shape):
        expected = f"like mass {shape}" if shape is not None else "(n, n)"
        raise ParameterError(f"{name} must be a square (n, n) matrix {expected}; got shape {a.shape}")
    if not np.all(np.isfinite(a)):
        raise ParameterError(f"{name} must be finite")
    scale = np.max(np.abs(a))
    asymmetry = np.max(np.abs(a - a.T)) / scale if scale > 0 else 0.0
    if asymmetry > SYMMETRY_TOLERANCE:
        raise ParameterError(f"{name} must be symmetric: max|A − Aᵀ|/max|A| = {asymmetry:.3g} "
                             f"> {SYMMETRY_TOLERANCE:g}")


def modal_newmark_params(mass, damping, stiffness, dt: float, beta: float = 0.25, gamma: float = 0.5,
                         load_distribution=None, outputs=None) -> ModalNewmarkParams:
    """The modes and per-mode constants of the module doc (set-up code, concrete arrays).

    mass M [kg], damping C [N·s/m], stiffness K [N/m] (n, n), symmetric; K positive
    definite, M positive semi-definite, C diagonalised by the modes of (M, K). ``dt`` [s],
    ``beta``, ``gamma``: Newmark's (average acceleration by default).
    ``load_distribution`` L (n, k): the physical load is p = L w for the step's input w
    (default I, w = p). ``outputs`` S (r, n): :func:`modal_newmark_output` gives S u
    (default I, all n DOFs).
    """
    m, c, k = (np.asarray(x, dtype=float) for x in (mass, damping, stiffness))
    _square("mass", m, None)
    _square("damping", c, m.shape)
    _square("stiffness", k, m.shape)
    n = m.shape[0]
    a = newmark_constants(dt, beta, gamma)
    load = np.eye(n) if load_distribution is None else np.asarray(load_distribution, dtype=float)
    if load.ndim != 2 or load.shape[0] != n or not np.all(np.isfinite(load)):
        raise ParameterError(f"load_distribution must be a finite ({n}, k) matrix; got shape {load.shape}")
    out = np.eye(n) if outputs is None else np.asarray(outputs, dtype=float)
    if out.ndim != 2 or out.shape[1] != n or not np.all(np.isfinite(out)):
        raise ParameterError(f"outputs must be a finite (r, {n}) matrix; got shape {out.shape}")
    try:
        np.linalg.cholesky(k)
    except np.linalg.LinAlgError:
        smallest = np.linalg.eigvalsh(k)[0]
        raise ParameterError(f"stiffness must be positive definite (no mechanism, no negative stiffness); its "
                             f"smallest eigenvalue is {smallest:.6g} N/m") from None
    mu, phi = scipy.linalg.eigh(m, k)  # Φᵀ K Φ = I, Φᵀ M Φ = diag(μ)
    if mu[0] < -1e-10 * np.max(np.abs(mu)):  # rounding leaves massless modes at ±1e-16 of the largest μ
        raise ParameterError(f"mass must be positive semi-definite; the generalised eigenvalues μ of "
                             f"M φ = μ K φ span [{mu[0]:.6g}, {mu[-1]:.6g}] s²")
    modal_m, modal_c, modal_k = (phi.T @ x @ phi for x in (m, c, k))
    diag_m, diag_c, diag_k = (np.diag(x).copy() for x in (modal_m, modal_c, modal_k))
    effective = diag_k + a[0] * diag_m + a[1] * diag_c
    coupling = a[1] * np.abs(modal_c - np.diag(diag_c)) / np.sqrt(np.outer(effective, effective))
    worst = float(np.max(coupling)) if n > 1 else 0.0
    if not worst <= DAMPING_COUPLING_TOLERANCE:
        i, j = np.unravel_index(np.argmax(coupling), coupling.shape)
        raise ParameterError(f"damping is not diagonalised by the modes of (mass, stiffness) (non-classical "
                             f"damping): a1·|(ΦᵀCΦ)_ij|/√(K̄_i K̄_j) = {worst:.3g} for modes {i}, {j}, above "
                             f"the tolerance {DAMPING_COUPLING_TOLERANCE:g}; use linear_newmark instead")
    return ModalNewmarkParams(*(jnp.asarray(x) for x in (diag_m, diag_c, diag_k, 1.0 / effective, phi.T @ load,
                                                          out @ phi, a)))


def modal_newmark_init(params: ModalNewmarkParams) -> ModalNewmarkState:
    """At rest: q = q̇ = q̈ = 0."""
    zero = jnp.zeros(params.modal_mass.shape[-1])
    return ModalNewmarkState(zero, zero, zero)


def modal_newmark_step(params: ModalNewmarkParams, state: ModalNewmarkState, load_input) -> ModalNewmarkState:
    """One step with the load input w_{n+1} (k,) at the END of the step (p = L w [N])."""
    a = params.constants
    q0, v0, acc0 = state
    force = sl.matvec(params.load_projection, load_input)  # f = Φᵀ L w, multiply-sum (no dot)
    rhs = (force + params.modal_mass * (a[0] * q0 + a[2] * v0 + a[3] * acc0)
           + params.modal_damping * (a[1] * q0 + a[4] * v0 + a[5] * acc0))
    q1 = params.effective_inverse * rhs
    acc1 = a[0] * (q1 - q0) - a[2] * v0 - a[3] * acc0
    v1 = v0 + a[6] * acc0 + a[7] * acc1
    return ModalNewmarkState(q1, v1, acc1)


def modal_newmark_output(params: ModalNewmarkParams, coordinates):
    """S u = (S Φ) q (r,) for modal coordinates q (n,): the physical displacement
    [m or rad] of the outputs chosen at set-up (the velocity or acceleration for q̇, q̈)."""
    return sl.matvec(params.output_shapes, coordinates)
