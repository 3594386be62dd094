import json

import pytest

from rths_ident.cli import main

pytestmark = pytest.mark.slow


def test_run_lugre_frame_writes_metrics_and_plots(tmp_path, capsys):
    out = tmp_path / "metrics.json"
    code = main(["run", "lugre-frame", "--duration", "3", "--json", str(out), "--plots", str(tmp_path / "plots"),
                 "--quiet"])
    assert code == 0
    metrics = json.loads(out.read_text())
    for key in ("J2_percent", "J4_percent", "J4_force_percent", "tau_ms", "params_true", "params_final",
                "param_error_percent", "convergence_time_s", "realtime_factor", "sim_duration_s", "wall_s"):
        assert key in metrics
    assert set(metrics["J4_percent"]) == {"floor1", "floor2", "floor3"}
    assert metrics["sim_duration_s"] == pytest.approx(3.0)
    assert metrics["realtime_factor"] == pytest.approx(metrics["sim_duration_s"] / metrics["wall_s"])
    assert set(metrics["variants"]) == {"rls", "none", "oracle"}
    pngs = sorted(p.name for p in (tmp_path / "plots").glob("*.png"))
    assert pngs == ["parameters.png", "reference_vs_hybrid.png", "specimen_hysteresis.png", "tracking.png",
                    "updating_vs_none.png"]
    report = capsys.readouterr().out
    assert "identified / true" in report and "real time" in report


def test_run_bad_record_is_a_clean_error(capsys):
    code = main(["run", "lugre-frame", "--record", "nope", "--quiet"])
    assert code == 1
    assert "nope" in capsys.readouterr().err
    # a misspelt record is named first, with the valid ones — not blamed on the floor mass
    assert main(["run", "lugre-frame", "--record", "elcentro", "--quiet"]) == 1
    err = capsys.readouterr().err
    assert 'record.ground_motion = "elcentro"' in err and "elcentro_1940 |" in err and "floor mass" not in err


def test_run_with_your_own_record_file(tmp_path, capsys):
    """--record PATH: the shipped El Centro as a two-column CSV in cm/s² drives the loop
    with the same slow-rate record as the shipped name, and the run completes."""
    import numpy as np

    from rths_ident.datasets import load_ground_motion
    from rths_ident.scenarios import components
    from rths_ident.scenarios.lugre_frame import LugreFrameConfig

    t, ag = load_ground_motion("elcentro_1940")
    path = tmp_path / "my_record.csv"
    np.savetxt(path, np.c_[t, 100 * ag], fmt="%.10f", delimiter=",", header="time,acc", comments="")
    own = LugreFrameConfig(record=str(path), record_units="cm/s2", floor_mass=64e3, duration=1.0)
    shipped = LugreFrameConfig(record="elcentro_1940", duration=1.0)
    np.testing.assert_allclose(components.slow_record(own)[1], components.slow_record(shipped)[1],
                               atol=1e-8 * np.max(np.abs(ag)))
    out = tmp_path / "m.json"
    code = main(["run", "lugre-frame", "--record", str(path), "--record-units", "cm/s2", "--floor-mass", "64000",
                 "--duration", "1", "--no-compare", "--quiet", "--json", str(out)])
    assert code == 0, capsys.readouterr().err
    assert json.loads(out.read_text())["record"] == str(path)
    # without the units: a clear error before the run
    assert main(["run", "lugre-frame", "--record", str(path), "--floor-mass", "64000", "--quiet"]) == 1
    assert "--record-units" in capsys.readouterr().err


def test_bench_components_quick(capsys):
    assert main(["bench", "--quick", "--only", "components"]) == 0
    out = capsys.readouterr().out
    assert "LuGre identifier" in out and "µs" in out


def test_run_marths_writes_the_issue_keys_and_figures(tmp_path, capsys):
    out = tmp_path / "marths.json"
    code = main(["run", "marths", "--controller", "lqg", "--record", "elcentro", "--scale", "0.4",
                 "--uncertain", "1", "--duration", "7", "--batch", "2", "--json", str(out),
                 "--plots", str(tmp_path / "plots"), "--quiet"])
    assert code == 0
    metrics = json.loads(out.read_text())
    for key in ("modal_frequencies_hz", "J_nominal", "J_uncertain_mean", "plants", "realisable"):
        assert key in metrics
    assert sorted(metrics["J_nominal"]) == sorted(f"J{i}" for i in range(1, 11))
    assert len(metrics["J_nominal"]["J8"]) == 4 and len(metrics["J_uncertain_mean"]["J2"]) == 2
    assert metrics["batch"] == 2  # both runs in one vmap-ed call
    pngs = sorted(p.name for p in (tmp_path / "plots").glob("*.png"))
    assert pngs == ["marths_indices.png", "marths_interface.png", "marths_tracking.png"]
    assert "realisable" in capsys.readouterr().out
    # the study's test record, by default in the --plots folder: a row per run, as in the JSON
    from rths_ident.benchmarks.marths.study_record import study_rows  # noqa: PLC0415

    rows = study_rows(tmp_path / "plots" / "test_record.h5")
    assert [row["J"] for row in rows] == metrics["J_runs"]


def test_run_marths_says_plainly_what_is_realisable_and_what_is_exceeded(tmp_path, capsys):
    """The report's realisability lines count the runs that pass each test, as the
    JSON's per-run reports say, and label the J table's ``a / b`` columns."""
    out = tmp_path / "marths.json"
    assert main(["run", "marths", "--uncertain", "2", "--duration", "7", "--json", str(out), "--quiet"]) == 0
    text = capsys.readouterr().out
    reports = json.loads(out.read_text())["realisability"]
    n = len(reports)
    within = sum(r["commands_within_saturation"] for r in reports)
    respected = sum(r["limits_respected"] for r in reports)
    assert n == 3
    assert f"commands within ±3.8 V (the benchmark package's test, 'realisable'): {within} of 3 runs" in text
    assert f"actuator limits (force, velocity, stroke) respected in {respected} of 3 runs" in text
    verdict = next(line.strip() for line in text.splitlines() if line.strip().startswith("→"))
    # the sample LQG on El Centro ×0.4: commands well inside ±3.8 V, the 9.34 kN force exceeded (issue 21)
    assert within == n and respected < n
    assert verdict == (f"→ the commands are realisable, but the actuators' limits are exceeded in {n - respected} "
                       f"of {n} runs: not realisable on the benchmark's actuators as they are")
    assert ("values per component — J1–J4: actuator 1 / actuator 2; J5, J6, J7, J9: x4 / θ4 (interface); "
            "J8, J10: x2 / θ2 / x3 / θ3 (upper storeys)") in text


def test_run_marths_checks_its_test_record_path_before_the_study(tmp_path, capsys):
    missing = tmp_path / "missing" / "study.h5"
    assert main(["run", "marths", "--uncertain", "1", "--duration", "6", "--test-record", str(missing),
                 "--quiet"]) == 1
    assert "--test-record" in capsys.readouterr().err and not missing.parent.exists()
    assert main(["run", "marths", "--uncertain", "1", "--duration", "6", "--test-record", str(tmp_path),
                 "--quiet"]) == 1
    assert "is a folder" in capsys.readouterr().err


def test_run_marths_refuses_options_of_other_scenarios(capsys):
    """A test's options are its own: another test's option is a usage error of one line
    that names it and where the test's options are listed."""
    assert main(["run", "marths", "--compensation", "damb", "--quiet"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("rths-ident run marths: error: unrecognized arguments: --compensation damb")
    assert "rths-ident run marths --help" in err and "usage:" not in err
    assert main(["run", "lugre-frame", "--batch", "4", "--quiet"]) == 2
    assert "unrecognized arguments: --batch 4" in capsys.readouterr().err
    assert main(["run", "marths", "--dask", "nowhere", "--quiet"]) == 1
    assert "--dask must be" in capsys.readouterr().err


def test_none_variant_reports_what_the_numerical_substructure_used():
    from rths_ident.runner.report import parameter_lines as _parameter_lines

    result = {"updating": "none", "params_true": {"Fc": 22400.0},
              "ns_params_final": {"Fc": 15680.0}, "params_final": {"Fc": 22390.0},
              "convergence_time_s": {"Fc": 1.9}, "param_error_percent": {"Fc": 0.04}}
    lines = _parameter_lines(result)
    assert "numerical substructure used / true" in lines[0]
    assert "15680 / 22400" in lines[1] and "error 30.000 %" in lines[1]  # 1 − 15680/22400 = 0.3
    assert "watching only" in lines[-1] and "22390" in lines[-1]
    result["updating"] = "rls"
    assert _parameter_lines(result)[0] == "  identified / true:"


def test_run_prints_phase_lines_with_timings(tmp_path, capsys):
    """Progress a person can read: one line per phase on stderr, in order, each timed."""
    assert main(["run", "lugre-frame", "--duration", "1", "--no-compare",
                 "--test-record", str(tmp_path / "record.h5")]) == 0
    err = capsys.readouterr().err
    lines = [line.strip() for line in err.splitlines() if " … " in line and line.strip().endswith(" s")]
    phases = [line.split(" … ")[0] for line in lines]
    assert phases == ["building", "compiling", "running rls", "comparing"]
    assert all(float(line.split(" … ")[1].removesuffix(" s")) >= 0.0 for line in lines)


def test_bench_json_has_min_and_median(tmp_path):
    out = tmp_path / "bench.json"
    assert main(["bench", "--quick", "--only", "components", "--json", str(out)]) == 0
    figures = json.loads(out.read_text())
    assert {"cpu", "cores", "jax", "jaxlib"} <= set(figures["machine"])
    for name, row in figures["components_per_fast_step"].items():
        assert 0.0 < row["us_min"] <= row["us_median"], name
        assert row["flops"] > 0.0, name


def test_marths_command_lines_in_the_docs_parse_and_configure():
    # every `rths-ident run marths ...` line of docs/benchmarks/marths.md is accepted as written
    import pathlib
    import shlex

    from rths_ident.cli.run import resolve

    text = pathlib.Path(__file__).resolve().parents[2].joinpath("docs", "benchmarks", "marths.md").read_text(
        encoding="utf-8")
    commands = [line.strip() for line in text.splitlines() if line.strip().startswith("rths-ident run marths")]
    assert len(commands) >= 4
    for command in commands:
        words = shlex.split(command, comments=True)[2:]  # after "rths-ident run"
        _, kind, _, values, _, _ = resolve(words[0], words[1:])
        cfg = kind.config(values)
        batch = int(words[words.index("--batch") + 1]) if "--batch" in words else 0
        dask = words[words.index("--dask") + 1] if "--dask" in words else None
        for study in getattr(cfg, "studies", (cfg,)):  # --record all: a study per record
            assert study.batch == batch and study.dask == dask


def test_run_marths_over_several_records_from_one_command(tmp_path, capsys):
    out = tmp_path / "records.json"
    code = main(["run", "marths", "--record", "elcentro,kobe", "--uncertain", "1", "--duration", "7",
                 "--json", str(out), "--plots", str(tmp_path / "plots"), "--quiet"])
    assert code == 0
    metrics = json.loads(out.read_text())
    assert metrics["records"] == ["elcentro", "kobe"]
    assert metrics["record_names"] == ["elcentro_1940_marths", "kobe_1995"]
    for study in metrics["by_record"].values():
        assert sorted(study["J_uncertain_mean"]) == sorted(f"J{i}" for i in range(1, 11))
    text = capsys.readouterr().out
    assert "2 records" in text and "kobe (kobe_1995" in text and "largest over runs and actuators" in text
    pngs = sorted(p.name for p in (tmp_path / "plots").glob("*.png"))
    assert "marths_records.png" in pngs and "marths_tracking-kobe.png" in pngs and len(pngs) == 7
    assert sorted(p.name for p in (tmp_path / "plots").glob("*.h5")) == ["test_record-elcentro.h5",
                                                                         "test_record-kobe.h5"]


def test_run_marths_refuses_the_stepwise_engine_before_any_work(capsys):
    # one record or several: a clear error naming the engine it runs on
    for record in ("elcentro", "all"):
        assert main(["run", "marths", "--record", record, "--engine", "stepwise", "--quiet"]) == 1
        assert 'run.engine = "stepwise": expected fused' in capsys.readouterr().err


@pytest.mark.slow
def test_ctrl_c_brings_a_paced_run_to_rest_and_says_so_in_the_record(tmp_path, pressable):
    """Ctrl-C during a paced step-wise run with the live page served: the same stop as
    without the page and as the page's STOP — the specimen brought to rest, the record says
    "stopped by the operator (Ctrl-C) at slow step k, t = … s" with every completed step,
    one line, exit status 130 (docs/endings.md)."""
    import os  # noqa: PLC0415
    import signal  # noqa: PLC0415
    import subprocess  # noqa: PLC0415
    import sys  # noqa: PLC0415
    import time  # noqa: PLC0415
    from pathlib import Path  # noqa: PLC0415

    from rths_ident.records import read_test_record  # noqa: PLC0415

    record_path = tmp_path / "record.h5"
    src = str(Path(__file__).resolve().parents[2] / "src")
    process = pressable([sys.executable, "-m", "rths_ident.cli", "run", "lugre-frame", "--engine", "stepwise",
                         "--realtime", "--duration", "20", "--pad", "1", "--no-compare", "--quiet",
                         "--live", "--live-port", "0", "--test-record", str(record_path),
                         # on a loaded machine a late target makes dAMB's command jump past the
                         # 3 m/s command-velocity interlock (4.8 m/s seen): this test is about Ctrl-C
                         "--set", "interlocks.command_velocity=100"], cwd=tmp_path, stdout=subprocess.PIPE,
                        stderr=subprocess.PIPE, text=True, env={**os.environ, "PYTHONPATH": src})
    try:
        deadline = time.monotonic() + 300
        while time.monotonic() < deadline:  # the record is flushed every 0.5 s while the test runs
            time.sleep(0.5)
            if record_path.exists():
                try:
                    if read_test_record(record_path).n_steps >= 100:
                        break
                except Exception:  # noqa: BLE001 - the header is being written
                    continue
        process.send_signal(signal.SIGINT)
        _, err = process.communicate(timeout=120)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == 130, err
    record = read_test_record(record_path)
    stop = [e for e in record.events if e.kind == "stop"][0]
    assert stop.message.startswith(f"stopped by the operator (Ctrl-C) at slow step {stop.step}, t = ")
    assert "The specimen was brought to rest" in stop.message and not record.errors()
    assert f"rths-ident: stopped by the operator (Ctrl-C) at slow step {stop.step}, t = " in err
    assert f"the specimen was brought to rest; test record → {record_path}" in err
    # the step in progress when Ctrl-C came is kept if the loop had finished it
    assert stop.step <= record.n_steps <= stop.step + 1 and record.n_steps >= 100


def test_the_live_page_port_is_checked_before_any_work(tmp_path, monkeypatch, capsys):
    """--live-port outside 0…65535 is a usage line (status 2, as --port); a port another
    program holds is one line (status 1) before the test is built, and no record folder."""
    import socket  # noqa: PLC0415

    monkeypatch.chdir(tmp_path)
    assert main(["run", "lugre-frame", "--live", "--live-port", "99999", "--quiet"]) == 2
    assert "argument --live-port: expected 0…65535" in capsys.readouterr().err
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        held.listen()
        port = held.getsockname()[1]
        assert main(["run", "lugre-frame", "--live", "--live-port", str(port), "--quiet"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and f"--live-port {port}" in err and "Traceback" not in err
    assert not (tmp_path / "rths-runs").exists() or not any((tmp_path / "rths-runs").iterdir())


def test_check_predict_runs_the_virtual_twin_and_says_go_or_no_go(tmp_path, capsys):
    """``check --predict``: the twin's command-stroke usage is max|x_c| / 0.15 m (the
    actuator's stroke) of the same test run here by the fused loop; the shipped test is a
    go; a test file whose command stroke is 2 mm is a no-go naming the trip (status 3); a
    rig test has no twin (one line, status 1)."""
    import numpy as np

    import rths_ident
    from rths_ident.hybrid.loop.assembled import run_loop
    from rths_ident.scenarios import lugre_frame as lf

    assert main(["check", "lugre-frame", "--duration", "1", "--predict"]) == 0
    out = capsys.readouterr().out
    cfg = lf.LugreFrameConfig(duration=1.0)
    logs, _ = run_loop(lf.build(cfg), "fused", variant=cfg.variant, interlocks=False)
    peak = float(np.max(np.abs(logs["fast"]["command"])))
    assert f"command_stroke         peak {peak:.4g} m of 0.15 m: {100 * peak / 0.15:.0f} %" in out
    assert out.strip().splitlines()[-1].startswith("GO: no interlock trips")
    assert "\ndelay margin (twin over the first 1 s" in out and "  extra loop delay  " in out  # the margin's block

    path = rths_ident.load_test("lugre-frame").with_changes(
        interlocks={"command_stroke": 0.002}, record={"duration": 1.0}).save(tmp_path / "tight.toml")
    assert main(["check", str(path), "--predict"]) == 3
    last = capsys.readouterr().out.strip().splitlines()[-1]
    assert last.startswith("NO-GO: the twin trips interlock command_stroke tripped: ")

    assert main(["check", "rig-sdof", "--predict"]) == 1
    assert "has no virtual twin" in capsys.readouterr().err


def test_realtime_pads_a_shipped_test_unless_the_user_sets_the_padding(tmp_path):
    """A shipped test file writes every field (padding = 0.0 among them): ``--realtime``
    still gives it the 5 s start-up; ``--pad`` or the user's own test file decides."""
    from importlib import resources

    from rths_ident.cli.run import _padding_left_to_default, resolve

    assert _padding_left_to_default(resolve("rc-frame", ["--realtime"])[4])
    assert not _padding_left_to_default(resolve("rc-frame", ["--realtime", "--pad", "0"])[4])
    own = tmp_path / "my-frame.toml"
    own.write_text(resources.files("rths_ident.scenarios").joinpath("shipped", "rc-frame.toml").read_text())
    assert "padding = 0.0" in own.read_text()
    assert not _padding_left_to_default(resolve(str(own), ["--realtime"])[4])


def test_compensation_gains_are_test_file_fields(tmp_path, capsys):
    """``new`` writes the gains commented out at their defaults; ``check`` takes a gain by
    ``--set`` and names a bad one (field and range) in one line."""
    path = tmp_path / "rc.toml"
    assert main(["new", str(path), "--from", "rc-frame"]) == 0
    text = path.read_text(encoding="utf-8")
    assert "# log10_P0 = 10.0" in text and "# rho = 1.0" in text and "# log10_Gamma0 = 6.03" in text
    assert main(["check", str(path), "--set", "compensation.rho=0.995"]) == 0
    capsys.readouterr()
    assert main(["check", str(path), "--set", "compensation.rho=1.5"]) == 1
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "compensation.rho = 1.5" in err and "[1e-06, 1]" in err
    assert main(["check", "rc-frame", "--set", "compensation.log10_Gamma0=5"]) == 1
    assert "a gain of amb" in capsys.readouterr().err
