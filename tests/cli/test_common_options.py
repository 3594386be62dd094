"""Every command takes the common options the same way (rths_ident.cli.common_options):
--json OUT.json, --plots DIR, and --quiet on each command that prints progress."""

from __future__ import annotations

import argparse

import pytest

from rths_ident import cli
from rths_ident.cli import common_options
from rths_ident.cli.run import kind_parser

#: the commands that print phase lines or progress bars on stderr
PRINT_PROGRESS = ("run", "study", "fit", "calibrate")


def _command_parsers() -> dict[str, argparse.ArgumentParser]:
    """{command (``serve ns``, ``run lugre-frame``, …): its parser}."""
    parsers = {}
    for add in cli.COMMANDS:
        name = cli.command_name(add)
        top = cli.build_parser(name)
        sub = top._subparsers._group_actions[0].choices[name]
        groups = [a for a in sub._actions if isinstance(a, argparse._SubParsersAction)]
        if groups:
            for action, parser in groups[0].choices.items():
                parsers[f"{name} {action}"] = parser
        elif name != "run":  # run's options are the test's own (below)
            parsers[name] = sub
    from rths_ident.scenarios.kinds import kind_of, load_any

    for test in ("lugre-frame", "marths", "rig-sdof"):
        test_file = load_any(test)
        kind_name, kind = kind_of(test_file)
        parsers[f"run {test}"] = kind_parser(test, kind_name, kind, kind.fields_for(test_file.values))
    return parsers


def _option(parser: argparse.ArgumentParser, flag: str) -> argparse.Action | None:
    return next((a for a in parser._actions if flag in a.option_strings), None)


PARSERS = _command_parsers()


@pytest.mark.parametrize("command", sorted(PARSERS))
def test_json_and_plots_take_a_file_and_a_folder_alike(command):
    parser = PARSERS[command]
    json_option, plots_option = _option(parser, "--json"), _option(parser, "--plots")
    if json_option is not None:
        assert json_option.metavar == common_options.JSON_METAVAR, command
    if plots_option is not None:
        assert plots_option.metavar == common_options.PLOTS_METAVAR, command
    assert _option(parser, "--plot") is None or command == "datasets show", command  # one figure: a file


@pytest.mark.parametrize("command", PRINT_PROGRESS)
def test_commands_that_print_progress_take_quiet(command):
    names = [name for name in PARSERS if name.split()[0] == command]
    assert names
    for name in names:
        quiet = _option(PARSERS[name], "--quiet")
        assert quiet is not None, name
        assert quiet.help == "print the report only (no phase lines, no progress)", name
        assert isinstance(quiet, argparse._StoreTrueAction), name
