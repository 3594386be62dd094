"""Modified LuGre (seed 001 Eqs. 2.10–2.16, 4.1–4.5, 4.15–4.17): closed forms of the
thesis data (Table 2.1, §2.5, §7), the exact z solution, scipy's ODE solver as a second
implementation, LIP identities, gradients, vmap and parameter errors."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from _models_helpers import check_gradients, check_vmap, random_cyclic_history, scan_forces
from scipy.integrate import solve_ivp

from rths_ident.models import ElementInputs, LuGreParams, ModifiedLuGre
from rths_ident.errors import ParameterError

# Seed 001 Table 2.1 (W4x13 column, L = 2 m)
E, I, L, FY_STEEL, SX = 190e9, 4.70e-6, 2.0, 250e6, 8.94e-5


def section_column(**kw):
    return ModifiedLuGre.from_section(E, I, L, FY_STEEL, SX, **kw)


def test_from_section_matches_table_2_1():
    col = section_column()
    p = col.params
    k = p.sigma0 + p.sigma3
    assert k == pytest.approx(12 * E * I / L**3, rel=1e-12)
    assert k == pytest.approx(1.34e6, rel=1e-3)  # Table 2.1: 1.34e6 N/m (= 1.3395e6)
    assert p.Fc == pytest.approx(2.24e4, rel=3e-3)  # F_y = 2 f_y S_x / L = 2.235e4 N
    assert abs(100 * p.Fc / k - 1.67) <= 0.01  # x_y = 1.67 cm (§2.3)
    # Eq. 2.11: post-yield stiffness (1 - α) k = 5.36e4 N/m for α = 0.96
    assert p.sigma3 == pytest.approx(5.36e4, rel=1e-3)
    # Eqs. 2.15-2.16 with m = 19.3 kg, ζ = 1 %, ξ = 2 % (digest §2.5, Ch. 4 row)
    assert p.sigma1 == pytest.approx(199.3, rel=1e-3)
    assert p.sigma2 == pytest.approx(101.7, rel=1e-3)


def test_quasi_static_push_closed_forms():
    """Monotonic push from rest: z(x) = z*(1 - exp(-x/z*)) exactly (the update is exact
    in Δx, so even 400 coarse steps reproduce it), initial and post-yield tangents, and
    R - σ3 x → F_C (digest 001 §9 acceptance 2). Table 2.1 values k = 1.34e6 N/m,
    F_C = 2.24e4 N (the digest's 1.741 cm uses these rounded values)."""
    col = ModifiedLuGre.from_physical(k=1.34e6, Fy=2.24e4, zeta=0.0)
    p = col.params
    z_star = p.Fc / p.sigma0
    assert 100 * z_star == pytest.approx(1.741, abs=1e-3)  # digest §2.5: 1.741 cm
    x = np.linspace(0.0, 0.2, 401)[1:]
    dt = 1e3  # quasi-static: v = 5e-4/1e3 m/s, σ1 ż negligible
    force = col.force_history(x, dt=dt)
    v = np.gradient(x, dt)
    z_exact = z_star * (1.0 - np.exp(-x / z_star))
    zdot_exact = v * (1.0 - z_exact / z_star)
    r_exact = p.sigma0 * z_exact + p.sigma1 * zdot_exact + p.sigma2 * v + p.sigma3 * x
    np.testing.assert_allclose(force, r_exact, rtol=1e-11)

    tangent = col.tangent_history(x, dt=dt)
    k = p.sigma0 + p.sigma3
    initial = ModifiedLuGre.tangent(p, ModifiedLuGre.init(p), ElementInputs(1e-9, 1e-12), dt)
    assert float(initial) == pytest.approx(k, rel=0.01)
    assert tangent[-1] == pytest.approx(5.36e4, rel=0.01)
    beyond = x > 5.3 * z_star  # e^{-5.3} = 0.5 %; (at exactly 5 z* it is e^{-5} = 0.67 %)
    np.testing.assert_allclose(force[beyond] - p.sigma3 * x[beyond], p.Fc, rtol=5e-3)
    assert force[-1] - p.sigma3 * x[-1] == pytest.approx(p.Fc, rel=1e-3)


def test_alpha_zero_is_linear_with_zero_loop_area():
    t = np.linspace(0.0, 2.5, 2001)
    dt = t[1] - t[0]
    x = 0.05 * np.sin(2 * np.pi * 0.8 * t)
    linear = ModifiedLuGre.from_physical(k=1.34e6, Fy=2.24e4, alpha=0.0, zeta=0.0)
    force = linear.force_history(x, dt=dt)
    np.testing.assert_allclose(force, 1.34e6 * x, rtol=0, atol=1e-9 * 1.34e6 * 0.05)
    cycle = slice(None)  # the whole record: two full cycles (0.8 Hz * 2.5 s)
    area = np.trapezoid(force[cycle], x[cycle])
    assert abs(area) < 1e-9 * 1.34e6 * 0.05**2
    yielding = ModifiedLuGre.from_physical(k=1.34e6, Fy=2.24e4, alpha=0.96, zeta=0.0)
    area_yielding = np.trapezoid(yielding.force_history(x, dt=dt)[cycle], x[cycle])
    assert abs(area_yielding) > 0.1 * 4 * 2.24e4 * 0.05  # a real hysteresis loop


def test_against_scipy_ode_solution():
    """Second implementation: scipy's RK45 on ż = ẋ − (σ0/F_C)|ẋ|z with exact ẋ(t)."""
    col = ModifiedLuGre.from_physical(k=1.34e6, Fy=2.24e4, zeta=0.05, xi=1.0)  # Ch. 2 values
    p = col.params
    omega, amplitude = 2 * np.pi * 0.8, 0.04
    t = np.linspace(0.0, 2.5, 10001)
    x = amplitude * np.sin(omega * t) * t / 2.5
    v = amplitude * (omega * np.cos(omega * t) * t + np.sin(omega * t)) / 2.5

    def rhs(time, z):
        vel = amplitude * (omega * np.cos(omega * time) * time + np.sin(omega * time)) / 2.5
        return vel - p.sigma0 / p.Fc * abs(vel) * z

    sol = solve_ivp(rhs, (0.0, 2.5), [0.0], t_eval=t, rtol=1e-10, atol=1e-14, max_step=1e-3)
    z = sol.y[0]
    reference = p.sigma0 * z + p.sigma1 * (v - p.sigma0 / p.Fc * np.abs(v) * z) + p.sigma2 * v + p.sigma3 * x
    force = col.force_history(x, velocity=v)
    assert np.max(np.abs(force - reference)) < 2e-4 * np.max(np.abs(reference))


def test_lip_form_reproduces_force_and_recovers_parameters():
    col = ModifiedLuGre.from_physical(k=1.34e6, Fy=2.24e4)
    p = col.params
    theta = ModifiedLuGre.theta_from_params(p)
    # digest 001 §4.1 [derived] nominal Θ = [1.2864e6, 1.1446e4, 5.36e4]
    np.testing.assert_allclose(theta, [1.2864e6, 1.1446e4, 5.36e4], rtol=1e-3)
    x = random_cyclic_history(1, 200, 0.05)
    dt = 1 / 128
    v = np.gradient(x, dt, edge_order=2)

    @jax.jit
    def step_and_lip(state, xi, vi):
        state, force = ModifiedLuGre.step(p, state, ElementInputs(xi, vi), dt)
        psi = ModifiedLuGre.lip_regressor(state.z, vi, xi)
        y = force - ModifiedLuGre.lip_known_force(p, vi)  # Eq. 4.2
        return state, y, theta @ psi

    state = ModifiedLuGre.init(p)
    for xi, vi in zip(x, v):
        state, y, prediction = step_and_lip(state, xi, vi)
        assert float(y) == pytest.approx(float(prediction), rel=1e-12, abs=1e-9)
    back = ModifiedLuGre.params_from_theta(theta, p.sigma1, p.sigma2)
    for name in ("sigma0", "sigma1", "sigma2", "sigma3", "Fc"):
        assert float(getattr(back, name)) == pytest.approx(float(getattr(p, name)), rel=1e-12)


def test_params_from_theta_is_traceable_and_validates_concrete_values():
    p = ModifiedLuGre.params_from_physical(1.34e6, 2.24e4)
    theta = ModifiedLuGre.theta_from_params(p)

    @jax.jit
    def fc_of(theta):
        return ModifiedLuGre.params_from_theta(theta, p.sigma1, p.sigma2).Fc

    assert float(fc_of(theta)) == pytest.approx(2.24e4, rel=1e-12)
    # dF_C/dθ2 = -σ0 σ1/θ2² (Eq. 4.16)
    d = jax.grad(fc_of)(theta)
    assert float(d[1]) == pytest.approx(float(-theta[0] * p.sigma1 / theta[1] ** 2), rel=1e-12)
    bad = theta.at[1].set(-1.0)
    with pytest.raises(ParameterError, match="Fc"):
        ModifiedLuGre.params_from_theta(bad, p.sigma1, p.sigma2)
    unchecked = ModifiedLuGre.params_from_theta(bad, p.sigma1, p.sigma2, validate=False)
    assert float(unchecked.Fc) < 0


def test_step_is_pure_for_trial_calls():
    p = ModifiedLuGre.params_from_physical(1.34e6, 2.24e4)
    state = ModifiedLuGre.init(p)
    state, _ = ModifiedLuGre.step(p, state, ElementInputs(0.01, 0.1), 1e-3)
    first = ModifiedLuGre.step(p, state, ElementInputs(0.012, 0.2), 1e-3)
    ModifiedLuGre.step(p, state, ElementInputs(-0.03, -1.0), 1e-3)  # another trial from the same state
    again = ModifiedLuGre.step(p, state, ElementInputs(0.012, 0.2), 1e-3)
    assert float(first[1]) == float(again[1])
    assert float(state.displacement) == 0.01


def test_tangent_matches_finite_difference_of_step():
    p = ModifiedLuGre.params_from_physical(1.34e6, 2.24e4)
    state = LuGreState_after(p, [0.005, 0.012, 0.02])
    x, v, dt, h = 0.015, -0.3, 1e-3, 1e-8
    fd = (float(ModifiedLuGre.step(p, state, ElementInputs(x + h, v), dt)[1])
          - float(ModifiedLuGre.step(p, state, ElementInputs(x - h, v), dt)[1])) / (2 * h)
    assert float(ModifiedLuGre.tangent(p, state, ElementInputs(x, v), dt)) == pytest.approx(fd, rel=1e-6)


def LuGreState_after(p, xs):
    state = ModifiedLuGre.init(p)
    for x in xs:
        state, _ = ModifiedLuGre.step(p, state, ElementInputs(x, 0.1), 1e-3)
    return state


def test_gradients_match_finite_differences():
    p = ModifiedLuGre.params_from_physical(1.34e6, 2.24e4, zeta=0.05, xi=0.5)
    x = random_cyclic_history(2, 300, 0.05)
    dt = 1 / 100
    v = np.gradient(x, dt, edge_order=2)
    check_gradients(ModifiedLuGre, p, x, v, dt, ["sigma0", "sigma1", "sigma2", "sigma3", "Fc"])


def test_vmap_over_parameters_equals_loop():
    x = random_cyclic_history(3, 200, 0.05)
    dt = 1 / 100
    v = np.gradient(x, dt, edge_order=2)
    params = [ModifiedLuGre.params_from_physical(k, fy, alpha=a) for k, fy, a in
              ((1.34e6, 2.24e4, 0.96), (1.0e6, 1.5e4, 0.9), (2.0e6, 3.0e4, 0.5))]
    check_vmap(ModifiedLuGre, params, x, v, dt)


def test_invalid_parameters_name_the_field():
    good = dict(sigma0=1e6, sigma1=100.0, sigma2=50.0, sigma3=5e4, Fc=2e4)
    for name, value in (("sigma0", -1.0), ("sigma1", -1.0), ("sigma3", float("nan")), ("Fc", 0.0)):
        with pytest.raises(ParameterError, match=name):
            LuGreParams(**{**good, name: value})
    with pytest.raises(ParameterError, match="alpha"):
        ModifiedLuGre.from_physical(1.34e6, 2.24e4, alpha=1.5)
    with pytest.raises(ParameterError, match="Sx"):
        ModifiedLuGre.from_section(E, I, L, FY_STEEL, -1.0)


def test_force_history_needs_dt_because_rate_dependent():
    col = ModifiedLuGre.from_physical(1.34e6, 2.24e4)
    with pytest.raises(ValueError, match="dt"):
        col.force_history(np.zeros(5))
    forces = scan_forces(ModifiedLuGre, col.params, jnp.zeros(3), jnp.zeros(3), 0.01)
    np.testing.assert_array_equal(np.asarray(forces), 0.0)
