"""Fixtures for the datasets tests."""

from __future__ import annotations

import importlib.resources
import pathlib
import shutil
import sys

import pytest

# Make _datasets_helpers importable under any pytest import mode (prepend/importlib).
_HERE = str(pathlib.Path(__file__).resolve().parent)
if _HERE not in sys.path:
    sys.path.insert(0, _HERE)


@pytest.fixture
def data_copy(tmp_path) -> pathlib.Path:
    """A writable copy of the package's data folder, for corrupting."""
    with importlib.resources.as_file(importlib.resources.files("rths_ident.datasets").joinpath("data")) as source:
        target = tmp_path / "data"
        shutil.copytree(source, target)
    for path in target.rglob("*"):
        path.chmod(0o755 if path.is_dir() else 0o644)
    return target
