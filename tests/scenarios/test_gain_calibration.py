"""Calibrating a test's compensator gains on its virtual twin
(:mod:`rths_ident.scenarios.gain_calibration`): the reported J2 of the best and the
start gains is what an independent ``rths-ident run FILE --set compensation.…`` gives,
the best is no worse than the start, and bad input is one clear line before any run."""

from __future__ import annotations

import json

import pytest

from rths_ident.cli import main
from rths_ident.errors import ParameterError
from rths_ident.scenarios.gain_calibration import calibrate_test
from rths_ident.scenarios.kinds import shipped_test_file


@pytest.mark.slow
def test_rc_frame_gains_rerun_by_run_give_the_reported_j2(tmp_path, capsys):
    out = tmp_path / "cal.json"
    assert main(["calibrate", "rc-frame", "--duration", "1", "--population", "4", "--iterations", "2",
                 "--json", str(out), "--quiet"]) == 0
    r = json.loads(out.read_text())
    printed = capsys.readouterr().out
    assert r["compensator"] == "damb" and r["batched"] and r["evaluations"] == 4 * 3
    assert set(r["gains"]) == {"log10_P0", "rho", "s"}
    assert r["start_gains"] == {"log10_P0": 10.0, "rho": 1.0, "s": 1.0}  # GAIN_FIELDS' defaults
    assert r["J2_best"] <= r["J2_start"]
    assert "[compensation]" in printed and 'kind = "damb"' in printed

    # an independent path: rths-ident run with the gains as --set overrides
    def run_j2(sets: list[str], name: str) -> float:
        path = tmp_path / name
        argv = ["run", "rc-frame", "--set", "record.duration=1", "--json", str(path), "--quiet"]
        for item in sets:
            argv += ["--set", item]
        assert main(argv) == 0
        return json.loads(path.read_text())["J2_percent"]

    best_sets = [f"compensation.{name}={value!r}" for name, value in r["gains"].items()]
    assert r["set_options"] == [f"--set {item}" for item in best_sets]
    assert r["J2_best"] == pytest.approx(run_j2(best_sets, "best.json"), rel=1e-12)
    assert r["J2_start"] == pytest.approx(run_j2([], "start.json"), rel=1e-12)
    # the search's own (batched) score of the best agrees to the rounding a vmap-ed RLS amplifies
    assert r["J2_best_in_search"] == pytest.approx(r["J2_best"], rel=1e-2)


def test_a_rig_test_is_refused_in_one_line():
    with pytest.raises(ParameterError, match="a rig-sdof test has no virtual twin with a compensator"):
        calibrate_test("rig-sdof")


def test_a_test_without_compensation_is_refused_in_one_line(tmp_path, capsys):
    text = shipped_test_file("rc-frame").text.replace('kind = "damb"', 'kind = "none"')
    path = tmp_path / "uncompensated.toml"
    path.write_text(text, encoding="utf-8")
    assert main(["calibrate", str(path), "--quiet"]) == 1
    err = capsys.readouterr().err
    assert "compensation.kind = 'none' has no gains to tune" in err and "Traceback" not in err
    assert len(err.strip().splitlines()) == 1


@pytest.mark.parametrize("argv, message", [
    (["calibrate", "lms"], "calibrate lms: expected a compensator (damb, amb, polynomial), a shipped test"),
    (["calibrate", "rc-frame", "--specimens", "4"], "--specimens: only for calibrate"),
    (["calibrate", "rc-frame", "--method", "gradient"], "--method gradient: calibrating a test file searches by"),
    (["calibrate", "rc-frame", "--bounds", "rho=0.9:1.5"], "damb gain rho bounds 0.9:1.5"),
])
def test_bad_input_is_one_line(argv, message, capsys):
    assert main(argv) == 1
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err
