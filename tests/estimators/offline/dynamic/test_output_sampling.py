"""Output sampling: the FIR decimation cascade against scipy.signal.decimate."""

from __future__ import annotations

import jax.numpy as jnp
import numpy as np
import pytest
import scipy.signal

from rths_ident.estimators.offline.dynamic import sample_output


@pytest.mark.parametrize("substeps", [2, 6, 20])
def test_fir_decimation_is_scipy_decimate_per_prime_factor(substeps):
    rng = np.random.default_rng(substeps)
    n = 400
    fine = rng.normal(size=(n - 1) * substeps + 1)
    ours = np.asarray(sample_output(jnp.asarray(fine), substeps, "fir-decimation"))
    reference = fine
    for q in (2, 2, 5) if substeps == 20 else (2, 3) if substeps == 6 else (2,):
        reference = scipy.signal.decimate(reference, q, n=30, ftype="fir", zero_phase=True)
    assert ours.shape == (n,)
    interior = slice(10, -10)  # the ends differ: scipy pads with zeros, we with the end values
    np.testing.assert_allclose(ours[interior], reference[: n][interior], rtol=0, atol=1e-12)


def test_point_sampling_keeps_every_substep_th_value():
    fine = jnp.arange(21.0)
    np.testing.assert_array_equal(np.asarray(sample_output(fine, 5, "point")), [0.0, 5.0, 10.0, 15.0, 20.0])
