"""The random-plant sampler against Table 2 (digest 004 §15 check 6)."""

from __future__ import annotations

import numpy as np

from rths_ident.benchmarks.marths.plant import NOMINAL_PLANT, frequency_response
from rths_ident.benchmarks.marths.uncertainty import RENORMALISATION_HZ, sample_plants


def test_relative_spread_of_each_parameter_is_table_2():
    draws = sample_plants(10000, seed=11)

    def spread(values, nominal):
        values = np.asarray(values)
        return np.std(values) / abs(nominal)

    checks = {
        0.055: ([d.zeros[0][0] for d in draws], 120.0),
        0.06: ([d.column_poles[0][1] for d in draws], 40.0),
        0.03: ([d.zeros[3][0] for d in draws], 5.0),
        0.05: ([abs(d.frame_pole) for d in draws], abs(50 + 63j)),
    }
    for expected, (values, nominal) in checks.items():
        assert abs(spread(values, nominal) - expected) < 0.003, expected
    # shared draws: H11 and H21 have the same zeros; the frame pole keeps its angle
    assert all(d.zeros[0] == d.zeros[1] for d in draws[:50])
    assert np.allclose([np.angle(d.frame_pole) for d in draws], np.angle(50 + 63j))


def test_low_frequency_gain_is_renormalised_and_seeds_reproduce():
    plants = sample_plants(5, seed=3)
    nominal = np.abs(frequency_response(NOMINAL_PLANT, [RENORMALISATION_HZ])[0])
    for plant in plants:
        h = np.abs(frequency_response(plant, [RENORMALISATION_HZ])[0])
        assert np.allclose(h, nominal, rtol=1e-6)
    assert np.allclose(plants[2].gains, sample_plants(5, seed=3)[2].gains)
    assert not np.allclose(plants[2].gains, sample_plants(5, seed=4)[2].gains)
