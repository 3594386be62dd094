"""A short ``rths-ident run`` writes its test record; ``rths-ident show`` summarises and
plots it; ``rths-ident fit`` reads it and recovers the specimen's parameters. Plus
``show`` on records that did not finish (built directly with the writer)."""

import json

import numpy as np
import pytest

from rths_ident import metrics
from rths_ident.cli import main
from rths_ident.scenarios import lugre_frame
from rths_ident.scenarios.components import slow_record
from rths_ident.records import TestRecordWriter, read_test_record


@pytest.fixture(scope="module")
def run_record(tmp_path_factory):
    """lugre-frame, 3 s (the configuration of test_run_command: one compiled loop)."""
    folder = tmp_path_factory.mktemp("run")
    code = main(["run", "lugre-frame", "--duration", "3", "--no-compare", "--json", str(folder / "metrics.json"),
                 "--quiet"])
    assert code == 0
    return folder / "test_record.h5", json.loads((folder / "metrics.json").read_text())


@pytest.mark.slow
def test_the_run_record_holds_the_run(run_record):
    path, result = run_record
    record = read_test_record(path)
    assert record.complete and record.closed and record.kind == "run"
    assert record.n_steps == 150 and record.config["scenario"] == "lugre-frame"
    assert record.config["settings"]["duration"] == 3 and record.config["engine"] == "fused"
    assert record.metrics == result  # the JSON of --json, whole
    # the recorded signals are those the run's metrics were computed from
    j2 = metrics.j2_tracking_error(record.steps["fast/target"].ravel(), record.steps["fast/measured"].ravel())
    assert j2 == pytest.approx(result["J2_percent"], rel=1e-12)
    final = dict(zip(record.config["param_names"], record.steps["update/estimate"][-1]))
    assert final == pytest.approx(result["params_final"], rel=1e-12)
    assert record.units["update/estimate"] == {"sigma0": "N/m", "Fc": "N", "sigma3": "N/m"}
    np.testing.assert_allclose(record.time, 0.02 * np.arange(1, 151), rtol=1e-12)
    time_slow, ground_accel = slow_record(lugre_frame.LugreFrameConfig(duration=3.0))
    np.testing.assert_array_equal(record.steps["ground_accel"], ground_accel)
    np.testing.assert_array_equal(record.time, time_slow)


@pytest.mark.slow
def test_show_prints_the_summary_and_draws_the_plots(run_record, tmp_path, capsys):
    path, result = run_record
    assert main(["show", str(path), "--plots", str(tmp_path / "plots")]) == 0
    out = " ".join(capsys.readouterr().out.split())  # long lines are wrapped
    assert "status complete: the test ran to its end" in out
    assert "150 slow steps, test time 0.000 … 3.000 s (3.000 s) at 50 Hz; 80 fast samples per step (4000 Hz)" in out
    assert f"J2_percent {result['J2_percent']:.6g}" in out
    assert "update/estimate (150, 3) float64 [sigma0 N/m, Fc N, sigma3 N/m]" in out
    pngs = sorted(p.name for p in (tmp_path / "plots").glob("*.png"))
    assert pngs == ["parameters.png", "response.png", "specimen_hysteresis.png", "tracking.png"]


@pytest.mark.slow
def test_fit_reads_the_record_and_recovers_the_specimen(run_record, tmp_path, capsys):
    """The specimen's true LuGre parameters come from the scenario's own definition
    (seed 001 Table 3.1 scaled), not from the record."""
    path, _ = run_record
    out = tmp_path / "fit.json"
    assert main(["fit", str(path), "--model", "lugre", "--method", "ls", "--starts", "2", "--json", str(out),
                 "--quiet"]) == 0
    fitted = json.loads(out.read_text())["params"]
    true = lugre_frame._column_params(lugre_frame.LugreFrameConfig(duration=3.0))
    for name in ("sigma0", "Fc", "sigma3"):
        assert fitted[name] == pytest.approx(float(getattr(true, name)), rel=0.01), name
    assert "12000 samples; physical time" in capsys.readouterr().out


def _units():
    return {"fast/target": "m", "fast/measured": "m", "fast/force": "N", "ns/displacement": {"roof": "m"},
            "update/estimate": {"k": "N/m"}}


def _step(k, ratio=8):
    x = 0.01 * np.sin(0.3 * (k * ratio + np.arange(ratio)))
    return {"time": 0.02 * (k + 1), "fast": {"target": x, "measured": 0.98 * x, "force": 1e5 * x},
            "ns": {"displacement": [2 * x[-1]]}, "update": {"estimate": [1e5 * (1 - np.exp(-k / 10))]}}


def test_show_of_a_record_stopped_by_an_error(tmp_path, capsys):
    path = tmp_path / "aborted.h5"
    with pytest.raises(ConnectionError):
        with TestRecordWriter.open(path, {"scenario": "spring", "params_true": {"k": 1e5}}, _units(),
                                   time_base={"slow_rate_hz": 50.0, "fast_rate_hz": 400.0, "samples_per_step": 8}) as rec:
            rec.event("start", "stepwise", step=0, time=0.0)
            for k in range(40):
                rec.append(_step(k))
            rec.event("error", "peer went away", step=40, time=0.82)
            raise ConnectionError("peer went away")
    assert main(["show", str(path), "--plots", str(tmp_path / "plots")]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "not complete: stopped by an error at slow step 40: peer went away" in out
    assert "metrics (none: the test did not finish)" in out
    assert "error @ step 40, t 0.820 s peer went away" in out
    pngs = sorted(p.name for p in (tmp_path / "plots").glob("*.png"))
    assert pngs == ["parameters.png", "response.png", "specimen_hysteresis.png", "tracking.png"]


def test_show_of_a_header_only_record(tmp_path, capsys):
    path = tmp_path / "empty.h5"
    TestRecordWriter.open(path, {"scenario": "spring"}, _units()).close()
    assert main(["show", str(path), "--plots", str(tmp_path / "plots")]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "no slow step recorded" in out and "closed before the end of the test (no finish)" in out
    assert list((tmp_path / "plots").glob("*.png")) == []


def test_show_of_a_missing_file_is_a_user_error(tmp_path, capsys):
    assert main(["show", str(tmp_path / "nope.h5")]) == 1
    assert "nope.h5: no such file" in capsys.readouterr().err


def test_a_test_record_path_that_is_a_folder_is_refused_before_the_run(tmp_path, capsys):
    assert main(["run", "lugre-frame", "--duration", "1", "--test-record", str(tmp_path), "--quiet"]) == 1
    assert f"--test-record {tmp_path}: is a folder; give a file name (e.g. {tmp_path / 'test_record.h5'})" in \
        capsys.readouterr().err


def test_show_plots_into_missing_parent_folders_is_refused_before_reading(tmp_path, capsys):
    path = tmp_path / "empty.h5"
    TestRecordWriter.open(path, {"scenario": "spring"}, _units()).close()
    deep = tmp_path / "no" / "such" / "plots"
    assert main(["show", str(path), "--plots", str(deep)]) == 1
    assert "does not exist" in capsys.readouterr().err and not (tmp_path / "no").exists()


@pytest.mark.slow
def test_show_of_a_marths_study_record_stopped_halfway(tmp_path, capsys):
    """A study of 4 runs stopped after its third row: the summary counts 3 of 4 and
    gives the mean J of the finished uncertain runs (runs 1, 2) per component; the plots
    are the study's (J bars over the runs held, the nominal run's tracking)."""
    from rths_ident.benchmarks.marths.study import StudyConfig, run_study  # noqa: PLC0415

    def stop(run, summary):
        if run == 2:
            raise KeyboardInterrupt

    path = tmp_path / "study.h5"
    with pytest.raises(KeyboardInterrupt):
        run_study(StudyConfig(uncertain=3, duration=6.0, batch=0), test_record=path, on_run=stop)
    record = read_test_record(path)
    j2 = (record.steps["J/J2"][1] + record.steps["J/J2"][2]) / 2
    assert main(["show", str(path), "--plots", str(tmp_path / "plots")]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "runs 3 of 4 finished (nominal done, 2 of 3 random plants); missing runs 3" in out
    assert ("not complete: stopped by the operator (Ctrl-C) after 3 of 4 runs (the finished runs are kept; missing "
            "runs: 1)") in out  # Ctrl-C is the operator's stop, not an error
    assert f"J2 nominal {record.steps['J/J2'][0][0]:.2f} / {record.steps['J/J2'][0][1]:.2f} " \
           f"mean of 2 uncertain {j2[0]:.2f} / {j2[1]:.2f}" in out
    assert "histories run_0, run_1" in out
    pngs = sorted(p.name for p in (tmp_path / "plots").glob("*.png"))
    assert pngs == ["marths_indices.png", "marths_interface.png", "marths_tracking.png"]


def test_show_of_a_marths_study_record_without_a_finished_run(tmp_path, capsys):
    """Killed before its first run: the header (configuration, plants, reference) only."""
    from rths_ident.benchmarks.marths.study import StudyConfig, study_plants  # noqa: PLC0415
    from rths_ident.benchmarks.marths.study_record import StudyRecorder  # noqa: PLC0415

    cfg = StudyConfig(uncertain=2)
    t = np.arange(1, 4) / 1024.0
    StudyRecorder(tmp_path / "empty.h5", cfg, study_plants(cfg), (t, np.zeros((3, 2)), np.zeros((3, 4)))).close()
    assert main(["show", str(tmp_path / "empty.h5"), "--plots", str(tmp_path / "plots")]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "runs 0 of 3 finished (nominal not done, 0 of 2 random plants); missing runs 0…2" in out
    assert "J2 nominal —" in out and "histories none reference yes" in out
    assert list((tmp_path / "plots").glob("*.png")) == []
