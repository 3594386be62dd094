"""The linear oscillator fitted to a record's frequency response, on records of a known
linear oscillator (solve_ivp, ``dynamic_synthetic``)."""

from __future__ import annotations

import numpy as np
import pytest
from dynamic_synthetic import Multisine, linear_oscillator

from rths_ident.errors import ParameterError
from rths_ident.estimators.offline.dynamic import DynamicRecord, fit_linear_oscillator

DT, PERIOD = 1.0 / 400.0, 1024
M, C, K = 2.5, 15.0, 6.0e4


@pytest.mark.parametrize("output", ["displacement", "velocity", "acceleration"])
def test_periodic_record_gives_m_c_k(output):
    u = Multisine(PERIOD, DT, 2.0, 120.0, 30.0, seed=7)
    y, v, a = linear_oscillator(u, 3 * PERIOD, DT, m=M, c=C, k=K)
    measured = {"displacement": y, "velocity": v, "acceleration": a}[output]
    record = DynamicRecord.from_arrays(u(np.arange(3 * PERIOD) * DT), measured, dt=DT, output_kind=output)
    assert record.period == PERIOD
    linear = fit_linear_oscillator(record)
    assert linear.m == pytest.approx(M, rel=1e-3)
    assert linear.k == pytest.approx(K, rel=1e-3)
    assert linear.c == pytest.approx(C, rel=1e-2)


def test_ground_acceleration_needs_the_mass_for_si_values():
    ag = Multisine(PERIOD, DT, 2.0, 120.0, 2.0, seed=8)
    y, _, _ = linear_oscillator(lambda t: -M * ag(t), 3 * PERIOD, DT, m=M, c=C, k=K)
    record = DynamicRecord.from_arrays(ag(np.arange(3 * PERIOD) * DT), y, dt=DT, input_kind="ground-acceleration")
    per_unit = fit_linear_oscillator(record)
    assert per_unit.per_unit_mass and per_unit.k == pytest.approx(K / M, rel=1e-3)
    assert fit_linear_oscillator(record, mass=M).c == pytest.approx(C, rel=1e-2)


def test_a_record_that_is_not_periodic_uses_the_h1_estimate():
    """A broadband input that does not repeat within the record (300 sines at random
    frequencies in 2–120 Hz): Welch averages, lines of coherence > 0.5."""
    n = 16384
    rng = np.random.default_rng(9)
    frequencies, phases = rng.uniform(2.0, 120.0, 300), rng.uniform(0.0, 2 * np.pi, 300)

    def u(t):
        t = np.asarray(t, dtype=float)
        out = np.zeros_like(t)
        for f, phase in zip(frequencies, phases):
            out += 2.5 * np.cos(2 * np.pi * f * t + phase)
        return out

    y, _, _ = linear_oscillator(u, n, DT, m=M, c=C, k=K, oversample=8)
    record = DynamicRecord.from_arrays(u(np.arange(n) * DT), y, dt=DT)
    assert record.period is None
    linear = fit_linear_oscillator(record)
    assert linear.k == pytest.approx(K, rel=0.02) and linear.m == pytest.approx(M, rel=0.02)


def test_a_record_with_no_dynamics_says_so():
    t = np.arange(512) * DT
    record = DynamicRecord.from_arrays(np.sin(2 * np.pi * 5 * t), -np.sin(2 * np.pi * 5 * t), dt=DT, period=None)
    with pytest.raises(ParameterError):
        fit_linear_oscillator(record)
