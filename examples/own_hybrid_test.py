"""A hybrid test built in Python from your own pieces: structure matrices, specimen
model, ground-motion record — run with the fused engine and the step-wise engine.

The structure: a 2-storey shear building, 20 t per floor. Storey 1 has two columns of
4 MN/m; one of them is the *specimen* — a bilinear steel column (OpenSees ``Steel01``:
k = 4 MN/m, f_y = 40 kN, b = 5 %) loaded by a servo-hydraulic actuator — and the other
stays in the numerical substructure with storey 2 (6 MN/m). Damping: 5 % Rayleigh on
modes 1–2 of the whole building, kept whole in the numerical substructure. The record:
your own file (here ``examples/data/my_record.csv``, 12 s of El Centro 1940 in g).

Run it:  python examples/own_hybrid_test.py [--duration S]
Units: SI (kg, N/m, N·s/m, m, s) throughout.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import numpy as np

from rths_ident import metrics
from rths_ident.hybrid import DirectSite, UpdateGuards
from rths_ident.hybrid.fast_side import actuator
from rths_ident.hybrid.loop import engine
from rths_ident.hybrid.loop.assembled import HybridTest, NativeNS, native_substructure, run_loop
from rths_ident.scenarios import components
from rths_ident.scenarios.config import HybridTestConfig
from rths_ident.hybrid.fast_side.fast_chunk import null_identifier
from rths_ident.models import BilinearKinematic
from rths_ident.models.bilinear import BilinearParams
from rths_ident.structures import rayleigh_damping
from rths_ident.structures.alpha_os import AlphaOS
from rths_ident.structures.numerical_substructure import native_ns_step
from rths_ident.structures.structure import structure_from_matrices, with_changes

RECORD = Path(__file__).resolve().parent / "data" / "my_record.csv"

# --- your structure (matrices) ----------------------------------------------------------
FLOOR_MASS = 20e3  # kg
K_COLUMN = 4e6  # N/m, each storey-1 column (initial)
K_STOREY_2 = 6e6  # N/m
M = np.diag([FLOOR_MASS, FLOOR_MASS])
K_WHOLE = np.array([[2 * K_COLUMN + K_STOREY_2, -K_STOREY_2], [-K_STOREY_2, K_STOREY_2]])
# the numerical substructure: the building without the tested column (it acts on DOF 0)
K_NUMERICAL = K_WHOLE - np.array([[K_COLUMN, 0.0], [0.0, 0.0]])

# --- your specimen (a model of rths_ident.models, or your own with init/step) -------------
SPECIMEN = BilinearParams(k=K_COLUMN, fy=40e3, b=0.05)


def build(duration: float | None = None) -> HybridTest:
    """The hybrid test: the record at the slow rate, the numerical substructure, the
    virtual fast side around the specimen, and the reference it is judged against."""
    # rates, record, compensation, transition and sensors: the shared settings
    cfg = HybridTestConfig(record=str(RECORD), record_units="g", duration=duration, fast_rate=4000.0,
                           slow_rate=50.0, compensation="damb", transition="predictor-corrector")
    time_slow, ground_accel = components.slow_record(cfg)
    dt_slow = 1.0 / cfg.slow_rate

    damping, _, _ = rayleigh_damping(M, K_WHOLE, zeta=0.05, modes=(1, 2))
    # the ground term keeps the FULL mass (the specimen is not base-excited in the lab)
    structure, params = structure_from_matrices(M, K_NUMERICAL, damping, ground_mass=M @ np.ones(2))
    interface = (0,)  # DOF of floor 1, where the specimen pushes
    # α-OS splits the specimen's initial stiffness off at the interface (its K^l)
    params = with_changes(params, interface_stiffness=np.diag([K_COLUMN, 0.0]))
    integrator = AlphaOS(structure, alpha=-0.1)
    native = NativeNS(integrator, params, params, interface, native_ns_step(integrator, interface),
                      apply_estimate=lambda p, estimate: p)  # nothing to update: the NS is linear

    side = components.fast_side(
        cfg, specimen_model=BilinearKinematic, specimen=SPECIMEN, identifier=null_identifier(),
        actuator=actuator.CarrionSpencerParams.scaled_for(peak_force=60e3, peak_displacement=0.1, peak_velocity=1.0),
        realisation=lambda: None)  # DDMRT's training signal; unused with predictor–corrector

    def make_ns(variant: str = "none"):
        return native_substructure(test, variant)

    def reference():
        """The ideal partitioned test: the same NS with the specimen model imposed
        directly at the slow rate (no actuator, no noise): floors (N, 2) [m], force (N,) [N]."""
        logs = engine.run_stepwise(DirectSite(BilinearKinematic, SPECIMEN, dt_slow), make_ns(), ground_accel)
        return np.asarray(logs["ns"]["displacement"]), np.asarray(logs["fast"]["force"])[:, 0]

    test = HybridTest(
        key=("own-hybrid-test", duration), name="own-hybrid-test", time_slow=time_slow, ground_accel=ground_accel,
        slow_rate=cfg.slow_rate, fast_side=side, native_ns=native, make_ns=make_ns,
        guards=UpdateGuards(lower_bounds=np.zeros(0), upper_bounds=np.zeros(0), freeze_until_s=np.inf),
        param_names=(), true_values=np.zeros(0), initial_values=np.zeros(0), reference=reference, seed=123,
        response_names=("floor1", "floor2"))
    return test


def main(duration: float | None = None) -> dict:
    """Build the test, run it fused and step-wise, print and return the comparison."""
    test = build(duration)
    reference, _ = test.reference()
    fused, fused_wall = run_loop(test, "fused", variant="none")
    stepwise, stepwise_wall = run_loop(test, "stepwise", variant="none")
    roof_fused = fused["ns"]["displacement"][:, -1]
    roof_stepwise = np.asarray(stepwise["ns"]["displacement"])[:, -1]
    target = np.asarray(fused["fast"]["target"]).ravel()
    measured = np.asarray(fused["fast"]["measured"]).ravel()
    out = {
        "duration_s": float(test.time_slow[-1]),
        "roof_J4_percent": float(metrics.j4_global_error(reference[:, -1], roof_fused)),
        "J2_percent": float(metrics.j2_tracking_error(target, measured)),
        "peak_interface_drift_mm": float(1e3 * np.max(np.abs(measured))),
        "peak_specimen_force_kN": float(1e-3 * np.max(np.abs(fused["fast"]["force"]))),
        "fused_vs_stepwise_max_m": float(np.max(np.abs(roof_fused - roof_stepwise))),
        "fused_wall_s": fused_wall, "stepwise_wall_s": stepwise_wall,
    }
    print(f"own hybrid test: {out['duration_s']:.2f} s of {RECORD.name}")
    print(f"  roof J4 vs the ideal partitioned test {out['roof_J4_percent']:.3f} %, tracking J2 {out['J2_percent']:.3f} %")
    print(f"  specimen: peak drift {out['peak_interface_drift_mm']:.1f} mm (yield at "
          f"{1e3 * SPECIMEN.fy / SPECIMEN.k:.0f} mm), peak force {out['peak_specimen_force_kN']:.1f} kN")
    print(f"  fused {fused_wall:.3f} s, step-wise {stepwise_wall:.3f} s; largest roof difference between the two "
          f"engines {out['fused_vs_stepwise_max_m']:.2e} m")
    return out


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--duration", type=float, default=None, help="seconds of the record (default all)")
    main(parser.parse_args().duration)
