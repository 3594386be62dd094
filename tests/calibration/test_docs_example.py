"""docs/calibration.md's "your own actuator" example runs (shrunk to a smoke size)."""

import re
from pathlib import Path

import pytest

DOC = Path(__file__).resolve().parents[2] / "docs" / "calibration.md"


@pytest.mark.slow
def test_own_actuator_example_runs():
    text = DOC.read_text()
    block = re.search(r"```python\n(.*?)```", text, re.S).group(1)
    shrunk = (block.replace("n_specimens=64", "n_specimens=2").replace("iterations=30", "iterations=1")
              .replace("StudySettings()", "StudySettings(start=1.5, duration=0.4, fast_rate=2000.0)")
              .replace("population=8", "population=2"))
    assert shrunk != block
    namespace: dict = {}
    exec(compile(shrunk, str(DOC), "exec"), namespace)
    result = namespace["result"]
    assert set(result["gains"]) == {"log10 P0", "ρ", "s"}
    assert result["J2_after"]["failed"] == 0 and 0.0 < result["J2_after"]["mean"] < 100.0
    # PSO keeps the start in its swarm: never worse on the calibration sample
    assert result["J2_calibration_after"]["mean"] <= result["J2_calibration_before"]["mean"]
