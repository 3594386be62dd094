"""Offline calibration of a compensator's gains over a sample of SDOF specimens
(seed 003 §2.3 "Calibration of Γ", digest 003 §4; digest 000 §14 item 3).

* :mod:`.sample` — the Latin-hypercube sample of SDOF specimens (seeded, units stated);
* :mod:`.gains` — each compensator's calibrated parameters θ: names, units, bounds, the
  sources' values, and θ → the compensator's params and initial state;
* :mod:`.sdof_rths` — the ``sdof`` test's compiled slow step (built from its test file by
  :mod:`rths_ident.scenarios.sdof_calibration`) as a pure function (θ, specimen) → J2,
  ``vmap``-able; failed runs are flagged, never scored low;
* :mod:`.study` — the samples, the search, the before/after scoring and the trust warnings;
* :mod:`.search` — population search (particle swarm, differential evolution), each
  population evaluated as one compiled batch;
* :mod:`.gradient` — J2 differentiated with ``jax.grad`` through the fused loop,
  optimised with scipy's L-BFGS-B.
"""
