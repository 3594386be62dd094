"""The OpenSees uniaxial material that is the twin of a model (data only: nothing here
imports OpenSeesPy; :mod:`rths_ident.structures.opensees_shear_building` builds it).

A twin is declared in the model's module and listed in its registry entry
(:mod:`rths_ident.models.registry`); every user of twins (the OpenSees shear building,
the frame scenarios' ``--ns opensees`` check) reads it there.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from typing import Any

__all__ = ["OpenSeesTwin"]


@dataclasses.dataclass(frozen=True)
class OpenSeesTwin:
    """``uniaxialMaterial material tag *arguments(params)`` and its updatable parameters.

    material : the OpenSees uniaxial material type (e.g. ``"BoucWen"``).
    arguments : ``(Params) -> tuple`` of the material's arguments after the tag, SI.
    updatable : Params field → the OpenSees parameter name that ``updateParameter``
        changes in that material (e.g. BoucWen ``k`` → ``ko``).
    exact_with : static Params fields under which the model's update is the material's
        own (e.g. Bouc–Wen ``substeps=1``); with others the two differ by the model's
        discretisation error only.
    """

    material: str
    arguments: Callable[[Any], tuple]
    updatable: Mapping[str, str]
    exact_with: Mapping[str, Any] = dataclasses.field(default_factory=dict)

    def command(self, tag: int, params) -> tuple:
        """The arguments of ``ops.uniaxialMaterial`` for ``params`` under ``tag``."""
        return (self.material, int(tag), *(float(a) for a in self.arguments(params)))
