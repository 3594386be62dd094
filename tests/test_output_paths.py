"""Output paths are checked before the work starts (rths_ident.output_paths and the
commands that use it)."""

import os

import pytest

from rths_ident.cli import main
from rths_ident.output_paths import OutputPathError, check_output_file, check_output_folder


def test_output_file_rules(tmp_path):
    assert check_output_file("--json", tmp_path / "m.json") == tmp_path / "m.json"
    with pytest.raises(OutputPathError, match=r"--json .*: the folder .*nope.* does not exist"):
        check_output_file("--json", tmp_path / "nope" / "deeper" / "m.json")
    with pytest.raises(OutputPathError, match=r"--json .*: is a folder"):
        check_output_file("--json", tmp_path)
    (tmp_path / "file").write_text("x")
    with pytest.raises(OutputPathError, match=r"is a file, not a folder"):
        check_output_file("--json", tmp_path / "file" / "m.json")
    # a file into the --plots folder the same command creates
    assert check_output_file("--json", tmp_path / "new" / "m.json", will_exist=tmp_path / "new")


def test_output_folder_rules(tmp_path):
    assert check_output_folder("--plots", tmp_path) == tmp_path
    assert check_output_folder("--plots", tmp_path / "new") == tmp_path / "new"
    assert not (tmp_path / "new").exists()  # checked, not created
    with pytest.raises(OutputPathError, match=r"--plots .*: the folder .*a.* does not exist"):
        check_output_folder("--plots", tmp_path / "a" / "b")
    (tmp_path / "f.png").write_text("x")
    with pytest.raises(OutputPathError, match=r"--plots .*f\.png: is an existing file, not a folder"):
        check_output_folder("--plots", tmp_path / "f.png")
    with pytest.raises(OutputPathError, match=r"--plots .*loops\.png: names a file; give a folder"):
        check_output_folder("--plots", tmp_path / "loops.png")  # new, named like a file
    assert not (tmp_path / "loops.png").exists()


@pytest.mark.skipif(os.geteuid() == 0, reason="root may write anywhere")
def test_read_only_folder(tmp_path):
    tmp_path.chmod(0o500)
    try:
        with pytest.raises(OutputPathError, match="not writable"):
            check_output_file("--json", tmp_path / "m.json")
    finally:
        tmp_path.chmod(0o700)


@pytest.fixture
def no_scenario_work(monkeypatch):
    """Any scenario work fails the test: the output check must come first."""
    from rths_ident import scenarios

    def forbidden(name):
        raise AssertionError("the scenario was loaded before the output paths were checked")

    monkeypatch.setattr(scenarios, "load", forbidden)


@pytest.mark.parametrize("option, make, message", [
    ("--json", lambda p: p / "nonexistent" / "dir" / "out.json", "does not exist"),
    ("--json", lambda p: p, "is a folder"),
    ("--plots", lambda p: (p / "f.png").write_text("x") and p / "f.png", "is an existing file"),
    ("--plots", lambda p: p / "a" / "b" / "c", "does not exist"),
])
def test_run_checks_outputs_before_the_run(tmp_path, capsys, no_scenario_work, option, make, message):
    path = make(tmp_path)
    assert main(["run", "lugre-frame", "--duration", "1", option, str(path), "--quiet"]) == 1
    err = capsys.readouterr().err
    assert option in err and message in err
    assert not (tmp_path / "nonexistent").exists() and not (tmp_path / "a").exists()


def test_fit_checks_outputs_before_the_fit(tmp_path, capsys, monkeypatch):
    from rths_ident.estimators import offline

    monkeypatch.setattr(offline, "fit", lambda *a, **k: pytest.fail("fitted before checking --json"))
    assert main(["fit", "--dataset", "kunnath", "--json", str(tmp_path), "--quiet"]) == 1
    assert "--json" in capsys.readouterr().err
    assert main(["fit", "--dataset", "kunnath", "--plots", str(tmp_path / "no" / "figures"), "--quiet"]) == 1
    assert "does not exist" in capsys.readouterr().err
    # the old --plot FILE.png (argparse reads it as --plots): a file name where a folder goes
    assert main(["fit", "--dataset", "kunnath", "--plot", str(tmp_path / "x.png"), "--quiet"]) == 1
    assert "--plots" in capsys.readouterr().err and not (tmp_path / "x.png").exists()


def test_datasets_show_checks_the_plot_path(tmp_path, capsys):
    assert main(["datasets", "show", "elcentro_1940", "--plot", str(tmp_path / "no" / "x.png")]) == 1
    captured = capsys.readouterr()
    assert "--plot" in captured.err and "elcentro_1940:" not in captured.out


def test_run_checks_an_explicit_test_record_path(tmp_path, capsys, no_scenario_work):
    path = tmp_path / "missing" / "deeper" / "record.h5"
    assert main(["run", "lugre-frame", "--test-record", str(path), "--quiet"]) == 1
    assert "--test-record" in capsys.readouterr().err and not (tmp_path / "missing").exists()
