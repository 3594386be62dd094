"""The table of rates of docs/hybrid/realtime.md, written from what
``rths-ident bench --only realtime --slow-rates … --json`` kept.

    rths-ident bench --only realtime --slow-rates 50 256 512 1024 --repeats 10 --json rt.json
    python docs/scripts/realtime_table.py rt.json --note "quiet machine"

replaces what lies between ``<!-- realtime-rates:begin -->`` and
``<!-- realtime-rates:end -->`` of docs/hybrid/realtime.md (``--doc`` for another page,
``--print`` to print the table instead). One row per case (substructure), one column per
slow rate, the host alone (an empty step paced the same way: what no loop can beat on
this machine) first; a cell is the latency per slow step (median / p99, µs), the missed
deadlines after the start-up of each run, and how many runs had none; over TCP also the
wire's own p99 round trip. Under the table: the machine, the load average the bench saw before and
after its runs, the runs' length, and ``--note``.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from page_markers import replace_between_markers

MARKERS = "realtime-rates"
#: the case that paces an empty step (rths_ident.speed.realtime_loop.HOST_ALONE): the table's first row
HOST_ALONE = "host alone (empty step)"
DOC = Path(__file__).resolve().parents[1] / "hybrid" / "realtime.md"


def cell(figures: dict) -> str:
    """One case at one rate (module doc)."""
    if "skipped" in figures:
        return f"skipped ({figures['skipped']})"
    latency = figures["latency_us"]
    runs = figures["runs"]
    missed = ", ".join(f"{run['missed_after_startup']}" + (" (stopped)" if "stopped" in run else "") for run in runs)
    text = (f"{latency['median']:.0f} / {latency['p99']:.0f}; missed {missed} "
            f"({figures['runs_without_a_miss_after_startup']} of {len(runs)} clean)")
    if "wire_us" in figures:
        text += f"; wire p99 {figures['wire_us']['p99']:.0f}"
    return text


def render(bench: dict, note: str | None = None) -> str:
    """The table and its lines underneath from a bench JSON."""
    realtime = bench.get("realtime_loop") or {}
    table = realtime.get("by_slow_rate")
    if not table:
        raise ValueError("the bench JSON has no realtime_loop.by_slow_rate: run 'rths-ident bench --only realtime "
                         "--slow-rates 50 256 512 1024 --json FILE'")
    rates = list(dict.fromkeys(rate for by_rate in table.values() for rate in by_rate))
    fast = {rate: figures["fast_rate_hz"] for by_rate in table.values() for rate, figures in by_rate.items()
            if "fast_rate_hz" in figures}
    head = "| substructure | " + " | ".join(f"{rate}/{fast.get(rate, 0):g} Hz" for rate in rates) + " |"
    lines = [head, "|---|" + "---|" * len(rates)]
    cases = sorted(table, key=lambda case: case != HOST_ALONE)  # the host alone first: the floor of every row
    for case in cases:
        by_rate = table[case]
        lines.append(f"| {case} | " + " | ".join(cell(by_rate[rate]) if rate in by_rate else "—" for rate in rates)
                     + " |")
    m = bench.get("machine") or {}
    load = realtime.get("load_average") or {}
    where = (f"Machine: {m.get('cpu', '?')}, {m.get('cores', '?')} cores; Python {m.get('python', '?')}, "
             f"JAX {m.get('jax', '?')}, OpenSeesPy {m.get('openseespy', '?')}.")
    if load:
        where += (f" Load average (1 min) {load['before'][0]:.1f} before the bench's runs, "
                  f"{load['after'][0]:.1f} after.")
    where += (f" Each run: {realtime.get('padding_s', '?'):g} s of start-up (zero ground motion) and "
              f"{realtime.get('duration_s', '?'):g} s of El Centro. Latency in µs.")
    if note:
        where += f" {note}"
    return "\n".join(lines + ["", where])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("bench_json", type=Path, help="what 'rths-ident bench --only realtime --slow-rates … --json' "
                        "wrote")
    parser.add_argument("--doc", type=Path, default=DOC,
                        help="the page to write into (default docs/hybrid/realtime.md)")
    parser.add_argument("--note", default=None, help="said after the machine line (how the bench was run)")
    parser.add_argument("--print", action="store_true", help="print the table; change no file")
    args = parser.parse_args(argv)
    try:
        table = render(json.loads(args.bench_json.read_text(encoding="utf-8")), args.note)
    except (OSError, ValueError) as error:
        print(f"realtime_table: {error}", file=sys.stderr)
        return 2
    if args.print:
        print(table)
        return 0
    args.doc.write_text(replace_between_markers(args.doc.read_text(encoding="utf-8"), MARKERS, table),
                        encoding="utf-8")
    print(f"table of rates → {args.doc}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
