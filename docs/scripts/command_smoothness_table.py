"""The command a servo-valve receives, per shipped frame test and compensator, with the
rate transition as the sources draw it (``continuity = 0``), continuous across slow
steps to the curvature (``continuity = 2``, dAMB's default) and to the jerk
(``continuity = 3``, AMB's and the polynomial's): the tables of docs/hybrid/smooth_commands.md.

    python docs/scripts/command_smoothness_table.py [--tests lugre-frame,bw-frame,rc-frame]
        [--compensators damb,amb,polynomial,none] [--continuities 0,2,3] [--duration S] [--out smooth.json]
        [--write docs/hybrid/smooth_commands.md] [--substructures] [--from smooth.json]

Each run is the shipped test file with only ``compensation.kind`` and
``transition.continuity`` changed, run by the fused engine with the interlocks off (what
the command would be, not where a limit would stop it). Per run
(:func:`rths_ident.runner.results.command_metrics`, :func:`rths_ident.metrics.command_smoothness`):
the command's peak over the NS target's peak, its largest jump per fast step over the
largest the target makes per fast step (the NS target drawn straight between its slow
samples), and the tracking J2 (:func:`rths_ident.metrics.j2_tracking_error`, x_t against
x_m at the fast rate).

``--substructures`` adds rc-frame's J2 per numerical substructure (native linear, OpenSeesPy
linear and nonlinear; step-wise for OpenSeesPy), before and after, beside seed 000's
Table 4.8 / 4.10 values.

``--bands TEST:COMPENSATOR`` adds where that test's J2 lies in frequency, per continuity
(0, 1, 2, 3): the share of x_t's energy in 25–60 Hz (above the slow rate's Nyquist
frequency: none of it is the NS's) and J2's part from below 25 Hz and from 25–60 Hz
(J2² splits over the bands: Parseval).

``--from JSON`` writes the tables of an earlier ``--out`` JSON without running anything
(its machine line kept). ``--write FILE`` replaces the tables between ``<!-- smooth-TABLE:begin -->`` and
``<!-- smooth-TABLE:end -->`` (TABLE = commands, substructures); without it they are printed.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import time
from pathlib import Path

import numpy as np

import rths_ident

rths_ident.configure()  # before any JAX computation: XLA's small-loop kernels, as the command line

from rths_ident import metrics  # noqa: E402
from rths_ident.hybrid.loop.assembled import run_loop  # noqa: E402
from rths_ident.hybrid.loop.engine import LoopAborted  # noqa: E402
from rths_ident.runner.results import command_metrics  # noqa: E402

#: the band where the tracking error lies [Hz] (above the slow rate's Nyquist frequency)
ERROR_BAND_HZ = (25.0, 60.0)


def j2_bands(target, measured, fast_rate: float) -> dict:
    """J2 [%] split by frequency (Parseval: the squares add): its part below 25 Hz, in
    25–60 Hz and above 60 Hz, the share of x_t's energy in 25–60 Hz, and the rms of the
    error over the rms of x_t in that band."""
    target, measured = np.ravel(target), np.ravel(measured)
    error = np.abs(np.fft.rfft(target - measured)) ** 2
    signal = np.abs(np.fft.rfft(target)) ** 2
    frequency = np.fft.rfftfreq(target.size, 1.0 / fast_rate)
    low, high = ERROR_BAND_HZ
    total = float(metrics.j2_tracking_error(target, measured))
    parts = {name: total * float(np.sqrt(error[mask].sum() / error.sum())) for name, mask in
             (("below", frequency < low), ("band", (frequency >= low) & (frequency < high)), ("above", frequency >= high))}
    band = (frequency >= low) & (frequency < high)
    return {"j2_percent": total, "j2_below_25hz": parts["below"], "j2_25_60hz": parts["band"],
            "j2_above_60hz": parts["above"], "target_energy_25_60hz": float(signal[band].sum() / signal.sum()),
            "band_error_to_target": float(np.sqrt(error[band].sum() / signal[band].sum()))}


#: seed 000's J2 [%] of rc-frame Case 4 (fixed W): Table 4.8 (linear NS), Table 4.10 (OpenSees nonlinear, α-OS)
THESIS_J2 = {"native linear": 1.2884, "opensees linear": 1.2884, "opensees nonlinear": 2.3612}
SUBSTRUCTURES = {"native linear": {"backend": "native"},
                 "opensees linear": {"backend": "opensees", "model": "linear"},
                 "opensees nonlinear": {"backend": "opensees", "model": "nonlinear"}}


def one_run(name: str, compensator: str | None, continuity: int, duration: float | None,
            substructure: dict | None = None) -> dict:
    """One run of shipped test ``name`` with the changes; its command metrics and J2."""
    changes = {"transition": {"continuity": continuity}}
    if compensator is not None:
        changes["compensation"] = {"kind": compensator}
    if duration is not None:
        changes["record"] = {"duration": duration}
    if substructure is not None:
        changes["substructure"] = substructure
    test = rths_ident.load_test(name).with_changes(**changes)
    cfg = test.config
    hybrid = test.kind.module.build(cfg)
    engine = "stepwise" if getattr(cfg, "ns", "native") != "native" else "fused"
    start = time.perf_counter()
    stopped = None
    try:
        logs, _ = run_loop(hybrid, engine, variant=cfg.variant, interlocks=False)
    except LoopAborted as aborted:  # the actuator model's own limit (the interlocks are off)
        logs, stopped = aborted.logs, str(aborted).split(". ")[0]
    fast = logs["fast"]
    row = {"test": name, "transition": cfg.transition, "compensator": cfg.compensation, "continuity": continuity,
           "engine": engine, "j2_percent": float(metrics.j2_tracking_error(np.ravel(fast["target"]),
                                                                           np.ravel(fast["measured"]))),
           "wall_s": time.perf_counter() - start, "stopped": stopped}
    row.update(command_metrics(logs))
    row.update({f"bands_{k}": v for k, v in j2_bands(fast["target"], fast["measured"], cfg.fast_rate).items()})
    return row


def commands_table(rows: list[dict]) -> str:
    """One line per test and compensator; per continuity the runs have (0, 2, 3): peak
    ratio, largest jump ratio, x_t's own jump ratio and J2 (— where a continuity was not run)."""
    orders = sorted({r["continuity"] for r in rows})
    by_key = {(r["test"], r["compensator"], r["continuity"]): r for r in rows}
    heads = [f"{name} ({order})" for name in ("peak ratio", "largest jump ratio", "x_t's own jump ratio", "J2 %")
             for order in orders]
    lines = ["| test | transition | compensator | " + " | ".join(heads) + " |", "|---" * (3 + len(heads)) + "|"]
    formats = {"command_peak_ratio": "{:.3f}", "command_jump_ratio": "{:.4g}", "target_jump_ratio": "{:.3g}",
               "j2_percent": "{:.3f}"}
    for test, compensator in dict.fromkeys((r["test"], r["compensator"]) for r in rows):
        runs = [by_key.get((test, compensator, order)) for order in orders]
        cells = [("—" if run is None else form.format(run[key])) for key, form in formats.items() for run in runs]
        transition = next(run["transition"] for run in runs if run is not None)
        lines.append(f"| {test} | {transition} | {compensator} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def substructures_table(rows: list[dict]) -> str:
    lines = ["| rc-frame NS | J2 % (0) | J2 % (2) | seed 000 J2 % (Table 4.8 / 4.10) | peak ratio (2) "
             "| largest jump ratio (2) |", "|---|---|---|---|---|---|"]
    for label in SUBSTRUCTURES:
        pair = {r["continuity"]: r for r in rows if r.get("substructure") == label}
        if 0 not in pair or 2 not in pair:
            continue
        def j2(row):
            if not row.get("stopped"):
                return f"{row['j2_percent']:.3f}"
            found = re.search(r"stopped: (.*?) in slow step \d+ \(t = ([\d.]+) s\)", row["stopped"])
            return f"stopped: {found.group(1)} at t = {found.group(2)} s" if found else row["stopped"]

        lines.append(f"| {label} | {j2(pair[0])} | {j2(pair[2])} | "
                     f"{THESIS_J2[label]:.4g} | {pair[2]['command_peak_ratio']:.3f} "
                     f"| {pair[2]['command_jump_ratio']:.4g} |")
    return "\n".join(lines)


def bands_table(rows: list[dict]) -> str:
    lines = ["| test | compensator | continuity | J2 % | J2's part below 25 Hz | J2's part in 25–60 Hz | x_t's energy "
             "in 25–60 Hz (fraction) | rms error / rms x_t in 25–60 Hz | largest jump ratio |",
             "|---|---|---|---|---|---|---|---|---|"]
    for r in sorted(rows, key=lambda r: r["continuity"]):
        lines.append(f"| {r['test']} | {r['compensator']} | {r['continuity']} | {r['bands_j2_percent']:.3f} "
                     f"| {r['bands_j2_below_25hz']:.3f} | {r['bands_j2_25_60hz']:.3f} "
                     f"| {r['bands_target_energy_25_60hz']:.2e} | {r['bands_band_error_to_target']:.2f} "
                     f"| {r['command_jump_ratio']:.3g} |")
    return "\n".join(lines)


def machine() -> str:
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    return (f"{platform.machine()}, {os.cpu_count()} cores, load {load:.1f} when the tables were written, "
            f"{time.strftime('%Y-%m-%d', time.gmtime())}")


def write_between(path: Path, table: str, body: str) -> None:
    text = path.read_text(encoding="utf-8")
    begin, end = f"<!-- smooth-{table}:begin -->", f"<!-- smooth-{table}:end -->"
    pattern = re.compile(re.escape(begin) + ".*?" + re.escape(end), re.S)
    if not pattern.search(text):
        raise SystemExit(f"{path}: no {begin} … {end} markers")
    path.write_text(pattern.sub(lambda _: f"{begin}\n{body}\n{end}", text), encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tests", default="lugre-frame,bw-frame,rc-frame")
    parser.add_argument("--compensators", default="damb,amb,polynomial,none")
    parser.add_argument("--continuities", default="0,2,3", help="transition.continuity values to run")
    parser.add_argument("--duration", type=float, default=None, help="seconds of each record (default: all)")
    parser.add_argument("--out", default=None, help="JSON of every run")
    parser.add_argument("--write", default=None, help="the markdown page whose tables are replaced")
    parser.add_argument("--substructures", action="store_true", help="rc-frame's J2 per NS (OpenSeesPy: slow)")
    parser.add_argument("--bands", default=None, help="TEST:COMPENSATOR: J2 by band per continuity 0–3")
    parser.add_argument("--from", dest="source", default=None, help="the --out JSON of an earlier run: no runs")
    args = parser.parse_args()
    if args.bands:
        test, compensator = args.bands.split(":")
        band_rows = [one_run(test, compensator, continuity, args.duration) for continuity in (0, 1, 2, 3)]
        body = bands_table(band_rows) + f"\n\n({machine()}.)"
        if args.out:
            Path(args.out).write_text(json.dumps({"machine": machine(), "bands": band_rows}, indent=1))
        if args.write:
            write_between(Path(args.write), "bands", body)
        else:
            print(body)
        return
    if args.source:
        saved = json.loads(Path(args.source).read_text())
        runs, where = saved["runs"], saved["machine"]
        write_tables([r for r in runs if "substructure" not in r], [r for r in runs if "substructure" in r], where,
                     args.write)
        return
    rows = []
    for name in filter(None, args.tests.split(",")):
        for compensator in args.compensators.split(","):
            for continuity in map(int, args.continuities.split(",")):
                rows.append(one_run(name, compensator, continuity, args.duration))
                print(json.dumps(rows[-1]), flush=True)
    sub_rows = []
    if args.substructures:
        for label, substructure in SUBSTRUCTURES.items():
            for continuity in (0, 2):
                row = one_run("rc-frame", None, continuity, args.duration, substructure)
                row["substructure"] = label
                sub_rows.append(row)
                print(json.dumps(row), flush=True)
    where = machine()
    if args.out:
        Path(args.out).write_text(json.dumps({"machine": where, "runs": rows + sub_rows}, indent=1))
    write_tables(rows, sub_rows, where, args.write)


def write_tables(rows: list[dict], sub_rows: list[dict], where: str, page: str | None) -> None:
    """The tables of ``rows`` (and ``sub_rows``) into ``page`` between their markers, or printed."""
    tables = {"commands": commands_table(rows) + f"\n\n({where}.)"} if rows else {}
    if sub_rows:
        tables["substructures"] = substructures_table(sub_rows) + f"\n\n({where}.)"
    for table, body in tables.items():
        if page:
            write_between(Path(page), table, body)
        else:
            print(body)


if __name__ == "__main__":
    main()
