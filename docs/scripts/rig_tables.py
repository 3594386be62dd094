"""The identification tables of docs/hybrid/rig_scenarios.md (seed 002).

    python docs/scripts/rig_tables.py [--write docs/hybrid/rig_scenarios.md] [--specimens 8]

1. **Seed 002's cases** (the paper comparison): ``rths-ident run rig-sdof|rig-bridge --case C
   --site emulator|direct --json OUT`` for the four cases the rig can run (free,
   parameter-change, forced; harmonic), each run's own side-by-side rows
   (``seed002_side_by_side``), its RMS error against the reference and, for the free
   vibration, its identification; seed 002's values beside ours. The emulator is built
   from seed 002's specimen, so these tables check the path, not the identification.
2. **Specimens the identification does not know**: M_e, C_e, K_e drawn at random (seeded;
   the ranges of tests/rigs/test_identification.py), behind the exact site (``direct``) and
   the emulated rig (``emulator``: ADC counts, dead band, noise); the identification sees
   the site only: the static K_e test, then the free vibration's least squares with K̂_e held
   and its log decrement. The fitted C_e is compared with C_e + M_e ω² Δt (the virtual
   specimen's ü is one Δt late: a closed form).

``--write FILE`` replaces the tables between ``<!-- rig-paper-CASE:begin/end -->`` (CASE =
free, parameter-change, forced, harmonic) and ``<!-- rig-recovery-table:begin/end -->``.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import tempfile
from pathlib import Path

from page_markers import print_or_write_tables  # docs/scripts/page_markers.py

import numpy as np

SITES = ("emulator", "direct")
DT = 0.01
SEED = 2024


#: (scenario, case) of the paper tables
CASES = (("rig-sdof", "free"), ("rig-sdof", "parameter-change"), ("rig-sdof", "forced"), ("rig-bridge", "harmonic"))


def run_paper_case(scenario: str, case: str, site: str, json_dir: Path) -> dict:
    from rths_ident import cli  # noqa: PLC0415

    path = Path(json_dir) / f"{scenario}_{case}_{site}.json"
    argv = ["run", scenario, "--case", case, "--site", site, "--json", str(path), "--quiet"]
    with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
        code = cli.main(argv)
    if code != 0:
        raise RuntimeError(f"rths-ident {' '.join(argv)} exited with {code}")
    return json.loads(path.read_text())


def _cell(value, unit: str) -> str:
    if value is None:
        return "—"
    if isinstance(value, str):
        return value
    if isinstance(value, (list, tuple)):  # (time s, displacement m)
        return f"{1e3 * value[1]:.3f} mm @ {value[0]:.2f} s"
    return f"{value:.4g}"


def _escaped(row: str) -> str:
    """A table row whose cells may hold |x| (absolute values): the cell pipes escaped."""
    cells = row.strip()[1:-1].split(" | ")
    return "| " + " | ".join(cell.strip().replace("|", "\\|") for cell in cells) + " |"


def paper_table(results: dict) -> str:
    """Seed 002's values ([T] stated in the thesis, [D] the digest's check) beside ours
    (``results``: site → the run's JSON)."""
    lines = ["| quantity | seed 002 | ours: reference | ours: hybrid, emulator | ours: hybrid, direct |",
             "|---|---|---|---|---|"]
    rows = {site: results[site]["seed002_side_by_side"] for site in SITES}
    for i, row in enumerate(rows["emulator"]):
        name, theirs, unit, tag, reference, hybrid = row
        direct = rows["direct"][i][5]
        lines.append(_escaped(f"| {name} | {f'{_cell(theirs, unit)} {tag}'.strip()} | {_cell(reference, unit)} "
                              f"| {_cell(hybrid, unit)} | {_cell(direct, unit)} |"))
    for dof in results["emulator"]["comparison"]:
        cells = []
        for site in SITES:
            c = results[site]["comparison"][dof]
            cells.append(f"{1e3 * c['rms_error_m']:.2f} mm ({c['rms_error_percent_of_peak']:.1f} % of peak)")
        lines.append(f"| RMS error of {dof} vs the reference | — (no metrics in the thesis) | — | {cells[0]} | {cells[1]} |")
    if "identification" in results["emulator"]:
        ident = {site: results[site]["identification"] for site in SITES}
        cells = [f"M_e {ident[s]['ls_m']:.3f} kg, C_e {ident[s]['ls_c']:.2f} N·s/m" for s in SITES]
        lines.append(f"| M_e, C_e (least squares, K_e = {ident['emulator']['K_e']:.0f} N/m held) | — | — "
                     f"| {cells[0]} | {cells[1]} |")
    return "\n".join(lines)


def recovery_rows(count: int) -> list[dict]:
    """The identification on ``count`` random specimens, both sites (module doc, item 2)."""
    from rths_ident.rigs.emulator import VirtualSpecimen  # noqa: PLC0415
    from rths_ident.rigs.identification import identify_on_site  # noqa: PLC0415

    rng = np.random.default_rng(SEED)  # the ranges and seed of tests/rigs/test_identification.py
    specimens = [VirtualSpecimen(mass=rng.uniform(0.1, 1.0), damping=rng.uniform(2.0, 12.0),
                                 stiffness=rng.uniform(800.0, 1600.0), test_dt=DT) for _ in range(count)]
    rows = []
    for index, specimen in enumerate(specimens):
        for site in SITES:
            k_hat, result = identify_on_site(site, DT, specimen=specimen, seed=index)
            omega = result.log_decrement.natural_frequency
            rows.append({"index": index + 1, "site": site, "M": specimen.mass, "C": specimen.damping,
                         "K": specimen.stiffness, "K_hat": k_hat, "C_lagged": specimen.damping + specimen.mass * omega**2 * DT,
                         "C_ls": result.least_squares["c"], "M_ls": result.least_squares["m"],
                         "M_logdec": result.log_decrement.specimen_mass, "M_sensitivity": result.mass_change_per_time_step,
                         "C_logdec": result.log_decrement.specimen_damping})
    return rows


def recovery_table(rows: list[dict]) -> str:
    lines = ["| specimen (drawn) M_e kg, C_e N·s/m, K_e N/m | site | K̂_e (static test), error | C_e by LS vs C_e + M_e ω²Δt "
             "| M_e by LS (K̂_e held), error | M_e by log decrement ± one Δt of T_d |", "|---|---|---|---|---|---|"]
    for r in rows:
        lines.append(
            f"| {r['index']}: {r['M']:.3f}, {r['C']:.2f}, {r['K']:.0f} | {r['site']} "
            f"| {r['K_hat']:.0f} ({100 * (r['K_hat'] / r['K'] - 1):+.2f} %) "
            f"| {r['C_ls']:.2f} vs {r['C_lagged']:.2f} ({100 * (r['C_ls'] / r['C_lagged'] - 1):+.1f} %) "
            f"| {r['M_ls']:.3f} ({r['M_ls'] - r['M']:+.3f} kg) | {r['M_logdec']:.2f} ± {r['M_sensitivity']:.2f} |")
    for site in SITES:
        mine = [r for r in rows if r["site"] == site]
        k = max(abs(r["K_hat"] / r["K"] - 1) for r in mine)
        c = max(abs(r["C_ls"] / r["C_lagged"] - 1) for r in mine)
        m = max(abs(r["M_ls"] - r["M"]) for r in mine)
        lines.append(f"| **largest error, {site}** | | {100 * k:.2f} % | {100 * c:.1f} % | {m:.3f} kg | |")
    return "\n".join(lines)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", type=Path, default=None)
    parser.add_argument("--specimens", type=int, default=8)
    args = parser.parse_args()
    tables = {}
    with tempfile.TemporaryDirectory() as scratch:
        for scenario, case in CASES:
            results = {site: run_paper_case(scenario, case, site, Path(scratch)) for site in SITES}
            tables[f"rig-paper-{case}"] = paper_table(results)
    tables["rig-recovery-table"] = recovery_table(recovery_rows(args.specimens))
    print_or_write_tables(tables, args.write)
