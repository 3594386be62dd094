"""The example of docs/benchmarks/marths.md runs and prints what its comments say."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

DOC = Path(__file__).resolve().parents[3] / "docs" / "benchmarks" / "marths.md"


@pytest.mark.skipif(not DOC.is_file(), reason="docs/ is not next to the tests")
def test_docs_example_runs(capsys):
    block = re.findall(r"```python\n(.*?)```", DOC.read_text(), flags=re.S)[0]
    namespace: dict = {}
    exec(compile(block, str(DOC), "exec"), namespace)  # noqa: S102
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "[2.29, 12.75, 26.28, 26.54, 29.91]"
    assert out[1] == "[[0.864, 0.131], [0.14, 0.926]]"
    assert abs(float(namespace["x"]) - 2e-3) < 1e-15 and abs(float(namespace["theta"]) + 5e-3) < 1e-15
