"""The examples of docs/datasets.md run, and the docstring examples of the datasets
modules pass (doctest)."""

from __future__ import annotations

import doctest
import importlib
import pathlib
import re

import pytest

DOCS = pathlib.Path(__file__).resolve().parents[2] / "docs" / "datasets.md"

MODULES = [
    "rths_ident.datasets.ground_motions",
    "rths_ident.datasets.hysteresis",
    "rths_ident.datasets.logged",
    "rths_ident.datasets.marths",
    "rths_ident.datasets.registry",
]


def _python_blocks() -> list[str]:
    if not DOCS.is_file():
        return []
    return re.findall(r"```python\n(.*?)```", DOCS.read_text(), flags=re.DOTALL)


@pytest.mark.skipif(not DOCS.is_file(), reason="docs/ is not next to the tests")
@pytest.mark.parametrize("index", range(len(_python_blocks())))
def test_docs_example_runs(index, capsys, monkeypatch):
    monkeypatch.chdir(DOCS.parents[1])  # the examples name files from the repository root
    block = _python_blocks()[index]
    exec(compile(block, f"{DOCS}:block{index}", "exec"), {})  # noqa: S102 - our own docs
    printed = capsys.readouterr().out
    # where a line of the example says what it prints ("# 1560 0.02 ..."), the printed
    # line must contain those numbers in that order (to 5 significant digits) and words
    expected = [c.split("...")[0] for c in re.findall(r"print\(.*\)\s+#\s*(.*)", block)]
    lines = printed.splitlines()[-len(expected):] if expected else []
    assert len(lines) == len(expected)
    number = r"[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?"
    for line, comment in zip(lines, expected):
        wanted = [float(x) for x in re.findall(number, comment)]
        got = [float(x) for x in re.findall(number, line)][: len(wanted)]
        assert got == pytest.approx(wanted, rel=1e-5), (line, comment)
        for word in re.findall(r"[A-Za-z]{3,}", comment):
            assert word in line, (word, line)

def test_docs_have_examples():
    if DOCS.is_file():
        assert len(_python_blocks()) >= 4


@pytest.mark.parametrize("module_name", MODULES)
def test_docstring_examples(module_name):
    module = importlib.import_module(module_name)
    failures, _ = doctest.testmod(module, optionflags=doctest.NORMALIZE_WHITESPACE)
    assert failures == 0
