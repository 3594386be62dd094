"""The virtual site told when its target arrived (a paced run): the predictor–corrector
predicts until that fast tick, exactly as a site built with that arrival tick does."""

import dataclasses

import numpy as np
import pytest

from rths_ident.hybrid.loop.assembled import initial_fast_state
from rths_ident.scenarios import lugre_frame
from rths_ident.hybrid.fast_side.virtual_site import VirtualSite

pytestmark = pytest.mark.slow


def test_measured_arrival_equals_a_site_built_with_that_arrival_tick():
    test = lugre_frame.build(lugre_frame.LugreFrameConfig(duration=0.4))
    side = test.fast_side
    assert side.transition.params.arrival_tick == 40  # the configured half step
    late = side._replace(transition=side.transition._replace(
        params=dataclasses.replace(side.transition.params, arrival_tick=70)))
    told = VirtualSite(side, test.seed)
    built = VirtualSite(late, test.seed)
    on_time = VirtualSite(side, test.seed, state=initial_fast_state(side, test.seed))
    assert told.uses_arrival
    targets = 2e-3 * np.sin(2 * np.pi * 1.5 * 0.02 * np.arange(1, 11))
    # 70 ticks of 0.25 ms = 17.5 ms: after 0.6·Δt = 12 ms, so the command slows down
    for target in targets:
        a = told.step(target, arrival_s=69.5 / 4000).log
        b = built.step(target).log
        c = on_time.step(target).log
        np.testing.assert_allclose(a["command"], b["command"], rtol=1e-12, atol=1e-15)
        np.testing.assert_allclose(a["measured"], b["measured"], rtol=1e-12, atol=1e-15)
    assert np.max(np.abs(a["target"] - c["target"])) > 1e-3 * np.max(np.abs(c["target"]))


def test_the_flagship_record_loop_compiles_to_one_kernel():
    """The fused loop over the whole record — the fast chunks, the identifier, the α-OS
    substructure step with its solve, the hook — has no dot and no LAPACK call, so XLA
    emits the record's loop itself as one kernel (small_loop_kernels.loop_kernels): a
    solve or a product written with ``@`` in the slow step would bring back the
    per-kernel dispatch of every slow step (0.50 → 0.29 µs per fast step when it left,
    docs/performance.md)."""
    import jax  # noqa: PLC0415

    from rths_ident import small_loop_kernels  # noqa: PLC0415
    from rths_ident.hybrid.loop.engine import make_fused_runner  # noqa: PLC0415
    from rths_ident.hybrid.loop.assembled import loop_arguments, slow_step_functions  # noqa: PLC0415

    test = lugre_frame.build(lugre_frame.LugreFrameConfig(duration=0.2))
    params, initial = loop_arguments(test)
    runner = jax.jit(make_fused_runner(slow_step_functions(test)))
    text = runner.lower(params, initial, jax.numpy.asarray(test.ground_accel)).compile().as_text()
    assert " dot(" not in text and "custom-call(" not in text
    loops = small_loop_kernels.loop_kernels(text)
    assert loops and all(loop.single_kernel for loop in loops), [loop for loop in loops if not loop.single_kernel]


def test_the_flagship_fast_chunk_compiles_to_single_kernels():
    """The whole fast side of a slow step (80 fast steps: transition, dAMB, actuator,
    specimen, sensors, constrained-RLS identifier with its QP projection) has no dot and no
    LAPACK call, so XLA emits its loops as single kernels (small_loop_kernels): a dot or
    a solve added to a fast-side component would bring back the per-kernel dispatch
    that cost 2.45 µs per fast step (docs/performance.md)."""
    import jax  # noqa: PLC0415

    from rths_ident.hybrid.fast_side.fast_chunk import fast_params, make_fast_chunk  # noqa: PLC0415

    test = lugre_frame.build(lugre_frame.LugreFrameConfig(duration=0.1))
    side = test.fast_side
    state = initial_fast_state(side, test.seed)
    text = jax.jit(make_fast_chunk(side)).lower(fast_params(side), state, jax.numpy.zeros(1)).compile().as_text()
    assert " dot(" not in text and "custom-call(" not in text
    assert "xla_cpu_small_call" in text


def test_the_site_call_is_few_enough_kernels_to_run_on_the_calling_thread():
    """XLA:CPU runs a program of more than 8 kernels concurrently, handing kernels to its
    worker threads and waiting for them; the packed site call, compiled without XLA's
    loop-invariant code motion, is its copies, a few small fusions, the one-kernel loop
    and the join of the carry and the outputs into one result. With that pass the entry held 18 kernels on this site (the body's iotas, index
    vectors and random-generator counters lifted out of the loop, one kernel each)."""
    from rths_ident.packed_calls import SEQUENTIAL_KERNELS, entry_kernels  # noqa: PLC0415

    test = lugre_frame.build(lugre_frame.LugreFrameConfig(duration=0.1))
    site = VirtualSite(test.fast_side, test.seed)
    kernels = entry_kernels(site._program._compiled.as_text())
    assert len(kernels) <= SEQUENTIAL_KERNELS, kernels
    assert kernels.count("call") == 1 and "while" not in kernels  # the loop: one small-loop kernel
    assert kernels[-2:] == ["call", "concatenate"]  # the state's join after the loop


def test_the_packed_call_gives_the_numbers_of_the_chunk_jitted_on_its_trees():
    """VirtualSite's one packed call per slow step against the same step function jitted
    on the fast side's trees (parameters, state, estimate as pytrees: the unpacked path).
    Packed as it is (``one_kernel=False``) the numbers agree to 1e-12; the site's call,
    emitted as one kernel by XLA's other code generator, agrees to 1e-11 m over 20 steps."""
    import jax  # noqa: PLC0415

    from rths_ident.hybrid.fast_side.fast_chunk import fast_params  # noqa: PLC0415
    from rths_ident.hybrid.fast_side.virtual_site import _site_step  # noqa: PLC0415
    from rths_ident.packed_calls import PackedProgram  # noqa: PLC0415
    from rths_ident.typed_leaves import canonical_state  # noqa: PLC0415

    test = lugre_frame.build(lugre_frame.LugreFrameConfig(duration=0.4))
    side = test.fast_side
    site = VirtualSite(side, test.seed)
    unpacked = jax.jit(_site_step(side))
    params, state = fast_params(side), canonical_state(initial_fast_state(side, test.seed))
    plain = PackedProgram(_site_step(side), params, state, 2, one_kernel=False)
    plain.inputs[1] = -1.0
    targets = 2e-3 * np.sin(2 * np.pi * 1.5 * 0.02 * np.arange(1, 21))
    for target in targets:
        reading = site.step(target)
        state, out = unpacked(params, state, np.array([target, -1.0]))
        plain.inputs[0] = target
        packed = plain()
        for name in ("command", "measured", "target"):
            np.testing.assert_allclose(packed["log"][name], np.asarray(out["log"][name]), rtol=1e-12, atol=1e-15)
            # one kernel: differences that vary from run to run (seen by step 20 on this 2 mm
            # motion: 3e-15, 3e-13, 1.1e-12 m; not yet explained — the same comparison held
            # to 1e-12 relative before the smooth commands' Hermite correction): bounded here
            np.testing.assert_allclose(reading.log[name], np.asarray(out["log"][name]), rtol=0, atol=1e-11)
        np.testing.assert_allclose(packed["force"], np.asarray(out["force"]), rtol=1e-12, atol=1e-15)
        np.testing.assert_allclose(packed["estimate"]["theta"], np.asarray(out["estimate"]["theta"]), rtol=1e-12,
                                   atol=1e-15)
        np.testing.assert_allclose(reading.force, np.asarray(out["force"]), rtol=1e-9, atol=1e-9)
        np.testing.assert_allclose(reading.estimate.theta, np.asarray(out["estimate"]["theta"]), rtol=1e-9)
    assert np.max(np.abs(reading.log["measured"])) > 1e-4  # the actuator moved
    assert site.last_command == pytest.approx(float(np.asarray(out["log"]["command"])[-1]), abs=1e-11)


def test_a_site_with_other_params_equals_a_site_built_with_them():
    """``with_params``: the compiled step shared, another extra delay swapped in
    (hybrid.fast_side.command_delay) — the same logs as a site compiled with that delay,
    and unlike the site it came from."""
    from rths_ident.hybrid.fast_side.command_delay import delayed_compensation
    from rths_ident.hybrid.fast_side.fast_chunk import fast_params

    test = lugre_frame.build(lugre_frame.LugreFrameConfig(duration=0.4))
    side = test.fast_side
    side = side._replace(compensation=delayed_compensation(side.compensation, 0.01, side.fast_rate))
    params = fast_params(side)
    delayed = dict(params, compensation=params["compensation"]._replace(delay=np.float64(0.0063)))
    nominal = VirtualSite(side, test.seed)
    swapped = nominal.with_params(delayed, initial_fast_state(side, test.seed))
    built = VirtualSite(side, test.seed, params=delayed)
    targets = 2e-3 * np.sin(2 * np.pi * 1.5 * 0.02 * np.arange(1, 11))
    for target in targets:
        a, b, c = swapped.step(target).log, built.step(target).log, nominal.step(target).log
        np.testing.assert_array_equal(a["command"], b["command"])
        np.testing.assert_array_equal(a["measured"], b["measured"])
    assert np.max(np.abs(a["command"] - c["command"])) > 1e-3 * np.max(np.abs(c["command"]))
