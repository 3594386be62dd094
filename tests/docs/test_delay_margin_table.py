"""docs/scripts/delay_margin_table.py: a test's predicted and step-wise margins become a row
of the table in docs/hybrid/interlocks.md (the figures written out by hand below), and the
page has the table's marker lines."""

from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "docs" / "scripts" / "delay_margin_table.py"
DOC = ROOT / "docs" / "hybrid" / "interlocks.md"


def _script():
    spec = importlib.util.spec_from_file_location("delay_margin_table", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _part(low, high, interlock="tracking_error", time_s=1.74):
    return {"margin": high, "bracket": [low, high], "trip": {"interlock": interlock, "time_s": time_s}}


def test_a_row_says_both_margins_what_ends_them_and_their_difference():
    row = {"test": "rc-frame", "compensator": "damb", "transition": "ddmrt", "window_s": 10.0,
           "tracking_limit_m": 0.0021858, "predicted": _part(0.01806, 0.01875),
           "actual": _part(0.018, 0.0195), "gain_over": _part(2.16, 2.17, time_s=0.8),
           "gain_under": {"margin": None, "bracket": [1.0, 0.0], "trip": None}}
    lines = _script().table([row], "here").splitlines()
    assert lines[2] == ("| rc-frame (damb, ddmrt) | 10 | 2.19 | 18.75 (runs at 18.06) | tracking_error at 1.74 s | "
                        "19.50 (runs at 18.00) | tracking_error at 1.74 s | -3.8 % | ×2.17 (tracking_error) / "
                        "none down to ×0 |")
    text = DOC.read_text()
    assert text.count("<!-- delay-margin:begin -->") == 1 and text.count("<!-- delay-margin:end -->") == 1
