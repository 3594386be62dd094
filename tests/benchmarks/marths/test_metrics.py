"""The two conventions of the maRTHS indices (paper vs official scorer)."""

from __future__ import annotations

import numpy as np
import pytest

from rths_ident.errors import ParameterError
from rths_ident.benchmarks.marths.metrics import average_indices, reported_indices, run_indices

FS = 1024.0


def fake_logs(offset=0.0, delay=3, lag_estimate=0):
    t = np.arange(4096) / FS
    target = np.column_stack([np.sin(2 * np.pi * 2 * t), 0.5 * np.sin(2 * np.pi * 3 * t)])
    measured = np.roll(target, delay, axis=0) + offset
    estimated = np.roll(target, lag_estimate, axis=0)
    upper = np.column_stack([target, target])
    return {"eta_target": target, "eta_measured": measured, "eta_estimated": estimated, "psi_target": target,
            "psi_estimated": 1.1 * target, "psi_upper": upper}, target, upper


def test_official_uses_std_and_the_measured_delay_for_j4():
    logs, ref, upper = fake_logs(offset=0.05, delay=3, lag_estimate=1)
    paper = run_indices(FS, logs, ref, upper, "paper")
    official = run_indices(FS, logs, ref, upper, "official")
    assert np.allclose(paper["J1"], 3 * 1000 / FS) and np.allclose(official["J4"], paper["J1"])
    assert np.allclose(paper["J4"], 1 * 1000 / FS)
    assert np.all(np.array(paper["J2"]) > np.array(official["J2"]))  # the offset counts in RMS only
    assert np.allclose(paper["J5"], 10.0) and np.allclose(official["J5"], 10.0, atol=1e-9)


def test_averages_follow_the_convention():
    runs = [{f"J{i}": [float(k), 2.0 * k] for i in range(1, 11)} for k in (1.0, 2.04, 3.0)]
    assert average_indices(runs[1:], "official")["J2"] == [2.5, 5.0]
    assert reported_indices(runs[0], runs[1:], "official")["J7"] == [2.5, 5.0]
    assert reported_indices(runs[0], [], "official")["J7"] == [1.0, 2.0]
    assert np.allclose(reported_indices(runs[0], runs[1:], "paper")["J7"], [6.04 / 3, 12.08 / 3])
    with pytest.raises(ParameterError, match="convention"):
        run_indices(FS, *fake_logs(), convention="mine")
