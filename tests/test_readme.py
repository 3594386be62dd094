"""The README's research-script example runs and identifies the column."""

import re
from pathlib import Path

import pytest

README = Path(__file__).resolve().parents[1] / "README.md"


@pytest.mark.slow
def test_readme_python_example_runs(capsys):
    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)
    assert blocks, "README has no python example"
    namespace: dict = {}
    exec(compile(blocks[0], "README.md", "exec"), namespace)  # noqa: S102
    estimate = namespace["identifier"].params_estimate
    true = namespace["column"].params
    for name in ("sigma0", "Fc", "sigma3"):
        assert float(getattr(estimate, name)) == pytest.approx(float(getattr(true, name)), rel=0.01)
    assert "converged: True" in capsys.readouterr().out
