"""Real rigs: the site a lab implements for its hardware, seed 002's low-cost servo rig
over a serial line (protocol, pyserial backend, emulator, calibration) and its
identification between tests. See ``docs/rigs.md``.

* :mod:`~rths_ident.rigs.hardware_site` — :class:`HardwareSite` (limits, safe stop,
  pseudo-dynamic / real-time, record) over a lab's ``RigDriver`` and ``RigCalibration``;
* :mod:`~rths_ident.rigs.calibration` — servo kinematics, ADC-count force calibration,
  seed 002's limits;
* :mod:`~rths_ident.rigs.serial_protocol` — the line protocol codec;
* :mod:`~rths_ident.rigs.serial_site` — the pyserial driver (imports pyserial on use);
* :mod:`~rths_ident.rigs.emulator` — the emulated board on a pseudo-terminal;
* :mod:`~rths_ident.rigs.identification` — static K_e, log decrement, least squares;
* :mod:`~rths_ident.rigs.site_spec` — ``--site`` strings (emulator, serial:PORT, direct).
"""

from rths_ident.rigs.calibration import ForceCalibration, ServoKinematics
from rths_ident.rigs.errors import (
    DeadlineMissed,
    RigDeviceError,
    RigDisconnected,
    RigError,
    RigLimitError,
    RigProtocolError,
    RigResetError,
    RigTimeout,
)
from rths_ident.rigs.hardware_site import HardwareSite, RawReading, RigCalibration, RigDriver, RigLimits, ServoRigCalibration

__all__ = [
    "HardwareSite", "RawReading", "RigCalibration", "RigDriver", "RigLimits", "ServoRigCalibration",
    "ForceCalibration", "ServoKinematics",
    "RigError", "RigLimitError", "RigTimeout", "RigProtocolError", "RigResetError", "RigDisconnected",
    "RigDeviceError", "DeadlineMissed",
]
