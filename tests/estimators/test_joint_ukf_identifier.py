"""The generic joint state–parameter UKF identifier (estimators/joint_ukf_identifier.py).

Truth records: the Bouc–Wen one is the ODE dz/dt = A ẋ − β|ẋ||z|^{n−1}z − γ ẋ|z|^n
integrated by scipy (DOP853) under an analytic x(t), independent of the library; the
degrading Bouc–Wen and bilinear ones are the library's elements (as in
test_boucwen_ukf_identifier.py). The filter itself is checked against filterpy's UKF
driven with the same fx/hx.
"""

import dataclasses

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from filterpy.kalman import MerweScaledSigmaPoints as FilterpyPoints
from filterpy.kalman import UnscentedKalmanFilter as FilterpyUKF
from scipy.integrate import solve_ivp

import rths_ident  # noqa: F401  (x64)
from rths_ident.errors import ParameterError
from rths_ident.estimators import joint_ukf_identifier as ju
from rths_ident.protocols import IdentifierInputs, OnlineIdentifier
from rths_ident.estimators.online_identifier import run_identifier
from rths_ident.models import BilinearKinematic, BilinearParams, BoucWen, BoucWenParams, DegradingBoucWen

DT = 1e-3
STEPS = 8000
T = np.arange(STEPS + 1) * DT
BW_TRUE = np.array([1.34e6, 0.04, 30.0, 20.0])  # k N/m, α, β 1/m, γ 1/m (z_u = 2 cm)
BW_FIELDS = ("k", "alpha", "beta", "gamma")


def _bw_params(values, substeps=4):
    k, alpha, beta, gamma = values
    return BoucWenParams(k=k, alpha=alpha, A=1.0, beta=beta, gamma=gamma, n=1.0, substeps=substeps)


def _ramp_sine(amplitude):
    """x(t) = amplitude·sin(2π 0.8 t)·min(t/4, 1) and its exact derivative."""
    w = 2 * np.pi * 0.8

    def x_v(t):
        ramp, dramp = np.minimum(t / 4, 1.0), np.where(t < 4, 0.25, 0.0)
        return amplitude * np.sin(w * t) * ramp, amplitude * (w * np.cos(w * t) * ramp + np.sin(w * t) * dramp)

    return x_v


@pytest.fixture(scope="module")
def boucwen_record():
    x_v = _ramp_sine(0.08)  # 4 z_u
    k, alpha, beta, gamma = BW_TRUE

    def rhs(t, z):
        _, v = x_v(t)
        return v - beta * abs(v) * z[0] - gamma * v * abs(z[0])  # A = 1, n = 1

    sol = solve_ivp(rhs, (0.0, T[-1]), [0.0], t_eval=T, method="DOP853", rtol=1e-10, atol=1e-13, max_step=2e-3)
    x, v = x_v(T)
    force = alpha * k * x + (1 - alpha) * k * sol.y[0]
    return x, v, force


def test_protocol_shape():
    ident = ju.joint_ukf_online_identifier(BoucWen, _bw_params(0.75 * BW_TRUE), BW_FIELDS, force_noise_std=100.0)
    assert isinstance(ident, OnlineIdentifier)
    assert ident.param_names == BW_FIELDS and ident.param_units == ("N/m", "-", "1/m^n", "1/m^n")
    est = ident.estimate(ident.params, ident.initial_state())
    np.testing.assert_allclose(est.theta, 0.75 * BW_TRUE, rtol=1e-14)
    # log coordinates: relative std √(exp(0.3²) − 1) of the default parameter_std 0.3
    np.testing.assert_allclose(est.relative_std, np.sqrt(np.expm1(0.09)), rtol=1e-12)
    assert not bool(est.converged)


def test_recovers_boucwen_parameters_from_noisy_record(boucwen_record):
    x, v, force = boucwen_record
    noise = 0.01 * np.std(force)
    measured = force + noise * np.random.default_rng(3).standard_normal(force.shape)
    ident = ju.joint_ukf_online_identifier(BoucWen, _bw_params(0.75 * BW_TRUE), BW_FIELDS,
                                           force_noise_std=noise, parameter_std=0.5)
    final, (_, estimates) = jax.jit(lambda s: run_identifier(ident, s, x[1:], v[1:], measured[1:], DT))(
        ident.initial_state())
    theta = np.asarray(estimates.theta[-1])
    error = theta / BW_TRUE - 1
    std = np.asarray(estimates.relative_std[-1])
    # stated accuracy: every parameter within 2 % of the truth (25 % low guesses)
    assert np.all(np.abs(error) < 0.02), error
    # the reported std is a real confidence: the error is within 4 σ, and σ < 2 %
    assert np.all(np.abs(error) < 4 * std) and np.all(std < 0.02), (error, std)
    converged = np.asarray(estimates.converged)
    assert not converged[0] and converged[-1]
    first = np.argmax(converged)
    assert np.all(converged[first:])  # the rule latches while the std stays small (hold 0.5 s)
    # converged only after hold_time with every relative std ≤ the tolerance
    stds = np.asarray(estimates.relative_std)
    window = int(round(0.5 / DT))
    assert np.all(stds[first - window + 1:first + 1] <= 0.02)


def test_degrading_boucwen_as_test_boucwen_ukf_identifier_asserts():
    """The assertions of test_boucwen_ukf_identifier's degrading identification, through
    the generic identifier (log coordinates) over the DegradingBoucWen element."""
    case4 = DegradingBoucWen.preset_params("case4", units="SI")
    names = ("k_e", "f_y0", "stiffness_degradation", "strength_degradation")
    true = np.array([getattr(case4, n) for n in names])
    yield_displacement = case4.f_y0 / ((1 - case4.alpha_sv) * case4.k_e)
    x = 4 * yield_displacement * np.sin(2 * np.pi * 0.8 * T) * np.minimum(T / 4, 1)
    v = np.gradient(x, DT)
    force = DegradingBoucWen(case4).force_history(x[1:], velocity=v[1:])
    noisy = force + 0.01 * np.std(force) * np.random.default_rng(0).standard_normal(force.shape)
    guess = dataclasses.replace(case4, substeps=2, **{n: 0.7 * getattr(case4, n) for n in names})
    ident = ju.joint_ukf_online_identifier(DegradingBoucWen, guess, names, force_noise_std=0.01 * np.std(force),
                                           parameter_std=0.5, convergence_tolerance=0.03)
    assert not bool(ident.estimate(ident.params, ident.initial_state()).converged)
    _, (outputs, estimates) = jax.jit(lambda s: run_identifier(ident, s, x[1:], v[1:], noisy, DT))(
        ident.initial_state())
    errors = np.asarray(estimates.theta[-1]) / true - 1
    # measured: +0.015 %, −0.08 %, +0.07 %, −1.8 %; relative std 0.12 %, 0.53 %, 0.34 %, 2.7 %
    assert np.all(np.abs(errors) < 0.03), errors
    assert bool(estimates.converged[-1])
    assert float(outputs.model_state.dissipated_energy[-1]) > 100.0  # J: the degradation was active


def test_bilinear_and_vmap_and_cond():
    """Any model class: the bilinear element's k, f_y, b; the protocol under vmap (two
    noise seeds) and lax.cond (an identifier sampling every other step)."""
    true = BilinearParams(k=1.34e6, fy=2.24e4, b=0.04)
    guess = BilinearParams(k=1.0e6, fy=1.6e4, b=0.05)
    x, v = _ramp_sine(0.08)(T)
    force = BilinearKinematic(true).force_history(x[1:], dt=DT)
    noise = 0.01 * np.std(force)
    ident = ju.joint_ukf_online_identifier(BilinearKinematic, guess, ("k", "fy", "b"), force_noise_std=noise,
                                           parameter_std=0.5)
    seeds = np.stack([force + noise * np.random.default_rng(s).standard_normal(force.shape) for s in (1, 2)])

    def one(measured):
        _, (_, est) = run_identifier(ident, ident.initial_state(), x[1:], v[1:], measured, DT)
        return est.theta[-1]

    thetas = np.asarray(jax.jit(jax.vmap(one))(seeds))
    np.testing.assert_allclose(thetas / np.array([1.34e6, 2.24e4, 0.04]), 1.0, atol=0.01)

    def every_other(state, sample):
        i, xi, vi, fi = sample
        state = jax.lax.cond(i % 2 == 1,
                             lambda s: ident.step(ident.params, s, IdentifierInputs(xi, vi, fi), 2 * DT)[0],
                             lambda s: s, state)
        return state, None

    samples = (jnp.arange(STEPS), x[1:], v[1:], seeds[0])
    state, _ = jax.jit(lambda s: jax.lax.scan(every_other, s, samples))(ident.initial_state())
    np.testing.assert_allclose(ident.estimate(ident.params, state).theta / np.array([1.34e6, 2.24e4, 0.04]), 1.0,
                               atol=0.02)


def test_equals_filterpy_with_the_same_fx_hx(boucwen_record):
    """Over 300 steps the identifier's posterior equals filterpy's UKF driven with the
    identifier's own transition/measurement (an independent UKF implementation)."""
    x, v, force = boucwen_record
    steps = 300
    noise = 0.01 * np.std(force)
    measured = force + noise * np.random.default_rng(5).standard_normal(force.shape)
    params = ju.make_params(BoucWen, _bw_params(0.75 * BW_TRUE, substeps=2), BW_FIELDS, force_noise_std=noise,
                            parameter_std=0.5, sigma_alpha=0.1)
    state = ju.init(params)
    n = state.filter.x.shape[0]
    fx_jit = jax.jit(lambda s, x0, x1, v1: ju.transition(s, DT, params, x0, x1, v1))
    hx_jit = jax.jit(lambda s, x1, v1: ju.measurement(s, params, x1, v1, DT))

    def fx(s, dt, x0, x1, v1):
        return np.asarray(fx_jit(s, x0, x1, v1))

    def hx(s, x1, v1):
        return np.asarray(hx_jit(s, x1, v1))

    ref = FilterpyUKF(n, 1, DT, hx, fx, FilterpyPoints(n, 0.1, 2.0, 0.0))
    ref.x = np.asarray(state.filter.x).copy()
    ref.P = np.asarray(state.filter.P).copy()
    ref.Q = np.diag(np.asarray(params.diffusion) ** 2) * DT
    ref.R = np.array([[noise**2]])
    step = jax.jit(ju.step)
    for k in range(1, steps + 1):
        ref.predict(x0=x[k - 1], x1=x[k], v1=v[k])
        ref.update(measured[k : k + 1], x1=x[k], v1=v[k])
        state, _ = step(params, state, IdentifierInputs(x[k], v[k], measured[k]), DT)
    scale = np.abs(ref.x) + np.sqrt(np.diag(ref.P))
    assert np.max(np.abs(np.asarray(state.filter.x) - ref.x) / scale) < 1e-9
    np.testing.assert_allclose(np.asarray(state.filter.P), ref.P, rtol=1e-7, atol=1e-12 * np.max(np.abs(ref.P)))
    assert abs(float(state.filter.x[1]) - 0.0) > 0.01  # the parameters did move (not a trivial agreement)


def test_bad_inputs_name_the_problem():
    guess = _bw_params(0.75 * BW_TRUE)
    with pytest.raises(ParameterError, match="fields must be"):
        ju.make_params(BoucWen, guess, ("k", "stiffness"), force_noise_std=1.0)
    with pytest.raises(ParameterError, match="fields must be"):
        ju.make_params(BoucWen, guess, ("substeps",), force_noise_std=1.0)
    with pytest.raises(ParameterError, match="guess_params must be a BoucWenParams"):
        ju.make_params(BoucWen, BilinearParams(k=1.0, fy=1.0, b=0.0), ("k",), force_noise_std=1.0)
    with pytest.raises(ParameterError, match="force_noise_std"):
        ju.joint_ukf_online_identifier(BoucWen, guess, ("k",))
    with pytest.raises(ParameterError, match="parameter_reference"):
        ju.make_params(BoucWen, _bw_params([1e6, 0.0, 30.0, 20.0]), BW_FIELDS, force_noise_std=1.0)
    with pytest.raises(ParameterError, match="parameter_std"):
        ju.make_params(BoucWen, guess, BW_FIELDS, force_noise_std=1.0, parameter_std=[0.3, 0.3])
    with pytest.raises(ParameterError, match="coordinates"):
        ju.make_params(BoucWen, guess, BW_FIELDS, force_noise_std=1.0, coordinates="exp")


def test_modified_lugre_column_through_the_generic_identifier():
    """The LuGre column (seed 001 Table 2.1) from Scenario 2 guesses (all −30 %), 0.5 %
    force noise, 2 kHz: σ0, F_C, σ3 within 1 % (measured ≤ 0.07 %) with a reported std
    that covers the error (≤ 4σ)."""
    from rths_ident.models import ModifiedLuGre

    fs = 2000.0
    true = ModifiedLuGre.params_from_physical(k=1.34e6, Fy=2.24e4)
    names = ("sigma0", "Fc", "sigma3")
    guess = dataclasses.replace(true, **{n: 0.7 * getattr(true, n) for n in names})
    t = np.arange(1, int(20 * fs) + 1) / fs
    rate = 5 * (2.24e4 / 1.34e6) / 20
    x, v = rate * t * np.sin(np.pi * t), rate * (np.sin(np.pi * t) + t * np.pi * np.cos(np.pi * t))
    force = ModifiedLuGre(true).force_history(x, velocity=v)
    noise = 0.005 * np.sqrt(np.mean(force**2))
    measured = force + noise * np.random.default_rng(0).standard_normal(force.size)
    ident = ju.joint_ukf_online_identifier(ModifiedLuGre, guess, names, force_noise_std=noise,
                                           state_scale=float(true.Fc / true.sigma0))  # z in units of z_ss
    _, (_, estimates) = jax.jit(lambda s: run_identifier(ident, s, x, v, measured, 1 / fs))(ident.initial_state())
    error = np.asarray(estimates.theta[-1]) / np.array([getattr(true, n) for n in names]) - 1
    std = np.asarray(estimates.relative_std[-1])
    assert np.all(np.abs(error) < 0.01) and np.all(np.abs(error) < 4 * std), (error, std)
    assert bool(estimates.converged[-1])


def test_initial_model_state_and_layout():
    """The filter state is [model state entries without ``displacement`` / scale, u]: for
    the degrading Bouc–Wen (r, H), starting from a given (r, H) and displacement."""
    case4 = DegradingBoucWen.preset_params("case4", units="SI")
    params = ju.make_params(DegradingBoucWen, case4, ("k_e", "f_y0"), force_noise_std=10.0,
                            state_scale={"hysteretic_force": 100.0, "dissipated_energy": 2.0},
                            initial_state={"hysteretic_force": 50.0, "dissipated_energy": 3.0})
    assert params.state_layout == (("hysteretic_force", ()), ("dissipated_energy", ()))
    state = ju.init(params, displacement=0.01)
    np.testing.assert_allclose(state.filter.x, [0.5, 1.5, 0.0, 0.0])  # log coordinates: u = 0 at the guess
    assert float(state.previous_displacement) == 0.01
    model_state, theta = ju._split(params, state.filter.x, 0.01)
    assert float(model_state.hysteretic_force) == 50.0 and float(model_state.dissipated_energy) == 3.0
    np.testing.assert_allclose(theta, [case4.k_e, case4.f_y0], rtol=1e-15)
    with pytest.raises(ParameterError, match="initial_state: unknown entries"):
        ju.make_params(DegradingBoucWen, case4, ("k_e",), force_noise_std=10.0, initial_state={"z": 1.0})
