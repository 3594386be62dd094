"""What a model's registry entry holds (:mod:`rths_ident.models.registry`).

Each model module ends with its ``ENTRY``; the registry lists them by name. Everything a
command, a test file or a check needs to know about a model beyond its class is here:
its page in the docs, how it is fitted offline, its linear-in-parameters form, its
OpenSees twin, and a representative specimen.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from rths_ident.models.fit_specification import LinearInParameters, ModelFit
from rths_ident.models.opensees_twin import OpenSeesTwin

__all__ = ["ModelEntry"]


@dataclasses.dataclass(frozen=True)
class ModelEntry:
    """One registered model.

    model : the model class (``Params``, ``State``, static ``init``/``step``/``tangent``).
    doc : its documentation page, relative to the repository root (``docs/models/*.md``).
    fit : how :mod:`rths_ident.estimators.offline` fits it (``fit --method nls|bayes``).
    linear_in_parameters : its form for batch least squares (``fit --method ls``), or None.
    opensees_twin : the OpenSees uniaxial material that behaves the same, or None.
    example : a representative specimen, SI (``model.Params``).
    example_peak_displacement : a displacement amplitude [m] that drives ``example``
        well into its nonlinear range (about three yield displacements).
    """

    model: type
    doc: str
    fit: ModelFit
    example: Any
    example_peak_displacement: float
    linear_in_parameters: LinearInParameters | None = None
    opensees_twin: OpenSeesTwin | None = None

    @property
    def params(self) -> type:
        """The model's ``Params`` container."""
        return self.model.Params
