"""``rths-ident calibrate``: calibrate a compensator's gains — ``calibrate KIND`` over a
Latin hypercube of specimens of the ``sdof`` test (seed 003 §2.3;
:mod:`rths_ident.scenarios.sdof_calibration`), ``calibrate FILE.toml|SCENARIO`` on that
test's own virtual twin (:mod:`rths_ident.scenarios.gain_calibration`); docs/calibration.md."""

from __future__ import annotations

import argparse
import json
import math
import sys

from rths_ident.calibration.gains import COMPENSATORS, option_name
from rths_ident.declaration.fields import plain_value
from rths_ident.calibration.trust import warning_lines
from rths_ident.cli.common_options import add_json_option, add_plots_option, add_quiet_option
from rths_ident.calibration.sdof_rths import StudySettings
from rths_ident.calibration.study import METHODS


def _json_ready(value):
    if isinstance(value, dict):
        return {k: _json_ready(v) for k, v in value.items() if not k.startswith("_")}
    if isinstance(value, (list, tuple)):
        return [_json_ready(v) for v in value]
    if isinstance(value, float) and not math.isfinite(value):
        return None  # JSON has no inf: a failed run (or a sample with one) is null
    return value


def _fmt(summary: dict) -> str:
    failed = f", {summary['failed']} failed" if summary["failed"] else ""
    return f"mean {summary['mean']:.4g} %, max {summary['max']:.4g} %{failed}"


def report(result: dict) -> str:
    """The human-readable summary printed by the command."""
    lines = [f"{result['compensator']} calibrated by {result['method']} on {result['specimens']} specimens "
             f"({result['iterations']} iterations, {result['evaluations']} candidate batches), "
             f"{result['settings']['duration']:g} s of {result['settings']['record']} from "
             f"t = {result['settings']['start']:g} s at {result['settings']['fast_rate']:g}/"
             f"{result['settings']['slow_rate']:g} Hz",
             f"  {'gain':10s} {'calibrated':>12s} {'start':>12s} {'sources':>12s}  unit  [bounds]"]
    for name, value in result["gains"].items():
        lo, hi = result["gain_bounds"][name]
        lines.append(f"  {name:10s} {value:12.5g} {result['start_gains'][name]:12.5g} "
                     f"{result['source_gains'][name]:12.5g}  {result['gain_units'][name]}  [{lo:g}, {hi:g}]")
    if result.get("interrupted"):
        lines.append(f"  stopped by the operator (Ctrl-C) after {result['iterations_done']} of {result['iterations']} "
                     "iterations: the best gains so far")
    lines += [f"  J2 calibration sample: {_fmt(result['J2_calibration_before'])} → {_fmt(result['J2_calibration_after'])}",
              f"  J2 held-out sample ({result['holdout_specimens']}): {_fmt(result['J2_before'])} → "
              f"{_fmt(result['J2_after'])}",
              f"  wall {result['wall_s']:.1f} s (compile {result['compile_s']:.1f} s, search {result['search_s']:.1f} s)"]
    lines += warning_lines(result.get("warnings", []))
    lines += _test_file_lines(result["compensator"], {option_name(n): v for n, v in result["gains"].items()})
    return "\n".join(lines)


def _test_file_lines(compensator: str, gains: dict) -> list[str]:
    """The found gains as the ``[compensation]`` lines of a test file (gain name → value)."""
    return ["  the gains as test-file lines (paste them into its [compensation] table):",
            "    [compensation]", f"    kind = {plain_value(compensator)}",
            *(f"    {name} = {plain_value(float(value))}" for name, value in gains.items())]


def _calibrate(args: argparse.Namespace) -> int:
    from rths_ident.scenarios.sdof_calibration import calibrate  # noqa: PLC0415
    from rths_ident.cli.endings import EXIT_INTERRUPTED  # noqa: PLC0415
    from rths_ident.operator_stop import OperatorStopped  # noqa: PLC0415
    from rths_ident.output_paths import check_output_file, check_output_folder  # noqa: PLC0415
    from rths_ident.runner.events import EventStream  # noqa: PLC0415
    from rths_ident.runner.terminal import TerminalView  # noqa: PLC0415

    if args.compensator not in COMPENSATORS:
        return _calibrate_test(args)
    # every output path checked before the work (as run/fit do)
    plots = check_output_folder("--plots", args.plots) if args.plots else None
    json_path = check_output_file("--json", args.json, will_exist=plots) if args.json else None
    defaults = StudySettings()
    given = {name: getattr(args, name) for name in ("record", "start", "duration", "fast_rate", "slow_rate")
             if getattr(args, name) is not None}
    settings = defaults._replace(**given, sensor_noise=not args.ideal_sensors)
    start = _start_gains(args)
    events = EventStream(TerminalView(quiet=args.quiet))
    progress = events.iterations_callback(args.iterations, f"calibrate {args.compensator}", "best mean J2 [%]")
    interrupted = None
    try:
        result = calibrate(args.compensator, n_specimens=64 if args.specimens is None else args.specimens,
                           n_holdout=args.holdout,
                           method=args.method, iterations=args.iterations, population=args.population,
                           seed=args.seed, settings=settings, start=start, progress=progress,
                           bounds=parse_bounds(args.bounds))
    except OperatorStopped as stopped:  # the best gains so far, scored
        interrupted, result = stopped, stopped.partial
    print(report(result))
    if plots is not None:
        from rths_ident.calibration.plots import plot_study  # noqa: PLC0415

        for path in plot_study(result, plots):
            print(f"plot → {path}")
    if json_path is not None:
        json_path.parent.mkdir(exist_ok=True)  # a checked --plots folder it goes into
        with open(json_path, "w") as f:
            json.dump(_json_ready(result), f, indent=1)
        print(f"calibration → {json_path}")
    if interrupted is not None:
        kept = f"; resume: rths-ident calibrate {args.compensator} … --resume {json_path}" if json_path else (
            "; resume: --start-gains " + ",".join(f"{v:.6g}" for v in result["gains"].values()))
        print(f"rths-ident: calibration stopped by the operator (Ctrl-C) after {result['iterations_done']} of "
              f"{args.iterations} iterations: the best gains so far are above{kept}", file=sys.stderr)
        return EXIT_INTERRUPTED
    return 0


#: options that only the SDOF study (``calibrate KIND``) reads: (attribute, option)
_SDOF_ONLY = (("specimens", "--specimens"), ("holdout", "--holdout"), ("record", "--record"), ("start", "--start"),
              ("fast_rate", "--fast-rate"), ("slow_rate", "--slow-rate"), ("ideal_sensors", "--ideal-sensors"),
              ("start_gains", "--start-gains"), ("resume", "--resume"), ("plots", "--plots"))


def twin_report(result: dict) -> str:
    """The human-readable summary of a test's calibration on its virtual twin."""
    shortened = "" if result["duration"] is None else f", its first {result['duration']:g} s"
    lines = [f"{result['compensator']} gains of {result['test']} ({result['kind']}{shortened}) calibrated by "
             f"{result['method']} on its virtual twin ({result['iterations']} iterations, {result['evaluations']} "
             f"runs{', batched' if result['batched'] else ', run by run'}); objective: {result['objective']}",
             f"  {'gain':13s} {'calibrated':>12s} {'start':>12s}  unit  [bounds]"]
    for name, value in result["gains"].items():
        lo, hi = result["gain_bounds"][name]
        lines.append(f"  {name:13s} {value:12.5g} {result['start_gains'][name]:12.5g}  {result['gain_units'][name]}"
                     f"  [{lo:g}, {hi:g}]")
    lines += [f"  J2: start {result['J2_start']:.6g} % → best {result['J2_best']:.6g} % (each run as rths-ident run "
              f"runs it; the best in the search's batch: {result['J2_best_in_search']:.6g} %)",
              f"  wall {result['wall_s']:.1f} s (search {result['search_s']:.1f} s)"]
    lines += warning_lines(result.get("warnings", []))
    lines += _test_file_lines(result["compensator"], result["gains"])
    return "\n".join(lines)


def _calibrate_test(args: argparse.Namespace) -> int:
    """``calibrate FILE.toml|SCENARIO``: the test's gains on its virtual twin."""
    from rths_ident.errors import ParameterError  # noqa: PLC0415
    from rths_ident.output_paths import check_output_file  # noqa: PLC0415
    from rths_ident.runner.events import EventStream  # noqa: PLC0415
    from rths_ident.runner.terminal import TerminalView  # noqa: PLC0415
    from rths_ident.scenarios.gain_calibration import calibrate_test  # noqa: PLC0415

    from pathlib import Path  # noqa: PLC0415

    from rths_ident.scenarios.kinds import SHIPPED_TESTS  # noqa: PLC0415

    if args.compensator not in SHIPPED_TESTS and not Path(args.compensator).exists():
        raise ParameterError(f"calibrate {args.compensator}: expected a compensator ({', '.join(COMPENSATORS)}), a "
                             f"shipped test ({', '.join(SHIPPED_TESTS)}) or a test file (FILE.toml, RECORD.h5)")
    for attribute, option in _SDOF_ONLY:
        if getattr(args, attribute, None) not in (None, False):
            raise ParameterError(f"{option}: only for calibrate {'|'.join(COMPENSATORS)} (SDOF specimens); "
                                 f"calibrate {args.compensator} runs the test as its file declares it")
    json_path = check_output_file("--json", args.json) if args.json else None
    events = EventStream(TerminalView(quiet=args.quiet))
    progress = events.iterations_callback(args.iterations, f"calibrate {args.compensator}", "best J2 [%]")
    result = calibrate_test(args.compensator, method=args.method, iterations=args.iterations,
                            population=args.population, seed=args.seed, duration=args.duration,
                            bounds=parse_bounds(args.bounds), progress=progress)
    print(twin_report(result))
    if json_path is not None:
        with open(json_path, "w") as f:
            json.dump(_json_ready(result), f, indent=1)
        print(f"calibration → {json_path}")
    return 0


def parse_bounds(text: str | None) -> dict | None:
    """``--bounds NAME=LOW:HIGH[,NAME=LOW:HIGH...]`` → {NAME: (LOW, HIGH)} (the names are
    checked against the compensator's gains by the study, before any work)."""
    from rths_ident.errors import ParameterError  # noqa: PLC0415

    if text is None:
        return None
    bounds = {}
    for item in filter(None, (part.strip() for part in text.split(","))):
        name, equals, pair = item.partition("=")
        low, colon, high = pair.partition(":")
        try:
            if not (equals and colon):
                raise ValueError
            bounds[name.strip()] = (float(low), float(high))
        except ValueError:
            raise ParameterError(f"--bounds {item!r}: expected NAME=LOW:HIGH (e.g. log10_P0=6:12), numbers "
                                 "LOW < HIGH") from None
    if not bounds:
        raise ParameterError("--bounds: expected NAME=LOW:HIGH[,NAME=LOW:HIGH...]")
    return bounds


def _start_gains(args: argparse.Namespace):
    """θ to start from: ``--start-gains``, or the gains of a calibration's JSON
    (``--resume``: a new search from its best gains), or None (the sources')."""
    from rths_ident.errors import ParameterError  # noqa: PLC0415

    if args.resume is None:
        return None if args.start_gains is None else [float(v) for v in args.start_gains.split(",")]
    if args.start_gains is not None:
        raise ParameterError("--resume and --start-gains both set the start: give one")
    try:
        with open(args.resume, encoding="utf-8") as f:
            earlier = json.load(f)
        gains, kind = earlier["gains"], earlier["compensator"]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise ParameterError(f"--resume {args.resume}: not a calibration's JSON ({exc})") from None
    if kind != args.compensator:
        raise ParameterError(f"--resume {args.resume}: calibrates {kind}, not {args.compensator}")
    print(f"resuming from the gains of {args.resume} (a new {args.method} search started there)", file=sys.stderr)
    return [float(v) for v in gains.values()]


def add_calibrate_command(subparsers: argparse._SubParsersAction) -> None:
    """Register ``rths-ident calibrate``."""
    defaults = StudySettings()
    parser = subparsers.add_parser(
        "calibrate", help="calibrate a compensator's gains over a sample of SDOF specimens",
        description="Calibrate AMB/dAMB/polynomial compensation over a Latin hypercube of SDOF specimens behind "
                    "the Carrion–Spencer actuator (seed 003 §2.3), by particle swarm, differential evolution or "
                    f"gradients through the compiled loop. By default a {defaults.duration:g} s window of the "
                    "record (the strong motion of El Centro) keeps the study to minutes; --duration 30 for all "
                    "of it.")
    parser.add_argument("compensator", metavar="KIND|TEST",
                        help=f"a compensator ({', '.join(COMPENSATORS)}): calibrate over specimens of the sdof test "
                             "(rths-ident run sdof); or a test "
                             "(a shipped frame test such as rc-frame, FILE.toml, RECORD.h5): tune its [compensation] "
                             "gains on its own virtual twin, the objective its tracking J2")
    parser.add_argument("--specimens", type=int, default=None, help="calibration sample size (default 64; KIND only)")
    parser.add_argument("--holdout", type=int, default=None, help="held-out sample size (default: --specimens)")
    parser.add_argument("--record", default=None, help=f"KIND only (default {defaults.record})")
    parser.add_argument("--start", type=float, default=None,
                        help=f"s: window start in the record (KIND only; default {defaults.start:g})")
    parser.add_argument("--duration", type=float, default=None,
                        help=f"s: window length (KIND: default {defaults.duration:g}; TEST: the first DURATION s of "
                             "its record, default the test as declared)")
    parser.add_argument("--fast-rate", type=float, default=None, help=f"Hz (KIND only; default {defaults.fast_rate:g})")
    parser.add_argument("--slow-rate", type=float, default=None, help=f"Hz (KIND only; default {defaults.slow_rate:g})")
    parser.add_argument("--ideal-sensors", action="store_true", help="no sensor noise (default: the thesis' noise)")
    parser.add_argument("--method", choices=METHODS, default="pso", help="gradient: KIND only")
    parser.add_argument("--iterations", type=int, default=30)
    parser.add_argument("--population", type=int, default=8, help="candidates per batch (pso, de)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--start-gains", default=None, metavar="V1,V2,...",
                        help="θ to start from (default: the sources' values)")
    parser.add_argument("--resume", metavar="OUT.json", default=None,
                        help="start from the gains of an earlier calibration's JSON (one stopped by Ctrl-C keeps "
                             "its best gains so far): a new search from there")
    parser.add_argument("--bounds", metavar="NAME=LOW:HIGH,...", default=None,
                        help="replace gains' search boxes, e.g. 'log10_P0=6:12,rho=0.999:1' (names: log10_Gamma0.."
                             "log10_Gamma3, s (amb); log10_P0, rho, s (damb); tau [s] (polynomial); "
                             "docs/calibration.md)")
    add_json_option(parser, "the calibrated gains and every sample's J2")
    add_plots_option(parser, "the study's figures")
    add_quiet_option(parser)
    parser.set_defaults(func=_calibrate)
