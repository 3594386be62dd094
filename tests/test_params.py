import dataclasses

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import rths_ident
from rths_ident.errors import ParameterError
from rths_ident._params import as_dict, field_range, params_dataclass, units_of


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


@pytest.mark.parametrize("value", ["1e6", "-1e6", None, 1 + 2j, object()])
def test_non_numbers_are_a_parameter_error_naming_the_field(value):
    with pytest.raises(ParameterError, match=r"SpringParams\.stiffness must be a real number in \(0, inf\) N/m"):
        SpringParams(stiffness=value)


def test_bilinear_with_a_text_stiffness_fails_at_construction():
    from rths_ident.models import BilinearKinematic

    for text in ("1e6", "-1e6"):
        with pytest.raises(ParameterError, match=r"BilinearParams\.k must be a real number.*got '-?1e6' \(a str\)"):
            BilinearKinematic(k=text, fy=1e3, b=0.02)


def test_messages_show_plain_numbers():
    with pytest.raises(ParameterError) as info:
        SpringParams(ratio=np.float64(1.5))
    assert "SpringParams.ratio = 1.5 is outside" in str(info.value) and "np.float64" not in str(info.value)
    with pytest.raises(ParameterError) as info:
        SpringParams(stiffness=jnp.asarray(-2.0))
    assert "= -2.0 is outside" in str(info.value) and "Array" not in str(info.value)
    # any message built with a NumPy scalar's repr
    assert str(ParameterError(f"x = {np.float64(0.5)!r}, n = {np.int64(3)!r}")) == "x = 0.5, n = 3"


def test_containers_print_plain_numbers_with_units():
    p = SpringParams(stiffness=jnp.asarray(1.5e6), ratio=np.float64(0.25))
    assert repr(p) == "SpringParams(stiffness=1500000.0, ratio=0.25, substeps=4)"
    assert str(p) == "SpringParams(stiffness = 1.5e+06 N/m, ratio = 0.25, substeps = 4)"
    assert eval(repr(p), {"SpringParams": SpringParams}) == p  # noqa: S307


def test_identifier_rate_message_reads_as_english():
    from rths_ident.scenarios.lugre_frame import LugreFrameConfig

    with pytest.raises(ParameterError) as info:
        LugreFrameConfig(identifier_rate=3000.0)
    message = str(info.value)
    assert "identifier_rate = 3000.0 Hz must divide the fast rate 4000 Hz" in message
    assert "must be divide" not in message
