"""`rths-ident fit --dataset NAME --model auto` on the three real cyclic tests we hold
(docs/fitting.md, "Real members: --model auto on the shipped tests").

    PYTHONPATH=src python docs/scripts/real_members_table.py --out real_members.json
    PYTHONPATH=src python docs/scripts/real_members_table.py --page real_members.json

The first form measures: for each of kunnath, gill and daniel (the quasi-static tests of
Ortiz, Alvarez & Bedoya-Ruíz 2015, shipped), what ``--model auto`` runs
(:func:`rths_ident.estimators.offline.fit_all`, ``nls`` with the command's defaults: seed
0, 40 generations of the global stage, forms by BIC), every registered model in turn; per
model the rms/rms NRMSE [%], the form chosen, the wall and CPU time of its fit, the
1-minute load average before it, and its parameters (SI). Auto's choice is the first of
the ranking (lowest NRMSE), as the command prints it. Written as JSON.

The second form writes the table between ``<!-- real-members:begin -->`` and
``<!-- real-members:end -->`` of docs/fitting.md from that JSON, with the parameters
each fit leaves on a bound of its search box
(:func:`rths_ident.estimators.offline.bound_check.parameters_at_bounds`, the warning the
command prints). Timing figures stay in the JSON and the report, not in the page.

Duration: the measurement fits 9 models on 3 records: about 4 min of CPU, 25 min wall on
a 2-core machine at a load of 12 (measured 2026-11-27); ``--page`` takes seconds.
"""

from __future__ import annotations

import json
import os
import pathlib
import sys
import time

import rths_ident
from rths_ident.datasets import load_hysteresis_test
from rths_ident.estimators.offline import FitData, fit_all

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from page_markers import measure_or_write_page  # noqa: E402

PAGE = pathlib.Path(__file__).resolve().parents[1] / "fitting.md"
TESTS = ("kunnath", "gill", "daniel")
GOAL_PERCENT, GOAL_SECONDS = 15.0, 60.0


def measure(out: str) -> None:
    rows = []
    for name in TESTS:
        x, f = load_hysteresis_test(name, units="SI")
        data = FitData.from_arrays(x, f, None, source=name)
        clock = {"wall": time.perf_counter(), "cpu": time.process_time(), "load": os.getloadavg()[0]}
        timings: dict[str, dict] = {}

        def progress(message: str, timings=timings, clock=clock) -> None:
            if message.startswith("fitting ") and message.endswith(" (nls) ..."):
                model = message[len("fitting "):-len(" (nls) ...")]
                now = {"wall": time.perf_counter(), "cpu": time.process_time(), "load": os.getloadavg()[0]}
                timings[model] = now
                clock.update(now)

        start_wall = time.perf_counter()
        ranking = fit_all(data, "nls", seed=0, free_A=False, global_generations=40, progress=progress)
        end = {"wall": time.perf_counter(), "cpu": time.process_time()}
        order = list(timings)  # the models in the order fit_all fitted them
        for result in ranking:
            i = order.index(result.model)
            after = timings[order[i + 1]] if i + 1 < len(order) else end
            rows.append({"test": name, "model": result.model, "rank": ranking.index(result) + 1,
                         "auto_choice": result is ranking[0], "form": result.details.get("form"),
                         "nrmse_rms_percent": result.nrmse_rms_percent, "nrmse_percent": result.nrmse_percent,
                         "wall_s": after["wall"] - timings[result.model]["wall"],
                         "cpu_s": after["cpu"] - timings[result.model]["cpu"],
                         "load_1min_before": timings[result.model]["load"], "params": result.params,
                         "n_samples": data.n_samples})
            print(json.dumps({k: v for k, v in rows[-1].items() if k != "params"}), flush=True)
        print(f"{name}: --model auto {time.perf_counter() - start_wall:.1f} s wall, choice {ranking[0].model}",
              flush=True)
    with open(out, "w", encoding="utf-8") as handle:
        json.dump(rows, handle, indent=2)
    print(f"wrote {out}")


def _bound_note(row: dict) -> str:
    from rths_ident.estimators.offline.bound_check import parameters_at_bounds

    x, f = load_hysteresis_test(row["test"], units="SI")
    data = FitData.from_arrays(x, f, None, source=row["test"])
    flags = parameters_at_bounds(data, row["model"], row["params"], form=row["form"])
    return ", ".join(f"{flag['parameter']} ({flag['side']}, {'model limit' if flag['physical'] else 'search box'})"
                     for flag in flags) or "none"


def table(rows: list[dict]) -> str:
    """The page's table: per test and model, the rms/rms NRMSE, the form, the bound flags."""
    models = [row["model"] for row in rows if row["test"] == TESTS[0]]
    models.sort(key=lambda m: sum(r["nrmse_rms_percent"] for r in rows if r["model"] == m))
    by = {(row["test"], row["model"]): row for row in rows}
    lines = ["| model | " + " | ".join(f"{t} ({by[(t, models[0])]['n_samples']} samples)" for t in TESTS) + " |",
             "|---|" + "---|" * len(TESTS)]
    for model in models:
        cells = []
        for test in TESTS:
            row = by[(test, model)]
            text = f"{row['nrmse_rms_percent']:.2f}"
            if row["form"]:
                text += f" ({row['form']})"
            cells.append(f"**{text}**" if row["auto_choice"] else text)
        lines.append(f"| {model} | " + " | ".join(cells) + " |")
    lines.append("")
    lines.append("On a bound of its search box (the warning `fit` prints), per test, for the chosen model:")
    lines.append("")
    for test in TESTS:
        choice = next(row for row in rows if row["test"] == test and row["auto_choice"])
        within = "meets" if choice["nrmse_rms_percent"] <= GOAL_PERCENT else "misses"
        lines.append(f"* {test}: auto chooses `{choice['model']}` ({choice['nrmse_rms_percent']:.2f} % rms/rms, "
                     f"{within} the {GOAL_PERCENT:g} % goal); on a bound: {_bound_note(choice)}")
    return "\n".join(lines)


def main() -> None:
    rths_ident.configure()
    measure_or_write_page(__doc__.splitlines()[0], measure, PAGE, "real-members", table)


if __name__ == "__main__":
    main()
