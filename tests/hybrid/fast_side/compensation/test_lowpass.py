import jax
import jax.numpy as jnp
import numpy as np
import pytest
import scipy.signal

import rths_ident  # noqa: F401
from rths_ident.errors import ParameterError
from rths_ident.hybrid.fast_side.compensation import lowpass


def test_stateful_filter_matches_scipy_sosfilt():
    sos = lowpass.design_butterworth(4, 20.0, 4000.0)
    signal = np.random.default_rng(1).standard_normal(3000)
    _, filtered = jax.lax.scan(lowpass.step, lowpass.init(sos), jnp.asarray(signal))
    expected = scipy.signal.sosfilt(sos, signal)
    assert np.max(np.abs(np.asarray(filtered) - expected)) < 1e-12 * np.max(np.abs(expected)) + 1e-15


def test_design_rate_sets_the_cutoff():
    # [REPO] dAMB: designed at 50 Hz, run at 4000 Hz -> -3 dB at 20 * 80 = 1600 Hz.
    sos = lowpass.design_butterworth(4, 20.0, 50.0)
    _, response = scipy.signal.sosfreqz(sos, worN=[1600.0], fs=4000.0)
    assert abs(abs(response[0]) - 1 / np.sqrt(2)) < 1e-9


@pytest.mark.parametrize("cutoff, rate", [(2500.0, 4000.0), (0.0, 4000.0), (20.0, -1.0)])
def test_bad_design_raises_parameter_error(cutoff, rate):
    with pytest.raises(ParameterError, match="cutoff_frequency|sample_rate"):
        lowpass.design_butterworth(4, cutoff, rate)
