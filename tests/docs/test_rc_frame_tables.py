"""docs/scripts/rc_frame_tables.py, the part-by-part table of rc-frame's J2: DDMRT's own
error against a signal whose smooth interpolant is known exactly, dAMB's gains as
``rths-ident calibrate`` builds them, and the table's lines."""

from __future__ import annotations

import importlib
from pathlib import Path

import numpy as np
import pytest

import rths_ident
from rths_ident.hybrid.fast_side.compensation import damb

ROOT = Path(__file__).resolve().parents[2]


def _script():
    return importlib.import_module("rc_frame_tables")  # docs/scripts is on the path (conftest.py)


def test_transition_error_against_a_cubic_is_the_scale_error():
    """u_k = p(t_(k+1)) of a cubic p with p(0) = 0: the not-a-knot spline through (0, 0) and
    the samples is p itself, so fast targets 1.1 p((i + 1)Δt_e) are 10 % off, to rounding."""
    script = _script()
    slow_rate, ratio, steps = 50.0, 80, 40
    p = np.polynomial.Polynomial([0.0, 0.3, -2.0, 1.5])
    u = p(np.arange(1, steps + 1) / slow_rate)
    fast = 1.1 * p(np.arange(1, steps * ratio + 1) / (slow_rate * ratio))
    error, smooth, keep = script.transition_error(u, fast, slow_rate, ratio)
    assert error == pytest.approx(10.0, rel=1e-9)
    assert keep.all() and np.allclose(smooth, fast / 1.1, rtol=0, atol=1e-14)


def test_damb_gains_are_those_calibrate_builds():
    """θ = [log10 P_0, ρ, s] → the same initial FIR, P_0 and ρ as dAMB's own
    ``with_calibration_gains`` (the calibration's path) with κ = 1."""
    script = _script()
    theta = np.array([12.0, 0.99956, 0.6033])
    params = script.damb_with_gains(theta)
    reference_params, reference_state = damb.with_calibration_gains(theta, 1.0, damb.DAMBParams(),
                                                                    damb.init(damb.DAMBParams()))
    state = damb.init(params)
    np.testing.assert_allclose(np.asarray(state.fir), np.asarray(reference_state.fir), rtol=1e-12)
    np.testing.assert_allclose(np.asarray(state.covariance), np.asarray(reference_state.covariance), rtol=1e-12)
    assert float(params.forgetting_factor) == pytest.approx(float(reference_params.forgetting_factor))


def test_the_parts_table_has_one_line_per_part():
    script = _script()
    row = {"part": "shipped", "J2": 2.58321, "J2_at_step_start": 2.72771, "tau_ms": 0.029622,
           "tau_at_step_start_ms": 0.280087, "transition_error": 4.2731, "measured_vs_smooth": 5.6703,
           "J4_roof": 0.02326, "command_peak_ratio": 1.0213, "command_jump_ratio": 2.5747}
    assert (script.j2_parts_table([row]).splitlines()[-1]
            == "| shipped | 2.583 | 2.728 | 0.030 / 0.280 | 4.273 | 5.670 | 0.023 | 1.021 | 2.57 |")
    earlier = {key: value for key, value in row.items() if key not in ("J2_at_step_start", "tau_ms")}
    assert script.j2_parts_table([earlier]).splitlines()[-1] == "| shipped | 2.583 | — | — | 4.273 | 5.670 | 0.023 | 1.021 | 2.57 |"
    assert rths_ident.load_test("rc-frame").config.continuity_order == 2  # the table's first row is the shipped test


def test_parts_not_rerun_come_from_the_earlier_rows_in_table_order():
    script = _script()
    labels = list(script.J2_PARTS)
    earlier = [{"part": labels[2], "J2": 2.0}, {"part": labels[0], "J2": 1.0}, {"part": "gone", "J2": 9.0}]
    rows = script.j2_parts(only=set(), earlier=earlier)
    assert [row["part"] for row in rows] == [labels[0], labels[2]]


def test_an_edited_part_runs_under_a_key_of_its_own():
    """The compiled loop and its stored arguments are kept per test key: an edited fast side
    under the file's key would run with the first test's arguments. Each edit gets its own
    key, one the program store never keeps (``package_key`` None: traced in every process)."""
    from typing import Any, NamedTuple

    from rths_ident import exported_programs

    script = _script()

    class Hybrid(NamedTuple):
        fast_side: Any
        key: Any

    class Side(NamedTuple):
        compensation: Any = None

    cfg = rths_ident.load_test("rc-frame").config
    hybrid = Hybrid(Side(), cfg.program_key())
    keys = {script._edited(hybrid, cfg, edit).key for edit in ((4.0, 1.0, 1.0), (10.0, 0.9999, 1.0),
                                                                {"filter_sample_rate": 50.0})}
    assert len(keys) == 3 and hybrid.key not in keys
    assert all(exported_programs.package_key(key) is None for key in keys)
    assert exported_programs.package_key(hybrid.key) is not None  # the file's own key is stored
