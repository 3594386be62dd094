"""The package's floors and circles (ARCHITECTURE.md "Layers"), checked with import-linter
against the contracts in pyproject.toml: arrows point down only, and no two packages or
files at one level import each other. A small package with a circle shows the same
contract types catch one."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
SRC = ROOT / "src" / "rths_ident"

pytest.importorskip("importlinter")


def _lint(config: Path, cwd: Path, extra_path: Path) -> subprocess.CompletedProcess:
    code = ("import sys; from importlinter.cli import lint_imports; "
            f"sys.exit(lint_imports(config_filename={str(config)!r}, no_cache=True, no_logo=True))")
    env_path = f"{extra_path}"
    return subprocess.run([sys.executable, "-c", code], cwd=cwd, capture_output=True, text=True, timeout=300,
                          env={"PYTHONPATH": env_path, "PATH": "/usr/bin:/bin"})


def test_the_package_keeps_its_import_contracts():
    result = _lint(ROOT / "pyproject.toml", ROOT, SRC.parent)
    assert result.returncode == 0, result.stdout[-4000:] + result.stderr[-2000:]
    assert "3 kept, 0 broken" in result.stdout


def test_a_file_circle_and_an_upward_arrow_break_the_same_contract_types(tmp_path):
    pkg = tmp_path / "circled"
    (pkg / "low").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "low" / "__init__.py").write_text("")
    (pkg / "low" / "a.py").write_text("from circled.low import b\n")
    (pkg / "low" / "b.py").write_text("from circled.low import a\n")
    (pkg / "high.py").write_text("")
    (pkg / "low" / "up.py").write_text("import circled.high\n")
    config = tmp_path / "contracts.toml"
    config.write_text(textwrap.dedent("""
        [tool.importlinter]
        root_package = "circled"

        [[tool.importlinter.contracts]]
        name = "layers"
        type = "layers"
        layers = ["circled.high", "circled.low"]

        [[tool.importlinter.contracts]]
        name = "no circles"
        type = "acyclic_siblings"
        ancestors = ["circled"]
    """))
    result = _lint(config, tmp_path, tmp_path)
    assert result.returncode != 0
    assert "0 kept, 2 broken" in result.stdout


def test_no_product_module_is_named_like_a_test():
    named = [p.relative_to(SRC).as_posix() for p in SRC.rglob("*.py")
             if p.name.startswith("test_") or p.stem.endswith("_test")]
    assert named == []
