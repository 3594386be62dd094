"""The study's progress line: runs done / planned, elapsed and an ETA that leaves the
first batch (the compilation) out."""

from __future__ import annotations

import io

import pytest

from rths_ident.runner.terminal import StudyProgress


class _Clock:
    def __init__(self, *times):
        self.times = list(times)

    def __call__(self):
        return self.times.pop(0)


def test_eta_counts_from_the_first_batch():
    """Start at 0 s; 4 of 20 runs at 10 s (compilation), 8 at 12 s: 2 s per 4 runs since
    the first batch → 12 runs left take 6 s (the whole-time rate would say 18 s)."""
    out = io.StringIO()
    progress = StudyProgress(stream=out, clock=_Clock(0.0, 10.0, 12.0, 16.0))
    progress(4, 20)
    assert out.getvalue().endswith("4/20 runs, 10.0 s elapsed, ETA 40.0 s")  # 16 runs × 10 s / 4
    progress(8, 20)
    assert out.getvalue().endswith("8/20 runs, 12.0 s elapsed, ETA 6.0 s ")  # padded over "40.0"
    progress(20, 20)
    line = out.getvalue().split("\r")[-1]
    assert line == "  marths [##############################] 20/20 runs, 16.0 s elapsed, ETA 0.0 s\n"


def test_a_shorter_line_covers_the_longer_one():
    out = io.StringIO()
    progress = StudyProgress(stream=out, clock=_Clock(0.0, 100.0, 101.0))
    progress(1, 3)  # ETA 200.0 s
    progress(2, 3)  # ETA 1.0 s: two characters shorter
    first, second = out.getvalue().split("\r")[1:]
    assert len(second) == len(first) and second.endswith("ETA 1.0 s  ")


def test_a_search_writes_a_line_per_iteration_into_a_log():
    """calibrate's events on a stream that is not a terminal: one line per iteration, with
    the best objective so far; the ETA from the first iteration on (2 s per iteration
    since iteration 1 → 8 left take 16 s)."""
    from rths_ident.runner.events import EventStream
    from rths_ident.runner.terminal import TerminalView

    out = io.StringIO()
    view = TerminalView(stream=out, interactive=False)
    stream = EventStream(view)
    progress = stream.iterations_callback(10, "calibrate damb", "best mean J2 [%]")
    clock = _Clock(0.0, 5.0, 7.0)
    view._studies["calibrate damb"] = StudyProgress(stream=out, clock=clock, label="calibrate damb",
                                                     redraw=False, unit="iterations")
    progress(1, 2.5)
    progress(2, 1.23456)
    assert "\r" not in out.getvalue()
    assert out.getvalue().splitlines() == [
        "  calibrate damb [###...........................] 1/10 iterations, 5.0 s elapsed, ETA 45.0 s, "
        "best mean J2 [%] 2.5",
        "  calibrate damb [######........................] 2/10 iterations, 7.0 s elapsed, ETA 16.0 s, "
        "best mean J2 [%] 1.235"]


@pytest.mark.slow
def test_the_cli_prints_progress_per_batch(tmp_path, capsys):
    from rths_ident.cli import main

    assert main(["run", "marths", "--uncertain", "3", "--duration", "6", "--batch", "2",
                 "--json", str(tmp_path / "out.json")]) == 0
    err = capsys.readouterr().err
    assert "2/4 runs" in err and "4/4 runs" in err and "ETA" in err and "elapsed" in err
    assert main(["run", "marths", "--uncertain", "3", "--duration", "6", "--batch", "2", "--quiet",
                 "--json", str(tmp_path / "quiet.json")]) == 0
    assert "runs," not in capsys.readouterr().err
