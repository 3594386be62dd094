"""Bouc–Wen–Baber–Noori with pinching: reduction to ``BoucWen``, an independent
``scipy.integrate.solve_ivp`` integration of dz/dx, the closed-form pinched tangent
near z = 0, the energy as the loop area, large-increment stability, gradients, vmap
and parameter errors."""

from __future__ import annotations

import dataclasses

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from _models_helpers import check_gradients, check_vmap, random_cyclic_history, relative_rms
from scipy.integrate import solve_ivp

from rths_ident.models import BoucWen, BoucWenParams, ElementInputs, PinchingBoucWen, PinchingBoucWenParams
from rths_ident.errors import ParameterError

K, ALPHA, Z_U = 1.0e6, 0.05, 0.01  # N/m, -, m (virgin ultimate z)
ENERGY_SCALE = K * Z_U**2  # J, hysteretic energy of order one yield cycle


def pinched(n=1.0, substeps=4, **changes):
    total = 1.0 / Z_U**n
    base = dict(
        k=K, alpha=ALPHA, beta=0.6 * total, gamma=0.4 * total, n=n,
        delta_nu=0.02 / ENERGY_SCALE, delta_eta=0.03 / ENERGY_SCALE, delta_A=0.005 / ENERGY_SCALE,
        zeta_s=0.8, p=0.5 / ENERGY_SCALE, q=0.1, psi=0.4 * Z_U, delta_psi=0.01 * Z_U / ENERGY_SCALE,
        lam=0.5, substeps=substeps,
    )
    base.update(changes)
    return PinchingBoucWenParams(**base)


@jax.jit
def _run(params, x, v):
    def body(state, inputs):
        return PinchingBoucWen.step(params, state, inputs, 0.0)

    return jax.lax.scan(body, PinchingBoucWen.init(params), ElementInputs(x, v))


def run_states(params, x, v=None):
    x = jnp.asarray(x)
    v = jnp.zeros_like(x) if v is None else jnp.asarray(v)
    state, forces = _run(params, x, v)
    return np.asarray(forces), state


def triangle_path(peaks, points_per_unit):
    """Piecewise-linear displacement through ``peaks`` from 0 (samples exclude 0)."""
    path, start = [], 0.0
    for peak in peaks:
        count = max(2, int(round(abs(peak - start) * points_per_unit)))
        path.append(np.linspace(start, peak, count + 1)[1:])
        start = peak
    return np.concatenate(path)


@pytest.mark.parametrize("n, substeps", [(1.0, 1), (2.5, 4)])
def test_without_pinching_and_degradation_it_is_bouc_wen(n, substeps):
    """ζ_s = 0 and δ_A = δ_ν = δ_η = 0: the same force as ``BoucWen`` with the same
    sub-steps, to round-off (h = ν = η = 1 exactly, whatever p, q, ψ are)."""
    p = pinched(n, substeps, zeta_s=0.0, delta_nu=0.0, delta_eta=0.0, delta_A=0.0)
    reference = BoucWenParams(k=K, alpha=ALPHA, A=1.0, beta=p.beta, gamma=p.gamma, n=n, substeps=substeps)
    x = random_cyclic_history(3, 600, 4 * Z_U)
    np.testing.assert_allclose(
        PinchingBoucWen(p).force_history(x), BoucWen(reference).force_history(x), rtol=1e-13, atol=1e-9
    )
    # pinching with p = 0 never develops (ζ₁ = 0): still Bouc–Wen
    p0 = dataclasses.replace(p, zeta_s=0.9, p=0.0)
    np.testing.assert_allclose(
        PinchingBoucWen(p0).force_history(x), BoucWen(reference).force_history(x), rtol=1e-13, atol=1e-9
    )


def _independent_rhs(params):
    """d(z, ε)/dτ along a path segment of direction s (τ = |x − x_start|), written from
    the equations of Baber & Noori / Foliente (not from the model code)."""
    P = params

    def rhs(_, y, s):
        z, energy = y
        e = max(energy, 0.0)
        A = max(P.A - P.delta_A * e, P.min_A_ratio * P.A)
        nu, eta = 1.0 + P.delta_nu * e, 1.0 + P.delta_eta * e
        zeta1 = P.zeta_s * (1.0 - np.exp(-P.p * e))
        zeta2 = (P.psi + P.delta_psi * e) * (P.lam + zeta1)
        z_u = (A / (nu * (P.beta + P.gamma))) ** (1.0 / P.n)
        h = 1.0 - zeta1 * np.exp(-((z * s - P.q * z_u) / zeta2) ** 2)
        dz_dx = h * (A - nu * abs(z) ** P.n * (P.gamma + P.beta * np.sign(s * z))) / eta
        return [dz_dx * s, (1.0 - P.alpha) * P.k * z * s]

    return rhs


def solve_ivp_force(params, peaks, x):
    """Force at the samples ``x`` of the triangle path through ``peaks``."""
    rhs = _independent_rhs(params)
    y = [0.0, 0.0]
    z_at = np.empty_like(x)
    start, index = 0.0, 0
    for peak in peaks:
        s = np.sign(peak - start)
        length = abs(peak - start)
        count = np.count_nonzero(np.abs(x[index:] - start) <= length + 1e-15) if index < x.size else 0
        # the samples of this segment: until the path turns at ``peak``
        segment = []
        while index < x.size and len(segment) < count:
            segment.append(index)
            index += 1
            if np.isclose(x[index - 1], peak, rtol=0, atol=1e-15):
                break
        taus = np.abs(x[segment] - start)
        sol = solve_ivp(rhs, (0.0, length), y, args=(s,), t_eval=taus, rtol=1e-11, atol=1e-14,
                        method="DOP853", max_step=Z_U / 50)
        z_at[segment] = sol.y[0]
        y = list(sol.y[:, -1])
        start = peak
    return params.alpha * params.k * x + (1.0 - params.alpha) * params.k * z_at


@pytest.mark.parametrize("n", [1.0, 2.0])
def test_agrees_with_solve_ivp_on_a_cyclic_history(n):
    """Growing cycles to ±4 z_u (pinching, strength and stiffness degradation all
    active) against DOP853 (rtol 1e-11) on dz/dx, Δx = z_u/50: relative RMS error
    8.3e-4 (n = 1) / 7.2e-4 (n = 2) with 4 sub-steps, 2.1e-4 / 1.8e-4 with 16 — first
    order in the sub-step size, as the O(Δx/substeps) update should be."""
    p = pinched(n)
    peaks = np.array([1, -1, 2, -2, 3, -3, 4, -4, 0]) * Z_U
    x = triangle_path(peaks, points_per_unit=50 / Z_U)  # Δx = z_u/50
    reference = solve_ivp_force(p, peaks, x)
    e4 = relative_rms(PinchingBoucWen(p).force_history(x), reference)
    e16 = relative_rms(PinchingBoucWen(dataclasses.replace(p, substeps=16)).force_history(x), reference)
    assert e4 < 1.2e-3, e4
    assert e16 < 3e-4, e16
    assert 3.5 < e4 / e16 < 4.5  # first-order convergence
    # the pinching is real on this history: ζ₁ at the end is close to ζ_s
    _, state = run_states(p, x)
    assert 1.0 - np.exp(-p.p * float(state.energy)) > 0.9


def test_zdot_matches_the_equations():
    """``PinchingBoucWen.zdot`` (ż at velocity v) = v · dz/dx of the independent right-hand
    side, at random z, ε and both directions."""
    p = pinched(1.7)
    rhs = _independent_rhs(p)
    rng = np.random.default_rng(7)
    for z, energy, v in zip(rng.uniform(-Z_U, Z_U, 12), rng.uniform(0, 20 * ENERGY_SCALE, 12),
                            rng.normal(size=12)):
        s = 1.0 if v >= 0 else -1.0
        expected = rhs(0.0, [z, energy], s)[0] * s * v
        assert float(PinchingBoucWen.zdot(p, z, v, energy)) == pytest.approx(expected, rel=1e-12, abs=1e-15)


def test_pinching_reduces_the_reloading_tangent_near_z0_by_h():
    """At a committed state with z ≈ 0 on reloading, ∂F/∂x (trial x = committed x, ẋ > 0)
    is αk + (1−α)k h(z₀) (A − ν|z₀|^n(γ + β sgn z₀))/η exactly, with the Foliente h
    computed here from ε; the same state without pinching has h = 1. With ζ_s = 0.8
    after several cycles the reloading stiffness near the origin drops by ~5×."""
    p = pinched(1.0, delta_A=0.0, delta_psi=0.0, q=0.0)
    peaks = np.array([2, -2, 3, -3, 4, -4, 3]) * Z_U
    x = triangle_path(peaks, points_per_unit=100 / Z_U)
    model = PinchingBoucWen(p)
    # drive to the last reversal (−4 z_u), then reload until z crosses 0
    reload_start = np.flatnonzero(np.isclose(x, -4 * Z_U))[0]
    for xi in x[: reload_start + 1]:
        model.update(xi)
    for xi in x[reload_start + 1 :]:
        model.update(xi)
        if float(model.state.z) >= 0.0:
            break
    state = model.state
    z0, energy = float(state.z), float(state.energy)
    assert abs(z0) < 0.05 * Z_U
    e = energy
    zeta1 = p.zeta_s * (1.0 - np.exp(-p.p * e))
    zeta2 = p.psi * (p.lam + zeta1)
    nu, eta = 1.0 + p.delta_nu * e, 1.0 + p.delta_eta * e
    h = 1.0 - zeta1 * np.exp(-((z0 / zeta2) ** 2))
    slope = (1.0 - nu * abs(z0) * (p.gamma + p.beta * np.sign(z0))) / eta
    expected = ALPHA * K + (1.0 - ALPHA) * K * h * slope
    tangent = float(PinchingBoucWen.tangent(p, state, ElementInputs(state.displacement, 1.0), 0.0))
    assert tangent == pytest.approx(expected, rel=1e-10)
    unpinched = dataclasses.replace(p, zeta_s=0.0)
    tangent_unpinched = float(PinchingBoucWen.tangent(unpinched, state, ElementInputs(state.displacement, 1.0), 0.0))
    assert (tangent - ALPHA * K) / (tangent_unpinched - ALPHA * K) == pytest.approx(h, rel=1e-10)
    assert h < 0.3  # the loop is visibly narrowed: reloading stiffness ≤ 30 % near z = 0


def test_energy_is_the_area_of_a_closed_loop():
    """ε = (1−α)k∮z dx = ∮F dx over a closed cycle (αk x is conservative); F from the
    force history, area by the trapezoidal rule. With one sub-step the update uses the same
    rule, so they agree to round-off; with 8 sub-steps to O(Δx²)."""
    p = pinched(1.5, substeps=1)
    peaks = np.array([3, -3, 0]) * Z_U
    x = np.concatenate([[0.0], triangle_path(peaks, points_per_unit=400 / Z_U)])
    force, state = run_states(p, x)
    area = np.trapezoid(force, x)
    assert float(state.energy) == pytest.approx(area, rel=1e-11)
    force, state = run_states(dataclasses.replace(p, substeps=8), x)
    assert float(state.energy) == pytest.approx(np.trapezoid(force, x), rel=1e-5)  # measured 3e-7


def test_large_increments_are_stable_and_bounded():
    """n = 20, increments of 100 z_u: finite, |z| ≤ the virgin z_u (ν ≥ 1 only lowers
    the bound) and a symmetric reversal."""
    p = pinched(20.0, substeps=1)
    x = np.zeros(200)
    x[0], x[1] = 100 * Z_U, -100 * Z_U
    force = PinchingBoucWen(p).force_history(x)
    assert np.all(np.isfinite(force))
    z = (force - ALPHA * K * x) / ((1 - ALPHA) * K)
    assert np.max(np.abs(z)) <= Z_U * (1 + 1e-9)
    coarse = random_cyclic_history(30, 400, 5 * Z_U, max_cycles=20.0)
    assert np.all(np.isfinite(PinchingBoucWen(p).force_history(coarse)))


def test_gradients_match_finite_differences():
    p = pinched(1.5)
    x = random_cyclic_history(5, 250, 3 * Z_U)
    check_gradients(
        PinchingBoucWen, p, x, np.zeros_like(x), 0.0,
        ["k", "alpha", "beta", "gamma", "n", "delta_nu", "delta_eta", "zeta_s", "p", "q", "psi", "lam"],
    )


def test_vmap_equals_loop():
    x = random_cyclic_history(6, 120, 3 * Z_U)
    check_vmap(PinchingBoucWen, [pinched(1.0), pinched(1.0, zeta_s=0.5, q=0.2)], x, np.zeros_like(x), 0.0)


@pytest.mark.parametrize(
    "changes, match",
    [
        ({"zeta_s": 1.0}, r"zeta_s = 1.0 is outside the allowed range \[0, 1\)"),
        ({"psi": 0.0}, r"psi = 0.0 is outside the allowed range \(0, inf\) m"),
        ({"delta_nu": -1.0}, "delta_nu"),
        ({"q": 1.5}, "q = 1.5"),
        ({"n": 0.5}, "n = 0.5"),
        ({"k": -1.0}, "k = -1.0"),
        ({"lam": 0.0}, "lam"),
        ({"gamma": -200.0, "beta": 100.0}, "beta \\+ gamma > 0"),
        ({"substeps": 0}, "substeps = 0"),
    ],
)
def test_invalid_parameters_raise(changes, match):
    with pytest.raises(ParameterError, match=match):
        pinched(**changes)
