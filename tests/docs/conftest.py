"""The docs scripts import their shared helper (docs/scripts/page_markers.py) as a
script run from docs/scripts does: its folder on the import path."""

import sys
from pathlib import Path

SCRIPTS = str(Path(__file__).resolve().parents[2] / "docs" / "scripts")
if SCRIPTS not in sys.path:
    sys.path.insert(0, SCRIPTS)
