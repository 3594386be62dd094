"""Every shipped test is a test file of a registered kind, run by the same command as your
own: the shipped files are today's defaults, a written file runs as written, a record
runs again, and the command line overrides any field."""

from __future__ import annotations

import json

import pytest

from rths_ident.cli import main
from rths_ident.declaration import resolve_values
from rths_ident.scenarios.kinds import SHIPPED_TESTS, TEST_KINDS, kind_of, render_kind, shipped_test_file


@pytest.mark.parametrize("name", SHIPPED_TESTS)
def test_a_shipped_test_file_is_its_kinds_default_configuration(name):
    """The shipped file gives exactly the configuration the test ran with before it was a
    file (the configuration class's defaults): the same numbers."""
    test_file = shipped_test_file(name)
    kind_name, kind = kind_of(test_file)
    values, _ = resolve_values(kind.fields, test_file)
    config = kind.config(values)
    defaults = kind.module.CONFIG(**({"case": kind.module.CONFIG.CASES[0]} if hasattr(kind.module.CONFIG, "CASES")
                                     else {}))
    assert kind_name == name and config == defaults


@pytest.mark.parametrize("name", SHIPPED_TESTS)
def test_a_shipped_file_lists_every_field_of_its_kind(name):
    assert shipped_test_file(name).text == render_kind(name)  # scenarios/shipped/ is written from the fields
    keys = set(shipped_test_file(name).lines)
    for field in TEST_KINDS[name].fields:  # every field is in the file, set or commented out
        assert field.path in keys or f"# {field.key} = " in shipped_test_file(name).text, field.path


def _metrics(path):
    return {k: v for k, v in json.loads(path.read_text()).items()
            if k not in ("wall_s", "total_wall_s", "realtime_factor", "phase_s", "test_records")}


def test_a_written_file_checks_and_runs_as_the_shipped_test(tmp_path, capsys):
    path = tmp_path / "my_frame.toml"
    assert main(["new", str(path), "--from", "rc-frame"]) == 0
    assert main(["new", str(path), "--from", "rc-frame"]) == 1  # never replaced silently
    assert "exists" in capsys.readouterr().err
    assert main(["check", str(path)]) == 0
    assert "a valid rc-frame test" in capsys.readouterr().out
    common = ["--duration", "0.6", "--quiet"]
    assert main(["run", str(path), *common, "--json", str(tmp_path / "file.json")]) == 0
    assert main(["run", "rc-frame", *common, "--json", str(tmp_path / "shipped.json")]) == 0
    assert _metrics(tmp_path / "file.json") == _metrics(tmp_path / "shipped.json")


def test_a_field_set_on_the_command_line_is_the_fields_option(tmp_path):
    common = ["--duration", "0.6", "--quiet"]
    assert main(["run", "rc-frame", *common, "--set", "compensation.kind=amb", "--json",
                 str(tmp_path / "set.json")]) == 0
    assert main(["run", "rc-frame", *common, "--compensation", "amb", "--json", str(tmp_path / "option.json")]) == 0
    assert main(["run", "rc-frame", *common, "--json", str(tmp_path / "damb.json")]) == 0
    assert _metrics(tmp_path / "set.json") == _metrics(tmp_path / "option.json")
    assert _metrics(tmp_path / "set.json")["J2_percent"] != _metrics(tmp_path / "damb.json")["J2_percent"]


def test_the_compensation_gains_written_commented_are_the_shipped_values(tmp_path):
    """Uncommenting the dAMB gains that ``new`` writes (their defaults) leaves the metrics
    bit for bit; one gain changed by --set changes them."""
    path = tmp_path / "gains.toml"
    assert main(["new", str(path), "--from", "rc-frame"]) == 0
    text = path.read_text(encoding="utf-8")
    for line in ("log10_P0 = 10.0", "rho = 1.0", "s = 1.0"):
        assert f"# {line}\n" in text
        text = text.replace(f"# {line}\n", f"{line}\n")
    path.write_text(text, encoding="utf-8")
    common = ["--duration", "0.6", "--quiet", "--no-compare"]
    assert main(["run", str(path), *common, "--json", str(tmp_path / "file.json")]) == 0
    assert main(["run", "rc-frame", *common, "--json", str(tmp_path / "shipped.json")]) == 0
    assert main(["run", "rc-frame", *common, "--set", "compensation.log10_P0=6", "--json",
                 str(tmp_path / "tuned.json")]) == 0
    assert _metrics(tmp_path / "file.json") == _metrics(tmp_path / "shipped.json")
    assert _metrics(tmp_path / "tuned.json")["J2_percent"] != _metrics(tmp_path / "shipped.json")["J2_percent"]


def test_a_test_record_runs_its_test_again(tmp_path, capsys):
    record = tmp_path / "first.h5"
    assert main(["run", "rc-frame", "--duration", "0.6", "--compensation", "polynomial", "--quiet",
                 "--test-record", str(record), "--json", str(tmp_path / "first.json")]) == 0
    assert main(["run", str(record), "--quiet", "--test-record", str(tmp_path / "again.h5"),
                 "--json", str(tmp_path / "again.json")]) == 0
    first, again = _metrics(tmp_path / "first.json"), _metrics(tmp_path / "again.json")
    assert again == first and again["compensation"] == "polynomial"  # the overrides were kept too


def test_a_bad_file_names_its_line_and_the_valid_fields(tmp_path, capsys):
    path = tmp_path / "bad.toml"
    text = shipped_test_file("lugre-frame").text.replace('kind = "damb"', 'knd = "damb"')
    path.write_text(text, encoding="utf-8")
    assert main(["check", str(path)]) == 1
    line = next(i for i, t in enumerate(text.splitlines(), start=1) if t.startswith("knd ="))
    err = capsys.readouterr().err
    assert f"{path}:{line}: unknown field compensation.knd (did you mean kind?)" in err
    assert main(["run", "no-such-test"]) == 1
    assert "lugre-frame | bw-frame" in capsys.readouterr().err


def test_list_and_per_test_help(capsys):
    assert main(["run", "--list"]) == 0
    out = capsys.readouterr().out
    assert all(name in out for name in SHIPPED_TESTS)
    assert main(["run", "rc-frame", "--help"]) == 0
    help_text = capsys.readouterr().out
    assert "--ns-model" in help_text and "--initial-error" not in help_text and "--batch" not in help_text


def test_a_kind_of_its_own_is_written_at_its_defaults(tmp_path, capsys):
    """``new --from shear-frame``: your own frame, every field at its default (the file is
    the kind's rendering under the file's name), a valid test."""
    path = tmp_path / "my_own.toml"
    assert main(["new", str(path), "--from", "shear-frame"]) == 0
    assert "a shear-frame test at its defaults" in capsys.readouterr().out
    assert path.read_text() == render_kind("shear-frame", None, "my_own")
    assert main(["check", str(path)]) == 0  # runs as written: tests/scenarios/test_shear_frame.py runs the kind
    assert "a valid shear-frame test" in capsys.readouterr().out
    assert main(["new", str(tmp_path / "x.toml"), "--from", "my-frame"]) == 1
    assert "or a test kind (shear-frame)" in capsys.readouterr().err
