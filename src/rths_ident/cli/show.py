"""``rths-ident show RECORD``: what a test record holds, and its plots.

Prints the scenario, whether the test ran to its end (and if not, why), the software
versions, the time base and duration, the events, the configuration, the datasets with
their units and the metrics; ``--plots DIR`` draws the figures
(:func:`rths_ident.runner.plots.plot_test_record`). A maRTHS study's record gets its own
summary (runs finished of those planned, the mean J per component) and figures
(:func:`rths_ident.benchmarks.marths.plots.plot_study_record`). Reads records whose writer was
killed (up to the last flush). See ``docs/records.md``.
"""

from __future__ import annotations

import argparse
import textwrap

from rths_ident.records import layout

WIDTH = 100


def _number(value) -> str:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return str(value)
    return f"{value:.6g}" if isinstance(value, float) else str(value)


def _inline(value) -> str:
    """A nested value on one line: ``a 1, b.c 2``."""
    if isinstance(value, dict):
        return ", ".join(f"{k} {_number(v)}" for k, v in layout.scalar_attributes(value).items()) or "—"
    if isinstance(value, list):
        return "[" + ", ".join(_number(v) for v in value) + "]"
    return "—" if value is None else _number(value)


def _fields(rows) -> list[str]:
    rows = list(rows)
    if not rows:
        return ["  (none)"]
    width = min(28, max(len(label) for label, _ in rows))
    lines = []
    for label, text in rows:
        wrapped = textwrap.wrap(str(text), width=max(40, WIDTH - width - 4)) or [""]
        lines.append(f"  {label.ljust(width)}  {wrapped[0]}")
        lines.extend(" " * (width + 4) + more for more in wrapped[1:])
    return lines


def _duration(record) -> str:
    n = record.n_steps
    if n == 0:
        return "no slow step recorded"
    base = record.time_base
    slow = base.get("slow_rate_hz")
    start = float(record.time[0]) - (1.0 / slow if slow else 0.0)
    text = f"{n} slow steps, test time {start:.3f} … {float(record.time[-1]):.3f} s ({float(record.time[-1]) - start:.3f} s)"
    if slow:
        text += f" at {slow:g} Hz"
    if "samples_per_step" in base and "fast_rate_hz" in base:
        text += f"; {base['samples_per_step']} fast samples per step ({base['fast_rate_hz']:g} Hz)"
    return text


def format_summary(record) -> str:
    """The text ``rths-ident show`` prints for ``record`` (a :class:`~rths_ident.records.TestRecord`)."""
    scenario = record.config.get("scenario")
    lines = [f"test record {record.path}"]
    lines += _fields([
        ("kind", record.kind + (f" {scenario}" if scenario else "")),
        ("created (UTC)", record.created_utc),
        ("status", record.status()),
        ("steps", _duration(record)),
        ("software", ", ".join(f"{k} {v}" for k, v in record.software.items() if k != "platform")),
        ("platform", record.software.get("platform", "?")),
    ])
    lines.append("events")
    lines += _fields((f"{e.kind} @ " + ("—" if e.step is None else f"step {e.step}")
                      + ("" if e.time is None else f", t {e.time:.3f} s"), e.message) for e in record.events)
    lines.append("configuration")
    lines += _fields((key, _inline(value)) for key, value in record.config.items())
    lines.append("datasets (per slow step; SI units)")
    lines += _fields((path, f"{tuple(array.shape)} {array.dtype}  [{_unit(record.units.get(path, '?'))}]")
                     for path, array in sorted(record.steps.items()))
    lines.append("metrics" + ("" if record.metrics is not None else " (none: the test did not finish)"))
    if record.metrics is not None:
        main = record.metrics.get("updating")
        rows = []
        for key, value in record.metrics.items():
            if key == "variants" and isinstance(value, dict):  # the comparison runs, one line each
                rows += [(f"variant {name}", _inline(v)) for name, v in value.items() if name != main]
            else:
                rows.append((key, _inline(value)))
        lines += _fields(rows)
    return "\n".join(lines)


def format_study_summary(record) -> str:
    """The text ``rths-ident show`` prints for a maRTHS study's record
    (:mod:`rths_ident.benchmarks.marths.study_record`): status, runs finished of those
    planned, the mean J1–J10 per component of the finished runs (nominal and uncertain
    apart), realisability, events, configuration and what is attached."""
    import numpy as np  # noqa: PLC0415

    from rths_ident.benchmarks.marths.metrics import INDEX_NAMES  # noqa: PLC0415
    from rths_ident.benchmarks.marths.study_record import study_rows  # noqa: PLC0415

    rows = study_rows(record)
    planned = int(record.config.get("runs_planned", 0))
    done = [row["run"] for row in rows]
    uncertain = [row for row in rows if row["run"] != 0]
    lines = [f"test record {record.path}"]
    lines += _fields([
        ("kind", record.kind),
        ("created (UTC)", record.created_utc),
        ("status", _study_status(record, len(rows))),
        ("runs", f"{len(rows)} of {planned} finished (nominal {'done' if 0 in done else 'not done'}, "
                 f"{len(uncertain)} of {max(planned - 1, 0)} random plants)"
                 + ("" if len(rows) == planned else f"; missing runs {_ranges(sorted(set(range(planned)) - set(done)))}")),
        ("software", ", ".join(f"{k} {v}" for k, v in record.software.items() if k != "platform")),
    ])
    lines.append("configuration")
    lines += _fields((key, _inline(value)) for key, value in record.config["study"].items())
    lines.append("J of the finished runs per component (J1, J4 [ms]; others [%])")
    nominal = next((row["J"] for row in rows if row["run"] == 0), None)
    table = []
    for name in INDEX_NAMES:
        text = "nominal " + (" / ".join(f"{v:.2f}" for v in nominal[name]) if nominal else "—")
        if uncertain:
            mean = np.mean([row["J"][name] for row in uncertain], axis=0)
            text += f"   mean of {len(uncertain)} uncertain " + " / ".join(f"{v:.2f}" for v in mean)
        table.append((name, text))
    lines += _fields(table)
    saturation = sum(row["realisability"]["commands_within_saturation"] for row in rows)
    limits = sum(row["realisability"]["limits_respected"] for row in rows)
    lines.append("realisability")
    lines += _fields([("commands within saturation", f"{saturation} of {len(rows)} runs"),
                      ("every limit respected", f"{limits} of {len(rows)} runs")])
    lines.append("events")
    lines += _fields((f"{e.kind}" + ("" if e.step is None else f" @ row {e.step}"), e.message) for e in record.events)
    histories = sorted({path.split("/")[1] for path in record.attached if path.startswith("histories/")})
    lines.append("attached")
    lines += _fields([("histories", ", ".join(histories) or "none"),
                      ("reference", "yes" if "reference/time" in record.attached else "no")])
    return "\n".join(lines)


def _study_status(record, rows: int) -> str:
    """Whether the study ran to its end, and if not, why (rows, not slow steps)."""
    errors = record.errors()
    if record.complete or not errors:
        return record.status()
    return f"not complete: stopped by an error after {rows} finished runs: {errors[0].message}"


def _ranges(values: list[int]) -> str:
    """``[1, 2, 3, 7]`` → ``"1…3, 7"``."""
    out, start = [], None
    for k, v in enumerate(values):
        if start is None:
            start = v
        if k + 1 == len(values) or values[k + 1] != v + 1:
            out.append(str(v) if v == start else f"{start}…{v}")
            start = None
    return ", ".join(out)


def _unit(unit) -> str:
    return ", ".join(f"{c} {u}" for c, u in unit.items()) if isinstance(unit, dict) else str(unit)


def run_show(args: argparse.Namespace) -> int:
    from rths_ident.output_paths import check_output_folder  # noqa: PLC0415
    from rths_ident.records import read_test_record  # noqa: PLC0415

    if args.plots:
        check_output_folder("--plots", args.plots)  # before reading: a bad folder is told at once
    from rths_ident.benchmarks.marths.study_record import is_study_record  # noqa: PLC0415

    record = read_test_record(args.record)
    study = is_study_record(record)
    print(format_study_summary(record) if study else format_summary(record))
    if args.plots:
        # matplotlib only when plotting
        if study:
            from rths_ident.benchmarks.marths.plots import plot_study_record as plot  # noqa: PLC0415
        else:
            from rths_ident.runner.plots import plot_test_record as plot  # noqa: PLC0415

        for path in plot(record, args.plots):
            print(f"plot → {path}")
    return 0


def add_show_command(subparsers: argparse._SubParsersAction) -> None:
    """Register ``rths-ident show``."""
    parser = subparsers.add_parser(
        "show", help="summarise a test record (HDF5) and draw its plots",
        description="Print what a test record written by 'rths-ident run' (or a server) holds: scenario, "
        "configuration, software versions, duration, events, complete or not and why, datasets with "
        "their units, metrics. Records whose writer was killed are read up to the last flush.",
    )
    parser.add_argument("record", help="the test record (.h5)")
    parser.add_argument("--plots", metavar="DIR", default=None, help="draw the figures into this folder")
    parser.set_defaults(func=run_show)
