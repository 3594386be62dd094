"""The bring-your-own example (examples/own_hybrid_test.py, shown in docs/hybrid/own_test.md)
runs, short, and its numbers hold against independent checks."""

import importlib.util
import re
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "own_hybrid_test.py"


def _load():
    spec = importlib.util.spec_from_file_location("own_hybrid_test", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_docs_show_the_example_as_it_is():
    doc = (ROOT / "docs" / "hybrid" / "own_test.md").read_text()
    blocks = re.findall(r"```python\n(.*?)```", doc, flags=re.S)
    assert blocks == [EXAMPLE.read_text()]


@pytest.mark.slow
def test_example_runs_fused_and_stepwise(capsys):
    example = _load()
    out = example.main(duration=1.0)
    assert "own hybrid test: 1.00 s of my_record.csv" in capsys.readouterr().out
    assert out["duration_s"] == pytest.approx(1.0)
    # the two engines run the same pure functions: the same response (second implementation)
    assert out["fused_vs_stepwise_max_m"] < 1e-6 * 1e-3 * max(out["peak_interface_drift_mm"], 1.0)
    # the bilinear bound |F| ≤ (1 − b) f_y + b k |x| (closed form) at the peak drift
    spec = example.SPECIMEN
    bound = (1 - spec.b) * spec.fy + spec.b * spec.k * out["peak_interface_drift_mm"] * 1e-3
    assert out["peak_specimen_force_kN"] * 1e3 <= bound * (1 + 1e-9)
    # the loop follows the ideal partitioned test (the actuator and noise add little)
    assert out["roof_J4_percent"] < 5.0


def test_record_file_is_the_shipped_el_centro():
    from rths_ident.datasets import load_ground_motion
    from rths_ident.datasets.user_ground_motion import load_user_ground_motion

    t, ag = load_user_ground_motion(EXAMPLE.parent / "data" / "my_record.csv", units="g")
    t_ec, ag_ec = load_ground_motion("elcentro_1940")
    np.testing.assert_allclose(ag, ag_ec[: ag.size], atol=1e-6 * 9.80665)  # 6 decimals of g
    assert t[-1] == pytest.approx(12.0)
