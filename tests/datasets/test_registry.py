"""The registry of shipped datasets, and that the data are part of the package."""

from __future__ import annotations

import pathlib
import shutil
import subprocess
import sys
import textwrap

import pytest
from _datasets_helpers import SHARED_DATA, packaged

from rths_ident.errors import ParameterError
from rths_ident.errors import DataFileError, UnknownDatasetError
from rths_ident.datasets import get_dataset, list_datasets

EXPECTED = {
    # name: (kind, shape)
    "elcentro_1940": ("ground_motion", (1560,)),
    "elcentro_1940_marths": ("ground_motion", (2060,)),
    "kobe_1995": ("ground_motion", (5095,)),
    "morgan_hill_1984": ("ground_motion", (7995,)),
    "northridge_1994": ("ground_motion", (3000,)),
    "kunnath": ("hysteresis_test", (1326,)),
    "gill": ("hysteresis_test", (627,)),
    "daniel": ("hysteresis_test", (380,)),
    "marths_reference": ("fe_matrices", (29, 29)),
    "marths_numerical": ("fe_matrices", (27, 27)),
}

# packaged file -> its origin in the project's shared data
ORIGINS = {
    "ground_motions/elcentro_1940/elcentro_1940_NS_g_dt0.02.txt": "ground_motions/elcentro_1940_NS_g_dt0.02.txt",
    "ground_motions/elcentro_1940_marths/elcentro_1940_marths_m_s2.csv": "ground_motions/elcentro_1940_marths_m_s2.csv",
    "ground_motions/kobe_1995/kobe_1995_marths_m_s2.csv": "ground_motions/kobe_1995_marths_m_s2.csv",
    "ground_motions/morgan_hill_1984/morgan_hill_1984_marths_m_s2.csv": "ground_motions/morgan_hill_1984_marths_m_s2.csv",
    "ground_motions/northridge_1994/northridge_1994_time_s_accel_g.txt": "ground_motions/northridge_1994_time_s_accel_g.txt",
    **{f"hysteresis_tests/{n}/{q}_{n}.txt": f"hysteresis_tests/{q}_{n}.txt"
       for n in ("kunnath", "gill", "daniel") for q in ("displ_mm", "load_kN")},
    **{f"marths/reference/{f}": f"marths/{f}" for f in ("K_matrix.csv", "M_matrix.csv", "Joint_DOF.csv")},
    **{f"marths/numerical/N_{f}": f"marths/N_{f}" for f in ("K_matrix.csv", "M_matrix.csv", "Joint_DOF.csv")},
}


def test_list_datasets_names_kinds_and_shapes():
    records = list_datasets()
    assert {r.name: (r.kind, r.shape) for r in records} == EXPECTED
    for record in records:
        assert record.origin and record.source and record.citation and record.units
        assert record.n_samples == (record.shape[0] if record.kind != "fe_matrices" else None)
    assert get_dataset("kobe_1995").size == "5095 samples"
    assert get_dataset("marths_reference").size == "29×29"
    assert [r.name for r in list_datasets("hysteresis_test")] == ["daniel", "gill", "kunnath"]


def test_units_state_what_the_loaders_return():
    assert get_dataset("elcentro_1940").units == "t [s], ag [m/s²]"
    assert get_dataset("elcentro_1940").units_as_stored["acceleration"] == "g"
    assert get_dataset("kobe_1995").units_as_stored["acceleration"] == "m/s^2"
    assert get_dataset("marths_numerical").units_as_stored == {"stiffness": "N/m", "mass": "kg"}


def test_unknown_names_and_kinds():
    with pytest.raises(UnknownDatasetError) as info:
        get_dataset("nope")
    for name in EXPECTED:
        assert name in str(info.value)
    with pytest.raises(ParameterError, match="kind"):
        list_datasets("wind")


def test_every_data_file_is_a_package_resource():
    for relative in ORIGINS:
        assert packaged(relative).is_file(), relative
    for record in list_datasets():
        assert record.metadata_file.is_file()


@pytest.mark.skipif(not SHARED_DATA.is_dir(), reason="the project's shared data are not on this machine")
def test_packaged_copies_are_byte_identical_to_the_shared_data():
    for relative, origin in ORIGINS.items():
        assert packaged(relative).read_bytes() == (SHARED_DATA / origin).read_bytes(), relative


def test_broken_metadata_is_a_data_file_error(data_copy):
    path = data_copy / "hysteresis_tests/gill/metadata.toml"
    path.write_text(path.read_text().replace('kind = "hysteresis_test"', 'kind = "ground_motion"'))
    with pytest.raises(DataFileError, match="does not match its folder"):
        list_datasets(root=data_copy)
    path.write_text("name = \n")
    with pytest.raises(DataFileError, match="invalid TOML") as info:
        list_datasets(root=data_copy)
    assert str(path) in str(info.value)


def test_data_load_from_a_built_package_without_the_repository(tmp_path):
    """Build the package's files with setuptools' build_py (what goes into a wheel)
    from a copy of pyproject.toml + src, then load every dataset in a fresh Python
    whose rths_ident comes from that build, outside the repository."""
    repository = pathlib.Path(__file__).resolve().parents[2]
    if not (repository / "pyproject.toml").is_file():
        pytest.skip("not run from a source checkout")
    project = tmp_path / "project"
    project.mkdir()
    pyproject = (repository / "pyproject.toml").read_text()
    # PEP 639 `license = "MIT"` needs setuptools >= 77; older ones accept the table form.
    pyproject = pyproject.replace('license = "MIT"', 'license = {text = "MIT"}')
    (project / "pyproject.toml").write_text(pyproject)
    (project / "README.md").write_text("readme\n")
    shutil.copytree(repository / "src" / "rths_ident", project / "src" / "rths_ident",
                    ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
    build = tmp_path / "build"
    command = ["-c", "import sys, setuptools; sys.argv = ['setup.py', '-q', 'build_py', '--build-lib', sys.argv[1]]; setuptools.setup()"]
    subprocess.run([sys.executable, *command, str(build)], cwd=project, check=True, capture_output=True)
    assert (build / "rths_ident/datasets/data/marths/reference/K_matrix.csv").is_file()

    script = textwrap.dedent(
        f"""
        import sys
        sys.path.insert(0, {str(build)!r})
        import rths_ident
        from rths_ident import datasets
        assert rths_ident.__file__.startswith({str(build)!r}), rths_ident.__file__
        for record in datasets.list_datasets():
            if record.kind == "ground_motion":
                t, ag = datasets.load_ground_motion(record.name)
                assert t.size == record.n_samples
            elif record.kind == "hysteresis_test":
                x, f = datasets.load_hysteresis_test(record.name)
                assert x.size == record.n_samples
            else:
                m = datasets.load_marths_matrices(record.name.removeprefix("marths_"))
                assert m.K.shape == record.shape
        print(len(datasets.list_datasets()))
        """
    )
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    result = subprocess.run([sys.executable, "-c", script], cwd=outside, capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == str(len(EXPECTED))
