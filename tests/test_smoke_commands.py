"""The install smoke (scripts/smoke_commands.py, run by scripts/smoke_install.sh in CI)
covers every command, every concrete README command line, and each extra both missing
(its one line) and installed (works), also without the cases CI leaves out for time."""

from __future__ import annotations

import importlib.util
import re
import sys
from pathlib import Path

import pytest

from rths_ident import cli, extras

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def smoke():
    spec = importlib.util.spec_from_file_location("smoke_commands", ROOT / "scripts" / "smoke_commands.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses resolve the module's annotations through it
    spec.loader.exec_module(module)
    yield module
    sys.modules.pop(spec.name, None)


def ci_cases(smoke, install: str = "core") -> list:
    """The cases CI's smoke runs in ``install`` (the full smoke's less ``full_only``)."""
    return [case for case in smoke.CASES if install not in case.full_only]


def _command_lines(smoke) -> list[tuple[str, ...]]:
    cases = ci_cases(smoke)
    return [case.argv for case in cases] + [case.server for case in cases if case.server]


def readme_command_lines(text: str) -> list[list[str]]:
    """The README's concrete ``rths-ident`` lines in its code blocks (no placeholders such
    as FILE, [--option] or a|b), as words after the program."""
    lines = []
    for block in re.findall(r"```(\w*)\n(.*?)```", text, flags=re.S):
        if block[0] == "python":
            continue
        for line in block[1].splitlines():
            line = line.strip().removeprefix("$ ").split(" #")[0].strip()
            if not line.startswith("rths-ident "):
                continue
            if re.search(r"[\[|…]|\.\.\.|\b[A-Z][A-Z_]+\b", line):
                continue  # a placeholder: a form, not a command to run
            lines.append(line.split()[1:])
    return lines


def test_every_command_and_subcommand_is_smoked(smoke):
    lines = _command_lines(smoke)
    firsts = {argv[0] for argv in lines}
    for add in cli.COMMANDS:
        assert cli.command_name(add) in firsts, cli.command_name(add)
    for group, action in (("serve", "ns"), ("serve", "site"), ("datasets", "list"), ("datasets", "show")):
        assert any(argv[:2] == (group, action) for argv in lines), (group, action)


def test_every_concrete_readme_command_is_smoked_with_its_options(smoke):
    readme = readme_command_lines((ROOT / "README.md").read_text(encoding="utf-8"))
    assert ["fit", "examples/data/my_test.csv", "--units", "mm,kN", "--model", "bilinear", "--method", "ls"] in readme
    for words in readme:
        lead = [w for w in words[:next((i for i, w in enumerate(words) if w.startswith("-")), len(words))]]
        options = {w.split("=")[0] for w in words if w.startswith("--")}
        assert any(list(argv[:len(lead)]) == lead and options <= {w.split("=")[0] for w in argv if w.startswith("--")}
                   for argv in _command_lines(smoke)), f"README's `rths-ident {' '.join(words)}` is not smoked"


def test_readme_placeholder_lines_are_left_out():
    text = "```\nrths-ident run TEST [--quiet]\nrths-ident datasets list | show NAME\n$ rths-ident run --list\n```\n"
    assert readme_command_lines(text) == [["run", "--list"]]


def test_each_extra_is_smoked_missing_and_installed(smoke):
    assert {"core", *extras.EXTRAS} <= set(smoke.INSTALLS)
    for extra in extras.EXTRAS:
        line = f"needs the '{extra}' extra: pip install 'rths_ident[{extra}]'"
        asking = [case for case in ci_cases(smoke) if case.expected("core").endswith(line)]
        assert asking, f"no case asks for the '{extra}' extra"
        assert any(case.expected(extra) == smoke.WORKS for case in ci_cases(smoke, extra) if case in asking)
    for case in smoke.CASES:  # in the core, every case works or names an extra
        core = case.expected("core")
        assert core == smoke.WORKS or any(f"'{extra}' extra" in core for extra in extras.EXTRAS), case.name


def test_the_judge_tells_a_one_line_message_from_a_traceback(smoke):
    line = "--dask local: needs the 'cluster' extra: pip install 'rths_ident[cluster]'"
    assert smoke._judge(line, 1, "", f"rths-ident: error: {line}\n")[:2] == (line, True)
    assert smoke._judge(line, 1, "", f"Traceback (most recent call last):\nImportError: x\nrths-ident: error: {line}\n")[1] is False
    assert smoke._judge(smoke.WORKS, 0, "report\n", "")[:2] == (smoke.WORKS, True)
    assert smoke._judge(smoke.WORKS, 0, "", "Traceback (most recent call last):\n")[1] is False
    assert smoke._judge(smoke.WORKS, 2, "", "rths-ident run: error: unrecognized arguments\n")[:2] == ("exit 2", False)


def test_every_opensees_command_is_smoked_without_the_system_blas(smoke):
    """Without libblas3/liblapack3 a command that runs OpenSeesPy here gives the BLAS line,
    the others work as in the core."""
    for case in smoke.CASES:
        words = case.argv + (case.server or ())
        here = ((any(w.startswith("opensees") for w in words) and "--ns-address" not in words)
                or (case.server or ())[:2] == ("serve", "ns"))
        expected = case.expected("core-without-blas")
        assert (expected.endswith(smoke.BLAS_LINE)) == here, case.name
        if not here:
            assert expected == case.expected("core"), case.name


def test_an_ellipsis_in_an_expected_line_stands_for_any_text(smoke):
    line = "--ns opensees: " + smoke.BLAS_LINE
    assert smoke.matches(line, line.replace("…", "libblas.so.3: cannot open shared object file"))
    assert not smoke.matches(line, "--ns opensees: needs the 'cluster' extra")
    assert smoke.matches(smoke.WORKS, smoke.WORKS) and not smoke.matches(smoke.WORKS, "exit 1")


def test_cases_left_out_of_ci_name_known_installs(smoke):
    assert any(case.full_only for case in smoke.CASES)
    for case in smoke.CASES:
        assert set(case.full_only) <= set(smoke.INSTALLS), case.name
