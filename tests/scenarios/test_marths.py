"""The marths test kind refuses, before the study, a duration that ends inside the
benchmark records' opening zeros (nothing moves: J1–J10 are undefined)."""

from __future__ import annotations

from importlib import resources

import pytest

from rths_ident.benchmarks.marths.study import RECORDS, quiet_start
from rths_ident.cli import main


def _first_motion_in_file(record: str) -> float:
    """The time column's value on the first row with a non-zero acceleration, read from
    the CSV text itself (not through the package's loader)."""
    folder = resources.files("rths_ident.datasets").joinpath("data", "ground_motions", RECORDS[record])
    (csv,) = [f for f in folder.iterdir() if f.name.endswith(".csv")]
    for line in csv.read_text().splitlines()[1:]:
        time, accel = (float(v) for v in line.split(","))
        if accel != 0.0:
            return time
    raise AssertionError(f"{csv.name} never moves")


@pytest.mark.parametrize("record", list(RECORDS))
def test_quiet_start_is_the_records_first_motion(record):
    assert quiet_start(record) == _first_motion_in_file(record) == 5.0


def test_a_run_that_ends_in_the_opening_zeros_is_one_line_before_the_study(monkeypatch, capsys):
    from rths_ident.runner import run

    monkeypatch.setattr(run, "run_test", lambda *a, **k: pytest.fail("the study started"))
    assert main(["run", "marths", "--duration", "2", "--quiet"]) == 1
    err = capsys.readouterr().err.strip()
    assert err == ("rths-ident: error: --duration 2: the elcentro record is zero for its first 5 s (the benchmark's "
                   "padding), so nothing moves and J1–J10 are undefined; expected a duration > 5 s")
    assert main(["check", "marths", "--record", "kobe", "--duration", "5"]) == 1
    assert "the kobe record is zero for its first 5 s" in capsys.readouterr().err
    assert main(["check", "marths", "--duration", "5.5"]) == 0
