"""Sites: the physical side of a test, as a test file or ``--site`` names it — one
registry (:data:`SITES`) for every kind.

========================  =========================================================================
``virtual``               the virtual fast side: rate transition, compensation, the actuator, the
                          specimen model, sensors (built by the test itself)
``emulator``              seed 002's board emulated on a pseudo-terminal, no waiting
``emulator:timed``        the same with the SG90's travel time and the settle wait (≈ the real pace)
``direct``                no rig: the specimen model's force computed exactly (the ideal partitioned
                          test, so a comparison shows what the rig's quantisation and noise add)
``serial:PORT``           a real board on PORT (``serial:/dev/ttyACM0``, ``serial:COM3``)
``openfresco:HOST:PORT``  an element server in another process over the OpenFresco protocol (an
                          OpenFresco ``SimAppSiteServer`` or ``rths-ident serve site``)
``adapter:HOST:PORT``     an OpenSees ``adapter`` element (its OpenSees model is the specimen)
========================  =========================================================================

A test kind says which sites it can run on (:func:`site_field`'s ``allowed``: a rig
scenario needs seed 002's rig). A new site is an entry in :data:`SITES` plus how it is
opened: the rig sites by :func:`open_site`, the element servers by the frame test that
puts its identifier beside them (:func:`rths_ident.scenarios.shear_frame.open_rig_site`).

:func:`open_site` is a context manager: on exit the site stops safely (hold, ramp to
zero) and the emulator, if any, is shut down.
"""

from __future__ import annotations

import contextlib
import dataclasses
from typing import Callable

import numpy as np

from rths_ident.declaration import Field
from rths_ident.errors import ParameterError
from rths_ident.registry import Registry
from rths_ident.rigs.emulator import RigEmulator, VirtualSpecimen
from rths_ident.rigs.hardware_site import HardwareSite, RawReading, RigLimits, ServoRigCalibration
from rths_ident.rigs.serial_site import open_serial_site
from rths_ident.tcp_ports import parse_address

__all__ = ["SiteKind", "SITES", "SITE_KINDS", "parse_site", "site_field", "open_site", "VirtualSpecimenDriver",
           "ExactCalibration"]


@dataclasses.dataclass(frozen=True)
class SiteKind:
    """One kind of physical side (module doc).

    form: how a test file writes it (``serial:PORT``); doc: one line for help texts and
    test-file comments; address: what follows ``NAME:`` ("" none, ``PORT``,
    ``HOST:PORT``); rig: seed 002's rig (a :class:`HardwareSite` with the rig's limits
    and safe stop, opened by :func:`open_site`); dialect: for an element server, the
    OpenFresco client's dialect (``simapp`` or ``adapter``)."""

    form: str
    doc: str
    address: str = ""
    rig: bool = False
    dialect: str = ""


SITES: Registry[SiteKind] = Registry("site", {
    "virtual": SiteKind("virtual", "the virtual fast side: actuator, compensation, sensors and the specimen model"),
    "emulator": SiteKind("emulator", "seed 002's board emulated on a pseudo-terminal, the specimen model behind it",
                         rig=True),
    "emulator:timed": SiteKind("emulator:timed", "the emulated board at the servo's real pace", rig=True),
    "direct": SiteKind("direct", "no rig: the specimen model's force at the target, exactly (the rig's limits and "
                       "safe stop still apply)", rig=True),
    "serial": SiteKind("serial:PORT", "a real seed 002 board on a serial port (serial:/dev/ttyACM0, serial:COM3)",
                       address="PORT", rig=True),
    "openfresco": SiteKind("openfresco:HOST:PORT", "an OpenFresco element server in another process (an OpenFresco "
                           "SimAppSiteServer or rths-ident serve site)", address="HOST:PORT", dialect="simapp"),
    "adapter": SiteKind("adapter:HOST:PORT", "an OpenSees adapter element (its OpenSees model is the specimen)",
                        address="HOST:PORT", dialect="adapter"),
})

#: the forms of seed 002's rig sites (what a rig scenario accepts)
SITE_KINDS = tuple(kind.form for kind in SITES.values() if kind.rig)


def _rig_only(kind: SiteKind) -> bool:
    return kind.rig


def _any_site(kind: SiteKind) -> bool:
    return True


def _valid_address(kind: SiteKind, address: str) -> bool:
    if kind.address == "PORT":
        return bool(address)
    try:
        parse_address(address)
    except ValueError:
        return False
    return True


def _match(spec) -> tuple[str, str] | None:
    """(name, address) if ``spec`` is a well-formed site of :data:`SITES`, else None."""
    if not isinstance(spec, str):
        return None
    if spec in SITES and not SITES[spec].address:
        return spec, ""
    name, sep, address = spec.partition(":")
    if sep and name in SITES and SITES[name].address and _valid_address(SITES[name], address):
        return name, address
    return None


def parse_site(spec: str, allowed: Callable[[SiteKind], bool] = _rig_only, where: str = "--site") -> tuple[str, str | None]:
    """(name, address or None) of a site string; ``allowed``: which kinds the test can run
    on (default: seed 002's rig sites). Anything else is a :class:`ParameterError` naming
    ``where`` and the forms expected."""
    matched = _match(spec)
    if matched is None or not allowed(SITES[matched[0]]):
        forms = " | ".join(kind.form for kind in SITES.values() if allowed(kind))
        raise ParameterError(f"{where} {spec!r}: expected one of {forms}")
    return matched[0], matched[1] or None


def site_field(allowed: Callable[[SiteKind], bool] = _any_site, **options) -> Field:
    """The test-file field ``specimen.site`` for a test that runs on the ``allowed`` kinds
    (its help text and choices from :data:`SITES`); ``options``: further :class:`Field`
    arguments (``default``, ``option`` …)."""
    kinds = [(name, kind) for name, kind in SITES.items() if allowed(kind)]
    return Field("specimen.site", "site",
                 "the physical side — " + "; ".join(f"{kind.form}: {kind.doc}" for _, kind in kinds), kind=str,
                 choices=tuple(name for name, kind in kinds if not kind.address),
                 open_choices=lambda value: (m := _match(value)) is not None and allowed(SITES[m[0]]),
                 open_doc=" | ".join(kind.form for _, kind in kinds if kind.address), **options)


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
              mode: str = "pseudo-dynamic", timeout: float = 2.0, interlocks=None, emulator_faults: dict | None = None):
    """Yield the site ``spec`` names (module doc) for a test of time step ``dt`` [s];
    ``interlocks`` (:class:`~rths_ident.hybrid.fast_side.interlocks.Interlocks`) are checked on
    every reading; ``emulator_faults`` ({move: fault}) are injected into an emulated board
    (:meth:`~rths_ident.rigs.emulator.RigEmulator.inject`; fault drills)."""
    kind, port = parse_site(spec)
    specimen = specimen if specimen is not None else VirtualSpecimen(test_dt=dt)
    if kind == "direct":
        site = HardwareSite(VirtualSpecimenDriver(specimen), ExactCalibration(), dt, limits=limits, mode=mode,
                            interlocks=interlocks)
        try:
            yield site
        finally:
            site.close()
        return
    emulator = None
    if kind.startswith("emulator"):
        emulator = RigEmulator(specimen, seed=seed, time_scale=1.0 if kind == "emulator:timed" else 0.0)
        for move, fault in (emulator_faults or {}).items():
            emulator.inject(fault, move)
        emulator.start()
        port = emulator.port
    try:
        site = open_serial_site(port, dt, calibration=calibration, limits=limits, mode=mode, timeout=timeout,
                                interlocks=interlocks)
        try:
            yield site
        finally:
            site.close()
    finally:
        if emulator is not None:
            emulator.stop()
