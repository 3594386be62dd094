"""``rths-ident calibrate`` on a tiny study: the JSON keys, the plot, the improvement;
``--quiet`` (no progress bar) as the other commands take it."""

import json

import pytest

from rths_ident.cli import main


@pytest.mark.slow
def test_calibrate_writes_the_json_keys_and_improves_a_poor_start(tmp_path, capsys):
    out = tmp_path / "cal.json"
    code = main(["calibrate", "polynomial", "--specimens", "3", "--holdout", "3", "--iterations", "3",
                 "--population", "4", "--start", "1.5", "--duration", "0.6", "--fast-rate", "2000",
                 "--start-gains", "0", "--seed", "1", "--json", str(out), "--plots", str(tmp_path), "--quiet"])
    assert code == 0
    r = json.loads(out.read_text())
    for key in ("gains", "J2_before", "J2_after", "wall_s"):
        assert key in r
    for key in ("J2_before", "J2_after"):
        assert set(r[key]) >= {"mean", "max"}
    assert r["J2_after"]["mean"] < r["J2_before"]["mean"]
    assert r["source_gains"]["τ"] > 0 and r["start_gains"]["τ"] == 0.0
    assert (tmp_path / "calibration_polynomial_pso.png").exists()
    captured = capsys.readouterr()
    assert "held-out" in captured.out and f"calibration → {out}" in captured.out
    assert captured.err == ""  # --quiet: no progress bar
    # the found gain as the test-file line to paste, and that line checks as a test file's field
    line = f"tau = {r['gains']['τ']!r}"
    assert 'kind = "polynomial"' in captured.out and line in captured.out
    assert main(["check", "rc-frame", "--set", "compensation.kind=polynomial", "--set",
                 f"compensation.{line.replace(' ', '')}"]) == 0


def test_calibrate_refuses_an_unknown_compensator():
    assert main(["calibrate", "lms"]) == 1  # neither a compensator nor a test: one line (tests/scenarios)


def test_calibrate_checks_output_paths_before_the_work(tmp_path, capsys):
    missing = tmp_path / "no" / "such" / "out.json"
    assert main(["calibrate", "amb", "--json", str(missing)]) == 1
    assert "--json" in capsys.readouterr().err



@pytest.mark.slow
def test_a_box_that_cuts_off_the_best_delay_and_an_early_stop_are_said(tmp_path, capsys):
    # the best τ is near 1/g ≈ 10.9 ms (docs/calibration.md); a box up to 2 ms cuts it off
    out = tmp_path / "cal.json"
    code = main(["calibrate", "polynomial", "--method", "gradient", "--specimens", "3", "--holdout", "3",
                 "--iterations", "30", "--start", "1.5", "--duration", "0.6", "--fast-rate", "2000",
                 "--bounds", "tau=0:0.002", "--json", str(out), "--quiet"])
    assert code == 0
    r = json.loads(out.read_text())
    assert r["gain_bounds"]["τ"] == [0.0, 0.002]
    codes = {w["code"]: w for w in r["warnings"]}
    assert codes["gain_at_bound"]["gain"] == "τ" and codes["gain_at_bound"]["side"] == "upper"
    assert r["gains"]["τ"] == pytest.approx(0.002, abs=1e-5)
    early = codes["stopped_early"]
    assert early["iterations_done"] == r["iterations_done"] < 30 and early["message"]
    printed = capsys.readouterr().out
    assert "warning: τ = 0.002 on its upper bound 0.002 s" in printed
    assert f"warning: the search stopped after {early['iterations_done']} of 30 iterations: {early['reason']}" in printed


@pytest.mark.parametrize("bounds, message", [("tau", "--bounds 'tau': expected NAME=LOW:HIGH"),
                                             ("rho=0.99:1", "polynomial has no gain 'rho': expected one of tau")])
def test_bad_bounds_are_one_line(bounds, message, capsys):
    assert main(["calibrate", "polynomial", "--bounds", bounds, "--specimens", "2", "--duration", "0.2"]) == 1
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err
