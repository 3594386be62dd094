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
