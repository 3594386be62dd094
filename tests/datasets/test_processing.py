"""Scaling and resampling: closed forms (linear signals, band-limited periodic
signals) and scipy.signal.resample as a second implementation."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
import scipy.signal
from _datasets_helpers import STANDARD_GRAVITY, raw_table

from rths_ident.errors import ParameterError
from rths_ident.datasets import (
    load_ground_motion,
    peak_ground_acceleration,
    resample_ground_motion,
    scale_ground_motion,
)


def _elcentro():
    raw_g = raw_table("ground_motions/elcentro_1940/elcentro_1940_NS_g_dt0.02.txt")
    return 0.02 * np.arange(raw_g.size), raw_g * STANDARD_GRAVITY


# ------------------------------------------------------------------------- scaling


def test_scale_by_factor_is_the_product():
    _, ag = _elcentro()
    np.testing.assert_array_equal(scale_ground_motion(ag, 0.40), 0.40 * ag)


def test_scale_to_target_pga_hits_the_target():
    _, ag = _elcentro()
    scaled = scale_ground_motion(ag, target_pga=1.5 * STANDARD_GRAVITY)
    assert np.max(np.abs(scaled)) == pytest.approx(1.5 * STANDARD_GRAVITY, rel=1e-14)
    # the shape is kept: a constant ratio to the original
    ratio = scaled[ag != 0] / ag[ag != 0]
    np.testing.assert_allclose(ratio, 1.5 / 0.31882, rtol=1e-12)
    assert peak_ground_acceleration(scaled) == pytest.approx(1.5 * STANDARD_GRAVITY, rel=1e-14)


@pytest.mark.parametrize(
    "kwargs,match",
    [
        ({"factor": 0.0}, "factor"),
        ({"factor": float("nan")}, "factor"),
        ({"factor": -1.0}, "factor"),
        ({"target_pga": -3.0}, "target_pga"),
        ({}, "exactly one"),
        ({"factor": 1.0, "target_pga": 2.0}, "exactly one"),
    ],
)
def test_scale_rejects_bad_values(kwargs, match):
    with pytest.raises(ParameterError, match=match):
        scale_ground_motion(np.array([0.0, 1.0, -2.0]), **kwargs)


def test_scale_to_pga_of_a_zero_record_is_an_error():
    with pytest.raises(ParameterError, match="all zeros"):
        scale_ground_motion(np.zeros(5), target_pga=1.0)


# ---------------------------------------------------------------------- resampling

# A periodic, band-limited signal: period 10 s = n dt (n = 1000, dt = 0.01 s);
# frequencies are multiples of 0.1 Hz.
N, DT = 1000, 0.01
COMPONENTS = [(0.3, 1.0, 0.2), (1.7, 0.5, 1.1), (4.2, 0.25, -0.4)]  # (Hz, amplitude, phase)


def band_limited(t, components=COMPONENTS):
    return sum(a * np.sin(2 * np.pi * f * t + p) for f, a, p in components)


def test_fourier_refinement_is_exact_on_a_band_limited_signal():
    t = DT * np.arange(N)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # refining must not warn
        t_new, ag_new = resample_ground_motion(t, band_limited(t), 0.0037, method="fourier")
    assert t_new[0] == 0.0 and t_new[-1] <= t[-1] + 1e-12 and t[-1] - t_new[-1] < 0.0037
    np.testing.assert_allclose(np.diff(t_new), 0.0037, rtol=1e-9)
    np.testing.assert_allclose(ag_new, band_limited(t_new), rtol=0, atol=1e-11)


def test_fourier_coarsening_removes_only_content_above_the_new_nyquist():
    t = DT * np.arange(N)
    high = [(30.0, 0.7, 0.3)]  # above the new Nyquist frequency 1/(2*0.03) = 16.7 Hz
    with pytest.warns(UserWarning, match="coarsens"):
        t_new, ag_new = resample_ground_motion(t, band_limited(t) + band_limited(t, high), 0.03, method="fourier")
    np.testing.assert_allclose(ag_new, band_limited(t_new), rtol=0, atol=1e-11)


def test_fourier_matches_scipy_resample_for_an_integer_ratio():
    t, ag = _elcentro()
    t_new, ag_new = resample_ground_motion(t, ag, 0.005, method="fourier")
    reference = scipy.signal.resample(ag, 4 * ag.size)  # samples at k * 0.005 s, same period
    assert t_new.size == 4 * (ag.size - 1) + 1
    np.testing.assert_allclose(ag_new, reference[: t_new.size], rtol=0, atol=1e-10 * np.max(np.abs(ag)))
    np.testing.assert_allclose(ag_new[::4], ag, rtol=0, atol=1e-10 * np.max(np.abs(ag)))


def test_linear_reproduces_a_linear_record_exactly():
    t = 0.02 * np.arange(50)
    ag = 0.3 - 1.7 * t
    t_new, ag_new = resample_ground_motion(t, ag, 0.0075)
    np.testing.assert_allclose(ag_new, 0.3 - 1.7 * t_new, rtol=0, atol=1e-14)


def test_linear_refinement_keeps_the_original_samples():
    t, ag = load_ground_motion("elcentro_1940")
    t_new, ag_new = resample_ground_motion(t, ag, 0.01)
    assert t_new.size == 2 * t.size - 1
    np.testing.assert_array_equal(ag_new[::2], ag)
    np.testing.assert_allclose(ag_new[1::2], 0.5 * (ag[:-1] + ag[1:]), rtol=0, atol=1e-12)


def test_coarsening_warns_and_decimates_when_the_grids_coincide():
    t, ag = _elcentro()
    with pytest.warns(UserWarning, match=r"0\.02 s to dt_new = 0\.04 s coarsens"):
        t_new, ag_new = resample_ground_motion(t, ag, 0.04)
    np.testing.assert_allclose(ag_new, ag[::2], rtol=1e-12, atol=1e-15)


def test_coarsening_to_0_03_s_warns():
    # the case of the client-server vRTHS thesis (digest 000: 0.02 -> 0.03 s).
    t, ag = _elcentro()
    with pytest.warns(UserWarning, match="coarsens"):
        t_new, _ = resample_ground_motion(t, ag, 0.03)
    assert t_new.size == int(np.floor(31.18 / 0.03 + 1e-9)) + 1


@pytest.mark.parametrize(
    "t,ag,dt_new,kwargs,match",
    [
        (np.arange(5.0), np.zeros(4), 0.5, {}, "same length"),
        (np.array([0.0, 1.0, 1.0, 2.0]), np.zeros(4), 0.5, {}, "increase strictly"),
        (np.arange(5.0), np.zeros(5), 0.0, {}, "dt_new"),
        (np.arange(5.0), np.array([0.0, np.nan, 0, 0, 0]), 0.5, {}, "finite"),
        (np.arange(5.0), np.zeros(5), 0.5, {"method": "cubic"}, "method"),
        (np.array([0.0, 1.0, 2.5, 3.0]), np.zeros(4), 0.5, {"method": "fourier"}, "uniformly"),
    ],
)
def test_resample_rejects_bad_input(t, ag, dt_new, kwargs, match):
    with pytest.raises(ParameterError, match=match):
        resample_ground_motion(t, ag, dt_new, **kwargs)
