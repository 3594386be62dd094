"""The joint UKF's presets (estimators/joint_ukf_presets.py): the ``lugre-column`` preset on
the modified LuGre column (seed 001 §2.2, §4), and a conformance test of every preset.

The "measured" records are produced independently of the library: the modified LuGre ODE
(seed 001 Eq. 2.10) integrated with scipy's DOP853 at tight tolerances, with the Chapter-4
specimen (Table 2.1: k = 1.34e6 N/m, F_y = 2.24e4 N, α = 0.96, ζ = 1 %, ξ = 2 %,
m = 19.3 kg): a displacement-driven growing sine sampled at 4096 Hz and a 64 t SDOF under
El Centro 1940 NS (Table 4.1 floor mass) sampled at 1000 Hz; 0.5 % (of the force RMS)
white force noise. Initial guesses: Scenario 1 (σ0 −10 %, F_C −30 %, σ3 −30 %) and
Scenario 2 (all −30 %), the same default filter settings for every case.
"""

import dataclasses

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from filterpy.kalman import MerweScaledSigmaPoints as FilterpyPoints
from filterpy.kalman import UnscentedKalmanFilter as FilterpyUKF
from scipy.integrate import solve_ivp

import rths_ident  # noqa: F401  (float64)
from rths_ident import metrics
from rths_ident.errors import ParameterError
from rths_ident.datasets import load_ground_motion
from rths_ident.estimators import joint_ukf_identifier as ju
from rths_ident.estimators import joint_ukf_presets as jp
from rths_ident.protocols import IdentifierInputs
from rths_ident.estimators.online_identifier import run_identifier, scan_steps
from rths_ident.models import ElementInputs
from rths_ident.models.lugre import LuGreParams, ModifiedLuGre

DURATION = 20.0  # s, both records
K, FY, ALPHA, MASS, ZETA, XI = 1.34e6, 2.24e4, 0.96, 19.3, 0.01, 0.02
YIELD_DISPLACEMENT = FY / K

# Table 2.1 / Eqs. 2.11, 2.14–2.16, computed here by hand (not by the library)
SIGMA0 = ALPHA * K
SIGMA3 = (1 - ALPHA) * K
SIGMA1 = 2 * XI * np.sqrt(SIGMA0 * MASS)
SIGMA2 = 2 * ZETA * np.sqrt(K * MASS)
TRUE = np.array([SIGMA0, FY, SIGMA3])
SCENARIOS = {"S1": (0.9, 0.7, 0.7), "S2": (0.7, 0.7, 0.7)}  # factors on (σ0, F_C, σ3)


def _guess(scenario):
    f0, fc, f3 = SCENARIOS[scenario]
    return LuGreParams(sigma0=f0 * SIGMA0, sigma1=SIGMA1, sigma2=SIGMA2, sigma3=f3 * SIGMA3, Fc=fc * FY)


def _restoring_force(x, v, z):
    zdot = v - SIGMA0 / FY * np.abs(v) * z
    return SIGMA0 * z + SIGMA1 * zdot + SIGMA2 * v + SIGMA3 * x


def _noisy(force, seed):
    """Force + white noise of 0.5 % of the force RMS; returns (measured, noise std)."""
    std = 0.005 * np.sqrt(np.mean(force**2))
    return force + std * np.random.default_rng(seed).normal(size=force.size), std


@pytest.fixture(scope="module")
def growing_sine():
    """x(t) = 5 x_y (t/T) sin(2π 0.5 t) at 4096 Hz (samples t_1 … t_N; x(0) = 0)."""
    fs = 4096.0
    t = np.arange(1, int(DURATION * fs) + 1) / fs
    amplitude_rate = 5.0 * YIELD_DISPLACEMENT / DURATION
    omega = 2 * np.pi * 0.5

    def x_v(time):
        x = amplitude_rate * time * np.sin(omega * time)
        v = amplitude_rate * (np.sin(omega * time) + time * omega * np.cos(omega * time))
        return x, v

    def rhs(time, z):
        _, v = x_v(time)
        return v - SIGMA0 / FY * np.abs(v) * z

    sol = solve_ivp(rhs, (0.0, t[-1]), [0.0], t_eval=t, method="DOP853", rtol=1e-10, atol=1e-13)
    x, v = x_v(t)
    return 1.0 / fs, t, x, v, _restoring_force(x, v, sol.y[0])


@pytest.fixture(scope="module")
def elcentro_sdof():
    """SDOF m = 64 t with the LuGre column under El Centro 1940 NS (unscaled), first 20 s
    at 1000 Hz: m ẍ + R(x, ẋ, z) = −m a_g (peak drift ≈ 6 x_y)."""
    fs = 1000.0
    t_record, accel = load_ground_motion("elcentro_1940")
    floor_mass = 64.0e3
    t = np.arange(1, int(DURATION * fs) + 1) / fs

    def rhs(time, s):
        x, v, z = s
        zdot = v - SIGMA0 / FY * abs(v) * z
        force = SIGMA0 * z + SIGMA1 * zdot + SIGMA2 * v + SIGMA3 * x
        return [v, -np.interp(time, t_record, accel) - force / floor_mass, zdot]

    sol = solve_ivp(rhs, (0.0, t[-1]), [0.0, 0.0, 0.0], t_eval=t, method="DOP853", rtol=1e-9, atol=1e-12)
    x, v, z = sol.y
    assert np.abs(x).max() > 3 * YIELD_DISPLACEMENT  # the column yields
    return 1.0 / fs, t, x, v, _restoring_force(x, v, z)


def _preset_params(guess, **options):
    return jp.lugre_ukf_online_identifier(guess, **options).params


def _run(params, state, x, v, force, dt):
    """The preset's step scanned over a record (the shared helper), outputs and estimates."""
    return scan_steps(ju.step, ju.estimate, params, state, IdentifierInputs(x, v, force), dt)


_vmapped_run = jax.jit(jax.vmap(_run, in_axes=(0, 0, None, None, None, None)))


@pytest.mark.parametrize("record", ["growing_sine", "elcentro_sdof"])
def test_both_scenarios_identified_within_two_percent_vmapped(record, request):
    """Scenarios 1 and 2 in one vmapped scan; all three parameters within 2 % at the end.

    Measured (seed 1): final errors ≤ 0.08 % (sine, 4096 Hz) and ≤ 0.06 % (El Centro,
    1000 Hz); 2 % convergence times ≈ 7.9 s / 5.9 s (sine S1/S2, the amplitude passes x_y
    at 4 s) and ≈ 1.6 s (El Centro)."""
    dt, t, x, v, force = request.getfixturevalue(record)
    measured, noise_std = _noisy(force, seed=1)
    params = [_preset_params(_guess(s), force_noise_std=noise_std) for s in SCENARIOS]
    stacked = jax.tree_util.tree_map(lambda *leaves: np.stack(leaves), *params)
    final, (histories, estimates) = _vmapped_run(stacked, jax.vmap(ju.init)(stacked), x, v, measured, dt)
    for i, scenario in enumerate(SCENARIOS):
        label = f"{record} {scenario}"
        history = jax.tree_util.tree_map(lambda a: np.asarray(a[i]), histories)
        state = jax.tree_util.tree_map(lambda a: a[i], final)
        estimates_i = np.asarray(history.theta)
        errors = estimates_i[-1] / TRUE - 1.0
        assert np.all(np.abs(errors) < 0.02), f"{label}: final σ0, F_C, σ3 errors {errors}"
        assert np.isfinite(metrics.convergence_time(t, estimates_i, TRUE, tol=0.02)), label
        # flagged converged, with the reported std consistent with the actual error
        assert bool(history.converged[-1]) and np.isfinite(state.converged_at), f"{label}: not converged"
        assert bool(state.yielded)
        assert np.all(np.abs(errors) < 4 * history.relative_std[-1] + 1e-3), label
        # estimate() of the state agrees with the output fields and the stacked estimates
        est = ju.estimate(params[i], state)
        np.testing.assert_array_equal(est.theta, estimates_i[-1])
        np.testing.assert_array_equal(est.relative_std, history.relative_std[-1])
        np.testing.assert_array_equal(np.asarray(estimates.theta[i]), estimates_i)
        # the bounds (±60 % of the guesses) hold at every sample
        ratios = estimates_i / np.asarray(params[i].parameter_reference)
        assert ratios.min() >= 0.4 and ratios.max() <= 1.6, label
        # the predicted force follows the noise-free force after convergence
        after = t >= float(state.converged_at)
        misfit = history.force_prediction[after] - force[after]
        assert np.sqrt(np.mean(misfit**2)) < 2 * noise_std, label


def _filterpy_model(guess: LuGreParams, previous_displacement):
    """The identifier's filter model written again in numpy (closed form of the exact
    z update, seed 001 Eq. 2.10 with ẋ constant over the step), for filterpy."""
    reference = np.array([guess.sigma0, guess.Fc, guess.sigma3])
    z_reference = guess.Fc / guess.sigma0

    def fx(s, dt, x, v):
        z0 = s[0] * z_reference
        sigma0, fc = s[1] * reference[0], s[2] * reference[1]
        dx = x - previous_displacement[0]
        direction = np.sign(dx) if dx != 0 else (1.0 if v >= 0 else -1.0)
        z_star = direction * fc / sigma0
        z1 = z_star + (z0 - z_star) * np.exp(-sigma0 / fc * abs(dx))
        return np.array([z1 / z_reference, s[1], s[2], s[3]])

    def hx(s, x, v):
        z = s[0] * z_reference
        sigma0, fc, sigma3 = s[1:] * reference
        force = sigma0 * z + guess.sigma1 * (v - sigma0 / fc * abs(v) * z) + guess.sigma2 * v + sigma3 * x
        return np.array([force / reference[1]])

    return fx, hx


def test_filter_equals_filterpy_with_the_same_model(growing_sine):
    """80 steps around a post-yield reversal (t ≈ 6.5 s, x ≈ 1.6 x_y; the filter has run
    from rest) against filterpy's UKF with the same model written independently in numpy,
    the same noise and sigma points: same numbers."""
    dt, t, x, v, force = growing_sine
    start, steps = int(6.50 / dt), 80
    guess, noise_std = _guess("S1"), 80.0
    params = _preset_params(guess, force_noise_std=noise_std)
    state, _ = jax.jit(_run)(params, ju.init(params), x[:start], v[:start], force[:start], dt)
    previous = [x[start - 1]]
    fx, hx = _filterpy_model(guess, previous)
    ref = FilterpyUKF(4, 1, dt, hx, fx, FilterpyPoints(4, 0.1, 2.0, 0.0))
    ref.x = np.asarray(state.filter.x).copy()
    ref.P = np.asarray(state.filter.P).copy()
    ref.Q = np.diag(np.asarray(params.diffusion) ** 2) * dt
    ref.R = np.array([[(noise_std / guess.Fc) ** 2]])
    step = jax.jit(ju.step)
    worst = 0.0
    for k in range(start, start + steps):
        state, out = step(params, state, IdentifierInputs(x[k], v[k], force[k]), dt)
        ref.predict(x=x[k], v=v[k])
        ref.update(np.array([force[k] / guess.Fc]), x=x[k], v=v[k])
        previous[0] = x[k]
        scale = np.sqrt(np.diag(ref.P))
        worst = max(worst, np.max(np.abs(np.asarray(state.filter.x) - ref.x) / (np.abs(ref.x) + scale)))
        np.testing.assert_allclose(state.filter.x, ref.x, rtol=1e-8, atol=1e-8 * scale.max())
        np.testing.assert_allclose(state.filter.P, ref.P, rtol=1e-8, atol=1e-8 * np.abs(ref.P).max())
        assert float(out.innovation) == pytest.approx(float(ref.y[0]) * guess.Fc, rel=1e-8, abs=1e-8 * noise_std)
    assert worst < 1e-8
    # the steps are past yield and include a reversal of the motion
    assert np.all(x[start : start + steps] > YIELD_DISPLACEMENT)
    assert v[start] > 0 > v[start + steps - 1]


def test_filter_model_matches_modified_lugre():
    """The preset's filter coordinates: fx advances z/z_ss like ModifiedLuGre.step, and hx
    is that model's force over the guessed F_C (both with the sigma point's parameters,
    ratios of the guess)."""
    guess = _guess("S2")
    params = _preset_params(guess)
    assert params.state_scale == (guess.Fc / guess.sigma0,)
    s = jnp.array([0.3, 1.2, 0.9, 1.1])
    sigma0, fc, sigma3 = np.asarray(s[1:]) * np.array([guess.sigma0, guess.Fc, guess.sigma3])
    model = LuGreParams(sigma0=sigma0, sigma1=SIGMA1, sigma2=SIGMA2, sigma3=sigma3, Fc=fc)
    z0 = 0.3 * guess.Fc / guess.sigma0
    for x0, x1, v in ((0.01, 0.0123, 0.4), (0.02, 0.0171, -0.3), (0.005, 0.005, 0.0)):
        new_state, force = ModifiedLuGre.step(model, ModifiedLuGre.State(jnp.asarray(x0), jnp.asarray(z0)),
                                              ElementInputs(x1, v), 1e-3)
        s1 = ju.transition(s, 1e-3, params, x0, x1, v)
        assert float(s1[0]) * guess.Fc / guess.sigma0 == pytest.approx(float(new_state.z), rel=1e-13)
        np.testing.assert_array_equal(s1[1:], s[1:])
        assert float(ju.measurement(s1, params, x1, v, 1e-3)[0]) * guess.Fc == pytest.approx(float(force), rel=1e-12)


def test_wrapper_update_matches_run(growing_sine):
    dt, t, x, v, force = growing_sine
    n = 32
    stepwise = jp.LuGreUKFIdentifier(_guess("S1"), force_noise_std=80.0)
    outputs = [stepwise.update(x[i], v[i], force[i], dt=dt) for i in range(n)]
    scanned = jp.LuGreUKFIdentifier(_guess("S1"), force_noise_std=80.0)
    history = scanned.run(x[:n], v[:n], force[:n], dt=dt)
    np.testing.assert_allclose([o.theta for o in outputs], history.theta, rtol=1e-12)
    # entrywise to 1e-10, and to 1e-14 of the matrix's scale for the small off-diagonal
    # entries of P − K S Kᵀ (cancellation): the scan is one small-loop kernel, compiled
    # by XLA's other code generator than the step-wise calls (small_loop_kernels), so
    # the two round differently (4e-19 absolute on entries of 1e-10, with P ~ 0.09)
    np.testing.assert_allclose(stepwise.P, scanned.P, rtol=1e-10, atol=1e-14 * np.max(np.abs(scanned.P)))
    np.testing.assert_allclose(stepwise.theta, history.theta[-1])
    np.testing.assert_allclose(scanned.estimates.theta[-1], history.theta[-1])
    estimate = stepwise.params_estimate
    assert isinstance(estimate, LuGreParams) and float(estimate.sigma1) == SIGMA1
    assert estimate.Fc == pytest.approx(float(outputs[-1].theta[1]))
    assert not stepwise.converged  # elastic: the specimen has not yielded


def test_invalid_inputs_raise_parameter_error():
    guess = _guess("S1")
    with pytest.raises(ParameterError, match="LuGreParams"):
        jp.lugre_ukf_online_identifier({"sigma0": 1.0})
    with pytest.raises(ParameterError, match="force_noise_std"):
        jp.LuGreUKFIdentifier(guess, force_noise_std=-1.0)
    with pytest.raises(ParameterError, match="force_noise_std"):
        jp.LuGreUKFIdentifier(guess, force_noise_std="50 N")
    with pytest.raises(ParameterError, match="lower_ratio"):
        jp.LuGreUKFIdentifier(guess, lower_ratio=1.2, upper_ratio=1.6)
    with pytest.raises(ParameterError, match="parameter_std"):
        jp.LuGreUKFIdentifier(guess, parameter_std=[0.3, 0.3])
    with pytest.raises(ParameterError, match="parameter_diffusion"):
        jp.LuGreUKFIdentifier(guess, parameter_diffusion=-1e-3)
    with pytest.raises(ParameterError, match="sigma points"):
        jp.LuGreUKFIdentifier(guess, sigma_alpha=0.0)
    with pytest.raises(ParameterError, match="JointUKFParams.convergence_tolerance"):
        jp.LuGreUKFIdentifier(guess, convergence_tolerance=0.0)
    with pytest.raises(ParameterError, match="σ3 > 0"):
        jp.LuGreUKFIdentifier(LuGreParams(sigma0=SIGMA0, sigma1=SIGMA1, sigma2=SIGMA2, sigma3=0.0, Fc=FY))
    with pytest.raises(ParameterError, match="yield_field"):
        jp.LuGreUKFIdentifier(guess, yield_field="sigma1")
    with pytest.raises(ParameterError, match="convergence must be one of"):
        jp.LuGreUKFIdentifier(guess, convergence="latest")
    with pytest.raises(ParameterError, match="unknown joint UKF preset"):
        jp.joint_ukf_preset("lugre", guess)
    with pytest.raises(ParameterError, match="equal length"):
        jp.LuGreUKFIdentifier(guess).run(np.zeros(5), np.zeros(4), np.zeros(5), dt=1e-3)
    with pytest.raises(ParameterError, match="dt"):
        jp.LuGreUKFIdentifier(guess).run(np.zeros(5), np.zeros(5), np.zeros(5), dt=0.0)


def test_step_is_differentiable_through_a_scan(elcentro_sdof):
    """jax.grad of the summed innovation log-likelihood (first 1.5 s of El Centro, with
    respect to a gain on the measured force) equals a central finite difference."""
    dt, t, x, v, force = elcentro_sdof
    n = 1500
    params = _preset_params(_guess("S2"), force_noise_std=70.0)
    state = ju.init(params)

    def log_likelihood(gain):
        _, (history, _) = _run(params, state, x[:n], v[:n], gain * force[:n], dt)
        return jnp.sum(history.log_likelihood)

    gradient = float(jax.jit(jax.grad(log_likelihood))(1.0))
    value = jax.jit(log_likelihood)
    h = 1e-6
    finite_difference = float(value(1.0 + h) - value(1.0 - h)) / (2 * h)
    assert gradient == pytest.approx(finite_difference, rel=1e-5)


def test_online_protocol_estimate_equals_the_step_outputs(growing_sine):
    """lugre_ukf_online_identifier: Estimate (recomputed from the state) equals what
    step reports — θ̂, √P_ii/θ̂_i from the parameter block of P, and the converged rule
    (yielded, every relative std ≤ tolerance, hold_time inside the band) — and the flag
    is False early and True by the end of the record."""
    dt, t, x, v, force = growing_sine
    measured = force + 0.005 * np.sqrt(np.mean(force**2)) * np.random.default_rng(4).standard_normal(force.size)
    ident = jp.lugre_ukf_online_identifier(_guess("S2"))
    assert ident.name == "lugre-column"
    assert ident.param_names == ("sigma0", "Fc", "sigma3") and ident.param_units == ("N/m", "N", "N/m")
    final, (outputs, estimates) = jax.jit(lambda s: run_identifier(ident, s, x, v, measured, dt))(
        ident.initial_state())
    np.testing.assert_array_equal(np.asarray(estimates.theta), np.asarray(outputs.theta))
    np.testing.assert_array_equal(np.asarray(estimates.relative_std), np.asarray(outputs.relative_std))
    np.testing.assert_array_equal(np.asarray(estimates.converged), np.asarray(outputs.converged))
    ratios, P = np.asarray(final.filter.x)[1:], np.asarray(final.filter.P)  # normalised [σ0, F_C, σ3] / guess
    np.testing.assert_allclose(np.sqrt(np.diag(P)[1:]) / ratios, np.asarray(estimates.relative_std[-1]), rtol=1e-12)
    np.testing.assert_allclose(ratios * TRUE * 0.7, np.asarray(estimates.theta[-1]), rtol=1e-12)
    converged = np.asarray(estimates.converged)
    assert not converged[: int(1.0 / dt)].any() and converged[-1]


# ------------------------------------------------------------------------------ every preset
#
# Conformance of each registered preset: the protocol's functions under jax.lax.scan and
# jax.vmap over a batch of configurations (the batch equals the members run one by
# one), and the filter against filterpy's UKF driven with the preset's own fx/hx.


def _lugre_case(factor):
    true = ModifiedLuGre.params_from_physical(k=K, Fy=FY, alpha=ALPHA, m=MASS, zeta=ZETA, xi=XI)
    guess = LuGreParams(sigma0=factor * SIGMA0, sigma1=SIGMA1, sigma2=SIGMA2, sigma3=factor * SIGMA3, Fc=factor * FY)
    return ModifiedLuGre(true), guess, lambda noise: {"force_noise_std": noise}, YIELD_DISPLACEMENT


def _degrading_case(factor):
    from rths_ident.models import DegradingBoucWen, DegradingBoucWenParams

    true = DegradingBoucWen.preset_params("case4", units="SI")
    guess = DegradingBoucWenParams(**{**{f.name: getattr(true, f.name) for f in dataclasses.fields(true)},
                                         **{n: factor * getattr(true, n) for n in jp.DEGRADING_BOUC_WEN_FIELDS},
                                         "substeps": 2})
    y = true.f_y0 / ((1 - true.alpha_sv) * true.k_e)
    return DegradingBoucWen(true), guess, lambda noise: {"sample_interval": 1e-3, "force_std": noise,
                                                         "parameter_std": 0.5}, y


#: a specimen, a guess (factor × the true identified values), options (given the force noise
#: std [N]), its yield displacement [m]
PRESET_CASES = {"lugre-column": _lugre_case, "degrading-bouc-wen": _degrading_case}
CONFORMANCE_DT, CONFORMANCE_STEPS = 1e-3, 3000


def _conformance_record(specimen, yield_displacement):
    """x = 3 x_y sin(2π 0.8 t) min(t/2, 1) at 1 kHz (t_1 … t_N), its velocity, the
    specimen's force with noise of 1 % of its std, and that noise std [N]."""
    t = np.arange(1, CONFORMANCE_STEPS + 1) * CONFORMANCE_DT
    w = 2 * np.pi * 0.8
    ramp, dramp = np.minimum(t / 2, 1.0), np.where(t < 2, 0.5, 0.0)
    x = 3 * yield_displacement * np.sin(w * t) * ramp
    v = 3 * yield_displacement * (w * np.cos(w * t) * ramp + np.sin(w * t) * dramp)
    force = specimen.force_history(x, velocity=v)
    noise = 0.01 * np.std(force)
    return x, v, force + noise * np.random.default_rng(2).standard_normal(force.size), noise


def test_every_registered_preset_has_a_conformance_case():
    assert set(PRESET_CASES) == set(jp.PRESETS)


@pytest.mark.parametrize("name", sorted(jp.PRESETS))
def test_preset_runs_in_scan_and_vmap_over_a_batch_of_params(name):
    specimen, guess, options, y = PRESET_CASES[name](0.7)
    _, guess_b, _, _ = PRESET_CASES[name](0.8)
    x, v, force, noise = _conformance_record(specimen, y)
    members = [jp.joint_ukf_preset(name, g, **options(noise)) for g in (guess, guess_b)]
    assert all(m.name == name and m.param_names == jp.PRESETS[name].fields for m in members)
    one = jax.jit(lambda p, s: scan_steps(ju.step, ju.estimate, p, s, IdentifierInputs(x, v, force), CONFORMANCE_DT))
    singles = [one(m.params, m.initial_state()) for m in members]
    stacked = jax.tree_util.tree_map(lambda *leaves: np.stack(leaves), *(m.params for m in members))
    batch_state, (_, batch_estimates) = jax.jit(jax.vmap(one))(stacked, jax.vmap(ju.init)(stacked))
    for i, (state, (_, estimates)) in enumerate(singles):
        theta = np.asarray(estimates.theta)
        assert theta.shape == (CONFORMANCE_STEPS, len(jp.PRESETS[name].fields)) and np.all(np.isfinite(theta))
        # the parameters moved from the guess (the record identifies them)
        assert np.all(np.abs(theta[-1] / theta[0] - 1) > 0.05), theta[-1] / theta[0]
        # the batch is compiled as its own (batched) kernels, which round differently:
        # measured ≤ 3e-11 relative on θ̂ and 6e-12 of max|P| over the 3000 steps (lugre-column)
        np.testing.assert_allclose(np.asarray(batch_estimates.theta[i]), theta, rtol=1e-9)
        np.testing.assert_allclose(np.asarray(batch_state.filter.P[i]), np.asarray(state.filter.P), rtol=1e-6,
                                   atol=1e-10 * np.abs(np.asarray(state.filter.P)).max())


@pytest.mark.parametrize("name", sorted(jp.PRESETS))
def test_preset_filter_equals_filterpy_with_its_fx_hx(name):
    """40 steps from 1.5 s (the record past yield) of the preset's filter equal filterpy's
    UnscentedKalmanFilter with the same sigma points, Q = diag(q²)Δt, R and the preset's
    transition/measurement (an independent UKF implementation)."""
    specimen, guess, options, y = PRESET_CASES[name](0.7)
    x, v, force, noise = _conformance_record(specimen, y)
    ident = jp.joint_ukf_preset(name, guess, **options(noise))
    params, dt = ident.params, CONFORMANCE_DT
    start, steps = 1500, 40
    state, _ = jax.jit(_run)(params, ju.init(params), x[:start], v[:start], force[:start], dt)
    scale = 1.0 if params.force_scale_index < 0 else float(params.parameter_reference[params.force_scale_index])
    fx_jit = jax.jit(lambda s, x0, x1, v1: ju.transition(s, dt, params, x0, x1, v1))
    hx_jit = jax.jit(lambda s, x1, v1: ju.measurement(s, params, x1, v1, dt))
    n = state.filter.x.shape[0]
    spec = params.ukf
    alpha = {"lugre-column": 0.1, "degrading-bouc-wen": 1e-2}[name]
    ref = FilterpyUKF(n, 1, dt, lambda s, x1, v1: np.asarray(hx_jit(s, x1, v1)),
                      lambda s, _dt, x0, x1, v1: np.asarray(fx_jit(s, x0, x1, v1)), FilterpyPoints(n, alpha, 2.0, 0.0))
    np.testing.assert_allclose(ref.Wm, np.asarray(spec.mean_weights), rtol=1e-14)
    ref.x, ref.P = np.asarray(state.filter.x).copy(), np.asarray(state.filter.P).copy()
    ref.Q = np.diag(np.asarray(params.diffusion) ** 2) * dt
    ref.R = np.asarray(spec.measurement_noise_cov).copy()
    step = jax.jit(ju.step)
    for k in range(start, start + steps):
        ref.predict(x0=x[k - 1], x1=x[k], v1=v[k])
        ref.update(np.array([force[k] / scale]), x1=x[k], v1=v[k])
        state, out = step(params, state, IdentifierInputs(x[k], v[k], force[k]), dt)
    spread = np.abs(ref.x) + np.sqrt(np.diag(ref.P))
    assert np.max(np.abs(np.asarray(state.filter.x) - ref.x) / spread) < 1e-9
    np.testing.assert_allclose(np.asarray(state.filter.P), ref.P, rtol=1e-7, atol=1e-12 * np.max(np.abs(ref.P)))
    assert float(out.innovation) == pytest.approx(float(ref.y[0]) * scale, rel=1e-7)


#: the previous implementation of the LuGre joint UKF (estimators/lugre_ukf_identifier.py at
#: main a84e762, its own equations and its own yield latch and band rule), run on the
#: record of test_lugre_column_preset_reproduces_the_previous_implementation
PREVIOUS_IMPLEMENTATION = {
    "theta": [1286250.2120603493, 22401.41042227321, 53580.29058128855],
    "relative_std": [0.0009475033117774195, 0.0006955862195919755, 0.002912334765079379],
    "converged_at": 4.826999999999947,
    "first_yielded": 2169,
    "converged_count": 7174,
    "z_hat": 0.016667355304834503,
    "P_diagonal": [1.0527101871169828e-06, 1.8317417708756566e-06, 9.87553308307124e-07, 1.729685157548268e-05],
    "log_likelihood_sum": 50013.27898295735,
}


def test_lugre_column_preset_reproduces_the_previous_implementation():
    """The lugre-column preset (the generic filter over ModifiedLuGre.step, the yield latch
    and the band rule as options) gives the previous LuGre-specific implementation's
    numbers: 12 s at 1 kHz, x = 4 x_y sin(π t) min(t/4, 1), 50 N noise (seed 11), S2."""
    true = ModifiedLuGre.params_from_physical(k=K, Fy=FY, alpha=ALPHA, m=MASS, zeta=ZETA, xi=XI)
    guess = LuGreParams(sigma0=0.7 * true.sigma0, sigma1=true.sigma1, sigma2=true.sigma2, sigma3=0.7 * true.sigma3,
                        Fc=0.7 * true.Fc)
    fs = 1000.0
    t = np.arange(1, 12001) / fs
    ramp, dramp = np.minimum(t / 4, 1.0), np.where(t < 4, 0.25, 0.0)
    x = 4 * YIELD_DISPLACEMENT * np.sin(np.pi * t) * ramp
    v = 4 * YIELD_DISPLACEMENT * (np.pi * np.cos(np.pi * t) * ramp + np.sin(np.pi * t) * dramp)
    force = ModifiedLuGre(true).force_history(x, velocity=v)
    measured = force + 50.0 * np.random.default_rng(11).standard_normal(force.size)
    ident = jp.lugre_ukf_online_identifier(guess)
    state, (outputs, estimates) = jax.jit(lambda s: run_identifier(ident, s, x, v, measured, 1 / fs))(
        ident.initial_state())
    previous = PREVIOUS_IMPLEMENTATION
    np.testing.assert_allclose(np.asarray(estimates.theta[-1]), previous["theta"], rtol=1e-12)
    np.testing.assert_allclose(np.asarray(estimates.relative_std[-1]), previous["relative_std"], rtol=1e-10)
    assert float(state.converged_at) == pytest.approx(previous["converged_at"], rel=1e-12)
    assert int(np.argmax(np.asarray(outputs.yielded))) == previous["first_yielded"]
    assert int(np.sum(np.asarray(outputs.converged))) == previous["converged_count"]
    assert float(outputs.model_state.z[-1]) == pytest.approx(previous["z_hat"], rel=1e-12)
    np.testing.assert_allclose(np.diag(np.asarray(state.filter.P)), previous["P_diagonal"], rtol=1e-10)
    assert float(np.sum(np.asarray(outputs.log_likelihood))) == pytest.approx(previous["log_likelihood_sum"],
                                                                              rel=1e-12)
