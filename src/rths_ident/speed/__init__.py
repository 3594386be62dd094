"""Side-by-side speed measurements (``rths-ident bench``).

Each module has ``run(...) -> dict`` that measures rths_ident against a reference
implementation in one process, after warm-up/compilation, with ``time.perf_counter``
and best-of-repeats, and returns the ratios. Timing is never asserted in tests.

* :mod:`rths_ident.speed.ukf_vs_filterpy` — UKF per step: filterpy vs the
  :class:`~rths_ident.estimators.ukf.UnscentedKalmanFilter` wrapper vs
  :func:`~rths_ident.estimators.ukf.ukf_scan`.
* :mod:`rths_ident.speed.hybrid_loop` — the flagship's engines, batches and fast-side
  components.
* :mod:`rths_ident.speed.opensees_ns` — the OpenSeesPy numerical substructure per slow
  step (seed 000 Case 4's frame) and what the step-wise loop adds on top.
"""
