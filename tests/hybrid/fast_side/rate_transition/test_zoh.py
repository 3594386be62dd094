import jax.numpy as jnp
import numpy as np
import pytest

import rths_ident  # noqa: F401
from rths_ident.errors import ParameterError
from rths_ident.hybrid.fast_side.rate_transition import ddmrt
from rths_ident.hybrid.fast_side.rate_transition.zoh import zoh_downsample, zoh_sample


def test_zoh_reads_the_end_of_each_slow_step():
    fast = np.arange(12.0)
    np.testing.assert_array_equal(zoh_downsample(fast, 4), [3.0, 7.0, 11.0])
    np.testing.assert_array_equal(zoh_sample(fast.reshape(3, 4)), [3.0, 7.0, 11.0])
    with pytest.raises(ParameterError, match="multiple of ratio"):
        zoh_downsample(fast, 5)


def test_zoh_of_ddmrt_output_gives_back_its_predictions():
    slow = jnp.sin(0.3 * jnp.arange(30))
    _, fast, predictions = ddmrt.run(ddmrt.DDMRTParams(ratio=20), slow)
    np.testing.assert_allclose(zoh_downsample(fast, 20), predictions, rtol=0, atol=1e-13)
