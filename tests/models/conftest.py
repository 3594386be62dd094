"""Make ``_models_helpers`` importable under any pytest import mode (prepend/importlib)."""

from __future__ import annotations

import pathlib
import sys

_HERE = str(pathlib.Path(__file__).resolve().parent)
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)
