"""The ``rths-ident`` command line.

Each subcommand is one function ``_add_<name>_command(subparsers)`` that registers its
subparser and sets ``func=`` (a function ``(args) -> int``) with ``set_defaults``; add
it to :data:`COMMANDS`. :func:`main` parses, dispatches, and turns the errors a user can
cause (:data:`USER_ERRORS`) into one message on stderr and a non-zero exit code,
without a traceback; a Ctrl-C into one line and 130 (the first Ctrl-C stops the
command, later ones only say it is stopping: :mod:`rths_ident.operator_stop`);
output into a pipe whose reader went away (``| head``) into nothing. The exit statuses:
:mod:`rths_ident.cli.endings`.
"""

from __future__ import annotations

import argparse
import signal
import sys
import textwrap
from collections.abc import Callable, Sequence

import rths_ident
from rths_ident import __version__
from rths_ident.cli.endings import EXIT_INTERRUPTED, EXIT_USER_ERROR, quiet_stdout
from rths_ident.cli.parsing import ArgumentParser
from rths_ident.errors import DataFileError, MissingExtra, ParameterError, UnknownDatasetError
from rths_ident.operator_stop import first_ctrl_c_only

PROGRAM = "rths-ident"


#: Exceptions reported as a message without traceback. OSError covers files the user
#: names (an output folder that does not exist, a file without permission);
#: MissingExtra a part of the install that what was asked needs (:mod:`rths_ident.extras`).
USER_ERRORS: tuple[type[BaseException], ...] = (
    DataFileError,
    ParameterError,
    UnknownDatasetError,
    MissingExtra,
    OSError,
)


# --------------------------------------------------------------------------- datasets


def _format_table(header: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    widths = [max(len(str(cell)) for cell in column) for column in zip(header, *rows)]
    lines = ["  ".join(str(cell).ljust(width) for cell, width in zip(row, widths)).rstrip()
             for row in [header, ["-" * w for w in widths], *rows]]
    return "\n".join(lines)


def _print_fields(fields: Sequence[tuple[str, str]]) -> None:
    """``label  text`` lines, long texts wrapped and indented under the text."""
    width = max(len(label) for label, _ in fields)
    for label, text in fields:
        wrapped = textwrap.wrap(text, width=max(40, 100 - width - 2)) or [""]
        print(f"{label.ljust(width)}  {wrapped[0]}")
        for continuation in wrapped[1:]:
            print(" " * (width + 2) + continuation)


def _datasets_list(args: argparse.Namespace) -> int:
    from rths_ident.datasets import list_datasets  # noqa: PLC0415

    records = list_datasets(args.kind)
    rows = [
        (r.name, r.kind, r.units, r.size, r.source)
        for r in records
    ]
    print(_format_table(("name", "kind", "units", "size", "origin"), rows))
    return 0


def _format_value(value: float | int) -> str:
    if isinstance(value, int):
        return str(value)
    return f"{value:.6g}"


def _datasets_show(args: argparse.Namespace) -> int:
    from rths_ident.datasets import summarize_dataset  # noqa: PLC0415
    from rths_ident.output_paths import check_output_file  # noqa: PLC0415

    if args.plot is not None:
        check_output_file("--plot", args.plot)
    record, stats = summarize_dataset(args.name)
    print(f"{record.name}: {record.title}")
    print()
    fields = [
        ("kind", record.kind),
        ("size", record.size),
        ("units returned", record.units),
        ("units as stored", ", ".join(f"{k} [{v}]" for k, v in record.units_as_stored.items())),
        ("description", record.description),
        ("origin", record.origin),
        ("citation", record.citation),
        ("files", str(record.folder)),
    ]
    _print_fields(fields)
    print()
    _print_fields([(label, _format_value(value)) for label, value in stats.items()])
    if args.plot is not None:
        from rths_ident.datasets.plotting import plot_dataset  # noqa: PLC0415

        plot_dataset(record.name, args.plot)
        print(f"\nplot written to {args.plot}")
    return 0


def _add_datasets_command(subparsers: argparse._SubParsersAction) -> None:
    """``rths-ident datasets list|show``: the data shipped with the package."""
    parser = subparsers.add_parser(
        "datasets",
        help="list or show the shipped ground motions, hysteresis tests and FE matrices",
        description="The datasets shipped with rths_ident.",
    )
    actions = parser.add_subparsers(dest="datasets_action", metavar="{list,show}", required=True)

    list_parser = actions.add_parser("list", help="table of the shipped datasets")
    list_parser.add_argument(
        "--kind", choices=("ground_motion", "hysteresis_test", "fe_matrices"), default=None,
        help="only datasets of this kind",
    )
    list_parser.set_defaults(func=_datasets_list)

    show_parser = actions.add_parser("show", help="metadata and summary statistics of one dataset")
    show_parser.add_argument("name", help="dataset name (see 'rths-ident datasets list')")
    show_parser.add_argument("--plot", metavar="OUT.png", default=None,
                             help="also draw the dataset to this image file")
    show_parser.set_defaults(func=_datasets_show)


# ------------------------------------------------------------------------------ main

#: Functions that register one subcommand each (in the order of ``--help``).
def _add_run_command(subparsers: argparse._SubParsersAction) -> None:
    from rths_ident.cli.run import add_run_command  # noqa: PLC0415

    add_run_command(subparsers)


def _add_new_command(subparsers: argparse._SubParsersAction) -> None:
    from rths_ident.cli.run import add_new_command  # noqa: PLC0415

    add_new_command(subparsers)


def _add_check_command(subparsers: argparse._SubParsersAction) -> None:
    from rths_ident.cli.run import add_check_command  # noqa: PLC0415

    add_check_command(subparsers)


def _add_study_command(subparsers: argparse._SubParsersAction) -> None:
    from rths_ident.cli.study import add_study_command  # noqa: PLC0415

    add_study_command(subparsers)


def _add_fit_command(subparsers: argparse._SubParsersAction) -> None:
    from rths_ident.cli.fit import add_fit_command  # noqa: PLC0415

    add_fit_command(subparsers)


def _add_calibrate_command(subparsers: argparse._SubParsersAction) -> None:
    from rths_ident.cli.calibrate import add_calibrate_command  # noqa: PLC0415

    add_calibrate_command(subparsers)


def _add_bench_command(subparsers: argparse._SubParsersAction) -> None:
    from rths_ident.cli.bench import add_bench_command  # noqa: PLC0415

    add_bench_command(subparsers)


def _add_serve_command(subparsers: argparse._SubParsersAction) -> None:
    """The ``serve`` group (servers for another process); each subcommand's module
    registers itself on the group's subparsers."""
    from rths_ident.cli.serve_ns import add_serve_ns_parser  # noqa: PLC0415
    from rths_ident.cli.serve_site import add_serve_site_parser  # noqa: PLC0415

    parser = subparsers.add_parser("serve", help="serve a substructure or a site to another process over TCP")
    actions = parser.add_subparsers(dest="serve_action", metavar="{ns,site}", required=True)
    add_serve_ns_parser(actions)
    add_serve_site_parser(actions)


def _add_show_command(subparsers: argparse._SubParsersAction) -> None:
    from rths_ident.cli.show import add_show_command  # noqa: PLC0415

    add_show_command(subparsers)


COMMANDS: list[Callable[[argparse._SubParsersAction], None]] = [
    _add_run_command,
    _add_new_command,
    _add_check_command,
    _add_study_command,
    _add_show_command,
    _add_fit_command,
    _add_calibrate_command,
    _add_bench_command,
    _add_serve_command,
    _add_datasets_command,
]


def command_name(add_command: Callable[[argparse._SubParsersAction], None]) -> str:
    """The subcommand an entry of :data:`COMMANDS` registers (``_add_run_command`` → ``run``)."""
    return add_command.__name__.removeprefix("_add_").removesuffix("_command")


def _requested_command(argv: Sequence[str]) -> str | None:
    """The subcommand ``argv`` asks for (its first word that is not an option), if it is
    one of :data:`COMMANDS`; the top-level options take no values."""
    first = next((word for word in argv if not word.startswith("-")), None)
    return first if first in {command_name(add) for add in COMMANDS} else None


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The argument parser with every subcommand of :data:`COMMANDS`, or only with
    ``command`` (what :func:`main` builds for a command line that names one, so that
    ``rths-ident run …`` does not import the modules of ``calibrate``, ``fit``, …)."""
    parser = ArgumentParser(
        prog=PROGRAM,
        description="Parameter identification and online model updating for real-time "
        "hybrid simulation (RTHS) of structures.",
    )
    parser.add_argument("--version", action="version", version=f"{PROGRAM} {__version__}")
    parser.add_argument("--no-compile-cache", action="store_true",
                        help="do not keep compiled programs between runs (JAX's persistent compilation cache and "
                        "the exported loops and set-up values beside it, on by default in ~/.cache/rths_ident/jax; "
                        "also RTHS_IDENT_JAX_CACHE=off or =PATH)")
    subparsers = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for add_command in COMMANDS:
        if command is None or command_name(add_command) == command:
            add_command(subparsers)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run ``rths-ident`` with ``argv`` (default: ``sys.argv[1:]``); return the exit
    status (0 success, 1 an error in the user's input, 2 a usage error, 3 a test that
    stopped on a fault, 130 Ctrl-C: :mod:`rths_ident.cli.endings`)."""
    stdout = quiet_stdout()
    try:
        with first_ctrl_c_only():
            try:
                return _main(sys.argv[1:] if argv is None else list(argv))
            except KeyboardInterrupt:  # a command that did not say more itself (or before it started)
                print(f"{PROGRAM}: stopped by the operator (Ctrl-C)", file=sys.stderr)
                return EXIT_INTERRUPTED
    finally:
        if stdout is not None:
            stdout.flush()  # into a closed pipe: quietly
        if argv is None:  # the program itself is ending: a Ctrl-C in the interpreter's shutdown is only noise
            signal.signal(signal.SIGINT, signal.SIG_IGN)


def _main(argv: list[str]) -> int:
    rths_ident.configure()  # XLA's small-loop kernels, before any JAX computation of the command
    parser = build_parser(_requested_command(argv))
    try:
        args = parser.parse_args(argv)
    except SystemExit as exit_request:  # --help, --version and usage errors
        code = exit_request.code
        return code if isinstance(code, int) else (0 if code is None else 2)
    if not args.no_compile_cache:
        from rths_ident import compilation_cache  # noqa: PLC0415

        compilation_cache.enable_default()
    try:
        return int(args.func(args))
    except USER_ERRORS as error:
        print(f"{PROGRAM}: error: {error}", file=sys.stderr)
        return EXIT_USER_ERROR


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
