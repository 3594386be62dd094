"""Numerical substructure: MDOF models, damping, modal analysis, partitioning and time
integrators (pure ``init``/``step`` usable in ``jax.lax.scan``); the numerical-substructure
protocol of the loop (:mod:`.numerical_substructure`) with its native implementation and
any OpenSeesPy model behind it (:mod:`.opensees_substructure`, OpenSeesPy imported on
construction); seed 000's RC frame (:mod:`.rc_frame`) and the OpenSeesPy twin of a shear
building (:mod:`.opensees_shear_building`).

Sign convention: ``M ü + C u̇ + r(u, u̇) = −m_g ẍ_g − f_e`` with displacements relative to
the ground; the physical substructure's force f_e is subtracted like an internal force.
See ``docs/structures.md``.
"""

from rths_ident.structures.alpha_os import AlphaOS, AlphaOSState
from rths_ident.structures.central_difference import CentralDifference, CentralDifferenceState
from rths_ident.structures.condensation import CondensedModel, condense_massless_dofs
from rths_ident.structures.damping import (
    modal_damping,
    rayleigh_coefficients,
    rayleigh_damping,
    rayleigh_damping_ratios,
)
from rths_ident.structures.elements import ElementGroup, InterfaceElement, batch_params, unbatch_params
from rths_ident.structures.integrator_base import Integrator, StepOutputs, constant_interface_force
from rths_ident.structures.modal import ModalProperties, modal_analysis
from rths_ident.structures.newmark import ExplicitNewmark, NewmarkFixedIteration, NewmarkState
from rths_ident.structures.numerical_substructure import NativeSubstructure, NumericalSubstructure
from rths_ident.structures.opensees_shear_building import build_shear_building
from rths_ident.structures.opensees_substructure import ElementParameter, OpenSeesSubstructure
from rths_ident.structures.partition import (
    PartitionedStructure,
    partition_column,
    partition_matrices,
    state_space_matrices,
)
from rths_ident.structures.shear_building import ShearBuilding, StoreyColumns, three_storey_two_bay_frame
from rths_ident.structures.stability import TimeStepError, critical_time_step
from rths_ident.structures.structure import (
    Structure,
    StructureParams,
    set_column_params,
    structure_from_matrices,
    with_changes,
)
from rths_ident.structures.rc_frame import build_rc_frame, rc_frame_linear_matrices, rc_frame_structure

__all__ = [
    "AlphaOS",
    "AlphaOSState",
    "CentralDifference",
    "CentralDifferenceState",
    "CondensedModel",
    "ElementGroup",
    "ExplicitNewmark",
    "Integrator",
    "InterfaceElement",
    "ModalProperties",
    "NewmarkFixedIteration",
    "NewmarkState",
    "NumericalSubstructure",
    "NativeSubstructure",
    "OpenSeesSubstructure",
    "ElementParameter",
    "build_shear_building",
    "build_rc_frame",
    "rc_frame_linear_matrices",
    "rc_frame_structure",
    "PartitionedStructure",
    "ShearBuilding",
    "StepOutputs",
    "StoreyColumns",
    "Structure",
    "StructureParams",
    "TimeStepError",
    "batch_params",
    "condense_massless_dofs",
    "constant_interface_force",
    "critical_time_step",
    "modal_analysis",
    "modal_damping",
    "partition_column",
    "partition_matrices",
    "rayleigh_coefficients",
    "rayleigh_damping",
    "rayleigh_damping_ratios",
    "set_column_params",
    "state_space_matrices",
    "structure_from_matrices",
    "three_storey_two_bay_frame",
    "unbatch_params",
    "with_changes",
]
