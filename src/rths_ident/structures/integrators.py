"""The numerical substructure's time integrators by name: the one place ``"alpha-os"``,
``"newmark-explicit"``, ``"central-difference"`` and ``"newmark-fixed-iter"`` become
objects (test files, ``run --integrator``).

An entry says how the integrator is built natively (a factory of a structure → an
explicit :class:`~rths_ident.structures.integrator_base.Integrator` with a predictor, or
None when only OpenSees runs it) and whether OpenSees runs it
(:class:`~rths_ident.structures.opensees_substructure.OpenSeesSubstructure` takes the
same name). α-OS uses α = −0.1 (seed 000's α_OS = 0.9) in both.

Add an integrator: its module in :mod:`rths_ident.structures` (pure ``init`` /
``step_and_predict`` / ``predicted_displacement``), one :data:`INTEGRATORS` line.
"""

from __future__ import annotations

from typing import Callable, NamedTuple

from rths_ident.registry import Registry
from rths_ident.structures.alpha_os import AlphaOS
from rths_ident.structures.central_difference import CentralDifference
from rths_ident.structures.newmark import ExplicitNewmark

__all__ = ["IntegratorEntry", "INTEGRATORS", "native_integrator_names", "ALPHA_OS_ALPHA"]

#: α of the α-OS scheme: −0.1, i.e. the α_OS = 1 + α = 0.9 of seed 000
ALPHA_OS_ALPHA = -0.1


class IntegratorEntry(NamedTuple):
    """One registered integrator (module doc)."""

    description: str
    native: Callable | None  # structure -> Integrator; None: OpenSees only
    opensees: bool  # OpenSeesSubstructure runs it


#: name -> :class:`IntegratorEntry`
INTEGRATORS: Registry[IntegratorEntry] = Registry("integrator", {
    "alpha-os": IntegratorEntry("α-operator splitting, α = −0.1 (seed 000 Eqs. 2.49–2.55)",
                                lambda structure: AlphaOS(structure, alpha=ALPHA_OS_ALPHA), True),
    "newmark-explicit": IntegratorEntry("explicit Newmark (β = 0, γ = 1/2)", ExplicitNewmark, True),
    "central-difference": IntegratorEntry("central difference", CentralDifference, True),
    "newmark-fixed-iter": IntegratorEntry(
        "implicit Newmark with a fixed number of Newton iterations (seed 000 §4.7.4; OpenSees only)", None, True),
})


def native_integrator_names() -> tuple[str, ...]:
    """The integrators the native (JAX) substructure runs."""
    return tuple(name for name, entry in INTEGRATORS.items() if entry.native is not None)
