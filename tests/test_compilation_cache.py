"""Tests of rths_ident.compilation_cache: where the persistent compilation cache lives,
how it is switched off, and that a compiled program lands there and is read back by a
second process (JAX's own cache-hit counter)."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from rths_ident import compilation_cache as cc


def test_default_folder_is_under_the_users_cache_home():
    home = str(Path.home())
    assert cc.cache_directory({}) == Path(home) / ".cache" / "rths_ident" / "jax"
    assert cc.cache_directory({"XDG_CACHE_HOME": "/tmp/xdg"}) == Path("/tmp/xdg/rths_ident/jax")


def test_environment_variable_names_the_folder_or_switches_it_off():
    assert cc.cache_directory({"RTHS_IDENT_JAX_CACHE": "/tmp/mine", "XDG_CACHE_HOME": "/x"}) == Path("/tmp/mine")
    for off in ("off", "OFF", "0", "false", "no"):
        assert cc.cache_directory({"RTHS_IDENT_JAX_CACHE": off}) is None
        assert cc.enable_default({"RTHS_IDENT_JAX_CACHE": off}) is None


def test_cli_flag_is_documented_in_help(capsys):
    from rths_ident.cli import main

    assert main(["--help"]) == 0
    assert "--no-compile-cache" in capsys.readouterr().out


@pytest.mark.slow
def test_second_process_reads_the_program_the_first_one_wrote(tmp_path):
    script = textwrap.dedent(f"""
        import jax, jax.numpy as jnp
        from jax._src import monitoring
        from rths_ident import compilation_cache
        hits = []
        monitoring.register_event_listener(
            lambda event, **kw: hits.append(event) if event == "/jax/compilation_cache/cache_hits" else None)
        compilation_cache.enable({str(tmp_path)!r})
        jax.jit(lambda x: jnp.sin(x) * 2.0 + 1.0).lower(jnp.ones(3)).compile()
        print(len(hits))
    """)
    runs = [subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
            for _ in range(2)]
    for run in runs:
        assert run.returncode == 0, run.stderr
    assert int(runs[0].stdout.split()[-1]) == 0  # compiled and written
    assert any(tmp_path.iterdir())
    assert int(runs[1].stdout.split()[-1]) >= 1  # read back
