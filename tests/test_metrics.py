"""Tests of rths_ident.metrics against closed forms."""

from __future__ import annotations

import math

import numpy as np
import pytest

from rths_ident.metrics import (
    convergence_time,
    cross_correlation_delay,
    delay_alignment_shift,
    fei_delay,
    frequency_evaluation_index,
    j2_measured_at_step_start,
    j2_tracking_error,
    j4_global_error,
    marths_indices,
    missed_deadline_stats,
    missed_tick_summary,
    nrms_error_percent,
    parameter_error_percent,
    peak_error_percent,
    thesis_indices,
)

FS = 4000.0


def sine(n, f, delay_samples=0.0, fs=FS, amplitude=1.0):
    t = np.arange(n) / fs
    return amplitude * np.sin(2 * np.pi * f * (t - delay_samples / fs))


def band_limited_noise(n, seed=0, cutoff_bins=20):
    """A smooth random (non-periodic-looking) signal: random low-frequency spectrum."""
    rng = np.random.default_rng(seed)
    spec = np.zeros(n // 2 + 1, dtype=complex)
    spec[1:cutoff_bins] = rng.normal(size=cutoff_bins - 1) + 1j * rng.normal(size=cutoff_bins - 1)
    return np.fft.irfft(spec, n)


def delayed(x, d):
    """x delayed by d ≥ 0 samples (zeros first) or advanced by −d (zeros last)."""
    y = np.zeros_like(x)
    if d >= 0:
        y[d:] = x[: x.size - d]
    else:
        y[: x.size + d] = x[-d:]
    return y


# ---- τ (FEI) -----------------------------------------------------------------------
@pytest.mark.parametrize("d", [1, 7, 40])
def test_fei_delay_of_pure_delay_on_sine(d):
    x = sine(8000, 2.0)  # 4 whole periods
    y = sine(8000, 2.0, delay_samples=d)
    assert fei_delay(x, y, FS) == pytest.approx(d / FS, rel=1e-2)
    # the same with a causal delay (zeros at the start, not circular)
    assert fei_delay(x, delayed(x, d), FS) == pytest.approx(d / FS, rel=1e-2)


def test_fei_amplitude_and_equivalent_frequency_of_scaled_sine():
    x = sine(8000, 5.0)
    res = frequency_evaluation_index(x, 0.8 * x, FS)
    assert res.amplitude == pytest.approx(0.8, rel=1e-12)
    assert res.delay == pytest.approx(0.0, abs=1e-12)
    assert res.equivalent_frequency == pytest.approx(5.0, rel=1e-9)


def test_fei_lead_gives_negative_delay():
    x = sine(8000, 2.0)
    assert fei_delay(x, sine(8000, 2.0, delay_samples=-12), FS) == pytest.approx(-12 / FS, rel=1e-2)


# ---- J2 ------------------------------------------------------------------------------
def test_j2_of_scaled_signal():
    x = band_limited_noise(4000)
    assert j2_tracking_error(x, 1.1 * x) == pytest.approx(10.0, rel=1e-12)
    assert j2_tracking_error(x, x) == 0.0


def test_j2_of_offset_sine():
    x = sine(8000, 2.0, amplitude=3.0)  # rms = 3/sqrt(2)
    assert j2_tracking_error(x, x + 0.03) == pytest.approx(0.03 / (3 / math.sqrt(2)) * 100, rel=1e-9)


def test_j2_measured_at_step_start_closed_form_on_a_sine():
    """A sine logged at the end of each step: paired with the target at the step's start
    it is the target itself (J2 = 0); paired as logged it leads by one step h, and
    rms(sin(ω(t + h)) − sin(ωt)) / rms(sin ωt) = 2|sin(ωh/2)| over whole periods."""
    fs, f, n = 4000.0, 5.0, 8000  # 10 whole periods
    t = np.arange(n + 1) / fs
    target = np.sin(2 * np.pi * f * t[:-1])
    at_step_end = np.sin(2 * np.pi * f * t[1:])
    assert j2_measured_at_step_start(target, at_step_end) == pytest.approx(0.0, abs=1e-12)
    closed_form = 200.0 * abs(math.sin(math.pi * f / fs))  # 2|sin(ωh/2)| in %
    assert j2_tracking_error(target, at_step_end) == pytest.approx(closed_form, rel=1e-9)


def test_j2_measured_at_step_start_against_numpy_rms():
    rng = np.random.default_rng(7)
    target, measured = rng.normal(size=500), rng.normal(size=500)
    expected = np.sqrt(np.mean((measured[:-1] - target[1:]) ** 2) / np.mean(target[1:] ** 2)) * 100
    assert j2_measured_at_step_start(target, measured) == pytest.approx(expected, rel=1e-12)
    with pytest.raises(ValueError, match="measured_at_step_end"):
        j2_measured_at_step_start(target, measured[:-1])


# ---- J4 with alignment --------------------------------------------------------------
def test_j4_unaligned_delayed_sine_closed_form():
    d, f = 40, 2.0
    x = sine(8000, f)
    y = sine(8000, f, delay_samples=d)  # whole periods: the circular closed form holds
    expected = 200 * abs(math.sin(math.pi * f * d / FS))
    assert j4_global_error(x, y) == pytest.approx(expected, rel=1e-9)


@pytest.mark.parametrize("method", ["fei", "xcorr"])
def test_j4_after_alignment_is_zero_for_pure_delay(method):
    ref = band_limited_noise(8000, seed=1)
    measured = delayed(ref, 40)  # 0.01 s at 4000 Hz: exact after round(δ, 2)
    shift = delay_alignment_shift(ref, measured, FS, method)
    assert shift == 40
    assert j4_global_error(ref, measured, shift) == pytest.approx(0.0, abs=1e-10)
    assert j4_global_error(ref, measured) > 10.0


def test_output_m_alignment_shifts_the_reference_forward():
    ref = band_limited_noise(8000, seed=2)
    leading = delayed(ref, -40)  # measured leads by 0.01 s
    shift = delay_alignment_shift(ref, leading, FS, "output_m")
    assert shift == -40
    assert j4_global_error(ref, leading, shift) == pytest.approx(0.0, abs=1e-10)
    # for a lagging signal Output.m's |·| shifts the wrong way
    lagging = delayed(ref, 40)
    assert delay_alignment_shift(ref, lagging, FS, "output_m") == -40


def test_thesis_indices_use_one_shift_for_displacement_and_force():
    ref = band_limited_noise(8000, seed=3)
    force_ref = 1.34e6 * ref
    meas = delayed(ref, 40)
    out = thesis_indices(ref, meas, FS, reference=ref, restoring_force=1.34e6 * meas,
                         reference_restoring_force=force_ref)
    assert out["alignment_shift"] == 40
    assert out["J4_disp"] == pytest.approx(0.0, abs=1e-10)
    assert out["J4_force"] == pytest.approx(0.0, abs=1e-10)
    assert out["delay_ms"] == pytest.approx(10.0, rel=0.05)
    assert out["J2"] == pytest.approx(j2_tracking_error(ref, meas))


# ---- cross-correlation delay / maRTHS J1–J10 -----------------------------------------
@pytest.mark.parametrize("d", [0, 3, 57, -21])
def test_cross_correlation_delay_of_pure_delay(d):
    x = band_limited_noise(3000, seed=4)
    assert cross_correlation_delay(x, delayed(x, d)) == d


def test_marths_indices_closed_forms():
    fs, n = 1024.0, 4096
    target = np.column_stack([band_limited_noise(n, 5), band_limited_noise(n, 6)])
    measured = np.column_stack([delayed(target[:, 0], 5), delayed(target[:, 1], 9)])
    out = marths_indices(
        fs,
        actuator_target=target, actuator_measured=measured, actuator_estimated=1.1 * target,
        interface_target=target, interface_estimated=1.1 * target, interface_reference=target / 1.1,
        upper_numerical=0.9 * target, upper_reference=target,
    )
    np.testing.assert_allclose(out["J1"], [5 * 1000 / fs, 9 * 1000 / fs])
    np.testing.assert_allclose(out["J4"], [0.0, 0.0])
    np.testing.assert_allclose(out["J5"], [10.0, 10.0], rtol=1e-12)
    np.testing.assert_allclose(out["J6"], [10.0, 10.0], rtol=1e-12)
    np.testing.assert_allclose(out["J7"], [21.0, 21.0], rtol=1e-12)  # 1.1·1.1 − 1
    np.testing.assert_allclose(out["J9"], [21.0, 21.0], rtol=1e-12)
    np.testing.assert_allclose(out["J8"], [10.0, 10.0], rtol=1e-12)
    np.testing.assert_allclose(out["J10"], [10.0, 10.0], rtol=1e-12)
    # J2/J3 of a 1.1x measured signal (digest 004 acceptance check 10)
    scaled = marths_indices(fs, target, 1.1 * target, target, target, target, target, target,
                            j4_source="measured")
    np.testing.assert_allclose(scaled["J2"], [10.0, 10.0], rtol=1e-12)
    np.testing.assert_allclose(scaled["J3"], [10.0, 10.0], rtol=1e-12)


def test_std_and_rms_conventions_agree_for_zero_mean_and_differ_with_offset():
    x = sine(8000, 2.0)
    assert nrms_error_percent(x, 1.2 * x, "std") == pytest.approx(nrms_error_percent(x, 1.2 * x, "rms"))
    assert nrms_error_percent(x, x + 0.1, "std") == pytest.approx(0.0, abs=1e-9)
    assert peak_error_percent(x, 1.2 * x) == pytest.approx(20.0)


# ---- parameter errors and convergence ------------------------------------------------
def test_parameter_error_of_constant_and_ramp_estimates():
    p = np.array([1.2864e6, 2.24e4, 5.36e4])  # σ0, F_C, σ3 (digest 001 §2.5)
    n = 1001
    constant = np.tile(0.7 * p, (n, 1))
    np.testing.assert_allclose(parameter_error_percent(p, constant), [30.0] * 3, rtol=1e-12)
    s = np.linspace(0.0, 1.0, n)
    ramp = p * (0.7 + 0.3 * s)[:, None]  # error 0.3(1 − s): rms = 0.3·sqrt(mean((1−s)²))
    expected = 30.0 * math.sqrt(np.mean((1 - s) ** 2))
    np.testing.assert_allclose(parameter_error_percent(p, ramp), [expected] * 3, rtol=1e-12)
    assert expected == pytest.approx(30.0 / math.sqrt(3), rel=2e-3)  # continuous limit


def test_convergence_time_of_exponential_approach():
    t = np.arange(0, 10.0, 1e-3)
    tau, tol = 0.8, 0.05
    est = 2.0 * (1 + 0.5 * np.exp(-t / tau))
    t_exact = tau * math.log(0.5 / tol)
    expected = t[np.searchsorted(t, t_exact, side="right")]
    assert convergence_time(t, est, 2.0, tol) == pytest.approx(expected)
    assert abs(convergence_time(t, est, 2.0, tol) - t_exact) <= 1e-3


def test_convergence_time_waits_for_the_last_excursion_and_all_parameters():
    t = np.arange(0, 10.0, 0.01)
    a = np.ones_like(t)
    a[:100] = 1.5  # in from t = 1 s
    a[500] = 1.2  # excursion at t = 5 s
    b = np.ones_like(t)
    b[:700] = 0.5  # second parameter converges at t = 7 s
    assert convergence_time(t, a, 1.0, 0.1) == pytest.approx(5.01)
    assert convergence_time(t, np.column_stack([a, 3 * b]), [1.0, 3.0], 0.1) == pytest.approx(7.0)
    assert convergence_time(t, np.full_like(t, 1.5), 1.0, 0.1) == math.inf
    assert convergence_time(t, np.ones_like(t), 1.0, 0.1) == 0.0


# ---- missed deadlines ----------------------------------------------------------------
def test_missed_deadline_stats():
    period = 1 / 1024
    d = np.full(8192, 0.5 * period)  # 8 s
    d[[10, 20, 30]] = 1.5 * period  # start-up misses
    d[6000] = 3.0 * period  # one miss at t ≈ 5.86 s
    s = missed_deadline_stats(d, period)
    assert s["missed"] == 4 and s["missed_after_startup"] == 1
    assert s["max_overrun"] == pytest.approx(2 * period)
    assert s["fraction"] == pytest.approx(4 / 8192)
    assert s["missed_history"][-1] == 4 and s["missed_history"][25] == 2
    summary = missed_tick_summary([426, 12, 0, 18])
    assert summary == {"max": 426.0, "median": 15.0, "within_limit": True}


# ---- input validation ----------------------------------------------------------------
def test_mismatched_or_bad_inputs_raise_clear_errors():
    x = np.ones(10)
    with pytest.raises(ValueError, match="same shape"):
        j2_tracking_error(x, np.ones(11))
    with pytest.raises(ValueError, match="finite"):
        j2_tracking_error(x, np.full(10, np.nan))
    with pytest.raises(ValueError, match="identically zero"):
        j2_tracking_error(np.zeros(10), x)
    with pytest.raises(ValueError, match="fs"):
        fei_delay(sine(100, 2.0), sine(100, 2.0), -1.0)
    with pytest.raises(ValueError, match="true_value"):
        parameter_error_percent([1.0, 2.0], np.ones((5, 3)))


def test_command_smoothness_closed_forms():
    """A slow ramp u_k = 0.001·k drawn at 10 fast samples per step moves 1e-4 per fast
    step; a command 1.2× the straight line has peak ratio 1.2 and jump ratio 1.2; one
    spike of 0.05 m in it is a jump of 0.05 − 1.2·x, ratio read off by hand."""
    from rths_ident.metrics import command_smoothness

    slow = 0.001 * np.arange(1, 21)
    line = np.interp(np.arange(1, 201) / 10, np.arange(0, 21), np.r_[0.0, slow])
    out = command_smoothness(slow, 1.2 * line, 10, fast_target=line)
    assert out["command_peak_ratio"] == pytest.approx(1.2, rel=1e-12)
    assert out["command_jump_ratio"] == pytest.approx(1.2, rel=1e-12)
    assert out["target_jump_ratio"] == pytest.approx(1.0, rel=1e-12)
    spiky = 1.2 * line
    spiky[57] = 0.05
    out = command_smoothness(slow, spiky, 10)
    assert out["command_jump_max_m"] == pytest.approx(0.05 - 1.2 * line[56], rel=1e-12)
    assert out["command_jump_ratio"] == pytest.approx((0.05 - 1.2 * line[56]) / 1e-4, rel=1e-9)
    assert out["command_peak_ratio"] == pytest.approx(0.05 / 0.02, rel=1e-12)
    with pytest.raises(ValueError, match="expected 20 slow steps"):
        command_smoothness(slow, spiky[:-1], 10)
