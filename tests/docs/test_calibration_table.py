"""docs/scripts/calibration_table.py: a calibration's JSON (as `rths-ident calibrate
--json` writes it) becomes a row of docs/calibration.md's table, its warnings as the
command reports them; the page carries the markers."""

from __future__ import annotations

import importlib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _script():
    return importlib.import_module("calibration_table")  # docs/scripts is on the path (conftest.py)


DAMB = {"compensator": "damb", "method": "pso", "iterations": 30, "iterations_done": 30,
        "gains": {"log10 P0": 12.0, "ρ": 0.9996, "s": 1.32}, "start_gains": {"log10 P0": 10.0, "ρ": 1.0, "s": 1.0},
        "J2_calibration_before": {"mean": 0.120, "max": 0.318, "failed": 0},
        "J2_calibration_after": {"mean": 0.070, "max": 0.215, "failed": 0},
        "J2_before": {"mean": 0.118, "max": 0.315, "failed": 0}, "J2_after": {"mean": 0.071, "max": 0.403, "failed": 0},
        "warnings": [{"code": "gain_at_bound", "gain": "log10 P0", "side": "upper", "value": 12.0, "bound": 12.0},
                     {"code": "holdout_worse", "statistic": "max", "before": 0.315, "after": 0.403}]}
GRADIENT = {"compensator": "polynomial", "method": "gradient", "iterations": 30, "iterations_done": 4,
            "gains": {"τ": 0.01091}, "start_gains": {"τ": 0.01088},
            "J2_calibration_before": {"mean": 0.140, "max": 0.364, "failed": 0},
            "J2_calibration_after": {"mean": 0.139, "max": 0.380, "failed": 0},
            "J2_before": {"mean": 0.141, "max": 0.663, "failed": 0}, "J2_after": {"mean": 0.141, "max": 0.636, "failed": 0},
            "warnings": [{"code": "stopped_early", "iterations_done": 4, "iterations": 30,
                          "reason": "(as worded when run)", "message": "CONVERGENCE: NORM OF PROJECTED GRADIENT <= PGTOL"}]}


def test_rows_carry_the_gains_j2_and_warnings():
    lines = _script().table([{"result": DAMB}, {"result": GRADIENT}]).splitlines()
    assert lines[2] == ("| dAMB | PSO | log10 P_0 = 12.00*, ρ = 0.99960, s = 1.32 | 0.120 / 0.318 → 0.070 / 0.215 | "
                        "0.118 / 0.315 → 0.071 / 0.403 | 30 of 30 | log10 P0 on its upper bound; held-out max worse |")
    assert lines[3] == ("| polynomial | gradient | τ = 10.91 ms (start 1/g = 10.88 ms) | 0.140 / 0.364 → 0.139 / 0.380 | "
                        "0.141 / 0.663 → 0.141 / 0.636 | 4 of 30 | stopped early: converged (pgtol) |")


def test_the_page_has_the_markers():
    text = (ROOT / "docs" / "calibration.md").read_text(encoding="utf-8")
    assert text.count("<!-- calibration-results:begin -->") == 1
    assert text.count("<!-- calibration-results:end -->") == 1
