"""``rths-ident study TEST --vary TABLE.KEY=… [--samples N]``: a test run many times with
some fields varied, here or on a Dask cluster (:mod:`rths_ident.scenarios.study`)."""

from __future__ import annotations

import argparse
import csv
import json
import sys
from pathlib import Path

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
    from rths_ident.dask_cluster import check_address  # noqa: PLC0415
    from rths_ident.output_paths import check_output_file  # noqa: PLC0415
    from rths_ident.runner.terminal import StudyProgress, _is_terminal  # noqa: PLC0415
    from rths_ident.scenarios.kinds import kind_of, load_any  # noqa: PLC0415
    from rths_ident.scenarios.study import parse_variation, plan_study, run_study  # noqa: PLC0415

    json_path = check_output_file("--json", args.json) if args.json else None
    csv_path = check_output_file("--csv", args.csv) if args.csv else None
    if args.dask is not None:
        check_address(args.dask)
    test_file = load_any(args.test)
    kind_name, _ = kind_of(test_file)
    plan = plan_study(kind_name, test_file, [parse_variation(v) for v in args.vary], args.samples, args.seed)
    if not args.quiet:
        print(f"study of {test_file.source}: {len(plan.runs)} runs varying {', '.join(plan.varied)}"
              + (f" on the Dask cluster {args.dask}" if args.dask else ""), file=sys.stderr)
    progress = None if args.quiet else StudyProgress(label="study", redraw=_is_terminal(sys.stderr))
    result = run_study(plan, dask=args.dask, progress=progress)
    print(_table(result))
    stopped = result["stopped_runs"]
    print(f"{result['n_runs']} runs in {result['wall_s']:.1f} s" + (f"; stopped: runs {stopped}" if stopped else ""))
    if json_path is not None:
        json_path.write_text(json.dumps(result, indent=2))
        print(f"study → {json_path}")
    if csv_path is not None:
        _write_csv(result, csv_path)
        print(f"table → {csv_path}")
    return 0


def add_study_command(subparsers: argparse._SubParsersAction) -> None:
    """Register ``rths-ident study``."""
    parser = subparsers.add_parser(
        "study", help="run a test many times with fields varied (a sweep, a grid or a random sample)",
        description="Run a test (a shipped one, FILE.toml or FILE.h5) many times with some of its fields varied: "
        "TABLE.KEY=a,b,c (these values; several --vary make a grid), TABLE.KEY=low:high:n (n values), "
        "TABLE.KEY=low:high (uniform, one draw per --samples). Each run is checked before the first starts; "
        "on a Dask cluster the numbers are the same.")
    parser.add_argument("test", metavar="TEST")
    parser.add_argument("--vary", action="append", default=[], metavar="TABLE.KEY=SPEC", required=True,
                        help="a field to vary and how (see above); repeat for several")
    parser.add_argument("--samples", type=int, default=None, help="draws of the uniform ranges")
    parser.add_argument("--seed", type=int, default=0, help="seed of the draws (default 0)")
    parser.add_argument("--dask", default=None, metavar="local|tcp://HOST:PORT",
                        help="run on a Dask cluster: local (2 worker processes on 127.0.0.1) or a scheduler")
    parser.add_argument("--json", metavar="OUT.json", default=None, help="every run's varied values and metrics")
    parser.add_argument("--csv", metavar="OUT.csv", default=None, help="one row per run: varied values, metrics")
    parser.add_argument("--quiet", action="store_true", help="the table only")
    parser.set_defaults(func=run_study_command)
