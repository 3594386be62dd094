"""Engine plumbing on a partitioned linear SDOF whose monolithic answer is known.

The NS is mass m, damper c and spring k1 integrated by explicit Newmark (β=0, γ=1/2);
the "specimen" is a spring k2 on the fast side, read by an ideal actuator. Partitioned
with an exact loop, this must equal the monolithic explicit Newmark of (m, c, k1+k2),
written here independently as a plain NumPy loop.
"""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import rths_ident  # noqa: F401
from rths_ident.hybrid.engine import (
    LoopAborted,
    LoopState,
    SlowStepFunctions,
    make_fused_runner,
    make_slow_stepper,
    run_stepwise,
)

M, C, K1, K2, DT, RATIO = 2.0, 0.3, 50.0, 30.0, 0.01, 8


def _fast_chunk(fast_params, fast_state, target):
    def body(s, i):
        x = s + (target - s) * (i + 1) / RATIO  # ideal ramp to the target
        return x, K2 * x

    x_end, forces = jax.lax.scan(body, fast_state, jnp.arange(RATIO))
    return x_end, {"force": forces}, forces[-1]


def _ns_step(ns_params, ns_state, force, ag):
    u, v, a = ns_state
    # corrector of explicit Newmark for the step whose displacement u was imposed
    a_new = (-M * ag - force - ns_params["k1"] * u - C * (v + 0.5 * DT * a)) / (M + 0.5 * DT * C)
    v_new = v + 0.5 * DT * (a + a_new)
    u_next = u + DT * v_new + 0.5 * DT**2 * a_new  # predictor for the next step
    return (u_next, v_new, a_new), u_next, {"u": u}


def _no_update(ns_params, hook_state, fast_state, feedback, k):
    return ns_params, hook_state, {}


FUNCS = SlowStepFunctions(_fast_chunk, _ns_step, _no_update)


def _monolithic(ag):
    u, v, a = 0.0, 0.0, 0.0
    out = []
    for k in range(len(ag)):
        u_new = u + DT * v + 0.5 * DT**2 * a
        a_new = (-M * ag[k] - (K1 + K2) * u_new - C * (v + 0.5 * DT * a)) / (M + 0.5 * DT * C)
        v = v + 0.5 * DT * (a + a_new)
        u, a = u_new, a_new
        out.append(u)
    return np.array(out)


def _initial():
    return LoopState(ns_state=(0.0, 0.0, 0.0), fast_state=jnp.asarray(0.0), slow_input=jnp.asarray(0.0),
                     ns_params={"k1": jnp.asarray(K1)}, hook_state=())


def test_partitioned_equals_monolithic_and_fused_equals_stepwise():
    t = np.arange(400) * DT
    ag = np.sin(2 * np.pi * 1.3 * t) * np.exp(-0.2 * t)
    final, logs = make_fused_runner(FUNCS)(None, _initial(), jnp.asarray(ag))
    # the NS logs the displacement whose force closed each step: u_{k+1}
    reference = _monolithic(ag)
    np.testing.assert_allclose(np.asarray(logs["ns"]["u"]), reference, rtol=1e-10, atol=1e-14)
    final_s, logs_s = run_stepwise(make_slow_stepper(FUNCS), None, _initial(), ag)
    np.testing.assert_allclose(logs_s["ns"]["u"], np.asarray(logs["ns"]["u"]), rtol=1e-12, atol=0)
    assert logs_s["fast"]["force"].shape == (400, RATIO)


def test_stepwise_abort_keeps_logs():
    ag = np.ones(50)
    with pytest.raises(LoopAborted) as info:
        run_stepwise(make_slow_stepper(FUNCS), None, _initial(), ag,
                     check=lambda log, k: "stop" if k == 9 else None)
    assert info.value.slow_index == 9
    assert info.value.logs["ns"]["u"].shape == (10,)
    np.testing.assert_allclose(info.value.logs["ns"]["u"], _monolithic(ag)[:10], rtol=1e-10, atol=1e-14)
