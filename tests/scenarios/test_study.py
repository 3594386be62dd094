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
