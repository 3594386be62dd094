"""Seed 002's partitioned Newmark predictor–corrector and its monolithic Lagrange reference.

Seed 002 (Martínez Brugarolas 2020, §2.4.2–2.4.3; digest 002 §1.3–1.4, §6 A–B) couples a
linear numerical part (M, C, K) with a specimen at the interface DOF(s):

**Partitioned (hybrid) scheme**, :class:`PartitionedNewmark` (Eqs. 2-35 … 2-39), one step:

    predictors (2-37)   u̇ᴾ = u̇_n + (1−γ)Δt ü_n,   uᴾ = u_n + Δt u̇_n + (½−β)Δt² ü_n
    impose uᴾ at the interface, measure the specimen's restoring force r(uᴾ)
    (2-38), corrected  ü_{n+1} = M̂⁻¹ (f_{n+1} − L r − C u̇ᴾ − K uᴾ),  M̂ = M + γΔt C + βΔt² K
    correctors (2-39)  u̇_{n+1} = u̇ᴾ + γΔt ü_{n+1},   u_{n+1} = uᴾ + βΔt² ü_{n+1}

The thesis prints (2-38) as ``+λᴾ`` with no external load; taken literally the specimen
acts as a negative stiffness and the response diverges (digest 002 §1.4 ⚠, checked in
the original §2.4.3). We follow the digest's corrected form above: the restoring force is
subtracted like an internal force (the site protocol's sign convention) and f_{n+1} is
included. The initial acceleration (2-35) includes the force r_0 measured at u_0.

The scheme is an implicit–explicit split: the numerical part is trapezoidal, the
specimen stiffness explicit. For an undamped SDOF whose only explicit term is K_e it is
stable for Ω_e = Δt·√(K_e/m) ≤ 2 (:func:`check_partitioned_time_step`), with no numerical
damping; :func:`spectral_radius` gives ρ of the amplification matrix for any linear
numerical part and interface stiffness.

**Monolithic reference**, :func:`monolithic_newmark` (Eqs. 2-19 … 2-32): numerical part and
specimen model in one system with a rigid-link Lagrange multiplier,

    M ü + C u̇ + K u + B λ = f,   Bᵀ u = 0,

solved with the same Newmark(β, γ); λ is the specimen's total resisting force
(λ = M_e ü + C_e u̇ + K_e u with B = [… +1 at the interface, −1 at the specimen DOF]).

Units SI (m, N, s, kg). Plain NumPy: these schemes run once per slow step from the
step-wise engine, against a rig.
"""

from __future__ import annotations

import math
from typing import Callable

import numpy as np

from rths_ident.errors import ParameterError
from rths_ident.structures.stability import TimeStepError

__all__ = [
    "PartitionedNewmark",
    "monolithic_newmark",
    "coupled_with_specimen",
    "amplification_matrix",
    "spectral_radius",
    "partitioned_omega_dt",
    "check_partitioned_time_step",
    "PARTITIONED_OMEGA_LIMIT",
]

#: Ω_e = Δt·√(K_e/m) limit of the split scheme (undamped SDOF, explicit K_e; digest 002 §1.4)
PARTITIONED_OMEGA_LIMIT = 2.0


def _square(name: str, value, n: int | None = None) -> np.ndarray:
    a = np.atleast_2d(np.asarray(value, dtype=float))
    if a.ndim != 2 or a.shape[0] != a.shape[1] or (n is not None and a.shape[0] != n):
        expected = "square" if n is None else f"({n}, {n})"
        raise ParameterError(f"{name} must be a {expected} matrix; got shape {np.shape(value)}")
    if not np.all(np.isfinite(a)):
        raise ParameterError(f"{name} must be finite")
    return a


def _newmark_constants(dt: float, beta: float, gamma: float) -> None:
    if not (np.isfinite(dt) and dt > 0):
        raise ParameterError(f"dt must be a positive time step [s]; got {dt!r}")
    if not (0.0 <= beta <= 0.5):
        raise ParameterError(f"beta must be in [0, 0.5]; got {beta!r}")
    if not (0.5 <= gamma <= 1.0):
        raise ParameterError(f"gamma must be in [0.5, 1]; got {gamma!r}")


def _locator(n_dof: int, interface_dofs) -> np.ndarray:
    dofs = [int(i) for i in np.atleast_1d(interface_dofs)]
    if not dofs or any(not 0 <= i < n_dof for i in dofs) or len(set(dofs)) != len(dofs):
        raise ParameterError(f"interface_dofs must be distinct DOF indices in [0, {n_dof}); got {dofs}")
    locator = np.zeros((n_dof, len(dofs)))
    locator[dofs, range(len(dofs))] = 1.0
    return locator


def partitioned_omega_dt(dt: float, specimen_stiffness: float, interface_mass: float) -> float:
    """Ω_e = Δt·√(K_e/m) [-]: m is the numerical mass at the interface DOF [kg]."""
    if not (interface_mass > 0 and specimen_stiffness >= 0):
        raise ParameterError(f"interface_mass must be > 0 and specimen_stiffness ≥ 0; got "
                             f"{interface_mass!r}, {specimen_stiffness!r}")
    return dt * math.sqrt(specimen_stiffness / interface_mass)


def check_partitioned_time_step(dt: float, specimen_stiffness: float, interface_mass: float) -> float:
    """Ω_e (:func:`partitioned_omega_dt`); raises :class:`TimeStepError` when Ω_e > 2."""
    omega = partitioned_omega_dt(dt, specimen_stiffness, interface_mass)
    if omega > PARTITIONED_OMEGA_LIMIT:
        dt_max = PARTITIONED_OMEGA_LIMIT * math.sqrt(interface_mass / specimen_stiffness)
        raise TimeStepError(
            f"partitioned Newmark: Ω_e = Δt·√(K_e/m) = {omega:.3g} > 2 (Δt = {dt:g} s, K_e = {specimen_stiffness:g} N/m, "
            f"interface mass m = {interface_mass:g} kg): the explicit specimen stiffness makes the scheme unstable; "
            f"use Δt ≤ {dt_max:.4g} s"
        )
    return omega


def amplification_matrix(mass, damping, stiffness, interface_dofs, specimen_stiffness, dt: float,
                         beta: float = 0.25, gamma: float = 0.5, *, specimen_mass: float = 0.0,
                         specimen_damping: float = 0.0) -> np.ndarray:
    """The matrix A with x_{n+1} = A x_n of the partitioned scheme (no external load).

    With only ``specimen_stiffness`` (a scalar or (n_i, n_i) [N/m]) the specimen is the
    explicit stiffness r = K_e Lᵀ uᴾ and x = [u; u̇; ü] (3n). With ``specimen_mass`` M_e
    [kg] or ``specimen_damping`` C_e [N·s/m] the specimen force is the one of
    :class:`rths_ident.rigs.emulator.VirtualSpecimen` — M_e and C_e on backward differences
    of the imposed predictors, r = K_e uᴾ_n + C_e (3uᴾ_n − 4uᴾ_{n−1} + uᴾ_{n−2})/(2Δt) +
    M_e (uᴾ_n − 2uᴾ_{n−1} + uᴾ_{n−2})/Δt² — and x = [u; u̇; ü; uᴾ_{n−1}; uᴾ_{n−2}] at the
    interface (3n + 2 n_i): a measured inertia force is an explicit, lagged mass.
    """
    m = _square("mass", mass)
    n = m.shape[0]
    c = _square("damping", damping, n)
    k = _square("stiffness", stiffness, n)
    _newmark_constants(dt, beta, gamma)
    locator = _locator(n, interface_dofs)
    n_i = locator.shape[1]
    k_e = np.atleast_2d(np.asarray(specimen_stiffness, dtype=float)) * np.eye(n_i)
    rates = specimen_mass != 0.0 or specimen_damping != 0.0
    m_hat = m + gamma * dt * c + beta * dt**2 * k
    size = 3 * n + (2 * n_i if rates else 0)
    columns = []
    for j in range(size):
        x = np.zeros(size)
        x[j] = 1.0
        u, v, a = x[:n], x[n:2 * n], x[2 * n:3 * n]
        u_p = u + dt * v + (0.5 - beta) * dt**2 * a
        v_p = v + (1.0 - gamma) * dt * a
        imposed = locator.T @ u_p
        r = k_e @ imposed
        if rates:
            p1, p2 = x[3 * n:3 * n + n_i], x[3 * n + n_i:]
            r = r + specimen_damping * (3.0 * imposed - 4.0 * p1 + p2) / (2.0 * dt) \
                + specimen_mass * (imposed - 2.0 * p1 + p2) / dt**2
        a_new = np.linalg.solve(m_hat, -locator @ r - c @ v_p - k @ u_p)
        column = [u_p + beta * dt**2 * a_new, v_p + gamma * dt * a_new, a_new]
        if rates:
            column += [imposed, x[3 * n:3 * n + n_i]]
        columns.append(np.concatenate(column))
    return np.column_stack(columns)


def spectral_radius(mass, damping, stiffness, interface_dofs, specimen_stiffness, dt: float,
                    beta: float = 0.25, gamma: float = 0.5, *, specimen_mass: float = 0.0,
                    specimen_damping: float = 0.0) -> float:
    """ρ = max |eig A| of :func:`amplification_matrix` (ρ ≤ 1: stable)."""
    a = amplification_matrix(mass, damping, stiffness, interface_dofs, specimen_stiffness, dt, beta, gamma,
                             specimen_mass=specimen_mass, specimen_damping=specimen_damping)
    return float(np.max(np.abs(np.linalg.eigvals(a))))


class PartitionedNewmark:
    """Seed 002's hybrid predictor–corrector as a numerical substructure (step-wise engine).

    mass, damping, stiffness : (n, n) numerical part [kg, N·s/m, N/m].
    interface_dofs : DOF indices where the specimen acts (the locator L).
    dt : Δt [s]; beta, gamma : Newmark constants (default average acceleration).
    displacement0, velocity0 : initial u_0 [m], u̇_0 [m/s] (n,), default zero.
    external_force : ``p(t) -> (n,)`` [N], load on the numerical DOFs (default none).
    ground_influence : (n,) [kg], f = p(t) + ground_influence · ẍ_g (e.g. −(M + L M_e) 1 for
        base excitation in relative coordinates; default zero).
    specimen_stiffness, interface_mass : when given, Ω_e is checked against 2 at
        construction (:func:`check_partitioned_time_step`) and ρ reported in
        :attr:`spectral_radius`.

    Protocol (:class:`~rths_ident.structures.numerical_substructure.NumericalSubstructure`):
    ``initial_target()`` is u_0 at the interface; the first ``step(r_0, ẍ_g(t_0))`` takes
    the force measured at u_0 and forms ü_0 (2-35); every later call ``step(r_{k}, ẍ_g(t_k))``
    corrects step k with the force measured at the predictor it returned before. Each
    call returns the next predictor uᴾ_{k+1} at the interface and the state at t_k, so a
    record of N steps needs N + 1 calls (ground accelerations at t_0 … t_N).
    """

    def __init__(self, mass, damping, stiffness, interface_dofs, dt: float, *, beta: float = 0.25,
                 gamma: float = 0.5, displacement0=None, velocity0=None,
                 external_force: Callable[[float], np.ndarray] | None = None, ground_influence=None,
                 specimen_stiffness: float | None = None, interface_mass: float | None = None):
        self.mass = _square("mass", mass)
        n = self.mass.shape[0]
        self.damping = _square("damping", damping, n)
        self.stiffness = _square("stiffness", stiffness, n)
        _newmark_constants(dt, beta, gamma)
        self.dt, self.beta, self.gamma = float(dt), float(beta), float(gamma)
        self.locator = _locator(n, interface_dofs)
        self.interface_dofs = tuple(int(i) for i in np.atleast_1d(interface_dofs))
        self.n_interface = len(self.interface_dofs)
        self.u = self._vector("displacement0", displacement0, n)
        self.v = self._vector("velocity0", velocity0, n)
        self.a = np.zeros(n)
        self.ground_influence = self._vector("ground_influence", ground_influence, n)
        self.external_force = external_force
        self.m_hat = self.mass + self.gamma * self.dt * self.damping + self.beta * self.dt**2 * self.stiffness
        self.omega_e = None
        self.spectral_radius = None
        if specimen_stiffness is not None:
            m_int = interface_mass if interface_mass is not None else float(self.mass[self.interface_dofs[0],
                                                                                      self.interface_dofs[0]])
            self.omega_e = check_partitioned_time_step(self.dt, specimen_stiffness, m_int)
            self.spectral_radius = spectral_radius(self.mass, self.damping, self.stiffness, self.interface_dofs,
                                                   specimen_stiffness, self.dt, self.beta, self.gamma)
        self.step_index = -1  # -1: waiting for r_0
        self.u_p, self.v_p = self.u.copy(), self.v.copy()

    @staticmethod
    def _vector(name, value, n):
        if value is None:
            return np.zeros(n)
        x = np.asarray(value, dtype=float).reshape(-1)
        if x.shape != (n,) or not np.all(np.isfinite(x)):
            raise ParameterError(f"{name} must be {n} finite values; got {np.shape(value)}")
        return x.copy()

    def _load(self, t: float, ground_accel: float) -> np.ndarray:
        f = self.ground_influence * float(ground_accel)
        if self.external_force is not None:
            f = f + np.asarray(self.external_force(t), dtype=float).reshape(-1)
        return f

    def initial_target(self) -> np.ndarray:
        return self.u[list(self.interface_dofs)].copy()

    def step(self, feedback, ground_accel):
        r = np.asarray(feedback, dtype=float).reshape(-1)
        if r.shape != (self.n_interface,) or not np.all(np.isfinite(r)):
            raise ParameterError(f"feedback must be {self.n_interface} finite forces [N]; got {feedback!r}")
        self.step_index += 1
        t = self.step_index * self.dt
        f = self._load(t, ground_accel)
        imposed = self.u_p[list(self.interface_dofs)].copy()
        if self.step_index == 0:  # (2-35) with the measured r_0
            self.a = np.linalg.solve(self.mass, f - self.locator @ r - self.damping @ self.v - self.stiffness @ self.u)
        else:  # (2-38) corrected sign, then (2-39)
            self.a = np.linalg.solve(self.m_hat, f - self.locator @ r - self.damping @ self.v_p
                                     - self.stiffness @ self.u_p)
            self.u = self.u_p + self.beta * self.dt**2 * self.a
            self.v = self.v_p + self.gamma * self.dt * self.a
        log = {"time": np.float64(t), "displacement": self.u.copy(), "velocity": self.v.copy(),
               "acceleration": self.a.copy(), "interface_force": r.copy(), "imposed": imposed}
        # (2-37): predictors of the next step
        self.v_p = self.v + (1.0 - self.gamma) * self.dt * self.a
        self.u_p = self.u + self.dt * self.v + (0.5 - self.beta) * self.dt**2 * self.a
        return self.u_p[list(self.interface_dofs)].copy(), log

    def apply_parameters(self, estimate) -> None:
        raise TypeError("PartitionedNewmark has no identified elements to update (seed 002 identifies between tests)")

    def close(self) -> None:
        pass


def coupled_with_specimen(mass, damping, stiffness, interface_dofs, specimen_mass, specimen_damping,
                          specimen_stiffness):
    """(M, C, K, B) of the numerical part plus one SDOF specimen (M_e, C_e, K_e) per
    interface DOF, rigidly linked (eq. 2-20): specimen DOFs appended after the numerical
    ones, B with +1 at the interface DOF and −1 at its specimen DOF."""
    m = _square("mass", mass)
    n = m.shape[0]
    c = _square("damping", damping, n)
    k = _square("stiffness", stiffness, n)
    locator = _locator(n, interface_dofs)
    n_i = locator.shape[1]

    def diag(name, value):
        x = np.broadcast_to(np.asarray(value, dtype=float), (n_i,))
        if not np.all(np.isfinite(x)) or np.any(x < 0):
            raise ParameterError(f"{name} must be finite and ≥ 0; got {value!r}")
        return np.diag(x)

    def block(a, b):
        out = np.zeros((n + n_i, n + n_i))
        out[:n, :n], out[n:, n:] = a, b
        return out

    b = np.vstack([locator, -np.eye(n_i)])
    return (block(m, diag("specimen_mass", specimen_mass)), block(c, diag("specimen_damping", specimen_damping)),
            block(k, diag("specimen_stiffness", specimen_stiffness)), b)


def monolithic_newmark(mass, damping, stiffness, constraint, loads, dt: float, *, displacement0=None,
                       velocity0=None, beta: float = 0.25, gamma: float = 0.5) -> dict:
    """Seed 002's monolithic Lagrange-multiplier Newmark (Eqs. 2-19 … 2-32; digest §6 A).

    mass, damping, stiffness : (N, N) of the coupled system (:func:`coupled_with_specimen`).
    constraint : B, (N, n_c), with Bᵀ u = 0.
    loads : (steps + 1, N) external forces at t_0 … t_steps [N].
    Returns ``time`` (steps+1,), ``displacement``, ``velocity``, ``acceleration`` (steps+1, N)
    and ``multiplier`` λ (steps+1, n_c) [N]. Consistent initial conditions: the saddle
    system with the mass matrix gives ü_0 and λ_0.
    """
    m = _square("mass", mass)
    n = m.shape[0]
    c = _square("damping", damping, n)
    k = _square("stiffness", stiffness, n)
    b = np.asarray(constraint, dtype=float).reshape(n, -1)
    f = np.asarray(loads, dtype=float)
    if f.ndim != 2 or f.shape[1] != n or f.shape[0] < 1:
        raise ParameterError(f"loads must be (steps + 1, {n}); got {f.shape}")
    _newmark_constants(dt, beta, gamma)
    if beta == 0:
        raise ParameterError("the monolithic reference is implicit: beta must be > 0")
    u0 = PartitionedNewmark._vector("displacement0", displacement0, n)
    v0 = PartitionedNewmark._vector("velocity0", velocity0, n)
    if np.max(np.abs(b.T @ u0), initial=0.0) > 1e-12 or np.max(np.abs(b.T @ v0), initial=0.0) > 1e-12:
        raise ParameterError("displacement0 and velocity0 must satisfy the rigid link Bᵀu = 0")
    n_c = b.shape[1]
    steps = f.shape[0] - 1
    u = np.zeros((steps + 1, n))
    v = np.zeros((steps + 1, n))
    a = np.zeros((steps + 1, n))
    lam = np.zeros((steps + 1, n_c))
    zero = np.zeros((n_c, n_c))
    saddle0 = np.block([[m, b], [b.T, zero]])
    sol = np.linalg.solve(saddle0, np.concatenate([f[0] - c @ v0 - k @ u0, np.zeros(n_c)]))
    u[0], v[0], a[0], lam[0] = u0, v0, sol[:n], sol[n:]
    inertia = m / (beta * dt**2) + gamma * c / (beta * dt)  # (2-23) without K
    k_d = inertia + k
    k_d_inv_b = np.linalg.solve(k_d, b)
    schur = b.T @ k_d_inv_b
    for i in range(steps):
        g = u[i] + dt * v[i] + (1.0 - 2.0 * beta) / 2.0 * dt**2 * a[i]  # (2-21)
        rhs = f[i + 1] + inertia @ g - c @ (v[i] + dt * (1.0 - gamma) * a[i])  # (2-24)
        k_d_inv_rhs = np.linalg.solve(k_d, rhs)
        lam[i + 1] = np.linalg.solve(schur, b.T @ k_d_inv_rhs)  # (2-29)
        u[i + 1] = k_d_inv_rhs - k_d_inv_b @ lam[i + 1]  # (2-27)/(2-30)
        a[i + 1] = (u[i + 1] - g) / (beta * dt**2)  # (2-31)
        v[i + 1] = v[i] + dt * ((1.0 - gamma) * a[i] + gamma * a[i + 1])  # (2-32)
    return {"time": dt * np.arange(steps + 1), "displacement": u, "velocity": v, "acceleration": a,
            "multiplier": lam}
