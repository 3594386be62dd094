"""The performance figures of docs/performance.md: one table, written from what
``rths-ident bench --json`` kept.

    rths-ident bench --repeats 5 --json bench.json          # on an idle machine
    python docs/scripts/performance_table.py bench.json --note "idle machine, load average < 0.5"

replaces everything between the marker lines ``<!-- bench table start -->`` and
``<!-- bench table end -->`` of docs/performance.md (``--doc`` for another file,
``--print`` to print the table instead). Each row is one figure of the bench: its value
from the fastest repeat (min time) and from the median repeat, and its unit; a part the
bench did not run (``--only``) has no rows. The machine line is the one the bench
printed, with ``--note`` (the load, how the bench was run) after it.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any, NamedTuple

START = "<!-- bench table start -->"
END = "<!-- bench table end -->"
DOC = Path(__file__).resolve().parents[1] / "performance.md"
NONE = "—"


class Row(NamedTuple):
    """One figure: ``low`` from the fastest repeat, ``median`` from the median one
    (None: the bench measured it once, or gives only one of the two)."""

    figure: str
    low: float | None
    median: float | None
    unit: str


def number(value: float | None) -> str:
    """A figure as the table prints it: 3 significant digits, whole numbers from 100 up."""
    if value is None:
        return NONE
    if abs(value) >= 100:
        return f"{value:.0f}"
    return f"{value:.3g}"


def _engine_rows(name: str, r: dict, with_stepwise: bool) -> list[Row]:
    ratio = r["fused_wall_median_s"] / r["fused_wall_s"]
    rows = [Row(f"{name}, fused engine ({r['duration_s']:g} s of El Centro, {r['repeats']} runs)",
                r["fused_realtime_factor"], r["fused_realtime_factor_median"], "× real time"),
            Row(f"{name}, fused engine, per fast step", r["fused_us_per_fast_step"],
                r["fused_us_per_fast_step"] * ratio, "µs")]
    if with_stepwise:
        rows.append(Row(f"{name}, step-wise engine ({r['stepwise_duration_s']:g} s)", r["stepwise_realtime_factor"],
                        r["stepwise_realtime_factor_median"], "× real time"))
    return rows


def _batch_rows(name: str, r: dict) -> list[Row]:
    one = r["one_by_one_s_per_sim"]
    rows = [Row(f"{name}, one run at a time ({r['duration_s']:g} s simulated)", 1e3 * one["min"],
                1e3 * one["median"], "ms per simulation")]
    for n, b in r.get("batches", {}).items():
        rows.append(Row(f"{name}, vmap batch of {n}", b["speedup_min"], b["speedup_median"], "× one at a time"))
    for n, b in r.get("threaded", {}).items():
        rows.append(Row(f"{name}, {r['threads']} threads × batch of {n}", b["speedup_min"], b["speedup_median"],
                        "× one at a time"))
    return rows


def rows(bench: dict[str, Any]) -> list[Row]:
    """The table's rows, in the order ``rths-ident bench`` prints its parts."""
    out: list[Row] = []
    if "engines" in bench:
        out += _engine_rows("lugre-frame", bench["engines"], with_stepwise=True)
    if "bw_frame_engine" in bench:
        out += _engine_rows("bw-frame", bench["bw_frame_engine"], with_stepwise=False)
    if "batch" in bench:
        out += _batch_rows("lugre-frame", bench["batch"])
    if "marths_batch" in bench:
        out += _batch_rows("maRTHS LQG", bench["marths_batch"])
    if "marths_study" in bench:
        s = bench["marths_study"]
        label = f"maRTHS study of {s['runs']} runs × {s['duration_s']:g} s"
        out.append(Row(f"{label}, one at a time", s["one_by_one_runs_per_min"], None, "runs per minute"))
        out.append(Row(f"{label}, batches of {s['batch']}", s["batched_runs_per_min"], None, "runs per minute"))
        out.append(Row(f"{label}, batches of {s['threaded_batch']} on {s['cores']} threads",
                       s["batched_threads_runs_per_min"], None, "runs per minute"))
        if "local_cluster_runs_per_min" in s:
            out.append(Row(f"{label}, local Dask cluster (start-up and compilation included)",
                           s["local_cluster_runs_per_min"], None, "runs per minute"))
    for name, c in bench.get("components_per_fast_step", {}).items():
        out.append(Row(f"fast step: {name}, {c['flops']:.0f} flops", c["us_min"], c["us_median"], "µs per fast step"))
    for u in bench.get("ukf_vs_filterpy", []):
        for who, key in (("filterpy", "filterpy_us"), ("rths_ident wrapper", "wrapper_us"),
                         ("rths_ident ukf_scan", "scan_us")):
            out.append(Row(f"UKF {u['system']} ({u['n_steps']} steps): {who}", u[key], None, "µs per step"))
    if "opensees_ns" in bench:
        o = bench["opensees_ns"]
        for label, v in o.items():
            if isinstance(v, dict) and "step_s_min" in v:
                out.append(Row(f"OpenSeesPy RC frame (seed 000 Case 4), {label}", 1e3 * v["step_s_min"],
                               1e3 * v["step_s_median"], "ms per slow step"))
        if "loop" in o:
            out.append(Row("rc-frame step-wise loop, OpenSeesPy NS in process", None,
                           1e3 * o["loop"]["loop_step_s_median"], "ms per slow step"))
        if "tcp" in o:
            out.append(Row("OpenSeesPy NS over TCP (serve ns, loopback): round trip", None,
                           1e3 * o["tcp"]["round_trip_s_median"], "ms per slow step"))
            out.append(Row("rc-frame step-wise loop, OpenSeesPy NS over TCP", None,
                           1e3 * o["tcp"]["loop_step_s_median"], "ms per slow step"))
    if "calibrate" in bench:
        c = bench["calibrate"]
        out.append(Row(f"calibrate amb (PSO): {c['hybrid_tests']} SDOF tests of {c['duration_s']:g} s, whole study",
                       c["study_wall_s"], None, "s"))
        for kind, b in c.get("population_batch", {}).items():
            out.append(Row(f"calibrate: one population batch, {kind}", b["wall_s"], b["wall_median_s"], "s"))
    for c in bench.get("fit", {}).get("cases", []):
        label = f"fit --dataset {c['test']} --model {c['model']} ({bench['fit']['method']}, defaults)"
        out.append(Row(f"{label}, first call (compiles)", c["first_s"], None, "s"))
        out.append(Row(f"{label}, {c['repeats']} compiled repeats", c["wall_min_s"], c["wall_median_s"], "s"))
    return out


def machine_line(machine: dict[str, Any], note: str | None = None) -> str:
    """The machine as ``rths-ident bench`` prints it, and ``note``."""
    line = (f"Machine: {machine['cpu']}, {machine['cores']} cores; Python {machine['python']}, JAX {machine['jax']}, "
            f"jaxlib {machine['jaxlib']}, OpenSeesPy {machine['openseespy']}; XLA small-loop kernels "
            f"{'on' if machine['small_loop_kernels'] else 'OFF'}.")
    return f"{line} {note}" if note else line


def render(bench: dict[str, Any], note: str | None = None) -> str:
    """The markdown table of ``bench`` (a ``rths-ident bench --json`` file's contents)
    and its machine line."""
    lines = ["| figure | min | median | unit |", "|---|---:|---:|---|"]
    lines += [f"| {r.figure} | {number(r.low)} | {number(r.median)} | {r.unit} |" for r in rows(bench)]
    return "\n".join(lines) + "\n\n" + machine_line(bench["machine"], note) + "\n"


def replace_table(text: str, table: str) -> str:
    """``text`` with what lies between the marker lines replaced by ``table``."""
    if text.count(START) != 1 or text.count(END) != 1 or text.index(START) > text.index(END):
        raise ValueError(f"expected one '{START}' line followed by one '{END}' line")
    head, rest = text.split(START, 1)
    _, tail = rest.split(END, 1)
    return f"{head}{START}\n{table}{END}{tail}"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("bench_json", type=Path, help="what 'rths-ident bench --json' wrote")
    parser.add_argument("--doc", type=Path, default=DOC, help="the page to write into (default docs/performance.md)")
    parser.add_argument("--note", default=None, help="said after the machine line (the load, how the bench was run)")
    parser.add_argument("--print", action="store_true", help="print the table; change no file")
    args = parser.parse_args(argv)
    table = render(json.loads(args.bench_json.read_text(encoding="utf-8")), args.note)
    if args.print:
        sys.stdout.write(table)
        return 0
    args.doc.write_text(replace_table(args.doc.read_text(encoding="utf-8"), table), encoding="utf-8")
    print(f"table ({table.count(chr(10)) - 4} figures) → {args.doc}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
