"""The flagship ``lugre-frame`` scenario on shortened records (acceptance numbers of the
issue; the full 31.2 s run is reported by ``rths-ident run``).

The independent references: the monolithic frame with the true columns (structures
package, itself checked against OpenSeesPy), the true specimen parameters (seed 001
Table 2.1), and the step-wise engine for the fused one.
"""

import dataclasses

import numpy as np
import pytest

from rths_ident.errors import ParameterError
from rths_ident.hybrid.loop.assembled import initial_loop_state, run_loop, slow_step_functions
from rths_ident.scenarios import lugre_frame as lf
from rths_ident.hybrid.fast_side.fast_chunk import fast_params
from rths_ident.runner.options import RunOptions

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def el_centro_8s():
    return lf.run_scenario(lf.LugreFrameConfig(duration=8.0), RunOptions(engine="fused", compare=True))


def test_acceptance_updating_vs_none_vs_oracle(el_centro_8s):
    v = el_centro_8s["variants"]
    roof = {m: v[m]["J4_percent"]["floor3"] for m in v}
    assert roof["rls"] <= 0.5 * roof["none"]
    assert roof["rls"] <= 1.5 * roof["oracle"]
    assert el_centro_8s["J2_percent"] <= 3.0
    for name, err in el_centro_8s["param_error_percent"].items():
        assert err <= 5.0, (name, err)
    assert el_centro_8s["actuator_limit_code"] == 0
    assert el_centro_8s["updates_applied"] > 0 and v["none"]["updates_applied"] == 0


def test_true_parameters_are_table_2_1(el_centro_8s):
    p = el_centro_8s["params_true"]
    assert p["sigma0"] == pytest.approx(0.96 * 1.34e6)
    assert p["sigma3"] == pytest.approx(0.04 * 1.34e6)
    assert p["Fc"] == pytest.approx(2.24e4)
    assert el_centro_8s["params_initial"]["sigma0"] == pytest.approx(0.7 * 0.96 * 1.34e6)


def test_wrong_model_without_updating_is_visibly_wrong(el_centro_8s):
    # the -30 % stiffness changes the periods by ~1/sqrt(0.7): the response drifts out of phase
    assert el_centro_8s["variants"]["none"]["J4_percent"]["floor3"] > 10.0


def test_stepwise_equals_fused():
    """Same numbers from both engines (XLA compiles the two differently, so they agree
    to rounding, not bit for bit): signals to 1e-8 of their amplitude, metrics to 1e-8."""
    built = lf.build(lf.LugreFrameConfig(duration=1.0))
    fused, _ = run_loop(built, "fused")
    stepwise, _ = run_loop(built, "stepwise")

    def close(a, b):
        a, b = np.asarray(a), np.asarray(b)
        np.testing.assert_allclose(a, b, rtol=0, atol=1e-8 * np.max(np.abs(b)))

    for key in ("displacement", "velocity", "acceleration"):
        close(stepwise["ns"][key], fused["ns"][key])
    close(stepwise["fast"]["force"], fused["fast"]["force"])
    close(stepwise["update"]["estimate"], fused["update"]["estimate"])
    reference, _ = built.reference()
    from rths_ident import metrics

    for i in range(3):
        j4_fused = metrics.j4_global_error(reference[:, i], fused["ns"]["displacement"][:, i])
        j4_step = metrics.j4_global_error(reference[:, i], stepwise["ns"]["displacement"][:, i])
        assert j4_step == pytest.approx(j4_fused, rel=1e-8)
    j2 = [metrics.j2_tracking_error(lg["fast"]["target"].ravel(), lg["fast"]["measured"].ravel())
          for lg in (fused, stepwise)]
    # J2 [%] is an rms difference of two signals that agree to 1e-8 of their amplitude:
    # the engines' J2 agree to ~1e-8 of 100 %, not to 1e-8 of J2 itself (0.9 %)
    assert j2[1] == pytest.approx(j2[0], abs=1e-6)


def test_bad_configuration_names_the_field():
    with pytest.raises(ParameterError, match="updating"):
        lf.LugreFrameConfig(updating="kalman")
    with pytest.raises(ParameterError, match="fast_rate/slow_rate"):
        lf.LugreFrameConfig(fast_rate=4000, slow_rate=60)
    with pytest.raises(ParameterError, match="floor mass"):
        lf.LugreFrameConfig(record="northridge_1994")
    with pytest.raises(ParameterError, match="duration"):
        lf.build(dataclasses.replace(lf.LugreFrameConfig(), duration=100.0))


def test_seed001_virtual_test_single_rate_ideal_actuator():
    """Seed 001's virtual hybrid simulation (no actuator, 4096 Hz single rate), Scenario 1.

    With the true parameters in the NS (oracle) the partitioned loop must reproduce the
    monolithic frame (digest 001 §9 check 5, here with the nonlinear column); with
    updating, the three parameters converge (thesis: F_C within ~1 s after yield for El
    Centro S1) and the wrong model's error disappears.
    """
    cfg = lf.LugreFrameConfig(duration=12.0, fast_rate=4096.0, slow_rate=4096.0, transfer_system="ideal",
                              compensation="none", sensor_noise=False, initial_error="scenario1")
    result = lf.run_scenario(cfg, RunOptions(engine="fused", compare=True))
    v = result["variants"]
    assert v["oracle"]["J4_percent"]["floor3"] < 1e-3
    assert v["oracle"]["J4_force_percent"] < 0.1
    # the estimators issue's target: within 2 % by the end of the record (measured on 12 s
    # with the 10 s RLS memory: σ0 0.06 %, F_C 0.07 %, σ3 0.71 %; full record ≤ 0.15 %)
    for name, err in result["param_error_percent"].items():
        assert err < 2.0, (name, err)
    assert result["convergence_time_s"]["Fc"] < 4.0
    assert v["rls"]["J4_percent"]["floor3"] < 0.1 * v["none"]["J4_percent"]["floor3"]


def test_ukf_updating_meets_the_same_acceptance():
    result = lf.run_scenario(lf.LugreFrameConfig(duration=8.0, updating="ukf"), RunOptions(engine="fused", compare=True))
    v = result["variants"]
    roof = {m: v[m]["J4_percent"]["floor3"] for m in v}
    assert set(roof) == {"ukf", "none", "oracle"}
    assert roof["ukf"] <= 0.5 * roof["none"]
    assert roof["ukf"] <= 1.5 * roof["oracle"]
    for name, err in result["param_error_percent"].items():
        assert err <= 5.0, (name, err)


def test_fused_loop_vmaps_over_specimens():
    """A batch of specimens through one vmap-ed fused loop equals the runs one by one."""
    import jax
    import jax.numpy as jnp

    from rths_ident.hybrid.loop.engine import run_fused

    built = lf.build(lf.LugreFrameConfig(duration=1.0))
    initial = initial_loop_state(built)
    ag = jnp.asarray(built.ground_accel)
    base_params = fast_params(built.fast_side)
    functions = slow_step_functions(built)
    spec = base_params["specimen"]
    scales = np.array([0.9, 1.15])
    batch = jax.tree_util.tree_map(lambda leaf: jnp.stack([leaf, leaf]), spec)
    batch = dataclasses.replace(batch, Fc=spec.Fc * scales)
    axes = jax.tree_util.tree_map(lambda _: None, base_params)
    axes["specimen"] = jax.tree_util.tree_map(lambda _: 0, spec)
    initial_b = jax.tree_util.tree_map(lambda leaf: jnp.stack([leaf, leaf]), initial)
    run = jax.jit(jax.vmap(lambda fp, st: run_fused(functions, fp, st, ag)[1], in_axes=(axes, 0)))
    logs_b = run(dict(base_params, specimen=batch), initial_b)
    for i, s in enumerate(scales):
        one = jax.jit(lambda fp: run_fused(functions, fp, initial, ag)[1])(
            dict(base_params, specimen=dataclasses.replace(spec, Fc=spec.Fc * s)))
        np.testing.assert_allclose(logs_b["fast"]["force"][i], one["fast"]["force"], rtol=0,
                                   atol=1e-8 * float(np.max(np.abs(one["fast"]["force"]))))
        np.testing.assert_allclose(logs_b["ns"]["displacement"][i], one["ns"]["displacement"], rtol=0,
                                   atol=1e-8 * float(np.max(np.abs(one["ns"]["displacement"]))))


def test_each_variant_reports_what_its_numerical_substructure_used(el_centro_8s):
    """``none`` keeps the wrong guess and ``oracle`` the truth in the NS whatever the
    (watching) identifier ends with; with updating the NS ends with the identified values."""
    v = el_centro_8s["variants"]
    for name, guess in el_centro_8s["params_initial"].items():
        assert v["none"]["ns_params_final"][name] == pytest.approx(guess, rel=1e-12)
        assert v["oracle"]["ns_params_final"][name] == pytest.approx(el_centro_8s["params_true"][name], rel=1e-12)
        assert v["rls"]["ns_params_final"][name] == pytest.approx(v["rls"]["params_final"][name], rel=1e-12)
        assert v["none"]["params_final"][name] != pytest.approx(guess, rel=0.05)  # it did identify meanwhile
