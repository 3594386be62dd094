"""docs/scripts/delay_margin_table.py: a test's predicted and step-wise margins become a row
of the table in docs/hybrid/interlocks.md (the figures written out by hand below), and the
page has the table's marker lines."""

from __future__ import annotations

import importlib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "hybrid" / "interlocks.md"


def _script():
    return importlib.import_module("delay_margin_table")  # docs/scripts is on the path (conftest.py)


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


def test_a_parameter_row_says_each_factor_the_stepwise_check_and_its_difference():
    """(2.116 − 2.125) / (2.125 − 1) = −0.8 %."""
    none_up = {"margin": None, "bracket": [1.0, 4.0], "trip": None}
    none_down = {"margin": None, "bracket": [1.0, 0.25], "trip": None}
    row = {"test": "rc-frame", "window_s": 10.0, "actuator_field": "valve_flow_gain", "specimen_fields": ["k_e", "k_h"],
           "actuator_over": _part(2.111, 2.116, time_s=9.9), "actuator_under": none_down,
           "specimen_over": none_up, "specimen_under": none_down, "checked": "actuator_over",
           "actual": _part(2.1015625, 2.125, time_s=4.22)}
    lines = _script().parameter_table([row], "here").splitlines()
    assert lines[2] == ("| rc-frame | valve_flow_gain | ×2.12 (tracking_error at 9.90 s) | none to ×0.25 | k_e, k_h | "
                        "none to ×4 | none to ×0.25 | actuator over | ×2.12 (runs at ×2.1; tracking_error) | -0.8 % |")
    text = DOC.read_text()
    assert text.count("<!-- parameter-margin:begin -->") == 1 and text.count("<!-- parameter-margin:end -->") == 1
