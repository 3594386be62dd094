"""What importing rths_ident does to the process (float64, nothing else) and what
configure() does (XLA's small-loop kernels, before the first JAX computation)."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap

import pytest


def _python(code: str, **env) -> str:
    environ = {k: v for k, v in os.environ.items() if k not in ("XLA_FLAGS", "RTHS_IDENT_SMALL_LOOP_BYTES")}
    environ.update(env)
    run = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, timeout=120,
                         env=environ)
    assert run.returncode == 0, run.stderr
    return run.stdout.strip()


def test_import_switches_float64_on_and_leaves_xla_flags_alone():
    out = _python("""
        import os, jax
        import rths_ident
        print(jax.config.jax_enable_x64, repr(os.environ.get("XLA_FLAGS", "")))
    """)
    assert out == "True ''"


def test_configure_sets_the_small_loop_kernels_before_the_first_computation():
    out = _python("""
        import os
        import rths_ident
        from rths_ident import small_loop_kernels
        print(rths_ident.configure(), "xla_cpu_small_while_loop_byte_threshold" in os.environ["XLA_FLAGS"],
              small_loop_kernels.active())
    """)
    assert out == "{'small_loop_kernels': 'on', 'synchronous_cpu_calls': 'on'} True True"


def test_configure_after_a_computation_says_it_is_too_late():
    out = _python("""
        import jax.numpy as jnp
        import rths_ident
        from rths_ident import small_loop_kernels
        jnp.ones(3).sum().block_until_ready()
        done = rths_ident.configure()
        print(done["small_loop_kernels"][:8], done["synchronous_cpu_calls"][:8], small_loop_kernels.active())
    """)
    assert out == "too late too late False"


def test_the_environment_switches_the_kernels_off():
    out = _python("""
        import rths_ident
        print(rths_ident.configure())
    """, RTHS_IDENT_SMALL_LOOP_BYTES="off")
    assert out == "{'small_loop_kernels': 'off', 'synchronous_cpu_calls': 'on'}"


def test_compiled_calls_run_on_the_calling_thread_unless_the_environment_says_otherwise():
    """configure() switches JAX's asynchronous CPU dispatch off (the step-wise loop waits
    for every call: a hand-off to a worker thread and back is pure latency);
    RTHS_IDENT_CPU_ASYNC_DISPATCH=on keeps JAX's default."""
    script = """
        import rths_ident
        from jax._src import xla_bridge
        done = rths_ident.configure()
        print(done["synchronous_cpu_calls"], xla_bridge._CPU_ENABLE_ASYNC_DISPATCH.value)
    """
    assert _python(script) == "on False"
    assert _python(script, RTHS_IDENT_CPU_ASYNC_DISPATCH="on") == "off True"


def test_a_component_refuses_to_build_in_float32():
    out = _python("""
        import jax
        import rths_ident
        from rths_ident.errors import ParameterError
        from rths_ident.models import BilinearParams
        jax.config.update("jax_enable_x64", False)
        try:
            BilinearParams(k=1.0e6, fy=1.0e3, b=0.05)
        except ParameterError as error:
            print(error)
    """)
    assert out.startswith("BilinearParams: JAX is computing in float32") and "jax_enable_x64" in out


@pytest.mark.parametrize("name", ["load_test", "HybridTest"])
def test_the_top_level_api_is_imported_when_used(name):
    out = _python(f"""
        import sys
        import rths_ident
        before = "rths_ident.api" in sys.modules
        getattr(rths_ident, {name!r})
        print(before, "rths_ident.api" in sys.modules)
    """)
    assert out == "False True"
