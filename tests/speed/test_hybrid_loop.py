"""lugre-frame's vmap-ed batches (``rths-ident bench --only batch``): the same numbers as
one run at a time, and the batch's fast loops compiled as single kernels."""

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from rths_ident import small_loop_kernels
from rths_ident.speed.hybrid_loop import batched_fused_runner, per_simulation, scattered_specimens
from rths_ident.hybrid.loop.engine import make_fused_runner
from rths_ident.hybrid.loop.assembled import initial_loop_state, slow_step_functions
from rths_ident.scenarios import lugre_frame as lf
from rths_ident.hybrid.fast_side.fast_chunk import fast_params

# 8 members: the batch size at which XLA would hand the QP projection's batched
# multiply-sums to a library fusion (test_the_batch_fast_loops_are_single_kernels)
SCATTER = np.vstack([[0.85, 1.1, 1.15], [1.0, 1.0, 1.0], [1.18, 0.82, 0.9],
                     np.random.default_rng(7).uniform(0.8, 1.2, size=(5, 3))])


@pytest.fixture(scope="module")
def short_test():
    built = lf.build(lf.LugreFrameConfig(duration=0.3))
    return built, initial_loop_state(built), fast_params(built.fast_side)


@pytest.fixture(scope="module")
def batch_inputs(short_test):
    built, initial, base = short_test
    batch_params = dict(base, specimen=scattered_specimens(base["specimen"], SCATTER))
    n = SCATTER.shape[0]
    batch_initial = jax.tree_util.tree_map(lambda leaf: jnp.broadcast_to(leaf, (n,) + jnp.shape(leaf)), initial)
    return batch_params, batch_initial


@pytest.fixture(scope="module")
def compiled_batch(short_test, batch_inputs):
    return batched_fused_runner(short_test[0]).lower(*batch_inputs).compile()


def test_scattered_specimens_scale_three_parameters_and_refuse_bad_shapes(short_test):
    spec = short_test[2]["specimen"]
    batch = scattered_specimens(spec, SCATTER)
    np.testing.assert_array_equal(batch.Fc, spec.Fc * SCATTER[:, 1])
    np.testing.assert_array_equal(batch.sigma1, np.full(len(SCATTER), spec.sigma1))
    with pytest.raises(ValueError, match="scatter must be an n × 3"):
        scattered_specimens(spec, np.ones(3))


@pytest.mark.slow
def test_a_batch_gives_each_member_its_one_by_one_run(short_test, batch_inputs, compiled_batch):
    """The independent implementation: the same engine run once per specimen (no vmap).
    Agreement to rounding (XLA may vectorise the batch's sums in another order)."""
    built, initial, base = short_test
    batch_params, batch_initial = batch_inputs
    _, batch_logs = compiled_batch(batch_params, batch_initial)
    single = make_fused_runner(slow_step_functions(built))
    ag = jnp.asarray(built.ground_accel)
    for i in range(SCATTER.shape[0]):
        member = dict(base, specimen=jax.tree_util.tree_map(lambda leaf: leaf[i], batch_params["specimen"]))
        _, logs = single(member, initial, ag)
        for path, one in jax.tree_util.tree_leaves_with_path(logs):
            batched = np.asarray(_leaf(batch_logs, path))[i]
            one = np.asarray(one)
            if one.dtype.kind != "f":
                np.testing.assert_array_equal(batched, one, err_msg=jax.tree_util.keystr(path))
                continue
            scale = max(float(np.max(np.abs(one), initial=0.0)), 1e-300)
            assert np.max(np.abs(batched - one), initial=0.0) <= 1e-9 * scale, jax.tree_util.keystr(path)
    # the members differ: the scatter reaches the specimen's force
    force = np.asarray(batch_logs["fast"]["force"])
    assert np.max(np.abs(force[0] - force[2])) > 1e-3 * np.max(np.abs(force[0]))


def _leaf(tree, path):
    for key in path:
        tree = tree[key.key] if hasattr(key, "key") else tree[key.idx]
    return tree


def test_the_batch_loops_are_single_kernels(compiled_batch):
    """Every loop of the batched program — the fast loops and the record's loop with the
    NS's α-OS solve (small_linalg.solve) — is one kernel: nothing is dispatched kernel by
    kernel (a library fusion, a dot or a LAPACK call would bring that back)."""
    loops = small_loop_kernels.loop_kernels(compiled_batch.as_text())
    fast = [loop for loop in loops if "/while/body/closed_call/while" in loop.op_name]
    assert fast, [loop.op_name for loop in loops]
    thunked = {loop.op_name.split("vmap()/", 1)[-1] for loop in loops if not loop.single_kernel}
    assert thunked == set()


def test_per_simulation_divides_by_the_runs_of_a_call_and_of_its_threads():
    """Calls that wait (no CPU, so the figures hold on a loaded machine): one run 4 ms,
    a batch of 4 in 8 ms (2 ms per run: 2×), the batch on 2 threads at once (1 ms per
    run: 4×)."""
    import time

    r = per_simulation(lambda: time.sleep(0.004), {4: lambda: time.sleep(0.008)}, repeats=3, threads=2)
    assert r["threads"] == 2
    assert 1.6 < r["batches"][4]["speedup_min"] <= 2.05
    assert 3.0 < r["threaded"][4]["speedup_min"] <= 4.1
    assert per_simulation(lambda: None, {2: lambda: None}, repeats=1, threads=1)["threaded"] == {}
