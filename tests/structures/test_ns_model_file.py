"""Model files for ``rths-ident serve ns``: the ``build``/``INTERFACE`` form builds the
OpenSeesSubstructure the same settings give in code (same numbers), a client's setup
fills what the file leaves out and may not contradict it, and a file of neither form is
a clear error."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from rths_ident.errors import ParameterError
from rths_ident.structures.ns_model_file import load_ns_model

pytestmark = pytest.mark.opensees
pytest.importorskip("openseespy.opensees")

from rths_ident.structures.opensees_substructure import OpenSeesSubstructure  # noqa: E402

MODEL = Path(__file__).resolve().parents[1] / "transport" / "ns_model_two_storey.py"


def run(ns, record, steps=50):
    target, out = ns.initial_target(), []
    for k in range(steps):
        target, log = ns.step(1e6 * target, record[k + 1])
        out.append((target, log["displacement"]))
    ns.close()
    return out


def test_build_form_equals_the_substructure_built_in_code():
    model = load_ns_model(MODEL)
    assert (model.name, model.dt, model.ground_accel.size) == ("two-storey", 0.01, 201)
    ns = model.substructure()
    assert (ns.parameter_names, ns.parameter_units, ns.integrator) == (("k1",), ("N/m",), "alpha-os")
    from_file = run(ns, model.ground_accel)
    import runpy

    module = runpy.run_path(str(MODEL))
    in_code = run(OpenSeesSubstructure(module["build"], [(2, 1)], 0.01, ground_accel=module["GROUND_ACCEL"],
                                       response=[(1, 1), (2, 1)], parameter_map=module["PARAMETER_MAP"]),
                  model.ground_accel)
    for (t1, d1), (t2, d2) in zip(from_file, in_code):
        np.testing.assert_array_equal(t1, t2)
        np.testing.assert_array_equal(d1, d2)


def test_client_setup_fills_gaps_and_may_not_contradict(tmp_path):
    model = load_ns_model(MODEL)
    assert model.setup({"variant": "x"})["variant"] == "x"
    with pytest.raises(ValueError, match="dt: the client asks for 0.02 s, the model file .* sets DT = 0.01 s"):
        model.setup({"dt": 0.02})
    with pytest.raises(ValueError, match="ground_accel: the client sent a record different from GROUND_ACCEL"):
        model.setup({"ground_accel": np.zeros(201)})
    bare = tmp_path / "bare.py"
    bare.write_text(MODEL.read_text().replace("DT = 0.01", "STEP = 0.01").replace("DT * np", "STEP * np"))
    with pytest.raises(ValueError, match=r"dt: neither the client's setup nor the model file .* \(DT\)"):
        load_ns_model(bare).setup({})
    assert load_ns_model(bare).setup({"dt": 0.005})["dt"] == 0.005


def test_factory_form_receives_the_setup(tmp_path):
    path = tmp_path / "factory.py"
    path.write_text("def make_substructure(setup):\n    return setup\nDT = 0.02\n")
    model = load_ns_model(path)
    assert model.substructure({"k": 1}) == {"k": 1, "dt": 0.02}


def test_bad_files_are_clear_errors(tmp_path):
    with pytest.raises(ParameterError, match="no such file"):
        load_ns_model(tmp_path / "none.py")
    for text, match in (("X = 1\n", "define make_substructure"),
                        ("def build(ops): pass\nINTERFACE = (1, 1)\nDT = -1\n", "DT must be a positive"),
                        ("def build(ops): pass\nINTERFACE = (1, 1)\nGROUND_ACCEL = [1.0]\n", "GROUND_ACCEL must be")):
        path = tmp_path / "bad.py"
        path.write_text(text)
        with pytest.raises(ParameterError, match=match):
            load_ns_model(path)


def test_docs_example_is_the_rc_frame_scenarios_opensees_substructure():
    """docs/examples/ns_model_rc_frame.py (seed 000 Case 4 as a model file) steps exactly
    as ``rths-ident run rc-frame --ns opensees`` builds its NS."""
    from rths_ident.scenarios import rc_frame as rc
    from rths_ident.scenarios.components import slow_record

    example = load_ns_model(Path(__file__).resolve().parents[2] / "docs" / "examples" / "ns_model_rc_frame.py")
    cfg = rc.RCFrameConfig(ns="opensees")
    _, ag = slow_record(cfg)
    record = np.concatenate([[0.0], ag])
    np.testing.assert_array_equal(example.ground_accel, record)
    assert example.dt == 1.0 / cfg.slow_rate
    from_file = run(example.substructure(), record, steps=25)
    scenario = run(rc.opensees_substructure(cfg, "none", record), record, steps=25)
    for (t1, d1), (t2, d2) in zip(from_file, scenario):
        np.testing.assert_array_equal(t1, t2)
        np.testing.assert_array_equal(d1, d2)


def test_a_test_files_opensees_model_reads_without_building_and_bad_ones_name_the_field(tmp_path):
    from rths_ident.structures.ns_model_file import read_opensees_model_file

    example = Path(__file__).resolve().parents[2] / "examples" / "data" / "two_bay_frame_opensees.py"
    model = read_opensees_model_file(example)
    assert (model.interface, model.response, model.parameter_names) == ((1, 1), ((1, 1), (2, 1)), ("k", "fy"))
    assert [p.name for p in model.parameter_map_for(["fy", "k"])] == ["Fy", "E"]  # θ̂ order, by name
    header = "from rths_ident.structures import ElementParameter\ndef build(ops):\n    pass\n"
    cases = {
        "no such file": None,
        "expected a function build\\(ops\\) and INTERFACE": "def build(ops):\n    pass\n",
        "INTERFACE = \\[\\(1, 1\\), \\(2, 1\\)\\]: expected one \\(node, dof\\) pair": header + "INTERFACE = [(1, 1), (2, 1)]\n",
        "PARAMETER_MAP\\[0\\] = 'E': expected an ElementParameter": header + "INTERFACE = (1, 1)\nPARAMETER_MAP = ['E']\n",
        "PARAMETER_NAMES = \\['k'\\]: expected one name per PARAMETER_MAP entry \\(2\\)": (
            header + "INTERFACE = (1, 1)\nPARAMETER_MAP = [ElementParameter(1, 'E'), ElementParameter(1, 'Fy')]\n"
            "PARAMETER_NAMES = ['k']\n"),
        "the file does not run: NameError": "build = undefined_name\n",
    }
    for i, (message, text) in enumerate(cases.items()):
        path = tmp_path / f"model{i}.py"
        if text is not None:
            path.write_text(text)
        with pytest.raises(ParameterError, match=f"structure.opensees_model = '{path}': {message}"):
            read_opensees_model_file(path)
