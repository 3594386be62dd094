"""The ``bw-frame`` scenario (degrading Bouc–Wen columns, UKF updating) on 4 s of El Centro.

Independent references: the monolithic frame with the true columns (structures package),
the seed 000 [REPO] Case 4 values in kip–in (converted by hand here), the closed-form
modes of a uniform 3-storey shear building, and the step-wise engine for the fused one.
The full 31.2 s numbers are in docs/hybrid/bw_frame.md (``rths-ident run bw-frame``).
"""

import json
import subprocess
import sys
import textwrap

import numpy as np
import pytest

from rths_ident.errors import ParameterError
from rths_ident.hybrid.loop.assembled import run_loop
from rths_ident.scenarios import bw_frame as bf
from rths_ident.models import DegradingBoucWen
from rths_ident.structures import three_storey_two_bay_frame
from rths_ident.runner.options import RunOptions

pytestmark = pytest.mark.slow

CONFIG = bf.BWFrameConfig(duration=4.0)
KIP, INCH = 4448.2216152605, 0.0254


@pytest.fixture(scope="module")
def el_centro_4s():
    return bf.run_scenario(CONFIG, RunOptions(engine="fused", compare=True))


def test_acceptance_updating_vs_none_vs_oracle(el_centro_4s):
    v = el_centro_4s["variants"]
    roof = {m: v[m]["J4_percent"]["floor3"] for m in v}
    # measured: ukf 0.635 %, none 67.2 %, oracle 0.629 % (J2 1.05 %)
    assert roof["ukf"] <= 0.5 * roof["none"]
    assert roof["ukf"] <= 1.5 * roof["oracle"]
    assert roof["none"] > 20.0  # −30 % on k_e, f_y0, a, b is visibly wrong
    assert el_centro_4s["J2_percent"] <= 3.0
    assert el_centro_4s["actuator_limit_code"] == 0
    assert el_centro_4s["updates_applied"] > 0 and v["none"]["updates_applied"] == 0


def test_identified_parameters(el_centro_4s):
    # measured (4 s): k_e 0.020 %, f_y0 0.16 %, stiffness deg. 0.032 %, strength deg. 0.22 %;
    # within ±2 % from 0.08 / 0.86 / 1.76 / 1.94 s
    for name, err in el_centro_4s["param_error_percent"].items():
        assert err <= 2.0, (name, err)
    # the degradation is exercised: the UKF's dissipated energy H of the specimen
    # (≈ 410 J) times a = 6.7e-4 1/J gives e^{-aH} ≈ 0.76
    assert el_centro_4s["identified_dissipated_energy_J"] > 200.0
    assert el_centro_4s["convergence_time_s"]["k_e"] < 0.5


def test_columns_are_the_case4_preset_scaled_by_force_similitude(el_centro_4s):
    p = el_centro_4s["params_true"]
    s = 1.34e6 / (2.9 * KIP / INCH)  # force scale: k_e = 2.9 kip/in → 1.34e6 N/m
    assert p["k_e"] == pytest.approx(1.34e6)
    assert p["f_y0"] == pytest.approx((1 - 0.5) * 1.34e6 * 0.2 * INCH)  # (1 − α_sv) k_e x_y, x_y = 0.2 in
    assert p["stiffness_degradation"] == pytest.approx(0.2 / (KIP * INCH) / s)  # 0.2 1/(kip·in)
    assert p["strength_degradation"] == pytest.approx(0.2 / (KIP * INCH) / s)
    assert el_centro_4s["params_initial"]["f_y0"] == pytest.approx(0.7 * p["f_y0"])


def test_frame_periods_and_yielding(el_centro_4s):
    """Periods from the closed form of a uniform 3-storey shear building (storey
    stiffness 3 k_e, floor mass m): ω_j² = (3k_e/m)·(2 − 2 cos((2j − 1)π/7)); and the
    reference drives the first storey past yield."""
    column = bf.scaled_column_params(CONFIG.column_preset, CONFIG.column_stiffness)
    frame = three_storey_two_bay_frame(CONFIG.floor_mass, DegradingBoucWen, column)
    periods = frame.modal_analysis().period
    j = np.arange(1, 4)
    closed = 2 * np.pi / np.sqrt(3 * 1.34e6 / 5000.0 * (2 - 2 * np.cos((2 * j - 1) * np.pi / 7)))
    np.testing.assert_allclose(periods, closed, rtol=1e-9)
    assert 0.45 < periods[0] < 0.55
    floors = el_centro_4s["_arrays"]["reference_floors"]
    yield_drift = 0.2 * INCH
    assert np.max(np.abs(floors[:, 0])) > 3 * yield_drift


def test_single_rate_ideal_transfer_oracle_reproduces_the_monolithic_frame():
    """Seed 001's virtual test (no actuator, no noise, one rate of 4096 Hz, one column
    sub-step): with the true columns in the NS the partitioned loop must give the
    monolithic frame (same integrator; only the specimen's ẋ differs: backward difference
    instead of the α-OS predictor velocity, through c_e ẋ)."""
    cfg = bf.BWFrameConfig(duration=3.0, fast_rate=4096.0, slow_rate=4096.0, transfer_system="ideal",
                           compensation="none", sensor_noise=False, column_substeps=1)
    result = bf.run_scenario(cfg, RunOptions(engine="fused", compare=True))
    v = result["variants"]
    # measured: oracle 1.1e-4 %, force 3.0e-4 %; ukf 0.092 %; none 69 %
    assert v["oracle"]["J4_percent"]["floor3"] < 1e-3
    assert v["oracle"]["J4_force_percent"] < 1e-2
    assert v["ukf"]["J4_percent"]["floor3"] < 0.05 * v["none"]["J4_percent"]["floor3"]
    # measured: k_e 0.017 %, f_y0 0.12 %, a 0.020 %, b 0.38 %
    for name, err in result["param_error_percent"].items():
        assert err < 1.0, (name, err)


def test_stepwise_equals_fused(el_centro_4s):
    """The step-wise engine (one jitted slow step per Python call) against the fused
    scan, over the first second (50 slow steps, 4000 fast steps: the fused loop is
    causal, so its first 50 steps are those of a 1 s run). Measured: ≤ 1e-10 relative
    (6e-10 on f̂_y0). Later, the first yield reversals (sgn Δx of a noisy displacement
    in the UKF's model) amplify the two compilations' rounding differences to ~7e-9 at 2 s."""
    built = bf.build(CONFIG)
    fused = el_centro_4s["_arrays"]["logs"]["ukf"]
    stepwise, _ = run_loop(built._replace(ground_accel=built.ground_accel[:50]), "stepwise")

    def rel(a, b):
        a, b = np.asarray(a), np.asarray(b)[: len(a)]
        return np.max(np.abs(a - b)) / np.max(np.abs(b))

    for key in ("displacement", "velocity", "acceleration"):
        assert rel(stepwise["ns"][key], fused["ns"][key]) <= 1e-8, key
    assert rel(stepwise["fast"]["force"], fused["fast"]["force"]) <= 1e-8
    for i in range(4):
        assert rel(stepwise["update"]["estimate"][:, i], fused["update"]["estimate"][:, i]) <= 1e-8, i


def test_the_fast_chunk_with_the_joint_ukf_compiles_to_single_kernels():
    """The fast side of a slow step with the joint UKF (6 states: its two 6×6 Cholesky
    factors per identifier step, the 1×1 innovation solve, the sigma-point products) has
    no dot and no LAPACK call, so XLA emits its loops as single kernels
    (small_loop_kernels, small_linalg): with ``jnp.linalg.cholesky``/``cho_solve``/``@``
    the fast loop ran kernel by kernel (7.5 µs per fast step, docs/performance.md)."""
    import jax  # noqa: PLC0415

    from rths_ident.hybrid.loop.assembled import initial_fast_state  # noqa: PLC0415
    from rths_ident.hybrid.fast_side.fast_chunk import fast_params, make_fast_chunk  # noqa: PLC0415
    from rths_ident.small_loop_kernels import loop_kernels  # noqa: PLC0415

    side = bf.build(bf.BWFrameConfig(duration=0.1)).fast_side
    state = initial_fast_state(side, CONFIG.seed)
    text = jax.jit(make_fast_chunk(side)).lower(fast_params(side), state, jax.numpy.zeros(1)).compile().as_text()
    assert " dot(" not in text and "custom-call(" not in text
    loops = loop_kernels(text)
    assert loops and all(loop.single_kernel for loop in loops)


def test_bad_configuration_names_the_field():
    with pytest.raises(ParameterError, match="updating"):
        bf.BWFrameConfig(updating="rls")
    with pytest.raises(ParameterError, match="fast_rate/slow_rate"):
        bf.BWFrameConfig(fast_rate=4000, slow_rate=60)
    with pytest.raises(ParameterError, match="identifier_rate"):
        bf.BWFrameConfig(identifier_rate=250.0)
    with pytest.raises(ParameterError, match="floor_mass"):
        bf.BWFrameConfig(floor_mass=-1.0)
    with pytest.raises(ParameterError, match="column_preset"):
        bf.BWFrameConfig(column_preset="case9")
    with pytest.raises(ParameterError, match="bw-frame duration"):
        bf.build(bf.BWFrameConfig(duration=100.0))


def test_cli_run_bw_frame_writes_metrics_and_plots(el_centro_4s, tmp_path, capsys):
    """``rths-ident run bw-frame`` (same configuration as the fixture: the compiled loop
    is reused) writes the JSON keys of the issue and the figures."""
    import json

    from rths_ident.cli import main

    out = tmp_path / "metrics.json"
    code = main(["run", "bw-frame", "--duration", "4", "--json", str(out), "--plots", str(tmp_path / "plots"),
                 "--quiet"])
    assert code == 0
    metrics = json.loads(out.read_text())
    for key in ("J2_percent", "J4_percent", "J4_force_percent", "tau_ms", "params_true", "params_final",
                "param_error_percent", "convergence_time_s", "realtime_factor", "sim_duration_s", "wall_s"):
        assert key in metrics
    assert set(metrics["variants"]) == {"ukf", "none", "oracle"}
    # same configuration and noise seed as the fixture: the same numbers
    assert metrics["J4_percent"]["floor3"] == pytest.approx(el_centro_4s["J4_percent"]["floor3"], rel=1e-9)
    pngs = sorted(p.name for p in (tmp_path / "plots").glob("*.png"))
    assert pngs == ["parameters.png", "reference_vs_hybrid.png", "specimen_hysteresis.png", "tracking.png",
                    "updating_vs_none.png"]
    assert "stiffness_degradation" in capsys.readouterr().out
    from rths_ident.records import read_test_record

    record = read_test_record(tmp_path / "plots" / "test_record.h5")  # the test record beside the plots
    assert record.complete and record.n_steps == 200 and record.metrics == metrics
    assert record.units["fast/identifier/dissipated_energy"] == "J"
    assert record.units["update/estimate"] == {"k_e": "N/m", "f_y0": "N", "stiffness_degradation": "1/J",
                                               "strength_degradation": "1/J"}
    assert record.steps["fast/identifier/dissipated_energy"][-1] == metrics["identified_dissipated_energy_J"]
    assert main(["run", "bw-frame", "--initial-error", "scenario1", "--quiet"]) == 2  # lugre-frame's option


@pytest.mark.opensees
def test_opensees_substructure_with_live_updating_equals_the_native_one():
    """bw-frame with standard Bouc–Wen columns: the numerical substructure as OpenSees
    ``BoucWen`` materials (zeroLength, storey dashpots for C), the joint UKF's θ̂ pushed
    into them live through ``updateParameter``, against the native NS. Explicit Newmark
    evaluates each element once per step where it stays, so the two must agree to
    rounding (measured 3e-9 of the peak over 4 s, 196 updates); the materials end with
    the last applied estimate."""
    results = {}
    for ns in ("native", "opensees"):
        cfg = bf.BWFrameConfig(column_model="boucwen", ns=ns, integrator="newmark-explicit", duration=2.0)
        test = bf.build(cfg)
        if ns == "opensees":
            substructure = test.make_ns("updating")
            close, substructure.close = substructure.close, lambda: None  # read it after the run
            logs, _ = run_loop(test, "stepwise", ns=substructure)
            applied = logs["update"]["estimate"][np.asarray(logs["update"]["applied"], bool)][-1]
            # each θ̂ entry sets one OpenSees parameter per numerical column (8): all equal it
            values = np.asarray(substructure.parameter_values())
            close()
            np.testing.assert_allclose(values, np.repeat(applied[:, None], values.shape[1], axis=1), rtol=1e-12)
        else:
            logs, _ = run_loop(test, "stepwise")
        results[ns] = logs
    native, opensees = results["native"], results["opensees"]
    assert np.sum(opensees["update"]["applied"]) > 50
    peak = np.max(np.abs(native["ns"]["displacement"]))
    np.testing.assert_allclose(opensees["ns"]["displacement"], native["ns"]["displacement"], rtol=0, atol=1e-7 * peak)
    np.testing.assert_allclose(opensees["update"]["estimate"], native["update"]["estimate"], rtol=1e-7)


@pytest.mark.opensees
def test_opensees_alpha_os_stays_within_its_stated_tolerance():
    """α-OS: OpenSees commits its elements at the corrected displacement and has no
    splitting stiffness for the specimen, the native scheme commits at the predictor with
    K^l = the identified k: floors within 2 % of the peak over 2 s (measured 1.05 % at
    4 s), identified parameters within 1 %."""
    results = {}
    for ns in ("native", "opensees"):
        cfg = bf.BWFrameConfig(column_model="boucwen", ns=ns, duration=2.0)
        results[ns], _ = run_loop(bf.build(cfg), "stepwise")
    a, b = results["native"]["ns"]["displacement"], results["opensees"]["ns"]["displacement"]
    difference = np.max(np.abs(a - b)) / np.max(np.abs(a))
    assert 1e-6 < difference < 0.02
    np.testing.assert_allclose(results["opensees"]["update"]["estimate"][-1],
                               results["native"]["update"]["estimate"][-1], rtol=0.01)


def test_a_column_without_an_opensees_twin_is_a_clear_error():
    from rths_ident.scenarios import lugre_frame as lf

    with pytest.raises(ParameterError, match="ModifiedLuGre column has no OpenSees twin"):
        lf.build(lf.LugreFrameConfig(ns="opensees", duration=0.5))
    with pytest.raises(ParameterError, match="DegradingBoucWen column has no OpenSees twin"):
        bf.build(bf.BWFrameConfig(ns="opensees", column_model="degrading-boucwen", duration=0.5))


@pytest.mark.opensees
def test_frame_geometry_is_data_not_code():
    """Another frame (4 storeys of 2 columns, the left column tested) through the same
    scenario code: the native and the OpenSees substructures still agree to rounding with
    explicit Newmark, and every floor is reported."""
    logs = {}
    for ns in ("native", "opensees"):
        cfg = bf.BWFrameConfig(column_model="boucwen", ns=ns, integrator="newmark-explicit", duration=1.0,
                               storeys=4, columns_per_storey=2, tested_column=0)
        logs[ns], _ = run_loop(bf.build(cfg), "stepwise")
    native, opensees = logs["native"]["ns"]["displacement"], logs["opensees"]["ns"]["displacement"]
    assert native.shape == (50, 4)
    np.testing.assert_allclose(opensees, native, rtol=0, atol=1e-7 * np.max(np.abs(native)))
    with pytest.raises(ParameterError, match="tested_column"):
        bf.BWFrameConfig(columns_per_storey=2, tested_column=2)


_SETUP_PROGRAMS = """
    import json, logging, sys
    import jax
    names = []

    class Listener(logging.Handler):
        def emit(self, record):
            if record.getMessage().startswith("Finished XLA compilation of"):
                names.append(record.getMessage().split()[4])

    logging.getLogger("jax").addHandler(Listener())
    from rths_ident.hybrid.loop import assembled as assembled
    from rths_ident.scenarios import bw_frame as bf
    with jax.log_compiles():
        test = bf.build(bf.BWFrameConfig(duration=2.0))
        built = list(names)
        jax.block_until_ready(assembled.loop_arguments(test, "updating"))
    print(json.dumps({"build": built, "arguments": names[len(built):]}))
"""


def test_the_set_up_compiles_a_handful_of_programs():
    """A first run's set-up compiled 36 small programs before the loop's (each eager JAX
    operation on a set-up value: the joint UKF's arrays, the partition's copies, the
    interface stiffness's scatter, …; ≈ 1 s): the set-up values are now NumPy's, put on
    the device. In a fresh process (JAX's caches empty): the columns' tangent (a storey's
    and the tested column's) and four tiny programs, then the loop's initial state."""
    run = subprocess.run([sys.executable, "-c", textwrap.dedent(_SETUP_PROGRAMS)], capture_output=True, text=True,
                         timeout=300, env={**__import__("os").environ, "RTHS_IDENT_JAX_CACHE": "off"})
    assert run.returncode == 0, run.stderr
    compiled = json.loads(run.stdout.strip().splitlines()[-1])
    assert compiled["build"].count("jit(tangent)") == 2
    assert len(compiled["build"]) <= 6, compiled["build"]
    assert compiled["arguments"] == ["jit(initial_state)"]
