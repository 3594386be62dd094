"""Asymmetric Bouc–Wen–Baber–Noori: reduction to ``PinchingBoucWen`` (r = 1, ζ_s⁻ = ζ_s),
the closed form of monotonic loading on each side (n = 1), an independent
``scipy.integrate.solve_ivp`` integration of dz/dx with every mechanism on, and
parameter errors."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from _models_helpers import random_cyclic_history, relative_rms
from scipy.integrate import solve_ivp

from rths_ident.errors import ParameterError
from rths_ident.models import AsymmetricBoucWen, AsymmetricBoucWenParams, PinchingBoucWen, PinchingBoucWenParams

K, ALPHA, Z_U = 1.0e6, 0.05, 0.01  # N/m, -, m (virgin ultimate z on the positive side)
ENERGY_SCALE = K * Z_U**2  # J


def asymmetric(n=1.0, substeps=4, **changes):
    total = 1.0 / Z_U**n
    base = dict(
        k=K, alpha=ALPHA, beta=0.6 * total, gamma=0.4 * total, n=n,
        delta_nu=0.02 / ENERGY_SCALE, delta_eta=0.03 / ENERGY_SCALE, delta_A=0.005 / ENERGY_SCALE,
        zeta_s=0.8, p=0.5 / ENERGY_SCALE, q=0.1, psi=0.4 * Z_U, delta_psi=0.01 * Z_U / ENERGY_SCALE,
        lam=0.5, strength_ratio=0.6, zeta_s_negative=0.4, substeps=substeps,
    )
    base.update(changes)
    return AsymmetricBoucWenParams(**base)


def triangle_path(peaks, points_per_unit):
    """Piecewise-linear displacement through ``peaks`` from 0 (samples exclude 0)."""
    path, start = [], 0.0
    for peak in peaks:
        count = max(2, int(round(abs(peak - start) * points_per_unit)))
        path.append(np.linspace(start, peak, count + 1)[1:])
        start = peak
    return np.concatenate(path)


@pytest.mark.parametrize("n, substeps", [(1.0, 1), (2.5, 4)])
def test_with_equal_sides_it_is_the_pinching_model(n, substeps):
    """r = 1 and ζ_s⁻ = ζ_s: the force of ``PinchingBoucWen`` with the same fields, to round-off."""
    p = asymmetric(n, substeps, strength_ratio=1.0, zeta_s_negative=0.8)
    fields = {f.name: getattr(p, f.name) for f in dataclasses.fields(PinchingBoucWenParams)}
    x = random_cyclic_history(5, 800, 4 * Z_U)
    np.testing.assert_allclose(AsymmetricBoucWen(p).force_history(x),
                               PinchingBoucWen(PinchingBoucWenParams(**fields)).force_history(x),
                               rtol=1e-12, atol=1e-8)


@pytest.mark.parametrize("side", [1.0, -1.0])
def test_monotonic_loading_on_each_side_equals_the_closed_form(side):
    """No degradation, no pinch, n = 1, loading from rest to ±3 z_u: on the positive side
    z = (A/(β+γ))(1 − e^{−(β+γ)x}); on the negative side σ = 1/r scales β and γ, so
    z = −r (A/(β+γ))(1 − e^{−(β+γ)|x|/r}): the strength is r times the positive one."""
    p = asymmetric(1.0, 64, delta_nu=0.0, delta_eta=0.0, delta_A=0.0, zeta_s=0.0, zeta_s_negative=0.0)
    x = side * np.linspace(0.0, 3.0 * Z_U, 601)[1:]
    total = p.beta + p.gamma
    scale = 1.0 if side > 0 else p.strength_ratio
    z = side * scale * (p.A / total) * (1.0 - np.exp(-total * np.abs(x) / scale))
    expected = p.alpha * p.k * x + (1.0 - p.alpha) * p.k * z
    force = AsymmetricBoucWen(p).force_history(x)
    # backward Euler, 64 sub-steps of Δx = z_u/12800: O(Δx) error
    assert np.max(np.abs(force - expected)) < 1e-4 * np.max(np.abs(expected))
    if side < 0:  # the pull side saturates at r times the push side's hysteretic force
        assert abs(force[-1] - p.alpha * p.k * x[-1]) == pytest.approx(
            p.strength_ratio * (1 - p.alpha) * p.k * Z_U * (1 - np.exp(-3 / p.strength_ratio)), rel=1e-4)


def _independent_rhs(P):
    """d(z, ε)/dτ along a path segment of direction s (τ = |x − x_start|), written from
    the module's equations (Song & Der Kiureghian's two-sided shape coefficient on the
    Baber–Noori–Foliente model), not from the model code."""

    def rhs(_, y, s):
        z, energy = y
        e = max(energy, 0.0)
        A = max(P.A - P.delta_A * e, P.min_A_ratio * P.A)
        nu, eta = 1.0 + P.delta_nu * e, 1.0 + P.delta_eta * e
        severity = P.zeta_s if s > 0 else P.zeta_s_negative
        zeta1 = severity * (1.0 - np.exp(-P.p * e))
        zeta2 = (P.psi + P.delta_psi * e) * (P.lam + zeta1)
        z_u = (A / (nu * (P.beta + P.gamma))) ** (1.0 / P.n) * (1.0 if s > 0 else P.strength_ratio)
        h = 1.0 - zeta1 * np.exp(-((z * s - P.q * z_u) / zeta2) ** 2)
        sigma = 1.0 if z >= 0 else P.strength_ratio ** (-P.n)
        dz_dx = h * (A - nu * sigma * abs(z) ** P.n * (P.gamma + P.beta * np.sign(s * z))) / eta
        return [dz_dx * s, (1.0 - P.alpha) * P.k * z * s]

    return rhs


def solve_ivp_force(params, peaks, x):
    """Force at the samples ``x`` of the triangle path through ``peaks`` (DOP853, 1e-11)."""
    rhs = _independent_rhs(params)
    y, z_at, start, index = [0.0, 0.0], np.empty_like(x), 0.0, 0
    for peak in peaks:
        s = np.sign(peak - start)
        segment = []
        while index < x.size:
            segment.append(index)
            index += 1
            if np.isclose(x[index - 1], peak, rtol=0, atol=1e-15):
                break
        taus = np.abs(x[segment] - start)
        sol = solve_ivp(rhs, (0.0, abs(peak - start)), y, args=(s,), t_eval=taus, rtol=1e-11, atol=1e-14,
                        method="DOP853", max_step=Z_U / 50)
        z_at[segment] = sol.y[0]
        y = list(sol.y[:, -1])
        start = peak
    return params.alpha * params.k * x + (1.0 - params.alpha) * params.k * z_at


@pytest.mark.parametrize("n", [1.0, 2.0])
def test_agrees_with_solve_ivp_on_a_cyclic_history(n):
    """Growing cycles to ±4 z_u, both sides' strength and pinch different, degradation on:
    against DOP853 on dz/dx. The update is first order in the sub-step (4 → 16 sub-steps
    divides the error by about 4)."""
    p = asymmetric(n)
    peaks = np.array([1, -1, 2, -2, 3, -3, 4, -4, 0]) * Z_U
    x = triangle_path(peaks, points_per_unit=50 / Z_U)
    reference = solve_ivp_force(p, peaks, x)
    e4 = relative_rms(AsymmetricBoucWen(p).force_history(x), reference)
    e16 = relative_rms(AsymmetricBoucWen(dataclasses.replace(p, substeps=16)).force_history(x), reference)
    assert e4 < 2e-3, e4
    assert e16 < 5e-4, e16
    assert 3.0 < e4 / e16 < 5.0
    # the asymmetry is real on this history: the negative peak force is well below the positive one
    force = AsymmetricBoucWen(p).force_history(x)
    assert -force.min() < 0.85 * force.max()


@pytest.mark.parametrize(
    "changes, match",
    [({"strength_ratio": 0.0}, "strength_ratio"), ({"zeta_s_negative": 1.0}, "zeta_s_negative"),
     ({"gamma": -200.0, "beta": 100.0}, "beta \\+ gamma > 0"), ({"substeps": 0}, "substeps = 0")],
)
def test_invalid_parameters_raise(changes, match):
    with pytest.raises(ParameterError, match=match):
        asymmetric(**changes)
