"""The multi-axial RTHS (maRTHS) benchmark (seed 004; docs/benchmarks/marths.md).

One concept per module:

* :mod:`.model` — the reference frame from the shipped FE matrices, the DOF map, Rayleigh
  damping, the numerical/experimental partition;
* :mod:`.ideal_partition` — ideal RTHS (no actuators, no noise), coupled or one-step lagged;
* :mod:`.plant` — the identified 2×2 actuator plant (Eq. 25) as state space;
* :mod:`.uncertainty` — the random-plant sampler (Table 2 as reconstructed);
* :mod:`.kinematics` — the coupler (Eqs. 28–30);
* :mod:`.daq` — volts, saturation, 18-bit quantization, sensor noise (§3.6.3);
* :mod:`.realisability` — the constraint monitor (±3.8 V, 9340 N, 25 mm/s, ±4 mm);
* :mod:`.force_estimation` — the feedback force from the specimen model (Eq. 31);
* :mod:`.controller` — the sample LQG tracking controller (§5.3) and dAMB per actuator;
* :mod:`.site` — the fast side as the engine's chunk (target → controller → plant → …);
* :mod:`.metrics` — J1–J10 with the paper's and the official scorer's conventions.
"""
