"""Benchmark problems of the RTHS literature, built from the library's parts.

* :mod:`rths_ident.benchmarks.marths` — the multi-axial RTHS benchmark (seed 004,
  Condori Uribe et al. 2023): a 3-storey steel frame, two actuators driving one joint
  through a coupler, an identified 2×2 plant with uncertainty, J1–J10.
"""
