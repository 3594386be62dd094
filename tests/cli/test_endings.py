"""How a command ends (rths_ident.cli.endings, docs/endings.md), tried as a new user would:
a mistyped board port, a port out of range, a Dask scheduler that is not there, Ctrl-C,
output piped into ``head``, what a refused run leaves behind. One line each, the exit
status of the table, no traceback."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import rths_ident
from rths_ident.cli import main
from rths_ident.cli.endings import EXIT_INTERRUPTED, EXIT_TEST_STOPPED, EXIT_USAGE, EXIT_USER_ERROR
from rths_ident.records import read_test_record

SRC = str(Path(rths_ident.__file__).resolve().parents[1])


def _free_port() -> int:
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_the_exit_statuses_are_the_documented_ones():
    table = (Path(__file__).resolve().parents[2] / "docs" / "endings.md").read_text(encoding="utf-8")
    for status in (EXIT_USER_ERROR, EXIT_USAGE, EXIT_TEST_STOPPED, EXIT_INTERRUPTED):
        assert f"| {status} |" in table
    assert (EXIT_USER_ERROR, EXIT_USAGE, EXIT_TEST_STOPPED, EXIT_INTERRUPTED) == (1, 2, 3, 130)


@pytest.mark.parametrize("port, why", [
    ("/dev/ttyNONE", "the port does not exist (check the board's cable and the port's name)"),
    ("/dev/null", "it is not a serial port (not a terminal device): is it the board's port?"),
])
def test_a_board_port_that_is_not_there_is_one_line_and_the_record_says_why(port, why, tmp_path, capsys):
    path = tmp_path / "test_record.h5"
    code = main(["run", "rig-sdof", "--site", f"serial:{port}", "--quiet", "--test-record", str(path)])
    err = capsys.readouterr().err
    assert code == EXIT_USER_ERROR  # nothing moved: bad input
    [line] = err.strip().splitlines()
    assert line.startswith(f"rths-ident: error: --site serial:{port}: the rig could not be reached, nothing moved: "
                           f"cannot open serial port {port} at 115200 baud: {why}; serial ports here: ")
    record = read_test_record(path)
    assert record.n_steps == 0 and not record.complete
    assert record.errors()[0].message == line.removeprefix("rths-ident: error: ")


@pytest.mark.parametrize("command", [["serve", "site", "--specimen", "linear:k=1e6"], ["serve", "ns"]])
@pytest.mark.parametrize("port", ["99999", "-1", "x"])
def test_a_port_out_of_range_is_one_usage_line(command, port, capsys):
    assert main([*command, "--port", port]) == EXIT_USAGE
    first = capsys.readouterr().err.splitlines()[0]
    assert first == f"rths-ident {' '.join(command[:2])}: error: argument --port: expected 0…65535 (0: a free port), " \
                    f"got '{port}'"


def test_a_dask_scheduler_that_refuses_is_said_at_once(tmp_path, capsys):
    """dask's client would retry for its whole 60 s timeout and then say "timed out"; the
    refusal is said as such, before any run."""
    port = _free_port()
    code = main(["study", "rc-frame", "--vary", "compensation.kind=damb,amb", "--dask", f"tcp://127.0.0.1:{port}",
                 "--quiet", "--json", str(tmp_path / "study.json")])
    assert code == EXIT_USER_ERROR
    [line] = capsys.readouterr().err.strip().splitlines()
    assert line == (f"rths-ident: error: --dask tcp://127.0.0.1:{port}: connection refused — is a Dask scheduler "
                    f"running there? (start one with 'dask scheduler --port {port}' and workers with "
                    f"'dask worker tcp://127.0.0.1:{port}')")
    assert not (tmp_path / "study.json").exists()


def test_a_run_refused_after_start_up_leaves_no_empty_folder(tmp_path, monkeypatch, capsys):
    """lugre-frame's LuGre column has no OpenSees twin: refused when the test is built,
    before its record opens — and no ``rths-runs/lugre-frame-<time>/`` is left behind."""
    monkeypatch.chdir(tmp_path)
    assert main(["run", "lugre-frame", "--ns", "opensees", "--engine", "stepwise", "--quiet"]) == EXIT_USER_ERROR
    assert "no OpenSees twin" in capsys.readouterr().err
    assert list(tmp_path.iterdir()) == []


def test_output_into_a_pipe_whose_reader_went_away_is_quiet():
    """``rths-ident datasets list | head -0``: the reader is gone before the first line;
    no "Broken pipe", the command's own exit status."""
    child = subprocess.Popen([sys.executable, "-m", "rths_ident.cli", "datasets", "list"], stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, env={**os.environ, "PYTHONPATH": SRC})
    child.stdout.close()  # the reader goes away before the child writes (its start-up takes seconds)
    err = child.stderr.read().decode()
    assert child.wait(timeout=120) == 0 and err == ""


@pytest.mark.slow
def test_ctrl_c_in_a_fused_run_is_one_line_and_the_record_says_why(tmp_path, monkeypatch, capsys):
    """Ctrl-C while the fused engine computes (nothing moves on the virtual site): the
    record's stop event says the operator stopped it and that no step is kept; one line;
    130."""
    from rths_ident.hybrid.loop import assembled

    compiled = assembled.compiled_fused_runner

    def interrupted(test, initial=None):
        runner = compiled(test, initial)

        def run(*args):
            raise KeyboardInterrupt  # what Python raises when the call returns after a Ctrl-C
        return run if initial is not None else runner

    monkeypatch.setattr(assembled, "compiled_fused_runner", interrupted)
    path = tmp_path / "test_record.h5"
    code = main(["run", "lugre-frame", "--duration", "0.5", "--quiet", "--test-record", str(path)])
    assert code == EXIT_INTERRUPTED
    [line] = capsys.readouterr().err.strip().splitlines()
    assert line == ("rths-ident: stopped by the operator (Ctrl-C) before the first slow step: the fused engine computes "
                    f"the whole record in one compiled call (nothing moves on a virtual site); no slow step is kept; "
                    f"test record → {path}")
    record = read_test_record(path)
    assert record.n_steps == 0 and not record.errors() and record.events[-1].kind == "stop"
    assert record.status().startswith("not complete: stopped by the operator (Ctrl-C) before the first slow step")


@pytest.mark.slow
def test_a_record_beside_the_json_is_not_replaced_silently(tmp_path, capsys):
    json_path = tmp_path / "x.json"
    for _ in range(2):
        assert main(["run", "lugre-frame", "--duration", "0.5", "--json", str(json_path)]) == 0
    err = capsys.readouterr().err
    line = f"  the test record {tmp_path / 'test_record.h5'} of an earlier run is replaced by this run's"
    assert err.count(line) == 1  # the second run only
    assert read_test_record(tmp_path / "test_record.h5").complete


@pytest.mark.slow
def test_an_interlock_in_the_test_file_ends_with_status_3_and_the_record_says_which(tmp_path, capsys):
    """A lugre-frame test file whose ``[interlocks]`` declares a 2 mm command stroke (the
    command reaches 7.4 mm): the step-wise run stops through the safe stop at the first
    slow step whose command passes 2 mm, exit status 3, one line naming the interlock, its
    value and limit, the step and the time; the record's ``interlock`` event says the same
    at that step, its ``error`` event how the specimen was left, and it keeps every
    completed step, whose commands stay within 2 mm until that one."""
    path = rths_ident.load_test("lugre-frame").with_changes(
        interlocks={"command_stroke": 0.002}, record={"duration": 1.0},
        run={"engine": "stepwise"}).save(tmp_path / "tight.toml")
    record_path = tmp_path / "test_record.h5"
    code = main(["run", str(path), "--quiet", "--test-record", str(record_path), "--no-compare"])
    assert code == EXIT_TEST_STOPPED
    [line] = [text for text in capsys.readouterr().err.strip().splitlines() if text.startswith("rths-ident:")]
    assert line.startswith("rths-ident: the test stopped: interlock command_stroke tripped: sample ")
    assert " m beyond the limit 0.002 m at slow step " in line and "The specimen was brought to rest" in line
    assert line.endswith(f"test record → {record_path}")
    record = read_test_record(record_path)
    [event] = [e for e in record.events if e.kind == "interlock"]
    assert event.message in line and record.errors()[0].step == event.step
    commands = record.fast_series("fast/command")
    ratio = commands.size // record.n_steps
    first = int(np.flatnonzero(np.abs(commands) > 0.002)[0])
    assert first // ratio == event.step == record.n_steps - 1
    assert f"slow step {event.step} (t = {event.time:.3f} s)" in event.message
