"""NRMSE definitions against hand-computed values."""

import numpy as np
import pytest

from rths_ident.estimators.offline.goodness import (
    coefficient_of_determination,
    goodness_of_fit,
    nrmse_range_percent,
    nrmse_rms_percent,
)


def test_constant_offset_of_a_sine():
    # F_meas = A sin, F_fit = F_meas + c: rms error = c, range = 2A, rms(F_meas) = A/√2
    t = np.linspace(0.0, 2.0 * np.pi, 4001)[:-1]  # whole periods: exact rms of the sine
    amplitude, offset = 10.0, 0.5
    measured = amplitude * np.sin(t)
    fitted = measured + offset
    assert nrmse_range_percent(fitted, measured) == pytest.approx(offset / (2 * amplitude) * 100, rel=1e-12)
    assert nrmse_rms_percent(fitted, measured) == pytest.approx(offset / (amplitude / np.sqrt(2)) * 100, rel=1e-9)
    # R² = 1 − N c² / Σ(A sin)² = 1 − c²/(A²/2)
    assert coefficient_of_determination(fitted, measured) == pytest.approx(1 - offset**2 / (amplitude**2 / 2), rel=1e-9)


def test_dictionary_and_shape_check():
    measured = np.array([0.0, 1.0, -1.0, 2.0])
    g = goodness_of_fit(measured, measured)
    assert g == {"nrmse_percent": 0.0, "nrmse_rms_percent": 0.0, "r_squared": 1.0}
    with pytest.raises(ValueError, match="same shape"):
        nrmse_range_percent(measured[:3], measured)
