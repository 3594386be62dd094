"""``rths-ident study TEST --vary TABLE.KEY=… [--samples N]``: a test run many times with
some fields varied, here or on a Dask cluster (:mod:`rths_ident.scenarios.study`)."""

from __future__ import annotations

import argparse
import csv
import json
import sys
from pathlib import Path

from rths_ident.cli.common_options import add_json_option, add_quiet_option

#: the metrics a study's table shows per run (when the test has them)
SHOWN = ("J2_percent", "J4_force_percent", "tau_ms")


def _roof(metrics: dict) -> tuple[str, float] | None:
    j4 = metrics.get("J4_percent")
    if isinstance(j4, dict) and j4:
        name = list(j4)[-1]
        return f"J4 {name} [%]", j4[name]
    return None


def _table(result: dict) -> str:
    runs = result["runs"]
    shown = [m for m in SHOWN if all(m in r["metrics"] for r in runs)]
    headers = ["run", *result["varied"], *shown]
    roof = _roof(runs[0]["metrics"]) if runs else None
    if roof is not None:
        headers.append(roof[0])
    lines = ["  ".join(f"{h:>14s}" for h in headers)]
    for row in runs:
        cells = [str(row["run"]), *[f"{row['varied'][p]:.6g}" if isinstance(row["varied"][p], float)
                                    else str(row["varied"][p]) for p in result["varied"]],
                 *[f"{row['metrics'][m]:.4g}" for m in shown]]
        if roof is not None:
            value = _roof(row["metrics"])
            cells.append("—" if value is None else f"{value[1]:.4g}")
        if row["stopped"]:
            cells.append(f"stopped: {row['stopped']}")
        lines.append("  ".join(f"{c:>14s}" for c in cells))
    return "\n".join(lines)


def _write_csv(result: dict, path: Path) -> None:
    from rths_ident.scenarios.study import _flat_numbers  # noqa: PLC0415

    flat = [_flat_numbers(r["metrics"]) for r in result["runs"]]
    names = sorted(set().union(*flat)) if flat else []
    with path.open("w", newline="", encoding="utf-8") as f:
        writer = csv.writer(f)
        writer.writerow(["run", *result["varied"], *names, "stopped"])
        for row, numbers in zip(result["runs"], flat):
            writer.writerow([row["run"], *[row["varied"][p] for p in result["varied"]],
                             *[numbers.get(n, "") for n in names], row["stopped"] or ""])


def run_study_command(args: argparse.Namespace) -> int:
    from rths_ident.cli.endings import EXIT_INTERRUPTED  # noqa: PLC0415
    from rths_ident.dask_cluster import check_address  # noqa: PLC0415
    from rths_ident.operator_stop import OperatorStopped  # noqa: PLC0415
    from rths_ident.output_paths import check_output_file  # noqa: PLC0415
    from rths_ident.runner.events import EventStream  # noqa: PLC0415
    from rths_ident.runner.terminal import TerminalView  # noqa: PLC0415
    from rths_ident.scenarios.study import run_study  # noqa: PLC0415

    plan, done, resumed = _plan(args)
    json_path = check_output_file("--json", args.json) if args.json else resumed or _default_json(plan)
    csv_path = check_output_file("--csv", args.csv) if args.csv else None
    if args.dask is not None:
        check_address(args.dask)
    if not args.quiet:
        again = f" ({len(done)} finished before, resumed from {resumed})" if resumed else ""
        print(f"study of {plan.source}: {len(plan.runs)} runs varying {', '.join(plan.varied)}{again}"
              + (f" on the Dask cluster {args.dask}" if args.dask else ""), file=sys.stderr)
    progress = EventStream(TerminalView(quiet=args.quiet)).runs_callback("study")
    try:
        result = run_study(plan, dask=args.dask, progress=progress, done=done,
                           on_run=lambda partial: _write_json(partial, json_path), batch=args.batch,
                           note=None if args.quiet else lambda line: print(line, file=sys.stderr))
    except OperatorStopped as stopped:
        partial = stopped.partial
        _write_json(partial, json_path)
        if partial["runs"]:
            print(_table(partial))
        print(f"rths-ident: study stopped by the operator (Ctrl-C) after {len(partial['runs'])} of "
              f"{partial['n_runs']} runs; study → {json_path}; resume: rths-ident study --resume {json_path}",
              file=sys.stderr)
        return EXIT_INTERRUPTED
    print(_table(result))
    stopped = result["stopped_runs"]
    print(f"{result['n_runs']} runs in {result['wall_s']:.1f} s" + (f"; stopped: runs {stopped}" if stopped else ""))
    _write_json(result, json_path)
    print(f"study → {json_path}")
    if csv_path is not None:
        _write_csv(result, csv_path)
        print(f"table → {csv_path}")
    return 0


def _plan(args: argparse.Namespace):
    """(plan, rows already finished, the JSON resumed or None) from the command line."""
    from rths_ident.errors import ParameterError  # noqa: PLC0415
    from rths_ident.scenarios.kinds import kind_of, load_any  # noqa: PLC0415
    from rths_ident.scenarios.study import parse_variation, plan_from_json, plan_study  # noqa: PLC0415

    if args.resume is not None:
        if args.test is not None or args.vary or args.samples is not None:
            raise ParameterError("--resume STUDY.json runs the plan it keeps: give no TEST, --vary or --samples")
        path = Path(args.resume)
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise ParameterError(f"--resume {path}: cannot read the study ({exc})") from None
        plan = plan_from_json(data.get("plan") or {}, f"--resume {path}")
        return plan, [row for row in data.get("runs", []) if "run" in row], path
    if args.test is None or not args.vary:
        raise ParameterError("a study needs TEST and at least one --vary TABLE.KEY=… (or --resume STUDY.json)")
    test_file = load_any(args.test)
    kind_name, _ = kind_of(test_file)
    return plan_study(kind_name, test_file, [parse_variation(v) for v in args.vary], args.samples, args.seed), [], None


def _default_json(plan) -> Path:
    """``rths-runs/study-<test>-<UTC time>/study.json`` (created when the first run ends)."""
    import datetime  # noqa: PLC0415

    stamp = datetime.datetime.now(datetime.timezone.utc).strftime("%Y%m%dT%H%M%SZ")
    return Path("rths-runs") / f"study-{plan.kind_name}-{stamp}" / "study.json"


def _write_json(result: dict, path: Path) -> None:
    """The study's JSON, replaced atomically (a study killed meanwhile keeps the previous one)."""
    import os  # noqa: PLC0415

    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(path.name + ".partial")
    partial.write_text(json.dumps(result, indent=2), encoding="utf-8")
    os.replace(partial, path)


def add_study_command(subparsers: argparse._SubParsersAction) -> None:
    """Register ``rths-ident study``."""
    from rths_ident.scenarios.study_batches import DEFAULT_BATCH  # noqa: PLC0415
    parser = subparsers.add_parser(
        "study", help="run a test many times with fields varied (a sweep, a grid or a random sample)",
        description="Run a test (a shipped one, FILE.toml or FILE.h5) many times with some of its fields varied: "
        "TABLE.KEY=a,b,c (these values; several --vary make a grid), TABLE.KEY=low:high:n (n values), "
        "TABLE.KEY=low:high (uniform, one draw per --samples). Each run is checked before the first starts; "
        "on a Dask cluster the numbers are the same. The study's JSON (--json, default "
        "rths-runs/study-<test>-<time>/study.json) is rewritten after every run: a study stopped halfway "
        "(Ctrl-C) resumes with --resume STUDY.json, running only the missing runs.")
    parser.add_argument("test", metavar="TEST", nargs="?", default=None)
    parser.add_argument("--vary", action="append", default=[], metavar="TABLE.KEY=SPEC",
                        help="a field to vary and how (see above); repeat for several")
    parser.add_argument("--samples", type=int, default=None, help="draws of the uniform ranges")
    parser.add_argument("--seed", type=int, default=0, help="seed of the draws (default 0)")
    parser.add_argument("--batch", type=int, default=None, metavar="N",
                        help="runs per compiled call when the varied fields change only the fused loop's values "
                             f"(default {DEFAULT_BATCH}; 0: run by run); a field that changes the loop's structure "
                             "runs the study run by run, with a note naming it")
    parser.add_argument("--dask", default=None, metavar="local|tcp://HOST:PORT",
                        help="run on a Dask cluster: local (2 worker processes on 127.0.0.1) or a scheduler")
    add_json_option(parser, "every run's varied values and metrics, and the plan (default: "
                          "rths-runs/study-<test>-<time>/study.json)")
    parser.add_argument("--csv", metavar="OUT.csv", default=None, help="one row per run: varied values, metrics")
    parser.add_argument("--resume", metavar="STUDY.json", default=None,
                        help="finish a study stopped halfway: the plan it keeps, only its missing runs (the JSON "
                             "is updated in place unless --json says otherwise)")
    add_quiet_option(parser)
    parser.set_defaults(func=run_study_command)
