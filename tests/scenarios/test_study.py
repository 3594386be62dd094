"""A study of any test: its runs planned from --vary (sweep, grid, random sample), each
checked before the first runs, the same numbers here and on a Dask cluster."""

from __future__ import annotations

import json

import numpy as np
import pytest

from rths_ident.cli import main
from rths_ident.declaration import DeclarationError
from rths_ident.errors import ParameterError
from rths_ident.scenarios.kinds import shipped_test_file
from rths_ident.scenarios.study import check_plan, parse_variation, plan_study, run_study

TIMING = ("wall_s", "total_wall_s", "realtime_factor", "phase_s")


def test_variations_parse_into_sweeps_grids_and_ranges():
    assert parse_variation("compensation.kind=damb,amb").values == ("damb", "amb")
    assert parse_variation("rates.slow=50,100").values == (50, 100)
    assert parse_variation("record.scale=1:2:3").values == (1.0, 1.5, 2.0)
    assert parse_variation("record.scale=0.5:1.5").uniform == (0.5, 1.5)
    for bad in ("compensation=damb", "record.scale=1:x", "record.scale=1:2:2.5", "record.scale="):
        with pytest.raises(DeclarationError):
            parse_variation(bad)


def test_a_plan_is_the_grid_times_the_draws_and_repeats_with_its_seed():
    test_file = shipped_test_file("rc-frame")
    variations = [parse_variation("compensation.kind=damb,amb"), parse_variation("record.scale=0.5:1.5")]
    plan = plan_study("rc-frame", test_file, variations, samples=3, seed=7)
    assert len(plan.runs) == 6 and plan.varied == ("compensation.kind", "record.scale")
    assert [dict(r)["compensation.kind"] for r in plan.runs] == ["damb"] * 3 + ["amb"] * 3
    scales = [dict(r)["record.scale"] for r in plan.runs]
    assert all(0.5 <= s <= 1.5 for s in scales) and len(set(scales)) == 6
    again = plan_study("rc-frame", test_file, variations, samples=3, seed=7)
    assert again.runs == plan.runs  # the draws are the plan's: any machine, any order
    with pytest.raises(ParameterError, match="--samples"):
        plan_study("rc-frame", test_file, [parse_variation("record.scale=0.5:1.5")])


def test_a_bad_value_in_any_run_is_an_error_before_the_first_runs():
    plan = plan_study("rc-frame", shipped_test_file("rc-frame"),
                      [parse_variation("compensation.kind=damb,nonsense")])
    with pytest.raises(DeclarationError, match='compensation.kind = "nonsense"'):
        check_plan(plan)


def _numbers(result):
    return [{k: v for k, v in run["metrics"].items() if k not in TIMING} for run in result["runs"]]


@pytest.mark.slow
def test_the_same_numbers_here_and_on_a_dask_cluster(tmp_path, capsys):
    pytest.importorskip("distributed")
    plan = plan_study("rc-frame", shipped_test_file("rc-frame"),
                      [parse_variation("compensation.kind=damb,polynomial"), parse_variation("record.duration=0.6")])
    here = run_study(plan)
    there = run_study(plan, dask="local")
    assert _numbers(here) == _numbers(there)
    j2 = [run["metrics"]["J2_percent"] for run in here["runs"]]
    assert j2[0] != j2[1]  # the compensators do differ
    assert here["summary"]["J2_percent"]["min"] == min(j2)
    out = tmp_path / "study.json"
    assert main(["study", "rc-frame", "--vary", "compensation.kind=damb,polynomial", "--vary",
                 "record.duration=0.6", "--json", str(out), "--csv", str(tmp_path / "s.csv"), "--quiet"]) == 0
    assert _numbers(json.loads(out.read_text())) == _numbers(here)
    rows = np.genfromtxt(tmp_path / "s.csv", delimiter=",", names=True, dtype=None, encoding="utf-8")
    assert list(rows["J2_percent"]) == pytest.approx(j2, rel=1e-12)


class _CountedRuns:
    """A stand-in for ``run_variant`` (the runs themselves are the runner's; here what a
    study does around them): run i's metric is 1.5·i; Ctrl-C during run ``interrupt_at``."""

    def __init__(self, interrupt_at=None):
        self.calls, self.interrupt_at = [], interrupt_at

    def __call__(self, plan, index):
        self.calls.append(index)
        if index == self.interrupt_at:
            raise KeyboardInterrupt
        return {"run": index, "varied": dict(plan.runs[index]), "metrics": {"J2_percent": 1.5 * index},
                "stopped": None, "wall_s": 0.0}


def test_a_study_stopped_by_ctrl_c_keeps_its_runs_and_resumes_with_the_missing_ones(monkeypatch):
    from rths_ident.operator_stop import OperatorStopped
    from rths_ident.scenarios import study

    plan = plan_study("rc-frame", shipped_test_file("rc-frame"), [parse_variation("record.scale=1:2:4")])
    monkeypatch.setattr(study, "run_variant", _CountedRuns(interrupt_at=2))
    saved = []
    with pytest.raises(OperatorStopped) as caught:
        run_study(plan, on_run=saved.append, batch=0)
    partial = caught.value.partial
    assert [r["run"] for r in partial["runs"]] == [0, 1] and partial["missing_runs"] == [2, 3]
    assert not partial["complete"] and saved[-1]["runs"] == partial["runs"]  # the JSON was up to date
    again = _CountedRuns()
    monkeypatch.setattr(study, "run_variant", again)
    resumed = run_study(study.plan_from_json(json.loads(json.dumps(partial["plan"]))), done=partial["runs"], batch=0)
    assert again.calls == [2, 3] and resumed["complete"] and resumed["missing_runs"] == []
    assert [r["metrics"]["J2_percent"] for r in resumed["runs"]] == [0.0, 1.5, 3.0, 4.5]
    assert resumed["summary"]["J2_percent"] == {"min": 0.0, "median": 2.25, "max": 4.5, "runs": 4}


def test_study_resume_from_the_command_line(tmp_path, monkeypatch, capsys):
    from rths_ident.scenarios import study

    path = tmp_path / "study.json"
    monkeypatch.setattr(study, "run_variant", _CountedRuns(interrupt_at=1))
    assert main(["study", "rc-frame", "--vary", "record.scale=1,1.5,2", "--json", str(path), "--quiet",
                 "--batch", "0"]) == 130
    line = capsys.readouterr().err.strip().splitlines()[-1]
    assert line == (f"rths-ident: study stopped by the operator (Ctrl-C) after 1 of 3 runs; study → {path}; resume: "
                    f"rths-ident study --resume {path}")
    kept = json.loads(path.read_text())
    assert [r["run"] for r in kept["runs"]] == [0] and kept["complete"] is False
    again = _CountedRuns()
    monkeypatch.setattr(study, "run_variant", again)
    assert main(["study", "--resume", str(path), "--quiet", "--batch", "0"]) == 0
    assert again.calls == [1, 2]
    done = json.loads(path.read_text())
    assert done["complete"] and [r["varied"]["record.scale"] for r in done["runs"]] == [1, 1.5, 2]
