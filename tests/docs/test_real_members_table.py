"""docs/scripts/real_members_table.py: the rows of `fit --model auto` on the shipped tests
become docs/fitting.md's table (auto's choice in bold, its bound flags from the fit's own
bound check); the page carries the markers."""

from __future__ import annotations

import importlib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _script():
    return importlib.import_module("real_members_table")  # docs/scripts is on the path (conftest.py)


def _rows():
    # bilinear parameters inside the daniel record's box, b = 0 on the model's own limit
    params = {"k": 4.2e6, "fy": 5.3e3, "b": 0.0}
    rows = []
    for test, samples in (("kunnath", 1326), ("gill", 627), ("daniel", 380)):
        rows.append({"test": test, "model": "bilinear", "auto_choice": True, "form": None,
                     "nrmse_rms_percent": 19.5, "params": params, "n_samples": samples})
        rows.append({"test": test, "model": "linear", "auto_choice": False, "form": None,
                     "nrmse_rms_percent": 47.6, "params": {"k": 1e6}, "n_samples": samples})
    return rows


def test_the_table_bolds_autos_choice_and_names_its_bounds():
    lines = _script().table(_rows()).splitlines()
    assert lines[0] == "| model | kunnath (1326 samples) | gill (627 samples) | daniel (380 samples) |"
    assert lines[2] == "| bilinear | **19.50** | **19.50** | **19.50** |"
    assert lines[3] == "| linear | 47.60 | 47.60 | 47.60 |"
    daniel = next(line for line in lines if line.startswith("* daniel"))
    assert "auto chooses `bilinear` (19.50 % rms/rms, misses the 15 % goal)" in daniel
    assert "b (lower, model limit)" in daniel


def test_the_page_has_the_markers():
    text = (ROOT / "docs" / "fitting.md").read_text(encoding="utf-8")
    assert text.count("<!-- real-members:begin -->") == 1 and text.count("<!-- real-members:end -->") == 1
