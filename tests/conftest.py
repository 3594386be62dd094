"""Suite-wide hooks and fixtures."""

import signal
import subprocess
import sys

import pytest

import rths_ident
from rths_ident import exported_programs

rths_ident.configure()  # as the command line does: XLA's small-loop kernels for every test


def pytest_unconfigure(config):
    """OpenSeesPy prints "Process 0 Terminating" when the interpreter exits, after the
    summary; silence it the way the package does for its users (tests that import
    openseespy directly bypass rths_ident.extras.opensees)."""
    if any(name.startswith(("openseespy", "openseespylinux")) for name in sys.modules):
        from rths_ident.extras import silence_opensees_exit_message

        silence_opensees_exit_message()


def _restore_store(folder):
    if folder is None:
        exported_programs.disable()
    else:
        exported_programs.enable(folder.parent)


@pytest.fixture
def store(tmp_path):
    """The kept-programs store (exported programs, stored arrays) in a fresh folder, and
    the store as it was afterwards (an in-process command line may have switched it on)."""
    before = exported_programs.directory()
    folder = exported_programs.enable(tmp_path)
    yield folder
    _restore_store(before)


@pytest.fixture
def store_off():
    """The kept-programs store switched off, and as it was afterwards."""
    before = exported_programs.directory()
    exported_programs.disable()
    yield
    _restore_store(before)


def popen_pressable(args, **options) -> subprocess.Popen:
    """``subprocess.Popen(args, **options)`` for a child the test will press Ctrl-C in
    (``send_signal(SIGINT)``). A shell starts a background job with SIGINT ignored, a
    child inherits the ignore across ``exec``, and Python then leaves it ignored, so the
    press would be lost when the suite runs in the background (``nohup``, ``&``, a CI
    runner): SIGINT is caught here while the child starts, and ``exec`` resets a caught
    signal to the default (no ``preexec_fn``, which would fork a multithreaded JAX process)."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        return subprocess.Popen(args, **options)
    finally:
        signal.signal(signal.SIGINT, previous)


@pytest.fixture(scope="session")
def pressable():
    """:func:`popen_pressable`: ``pressable(ARGS, **Popen options)``, a child that Ctrl-C reaches."""
    return popen_pressable
