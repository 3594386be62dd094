"""Your own hybrid test in Python: the test file examples/two_bay_frame.toml as objects.

A bench-scale 2-storey, 2-bay shear frame (20 kg floors, three columns per storey); every
column a bilinear steel strip (OpenSees ``Steel01``: k = 1540 N/m, f_y = 8 N, b = 5 %).
The right-most first-storey column is the specimen, behind a servo-hydraulic actuator;
the other five are the numerical substructure, 30 % soft and weak at the start, and a
joint UKF identifies k and f_y on the specimen while the test runs and pushes them into
the five numerical columns. The record: your own file (12 s of El Centro 1940 in g,
``examples/data/my_record.csv``) × 0.2.

Run it:  python examples/own_hybrid_test.py [--duration S] [--site emulator]
Units: SI (kg, N/m, N, m, s) throughout.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import rths_ident

RECORD = Path(__file__).resolve().parent / "data" / "my_record.csv"


def two_bay_frame(duration: float | None = None, site: str = "virtual") -> rths_ident.HybridTest:
    """The test, table by table as in a test file (``rths-ident run shear-frame --help``
    lists every field with its unit)."""
    return rths_ident.HybridTest(
        "shear-frame",
        test={"name": "two-bay-frame"},
        record={"ground_motion": str(RECORD), "units": "g", "scale": 0.2, "duration": duration},
        structure={"floor_mass": 20.0, "storeys": 2, "columns_per_storey": 3},
        specimen={"site": site, "model": "bilinear", "k": 1540.0, "fy": 8.0, "b": 0.05},
        identifier={"kind": "ukf", "fields": ["k", "fy"], "initial_error": -0.3, "parameter_std": 0.1},
        updating={"mode": "ukf", "max_relative_std": 0.05},
    )


def main(duration: float | None = None, site: str = "virtual") -> dict:
    """Run the test (fused on the virtual side, step-wise on a rig), print its report and
    return its metrics."""
    rths_ident.configure()  # before any JAX computation: XLA's small-loop kernels
    test = two_bay_frame(duration, site)
    result = test.run()
    print(test.report(result))
    return result.metrics


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--duration", type=float, default=None, help="seconds of the record (default all)")
    parser.add_argument("--site", default="virtual", help="virtual (default) | emulator | emulator:timed | direct")
    arguments = parser.parse_args()
    main(arguments.duration, arguments.site)
