"""Board and sensors (§3.6.3): saturation, 18-bit quantum, the noise table."""

from __future__ import annotations

import jax
import numpy as np
import pytest

from rths_ident.errors import ParameterError
from rths_ident.benchmarks.marths.daq import command_to_plant, default_daq, measure, quantize
from rths_ident.benchmarks.marths.realisability import realisability_report


def test_noise_matches_the_table_over_sixty_seconds():
    daq = default_daq(quantization=False)
    keys = jax.random.split(jax.random.PRNGKey(0), 60 * 1024)
    d, f = jax.vmap(lambda k: measure(daq, k, np.zeros(2), np.zeros(2)))(keys)
    d, f = np.asarray(d) * 1e3, np.asarray(f)
    rms = lambda a: np.sqrt(np.mean(a**2, axis=0))  # noqa: E731
    assert np.allclose(rms(d), [0.0182, 0.0199], rtol=0.05) and np.allclose(d.std(0), [0.0172, 0.0198], rtol=0.05)
    assert np.allclose(rms(f), [74.40, 10.95], rtol=0.05) and np.allclose(f.std(0), [20.13, 7.62], rtol=0.05)


def test_saturation_and_quantum():
    daq = default_daq()
    plant_in, volts = command_to_plant(daq, np.array([0.1, -1e-3]))
    assert np.isclose(float(volts[0]), 0.1 / 7.4921e-3)
    assert np.isclose(float(plant_in[0]), 3.8 * 7.4921e-3)  # clipped at 3.8 V
    assert abs(float(plant_in[1]) + 1e-3) <= 0.5 * 2**-18 * 7.3907e-3
    q = np.asarray(quantize(np.linspace(-1, 1, 1001), 2**-18))
    assert np.allclose(np.round(q * 2**18), q * 2**18)


def test_realisability_report_flags_each_limit():
    t = np.arange(2048) / 1024
    ok = np.column_stack([np.sin(2 * np.pi * t)] * 2)
    report = realisability_report(ok, 1e3 * ok, 1e-3 * ok, 1 / 1024)
    assert report["limits_respected"] and report["velocity_m_s"]["peak"][0] == pytest.approx(2 * np.pi * 1e-3, rel=1e-3)
    assert not realisability_report(4 * ok, 1e3 * ok, 1e-3 * ok, 1 / 1024)["commands_within_saturation"]
    assert not realisability_report(ok, 1e4 * ok, 1e-3 * ok, 1 / 1024)["limits_respected"]
    assert not realisability_report(ok, 1e3 * ok, 5e-3 * ok, 1 / 1024)["limits_respected"]
    with pytest.raises(ParameterError, match="stroke_m"):
        realisability_report(ok, ok, ok[:, :1], 1 / 1024)
