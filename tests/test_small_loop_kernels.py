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


def test_in_effect_in_this_process():
    assert slk.active()


def test_switched_off_in_a_fresh_process():
    env = dict(os.environ, RTHS_IDENT_SMALL_LOOP_BYTES="off")
    env.pop("XLA_FLAGS", None)
    code = "import rths_ident; from rths_ident import small_loop_kernels as s; print(s.active())"
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert out.stdout.strip() == "False", out.stderr
