"""What this install has: the optional extras and OpenSeesPy's system libraries, asked
in one place.

``pip install rths_ident`` (the core) runs every command and example; an extra adds
what is heavy and used by few (:data:`EXTRAS`). Code that needs one asks here before
any work starts, and a missing part is one line, a :class:`~rths_ident.errors.MissingExtra`
naming what asked for it and the command that installs it::

    require("cluster", "--dask local")
    # MissingExtra: --dask local: needs the 'cluster' extra: pip install 'rths_ident[cluster]'

OpenSeesPy is a core dependency, but its Linux wheel loads the system BLAS/LAPACK
(``libblas.so.3``, ``liblapack.so.3``), which pip cannot install: :func:`opensees`
imports it or says which system packages to install.
"""

from __future__ import annotations

import functools
import importlib
import importlib.util
import os
import sys
from typing import NamedTuple

from rths_ident.errors import MissingExtra

__all__ = ["EXTRAS", "Extra", "has", "require", "opensees", "require_opensees", "OPENSEES_SYSTEM_PACKAGES",
           "silence_opensees_exit_message"]

PACKAGE = "rths_ident"


class Extra(NamedTuple):
    """An optional part of the install: the modules it brings and what they add."""

    modules: tuple[str, ...]  # importable names, all of which the extra installs
    adds: str  # what a user gets with it (the README's install table)


#: the optional extras (pyproject.toml ``[project.optional-dependencies]``, less ``test``
#: and ``all``); ``tests/test_extras.py`` checks that the two agree.
EXTRAS: dict[str, Extra] = {
    "cluster": Extra(("dask", "distributed"),
                     "Dask: runs on a cluster (run marths --dask, study --dask: 'local' or tcp://HOST:PORT) "
                     "and bench's local-cluster figure"),
}

#: Debian/Ubuntu packages of the system BLAS/LAPACK that OpenSeesPy's Linux wheel loads
OPENSEES_SYSTEM_PACKAGES = "libblas3 liblapack3"


def has(extra: str) -> bool:
    """Whether every module of ``extra`` can be found (without importing them)."""
    return all(importlib.util.find_spec(module) is not None for module in _extra(extra).modules)


def require(extra: str, asked_by: str) -> None:
    """Nothing if ``extra`` is installed, else :class:`MissingExtra`:
    ``"{asked_by}: needs the '{extra}' extra: pip install 'rths_ident[{extra}]'"``."""
    if not has(extra):
        raise MissingExtra(f"{asked_by}: needs the '{extra}' extra: pip install '{PACKAGE}[{extra}]'")


def _extra(extra: str) -> Extra:
    if extra not in EXTRAS:
        raise KeyError(f"unknown extra {extra!r}: expected one of {' | '.join(EXTRAS)}")
    return EXTRAS[extra]


def opensees(asked_by: str = "OpenSeesPy"):
    """The ``openseespy.opensees`` module, its exit message kept off the terminal
    (:func:`silence_opensees_exit_message`), or :class:`MissingExtra` in one line: the
    system BLAS/LAPACK to install (``apt-get install libblas3 liblapack3``), or
    OpenSeesPy itself when the install lacks it."""
    module, failure = _import_opensees()
    if module is None:
        raise MissingExtra(f"{asked_by}: {failure}")
    silence_opensees_exit_message()
    return module


def require_opensees(asked_by: str) -> None:
    """Nothing if OpenSeesPy imports, else :class:`MissingExtra` (:func:`opensees`)."""
    opensees(asked_by)


@functools.cache
def _import_opensees():
    """(module, None) or (None, what is missing); imported once per process."""
    if importlib.util.find_spec("openseespy") is None:
        return None, f"needs OpenSeesPy, a dependency of {PACKAGE} this install lacks: pip install openseespy"
    try:
        return importlib.import_module("openseespy.opensees"), None
    except Exception as error:  # ImportError or OSError: a shared library it loads is missing
        return None, (f"OpenSeesPy cannot load its system libraries ({_first_cause(error)}): on Debian/Ubuntu "
                      f"apt-get install {OPENSEES_SYSTEM_PACKAGES}")


def _first_cause(error: BaseException) -> str:
    """The message of the error at the root of ``error``'s chain, on one line
    (OpenSeesPy re-raises the loader's "libblas.so.3: cannot open shared object file"
    as "Failed to import openseespy on Linux.")."""
    while (error.__cause__ or error.__context__) is not None:
        error = error.__cause__ or error.__context__
    return " ".join(str(error).split()) or type(error).__name__


_opensees_exit_message_silenced = False


def silence_opensees_exit_message() -> None:
    """Keep OpenSeesPy's "Process 0 Terminating" off the user's terminal.

    The cause: OpenSeesPy's extension registers a C exit hook with ``Py_AtExit``
    (``cleanupFunc`` in opensees.so) that writes the line to ``opserr`` at the very end
    of interpreter shutdown — after every Python ``atexit`` handler, when ``sys.stderr``
    is gone — so it goes straight to file descriptor 2, in every process that imported
    OpenSeesPy, whatever the program printed before. It carries no information (it is
    printed on every exit, also after success). The fix: a Python ``atexit`` handler,
    which runs before the C hook, flushes the streams and points descriptor 2 at
    ``os.devnull``. What is written to stderr by Python atexit handlers registered
    *before* this one (they run after it) is lost too; rths_ident registers none that
    print. Idempotent."""
    global _opensees_exit_message_silenced
    if _opensees_exit_message_silenced:
        return
    import atexit  # noqa: PLC0415

    def quiet_stderr_for_the_c_exit_hooks() -> None:
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except (AttributeError, OSError, ValueError):
                pass
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 2)
        os.close(devnull)

    atexit.register(quiet_stderr_for_the_c_exit_hooks)
    _opensees_exit_message_silenced = True
