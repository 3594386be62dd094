import dataclasses

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import rths_ident
from rths_ident._params import ParameterError, as_dict, field_range, params_dataclass, units_of


@params_dataclass(static=("substeps",))
class SpringParams:
    stiffness: float = field_range(1.0e6, low=0.0, low_inclusive=False, unit="N/m", doc="k")
    ratio: float = field_range(0.5, low=0.0, high=1.0, doc="α")
    substeps: int = 4


def test_x64_enabled_on_import():
    assert rths_ident.__version__
    assert jnp.asarray(1.0).dtype == jnp.float64


def test_bad_values_name_field_and_range():
    with pytest.raises(ParameterError, match=r"SpringParams\.stiffness = -1\.0 .*\(0, inf\) N/m"):
        SpringParams(stiffness=-1.0)
    with pytest.raises(ParameterError, match=r"SpringParams\.ratio .*\[0, 1\]"):
        SpringParams(ratio=1.5)
    with pytest.raises(ParameterError, match="finite"):
        SpringParams(stiffness=float("nan"))
    with pytest.raises(ParameterError, match="ratio"):
        SpringParams(ratio=np.array([0.2, 2.0]))
    with pytest.raises(ParameterError, match="ratio"):
        dataclasses.replace(SpringParams(), ratio=-0.1)


def test_pytree_behaviour_jit_grad_vmap():
    p = SpringParams(stiffness=2.0, ratio=0.25)
    energy = lambda q: 0.5 * q.stiffness * q.ratio**2 * q.substeps  # noqa: E731
    assert float(jax.jit(energy)(p)) == pytest.approx(0.5 * 2.0 * 0.0625 * 4)
    g = jax.grad(energy)(p)  # rebuilt by JAX: not validated, may hold any value
    assert float(g.stiffness) == pytest.approx(0.5 * 0.0625 * 4)
    assert float(g.ratio) == pytest.approx(2.0 * 0.25 * 4)
    negative = jax.tree_util.tree_map(lambda x: -x, p)  # no ParameterError
    assert float(negative.stiffness) == -2.0 and negative.substeps == 4
    batch = SpringParams(stiffness=jnp.array([1.0, 3.0]), ratio=jnp.array([0.5, 0.5]))
    np.testing.assert_allclose(jax.vmap(energy)(batch), [0.5, 1.5])
    assert as_dict(p) == {"stiffness": 2.0, "ratio": 0.25, "substeps": 4}
    assert units_of(SpringParams)["stiffness"] == "N/m"
