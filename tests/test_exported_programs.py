"""Tests of rths_ident.exported_programs: a program traced once is stored, read back
for the same key, traced again for another key or other shapes, rewritten when its
file is damaged, and computes exactly what the traced program computes."""

from __future__ import annotations

import pickle
import subprocess
import sys
import textwrap
from typing import NamedTuple

import jax
import jax.numpy as jnp
import numpy as np
import pytest

from rths_ident import compilation_cache, exported_programs


class _State(NamedTuple):
    position: jax.Array
    key: jax.Array


def _loop(params, state: _State, forcing):
    """A small program with what the fused loop has: a nested scan, a PRNG key in the
    carry, a NamedTuple state, a dict of logs and a weakly typed scalar parameter."""

    def slow(carry, f):
        def fast(c, _):
            key, sub = jax.random.split(c.key)
            x = c.position + params["dt"] * (f - params["k"] * jnp.tanh(c.position)) + 1e-3 * jax.random.normal(sub)
            return _State(x, key), x

        carry, fine = jax.lax.scan(fast, carry, None, length=4)
        return carry, {"fine": fine, "end": carry.position}

    return jax.lax.scan(slow, state, forcing)


def _arguments(n: int = 20):
    params = {"dt": 0.01, "k": jnp.asarray(2.5)}
    state = _State(jnp.asarray(0.1), jax.random.PRNGKey(3))
    return params, state, jnp.sin(0.3 * jnp.arange(n, dtype=float))



def _leaves_equal(a, b) -> bool:
    la, lb = jax.tree_util.tree_leaves(a), jax.tree_util.tree_leaves(b)
    return (jax.tree_util.tree_structure(a) == jax.tree_util.tree_structure(b)
            and all(np.asarray(x).dtype == np.asarray(y).dtype and np.array_equal(x, y, equal_nan=True)
                    for x, y in zip(la, lb)))


def test_off_traces_and_stores_nothing(store_off):
    assert exported_programs.directory() is None
    program = exported_programs.compile_program("loop", ("case", 1), _loop, _arguments())
    assert program.source == "traced"


def test_second_compilation_reads_the_stored_program_and_computes_the_same_bits(store):
    args = _arguments()
    traced = jax.jit(_loop)(*args)
    first = exported_programs.compile_program("loop", ("case", 1), _loop, args)
    assert first.source == "exported"
    assert len(list(store.glob("loop-*.pkl"))) == 1
    second = exported_programs.compile_program("loop", ("case", 1), _loop, args)
    assert second.source == "loaded"
    assert _leaves_equal(first(*args), traced)
    assert _leaves_equal(second(*args), traced)
    # other values of the same shapes: the same program, the same bits as tracing
    other = (args[0], _State(jnp.asarray(-0.4), jax.random.PRNGKey(7)), 2.0 * args[2])
    assert _leaves_equal(second(*other), jax.jit(_loop)(*other))


def test_another_key_shape_or_record_is_another_program(store):
    args = _arguments()
    exported_programs.compile_program("loop", ("case", 1), _loop, args)
    assert exported_programs.compile_program("loop", ("case", 2), _loop, args).source == "exported"
    longer = _arguments(n=30)
    assert exported_programs.compile_program("loop", ("case", 1), _loop, longer).source == "exported"
    record = np.arange(5.0)
    assert exported_programs.compile_program("loop", ("case", 1), _loop, args,
                                             digest_arrays=(record,)).source == "exported"
    assert exported_programs.compile_program("loop", ("case", 1), _loop, args,
                                             digest_arrays=(record + 1e-12,)).source == "exported"
    assert len(list(store.glob("loop-*.pkl"))) == 5


def test_a_key_without_a_stable_text_is_never_stored(store):
    key = ("case", object())  # its repr holds a memory address
    assert exported_programs.compile_program("loop", key, _loop, _arguments()).source == "traced"
    assert not list(store.iterdir())


@pytest.mark.parametrize("damage", ["truncated", "garbage", "other digest", "not a dict"])
def test_a_damaged_file_falls_back_to_tracing_and_is_rewritten(store, damage):
    args = _arguments()
    exported_programs.compile_program("loop", ("case", 1), _loop, args)
    (path,) = store.glob("loop-*.pkl")
    blob = path.read_bytes()
    if damage == "truncated":
        path.write_bytes(blob[: len(blob) // 2])
    elif damage == "garbage":
        path.write_bytes(b"\x00not a pickle" * 10)
    elif damage == "other digest":
        stored = pickle.loads(blob)
        stored["digest"] = "0" * 64
        path.write_bytes(pickle.dumps(stored))
    else:
        path.write_bytes(pickle.dumps(["a", "list"]))
    again = exported_programs.compile_program("loop", ("case", 1), _loop, args)
    assert again.source == "exported"
    assert _leaves_equal(again(*args), jax.jit(_loop)(*args))
    assert exported_programs.compile_program("loop", ("case", 1), _loop, args).source == "loaded"


def test_arguments_of_another_structure_are_refused(store):
    args = _arguments()
    program = exported_programs.compile_program("loop", ("case", 1), _loop, args)
    with pytest.raises(TypeError, match="structure"):
        program({"dt": 0.01}, args[1], args[2])


def test_the_compilation_cache_switch_turns_the_store_on_and_off(tmp_path, monkeypatch, store_off):
    monkeypatch.setattr(jax.config, "update", lambda *args: None)  # JAX's own cache stays as it is
    try:
        assert compilation_cache.enable_default({"RTHS_IDENT_JAX_CACHE": "off"}) is None
        assert exported_programs.directory() is None
        compilation_cache.enable_default({"RTHS_IDENT_JAX_CACHE": str(tmp_path)})  # what the command line does
        assert exported_programs.directory() == tmp_path / exported_programs.SUBFOLDER
        assert exported_programs.directory().is_dir()
    finally:
        exported_programs.disable()  # store_off puts back what was there


def test_the_source_digest_follows_the_python_files_only(tmp_path):
    (tmp_path / "sub").mkdir()
    (tmp_path / "a.py").write_text("x = 1\n")
    (tmp_path / "sub" / "b.py").write_text("y = 2\n")
    first = exported_programs.digest_of_sources(tmp_path)
    (tmp_path / "notes.txt").write_text("not code")
    assert exported_programs.digest_of_sources(tmp_path) == first
    (tmp_path / "sub" / "b.py").write_text("y = 3\n")
    assert exported_programs.digest_of_sources(tmp_path) != first
    assert len(exported_programs.source_digest()) == 64


_FLAGSHIP = """
    import sys, numpy as np, jax
    from rths_ident import compilation_cache, exported_programs
    from rths_ident.hybrid.loop import assembled as assembled
    from rths_ident.scenarios import lugre_frame
    compilation_cache.enable(sys.argv[1])  # JAX's cache on from the first compilation
    # the flagship's loop (identifier, hook, NS) with a cheaper fast side: compiles in seconds
    cfg = lugre_frame.LugreFrameConfig(duration=0.4, transfer_system="ideal", compensation="none",
                                       fast_rate=1000.0, sensor_noise=False)
    test = lugre_frame.build(cfg)
    results = {}
    for source in ("traced", "exported", "loaded"):
        if source == "traced":
            exported_programs.disable()
        else:
            exported_programs.enable(sys.argv[1])
        assembled._CACHE.clear()  # compile again
        runner = assembled.compiled_fused_runner(test, assembled.initial_loop_state(test))
        assert runner.source == source, (runner.source, source)
        for variant in ("updating", "none"):
            out = assembled.run_loop(test, "fused", variant=variant)[0]
            results.update({f"{source}:{variant}{jax.tree_util.keystr(p)}": np.asarray(v)
                            for p, v in jax.tree_util.tree_leaves_with_path(out)})
    np.savez(sys.argv[2], **results)
"""


@pytest.mark.slow
def test_the_flagship_loop_computes_the_same_bits_traced_exported_and_loaded(tmp_path):
    output = tmp_path / "logs.npz"
    run = subprocess.run([sys.executable, "-c", textwrap.dedent(_FLAGSHIP), str(tmp_path / "cache"), str(output)],
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    results = dict(np.load(output))
    traced = {key.split(":", 1)[1]: value for key, value in results.items() if key.startswith("traced:")}
    assert len(traced) > 20
    for source in ("exported", "loaded"):
        for key, value in traced.items():
            other = results[f"{source}:{key}"]
            assert other.dtype == value.dtype
            np.testing.assert_array_equal(other, value, err_msg=f"{source}: {key}")


def test_only_keys_of_this_package_are_stored(store):
    from rths_ident.scenarios.lugre_frame import LugreFrameConfig

    config = LugreFrameConfig(duration=0.5)
    assert exported_programs.package_key(config) is config
    assert exported_programs.package_key(("own-hybrid-test", 2.0)) is None  # examples/own_hybrid_test.py's
    assert exported_programs.compile_program("loop", None, _loop, _arguments()).source == "traced"
    assert exported_programs.compile_program("loop", config, _loop, _arguments()).source == "exported"


@pytest.mark.parametrize("stored", [True, False])
def test_a_program_prepared_here_and_compiled_on_another_thread_is_the_same_program(stored, tmp_path):
    """``rths-ident run`` traces the loop on its main thread and compiles it on a worker
    (prepare_program, then PreparedProgram.compile): the same program as compile_program's,
    exported then loaded with the store on, traced without it."""
    import concurrent.futures

    before = exported_programs.directory()
    if stored:
        exported_programs.enable(tmp_path)
    else:
        exported_programs.disable()
    try:
        args = _arguments()
        prepared = exported_programs.prepare_program("loop", ("case", 1), _loop, args)
        with concurrent.futures.ThreadPoolExecutor(max_workers=1) as worker:
            program = worker.submit(prepared.compile).result()
        assert program.source == ("exported" if stored else "traced")
        assert _leaves_equal(program(*args), jax.jit(_loop)(*args))
        again = exported_programs.prepare_program("loop", ("case", 1), _loop, args).compile()
        assert again.source == ("loaded" if stored else "traced")
        assert _leaves_equal(again(*args), program(*args))
    finally:
        exported_programs.enable(before) if before is not None else exported_programs.disable()


def test_compiler_options_are_those_of_one_compilation(store):
    """``compiler_options`` reach XLA for this program alone: an invalid option is
    XLA's error; a lower optimisation level computes the same numbers to rounding."""
    args = _arguments()
    default = exported_programs.compile_program("loop", ("case", 1), _loop, args)
    level0 = exported_programs.compile_program("loop", ("case", 1), _loop, args,
                                               compiler_options={"xla_backend_optimization_level": 0})
    assert level0.source == "loaded"
    for a, b in zip(jax.tree_util.tree_leaves(level0(*args)), jax.tree_util.tree_leaves(default(*args))):
        np.testing.assert_allclose(np.asarray(a, float), np.asarray(b, float), rtol=1e-13, atol=1e-15)
    with pytest.raises(Exception, match="no_such_xla_option"):
        exported_programs.compile_program("loop", ("case", 1), _loop, args,
                                          compiler_options={"no_such_xla_option": 1})
