"""Bouc–Wen (standard Wen signs): OpenSeesPy ``BoucWen`` as second implementation,
closed forms for n = 1, large-increment stability for n = 40, LIP form, gradients,
vmap and parameter errors."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import brentq
from _models_helpers import (
    check_gradients,
    check_vmap,
    opensees_uniaxial,
    random_cyclic_history,
    relative_rms,
)

from rths_ident.models import BoucWen, BoucWenParams, ElementInputs
from rths_ident.errors import ParameterError
from rths_ident.models.base import _jitted_step

K, ALPHA, Z_U = 1.0e6, 0.05, 0.01  # N/m, -, m


def params(n=1.0, beta_fraction=0.5, substeps=4):
    return BoucWenParams.from_yield(
        k=K, alpha=ALPHA, yield_displacement=Z_U, n=n, beta_fraction=beta_fraction, substeps=substeps
    )


def opensees_boucwen(p, x):
    # OpenSees argument order: alpha ko n gamma beta Ao deltaA deltaNu deltaEta
    material = ["BoucWen", 1, p.alpha, p.k, p.n, p.gamma, p.beta, p.A, 0.0, 0.0, 0.0]
    return opensees_uniaxial(material, x)


@pytest.mark.opensees
@pytest.mark.parametrize(
    "n, beta_fraction, seed",
    [(1.0, 0.5, 10), (1.0, 0.8, 11), (1.0, 0.2, 12), (2.0, 0.5, 13), (5.0, 0.7, 14), (20.0, 0.5, 15)],
)
def test_one_substep_is_the_opensees_update(n, beta_fraction, seed):
    """With one sub-step the update solves OpenSees' backward-Euler equation exactly."""
    p = params(n, beta_fraction, substeps=1)
    x = random_cyclic_history(seed, 1500, 4 * Z_U)
    reference = opensees_boucwen(p, x)
    assert relative_rms(BoucWen(p).force_history(x), reference) < 1e-9


@pytest.mark.opensees
@pytest.mark.parametrize("n, beta_fraction, seed", [(1.0, 0.5, 20), (3.0, 0.8, 21), (10.0, 0.5, 22)])
def test_default_update_agrees_with_opensees(n, beta_fraction, seed):
    """Default (four sub-steps) vs OpenSees on random cyclic histories: ≤ 2e-3 relative
    RMS (the difference is OpenSees' own O(Δx) one-step error)."""
    p = params(n, beta_fraction)
    assert p.substeps == 4
    x = random_cyclic_history(seed, 4000, 5 * Z_U)
    error = relative_rms(BoucWen(p).force_history(x), opensees_boucwen(p, x))
    assert error < 2e-3


def test_n1_monotonic_loading_closed_form():
    """n = 1 from rest: dz/dx = A − (β+γ) z, so z = z_u (1 − e^{−x/z_u}); the backward
    Euler recursion z_{k+1} = (z_k + h A)/(1 + h(β+γ)) is reproduced to round-off with one
    sub-step, and the exponential to O(h) with many."""
    x = np.linspace(0.0, 6 * Z_U, 401)[1:]
    h = x[0]
    one = params(1.0, substeps=1)
    total = one.beta + one.gamma
    z_be = Z_U * (1.0 - (1.0 + h * total) ** -np.arange(1, x.size + 1))
    np.testing.assert_allclose(BoucWen(one).force_history(x), ALPHA * K * x + (1 - ALPHA) * K * z_be, rtol=1e-12)

    fine = params(1.0, substeps=64)
    z_exact = Z_U * (1.0 - np.exp(-x / Z_U))
    exact = ALPHA * K * x + (1 - ALPHA) * K * z_exact
    assert np.max(np.abs(BoucWen(fine).force_history(x) - exact)) < 5e-5 * np.max(exact)


def test_n1_unloading_is_elastic_when_beta_equals_gamma():
    """β = γ: on unloading dz/dx = A exactly, so F drops with slope k until z = 0."""
    p = params(1.0, beta_fraction=0.5)
    peak = 5 * Z_U
    x = np.concatenate([np.linspace(0, peak, 200)[1:], peak - np.linspace(0, 0.9 * Z_U, 50)[1:]])
    force = BoucWen(p).force_history(x)
    unloading = force[199:]
    np.testing.assert_allclose(unloading, force[198] - K * (peak - x[199:]), rtol=1e-12)


def test_n40_large_increments_are_stable_and_accurate():
    """El Centro-size increments (0.02 s steps of a response reaching 5 z_u, increments
    up to ~0.9 z_u) with n = 40: finite, |z| ≤ z_u, and within 0.5 % (default, four
    sub-steps) or 1 % (one sub-step) relative RMS of a fine-step reference (200 backward-
    Euler sub-steps per increment, i.e. the record linearly interpolated at 200 points
    per step)."""
    coarse = random_cyclic_history(30, 1560, 5 * Z_U, max_cycles=60.0)  # 31.2 s at 0.02 s
    assert np.max(np.abs(np.diff(coarse))) > 0.3 * Z_U
    p = params(40.0, substeps=1)
    force = BoucWen(p).force_history(coarse)
    assert np.all(np.isfinite(force))
    z = (force - ALPHA * K * coarse) / ((1 - ALPHA) * K)
    assert np.max(np.abs(z)) <= Z_U * (1 + 1e-9)
    fine = BoucWen(params(40.0, substeps=200)).force_history(coarse)
    assert relative_rms(force, fine) < 1e-2  # measured 6.1e-3
    substepped = BoucWen(params(40.0)).force_history(coarse)
    assert relative_rms(substepped, fine) < 5e-3  # measured 1.9e-3
    # increments of 100 z_u (same record length: no recompilation): saturates, no overflow
    huge = np.zeros_like(coarse)
    huge[0], huge[1] = 100 * Z_U, -100 * Z_U
    force = BoucWen(p).force_history(huge)
    assert np.all(np.isfinite(force))
    # one backward-Euler step from z = 0: z = h (A − (β+γ) z^40), solved by scipy
    h = 100 * Z_U
    z1 = brentq(lambda z: z - h * (p.A - (p.beta + p.gamma) * z**40), 0.0, Z_U, xtol=1e-16, rtol=1e-15)
    assert force[0] == pytest.approx(ALPHA * K * h + (1 - ALPHA) * K * z1, rel=1e-12)
    assert force[1] == pytest.approx(-force[0], rel=1e-9)  # reversal by 200 z_u: symmetric


def test_tangent_initial_saturated_and_consistent():
    """Initial tangent k, saturated tangent α k, and ∂F/∂x equal to a central finite
    difference of the discrete update from the same committed state."""
    p = params(2.0, substeps=1)
    model = BoucWen(p)
    assert float(BoucWen.tangent(p, model.state, ElementInputs(0.0, 1.0), 0.0)) == pytest.approx(K, rel=1e-12)
    for x in np.linspace(0.0, 8 * Z_U, 81)[1:]:
        model.update(x)
    assert float(BoucWen.tangent(p, model.state, ElementInputs(8 * Z_U + 1e-6, 0.0), 0.0)) == pytest.approx(ALPHA * K, rel=1e-3)
    for x in (7.5 * Z_U, 7.0 * Z_U, 6.5 * Z_U):
        model.update(x)  # unloading, partially back
    x, h = 6.4 * Z_U, 1e-7
    step = _jitted_step(BoucWen)  # the wrapper's compiled step (already compiled by update)
    up = float(step(p, model.state, ElementInputs(x + h, 0.0), 0.0)[1])
    down = float(step(p, model.state, ElementInputs(x - h, 0.0), 0.0)[1])
    assert float(BoucWen.tangent(p, model.state, ElementInputs(x, 0.0), 0.0)) == pytest.approx((up - down) / (2 * h), rel=1e-6)


def test_zdot_regressor_is_linear_form_of_zdot():
    p = params(2.5, beta_fraction=0.7)
    rng = np.random.default_rng(4)
    theta = BoucWen.zdot_theta(p)
    for z, v in zip(rng.uniform(-Z_U, Z_U, 20), rng.normal(size=20)):
        phi = BoucWen.zdot_regressor(z, v, p.n)
        direct = p.A * v - p.beta * abs(v) * abs(z) ** (p.n - 1) * z - p.gamma * v * abs(z) ** p.n
        assert float(theta @ phi) == pytest.approx(direct, rel=1e-12, abs=1e-15)
        assert float(BoucWen.zdot(p, z, v)) == pytest.approx(direct, rel=1e-12, abs=1e-15)


def test_gradients_match_finite_differences():
    p = params(2.5, beta_fraction=0.7)
    x = random_cyclic_history(5, 250, 3 * Z_U)
    check_gradients(BoucWen, p, x, np.zeros_like(x), 0.0, ["k", "alpha", "A", "beta", "gamma", "n"])


@pytest.mark.parametrize("rule", ["backward-euler", "trapezoidal"])
def test_gradients_in_the_hardening_region(rule):
    p = BoucWenParams(k=1e5, alpha=0.5, A=1.0, beta=600.0, gamma=-900.0, n=1.3, substeps=2, rule=rule)
    x = random_cyclic_history(8, 250, 1.5e-3)
    check_gradients(BoucWen, p, x, np.zeros_like(x), 0.0, ["k", "alpha", "A", "beta", "gamma", "n"])


def test_vmap_over_parameters_equals_loop():
    x = random_cyclic_history(6, 200, 3 * Z_U)
    batch = [params(n, f) for n, f in ((1.0, 0.5), (3.0, 0.8), (12.0, 0.3))]
    check_vmap(BoucWen, batch, x, np.zeros_like(x), 0.0)


def test_invalid_parameters_name_the_field():
    good = dict(k=1e6, alpha=0.05, A=1.0, beta=50.0, gamma=50.0, n=1.0)
    for name, value in (("k", 0.0), ("alpha", 1.5), ("A", -1.0), ("beta", -1.0), ("n", 0.5)):
        with pytest.raises(ParameterError, match=name):
            BoucWenParams(**{**good, name: value})
    with pytest.raises(ParameterError, match="substeps"):
        BoucWenParams(**good, substeps=0)
    with pytest.raises(ParameterError, match="rule"):
        BoucWenParams(**good, rule="forward-euler")


def test_sign_regions_are_valid_bouc_wen():
    """β + γ ≤ 0 (hardening loops, e.g. the Noël–Schoukens benchmark) is a valid
    Bouc–Wen: the region is reported, z_u is infinite there."""
    good = dict(k=1e6, alpha=0.05, A=1.0, beta=50.0, n=1.0)
    assert BoucWenParams(**good, gamma=50.0).sign_region == "softening"
    assert BoucWenParams(**good, gamma=-20.0).sign_region == "softening"  # γ < 0 < β + γ
    assert BoucWenParams(**good, gamma=-50.0).sign_region == "linear loading"
    hardening = BoucWenParams(**good, gamma=-60.0)
    assert hardening.sign_region == "hardening"
    assert np.isinf(float(hardening.yield_displacement))


@pytest.mark.parametrize("rule", ["backward-euler", "trapezoidal"])
@pytest.mark.parametrize("substeps", [1, 4])
def test_hardening_n1_monotonic_loading_is_the_exponential(rule, substeps):
    """n = 1, β + γ = −κ < 0: on loading dz/dx = A + κ z, so z = (A/κ)(e^{κx} − 1)
    (closed form). Backward Euler converges at first order, the trapezoidal rule at
    second order (its error falls ≥ 12× for 4× the sub-steps)."""
    beta, gamma = 400.0, -700.0
    kappa = -(beta + gamma)
    x = np.linspace(0.0, 3e-3, 61)  # κ x up to 0.9
    exact = (1.0 / kappa) * np.expm1(kappa * x)
    errors = []
    for k in (substeps, 4 * substeps):
        p = BoucWenParams(k=1.0, alpha=0.0, A=1.0, beta=beta, gamma=gamma, n=1.0, substeps=k, rule=rule)
        errors.append(relative_rms(BoucWen(p).force_history(x), exact))
    assert errors[0] < (2e-2 if rule == "backward-euler" else 2e-4)
    assert errors[0] / errors[1] > (3.5 if rule == "backward-euler" else 12.0)


def test_hardening_blow_up_is_nan_not_a_number():
    """n = 2, β + γ = −κ: dz/dx = A + κ z² blows up at x = π/(2√(Aκ)); one increment
    past it has no backward-Euler root, and the update says so with NaN."""
    p = BoucWenParams(k=1.0, alpha=0.0, A=1.0, beta=100.0, gamma=-200.0, n=2.0, substeps=1)
    blow_up = np.pi / (2.0 * np.sqrt(100.0))
    force = BoucWen(p).force_history(np.array([0.2 * blow_up, 3.0 * blow_up]))
    assert np.isfinite(force[0]) and np.isnan(force[1])


@pytest.mark.parametrize("beta_fraction", [0.5, 0.8, 2.0])
def test_trapezoidal_rule_is_second_order_on_cycles(beta_fraction):
    """Against scipy's solve_ivp of dz/dx (rtol 1e-11), on growing cycles: the
    trapezoidal rule's error falls ≥ 10× for 4× the sub-steps (backward Euler's ≈ 4×),
    and at one sub-step it is ≥ 20× smaller than backward Euler's, softening
    (β/(β+γ) = 0.5, 0.8) and hardening (γ = −β·(… ) with β + γ < 0) alike."""
    from scipy.integrate import solve_ivp

    if beta_fraction > 1.0:  # hardening: β + γ = −0.5 β
        beta, gamma = 600.0, -900.0
    else:
        beta, gamma = beta_fraction * 1000.0, (1.0 - beta_fraction) * 1000.0
    n = 1.5
    x = 1.5e-3 * np.sin(np.linspace(0.0, 6.0 * np.pi, 301)) * np.linspace(0.3, 1.0, 301)
    z = [0.0]
    for x0, x1 in zip(x[:-1], x[1:]):
        dx = x1 - x0
        rate = lambda _, w, dx=dx: [(1.0 - abs(w[0]) ** n * (gamma + beta * np.sign(dx * w[0]))) * dx]
        z.append(solve_ivp(rate, (0.0, 1.0), [z[-1]], rtol=1e-11, atol=1e-15).y[0, -1])
    exact = np.array(z)

    def error(rule, substeps):
        p = BoucWenParams(k=1.0, alpha=0.0, A=1.0, beta=beta, gamma=gamma, n=n, substeps=substeps, rule=rule)
        return relative_rms(BoucWen(p).force_history(x), exact)

    assert error("trapezoidal", 1) / error("trapezoidal", 4) > 10.0
    assert 3.0 < error("backward-euler", 1) / error("backward-euler", 4) < 5.0
    assert error("backward-euler", 1) / error("trapezoidal", 1) > 20.0


@pytest.mark.opensees
def test_hardening_region_equals_opensees_boucwen():
    """OpenSees' BoucWen solves the same backward-Euler equation in the hardening region
    too (β + γ < 0): one sub-step equals it on a cyclic history."""
    p = BoucWenParams(k=1e5, alpha=0.5, A=1.0, beta=500.0, gamma=-800.0, n=1.0, substeps=1)
    x = random_cyclic_history(21, 800, 1.5e-3)
    ours = BoucWen(p).force_history(x)
    assert np.all(np.isfinite(ours))
    assert relative_rms(ours, opensees_boucwen(p, x)) < 1e-10


def test_rate_independent_history_needs_no_dt():
    x = random_cyclic_history(7, 100, 2 * Z_U)
    model = BoucWen(params(2.0))
    np.testing.assert_allclose(model.force_history(x), model.force_history(x, dt=0.01), rtol=0, atol=0)
