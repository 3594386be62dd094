"""The maRTHS reference frame and its partition (seed 004 §§1–2; digest 004 §§1–2).

**Reference.** The SAP2000 export shipped in :mod:`rths_ident.datasets.marths` (29
equations, lumped mass on 15 of them). Its massless DOFs are condensed statically for the
modal analysis (2.29, 12.75, 26.28, 26.54, 29.91 Hz, the paper's first five). Damping is
Rayleigh, ζ = 5 % on modes 1 and 3 of the condensed model (Eq. 3) — from the frequencies
themselves, not the package script's ω_i = 13.493 rad/s (digest §14 item 7, flagged there:
it gives 4.74 % in mode 1). The time integration keeps all 29 equations (effective-stiffness
Newmark, :mod:`rths_ident.structures.linear_newmark`, as the package's ``fcn_num``).

**DOF map** (paper ψ numbering, Eq. 2 → SAP joint and equation). The SAP joint table gives
the column lines (5-9-13, 6-10-14, 7-11-15, 8-12-16; pinned bases 2 under 6 and 3 under 7):

=========  ===========================  ==========  ====================================
paper      meaning                      SAP joint   equation (1-based)
=========  ===========================  ==========  ====================================
ψ4, ψ28    x4, θ4 (interface node 4)    7           Ux 27 (floor 1), Ry 21
ψ31        θ7 (interface node 7)        6           Ry 29
ψ16, ψ19   y4, y7                       7, 6        Uz 20, 28
ψ37, ψ38   θ14, θ15 (pinned bases)      3, 2        Ry 18, 19
ψ2, ψ26    x2, θ2 (node 2, storey 2)    12          Ux 26, Ry 22
ψ3, ψ27    x3, θ3 (node 3, storey 3)    16          Ux 13, Ry 3
=========  ===========================  ==========  ====================================

Which interior joint is node 4 is not printed anywhere we can read (the figures are
images). The paper's own experiment decides it (§3.6.1, Fig. 16B): equal 4 mm strokes
(x = 4 mm, θ = 0) put the bottom actuator in compression beyond the push and the TOP
actuator in TENSION. Of the two interior joints of the SAP physical frame only joint 7
does that: the column under joint 6 is nearly released at its top in the export
(K[19, 29] = 4.5e4 against K[18, 21] = 4.6e5 under joint 7), so the frame alone turns
joint 6 the other way under a push (tested, tests/benchmarks/marths/test_force_estimation.py).
Nodes 2 and 3 are then the exterior column next to it (Fig. 6 numbers the nodes column
by column), above joint 8. **Sign of θ:** SAP's Ry of this XZ-plane frame is positive
clockwise (a push in +x at floor 1 gives Ry > 0 at every joint of the reference); the
paper's θ is about z, counter-clockwise, and its kinematics (Eq. 28: the bottom actuator
η1 ≈ x + 127 θ) with the Fig. 16 mechanics need θ < 0 for a push. So ψ_θ = −Ry
(``ROTATION_SIGN``).

**Partition.** The physical substructure (ES) is the central first-storey frame. The
numerical substructure (NS) is the second SAP export (27 equations, its own numbering),
placed on the reference's equations through the joint tables; the ES is what the NS lacks:
K_es = K_ref − K_ns, M_es = M_ref − M_ns (non-zero on the seven ES equations 18, 19, 20,
21, 27, 28, 29 only — checked), C_es = a0 M_es + a1 K_es (the Rayleigh split). The ground
term keeps the full mass, −M ι ẍ_g (Eq. 6; the package's NS code uses M_ns — digest §14
item 12 — we follow the paper: the specimen in the lab is not base-excited).
"""

from __future__ import annotations

import dataclasses
import functools

import numpy as np

from rths_ident.errors import ParameterError
from rths_ident.datasets.marths import MarthsMatrices, load_marths_matrices
from rths_ident.structures.condensation import condense_massless_dofs
from rths_ident.structures.damping import rayleigh_coefficients
from rths_ident.structures.modal import modal_analysis

__all__ = ["MarthsModel", "marths_model", "DAMPING_RATIO", "RAYLEIGH_MODES", "ROTATION_SIGN", "NODE_JOINTS",
           "embed_numerical"]

#: ζ of the Rayleigh damping and its two anchor modes (1-based; Eq. 3)
DAMPING_RATIO = 0.05
RAYLEIGH_MODES = (1, 3)
#: ψ_θ = ROTATION_SIGN · Ry(SAP) (module doc)
ROTATION_SIGN = -1.0
#: paper node → SAP joint (module doc)
NODE_JOINTS = {4: 7, 7: 6, 2: 12, 3: 16, 14: 3, 15: 2}


def _equation(matrices: MarthsMatrices, joint: int, dof: str) -> int:
    index = matrices.joint_dof.index(joint, dof)
    if index is None:
        raise ParameterError(f"joint {joint} has no {dof} equation in the {matrices.which} model")
    return index


def embed_numerical(reference: MarthsMatrices, numerical: MarthsMatrices) -> np.ndarray:
    """``placement[i]`` = the reference equation (0-based) of the numerical model's
    equation i, matched joint by joint and DOF by DOF (a joint absent from the numerical
    model — the pinned bases — has no numerical equations)."""
    placement = -np.ones(numerical.n_equations, dtype=int)
    for row in numerical.joint_dof.as_rows():
        for dof in numerical.joint_dof.dof_names:
            eq = row[dof]
            if eq == 0:
                continue
            target = reference.joint_dof.index(row["Joint"], dof)
            if target is None or (placement[eq - 1] >= 0 and placement[eq - 1] != target):
                raise ParameterError(f"numerical equation {eq} (joint {row['Joint']} {dof}) has no unique "
                                     "reference equation")
            placement[eq - 1] = target
    if np.any(placement < 0) or np.unique(placement).size != placement.size:
        raise ParameterError("the numerical model's equations do not map one-to-one onto the reference's")
    return placement


@dataclasses.dataclass(frozen=True)
class MarthsModel:
    """The reference frame and its partition, on the reference's 29 equations (SI).

    mass, damping, stiffness : M, C, K of the reference (29, 29).
    ground_mass : M ι (29,) [kg], ι = 1 on the horizontal equations.
    rayleigh : (a0 [1/s], a1 [s]) of C = a0 M + a1 K.
    frequencies_hz : natural frequencies of the condensed model, ascending.
    mass_es, damping_es, stiffness_es : the ES (central first-storey frame) (29, 29).
    es_equations : the equations the ES touches (0-based, ascending).
    ns_equations : the NS's equations (0-based): all but the ES-only pinned-base rotations.
    equations : name → 0-based equation of the DOFs the benchmark reports (module doc).
    """

    mass: np.ndarray
    damping: np.ndarray
    stiffness: np.ndarray
    ground_mass: np.ndarray
    rayleigh: tuple
    frequencies_hz: np.ndarray
    mass_es: np.ndarray
    damping_es: np.ndarray
    stiffness_es: np.ndarray
    es_equations: np.ndarray
    ns_equations: np.ndarray
    equations: dict

    @property
    def mass_ns(self) -> np.ndarray:
        return self.mass - self.mass_es

    @property
    def damping_ns(self) -> np.ndarray:
        return self.damping - self.damping_es

    @property
    def stiffness_ns(self) -> np.ndarray:
        return self.stiffness - self.stiffness_es

    def psi(self, u: np.ndarray, names) -> np.ndarray:
        """The paper's ψ components ``names`` (e.g. ``("x4", "theta4")``) of responses
        ``u`` (..., 29) in SAP coordinates: [m] and [rad], θ counter-clockwise."""
        u = np.asarray(u)
        return np.stack([self.sign(n) * u[..., self.equations[n]] for n in names], axis=-1)

    @staticmethod
    def sign(name: str) -> float:
        return ROTATION_SIGN if name.startswith("theta") else 1.0


@functools.lru_cache(maxsize=1)
def marths_model() -> MarthsModel:
    """The benchmark model from the shipped matrices (cached; treat as read-only)."""
    ref = load_marths_matrices("reference")
    num = load_marths_matrices("numerical")
    condensed = condense_massless_dofs(ref.M, ref.K)
    modes = modal_analysis(condensed.mass, condensed.stiffness)
    i, j = RAYLEIGH_MODES
    a0, a1 = rayleigh_coefficients(modes.omega[i - 1], modes.omega[j - 1], DAMPING_RATIO)
    damping = a0 * ref.M + a1 * ref.K
    n = ref.n_equations
    placement = embed_numerical(ref, num)
    k_ns = np.zeros((n, n))
    m_ns = np.zeros((n, n))
    k_ns[np.ix_(placement, placement)] = num.K
    m_ns[np.ix_(placement, placement)] = num.M
    k_es, m_es = ref.K - k_ns, ref.M - m_ns
    scale = np.abs(ref.K).max()
    touched = np.flatnonzero((np.abs(k_es).max(axis=0) > 1e-9 * scale) | (np.abs(m_es).max(axis=0) > 0.0))
    k_es[np.abs(k_es) <= 1e-9 * scale] = 0.0  # SAP round-off outside the ES
    iota = np.zeros(n)
    for row in ref.joint_dof.as_rows():
        if row["Ux"]:
            iota[row["Ux"] - 1] = 1.0
    joint = NODE_JOINTS
    equations = {
        "x4": _equation(ref, joint[4], "Ux"), "theta4": _equation(ref, joint[4], "Ry"),
        "y4": _equation(ref, joint[4], "Uz"), "theta7": _equation(ref, joint[7], "Ry"),
        "y7": _equation(ref, joint[7], "Uz"),
        "theta14": _equation(ref, joint[14], "Ry"), "theta15": _equation(ref, joint[15], "Ry"),
        "x2": _equation(ref, joint[2], "Ux"), "theta2": _equation(ref, joint[2], "Ry"),
        "x3": _equation(ref, joint[3], "Ux"), "theta3": _equation(ref, joint[3], "Ry"),
    }
    return MarthsModel(
        mass=ref.M, damping=damping, stiffness=ref.K, ground_mass=ref.M @ iota, rayleigh=(a0, a1),
        frequencies_hz=modes.frequency, mass_es=m_es, damping_es=a0 * m_es + a1 * k_es, stiffness_es=k_es,
        es_equations=touched, ns_equations=np.sort(placement), equations=equations)
