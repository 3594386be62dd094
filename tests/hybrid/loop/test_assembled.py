"""The fused loop's set-up (rths_ident.hybrid.loop.assembled): the initial state of every
variant comes from one compiled program, with the values the eager operations give."""

import logging

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from rths_ident.hybrid.loop.assembled import initial_loop_state
from rths_ident.hybrid.loop.model_updating import hook_init
from rths_ident.scenarios import lugre_frame as lf
from rths_ident.hybrid.fast_side.fast_chunk import initial_fast_state


@pytest.fixture(scope="module")
def short_test():
    return lf.build(lf.LugreFrameConfig(duration=1.0, seed=7))


class _CompiledPrograms(logging.Handler):
    """Names of the XLA programs compiled while it listens (JAX's compile log)."""

    def __init__(self):
        super().__init__()
        self.names = []

    def emit(self, record):
        message = record.getMessage()
        if message.startswith("Finished XLA compilation of"):
            self.names.append(message.split()[4])


@pytest.mark.parametrize("variant", ["updating", "none", "oracle"])
def test_initial_state_equals_the_eager_computation(short_test, variant):
    """The one program's state against the same functions run eagerly, operation by
    operation (how the step-wise engine builds its site): equal to rounding."""
    ns = short_test.native_ns
    dt = 1.0 / short_test.slow_rate
    state = initial_loop_state(short_test, variant)
    params = ns.params_true if variant == "oracle" else ns.params
    values = short_test.true_values if variant == "oracle" else short_test.initial_values
    ns_state = ns.integrator.init(params, dt)
    eager = (ns_state, initial_fast_state(short_test.fast_side, short_test.seed),
             ns.integrator.predicted_displacement(params, ns_state, dt)[jnp.asarray(ns.interface_dofs)],
             hook_init(jnp.asarray(values, jnp.float64)))
    compiled = (state.ns_state, state.fast_state, state.slow_input, state.hook_state[0])
    for mine, ref in zip(jax.tree_util.tree_leaves(compiled), jax.tree_util.tree_leaves(eager)):
        mine, ref = np.asarray(mine), np.asarray(ref)
        assert mine.shape == ref.shape and mine.dtype == ref.dtype
        if np.issubdtype(ref.dtype, np.floating):
            np.testing.assert_allclose(mine, ref, rtol=1e-12, atol=1e-300)
        else:
            np.testing.assert_array_equal(mine, ref)


def test_the_three_variants_compile_one_program():
    """A first run's set-up used to compile ~50 small programs (one per eager
    operation); the three variants' initial states now take a single one."""
    test = lf.build(lf.LugreFrameConfig(duration=1.5, seed=11))  # a key no other test compiled
    listener = _CompiledPrograms()
    logger = logging.getLogger("jax")
    logger.addHandler(listener)
    try:
        with jax.log_compiles():
            for variant in ("updating", "none", "oracle"):
                jax.block_until_ready(initial_loop_state(test, variant))
    finally:
        logger.removeHandler(listener)
    assert listener.names == ["jit(initial_state)"]


def test_the_run_traces_the_loop_once_and_compiles_what_it_traced(monkeypatch):
    """``rths-ident run`` traces the loop on its main thread (prepared_fused_runner) and
    compiles it on a worker (compiled_fused_runner without arguments): the compilation
    is of the prepared program, not a second trace."""
    from rths_ident import exported_programs
    from rths_ident.hybrid.loop import assembled as assembled
    from rths_ident.hybrid.loop.assembled import compiled_fused_runner, prepared_fused_runner

    traced = []
    prepare = exported_programs.prepare_program
    monkeypatch.setattr(exported_programs, "prepare_program",
                        lambda name, *args, **kwargs: traced.append(name) or prepare(name, *args, **kwargs))
    test = lf.build(lf.LugreFrameConfig(duration=0.5, seed=13))  # a key no other test compiled
    try:
        prepared = prepared_fused_runner(test)
        monkeypatch.setattr(prepared, "_compile_lowered", lambda options: ("compiled", options))
        assert compiled_fused_runner(test) == ("compiled", None)
        assert traced == ["fused-loop"]
    finally:
        for kind in ("fused", "fused-prepared"):
            assembled._CACHE.pop((kind, test.key), None)


def test_a_watched_fused_run_reports_every_step_after_the_compiled_call(short_test):
    """The fused engine has no step to report while it runs: after the compiled call, a
    watcher gets every slow step's log, equal to the stacked logs' row."""
    from rths_ident.hybrid.loop.assembled import run_loop  # noqa: PLC0415

    seen = []
    logs, _ = run_loop(short_test, "fused", progress=lambda k, log: seen.append((k, log)))
    assert [k for k, _ in seen] == list(range(len(short_test.time_slow)))
    k, log = seen[17]
    np.testing.assert_array_equal(log["fast"]["measured"], logs["fast"]["measured"][17])
    np.testing.assert_array_equal(log["update"]["estimate"], logs["update"]["estimate"][17])


# ------------------------------------------------------------------ the interlocks, run


#: lugre-frame's interlocks, each at its default (None: the actuator's stroke 0.15 m,
#: twice its velocity 3 m/s, its velocity 1.5 m/s, its force capacity 50.4 kN) or a value
SITE_INTERLOCKS = {"command_stroke": None, "command_velocity": None, "measured_stroke": None,
                   "measured_velocity": None, "force": None, "tracking_error": 1e-3}
ALL_LIMITS = (*SITE_INTERLOCKS, "ns_displacement")


def _only(name, value, **changes):
    """lugre-frame (1 s) with only interlock ``name`` on (``value``; None: its default)."""
    limits = {f"interlock_{other}": 1e30 for other in ALL_LIMITS}
    limits[f"interlock_{name}"] = value
    return lf.LugreFrameConfig(duration=1.0, interlock_identifier=False, **{**limits, **changes})


def _bad_gain(cfg, factor=5.0):
    """The test with its servo controller's proportional gain ×``factor`` (×5 makes the
    actuator's loop unstable: the classic bad gain). The actuator model's own latched
    limits are moved out of the way (the interlocks keep the values they took from them):
    what stops the test is the interlock."""
    import dataclasses

    test = lf.build(cfg)
    side = test.fast_side
    side = side._replace(actuator=dataclasses.replace(
        side.actuator, proportional_gain=factor * side.actuator.proportional_gain, stroke_limit=1e30,
        velocity_limit=1e30, force_limit=1e30))
    return test._replace(fast_side=side, key=("proportional gain", factor, test.key))


def _first_crossing(logs, name, limits, dt):
    """(fast sample, value) where ``name``'s quantity first crosses its limit, computed
    from the logs with NumPy (not with the monitor)."""
    fast = {k: np.asarray(logs["fast"][k], dtype=float).ravel() for k in ("command", "measured", "target", "force")}
    limit = getattr(limits, name)
    if name == "command_velocity":
        c = fast["command"]
        quantity = np.abs(np.diff(np.concatenate([[c[0]], c]))) / dt
        offset = 0
    elif name == "measured_velocity":
        span = round(limits.velocity_span / dt)
        m = fast["measured"]
        quantity, offset = np.abs(m[span:] - m[:-span]) / (span * dt), span
    elif name == "tracking_error":
        n = round(limits.tracking_window / dt)
        quantity, offset = np.convolve(np.abs(fast["target"] - fast["measured"]), np.ones(n) / n, "valid"), n - 1
    else:
        key = {"command_stroke": "command", "measured_stroke": "measured", "force": "force"}[name]
        quantity, offset = fast[key], 0
    over = np.flatnonzero(~np.isfinite(quantity) | (np.abs(quantity) > limit))
    return (int(over[0]) + offset, quantity[over[0]]) if over.size else (None, None)


@pytest.mark.parametrize("name", list(SITE_INTERLOCKS))
def test_a_bad_gain_trips_each_site_interlock_where_the_logs_cross_it(name):
    """The actuator's proportional gain ×5 (unstable): with only ``name`` on, the step-wise
    loop stops at the slow step where the logged quantity first crosses the limit (found
    here with NumPy on the logs the loop kept), the trip carries that value, the limit
    and the step's test time, and the specimen went through the safe stop."""
    from rths_ident.hybrid.loop.assembled import run_loop
    from rths_ident.hybrid.loop.engine import LoopAborted

    cfg = _only(name, SITE_INTERLOCKS[name])
    test = _bad_gain(cfg)
    with pytest.raises(LoopAborted) as info:
        run_loop(test, "stepwise", variant=cfg.variant)
    trip = info.value.trip
    dt = 1.0 / cfg.fast_rate
    sample, value = _first_crossing(info.value.logs, name, test.interlocks, dt)
    ratio = test.fast_side.ratio
    assert trip.name == name and trip.step == sample // ratio == info.value.slow_index
    assert trip.limit == getattr(test.interlocks, name)
    assert trip.value == pytest.approx(value, rel=1e-9)
    assert trip.time == pytest.approx(float(test.time_slow[trip.step]))
    assert str(info.value).startswith(trip.message())
    assert info.value.safe_stop_logs is not None  # the safe stop ran (hold, ramp, hold at zero)


def test_an_identifier_fed_garbage_trips_the_identifier_interlock():
    """seed 001's RLS (no projection) fed a force sensor whose ADC clips at ±1 N (2 bits:
    garbage) drives F̂_C below a tenth of its initial guess: the identifier-divergence
    interlock stops the loop at the first slow step whose estimate is out of that range
    (0.7 × 22.4 kN / 10, worked out from the test file's numbers), the others stay quiet."""
    import dataclasses

    from rths_ident.hybrid.loop.assembled import run_loop
    from rths_ident.hybrid.loop.engine import LoopAborted

    cfg = lf.LugreFrameConfig(duration=1.0, rls_setting="thesis")  # every interlock at the shipped defaults
    test = lf.build(cfg)
    side = test.fast_side
    side = side._replace(sensor_force=dataclasses.replace(side.sensor_force, adc_full_scale=1.0, adc_bits=2))
    test = test._replace(fast_side=side, key=("garbage force", test.key))
    with pytest.raises(LoopAborted) as info:
        run_loop(test, "stepwise", variant=cfg.variant)
    trip = info.value.trip
    lower_fc = (1 - 0.30) * 22400.0 / 10  # scenario2's −30 % guess of F_C = F_y, over the range factor 10
    estimates = np.asarray(info.value.logs["update"]["estimate"])
    first = int(np.flatnonzero(estimates[:, 1] < lower_fc)[0])
    assert (trip.name, trip.step, trip.detail) == ("identifier_divergence", first, "Fc below its physical range")
    assert trip.value == estimates[first, 1] and trip.limit == pytest.approx(lower_fc, rel=1e-12)


def test_the_clean_run_trips_nothing_and_its_margins_are_the_logs():
    """lugre-frame (1 s, step-wise) with every interlock on — the shipped defaults, a
    1 mm tracking error, a 5 cm NS bound, a 60 s watchdog — runs to its end; each logged
    quantity stays below its limit (NumPy on the logs)."""
    from rths_ident.hybrid.loop.assembled import run_loop

    cfg = lf.LugreFrameConfig(duration=1.0, interlock_tracking_error=1e-3, interlock_ns_displacement=0.05,
                              interlock_deadline=60.0)
    test = lf.build(cfg)
    logs, _ = run_loop(test, "stepwise", variant=cfg.variant)
    assert np.asarray(logs["ns"]["displacement"]).shape[0] == test.time_slow.size
    for name in SITE_INTERLOCKS:
        assert _first_crossing(logs, name, test.interlocks, 1.0 / cfg.fast_rate) == (None, None), name
    assert np.max(np.abs(logs["ns"]["displacement"])) < 0.05
