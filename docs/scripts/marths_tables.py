"""The J tables of docs/benchmarks/marths.md: all ten indices for every controller and record,
as ``rths-ident run marths --controller C --record all --json OUT`` prints them today.

    python docs/scripts/marths_tables.py [--write docs/benchmarks/marths.md] [--json-dir DIR]

Each controller (lqg, the paper's sample; damb, ours; ideal, a perfect transfer system)
runs the three records with the same 20 random plants (seed 123), El Centro, Kobe and
Morgan Hill × 0.4, paper convention; the table gives the mean over the uncertain plants
(``J_uncertain_mean``) beside the paper's experimental values where it prints them.
``--write FILE`` replaces the table between ``<!-- marths-j-table:begin -->`` and
``<!-- marths-j-table:end -->`` (and the realisability lines between the
``marths-realisability`` markers).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import tempfile
from pathlib import Path

from page_markers import print_or_write_tables  # docs/scripts/page_markers.py

CONTROLLERS = ("lqg", "damb", "ideal")
RECORDS = ("elcentro", "kobe", "morgan")
RECORD_NAMES = {"elcentro": "El Centro", "kobe": "Kobe", "morgan": "Morgan Hill"}
INDICES = {
    "J1": "delay η_m vs η_ns [ms] (act. 1 / 2)", "J2": "tracking NRMS [%] (act. 1 / 2)",
    "J3": "peak tracking [%] (act. 1 / 2)", "J4": "delay η̂_m vs η_ns [ms] (act. 1 / 2)",
    "J5": "estimation NRMS [%] (x4 / θ4)", "J6": "peak estimation [%] (x4 / θ4)",
    "J7": "global NRMS [%] (x4 / θ4)", "J8": "upper storeys NRMS [%] (x2 / θ2 / x3 / θ3)",
    "J9": "peak global [%] (x4 / θ4)", "J10": "peak upper storeys [%] (x2 / θ2 / x3 / θ3)",
}
#: the paper's experimental values (El Centro × 0.4, three tests averaged; §5.4): only these are printed
PAPER = {"J2": "23.8 / 13.2", "J5": "8.1 / 27.8", "J7": "12.2 / 26.2"}


def cli_arguments(controller: str, json_path) -> list[str]:
    return ["run", "marths", "--controller", controller, "--record", ",".join(RECORDS), "--scale", "0.4",
            "--uncertain", "20", "--json", str(json_path), "--quiet"]


def run_controller(controller: str, json_dir: Path, reuse: bool = False) -> dict:
    from rths_ident import cli  # noqa: PLC0415

    path = Path(json_dir) / f"marths_{controller}.json"
    if not (reuse and path.exists()):
        with contextlib.redirect_stdout(io.StringIO()):
            code = cli.main(cli_arguments(controller, path))
        if code != 0:
            raise RuntimeError(f"rths-ident {' '.join(cli_arguments(controller, path))} exited with {code}")
    return json.loads(path.read_text())


def _values(values) -> str:
    return " / ".join(f"{v:.1f}" for v in values)


def j_table(results: dict) -> str:
    """Rows J1–J10; a column per controller and record (``results``: controller → JSON)."""
    controllers = [c for c in CONTROLLERS if c in results]
    head = " | ".join(f"{c} {RECORD_NAMES[r]}" for c in controllers for r in RECORDS)
    lines = [f"| index | paper (lab, El Centro) | {head} |", "|---|---|" + "---|" * (len(controllers) * len(RECORDS))]
    for name, meaning in INDICES.items():
        cells = [_values(results[c]["by_record"][r]["J_uncertain_mean"][name]) for c in controllers for r in RECORDS]
        lines.append(f"| {name} {meaning} | {PAPER.get(name, '—')} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def realisability_lines(results: dict) -> str:
    """Per controller and record: the largest peak over the runs and actuators of each
    limited quantity against its limit (the JSON's ``realisability``, one report per run)."""
    lines = []
    for c in CONTROLLERS:
        if c not in results:
            continue
        for r in RECORDS:
            reports = results[c]["by_record"][r]["realisability"]
            parts = []
            for key, (name, scale, unit) in QUANTITIES.items():
                peak = max(max(abs(v) for v in run[key]["peak"]) for run in reports)
                limit = reports[0][key]["limit"]
                exceeded = sum(not run[key]["within"] for run in reports)
                parts.append(f"{name} {peak * scale:.3g} {unit} (limit {limit * scale:g}; exceeded in {exceeded} of "
                             f"{len(reports)} runs)")
            lines.append(f"- {c}, {RECORD_NAMES[r]}: " + "; ".join(parts))
    return "\n".join(lines)


#: realisability quantities: JSON key → (name, scale to the printed unit, unit)
QUANTITIES = {"command_v": ("command", 1.0, "V"), "force_n": ("force", 1e-3, "kN"),
              "velocity_m_s": ("velocity", 1e3, "mm/s"), "stroke_m": ("stroke", 1e3, "mm")}


if __name__ == "__main__":
    import rths_ident

    rths_ident.configure()  # before any JAX computation, as the command line
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", type=Path, default=None)
    parser.add_argument("--json-dir", type=Path, default=None)
    parser.add_argument("--reuse-json", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        json_dir = args.json_dir or Path(scratch)
        json_dir.mkdir(parents=True, exist_ok=True)
        results = {c: run_controller(c, json_dir, args.reuse_json) for c in CONTROLLERS}
    tables = {"marths-j-table": j_table(results), "marths-realisability": realisability_lines(results)}
    print_or_write_tables(tables, args.write)
