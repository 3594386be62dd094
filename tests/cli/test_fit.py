"""``rths-ident fit`` end to end: shipped test with --json/--plots, a CSV in mm/kN, and
the error messages for bad input files."""

import json

import numpy as np
import pytest

from rths_ident.datasets import load_hysteresis_test
from rths_ident.cli.fit import main
from rths_ident.models import BilinearKinematic


def _nrmse_range(fitted, measured):
    return np.sqrt(np.mean((fitted - measured) ** 2)) / (measured.max() - measured.min()) * 100


def test_shipped_test_end_to_end_with_json_and_plot(tmp_path, capsys):
    out_json, plots = tmp_path / "fit.json", tmp_path / "figures"
    code = main(["--dataset", "daniel", "--model", "bilinear", "--method", "nls", "--starts", "2",
                 "--json", str(out_json), "--plots", str(plots)])
    assert code == 0
    captured = capsys.readouterr()
    assert "model bilinear, method nls" in captured.out and "force NRMSE" in captured.out
    assert "bilinear nls start 1" in captured.err  # progress lines
    assert "identifiability (Jacobian at the optimum" in captured.out
    payload = json.loads(out_json.read_text())
    assert payload["model"] == "bilinear" and payload["method"] == "nls"
    assert payload["n_samples"] == 380
    assert set(payload["params"]) == {"k", "fy", "b"}
    report = payload["identifiability"]
    assert set(report["parameters"]) == {"k", "fy", "b"} and report["condition_number"] >= 1.0
    assert len(report["singular_values"]) == 3
    # independent check: the model run with the reported SI parameters on the SI data
    x, f = load_hysteresis_test("daniel", units="SI")
    recomputed = BilinearKinematic(**payload["params"]).force_history(x)
    assert payload["nrmse_percent"] == pytest.approx(_nrmse_range(recomputed, f), rel=1e-9)
    assert payload["nrmse_rms_percent"] == pytest.approx(
        np.sqrt(np.mean((recomputed - f) ** 2)) / np.sqrt(np.mean(f**2)) * 100, rel=1e-9)
    assert (plots / "fit_loops.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert f"plot → {plots / 'fit_loops.png'}" in captured.out and f"fit → {out_json}" in captured.out


def test_csv_in_mm_and_kn_with_renamed_columns(tmp_path, capsys):
    # a bilinear specimen (k = 2 kN/mm, f_y = 30 kN, b = 0.05) logged in mm and kN
    x_mm = np.interp(np.linspace(0, 1, 300), np.linspace(0, 1, 8), [0, 20, -20, 40, -40, 60, -60, 0])
    f_kn = np.empty_like(x_mm)
    force, previous = 0.0, 0.0
    for i, xi in enumerate(x_mm):  # kinematic-hardening return map, plain numpy
        k, fy, b = 2.0, 30.0, 0.05
        force = np.clip(force + k * (xi - previous), b * k * xi - (1 - b) * fy, b * k * xi + (1 - b) * fy)
        f_kn[i], previous = force, xi
    t = 0.05 * np.arange(x_mm.size)
    path = tmp_path / "log.csv"
    lines = ["Time,LVDT,Load"] + [f"{a:.6f},{b:.9f},{c:.9f}" for a, b, c in zip(t, x_mm, f_kn)]
    path.write_text("\n".join(lines) + "\n")
    out_json = tmp_path / "fit.json"
    code = main([str(path), "--columns", "Time,LVDT,Load", "--units", "mm,kN", "--model", "bilinear",
                 "--method", "ls", "--json", str(out_json), "--quiet"])
    assert code == 0
    payload = json.loads(out_json.read_text())
    params = payload["params"]
    assert params["k"] == pytest.approx(2.0e6, rel=1e-4)  # N/m
    assert params["fy"] == pytest.approx(3.0e4, rel=1e-4)  # N
    assert params["b"] == pytest.approx(0.05, rel=1e-3)
    # and in the file's units: the generator's k = 2 kN/mm, f_y = 30 kN
    in_file = payload["in_file_units"]
    assert (in_file["displacement_unit"], in_file["force_unit"]) == ("mm", "kN")
    assert in_file["params"]["k"] == pytest.approx(2.0, rel=1e-4) and in_file["units"]["k"] == "kN/mm"
    assert in_file["params"]["fy"] == pytest.approx(30.0, rel=1e-4) and in_file["units"]["fy"] == "kN"
    assert in_file["params"]["b"] == pytest.approx(0.05, rel=1e-3) and in_file["units"]["b"] == "-"
    # the record and the error in the user's units too: the generator's own arrays (mm, kN)
    assert in_file["displacement_range"] == pytest.approx([x_mm.min(), x_mm.max()], rel=1e-9)
    assert in_file["force_range"] == pytest.approx([f_kn.min(), f_kn.max()], rel=1e-9)
    # rms error [kN] = rms/rms NRMSE × rms of the file's force [kN] (the NRMSE's definition)
    assert in_file["rms_error"] == pytest.approx(payload["nrmse_rms_percent"] / 100 * np.sqrt(np.mean(f_kn**2)),
                                                 rel=1e-9)
    report = capsys.readouterr().out
    assert "in mm,kN" in report and "kN/mm" in report
    assert f"in mm,kN: displacement {x_mm.min():.5g} … {x_mm.max():.5g} mm, force" in report
    assert "rms(F_fit − F_meas)" in report and report.count(" kN") >= 2


def test_bad_number_names_file_column_and_line(tmp_path, capsys):
    path = tmp_path / "bad.csv"
    path.write_text("time,displacement,force\n0,0,0\n0.1,0.001,12\n0.2,0.002,abc\n0.3,0.003,30\n")
    assert main([str(path), "--model", "bilinear"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("rths-ident fit: error: ")
    assert "bad.csv" in err and "'force'" in err and "line 4" in err


def test_missing_column_and_conflicting_sources(tmp_path, capsys):
    path = tmp_path / "log.csv"
    path.write_text("time,displacement,force\n0,0,0\n0.1,0.001,12\n")
    assert main([str(path), "--columns", "time,displacement,Load"]) == 1
    err = capsys.readouterr().err
    assert "log.csv" in err and "'Load'" in err
    assert main([str(path), "--dataset", "gill"]) == 1
    assert "not both or neither" in capsys.readouterr().err
    assert main(["--dataset", "nosuchtest"]) == 1
    err = capsys.readouterr().err
    assert "nosuchtest" in err and "kunnath" in err
    assert main(["--dataset", "gill", "--units", "mm,kN"]) == 1
    assert "--units apply to data files" in capsys.readouterr().err
    assert main(["--dataset", "gill", "--fix", "n"]) == 1
    assert "name=value pairs" in capsys.readouterr().err
    assert main(["--dataset", "gill", "--model", "auto", "--fix", "n=1"]) == 1
    assert "cannot be used with --model auto" in capsys.readouterr().err


def test_ls_for_the_degrading_model_is_a_user_error(capsys):
    assert main(["--dataset", "daniel", "--model", "degrading-boucwen", "--method", "ls"]) == 1
    assert "use 'nls' or 'bayes'" in capsys.readouterr().err


def test_linear_specimen_static_and_logdec(tmp_path, capsys):
    # seed 002: static pushes, then a free vibration of specimen + numerical part
    # (M_T = 34.356 kg, C_T = 13.93 N·s/m, K_T = 1570 N/m; closed form eq. 2-2)
    u = np.linspace(-0.01, 0.01, 9)
    static = tmp_path / "static.csv"
    static.write_text("time,displacement,force\n" + "".join(f"{i},{float(x)!r},{float(1540.0 * x + 0.1)!r}\n" for i, x in enumerate(u)))
    out = tmp_path / "static.json"
    assert main([str(static), "--model", "linear", "--method", "static", "--json", str(out), "--quiet"]) == 0
    assert json.loads(out.read_text())["params"]["k"] == pytest.approx(1540.0, rel=1e-12)

    M, C, K = 34.356, 13.93, 1570.0
    wn = np.sqrt(K / M)
    zeta = C / (2 * M * wn)
    wd = wn * np.sqrt(1 - zeta**2)
    t = np.arange(0.0, 8.0, 0.01)
    x = np.exp(-zeta * wn * t) * (0.01 * np.cos(wd * t) + zeta * wn * 0.01 / wd * np.sin(wd * t))
    free = tmp_path / "free.csv"
    free.write_text("time,displacement,force\n" + "".join(f"{float(a)!r},{float(b)!r},{float(1540.0 * b)!r}\n" for a, b in zip(t, x)))
    out = tmp_path / "free.json"
    assert main([str(free), "--model", "linear", "--method", "logdec", "--specimen-stiffness", "1540",
                 "--numerical-mass", "34", "--numerical-damping", "8.5", "--numerical-stiffness", "30",
                 "--json", str(out), "--quiet"]) == 0
    params = json.loads(out.read_text())["params"]
    assert params["k"] == 1540.0
    assert params["m"] == pytest.approx(0.356, abs=0.02)  # ill-conditioned: ∂M_T/∂T_d ≈ 74 kg/s
    assert params["c"] == pytest.approx(13.93 - 8.5, abs=0.05)
    assert main([str(free), "--model", "linear", "--method", "logdec"]) == 1
    assert "--specimen-stiffness" in capsys.readouterr().err


@pytest.mark.slow
def test_bayes_through_the_command_writes_posterior_and_plots(tmp_path):
    out_json = tmp_path / "b.json"
    assert main(["--dataset", "daniel", "--model", "lugre", "--method", "bayes", "--draws", "100",
                 "--warmup", "100", "--chains", "2", "--json", str(out_json), "--plots", str(tmp_path),
                 "--quiet"]) == 0
    payload = json.loads(out_json.read_text())
    for name in ("sigma0", "Fc", "sigma3", "noise_std"):
        assert set(payload["posterior"][name]) == {"mean", "sd", "hdi_3%", "hdi_97%", "r_hat", "ess_bulk"}
        assert payload["posterior"][name]["sd"] > 0
    for path in (tmp_path / "fit_loops.png", tmp_path / "posterior_trace.png", tmp_path / "posterior_pair.png"):
        assert path.read_bytes()[:4] == b"\x89PNG"


def _bilinear_loops_mm_kn():
    """A bilinear specimen (k = 2 kN/mm, f_y = 30 kN, b = 0.05) in mm and kN (plain numpy return map)."""
    x_mm = np.interp(np.linspace(0, 1, 300), np.linspace(0, 1, 8), [0, 20, -20, 40, -40, 60, -60, 0])
    f_kn, force, previous = np.empty_like(x_mm), 0.0, 0.0
    for i, xi in enumerate(x_mm):
        force = np.clip(force + 2.0 * (xi - previous), 0.1 * xi - 0.95 * 30.0, 0.1 * xi + 0.95 * 30.0)
        f_kn[i], previous = force, xi
    return x_mm, f_kn


def test_quasi_static_reads_displacement_and_force_only(tmp_path, capsys):
    x_mm, f_kn = _bilinear_loops_mm_kn()
    path = tmp_path / "cyclic.csv"
    path.write_text("LVDT,Load\n" + "\n".join(f"{a:.9f},{b:.9f}" for a, b in zip(x_mm, f_kn)) + "\n")
    out_json = tmp_path / "fit.json"
    code = main([str(path), "--quasi-static", "--columns", "LVDT,Load", "--units", "mm,kN", "--model", "bilinear",
                 "--method", "ls", "--json", str(out_json), "--quiet"])
    assert code == 0, capsys.readouterr().err
    params = json.loads(out_json.read_text())["params"]
    assert params["k"] == pytest.approx(2.0e6, rel=1e-4) and params["fy"] == pytest.approx(3.0e4, rel=1e-4)
    # without --quasi-static the missing time column is named
    assert main([str(path), "--columns", "t,LVDT,Load", "--model", "bilinear", "--method", "ls", "--quiet"]) == 1
    assert "'t'" in capsys.readouterr().err
    assert main([str(path), "--quasi-static", "--columns", "t,LVDT,Load", "--quiet"]) == 1
    assert "--columns" in capsys.readouterr().err


def test_csv_without_a_header_says_so(tmp_path, capsys):
    path = tmp_path / "noheader.csv"
    path.write_text("0,0,0\n0.1,0.001,12\n0.2,0.002,20\n")
    assert main([str(path), "--model", "bilinear", "--quiet"]) == 1
    err = capsys.readouterr().err
    assert "noheader.csv" in err and "line 1" in err and "holds numbers, not column names" in err
    assert "'time,displacement,force'" in err


@pytest.mark.parametrize("argv, message", [
    (["--model", "bilinear", "--form", "full"],
     "--form full applies to --model pinching-boucwen or asymmetric-boucwen or gap-boucwen or spring-boucwen only"),
    (["--model", "pinching-boucwen", "--method", "ls", "--form", "pinched"], "--form applies to the nls and bayes"),
    (["--model", "bilinear", "--global-generations", "-1"], "--global-generations must be ≥ 0"),
    (["--model", "bilinear", "--starts", "0"], "--starts must be a positive integer"),
])
def test_bad_fit_options_are_named_before_fitting(argv, message, capsys):
    assert main(["--dataset", "daniel", *argv]) == 1
    assert message in capsys.readouterr().err


def test_command_lines_in_the_fitting_docs_parse():
    # every `rths-ident fit ...` line of docs/fitting.md is accepted by the parser as written
    import argparse
    import pathlib
    import shlex

    from rths_ident.cli.fit import add_fit_command

    text = pathlib.Path(__file__).resolve().parents[2].joinpath("docs", "fitting.md").read_text(encoding="utf-8")
    lines = text.replace("\\\n", " ").splitlines()
    commands = [line.strip() for line in lines if line.strip().startswith("rths-ident fit ")]
    assert len(commands) >= 6
    parser = argparse.ArgumentParser(prog="rths-ident")
    add_fit_command(parser.add_subparsers(dest="command", required=True))
    for command in commands:
        args = parser.parse_args(shlex.split(command, comments=True)[1:])
        assert args.command == "fit"


def test_a_three_sample_record_is_refused(tmp_path, capsys):
    # three samples, three bilinear parameters: an exact "fit" of anything, so refused
    path = tmp_path / "tiny.csv"
    path.write_text("displacement,force\n0,0\n0.001,100\n0.002,150\n")
    assert main([str(path), "--quasi-static", "--model", "bilinear", "--method", "ls", "--quiet"]) == 1
    err = capsys.readouterr().err
    assert "a fit needs at least 32 samples; got 3" in err and err.count("\n") == 1
