"""Compiled programs kept between runs as exported programs, so a repeat run skips
tracing and lowering.

JAX's persistent compilation cache (:mod:`rths_ident.compilation_cache`) saves the XLA
compilation of a program, but a new process still has to *trace* the Python that
builds the program and *lower* it to StableHLO before it can look the compilation up:
1–2 s for the flagship loop. This module keeps the lowered program itself
(:func:`jax.export.export`) on disk, next to the compilation cache, keyed by
everything that can change it:

* the program's name and the caller's key (e.g. the scenario's configuration, which is
  what :mod:`rths_ident.hybrid.loop.assembled` already caches compiled loops by);
* the tree structure, shapes and dtypes (weak types included) of the arguments;
* the bytes of ``digest_arrays`` (e.g. the ground motion, whose derived filters may be
  baked into the program as constants);
* a digest of every ``.py`` file of the :mod:`rths_ident` package, the JAX and jaxlib
  versions, the backend and the 64-bit switch.

A later run with the same key loads the exported program, lowers its call (a few tens
of ms) and compiles it — a hit in the persistent compilation cache, because the first
run compiled the very same call of the exported program. Anything that does not match
(another key, a file that cannot be read or unpickled, arguments of other shapes) falls
back to tracing, and the file is rewritten. The exported program computes what the
traced one computes, bit for bit (tests/test_exported_programs.py).

It is switched on and off with the compilation cache (:func:`enable` is called by
:func:`rths_ident.compilation_cache.enable`; ``--no-compile-cache`` or
``RTHS_IDENT_JAX_CACHE=off`` leave it off): its files live in the subfolder
:data:`SUBFOLDER` of the compilation cache's folder, a pickle per program (a few
hundred kB). Deleting them is always safe. Only files this package wrote there are read:
the folder is the user's own cache, as JAX's compilation cache is.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import logging
import os
import pickle
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import jax
import numpy as np

#: subfolder of the compilation cache's folder that holds the exported programs
SUBFOLDER = "exported"
#: bumped when the file layout changes (old files then simply miss)
FORMAT_VERSION = 1

_LOG = logging.getLogger(__name__)
_directory: Path | None = None


def enable(compilation_cache_directory: Path | str) -> Path:
    """Keep exported programs in ``compilation_cache_directory``/:data:`SUBFOLDER`
    for the rest of this process; returns that folder."""
    global _directory
    folder = Path(compilation_cache_directory).expanduser() / SUBFOLDER
    folder.mkdir(parents=True, exist_ok=True)
    _directory = folder
    return folder


def disable() -> None:
    """Trace every program again (the default of a library user's process)."""
    global _directory
    _directory = None


def directory() -> Path | None:
    """The folder of the exported programs, or None when switched off."""
    return _directory


@functools.lru_cache(maxsize=1)
def source_digest() -> str:
    """SHA-256 of every ``.py`` file of the installed :mod:`rths_ident` package (path and
    contents): a changed line of code is a new program."""
    return digest_of_sources(Path(__file__).resolve().parent)


def digest_of_sources(root: Path) -> str:
    """SHA-256 of the relative paths and contents of the ``.py`` files under ``root``."""
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*.py")):
        digest.update(str(path.relative_to(root)).encode())
        digest.update(path.read_bytes())
    return digest.hexdigest()


def _aval(leaf) -> tuple:
    """(shape, dtype, weak type) of an array, a Python number or a
    :class:`jax.ShapeDtypeStruct` (programs may be compiled for shapes alone)."""
    aval = leaf if isinstance(leaf, jax.ShapeDtypeStruct) else jax.typeof(leaf)
    return tuple(aval.shape), str(aval.dtype), bool(getattr(aval, "weak_type", False))


def program_digest(name: str, key: Any, args: Sequence, digest_arrays: Sequence = ()) -> str | None:
    """The file key of program ``name`` for ``key`` and ``args`` (module doc); None when
    ``key`` is None or has no stable text (a repr with a memory address): such a program
    is never stored."""
    key_text = repr(key)
    if key is None or " at 0x" in key_text:
        return None
    import jaxlib  # noqa: PLC0415

    leaves, treedef = jax.tree_util.tree_flatten(tuple(args))
    digest = hashlib.sha256()
    header = (FORMAT_VERSION, name, key_text, str(treedef), [_aval(leaf) for leaf in leaves],
              jax.__version__, jaxlib.__version__, jax.default_backend(), bool(jax.config.jax_enable_x64),
              source_digest())
    digest.update(repr(header).encode())
    for array in digest_arrays:
        array = np.ascontiguousarray(np.asarray(array))
        digest.update(repr((array.shape, array.dtype.str)).encode())
        digest.update(array.tobytes())
    return digest.hexdigest()


def package_key(key: Any) -> Any:
    """``key`` if its type is defined in this package (a scenario's configuration: what
    builds the program from it is in the sources the digest covers), else None — a
    test assembled in a user's script (its key a tuple, its matrices in the script)
    is then traced in every process, never read back stale."""
    return key if type(key).__module__.split(".")[0] == "rths_ident" else None


class CompiledProgram:
    """A compiled program called with the argument pytrees it was compiled for:
    ``program(*args) -> outputs`` (the pytree ``fn(*args)`` returns). ``source`` says how
    it was obtained: ``"traced"`` (no store), ``"exported"`` (traced now, stored) or
    ``"loaded"`` (read back from the store)."""

    def __init__(self, compiled, in_tree, out_tree, source: str):
        self._compiled, self.in_tree, self.out_tree, self.source = compiled, in_tree, out_tree, source

    def __call__(self, *args):
        leaves, in_tree = jax.tree_util.tree_flatten(tuple(args))
        if in_tree != self.in_tree:
            raise TypeError(f"arguments of structure {in_tree} for a program compiled for {self.in_tree}")
        return jax.tree_util.tree_unflatten(self.out_tree, self._compiled(*leaves))


def compile_program(name: str, key: Any, fn: Callable, args: Sequence, digest_arrays: Sequence = (),
                    compiler_options: dict | None = None) -> CompiledProgram:
    """``fn`` (a pure function of the pytrees ``args``: arrays, or
    :class:`jax.ShapeDtypeStruct` leaves) compiled for ``args``' shapes. ``key`` must
    determine everything ``fn`` bakes into the program that is not in this package's
    sources or in ``digest_arrays`` (None: never stored; see :func:`package_key`). Loaded from the store when it holds the program for this key, else traced (and,
    with the store on, exported and stored). The result computes the same either way.
    ``compiler_options``: XLA options of this compilation alone (``Lowered.compile``'s;
    part of the persistent cache's key)."""
    return prepare_program(name, key, fn, args, digest_arrays).compile(compiler_options)


class PreparedProgram:
    """A program traced and lowered (or loaded from the store), not compiled yet:
    :meth:`compile` is XLA's work alone, which releases the interpreter lock — so a
    caller can trace on its own thread and compile on another while it goes on
    (:func:`prepare_program`)."""

    def __init__(self, compile_lowered: Callable[[dict | None], CompiledProgram]):
        self._compile_lowered = compile_lowered

    def compile(self, compiler_options: dict | None = None) -> CompiledProgram:
        """XLA's compilation (a persistent-cache hit when an earlier run compiled it with
        the same ``compiler_options``: XLA options of this compilation alone)."""
        return self._compile_lowered(compiler_options)


def prepare_program(name: str, key: Any, fn: Callable, args: Sequence, digest_arrays: Sequence = ()) -> PreparedProgram:
    """:func:`compile_program` up to XLA's compilation: the Python work (load or trace,
    export and store, lower the call) happens here, the compilation in
    :meth:`PreparedProgram.compile`. The same program either way."""
    leaves, in_tree = jax.tree_util.tree_flatten(tuple(args))
    digest = None if _directory is None else program_digest(name, key, args, digest_arrays)
    if digest is None:
        jitted = fn if hasattr(fn, "lower") else jax.jit(fn)
        lowered = jitted.lower(*args)
        return PreparedProgram(lambda options: _TracedProgram(lowered.compile(options), in_tree))
    path = _directory / f"{name}-{digest}.pkl"
    loaded = _load(path, digest, leaves)
    if loaded is not None:
        exported, out_tree = loaded
        try:
            lowered = _lower_call(exported, leaves)
        except Exception as error:  # a program JAX cannot load any more: trace it again
            _LOG.debug("exported program %s not usable (%s); tracing it again", path.name, error)
        else:
            def compile_loaded(options):
                try:
                    return CompiledProgram(lowered.compile(options), in_tree, out_tree, "loaded")
                except Exception as error:  # as above, found at compilation
                    _LOG.debug("exported program %s not usable (%s); tracing it again", path.name, error)
                    return _export_and_store(path, digest, fn, in_tree, leaves).compile(options)
            return PreparedProgram(compile_loaded)
    return _export_and_store(path, digest, fn, in_tree, leaves)


def _export_and_store(path: Path, digest: str, fn: Callable, in_tree, leaves) -> PreparedProgram:
    exported, out_tree = _export(fn, in_tree, leaves)
    _store(path, digest, exported, out_tree)
    lowered = _lower_call(exported, leaves)
    return PreparedProgram(lambda options: CompiledProgram(lowered.compile(options), in_tree, out_tree, "exported"))


class _TracedProgram(CompiledProgram):
    """No store: the jitted function's own compilation (pytrees in and out)."""

    def __init__(self, compiled, in_tree):
        super().__init__(compiled, in_tree, None, "traced")

    def __call__(self, *args):
        return self._compiled(*args)


def _export(fn: Callable, in_tree, leaves):
    out_trees: list = []

    def flat(*flat_args):
        outputs, out_tree = jax.tree_util.tree_flatten(fn(*jax.tree_util.tree_unflatten(in_tree, flat_args)))
        out_trees.append(out_tree)
        return outputs

    exported = jax.export.export(jax.jit(flat))(*leaves)
    return exported, out_trees[-1]


def _lower_call(exported, leaves):
    """The exported program's call, lowered (the same module in every run, so the
    persistent compilation cache finds what the first run compiled)."""
    return jax.jit(exported.call).lower(*leaves)


def _load(path: Path, digest: str, leaves) -> tuple | None:
    """(exported, out_tree) from ``path`` if it is this program for these arguments;
    None (and the file removed) if it is anything else."""
    try:
        with open(path, "rb") as file:
            stored = pickle.load(file)
    except FileNotFoundError:
        return None
    except Exception as error:  # truncated, corrupted, written by another version
        _LOG.debug("exported program %s unreadable (%s)", path.name, error)
        _remove(path)
        return None
    try:
        exported, out_tree = stored["exported"], stored["out_tree"]
        matches = (stored["format"] == FORMAT_VERSION and stored["digest"] == digest
                   and len(exported.in_avals) == len(leaves)
                   and all((tuple(a.shape), str(a.dtype)) == _aval(leaf)[:2]
                           for a, leaf in zip(exported.in_avals, leaves)))
    except Exception:  # not a dictionary of ours
        matches = False
    if not matches:
        _remove(path)
        return None
    return exported, out_tree


def _store(path: Path, digest: str, exported, out_tree) -> None:
    """Write atomically (a temporary file renamed); a store that cannot be written
    leaves the run as it is."""
    payload = {"format": FORMAT_VERSION, "digest": digest, "out_tree": out_tree,
               "exported": dataclasses.replace(exported, _get_vjp=None)}  # a closure: not picklable
    temporary = None
    try:
        handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".tmp")
        with os.fdopen(handle, "wb") as file:
            pickle.dump(payload, file, protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(temporary, path)
    except Exception as error:
        _LOG.debug("exported program %s not stored (%s)", path.name, error)
        if temporary is not None:
            _remove(Path(temporary))


def _remove(path: Path) -> None:
    try:
        path.unlink()
    except OSError:
        pass
