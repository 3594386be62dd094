import numpy as np
import pytest

from rths_ident.errors import ParameterError
from rths_ident.calibration.sample import BOUNDS, sample_specimens


def test_same_seed_same_sample_other_seed_other_sample():
    a, b, c = sample_specimens(16, 3), sample_specimens(16, 3), sample_specimens(16, 4)
    for fa, fb, fc in zip(a, b, c):
        np.testing.assert_array_equal(fa, fb)
        assert not np.allclose(fa, fc)


def test_inside_bounds_and_one_specimen_per_stratum():
    n = 32
    s = sample_specimens(n, 0)
    assert len(s) == n
    for (name, b), values in zip(BOUNDS.items(), s):
        assert np.all(values >= b.low) and np.all(values <= b.high), name
        # Latin hypercube: each of the n equal strata (in the sampled scale) holds one point
        scale = np.log10 if b.log else (lambda v: v)
        unit = (scale(values) - scale(b.low)) / (scale(b.high) - scale(b.low))
        np.testing.assert_array_equal(np.sort(np.floor(unit * n).astype(int)), np.arange(n))


def test_period_range_is_the_sources():
    assert (BOUNDS["period"].low, BOUNDS["period"].high) == (0.6, 4.0)  # seed 003 §2.3


def test_bad_count_is_refused():
    with pytest.raises(ParameterError, match="number of specimens"):
        sample_specimens(0, 0)
