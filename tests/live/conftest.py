"""What the live page's tests share: a command with ``--live`` in its own process."""

import functools
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

SRC = str(Path(__file__).resolve().parents[2] / "src")


def _start(popen, args: list[str], cwd: Path) -> tuple[subprocess.Popen, str]:
    """``rths-ident ARGS`` in its own process (``popen``: the ``pressable`` fixture, so
    Ctrl-C reaches it); returns it and the live page's address."""
    env = {**os.environ, "PYTHONPATH": SRC + os.pathsep + os.environ.get("PYTHONPATH", "")}
    process = popen([sys.executable, "-m", "rths_ident.cli", *args], cwd=cwd, env=env, stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE, text=True)
    lines = []
    for line in process.stderr:
        lines.append(line)
        match = re.search(r"live page → (http://\S+/)", line)
        if match:
            return process, match.group(1)
    raise AssertionError("no live page address printed:\n" + "".join(lines))


@pytest.fixture(scope="session")
def start_live(pressable):
    """``start_live(ARGS, cwd)``: ``rths-ident ARGS`` in its own process, and the live page's address."""
    return functools.partial(_start, pressable)
