"""Scenario ``rig-bridge``: seed 002's 2-DOF "bridge" on its servo rig (§6.3).

Two deck sections (numerical masses 1 and 2, 0.356 kg each, springs 30 N/m, dampers
2.5 N·s/m) on a pier (the specimen: 0.356 kg, 5.43 N·s/m, 1540 N/m) rigidly joined to
mass 2 (the interface DOF). The topology figure (Fig. 6-7) is missing from the thesis
(digest ⚠ 13): ``--topology A`` (default, the digest's) is ground–(K_1,C_1)–M_1–(K_2,C_2)–
M_2≡pier, ``C`` has M_1 hanging on M_2 only. Base excitation as eq. 6-1 (the pier's mass
added at mass 2; ``rig_case`` module doc).

Cases (``--case``; Δt = 0.01 s, 500 steps):

``harmonic`` (Case 4, §6.3.3)  ẍ_g = 9 sin(2π·1.5 t) m/s²
``decaying`` (Case 5, §6.3.4)  ẍ_g = 2g sin(2π·1.5 t) e^{−0.5 t}: its reference reaches
    10.38 mm at the pier, over the 10 mm stroke — the envelope check flags it and, by
    default, refuses to run it on the rig (``--envelope warn`` runs it; the site's stroke
    limit then stops the test safely, with the completed steps kept).

Specimen inertia (``--specimen-inertia``): the pier's M_e = 0.356 kg equals the numerical
interface mass, and a measured inertia force is an explicit, one-step-late mass in the
partitioned scheme: with M_e on the rig the scheme is unstable (ρ = 1.29 at Δt = 0.01 s;
stable only below M_e ≈ 0.22 kg here). The default ``numerical`` does what a
pseudo-dynamic test does — the numerical model carries M_e at the interface (M_2 + M_e)
and the rig shows C_e u̇ + K_e u; ``rig`` is refused with that ρ.

Stability of the stiffness split: the interface mass is 0.356 kg, so Ω_e = Δt·√(K_e/m) = 0.66 at Δt = 0.01 s
(ρ = 0.965) and the scheme is unstable beyond Δt = 0.0304 s (ρ = 7.3 at 0.05 s) —
``--slow-rate 20`` shows the refusal.
"""

from __future__ import annotations

import dataclasses
from typing import ClassVar

import numpy as np

from rths_ident.errors import ParameterError
from rths_ident.declaration import Field
from rths_ident.runner.options import RunOptions
from rths_ident.scenarios import rig_case
from rths_ident.scenarios.rig_case import RigCase, RigTestConfig

SCENARIO = "rig-bridge"
#: a rig is driven from Python, step by step
ENGINES = ("stepwise",)
TOPOLOGIES = ("A", "C")
DECK_MASS, DECK_STIFFNESS, DECK_DAMPING = 0.356, 30.0, 2.5


def bridge_matrices(topology: str = "A"):
    """(M, C, K) of the two numerical masses (module doc)."""
    m = np.diag([DECK_MASS, DECK_MASS])
    k, c = DECK_STIFFNESS, DECK_DAMPING
    if topology == "A":
        shape = np.array([[2.0, -1.0], [-1.0, 1.0]])
    elif topology == "C":
        shape = np.array([[1.0, -1.0], [-1.0, 2.0]])
    else:
        raise ParameterError(f"topology must be one of {', '.join(TOPOLOGIES)}; got {topology!r}")
    return m, c * shape, k * shape


#: seed 002's numbers per case and topology (digest 002 §5, [D])
SEED002 = {
    ("harmonic", "A"): (("max |u1| [mm]", 61.7), ("max |u2| [mm]", 5.75), ("max |λ| [N]", 8.67)),
    ("harmonic", "C"): (("max |u2| [mm]", 6.93), ("max |λ| [N]", 10.45)),
    ("decaying", "A"): (("max |u2| [mm]", 10.38), ("max |λ| [N]", 15.9)),
    ("decaying", "C"): (("max |u2| [mm]", 12.1), ("max |λ| [N]", 18.3)),
}
GROUND = {
    "harmonic": ("harmonic base acceleration 9 sin(2π·1.5t) (Case 4)", lambda t: 9.0 * np.sin(2 * np.pi * 1.5 * t)),
    "decaying": ("decaying base acceleration 2g sin(2π·1.5t) e^(−0.5t) (Case 5)",
                 lambda t: 2 * 9.81 * np.sin(2 * np.pi * 1.5 * t) * np.exp(-0.5 * t)),
}


@dataclasses.dataclass(frozen=True)
class RigBridgeConfig(RigTestConfig):
    SCENARIO: ClassVar[str] = SCENARIO
    CASES: ClassVar[tuple] = tuple(GROUND)
    CASE_STEPS: ClassVar[dict] = {name: 500 for name in GROUND}
    case: str = "harmonic"
    topology: str = "A"
    specimen_inertia: str = "numerical"

    def __post_init__(self):
        super().__post_init__()
        if self.topology not in TOPOLOGIES:
            self.bad("topology", " | ".join(TOPOLOGIES))


CONFIG = RigBridgeConfig

#: the test-file fields of a ``rig-bridge`` test (units per field)
FIELDS = rig_case.rig_fields(RigBridgeConfig.CASES, [Field("structure.topology", "topology", "spring topology of the two deck masses (seed 002 Fig. 6-7 is missing; A grounds mass 1)", kind=str, choices=TOPOLOGIES, option="--topology")])


def config_from_values(values: dict) -> RigBridgeConfig:
    """The configuration from a test file's checked values (by field target)."""
    return rig_case.config_from_values(RigBridgeConfig, values)


def make_case(cfg: RigBridgeConfig) -> RigCase:
    m, c, k = bridge_matrices(cfg.topology)
    description, ground = GROUND[cfg.case]
    rows = tuple((label, value, "", "[D]") for label, value in SEED002[(cfg.case, cfg.topology)])
    return RigCase(cfg.case, f"{description}, topology {cfg.topology}", m, c, k, 1, np.zeros(2), 500,
                   ground_accel=ground, dof_names=("u1", "u2"), seed002=rows)


def run_scenario(cfg: RigBridgeConfig, options: RunOptions = RunOptions(engine="stepwise")) -> dict:
    """Run the case (step-wise engine only: a rig is driven from Python)."""
    if options.engine != "stepwise":
        raise ParameterError(f"{SCENARIO} runs a rig: --engine stepwise only (got {options.engine!r})")
    case = make_case(cfg)
    result = rig_case.run_rig_test(case, cfg, options)
    series = result["_series"]
    ref, logs = series["reference"], series["logs"]
    ours = {"max |u1| [mm]": (1e3 * float(np.max(np.abs(ref["displacement"][:, 0]))),
                              1e3 * float(np.max(np.abs(logs["ns"]["displacement"][:, 0]))) if logs else None),
            "max |u2| [mm]": (1e3 * float(np.max(np.abs(ref["displacement"][:, 1]))),
                              1e3 * float(np.max(np.abs(logs["ns"]["displacement"][:, 1]))) if logs else None),
            "max |λ| [N]": (float(np.max(np.abs(ref["specimen_force"]))), result.get("max_measured_force_N"))}
    rows = [(label, value, unit, source) + ours[label] for label, value, unit, source in case.seed002]
    rows += [(label, None, "", "") + v for label, v in ours.items() if label not in {r[0] for r in case.seed002}]
    result["seed002_side_by_side"] = rows
    return result


#: the report and figures of every rig scenario
report = rig_case.format_report
plot = rig_case.plot
