"""Between-period noise estimate on a periodic signal with white noise of known σ."""

from __future__ import annotations

import numpy as np
import pytest

from rths_ident.estimators.offline.dynamic import between_period_noise, noise_corrected_error


def test_between_period_noise_recovers_sigma():
    rng = np.random.default_rng(11)
    period, sigma = 2048, 0.3
    clean = np.tile(np.sin(np.linspace(0, 40, period)) * 5.0, 5)
    noise = between_period_noise(clean + rng.normal(scale=sigma, size=clean.size), period, 1, 5)
    assert noise["std"] == pytest.approx(sigma, rel=0.02)
    assert noise["degrees_of_freedom"] == 3 * period
    assert noise["correlation_inflation"] == pytest.approx(1.0, abs=0.02)


def test_noise_corrected_error_is_the_quadrature_difference():
    noise = {"std": 3.0, "degrees_of_freedom": 10**9, "correlation_inflation": 1.0}
    result = noise_corrected_error(5.0, 10**9, noise)
    assert result["estimate"] == pytest.approx(4.0)
    assert result["upper_95"] == pytest.approx(4.0, rel=1e-3)
    assert noise_corrected_error(2.0, 10**9, noise)["estimate"] == 0.0
