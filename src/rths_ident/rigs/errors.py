"""Errors of a rig: each names what failed, where (port, device) and at which step.

All are :class:`RigError`; the step-wise engine wraps them in
:class:`~rths_ident.hybrid.loop.engine.LoopAborted` (``.logs``: the completed steps) and the
:class:`~rths_ident.rigs.hardware_site.HardwareSite` keeps its own record of every step
it completed, including the one that tripped a limit.
"""

from __future__ import annotations

__all__ = ["RigError", "RigLimitError", "RigTimeout", "RigProtocolError", "RigResetError", "RigDisconnected",
           "RigUnavailable", "RigDeviceError", "DeadlineMissed"]


class RigError(RuntimeError):
    """A rig failed or refused a step."""


class RigLimitError(RigError):
    """A stroke, force or velocity limit would be or was exceeded (the site stopped safely)."""


class RigTimeout(RigError, TimeoutError):
    """The device did not answer within the timeout."""


class RigProtocolError(RigError):
    """The device sent something the protocol does not allow (garbage, bad checksum,
    wrong sequence number, unsupported version)."""


class RigResetError(RigProtocolError):
    """The device rebooted during a test (its boot banner arrived mid-test)."""


class RigDisconnected(RigError):
    """The port went away (cable pulled, device node removed)."""


class RigUnavailable(RigDisconnected, ConnectionError):
    """The rig cannot be reached when the test starts (the port does not exist, is not a
    serial port, is busy or not permitted, or no board answers on it): nothing moved. A
    ``ConnectionError`` too, so the command line reports it as bad input (one line, exit
    status 1); the message says what to check."""


class RigDeviceError(RigError):
    """The device answered with an error line (``E``)."""


class DeadlineMissed(RigError):
    """Real-time mode: more steps than allowed took longer than Δt of wall-clock time."""
