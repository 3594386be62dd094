"""docs/scripts/command_smoothness_table.py: the runs' metrics become the tables of
docs/hybrid/smooth_commands.md (the figures written out by hand below), between the page's
marker lines; a run's ratios are the command's own, recomputed here from its logs."""

from __future__ import annotations

import importlib
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "hybrid" / "smooth_commands.md"


def _script():
    return importlib.import_module("command_smoothness_table")  # docs/scripts is on the path (conftest.py)


def _row(continuity, peak, jump, j2):
    return {"test": "rc-frame", "transition": "ddmrt", "compensator": "damb", "continuity": continuity,
            "command_peak_ratio": peak, "command_jump_ratio": jump, "target_jump_ratio": 1.17, "j2_percent": j2}


def test_the_commands_table_puts_the_continuities_side_by_side(tmp_path):
    script = _script()
    table = script.commands_table([_row(0, 19.8, 3188.0, 2.934), _row(2, 1.021, 2.57, 2.583),
                                   _row(3, 1.025, 3.30, 3.001)])
    assert table.splitlines()[0].startswith("| test | transition | compensator | peak ratio (0) | peak ratio (2) "
                                            "| peak ratio (3) | largest jump ratio (0) |")
    assert table.splitlines()[-1] == ("| rc-frame | ddmrt | damb | 19.800 | 1.021 | 1.025 | 3188 | 2.57 | 3.3 "
                                      "| 1.17 | 1.17 | 1.17 | 2.934 | 2.583 | 3.001 |")
    missing = script.commands_table([_row(0, 19.8, 3188.0, 2.934), _row(2, 1.021, 2.57, 2.583),
                                     {**_row(3, 1.0, 1.0, 1.0), "compensator": "amb"}])
    assert missing.splitlines()[-1].startswith("| rc-frame | ddmrt | amb | — | — | 1.000 |")
    page = tmp_path / "page.md"
    page.write_text("a\n<!-- smooth-commands:begin -->\nold\n<!-- smooth-commands:end -->\nb\n")
    script.write_between(page, "commands", table)
    assert page.read_text() == f"a\n<!-- smooth-commands:begin -->\n{table}\n<!-- smooth-commands:end -->\nb\n"
    assert "<!-- smooth-commands:begin -->" in DOC.read_text()  # the page has its markers
    with pytest.raises(SystemExit, match="no <!-- smooth-substructures:begin -->"):
        script.write_between(page, "substructures", table)


@pytest.mark.slow
def test_one_run_reports_the_commands_own_ratios(monkeypatch):
    """lugre-frame for 0.4 s without a compensator: the ratios of the run equal max|x_c| /
    max|u_k| and max|Δx_c| / (max|Δu_k| / ratio) computed here from the same logs."""
    script = _script()
    kept = {}
    run_loop = script.run_loop

    def keeping(*args, **kwargs):
        kept["logs"], wall = run_loop(*args, **kwargs)
        return kept["logs"], wall

    monkeypatch.setattr(script, "run_loop", keeping)
    row = script.one_run("lugre-frame", "none", 2, 0.4)
    fast = kept["logs"]["fast"]
    command, slow = np.ravel(fast["command"]), np.ravel(fast["slow_target"])
    ratio = np.asarray(fast["command"]).shape[1]
    assert row["command_peak_ratio"] == pytest.approx(np.max(np.abs(command)) / np.max(np.abs(slow)), rel=1e-12)
    target_step = np.max(np.abs(np.diff(np.concatenate([[0.0], slow])))) / ratio
    assert row["command_jump_ratio"] == pytest.approx(
        np.max(np.abs(np.diff(np.concatenate([[0.0], command])))) / target_step, rel=1e-12)
    assert (row["compensator"], row["continuity"], row["engine"]) == ("none", 2, "fused")


def test_j2_splits_over_the_bands_as_parseval_says():
    """x_t = sin 2π·2t, error = 0.006 sin 2π·10t + 0.008 sin 2π·40t (whole periods): J2 =
    rms(error)/rms(x_t) = 1 %, of which 0.6 below 25 Hz and 0.8 in 25–60 Hz (squares add);
    x_t has no energy in 25–60 Hz."""
    script = _script()
    t = np.arange(40000) / 4000.0
    target = np.sin(2 * np.pi * 2 * t)
    measured = target - 0.006 * np.sin(2 * np.pi * 10 * t) - 0.008 * np.sin(2 * np.pi * 40 * t)
    bands = script.j2_bands(target, measured, 4000.0)
    assert bands["j2_percent"] == pytest.approx(1.0, rel=1e-9)
    assert bands["j2_below_25hz"] == pytest.approx(0.6, rel=1e-9)
    assert bands["j2_25_60hz"] == pytest.approx(0.8, rel=1e-9)
    assert bands["j2_above_60hz"] == pytest.approx(0.0, abs=1e-9)
    assert bands["target_energy_25_60hz"] == pytest.approx(0.0, abs=1e-20)
