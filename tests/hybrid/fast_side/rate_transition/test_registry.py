"""DDMRT's weights from a realisation that starts with a paced test's zero padding.

A damped sine u_n = A e^{−ζω nΔt} sin(ω nΔt) obeys an exact two-term linear recursion, so a
one-step-ahead linear predictor of order L = 8 can predict it to (nearly) zero error: that
is the independent reference. Its 5 s of zero padding at 1024 Hz (5120 samples) are longer
than the N = 2000 samples DDMRT learns from.
"""

import numpy as np

import rths_ident  # noqa: F401
from rths_ident.hybrid.fast_side.rate_transition.registry import ddmrt_weights
from rths_ident.hybrid.fast_side.rate_transition.wiener import wiener_coefficients

DT = 1.0 / 1024
AMPLITUDE = 0.01  # m
N = np.arange(6000)
MOTION = AMPLITUDE * np.sin(2 * np.pi * 1.5 * N * DT) * np.exp(-0.05 * N * DT)
PADDED = np.concatenate([np.zeros(5 * 1024), MOTION])


def _worst_relative_prediction_error(weights) -> float:
    rows = np.stack([MOTION[8 - i:MOTION.size - i] for i in range(1, 9)], axis=1)
    return float(np.max(np.abs(rows @ weights - MOTION[8:]))) / AMPLITUDE


def test_the_weights_learnt_behind_zero_padding_predict_the_motion():
    assert _worst_relative_prediction_error(ddmrt_weights(PADDED)) < 1e-4
    # learnt from the first N samples as they are (all zeros): no predictor at all
    naive = wiener_coefficients(PADDED, 8, 1e-10, 2000)
    assert np.all(naive == 0.0)
    assert _worst_relative_prediction_error(naive) > 0.9


def test_the_window_starts_L_samples_before_the_motion():
    first_moving = 5 * 1024 + 1  # MOTION[0] = sin 0 = 0: the motion's first non-zero sample is MOTION[1]
    np.testing.assert_array_equal(ddmrt_weights(PADDED),
                                  wiener_coefficients(PADDED[first_moving - 8:], 8, 1e-10, 2000))
    # a realisation moving from its first sample is used as it is
    np.testing.assert_array_equal(ddmrt_weights(MOTION), wiener_coefficients(MOTION, 8, 1e-10, 2000))


def test_auto_is_ddmrt_from_a_rate_ratio_of_8_and_the_predictor_corrector_below():
    from rths_ident.hybrid.fast_side.rate_transition.registry import (AUTO, TRANSITIONS, resolve_transition,
                                                                      transition_names)

    assert [resolve_transition(AUTO, r) for r in (80, 16, 8, 7, 4, 1)] == (
        ["ddmrt"] * 3 + ["predictor-corrector"] * 3)
    assert resolve_transition("ddmrt", 4) == "ddmrt"  # a named transition is taken as named
    assert set(transition_names()) == {*TRANSITIONS, AUTO}
