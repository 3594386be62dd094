"""The oscillator's sub-stepped simulation against an independent integration
(scipy's solve_ivp of the continuous equations, ``dynamic_synthetic``)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from dynamic_synthetic import Multisine, bouc_wen_oscillator

from rths_ident.estimators.offline.dynamic import simulate_substeps
from rths_ident.models import BoucWen, BoucWenParams, LinearElement, LinearParams

DT = 1.0 / 500.0
N = 1500
M, C, K = 1.5, 8.0, 8.0e4  # kg, N·s/m, N/m: f_n ≈ 37 Hz


def _simulate(model, params, u, substeps, output="displacement", ground=False):
    fine = u(np.arange((N - 1) * substeps + 1) * DT / substeps)  # the exact input: only the integrator is tested
    excitation = -M * fine if ground else fine
    run = jax.jit(simulate_substeps, static_argnums=(0, 6))
    response = run(model, params, M, C, jnp.asarray(excitation), DT / substeps, output,
                   jnp.asarray(fine) if ground and output == "acceleration" else None)
    return np.asarray(response)[::substeps]


@pytest.mark.parametrize("gamma", [300.0, -850.0])  # softening, hardening
def test_bouc_wen_oscillator_converges_at_second_order_to_solve_ivp(gamma):
    u = Multisine(N, DT, 2.0, 60.0, 40.0, seed=3)
    truth = dict(m=M, c=C, k=K, alpha=0.4, beta=600.0, gamma=gamma, n=1.5)
    reference, _, _ = bouc_wen_oscillator(u, N, DT, **truth)
    params = BoucWenParams(k=K, alpha=0.4, A=1.0, beta=600.0, gamma=gamma, n=1.5, substeps=1, rule="trapezoidal")
    errors = []
    for substeps in (20, 40):
        y = _simulate(BoucWen, params, u, substeps)
        errors.append(np.sqrt(np.mean((y - reference) ** 2)) / np.sqrt(np.mean(reference**2)))
    # ζ ≈ 1 %: the central difference's phase error (ω h)²/24 is amplified ~1/ζ at resonance
    assert errors[1] < 3e-4
    assert 3.5 < errors[0] / errors[1] < 4.5  # second order: 4× for half the step


def test_linear_oscillator_velocity_and_acceleration_match_solve_ivp():
    u = Multisine(N, DT, 2.0, 60.0, 40.0, seed=4)
    _, v_ref, a_ref = bouc_wen_oscillator(u, N, DT, m=M, c=C, k=K, alpha=1.0, beta=0.0, gamma=0.0, n=1.0)
    for output, reference in (("velocity", v_ref), ("acceleration", a_ref)):
        y = _simulate(LinearElement, LinearParams(k=K), u, 40, output)
        assert np.sqrt(np.mean((y - reference) ** 2)) / np.sqrt(np.mean(reference**2)) < 5e-4


def test_ground_acceleration_is_a_force_minus_m_ag_and_absolute_acceleration_adds_it():
    ag = Multisine(N, DT, 2.0, 60.0, 3.0, seed=5)
    y_ref, _, a_ref = bouc_wen_oscillator(ag, N, DT, m=M, c=C, k=K, alpha=0.4, beta=600.0, gamma=300.0, n=1.5,
                                          ground=True)
    params = BoucWenParams(k=K, alpha=0.4, A=1.0, beta=600.0, gamma=300.0, n=1.5, substeps=1, rule="trapezoidal")
    y = _simulate(BoucWen, params, ag, 40, "displacement", ground=True)
    assert np.sqrt(np.mean((y - y_ref) ** 2)) / np.sqrt(np.mean(y_ref**2)) < 3e-4
    absolute = _simulate(BoucWen, params, ag, 40, "acceleration", ground=True)
    expected = a_ref + ag(np.arange(N) * DT)
    assert np.sqrt(np.mean((absolute - expected) ** 2)) / np.sqrt(np.mean(expected**2)) < 1e-3
