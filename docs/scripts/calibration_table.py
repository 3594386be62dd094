"""docs/calibration.md's results table, from what `rths-ident calibrate` prints today.

    PYTHONPATH=src python docs/scripts/calibration_table.py --out calibration_rows.json
    PYTHONPATH=src python docs/scripts/calibration_table.py --page calibration_rows.json

The first form runs, through the command itself (``rths_ident.cli.main``), the eight
studies of the table — ``rths-ident calibrate amb|damb|polynomial --method pso|de|gradient
--specimens 64 --iterations 30 --json ... --quiet`` (AMB and dAMB by all three methods,
the polynomial by PSO and gradient; defaults otherwise: 6 s of El Centro at 100 %,
4000/50 Hz, the thesis' sensor noise, population 8, seed 0) — and keeps each JSON with
the 1-minute load before it, the wall time and what the command printed. The second form
writes the table between ``<!-- calibration-results:begin -->`` and
``<!-- calibration-results:end -->`` of docs/calibration.md: calibrated θ, calibration and
held-out J2 (mean / max) before → after, iterations run, and the command's warnings (gains
on a bound, a held-out figure that got worse, an early stop and why). Wall times stay in
the JSON (the page states no timing).

Duration: the eight studies took 22 min wall on a 2-core machine at a load of 9–16
(2026-11-27; a few minutes when the machine is idle and JAX's compilation cache warm);
``--page`` takes a second.
"""

from __future__ import annotations

import contextlib
import io
import json
import math
import os
import pathlib
import sys
import tempfile
import time

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
from page_markers import measure_or_write_page  # noqa: E402

PAGE = pathlib.Path(__file__).resolve().parents[1] / "calibration.md"
STUDIES = (("amb", "pso"), ("amb", "de"), ("amb", "gradient"), ("damb", "pso"), ("damb", "de"),
           ("damb", "gradient"), ("polynomial", "pso"), ("polynomial", "gradient"))
NAMES = {"amb": "AMB", "damb": "dAMB", "polynomial": "polynomial"}
METHOD_NAMES = {"pso": "PSO", "de": "DE", "gradient": "gradient"}


def measure(out: str) -> None:
    from rths_ident.cli import main as rths_ident_main

    rows = []
    with tempfile.TemporaryDirectory() as folder:
        for compensator, method in STUDIES:
            path = pathlib.Path(folder) / f"{compensator}_{method}.json"
            argv = ["calibrate", compensator, "--method", method, "--specimens", "64", "--iterations", "30",
                    "--json", str(path), "--quiet"]
            load, start = os.getloadavg()[0], time.perf_counter()
            printed = io.StringIO()
            with contextlib.redirect_stdout(printed):
                code = rths_ident_main(argv)
            wall = time.perf_counter() - start
            if code != 0:
                raise SystemExit(f"rths-ident {' '.join(argv)} returned {code}")
            result = json.loads(path.read_text(encoding="utf-8"))
            rows.append({"command": "rths-ident " + " ".join(argv[:-3] + ["--quiet"]), "load_1min_before": load,
                         "wall_s": wall, "printed": printed.getvalue(), "result": result})
            print(printed.getvalue(), flush=True)
            print(f"[{compensator} {method}: {wall:.0f} s wall, load {load:.1f} before]", flush=True)
    with open(out, "w", encoding="utf-8") as handle:
        json.dump(rows, handle, indent=1)
    print(f"wrote {out}")


def stop_reason(message: str) -> str:
    from rths_ident.calibration.trust import stop_reason as reason_of

    return reason_of(message)


def _theta(result: dict) -> str:
    gains = result["gains"]
    at_bound = {w["gain"] for w in result.get("warnings", []) if w["code"] == "gain_at_bound"}

    def one(name):
        value = gains[name]
        text = f"{1e3 * value:.2f} ms" if name == "τ" else (f"{value:.5f}" if name == "ρ" else f"{value:.2f}")
        return text.replace("-", "−") + ("*" if name in at_bound else "")

    if result["compensator"] == "amb":
        logs = ", ".join(one(f"log10 Γ{k}") for k in range(4))
        return f"log10 Γ = [{logs}], s = {one('s')}"
    if result["compensator"] == "damb":
        return f"log10 P_0 = {one('log10 P0')}, ρ = {one('ρ')}, s = {one('s')}"
    return f"τ = {one('τ')} (start 1/g = {1e3 * result['start_gains']['τ']:.2f} ms)"


def _j2(before: dict, after: dict) -> str:
    def pair(s):
        failed = f", {s['failed']} failed" if s.get("failed") else ""
        mean = "inf" if s["mean"] is None or not math.isfinite(s["mean"]) else f"{s['mean']:.3f}"
        worst = "inf" if s["max"] is None or not math.isfinite(s["max"]) else f"{s['max']:.3f}"
        return f"{mean} / {worst}{failed}"

    return f"{pair(before)} → {pair(after)}"


def _warnings(result: dict) -> str:
    notes = []
    for w in result.get("warnings", []):
        if w["code"] == "gain_at_bound":
            notes.append(f"{w['gain']} on its {w['side']} bound")
        elif w["code"] == "holdout_worse":
            notes.append(f"held-out {w['statistic']} worse")
        elif w["code"] == "stopped_early":  # the reason as the command words it today
            reason = stop_reason(w["message"])
            criterion = "factr" if "factr" in reason else "pgtol" if "pgtol" in reason else ""
            notes.append(f"stopped early: {reason.split(':')[0]}" + (f" ({criterion})" if criterion else ""))
    return "; ".join(notes) or "–"


def table(rows: list[dict]) -> str:
    lines = ["| compensator | method | calibrated θ | calibration J2 before → after | held-out J2 before → after "
             "| iterations run | warnings (`calibrate` prints) |",
             "|---|---|---|---|---|---|---|"]
    for row in rows:
        r = row["result"]
        lines.append(f"| {NAMES[r['compensator']]} | {METHOD_NAMES[r['method']]} | {_theta(r)} | "
                     f"{_j2(r['J2_calibration_before'], r['J2_calibration_after'])} | "
                     f"{_j2(r['J2_before'], r['J2_after'])} | {r['iterations_done']} of {r['iterations']} | "
                     f"{_warnings(r)} |")
    lines += ["", "\\* on (within 0.5 % of) a bound of its box: the command's warning `gain_at_bound`."]
    return "\n".join(lines)


def main() -> None:
    measure_or_write_page(__doc__.splitlines()[0], measure, PAGE, "calibration-results", table)


if __name__ == "__main__":
    main()
