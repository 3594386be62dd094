"""Small set-up arrays (and pytrees of them) kept between runs, for computations whose
import or many small compiled steps cost more than reading a file.

A run of the flagship designs its dAMB low-pass filter with :func:`scipy.signal.butter`
(microseconds), but importing :mod:`scipy.signal` takes about a second (it builds its
docstrings at import). :func:`stored_array` keeps such a result in the folder of
:mod:`rths_ident.exported_programs` (the same switch: on for the command line, off for
a library user unless :func:`rths_ident.compilation_cache.enable` is called), as a
``.npy`` file keyed by the name, the arguments, the versions of the libraries that
computed it and the package's sources. A stored array is the computed one, bit for
bit (NumPy's own file format); a file that cannot be read is computed again and
rewritten.

:func:`stored_tree` does the same for a pytree of arrays and numbers, e.g. the fused
loop's arguments (fast-side parameters and initial state: ~70 small JAX operations, each
a compiled program to look up, ~0.4 s), keyed like the loop's exported program
(:func:`rths_ident.exported_programs.package_key`). Leaves come back with their dtypes
and weak types; a tree that would not (a typed PRNG key, a weakly typed vector, an
unpicklable node) is simply not stored.
"""

from __future__ import annotations

import hashlib
import logging
import os
import pickle
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from rths_ident import exported_programs

_LOG = logging.getLogger(__name__)


def stored_array(name: str, key: Any, compute: Callable[[], np.ndarray], versions: tuple = ()) -> np.ndarray:
    """``compute()`` (a NumPy array of numbers), or the array stored for the same
    ``name``, ``key`` (its repr must be stable: numbers, strings, tuples) and
    ``versions`` (of what ``compute`` calls) by an earlier run."""
    folder = exported_programs.directory()
    if folder is None:
        return np.asarray(compute())
    digest = hashlib.sha256(repr((name, key, versions, exported_programs.source_digest())).encode()).hexdigest()
    path = folder / f"{name}-{digest}.npy"
    try:
        return np.load(path, allow_pickle=False)
    except FileNotFoundError:
        pass
    except Exception as error:  # truncated or damaged: compute it again
        _LOG.debug("stored array %s unreadable (%s)", path.name, error)
    value = np.asarray(compute())
    _write(path, value)
    return value


def stored_tree(name: str, key: Any, compute: Callable[[], Any], digest_arrays: Sequence = ()) -> Any:
    """``compute()`` (a pytree of JAX/NumPy arrays and numbers), or the tree stored for
    the same ``name``, ``key`` (None: never stored) and bytes of ``digest_arrays`` by an
    earlier run (module doc)."""
    import jax  # noqa: PLC0415

    folder = exported_programs.directory()
    if folder is None or key is None:
        return compute()
    digest = hashlib.sha256(repr((name, key, jax.__version__, exported_programs.source_digest())).encode())
    for array in digest_arrays:
        array = np.ascontiguousarray(np.asarray(array))
        digest.update(repr((array.shape, array.dtype.str)).encode())
        digest.update(array.tobytes())
    path = folder / f"{name}-{digest.hexdigest()}.pkl"
    try:
        with open(path, "rb") as file:
            treedef, encoded = pickle.load(file)
        return jax.tree_util.tree_unflatten(treedef, [_decode(leaf) for leaf in encoded])
    except FileNotFoundError:
        pass
    except Exception as error:  # truncated, damaged, another layout: compute it again
        _LOG.debug("stored tree %s unreadable (%s)", path.name, error)
    value = compute()
    payload = _encoded_tree(value)
    if payload is not None:
        _write(path, lambda file: pickle.dump(payload, file, protocol=pickle.HIGHEST_PROTOCOL))
    return value


def _encoded_tree(value) -> tuple | None:
    """(treedef, encoded leaves) if every leaf comes back exactly (checked), else None."""
    import jax  # noqa: PLC0415

    try:
        leaves, treedef = jax.tree_util.tree_flatten(value)
        encoded = [_encode(leaf) for leaf in leaves]
        if any(e is None for e in encoded):
            return None
        for leaf, e in zip(leaves, encoded):
            back = _decode(e)
            if type(back) is not type(leaf) and not (isinstance(leaf, jax.Array) and isinstance(back, jax.Array)):
                return None
            if isinstance(leaf, jax.Array) and (jax.typeof(back) != jax.typeof(leaf)
                                                or np.asarray(back).tobytes() != np.asarray(leaf).tobytes()):
                return None
        pickle.dumps(treedef)
        return treedef, encoded
    except Exception:  # a leaf or node that cannot be stored: compute it every run
        return None


def _encode(leaf):
    import jax  # noqa: PLC0415

    if isinstance(leaf, jax.core.Tracer):
        return None
    if isinstance(leaf, jax.Array):
        aval = jax.typeof(leaf)
        if np.dtype(aval.dtype).kind not in "biufc":
            return None
        if aval.weak_type:
            return ("weak", leaf.item()) if leaf.ndim == 0 else None
        return ("array", np.asarray(leaf))
    if isinstance(leaf, (bool, int, float, complex, np.ndarray, np.generic)):
        return ("value", leaf)
    return None


def _decode(encoded):
    import jax  # noqa: PLC0415

    kind, value = encoded
    if kind in ("array", "weak"):  # "weak": a Python number, so weakly typed, as it was
        return jax.device_put(value)  # a copy to the device (jnp.asarray would compile a program per shape)
    return value


def _write(path: Path, value) -> None:
    """``value``: an array (saved as .npy) or a function that writes the file."""
    temporary = None
    try:
        handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".tmp")
        with os.fdopen(handle, "wb") as file:
            if callable(value):
                value(file)
            else:
                np.save(file, value, allow_pickle=False)
        os.replace(temporary, path)
    except Exception as error:  # a store that cannot be written leaves the run as it is
        _LOG.debug("stored array %s not written (%s)", path.name, error)
        if temporary is not None:
            Path(temporary).unlink(missing_ok=True)
