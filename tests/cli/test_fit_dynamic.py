"""``rths-ident fit FILE --dynamic`` end to end on a record made by solve_ivp (in kN and
mm), the predictions file checked against an independent simulation of the reported
parameters, and the one-line errors."""

from __future__ import annotations

import json
import pathlib
import sys

import numpy as np
import pytest

from rths_ident.cli.fit import main

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "estimators" / "offline" / "dynamic"))
from dynamic_synthetic import Multisine, bouc_wen_oscillator  # noqa: E402

DT, PERIOD = 1.0 / 400.0, 512
TRUTH = dict(m=1.5, c=6.0, k=9.0e4, alpha=0.4, beta=700.0, gamma=-1000.0, n=1.0)


def _write_record(path, periods=3, noise=0.01, seed=31):
    u = Multisine(PERIOD, DT, 3.0, 90.0, 40.0, seed=seed)
    y, _, _ = bouc_wen_oscillator(u, PERIOD * periods, DT, **TRUTH)
    y = y + np.random.default_rng(seed).normal(scale=noise * np.sqrt(np.mean(y**2)), size=y.size)
    t = np.arange(y.size) * DT
    rows = ["t,F,x"] + [f"{a:.6f},{b / 1e3:.12g},{c * 1e3:.12g}" for a, b, c in zip(t, u(t), y)]
    path.write_text("\n".join(rows) + "\n")
    return u


@pytest.mark.slow
def test_dynamic_fit_in_kn_and_mm_with_held_out_period(tmp_path, capsys):
    record = tmp_path / "shake.csv"
    u = _write_record(record)
    out_json, predictions, plots = tmp_path / "fit.json", tmp_path / "pred.csv", tmp_path / "figures"
    code = main([str(record), "--dynamic", "--input", "force", "--output", "displacement", "--columns", "t,F,x",
                 "--units", "s,kN,mm", "--model", "boucwen", "--fix", "n=1", "--hold-out-periods", "1",
                 "--global-generations", "10", "--json", str(out_json), "--predictions", str(predictions),
                 "--plots", str(plots)])
    assert code == 0
    captured = capsys.readouterr()
    assert "output error (force → displacement)" in captured.out and "sign region: hardening" in captured.out
    assert "held out (samples 1024–1535)" in captured.out and " mm]" in captured.out  # the file's unit too
    payload = json.loads(out_json.read_text())
    assert payload["period"] == PERIOD and payload["sign_region"] == "hardening"
    assert payload["validation"]["role"] == "held-out" and payload["validation"]["range"] == [1024, 1536]
    assert set(payload["standard_errors"]) == {"m", "c", "k", "alpha", "beta", "gamma"}
    assert payload["in_file_units"]["output_unit"] == "mm"
    on_bound = [name for name, item in payload["identifiability"]["parameters"].items() if item["at_bound"]]
    assert [w["parameter"] for w in payload["warnings"]] == on_bound
    assert payload["in_file_units"]["validation_rmse"] == pytest.approx(1e3 * payload["validation"]["rmse"])
    table = np.loadtxt(predictions, delimiter=",", skiprows=2)
    assert table.shape == (PERIOD, 3)
    rmse = np.sqrt(np.mean((table[:, 2] - table[:, 1]) ** 2))
    assert payload["validation"]["rmse"] == pytest.approx(rmse, rel=1e-6)
    # the reported parameters, simulated independently (solve_ivp), give the simulated column
    params = {name: payload["params"][name] for name in TRUTH}
    independent, _, _ = bouc_wen_oscillator(u, 3 * PERIOD, DT, **params)
    assert np.sqrt(np.mean((independent[2 * PERIOD:] - table[:, 2]) ** 2)) < 0.02 * rmse + 1e-3 * np.std(table[:, 2])
    assert (plots / "fit_dynamic.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert f"plot → {plots / 'fit_dynamic.png'}" in captured.out and f"fit → {out_json}" in captured.out


@pytest.mark.slow
def test_dynamic_fit_with_a_known_mass_validated_on_a_second_record(tmp_path, capsys):
    """--fix m=… holds the mass (no standard error for it), --periodic declares the period,
    --validate scores a second record made with other phases: its RMSE in the JSON equals
    the one computed from the --predictions file, and the recovered k and α are the
    solve_ivp system's."""
    record, second = tmp_path / "train.csv", tmp_path / "test.csv"
    _write_record(record, seed=31)
    _write_record(second, periods=2, seed=47)
    out_json, predictions = tmp_path / "fit.json", tmp_path / "pred.csv"
    code = main([str(record), "--dynamic", "--input", "force", "--output", "displacement", "--columns", "t,F,x",
                 "--units", "s,kN,mm", "--model", "boucwen", "--fix", f"m={TRUTH['m']}", "--periodic", str(PERIOD),
                 "--validate", str(second), "--global-generations", "10", "--json", str(out_json),
                 "--predictions", str(predictions)])
    assert code == 0
    out = capsys.readouterr().out
    assert "validation (" in out and "test.csv): RMSE" in out
    payload = json.loads(out_json.read_text())
    assert payload["params"]["m"] == TRUTH["m"] and "m" not in payload["standard_errors"]
    # a coordinate on a bound of its search box is said on the terminal, not only in the JSON
    at_bound = [name for name, item in payload["identifiability"]["parameters"].items() if item["at_bound"]]
    warning = [line for line in out.splitlines() if "warning: on a bound of the search box" in line]
    assert (warning and all(name in warning[0] for name in at_bound)) if at_bound else not warning
    assert payload["period"] == PERIOD
    assert payload["validation"]["role"] == "validation"
    table = np.loadtxt(predictions, delimiter=",", skiprows=2)
    assert table.shape == (PERIOD, 3)  # the second record's first period runs in
    rmse = np.sqrt(np.mean((table[:, 2] - table[:, 1]) ** 2))
    assert payload["validation"]["rmse"] == pytest.approx(rmse, rel=1e-6)
    # 1 % output noise: the validation error is that noise, and the system is recovered
    assert rmse < 0.013 * np.sqrt(np.mean(table[:, 1] ** 2))
    assert payload["params"]["k"] == pytest.approx(TRUTH["k"], rel=0.01)
    assert payload["params"]["alpha"] == pytest.approx(TRUTH["alpha"], rel=0.02)


@pytest.mark.parametrize("argv, message", [
    (["--input", "force"], "--input apply to a dynamic test: add --dynamic"),
    (["--dynamic", "--input", "ground-acceleration"], "m is not identifiable from a ground acceleration"),
    (["--dynamic", "--method", "ls"], "--method ls does not apply"),
    (["--dynamic", "--hold-out-periods", "1", "--periodic", "no"], "hold-out periods need a periodic record"),
])
def test_dynamic_options_are_checked_before_fitting(tmp_path, argv, message, capsys):
    record = tmp_path / "r.csv"
    t = np.arange(256) * DT
    record.write_text("time,input,output\n" + "\n".join(f"{a},{np.sin(50 * a) + np.sin(170 * a)},{np.cos(50 * a)}"
                                                      for a in t) + "\n")
    assert main([str(record), *argv]) == 1
    err = capsys.readouterr().err
    assert message in err and "Traceback" not in err and err.count("\n") == 1


def test_a_three_sample_record_is_refused(tmp_path, capsys):
    record = tmp_path / "tiny.csv"
    record.write_text("time,input,output\n0,1,0\n0.01,2,1\n0.02,0,2\n")
    assert main([str(record), "--dynamic"]) == 1
    assert "a dynamic fit needs at least 64 samples; got 3" in capsys.readouterr().err
