"""The options every command that has them takes the same way: the same name, value
and meaning (``run`` declares the same three as fields of its test file:
:func:`rths_ident.scenarios.fields.run_fields`).

* ``--json OUT.json`` — the results as JSON into this file (its folder must exist);
* ``--plots DIR`` — the figures into this folder (an existing one, or a new one whose
  parent exists: :mod:`rths_ident.output_paths`);
* ``--quiet`` — the report only: no phase lines, no progress bars on stderr.

All output paths are checked before any work (:mod:`rths_ident.output_paths`).
"""

from __future__ import annotations

import argparse

__all__ = ["add_json_option", "add_plots_option", "add_quiet_option", "JSON_METAVAR", "PLOTS_METAVAR"]

JSON_METAVAR = "OUT.json"
PLOTS_METAVAR = "DIR"


def add_json_option(parser, what: str) -> None:
    """``--json OUT.json``: ``what`` (e.g. "the metrics") written as JSON to this file."""
    parser.add_argument("--json", metavar=JSON_METAVAR, default=None,
                        help=f"write {what} to this file (JSON; its folder must exist)")


def add_plots_option(parser, what: str) -> None:
    """``--plots DIR``: ``what`` (e.g. "the figures") drawn into this folder."""
    parser.add_argument("--plots", metavar=PLOTS_METAVAR, default=None,
                        help=f"draw {what} into this folder (created if its parent exists)")


def add_quiet_option(parser: argparse.ArgumentParser | argparse._ArgumentGroup, dest: str = "quiet") -> None:
    """``--quiet``: the report only."""
    parser.add_argument("--quiet", dest=dest, action="store_true",
                        help="print the report only (no phase lines, no progress)")
