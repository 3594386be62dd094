"""Modal Newmark against the physical effective-stiffness Newmark (linear_newmark, a
second implementation of the same scheme): the maRTHS NS and a small random
Rayleigh-damped structure with massless DOFs; its input checks; a vmap-ed batch."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from rths_ident.errors import ParameterError
from rths_ident.structures.linear_newmark import linear_newmark_init, linear_newmark_params, linear_newmark_step
from rths_ident.structures.modal_newmark import (
    modal_newmark_init,
    modal_newmark_output,
    modal_newmark_params,
    modal_newmark_step,
)

DT = 1.0 / 1024.0


def _both(mass, damping, stiffness, inputs, load_distribution, outputs):
    """Outputs S u over the steps from the modal and the physical step (one scan)."""
    modal = modal_newmark_params(mass, damping, stiffness, DT, load_distribution=load_distribution, outputs=outputs)
    physical = linear_newmark_params(mass, damping, stiffness, DT)
    dist, out = jnp.asarray(load_distribution), jnp.asarray(outputs)

    def body(carry, w):
        q, u = carry
        q = modal_newmark_step(modal, q, w)
        u = linear_newmark_step(physical, u, dist @ w)
        return (q, u), (modal_newmark_output(modal, q.coordinate), out @ u.displacement)

    start = (modal_newmark_init(modal), linear_newmark_init(mass.shape[0]))
    _, (got, expected) = jax.lax.scan(body, start, jnp.asarray(inputs))
    return np.asarray(got), np.asarray(expected)


def _random_rayleigh(n=7, massless=3, seed=3):
    rng = np.random.default_rng(seed)
    a = rng.normal(size=(n, n))
    stiffness = 1e6 * (a @ a.T + n * np.eye(n))
    mass = np.diag(np.r_[rng.uniform(10.0, 200.0, n - massless), np.zeros(massless)])
    return mass, 0.8 * mass + 3e-4 * stiffness, stiffness


def test_marths_ns_matches_the_physical_step():
    """The 29-equation NS (14 massless), loaded at the ground and the 2 interface DOFs
    by a random input for 2000 steps; outputs: the 6 DOFs the benchmark reads."""
    from rths_ident.benchmarks.marths.ideal_partition import INTERFACE_NAMES, UPPER_NAMES
    from rths_ident.benchmarks.marths.model import marths_model
    from rths_ident.benchmarks.marths.substructure import ns_matrices

    model = marths_model()
    mass, damping, stiffness = ns_matrices(model)
    assert np.linalg.matrix_rank(mass) == 15
    n = mass.shape[0]
    interface = [model.equations[name] for name in INTERFACE_NAMES]
    dist = np.zeros((n, 3))
    dist[:, 0] = -model.ground_mass
    dist[interface, [1, 2]] = -1.0
    outputs = np.eye(n)[[model.equations[name] for name in INTERFACE_NAMES + UPPER_NAMES]]
    rng = np.random.default_rng(7)
    inputs = rng.normal(size=(2000, 3)) * np.array([3.0, 2e3, 5e2])
    got, expected = _both(mass, damping, stiffness, inputs, dist, outputs)
    assert np.abs(got - expected).max() < 1e-9 * np.abs(expected).max()


def test_random_rayleigh_structure_with_massless_dofs_matches_the_physical_step():
    mass, damping, stiffness = _random_rayleigh()
    rng = np.random.default_rng(11)
    inputs = rng.normal(size=(2000, 7)) * 1e3
    got, expected = _both(mass, damping, stiffness, inputs, np.eye(7), np.eye(7))
    assert np.abs(expected).max() > 0
    assert np.abs(got - expected).max() < 1e-9 * np.abs(expected).max()


def test_a_structure_without_mass_matches_the_physical_step():
    """M = 0: every modal equation is first-order (c_i q̇ + q = f)."""
    _, _, stiffness = _random_rayleigh(n=4, massless=0, seed=8)
    inputs = np.random.default_rng(9).normal(size=(500, 4)) * 1e3
    got, expected = _both(np.zeros((4, 4)), 2e-3 * stiffness, stiffness, inputs, np.eye(4), np.eye(4))
    assert np.abs(got - expected).max() < 1e-9 * np.abs(expected).max()


def test_velocity_and_acceleration_map_back_too():
    """Φ q̇ and Φ q̈ are the physical u̇, ü (same outputs function)."""
    mass, damping, stiffness = _random_rayleigh(n=5, massless=1, seed=5)
    modal = modal_newmark_params(mass, damping, stiffness, DT)
    physical = linear_newmark_params(mass, damping, stiffness, DT)
    q, u = modal_newmark_init(modal), linear_newmark_init(5)
    for w in np.random.default_rng(2).normal(size=(200, 5)) * 1e3:
        q, u = modal_newmark_step(modal, q, w), linear_newmark_step(physical, u, w)
    for modal_value, physical_value in ((q.velocity, u.velocity), (q.acceleration, u.acceleration)):
        expected = np.asarray(physical_value)
        assert np.abs(np.asarray(modal_newmark_output(modal, modal_value)) - expected).max() < 1e-9 * np.abs(
            expected).max()


def test_a_vmap_ed_batch_is_the_runs_one_by_one():
    mass, damping, stiffness = _random_rayleigh()
    modal = modal_newmark_params(mass, damping, stiffness, DT, outputs=np.eye(7)[:2])
    loads = np.random.default_rng(1).normal(size=(4, 300, 7)) * 1e3

    def run(load_history):
        def body(state, w):
            state = modal_newmark_step(modal, state, w)
            return state, modal_newmark_output(modal, state.coordinate)
        return jax.lax.scan(body, modal_newmark_init(modal), load_history)[1]

    batch = np.asarray(jax.jit(jax.vmap(run))(jnp.asarray(loads)))
    assert batch.shape == (4, 300, 2)
    for i in range(4):
        np.testing.assert_allclose(batch[i], np.asarray(run(jnp.asarray(loads[i]))), rtol=0,
                                   atol=1e-12 * np.abs(batch).max())


def test_non_classical_damping_is_refused_with_the_coupling_found():
    mass, damping, stiffness = _random_rayleigh()
    dashpot = np.zeros((7, 7))
    dashpot[np.ix_([0, 4], [0, 4])] = 50.0 * np.array([[1.0, -1.0], [-1.0, 1.0]])  # one added damper
    with pytest.raises(ParameterError, match=r"damping is not diagonalised.*= \d.*tolerance 1e-10"):
        modal_newmark_params(mass, damping + dashpot, stiffness, DT)


def test_bad_stiffness_mass_and_shapes_name_the_field():
    mass, damping, stiffness = _random_rayleigh(n=3, massless=1)
    mechanism = stiffness.copy()
    mechanism[np.ix_([0, 1], [0, 1])] = 1e6 * np.array([[1.0, -1.0], [-1.0, 1.0]])
    mechanism[2, :2] = mechanism[:2, 2] = 0.0
    with pytest.raises(ParameterError, match="stiffness must be positive definite.*smallest eigenvalue"):
        modal_newmark_params(mass, damping, mechanism, DT)
    with pytest.raises(ParameterError, match="stiffness must be positive definite"):
        modal_newmark_params(mass, damping, -stiffness, DT)
    with pytest.raises(ParameterError, match="mass must be positive semi-definite"):
        modal_newmark_params(-mass, damping, stiffness, DT)
    with pytest.raises(ParameterError, match="damping must be a square"):
        modal_newmark_params(mass, damping[:2], stiffness, DT)
    with pytest.raises(ParameterError, match="stiffness must be symmetric"):
        modal_newmark_params(mass, damping, stiffness + np.triu(np.ones((3, 3)), 1), DT)
    with pytest.raises(ParameterError, match=r"load_distribution must be a finite \(3, k\)"):
        modal_newmark_params(mass, damping, stiffness, DT, load_distribution=np.ones((2, 1)))
    with pytest.raises(ParameterError, match=r"outputs must be a finite \(r, 3\)"):
        modal_newmark_params(mass, damping, stiffness, DT, outputs=np.ones((2, 4)))
    with pytest.raises(ParameterError, match="dt"):
        modal_newmark_params(mass, damping, stiffness, 0.0)


def test_an_undamped_oscillator_keeps_its_energy():
    """Average acceleration has no numerical damping: one mode, free vibration from an
    impulse, k q² + m q̇² stays constant (closed form of the trapezoidal rule)."""
    params = modal_newmark_params(np.array([[2.0]]), np.zeros((1, 1)), np.array([[800.0]]), DT)
    state = modal_newmark_step(params, modal_newmark_init(params), jnp.array([100.0]))
    energies = []
    for _ in range(500):
        state = modal_newmark_step(params, state, jnp.array([0.0]))
        energies.append(float(params.modal_stiffness[0] * state.coordinate[0] ** 2
                              + params.modal_mass[0] * state.velocity[0] ** 2))
    assert np.ptp(energies) < 1e-12 * max(energies)
