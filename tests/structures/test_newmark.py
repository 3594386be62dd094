"""Newmark integrators against closed forms: the exact discrete recurrence of the
undamped SDOF, damped free vibration, harmonic steady state, and the nonlinear (element)
building with linear columns against the linear matrix model."""

from __future__ import annotations

import dataclasses

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from _structures_helpers import K_COLUMN, Kelvin, KelvinParams, Spring, SpringParams, elcentro_m_s2

from rths_ident.errors import ParameterError
from rths_ident.structures import (
    AlphaOS,
    CentralDifference,
    ExplicitNewmark,
    NewmarkFixedIteration,
    TimeStepError,
    structure_from_matrices,
    three_storey_two_bay_frame,
)


def sdof(m=100.0, k=4.0e4, c=0.0):
    return structure_from_matrices([[m]], [[k]], [[c]])


def test_average_acceleration_exact_discrete_recurrence():
    """Trapezoidal rule, undamped: u_{n+1} + u_{n-1} = 2 cos(Ω̃) u_n with
    cos Ω̃ = (1 − Ω²/4)/(1 + Ω²/4), Ω = ω Δt (period elongation, no amplitude decay)."""
    structure, params = sdof()
    omega = 20.0
    dt = 0.5 / omega
    integ = NewmarkFixedIteration(structure, iterations=1)
    state = integ.init(params, dt, displacement0=[0.01])
    _, out = integ.simulate(params, np.zeros(200), dt, state=state)
    u = np.concatenate([[0.01], np.asarray(out.displacement)[:, 0]])
    big_omega = omega * dt
    two_cos = 2 * (1 - big_omega**2 / 4) / (1 + big_omega**2 / 4)
    np.testing.assert_allclose(u[2:] + u[:-2], two_cos * u[1:-1], atol=1e-15)
    # energy conserved: amplitude of (u, v/ω) stays 0.01
    amp = np.hypot(np.asarray(out.displacement)[:, 0], np.asarray(out.velocity)[:, 0] / omega)
    np.testing.assert_allclose(amp, 0.01, rtol=1e-12)


@pytest.mark.parametrize("integrator_cls", [NewmarkFixedIteration, ExplicitNewmark, AlphaOS, CentralDifference])
def test_damped_free_vibration_matches_closed_form(integrator_cls):
    m, k, zeta = 100.0, 4.0e4, 0.05
    omega = np.sqrt(k / m)
    structure, params = sdof(m, k, 2 * zeta * np.sqrt(k * m))
    dt = 2 * np.pi / omega / 400
    integ = integrator_cls(structure)
    state = integ.init(params, dt, displacement0=[0.02])
    n = 1200
    _, out = integ.simulate(params, np.zeros(n), dt, state=state)
    t = dt * np.arange(1, n + 1)
    wd = omega * np.sqrt(1 - zeta**2)
    exact = 0.02 * np.exp(-zeta * omega * t) * (np.cos(wd * t) + zeta / np.sqrt(1 - zeta**2) * np.sin(wd * t))
    # second-order schemes at Ω = 2π/400: phase error ≈ Ω²/12 per radian → < 1e-3 of u0
    np.testing.assert_allclose(np.asarray(out.displacement)[:, 0], exact, atol=2e-3 * 0.02)


@pytest.mark.parametrize("integrator_cls", [NewmarkFixedIteration, ExplicitNewmark, AlphaOS, CentralDifference])
def test_harmonic_ground_motion_steady_state_amplitude(integrator_cls):
    """|u| = m A / sqrt((k − m Ω²)² + (c Ω)²) for ẍ_g = A sin(Ω t) (transient decayed)."""
    m, k, zeta = 50.0, 2.0e4, 0.2
    omega = np.sqrt(k / m)
    c = 2 * zeta * np.sqrt(k * m)
    structure, params = sdof(m, k, c)
    forcing = 1.3 * omega
    dt = 2 * np.pi / omega / 200
    n = int(np.ceil(16.0 / (zeta * omega) / dt))  # e^{-16} transient
    t = dt * np.arange(1, n + 1)
    amplitude = 2.0
    integ = integrator_cls(structure)
    _, out = integ.simulate(params, amplitude * np.sin(forcing * t), dt)
    u = np.asarray(out.displacement)[:, 0]
    last_periods = t > t[-1] - 2 * 2 * np.pi / forcing
    expected = m * amplitude / np.hypot(k - m * forcing**2, c * forcing)
    assert np.abs(u[last_periods]).max() == pytest.approx(expected, rel=2e-3)


def test_element_building_equals_linear_matrix_model():
    """Nonlinear-building machinery (columns as vmapped elements, Newton with autodiff
    tangent) with all-linear columns reproduces the linear M, C, K model."""
    building = three_storey_two_bay_frame(5000.0, Spring, SpringParams(stiffness=K_COLUMN))
    c, _, _ = building.rayleigh_damping(0.05)
    s_el, p_el = building.to_structure(c)
    s_lin, p_lin = building.to_linear_structure(c)
    record = elcentro_m_s2(250)
    dt = 0.02
    # (the explicit schemes' element building is checked against linear OpenSees
    # models in test_opensees_adapter.py)
    for make in (lambda s: NewmarkFixedIteration(s, iterations=3),
                 lambda s: NewmarkFixedIteration(s, iterations=2, tangent="element")):
        _, out_el = make(s_el).simulate(p_el, record, dt)
        _, out_lin = make(s_lin).simulate(p_lin, record, dt)
        scale = np.abs(np.asarray(out_lin.displacement)).max()
        np.testing.assert_allclose(out_el.displacement, out_lin.displacement, rtol=0, atol=1e-12 * scale)
        np.testing.assert_allclose(out_el.restoring_force, out_lin.restoring_force, rtol=0,
                                   atol=1e-12 * np.abs(np.asarray(out_lin.restoring_force)).max())


def test_fixed_iterations_solve_rate_dependent_elements_exactly():
    """Kelvin columns (k x + c v) are linear in (u, v): with the consistent (autodiff)
    tangent one Newton iteration is exact; it must equal the matrix model with the
    columns' dashpots in C."""
    kc, cc = 1.0e6, 3.0e3
    building = three_storey_two_bay_frame(2000.0, Kelvin, KelvinParams(stiffness=kc, damping=cc))
    s_el, p_el = building.to_structure()
    k = building.linearised_stiffness()
    s_lin, p_lin = structure_from_matrices(building.mass_matrix, k, k * (cc / kc))
    record = elcentro_m_s2(300)
    _, out_el = NewmarkFixedIteration(s_el, iterations=1).simulate(p_el, record, 0.02)
    _, out_lin = NewmarkFixedIteration(s_lin, iterations=1).simulate(p_lin, record, 0.02)
    scale = np.abs(np.asarray(out_lin.displacement)).max()
    np.testing.assert_allclose(out_el.displacement, out_lin.displacement, atol=1e-12 * scale)


def test_explicit_newmark_stability_limit():
    """Δt_crit = 2/ω_max (closed form ω_max² = (3k/m)·4 sin²(5π/14)); beyond it the
    scheme diverges, below it the response stays bounded."""
    building = three_storey_two_bay_frame(5000.0, Spring, SpringParams(stiffness=K_COLUMN))
    structure, params = building.to_linear_structure()
    omega_max = np.sqrt(3 * K_COLUMN / 5000.0 * 4 * np.sin(5 * np.pi / 14) ** 2)
    integ = ExplicitNewmark(structure)
    limit = integ.critical_time_step(params)
    assert limit == pytest.approx(2 / omega_max, rel=1e-12)
    assert NewmarkFixedIteration(structure).critical_time_step(params) == np.inf
    with pytest.raises(TimeStepError, match="stability limit"):
        integ.init(params, 1.01 * limit)
    u0 = building.modal_analysis().mode_shapes[:, 2] * 1e-3
    for factor, bounded in ((0.98, True), (1.02, False)):
        dt = factor * limit
        state = integ.init(params, dt, displacement0=u0, check_stability=False)
        _, out = integ.simulate(params, np.zeros(400), dt, state=state)
        growth = np.abs(np.asarray(out.displacement)).max() / np.abs(u0).max()
        assert (growth < 2.0) == bounded, (factor, growth)


def test_gradient_and_vmap_through_a_simulation():
    """jax.grad of a response w.r.t. a stiffness matches a central difference;
    jax.vmap over two structures equals two separate runs."""
    structure, params = sdof(100.0, 4.0e4, 50.0)
    integ = NewmarkFixedIteration(structure, iterations=1)
    dt = 0.005
    n = 60
    record = jnp.sin(30.0 * dt * jnp.arange(1, n + 1))

    def energy(kscale):
        p = dataclasses.replace(params, linear_stiffness=params.linear_stiffness * kscale)
        state = integ.init(p, dt, check_stability=False)
        _, out = integ._simulate(p, state, record, jnp.zeros((n, 1)), dt)
        return jnp.sum(out.displacement**2)

    energy_jit = jax.jit(energy)
    grad = jax.jit(jax.grad(energy))(1.0)
    fd = (energy_jit(1.0 + 1e-6) - energy_jit(1.0 - 1e-6)) / 2e-6
    assert float(grad) == pytest.approx(float(fd), rel=1e-5)
    both = jax.jit(jax.vmap(energy))(jnp.array([0.9, 1.1]))
    np.testing.assert_allclose(both, [energy_jit(0.9), energy_jit(1.1)], rtol=1e-12)


def test_bad_scheme_parameters_raise():
    structure, _ = sdof()
    with pytest.raises(ParameterError, match="iterations"):
        NewmarkFixedIteration(structure, iterations=0)
    with pytest.raises(ParameterError, match="gamma"):
        ExplicitNewmark(structure, gamma=0.4)
    with pytest.raises(ParameterError, match="tangent"):
        NewmarkFixedIteration(structure, tangent="secant")


def test_input_shapes_are_checked_with_clear_messages():
    structure, params = structure_from_matrices(np.eye(2), 1e4 * np.eye(2))
    integ = ExplicitNewmark(structure)
    with pytest.raises(ValueError, match="displacement0"):
        integ.init(params, 0.001, displacement0=[1.0, 2.0, 3.0])
    state = integ.init(params, 0.001)
    with pytest.raises(ValueError, match="interface_force"):
        integ.step(params, state, 0.0, np.zeros(3), 0.001)
    with pytest.raises(ValueError, match="interface_forces"):
        integ.simulate(params, np.zeros(5), 0.001, interface_forces=np.zeros((4, 2)))
    massless, massless_params = structure_from_matrices(np.diag([1.0, 0.0]), np.eye(2))
    with pytest.raises(ValueError, match="positive-definite mass"):
        ExplicitNewmark(massless).init(massless_params, 0.001)
