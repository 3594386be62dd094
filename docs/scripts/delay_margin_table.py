"""Predicted vs actual delay margin per shipped frame test: the tables of
docs/hybrid/interlocks.md ("The delay margin").

    python docs/scripts/delay_margin_table.py [--table delay|parameters] [--tests rc-frame,lugre-frame,bw-frame]
        [--window S] [--out margins.json] [--from margins.json] [--write docs/hybrid/interlocks.md]

``--table parameters`` (markers ``parameter-margin``): the margins of the actuator's
parameter error and the specimen's stiffness error instead — predicted for all four
directions, and the step-wise loop bisected (:func:`rths_ident.runner.delay_margin.stepwise_margin`)
on the first of them that fails (the actual, for that one).

Per test (the shipped test file as it is): the nominal twin (fused, the whole record,
interlocks off) gives the peak |x_t| that sets the margin's tracking limit; then

* **predicted**: :func:`rths_ident.runner.delay_margin.predict_margins` — what
  ``rths-ident check TEST --predict`` prints: the fused twin over the first ``--window``
  seconds, batched with ``jax.vmap`` over the extra delay (and the compensator's
  correction gain), the bracket refined batch by batch;
* **actual**: :func:`rths_ident.runner.delay_margin.stepwise_delay_margin` — the step-wise
  engine on the virtual site (one compiled call per slow step, the loop's interlock
  monitor, the safe stop on a trip) at one extra delay per run, bisected on
  [0, max_delay]: the delay at which the real loop trips, found run by run.

Both use the one definition of a failure (an interlock trips, or the tracking error
exceeds the margin's tracking limit; module doc of ``rths_ident.runner.delay_margin``).
``--write FILE`` replaces the table between ``<!-- delay-margin:begin -->`` and
``<!-- delay-margin:end -->``; without it the table is printed. ``--from JSON`` writes the
table of an earlier ``--out`` without running anything.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import time
from pathlib import Path

import numpy as np

import rths_ident

rths_ident.configure()  # before any JAX computation: XLA's small-loop kernels, as the command line

from rths_ident.hybrid.loop.assembled import run_loop  # noqa: E402
from rths_ident.runner import delay_margin as dm  # noqa: E402

from page_markers import replace_between_markers  # noqa: E402


def one_test(name: str, window: float) -> dict:
    """Predicted and step-wise delay margins of shipped test ``name``."""
    test = rths_ident.load_test(name)
    cfg = test.config
    hybrid = test.kind.module.build(cfg)
    logs, _ = run_loop(hybrid, "fused", variant=cfg.variant, interlocks=False)
    peak = float(np.max(np.abs(logs["fast"]["target"])))
    sweep = dm.MarginSweep(window=window)
    start = time.perf_counter()
    predicted = dm.predict_margins(hybrid, cfg.variant, sweep, peak)
    predicted_wall = time.perf_counter() - start
    actual = dm.stepwise_delay_margin(hybrid, cfg.variant, sweep, peak)

    def trip(result):
        return None if result is None or result["trip"] is None else result["trip"].as_dict()

    def part(result):
        return None if result is None else {"margin": result["margin"], "bracket": list(result["bracket"]),
                                            "trip": trip(result)}

    return {"test": name, "compensator": cfg.compensation, "transition": cfg.transition,
            "window_s": predicted["window_s"], "tracking_limit_m": predicted["tracking_limit_m"],
            "predicted": part(predicted["delay"]), "gain_over": part(predicted["gain_over"]),
            "gain_under": part(predicted["gain_under"]), "twin_runs": predicted["runs"],
            "twin_batches": predicted["batches"], "predicted_wall_s": predicted_wall,
            "actual": part(actual), "stepwise_runs": actual["runs"], "stepwise_wall_s": actual["wall_s"]}


def one_test_parameters(name: str, window: float) -> dict:
    """Predicted actuator and specimen margins of shipped test ``name``, and the
    step-wise loop bisected on the first of them that fails."""
    test = rths_ident.load_test(name)
    cfg = test.config
    hybrid = test.kind.module.build(cfg)
    logs, _ = run_loop(hybrid, "fused", variant=cfg.variant, interlocks=False)
    peak = float(np.max(np.abs(logs["fast"]["target"])))
    sweep = dm.MarginSweep(window=window)
    start = time.perf_counter()
    predicted = dm.predict_margins(hybrid, cfg.variant, sweep, peak, quantities=("actuator", "specimen"))
    predicted_wall = time.perf_counter() - start
    row = {"test": name, "window_s": predicted["window_s"], "tracking_limit_m": predicted["tracking_limit_m"],
           "actuator_field": sweep.actuator_field, "specimen_fields": list(predicted["specimen_fields"]),
           "twin_runs": predicted["runs"], "twin_batches": predicted["batches"], "predicted_wall_s": predicted_wall}
    for key in ("actuator_over", "actuator_under", "specimen_over", "specimen_under"):
        row[key] = _part(predicted[key])
    checked = next((key for key in ("actuator_over", "actuator_under", "specimen_over", "specimen_under")
                    if predicted[key] is not None and predicted[key]["margin"] not in (None, 1.0)), None)
    row["checked"] = checked
    if checked is not None:
        quantity = checked.split("_")[0]
        end = getattr(sweep, dm.SWEEPS[checked][2])
        actual = dm.stepwise_margin(hybrid, cfg.variant, sweep, peak, quantity, end)
        row.update(actual=_part(actual), stepwise_runs=actual["runs"], stepwise_wall_s=actual["wall_s"])
    return row


def _part(result):
    if result is None:
        return None
    trip = None if result["trip"] is None else result["trip"].as_dict()
    return {"margin": result["margin"], "bracket": list(result["bracket"]), "trip": trip}


def _factor(part, when_none: str, with_time: bool = True) -> str:
    """"×F (INTERLOCK at T s)": the first factor found to fail and what ended it."""
    if part is None:
        return "–"
    if part["margin"] is None:
        return when_none
    at = f" at {part['trip']['time_s']:.2f} s" if with_time else ""
    return f"×{part['bracket'][1]:.3g} ({part['trip']['interlock']}{at})"


def parameter_table(rows: list[dict], where: str) -> str:
    sweep = dm.MarginSweep()
    lines = ["| test | actuator field | fails above | fails below | specimen stiffness fields | fails above | "
             "fails below | step-wise loop (bisected) on | its margin | difference |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    for row in rows:
        checked, actual = row.get("checked"), row.get("actual")
        if checked is not None and actual is not None and actual["margin"] is not None:
            predicted = row[checked]["margin"]
            difference = f"{100 * (predicted - actual['margin']) / (actual['margin'] - 1.0):+.1f} %"
            stepwise = (f"{checked.replace('_', ' ')}", f"×{actual['bracket'][1]:.3g} (runs at "
                        f"×{actual['bracket'][0]:.3g}; {actual['trip']['interlock']})")
        else:
            difference, stepwise = "–", (checked.replace("_", " ") if checked else "–", "–")
        lines.append(f"| {row['test']} | {row['actuator_field']} | {_factor(row['actuator_over'], f'none to ×{sweep.actuator_high:g}')} | "
                     f"{_factor(row['actuator_under'], f'none to ×{sweep.actuator_low:g}')} | "
                     f"{', '.join(row['specimen_fields']) or '–'} | {_factor(row['specimen_over'], f'none to ×{sweep.specimen_high:g}')} | "
                     f"{_factor(row['specimen_under'], f'none to ×{sweep.specimen_low:g}')} | {stepwise[0]} | {stepwise[1]} | "
                     f"{difference} |")
    lines.append("")
    lines.append(f"Machine: {where}. Factors: the first found to fail (the twin over the first "
                 f"{rows[0]['window_s']:g} s, fused, vmap); difference: (predicted − step-wise) over the step-wise "
                 "margin's distance from ×1.")
    return "\n".join(lines)


def _ms(part) -> str:
    if part is None or part["margin"] is None:
        return "none up to the sweep's end"
    low, high = part["bracket"]
    return f"{1e3 * high:.2f} (runs at {1e3 * low:.2f})"


def _ends(part) -> str:
    if part is None or part["trip"] is None:
        return "–"
    return f"{part['trip']['interlock']} at {part['trip']['time_s']:.2f} s"


def table(rows: list[dict], where: str) -> str:
    lines = ["| test (compensation, transition) | window [s] | tracking limit [mm] | predicted τ_m [ms] "
             "(fused twin, vmap) | ends by | step-wise loop τ_m [ms] (bisected) | ends by | difference | "
             "correction gain fails above / below |",
             "|---|---|---|---|---|---|---|---|---|"]
    for row in rows:
        predicted, actual = row["predicted"], row["actual"]
        if predicted["margin"] is not None and actual["margin"] is not None:
            difference = f"{100 * (predicted['margin'] - actual['margin']) / actual['margin']:+.1f} %"
        else:
            difference = "–"
        lines.append(f"| {row['test']} ({row['compensator']}, {row['transition']}) | {row['window_s']:g} | "
                     f"{1e3 * row['tracking_limit_m']:.3g} | {_ms(predicted)} | {_ends(predicted)} | {_ms(actual)} | "
                     f"{_ends(actual)} | {difference} | {_factor(row['gain_over'], 'none up to ×3', with_time=False)} / "
                     f"{_factor(row['gain_under'], 'none down to ×0', with_time=False)} |")
    lines.append("")
    lines.append(f"Machine: {where}. τ_m: the first extra delay found to fail (in brackets the largest found to "
                 "run); difference: predicted over step-wise − 1.")
    return "\n".join(lines)


def machine() -> str:
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    return (f"{platform.machine()}, {os.cpu_count()} cores, load {load:.1f} when the table was written, "
            f"rths_ident {rths_ident.__version__}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--table", choices=("delay", "parameters"), default="delay")
    parser.add_argument("--tests", default="rc-frame,lugre-frame,bw-frame")
    parser.add_argument("--window", type=float, default=dm.MarginSweep().window)
    parser.add_argument("--out")
    parser.add_argument("--from", dest="source")
    parser.add_argument("--write")
    args = parser.parse_args()
    if args.source:
        saved = json.loads(Path(args.source).read_text())
        rows, where = saved["rows"], saved["machine"]
    else:
        rows = []
        for name in args.tests.split(","):
            if args.table == "parameters":
                row = one_test_parameters(name, args.window)
                print(f"{name}: {json.dumps(row)}; load {os.getloadavg()[0]:.1f}", flush=True)
                rows.append(row)
                continue
            row = one_test(name, args.window)
            print(f"{name}: predicted {_ms(row['predicted'])} ms in {row['predicted_wall_s']:.1f} s "
                  f"({row['twin_runs']} twins, {row['twin_batches']} batches); step-wise {_ms(row['actual'])} ms "
                  f"in {row['stepwise_wall_s']:.1f} s ({row['stepwise_runs']} runs); load {os.getloadavg()[0]:.1f}",
                  flush=True)
            rows.append(row)
        where = machine()
        if args.out:
            Path(args.out).write_text(json.dumps({"machine": where, "rows": rows}, indent=1))
    text = parameter_table(rows, where) if args.table == "parameters" else table(rows, where)
    if args.write:
        page = Path(args.write)
        marker = "parameter-margin" if args.table == "parameters" else "delay-margin"
        page.write_text(replace_between_markers(page.read_text(), marker, text))
        print(f"table → {page}")
    else:
        print(text)


if __name__ == "__main__":
    main()
