"""The README's examples run as written: the research script identifies the column and
prints the true values beside the estimates; the `fit` line on the sample log runs."""

import re
import shlex
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"


@pytest.mark.slow
def test_readme_python_example_runs(capsys):
    text = README.read_text()
    blocks = re.findall(r"```python\n(.*?)```", text, flags=re.S)
    assert blocks, "README has no python example"
    namespace: dict = {}
    exec(compile(blocks[0], "README.md", "exec"), namespace)  # noqa: S102
    estimate = namespace["identifier"].params_estimate
    true = namespace["column"].params
    for name in ("sigma0", "Fc", "sigma3"):
        assert float(getattr(estimate, name)) == pytest.approx(float(getattr(true, name)), rel=0.01)
    out = capsys.readouterr().out
    assert "converged: True" in out
    for name in ("sigma0", "Fc", "sigma3"):  # true beside estimate, from the numbers themselves
        true_text, found_text = (re.escape(f"{float(getattr(c, name)):.6g}") for c in (true, estimate))
        assert re.search(rf"^{name}\s+true\s+{true_text}\s+estimate\s+{found_text}", out, flags=re.M), out
    assert "Array(" not in out and "np.float64" not in out
    # the README shows what it prints (the same lines)
    shown = re.search(r"prints\n\n```\n(.*?)```", text, flags=re.S).group(1)
    assert shown.strip() == out.strip()


def test_readme_fit_line_runs_as_written(monkeypatch, capsys):
    from rths_ident.cli import main

    lines = [line.split("#")[0].strip() for line in README.read_text().splitlines()
             if line.startswith("rths-ident fit examples/")]
    assert lines, "README lost its fit line on the sample log"
    monkeypatch.chdir(ROOT)  # as a user runs it, from the repository root
    argv = shlex.split(lines[0])[1:]
    assert main(argv) == 0
    out = capsys.readouterr().out
    # the sample was made from k = 2 kN/mm, f_y = 30 kN, b = 5 % (examples/data/make_my_test.py)
    values = {name: float(v) for name, v in re.findall(r"^\s+(k|fy|b)\s+(\S+)", out, flags=re.M)}
    assert values["k"] == pytest.approx(2.0e6, rel=0.01)
    assert values["fy"] == pytest.approx(30e3, rel=0.01)
    assert values["b"] == pytest.approx(0.05, rel=0.03)


@pytest.mark.slow
def test_readme_api_example_runs_as_its_comments_say(tmp_path, monkeypatch):
    import rths_ident

    blocks = re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)
    assert len(blocks) >= 2, "README lost its Python API example"
    monkeypatch.chdir(tmp_path)  # it writes my_frame.toml where it runs
    namespace: dict = {}
    exec(compile(blocks[1], "README.md", "exec"), namespace)  # noqa: S102
    result = namespace["result"]
    assert result.complete and result.stopped is None
    assert result.metrics["compensation"] == "amb"  # with_changes(compensation={"kind": "amb"})
    assert result.metrics["sim_duration_s"] == pytest.approx(2.0, abs=0.02)  # record={"duration": 2.0}
    assert 0.0 < result.metrics["J2_percent"] < 100.0
    saved = rths_ident.load_test(tmp_path / "my_frame.toml")  # the saved file is the same test
    assert saved.kind_name == "shear-frame" and saved.config == namespace["own"].config
