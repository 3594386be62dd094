"""The ``sdof`` test kind: a test file like the others (new, check, run), and with an
ideal transfer system the hybrid prototype is the monolithic one (its reference)."""

from __future__ import annotations

import json

import pytest

from rths_ident.cli import main
from rths_ident.runner.options import RunOptions
from rths_ident.scenarios.sdof import SDOFTestConfig, run_scenario


def test_with_an_ideal_actuator_and_sensors_the_hybrid_sdof_is_the_monolithic_one():
    """No delay, no noise, no compensation: the split SDOF (NS (1 − α) k, lab spring at
    scale λ) moves as the whole SDOF integrated alone, to rounding (J4 against the
    reference) and the actuator tracks exactly (J2 = 0)."""
    r = run_scenario(SDOFTestConfig(transfer_system="ideal", sensor_noise=False, compensation="none", duration=2.0),
                     RunOptions(compare=False))
    assert r["J2_percent"] == 0.0
    assert r["J4_percent"]["displacement"] < 1e-10
    assert r["J4_force_percent"] < 1e-10


def test_new_check_and_run_of_an_sdof_test_file(tmp_path, capsys):
    path = tmp_path / "my_sdof.toml"
    assert main(["new", str(path), "--from", "sdof"]) == 0
    assert main(["check", str(path)]) == 0
    assert "a valid sdof test" in capsys.readouterr().out
    common = ["--duration", "1.0", "--quiet", "--set", "structure.period=0.5"]
    assert main(["run", str(path), *common, "--json", str(tmp_path / "file.json")]) == 0
    assert main(["run", "sdof", *common, "--json", str(tmp_path / "shipped.json")]) == 0
    file, shipped = (json.loads((tmp_path / name).read_text()) for name in ("file.json", "shipped.json"))
    assert file["J2_percent"] == shipped["J2_percent"] and 0.0 < file["J2_percent"] < 5.0
    assert file["specimen"]["period"] == 0.5


@pytest.mark.parametrize("field, value, words", [("structure.period", "0.01", "ω Δt_n < 2"),
                                                  ("specimen.experimental_share", "1.5", "experimental_share"),
                                                  ("record.start", "40", "within the record")])
def test_a_bad_specimen_or_window_is_one_clear_error(field, value, words, capsys):
    assert main(["check", "sdof", "--set", f"{field}={value}"]) != 0 or main(
        ["run", "sdof", "--quiet", "--set", f"{field}={value}"]) != 0
    assert words in capsys.readouterr().err


def test_both_engines_run_the_same_sdof_test():
    """The fused loop and the step-wise loop (the NS behind the protocol) give the same
    metrics for the shipped test: one step function for both, compiled into two different
    programs (the whole loop, one slow step per call), so equal to rounding: 1.3e-12
    relative measured on J2 over 0.6 s (0.0 before the short sums were written out)."""
    cfg = SDOFTestConfig(duration=0.6)
    fused = run_scenario(cfg, RunOptions(engine="fused", compare=False))
    stepwise = run_scenario(cfg, RunOptions(engine="stepwise", compare=False))
    assert stepwise["J2_percent"] == pytest.approx(fused["J2_percent"], rel=1e-10)
    assert stepwise["J4_percent"]["displacement"] == pytest.approx(fused["J4_percent"]["displacement"], rel=1e-10)
