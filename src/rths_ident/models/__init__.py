"""Hysteresis and element models (functional core + thin wrapper; see
CONTRIBUTING.md, "Hysteretic element models").

| class | source | force |
|---|---|---|
| :class:`ModifiedLuGre` | seed 001 Eqs. 2.10–2.16, LIP 4.1–4.5 | σ0 z + σ1 ż + σ2 ẋ + σ3 x |
| :class:`BoucWen` | seed 001 Eqs. 2.3–2.4 (standard Wen signs) | α k x + (1−α) k z |
| :class:`DegradingBoucWen` | seed 000 Eqs. 4.2–4.7 + companion repo | α_sv k_e x + r + k_h x³ + c_e ẋ |
| :class:`PinchingBoucWen` | Baber & Noori 1986, Foliente 1995 (BWBN) | α k x + (1−α) k z, pinched ż |
| :class:`AsymmetricBoucWen` | BWBN, two-sided strength and pinch (Song & Der Kiureghian 2006) | as BWBN |
| :class:`GapBoucWen` | BWBN ∥ a gap spring (slip, then contact) | + k_g sgn(x) max(|x| − g, 0) |
| :class:`SpringBoucWen` | BWBN ∥ a cubic elastic spring | + k₃ x³ |
| :class:`BilinearKinematic` | seed 001 Eq. 2.2 (= OpenSees Steel01, a_i = 0) | return map |
| :class:`LinearElement` | m–c–k | c ẋ + k x (inertia m ẍ separate) |

:data:`MODELS` (:mod:`.registry`) maps the names a user writes (``lugre``, ``boucwen``,
``degrading-boucwen``, ``pinching-boucwen``, ``asymmetric-boucwen``, ``gap-boucwen``,
``spring-boucwen``, ``bilinear``, ``linear``) to these classes
and what goes with each: its docs page, offline fit specification, linear-in-parameters
form and OpenSees twin (:class:`ModelEntry`).
"""

from rths_ident._params import ParameterError
from rths_ident.models.base import (
    ElementInputs,
    HystereticModel,
    direction_of_motion,
    tangent_from_step,
    velocity_from_displacement,
)
from rths_ident.models.asymmetric_bouc_wen import AsymmetricBoucWen, AsymmetricBoucWenParams
from rths_ident.models.bilinear import BilinearKinematic, BilinearParams, BilinearState
from rths_ident.models.bouc_wen import BoucWen, BoucWenParams, BoucWenState
from rths_ident.models.degrading_bouc_wen import (
    DegradingBoucWen,
    DegradingBoucWenParams,
    DegradingBoucWenState,
)
from rths_ident.models.gap_bouc_wen import GapBoucWen, GapBoucWenParams
from rths_ident.models.linear import LinearElement, LinearParams, LinearState
from rths_ident.models.lugre import LuGreParams, LuGreState, ModifiedLuGre
from rths_ident.models.pinching_bouc_wen import (
    PinchingBoucWen,
    PinchingBoucWenParams,
    PinchingBoucWenState,
)
from rths_ident.models.spring_bouc_wen import SpringBoucWen, SpringBoucWenParams
from rths_ident.models.registry import MODELS, ModelEntry, entry_of, name_of_model, opensees_twin_of, opensees_twins
from rths_ident.models.specimen_text import parse_specimen

__all__ = [
    "ElementInputs",
    "HystereticModel",
    "ParameterError",
    "tangent_from_step",
    "direction_of_motion",
    "velocity_from_displacement",
    "ModifiedLuGre",
    "LuGreParams",
    "LuGreState",
    "BoucWen",
    "BoucWenParams",
    "BoucWenState",
    "DegradingBoucWen",
    "DegradingBoucWenParams",
    "DegradingBoucWenState",
    "PinchingBoucWen",
    "PinchingBoucWenParams",
    "PinchingBoucWenState",
    "AsymmetricBoucWen",
    "AsymmetricBoucWenParams",
    "GapBoucWen",
    "GapBoucWenParams",
    "SpringBoucWen",
    "SpringBoucWenParams",
    "BilinearKinematic",
    "BilinearParams",
    "BilinearState",
    "LinearElement",
    "LinearParams",
    "LinearState",
    "MODELS",
    "ModelEntry",
    "entry_of",
    "name_of_model",
    "opensees_twin_of",
    "opensees_twins",
    "parse_specimen",
]
