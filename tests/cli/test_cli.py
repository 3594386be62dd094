"""The rths-ident command line, driven through main([...])."""

from __future__ import annotations

import importlib.resources
import io

import numpy as np
import pytest

import rths_ident
from rths_ident import cli
from rths_ident.errors import DataFileError

STANDARD_GRAVITY = 9.80665


def _raw(relative: str) -> np.ndarray:
    text = importlib.resources.files("rths_ident.datasets").joinpath("data", *relative.split("/")).read_text()
    return np.loadtxt(io.StringIO(text))


def test_version(capsys):
    assert cli.main(["--version"]) == 0
    assert capsys.readouterr().out.strip() == f"rths-ident {rths_ident.__version__}"


def test_no_command_is_a_usage_error(capsys):
    assert cli.main([]) == 2
    err = capsys.readouterr().err  # the one line that matters first, then where the options are
    assert err.startswith("rths-ident: error: the following arguments are required: COMMAND")
    assert "rths-ident --help" in err


def test_datasets_list_prints_a_table(capsys):
    assert cli.main(["datasets", "list"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["name", "kind", "units", "size", "origin"]
    body = {line.split()[0]: line for line in lines[2:]}
    assert set(body) == {
        "elcentro_1940", "elcentro_1940_marths", "kobe_1995", "morgan_hill_1984", "northridge_1994",
        "kunnath", "gill", "daniel", "marths_reference", "marths_numerical",
    }
    assert "1560 samples" in body["elcentro_1940"] and "29×29" in body["marths_reference"]
    assert "Ortiz" in body["gill"]


def test_datasets_list_by_kind(capsys):
    assert cli.main(["datasets", "list", "--kind", "fe_matrices"]) == 0
    names = [line.split()[0] for line in capsys.readouterr().out.splitlines()[2:]]
    assert names == ["marths_numerical", "marths_reference"]


def test_datasets_show_ground_motion_prints_pga_from_the_raw_file(capsys):
    raw_g = _raw("ground_motions/elcentro_1940/elcentro_1940_NS_g_dt0.02.txt")
    assert cli.main(["datasets", "show", "elcentro_1940"]) == 0
    out = capsys.readouterr().out
    values = {line.rsplit("  ", 1)[0].strip(): line.rsplit("  ", 1)[1].strip() for line in out.splitlines() if "  " in line}
    assert float(values["PGA [g]"]) == pytest.approx(np.max(np.abs(raw_g)), rel=1e-5)
    assert float(values["PGA [m/s²]"]) == pytest.approx(np.max(np.abs(raw_g)) * STANDARD_GRAVITY, rel=1e-5)
    assert float(values["dt [s]"]) == pytest.approx(0.02)
    assert float(values["duration [s]"]) == pytest.approx(31.18)
    assert int(values["samples"]) == 1560
    assert "origin" in out and "units as stored" in out


def test_datasets_show_hysteresis_prints_peaks(capsys):
    raw_f = _raw("hysteresis_tests/daniel/load_kN_daniel.txt")
    assert cli.main(["datasets", "show", "daniel"]) == 0
    out = capsys.readouterr().out
    peak_line = next(line for line in out.splitlines() if line.startswith("peak |force| [kN]"))
    assert float(peak_line.split()[-1]) == np.max(np.abs(raw_f)) == 13.0
    assert "146:252-269" in out and "Ortiz" in out


def test_datasets_show_with_plot(tmp_path, capsys):
    output = tmp_path / "kobe.png"
    assert cli.main(["datasets", "show", "kobe_1995", "--plot", str(output)]) == 0
    assert output.read_bytes().startswith(b"\x89PNG")
    assert f"plot written to {output}" in capsys.readouterr().out


def test_unknown_dataset_lists_valid_names_without_traceback(capsys):
    assert cli.main(["datasets", "show", "elcentro"]) == 1
    captured = capsys.readouterr()
    assert captured.err.startswith("rths-ident: error: unknown dataset 'elcentro'; valid names: elcentro_1940,")
    assert "kunnath" in captured.err and "Traceback" not in captured.err
    assert captured.out == ""


def test_plot_into_a_missing_folder_is_a_user_error(tmp_path, capsys):
    assert cli.main(["datasets", "show", "gill", "--plot", str(tmp_path / "no" / "such" / "dir.png")]) == 1
    err = capsys.readouterr().err
    assert err.startswith("rths-ident: error:") and "Traceback" not in err


def test_data_file_error_is_reported_without_traceback(monkeypatch, capsys):
    def damaged(name, **_):
        raise DataFileError("/data/x.txt", "value is NaN", column="acceleration", line=100)

    monkeypatch.setattr("rths_ident.datasets.summarize_dataset", damaged)
    assert cli.main(["datasets", "show", "elcentro_1940"]) == 1
    assert capsys.readouterr().err == "rths-ident: error: /data/x.txt, column 'acceleration', line 100: value is NaN\n"


def test_subcommands_register_through_one_function_each():
    parser = cli.build_parser()
    args = parser.parse_args(["datasets", "show", "gill"])
    assert args.func is cli._datasets_show and args.name == "gill"
    assert cli._add_datasets_command in cli.COMMANDS


def test_a_command_line_that_names_a_command_builds_only_that_one():
    assert cli._requested_command(["--no-compile-cache", "run", "lugre-frame"]) == "run"
    assert cli._requested_command(["datasets", "list"]) == "datasets"
    assert cli._requested_command(["--help"]) is None
    assert cli._requested_command(["nonsense", "run"]) is None
    assert [cli.command_name(add) for add in cli.COMMANDS] == [
        "run", "new", "check", "study", "show", "fit", "calibrate", "bench", "serve", "datasets"]
    only_run = cli.build_parser("run")._subparsers._group_actions[0].choices
    assert list(only_run) == ["run"]
    assert cli.main(["run", "--help"]) == 0


def test_run_lugre_frame_imports_no_plotting_or_other_commands():
    """What `rths-ident run lugre-frame` imports before its run (a fresh interpreter):
    no matplotlib without --plots, nothing of the other commands or optional back-ends."""
    import subprocess
    import sys

    script = (
        "import sys\n"
        "from rths_ident.cli import run\n"
        "_, kind, _, values, _, _ = run.resolve('lugre-frame', [])\n"
        "kind.module.build(kind.config(values))\n"
        "heavy = ('matplotlib', 'openseespy', 'dask', 'distributed', 'numpyro', 'arviz', 'control', 'optax',\n"
        "         'rths_ident.cli.calibrate', 'rths_ident.cli.fit', 'rths_ident.calibration')\n"
        "print(sorted(m for m in heavy if m in sys.modules))\n"
    )
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "[]"
