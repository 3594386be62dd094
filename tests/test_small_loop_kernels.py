"""XLA's small-loop kernels: the XLA_FLAGS option we add, and that it is in effect."""

import os
import subprocess
import sys

import pytest

from rths_ident import small_loop_kernels as slk

OPTION = "xla_cpu_small_while_loop_byte_threshold"


def test_threshold_from_the_environment():
    assert slk.requested_threshold({}) == slk.DEFAULT_THRESHOLD_BYTES
    assert slk.requested_threshold({"RTHS_IDENT_SMALL_LOOP_BYTES": "off"}) is None
    assert slk.requested_threshold({"RTHS_IDENT_SMALL_LOOP_BYTES": "0"}) is None
    assert slk.requested_threshold({"RTHS_IDENT_SMALL_LOOP_BYTES": "2e6"}) == 2_000_000
    with pytest.raises(ValueError, match="RTHS_IDENT_SMALL_LOOP_BYTES"):
        slk.requested_threshold({"RTHS_IDENT_SMALL_LOOP_BYTES": "lots"})
    with pytest.raises(ValueError, match="≥ 0"):
        slk.requested_threshold({"RTHS_IDENT_SMALL_LOOP_BYTES": "-5"})


def test_flags_are_added_merged_or_left_alone():
    assert slk.with_threshold("", 1000) == f"--xla_backend_extra_options={OPTION}=1000"
    assert slk.with_threshold("--xla_force_host_platform_device_count=2", 1000) == (
        f"--xla_force_host_platform_device_count=2 --xla_backend_extra_options={OPTION}=1000")
    merged = slk.with_threshold("--xla_backend_extra_options=xla_cpu_foo=1", 1000)
    assert merged == f"--xla_backend_extra_options=xla_cpu_foo=1,{OPTION}=1000"
    mine = f"--xla_backend_extra_options={OPTION}=5"
    assert slk.with_threshold(mine, 1000) == mine  # the user's own setting wins


def test_library_reductions_are_switched_off_unless_the_user_set_them():
    assert slk.without_library_reductions("") == "--xla_cpu_experimental_ynn_fusion_type=-reduce"
    assert slk.without_library_reductions("--xla_foo=1") == "--xla_foo=1 --xla_cpu_experimental_ynn_fusion_type=-reduce"
    mine = "--xla_cpu_experimental_ynn_fusion_type=dot"
    assert slk.without_library_reductions(mine) == mine
    env = {"XLA_FLAGS": mine}
    slk.enable(env)
    assert env["XLA_FLAGS"] == f"{mine} --xla_backend_extra_options={OPTION}={slk.DEFAULT_THRESHOLD_BYTES}"


# a vmap-ed loop whose body is a batched multiply-sum of the QP projection's shapes (27
# candidate 3×3 matrices): what XLA hands to YNNPACK as a custom fusion when allowed to
BATCHED_PRODUCT_LOOP = """
import rths_ident, jax, jax.numpy as jnp
rths_ident.configure()
from rths_ident import small_loop_kernels as s
def body(a, _):
    return jnp.sum(a[:, :, :, None] * a[0][None, None, :, :], axis=2) * 0.5, None
f = jax.jit(jax.vmap(lambda a: jax.lax.scan(body, a, None, length=4)[0]))
print([loop.single_kernel for loop in s.loop_kernels(f.lower(jnp.ones((8, 27, 3, 3))).compile().as_text())])
"""


@pytest.mark.parametrize("ynn_flags, expected", [(None, "[True]"),
                                                 ("--xla_cpu_experimental_ynn_fusion_type=reduce", "[False]")])
def test_a_batched_multiply_sum_loop_is_one_kernel_without_library_reductions(ynn_flags, expected):
    env = dict(os.environ)
    env.pop("XLA_FLAGS", None)
    env.pop("RTHS_IDENT_SMALL_LOOP_BYTES", None)
    if ynn_flags:
        env["XLA_FLAGS"] = ynn_flags
    out = subprocess.run([sys.executable, "-c", BATCHED_PRODUCT_LOOP], env=env, capture_output=True, text=True,
                         timeout=120)
    assert out.stdout.strip() == expected, out.stderr


def test_loop_kernels_finds_nested_loops_inside_a_kernel():
    import jax
    import jax.numpy as jnp

    def inner(c, _):
        return c * 0.5 + 1.0, None

    def outer(c, _):
        return jax.lax.scan(inner, c, None, length=3)[0], None

    text = jax.jit(lambda x: jax.lax.scan(outer, x, None, length=5)[0]).lower(jnp.zeros(512)).compile().as_text()
    loops = slk.loop_kernels(text)
    assert len(loops) == 2 and all(loop.single_kernel for loop in loops)
    assert sorted(loop.op_name.count("while") for loop in loops) == [1, 2]  # …/while, …/while/body/…/while


def test_in_effect_in_this_process():
    assert slk.active()


def test_switched_off_in_a_fresh_process():
    env = dict(os.environ, RTHS_IDENT_SMALL_LOOP_BYTES="off")
    env.pop("XLA_FLAGS", None)
    code = "import rths_ident; from rths_ident import small_loop_kernels as s; print(s.active())"
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert out.stdout.strip() == "False", out.stderr
