"""The wheel and the sdist carry the whole package: every module and every shipped file
(datasets/data/**, scenarios/shipped/*.toml) of the source tree, as git tracks it.

The first test compares pyproject.toml's package-data globs with the tree (fast); the
second builds both with ``python -m build`` (what CI does) and lists their contents."""

from __future__ import annotations

import fnmatch
import subprocess
import sys
import tarfile
import tomllib
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = "rths_ident"


def _tracked_package_files() -> set[str]:
    """Paths relative to src/ (``rths_ident/…``) of the package's files in git."""
    listed = subprocess.run(["git", "ls-files", "-z", f"src/{PACKAGE}"], cwd=ROOT, capture_output=True, check=True)
    files = {name.removeprefix("src/") for name in listed.stdout.decode().split("\0") if name}
    assert files, "git lists no package files"
    return files


def _matches(glob: str, path: str) -> bool:
    """setuptools' package-data glob (``**`` any depth) against a path inside the package."""
    if "**" in glob:
        head, tail = glob.split("**", 1)
        return path.startswith(head) and fnmatch.fnmatch(path[len(head):].split("/")[-1], tail.lstrip("/") or "*")
    return fnmatch.fnmatch(path, glob) and path.count("/") == glob.count("/")


def test_package_data_globs_name_every_shipped_file():
    globs = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["package-data"][PACKAGE]
    data = {f.removeprefix(f"{PACKAGE}/") for f in _tracked_package_files() if not f.endswith(".py")}
    assert {"scenarios/shipped/lugre-frame.toml", "datasets/data/ground_motions/elcentro_1940/metadata.toml"} <= data
    unshipped = sorted(f for f in data if not any(_matches(g, f) for g in globs))
    assert not unshipped, f"files of the package that no package-data glob ships: {unshipped}"


@pytest.mark.slow
def test_built_wheel_and_sdist_hold_every_package_file(tmp_path):
    """``python -m build`` (an sdist, then the wheel built from it); needs the package
    index for its build environment."""
    result = subprocess.run([sys.executable, "-m", "build", "--outdir", str(tmp_path), str(ROOT)],
                            capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    (wheel,) = tmp_path.glob(f"{PACKAGE}-*.whl")
    (sdist,) = tmp_path.glob(f"{PACKAGE}-*.tar.gz")
    tracked = _tracked_package_files()
    in_wheel = {name for name in zipfile.ZipFile(wheel).namelist() if name.startswith(f"{PACKAGE}/")}
    assert in_wheel == tracked, (sorted(tracked - in_wheel), sorted(in_wheel - tracked))
    with tarfile.open(sdist) as archive:
        in_sdist = {name.split("/", 1)[1] for name in archive.getnames() if "/" in name}
    assert {f"src/{name}" for name in tracked} <= in_sdist, sorted({f"src/{n}" for n in tracked} - in_sdist)
    metadata = zipfile.ZipFile(wheel).read(f"{wheel.name.split('-')[0]}-{wheel.name.split('-')[1]}.dist-info/METADATA")
    requires = {line.split(":", 1)[1].split(";")[0].strip() for line in metadata.decode().splitlines()
                if line.startswith("Requires-Dist:") and "extra ==" not in line}
    for core in ("jax", "openseespy", "control", "numpyro", "arviz", "filterpy"):  # the core needs no extra
        assert any(r.startswith(core) for r in requires), (core, sorted(requires))
