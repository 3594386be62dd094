"""Joint state–parameter UKF identification of a Bouc–Wen SDOF.

Truth: rths_ident.models.BoucWen (backward-Euler hysteresis in displacement) in an SDOF
integrated with 20 symplectic-Euler sub-steps per sample; the identifier's own filter
model (RK4 on the continuous-time equations) is a different discretisation.
"""

import numpy as np
import pytest
from filterpy.kalman import MerweScaledSigmaPoints as FilterpyPoints
from filterpy.kalman import UnscentedKalmanFilter as FilterpyUKF

import jax

from rths_ident.errors import ParameterError
from rths_ident.estimators.boucwen_ukf_identifier import (
    PARAMETER_NAMES,
    BoucWenSDOFConstants,
    BoucWenUKFIdentifier,
    boucwen_sdof_rate,
)
from rths_ident.estimators.joint_ukf_presets import DegradingBoucWenUKFIdentifier
from rths_ident.models import BoucWen, BoucWenParams, DegradingBoucWen, DegradingBoucWenState, ElementInputs

MASS = 5000.0  # kg
K_TRUE = 1.34e6  # N/m (seed 001 default stiffness)
DAMPING = 2 * 0.02 * np.sqrt(K_TRUE * MASS)  # ζ = 2 %
TRUE = {"k": K_TRUE, "alpha": 0.04, "beta": 30.0, "gamma": 20.0}  # z_u = 1/(β+γ) = 2 cm
GUESS = {"k": 1.0e6, "alpha": 0.08, "beta": 20.0, "gamma": 10.0}
DT = 1 / 200
N_STEPS = 1200  # 6 s
FINE = 20


def external_force(t):
    """Two-tone force [N] with a 2 s ramp; yields the specimen ~4× z_u."""
    return 25e3 * np.sin(2 * np.pi * 1.1 * t) * np.minimum(t / 2, 1) + 10e3 * np.sin(2 * np.pi * 3.7 * t)


@pytest.fixture(scope="module")
def truth():
    params = BoucWenParams(k=K_TRUE, alpha=TRUE["alpha"], A=1.0, beta=TRUE["beta"], gamma=TRUE["gamma"], n=1.0)
    h = DT / FINE
    t_fine = np.arange(N_STEPS * FINE) * h

    @jax.jit
    def simulate(p_fine):
        def body(carry, p):
            x, v, force, state = carry
            v = v + h * (p - DAMPING * v - force) / MASS
            x = x + h * v
            state, force = BoucWen.step(params, state, ElementInputs(x, v), h)
            return (x, v, force, state), (x, v, force)

        return jax.lax.scan(body, (0.0, 0.0, 0.0, BoucWen.init(params)), p_fine)[1]

    x, v, force = (np.asarray(a) for a in simulate(external_force(t_fine)))
    at_samples = np.arange(1, N_STEPS + 1) * FINE - 1
    # force samples at t_0 … t_N, at the fine-step instants that produced each sample
    p = external_force(np.concatenate([[0.0], t_fine[at_samples]]))
    x, v, force = x[at_samples], v[at_samples], force[at_samples]
    acceleration = (p[1:] - DAMPING * v - force) / MASS
    return {"p": p, "displacement": x, "restoring_force": force, "acceleration": acceleration}


def noisy(signal, rng):
    return signal + 0.01 * np.std(signal) * rng.standard_normal(signal.shape)


@pytest.mark.parametrize("channel", ["restoring_force", "acceleration"])
def test_identifies_parameters_from_one_percent_noise(truth, channel):
    rng = np.random.default_rng(7)
    z = noisy(truth[channel], rng)
    ident = BoucWenUKFIdentifier(
        MASS, DAMPING, DT, GUESS, parameter_std=0.5, measured=(channel,),
        measurement_std=[0.01 * np.std(truth[channel])], external_force0=truth["p"][0],
    )  # fmt: skip
    assert not ident.converged
    ident.run(z[:, None], truth["p"][1:])
    parameters = dict(zip(PARAMETER_NAMES, ident.theta))
    errors = {name: parameters[name] / TRUE[name] - 1.0 for name in TRUE}
    # measured (seed 7): |error| ≤ 0.85 % (force) and ≤ 0.41 % (acceleration)
    assert all(abs(e) < 0.02 for e in errors.values()), errors
    assert ident.converged
    assert np.all((0 < ident.relative_std) & (ident.relative_std < 0.02))
    np.testing.assert_allclose(ident.relative_std, np.sqrt(np.diag(ident.P)[3:]) / np.abs(ident.theta), rtol=1e-12)
    tolerance = 0.02 * np.ptp(truth["displacement"])
    assert ident.x[0] == pytest.approx(truth["displacement"][-1], abs=tolerance)
    assert ident.estimates.theta.shape == (N_STEPS, 4)


def test_filter_model_z_rate_is_boucwens():
    """The filter's ż equals rths_ident.models.BoucWen.zdot (written independently)."""
    rng = np.random.default_rng(3)
    for n in (1.0, 2.0, 3.5):
        params = BoucWenParams(k=K_TRUE, alpha=0.04, A=1.2, beta=30.0, gamma=-10.0, n=n)
        constants = BoucWenSDOFConstants(MASS, DAMPING, 1.2, n)
        for _ in range(5):
            x, v, z = rng.normal(0, [0.05, 0.5, 0.02])
            s = np.array([x, v, z, K_TRUE, 0.04, 30.0, -10.0])
            rate = np.asarray(boucwen_sdof_rate(s, 1000.0, constants))
            assert rate[2] == pytest.approx(float(BoucWen.zdot(params, z, v)), rel=1e-12)
            force = float(BoucWen.force(params, x, z))
            assert rate[1] == pytest.approx((1000.0 - DAMPING * v - force) / MASS, rel=1e-12)
            assert rate[0] == v and np.all(rate[3:] == 0.0)


def numpy_filter_model(n_exponent, substeps=4):
    """The identifier's filter model again, in numpy, for filterpy."""

    def rate(s, p):
        x, v, z, k, alpha, beta, gamma = s
        force = alpha * k * x + (1 - alpha) * k * z
        z_rate = v - beta * abs(v) * abs(z) ** (n_exponent - 1) * z - gamma * v * abs(z) ** n_exponent
        return np.array([v, (p - DAMPING * v - force) / MASS, z_rate, 0, 0, 0, 0])

    def fx(s, dt, p0, p1):
        h = dt / substeps
        for i in range(substeps):
            pa, pm, pb = (p0 + (p1 - p0) * f / substeps for f in (i, i + 0.5, i + 1))
            k1 = rate(s, pa)
            k2 = rate(s + h / 2 * k1, pm)
            k3 = rate(s + h / 2 * k2, pm)
            k4 = rate(s + h * k3, pb)
            s = s + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)
        return s

    def hx(s):
        x, _, z, k, alpha = s[:5]
        return np.array([alpha * k * x + (1 - alpha) * k * z])

    return fx, hx


def test_online_filter_equals_filterpy_with_the_same_model(truth):
    steps = 60
    rng = np.random.default_rng(11)
    z = noisy(truth["restoring_force"][:steps], rng)
    std = 0.01 * np.std(truth["restoring_force"])
    ident = BoucWenUKFIdentifier(MASS, DAMPING, DT, GUESS, 0.5, ("restoring_force",), [std])
    fx, hx = numpy_filter_model(1.0)
    ref = FilterpyUKF(7, 1, DT, hx, fx, FilterpyPoints(7, 1e-2, 2.0, 0.0))
    ref.x = ident.x.copy()
    ref.P = ident.P.copy()
    ref.Q = np.asarray(ident.params.ukf.process_noise_cov).copy()
    ref.R = np.array([[std**2]])
    p = truth["p"]
    for k in range(steps):
        ref.predict(p0=p[k], p1=p[k + 1])
        ref.update(z[k : k + 1])
        ident.update([z[k]], p[k + 1])  # the online path (the scan is
        # checked against the truth in the identification test)
    scale = np.abs(ref.x) + np.sqrt(np.diag(ref.P))
    assert np.max(np.abs(ident.x - ref.x) / scale) < 1e-6


def test_bad_inputs_raise_clear_errors():
    with pytest.raises(ParameterError, match="mass"):
        BoucWenUKFIdentifier(0.0, DAMPING, DT, GUESS)
    with pytest.raises(ParameterError, match="initial_guess lacks"):
        BoucWenUKFIdentifier(MASS, DAMPING, DT, {"k": 1.0})
    with pytest.raises(ParameterError, match="outside the bounds"):
        BoucWenUKFIdentifier(MASS, DAMPING, DT, {**GUESS, "alpha": 1.5})
    with pytest.raises(ValueError, match="measured must be"):
        BoucWenUKFIdentifier(MASS, DAMPING, DT, GUESS, measured=("strain",))
    with pytest.raises(ParameterError, match="measurement_std"):
        two = ("displacement", "restoring_force")
        BoucWenUKFIdentifier(MASS, DAMPING, DT, GUESS, measured=two, measurement_std=[1.0])
    ident = BoucWenUKFIdentifier(MASS, DAMPING, DT, GUESS)
    with pytest.raises(ParameterError, match="equal length"):
        ident.run(np.zeros((10, 1)), np.zeros(9))
    with pytest.raises(ParameterError, match="parameter_std must be positive"):
        DegradingBoucWenUKFIdentifier(
            DT, {"k_e": 1e5, "f_y0": 1e3, "stiffness_degradation": 0.0, "strength_degradation": 0.0},
            0.3, alpha_sv=0.5, N=1.5, eta1=0.25, eta2=0.75, force_std=1.0,
        )  # fmt: skip


# --- degrading variant (seed 000 Case 4 specimen, displacement-driven) ----------------

CASE4 = DegradingBoucWen.preset_params("case4", units="SI")
DEGRADING_TRUE = {
    "k_e": CASE4.k_e,
    "f_y0": CASE4.f_y0,
    "stiffness_degradation": CASE4.stiffness_degradation,
    "strength_degradation": CASE4.strength_degradation,
}


def test_degrading_identification_from_one_percent_noise():
    dt, steps = 1e-3, 8000
    t = np.arange(steps + 1) * dt
    yield_displacement = CASE4.f_y0 / ((1 - CASE4.alpha_sv) * CASE4.k_e)
    x = 4 * yield_displacement * np.sin(2 * np.pi * 0.8 * t) * np.minimum(t / 4, 1)
    v = np.gradient(x, dt)
    force = DegradingBoucWen(CASE4).force_history(x[1:], velocity=v[1:])
    rng = np.random.default_rng(0)
    noisy_force = noisy(force, rng)
    guess = {name: 0.7 * value for name, value in DEGRADING_TRUE.items()}
    ident = DegradingBoucWenUKFIdentifier(
        dt, guess, 0.5, alpha_sv=CASE4.alpha_sv, N=CASE4.N, eta1=CASE4.eta1, eta2=CASE4.eta2,
        k_h=CASE4.k_h, c_e=CASE4.c_e, force_std=0.01 * np.std(force), convergence_tolerance=0.03,
    )  # fmt: skip
    assert not ident.converged
    ident.run(x[1:], v[1:], noisy_force)  # the identifier starts at x[0] = 0
    parameters = dict(zip(ident.param_names, ident.theta))
    errors = {name: parameters[name] / DEGRADING_TRUE[name] - 1.0 for name in DEGRADING_TRUE}
    # measured (8 s): k_e +0.005 %, f_y0 −0.14 %, stiffness deg. +0.15 %, strength deg. −1.4 %;
    # relative std 0.09 %, 0.33 %, 0.30 %, 2.0 %
    assert all(abs(e) < 0.03 for e in errors.values()), errors
    assert ident.converged
    assert float(ident.model_state.dissipated_energy) > 100.0  # J dissipated: the degradation was active


def test_degrading_online_steps_equal_the_scan():
    """update() feeds the same inputs as run() (the previous displacement carried over)."""
    dt, steps = 1e-3, 12
    x = 0.004 * np.sin(2 * np.pi * 5.0 * dt * np.arange(steps + 1))
    v = np.gradient(x, dt)
    force = DegradingBoucWen(CASE4).force_history(x[1:], velocity=v[1:])
    kwargs = dict(alpha_sv=CASE4.alpha_sv, N=CASE4.N, eta1=CASE4.eta1, eta2=CASE4.eta2, force_std=5.0)
    guess = {name: 0.8 * value for name, value in DEGRADING_TRUE.items()}
    batch = DegradingBoucWenUKFIdentifier(dt, guess, 0.5, **kwargs)
    online = DegradingBoucWenUKFIdentifier(dt, guess, 0.5, **kwargs)
    batch.run(x[1:], v[1:], force)
    for k in range(steps):
        online.update(x[k + 1], v[k + 1], force[k])
    np.testing.assert_allclose(online.x, batch.x, rtol=1e-9)
    assert float(online.model_state.hysteretic_force) != 0.0
    # the same settings through the online-identifier protocol (generic core)
    from rths_ident.estimators.online_identifier import run_identifier

    protocol = DegradingBoucWenUKFIdentifier(dt, guess, 0.5, **kwargs).functions
    assert protocol.name == "degrading-bouc-wen"
    state, (_, estimates) = run_identifier(protocol, protocol.initial_state(), x[1:], v[1:], force, dt)
    np.testing.assert_allclose(np.asarray(state.filter.x), batch.x, rtol=1e-9)
    np.testing.assert_allclose(np.asarray(estimates.theta[-1]), batch.x[2:], rtol=1e-9)
    variances = np.diag(batch.P)[2:]
    np.testing.assert_allclose(np.asarray(estimates.relative_std[-1]), np.sqrt(variances) / np.abs(batch.x[2:]),
                               rtol=1e-9)
    assert protocol.param_units == ("N/m", "N", "1/J", "1/J")
