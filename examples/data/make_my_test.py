"""Writes examples/data/my_test.csv: a logged cyclic test of a bilinear steel specimen
(OpenSees Steel01: k = 2 kN/mm, f_y = 30 kN, b = 5 %) under growing displacement cycles
to 60 mm, sampled at 20 Hz, with load-cell noise of 0.1 kN rms (seed 0), written as a
data logger would: time [s], displacement [mm], force [kN], with a header line.

The README's ``rths-ident fit examples/data/my_test.csv --units mm,kN --model bilinear
--method ls`` identifies these three numbers back. Run from the repository root:
``python examples/data/make_my_test.py``.
"""

from pathlib import Path

import numpy as np

from rths_ident.models import BilinearKinematic

K, FY, B = 2.0e6, 30.0e3, 0.05  # N/m, N, -
RATE = 20.0  # Hz


def main() -> Path:
    t = np.arange(0.0, 60.0, 1.0 / RATE)
    x = 0.060 * (t / t[-1]) * np.sin(2 * np.pi * t / 10.0)  # m: six cycles growing to 60 mm
    force = BilinearKinematic(k=K, fy=FY, b=B).force_history(x)  # N
    force = force + 100.0 * np.random.default_rng(0).standard_normal(t.size)
    out = Path(__file__).resolve().parent / "my_test.csv"
    lines = ["time,displacement,force"] + [f"{a:.2f},{b:.4f},{c:.4f}" for a, b, c in zip(t, 1e3 * x, 1e-3 * force)]
    out.write_text("\n".join(lines) + "\n")
    return out


if __name__ == "__main__":
    print(f"wrote {main()}")
