"""Suite-wide hooks."""

import sys


def pytest_unconfigure(config):
    """OpenSeesPy prints "Process 0 Terminating" when the interpreter exits, after the
    summary; silence it the way the package does for its users (tests that import
    openseespy directly bypass rths_ident's import_opensees)."""
    if any(name.startswith(("openseespy", "openseespylinux")) for name in sys.modules):
        from rths_ident.structures.opensees_adapter import silence_exit_message

        silence_exit_message()
