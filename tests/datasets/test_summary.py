"""Summary statistics against values computed from the raw files by numpy."""

from __future__ import annotations

import numpy as np
import pytest
from _datasets_helpers import STANDARD_GRAVITY, raw_table

from rths_ident.errors import UnknownDatasetError
from rths_ident.datasets import summarize_dataset


def test_ground_motion_summary():
    raw_g = raw_table("ground_motions/elcentro_1940/elcentro_1940_NS_g_dt0.02.txt")
    record, stats = summarize_dataset("elcentro_1940")
    assert record.name == "elcentro_1940"
    assert stats["samples"] == raw_g.size == 1560
    assert stats["dt [s]"] == pytest.approx(0.02, rel=1e-12)
    assert stats["duration [s]"] == pytest.approx(0.02 * 1559, rel=1e-12)
    assert stats["PGA [g]"] == pytest.approx(np.max(np.abs(raw_g)), rel=1e-14)
    assert stats["PGA [m/s²]"] == pytest.approx(np.max(np.abs(raw_g)) * STANDARD_GRAVITY, rel=1e-14)
    assert stats["time of PGA [s]"] == pytest.approx(0.02 * np.argmax(np.abs(raw_g)), abs=1e-12)


def test_ground_motion_summary_finds_the_zero_padding():
    _, stats = summarize_dataset("morgan_hill_1984")
    assert stats["first non-zero sample [s]"] == pytest.approx(5.0)   # digest 004 §12
    assert stats["last non-zero sample [s]"] == pytest.approx(34.97)


def test_hysteresis_summary():
    raw_x = raw_table("hysteresis_tests/kunnath/displ_mm_kunnath.txt")
    raw_f = raw_table("hysteresis_tests/kunnath/load_kN_kunnath.txt")
    _, stats = summarize_dataset("kunnath")
    assert stats["samples"] == 1326
    assert stats["peak |displacement| [mm]"] == np.max(np.abs(raw_x)) == 28.71
    assert stats["peak |force| [kN]"] == np.max(np.abs(raw_f))
    assert (stats["min force [kN]"], stats["max force [kN]"]) == (raw_f.min(), raw_f.max())


def test_matrices_summary():
    raw_m = raw_table("marths/reference/M_matrix.csv", delimiter=",")
    _, stats = summarize_dataset("marths_reference")
    assert stats["equations"] == 29 and stats["equations with mass"] == 15 and stats["joints"] == 16
    assert stats["total of diagonal masses [kg]"] == pytest.approx(np.trace(raw_m), rel=1e-14)


def test_unknown_dataset():
    with pytest.raises(UnknownDatasetError, match="valid names"):
        summarize_dataset("el_centro")
