"""A paced (real-time) run of a scenario: the record takes its length in wall time and
the report has the pacer's figures; pacing refuses the fused engine."""

import time

import pytest

from rths_ident.errors import ParameterError
from rths_ident.cli import main
from rths_ident.scenarios import rc_frame as rc
from rths_ident.runner.options import RunOptions

pytestmark = pytest.mark.slow


def test_realtime_run_takes_the_record_length_and_reports_latency():
    cfg = rc.RCFrameConfig(duration=1.0, pad_seconds=0.2)
    start = time.perf_counter()
    result = rc.run_scenario(cfg, RunOptions(engine="stepwise", compare=False, realtime=True))
    elapsed = time.perf_counter() - start
    # 60 windows of 20 ms: the paced loop cannot finish before the last one opens
    assert result["sim_duration_s"] == pytest.approx(1.2)
    assert result["wall_s"] >= 1.18
    assert elapsed >= result["wall_s"]
    rt = result["realtime"]
    assert rt["startup_steps"] == 10
    assert rt["missed_after_startup"] <= rt["missed_deadlines"] == result["missed_deadlines"]
    lat = result["latency_ms"]
    assert 0 < lat["p50"] <= lat["p99"] <= lat["max"]
    assert rt["ns_step_ms"]["p50"] < lat["p50"]  # the NS step is part of each step's latency


def test_pacing_needs_the_stepwise_engine(capsys):
    with pytest.raises(ParameterError, match="step-wise"):
        rc.run_scenario(rc.RCFrameConfig(duration=0.1), RunOptions(engine="fused", realtime=True))
    assert main(["run", "rc-frame", "--realtime", "--engine", "fused", "--duration", "0.1", "--quiet"]) == 1
    assert "--realtime" in capsys.readouterr().err


def test_a_scenario_without_a_stepwise_run_cannot_be_paced(capsys):
    assert main(["run", "marths", "--realtime", "--quiet"]) == 2  # not an option of a study
    assert "unrecognized arguments: --realtime" in capsys.readouterr().err
    from rths_ident.runner.run import check_engine  # noqa: PLC0415
    from rths_ident.scenarios import marths  # noqa: PLC0415

    with pytest.raises(ParameterError, match="--realtime: marths has no step-wise run to pace"):
        check_engine("marths", marths, "stepwise", realtime=True)
