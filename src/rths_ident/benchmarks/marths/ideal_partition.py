"""Ideal RTHS of the maRTHS partition: no actuators, no noise, the exact ES force (Eq. 7).

Seed 004 §3.2 (Fig. 5): the numerical substructure imposes its interface motion on the
experimental one, whose restoring force f_es = M_es ψ̈ + C_es ψ̇ + K_es ψ is fed back.
Both substructures are integrated with average-acceleration Newmark at Δt = 1/1024 s.
Two couplings (digest 004 §15 acceptance check 7):

* ``"coupled"`` — the ES force is solved in the same implicit step as the NS:
  (K̄_ns + K̄_es) u_{k+1} = p_{k+1} + h_ns + h_es (h: the Newmark history terms of each
  part). This must reproduce the reference to round-off: it checks the DOF map, the
  split of M, C, K and the ground term (full M ι, Eq. 6).
* ``"lagged"`` — the usual explicit staggering: NS step k+1 uses f_es from step k; the ES
  is a Newmark model of its own, its boundary displacement prescribed from the NS and its
  internal DOFs (the pinned-base rotations θ14, θ15) solved in its step. On this partition
  it DIVERGES: the interface rotations θ4, θ7 are massless, so nothing but the NS's own
  rotational stiffness carries the lagged ES moment, and at θ7 the ES's share (1.59e6
  N·m/rad) is comparable to it (a lagged stiffness larger than what it is added to makes
  the staggered recursion unstable).
* ``"lagged-stiffness"`` — the usual remedy (as α-OS does with its interface stiffness):
  the NS carries the ES's stiffness statically condensed onto the interface, K_c, and the
  lagged feedback is the remainder f_es − K_c u (inertia, damping and the internal-DOF
  correction). This is stable and shows what the one-step delay alone costs.

The interface is every ES equation the NS also has (x4 = x7, y4, y7, θ4, θ7).
"""

from __future__ import annotations

from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np

from rths_ident import metrics
from rths_ident.errors import ParameterError
from rths_ident.benchmarks.marths.model import MarthsModel
from rths_ident.structures.linear_newmark import (
    LinearNewmarkState,
    linear_newmark_params,
    linear_newmark_simulate,
    linear_newmark_step,
    newmark_constants,
)

__all__ = ["COUPLINGS", "IdealRun", "reference_response", "ideal_partition_response", "global_indices",
           "INTERFACE_NAMES", "UPPER_NAMES"]

COUPLINGS = ("coupled", "lagged", "lagged-stiffness")
#: the ψ components of J7/J9 (interface) and J8/J10 (upper storeys), digest 004 §6
INTERFACE_NAMES = ("x4", "theta4")
UPPER_NAMES = ("x2", "theta2", "x3", "theta3")


class IdealRun(NamedTuple):
    """Displacements (N, 29) [m, rad in SAP signs] of the NS and of the ES (its own
    equations; zero elsewhere), and the interface force on the NS (N, 29) [N, N·m]."""

    ns_displacement: np.ndarray
    es_displacement: np.ndarray
    interface_force: np.ndarray


def reference_response(model: MarthsModel, ground_accel, dt: float) -> np.ndarray:
    """The monolithic reference: u (N, 29) for ẍ_g[k] at t_{k+1} [m/s²]."""
    params = linear_newmark_params(model.mass, model.damping, model.stiffness, dt)
    loads = -np.outer(np.asarray(ground_accel, dtype=float), model.ground_mass)
    return np.asarray(linear_newmark_simulate(params, loads).displacement)


def _history(mass, damping, a, state: LinearNewmarkState):
    u, v, acc = state
    return mass @ (a[0] * u + a[2] * v + a[3] * acc) + damping @ (a[1] * u + a[4] * v + a[5] * acc)


def ideal_partition_response(model: MarthsModel, ground_accel, dt: float, coupling: str = "coupled") -> IdealRun:
    """Run the ideal partition (module doc) for ẍ_g[k] at t_{k+1} [m/s²]."""
    if coupling not in COUPLINGS:
        raise ParameterError(f"coupling must be one of {COUPLINGS}; got {coupling!r}")
    ag = jnp.asarray(np.asarray(ground_accel, dtype=float))
    a = jnp.asarray(newmark_constants(dt))
    n = model.mass.shape[0]
    m_es, c_es, k_es = (jnp.asarray(x) for x in (model.mass_es, model.damping_es, model.stiffness_es))
    ground = jnp.asarray(model.ground_mass)
    zero = LinearNewmarkState(jnp.zeros(n), jnp.zeros(n), jnp.zeros(n))
    if coupling == "coupled":
        m_ns, c_ns, k_ns = (jnp.asarray(x) for x in (model.mass_ns, model.damping_ns, model.stiffness_ns))
        inverse = jnp.linalg.inv((k_ns + a[0] * m_ns + a[1] * c_ns) + (k_es + a[0] * m_es + a[1] * c_es))

        def body(state, g):
            h_ns, h_es = _history(m_ns, c_ns, a, state), _history(m_es, c_es, a, state)
            u = inverse @ (-ground * g + h_ns + h_es)
            acc = a[0] * (u - state.displacement) - a[2] * state.velocity - a[3] * state.acceleration
            v = state.velocity + a[6] * state.acceleration + a[7] * acc
            new = LinearNewmarkState(u, v, acc)
            f_es = m_es @ acc + c_es @ v + k_es @ u
            return new, (u, u, f_es)

        _, (u_ns, u_es, force) = jax.lax.scan(body, zero, ag)
        return IdealRun(*(np.asarray(x) for x in (u_ns, u_es, force)))

    ns_eq = np.asarray(model.ns_equations)
    es_eq = np.asarray(model.es_equations)
    internal = np.setdiff1d(es_eq, ns_eq)
    boundary = np.intersect1d(es_eq, ns_eq)
    sub = np.ix_(ns_eq, ns_eq)
    es_local = np.ix_(es_eq, es_eq)
    m_e, c_e, k_e = (np.asarray(x)[es_local] for x in (model.mass_es, model.damping_es, model.stiffness_es))
    i_loc = np.searchsorted(es_eq, internal)
    b_loc = np.searchsorted(es_eq, boundary)
    b_in_ns = np.searchsorted(ns_eq, boundary)
    k_ns = np.array(model.stiffness_ns[sub])
    k_moved = np.zeros((boundary.size, boundary.size))
    if coupling == "lagged-stiffness":  # K_c = K_bb − K_bi K_ii⁻¹ K_ib, moved into the NS
        k_moved = (k_e[np.ix_(b_loc, b_loc)]
                   - k_e[np.ix_(b_loc, i_loc)] @ np.linalg.solve(k_e[np.ix_(i_loc, i_loc)], k_e[np.ix_(i_loc, b_loc)]))
        k_ns[np.ix_(b_in_ns, b_in_ns)] += k_moved
    ns = linear_newmark_params(model.mass_ns[sub], model.damping_ns[sub], k_ns, dt)
    k_moved = jnp.asarray(k_moved)
    k_bar = k_e + float(a[0]) * m_e + float(a[1]) * c_e
    k_ii_inv = jnp.asarray(np.linalg.inv(k_bar[np.ix_(i_loc, i_loc)]))
    k_ib = jnp.asarray(k_bar[np.ix_(i_loc, b_loc)])
    m_e, c_e, k_e = (jnp.asarray(x) for x in (m_e, c_e, k_e))
    ns_ground = ground[ns_eq]
    n_es = es_eq.size

    def body(carry, g):
        ns_state, es_state, f_b = carry
        load = -ns_ground * g - jnp.zeros(ns_eq.size).at[b_in_ns].set(f_b)
        ns_state = linear_newmark_step(ns, ns_state, load)
        u_b = ns_state.displacement[b_in_ns]
        h = _history(m_e, c_e, a, es_state)
        u_i = k_ii_inv @ (h[i_loc] - k_ib @ u_b)
        u = jnp.zeros(n_es).at[b_loc].set(u_b).at[i_loc].set(u_i)
        acc = a[0] * (u - es_state.displacement) - a[2] * es_state.velocity - a[3] * es_state.acceleration
        v = es_state.velocity + a[6] * es_state.acceleration + a[7] * acc
        es_state = LinearNewmarkState(u, v, acc)
        f_b = (m_e @ acc + c_e @ v + k_e @ u)[b_loc]
        # fed back at the NEXT step (minus the stiffness the NS already carries)
        return (ns_state, es_state, f_b - k_moved @ u_b), (ns_state.displacement, u, f_b)

    es_zero = LinearNewmarkState(jnp.zeros(n_es), jnp.zeros(n_es), jnp.zeros(n_es))
    ns_zero = LinearNewmarkState(jnp.zeros(ns_eq.size), jnp.zeros(ns_eq.size), jnp.zeros(ns_eq.size))
    _, (u_ns, u_es, f_b) = jax.lax.scan(body, (ns_zero, es_zero, jnp.zeros(boundary.size)), ag)
    steps = ag.shape[0]
    full_ns, full_es, force = np.zeros((steps, n)), np.zeros((steps, n)), np.zeros((steps, n))
    full_ns[:, ns_eq] = np.asarray(u_ns)
    full_es[:, es_eq] = np.asarray(u_es)
    force[:, boundary] = np.asarray(f_b)
    return IdealRun(full_ns, full_es, force)


def global_indices(model: MarthsModel, reference: np.ndarray, run: IdealRun, nrms: str = "rms") -> dict:
    """J7–J10 [%] (Eqs. 15–18) of an ideal run: the ES's interface motion (ψ̂_m) and the
    NS's upper storeys (ψ_ns) against the reference."""
    ref_i, ref_u = model.psi(reference, INTERFACE_NAMES), model.psi(reference, UPPER_NAMES)
    es_i, ns_u = model.psi(run.es_displacement, INTERFACE_NAMES), model.psi(run.ns_displacement, UPPER_NAMES)
    return {"J7": metrics.nrms_error_percent(ref_i, es_i, nrms), "J8": metrics.nrms_error_percent(ref_u, ns_u, nrms),
            "J9": metrics.peak_error_percent(ref_i, es_i), "J10": metrics.peak_error_percent(ref_u, ns_u)}
