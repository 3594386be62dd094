"""A model file: a Python file that says how to build a numerical substructure (NS).

``rths-ident serve ns --model FILE.py`` serves the NS such a file describes (docs/
transport.md, "Processes"). The file is run once (``runpy``) and must define ONE of:

``make_substructure(setup) -> NumericalSubstructure``
    full control: any object of the protocol (an :class:`OpenSeesSubstructure`, a native
    one, …) from the session's setup dict (``dt`` [s], ``ground_accel`` [m/s²] from
    t = 0, ``record_dt`` [s], and whatever else the client sends).

``build(ops)`` and ``INTERFACE``
    an OpenSeesPy model (the contract of
    :class:`~rths_ident.structures.opensees_substructure.OpenSeesSubstructure`): ``build``
    creates nodes, elements, masses and damping in SI (and runs its own gravity analysis);
    ``INTERFACE`` is the (node, dof) pair(s) where the specimen acts (dof 1-based).
    Optional settings, with OpenSeesSubstructure's defaults: ``RESPONSE`` (logged
    (node, dof) pairs), ``INTEGRATOR``, ``ALPHA_OS``, ``NEWMARK``, ``ITERATIONS``,
    ``GROUND_DIRECTION``, ``ALPHA_OS_FEEDBACK``, ``SYSTEM``, ``PARAMETER_MAP`` (a list of
    :class:`ElementParameter`: what ``apply_parameters`` sets), ``PARAMETER_NAMES`` and
    ``PARAMETER_UNITS`` (announced to the client).

Either form may define the time base and the record: ``DT`` (slow step [s]),
``GROUND_ACCEL`` (samples [m/s²] from t = 0), ``RECORD_DT`` (their interval [s], default
``DT``). The seed 000 wire needs them (nothing on it carries them); on the framed wire a
client's setup fills what the file leaves out, and a client value that contradicts the
file's is refused. ``MODEL_NAME`` (default: the file's stem) names the model in the
HELLO, so a client can check it talks to the model it expects.
"""

from __future__ import annotations

import dataclasses
import math
import os
import runpy
from typing import Callable

import numpy as np

from rths_ident.errors import ParameterError

#: optional settings of the ``build``/``INTERFACE`` form → OpenSeesSubstructure keywords
OPENSEES_SETTINGS = {
    "RESPONSE": "response", "INTEGRATOR": "integrator", "ALPHA_OS": "alpha_os", "NEWMARK": "newmark",
    "ITERATIONS": "iterations", "GROUND_DIRECTION": "ground_direction", "ALPHA_OS_FEEDBACK": "alpha_os_feedback",
    "SYSTEM": "system", "PARAMETER_MAP": "parameter_map", "PARAMETER_NAMES": "parameter_names",
    "PARAMETER_UNITS": "parameter_units",
}


@dataclasses.dataclass(frozen=True)
class NSModelFile:
    """A loaded model file (module doc)."""

    path: str
    name: str
    make: Callable[[dict], object]  # the complete setup -> NS
    dt: float | None
    ground_accel: np.ndarray | None
    record_dt: float | None

    def setup(self, client_setup: dict | None = None) -> dict:
        """The file's ``DT``/``GROUND_ACCEL``/``RECORD_DT`` merged with a client's setup
        (a contradiction is a ``ValueError`` naming the field)."""
        setup = dict(client_setup or {})
        if self.dt is not None:
            given = setup.get("dt")
            if given is not None and not math.isclose(float(given), self.dt, rel_tol=1e-12, abs_tol=0.0):
                raise ValueError(f"dt: the client asks for {given!r} s, the model file {self.path} sets DT = {self.dt!r} s")
            setup["dt"] = self.dt
        if self.ground_accel is not None:
            given = setup.get("ground_accel")
            if given is not None and not np.array_equal(np.asarray(given, dtype=float), self.ground_accel):
                raise ValueError(f"ground_accel: the client sent a record different from GROUND_ACCEL of the model "
                                 f"file {self.path} (send none, or the same)")
            setup["ground_accel"] = self.ground_accel
        if self.record_dt is not None:
            setup.setdefault("record_dt", self.record_dt)
        if setup.get("dt") is None:
            raise ValueError(f"dt: neither the client's setup nor the model file {self.path} (DT) gives the slow step")
        return setup

    def substructure(self, client_setup: dict | None = None):
        """A fresh NS for a session."""
        return self.make(self.setup(client_setup))


def load_ns_model(path) -> NSModelFile:
    """Run the model file at ``path`` and return what it describes (module doc).

    Raises:
        ParameterError: the file does not exist or defines neither form; a setting is
            malformed.
    """
    path = os.fspath(path)
    if not os.path.isfile(path):
        raise ParameterError(f"--model {path!r}: no such file (a Python file defining build(ops) and INTERFACE, "
                             "or make_substructure(setup))")
    namespace = runpy.run_path(path, run_name="rths_ident_ns_model")
    name = str(namespace.get("MODEL_NAME") or os.path.splitext(os.path.basename(path))[0])
    dt = namespace.get("DT")
    if dt is not None and not (isinstance(dt, (int, float)) and math.isfinite(dt) and dt > 0):
        raise ParameterError(f"model file {path}: DT must be a positive slow step in s, got {dt!r}")
    record_dt = namespace.get("RECORD_DT")
    if record_dt is not None and not (isinstance(record_dt, (int, float)) and math.isfinite(record_dt)
                                      and record_dt > 0):
        raise ParameterError(f"model file {path}: RECORD_DT must be a positive sample interval in s, got {record_dt!r}")
    ground_accel = namespace.get("GROUND_ACCEL")
    if ground_accel is not None:
        ground_accel = np.asarray(ground_accel, dtype=float).ravel()
        if ground_accel.size < 2 or not np.all(np.isfinite(ground_accel)):
            raise ParameterError(f"model file {path}: GROUND_ACCEL must be ≥ 2 finite samples in m/s²")
    factory = namespace.get("make_substructure")
    if callable(factory):
        make = factory
    elif callable(namespace.get("build")) and namespace.get("INTERFACE") is not None:
        make = _opensees_factory(namespace)
    else:
        raise ParameterError(f"model file {path}: define make_substructure(setup), or build(ops) and INTERFACE "
                             "(see rths_ident.structures.ns_model_file)")
    return NSModelFile(path, name, make, None if dt is None else float(dt), ground_accel,
                       None if record_dt is None else float(record_dt))


def _opensees_factory(namespace: dict) -> Callable[[dict], object]:
    build = namespace["build"]
    interface = namespace["INTERFACE"]
    options = {keyword: namespace[name] for name, keyword in OPENSEES_SETTINGS.items() if name in namespace}

    def make(setup: dict):
        from rths_ident.structures.opensees_substructure import OpenSeesSubstructure  # noqa: PLC0415

        return OpenSeesSubstructure(build, interface, setup["dt"], ground_accel=setup.get("ground_accel"),
                                    record_dt=setup.get("record_dt"), **options)

    return make


@dataclasses.dataclass(frozen=True)
class OpenSeesModelFile:
    """A model file of the ``build(ops)``/``INTERFACE`` form, read for a test file's
    ``structure.opensees_model`` (:func:`read_opensees_model_file`): one interface DOF
    (the specimen acts there against the ground), the optional settings as
    :class:`~rths_ident.structures.opensees_substructure.OpenSeesSubstructure` keywords."""

    path: str
    build: Callable
    interface: tuple  # (node, dof), dof 1-based
    settings: dict  # keyword → value (OPENSEES_SETTINGS of the file)

    @property
    def parameter_names(self) -> tuple:
        return tuple(self.settings.get("parameter_names") or ())

    @property
    def response(self) -> tuple:
        """The logged (node, dof) pairs (default: the interface)."""
        return tuple((int(n), int(d)) for n, d in self.settings.get("response") or (self.interface,))

    def parameter_map_for(self, names) -> list:
        """The ``PARAMETER_MAP`` entries of ``names`` (θ̂ order)."""
        by_name = dict(zip(self.parameter_names, self.settings.get("parameter_map") or ()))
        return [by_name[n] for n in names]


def read_opensees_model_file(path, field: str = "structure.opensees_model") -> OpenSeesModelFile:
    """Run the model file at ``path`` (``build(ops)``/``INTERFACE`` form, module doc) and
    check what a test file needs of it without building the model: ``INTERFACE`` one
    (node, dof) pair, ``PARAMETER_MAP`` a list of ``ElementParameter`` (or lists of them)
    named one to one by ``PARAMETER_NAMES``. Errors name ``field`` and the file."""
    from rths_ident.structures.opensees_substructure import ElementParameter  # noqa: PLC0415

    path = os.fspath(path)
    place = f"{field} = {path!r}"
    if not os.path.isfile(path):
        raise ParameterError(f"{place}: no such file (a Python file defining build(ops) and INTERFACE)")
    try:
        namespace = runpy.run_path(path, run_name="rths_ident_ns_model")
    except Exception as error:  # the user's file: whatever it raises is reported as the file's
        raise ParameterError(f"{place}: the file does not run: {type(error).__name__}: {error}") from None
    build, interface = namespace.get("build"), namespace.get("INTERFACE")
    if not callable(build) or interface is None:
        raise ParameterError(f"{place}: expected a function build(ops) and INTERFACE = (node, dof) (see "
                             "rths_ident.structures.ns_model_file)")
    pair = np.asarray(interface, dtype=object).ravel()
    if pair.size != 2 or not all(isinstance(v, int) and not isinstance(v, bool) for v in pair):
        raise ParameterError(f"{place}: INTERFACE = {interface!r}: expected one (node, dof) pair of whole numbers "
                             "(the specimen acts there, against the ground; dof from 1)")
    settings = {keyword: namespace[name] for name, keyword in OPENSEES_SETTINGS.items() if name in namespace}
    parameter_map = list(settings.get("parameter_map") or ())
    for i, entry in enumerate(parameter_map):
        targets = [entry] if isinstance(entry, ElementParameter) else entry
        if not isinstance(targets, (list, tuple)) or not targets or not all(
                isinstance(t, ElementParameter) for t in targets):
            raise ParameterError(f"{place}: PARAMETER_MAP[{i}] = {entry!r}: expected an ElementParameter (element "
                                 "tags and an OpenSees parameter name) or a list of them")
    names = settings.get("parameter_names")
    if parameter_map and (names is None or len(names) != len(parameter_map)
                          or not all(isinstance(n, str) for n in names)):
        raise ParameterError(f"{place}: PARAMETER_NAMES = {names!r}: expected one name per PARAMETER_MAP entry "
                             f"({len(parameter_map)}): the specimen model's fields they update")
    return OpenSeesModelFile(path, build, (int(pair[0]), int(pair[1])), settings)


__all__ = ["NSModelFile", "OPENSEES_SETTINGS", "OpenSeesModelFile", "load_ns_model", "read_opensees_model_file"]
