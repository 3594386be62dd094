"""shear-frame: your own frame from a test file, on the virtual side or a rig — the site
line is all that changes."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from rths_ident import HybridTest, load_test
from rths_ident.cli import main
from rths_ident.errors import ParameterError
from rths_ident.records import read_test_record
from rths_ident.rigs.calibration import ForceCalibration

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "two_bay_frame.toml"


def _short(site="virtual", **tables):
    return load_test(EXAMPLE, record={"duration": 4.0}, specimen={"site": site}, **tables)


@pytest.mark.slow
def test_both_engines_give_the_same_test_and_the_specimen_stays_within_the_bilinear_bound():
    # without the identifier (a joint UKF over the non-smooth bilinear model turns the two
    # compilations' rounding into 0.4 % of the response), the same pure functions, two engines
    test = _short(sensors={"noise": False}, identifier={"kind": "none"}, updating={"mode": "none"})
    fused = test.run(compare=False)
    stepwise = test.run(engine="stepwise", compare=False)
    a, b = (np.asarray(r.arrays["_arrays"]["logs"]["none"]["ns"]["displacement"]) for r in (fused, stepwise))
    assert np.max(np.abs(a - b)) <= 1e-8 * np.max(np.abs(a))
    logs = fused.arrays["_arrays"]["logs"]["none"]["fast"]
    x, force = np.ravel(logs["measured"]), np.ravel(logs["true_force"])
    k, fy, b_ratio = 1540.0, 8.0, 0.05  # the file's column (closed form: |F| ≤ (1 − b) f_y + b k |x|)
    assert np.all(np.abs(force) <= (1 - b_ratio) * fy + b_ratio * k * np.abs(x) + 1e-9)
    assert np.max(np.abs(force)) > fy  # it yields: f_y is observable


@pytest.mark.slow
def test_the_virtual_test_identifies_the_column_and_updating_beats_the_wrong_model():
    result = load_test(EXAMPLE).run()  # the whole record, as the example file declares it
    metrics = result.metrics
    assert metrics["params_final"]["k"] == pytest.approx(1540.0, rel=0.01)
    assert metrics["params_final"]["fy"] == pytest.approx(8.0, rel=0.02)
    roof = "floor2"
    j4 = {mode: metrics["variants"][mode]["J4_percent"][roof] for mode in ("ukf", "none", "oracle")}
    assert j4["oracle"] < j4["ukf"] < 0.2 * j4["none"]


def test_the_site_line_is_all_that_changes_between_the_virtual_test_and_the_rig(tmp_path):
    records = {}
    for site in ("virtual", "emulator"):
        records[site] = tmp_path / f"{site}.h5"
        assert main(["run", str(EXAMPLE), "--duration", "2", "--site", site, "--no-compare", "--quiet",
                     "--test-record", str(records[site])]) == 0
    texts = {site: read_test_record(path).config["test_file"].splitlines() for site, path in records.items()}
    changed = [(a, b) for a, b in zip(texts["virtual"], texts["emulator"]) if a != b]
    assert changed == [('site = "virtual"', 'site = "emulator"')]
    rig = read_test_record(records["emulator"])
    # the emulated board reads force through seed 002's calibration line (eq. 4-1):
    # |F| = 0.662 N × counts − 339.05 N above the idle count, 0 inside the dead band
    calibration = ForceCalibration()
    force = np.abs(np.ravel(rig.steps["fast/force"]))
    counts = (force[force > 0] - calibration.intercept) / calibration.slope
    assert counts.size > 10 and np.allclose(counts, np.round(counts), atol=1e-6)
    assert rig.time_base["samples_per_step"] == 1 and read_test_record(records["virtual"]).time_base[
        "samples_per_step"] == 80


def test_a_bad_column_or_site_is_named_before_anything_runs(tmp_path, capsys):
    with pytest.raises(ParameterError, match="specimen.fy = -1.0"):
        HybridTest("shear-frame", specimen={"fy": -1.0})
    with pytest.raises(ParameterError, match="identified"):
        HybridTest("shear-frame", identifier={"fields": ["sigma0"]})
    assert main(["run", str(EXAMPLE), "--site", "serial"]) == 1
    assert "specimen.site" in capsys.readouterr().err
    # another model: its own fields; the file's bilinear fy is then an unknown field, named with its line
    assert main(["check", str(EXAMPLE), "--set", "specimen.model=boucwen"]) == 1
    err = capsys.readouterr().err
    assert "unknown field specimen.fy" in err and "alpha, A, beta, gamma, n" in err


def test_a_rig_needs_the_stepwise_engine():
    with pytest.raises(ParameterError, match="step-wise"):
        _short("emulator").run(engine="fused")


def test_the_python_example_is_the_test_file(tmp_path):
    import importlib.util

    spec = importlib.util.spec_from_file_location("own_hybrid_test", EXAMPLE.parent / "own_hybrid_test.py")
    example = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(example)
    from_python = example.two_bay_frame()
    from_file = load_test(EXAMPLE)
    assert from_python.config == from_file.config  # the same test, declared twice
    assert json.dumps(sorted(from_python.config.column_params)) == json.dumps(sorted(from_file.config.column_params))


def test_the_examples_record_file_is_the_shipped_el_centro():
    from rths_ident.datasets import load_ground_motion
    from rths_ident.datasets.user_ground_motion import load_user_ground_motion

    t, ag = load_user_ground_motion(EXAMPLE.parent / "data" / "my_record.csv", units="g")
    t_ec, ag_ec = load_ground_motion("elcentro_1940")
    np.testing.assert_allclose(ag, ag_ec[: ag.size], atol=1e-6 * 9.80665)  # 6 decimals of g
    assert t[-1] == pytest.approx(12.0)


def test_the_docs_show_the_examples_as_they_are():
    import re

    doc = (EXAMPLE.parents[1] / "docs" / "hybrid" / "own_test.md").read_text(encoding="utf-8")
    assert re.findall(r"```toml\n(.*?)```", doc, flags=re.S)[0] == EXAMPLE.read_text(encoding="utf-8")
    assert re.findall(r"```python\n(.*?)```", doc, flags=re.S) == [
        (EXAMPLE.parent / path).read_text(encoding="utf-8")
        for path in ("data/two_bay_frame_opensees.py", "own_hybrid_test.py")]
    # the structure files' sections quote their test files' tables as they are
    quoted = re.findall(r"```toml\n(.*?)```", doc, flags=re.S)[1:]
    examples = [(EXAMPLE.parent / name).read_text(encoding="utf-8") for name in ("matrix_frame.toml",
                                                                                 "opensees_frame.toml")]
    assert len(quoted) >= 3 and all(any(tables in text for text in examples) for tables in quoted[1:])


ADAPTER_SERVER = """
import sys
import openseespy.opensees as ops

port = int(sys.argv[1])
ops.wipe()
ops.model('basic', '-ndm', 1, '-ndf', 1)
ops.node(1, 0.0)
ops.node(2, 0.0)
ops.fix(1, 1)
ops.uniaxialMaterial('Steel01', 1, 8.0, 1540.0, 0.05)   # the file's bilinear column: fy, k, b
ops.element('zeroLength', 1, 1, 2, '-mat', 1, '-dir', 1)
ops.element('adapter', 2, '-node', 2, '-dof', 1, '-stif', 1.0e12, port)
ops.timeSeries('Linear', 1)
ops.pattern('Plain', 1, 1)
ops.constraints('Plain')
ops.numberer('Plain')
ops.system('FullGeneral')
ops.test('NormDispIncr', 1.0e-14, 50)
ops.algorithm('Newton')
ops.integrator('LoadControl', 1.0)
ops.analysis('Static')
while True:  # one step per client exchange; the adapter ends the process on DIE
    if ops.analyze(1) != 0:
        raise SystemExit('adapter server: analysis failed')
"""


@pytest.mark.opensees
@pytest.mark.slow
def test_the_site_line_reaches_an_opensees_adapter_element(tmp_path):
    """specimen.site = adapter:HOST:PORT: the specimen is OpenSees' own Steel01 behind its
    adapter element (the real OpenFresco-protocol server), and what it measured is our
    bilinear model along the same displacements (a second implementation)."""
    import socket
    import subprocess
    import sys

    pytest.importorskip("openseespy")
    from rths_ident.models import BilinearKinematic, BilinearParams

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    script = tmp_path / "adapter.py"
    script.write_text(ADAPTER_SERVER)
    server = subprocess.Popen([sys.executable, str(script), str(port)], stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True)
    try:
        record = tmp_path / "adapter.h5"
        result = load_test(EXAMPLE, record={"duration": 4.0}, specimen={"site": f"adapter:127.0.0.1:{port}"}).run(
            compare=False, test_record=record)
        assert result.complete
    finally:
        try:
            server.communicate(timeout=60)
        finally:
            if server.poll() is None:
                server.kill()
    steps = read_test_record(record).steps
    x, force = np.ravel(steps["fast/measured"]), np.ravel(steps["fast/force"])
    ours = BilinearKinematic(BilinearParams(k=1540.0, fy=8.0, b=0.05)).force_history(x)
    assert np.max(np.abs(force)) > 8.0  # it yielded
    np.testing.assert_allclose(force, ours, atol=1e-6 * np.max(np.abs(ours)))
