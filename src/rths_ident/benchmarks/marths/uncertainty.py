"""Random control plants of the maRTHS benchmark (seed 004 §4.4, Table 2 as reconstructed
from the package's ``fcn_build_uncert_plant``; digest 004 §8).

Each pole and zero of Eq. 25 (in Hz) is drawn as p_u = p_nom (1 + c n), n ~ N(0, 1),
with the relative standard deviations c of Table 2::

    zeros 120, 90 Hz   (H11, H21)          5.5 %
    poles 2.65, 40 Hz  (H11, H21)          6 %
    zero 3 Hz          (H12)               3 %
    zero 5 Hz          (H22)               3 %
    poles 3.5, 18.5 Hz (H12, H22)          3 %
    frame pole 50 + 63j Hz (all; the complex number scaled, its conjugate mirrored)  5 %

Draws are shared where a value is shared (H11 and H21 share their zeros and poles, H12
and H22 their poles, all four the frame pole). Then each gain is renormalised so that
|H_u(jω0)| = |H_nom(jω0)| at ω0 = 2π·0.01 rad/s: the low-frequency gain is kept. (The
package uses 0.01 Hz for H11 and the first point of MATLAB's default Bode grid for the
others — a minor inconsistency; 0.01 Hz is used for all four here.)

Reproducible: a plant is a function of the seed of a ``numpy.random.Generator``.
"""

from __future__ import annotations

import numpy as np

from rths_ident.errors import ParameterError
from rths_ident.benchmarks.marths.plant import NOMINAL_PLANT, PlantDescription

__all__ = ["RELATIVE_STD", "RENORMALISATION_HZ", "sample_plant", "sample_plants", "plant_as_dict"]

#: Table 2: relative standard deviation of each group
RELATIVE_STD = {"zeros_column1": 0.055, "poles_column1": 0.06, "zero_h12": 0.03, "zero_h22": 0.03,
                "poles_column2": 0.03, "frame_pole": 0.05}
RENORMALISATION_HZ = 0.01


def sample_plant(rng: np.random.Generator, nominal: PlantDescription = NOMINAL_PLANT,
                 nominal_gain: np.ndarray | None = None) -> PlantDescription:
    """One random plant (module doc); ``nominal_gain`` |H_nom(jω0)| (2, 2) if already known."""
    c = RELATIVE_STD
    zeros1 = np.asarray(nominal.zeros[0]) * (1.0 + c["zeros_column1"] * rng.standard_normal(2))
    poles1 = nominal.column_poles[0] * (1.0 + c["poles_column1"] * rng.standard_normal(2))
    zero12 = nominal.zeros[2][0] * (1.0 + c["zero_h12"] * rng.standard_normal())
    zero22 = nominal.zeros[3][0] * (1.0 + c["zero_h22"] * rng.standard_normal())
    poles2 = nominal.column_poles[1] * (1.0 + c["poles_column2"] * rng.standard_normal(2))
    frame = nominal.frame_pole * (1.0 + c["frame_pole"] * rng.standard_normal())
    draft = PlantDescription(column_poles=np.array([poles1, poles2]),
                             zeros=(tuple(zeros1), tuple(zeros1), (zero12,), (zero22,)),
                             gains=np.array(nominal.gains, dtype=float), frame_pole=complex(frame))
    h_nom = _low_frequency_gain(nominal) if nominal_gain is None else nominal_gain
    h_u = _low_frequency_gain(draft)
    return draft._replace(gains=draft.gains * h_nom / h_u)


def _low_frequency_gain(plant: PlantDescription) -> np.ndarray:
    """|H_ij(jω0)| (2, 2) from the factors of Eq. 25 (cheap: no polynomials)."""
    s = 2j * np.pi * RENORMALISATION_HZ
    two_pi = 2.0 * np.pi
    frame = abs((s + two_pi * plant.frame_pole) * (s + two_pi * np.conj(plant.frame_pole)))
    out = np.empty((2, 2))
    for (i, j), zeros in zip(((0, 0), (1, 0), (0, 1), (1, 1)), plant.zeros):
        num = np.prod(np.abs(s + two_pi * np.asarray(zeros, dtype=float)))
        den = np.prod(np.abs(s + two_pi * np.asarray(plant.column_poles[j], dtype=float))) * frame
        out[i, j] = abs(plant.gains[i][j]) * num / den
    return out


def sample_plants(count: int, seed: int) -> list[PlantDescription]:
    """``count`` random plants from ``numpy.random.default_rng(seed)``."""
    if int(count) != count or count < 0:
        raise ParameterError(f"count must be a whole number >= 0; got {count!r}")
    rng = np.random.default_rng(seed)
    gain = _low_frequency_gain(NOMINAL_PLANT)
    return [sample_plant(rng, NOMINAL_PLANT, gain) for _ in range(int(count))]


def plant_as_dict(plant: PlantDescription) -> dict:
    """A JSON-ready description (Hz; gains in s-units)."""
    return {"column_poles_hz": np.asarray(plant.column_poles).tolist(),
            "zeros_hz": {"H11": list(plant.zeros[0]), "H21": list(plant.zeros[1]), "H12": list(plant.zeros[2]),
                         "H22": list(plant.zeros[3])},
            "gains": np.asarray(plant.gains).tolist(),
            "frame_pole_hz": [float(np.real(plant.frame_pole)), float(np.imag(plant.frame_pole))]}
