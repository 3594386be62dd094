"""Errors in the transfer system's and the specimen's parameters, applied to the fast
side's parameter tree: what the pre-test check's margin sweeps besides the loop delay
(:mod:`rths_ident.runner.delay_margin`).

* **actuator error** a [-]: one field of the Carrion–Spencer actuator
  (:class:`~rths_ident.hybrid.fast_side.actuator.CarrionSpencerParams`) multiplied by a —
  by default ``valve_flow_gain`` K_q, the servo-valve's flow gain (its data-sheet value
  depends on the supply pressure and the valve's wear): it sets the loop gain
  g = K_p k_v K_q / A and with it the actuator's delay ≈ 1/g that the compensator was
  tuned for. :data:`ACTUATOR_FIELDS` lists the fields that may be chosen instead (each
  enters the actuator's linear part, Eqs. 2.17–2.25 of seed 000). The exact
  integrator's discretisation is rebuilt from the changed actuator with
  :func:`~rths_ident.hybrid.fast_side.actuator.discretise` (traceable: a batch
  ``vmap`` s over a);
* **specimen stiffness error** s [-]: every stiffness-like field of the specimen's model
  (:func:`stiffness_fields`: the fields whose unit is N/m or N/m^n, e.g. k of a Bouc–Wen
  column, k_e and k_h of the degrading Bouc–Wen, σ0 and σ3 of LuGre) multiplied by s:
  the specimen s times as stiff as the test was designed for, its strengths unchanged.

a = s = 1 leaves the parameters as they are. The compensator, the rate transition, the
identifier and the numerical substructure keep their nominal design: the error is what
the lab did not know.
"""

from __future__ import annotations

import dataclasses
import re

from rths_ident.errors import ParameterError
from rths_ident.hybrid.fast_side import actuator as act

__all__ = ["ACTUATOR_FIELDS", "stiffness_fields", "with_parameter_errors", "check_actuator_field"]

#: the actuator fields an actuator error may scale (each in the linear part, Eqs. 2.17–2.25)
ACTUATOR_FIELDS = ("valve_flow_gain", "proportional_gain", "servo_valve_gain", "servo_valve_time_constant",
                   "bulk_modulus", "fluid_volume", "piston_area", "moving_mass", "payload_damping")

_STIFFNESS_UNIT = re.compile(r"^N/m(\^\d+)?$")


def check_actuator_field(name: str, where: str = "actuator_field") -> str:
    """``name`` if it is one of :data:`ACTUATOR_FIELDS`, else one clear error naming ``where``."""
    if name not in ACTUATOR_FIELDS:
        raise ParameterError(f"{where} = {name!r}: expected one of {', '.join(ACTUATOR_FIELDS)} "
                             "(a field of the Carrion–Spencer actuator)")
    return name


def stiffness_fields(specimen) -> tuple[str, ...]:
    """The stiffness-like fields of a specimen's Params (unit N/m or N/m^n); () for
    parameters that are not a dataclass or have none."""
    if not dataclasses.is_dataclass(specimen):
        return ()
    return tuple(f.name for f in dataclasses.fields(specimen)
                 if _STIFFNESS_UNIT.match(str(f.metadata.get("unit", ""))))


def scaled_actuator(actuator, field: str, scale):
    """``actuator`` (CarrionSpencerParams) with ``field`` × ``scale`` (may be traced)."""
    return dataclasses.replace(actuator, **{field: getattr(actuator, field) * scale})


def scaled_specimen(specimen, scale):
    """``specimen`` with every :func:`stiffness_fields` field × ``scale`` (may be traced)."""
    names = stiffness_fields(specimen)
    if not names:
        return specimen
    return dataclasses.replace(specimen, **{name: getattr(specimen, name) * scale for name in names})


def with_parameter_errors(side, fp: dict, actuator_field: str, actuator_scale, specimen_scale,
                          traced: bool = True) -> dict:
    """The fast parameters ``fp`` of ``side`` (a FastSide) with the actuator's
    ``actuator_field`` × ``actuator_scale`` and the specimen's stiffnesses ×
    ``specimen_scale`` (module doc). The actuator's discretisation, when the side uses
    one, is rebuilt: :func:`~rths_ident.hybrid.fast_side.actuator.discretise` when
    ``traced`` (inside a compiled function), else
    :func:`~rths_ident.hybrid.fast_side.actuator.discretise_concrete`."""
    fp = dict(fp, specimen=scaled_specimen(fp["specimen"], specimen_scale))
    if isinstance(fp["actuator"], act.CarrionSpencerParams):
        actuator = scaled_actuator(fp["actuator"], actuator_field, actuator_scale)
        fp["actuator"] = actuator
        if fp.get("actuator_discretisation") is not None:
            h = 1.0 / (side.fast_rate * actuator.substeps)
            fp["actuator_discretisation"] = (act.discretise(actuator, h) if traced
                                             else act.discretise_concrete(actuator, h))
    return fp
