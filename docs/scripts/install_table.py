"""The table of docs/install.md: every command against each install, from the outcomes
the install smoke keeps.

    SMOKE_FULL=1 SMOKE_OUTCOMES=DIR bash scripts/smoke_install.sh
    python docs/scripts/install_table.py DIR [--write docs/install.md]

DIR holds ``core.json``, ``cluster.json`` and (where the smoke could hide the system
BLAS/LAPACK) ``core-without-blas.json``, written by ``scripts/smoke_commands.py
--outcomes``. The smoke runs every case in the core, and in the other installs only the
cases whose expected outcome differs from the core's (``--only-differing``); their other
cells read "= core". A cell is "works" (exit 0) or the one line the command printed
(after ``rths-ident: error: ``, exit 1); a case that did not give what the smoke expects
reads "NOT AS EXPECTED: …". Timings are left out (they go to the CHANGELOG).

``--write FILE`` replaces the table between ``<!-- install-table:begin -->`` and
``<!-- install-table:end -->``; without it the table is printed.
"""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path

#: (file stem, column heading), in the table's order
COLUMNS = (("core", "core (the wheel alone)"),
           ("core-without-blas", "core, Linux without `libblas3`/`liblapack3`"),
           ("cluster", "core + `cluster` (= `all`)"))
SAME = "= core"
BEGIN, END = "<!-- install-table:begin -->", "<!-- install-table:end -->"


def _cell(outcome: dict) -> str:
    got = outcome["got"]
    text = got if got == "works" or got.startswith("not run") else f"`{got}`"
    return text if outcome["ok"] else f"NOT AS EXPECTED: {text} (expected `{outcome['expected']}`)"


def table(folder: Path) -> str:
    """The Markdown table of the outcomes in ``folder``."""
    installs = {}
    for stem, _ in COLUMNS:
        path = folder / f"{stem}.json"
        if path.exists():
            installs[stem] = {o["case"]: o for o in json.loads(path.read_text(encoding="utf-8"))["outcomes"]}
    if "core" not in installs:
        raise SystemExit(f"{folder}: no core.json (run SMOKE_OUTCOMES={folder} bash scripts/smoke_install.sh)")
    columns = [(stem, heading) for stem, heading in COLUMNS if stem in installs]
    lines = ["| command | " + " | ".join(heading for _, heading in columns) + " |",
             "|---" * (len(columns) + 1) + "|"]
    for case, core in installs["core"].items():
        cells = [_cell(core)] + [_cell(installs[stem][case]) if case in installs[stem] else SAME
                                 for stem, _ in columns[1:]]
        lines.append(f"| {case} | " + " | ".join(cell.replace("|", "\\|") for cell in cells) + " |")
    return "\n".join(lines) + "\n"


def write_into(page: Path, text: str) -> None:
    content = page.read_text(encoding="utf-8")
    pattern = re.compile(re.escape(BEGIN) + r"\n.*?" + re.escape(END), flags=re.S)
    if not pattern.search(content):
        raise SystemExit(f"{page}: no {BEGIN} … {END}")
    page.write_text(pattern.sub(lambda _: f"{BEGIN}\n{text}{END}", content), encoding="utf-8")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folder", type=Path, help="the smoke's outcomes (SMOKE_OUTCOMES)")
    parser.add_argument("--write", type=Path, default=None, help="the page whose table to replace")
    args = parser.parse_args()
    text = table(args.folder)
    if args.write is None:
        print(text, end="")
    else:
        write_into(args.write, text)
        print(f"table → {args.write}")


if __name__ == "__main__":
    main()
