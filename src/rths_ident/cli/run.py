"""``rths-ident run TEST``, ``new`` and ``check``: hybrid tests declared in test files.

``TEST`` is a shipped test (``rths-ident run --list``), your test file (``FILE.toml``,
``rths-ident new`` writes one) or a test record (``FILE.h5``: the test it ran, again).
The options after it are the test's own (``rths-ident run rc-frame --help``): each sets
one field of the test file, as ``--set SECTION.KEY=VALUE`` sets any. The work is
:func:`rths_ident.runner.run.run_test`; this module parses, prints and writes.
"""

from __future__ import annotations

import argparse
import datetime
import json
import sys
import time
from pathlib import Path
from typing import NamedTuple

from rths_ident.cli.common_options import JSON_METAVAR, PLOTS_METAVAR, add_quiet_option
from rths_ident.cli.endings import EXIT_TEST_STOPPED  # a test that stopped on a fault (limit, peer, NaN)
from rths_ident.cli.parsing import ArgumentParser, port_number
from rths_ident.errors import ParameterError

#: the test file's output fields take their options' values as every command does (cli.common_options)
COMMON_METAVARS = {"--json": JSON_METAVAR, "--plots": PLOTS_METAVAR}


# ------------------------------------------------------------------------ the test file

def kind_parser(target: str, kind_name: str, kind, fields) -> argparse.ArgumentParser:
    """The options of ``kind`` (its ``fields`` with an option), ``--set`` and ``--quiet``."""
    parser = ArgumentParser(
        prog=f"rths-ident run {target}", add_help=True,
        description=f"{kind_name}: {kind.description}. Each option sets one field of the test file (its "
        "[table] key in brackets); --set TABLE.KEY=VALUE sets any field. Units: SI unless a field says otherwise.")
    for field in fields:
        if field.option is None:
            continue
        where = f"[{field.section}] {field.key}"
        unit = f" [{field.unit}]" if field.unit else ""
        if field.flag is not None:
            parser.add_argument(field.option, dest=field.target, action="store_const", const=field.flag,
                                default=None, help=_escaped(f"{field.doc} (sets {where} = {str(field.flag).lower()})"))
        else:
            parser.add_argument(field.option, dest=field.target, default=None, metavar=_metavar(field),
                                help=_escaped(f"{field.doc}{unit}: {field.expected()} ({where})"))
    parser.add_argument("--set", dest="run:set", action="append", default=[], metavar="TABLE.KEY=VALUE",
                        help="set any field of the test file (e.g. --set compensation.kind=amb, "
                             "--set compensation.rho=0.999)")
    add_quiet_option(parser, dest="run:quiet")
    parser.add_argument("--live", dest="run:live", action="store_true",
                        help="serve a live page of the run and print its address (watch the test, STOP it; "
                        "docs/live.md); opens no browser")
    parser.add_argument("--live-port", dest="run:live_port", type=port_number, default=8050, metavar="PORT",
                        help="the live page's port (default 8050; 0: any free port)")
    parser.add_argument("--live-host", dest="run:live_host", default="127.0.0.1", metavar="HOST",
                        help="the live page's address (default 127.0.0.1, this machine only; another address "
                        "serves the page and its STOP button to that network)")
    return parser


class RunFlags(NamedTuple):
    """How the command shows a run (not fields of the test): ``--quiet``, ``--live``."""

    quiet: bool = False
    live: bool = False
    live_port: int = 8050
    live_host: str = "127.0.0.1"


def _escaped(text: str) -> str:
    return text.replace("%", "%%")


def _metavar(field) -> str:
    if field.option in COMMON_METAVARS:
        return COMMON_METAVARS[field.option]
    names = field.choice_names()
    if names is not None and len(names) <= 8 and field.open_choices is None:
        return "{" + ",".join(str(n) for n in names) + "}"
    if field.is_path:
        return "PATH"
    return {float: "X", int: "N", str: "TEXT", bool: "BOOL", list: "X,…"}[field.kind] if not field.unit else field.unit


def resolve(target: str, options: list[str]):
    """(kind name, kind, test file, checked values, origins, :class:`RunFlags`) of
    ``target`` with the command-line ``options``; ``--help`` exits through argparse
    (SystemExit)."""
    from rths_ident.declaration import Override, parse_override, resolve_values  # noqa: PLC0415
    from rths_ident.scenarios.kinds import kind_of, load_any  # noqa: PLC0415

    test_file = load_any(target)
    kind_name, kind = kind_of(test_file)
    fields = kind.fields_for(test_file.values)
    parser = kind_parser(target, kind_name, kind, fields)
    parsed = vars(parser.parse_args(options))
    overrides = [Override(f.path, parsed[f.target], f.option) for f in fields
                 if f.option is not None and parsed.get(f.target) is not None]
    overrides += [parse_override(text) for text in parsed["run:set"]]
    raw = {**test_file.values, **{o.path: o.value for o in overrides}}
    values, origin = resolve_values(kind.fields_for(raw), test_file, overrides)
    flags = RunFlags(parsed["run:quiet"], parsed["run:live"], parsed["run:live_port"], parsed["run:live_host"])
    return kind_name, kind, test_file, values, origin, flags


# ------------------------------------------------------------------------------ outputs

def _checked_outputs(run: dict) -> tuple[Path | None, Path | None]:
    """(JSON file, figures folder), checked before any work
    (:mod:`rths_ident.output_paths`), and an explicit record file; the files may go into
    the figures' new folder."""
    from rths_ident.output_paths import check_output_file, check_output_folder  # noqa: PLC0415

    plots = check_output_folder("--plots", run.get("plots")) if run.get("plots") else None
    json_path = check_output_file("--json", run.get("json"), will_exist=plots) if run.get("json") else None
    if run.get("test_record"):
        check_output_file("--test-record", run["test_record"], will_exist=plots)
    return json_path, plots


def _test_record_path(run: dict, name: str) -> tuple[Path, Path | None, bool]:
    """(the record, the folder to remove if the run leaves it empty, whether an earlier
    record is replaced). The record: as given, else test_record.h5 in the figures'
    folder, else beside the JSON, else ``rths-runs/<test>-<UTC time>/``. Nothing is
    created here: the record's folder appears when the run opens its record (a run
    refused before leaves no empty folder); an unwritable place fails here."""
    created = None
    if run.get("test_record"):
        path = Path(run["test_record"])
    elif run.get("plots"):
        path = Path(run["plots"]) / "test_record.h5"
    elif run.get("json"):
        path = Path(run["json"]).parent / "test_record.h5"
    else:
        stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
        path = Path("rths-runs") / f"{name}-{stamp}" / "test_record.h5"
        created = path.parent
    if path.is_dir():
        raise ParameterError(f"--test-record {path} is a folder: give a file, e.g. {path / 'test_record.h5'}")
    _check_writable_place(path)
    return path, created, path.is_file()


def _check_writable_place(path: Path) -> None:
    """The nearest existing folder above ``path`` must be a writable folder."""
    import os  # noqa: PLC0415

    folder = path.parent
    while not folder.exists() and folder != folder.parent:
        folder = folder.parent
    if not folder.is_dir() or not os.access(folder, os.W_OK | os.X_OK):
        raise ParameterError(f"test record {path}: cannot write there ({folder} is not a writable folder)")


def _remove_if_empty(folder: Path | None) -> None:
    """The run's own record folder, when the run left nothing in it (and ``rths-runs``
    too, when that is empty now)."""
    for candidate in (folder, None if folder is None else folder.parent):
        try:
            if candidate is not None and candidate.is_dir() and not any(candidate.iterdir()):
                candidate.rmdir()
        except OSError:
            return


# ---------------------------------------------------------------------------------- run

def _list_tests() -> int:
    from rths_ident.scenarios.kinds import SHIPPED_TESTS, TEST_KINDS  # noqa: PLC0415

    width = max(len(n) for n in SHIPPED_TESTS)
    print("shipped tests (rths-ident run NAME; rths-ident new FILE.toml --from NAME writes one to edit):")
    for name in SHIPPED_TESTS:
        print(f"  {name:{width}s}  {TEST_KINDS[name].description}")
    return 0


def _run(args: argparse.Namespace) -> int:
    if args.list:
        return _list_tests()
    if args.test is None:
        args.parser.print_help()
        print()
        _list_tests()
        return 0 if args.help else 2
    try:
        kind_name, kind, test_file, values, origin, flags = resolve(args.test, args.options
                                                                    + (["--help"] if args.help else []))
    except SystemExit as exit_request:  # --help, or a usage error (argparse printed it)
        return exit_request.code if isinstance(exit_request.code, int) else 0
    return run_resolved(kind_name, kind, values, origin, flags)


def add_live_options(parser: argparse.ArgumentParser, what: str) -> None:
    """``--live``, ``--live-port``, ``--live-host`` of a command that serves a live page of ``what``."""
    parser.add_argument("--live", action="store_true",
                        help=f"serve a live page of {what} and print its address (docs/live.md); opens no browser")
    parser.add_argument("--live-port", type=port_number, default=8050, metavar="PORT",
                        help="the live page's port (default 8050; 0: any free port)")
    parser.add_argument("--live-host", default="127.0.0.1", metavar="HOST",
                        help="the live page's address (default 127.0.0.1, this machine only)")


def live_page(host: str, port: int, stop=None, replay: bool = False):
    """The live page's server process, started (Tornado, a core dependency, imported only
    here: a run without ``--live`` pays nothing for it)."""
    from rths_ident.live.page_process import LivePageProcess  # noqa: PLC0415

    return LivePageProcess(host, port, stop=stop, replay=replay).start()


def _padding_left_to_default(origin: dict) -> bool:
    """Whether the user left the record's padding to its default: neither the command line
    nor their own test file sets it (a shipped test file writes every field, padding 0 s
    among them: ``--realtime`` still pads those by 5 s)."""
    from rths_ident.scenarios.kinds import is_shipped_source  # noqa: PLC0415

    where = origin.get("pad_seconds")
    return where is None or (where.option is None and is_shipped_source(where.source))


def run_resolved(kind_name: str, kind, values: dict, origin: dict, flags: "RunFlags | bool" = False) -> int:
    """Run a resolved test: outputs checked, then the run (watched by the terminal and,
    with ``--live``, the live page), the report, JSON and figures."""
    from rths_ident.hybrid.loop.realtime import DEFAULT_PADDING_S  # noqa: PLC0415
    from rths_ident.runner.run import check_engine, default_engine  # noqa: PLC0415

    run = {k[len("run:"):]: v for k, v in values.items() if k.startswith("run:")}
    json_path, plots_dir = _checked_outputs(run)
    realtime = bool(run.get("realtime"))
    if realtime and _padding_left_to_default(origin) and any(f.target == "pad_seconds" for f in kind.fields):
        values = {**values, "pad_seconds": DEFAULT_PADDING_S}  # the start-up seed 003 pads
    cfg = kind.config(values)
    module = kind.module
    engine = run.get("engine") or default_engine(module, cfg, realtime)
    check_engine(kind_name, module, engine, realtime)
    name = run.get("name") or kind_name
    flags = flags if isinstance(flags, RunFlags) else RunFlags(quiet=bool(flags))
    record, own_folder, replaces = _test_record_path(run, name)
    try:
        return _run_and_report(kind_name, module, cfg, engine, realtime, run, values, name, record, replaces,
                               json_path, plots_dir, flags)
    finally:
        _remove_if_empty(own_folder)  # a run refused before its record opened leaves no empty folder


def _run_and_report(kind_name, module, cfg, engine, realtime, run, values, name, record, replaces, json_path,
                    plots_dir, flags: "RunFlags") -> int:
    from rths_ident.cli.endings import EXIT_INTERRUPTED, operator_stop_line  # noqa: PLC0415
    from rths_ident.operator_stop import OperatorStopped  # noqa: PLC0415
    from rths_ident.hybrid.loop.stop_request import StopRequest  # noqa: PLC0415
    from rths_ident.runner.events import EventStream  # noqa: PLC0415
    from rths_ident.runner.options import RunOptions  # noqa: PLC0415
    from rths_ident.runner.report import hybrid_test_report  # noqa: PLC0415
    from rths_ident.runner.run import result_dict, run_test  # noqa: PLC0415
    from rths_ident.runner.terminal import TerminalView  # noqa: PLC0415
    from rths_ident.scenarios.kinds import kept_values, render_kind  # noqa: PLC0415

    quiet = flags.quiet
    view = TerminalView(quiet=quiet)
    stream = EventStream(view)
    stop = StopRequest() if engine == "stepwise" else None
    page = None
    if flags.live:
        page = live_page(flags.live_host, flags.live_port, stop=stop)
        stream.subscribe(page.feed)
        print(f"live page → {page.url}" + (" (STOP there, or Ctrl-C here, brings the specimen to rest)"
                                           if stop is not None else ""), file=sys.stderr, flush=True)
    options = RunOptions(engine=engine, compare=run.get("compare", True), realtime=realtime, test_record=record,
                         test_file=render_kind(kind_name, kept_values(values), name), events=stream, stop=stop)
    if not quiet:
        updating = getattr(cfg, "updating", None)
        print(f"running {name} ({getattr(cfg, 'record', kind_name)}{f', updating {updating}' if updating else ''}, "
              f"engine {engine}) …", file=sys.stderr)
        if replaces:
            print(f"  the test record {record} of an earlier run is replaced by this run's", file=sys.stderr)
    try:
        result = run_test(kind_name, module, cfg, options, name)
    except OperatorStopped as stopped:  # Ctrl-C, or STOP on the live page: one path (docs/endings.md)
        view.close_bar()
        print(operator_stop_line(stopped, stopped.test_records), file=sys.stderr)
        return EXIT_INTERRUPTED
    finally:
        view.close_bar()
        if page is not None:
            page.close()  # the tabs keep showing the final state
    if not result.complete and not result.metrics:
        print(_stopped_line(result), file=sys.stderr)
        return EXIT_TEST_STOPPED
    data = result_dict(result)
    print(getattr(module, "report", hybrid_test_report)(data))
    if plots_dir is not None:
        plots_dir.mkdir(exist_ok=True)  # its parent was checked to exist
    if json_path is not None:
        json_path.write_text(json.dumps(result.json(), indent=2))
        print(f"metrics → {json_path}")
    if plots_dir is not None:
        start = time.perf_counter()
        for p in module.plot(data, plots_dir):
            print(f"plot → {p}")
        if not quiet:
            options.stream.phase("plotting", time.perf_counter() - start)
    if not result.complete:  # the test stopped; what it measured is reported above and kept
        print(_stopped_line(result), file=sys.stderr)
        return EXIT_TEST_STOPPED
    return 0


def _stopped_line(result) -> str:
    """The one line of a test that stopped on a fault: why, and where its record is."""
    where = f"; test record → {', '.join(map(str, result.test_records))}" if result.test_records else ""
    return f"rths-ident: the test stopped: {' '.join(result.stopped.split()).rstrip('.')}{where}"


def add_run_command(subparsers: argparse._SubParsersAction) -> None:
    """Register ``rths-ident run``."""
    parser = subparsers.add_parser(
        "run", add_help=False, help="run a hybrid test: a shipped one, your test file (FILE.toml) or a record again",
        description="Run a hybrid test: a shipped one (--list), your test file (FILE.toml; 'rths-ident new' writes "
        "one), or a test record (FILE.h5: the test it ran, again). The options after TEST are the test's own: "
        "'rths-ident run TEST --help' lists them. Units: SI (m, N, s, kg).",
        usage="rths-ident run TEST [the test's options] | rths-ident run --list")
    parser.add_argument("test", nargs="?", metavar="TEST", help="a shipped test, FILE.toml or FILE.h5")
    parser.add_argument("-h", "--help", action="store_true", help="this help, or with TEST the test's options")
    parser.add_argument("--list", action="store_true", help="the shipped tests, one line each")
    parser.add_argument("options", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)
    parser.set_defaults(func=_run, parser=parser)


# ---------------------------------------------------------------------------- new, check

def _new(args: argparse.Namespace) -> int:
    from rths_ident.output_paths import check_output_file  # noqa: PLC0415
    from rths_ident.scenarios.kinds import SHIPPED_TESTS, TEST_KINDS, render_kind, shipped_test_file  # noqa: PLC0415

    path = Path(args.file)
    if path.suffix.lower() != ".toml":
        raise ParameterError(f"rths-ident new {path}: a test file ends in .toml")
    if path.exists() and not args.force:
        raise ParameterError(f"{path} exists: choose another name, or --force to replace it")
    check_output_file("FILE", str(path))
    if args.source in SHIPPED_TESTS:
        from rths_ident.declaration import resolve_values  # noqa: PLC0415
        from rths_ident.scenarios.kinds import kind_of  # noqa: PLC0415

        source = shipped_test_file(args.source)
        kind_name, kind = kind_of(source)
        values, _ = resolve_values(kind.fields, source)
        path.write_text(render_kind(kind_name, values, path.stem), encoding="utf-8")
        what = f"a {kind_name} test as shipped"
    elif args.source in TEST_KINDS:  # a kind of its own (shear-frame): every field at its default
        path.write_text(render_kind(args.source, None, path.stem), encoding="utf-8")
        what = f"a {args.source} test at its defaults"
    else:
        raise ParameterError(f"--from {args.source!r}: expected a shipped test ({' | '.join(SHIPPED_TESTS)}) or a "
                             f"test kind ({' | '.join(k for k in TEST_KINDS if k not in SHIPPED_TESTS)})")
    print(f"test file → {path} ({what}: edit it, then 'rths-ident check {path}' and "
          f"'rths-ident run {path}')")
    return 0


def _check(args: argparse.Namespace) -> int:
    predict = "--predict" in args.options
    options, margin_values = _margin_options([option for option in args.options if option != "--predict"])
    if margin_values and not predict:
        raise ParameterError("--margin: the delay margin's sweep is part of --predict (add --predict)")
    sweep = None
    if predict:
        from rths_ident.runner.delay_margin import MarginSweep  # noqa: PLC0415

        sweep = MarginSweep(**margin_values)  # a bad value: one line naming margin.FIELD, before any work
    try:
        kind_name, kind, test_file, values, origin, _ = resolve(args.test, options)
    except SystemExit as exit_request:
        return exit_request.code if isinstance(exit_request.code, int) else 0
    cfg = kind.config(values)  # the kind's own checks (cross-field, the record file)
    deeper = getattr(kind.module, "check_before_run", None)
    if deeper is not None:
        deeper(cfg)  # e.g. a user's OpenSees model built once
    run = {k[len("run:"):]: v for k, v in values.items() if k.startswith("run:")}
    _checked_outputs(run)
    from rths_ident.runner.run import check_engine, default_engine  # noqa: PLC0415

    realtime = bool(run.get("realtime"))
    engine = run.get("engine") or default_engine(kind.module, cfg, realtime)
    check_engine(kind_name, kind.module, engine, realtime)
    given = sum(1 for where in origin.values() if where.option is None)
    print(f"{test_file.source}: a valid {kind_name} test ({given} fields given, the others at their defaults; "
          f"engine {engine}). Run it: rths-ident run {args.test}")
    if predict:
        if not hasattr(kind.module, "build"):
            raise ParameterError(f"--predict: a {kind_name} test has no virtual twin (a frame test has: lugre-frame, "
                                 "bw-frame, rc-frame, shear-frame and test files of theirs)")
        from rths_ident.runner.predict import prediction_lines, predict_test  # noqa: PLC0415

        prediction = predict_test(kind.module, cfg, sweep)
        print("\n".join(prediction_lines(prediction)))
        return 0 if prediction["verdict"] == "go" else EXIT_TEST_STOPPED
    return 0


#: ``check --predict --margin FIELD=VALUE``: the delay margin's sweep (SI units)
_MARGIN_FIELDS = {"max_delay": float, "min_delay_margin": float, "window": float, "gain_low": float,
                  "gain_high": float, "points": int, "tolerance": float, "tracking_share": float,
                  "actuator_field": str, "actuator_low": float, "actuator_high": float, "specimen_low": float,
                  "specimen_high": float}


def _margin_options(options: list[str]) -> tuple[list[str], dict]:
    """``options`` without the ``--margin FIELD=VALUE`` pairs, and those values."""
    rest, values = [], {}
    i = 0
    while i < len(options):
        option = options[i]
        if option == "--margin" or option.startswith("--margin="):
            if option == "--margin":
                if i + 1 >= len(options):
                    raise ParameterError("--margin: expected FIELD=VALUE, e.g. --margin max_delay=0.03 "
                                         f"(fields: {', '.join(_MARGIN_FIELDS)})")
                text, i = options[i + 1], i + 2
            else:
                text, i = option.split("=", 1)[1], i + 1
            name, equals, value = text.partition("=")
            if not equals or name not in _MARGIN_FIELDS:
                raise ParameterError(f"--margin {text}: expected FIELD=VALUE with FIELD one of "
                                     f"{', '.join(_MARGIN_FIELDS)}")
            try:
                values[name] = _MARGIN_FIELDS[name](value)
            except ValueError:
                raise ParameterError(f"margin.{name} = {value!r}: expected "
                                     + ("a whole number" if _MARGIN_FIELDS[name] is int else "a number")) from None
            continue
        rest.append(option)
        i += 1
    return rest, values


def add_new_command(subparsers: argparse._SubParsersAction) -> None:
    """Register ``rths-ident new``."""
    parser = subparsers.add_parser("new", help="write a test file to edit (a shipped test, commented)",
                                   description="Write a commented test file: a complete test that runs as "
                                   "written (a shipped one, or your own frame: --from shear-frame), every field with "
                                   "its unit and allowed values.")
    parser.add_argument("file", metavar="FILE.toml")
    parser.add_argument("--from", dest="source", default="lugre-frame", metavar="TEST",
                        help="the shipped test to start from (default lugre-frame; rths-ident run --list), or "
                        "a test kind at its defaults: shear-frame (your own frame of registered column models)")
    parser.add_argument("--force", action="store_true", help="replace FILE.toml if it exists")
    parser.set_defaults(func=_new)


def add_check_command(subparsers: argparse._SubParsersAction) -> None:
    """Register ``rths-ident check``."""
    parser = subparsers.add_parser("check", help="check a test file without running anything",
                                   description="Check a test file (or a shipped test with options): every field, "
                                   "the record file, the outputs, the engine — nothing is built or run. With "
                                   "--predict, then run the test's virtual twin (nothing moves): predicted J2, "
                                   "command peak and jump, each interlock's peak against its limit, the delay "
                                   "margin (the extra loop delay, compensator gain error, actuator parameter "
                                   "error and specimen stiffness error at which the twin fails; --margin "
                                   "FIELD=VALUE sets its sweep: max_delay [s], min_delay_margin [s], window [s], "
                                   "gain_low, gain_high, points, tolerance, tracking_share, actuator_field, "
                                   "actuator_low, actuator_high, specimen_low, specimen_high), "
                                   "go / no-go (exit status 3 for no-go).",
                                   usage="rths-ident check TEST [--predict [--margin FIELD=VALUE ...]] "
                                   "[the test's options]")
    parser.add_argument("test", metavar="TEST", help="FILE.toml, a shipped test, or FILE.h5")
    parser.add_argument("options", nargs=argparse.REMAINDER, help=argparse.SUPPRESS)
    parser.set_defaults(func=_check)
