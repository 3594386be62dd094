"""Degrading Bouc–Wen specimen of seed 000 Case 4: preset values (thesis Table 4.6 and
[REPO], digest 000 §4.7.2/§12.3), unit conversion, reduction to OpenSees ``BoucWen``
without degradation, the closed forms of Eqs. 4.4–4.6, large-step stability for N = 40,
gradients, vmap and parameter errors."""

from __future__ import annotations

import dataclasses
import math

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from _models_helpers import (
    check_gradients,
    check_vmap,
    opensees_uniaxial,
    random_cyclic_history,
    relative_rms,
)

from rths_ident.models import DegradingBoucWen, DegradingBoucWenParams, ElementInputs
from rths_ident.errors import ParameterError


@jax.jit
def _run(params, x, v):
    def body(state, inputs):
        state, force = DegradingBoucWen.step(params, state, inputs, 0.0)
        return state, force

    return jax.lax.scan(body, DegradingBoucWen.init(params), ElementInputs(x, v))


def run_states(params, x, v=None):
    """Force history and the final committed state (functional core, lax.scan)."""
    x = jnp.asarray(x)
    v = jnp.zeros_like(x) if v is None else jnp.asarray(v)
    state, forces = _run(params, x, v)
    return np.asarray(forces), state


def custom(**changes):
    base = dict(
        k_e=2.9, alpha_sv=0.5, f_y0=0.29, N=10.0, eta1=0.5, eta2=0.5,
        stiffness_degradation=0.0, strength_degradation=0.0, k_h=0.0, c_e=0.0, m_e=0.0,
    )
    base.update(changes)
    return DegradingBoucWenParams(**base)


def test_presets_reproduce_table_4_6_and_repo_values():
    expected = {  # name: (f_y0 [kip], N, η1, α, β, k_h)  — Table 4.6 with [REPO] N
        "case1": (0.058, 40.0, 0.1, 0.0, 0.0, 0.005),
        "case2": (0.058, 10.0, 0.5, 7e-10, 7e-10, 0.005),
        "case3": (0.058, 10.0, 0.5, 0.5, 0.5, 0.005),
        "case4": (0.29, 1.5, 0.25, 0.2, 0.2, 0.005),
    }
    for name, (fy0, N, eta1, a, b, kh) in expected.items():
        p = DegradingBoucWen.preset_params(name)
        assert p.f_y0 == pytest.approx(fy0, rel=1e-12)  # (1 − α_sv) k_e x_y
        assert (p.N, p.eta1, p.eta2) == pytest.approx((N, eta1, 1.0 - eta1))
        assert (p.stiffness_degradation, p.strength_degradation, p.k_h) == pytest.approx((a, b, kh))
        assert p.k_e == 2.9 and p.m_e == 1e-4
        assert p.c_e == pytest.approx(2 * 0.05 * math.sqrt(1e-4 * 2.9), rel=1e-12)
    linear = DegradingBoucWen.preset_params("linear")
    assert linear.alpha_sv == 0.9999 and linear.f_y0 == pytest.approx(1e-4 * 2.9 * 100)


def test_si_preset_is_a_unit_conversion():
    x_in = random_cyclic_history(40, 300, 1.0)
    dt = 0.01
    for name in ("case3", "case4"):
        f_kip = DegradingBoucWen.preset(name).force_history(x_in, dt=dt)
        f_newton = DegradingBoucWen.preset(name, units="SI").force_history(0.0254 * x_in, dt=dt)
        np.testing.assert_allclose(f_newton, 4448.2216152605 * f_kip, rtol=1e-9, atol=1e-9 * np.abs(f_newton).max())
    p = DegradingBoucWen.preset_params("case4", units="SI")
    assert p.k_e == pytest.approx(2.9 * 4448.2216152605 / 0.0254)
    assert DegradingBoucWen.inertia_force(p, 2.0) == pytest.approx(2.0 * 1e-4 * 4448.2216152605 / 0.0254)


@pytest.mark.opensees
@pytest.mark.parametrize("N, eta1", [(10.0, 0.5), (3.0, 0.7), (1.5, 0.5)])
def test_without_degradation_equals_opensees_boucwen(N, eta1):
    """No degradation, no cubic spring: r/((1−α_sv)k_e) is a Bouc–Wen z with A = 1,
    β = η₁/z_y^N, γ = η₂/z_y^N, z_y = f_y0/((1−α_sv)k_e); one sub-step solves the same
    backward-Euler equation as OpenSees."""
    p = dataclasses.replace(custom(N=N, eta1=eta1, eta2=1.0 - eta1), substeps=1)
    z_y = p.f_y0 / ((1 - p.alpha_sv) * p.k_e)
    material = ["BoucWen", 1, p.alpha_sv, p.k_e, N, p.eta2 / z_y**N, p.eta1 / z_y**N, 1.0, 0.0, 0.0, 0.0]
    x = random_cyclic_history(41, 1500, 5 * z_y)
    force = DegradingBoucWen(p).force_history(x)
    assert relative_rms(force, opensees_uniaxial(material, x)) < 1e-9


def test_dissipated_energy_is_eq_4_6():
    """With K constant, Σ mean(r)(Δx − Δr/K) = ∮-trapezoid of r dx − r_end²/(2K)."""
    p = dataclasses.replace(custom(eta1=0.3, eta2=0.7), substeps=1)
    x = random_cyclic_history(42, 800, 1.0)
    forces, state = run_states(p, x)
    r = forces - p.alpha_sv * p.k_e * x
    K = (1 - p.alpha_sv) * p.k_e
    r_all, x_all = np.concatenate([[0.0], r]), np.concatenate([[0.0], x])
    expected = np.trapezoid(r_all, x_all) - r_all[-1] ** 2 / (2 * K)
    assert float(state.dissipated_energy) == pytest.approx(expected, rel=1e-10)
    assert float(state.dissipated_energy) > 0.5 * 4 * p.f_y0 * 0.5  # several yielding cycles


def test_stiffness_degradation_is_eq_4_4():
    """η₁ = η₂: at a load reversal the unloading tangent is α_sv k_e + K(H) = e^{−αH} k_e."""
    p = custom(stiffness_degradation=0.2, eta1=0.5, eta2=0.5)
    x = np.concatenate([np.linspace(0, 1.0, 200), np.linspace(1.0, -1.0, 400)[1:], np.linspace(-1.0, 0.6, 402)[1:]])
    _, state = run_states(p, x)
    H = float(state.dissipated_energy)
    assert H > 0.5
    unloading = DegradingBoucWen.tangent(p, state, ElementInputs(0.6 - 1e-9, -1.0), 0.0)
    assert float(unloading) == pytest.approx(math.exp(-0.2 * H) * p.k_e, rel=1e-6)


def test_strength_degradation_is_eq_4_5():
    """N = 40, η₁ + η₂ = 1: on a long push r saturates at f_y(H) = f_y0/(1 + βH)."""
    p = custom(N=40.0, strength_degradation=0.5)
    x = np.concatenate([np.linspace(0, 2.0, 400), np.linspace(2.0, -2.0, 601)[1:]])  # 1000 points
    forces, state = run_states(p, x)
    r_end = forces[-1] - p.alpha_sv * p.k_e * x[-1]
    H = float(state.dissipated_energy)
    assert H > 1.0
    assert -r_end == pytest.approx(p.f_y0 / (1 + 0.5 * H), rel=2e-3)


def test_n40_large_steps_are_stable_and_accurate():
    """Case 1 (N = 40) driven at 0.02 s steps (increments up to ~0.8 x_y): finite, and the
    hysteretic force r within 3 % (default, one sub-step; measured 2.5 %) or 1 %
    (substeps=8; measured 0.53 %) relative RMS of a 200-sub-step reference."""
    x = random_cyclic_history(43, 1560, 1.0, max_cycles=60.0)  # in; x_y = 0.2 in
    dt = 0.02
    assert np.max(np.abs(np.diff(x))) > 0.1
    p = DegradingBoucWen.preset_params("case1")
    fine = DegradingBoucWen(dataclasses.replace(p, substeps=200)).force_history(x, dt=dt)
    linear_part = p.alpha_sv * p.k_e * x + p.k_h * x**3
    for substeps, tolerance in ((1, 3e-2), (8, 1e-2)):
        coarse = DegradingBoucWen(dataclasses.replace(p, substeps=substeps)).force_history(x, dt=dt)
        assert np.all(np.isfinite(coarse))
        assert relative_rms(coarse - linear_part, fine - linear_part) < tolerance
    huge = np.zeros_like(x)  # 50 in increments, same record length (no recompilation)
    huge[0], huge[1] = 50.0, -50.0
    assert np.all(np.isfinite(DegradingBoucWen(p).force_history(huge, dt=dt)))


def test_gradients_match_finite_differences():
    p = DegradingBoucWen.preset_params("case4")
    x = random_cyclic_history(44, 200, 1.0)
    dt = 0.02
    v = np.gradient(x, dt, edge_order=2)
    fields = ["k_e", "alpha_sv", "f_y0", "N", "eta1", "eta2", "stiffness_degradation",
              "strength_degradation", "k_h", "c_e", "m_e", "min_strength_ratio", "min_stiffness_ratio"]
    check_gradients(DegradingBoucWen, p, x, v, dt, fields)


def test_vmap_over_parameters_equals_loop():
    x = random_cyclic_history(45, 200, 1.0)
    dt = 0.02
    v = np.gradient(x, dt, edge_order=2)
    batch = [DegradingBoucWen.preset_params(name) for name in ("case1", "case3", "case4")]
    check_vmap(DegradingBoucWen, batch, x, v, dt)


def test_invalid_parameters_name_the_field():
    for name, value in (("N", 0.5), ("alpha_sv", 1.0), ("f_y0", 0.0), ("eta1", -0.1), ("k_h", -1.0)):
        with pytest.raises(ParameterError, match=name):
            custom(**{name: value})
    with pytest.raises(ParameterError, match="eta2"):
        custom(eta1=0.2, eta2=-0.3)
    with pytest.raises(ParameterError, match="substeps"):
        dataclasses.replace(custom(), substeps=0)
    with pytest.raises(ValueError, match="case5"):
        DegradingBoucWen.preset("case5")
    with pytest.raises(ValueError, match="units"):
        DegradingBoucWen.preset("case1", units="imperial")


def test_damping_makes_it_rate_dependent():
    with pytest.raises(ValueError, match="dt"):
        DegradingBoucWen.preset("case4").force_history(np.zeros(4))
    without_damping = DegradingBoucWen(custom())
    assert np.all(without_damping.force_history(np.zeros(4)) == 0.0)
