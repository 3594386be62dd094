"""An independent check of the maRTHS interface (docs/benchmarks/marths.md, "Is the
interface demand real?").

    python docs/scripts/marths_interface_check.py [--write docs/benchmarks/marths.md]

1. **The reference, a second way.** The shipped SAP matrices read with NumPy (not the
   package's loader), the massless DOFs condensed, 5 % Rayleigh on modes 1 and 3, the
   state-space response to El Centro × 0.4 by SciPy's ``lsim`` (exact for a linearly
   interpolated record) — against the package's Newmark reference.
2. **The physical frame, a second way.** The central first-storey frame built in
   OpenSeesPy from the paper's member data (§3.3: two S3×5.7 columns, 635 mm, pinned
   bases; a 762 mm built-up I beam, 50 × 6 mm web and two 38 × 6 mm flanges; E = 200 GPa;
   rigid joints; the floor's lateral DOF shared by both top joints, as in the reference),
   its stiffness at the driven joint (translation x and rotation θ, counter-clockwise, the
   other joint free to rotate) by unit loads — against the benchmark's ES (reference
   minus numerical export) condensed the same way.
3. **The demand** under each candidate mapping of the paper's node 4 onto the SAP joints
   (joint 7 or joint 6, θ = ±Ry): peak θ4, stroke, stroke velocity and the force of the
   rigid coupler (small-angle statics: F1 + F2 = F_x, 0.127 (F1 − F2) = M), and the forces
   the paper's own 4 mm ramp on both actuators (x = 4 mm, θ = 0; §3.6.1, Fig. 16B) takes.
4. **J5's rotation against its translation.** ψ̂_m comes from the two estimated strokes:
   θ̂ = (η̂1 − η̂2)/(2 p sin α), x̂ ≈ (η̂1 + η̂2)/2, so the rotation's error is the
   *difference* of the two strokes' errors over 2·127 θ, a third of the translation's
   amplitude here. From each side's J2 of η̂_m and the correlation ρ of the two errors the
   rotation's NRMS error is √(a1² + a2² − 2ρ a1 a2)/(254 θ_rms) with a_i = J2_i·rms(η_i).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from page_markers import print_or_write_tables  # docs/scripts/page_markers.py

import numpy as np
import scipy.linalg
import scipy.signal

DATA = Path(__file__).resolve().parents[2] / "src" / "rths_ident" / "datasets" / "data"  # the shipped copies
P_ARM, ALPHA = 0.29539, np.radians(25.46)  # m, rad (Eqs. 28–30)
ARM = P_ARM * np.sin(ALPHA)  # 0.127 m: the actuators' lever about the joint
INCH = 0.0254
E_STEEL = 200e9
LIMITS = {"force_kN": 9.34, "stroke_mm": 4.0, "velocity_mm_s": 25.0}
PAPER_J2_ESTIMATED = (3.2, 13.0)  # % (§5.4: η̂_m against η_ns, actuators 1, 2)
PAPER_J5 = (8.1, 27.8)  # % x4, θ4


def _joint_table(path: Path) -> dict:
    rows = np.loadtxt(path, delimiter=",", skiprows=1, dtype=int, ndmin=2)
    return {int(r[0]): dict(zip(("Ux", "Uy", "Uz", "Rx", "Ry", "Rz"), map(int, r[1:]))) for r in rows}


def benchmark_matrices():
    """(K, M, joints, K_es) of the reference from the CSV files, read here with NumPy."""
    ref, num = DATA / "marths" / "reference", DATA / "marths" / "numerical"
    K, M = (np.loadtxt(ref / f"{n}_matrix.csv", delimiter=",") for n in ("K", "M"))
    Kn = np.loadtxt(num / "N_K_matrix.csv", delimiter=",")
    joints, joints_n = _joint_table(ref / "Joint_DOF.csv"), _joint_table(num / "N_Joint_DOF.csv")
    place = np.full(Kn.shape[0], -1)
    for joint, dofs in joints_n.items():
        for dof, eq in dofs.items():
            if eq:
                place[eq - 1] = joints[joint][dof] - 1
    K_ns = np.zeros_like(K)
    K_ns[np.ix_(place, place)] = Kn
    K_es = K - K_ns
    K_es[np.abs(K_es) < 1e-9 * np.abs(K).max()] = 0.0
    return K, M, joints, K_es


def reference_lsim(K, M, joints, record, scale=0.4, rate=1024.0):
    """Displacements and velocities (N, 29) of the reference by state space + ``lsim``."""
    n = K.shape[0]
    massed = np.diag(M) > 0
    a, b = np.flatnonzero(massed), np.flatnonzero(~massed)
    T = np.zeros((n, a.size))
    T[a, np.arange(a.size)] = 1.0
    T[b] = -np.linalg.solve(K[np.ix_(b, b)], K[np.ix_(b, a)])
    Kc, Mc = T.T @ K @ T, T.T @ M @ T
    omega = np.sqrt(scipy.linalg.eigh(Kc, Mc, eigvals_only=True))
    a0, a1 = 2 * 0.05 * omega[0] * omega[2] / (omega[0] + omega[2]), 2 * 0.05 / (omega[0] + omega[2])
    Cc = a0 * Mc + a1 * Kc
    iota = np.zeros(n)
    for dofs in joints.values():
        if dofs["Ux"]:
            iota[dofs["Ux"] - 1] = 1.0
    load = T.T @ (-(M @ iota))
    m = a.size
    A = np.block([[np.zeros((m, m)), np.eye(m)], [-np.linalg.solve(Mc, Kc), -np.linalg.solve(Mc, Cc)]])
    B = np.concatenate([np.zeros(m), np.linalg.solve(Mc, load)])[:, None]
    C = np.block([[T, np.zeros((n, m))], [np.zeros((n, m)), T]])
    t = np.arange(0.0, record[-1, 0], 1.0 / rate)
    ag = scale * np.interp(t, record[:, 0], record[:, 1])
    _, y, _ = scipy.signal.lsim((A, B, C, np.zeros((2 * n, 1))), ag, t)
    return t, y[:, :n], y[:, n:], omega / (2 * np.pi)


def lab_frame_stiffness(column_length=0.635, beam_length=0.762) -> np.ndarray:
    """2×2 stiffness [[N/m, N], [N, N·m/rad]] at the driven joint (x, θ counter-clockwise)
    of the paper's physical frame in OpenSeesPy, by unit loads (flexibility inverted)."""
    import openseespy.opensees as ops  # noqa: PLC0415

    area_c, inertia_c = 1.67 * INCH**2, 2.52 * INCH**4  # S3×5.7 (AISC)
    inertia_b = (6 * 50**3 / 12 + 2 * (38 * 6**3 / 12 + 38 * 6 * 28**2)) * 1e-12
    area_b = (50 * 6 + 2 * 38 * 6) * 1e-6
    flexibility = np.zeros((2, 2))
    for j, load in enumerate(((1.0, 0.0, 0.0), (0.0, 0.0, 1.0))):
        ops.wipe()
        ops.model("basic", "-ndm", 2, "-ndf", 3)
        ops.node(1, 0.0, 0.0), ops.node(2, beam_length, 0.0)
        ops.node(3, 0.0, column_length), ops.node(4, beam_length, column_length)
        ops.fix(1, 1, 1, 0), ops.fix(2, 1, 1, 0)  # pinned bases
        ops.geomTransf("Linear", 1)
        ops.element("elasticBeamColumn", 1, 1, 3, area_c, E_STEEL, inertia_c, 1)
        ops.element("elasticBeamColumn", 2, 2, 4, area_c, E_STEEL, inertia_c, 1)
        ops.element("elasticBeamColumn", 3, 3, 4, area_b, E_STEEL, inertia_b, 1)
        ops.equalDOF(3, 4, 1)  # one lateral DOF per floor, as the reference's diaphragm
        ops.timeSeries("Linear", 1), ops.pattern("Plain", 1, 1), ops.load(3, *load)
        ops.constraints("Transformation"), ops.numberer("Plain"), ops.system("FullGeneral")
        ops.test("NormDispIncr", 1e-14, 10), ops.algorithm("Linear"), ops.integrator("LoadControl", 1.0)
        ops.analysis("Static"), ops.analyze(1)
        flexibility[:, j] = [ops.nodeDisp(3, 1), ops.nodeDisp(3, 3)]
    ops.wipe()
    return np.linalg.inv(flexibility)


def condensed_es(K_es, joints, joint, sign) -> np.ndarray:
    """The benchmark ES on (floor-1 x, θ of ``joint`` = sign·Ry), the rest condensed out."""
    es = np.flatnonzero(np.abs(K_es).max(axis=0) > 0)
    keep = [joints[joint]["Ux"] - 1, joints[joint]["Ry"] - 1]
    other = [i for i in es if i not in keep]
    k = K_es[np.ix_(keep, keep)] - K_es[np.ix_(keep, other)] @ np.linalg.solve(
        K_es[np.ix_(other, other)], K_es[np.ix_(other, keep)])
    S = np.diag([1.0, sign])
    return S @ k @ S


def actuator_forces(k, x, theta):
    """(F1 bottom, F2 top) [N] the rigid coupler needs to hold (x, θ) against stiffness k."""
    fx, moment = k @ np.vstack([x, theta])
    return fx / 2 + moment / (2 * ARM), fx / 2 - moment / (2 * ARM)


def strokes(x, theta):
    """Eq. 28 (bottom, top) [m]."""
    return (x + P_ARM * (np.cos(theta - ALPHA) - np.cos(ALPHA)), x + P_ARM * (np.cos(theta + ALPHA) - np.cos(ALPHA)))


def demand(t, u, v, joints, K_es, k_lab, joint, sign) -> dict:
    x = u[:, joints[joint]["Ux"] - 1]
    theta = sign * u[:, joints[joint]["Ry"] - 1]
    eta1, eta2 = strokes(x, theta)
    velocity = max(np.abs(np.gradient(eta1, t)).max(), np.abs(np.gradient(eta2, t)).max())
    k_es = condensed_es(K_es, joints, joint, sign)
    out = {"joint": joint, "sign": sign, "theta_mrad": 1e3 * np.abs(theta).max(), "x_mm": 1e3 * np.abs(x).max(),
           "stroke_mm": 1e3 * max(np.abs(eta1).max(), np.abs(eta2).max()), "velocity_mm_s": 1e3 * velocity,
           "x_velocity_mm_s": 1e3 * np.abs(np.gradient(x, t)).max(), "k_es": k_es,
           "rotation_to_translation": ARM * np.std(theta) / np.std(x)}
    for name, k in (("es", k_es), ("lab", k_lab)):
        f1, f2 = actuator_forces(k, x, theta)
        out[f"force_{name}_kN"] = max(np.abs(f1).max(), np.abs(f2).max()) / 1e3
        ramp = actuator_forces(k, np.array([0.004]), np.array([0.0]))
        out[f"ramp_{name}_kN"] = (float(ramp[0][0]) / 1e3, float(ramp[1][0]) / 1e3)
    return out


def rotation_error(j2_1, j2_2, rho, eta1_rms, eta2_rms, theta_rms) -> float:
    """NRMS [%] of θ̂ from the two strokes' NRMS errors j2_i [%] and their correlation."""
    a1, a2 = j2_1 / 100 * eta1_rms, j2_2 / 100 * eta2_rms
    return 100 * np.sqrt(max(a1**2 + a2**2 - 2 * rho * a1 * a2, 0.0)) / (2 * ARM * theta_rms)


def estimated_errors_of_our_run():
    """Our nominal LQG run on El Centro × 0.4: the two strokes' η̂_m − η_ns, their J2 and ρ,
    and J5 of x4, θ4 as the benchmark's metrics compute them."""
    from rths_ident.benchmarks.marths import metrics as bmetrics  # noqa: PLC0415
    from rths_ident.benchmarks.marths.study import NOMINAL_PLANT, StudyConfig, _references, run_once  # noqa: PLC0415

    cfg = StudyConfig(uncertain=0)
    ag, ref_tk, ref_upper = _references(cfg)
    logs = run_once(cfg, NOMINAL_PLANT, ag, cfg.seed)
    error = logs["eta_estimated"] - logs["eta_target"]
    j2 = 100 * np.sqrt(np.mean(error**2, axis=0) / np.mean(logs["eta_target"] ** 2, axis=0))
    rho = float(np.corrcoef(error[:, 0], error[:, 1])[0, 1])
    indices = bmetrics.run_indices(1024.0, logs, ref_tk, ref_upper, "paper")
    return {"J2_estimated": j2, "rho": rho, "J5": indices["J5"], "eta_rms": np.sqrt(np.mean(logs["eta_target"] ** 2, 0))}


def run() -> dict:
    from rths_ident.benchmarks.marths.model import marths_model  # noqa: PLC0415
    from rths_ident.benchmarks.marths.study import _references, StudyConfig  # noqa: PLC0415

    K, M, joints, K_es = benchmark_matrices()
    record = np.loadtxt(Path(_record_path()), delimiter=",", skiprows=1)
    t, u, v, frequencies = reference_lsim(K, M, joints, record)
    k_lab = lab_frame_stiffness()
    mappings = [(7, -1.0), (6, -1.0), (6, 1.0)]
    demands = [demand(t, u, v, joints, K_es, k_lab, joint, sign) for joint, sign in mappings]
    model = marths_model()
    _, ref_tk, _ = _references(StudyConfig(uncertain=0))
    ours = {"x_mm": 1e3 * np.abs(ref_tk[:, 0]).max(), "theta_mrad": 1e3 * np.abs(ref_tk[:, 1]).max(),
            "frequencies_hz": model.frequencies_hz[:5]}
    x = u[:, joints[7]["Ux"] - 1]
    theta = -u[:, joints[7]["Ry"] - 1]
    eta1, eta2 = strokes(x, theta)
    geometry = {"eta1_rms": np.sqrt(np.mean(eta1**2)), "eta2_rms": np.sqrt(np.mean(eta2**2)),
                "theta_rms": np.sqrt(np.mean(theta**2)), "x_rms": np.sqrt(np.mean(x**2))}
    run_ = estimated_errors_of_our_run()
    paper_range = [rotation_error(*PAPER_J2_ESTIMATED, rho, geometry["eta1_rms"], geometry["eta2_rms"],
                                  geometry["theta_rms"]) for rho in (1.0, 0.0, -1.0)]
    ours_predicted = rotation_error(*run_["J2_estimated"], run_["rho"], *run_["eta_rms"], geometry["theta_rms"])
    return {"frequencies_hz": frequencies[:5], "ours": ours, "demands": demands, "k_lab": k_lab,
            "geometry": geometry, "run": run_, "paper_rotation_range": paper_range,
            "ours_rotation_predicted": ours_predicted}


def _record_path() -> str:
    return str(DATA / "ground_motions" / "elcentro_1940_marths" / "elcentro_1940_marths_m_s2.csv")


def stiffness_table(result) -> str:
    k_lab, k_es = result["k_lab"], result["demands"][0]["k_es"]
    rows = [("k_xx [MN/m]", 0, 0), ("k_xθ [MN]", 0, 1), ("k_θθ [MN·m/rad]", 1, 1)]
    lines = ["| at the driven joint (x, θ ccw; the other joint free to rotate) | benchmark ES (SAP joint 7, θ = −Ry) "
             "| OpenSeesPy frame from the paper's members | ratio |", "|---|---|---|---|"]
    for name, i, j in rows:
        lines.append(f"| {name} | {k_es[i, j] / 1e6:.3f} | {k_lab[i, j] / 1e6:.3f} | {k_es[i, j] / k_lab[i, j]:.2f} |")
    return "\n".join(lines)


def demand_table(result) -> str:
    lines = ["| paper node 4 = SAP joint, θ | peak θ4 mrad | peak stroke mm (≤ 4) | peak stroke velocity mm/s (≤ 25; "
             "x alone) | peak actuator force kN (≤ 9.34): benchmark ES / OpenSees frame | 4 mm ramp (x = 4 mm, θ = 0), "
             "bottom / top kN: benchmark ES / OpenSees frame |", "|---|---|---|---|---|---|"]
    for d in result["demands"]:
        sign = "−Ry" if d["sign"] < 0 else "+Ry"
        ramp_es, ramp_lab = d["ramp_es_kN"], d["ramp_lab_kN"]
        lines.append(f"| {d['joint']}, θ = {sign}{' (ours)' if (d['joint'], d['sign']) == (7, -1.0) else ''} "
                     f"| {d['theta_mrad']:.2f} | {d['stroke_mm']:.2f} | {d['velocity_mm_s']:.0f} ({d['x_velocity_mm_s']:.0f}) "
                     f"| {d['force_es_kN']:.1f} / {d['force_lab_kN']:.1f} "
                     f"| {ramp_es[0]:+.1f} / {ramp_es[1]:+.1f}; {ramp_lab[0]:+.1f} / {ramp_lab[1]:+.1f} |")
    return "\n".join(lines)


def rotation_table(result) -> str:
    g, r = result["geometry"], result["run"]
    lo, mid, hi = result["paper_rotation_range"]
    return "\n".join([
        "| | J2 of η̂_m act. 1 / 2 % | correlation ρ of the two errors | J5 θ4 % from the strokes' errors "
        "(√(a1² + a2² − 2ρa1a2)/(254 θ_rms)) | J5 x4 / θ4 % reported |", "|---|---|---|---|---|",
        f"| paper (lab; J2 of η̂_m from §5.4) | {PAPER_J2_ESTIMATED[0]:.1f} / {PAPER_J2_ESTIMATED[1]:.1f} | not reported "
        f"| {lo:.1f} (ρ = 1) … {mid:.1f} (ρ = 0) … {hi:.1f} (ρ = −1) | {PAPER_J5[0]:.1f} / {PAPER_J5[1]:.1f} |",
        f"| ours (virtual, nominal plant, LQG) | {r['J2_estimated'][0]:.1f} / {r['J2_estimated'][1]:.1f} "
        f"| {r['rho']:.2f} | {result['ours_rotation_predicted']:.1f} | {r['J5'][0]:.1f} / {r['J5'][1]:.1f} |",
        "",
        f"(El Centro × 0.4 reference at SAP joint 7: rms x4 = {1e3 * g['x_rms']:.2f} mm, 127·rms θ4 = "
        f"{1e3 * ARM * g['theta_rms']:.2f} mm: the rotation moves each stroke a third as much as the translation.)"])


if __name__ == "__main__":
    import rths_ident

    rths_ident.configure()  # before any JAX computation, as the command line
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--write", type=Path, default=None)
    args = parser.parse_args()
    result = run()
    ours = result["ours"]
    summary = (f"Reference, two ways: SciPy `lsim` on the CSV matrices {', '.join(f'{f:.3f}' for f in result['frequencies_hz'])} Hz, "
               f"peak x4 {result['demands'][0]['x_mm']:.2f} mm, θ4 {result['demands'][0]['theta_mrad']:.2f} mrad; "
               f"the package's Newmark reference {ours['x_mm']:.2f} mm, {ours['theta_mrad']:.2f} mrad.")
    tables = {"marths-check-reference": summary, "marths-check-stiffness": stiffness_table(result),
              "marths-check-demand": demand_table(result), "marths-check-rotation": rotation_table(result)}
    print_or_write_tables(tables, args.write)
