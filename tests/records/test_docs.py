"""docs/records.md: its Python example runs and prints what the page says."""

import re
from pathlib import Path

DOC = Path(__file__).resolve().parents[2] / "docs" / "records.md"


def test_the_docs_example_runs(tmp_path, monkeypatch, capsys):
    block = re.findall(r"```python\n(.*?)```", DOC.read_text(), flags=re.S)[0]
    expected = [line[2:] for line in block.splitlines() if line.startswith("# ")][-1]
    monkeypatch.chdir(tmp_path)
    exec(compile(block, str(DOC), "exec"), {})  # noqa: S102
    assert capsys.readouterr().out.strip() == expected
    assert (tmp_path / "rig_record.h5").is_file() and not (tmp_path / "rig_record.h5.partial").exists()


def test_the_documented_command_lines_parse():
    from rths_ident.cli import build_parser

    lines = [line.split("#")[0].split() for line in re.findall(r"^rths-ident .*$", DOC.read_text(), flags=re.M)]
    assert [words[1] for words in lines] == ["run", "show", "show", "run", "fit"]  # run, show, export, re-run, fit
    for words in lines:
        args = build_parser().parse_args(words[1:])
        assert callable(args.func)
