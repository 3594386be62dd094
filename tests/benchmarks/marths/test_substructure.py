"""The maRTHS NS step (modal Newmark) against the physical effective-stiffness Newmark
on the same 29 equations, with the loads and outputs built independently here."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np

from rths_ident.benchmarks.marths.ideal_partition import INTERFACE_NAMES, UPPER_NAMES
from rths_ident.benchmarks.marths.model import marths_model
from rths_ident.benchmarks.marths.substructure import ns_init, ns_matrices, ns_params, ns_step
from rths_ident.structures.linear_newmark import linear_newmark_init, linear_newmark_params, linear_newmark_step

DT = 1.0 / 1024.0


def test_ns_matrices_are_rayleigh_damped_with_a_definite_stiffness():
    """What makes the modal step exact: C_ns = a0 M_ns + a1 K_ns, K_ns positive definite."""
    model = marths_model()
    mass, damping, stiffness = ns_matrices(model)
    a0, a1 = model.rayleigh
    assert np.abs(damping - (a0 * mass + a1 * stiffness)).max() < 1e-12 * np.abs(damping).max()
    assert np.linalg.eigvalsh(stiffness)[0] > 0.0
    assert np.linalg.matrix_rank(mass) == 15  # 14 massless equations


def test_ns_step_gives_the_physical_newmark_outputs():
    model = marths_model()
    mass, damping, stiffness = ns_matrices(model)
    physical = linear_newmark_params(mass, damping, stiffness, DT)
    interface = np.array([model.equations[n] for n in INTERFACE_NAMES])
    interface_sign = np.array([model.sign(n) for n in INTERFACE_NAMES])
    upper = np.array([model.equations[n] for n in UPPER_NAMES])
    upper_sign = np.array([model.sign(n) for n in UPPER_NAMES])
    ground = jnp.asarray(model.ground_mass)
    params = ns_params(model, DT)
    rng = np.random.default_rng(5)
    feedback = jnp.asarray(rng.normal(size=(2000, 2)) * np.array([2e3, 5e2]))
    ag = jnp.asarray(rng.normal(size=2000) * 3.0)

    def body(carry, inputs):
        state, u = carry
        f, g = inputs
        state, target, log = ns_step(params, state, f, g)
        load = -ground * g
        load = load.at[interface].add(-interface_sign * f)
        u = linear_newmark_step(physical, u, load)
        expected = (interface_sign * u.displacement[interface], upper_sign * u.displacement[upper])
        return (state, u), ((target, log["psi_interface"], log["psi_upper"]), expected)

    start = (ns_init(params), linear_newmark_init(mass.shape[0]))
    _, ((target, psi_interface, psi_upper), (interface_ref, upper_ref)) = jax.lax.scan(body, start, (feedback, ag))
    np.testing.assert_array_equal(target, psi_interface)
    for got, expected in ((psi_interface, interface_ref), (psi_upper, upper_ref)):
        expected = np.asarray(expected)
        assert np.abs(np.asarray(got) - expected).max() < 1e-9 * np.abs(expected).max()
