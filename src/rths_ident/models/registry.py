"""The models by name: :data:`MODELS`, the one place where a model's name (in a test
file, ``rths-ident fit --model``, ``rths-ident serve site --specimen``) becomes its
class and what goes with it (:class:`~rths_ident.models.entry.ModelEntry`: docs page,
offline fit specification, linear-in-parameters form, OpenSees twin, an example).

Adding a model is its module (the class and its ``ENTRY``, ending the file), its page
in ``docs/models/`` and one line below; ``tests/models/test_registry.py`` then runs the
conformance tests on it (docs/models/index.md, "Add a model").
"""

from __future__ import annotations

from rths_ident.errors import ParameterError
from rths_ident.models import (
    asymmetric_bouc_wen,
    bilinear,
    bouc_wen,
    degrading_bouc_wen,
    gap_bouc_wen,
    linear,
    lugre,
    pinching_bouc_wen,
    spring_bouc_wen,
)
from rths_ident.models.entry import ModelEntry
from rths_ident.models.opensees_twin import OpenSeesTwin
from rths_ident.registry import Registry

__all__ = ["MODELS", "ModelEntry", "entry_of", "name_of_model", "opensees_twin_of", "opensees_twins"]

#: model name → :class:`ModelEntry`
MODELS: Registry[ModelEntry] = Registry("model", {
    "lugre": lugre.ENTRY,
    "boucwen": bouc_wen.ENTRY,
    "degrading-boucwen": degrading_bouc_wen.ENTRY,
    "pinching-boucwen": pinching_bouc_wen.ENTRY,
    "asymmetric-boucwen": asymmetric_bouc_wen.ENTRY,
    "gap-boucwen": gap_bouc_wen.ENTRY,
    "spring-boucwen": spring_bouc_wen.ENTRY,
    "bilinear": bilinear.ENTRY,
    "linear": linear.ENTRY,
})


def name_of_model(model: type) -> str:
    """The name ``model`` (a class) is registered under; ParameterError if none."""
    for name, entry in MODELS.items():
        if entry.model is model:
            return name
    raise ParameterError(f"{getattr(model, '__name__', model)!r} is not a registered model "
                         f"(registered: {MODELS.choices(', ')})")


def entry_of(model: type) -> ModelEntry:
    """The registry entry of the model class ``model``; ParameterError if none."""
    return MODELS[name_of_model(model)]


def opensees_twins() -> dict[type, OpenSeesTwin]:
    """Model class → its OpenSees twin, for the registered models that declare one."""
    return {entry.model: entry.opensees_twin for entry in MODELS.values() if entry.opensees_twin is not None}


def opensees_twin_of(model: type) -> OpenSeesTwin:
    """The OpenSees twin material of the model class ``model``; ParameterError
    ("<class> has no OpenSees twin material", naming the models that have one) when its
    entry declares none or it is not registered."""
    twins = opensees_twins()
    if model not in twins:
        raise ParameterError(f"{getattr(model, '__name__', model)} has no OpenSees twin material "
                             f"(OpenSees twins: {', '.join(m.__name__ for m in twins)})")
    return twins[model]
