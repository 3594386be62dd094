"""Small set-up arrays kept between runs, for computations whose import costs more than
the run around them.

A run of the flagship designs its dAMB low-pass filter with :func:`scipy.signal.butter`
(microseconds), but importing :mod:`scipy.signal` takes about a second (it builds its
docstrings at import). :func:`stored_array` keeps such a result in the folder of
:mod:`rths_ident.exported_programs` (the same switch: on for the command line, off for
a library user unless :func:`rths_ident.compilation_cache.enable` is called), as a
``.npy`` file keyed by the name, the arguments, the versions of the libraries that
computed it and the package's sources. A stored array is the computed one, bit for
bit (NumPy's own file format); a file that cannot be read is computed again and
rewritten.
"""

from __future__ import annotations

import hashlib
import logging
import os
import tempfile
from collections.abc import Callable
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


def _write(path: Path, value: np.ndarray) -> None:
    temporary = None
    try:
        handle, temporary = tempfile.mkstemp(dir=path.parent, prefix=path.name, suffix=".tmp")
        with os.fdopen(handle, "wb") as file:
            np.save(file, value, allow_pickle=False)
        os.replace(temporary, path)
    except Exception as error:  # a store that cannot be written leaves the run as it is
        _LOG.debug("stored array %s not written (%s)", path.name, error)
        if temporary is not None:
            Path(temporary).unlink(missing_ok=True)
