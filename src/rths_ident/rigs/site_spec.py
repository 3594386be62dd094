"""``--site`` strings: which physical side a rig scenario runs against.

==================  ===========================================================================
``emulator``        the emulated seed 002 board on a pseudo-terminal, no waiting (default)
``emulator:timed``  the same with the SG90's travel time and the settle wait (≈ the real pace)
``serial:PORT``     a real board on PORT (``serial:/dev/ttyACM0``, ``serial:COM3``)
``direct``          no rig: the virtual specimen's force computed exactly (the ideal partitioned
                    test, so a comparison shows what the rig's quantisation and noise add)
==================  ===========================================================================

:func:`open_site` is a context manager: on exit the site stops safely (hold, ramp to
zero) and the emulator, if any, is shut down.
"""

from __future__ import annotations

import contextlib

import numpy as np

from rths_ident.errors import ParameterError
from rths_ident.rigs.emulator import RigEmulator, VirtualSpecimen
from rths_ident.rigs.hardware_site import HardwareSite, RawReading, RigLimits, ServoRigCalibration
from rths_ident.rigs.serial_site import open_serial_site

__all__ = ["SITE_KINDS", "parse_site", "open_site", "VirtualSpecimenDriver", "ExactCalibration"]

SITE_KINDS = ("emulator", "emulator:timed", "serial:PORT", "direct")


def parse_site(spec: str) -> tuple[str, str | None]:
    """(kind, port) of a ``--site`` string; a clear error for anything else."""
    if spec in ("emulator", "emulator:timed", "direct"):
        return spec, None
    if spec.startswith("serial:") and len(spec) > len("serial:"):
        return "serial", spec[len("serial:"):]
    raise ParameterError(f"--site {spec!r}: expected one of {', '.join(SITE_KINDS)}")


class VirtualSpecimenDriver:
    """The virtual specimen as a :class:`~rths_ident.rigs.hardware_site.RigDriver` whose
    command is the displacement [m] and whose raw force is the force [N], exactly (no
    ADC, noise or dead band) — ``direct``: the rig's limits and safe stop still apply."""

    where = "virtual specimen (direct)"

    def __init__(self, specimen: VirtualSpecimen):
        self.specimen, self._history = specimen, None

    def command(self, command) -> RawReading:
        u = float(np.asarray(command, dtype=float).reshape(-1)[0])
        if self._history is None:
            self._history = (u, u)
        force = self.specimen.force(u, self._history)
        self._history = (u, self._history[0])
        return RawReading(np.array([force]), np.array([u]), 0.0)

    def hold(self) -> None:
        pass

    def close(self) -> None:
        pass


class ExactCalibration:
    """Identity calibration: command = displacement [m], raw force = force [N]."""

    def to_command(self, displacement):
        return np.asarray(displacement, dtype=float)

    def to_displacement(self, command, reading):
        return np.asarray(reading.displacement_raw, dtype=float)

    def to_force(self, reading, displacement):
        return np.asarray(reading.force_raw, dtype=float)


@contextlib.contextmanager
def open_site(spec: str, dt: float, *, specimen: VirtualSpecimen | None = None, seed: int = 0,
              calibration: ServoRigCalibration = ServoRigCalibration(), limits: RigLimits = RigLimits(),
              mode: str = "pseudo-dynamic", timeout: float = 2.0):
    """Yield the site ``spec`` names (module doc) for a test of time step ``dt`` [s]."""
    kind, port = parse_site(spec)
    specimen = specimen if specimen is not None else VirtualSpecimen(test_dt=dt)
    if kind == "direct":
        site = HardwareSite(VirtualSpecimenDriver(specimen), ExactCalibration(), dt, limits=limits, mode=mode)
        try:
            yield site
        finally:
            site.close()
        return
    emulator = None
    if kind.startswith("emulator"):
        emulator = RigEmulator(specimen, seed=seed, time_scale=1.0 if kind == "emulator:timed" else 0.0).start()
        port = emulator.port
    try:
        site = open_serial_site(port, dt, calibration=calibration, limits=limits, mode=mode, timeout=timeout)
        try:
            yield site
        finally:
            site.close()
    finally:
        if emulator is not None:
            emulator.stop()
