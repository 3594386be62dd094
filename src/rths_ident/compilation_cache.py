"""JAX's persistent compilation cache, on by default for the command line.

A run of ``rths-ident`` compiles its loops with XLA (seconds for the flagship). JAX can
keep the compiled programs on disk and reuse them in later processes (its *persistent
compilation cache*); ``rths-ident`` switches it on before any work, in the user's cache
directory:

* ``$RTHS_IDENT_JAX_CACHE`` if set to a path;
* else ``$XDG_CACHE_HOME/rths_ident/jax``;
* else ``~/.cache/rths_ident/jax``.

The same switch keeps the lowered programs themselves
(:mod:`rths_ident.exported_programs`, subfolder ``exported``), so a repeat run neither
traces nor compiles its loop. Switch both off with ``RTHS_IDENT_JAX_CACHE=off`` (also
``0``, ``false``, ``no``) or with ``rths-ident --no-compile-cache …``. The folder grows by a few megabytes per distinct
configuration run; deleting it is always safe (the next run compiles again). Library users who want the same in a script call :func:`enable` themselves
(importing :mod:`rths_ident` changes no cache setting).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

#: environment variable: a cache folder, or one of :data:`OFF_VALUES`
ENVIRONMENT_VARIABLE = "RTHS_IDENT_JAX_CACHE"
OFF_VALUES = frozenset({"0", "off", "false", "no"})


def cache_directory(environ: Mapping[str, str] | None = None) -> Path | None:
    """The folder the cache lives in, or None when switched off (module doc)."""
    environ = os.environ if environ is None else environ
    value = environ.get(ENVIRONMENT_VARIABLE, "").strip()
    if value.lower() in OFF_VALUES:
        return None
    if value:
        return Path(value).expanduser()
    base = environ.get("XDG_CACHE_HOME", "").strip() or str(Path.home() / ".cache")
    return Path(base).expanduser() / "rths_ident" / "jax"


def enable(directory: Path | str) -> Path:
    """Use ``directory`` as JAX's persistent compilation cache for this process, for
    every compiled program however short its compilation (call before the first
    compilation; later calls after one has run have no effect on this process), and
    keep exported programs in its subfolder (:mod:`rths_ident.exported_programs`)."""
    import jax  # noqa: PLC0415

    from rths_ident import exported_programs  # noqa: PLC0415

    directory = Path(directory).expanduser()
    directory.mkdir(parents=True, exist_ok=True)
    jax.config.update("jax_compilation_cache_dir", str(directory))
    jax.config.update("jax_persistent_cache_min_compile_time_secs", 0.0)
    jax.config.update("jax_persistent_cache_min_entry_size_bytes", 0)
    exported_programs.enable(directory)
    return directory


def enable_default(environ: Mapping[str, str] | None = None) -> Path | None:
    """:func:`enable` the folder of :func:`cache_directory` unless switched off; a folder
    that cannot be created leaves the cache off (the run itself does not need it)."""
    directory = cache_directory(environ)
    if directory is None:
        return None
    try:
        return enable(directory)
    except OSError:
        return None
