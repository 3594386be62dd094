"""Seed 000 Case 4 numerical substructure (scenario ``rc-frame``): a 3-storey, 2-bay
planar reinforced-concrete frame, as an OpenSeesPy model and as a native linear model.

Source: Mera Muñoz (2022), §4.7.1 (thesis text: "marco plano de tres pisos con dos
vanos, con un total de 30 grados de libertad (9 laterales, 9 verticales y 12
rotacionales)"; one first-storey column is the experimental substructure (ES), the
boundary DOF is horizontal only) and §4.7.2 (nonlinear NS: RC fiber section, ``quad``
concrete and ``straight`` steel, beams and columns "Displacement Beam-Column"). The
dimensions, materials, loads and damping are not in the thesis text; they come from the
companion repository as summarised in digest 000 §12.2 (in–kip–s), converted here once
to SI with the named constants below.

Model (``model basic -ndm 2 -ndf 3``), node tags as in the source (node = 3·level +
line + 1, level 0 = ground, line 0..2 = column lines at x = 0, 42 ft, 84 ft)::

    10 ──── 11 ──── 12        level 3   (y = 108 ft)
    │        │        │
    7 ───── 8 ───── 9         level 2   (y = 72 ft)
    │        │        │
    4 ───── 5 ───── 6  ◄── interface: node 6, DOF 1 (x); node 6 fixed in y
    │        │                level 1   (y = 36 ft)
    1        2       (3)      base: 1, 2 pinned; node 3 and column 3–6 removed (the ES)

* horizontal lumped mass (200 kip / 2)/g on each of the 9 floor nodes (g = 386.4 in/s²);
* columns 5 ft × 5 ft, beams 8 ft deep × 5 ft wide, ``Linear`` geometric transformation
  (no P-Δ: the source's choice);
* gravity: a uniform line load of 200/504 kip/in on every beam (200 kip per bay, i.e.
  400 kip per floor and 1200 kip in all — the source's numbers; note that the floor
  masses correspond to 300 kip per floor: the source is not self-consistent here and we
  follow it), one static Newton step, then ``loadConst -time 0``;
* damping: ``modalDamping 0.05`` after ``eigen`` (9 modes), or the source's Rayleigh
  alternative, stiffness-proportional on the committed stiffness, β_Kcomm = 2 ζ/ω₁.

DOF count. The thesis' full reference frame has 12 nodes × 3 − 3 pinned bases × 2 = 30
DOF: 9 lateral, 9 vertical and 12 rotational (9 floor + 3 base rotations). With the
tested column removed, node 3 disappears (−1 base rotation) and node 6 is fixed
vertically (−1 vertical): **28 DOF = 9 lateral + 8 vertical + 11 rotational**. Only the 9
lateral DOFs carry mass; static condensation of the 19 massless DOFs leaves the 9-DOF
native model.

Periods (measured with the defaults, SI model, after gravity; recorded for the team):

* linear option (elasticBeamColumn, E_s = 29000 ksi, gross sections, as the source):
  T = 0.2271, 0.0520, 0.0284 s (modes 1–3); the NumPy condensed model gives the same
  to ~1e-13; the full 30-DOF reference frame (tested column elastic): T₁ = 0.1949 s;
* nonlinear option (dispBeamColumn, fiber columns with Concrete02/Steel02, beams
  elastic with E_c): initial T = 0.6684, 0.1525, 0.0835 s — 2.94 times the linear
  option's, because the source's linear option gives RC members the steel modulus
  (E_s/E_c = 8.0 for the beams; E_s I_g/(E_c0 I_tr) = 8.6 for the columns, with
  Concrete02's initial tangent E_c0 = 2 f'c/ε₁ = 2667 ksi and the transformed fiber
  section); against a linear model with the fiber section's own uncracked transformed
  stiffness (:func:`fiber_column_initial_section`, T₁ = 0.6652 s) the nonlinear model is
  0.5 % longer: the concrete's tangent softens under the gravity compression.
  ``element="force"`` gives the same initial periods to 5e-7 (both formulations are
  exact for a uniform elastic member; the gravity moments make the fiber tangents vary
  slightly along it).

Which source was followed where the digest and the thesis differ or are silent:

* linear option's modulus: the thesis text says only "subestructura numérica lineal
  elástica"; digest §12.2 says elasticBeamColumn with E_s = 29000 ksi and gross A, I.
  The repository file (read for facts only) applies E_s to the beams too, so the
  default linear model uses E_s for columns AND beams; pass other
  :class:`FrameSection` values (e.g. :data:`CONCRETE_COLUMN_GROSS_SECTION`) to change it;
* nonlinear element: the thesis (§2.5, §4.7.2) uses displacement-based elements for
  beams and columns; we do the same (``dispBeamColumn``, Gauss–Legendre 3 points as the
  source; the beams get an ``Elastic`` section with E_c). Why not forceBeamColumn
  (available with ``element="force"``): a displacement-based element needs no
  element-level iterations, so its cost per step is fixed and predictable, which is what
  a real-time numerical substructure needs; with one element per member it is exact
  while the section is elastic and approximates curvature once cracking localises;
* gravity tolerance: the source's ``NormDispIncr 1e-8`` is in inches; here 1e-8 in
  converted to metres (2.54e-10 m).

The native model (:func:`rc_frame_linear_matrices`, :func:`rc_frame_structure`) is the
LINEAR, condensed, elastic frame: Euler–Bernoulli frame elements with axial deformation,
assembled in NumPy, massless DOFs condensed statically onto the 9 horizontal floor DOFs.
It neglects the geometric stiffness of the gravity loads (as the OpenSees model with a
``Linear`` transformation does) and the nonlinearity of the fiber sections (cracking,
concrete softening, steel yielding): it reproduces the OpenSees linear option, not the
nonlinear one.
"""

from __future__ import annotations

import contextlib
import io
import math
import sys
from typing import Literal, Mapping, NamedTuple, Sequence

import numpy as np

from rths_ident.errors import ParameterError
from rths_ident.structures.condensation import CondensedModel, condense_massless_dofs
from rths_ident.structures.damping import modal_damping
from rths_ident.structures.modal import modal_analysis
from rths_ident.structures.structure import Structure, StructureParams, structure_from_matrices

__all__ = [
    "BEAM_GROSS_CONCRETE_SECTION",
    "CONCRETE_COLUMN_GROSS_SECTION",
    "FrameSection",
    "LINEAR_BEAM_SECTION",
    "LINEAR_COLUMN_SECTION",
    "PlaneFrameMatrices",
    "RCFrameLayout",
    "RCFrameLinearMatrices",
    "RCFrameNative",
    "RCFrameOpenSees",
    "assemble_plane_frame",
    "build_rc_frame",
    "fiber_column_initial_section",
    "rc_frame_layout",
    "rc_frame_linear_matrices",
    "rc_frame_structure",
]

# ---------------------------------------------------------------------------------------
# Unit conversion (source units in–kip–s) — exact definitions
# ---------------------------------------------------------------------------------------
INCH = 0.0254
"""1 in = 0.0254 m (exact)."""
FOOT = 12.0 * INCH
"""1 ft = 0.3048 m."""
KIP = 4448.2216152605
"""1 kip = 1000 lbf = 4448.2216152605 N."""
KSI = KIP / INCH**2
"""1 ksi = 1 kip/in² ≈ 6.894757e6 Pa."""
PSI = KSI / 1000.0
"""1 psi ≈ 6894.757 Pa."""
SOURCE_GRAVITY = 386.4 * INCH
"""g used by the source to turn weights into masses: 386.4 in/s² = 9.81456 m/s²."""

# ---------------------------------------------------------------------------------------
# Geometry (digest 000 §12.2)
# ---------------------------------------------------------------------------------------
STOREY_HEIGHT = 36.0 * FOOT
"""L_col = 36 ft = 432 in = 10.9728 m."""
BAY_WIDTH = 42.0 * FOOT
"""L_beam = 42 ft = 504 in = 12.8016 m."""
N_STOREYS = 3
N_COLUMN_LINES = 3
COLUMN_DEPTH = 5.0 * FOOT
"""H_col = 5 ft = 60 in = 1.524 m (bending direction)."""
COLUMN_WIDTH = 5.0 * FOOT
"""B_col = 5 ft = 60 in = 1.524 m."""
BEAM_DEPTH = 8.0 * FOOT
"""H_beam = 8 ft = 96 in = 2.4384 m."""
BEAM_WIDTH = 5.0 * FOOT
"""B_beam = 5 ft = 60 in = 1.524 m."""
COLUMN_COVER = 6.0 * INCH
"""Cover to the bars' centroid: 6 in = 0.1524 m."""
BARS_PER_FACE = 10
"""Longitudinal bars per face (two faces)."""
BAR_AREA = 2.25 * INCH**2
"""Area of one bar: 2.25 in² = 1.4516e-3 m²."""
COLUMN_FIBERS_ALONG_DEPTH = 16
"""Concrete ``quad`` patch subdivisions along the depth (bending direction)."""
COLUMN_FIBERS_ALONG_WIDTH = 4
"""Concrete ``quad`` patch subdivisions along the width."""

COLUMN_AREA = COLUMN_DEPTH * COLUMN_WIDTH
"""Gross column area A = 60 in × 60 in = 3600 in² = 2.3226 m²."""
COLUMN_SECOND_MOMENT = COLUMN_WIDTH * COLUMN_DEPTH**3 / 12.0
"""Gross column I = 60⁴/12 in⁴ = 1.08e6 in⁴ = 0.44953 m⁴."""
BEAM_AREA = BEAM_DEPTH * BEAM_WIDTH
"""Gross beam area A = 96 in × 60 in = 5760 in² = 3.7161 m²."""
BEAM_SECOND_MOMENT = BEAM_WIDTH * BEAM_DEPTH**3 / 12.0
"""Gross beam I = 60·96³/12 in⁴ = 4.42368e6 in⁴ = 1.8413 m⁴."""

# ---------------------------------------------------------------------------------------
# Materials (digest 000 §12.2)
# ---------------------------------------------------------------------------------------
CONCRETE_STRENGTH = -4.0 * KSI
"""f'c = −4 ksi (compression negative) = −27.58 MPa (Concrete02 ``fpc``)."""
CONCRETE_STRAIN_AT_STRENGTH = -0.003
"""ε₁ = −0.003 (Concrete02 ``epsc0``)."""
CONCRETE_CRUSHING_STRENGTH = 0.2 * CONCRETE_STRENGTH
"""f_c2 = 0.2 f'c = −0.8 ksi (Concrete02 ``fpcu``)."""
CONCRETE_CRUSHING_STRAIN = -0.05
"""ε₂ = −0.05 (Concrete02 ``epsU``)."""
CONCRETE_UNLOADING_RATIO = 0.1
"""λ = 0.1, unloading slope at ε₂ over the initial slope (Concrete02 ``lambda``)."""
CONCRETE_TENSILE_STRENGTH = 0.14 * abs(CONCRETE_STRENGTH)
"""f_t = 0.14 |f'c| = 0.56 ksi (Concrete02 ``ft``)."""
CONCRETE_TENSION_SOFTENING = CONCRETE_TENSILE_STRENGTH / 0.002
"""E_ts = f_t / 0.002 = 280 ksi (Concrete02 ``Ets``)."""
CONCRETE_ELASTIC_MODULUS = 57.0 * math.sqrt(abs(CONCRETE_STRENGTH) / PSI) * KSI
"""E_c = 57 √(f'c [psi]) ksi = 57 √4000 ksi = 3605.0 ksi = 24.86 GPa (beams)."""
STEEL_YIELD_STRESS = 66.8 * KSI
"""F_y = 66.8 ksi = 460.6 MPa (Steel02)."""
STEEL_ELASTIC_MODULUS = 29000.0 * KSI
"""E_s = 29000 ksi = 199.95 GPa (Steel02; also the source's linear-option modulus)."""
STEEL_HARDENING_RATIO = 0.01
"""b = 0.01 (Steel02)."""
STEEL_R0, STEEL_CR1, STEEL_CR2 = 18.0, 0.925, 0.15
"""Steel02 transition parameters R0, cR1, cR2."""

# ---------------------------------------------------------------------------------------
# Loads and masses (digest 000 §12.2)
# ---------------------------------------------------------------------------------------
SUPERSTRUCTURE_WEIGHT = 200.0 * KIP
"""Weight = 200 kip (the source's "superstructure weight")."""
FLOOR_NODE_MASS = (SUPERSTRUCTURE_WEIGHT / 2.0) / SOURCE_GRAVITY
"""(200 kip / 2)/(386.4 in/s²) = 0.25880 kip·s²/in = 45 322.6 kg, horizontal, each floor node."""
BEAM_GRAVITY_LOAD = SUPERSTRUCTURE_WEIGHT / BAY_WIDTH
"""w = 200/504 kip/in = 0.39683 kip/in = 69 495 N/m, downward on every beam."""
GRAVITY_TOLERANCE = 1e-8 * INCH
"""Gravity analysis ``NormDispIncr`` tolerance: the source's 1e-8 in = 2.54e-10 m."""
GRAVITY_MAX_ITERATIONS = 6
"""The source's maximum Newton iterations for the gravity step."""
BEAM_INTEGRATION_POINTS = 3
"""Gauss–Legendre points per element (the source's ``beamIntegration Legendre … 3``)."""

INTERFACE_NODE = 6
"""Top node of the removed (tested) first-storey column of line 3 (x = 84 ft)."""
HORIZONTAL, VERTICAL, ROTATION = 1, 2, 3
"""OpenSees DOF numbers of a ``-ndf 3`` planar node."""


class FrameSection(NamedTuple):
    """Elastic properties of a prismatic 2-D frame member (SI).

    elastic_modulus : E [Pa]; area : A [m²]; second_moment : I [m⁴] (bending in the frame
    plane).
    """

    elastic_modulus: float
    area: float
    second_moment: float


LINEAR_COLUMN_SECTION = FrameSection(STEEL_ELASTIC_MODULUS, COLUMN_AREA, COLUMN_SECOND_MOMENT)
"""The source's linear-option column: E_s = 29000 ksi, gross 60 in × 60 in."""
LINEAR_BEAM_SECTION = FrameSection(STEEL_ELASTIC_MODULUS, BEAM_AREA, BEAM_SECOND_MOMENT)
"""The source's linear-option beam: E_s = 29000 ksi (as in the source), gross 96 in × 60 in."""
CONCRETE_COLUMN_GROSS_SECTION = FrameSection(CONCRETE_ELASTIC_MODULUS, COLUMN_AREA, COLUMN_SECOND_MOMENT)
"""Column with E_c = 3605 ksi and the gross section (not the source's linear option)."""
BEAM_GROSS_CONCRETE_SECTION = FrameSection(CONCRETE_ELASTIC_MODULUS, BEAM_AREA, BEAM_SECOND_MOMENT)
"""Beam with E_c and the gross section: the beams of the nonlinear option."""


def _check_section(name: str, section: FrameSection) -> FrameSection:
    try:
        section = FrameSection(*(float(v) for v in section))
    except (TypeError, ValueError) as exc:
        raise ParameterError(f"{name} must be a FrameSection(elastic_modulus, area, second_moment)") from exc
    for field, value in zip(FrameSection._fields, section):
        if not (math.isfinite(value) and value > 0.0):
            raise ParameterError(f"{name}.{field} must be a positive finite number (SI); got {value!r}")
    return section


def fiber_column_initial_section() -> FrameSection:
    """Initial (uncracked, unloaded) transformed properties of the fiber column section.

    Concrete02's initial tangent is E_c0 = 2 f'c/ε₁ = 2666.7 ksi (not E_c); the concrete
    patch covers the whole 60 in × 60 in section (the source does not subtract the
    bars' area) in 16 fibers through the depth, so its I is the midpoint sum
    Σ (A/16) y_k² = (b h³/12)(1 − 1/16²); the bars add E_s A_s (h/2 − cover)² per face.
    Returned with E = E_c0, A and I transformed to concrete.
    """
    e_concrete = 2.0 * CONCRETE_STRENGTH / CONCRETE_STRAIN_AT_STRENGTH
    n_fibers = COLUMN_FIBERS_ALONG_DEPTH
    fiber_y = (np.arange(n_fibers) + 0.5) * COLUMN_DEPTH / n_fibers - COLUMN_DEPTH / 2.0
    concrete_area = COLUMN_AREA
    concrete_inertia = float(np.sum(concrete_area / n_fibers * fiber_y**2))
    steel_area = 2 * BARS_PER_FACE * BAR_AREA
    steel_inertia = steel_area * (COLUMN_DEPTH / 2.0 - COLUMN_COVER) ** 2
    ratio = STEEL_ELASTIC_MODULUS / e_concrete
    return FrameSection(e_concrete, concrete_area + ratio * steel_area, concrete_inertia + ratio * steel_inertia)


# ---------------------------------------------------------------------------------------
# Geometry shared by both implementations
# ---------------------------------------------------------------------------------------
class RCFrameLayout(NamedTuple):
    """Nodes, supports and members of the frame (both implementations use it).

    nodes : {tag: (x, y)} [m]; fixities : {tag: (fix_x, fix_y, fix_rotation)} (1 = fixed);
    columns, beams : tuples of (element tag, node i, node j), i below / left of j;
    mass_nodes : floor nodes carrying the horizontal mass, level 1 first, line 0 first.
    """

    nodes: dict
    fixities: dict
    columns: tuple
    beams: tuple
    mass_nodes: tuple


def _node_tag(level: int, line: int) -> int:
    return N_COLUMN_LINES * level + line + 1


def rc_frame_layout(include_tested_column: bool = False) -> RCFrameLayout:
    """The frame's layout. ``include_tested_column=True`` gives the thesis' full
    reference frame (node 3 pinned, column 3–6 present, node 6 free vertically: 30 DOF);
    the default is the numerical substructure (column removed, node 6 fixed in y: 28 DOF)."""
    nodes = {}
    for level in range(N_STOREYS + 1):
        for line in range(N_COLUMN_LINES):
            if level == 0 and line == N_COLUMN_LINES - 1 and not include_tested_column:
                continue
            nodes[_node_tag(level, line)] = (line * BAY_WIDTH, level * STOREY_HEIGHT)
    fixities = {tag: (1, 1, 0) for tag in nodes if tag <= N_COLUMN_LINES}  # pinned bases
    if not include_tested_column:
        fixities[INTERFACE_NODE] = (0, 1, 0)
    columns = []
    tag = 1
    for storey in range(1, N_STOREYS + 1):
        for line in range(N_COLUMN_LINES):
            bottom, top = _node_tag(storey - 1, line), _node_tag(storey, line)
            if bottom not in nodes:
                continue
            columns.append((tag, bottom, top))
            tag += 1
    beams = []
    for level in range(1, N_STOREYS + 1):
        for bay in range(N_COLUMN_LINES - 1):
            beams.append((tag, _node_tag(level, bay), _node_tag(level, bay + 1)))
            tag += 1
    mass_nodes = tuple(_node_tag(level, line) for level in range(1, N_STOREYS + 1) for line in range(N_COLUMN_LINES))
    return RCFrameLayout(nodes, fixities, tuple(columns), tuple(beams), mass_nodes)


# ---------------------------------------------------------------------------------------
# OpenSeesPy model
# ---------------------------------------------------------------------------------------
class RCFrameOpenSees(NamedTuple):
    """What :func:`build_rc_frame` built.

    interface : (node, dof) = (6, 1): apply the ES force and read the target
        displacement here (OpenSees DOF numbering, 1 = horizontal).
    floor_response_dofs : ((4, 1), (7, 1), (10, 1)): one horizontal DOF per floor (the
        left column line), floor 1 first.
    n_dof : number of equations of the model (28 for the substructure, 30 with the
        tested column included), from OpenSees' ``systemSize`` after gravity.
    column_element_tags, beam_element_tags : element tags (columns storey 1 first,
        line 0 first; beams level 1 first, left bay first).
    first_storey_column_tags : the NS's first-storey columns (lines 0 and 1).
    periods : (9,) natural periods [s] from ``eigen`` after gravity (the ones used for
        the damping).
    gravity_load : total downward gravity load applied [N] (6 beams × w × L_beam).
    """

    interface: tuple
    floor_response_dofs: tuple
    n_dof: int
    column_element_tags: tuple
    beam_element_tags: tuple
    first_storey_column_tags: tuple
    periods: tuple
    gravity_load: float


# material / section / transformation / integration tags
_CONCRETE_TAG, _STEEL_TAG = 1, 2
_COLUMN_SECTION_TAG, _BEAM_SECTION_TAG = 1, 2
_COLUMN_TRANSF_TAG, _BEAM_TRANSF_TAG = 1, 2
_COLUMN_INTEGRATION_TAG, _BEAM_INTEGRATION_TAG = 1, 2
_GRAVITY_SERIES_TAG = _GRAVITY_PATTERN_TAG = 1


def _define_fiber_column_section(ops) -> None:
    ops.uniaxialMaterial(
        "Concrete02", _CONCRETE_TAG, CONCRETE_STRENGTH, CONCRETE_STRAIN_AT_STRENGTH, CONCRETE_CRUSHING_STRENGTH,
        CONCRETE_CRUSHING_STRAIN, CONCRETE_UNLOADING_RATIO, CONCRETE_TENSILE_STRENGTH, CONCRETE_TENSION_SOFTENING,
    )
    ops.uniaxialMaterial(
        "Steel02", _STEEL_TAG, STEEL_YIELD_STRESS, STEEL_ELASTIC_MODULUS, STEEL_HARDENING_RATIO,
        STEEL_R0, STEEL_CR1, STEEL_CR2,
    )
    half_depth, half_width = COLUMN_DEPTH / 2.0, COLUMN_WIDTH / 2.0
    bar_y = half_depth - COLUMN_COVER
    bar_z = half_width - COLUMN_COVER
    ops.section("Fiber", _COLUMN_SECTION_TAG)
    # vertices I, J, K, L counter-clockwise in (y, z); I→J runs along the depth y
    ops.patch(
        "quad", _CONCRETE_TAG, COLUMN_FIBERS_ALONG_DEPTH, COLUMN_FIBERS_ALONG_WIDTH,
        -half_depth, -half_width, half_depth, -half_width, half_depth, half_width, -half_depth, half_width,
    )
    for y in (-bar_y, bar_y):
        ops.layer("straight", _STEEL_TAG, BARS_PER_FACE, BAR_AREA, y, -bar_z, y, bar_z)


def build_rc_frame(
    ops,
    *,
    nonlinear: bool = True,
    element: Literal["disp", "force"] = "disp",
    linear_column: FrameSection = LINEAR_COLUMN_SECTION,
    linear_beam: FrameSection = LINEAR_BEAM_SECTION,
    damping: Literal["modal", "rayleigh"] = "modal",
    damping_ratio: float = 0.05,
    include_tested_column: bool = False,
    wipe: bool = True,
) -> RCFrameOpenSees:
    """Build the seed 000 Case 4 frame in OpenSeesPy (SI) and run its gravity analysis.

    ops : the ``openseespy.opensees`` module.
    nonlinear : True — fiber RC columns (Concrete02/Steel02, 16×4 quad patch, 10 bars of
        2.25 in² per face) in ``dispBeamColumn`` (``element="force"``: ``forceBeamColumn``)
        with Gauss–Legendre 3 points, beams the same element with an ``Elastic`` section
        (E_c, gross 96 in × 60 in); False — ``elasticBeamColumn`` with ``linear_column`` /
        ``linear_beam`` (default: the source's E_s = 29000 ksi, gross sections).
    damping : "modal" — ``modalDamping(damping_ratio)`` after ``eigen``; "rayleigh" — the
        source's alternative, ``rayleigh 0 0 0 β_Kcomm`` with β_Kcomm = 2 ζ/ω₁ (the
        source writes 2·0.02/ω₁ while stating ζ = 5 %; pass ``damping_ratio=0.02`` for
        its literal value).
    include_tested_column : build the full 30-DOF reference frame instead (the tested
        column as an ordinary member of the same kind; node 3 pinned, node 6 free).
    wipe : call ``ops.wipe()`` first (OpenSees holds one model per process).

    Contract: this builds the model, runs the gravity analysis (Plain constraints and
    numberer, BandGeneral, NormDispIncr 2.54e-10 m / 6 iterations, Newton, LoadControl 1,
    one step), holds the gravity loads with ``loadConst -time 0``, wipes the static
    analysis objects, computes 9 eigenvalues (``-fullGenLapack``: only 9 DOFs have mass)
    and sets the damping. It defines NO transient analysis and NO ground motion: those
    belong to the caller (pattern and series tags ≥ 2 are free). Raises
    ``RuntimeError`` if the gravity analysis does not converge.

    Caller beware (measured with OpenSeesPy 3.7.1.2, see the tests): with a small step
    (Δt = T/200) ``modalDamping`` gives the requested ζ in every mode with ``algorithm
    Newton`` or with ``integrator AlphaOS`` + ``algorithm Linear`` (the source's set-up),
    but with ``integrator Newmark`` + ``algorithm Linear`` mode 1 decays as ζ ≈ 0.144
    instead of 0.05. ``AlphaOS`` does NOT apply modal damping as the α-method: it puts
    −C ũ̇_{n+1} (the predictor velocity, ``AlphaOS::getVel``) on the right-hand side
    only, with no damping term in the tangent (``AlphaOS`` has no ``getCFactor``), so
    the damping is explicit and first-order accurate (``modalDamping`` ≡
    ``modalDampingQ`` there). At the rc-frame scenario's Δt = 0.02 s this changes
    mode 1 to ζ = 0.0495, ω_d/ω₁ = 0.982 (α-OS proper, i.e. Rayleigh damping in
    OpenSees or the native model: 0.0483, 0.969) and the floor response by ~13 % of
    its peak over 3 s of El Centro (tests/structures/test_rc_frame_modal_damping.py).
    For a like-for-like OpenSees-vs-native comparison use ``damping="rayleigh"`` (or
    ``ops.rayleigh(a0, 0, 0, a1)`` after this call, e.g. 5 % at modes 1 and 3), which
    AlphaOS treats exactly like the native α-OS. Calling ``eigen`` again later replaces
    the modes the modal damping uses.
    """
    if element not in ("disp", "force"):
        raise ParameterError(f"element must be 'disp' (dispBeamColumn) or 'force' (forceBeamColumn); got {element!r}")
    if damping not in ("modal", "rayleigh"):
        raise ParameterError(f"damping must be 'modal' or 'rayleigh'; got {damping!r}")
    damping_ratio = float(damping_ratio)
    if not (math.isfinite(damping_ratio) and 0.0 <= damping_ratio < 1.0):
        raise ParameterError(f"damping_ratio must be in [0, 1); got {damping_ratio!r}")
    linear_column = _check_section("linear_column", linear_column)
    linear_beam = _check_section("linear_beam", linear_beam)
    layout = rc_frame_layout(include_tested_column)

    if wipe:
        ops.wipe()
    ops.model("basic", "-ndm", 2, "-ndf", 3)
    for tag, (x, y) in layout.nodes.items():
        ops.node(tag, x, y)
    for tag, fixity in layout.fixities.items():
        ops.fix(tag, *fixity)
    for tag in layout.mass_nodes:
        ops.mass(tag, FLOOR_NODE_MASS, 0.0, 0.0)

    ops.geomTransf("Linear", _COLUMN_TRANSF_TAG)
    ops.geomTransf("Linear", _BEAM_TRANSF_TAG)
    if nonlinear:
        _define_fiber_column_section(ops)
        beam = BEAM_GROSS_CONCRETE_SECTION
        ops.section("Elastic", _BEAM_SECTION_TAG, beam.elastic_modulus, beam.area, beam.second_moment)
        ops.beamIntegration("Legendre", _COLUMN_INTEGRATION_TAG, _COLUMN_SECTION_TAG, BEAM_INTEGRATION_POINTS)
        ops.beamIntegration("Legendre", _BEAM_INTEGRATION_TAG, _BEAM_SECTION_TAG, BEAM_INTEGRATION_POINTS)
        element_type = "dispBeamColumn" if element == "disp" else "forceBeamColumn"
        for tag, i, j in layout.columns:
            ops.element(element_type, tag, i, j, _COLUMN_TRANSF_TAG, _COLUMN_INTEGRATION_TAG)
        for tag, i, j in layout.beams:
            ops.element(element_type, tag, i, j, _BEAM_TRANSF_TAG, _BEAM_INTEGRATION_TAG)
    else:
        for members, section, transf in (
            (layout.columns, linear_column, _COLUMN_TRANSF_TAG),
            (layout.beams, linear_beam, _BEAM_TRANSF_TAG),
        ):
            for tag, i, j in members:
                ops.element(
                    "elasticBeamColumn", tag, i, j, section.area, section.elastic_modulus, section.second_moment, transf
                )

    beam_tags = tuple(tag for tag, _, _ in layout.beams)
    ops.timeSeries("Linear", _GRAVITY_SERIES_TAG)
    ops.pattern("Plain", _GRAVITY_PATTERN_TAG, _GRAVITY_SERIES_TAG)
    ops.eleLoad("-ele", *beam_tags, "-type", "-beamUniform", -BEAM_GRAVITY_LOAD, 0.0)
    ops.constraints("Plain")
    ops.numberer("Plain")
    ops.system("BandGeneral")
    ops.test("NormDispIncr", GRAVITY_TOLERANCE, GRAVITY_MAX_ITERATIONS)
    ops.algorithm("Newton")
    ops.integrator("LoadControl", 1.0)
    ops.analysis("Static")
    if ops.analyze(1) != 0:
        raise RuntimeError("rc-frame gravity analysis did not converge (Newton, NormDispIncr, LoadControl 1)")
    n_dof = int(ops.systemSize())
    ops.loadConst("-time", 0.0)
    ops.wipeAnalysis()

    n_modes = len(layout.mass_nodes)
    eigenvalues = np.asarray(_eigen_full_generalised(ops, n_modes), dtype=float)
    if not np.all(np.isfinite(eigenvalues)) or eigenvalues.min() <= 0.0:
        raise RuntimeError(f"rc-frame eigenvalues after gravity are not positive: {eigenvalues}")
    omega = np.sqrt(eigenvalues)
    if damping == "modal":
        ops.modalDamping(damping_ratio)
    else:
        ops.rayleigh(0.0, 0.0, 0.0, 2.0 * damping_ratio / omega[0])

    columns = tuple(tag for tag, _, _ in layout.columns)
    first_storey = tuple(tag for tag, i, _ in layout.columns if i <= N_COLUMN_LINES)
    left_line_floors = tuple((_node_tag(level, 0), HORIZONTAL) for level in range(1, N_STOREYS + 1))
    return RCFrameOpenSees(
        interface=(INTERFACE_NODE, HORIZONTAL),
        floor_response_dofs=left_line_floors,
        n_dof=n_dof,
        column_element_tags=columns,
        beam_element_tags=beam_tags,
        first_storey_column_tags=first_storey,
        periods=tuple(2.0 * np.pi / omega),
        gravity_load=BEAM_GRAVITY_LOAD * BAY_WIDTH * len(beam_tags),
    )


# ---------------------------------------------------------------------------------------
# Native (NumPy) assembly
# ---------------------------------------------------------------------------------------
class PlaneFrameMatrices(NamedTuple):
    """stiffness, mass : (n, n) over the free DOFs [N/m, N/rad, N·m/rad; kg];
    dofs : tuple of (node, dof) for each row (dof 1 = x, 2 = y, 3 = rotation), in node
    tag order then dof order."""

    stiffness: np.ndarray
    mass: np.ndarray
    dofs: tuple


def _frame_element_stiffness(xi, yi, xj, yj, section: FrameSection) -> np.ndarray:
    """Global 6×6 stiffness of a 2-D Euler–Bernoulli frame element (axial + bending)."""
    dx, dy = xj - xi, yj - yi
    length = math.hypot(dx, dy)
    if length <= 0.0:
        raise ParameterError("frame member has zero length (coincident nodes)")
    e, a, i = section
    ea, ei = e * a / length, e * i
    l2, l3 = length**2, length**3
    local = np.array(
        [
            [ea, 0.0, 0.0, -ea, 0.0, 0.0],
            [0.0, 12 * ei / l3, 6 * ei / l2, 0.0, -12 * ei / l3, 6 * ei / l2],
            [0.0, 6 * ei / l2, 4 * ei / length, 0.0, -6 * ei / l2, 2 * ei / length],
            [-ea, 0.0, 0.0, ea, 0.0, 0.0],
            [0.0, -12 * ei / l3, -6 * ei / l2, 0.0, 12 * ei / l3, -6 * ei / l2],
            [0.0, 6 * ei / l2, 2 * ei / length, 0.0, -6 * ei / l2, 4 * ei / length],
        ]
    )
    c, s = dx / length, dy / length
    rotation = np.array([[c, s, 0.0], [-s, c, 0.0], [0.0, 0.0, 1.0]])
    transform = np.zeros((6, 6))
    transform[:3, :3] = rotation
    transform[3:, 3:] = rotation
    return transform.T @ local @ transform


def assemble_plane_frame(
    nodes: Mapping[int, tuple[float, float]],
    members: Sequence[tuple[int, int, FrameSection]],
    fixities: Mapping[int, tuple[int, int, int]] | None = None,
    horizontal_masses: Mapping[int, float] | None = None,
) -> PlaneFrameMatrices:
    """Assemble K and the lumped M of a 2-D frame over its free DOFs.

    nodes : {tag: (x, y)} [m]; members : (node i, node j, FrameSection) each;
    fixities : {tag: (fix_x, fix_y, fix_rotation)}, 1 = fixed; horizontal_masses :
    {tag: m [kg]} lumped on the horizontal DOF.
    """
    fixities = dict(fixities or {})
    horizontal_masses = dict(horizontal_masses or {})
    for tag in list(fixities) + list(horizontal_masses):
        if tag not in nodes:
            raise ParameterError(f"node {tag} in fixities/horizontal_masses is not in nodes")
    dofs = []
    for tag in sorted(nodes):
        fixity = fixities.get(tag, (0, 0, 0))
        for dof in (HORIZONTAL, VERTICAL, ROTATION):
            if not fixity[dof - 1]:
                dofs.append((tag, dof))
    index = {d: k for k, d in enumerate(dofs)}
    n = len(dofs)
    stiffness = np.zeros((n, n))
    for node_i, node_j, section in members:
        if node_i not in nodes or node_j not in nodes:
            raise ParameterError(f"member ({node_i}, {node_j}) refers to a node that is not in nodes")
        section = _check_section(f"member ({node_i}, {node_j}) section", section)
        k_e = _frame_element_stiffness(*nodes[node_i], *nodes[node_j], section)
        element_dofs = [(node_i, d) for d in (1, 2, 3)] + [(node_j, d) for d in (1, 2, 3)]
        rows = [index.get(d, -1) for d in element_dofs]
        for a, ra in enumerate(rows):
            if ra < 0:
                continue
            for b, rb in enumerate(rows):
                if rb >= 0:
                    stiffness[ra, rb] += k_e[a, b]
    mass = np.zeros((n, n))
    for tag, value in horizontal_masses.items():
        value = float(value)
        if not (math.isfinite(value) and value >= 0.0):
            raise ParameterError(f"horizontal_masses[{tag}] must be a finite mass >= 0 kg; got {value!r}")
        if (tag, HORIZONTAL) in index:
            mass[index[(tag, HORIZONTAL)], index[(tag, HORIZONTAL)]] += value
    return PlaneFrameMatrices(stiffness, mass, tuple(dofs))


class RCFrameLinearMatrices(NamedTuple):
    """The linear elastic frame, full and condensed.

    full : PlaneFrameMatrices over the 28 (or 30) free DOFs.
    condensed : CondensedModel — mass, stiffness over the 9 horizontal floor DOFs
        [kg, N/m], kept_dofs (indices into ``full.dofs``), recovery (full ← kept).
    dofs : the 9 kept DOFs as (node, 1): nodes 4..12, floor 1 first, line 0 first.
    interface_dof : index of node 6's horizontal DOF among the kept DOFs (2).
    floor_dofs : indices of the left line's floor DOFs (nodes 4, 7, 10) = (0, 3, 6).
    """

    full: PlaneFrameMatrices
    condensed: CondensedModel
    dofs: tuple
    interface_dof: int
    floor_dofs: tuple


def rc_frame_linear_matrices(
    *,
    column: FrameSection = LINEAR_COLUMN_SECTION,
    beam: FrameSection = LINEAR_BEAM_SECTION,
    include_tested_column: bool = False,
    tested_column: FrameSection | None = None,
) -> RCFrameLinearMatrices:
    """K and M of the linear elastic frame, assembled in NumPy and condensed onto the
    horizontal floor DOFs (static condensation of rotations and verticals, which carry no
    mass: exact for this lumped-mass model).

    Defaults: the source's linear option (E_s = 29000 ksi, gross sections, columns and
    beams). ``include_tested_column``: the 30-DOF reference frame, with the tested column
    given by ``tested_column`` (default ``column``).
    """
    column = _check_section("column", column)
    beam = _check_section("beam", beam)
    tested = column if tested_column is None else _check_section("tested_column", tested_column)
    layout = rc_frame_layout(include_tested_column)
    members = []
    for _, i, j in layout.columns:
        is_tested = include_tested_column and j == INTERFACE_NODE and i <= N_COLUMN_LINES
        members.append((i, j, tested if is_tested else column))
    members += [(i, j, beam) for _, i, j in layout.beams]
    full = assemble_plane_frame(
        layout.nodes, members, layout.fixities, {tag: FLOOR_NODE_MASS for tag in layout.mass_nodes}
    )
    condensed = condense_massless_dofs(full.mass, full.stiffness)
    kept = tuple(full.dofs[k] for k in condensed.kept_dofs)
    position = {d: k for k, d in enumerate(kept)}
    return RCFrameLinearMatrices(
        full=full,
        condensed=condensed,
        dofs=kept,
        interface_dof=position[(INTERFACE_NODE, HORIZONTAL)],
        floor_dofs=tuple(position[(_node_tag(level, 0), HORIZONTAL)] for level in range(1, N_STOREYS + 1)),
    )


class RCFrameNative(NamedTuple):
    """The native (JAX) linear rc-frame substructure.

    structure, params : from :func:`structure_from_matrices` (9 DOFs, no element groups).
    interface_dof : index of the interface DOF (node 6, x) = 2.
    floor_dofs : indices of one horizontal DOF per floor (left line), floor 1 first.
    matrices : the :class:`RCFrameLinearMatrices` it was built from.
    periods : (9,) natural periods [s] of the condensed model.
    """

    structure: Structure
    params: StructureParams
    interface_dof: int
    floor_dofs: tuple
    matrices: RCFrameLinearMatrices
    periods: np.ndarray


def rc_frame_structure(
    *,
    damping_ratio: float = 0.05,
    damping: Literal["modal", "rayleigh"] = "modal",
    column: FrameSection = LINEAR_COLUMN_SECTION,
    beam: FrameSection = LINEAR_BEAM_SECTION,
) -> RCFrameNative:
    """The native numerical substructure of scenario ``rc-frame``: the LINEAR, condensed,
    elastic frame (9 horizontal floor DOFs) with ζ = 5 % modal damping
    (C = M Φ diag(2ζω) Φᵀ M; ``damping="rayleigh"``: the source's alternative
    C = (2ζ/ω₁) K).

    It is the OpenSees linear option condensed exactly (same periods to ~1e-12). It
    neglects the geometric stiffness of the gravity loads (as the source's ``Linear``
    transformation does) and all nonlinearity of the fiber sections; it is not the
    nonlinear option linearised (that one's period is 2.9 times longer than with the default
    sections: use ``column=fiber_column_initial_section()``,
    ``beam=BEAM_GROSS_CONCRETE_SECTION`` for its initial stiffness). The ground mass is
    M ι over the 9 floor DOFs (the removed column carries no mass in the source).
    """
    damping_ratio = float(damping_ratio)
    if not (math.isfinite(damping_ratio) and 0.0 <= damping_ratio < 1.0):
        raise ParameterError(f"damping_ratio must be in [0, 1); got {damping_ratio!r}")
    if damping not in ("modal", "rayleigh"):
        raise ParameterError(f"damping must be 'modal' or 'rayleigh'; got {damping!r}")
    matrices = rc_frame_linear_matrices(column=column, beam=beam)
    m, k = matrices.condensed.mass, matrices.condensed.stiffness
    props = modal_analysis(m, k)
    if damping == "modal":
        c = modal_damping(m, k, damping_ratio)
    else:
        c = (2.0 * damping_ratio / props.omega[0]) * k
    structure, params = structure_from_matrices(m, k, damping=c)
    return RCFrameNative(structure, params, matrices.interface_dof, matrices.floor_dofs, matrices, props.period)


#: what OpenSees prints on every ``eigen -fullGenLapack`` call (its full generalised LAPACK solver)
_FULL_GEN_LAPACK_NOTICE = "WARNING - the 'fullGenLapack' eigen solver is VERY SLOW. Consider using the default eigen solver."


def _eigen_full_generalised(ops, n_modes: int):
    """``ops.eigen("-fullGenLapack", n_modes)`` without OpenSees' notice that this solver
    is "VERY SLOW": the frame has mass at 9 of its DOFs only, which the default
    (ARPACK) solver cannot handle, and 9 modes of a 27-DOF model take well under a
    millisecond. OpenSeesPy writes ``opserr`` through Python's ``sys.stderr``; anything
    else OpenSees says during the call is passed on."""
    messages = io.StringIO()
    with contextlib.redirect_stderr(messages):
        eigenvalues = ops.eigen("-fullGenLapack", n_modes)
    rest = messages.getvalue().replace(_FULL_GEN_LAPACK_NOTICE, "").strip()
    if rest:
        print(rest, file=sys.stderr)
    return eigenvalues
