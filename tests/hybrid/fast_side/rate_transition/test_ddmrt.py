"""DDMRT: unit behaviour and the transition error of seed 000 Table 4.7.

Table 4.7 setting as far as the digest allows: El Centro 1940 NS (dt = 0.02 s, 1560
samples, scaled by 1.5 g as in Case 4), Δt_n = 0.02 s, ratios 40/80/160, J2 between the
ideal fast-rate signal and the DDMRT output. The NS displacement is stood in for by a
linear SDOF (ζ = 5 %, the [REPO] modal damping) at 6.3 Hz: the [REPO] w_80 predictor's
error filter 1 − Σ w_i z⁻ⁱ has its two closest-to-unit-circle zero pairs at 6.31 Hz
(|z| = 0.97 and 0.89), i.e. the frame's dominant response frequency. The "ideal" signal
is the exact response at every fast instant (ground acceleration linear between
records, as OpenSees' Path series); the Wiener weights come from an approximate
realisation (the same SDOF 10 % stiffer in frequency, thesis §3.2.2.1).
"""

import importlib.resources
import numpy as np
import pytest
import scipy.linalg
import scipy.signal

import rths_ident  # noqa: F401
from rths_ident.errors import ParameterError
from rths_ident.hybrid.fast_side.rate_transition import TransitionInputs, ddmrt
from rths_ident.hybrid.fast_side.rate_transition.ddmrt import DDMRT, DDMRTParams, REPOSITORY_W80
from rths_ident.hybrid.fast_side.rate_transition.wiener import wiener_coefficients

RECORD = str(importlib.resources.files("rths_ident.datasets") / "data/ground_motions/elcentro_1940/elcentro_1940_NS_g_dt0.02.txt")  # the shipped, byte-identical copy of shared/data
SLOW_DT = 0.02
G = 9.80665
# seed 000 Table 4.7, J2 [%]: fixed local, fixed external, adaptive local, adaptive external
TABLE_4_7 = {40: (1.713, 0.938, 0.833, 0.919), 80: (2.954, 3.775, 3.046, 3.800), 160: (17.332, 11.688, 11.970, 11.634)}
TABLE_4_7_DELAY_MS = {40: (0.197, 0.308, 0.193, 0.350), 80: (0.865, 1.188, 0.672, 1.161), 160: (1.548, 2.091, 1.536, 2.000)}


def sdof_fast_response(ground_accel, frequency, damping, ratio, dt=SLOW_DT):
    """Exact displacement of ẍ + 2ζωẋ + ω²x = −a_g(t), a_g linear between records, at every
    fast instant t_n + j·dt/ratio (j = 0 … ratio−1) — from one augmented matrix
    exponential per sub-step (first-order-hold discretisation over partial intervals)."""
    omega = 2 * np.pi * frequency
    a = np.array([[0.0, 1.0], [-omega**2, -2 * damping * omega]])
    b = np.array([0.0, -1.0])
    augmented = np.zeros((4, 4))
    augmented[:2, :2], augmented[:2, 2], augmented[2, 3] = a, b, 1.0
    # exp(M s): [:2,:2] = Φ(s), [:2,2] = ∫e^{A(s−σ)}B dσ, [:2,3] = ∫e^{A(s−σ)}B σ dσ
    blocks = np.array([scipy.linalg.expm(augmented * dt * j / ratio) for j in range(ratio + 1)])
    phi, gamma0, gamma1 = blocks[:, :2, :2], blocks[:, :2, 2], blocks[:, :2, 3]
    slope = np.diff(ground_accel) / dt
    states = np.zeros((ground_accel.size, 2))
    for n in range(ground_accel.size - 1):
        states[n + 1] = phi[-1] @ states[n] + gamma0[-1] * ground_accel[n] + gamma1[-1] * slope[n]
    fast = (
        np.einsum("jk,nk->nj", phi[:ratio, 0, :], states[:-1])
        + np.outer(ground_accel[:-1], gamma0[:ratio, 0])
        + np.outer(slope, gamma1[:ratio, 0])
    )
    return np.append(fast.ravel(), states[-1, 0])  # (n_records − 1)·ratio + 1 samples


def j2_percent(signal, reference):
    return 100 * np.sqrt(np.sum((signal - reference) ** 2) / np.sum(reference**2))


def fei_delay_ms(reference, signal, fast_dt):
    """τ of Guo et al. 2014 as in [REPO] Output.m (digest 000 §12.4), in ms."""
    spectrum_in, spectrum_out = np.fft.rfft(reference), np.fft.rfft(signal)
    frequencies = np.fft.rfftfreq(reference.size, fast_dt)
    weights = np.abs(spectrum_in[1:]) ** 2
    f_eq = np.sum(weights * frequencies[1:]) / np.sum(weights)
    fei = np.sum(spectrum_out[1:] * weights / spectrum_in[1:]) / np.sum(weights)
    return -np.arctan(fei.imag / fei.real) / (2 * np.pi * f_eq) * 1000


@pytest.fixture(scope="module")
def ground_accel():
    return 1.5 * G * np.loadtxt(RECORD)  # m/s², Case 4 scale


def test_reference_generator_matches_scipy_lsim(ground_accel):
    accel = ground_accel[:100]
    fast = sdof_fast_response(accel, 6.3, 0.05, 10)
    omega = 2 * np.pi * 6.3
    system = scipy.signal.lti([[0, 1], [-omega**2, -0.1 * omega]], [[0], [-1]], [[1, 0]], [[0]])
    times = np.arange(fast.size) * SLOW_DT / 10
    _, expected, _ = scipy.signal.lsim(system, np.interp(times, np.arange(100) * SLOW_DT, accel), times)
    np.testing.assert_allclose(fast, expected, rtol=0, atol=1e-9 * np.abs(expected).max())


def test_transition_error_against_table_4_7(ground_accel):
    rows = {}
    for ratio in (40, 80, 160):
        ideal = sdof_fast_response(ground_accel, 6.3, 0.05, ratio)
        slow = ideal[::ratio]  # what the NS delivers at Δt_n = 0.02 s
        realisation = sdof_fast_response(ground_accel, 6.3 * 1.1, 0.05, 1)  # approximate model
        ours = wiener_coefficients(realisation, L=8, lam=1e-10, N=2000)
        variants = {
            "fixed W (ours)": DDMRTParams(weights=ours, ratio=ratio),
            "fixed W ([REPO] w_80)": DDMRTParams(weights=REPOSITORY_W80, ratio=ratio),
            # adaptive: μ = 0.01 is tuned to inches (the [REPO] units), so run in inches
            "adaptive W (ours, in)": DDMRTParams(weights=ours, ratio=ratio, adaptive=True),
        }
        for name, params in variants.items():
            scale = 1 / 0.0254 if params.adaptive else 1.0
            _, fast, _ = ddmrt.run(params, scale * slow[:-1])
            fast = np.asarray(fast) / scale
            reference = ideal[1 : 1 + fast.size]  # sample k·ratio + j is the target for t_k + (j+1)Δt_e
            rows[(ratio, name)] = (j2_percent(fast, reference), fei_delay_ms(reference, fast, SLOW_DT / ratio))
    print("\nDDMRT transition error, El Centro ×1.5 g, 6.3 Hz SDOF stand-in (ours) vs seed 000 Table 4.7")
    for ratio in (40, 80, 160):
        thesis = ", ".join(f"{j:.3f} %/{d:.3f} ms" for j, d in zip(TABLE_4_7[ratio], TABLE_4_7_DELAY_MS[ratio]))
        print(f"  ratio {ratio}: thesis (fixed loc, fixed ext, adapt loc, adapt ext) = {thesis}")
        for name in ("fixed W (ours)", "fixed W ([REPO] w_80)", "adaptive W (ours, in)"):
            j2, delay = rows[(ratio, name)]
            print(f"      ours {name:24s} J2 = {j2:.3f} %, delay = {delay:.4f} ms")
    for (ratio, name), (j2, delay) in rows.items():
        # thesis acceptance: J2 < 5 % at ratio 80; ours must sit in the thesis' 80-band
        # (2.95–3.80 %) to within a loose margin at every ratio ...
        assert 2.0 < j2 < 5.0, (ratio, name, j2)
        assert abs(delay) < 1.0, (ratio, name, delay)
    # ... and, with Δt_n fixed and no processing latency, it must not depend on the ratio
    # (the fast samples only sample the same interpolant more densely). The thesis'
    # growth with the ratio came from processing delay in Simulink (its §4.7.3) and the
    # [REPO]'s hard-coded N1 = 80; it is not reproduced here.
    for name in ("fixed W (ours)", "fixed W ([REPO] w_80)"):
        values = [rows[(ratio, name)][0] for ratio in (40, 80, 160)]
        assert max(values) / min(values) < 1.05, (name, values)


def test_wrapper_matches_run_and_ltv_starts_from_lti():
    slow = np.sin(2 * np.pi * 1.3 * SLOW_DT * np.arange(40))
    fixed = DDMRTParams(ratio=8)
    _, fast, _ = ddmrt.run(fixed, slow)
    wrapper = DDMRT(fixed)
    for k, u in enumerate(slow):
        wrapper.on_slow_sample(u, SLOW_DT)
        np.testing.assert_allclose(wrapper.fast_samples(), np.asarray(fast)[8 * k : 8 * k + 8], rtol=0, atol=1e-14)
    # with μ = 0 the LTV filter is the LTI one
    _, fast_ltv, _ = ddmrt.run(DDMRTParams(ratio=8, adaptive=True, learning_rate=0.0), slow)
    np.testing.assert_allclose(fast_ltv, fast, rtol=0, atol=0)


def test_bad_parameters():
    with pytest.raises(ParameterError, match="weights"):
        DDMRTParams(weights=np.ones(2), n_nodes=4)
    with pytest.raises(ParameterError, match="ratio"):
        DDMRTParams(ratio=0)
    with pytest.raises(ParameterError, match="learning_rate"):
        DDMRTParams(learning_rate=-0.1)


@pytest.mark.slow
def test_ddmrt_feeds_the_compensators_in_a_nested_scan(ground_accel):
    """Data flow of one slow step (digest 000 §14): DDMRT → compensator → plant, the fast
    side scanned inside the slow scan. Plant: the seed 003 benchmark actuator without a
    specimen, x_m/x_c = 1/(a_3 s³ + a_2 s² + a_1 s + a_0), a = [1, 1.98592e-2, 8.44014e-5,
    1.98592e-7] (digest 003 §4, [DERIVED]), ZOH-discretised at 4000 Hz; no noise."""
    import jax
    import jax.numpy as jnp

    from rths_ident.hybrid.fast_side.compensation import CompensatorInputs, amb, damb, polynomial

    ratio, fast_dt = 80, SLOW_DT / 80
    ideal = sdof_fast_response(ground_accel, 6.3, 0.05, ratio)
    weights = wiener_coefficients(sdof_fast_response(ground_accel, 6.3 * 1.1, 0.05, 1))
    transition = DDMRTParams(weights=weights, ratio=ratio)
    a0, a1, a2, a3 = 1.0, 1.98592e-2, 8.44014e-5, 1.98592e-7
    matrices = scipy.signal.cont2discrete(scipy.signal.tf2ss([1.0], [a3, a2, a1, a0]), fast_dt, method="zoh")
    plant_a, plant_b, plant_c = (jnp.asarray(m) for m in (matrices[0], matrices[1][:, 0], matrices[2][0]))

    def run(module, params):
        def slow_step(carry, u):
            transition_state, compensator_state, plant_state = carry
            transition_state, out = ddmrt.step(transition, transition_state, TransitionInputs(u), SLOW_DT)

            def fast_step(fast_carry, x_target):
                comp, plant = fast_carry
                x_measured = plant_c @ plant
                comp, x_command = module.step(params, comp, CompensatorInputs(x_target, x_measured), fast_dt)
                return (comp, plant_a @ plant + plant_b * x_command), x_measured

            (compensator_state, plant_state), x_measured = jax.lax.scan(
                fast_step, (compensator_state, plant_state), out.samples
            )
            return (transition_state, compensator_state, plant_state), (out.samples, x_measured)

        initial = (ddmrt.init(transition), module.init(params), jnp.zeros(3))
        _, (targets, measured) = jax.jit(lambda s: jax.lax.scan(slow_step, initial, s))(jnp.asarray(ideal[::ratio][:-1]))
        return np.asarray(targets).ravel(), np.asarray(measured).ravel()

    results = {}
    for name, module, params in [
        ("uncompensated", polynomial, polynomial.PolynomialExtrapolationParams()),
        ("dAMB", damb, damb.DAMBParams()),
        ("dAMB [REPO] 50 Hz filter design", damb, damb.DAMBParams.repository_case4()),
        ("AMB", amb, amb.AMBParams()),
    ]:
        targets, measured = run(module, params)
        results[name] = (j2_percent(measured, targets), fei_delay_ms(targets, measured, fast_dt))
    print("\nDDMRT (ratio 80) → compensator → benchmark actuator, El Centro ×1.5 g: J2(x_m, x_t), delay")
    for name, (j2, delay) in results.items():
        print(f"    {name:34s} J2 = {j2:8.3f} %, delay = {delay:8.3f} ms")
    assert results["uncompensated"][0] > 40.0 and results["uncompensated"][1] > 10.0  # ≈ a_1/a_0 = 19.9 ms lag
    assert results["dAMB"][0] < 5.0 and results["AMB"][0] < 5.0
    # With the filter designed at 50 Hz and run at 4000 Hz (cut-off 1600 Hz), RLS fits the
    # discretised plant's non-minimum-phase sampling zero (≈ −3.6) and the command fails.
    assert results["dAMB [REPO] 50 Hz filter design"][0] > 50.0


def _fit(samples, degree):
    """Polynomial (numpy) through one step's fast samples, in the step's s = j/ratio."""
    ratio = samples.size
    return np.polynomial.Polynomial.fit(np.arange(1, ratio + 1) / ratio, samples, degree, domain=[0, 1],
                                        window=[0, 1])


@pytest.mark.parametrize("order", [0, 1, 2, 3])
def test_continuity_across_slow_steps(order):
    """Seed 000's segments (order 0) jump by the prediction error u_n − û_n; with order m
    the command and its first m derivatives (numpy fits of the samples on either side)
    agree at every boundary, and each segment still ends on the prediction."""
    rng = np.random.default_rng(3)
    slow = np.cumsum(rng.standard_normal(30)) * 1e-3
    ratio = 40
    params = DDMRTParams(ratio=ratio, continuity=order)
    _, fast, predictions = ddmrt.run(params, slow)
    steps = np.asarray(fast).reshape(-1, ratio)
    np.testing.assert_allclose(steps[:, -1], np.asarray(predictions), rtol=1e-12, atol=1e-15)
    degree = max(3, 2 * order + 1)
    for n in range(10, 20):
        before, after = _fit(steps[n - 1], degree), _fit(steps[n], degree)
        if order == 0:
            # the new segment starts (s = 0) at u_n, the sample received: a jump of u_n − û_n
            assert after(0.0) - before(1.0) == pytest.approx(slow[n] - float(predictions[n - 1]), abs=1e-9)
            assert abs(after(0.0) - before(1.0)) > 1e-6
            continue
        for j in range(order + 1):
            scale = max(1.0, abs(before.deriv(j)(1.0)))
            assert after.deriv(j)(0.0) == pytest.approx(before.deriv(j)(1.0), abs=1e-7 * scale), (n, j)


def test_continuous_segment_is_the_quintic_through_six_end_conditions():
    """Order 2: the segment is the quintic Hermite (scipy's BPoly.from_derivatives) from
    the previous segment's end (value, slope, curvature) to the prediction with the
    four-node interpolant's slope and curvature (numpy polyfit through the nodes)."""
    from scipy.interpolate import BPoly

    rng = np.random.default_rng(11)
    slow = np.cumsum(rng.standard_normal(25)) * 1e-3
    ratio = 50
    params = DDMRTParams(ratio=ratio, continuity=2)
    _, fast, predictions = ddmrt.run(params, slow)
    steps = np.asarray(fast).reshape(-1, ratio)
    s = np.arange(1, ratio + 1) / ratio
    for n in (12, 18):
        previous = np.polynomial.Polynomial.fit(np.arange(4) / 3, np.r_[slow[n - 3:n], predictions[n - 1]], 3,
                                                domain=[0, 1], window=[0, 1])
        current = np.polynomial.Polynomial.fit(np.arange(4) / 3, np.r_[slow[n - 2:n + 1], predictions[n]], 3,
                                               domain=[0, 1], window=[0, 1])
        # derivatives per segment (one third of the interpolant's time): d/ds = (1/3) d/dt
        start = [previous.deriv(j)(1.0) / 3**j for j in range(3)]
        end = [current.deriv(j)(1.0) / 3**j for j in range(3)]
        expected = BPoly.from_derivatives([0.0, 1.0], [start, end])(s)
        np.testing.assert_allclose(steps[n], expected, rtol=0, atol=1e-12)


def test_a_signal_that_starts_displaced_is_not_a_jump_from_rest():
    """A numerical substructure that starts displaced (a nonlinear frame under gravity:
    0.35 mm) is a signal that was there before the test: the history is taken as constant
    at the first sample, so the first prediction is Σw·u_0 (a jump from rest would give
    w_1·u_0 = 4.15 u_0 with the repository's weights), and with the sources' scheme the
    first segment stays between u_0 and that prediction."""
    u0 = 0.35e-3
    params = DDMRTParams()
    state, out = ddmrt.step(params, ddmrt.init(params), TransitionInputs(np.float64(u0)), SLOW_DT)
    np.testing.assert_array_equal(np.asarray(state.history), u0)
    assert float(out.prediction) == pytest.approx(float(np.sum(REPOSITORY_W80)) * u0, rel=1e-12)
    low, high = sorted([u0, float(out.prediction)])
    assert np.all((np.asarray(out.samples) >= low - 1e-12 * u0) & (np.asarray(out.samples) <= high + 1e-12 * u0))
    # a signal that starts at rest is unchanged by the rule: the second sample shifts in
    state, out = ddmrt.step(params, ddmrt.init(params), TransitionInputs(np.float64(0.0)), SLOW_DT)
    state, out = ddmrt.step(params, state, TransitionInputs(np.float64(u0)), SLOW_DT)
    assert float(out.prediction) == pytest.approx(float(REPOSITORY_W80[0]) * u0, rel=1e-12)
