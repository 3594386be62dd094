"""Test files: read with the line of every value, checked field by field before anything
is built, overridden from the command line, written back commented."""

from __future__ import annotations

import tomllib

import pytest

from rths_ident.declaration import (
    MISSING,
    DeclarationError,
    Field,
    Override,
    parse_override,
    parse_test_text,
    read_test_file,
    render_test_file,
    resolve_values,
)

FIELDS = [
    Field("test.kind", "run:kind", "the kind", kind=str, choices=("frame",)),
    Field("rates.fast", "fast_rate", "fast rate", unit="Hz", low=1.0, option="--fast-rate"),
    Field("rates.slow", "slow_rate", "slow rate", unit="Hz", low=1.0),
    Field("compensation.kind", "compensation", "compensator", kind=str, choices=("damb", "amb", "none")),
    Field("sensors.noise", "sensor_noise", "noise", kind=bool),
    Field("structure.storeys", "storeys", "storeys", kind=int, low=2),
    Field("record.duration", "duration", "seconds", unit="s", low=0.0, optional=True),
    Field("record.ground_motion", "record", "record", kind=str, choices=("elcentro_1940",),
          open_choices=lambda v: "/" in v or "." in v, is_path=True),
]

TEXT = """# a test
[test]
kind = "frame"

[rates]
fast = 4000.0
slow = 50

[compensation]
kind = "damb"
"""


def test_values_come_with_their_lines_and_types():
    test_file = parse_test_text(TEXT, "my.toml")
    values, origin = resolve_values(FIELDS, test_file)
    assert values == {"run:kind": "frame", "fast_rate": 4000.0, "slow_rate": 50.0, "compensation": "damb"}
    assert isinstance(values["slow_rate"], float)  # an integer in the file is a number in Hz
    assert str(origin["slow_rate"]) == "my.toml:7" and str(origin["compensation"]) == "my.toml:10"


@pytest.mark.parametrize("line, message", [
    ('[compensation]\nkind = "dAMB"', r'my.toml:2: compensation.kind = "dAMB": expected damb \| amb \| none'),
    ("[rates]\nfast = -5.0", r"my.toml:2: rates.fast = -5.0: expected a number ≥ 1 Hz"),
    ('[rates]\nfast = "fast"', r'my.toml:2: rates.fast = "fast": expected a number ≥ 1 Hz'),
    ("[structure]\nstoreys = 2.5", r"my.toml:2: structure.storeys = 2.5: expected a whole number ≥ 2"),
    ('[sensors]\nnoise = "yes"', r'my.toml:2: sensors.noise = "yes": expected true \| false'),
    ("[compensation]\nknd = 1", r"my.toml:2: unknown field compensation.knd \(did you mean kind\?\); "
                                r"\[compensation\] has kind"),
    ("[compensatoin]\nkind = 1", r"my.toml:2: unknown table \[compensatoin\] \(did you mean compensation\?\)"),
])
def test_a_bad_value_names_the_file_the_line_the_field_and_what_is_expected(line, message):
    with pytest.raises(DeclarationError, match=message):
        resolve_values(FIELDS, parse_test_text(line, "my.toml"))


def test_toml_syntax_errors_and_missing_files_are_clear(tmp_path):
    with pytest.raises(DeclarationError, match=r"my.toml: not a valid test file \(TOML\).*line 2"):
        parse_test_text("[rates]\nfast = = 3", "my.toml")
    with pytest.raises(DeclarationError, match="no such test file"):
        read_test_file(tmp_path / "nothing.toml")
    with pytest.raises(DeclarationError, match=r"one level of tables: write its keys into \[rates\]"):
        parse_test_text("[rates.sub]\nx = 1", "my.toml")


def test_overrides_win_and_are_checked_like_the_file():
    test_file = parse_test_text(TEXT, "my.toml")
    values, origin = resolve_values(FIELDS, test_file, [parse_override("compensation.kind=amb"),
                                                        Override("rates.fast", "8000", "--fast-rate")])
    assert values["compensation"] == "amb" and values["fast_rate"] == 8000.0
    assert str(origin["fast_rate"]) == "--fast-rate"
    with pytest.raises(DeclarationError, match=r'--set compensation.kind: compensation.kind = "x"'):
        resolve_values(FIELDS, test_file, [parse_override("compensation.kind=x")])
    with pytest.raises(DeclarationError, match="expected SECTION.KEY=VALUE"):
        parse_override("compensation=amb")
    values, _ = resolve_values(FIELDS, test_file, [parse_override("record.duration=none")])
    assert values["duration"] is None  # an optional field can be unset from the command line


def test_a_relative_path_in_a_file_is_read_from_the_files_folder(tmp_path):
    folder = tmp_path / "lab"
    folder.mkdir()
    path = folder / "test.toml"
    path.write_text(TEXT + '\n[record]\nground_motion = "data/my.csv"\n', encoding="utf-8")
    values, _ = resolve_values(FIELDS, read_test_file(path))
    assert values["record"] == str(folder / "data" / "my.csv")
    path.write_text(TEXT + '\n[record]\nground_motion = "elcentro_1940"\n', encoding="utf-8")
    assert resolve_values(FIELDS, read_test_file(path))[0]["record"] == "elcentro_1940"  # a name stays a name


def test_a_rendered_file_reads_back_to_the_same_values():
    values = {"run:kind": "frame", "fast_rate": 4096.0, "slow_rate": 1024.0, "compensation": "none",
              "sensor_noise": False, "storeys": 3, "duration": None, "record": "elcentro_1940"}
    text = render_test_file(FIELDS, values, header="a header\nsecond line")
    assert text.startswith("# a header\n# second line\n")
    assert "# compensator — damb | amb | none" in text and "# duration = " in text  # unset: commented out
    parsed = tomllib.loads(text)  # valid TOML, each table once
    assert parsed["rates"] == {"fast": 4096.0, "slow": 1024.0}
    read_back, _ = resolve_values(FIELDS, parse_test_text(text, "rendered"))
    assert read_back == {k: v for k, v in values.items() if v is not None}


def test_fields_of_one_table_are_written_together_whatever_their_order():
    fields = [Field("a.x", "x", "x"), Field("b.y", "y", "y"), Field("a.z", "z", "z")]
    text = render_test_file(fields, {"x": 1.0, "y": 2.0, "z": 3.0})
    assert text.count("[a]") == 1 and tomllib.loads(text) == {"a": {"x": 1.0, "z": 3.0}, "b": {"y": 2.0}}
    assert Field("a.x", "x", "x").default is MISSING


def test_a_field_whose_choices_stay_out_of_the_file_is_still_checked_against_them():
    fields = [Field("test.kind", "run:kind", "the kind", kind=str, choices=("frame", "rig"), choices_in_file=False)]
    text = render_test_file(fields, {"run:kind": "frame"})
    assert text.splitlines()[1:3] == ["# the kind", 'kind = "frame"']
    with pytest.raises(DeclarationError, match=r"frame \| rig"):
        resolve_values(fields, parse_test_text('[test]\nkind = "bridge"\n', "bad.toml"))
