"""A shear-frame test's structure from a file: M, K, C matrices (CSV) or an OpenSeesPy model
file — each checked against a second source of the same frame, and every bad file named
by ``rths-ident check`` before anything runs."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest

from rths_ident import load_test
from rths_ident.cli import main
from rths_ident.records import read_test_record

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"
SHEAR_FRAME = EXAMPLES / "two_bay_frame.toml"
MATRIX_FRAME = EXAMPLES / "matrix_frame.toml"
OPENSEES_FRAME = EXAMPLES / "opensees_frame.toml"
VARIANTS = ("ukf", "none", "oracle")


def _ns_displacements(result) -> dict:
    return {v: np.asarray(result.arrays["_arrays"]["logs"][v]["ns"]["displacement"]) for v in VARIANTS}


@pytest.mark.slow
def test_the_matrices_test_is_the_shear_frame_test_built_from_the_same_storeys(tmp_path):
    """examples/matrix_frame.toml declares examples/two_bay_frame.toml's frame as M, K = 0,
    C (its Rayleigh damping) and five numerical copies of the bilinear column between the
    same DOFs: a shear frame IS such matrices, so the two tests (partition, reference,
    loop, identification) agree to 1e-9 — here to the last bit."""
    short = {"record": {"duration": 3.0}}
    frame, matrices = (load_test(path, **short).run() for path in (SHEAR_FRAME, MATRIX_FRAME))
    a, b = _ns_displacements(frame), _ns_displacements(matrices)
    for v in VARIANTS:
        assert np.max(np.abs(a[v] - b[v])) <= 1e-9 * np.max(np.abs(a[v]))
    for v in VARIANTS:
        j4_frame = frame.metrics["variants"][v]["J4_percent"]
        j4_matrices = matrices.metrics["variants"][v]["J4_percent"]
        assert [j4_matrices["dof1"], j4_matrices["dof2"]] == pytest.approx(
            [j4_frame["floor1"], j4_frame["floor2"]], rel=1e-9)
    for name in ("k", "fy"):
        assert matrices.metrics["params_final"][name] == pytest.approx(frame.metrics["params_final"][name], rel=1e-9)
    assert matrices.metrics["structure"] == "matrices" and "floor_mass_kg" not in matrices.metrics
    # the figures name the responses as the test does (dof1, dof2)
    paths = load_test(MATRIX_FRAME, **short).plot(matrices, tmp_path)
    assert {p.name for p in paths} >= {"reference_vs_hybrid.png", "updating_vs_none.png", "specimen_hysteresis.png"}


@pytest.mark.slow
@pytest.mark.opensees
def test_the_opensees_model_files_substructure_is_the_native_one_on_the_same_frame():
    """examples/opensees_frame.toml: the frame as an OpenSeesPy file (Steel01 columns, E and
    Fy updated through PARAMETER_MAP), against the native JAX frame of two_bay_frame.toml
    (a second implementation). Explicit Newmark couples both exactly, so they differ by
    rounding only: OpenSees' own solver and the file's Rayleigh coefficients from
    NumPy's eigenvalues (a1 differs by 4e-19 s) through ~20 yield events of five columns
    — 1e-9 of the peak measured; the bound is 1e-7 of the peak, as bw-frame's OpenSees NS
    test. J4's references differ in kind (the monolithic frame vs the ideal partitioned
    test), equal for an explicit scheme: J4 agrees to 1e-6."""
    pytest.importorskip("openseespy.opensees")
    options = {"record": {"duration": 3.0}, "substructure": {"integrator": "newmark-explicit"}}
    native = load_test(SHEAR_FRAME, **options).run(engine="stepwise")
    opensees = load_test(OPENSEES_FRAME, **options).run()
    a, b = _ns_displacements(native), _ns_displacements(opensees)
    for v in VARIANTS:
        np.testing.assert_allclose(b[v], a[v], rtol=0, atol=1e-7 * np.max(np.abs(a[v])))
    updates = opensees.arrays["_arrays"]["logs"]["ukf"]["update"]
    assert np.sum(updates["applied"]) > 50  # the hook updated the OpenSees columns' E and Fy
    for v in VARIANTS:
        j4_native = native.metrics["variants"][v]["J4_percent"]
        j4_opensees = opensees.metrics["variants"][v]["J4_percent"]
        assert [j4_opensees["node1-dof1"], j4_opensees["node2-dof1"]] == pytest.approx(
            [j4_native["floor1"], j4_native["floor2"]], rel=1e-6)
    for name in ("k", "fy"):
        assert opensees.metrics["params_final"][name] == pytest.approx(native.metrics["params_final"][name], rel=1e-7)


@pytest.mark.slow
@pytest.mark.opensees
def test_the_opensees_model_file_over_tcp_gives_the_in_process_numbers():
    pytest.importorskip("openseespy.opensees")
    options = {"record": {"duration": 1.0}}
    here = load_test(OPENSEES_FRAME, **options).run(compare=False)
    remote = load_test(OPENSEES_FRAME, substructure={"backend": "opensees-tcp"}, **options).run(compare=False)
    np.testing.assert_array_equal(np.asarray(remote.arrays["_arrays"]["logs"]["ukf"]["ns"]["displacement"]),
                                  np.asarray(here.arrays["_arrays"]["logs"]["ukf"]["ns"]["displacement"]))


@pytest.mark.slow
@pytest.mark.parametrize("example", [MATRIX_FRAME, pytest.param(OPENSEES_FRAME, marks=pytest.mark.opensees)])
def test_the_site_line_is_all_that_changes_for_a_structure_file(tmp_path, example):
    if example == OPENSEES_FRAME:
        pytest.importorskip("openseespy.opensees")
    records = {}
    for site in ("virtual", "emulator"):
        records[site] = tmp_path / f"{site}.h5"
        assert main(["run", str(example), "--duration", "1", "--site", site, "--no-compare", "--quiet",
                     "--test-record", str(records[site])]) == 0
    texts = {site: read_test_record(path).config["test_file"].splitlines() for site, path in records.items()}
    changed = [(a, b) for a, b in zip(texts["virtual"], texts["emulator"]) if a != b]
    assert changed == [('site = "virtual"', 'site = "emulator"')]
    assert read_test_record(records["emulator"]).time_base["samples_per_step"] == 1


def _matrix_copy(tmp_path, **files) -> Path:
    """examples/matrix_frame.toml beside a copy of its matrices, some files replaced."""
    shutil.copytree(EXAMPLES / "data", tmp_path / "data")
    folder = tmp_path / "data" / "two_bay_frame_matrices"
    for stem, text in files.items():
        (folder / f"{stem}.csv").write_text(text)
    shutil.copy(MATRIX_FRAME, tmp_path / "frame.toml")
    return tmp_path / "frame.toml"


@pytest.mark.parametrize("files, options, expected", [
    ({}, ["--set", "structure.matrices=nowhere"], "structure.matrices = 'nowhere': no such folder"),
    ({"K": "0,0,0\n0,0,0\n"}, [], "K.csv: 2×3: expected a square matrix"),
    ({"C": "1,0,0\n0,1,0\n0,0,1\n"}, [], "C.csv: 3×3: expected 2×2, the size of M.csv"),
    ({"M": "20,0.5\n0,20\n"}, [], "M.csv: not symmetric"),
    ({}, ["--set", "structure.interface_dof=3"], "structure.interface_dof = 3: expected a DOF in 1…2"),
    ({}, ["--set", "structure.updated_elements=[[1, 0], [3, 2]]"], "structure.updated_elements: [3, 2]: expected"),
    ({}, ["--ns", "opensees"], "structure.matrices with substructure.backend = opensees: expected backend = native"),
])
def test_check_names_a_bad_matrices_declaration(tmp_path, capsys, files, options, expected):
    path = _matrix_copy(tmp_path, **files)
    assert main(["check", str(path), *options]) == 1
    err = capsys.readouterr().err
    assert expected in err and err.count("\n") == 1  # one line
    if files:
        assert str(tmp_path / "data" / "two_bay_frame_matrices" / f"{next(iter(files))}.csv") in err


BAD_TAG = """
from pathlib import Path
import runpy
frame = runpy.run_path(str(Path(__file__).parent / "data" / "two_bay_frame_opensees.py"))
build, INTERFACE, RESPONSE, PARAMETER_NAMES = frame["build"], frame["INTERFACE"], frame["RESPONSE"], ["k", "fy"]
PARAMETER_MAP = [frame["ElementParameter"]((1, 2, 9), "E"), frame["ElementParameter"]((1, 2), "Fy")]
"""


@pytest.mark.opensees
def test_check_builds_the_opensees_model_and_names_an_unknown_element_tag(tmp_path, capsys):
    pytest.importorskip("openseespy.opensees")
    shutil.copytree(EXAMPLES / "data", tmp_path / "data")
    (tmp_path / "bad_frame.py").write_text(BAD_TAG)
    path = tmp_path / "frame.toml"
    path.write_text(OPENSEES_FRAME.read_text().replace('"data/two_bay_frame_opensees.py"', '"bad_frame.py"'))
    assert main(["check", str(path)]) == 1
    err = capsys.readouterr().err
    assert f"structure.opensees_model = '{tmp_path / 'bad_frame.py'}'" in err
    assert "'E' of element 9" in err and "element 9 is not in the OpenSees model" in err
    assert main(["run", str(path), "--duration", "1", "--no-compare"]) == 1  # a run: the same, before any work
    err = capsys.readouterr().err
    last = err.strip().splitlines()[-1]  # after the "running …" line: the error, one line
    assert last.startswith("rths-ident: error:") and "element 9 is not in the OpenSees model" in last
    assert main(["check", str(OPENSEES_FRAME)]) == 0
    assert main(["check", str(OPENSEES_FRAME), "--set", "identifier.fields=k,b"]) == 1
    assert "PARAMETER_NAMES = ['k', 'fy'] has no entry for identifier.fields ['b']" in capsys.readouterr().err
    assert main(["check", str(OPENSEES_FRAME), "--ns", "native"]) == 1
    assert "expected backend = opensees | opensees-tcp" in capsys.readouterr().err


def test_a_structure_source_brings_its_own_fields(capsys):
    # the shear frame's storeys are not a field of a matrices test: named, with the valid ones
    assert main(["check", str(MATRIX_FRAME), "--set", "structure.storeys=3"]) == 1
    assert "unknown field structure.storeys; [structure] has matrices, interface_dof, updated_elements" in (
        capsys.readouterr().err)
    assert main(["check", str(MATRIX_FRAME)]) == 0


@pytest.mark.slow
def test_a_coupled_structure_of_matrices_without_copies_has_the_exact_monolithic_reference(tmp_path):
    """Matrices that are no shear frame (DOF 1 coupled to DOF 3), a linear specimen at DOF
    2, no numerical copy of it (nothing to update): J4's reference is the monolithic
    structure M, C, K + k e₂e₂ᵀ under the record with explicit Newmark, here written
    again in NumPy (β = 0, γ = ½: [M + γΔt C] ü₊ = −M ι ẍ_g − K u₊ − C[u̇ + (1 − γ)Δt ü])."""
    from rths_ident import HybridTest
    from rths_ident.scenarios.components import slow_record
    from rths_ident.structures.matrix_files import write_structure_matrices

    mass = np.diag([10.0, 10.0, 5.0])
    stiffness = 2000.0 * np.array([[2.0, -1.0, 0.15], [-1.0, 2.0, -1.0], [0.15, -1.0, 1.0]])
    damping = 0.01 * stiffness + 0.2 * mass
    write_structure_matrices(tmp_path / "coupled", mass, stiffness, damping)
    test = HybridTest("shear-frame", record={"ground_motion": "elcentro_1940", "duration": 2.0, "scale": 0.2},
                      structure={"matrices": str(tmp_path / "coupled"), "interface_dof": 2, "updated_elements": []},
                      substructure={"integrator": "newmark-explicit"},
                      specimen={"model": "linear", "k": 1000.0}, identifier={"kind": "none", "fields": ["k"]},
                      updating={"mode": "none"})
    result = test.run(compare=False)
    _, ground_accel = slow_record(test.config)
    dt, gamma = 1.0 / test.config.slow_rate, 0.5
    k_total = stiffness.copy()
    k_total[1, 1] += 1000.0
    u, v, a = np.zeros(3), np.zeros(3), np.zeros(3)
    expected = []
    for ag in ground_accel:
        u = u + dt * v + 0.5 * dt**2 * a
        a_new = np.linalg.solve(mass + gamma * dt * damping,
                                -mass @ np.ones(3) * ag - k_total @ u - damping @ (v + (1 - gamma) * dt * a))
        v, a = v + dt * ((1 - gamma) * a + gamma * a_new), a_new
        expected.append(u)
    expected = np.array(expected)
    reference = np.asarray(result.arrays["_arrays"]["reference_floors"])
    np.testing.assert_allclose(reference, expected, rtol=0, atol=1e-10 * np.max(np.abs(expected)))
    np.testing.assert_allclose(np.asarray(result.arrays["_arrays"]["reference_force"]), 1000.0 * expected[:, 1],
                               rtol=0, atol=1e-10 * 1000.0 * np.max(np.abs(expected[:, 1])))
    assert result.metrics["variants"]["none"]["J4_percent"]["dof3"] < 10.0  # the hybrid loop follows it
