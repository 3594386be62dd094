"""Scenario ``rig-sdof``: seed 002's SDOF hybrid tests on its low-cost servo rig.

Numerical part M_1, C_1, K_1 on one DOF, rigidly linked to the specimen (PMMA strip:
M_e = 0.356 kg, C_e = 5.43 N·s/m, K_e = 1540 N/m, Table 5-4) through the servo rig;
seed 002's partitioned Newmark (average acceleration, Δt = 0.01 s) against the site,
the monolithic Lagrange reference beside it (:mod:`~rths_ident.scenarios.rig_case`).

Cases (``--case``; digest 002 §5):

``free`` (Case 1, §5.3)
    M_1 = 34 kg, C_1 = 8.5 N·s/m, K_1 = 30 N/m (Table 5-2), u_0 = 10 mm, 1200 steps; the
    free vibration the thesis identifies the specimen from — the identification between
    tests (:mod:`rths_ident.rigs.identification`) runs on the hybrid record.
``parameter-change`` (Case 2, §5.4)
    M = 17, C = 17, K = 30, u_0 = 10 mm, 300 steps: validates the identified specimen.
``forced`` (Case 3, §6.2)
    Table 5-2's part, 3 N at 1.5 Hz on the numerical DOF (sin: the thesis does not say,
    digest ⚠ 16), u_0 = 6 mm, 1200 steps (not stated; Table 5-1's).

Seed 002's numbers printed beside ours: [T] the thesis, [D] the digest's own check.
"""

from __future__ import annotations

import dataclasses
from typing import ClassVar

import numpy as np

from rths_ident.errors import ParameterError
from rths_ident.runner.options import RunOptions
from rths_ident.scenarios import rig_case
from rths_ident.scenarios.rig_case import RigCase, RigTestConfig, first_peaks

SCENARIO = "rig-sdof"
#: a rig is driven from Python, step by step
ENGINES = ("stepwise",)


def _sdof(m, c, k):
    return np.array([[m]]), np.array([[c]]), np.array([[k]])


CASES = {
    "free": RigCase("free", "free vibration, u0 = 10 mm (Case 1, identification)", *_sdof(34.0, 8.5, 30.0), 0,
                    np.array([0.010]), 1200,
                    seed002=(("first peak", (0.93, 8.283e-3), "mm", "[D]"),
                             ("second peak", (1.86, 6.861e-3), "mm", "[D]"),
                             ("λ0 [N]", 15.237, "", "[D]"),
                             ("peaks read on the rig u0/u1 [mm]", "8.3/6.87", "", "[T]"),
                             ("ζ", 0.03, "", "[T]"),
                             ("T_d [s]", 0.93, "", "[T]"),
                             ("ω_n [rad/s]", 6.76, "", "[T]"),
                             ("M_e [kg]", 0.356, "", "[T]"),
                             ("C_e [N·s/m]", 5.43, "", "[T]"))),
    "parameter-change": RigCase("parameter-change", "free vibration with M, C halved/doubled (Case 2, validation)",
                                *_sdof(17.0, 17.0, 30.0), 0, np.array([0.010]), 300,
                                seed002=(("first peak", (0.66, 6.521e-3), "mm", "[D]"),
                                         ("second peak", (1.33, 4.251e-3), "mm", "[D]"))),
    "forced": RigCase("forced", "3 N at 1.5 Hz on the numerical DOF, u0 = 6 mm (Case 3)", *_sdof(34.0, 8.5, 30.0), 0,
                      np.array([0.006]), 1200, external_force=lambda t: np.array([3.0 * np.sin(2 * np.pi * 1.5 * t)]),
                      seed002=(("steady amplitude [mm] (analytic)", 2.017, "", "[D]"),
                               ("max |u| [mm] in 4–6 s (beating, near 5 s)", 4.6, "", "[D]"),
                               ("max |λ| [N] (sin forcing)", 10.7, "", "[D]"))),
}


_CASE_STEPS = {name: case.steps for name, case in CASES.items()}


@dataclasses.dataclass(frozen=True)
class RigSdofConfig(RigTestConfig):
    SCENARIO: ClassVar[str] = SCENARIO
    CASES: ClassVar[tuple] = tuple(CASES)
    CASE_STEPS: ClassVar[dict] = _CASE_STEPS
    case: str = "free"


CONFIG = RigSdofConfig

#: the test-file fields of a ``rig-sdof`` test (units per field)
FIELDS = rig_case.rig_fields(RigSdofConfig.CASES, ())


def config_from_values(values: dict) -> RigSdofConfig:
    """The configuration from a test file's checked values (by field target)."""
    return rig_case.config_from_values(RigSdofConfig, values)


def steady_amplitude(force_amplitude, omega, mass, damping, stiffness) -> float:
    """|X| = (f_0/M)/√((ω_n² − ω²)² + (2ζω_nω)²) [m] (eqs. 2-9/2-10 with the 1/M fix)."""
    wn2 = stiffness / mass
    two_zeta_wn = damping / mass
    return force_amplitude / mass / np.sqrt((wn2 - omega**2) ** 2 + (two_zeta_wn * omega) ** 2)


def _ours(result: dict, cfg: RigSdofConfig) -> dict:
    series = result["_series"]
    t, ref, logs = series["time"], series["reference"], series["logs"]
    u_ref = ref["displacement"][:, 0]
    u_hyb = logs["ns"]["displacement"][:, 0] if logs else np.zeros(0)
    t_hyb = t[: u_hyb.size]
    ours = {}
    if cfg.case in ("free", "parameter-change"):
        ref_peaks, hyb_peaks = first_peaks(t, u_ref), first_peaks(t_hyb, u_hyb) if u_hyb.size > 2 else []
        for i, label in enumerate(("first peak", "second peak")):
            ours[label] = (ref_peaks[i] if i < len(ref_peaks) else None, hyb_peaks[i] if i < len(hyb_peaks) else None)
        ours["λ0 [N]"] = (float(ref["specimen_force"][0]),
                          float(logs["fast"]["force"][0, 0]) if logs else None)
    if cfg.case == "forced":
        mt, ct, kt = 34.0 + cfg.specimen_mass, 8.5 + cfg.specimen_damping, 30.0 + cfg.specimen_stiffness
        ours["steady amplitude [mm] (analytic)"] = (1e3 * steady_amplitude(3.0, 2 * np.pi * 1.5, mt, ct, kt), None)
        late = t >= t[-1] - 2.0
        beat = (t >= 4.0) & (t <= 6.0)
        ours["max |u| [mm] in 4–6 s (beating, near 5 s)"] = (
            1e3 * float(np.max(np.abs(u_ref[beat]))),
            1e3 * float(np.max(np.abs(u_hyb[beat[: u_hyb.size]]))) if u_hyb.size == u_ref.size else None)
        ours["max |λ| [N] (sin forcing)"] = (float(np.max(np.abs(ref["specimen_force"]))),
                                            result.get("max_measured_force_N"))
        ours["late max |u| [mm] (last 2 s)"] = (1e3 * float(np.max(np.abs(u_ref[late]))),
                                               1e3 * float(np.max(np.abs(u_hyb[late[: u_hyb.size]])))
                                               if u_hyb.size == u_ref.size else None)
    return ours


def _identify(result: dict, cfg: RigSdofConfig) -> dict | None:
    from rths_ident.rigs.identification import identify_from_logs  # noqa: PLC0415

    logs = result["_series"]["logs"]
    if not logs or result["aborted"] or logs["ns"]["displacement"].shape[0] < 200:
        return None
    case = CASES[cfg.case]
    ident = identify_from_logs(logs, specimen_stiffness=cfg.specimen_stiffness,
                               numerical_mass=float(case.mass[0, 0]), numerical_damping=float(case.damping[0, 0]),
                               numerical_stiffness=float(case.stiffness[0, 0]))
    ld = ident.log_decrement
    return {"delta": ld.log_decrement, "zeta": ld.damping_ratio, "T_d": ld.damped_period,
            "omega_n": ld.natural_frequency, "M_e": ld.specimen_mass, "C_e": ld.specimen_damping,
            "K_e": cfg.specimen_stiffness, "dM_e_per_dt": ident.mass_change_per_time_step,
            "ls_m": ident.least_squares["m"], "ls_c": ident.least_squares["c"],
            "ls_nrmse": ident.least_squares["nrmse_percent"], "free_m": ident.least_squares_free["m"],
            "free_k": ident.least_squares_free["k"]}


def run_scenario(cfg: RigSdofConfig, options: RunOptions = RunOptions(engine="stepwise")) -> dict:
    """Run the case (``engine`` must be step-wise: a rig is driven from Python)."""
    if options.engine != "stepwise":
        raise ParameterError(f"{SCENARIO} runs a rig: --engine stepwise only (got {options.engine!r})")
    case = CASES[cfg.case]
    result = rig_case.run_rig_test(case, cfg, options)
    ours = _ours(result, cfg)
    if cfg.case == "free":
        result["identification"] = _identify(result, cfg)
        if result["identification"]:
            ident = result["identification"]
            ours.update({"ζ": (None, ident["zeta"]), "T_d [s]": (None, ident["T_d"]),
                         "ω_n [rad/s]": (None, ident["omega_n"]), "M_e [kg]": (None, ident["M_e"]),
                         "C_e [N·s/m]": (None, ident["C_e"])})
        peaks = ours.get("first peak", (None, None)), ours.get("second peak", (None, None))
        if peaks[0][1] and peaks[1][1]:
            ours["peaks read on the rig u0/u1 [mm]"] = (None, f"{peaks[0][1][1] * 1e3:.2f}/{peaks[1][1][1] * 1e3:.2f}")
    rows = [(label, value, unit, source) + tuple(ours.get(label, (None, None)))
            for label, value, unit, source in case.seed002]
    rows += [(label, None, "", "") + tuple(v) for label, v in ours.items() if label not in dict(
        (r[0], r) for r in case.seed002)]
    result["seed002_side_by_side"] = rows
    return result


#: the report and figures of every rig scenario
report = rig_case.format_report
plot = rig_case.plot
